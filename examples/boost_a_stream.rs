//! Boost a stream with the library API: a seeded generator, AdaBoost.OL over 10 Hoeffding
//! trees, the sequential runner and then the timely dataflow on 2 workers, which must give
//! the same predictions.
//!
//! Run with `cargo run --release --example boost_a_stream`.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams, build};
use flowboost::operators::data::Example;
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost::operators::engine::{
    ItemStream, Prediction, PredictionSink, SinkError, SourceError,
};
use flowboost::operators::learners::WeakKind;
use std::sync::Arc;

/// Counts correct predictions and keeps the predicted classes.
#[derive(Default)]
struct Score {
    correct: u64,
    seen: u64,
    classes: Vec<u32>,
}

impl PredictionSink for Score {
    type Output = Score;
    fn accept(&mut self, p: Prediction, ex: Arc<Example>) -> Result<(), SinkError> {
        let truth = ex.label.as_ref().and_then(|l| l.class());
        self.correct += u64::from(truth == Some(p.class));
        self.seen += 1;
        self.classes.push(p.class);
        Ok(())
    }
    fn finish(self) -> Score {
        self
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stream = GeneratorConfig::binary(7);
    let schema = Generator::new(stream.clone())?.schema().clone();
    let mut config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 1);
    config.learners = 10;
    config.tree_params = TreeParams::Random;

    let mut runner = build(&schema, &config)?.into_sequential();
    let sequential = runner.run(
        Generator::new(stream.clone())?.map(Ok::<_, SourceError>),
        Score::default(),
    )?;
    println!(
        "sequential: {} examples, progressive accuracy {:.4}",
        sequential.seen,
        sequential.correct as f64 / sequential.seen as f64
    );

    let options = DataflowOptions {
        workers: 2,
        ..DataflowOptions::default()
    };
    let (s, c, g) = (schema.clone(), config.clone(), stream.clone());
    let dataflow = run_dataflow(
        &options,
        move |_, _| build(&s, &c),
        // The stream, stamped into epochs of 256 events (the dataflow's timestamps).
        move || {
            Ok(ItemStream::plain(
                Generator::new(g.clone())
                    .map_err(SourceError::new)?
                    .map(Ok::<_, SourceError>),
                256,
            ))
        },
        Score::default,
        None,
    )?;
    println!(
        "dataflow, 2 workers: {} examples, same predictions: {}",
        dataflow.seen,
        dataflow.classes == sequential.classes
    );
    Ok(())
}
