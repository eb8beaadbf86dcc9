//! Line-by-line reading of plain or gzip-compressed text into one reused buffer.

use super::ReadError;
use super::line_error::LineError;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The buffer size of the file and decoder readers.
const BUFFER: usize = 1 << 16;

/// The default longest line, in bytes (16 MiB): far above the longest line of any
/// dataset of the papers (a few KB), and a bound on the memory one line may take (a
/// gzip-compressed file of one endless line is then an error, not gigabytes).
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

/// The largest `--max-line-bytes` (1 GiB).
pub const MAX_MAX_LINE_BYTES: usize = 1 << 30;

/// What [`LineReader::read_bounded`] found.
enum Bounded {
    /// The end of the file.
    End,
    /// A line (in the buffer).
    Line,
    /// A line over the limit: reading stopped inside it (or at its end), nothing kept.
    TooLong,
}

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
    max_line: usize,
}

impl LineReader {
    /// Opens `path` (errors: missing, unreadable, a folder), with lines of at most
    /// [`DEFAULT_MAX_LINE_BYTES`].
    pub(crate) fn open(path: &Path) -> Result<Self, ReadError> {
        Self::open_with(path, DEFAULT_MAX_LINE_BYTES)
    }

    /// Opens `path`; a line longer than `max_line` bytes (without its line ending) is an
    /// error naming the line, and the last thing read: the reader stops as soon as the
    /// line passes the limit (nothing of it is kept), so an endless line ends too.
    pub(crate) fn open_with(path: &Path, max_line: usize) -> Result<Self, ReadError> {
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
            max_line: max_line.max(1),
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

    /// Whether reading stopped on an I/O or decompression error or on a line over the
    /// limit (after which every call of [`next_line`](Self::next_line) returns `Ok(None)`).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Reads the next line into `buf` (with its `\n`), keeping at most `max_line` bytes
    /// (plus the line ending). A longer line stops the reading as soon as it passes the
    /// limit, whatever follows: an endless line (`/dev/zero`, a pipe) is refused after
    /// `max_line + 2` bytes, not read to an end that never comes.
    fn read_bounded(&mut self) -> std::io::Result<Bounded> {
        // The line ending (`\r\n`) may come on top of the limit.
        let keep = self.max_line.saturating_add(2);
        let mut any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            any = true;
            let (chunk, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..=i], true),
                None => (available, false),
            };
            let n = chunk.len();
            if self.buf.len().saturating_add(n) > keep {
                self.reader.consume(n);
                self.buf.clear();
                return Ok(Bounded::TooLong);
            }
            self.buf.extend_from_slice(chunk);
            self.reader.consume(n);
            if done {
                break;
            }
        }
        if !any {
            return Ok(Bounded::End);
        }
        if self.content_len() > self.max_line {
            self.buf.clear();
            return Ok(Bounded::TooLong);
        }
        Ok(Bounded::Line)
    }

    /// The length of the line in `buf` without its line ending.
    fn content_len(&self) -> usize {
        let mut n = self.buf.len();
        if self.buf[..n].ends_with(b"\n") {
            n -= 1;
        }
        if self.buf[..n].ends_with(b"\r") {
            n -= 1;
        }
        n
    }

    /// The next line, `Ok(None)` at the end. A line that is not UTF-8 is an error, and
    /// reading may go on after it; an I/O error or a line over the limit ends the reading.
    pub(crate) fn next_line(&mut self) -> Result<Option<Line<'_>>, ReadError> {
        if self.failed {
            return Ok(None);
        }
        self.buf.clear();
        match self.read_bounded() {
            Ok(Bounded::End) => return Ok(None),
            Ok(Bounded::Line) => {}
            Ok(Bounded::TooLong) => {
                // Where the next line starts is not known without reading the rest of
                // this one, which may never end: the reading stops here.
                self.number += 1;
                self.failed = true;
                return Err(ReadError::at(
                    &self.path,
                    self.number,
                    format!(
                        "line longer than the limit of {} bytes (raise it with --max-line-bytes); the file is not read further",
                        self.max_line
                    ),
                ));
            }
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

/// The lines of a data file that hold examples, each read into the example with its id:
/// a file's examples are numbered from 0 in the order of their lines, and a line that
/// cannot be read takes a number too (so the ids after it do not move).
pub(crate) struct DataLines {
    reader: LineReader,
    next_id: u64,
    done: bool,
}

impl DataLines {
    /// Reads the examples of `reader` from where it stands (after a header it has read).
    pub(crate) fn new(reader: LineReader) -> Self {
        DataLines {
            reader,
            next_id: 0,
            done: false,
        }
    }

    /// The next example: `parse(text, id)` of the next line for which it gives `Some`
    /// (`None` skips a line: blank, a comment, a header); a line that `parse` rejects or
    /// that cannot be read is an error naming the file and the line. `None` at the end
    /// and after an I/O error.
    pub(crate) fn next<T>(
        &mut self,
        mut parse: impl FnMut(&str, u64) -> Option<Result<T, LineError>>,
    ) -> Option<Result<T, ReadError>> {
        while !self.done {
            let line = match self.reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = self.reader.failed();
                    self.next_id += 1;
                    return Some(Err(e));
                }
            };
            let Some(parsed) = parse(line.text, self.next_id) else {
                continue;
            };
            self.next_id += 1;
            let number = line.number;
            return Some(
                parsed.map_err(|reason| ReadError::at(self.reader.path(), number, reason)),
            );
        }
        None
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
    fn a_line_over_the_limit_is_an_error_that_ends_the_reading() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        let long = "x".repeat(100_000);
        std::fs::write(&p, format!("ok\n12345\r\n{long}\r\nok2")).unwrap();
        let mut r = LineReader::open_with(&p, 5).unwrap();
        assert_eq!(r.next_line().unwrap().unwrap().text, "ok");
        // Exactly at the limit (with a CRLF on top): kept.
        assert_eq!(r.next_line().unwrap().unwrap().text, "12345");
        let e = r.next_line().err().unwrap();
        assert_eq!(e.line, Some(3));
        assert!(e.reason.contains("limit of 5 bytes"), "{}", e.reason);
        assert!(e.reason.contains("--max-line-bytes"), "{}", e.reason);
        assert!(r.failed());
        assert!(r.next_line().unwrap().is_none());
        // One byte over, the line ending in the same buffer: refused too.
        std::fs::write(&p, "123456\nok\n").unwrap();
        let mut r = LineReader::open_with(&p, 5).unwrap();
        assert_eq!(r.next_line().err().unwrap().line, Some(1));
    }

    #[test]
    fn an_endless_line_is_refused_after_the_limit() {
        // /dev/zero never ends and has no line ending: the reader stops at the limit.
        let path = Path::new("/dev/zero");
        if !path.exists() {
            return;
        }
        let mut r = LineReader::open_with(path, 1 << 20).unwrap();
        let e = r.next_line().err().unwrap();
        assert_eq!(e.line, Some(1));
        assert!(e.reason.contains("limit of 1048576 bytes"), "{}", e.reason);
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn an_endless_gzip_line_is_refused_after_the_limit() {
        // 64 MiB of one line compressed: refused after the limit, not inflated whole.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bomb.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let chunk = vec![b'1'; 1 << 20];
        for _ in 0..64 {
            enc.write_all(&chunk).unwrap();
        }
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let mut r = LineReader::open_with(&p, 1000).unwrap();
        assert!(
            r.next_line()
                .err()
                .unwrap()
                .reason
                .contains("limit of 1000")
        );
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn missing_file_is_an_error() {
        let e = LineReader::open(Path::new("/nonexistent/x.csv"))
            .err()
            .unwrap();
        assert!(e.reason.contains("not found"));
    }
}
