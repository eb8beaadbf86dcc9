//! # flowboost-operators
//!
//! The boosting itself, independent of any runtime: the data model ([`data`]), weak
//! learners ([`learners`]), exact potentials ([`potentials`]), the boosters as chains of
//! stages ([`boosters`]), the stage engine ([`engine`]) and evaluation metrics
//! ([`metrics`]).
//!
//! The modules stand on floors, and a module imports only from the floors below its own
//! (`tests/floors.rs` of the workspace checks it):
//!
//! 1. [`named`], [`rng`]: names of options, random streams;
//! 2. [`topk`]: the top-k rules (the feedback of [`data`] carries their pairs);
//! 3. [`data`], [`drift`], [`hedge`], [`metrics`], [`potentials`]: the data model, the
//!    drift detectors, Hedge, the metrics, the potentials;
//! 4. [`learners`], [`thresholding`]: the weak learners and the threshold learners;
//! 5. [`engine`]: records, stages, the terminal, the feedback join's rules
//!    ([`engine::feedback`]), the sequential runner;
//! 6. [`boosters`]: the boosters' stages, their registry and the model options;
//! 7. [`dataflow`]: the timely operators (the stage blocks, the terminal, the feedback
//!    join on differential-dataflow, the runner).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod boosters;
pub mod data;
pub mod dataflow;
pub mod drift;
pub mod engine;
pub mod hedge;
pub mod learners;
pub mod metrics;
pub mod named;
pub mod potentials;
pub mod rng;
pub mod thresholding;
pub mod topk;
