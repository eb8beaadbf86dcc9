use super::engine::{Engine, FeedbackOptions, default_pending_ttl, epoch_rule};
use super::{Curve, EvalReport, MinMaxScaling, Scorer};
use crate::model::{FeedbackRun, ModelPlan, ModelWriter, Progress as SavedProgress, worker_chains};
use crate::source::{Dataset, ExampleStream};
use flowboost_operators::boosters::{BoosterConfig, build};
use flowboost_operators::data::{Example, Label, Task};
use flowboost_operators::engine::feedback::{JoinConfig, JoinCounts, JoinReport};
use flowboost_operators::engine::{
    ChainSnapshot, FeedbackSetup, ItemStream, Oracle, OracleKind, Prediction, PredictionSink,
    Sequencer, SinkError, SourceError,
};
use flowboost_operators::metrics::rank_loss;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::cell::Cell;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::rc::Rc;
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

flowboost_operators::named_values!(
    Protocol,
    "protocol",
    Prequential => "prequential",
    Holdout => "holdout",
    Last20 => "last20",
);

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
    /// Feedback after the predictions (delayed labels); top-k boosters always get the top-k
    /// oracle's feedback (with this delay, or none).
    pub feedback: Option<FeedbackOptions>,
    /// Stream the training part this many times (holdout protocol only).
    pub loops: usize,
    /// Record the learning curve (the running mean loss over the whole stream).
    pub curve: bool,
    /// Holdout: predict the test part with the labels hidden from the model (it stops
    /// learning after the training part, as the thresholding paper evaluates); the
    /// metrics still use the true labels.
    pub frozen_test: bool,
    /// Scale the features with min-max statistics of the training part (see
    /// [`MinMaxScaling`](super::MinMaxScaling)).
    pub scale: bool,
    /// The model to start from and where to save it.
    pub model: ModelPlan,
    /// Inputs per epoch (the feedback join works per epoch; with feedback, each feedback
    /// record also ends its epoch).
    pub epoch_size: usize,
}

/// What a feedback run needs to know.
#[derive(Clone, Copy, Debug)]
pub struct Feedback {
    /// The delay and the join's time-to-live.
    pub options: FeedbackOptions,
    /// How feedback is made from the true label.
    pub oracle: OracleKind,
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

/// Scores the predictions from `eval_from` on and writes the prediction lines.
struct EvalSink {
    task: Task,
    scorer: Scorer,
    writer: Option<(PathBuf, BufWriter<File>)>,
    eval_from: u64,
    seen: u64,
    progress: Progress,
    start: Instant,
    curve: Option<Curve>,
    counters: Option<JoinCounts>,
    /// Frozen test: the true labels of the scored examples, in stream order.
    truth: Option<Arc<Vec<Option<Label>>>>,
    /// When the first scored prediction came out.
    eval_started: Option<Instant>,
    /// Where snapshots of the model go.
    model: Option<ModelWriter>,
    /// How the run makes its feedback (saved with the model).
    feedback_run: Option<FeedbackRun>,
}

/// What an evaluation run returns.
struct SinkOutput {
    /// The scores.
    scorer: Scorer,
    /// The examples seen.
    seen: u64,
    /// The feedback join's counts (with feedback).
    counters: Option<JoinCounts>,
    /// The learning curve (when asked).
    curve: Option<Curve>,
    /// When the evaluated part (holdout: the test part) began.
    eval_started: Option<Instant>,
}

impl PredictionSink for EvalSink {
    type Output = Result<SinkOutput, String>;

    fn join_counts(&mut self, counts: JoinCounts) {
        self.counters = Some(counts);
    }

    fn snapshot(&mut self, snapshot: ChainSnapshot) -> Result<(), SinkError> {
        let Some(writer) = &self.model else {
            return Ok(());
        };
        let progress = SavedProgress {
            seen: self.seen,
            scorer: self.scorer.clone(),
        };
        writer
            .write(snapshot, Some(progress), self.feedback_run)
            .map_err(SinkError::new)?;
        Ok(())
    }

    fn accept(&mut self, out: Prediction, ex: Arc<Example>) -> Result<(), SinkError> {
        if let (Some(curve), Some(label)) = (self.curve.as_mut(), ex.label.as_ref()) {
            curve.push(match label.class() {
                Some(y) => f64::from(u8::from(out.class != y)),
                None => rank_loss(&out.scores, label.relevant()),
            });
        }
        if self.seen >= self.eval_from {
            if self.eval_started.is_none() {
                self.eval_started = Some(Instant::now());
            }
            let label = match &self.truth {
                Some(truth) => truth
                    .get((self.seen - self.eval_from) as usize)
                    .and_then(|l| l.as_ref()),
                None => ex.label.as_ref(),
            };
            self.scorer.update(&out, label);
            if let Some((path, w)) = self.writer.as_mut() {
                let prediction = if self.task == Task::Multilabel {
                    PredictionValue::Labels(&out.labels)
                } else {
                    PredictionValue::Class(out.class)
                };
                let line = PredictionLine {
                    id: out.id,
                    prediction,
                    expert: out.expert,
                };
                serde_json::to_writer(&mut *w, &line)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                w.write_all(b"\n")
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        self.seen += 1;
        if self.seen.is_multiple_of(1024) {
            self.progress.tick(self.seen, &self.scorer, self.start);
        }
        Ok(())
    }

    fn finish(mut self) -> Self::Output {
        self.progress.finish();
        if let Some((path, mut w)) = self.writer.take() {
            w.flush()
                .map_err(|e| format!("{}: cannot write the predictions: {e}", path.display()))?;
        }
        Ok(SinkOutput {
            scorer: self.scorer,
            seen: self.seen,
            counters: self.counters,
            curve: self.curve,
            eval_started: self.eval_started,
        })
    }
}

/// The examples of every part, in order (each shuffled first when asked); the first part
/// `loops` times (each pass shuffled with its own seed derived from the shuffle seed).
fn all_parts(data: &Dataset, shuffle: Option<u64>, loops: usize) -> Result<ExampleStream, String> {
    all_parts_until(data, shuffle, loops, data.parts())
}

/// [`all_parts`] over the first `parts` parts only.
fn all_parts_until(
    data: &Dataset,
    shuffle: Option<u64>,
    loops: usize,
    parts: usize,
) -> Result<ExampleStream, String> {
    let mut streams: Vec<ExampleStream> = Vec::new();
    for part in 0..parts.min(data.parts()) {
        let passes = if part == 0 { loops.max(1) } else { 1 };
        for pass in 0..passes {
            streams.push(match shuffle {
                Some(seed) => {
                    let seed = seed ^ part as u64 ^ ((pass as u64) << 32);
                    Box::new(data.shuffled(part, seed)?.into_iter().map(Ok))
                }
                None => data.stream(part)?,
            });
        }
    }
    Ok(Box::new(streams.into_iter().flatten()))
}

/// The frozen test part (`--frozen-test`).
struct FrozenTest {
    /// Its examples (shuffled when asked) without their labels.
    examples: Arc<Vec<Example>>,
    /// Their labels, in the same order.
    labels: Arc<Vec<Option<Label>>>,
}

fn frozen_test_part(data: &Dataset, shuffle: Option<u64>) -> Result<FrozenTest, String> {
    let part = 1;
    let examples: Vec<Example> = match shuffle {
        Some(seed) => data.shuffled(part, seed ^ part as u64)?,
        None => data.stream(part)?.collect::<Result<_, _>>()?,
    };
    let mut labels = Vec::with_capacity(examples.len());
    let hidden = examples
        .into_iter()
        .map(|mut ex| {
            labels.push(ex.label.take());
            ex
        })
        .collect();
    Ok(FrozenTest {
        examples: Arc::new(hidden),
        labels: Arc::new(labels),
    })
}

/// Runs `config` over `data` with `spec`'s protocol on `engine` and returns the report
/// (and the learning curve when `spec.curve`).
pub fn evaluate(
    data: Arc<Dataset>,
    config: &BoosterConfig,
    spec: &EvalSpec,
    engine: &Engine,
) -> Result<(EvalReport, Option<Curve>), String> {
    let schema = data.schema().clone();
    let loops = spec.loops.max(1);
    if loops > 1 && spec.protocol != Protocol::Holdout {
        return Err("--loops needs the holdout protocol (--data and --test)".into());
    }
    let feedback = if config.algorithm.is_topk() {
        Some(Feedback {
            options: spec.feedback.unwrap_or_default(),
            oracle: OracleKind::TopK,
        })
    } else {
        spec.feedback.map(|options| Feedback {
            options,
            oracle: OracleKind::Labels,
        })
    };
    // Fail early (and identically for both engines) on a configuration that cannot work.
    let fresh = build(&schema, config).map_err(|e| e.to_string())?;
    // The chain to start from: a fresh one, or the start model's (checked against a fresh
    // build); a resumed run continues its stream, its metrics and its pending feedback.
    let plan = &spec.model;
    // Without --pending-ttl the join forgets joined events after the default time-to-live
    // (so its memory follows the delay, not the stream's length); a resumed run keeps the
    // one its model was saved with.
    let feedback = feedback.map(|mut f| {
        if f.options.ttl.is_none() {
            f.options.ttl = match (&plan.start, plan.resume) {
                (Some(saved), true) => saved.body.feedback_run.and_then(|r| r.ttl),
                _ => Some(default_pending_ttl(f.options.delay, spec.epoch_size, false)),
            };
        }
        f
    });
    let chains = worker_chains(
        plan.start.as_deref(),
        fresh,
        engine.workers(),
        schema.clone(),
        config.clone(),
    )?;
    let (skip, resumed_progress, resumed_source, resumed_join) = match (&plan.start, plan.resume) {
        (Some(saved), true) => {
            let had = saved.body.feedback_run;
            let wanted = feedback.map(|f| FeedbackRun {
                delay: f.options.delay,
                ttl: f.options.ttl,
                oracle: f.oracle,
            });
            if wanted != had {
                return Err(format!(
                    "--resume: the model was saved {} and this run {}; resume with the same feedback options",
                    describe_feedback(had),
                    describe_feedback(wanted)
                ));
            }
            let source = saved.body.source.clone().unwrap_or_default();
            (
                source.events,
                saved.body.progress.clone(),
                Some(source),
                saved.body.join.clone().map(Arc::new),
            )
        }
        _ => (0, None, None, None),
    };
    let parts = data.parts();
    let start = Instant::now();
    // The scored examples are those from `eval_from` on (in stream order).
    let eval_from = match spec.protocol {
        Protocol::Prequential => 0,
        Protocol::Holdout => {
            if parts != 2 {
                return Err(
                    "the holdout protocol needs a training file (--data) and a test file (--test)"
                        .into(),
                );
            }
            data.count(0)? * loops as u64
        }
        Protocol::Last20 => {
            let mut total = 0;
            for i in 0..parts {
                total += data.count(i)?;
            }
            total - total / 5
        }
    };
    let scaling = if spec.scale {
        Some(Arc::new(MinMaxScaling::fit(&data, schema.dim())?))
    } else {
        None
    };
    let frozen = if spec.frozen_test {
        if spec.protocol != Protocol::Holdout {
            return Err("--frozen-test needs the holdout protocol (--data and --test)".into());
        }
        let FrozenTest { examples, labels } = frozen_test_part(&data, spec.shuffle)?;
        let examples = match &scaling {
            Some(sc) => Arc::new(examples.iter().map(|e| sc.apply(e.clone())).collect()),
            None => examples,
        };
        Some(FrozenTest { examples, labels })
    } else {
        None
    };
    let truth = frozen.as_ref().map(|f| f.labels.clone());
    let writer = match &spec.predictions {
        Some(p) => Some((
            p.clone(),
            BufWriter::new(File::create(p).map_err(|e| {
                format!("{}: cannot create the predictions file: {e}", p.display())
            })?),
        )),
        None => None,
    };
    let task = schema.task;
    let k = schema.num_labels();
    let progress = spec.progress;
    let shuffle = spec.shuffle;
    let want_curve = spec.curve;
    let sink_parts = std::sync::Mutex::new(Some(writer));
    let model_writer = plan.save.clone();
    let make_sink = move || EvalSink {
        task,
        scorer: resumed_progress
            .as_ref()
            .map_or_else(|| Scorer::new(task, k), |p| p.scorer.clone()),
        seen: resumed_progress.as_ref().map_or(0, |p| p.seen),
        model: model_writer.clone(),
        writer: sink_parts.lock().ok().and_then(|mut w| w.take()).flatten(),
        eval_from,
        progress: Progress::new(progress),
        start,
        curve: want_curve.then(Curve::default),
        counters: None,
        truth: truth.clone(),
        eval_started: None,
        feedback_run: feedback.map(|f| FeedbackRun {
            delay: f.options.delay,
            ttl: f.options.ttl,
            oracle: f.oracle,
        }),
    };
    let labels = schema.num_labels();
    let setup = feedback.map(|f| FeedbackSetup {
        join: JoinConfig {
            ttl: f.options.ttl,
            lag: 1,
            window: false,
        },
        topk: config.topk,
        labels,
        restored: resumed_join.clone(),
    });
    let rule = epoch_rule(spec.epoch_size, feedback.is_some());
    let snapshots = plan.snapshots;
    let start_state = resumed_source.unwrap_or_default();
    let frozen_examples = frozen.map(|f| f.examples);
    let source_of = move |data: &Dataset| -> Result<ItemStream<ExampleStream>, SourceError> {
        let scaled = |s: ExampleStream| -> ExampleStream {
            match &scaling {
                Some(sc) => {
                    let sc = sc.clone();
                    Box::new(s.map(move |r| r.map(|e| sc.apply(e))))
                }
                None => s,
            }
        };
        // With a frozen test part: set when the stream reaches it.
        let test_started = Rc::new(Cell::new(false));
        let all: ExampleStream = match &frozen_examples {
            None => scaled(all_parts(data, shuffle, loops)?),
            Some(test) => {
                let train = scaled(all_parts_until(data, shuffle, loops, 1)?);
                let test = test.clone();
                let n = test.len();
                let started = test_started.clone();
                Box::new(train.chain((0..n).map(move |i| {
                    started.set(true);
                    Ok(test[i].clone())
                })))
            }
        };
        // A resumed run skips the events its model has taken (reading errors included).
        // SIGTERM or SIGINT ends the stream here (see `stop`).
        let examples: ExampleStream = Box::new(super::stop::until_stopped(skip_events(all, skip)));
        let oracle = feedback.map(|f| {
            Oracle::new(
                f.oracle,
                f.options.delay,
                start_state.oracle.clone().unwrap_or_default(),
            )
        });
        let sequencer = Sequencer::new(rule, start_state.clone());
        let items = ItemStream::new(examples, oracle, sequencer, snapshots);
        Ok(if frozen_examples.is_some() {
            items.with_frozen_part(test_started)
        } else {
            items
        })
    };
    let source_data = data.clone();
    let SinkOutput {
        scorer,
        seen,
        counters,
        curve,
        eval_started,
    } = engine
        .run(chains, move || source_of(&source_data), make_sink, setup)
        .map_err(|e| e.to_string())??;
    let end = Instant::now();
    let seconds = (end - start).as_secs_f64();
    let (train_seconds, test_seconds) = match (spec.protocol, eval_started) {
        (Protocol::Holdout, Some(t)) => (
            Some((t - start).as_secs_f64()),
            Some((end - t).as_secs_f64()),
        ),
        _ => (None, None),
    };
    let mut report = EvalReport {
        algorithm: config.algorithm.name().to_string(),
        task: schema.task.name().to_string(),
        protocol: spec.protocol.name().to_string(),
        weak: if config.algorithm.is_thresholding() {
            "none".to_string()
        } else {
            config.weak.name().to_string()
        },
        learners: booster_learners(config),
        engine: engine.name().to_string(),
        workers: engine.workers(),
        seed: config.seed,
        gamma: config.gamma,
        data: (0..parts).map(|i| data.part_name(i)).collect(),
        features: schema.dim(),
        labels: schema.num_labels(),
        examples: seen,
        evaluated: scorer.count(),
        seconds,
        examples_per_second: if seconds > 0.0 {
            seen as f64 / seconds
        } else {
            0.0
        },
        accuracy: None,
        zero_one_loss: None,
        rank_loss: None,
        hamming_loss: None,
        precision: None,
        recall: None,
        f1: None,
        micro_f1: None,
        macro_f1: None,
        gamma_grid: None,
        loops,
        k: config.algorithm.is_topk().then_some(config.topk.k),
        rho: config.algorithm.is_topk().then_some(config.topk.rho),
        feedback_delay: feedback.map(|f| f.options.delay),
        pending_ttl: feedback.and_then(|f| f.options.ttl),
        feedback: counters.map(JoinReport::from),
        label_set: (schema.task == Task::Multilabel).then(|| {
            if config.algorithm.is_thresholding() {
                "positive".to_string()
            } else {
                config.label_set.unwrap_or_default().name().to_string()
            }
        }),
        frozen_test: spec.frozen_test,
        train_seconds,
        test_seconds,
    };
    report.set_metrics(&scorer);
    Ok((report, curve))
}

/// The stream after its first `n` events.
fn skip_events(stream: ExampleStream, n: u64) -> ExampleStream {
    if n == 0 {
        return stream;
    }
    Box::new(stream.skip(usize::try_from(n).unwrap_or(usize::MAX)))
}

fn describe_feedback(f: Option<FeedbackRun>) -> String {
    match f {
        None => "without delayed feedback".to_string(),
        Some(r) => format!(
            "with {} feedback delayed {} events (ttl {})",
            match r.oracle {
                OracleKind::Labels => "label",
                OracleKind::TopK => "top-k",
                OracleKind::Logged => "logged",
            },
            r.delay,
            r.ttl.map_or("none".to_string(), |t| format!("{t} epochs"))
        ),
    }
}

fn booster_learners(config: &BoosterConfig) -> usize {
    if config.algorithm == flowboost_operators::boosters::Algorithm::Single
        || config.algorithm.is_thresholding()
    {
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
                ProgressStyle::with_template(
                    "{spinner} {elapsed} {human_pos} examples ({per_sec}) {msg}",
                )
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
