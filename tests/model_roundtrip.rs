//! Exact resume, as River's `check_pickling` does it but for the whole stream: for every
//! algorithm of the registry (and both weak learners where the algorithm takes one), on
//! both engines (the sequential runner and the dataflow with 1 and 2 workers), with and
//! without delayed feedback, a run is cut at several points, its model saved to model-file
//! bytes, loaded, and continued on the rest of the stream. The continued predictions and
//! the final model's bytes must equal those of the uninterrupted run, bit for bit; and the
//! snapshots taken by every engine must be byte-identical to the sequential runner's.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::model::SavedModel;
use flowboost::operators::boosters::{
    AlgorithmSpec, Booster, BoosterConfig, ModelOption, REGISTRY, TreeParams, build,
};
use flowboost::operators::data::{Example, Schema, Task};
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow_with_feedback};
use flowboost::operators::engine::{
    ChainSnapshot, FeedbackLoop, FeedbackOptions, Oracle, Prediction, PredictionSink,
    SnapshotPolicy,
};
use flowboost::operators::learners::WeakKind;
use std::sync::Arc;

const EVENTS: u64 = 420;
const EVERY: u64 = 97;

/// Keeps every prediction (as bits) and every snapshot (as model-file bytes).
struct Recorder {
    config: BoosterConfig,
    schema: Schema,
    out: Recorded,
}

/// What a run recorded.
#[derive(Default)]
struct Recorded {
    predictions: Vec<Vec<u64>>,
    snapshots: Vec<Snapshot>,
}

/// A snapshot: after how many events, and the model file's bytes.
#[derive(PartialEq)]
struct Snapshot {
    events: u64,
    bytes: Vec<u8>,
}

fn bits(p: &Prediction) -> Vec<u64> {
    let mut v = vec![p.seq, p.id, u64::from(p.class), u64::from(p.expert)];
    v.extend(p.labels.iter().map(|&l| u64::from(l)));
    v.push(u64::MAX);
    v.extend(p.scores.iter().map(|s| s.to_bits()));
    v.push(u64::MAX);
    v.extend(p.top.iter().chain(&p.shown).map(|&l| u64::from(l)));
    v
}

impl PredictionSink for Recorder {
    type Output = Recorded;

    fn accept(&mut self, p: Prediction, _ex: Arc<Example>) -> Result<(), String> {
        self.out.predictions.push(bits(&p));
        Ok(())
    }

    fn snapshot(&mut self, snapshot: ChainSnapshot) -> Result<(), String> {
        let events = snapshot.position.events;
        let bytes = SavedModel::from_snapshot(&self.config, &self.schema, snapshot, None, None)
            .to_bytes()?;
        self.out.snapshots.push(Snapshot { events, bytes });
        Ok(())
    }

    fn finish(self) -> Self::Output {
        self.out
    }
}

/// Panics naming the first prediction that differs (not the whole streams).
fn same(a: &[Vec<u64>], b: &[Vec<u64>], what: &str) {
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        panic!("{what}: prediction {i} differs: {:?} vs {:?}", a[i], b[i]);
    }
    assert_eq!(a.len(), b.len(), "{what}: prediction counts");
}

#[derive(Clone, Copy, Debug)]
enum Engine {
    Sequential,
    Dataflow(usize),
}

struct Case {
    name: String,
    config: BoosterConfig,
    generator: GeneratorConfig,
    schema: Schema,
    feedback: Option<(FeedbackOptions, Oracle)>,
}

impl Case {
    fn stream(&self, skip: u64) -> impl Iterator<Item = Result<Example, String>> + use<> {
        Generator::new(self.generator.clone())
            .unwrap()
            .skip(skip as usize)
            .map(Ok)
    }

    fn recorder(&self) -> Recorder {
        Recorder {
            config: self.config.clone(),
            schema: self.schema.clone(),
            out: Recorded::default(),
        }
    }

    fn new_loop(&self) -> Option<FeedbackLoop> {
        self.feedback
            .map(|(o, oracle)| FeedbackLoop::new(o, oracle, self.schema.num_labels()))
    }

    /// Runs from `start` (a model file's bytes, or a fresh model) on the stream after the
    /// start's events.
    fn run(&self, engine: Engine, start: Option<&[u8]>) -> Recorded {
        let saved = start.map(|b| Arc::new(SavedModel::from_bytes(b, "snapshot").unwrap()));
        let skip = saved.as_ref().map_or(0, |s| s.body.position.events);
        let feedback = match &saved {
            Some(s) => s.body.feedback.clone(),
            None => self.new_loop(),
        };
        let policy = SnapshotPolicy {
            every: Some(EVERY),
            at_end: true,
        };
        let chain =
            |saved: &Option<Arc<SavedModel>>, schema: &Schema, config: &BoosterConfig| -> Booster {
                match saved {
                    Some(s) => s.chain("snapshot").unwrap(),
                    None => build(schema, config).unwrap(),
                }
            };
        match engine {
            Engine::Sequential => {
                let mut runner = chain(&saved, &self.schema, &self.config)
                    .into_sequential()
                    .with_snapshots(policy);
                match feedback {
                    Some(mut f) => runner
                        .run_with_feedback(self.stream(skip), self.recorder(), &mut f)
                        .unwrap(),
                    None => runner.run(self.stream(skip), self.recorder()).unwrap(),
                }
            }
            Engine::Dataflow(workers) => {
                let options = DataflowOptions {
                    workers,
                    batch: 7,
                    max_batches_in_flight: 3,
                    snapshots: policy,
                };
                let (s, c) = (self.schema.clone(), self.config.clone());
                let generator = self.generator.clone();
                let recorder = std::sync::Mutex::new(Some(self.recorder()));
                let fb = std::sync::Mutex::new(Some(feedback));
                run_dataflow_with_feedback(
                    &options,
                    move || Ok::<_, String>(chain(&saved, &s, &c)),
                    move || {
                        Ok(Generator::new(generator.clone())?
                            .skip(skip as usize)
                            .map(Ok))
                    },
                    move || recorder.lock().unwrap().take().unwrap(),
                    move || fb.lock().unwrap().take().flatten(),
                )
                .unwrap()
            }
        }
    }
}

fn generator_for(task: Task) -> GeneratorConfig {
    let name = match task {
        Task::Binary => "binary",
        Task::Multiclass => "multiclass",
        Task::Multilabel => "multilabel",
    };
    let mut g = GeneratorConfig::preset(name, 5).unwrap();
    g.examples = EVENTS;
    g
}

/// Every algorithm of the registry, with each weak learner it can take, without and with
/// delayed feedback (top-k boosters always learn from top-k feedback).
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for spec in REGISTRY {
        let spec: &AlgorithmSpec = spec;
        let task = spec.tasks[spec.tasks.len() - 1];
        let weaks: &[WeakKind] = if spec.reads(ModelOption::Weak) {
            &[WeakKind::Vfdt, WeakKind::Linear]
        } else {
            &[WeakKind::Vfdt]
        };
        for &weak in weaks {
            let generator = generator_for(task);
            let schema = Generator::new(generator.clone()).unwrap().schema().clone();
            let mut config = BoosterConfig::new(spec.algorithm, weak, 3);
            config.learners = 3;
            config.tree_params = TreeParams::Random;
            config.topk.k = 2;
            config.threshold = config
                .threshold_config()
                .unwrap_or(config.threshold.clone());
            let delayed = FeedbackOptions {
                delay: 11,
                capacity: 40,
                ttl: 1_000,
            };
            let feedbacks: Vec<Option<(FeedbackOptions, Oracle)>> = if spec.algorithm.is_topk() {
                vec![Some((delayed, Oracle::TopK(config.topk)))]
            } else {
                vec![None, Some((delayed, Oracle::Labels))]
            };
            for feedback in feedbacks {
                out.push(Case {
                    name: format!(
                        "{} ({}, {})",
                        spec.name,
                        weak.name(),
                        if feedback.is_some() {
                            "delayed feedback"
                        } else {
                            "labels"
                        }
                    ),
                    config: config.clone(),
                    generator: generator.clone(),
                    schema: schema.clone(),
                    feedback,
                });
            }
        }
    }
    out
}

#[test]
fn every_algorithm_resumes_exactly_from_any_snapshot_on_either_engine() {
    let cases = cases();
    assert!(cases.len() >= REGISTRY.len() * 2, "{} cases", cases.len());
    for case in &cases {
        let Recorded {
            predictions: full,
            snapshots: snaps,
        } = case.run(Engine::Sequential, None);
        assert_eq!(full.len() as u64, EVENTS, "{}", case.name);
        let at: Vec<u64> = snaps.iter().map(|s| s.events).collect();
        assert_eq!(at, vec![97, 194, 291, 388, EVENTS], "{}", case.name);
        let final_bytes = &snaps.last().unwrap().bytes;
        // The dataflow engine takes the same snapshots, byte for byte.
        for workers in [1, 2] {
            let r = case.run(Engine::Dataflow(workers), None);
            same(
                &r.predictions,
                &full,
                &format!("{}: dataflow({workers})", case.name),
            );
            assert!(
                r.snapshots == snaps,
                "{}: dataflow({workers}) snapshots differ from the sequential runner's",
                case.name
            );
        }
        // Cut at three snapshots (one while feedback is pending, with delayed feedback),
        // continue on each engine: the same predictions and the same final model.
        for (cut, engine) in [
            (0, Engine::Sequential),
            (1, Engine::Dataflow(2)),
            (3, Engine::Dataflow(1)),
        ] {
            let Snapshot { events, bytes } = &snaps[cut];
            let saved = SavedModel::from_bytes(bytes, "snapshot").unwrap();
            if case.feedback.is_some() {
                assert!(
                    saved.header.pending > 0,
                    "{}: nothing pending at {events}",
                    case.name
                );
            }
            let rest = case.run(engine, Some(bytes));
            assert_eq!(
                rest.predictions.len() as u64,
                EVENTS - events,
                "{}",
                case.name
            );
            let emitted_before = full.len() - rest.predictions.len();
            same(
                &rest.predictions,
                &full[emitted_before..],
                &format!("{}: resumed at {events} on {engine:?}", case.name),
            );
            assert!(
                &rest.snapshots.last().unwrap().bytes == final_bytes,
                "{}: the final model after resuming at {events} on {engine:?} differs",
                case.name
            );
        }
    }
}
