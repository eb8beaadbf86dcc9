use super::body::ModelBody;
use super::header::{Compression, FORMAT_VERSION, MAGIC, ModelHeader, OLDEST_FORMAT_VERSION};
use super::{EncodeError, ModelError};
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
) -> Result<(), EncodeError> {
    let header_bytes = serde_json::to_vec(header)?;
    let plain = postcard::to_allocvec(body)?;
    let stored = match header.compression {
        Compression::None => plain,
        Compression::Deflate => {
            let mut enc = ZlibEncoder::new(Vec::new(), Level::fast());
            enc.write_all(&plain)?;
            enc.finish()?
        }
    };
    let header_len = u32::try_from(header_bytes.len()).map_err(|_| EncodeError::HeaderTooLarge)?;
    out.write_all(MAGIC)?;
    out.write_all(&FORMAT_VERSION.to_le_bytes())?;
    out.write_all(&header_len.to_le_bytes())?;
    out.write_all(&header_bytes)?;
    out.write_all(&crc32fast::hash(&header_bytes).to_le_bytes())?;
    out.write_all(&(stored.len() as u64).to_le_bytes())?;
    out.write_all(&stored)?;
    out.write_all(&crc32fast::hash(&stored).to_le_bytes())?;
    Ok(())
}

/// Writes a model file atomically: a temporary file beside `path`, flushed to disk
/// (fsync), then renamed over `path` (and the directory synced), so a reader sees the old
/// file or the new one, never a partial one.
///
/// `path` must be a regular file or a new path: see [`check_save_path`].
pub fn write_file(path: &Path, header: &ModelHeader, body: &ModelBody) -> Result<(), ModelError> {
    check_save_path(path)?;
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
    let result = (|| -> Result<(), EncodeError> {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write_to(&mut w, header, body)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
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

/// What a path is, in words, when it is not a regular file (`None` for a regular file).
fn not_regular(file_type: std::fs::FileType) -> Option<&'static str> {
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_file() {
        return None;
    }
    if file_type.is_symlink() {
        return Some("a symbolic link");
    }
    if file_type.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        if file_type.is_fifo() {
            return Some("a named pipe (FIFO)");
        }
        if file_type.is_char_device() {
            return Some("a character device");
        }
        if file_type.is_block_device() {
            return Some("a block device");
        }
        if file_type.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Checks that a model file may be saved at `path`: it is a new path (in an existing
/// folder) or a regular file, which the save replaces. Anything else (a symbolic link, a
/// directory, a device such as `/dev/null`, a named pipe, a socket) is refused, naming the
/// path and what it is: the save renames a temporary file over the path, which would
/// replace the link or the device node itself, not write through it.
pub fn check_save_path(path: &Path) -> Result<(), ModelError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => match not_regular(meta.file_type()) {
            None => Ok(()),
            Some("a directory") => Err(ModelError::Directory {
                file: path.display().to_string(),
            }),
            Some(what) => Err(ModelError::NotRegular {
                file: path.display().to_string(),
                what,
            }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if path.file_name().is_none() {
                return Err(ModelError::write(path, "not a file name"));
            }
            match path.parent() {
                Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => Err(ModelError::write(
                    path,
                    format!("the folder {} does not exist", d.display()),
                )),
                _ => Ok(()),
            }
        }
        Err(e) => Err(ModelError::write(path, e)),
    }
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
                .take(MAX_MODEL_FILE_BYTES + 1)
                .read_to_end(&mut out)
                .map_err(|e| corrupt(e.to_string()))?;
            if out.len() as u64 > MAX_MODEL_FILE_BYTES {
                return Err(corrupt(format!(
                    "it decompresses to more than {MAX_MODEL_FILE_BYTES} bytes (16 GiB)"
                )));
            }
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

/// The largest model file flowboost reads, and the largest body it decompresses: 2^34
/// bytes (16 GiB). A model's trees are bounded by the options' limits (about 3.7 GB at the
/// most learners times features); the limit keeps a damaged or endless input (a device
/// such as `/dev/zero`, a pipe) from taking the machine's memory. The reader follows the
/// file's framing and reads no byte past the lengths it declares (and at most 64 KiB more
/// to tell that something follows the model).
pub const MAX_MODEL_FILE_BYTES: u64 = 1 << 34;

/// How many bytes after a model's end are counted before the reader stops.
const TRAILING_PROBE: u64 = 64 << 10;

/// Appends up to `n` bytes of `input` to `out`; returns how many came (fewer at the end
/// of the input).
fn append(input: &mut impl Read, out: &mut Vec<u8>, n: u64, file: &str) -> Result<u64, ModelError> {
    input
        .take(n)
        .read_to_end(out)
        .map(|got| got as u64)
        .map_err(|e| ModelError::Read {
            file: file.to_string(),
            reason: e.to_string(),
        })
}

/// Reads a model file's bytes from `input`, following its framing: the magic bytes, the
/// version and the header's length, the header (at most 64 MiB), the body's length (at
/// most [`MAX_MODEL_FILE_BYTES`]), the body; then checks that nothing follows. It never
/// reads more than the lengths declared (and a small probe after the end), so an endless
/// input is not read whole. A short or damaged prefix is returned as read, for
/// [`read_bytes`] to name what is wrong with it.
pub fn read_limited(mut input: impl Read, file: &str) -> Result<Vec<u8>, ModelError> {
    let mut bytes = Vec::new();
    let prefix = (MAGIC.len() + 8) as u64;
    if append(&mut input, &mut bytes, prefix, file)? < prefix || &bytes[..MAGIC.len()] != MAGIC {
        return Ok(bytes);
    }
    let at = MAGIC.len() + 4;
    let header_len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    if header_len > MAX_HEADER {
        return Ok(bytes);
    }
    // The header, its checksum and the body's length.
    let n = u64::from(header_len) + 4 + 8;
    if append(&mut input, &mut bytes, n, file)? < n {
        return Ok(bytes);
    }
    let at = bytes.len() - 8;
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[at..]);
    let body_len = u64::from_le_bytes(len);
    if body_len > MAX_MODEL_FILE_BYTES {
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: format!(
                "its header declares a body of {body_len} bytes, more than the {MAX_MODEL_FILE_BYTES} bytes (16 GiB) a model file may hold"
            ),
        });
    }
    // The body and its checksum.
    let n = body_len + 4;
    if append(&mut input, &mut bytes, n, file)? < n {
        return Ok(bytes);
    }
    let mut trailing = Vec::new();
    let extra = append(&mut input, &mut trailing, TRAILING_PROBE, file)?;
    if extra > 0 {
        let count = if extra == TRAILING_PROBE {
            format!("more than {} bytes", TRAILING_PROBE - 1)
        } else {
            format!("{extra} bytes")
        };
        return Err(ModelError::Corrupted {
            file: file.to_string(),
            detail: format!("{count} after the end of the model"),
        });
    }
    Ok(bytes)
}

/// Reads a model file.
pub fn read_file(path: &Path) -> Result<(ModelHeader, ModelBody), ModelError> {
    let bytes = read_all(path)?;
    read_bytes(&bytes, &path.display().to_string())
}

/// A model file's bytes, read with [`read_limited`] (a directory or a missing file is a
/// clear error; a device or a pipe is read as its framing says, never whole).
pub fn read_all(path: &Path) -> Result<Vec<u8>, ModelError> {
    if path.is_dir() {
        return Err(ModelError::Directory {
            file: path.display().to_string(),
        });
    }
    let file = File::open(path).map_err(|e| ModelError::read(path, e))?;
    read_limited(std::io::BufReader::new(file), &path.display().to_string())
}
