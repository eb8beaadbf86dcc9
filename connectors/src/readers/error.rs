//! The one error type of the readers: a file, a line and a reason.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong while opening or reading a data file.
///
/// Every error names the file, the 1-based line where there is one, and a reason a user
/// can act on. It displays as `PATH:LINE: REASON`, or `PATH: REASON` without a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The file the error is about (a data file, or the MULAN XML label header).
    pub path: PathBuf,
    /// The 1-based line number, when the error is about one line.
    pub line: Option<u64>,
    /// What is wrong, in words.
    pub reason: String,
}

impl ReadError {
    /// An error about one line of a file.
    pub fn at(path: &Path, line: u64, reason: impl fmt::Display) -> Self {
        ReadError {
            path: path.to_path_buf(),
            line: Some(line),
            reason: reason.to_string(),
        }
    }

    /// An error about a whole file (no line).
    pub fn file(path: &Path, reason: impl Into<String>) -> Self {
        ReadError {
            path: path.to_path_buf(),
            line: None,
            reason: reason.into(),
        }
    }
}

/// The longest piece of the data an error message quotes, in characters.
const EXCERPT: usize = 64;

/// `text` as an error message quotes it: whole when short, else its first 64 characters
/// and its length (`abc...(20971520 bytes)`), so that a huge bad token never makes a
/// huge message.
pub(crate) fn excerpt(text: impl AsRef<str>) -> String {
    let text = text.as_ref();
    match text.char_indices().nth(EXCERPT) {
        None => text.to_string(),
        Some((end, _)) => format!("{}...({} bytes)", &text[..end], text.len()),
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

impl std::error::Error for ReadError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short() {
        assert_eq!(excerpt("abc"), "abc");
        let long = "é".repeat(100);
        let e = excerpt(&long);
        assert!(e.starts_with(&"é".repeat(64)));
        assert!(e.ends_with("...(200 bytes)"), "{e}");
    }

    #[test]
    fn displays_path_line_and_reason() {
        let e = ReadError::at(Path::new("a/b.csv"), 7, "bad number `x`");
        assert_eq!(e.to_string(), "a/b.csv:7: bad number `x`");
        let e = ReadError::file(Path::new("a/b.csv"), "empty file");
        assert_eq!(e.to_string(), "a/b.csv: empty file");
    }
}
