//! # flowboost-connectors
//!
//! The outside world: streaming readers for ARFF (+ MULAN XML), LIBSVM and CSV/TSV files
//! (gzip too), and seeded synthetic stream generators.
// One exception, in `kafka::source`: a call of librdkafka's C API that the rdkafka crate
// does not wrap (the cached high watermark), behind `#[allow(unsafe_code)]` with its
// safety argument.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod generators;
#[cfg(feature = "kafka")]
pub mod kafka;
pub mod readers;
