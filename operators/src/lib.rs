//! # flowboost-operators
//!
//! The boosting itself, independent of any runtime: the data model ([`data`]), weak
//! learners ([`learners`]), exact potentials ([`potentials`]), the boosters as chains of
//! stages ([`boosters`]), the stage engine ([`engine`]) and evaluation metrics
//! ([`metrics`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod boosters;
pub mod data;
pub mod dataflow;
pub mod engine;
pub mod hedge;
pub mod learners;
pub mod metrics;
pub mod named;
pub mod potentials;
pub mod rng;
pub mod thresholding;
pub mod topk;
