//! # flowboost
//!
//! Online boosting as a streaming dataflow. This crate is the application: evaluation
//! protocols ([`eval`]), data sources ([`source`]), the `flowboost` command line ([`cli`]),
//! and a facade over the three library crates ([`operators`], [`connectors`], [`model`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod eval;
pub mod fuzz;
pub mod kafka;
pub mod serve;
pub mod source;

pub use flowboost_connectors as connectors;
pub use flowboost_model as model;
pub use flowboost_operators as operators;
