use super::args::{DataArgs, EngineArgs, ModelArgs};
use crate::eval::{Engine, Scorer};
use clap::Args;
use flowboost_operators::boosters::build;
use flowboost_operators::data::{Example, Task};
use flowboost_operators::dataflow::run_dataflow;
use flowboost_operators::engine::{Prediction, PredictionSink};
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Options of `flowboost run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub data: DataArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelArgs,

    /// The number of timely worker threads; the stages are split into contiguous blocks
    /// across them (a pipeline).
    #[arg(long, default_value_t = 1, value_name = "W")]
    pub workers: usize,

    /// Records per dataflow timestamp.
    #[arg(long, default_value_t = 256, value_name = "B")]
    pub batch: usize,

    /// Write the predictions (JSON lines: id, prediction, scores, chosen expert) to this
    /// file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print progressive metrics to stderr every this many examples (0: only the summary).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub report_every: u64,
}

#[derive(Serialize)]
struct OutputLine<'a> {
    id: u64,
    prediction: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<&'a [u32]>,
    scores: &'a [f64],
    expert: u32,
}

/// Writes predictions as JSON lines and keeps progressive (test-then-train) metrics.
struct RunSink {
    task: Task,
    out: Box<dyn Write>,
    scorer: Scorer,
    seen: u64,
    report_every: u64,
    start: Instant,
}

impl PredictionSink for RunSink {
    type Output = Result<(Scorer, u64), String>;

    fn accept(&mut self, p: Prediction, ex: Arc<Example>) -> Result<(), String> {
        let line = OutputLine {
            id: p.id,
            prediction: p.class,
            labels: (self.task == Task::Multilabel).then_some(&p.labels[..]),
            scores: &p.scores,
            expert: p.expert,
        };
        serde_json::to_writer(&mut self.out, &line).map_err(|e| e.to_string())?;
        self.out
            .write_all(b"\n")
            .map_err(|e| format!("cannot write the predictions: {e}"))?;
        self.scorer.update(&p, ex.label.as_ref());
        self.seen += 1;
        if self.report_every > 0 && self.seen.is_multiple_of(self.report_every) {
            let (name, value) = self.scorer.headline();
            let secs = self.start.elapsed().as_secs_f64();
            eprintln!(
                "flowboost: {} examples, progressive {name} {value:.4}, {:.0} examples/s",
                self.seen,
                self.seen as f64 / secs.max(1e-9)
            );
        }
        Ok(())
    }

    fn finish(mut self) -> Self::Output {
        self.out
            .flush()
            .map_err(|e| format!("cannot write the predictions: {e}"))?;
        Ok((self.scorer, self.seen))
    }
}

/// Runs `flowboost run`: source -> dataflow -> sink.
pub fn run(args: RunArgs) -> Result<(), String> {
    let data = Arc::new(args.data.open(args.model.seed)?);
    let schema = data.schema().clone();
    let config = args.model.booster(schema.task);
    args.model.check_applicable(config.algorithm)?;
    build(&schema, &config)?;
    let engine = EngineArgs {
        engine: "dataflow".into(),
        workers: args.workers,
        batch: args.batch,
    }
    .engine()?;
    let Engine::Dataflow(options) = engine else {
        unreachable!("run always uses the dataflow engine")
    };
    let out: Box<dyn Write + Send> = match &args.output {
        Some(p) => Box::new(BufWriter::new(File::create(p).map_err(|e| {
            format!("{}: cannot create the output file: {e}", p.display())
        })?)),
        None => Box::new(BufWriter::new(std::io::stdout())),
    };
    let out = Mutex::new(Some(out));
    let start = Instant::now();
    let task = schema.task;
    let k = schema.num_labels();
    let report_every = args.report_every;
    let make_sink = move || RunSink {
        task,
        out: match out.lock().ok().and_then(|mut o| o.take()) {
            Some(o) => o,
            None => Box::new(std::io::sink()),
        },
        scorer: Scorer::new(task, k),
        seen: 0,
        report_every,
        start,
    };
    let source_data = data.clone();
    let build_schema = schema.clone();
    let build_config = config.clone();
    let (scorer, seen) = run_dataflow(
        &options,
        move || {
            let b = build(&build_schema, &build_config)?;
            Ok((b.stages, b.terminal, b.score_dim))
        },
        move || {
            let mut streams = Vec::new();
            for part in 0..source_data.parts() {
                streams.push(source_data.stream(part)?);
            }
            Ok(streams.into_iter().flatten())
        },
        make_sink,
    )??;
    let secs = start.elapsed().as_secs_f64();
    let (name, value) = scorer.headline();
    eprintln!(
        "flowboost: done: {} ({} x {}, {} worker(s)) on {}: {seen} examples in {secs:.2} s ({:.0} examples/s), progressive {name} {value:.4}",
        config.algorithm,
        if config.algorithm == flowboost_operators::boosters::Algorithm::Single {
            1
        } else {
            config.learners
        },
        config.weak.name(),
        options.workers,
        (0..data.parts())
            .map(|i| data.part_name(i))
            .collect::<Vec<_>>()
            .join(" + "),
        seen as f64 / secs.max(1e-9),
    );
    Ok(())
}
