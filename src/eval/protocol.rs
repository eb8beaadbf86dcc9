use super::{EvalReport, Scorer};
use crate::source::Dataset;
use flowboost_operators::boosters::{BoosterConfig, build};
use flowboost_operators::data::Example;
use flowboost_operators::engine::Prediction;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An evaluation protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Test-then-train over the whole stream.
    Prequential,
    /// Train on the first part, then test (still learning) on the second.
    Holdout,
    /// Score the final 20% of one stream.
    Last20,
}

impl Protocol {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Prequential => "prequential",
            Protocol::Holdout => "holdout",
            Protocol::Last20 => "last20",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "prequential" => Ok(Protocol::Prequential),
            "holdout" => Ok(Protocol::Holdout),
            "last20" => Ok(Protocol::Last20),
            _ => Err(format!(
                "unknown protocol '{s}' (expected prequential, holdout or last20)"
            )),
        }
    }
}

/// How to evaluate.
#[derive(Clone, Debug)]
pub struct EvalSpec {
    /// The protocol.
    pub protocol: Protocol,
    /// Shuffle each part with this seed first.
    pub shuffle: Option<u64>,
    /// Write one JSON line per evaluated example (id and prediction) here.
    pub predictions: Option<PathBuf>,
    /// Show a progress bar on stderr (only when it is a terminal, and after one second).
    pub progress: bool,
}

#[derive(Serialize)]
struct PredictionLine<'a> {
    id: u64,
    prediction: PredictionValue<'a>,
    expert: u32,
}

#[derive(Serialize)]
#[serde(untagged)]
enum PredictionValue<'a> {
    Class(u32),
    Labels(&'a [u32]),
}

/// Runs `config` over `data` with `spec`'s protocol and returns the report.
pub fn evaluate(
    data: &Dataset,
    config: &BoosterConfig,
    spec: &EvalSpec,
) -> Result<EvalReport, String> {
    let schema = data.schema().clone();
    let booster = build(&schema, config)?;
    let mut model = booster.into_sequential();
    let parts = data.parts();
    match spec.protocol {
        Protocol::Holdout if parts != 2 => {
            return Err("the holdout protocol needs a training file (--data) and a test file (--test)".into());
        }
        Protocol::Prequential | Protocol::Last20 if parts == 0 => {
            return Err("no data".into());
        }
        _ => {}
    }
    let start = Instant::now();
    // For last20, the number of examples fixes where the scored part starts.
    let last20_from = if spec.protocol == Protocol::Last20 {
        let mut total = 0;
        for i in 0..parts {
            total += data.count(i)?;
        }
        Some(total - total / 5)
    } else {
        None
    };
    let mut scorer = Scorer::new(schema.task, schema.num_labels());
    let mut out = Prediction::default();
    let mut writer = match &spec.predictions {
        Some(p) => Some(BufWriter::new(File::create(p).map_err(|e| {
            format!("{}: cannot create the predictions file: {e}", p.display())
        })?)),
        None => None,
    };
    let mut progress = Progress::new(spec.progress);
    let mut seen: u64 = 0;
    for part in 0..parts {
        let scored_part = match spec.protocol {
            Protocol::Holdout => part == 1,
            _ => true,
        };
        let stream: Box<dyn Iterator<Item = Result<Example, String>>> = match spec.shuffle {
            Some(seed) => Box::new(data.shuffled(part, seed ^ part as u64)?.into_iter().map(Ok)),
            None => data.stream(part)?,
        };
        for ex in stream {
            let ex = Arc::new(ex?);
            let evaluated = scored_part && last20_from.is_none_or(|from| seen >= from);
            model.process(ex.clone(), &mut out);
            seen += 1;
            if evaluated {
                scorer.update(&out, ex.label.as_ref());
                if let Some(w) = writer.as_mut() {
                    let prediction = if out.labels.is_empty() && schema.task != flowboost_operators::data::Task::Multilabel {
                        PredictionValue::Class(out.class)
                    } else {
                        PredictionValue::Labels(&out.labels)
                    };
                    let line = PredictionLine {
                        id: out.id,
                        prediction,
                        expert: out.expert,
                    };
                    serde_json::to_writer(&mut *w, &line).map_err(|e| e.to_string())?;
                    w.write_all(b"\n").map_err(|e| e.to_string())?;
                }
            }
            if seen % 1024 == 0 {
                progress.tick(seen, &scorer, start);
            }
        }
    }
    if let Some(mut w) = writer {
        w.flush().map_err(|e| format!("cannot write the predictions file: {e}"))?;
    }
    progress.finish();
    let seconds = start.elapsed().as_secs_f64();
    let mut report = EvalReport {
        algorithm: config.algorithm.name().to_string(),
        task: schema.task.name().to_string(),
        protocol: spec.protocol.name().to_string(),
        weak: config.weak.name().to_string(),
        learners: booster_learners(config),
        engine: "sequential".into(),
        workers: 1,
        seed: config.seed,
        gamma: config.gamma,
        data: (0..parts).map(|i| data.part_name(i)).collect(),
        features: schema.dim(),
        labels: schema.num_labels(),
        examples: seen,
        evaluated: scorer.count(),
        seconds,
        examples_per_second: if seconds > 0.0 { seen as f64 / seconds } else { 0.0 },
        accuracy: None,
        zero_one_loss: None,
        rank_loss: None,
        hamming_loss: None,
        precision: None,
        recall: None,
        f1: None,
        micro_f1: None,
        macro_f1: None,
    };
    report.set_metrics(&scorer);
    Ok(report)
}

fn booster_learners(config: &BoosterConfig) -> usize {
    if config.algorithm == flowboost_operators::boosters::Algorithm::Single {
        1
    } else {
        config.learners
    }
}

/// A progress line on stderr: only when wanted and stderr is a terminal, and only once the
/// run has lasted one second.
struct Progress {
    bar: Option<ProgressBar>,
    shown: bool,
}

impl Progress {
    fn new(wanted: bool) -> Self {
        let bar = (wanted && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {human_pos} examples ({per_sec}) {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar
        });
        Progress { bar, shown: false }
    }

    fn tick(&mut self, seen: u64, scorer: &Scorer, start: Instant) {
        let Some(bar) = &self.bar else { return };
        if !self.shown && start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        bar.set_position(seen);
        if scorer.count() > 0 {
            let (name, value) = scorer.headline();
            bar.set_message(format!("{name} {value:.4}"));
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
