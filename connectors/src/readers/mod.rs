//! Streaming file readers: ARFF (dense and sparse, MULAN multi-label with an XML label
//! header), LIBSVM / SVMlight, and CSV / TSV, each plain or gzip-compressed.
//!
//! [`DataSource::open`] takes the files of one dataset (say a train and a test file) and
//! settles one [`Schema`](flowboost_operators::data::Schema) for all of them;
//! [`DataSource::examples`] then streams the examples of one file. Files are read line
//! by line into a reused buffer, never whole; gzip is recognised by its magic bytes.
//!
//! The encodings, in brief (details on each format's options):
//!
//! - **Classes** are numbered in a deterministic order: the declared order for ARFF,
//!   else numerically when every class is a number, else lexicographically. Two classes
//!   make a binary task with class 1 the positive one (the second ARFF value, the larger
//!   number, the lexicographically larger text); more make a multiclass task.
//! - **Nominal values** are feature values `0.0, 1.0, ...` (their index); CSV categories
//!   are sorted like classes.
//! - **Missing values** (`?`, or an empty CSV field) read as `f64::NAN`; a missing class
//!   reads as an unlabeled example (`label: None`). A literal `NaN` or infinity is an
//!   error.
//! - **Open Bandit Dataset logs** ([`open_bandit`]) are read as a stream of impressions
//!   (logged items, positions, clicks, propensities, user features), not as examples.
//! - **Errors** never panic: each names the file, the 1-based line when there is one,
//!   and the reason ([`ReadError`]).

mod arff;
mod csv;
mod error;
mod fields;
mod libsvm;
mod line_error;
mod lines;
mod mulan_xml;
mod nominal;
mod number;
pub mod open_bandit;
mod options;
mod sniff;
mod source;

pub use error::ReadError;
pub(crate) use error::excerpt;
pub use options::{
    DEFAULT_MAX_LINE_BYTES, Format, Header, MAX_MAX_LINE_BYTES, ReadOptions, Target,
};
pub use source::{DataSource, Examples};

/// The most bytes a small text file the program reads whole may hold: a job file, a
/// Kafka client properties file, a hostfile, a CA certificate file, a click log's
/// `simulator.json` (64 MiB, far above any real one). A larger file, `/dev/zero` or an
/// endless pipe is refused once this much is read, not read until memory runs out.
pub const MAX_SMALL_FILE_BYTES: u64 = 64 << 20;

/// Reads a small file whole, at most [`MAX_SMALL_FILE_BYTES`]: one byte more is an error
/// (of kind `InvalidData`, "larger than 64 MiB").
pub fn read_small_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_SMALL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SMALL_FILE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB", MAX_SMALL_FILE_BYTES >> 20),
        ));
    }
    Ok(bytes)
}

/// [`read_small_file`] as UTF-8 text (invalid UTF-8 is an `InvalidData` error).
pub fn read_small_text(path: &std::path::Path) -> std::io::Result<String> {
    String::from_utf8(read_small_file(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
