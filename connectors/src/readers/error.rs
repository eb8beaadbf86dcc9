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
    pub fn at(path: &Path, line: u64, reason: impl Into<String>) -> Self {
        ReadError {
            path: path.to_path_buf(),
            line: Some(line),
            reason: reason.into(),
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
    fn displays_path_line_and_reason() {
        let e = ReadError::at(Path::new("a/b.csv"), 7, "bad number `x`");
        assert_eq!(e.to_string(), "a/b.csv:7: bad number `x`");
        let e = ReadError::file(Path::new("a/b.csv"), "empty file");
        assert_eq!(e.to_string(), "a/b.csv: empty file");
    }
}
