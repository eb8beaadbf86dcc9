//! # flowboost
//!
//! Online boosting as a streaming dataflow. This crate is the application: evaluation
//! protocols, the `flowboost` command line, and a facade over the two library crates.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use flowboost_connectors as connectors;
pub use flowboost_operators as operators;
