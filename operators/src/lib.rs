//! # flowboost-operators
//!
//! The boosting itself, independent of any runtime: the data model ([`data`]), weak
//! learners ([`learners`]) and evaluation metrics ([`metrics`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod data;
pub mod learners;
pub mod metrics;
pub mod rng;
