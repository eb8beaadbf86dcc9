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
