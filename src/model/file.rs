use super::ModelError;
use super::body::ModelBody;
use super::header::{Compression, FORMAT_VERSION, MAGIC, ModelHeader, OLDEST_FORMAT_VERSION};
use flate2::Compression as Level;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

/// The most a header may take (it is a small JSON object; the limit keeps a damaged
/// length from asking for gigabytes).
const MAX_HEADER: u32 = 64 << 20;

/// Writes a model file's bytes: magic, format version, header length, JSON header, its
/// CRC-32, body length, body (postcard, DEFLATE-compressed if the header says so), the
/// body's CRC-32.
pub fn write_to(
    out: &mut impl Write,
    header: &ModelHeader,
    body: &ModelBody,
) -> Result<(), String> {
    let header_bytes = serde_json::to_vec(header).map_err(|e| e.to_string())?;
    let plain = postcard::to_allocvec(body).map_err(|e| e.to_string())?;
    let stored = match header.compression {
        Compression::None => plain,
        Compression::Deflate => {
            let mut enc = ZlibEncoder::new(Vec::new(), Level::fast());
            enc.write_all(&plain).map_err(|e| e.to_string())?;
            enc.finish().map_err(|e| e.to_string())?
        }
    };
    let header_len = u32::try_from(header_bytes.len()).map_err(|_| "the header is too large")?;
    out.write_all(MAGIC).map_err(|e| e.to_string())?;
    out.write_all(&FORMAT_VERSION.to_le_bytes())
        .map_err(|e| e.to_string())?;
    out.write_all(&header_len.to_le_bytes())
        .map_err(|e| e.to_string())?;
    out.write_all(&header_bytes).map_err(|e| e.to_string())?;
    out.write_all(&crc32fast::hash(&header_bytes).to_le_bytes())
        .map_err(|e| e.to_string())?;
    out.write_all(&(stored.len() as u64).to_le_bytes())
        .map_err(|e| e.to_string())?;
    out.write_all(&stored).map_err(|e| e.to_string())?;
    out.write_all(&crc32fast::hash(&stored).to_le_bytes())
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Writes a model file atomically: a temporary file beside `path`, flushed to disk
/// (fsync), then renamed over `path` (and the directory synced), so a reader sees the old
/// file or the new one, never a partial one.
pub fn write_file(path: &Path, header: &ModelHeader, body: &ModelBody) -> Result<(), ModelError> {
    if path.is_dir() {
        return Err(ModelError::Directory {
            file: path.display().to_string(),
        });
    }
    let name = path
        .file_name()
        .ok_or_else(|| ModelError::write(path, "not a file name"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut tmp_name = name.to_os_string();
    tmp_name.push(format!(".tmp.{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| -> Result<(), String> {
        let file = File::create(&tmp).map_err(|e| e.to_string())?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write_to(&mut w, header, body)?;
        let file = w.into_inner().map_err(|e| e.to_string())?;
        file.sync_all().map_err(|e| e.to_string())?;
        drop(file);
        std::fs::rename(&tmp, path).map_err(|e| e.to_string())?;
        if let Ok(d) = File::open(&dir) {
            // Makes the rename durable; not every file system supports it.
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ModelError::write(path, e)
    })
}

/// Reads exactly `n` bytes, or says what is missing.
fn take<'a>(
    bytes: &'a [u8],
    at: &mut usize,
    n: usize,
    what: &str,
    file: &str,
) -> Result<&'a [u8], ModelError> {
    let end = at
        .checked_add(n)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| ModelError::Truncated {
            file: file.to_string(),
            detail: format!(
                "the {what} needs {n} bytes at offset {at}, the file has {}",
                bytes.len()
            ),
        })?;
    let s = &bytes[*at..end];
    *at = end;
    Ok(s)
}

fn u32_at(bytes: &[u8], at: &mut usize, what: &str, file: &str) -> Result<u32, ModelError> {
    let b = take(bytes, at, 4, what, file)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads the header of a model file's bytes (checking the magic, the version and the
/// header's checksum); returns it and the offset after it.
pub fn read_header(bytes: &[u8], file: &str) -> Result<(ModelHeader, usize), ModelError> {
    let mut at = 0;
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(ModelError::NotAModel {
            file: file.to_string(),
        });
    }
    at += MAGIC.len();
    let version = u32_at(bytes, &mut at, "format version", file)?;
    if version > FORMAT_VERSION {
        return Err(ModelError::NewerFormat {
            file: file.to_string(),
            found: version,
            supported: FORMAT_VERSION,
            flowboost: env!("CARGO_PKG_VERSION"),
        });
    }
    if version == 0 {
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: "format version 0 does not exist".into(),
        });
    }
    if version < OLDEST_FORMAT_VERSION {
        return Err(ModelError::OlderFormat {
            file: file.to_string(),
            found: version,
            oldest: OLDEST_FORMAT_VERSION,
            flowboost: env!("CARGO_PKG_VERSION"),
        });
    }
    let len = u32_at(bytes, &mut at, "header length", file)?;
    if len > MAX_HEADER {
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: format!("a header of {len} bytes (at most {MAX_HEADER})"),
        });
    }
    let header_bytes = take(bytes, &mut at, len as usize, "header", file)?;
    let crc = u32_at(bytes, &mut at, "header checksum", file)?;
    if crc32fast::hash(header_bytes) != crc {
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: "the header's checksum does not match (the file was damaged)".into(),
        });
    }
    let header: ModelHeader =
        serde_json::from_slice(header_bytes).map_err(|e| ModelError::Corrupted {
            file: file.to_string(),
            detail: format!("the header is not a model header: {e}"),
        })?;
    Ok((header, at))
}

/// Reads a whole model file's bytes: its header and its body.
pub fn read_bytes(bytes: &[u8], file: &str) -> Result<(ModelHeader, ModelBody), ModelError> {
    let (header, mut at) = read_header(bytes, file)?;
    let b = take(bytes, &mut at, 8, "body length", file)?;
    let len = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let len = usize::try_from(len).map_err(|_| ModelError::Corrupted {
        file: file.to_string(),
        detail: format!("a body of {len} bytes"),
    })?;
    let stored = take(bytes, &mut at, len, "body", file)?;
    let crc = u32_at(bytes, &mut at, "body checksum", file)?;
    if crc32fast::hash(stored) != crc {
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: "the body's checksum does not match (the file was damaged)".into(),
        });
    }
    if at != bytes.len() {
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: format!("{} bytes after the end of the model", bytes.len() - at),
        });
    }
    let corrupt = |e: String| ModelError::Corrupted {
        file: file.to_string(),
        detail: format!("the body cannot be read: {e}"),
    };
    let plain;
    let body_bytes = match header.compression {
        Compression::None => stored,
        Compression::Deflate => {
            let mut out = Vec::new();
            ZlibDecoder::new(stored)
                .read_to_end(&mut out)
                .map_err(|e| corrupt(e.to_string()))?;
            plain = out;
            &plain[..]
        }
    };
    // read_header checked the version that follows the magic bytes.
    let at = MAGIC.len();
    let version = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let body: ModelBody = if version >= 6 {
        postcard::from_bytes(body_bytes).map_err(|e| corrupt(e.to_string()))?
    } else if version == 5 {
        postcard::from_bytes::<super::legacy::ModelBodyV5>(body_bytes)
            .map_err(|e| corrupt(e.to_string()))?
            .into()
    } else {
        postcard::from_bytes::<super::legacy::ModelBodyV4>(body_bytes)
            .map_err(|e| corrupt(e.to_string()))?
            .into()
    };
    Ok((header, body))
}

/// Reads a model file.
pub fn read_file(path: &Path) -> Result<(ModelHeader, ModelBody), ModelError> {
    let bytes = read_all(path)?;
    read_bytes(&bytes, &path.display().to_string())
}

/// A model file's bytes (a directory or a missing file is a clear error).
pub fn read_all(path: &Path) -> Result<Vec<u8>, ModelError> {
    if path.is_dir() {
        return Err(ModelError::Directory {
            file: path.display().to_string(),
        });
    }
    std::fs::read(path).map_err(|e| ModelError::read(path, e))
}
