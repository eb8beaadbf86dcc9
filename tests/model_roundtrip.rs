//! Exact resume, as River's `check_pickling` does it but for the whole stream: for every
//! algorithm of the registry (and both weak learners where the algorithm takes one), on
//! both engines (the sequential runner and the dataflow with 1 and 2 workers), with and
//! without delayed feedback, a run is cut at several points, its model saved to model-file
//! bytes, loaded, and continued on the rest of the stream. The continued predictions and
//! the final model's bytes must equal those of the uninterrupted run, bit for bit; and the
//! snapshots taken by every engine must be byte-identical to the sequential runner's.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::model::FeedbackRun;
use flowboost::model::SavedModel;
use flowboost::operators::boosters::{
    AlgorithmSpec, Booster, BoosterConfig, ModelOption, OzaVotes, REGISTRY, TreeParams, build,
};
use flowboost::operators::data::{Example, Schema, Task};
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost::operators::engine::feedback::JoinConfig;
use flowboost::operators::engine::{
    ChainSnapshot, EpochRule, FeedbackSetup, ItemStream, Oracle, OracleKind, Prediction,
    PredictionSink, Sequencer, SinkError, SnapshotPolicy,
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

    fn accept(&mut self, p: Prediction, _ex: Arc<Example>) -> Result<(), SinkError> {
        self.out.predictions.push(bits(&p));
        Ok(())
    }

    fn snapshot(&mut self, snapshot: ChainSnapshot) -> Result<(), SinkError> {
        let events = snapshot.source.as_ref().map_or(0, |s| s.events);
        let bytes = SavedModel::from_snapshot(&self.config, &self.schema, snapshot, None, None)
            .to_bytes()
            .map_err(SinkError::new)?;
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
    feedback: Option<FeedbackRun>,
    /// A snapshot every this many events (and at the end).
    every: u64,
    /// Inputs per epoch.
    epoch: usize,
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

    /// The stamped stream from a snapshot's source state (or the start): epochs of
    /// `epoch` inputs (and one ending after each feedback record), snapshots every
    /// `every` events and at the end.
    fn items(
        &self,
        saved: Option<&SavedModel>,
    ) -> ItemStream<impl Iterator<Item = Result<Example, String>> + use<>> {
        let source = saved
            .and_then(|s| s.body.source.clone())
            .unwrap_or_default();
        let oracle = self
            .feedback
            .map(|f| Oracle::new(f.oracle, f.delay, source.oracle.clone().unwrap_or_default()));
        let rule = EpochRule {
            size: self.epoch,
            feedback_closes: self.feedback.is_some(),
        };
        let policy = SnapshotPolicy {
            every: Some(self.every),
            at_end: true,
        };
        let skip = source.events;
        ItemStream::new(
            self.stream(skip),
            oracle,
            Sequencer::new(rule, source),
            policy,
        )
    }

    fn setup(&self, saved: Option<&SavedModel>) -> Option<FeedbackSetup> {
        self.feedback.map(|f| FeedbackSetup {
            join: JoinConfig::new(f.ttl, 1),
            topk: self.config.topk,
            labels: self.schema.num_labels(),
            restored: saved.and_then(|s| s.body.join.clone()).map(Arc::new),
        })
    }

    /// Runs from `start` (a model file's bytes, or a fresh model) on the stream after the
    /// start's events.
    fn run(&self, engine: Engine, start: Option<&[u8]>) -> Recorded {
        let saved = start.map(|b| Arc::new(SavedModel::from_bytes(b, "snapshot").unwrap()));
        let chain =
            |saved: &Option<Arc<SavedModel>>, schema: &Schema, config: &BoosterConfig| -> Booster {
                match saved {
                    Some(s) => s.chain("snapshot").unwrap(),
                    None => build(schema, config).unwrap(),
                }
            };
        let setup = self.setup(saved.as_deref());
        match engine {
            Engine::Sequential => chain(&saved, &self.schema, &self.config)
                .into_sequential()
                .run_items(self.items(saved.as_deref()), self.recorder(), setup)
                .unwrap(),
            Engine::Dataflow(workers) => {
                let options = DataflowOptions {
                    workers,
                    max_epochs_in_flight: 3,
                    source_batch: 5,
                };
                let (s, c) = (self.schema.clone(), self.config.clone());
                let recorder = std::sync::Mutex::new(Some(self.recorder()));
                let case = self.clone_for_source();
                let source_saved = saved.clone();
                run_dataflow(
                    &options,
                    move |_, _| Ok::<_, String>(chain(&saved, &s, &c)),
                    move || Ok(case.items(source_saved.as_deref())),
                    move || recorder.lock().unwrap().take().unwrap(),
                    setup,
                )
                .unwrap()
            }
        }
    }

    fn clone_for_source(&self) -> Case {
        Case {
            name: self.name.clone(),
            config: self.config.clone(),
            generator: self.generator.clone(),
            schema: self.schema.clone(),
            feedback: self.feedback,
            every: self.every,
            epoch: self.epoch,
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
            let delayed = |oracle| FeedbackRun {
                delay: 11,
                ttl: Some(30),
                oracle,
            };
            let feedbacks: Vec<Option<FeedbackRun>> = if spec.algorithm.is_topk() {
                vec![Some(delayed(OracleKind::TopK))]
            } else {
                vec![None, Some(delayed(OracleKind::Labels))]
            };
            // Oza's vote rules: a setting that the stages' state does not hold.
            let mut configs = vec![config.clone()];
            if spec.reads(ModelOption::OzaVotes) {
                config.oza_votes = OzaVotes::Moa;
                configs.push(config);
            }
            for config in configs {
                for feedback in feedbacks.clone() {
                    out.push(Case {
                        name: format!(
                            "{} ({}, {}, votes {})",
                            spec.name,
                            weak.name(),
                            if feedback.is_some() {
                                "delayed feedback"
                            } else {
                                "labels"
                            },
                            config.oza_votes,
                        ),
                        config: config.clone(),
                        generator: generator.clone(),
                        schema: schema.clone(),
                        feedback,
                        every: EVERY,
                        epoch: 11,
                    });
                }
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
        eprintln!("case {}", case.name);
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
            eprintln!("  dataflow {workers}");
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
            if &rest.snapshots.last().unwrap().bytes != final_bytes {
                let a = SavedModel::from_bytes(&rest.snapshots.last().unwrap().bytes, "a").unwrap();
                let b = SavedModel::from_bytes(final_bytes, "b").unwrap();
                eprintln!("header eq {}", a.header == b.header);
                eprintln!("pos {:?} {:?}", a.body.position, b.body.position);
                eprintln!("stages eq {}", a.body.stages == b.body.stages);
                eprintln!(
                    "join {:?}\n vs {:?}",
                    a.body
                        .join
                        .as_ref()
                        .map(|j| (j.epoch, j.counts, j.facts.len(), j.pairs.len())),
                    b.body
                        .join
                        .as_ref()
                        .map(|j| (j.epoch, j.counts, j.facts.len(), j.pairs.len()))
                );
                eprintln!("source {:?}\n vs {:?}", a.body.source, b.body.source);
            }
            assert!(
                &rest.snapshots.last().unwrap().bytes == final_bytes,
                "{}: the final model after resuming at {events} on {engine:?} differs",
                case.name
            );
        }
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// For any algorithm (and weak learner, with or without delayed feedback), any
        /// stream seed, snapshot interval, epoch size and cut: a model file read back
        /// writes the same bytes, and the run resumed from it on the sequential runner
        /// makes the same predictions and ends with the same model as the uninterrupted
        /// run.
        #[test]
        fn a_model_file_round_trips_and_resumes_exactly(
            which in any::<prop::sample::Index>(),
            seed in 0u64..1000,
            every in 7u64..200,
            epoch in 1usize..30,
            cut in any::<prop::sample::Index>(),
        ) {
            let mut all = cases();
            let mut case = all.swap_remove(which.index(all.len()));
            case.generator.seed = seed;
            case.every = every;
            case.epoch = epoch;
            let Recorded { predictions: full, snapshots } = case.run(Engine::Sequential, None);
            prop_assert_eq!(full.len() as u64, EVENTS);
            // Every snapshot but the last (at the end) is a place to resume from.
            let Some(before_end) = snapshots.len().checked_sub(1).filter(|&n| n > 0) else {
                return Ok(());
            };
            let Snapshot { events, bytes } = &snapshots[cut.index(before_end)];
            let saved = SavedModel::from_bytes(bytes, "snapshot").unwrap();
            prop_assert!(&saved.to_bytes().unwrap() == bytes, "{}: the model file does not round-trip", case.name);
            let rest = case.run(Engine::Sequential, Some(bytes));
            let before = full.len() - rest.predictions.len();
            prop_assert_eq!(before as u64, *events, "{}", &case.name);
            prop_assert!(rest.predictions == full[before..], "{}: resumed at {} predicts otherwise", case.name, events);
            prop_assert!(
                rest.snapshots.last().map(|s| &s.bytes) == snapshots.last().map(|s| &s.bytes),
                "{}: the final model after resuming at {} differs", case.name, events
            );
        }
    }
}
