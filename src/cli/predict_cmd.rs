use super::args::DataArgs;
use super::output::Output;
use super::prediction_line::PredictionLine;
use crate::model::SavedModel;
use clap::Args;
use flowboost_operators::engine::{InFlight, Prediction};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Options of `flowboost predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The model file (written by `eval`, `run` or the Kafka job with --save-model, or by
    /// the library's `Model::save`); read as its framing says, at most 16 GiB.
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub data: DataArgs,

    /// The generator's seed (without --data) [default: the model's seed].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Write the predictions (JSON lines: id, prediction, labels, scores, expert) to this
    /// file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `flowboost predict`: every example predicted by the saved model, nothing learned
/// (labels in the data are not looked at).
pub fn run(args: PredictArgs) -> Result<(), String> {
    let saved = SavedModel::read(&args.model)?;
    let name = args.model.display().to_string();
    let data = args
        .data
        .open(args.seed.unwrap_or(saved.header.config.seed))?;
    saved.check_schema(data.schema(), &name)?;
    let task = data.schema().task;
    let mut runner = saved.chain(&name)?.into_sequential();
    let dim = runner.score_dim();
    let mut out = Output::create(args.output.as_deref())?;
    let start = Instant::now();
    let mut n = 0u64;
    let mut p = Prediction::default();
    for part in 0..data.parts() {
        for ex in data.stream(part)? {
            let rec = InFlight::predict_only(0, Arc::new(ex?), dim);
            runner.process_record(rec, &mut p);
            PredictionLine::new(&p, task).write(&mut out)?;
            n += 1;
        }
    }
    out.flush()?;
    let secs = start.elapsed().as_secs_f64();
    tracing::info!(
        examples = n,
        seconds = secs,
        "flowboost: predict: {} ({}) on {}: {n} examples in {secs:.2} s ({:.0} examples/s)",
        saved.header.algorithm,
        name,
        (0..data.parts())
            .map(|i| data.part_name(i))
            .collect::<Vec<_>>()
            .join(" + "),
        n as f64 / secs.max(1e-9)
    );
    Ok(())
}
