use super::args::DataArgs;
use super::output::Output;
use super::prediction_line::PredictionLine;
use crate::model::{SavedModel, SchemaMap};
use crate::source::Dataset;
use clap::Args;
use flowboost_connectors::readers::{DataSource, ReadOptions};
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

/// The data to score: files are opened for scoring (their labels are not needed: a file
/// of one class, or unlabeled, is read), a generator as it is.
fn open_data(data: &DataArgs, seed: u64) -> Result<Dataset, String> {
    let Some(file) = &data.data else {
        return data.open(seed);
    };
    if data.examples.is_some() {
        // The usual refusal.
        return data.open(seed);
    }
    let mut files = vec![file.clone()];
    files.extend(data.test.clone());
    let options = ReadOptions {
        format: data.format,
        labels: data.labels,
        xml: data.xml.clone(),
        header: data.header,
        target: data.target.clone(),
        ignore: data.ignore.clone(),
        nominal: data.nominal.clone(),
        max_line_bytes: data.max_line_bytes,
    };
    DataSource::open_for_scoring(&files, &options)
        .map(Dataset::Files)
        .map_err(|e| e.to_string())
}

/// Runs `flowboost predict`: every example predicted by the saved model, nothing learned
/// (labels in the data are not looked at). A file's records are read in the model's
/// schema: features by name, so a file need not have the model's labels (nor any), and a
/// record with a feature the model does not have is an error naming it. A generator's
/// stream must be the model's.
pub fn run(args: PredictArgs) -> Result<(), String> {
    if let (Some(seed), Some(file)) = (args.seed, &args.data.data) {
        return Err(format!(
            "--seed {seed} is the generator's (without --data): predicting --data {} uses no seed",
            file.display()
        ));
    }
    let saved = SavedModel::read(&args.model)?;
    let name = args.model.display().to_string();
    let data = open_data(&args.data, args.seed.unwrap_or(saved.header.config.seed))?;
    if args.data.data.is_none() {
        // A generator makes its whole stream, task and labels included: it must be the
        // model's.
        saved.check_schema(data.schema(), &name)?;
    }
    let map = SchemaMap::new(&saved.header.schema, data.schema())
        .map_err(|e| format!("{name}: the model does not fit this stream: {e}"))?;
    let task = saved.header.schema.task;
    let mut runner = saved.chain(&name)?.into_sequential();
    let dim = runner.score_dim();
    let mut out = Output::create(args.output.as_deref())?;
    let start = Instant::now();
    let mut n = 0u64;
    let mut p = Prediction::default();
    for part in 0..data.parts() {
        for ex in data.stream(part)? {
            let ex = map
                .fit(ex?)
                .map_err(|e| format!("{}: {e}", data.part_name(part)))?;
            let rec = InFlight::predict_only(0, Arc::new(ex), dim);
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
