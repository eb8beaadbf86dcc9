//! The engine comparison shared by the `engine_equivalence*` tests: a run on the
//! sequential runner against the timely dataflow with 1, 2 and 3 workers (7-record
//! epochs, so records span many of them), compared bit for bit.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{BoosterConfig, build};
use flowboost::operators::data::Example;
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost::operators::engine::{
    ItemStream, Prediction, PredictionSink, SinkError, SourceError,
};
use std::sync::Arc;

/// A sink that keeps every prediction.
#[derive(Default)]
pub struct Collect(Vec<Prediction>);

impl PredictionSink for Collect {
    type Output = Vec<Prediction>;
    fn accept(&mut self, p: Prediction, _ex: Arc<Example>) -> Result<(), SinkError> {
        self.0.push(p);
        Ok(())
    }
    fn finish(self) -> Vec<Prediction> {
        self.0
    }
}

/// A prediction as exact bit patterns, so that comparisons are exact (and NaN-safe).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredictionBits {
    pub seq: u64,
    pub id: u64,
    pub class: u32,
    pub labels: Vec<u32>,
    /// The scores' bits.
    pub scores: Vec<u64>,
    pub expert: u32,
    pub top: Vec<u32>,
    pub shown: Vec<u32>,
}

/// The bit patterns of predictions.
pub fn bits(p: &[Prediction]) -> Vec<PredictionBits> {
    p.iter()
        .map(|p| PredictionBits {
            seq: p.seq,
            id: p.id,
            class: p.class,
            labels: p.labels.clone(),
            scores: p.scores.iter().map(|s| s.to_bits()).collect(),
            expert: p.expert,
            top: p.top.clone(),
            shown: p.shown.clone(),
        })
        .collect()
}

/// Runs `config` on the generator's stream with the sequential runner and checks that it
/// predicted every example; then checks that the dataflow with 1, 2 and 3 workers gives
/// the same predictions bit for bit. Returns the sequential predictions, for the caller's
/// own checks that the run is not degenerate.
pub fn sequential_equals_dataflow(
    gen_config: &GeneratorConfig,
    config: &BoosterConfig,
) -> Vec<Prediction> {
    let schema = Generator::new(gen_config.clone()).unwrap().schema().clone();
    let mut runner = build(&schema, config).unwrap().into_sequential();
    let sequential = runner
        .run(
            Generator::new(gen_config.clone())
                .unwrap()
                .map(Ok::<_, SourceError>),
            Collect::default(),
        )
        .unwrap();
    assert_eq!(sequential.len() as u64, gen_config.examples);
    for workers in [1, 2, 3] {
        let options = DataflowOptions {
            workers,
            max_epochs_in_flight: 3,
            source_batch: 5,
        };
        let (s, c, g) = (schema.clone(), config.clone(), gen_config.clone());
        let dataflow = run_dataflow(
            &options,
            move |_, _| build(&s, &c),
            move || {
                Ok(ItemStream::plain(
                    Generator::new(g.clone())
                        .map_err(|e| e.to_string())?
                        .map(Ok::<_, SourceError>),
                    7,
                ))
            },
            Collect::default,
            None,
        )
        .unwrap();
        assert_eq!(
            bits(&sequential),
            bits(&dataflow),
            "{:?} with {workers} workers differs from the sequential runner",
            config
        );
    }
    sequential
}
