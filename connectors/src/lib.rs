//! # flowboost-connectors
//!
//! The outside world: streaming readers for ARFF (+ MULAN XML), LIBSVM and CSV/TSV files
//! (gzip too), and seeded synthetic stream generators.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod generators;
#[cfg(feature = "kafka")]
pub mod kafka;
pub mod readers;
