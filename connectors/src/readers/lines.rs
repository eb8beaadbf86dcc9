//! Line-by-line reading of plain or gzip-compressed text into one reused buffer.

use super::ReadError;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The buffer size of the file and decoder readers.
const BUFFER: usize = 1 << 16;

/// One line of text: its 1-based number and its content, without the line ending.
pub(crate) struct Line<'a> {
    /// The 1-based line number.
    pub(crate) number: u64,
    /// The text, without `\n` or `\r\n` (and without a UTF-8 byte order mark on line 1).
    pub(crate) text: &'a str,
}

/// Reads a file line by line; gzip (detected by its magic bytes, whatever the file is
/// called) is decompressed on the fly, concatenated gzip members included.
pub(crate) struct LineReader {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    number: u64,
    failed: bool,
}

impl LineReader {
    /// Opens `path` (errors: missing, unreadable, a folder).
    pub(crate) fn open(path: &Path) -> Result<Self, ReadError> {
        let file = File::open(path).map_err(|e| {
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "file not found".to_string(),
                _ => format!("cannot open: {e}"),
            };
            ReadError::file(path, reason)
        })?;
        if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(ReadError::file(path, "is a folder, not a data file"));
        }
        let mut raw = BufReader::with_capacity(BUFFER, file);
        let head = raw
            .fill_buf()
            .map_err(|e| ReadError::file(path, format!("cannot read: {e}")))?;
        let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        let reader: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(BUFFER, MultiGzDecoder::new(raw)))
        } else {
            Box::new(raw)
        };
        Ok(LineReader {
            path: path.to_path_buf(),
            reader,
            buf: Vec::with_capacity(256),
            number: 0,
            failed: false,
        })
    }

    /// The file being read.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The number of lines read so far.
    pub(crate) fn line_number(&self) -> u64 {
        self.number
    }

    /// Whether reading stopped on an I/O or decompression error (after which every call
    /// of [`next_line`](Self::next_line) returns `Ok(None)`).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// The next line, `Ok(None)` at the end. A line that is not UTF-8 is an error, and
    /// reading may go on after it; an I/O error ends the reading.
    pub(crate) fn next_line(&mut self) -> Result<Option<Line<'_>>, ReadError> {
        if self.failed {
            return Ok(None);
        }
        self.buf.clear();
        match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => {
                self.failed = true;
                return Err(ReadError::at(
                    &self.path,
                    self.number + 1,
                    format!("read error: {e}"),
                ));
            }
        }
        self.number += 1;
        let mut bytes = &self.buf[..];
        if let [rest @ .., b'\n'] = bytes {
            bytes = rest;
        }
        if let [rest @ .., b'\r'] = bytes {
            bytes = rest;
        }
        if self.number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes = &bytes[3..];
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some(Line {
                number: self.number,
                text,
            })),
            Err(e) => Err(ReadError::at(
                &self.path,
                self.number,
                format!(
                    "invalid UTF-8 at byte {} of the line (the readers expect UTF-8 text)",
                    e.valid_up_to() + 1
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(path: &Path) -> Vec<(u64, String)> {
        let mut r = LineReader::open(path).unwrap();
        let mut out = vec![];
        while let Some(line) = r.next_line().unwrap() {
            out.push((line.number, line.text.to_string()));
        }
        out
    }

    #[test]
    fn reads_plain_crlf_and_bom() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, b"\xEF\xBB\xBFone\r\ntwo\n\nthree").unwrap();
        let lines = read_all(&p);
        assert_eq!(
            lines,
            vec![
                (1, "one".to_string()),
                (2, "two".to_string()),
                (3, String::new()),
                (4, "three".to_string())
            ]
        );
    }

    #[test]
    fn reads_concatenated_gzip_members_whatever_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plain-name.csv");
        let mut bytes = vec![];
        for part in ["a,b\n", "c,d\n"] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(part.as_bytes()).unwrap();
            bytes.extend(enc.finish().unwrap());
        }
        std::fs::write(&p, bytes).unwrap();
        let lines = read_all(&p);
        assert_eq!(lines, vec![(1, "a,b".to_string()), (2, "c,d".to_string())]);
    }

    #[test]
    fn invalid_utf8_is_an_error_and_reading_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, b"ok\nbad\xff\nok2\n").unwrap();
        let mut r = LineReader::open(&p).unwrap();
        assert_eq!(r.next_line().unwrap().unwrap().text, "ok");
        let e = r.next_line().err().unwrap();
        assert_eq!(e.line, Some(2));
        assert!(e.reason.contains("UTF-8"));
        assert_eq!(r.next_line().unwrap().unwrap().text, "ok2");
    }

    #[test]
    fn missing_file_is_an_error() {
        let e = LineReader::open(Path::new("/nonexistent/x.csv"))
            .err()
            .unwrap();
        assert!(e.reason.contains("not found"));
    }
}
