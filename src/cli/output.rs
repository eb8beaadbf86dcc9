//! Where the commands write their results: stdout or a file, through one writer whose
//! errors name the destination. The one way the CLI writes to stdout, so that a closed
//! pipe (`flowboost eval ... | head -0`) or a full disk (`--output /dev/full`) is an error
//! message and exit code 2, never a panic.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// A buffered destination of text: stdout or a file, with its name for the messages.
pub struct Output {
    name: String,
    out: Box<dyn Write + Send>,
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Self {
        Output {
            name: "stdout".into(),
            out: Box::new(BufWriter::new(io::stdout())),
        }
    }

    /// A destination that drops what it is given (the sinks of the workers that do not
    /// write the output).
    pub fn discard() -> Self {
        Output {
            name: "nowhere".into(),
            out: Box::new(io::sink()),
        }
    }

    /// `path` (created or truncated), or stdout without one.
    pub fn create(path: Option<&Path>) -> Result<Self, String> {
        match path {
            None => Ok(Self::stdout()),
            Some(p) => {
                let file = File::create(p)
                    .map_err(|e| format!("{}: cannot create the output file: {e}", p.display()))?;
                Ok(Output {
                    name: p.display().to_string(),
                    out: Box::new(BufWriter::new(file)),
                })
            }
        }
    }

    /// The destination's name: `stdout` or the file's path.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The message of a failed write: the destination and the reason.
    fn error(&self, e: &io::Error) -> String {
        if e.kind() == io::ErrorKind::BrokenPipe {
            format!(
                "{}: cannot write: the reading end of the pipe was closed",
                self.name
            )
        } else {
            format!("{}: cannot write: {e}", self.name)
        }
    }

    /// Writes `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.out.write_all(bytes).map_err(|e| self.error(&e))
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<(), String> {
        self.write(text.as_bytes())?;
        self.write(b"\n")
    }

    /// Writes `value` as one JSON line.
    pub fn json_line(&mut self, value: &impl serde::Serialize) -> Result<(), String> {
        let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
        self.line(&text)
    }

    /// Flushes what is buffered (call it at the end: a dropped `Output` loses errors).
    pub fn flush(&mut self) -> Result<(), String> {
        self.out.flush().map_err(|e| self.error(&e))
    }
}

/// Prints `text` to stdout (as is; add the newline) and flushes.
pub fn print(text: &str) -> Result<(), String> {
    let mut out = Output::stdout();
    out.write(text.as_bytes())?;
    out.flush()
}

/// Prints `value` as one JSON line to stdout and flushes.
pub fn print_json(value: &impl serde::Serialize) -> Result<(), String> {
    let mut out = Output::stdout();
    out.json_line(value)?;
    out.flush()
}

/// Prints `text` and a newline to stdout and flushes.
pub fn println(text: &str) -> Result<(), String> {
    let mut out = Output::stdout();
    out.line(text)?;
    out.flush()
}
