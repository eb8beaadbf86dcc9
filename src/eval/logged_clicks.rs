//! The replay of logged clicks (the Open Bandit Dataset, or the click simulator): the
//! booster learns a ranking of the items from the user features with the logged top-k
//! feedback, and the click-through of its top k is estimated off-policy against the
//! logging policy's; on a simulated log, beside the truth.
//!
//! The mapping from the log to events:
//!
//! - **Event**: one impression: consecutive rows with the same timestamp and user features
//!   (each position once). Its id is its 0-based number in the file.
//! - **Features**: the hashed user features one-hot ([`ImpressionFeatures`]), then the
//!   user-item affinities.
//! - **Labels**: the items, `0..items`; the event's label (the clicked items) is hidden
//!   from the booster, which predicts first.
//! - **Feedback**: the logged slots (item, position, click, propensity), posted to the
//!   loop's [`FeedbackInbox`] and joined to the event `delay` events after its prediction
//!   ([`Oracle::Logged`]), as pairs weighted by the clicked items' propensities
//!   ([`logged_pairs`]). The delay is an attribution window: a click whose own delay (the
//!   `click_delay` column of a simulated log) is longer has not arrived when the feedback
//!   is joined, so it is not learned (it is counted in `late_clicks`); the evaluation still
//!   counts it (the log is complete when it is evaluated).
//! - **Evaluation** (progressive: each impression is predicted before it is learned), per
//!   impression, with the booster's top-k `pi` (its ranking of the items, highest score
//!   first): the logged policy's CTR per row, and the off-policy estimates of the
//!   booster's CTR per shown slot ([`OffPolicyEstimators`]: IPW, position-independent
//!   IPW, self-normalized IPW, doubly robust with an [`OnlineLogisticReward`] fitted on the
//!   earlier impressions).
//! - **Truth** (simulated logs: `--generator clicks`, or a log written by
//!   `flowboost simulate-clicks`, whose `simulator.json` regenerates it in lock-step): the
//!   true CTR per slot of the booster's top k, of the logging policy, and of the best
//!   ranking, averaged over the impressions.

use super::impression_features::ImpressionFeatures;
use super::off_policy::{Estimate, LoggedRow, Mean, OffPolicyEstimators, OnlineLogisticReward};
use super::{Engine, FeedbackOptions, default_pending_ttl, epoch_rule};
use flowboost_connectors::generators::clicks::{ClickSimConfig, ClickSimulator, ClickTruth};
use flowboost_connectors::readers::open_bandit::{LoggedImpression, LoggedSlot, OpenBanditLog};
use flowboost_operators::boosters::{BoosterConfig, build};
use flowboost_operators::data::{Example, Label, Schema, Task};
use flowboost_operators::engine::feedback::{JoinConfig, JoinCounts, JoinReport};
use flowboost_operators::engine::{
    FeedbackInbox, FeedbackSetup, ItemStream, Oracle, OracleKind, Prediction, PredictionSink,
    Sequencer, SinkError, SnapshotPolicy, SourceState,
};
use flowboost_operators::topk::logged_pairs;
use flowboost_operators::topk::randomization::ranking;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where the logged clicks come from.
#[derive(Clone, Debug)]
pub enum ClickLog {
    /// An Open Bandit Dataset log file (`<campaign>.csv` or `.csv.gz`); when a
    /// `simulator.json` lies beside it (a log written by `flowboost simulate-clicks`), the
    /// truth comes from the simulator, regenerated in lock-step with the file.
    File(PathBuf),
    /// The click simulator, streamed without a file.
    Simulated(ClickSimConfig),
}

/// What to replay and how.
#[derive(Clone, Debug)]
pub struct ReplaySpec {
    /// The log.
    pub log: ClickLog,
    /// The number of items of a log file (`None`: from `item_context.csv` beside it).
    pub items: Option<usize>,
    /// One-hot slots per user feature (values beyond share the last slot).
    pub categories: usize,
    /// Whether the user-item affinities are features.
    pub affinity: bool,
    /// The feedback delay (the attribution window) and the join's time-to-live (`None`:
    /// [`default_pending_ttl`]).
    pub feedback: FeedbackOptions,
    /// Inputs per epoch.
    pub epoch_size: usize,
    /// Feedback records do not end epochs: the learning passes of an epoch's feedback
    /// enter the chain at the start of the next epoch (a delay of D impressions becomes D
    /// to about D + `epoch_size` / 2). Far fewer epochs, so the dataflow engine replays
    /// several times faster; both engines still agree.
    pub batch_feedback: bool,
    /// Write every logged row with the booster's ranking and the reward model's
    /// predictions to this CSV file (for checks against other tools).
    pub dump_rows: Option<PathBuf>,
}

/// The file beside a simulated log that describes its simulator.
pub const SIMULATOR_FILE: &str = "simulator.json";

/// The contents of [`SIMULATOR_FILE`]: the simulator's configuration (which regenerates
/// the log) and its ground truth (for tools outside flowboost).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimulatorFile {
    /// The configuration.
    pub config: ClickSimConfig,
    /// The truth it draws.
    pub truth: ClickTruth,
}

/// The true click-through rates per shown slot on a simulated log, each the mean over the
/// impressions of the exact expectation for that impression's user, with the standard
/// error of that mean (how far the average over these users may lie from the average over
/// all users).
///
/// The object's own `estimate`, `stderr`, `low` and `high` are those of `learned`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrueCtr {
    /// The booster's top k, as it was when it predicted each impression (the quantity the
    /// off-policy estimates estimate).
    #[serde(flatten)]
    pub summary: Estimate,
    /// The same as the top-level fields.
    pub learned: Estimate,
    /// The logging policy (an expectation over its slates).
    pub logging: Estimate,
    /// The best ranking for each user (the most relevant items on the most examined
    /// positions).
    pub best: Estimate,
}

/// The result of a replay, printed as one JSON object with `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    /// The log.
    pub data: String,
    /// Simulated logs: the logging policy (`uniform` or `bts`).
    pub logging_policy: Option<String>,
    /// The algorithm's command-line name.
    pub algorithm: String,
    /// The weak learner kind.
    pub weak: String,
    /// The number of weak learners.
    pub learners: usize,
    /// The engine (`sequential` or `dataflow`).
    pub engine: String,
    /// The number of timely workers (1 for the sequential engine).
    pub workers: usize,
    /// The seed.
    pub seed: u64,
    /// The number of positions the booster fills (its top k).
    pub k: usize,
    /// The feedback delay (attribution window), in events.
    pub feedback_delay: u64,
    /// How long the join keeps an impression, its feedback and the marker of a joined
    /// impression, in epochs (given, or [`default_pending_ttl`]).
    pub pending_ttl: u64,
    /// Whether feedback records were learned at the end of their epoch
    /// ([`ReplaySpec::batch_feedback`]) rather than each ending one.
    pub batch_feedback: bool,
    /// Inputs per epoch.
    pub epoch_size: usize,
    /// The number of items (labels).
    pub items: usize,
    /// The number of features.
    pub features: usize,
    /// Impressions (events).
    pub impressions: u64,
    /// Logged rows (impression, position).
    pub rows: u64,
    /// Logged clicks.
    pub clicks: u64,
    /// Clicks that arrived after the attribution window (not learned; still evaluated).
    pub late_clicks: u64,
    /// Rows where the booster put the logged item at the logged position.
    pub matches: u64,
    /// Rows where the logged item is in the booster's top k.
    pub matches_top_k: u64,
    /// Clicked rows where the booster put the clicked item at the logged position.
    pub matched_clicks: u64,
    /// Clicked rows where the clicked item is in the booster's top k.
    pub matched_clicks_top_k: u64,
    /// The logging policy's click-through rate (per row; standard error `sd / sqrt(rows)`).
    pub logged_ctr: Estimate,
    /// The IPW estimate of the booster's click-through rate (per row).
    pub ipw_ctr: Estimate,
    /// The position-independent IPW estimate (assumes a click does not depend on the
    /// position).
    pub ipw_ctr_position_independent: Estimate,
    /// The self-normalized IPW estimate.
    pub snipw_ctr: Estimate,
    /// The doubly robust estimate (online logistic reward model).
    pub dr_ctr: Estimate,
    /// Simulated logs: the true click-through rates (`null` otherwise).
    pub true_ctr: Option<TrueCtr>,
    /// The feedback join's counts.
    pub feedback: JoinReport,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl ReplayReport {
    /// A human-readable summary.
    pub fn to_text(&self) -> String {
        let e = |x: Estimate| {
            format!(
                "{:.5} ± {:.5}  [{:.5}, {:.5}]",
                x.estimate, x.stderr, x.low, x.high
            )
        };
        let mut out = format!(
            "{} on {} ({} engine, {} worker(s), seed {})\n\
             impressions {}, rows {}, clicks {} ({} late), items {}, features {}\n\
             logged policy CTR                          {}\n\
             booster top-{} CTR, IPW                     {}\n\
             booster top-{} CTR, IPW (pos.-independent)  {}\n\
             booster top-{} CTR, SNIPW                   {}\n\
             booster top-{} CTR, DR                      {}\n",
            self.algorithm,
            self.data,
            self.engine,
            self.workers,
            self.seed,
            self.impressions,
            self.rows,
            self.clicks,
            self.late_clicks,
            self.items,
            self.features,
            e(self.logged_ctr),
            self.k,
            e(self.ipw_ctr),
            self.k,
            e(self.ipw_ctr_position_independent),
            self.k,
            e(self.snipw_ctr),
            self.k,
            e(self.dr_ctr),
        );
        if let Some(t) = &self.true_ctr {
            out.push_str(&format!(
                "true CTR: booster top-{} {:.5}, logging policy ({}) {:.5}, best ranking {:.5}\n",
                self.k,
                t.learned.estimate,
                self.logging_policy.as_deref().unwrap_or("?"),
                t.logging.estimate,
                t.best.estimate
            ));
        }
        out.push_str(&format!(
            "matches: {} rows at the same position ({} clicked), {} rows in the top {} ({} clicked)\n\
             {:.2} s ({:.0} impressions/s)\n",
            self.matches,
            self.matched_clicks,
            self.matches_top_k,
            self.k,
            self.matched_clicks_top_k,
            self.seconds,
            self.impressions as f64 / self.seconds.max(1e-9),
        ));
        out
    }
}

/// The truth behind one simulated impression.
#[derive(Clone, Debug)]
struct ImpressionTruth {
    relevance: Vec<f64>,
    logging: f64,
}

/// One logged impression, with its truth when the log is simulated.
struct Logged {
    impression: LoggedImpression,
    truth: Option<ImpressionTruth>,
}

/// The logged slots (and truth) of each predicted event, for the sink (taken when scored).
type SlotBoard = Arc<Mutex<HashMap<u64, (Vec<LoggedSlot>, Option<ImpressionTruth>)>>>;

/// The rows file of `--dump-rows`, opened before the run, taken by the sink.
type DumpFile = Arc<Mutex<Option<BufWriter<File>>>>;

/// Scores each prediction against the event's logged rows.
struct ReplaySink {
    k: usize,
    items: usize,
    window: u64,
    slots: SlotBoard,
    truth: Option<Arc<ClickTruth>>,
    impressions: u64,
    rows: u64,
    clicks: u64,
    late_clicks: u64,
    matches: u64,
    matches_top_k: u64,
    matched_clicks: u64,
    matched_clicks_top_k: u64,
    logged: Mean,
    estimators: OffPolicyEstimators,
    reward: OnlineLogisticReward,
    true_learned: Mean,
    true_logging: Mean,
    true_best: Mean,
    counters: JoinCounts,
    rank: Vec<u32>,
    rows_buf: Vec<LoggedRow>,
    dump: Option<BufWriter<File>>,
    dump_error: Option<String>,
    dump_line: String,
}

impl ReplaySink {
    fn dump_rows(&mut self, ex: &Example, top: &[u32]) -> std::io::Result<()> {
        let Some(out) = self.dump.as_mut() else {
            return Ok(());
        };
        for r in &self.rows_buf {
            let line = &mut self.dump_line;
            line.clear();
            line.push_str(&format!(
                "{},{},{},{},{}",
                ex.id,
                r.position,
                r.item,
                u8::from(r.click),
                r.propensity
            ));
            for a in top {
                line.push_str(&format!(",{a}"));
            }
            for a in 0..self.items as u32 {
                line.push_str(&format!(
                    ",{}",
                    self.reward.predict(&ex.features, a, r.position)
                ));
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    }
}

impl PredictionSink for ReplaySink {
    type Output = ReplaySink;

    fn join_counts(&mut self, counts: JoinCounts) {
        self.counters = counts;
    }

    fn accept(&mut self, out: Prediction, ex: Arc<Example>) -> Result<(), SinkError> {
        let (slots, truth) = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&ex.id)
            .ok_or_else(|| format!("no logged rows for event {}", ex.id))?;
        ranking(&out.scores, &mut self.rank);
        let top: Vec<u32> = self.rank[..self.k.min(self.rank.len())].to_vec();
        self.impressions += 1;
        self.rows_buf.clear();
        for s in &slots {
            let at = top.get(s.position as usize - 1) == Some(&s.item);
            let inside = top.contains(&s.item);
            let c = f64::from(u8::from(s.click));
            self.rows += 1;
            self.clicks += u64::from(s.click);
            self.late_clicks += u64::from(s.click && s.delay.unwrap_or(0) > self.window);
            self.matches += u64::from(at);
            self.matches_top_k += u64::from(inside);
            self.matched_clicks += u64::from(at && s.click);
            self.matched_clicks_top_k += u64::from(inside && s.click);
            self.logged.push(c);
            self.rows_buf.push(LoggedRow {
                item: s.item,
                position: s.position as usize - 1,
                click: s.click,
                propensity: s.propensity,
            });
        }
        // The reward model predicts with what it learned before this impression...
        let reward = &self.reward;
        let features = &ex.features;
        self.estimators
            .push(&self.rows_buf, &top, |a, j| reward.predict(features, a, j));
        if self.dump.is_some()
            && self.dump_error.is_none()
            && let Err(e) = self.dump_rows(&ex, &top)
        {
            self.dump_error = Some(e.to_string());
        }
        // ...then learns from it.
        for r in &self.rows_buf {
            self.reward.learn(&ex.features, r.item, r.position, r.click);
        }
        if let (Some(model), Some(t)) = (&self.truth, truth) {
            self.true_learned
                .push(model.ranking_ctr(&t.relevance, &top));
            self.true_logging.push(t.logging);
            self.true_best.push(model.best_ctr(&t.relevance));
        }
        Ok(())
    }

    fn finish(self) -> Self::Output {
        self
    }
}

/// The log, opened: its shape, its truth (when simulated) and how to stream it.
struct OpenedLog {
    name: String,
    items: usize,
    user_names: Vec<String>,
    affinities: usize,
    simulator: Option<ClickSimConfig>,
    truth: Option<Arc<ClickTruth>>,
    file: Option<Arc<OpenBanditLog>>,
}

/// Reads the `simulator.json` beside `log`, if there is one.
pub fn simulator_beside(log: &Path) -> Result<Option<SimulatorFile>, String> {
    let path = log.with_file_name(SIMULATOR_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let text = flowboost_connectors::readers::read_small_text(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let file: SimulatorFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let sim =
        ClickSimulator::new(file.config.clone()).map_err(|e| format!("{}: {e}", path.display()))?;
    // JSON keeps a number to about 1e-15 (not always to the bit): compare within 1e-9.
    let close = |a: &[f64], b: &[f64]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + x.abs()))
    };
    let t = sim.truth();
    let same = close(&t.examination, &file.truth.examination)
        && close(
            &[t.intercept, t.scale],
            &[file.truth.intercept, file.truth.scale],
        )
        && (t.latent, t.feature_values) == (file.truth.latent, file.truth.feature_values)
        && close(&t.user_embeddings, &file.truth.user_embeddings)
        && close(&t.item_bias, &file.truth.item_bias)
        && close(&t.item_vectors, &file.truth.item_vectors);
    if !same {
        return Err(format!(
            "{}: its truth differs from the one its configuration draws (written by another \
             version of the simulator?)",
            path.display()
        ));
    }
    Ok(Some(SimulatorFile {
        config: file.config,
        truth: t.clone(),
    }))
}

impl OpenedLog {
    fn open(spec: &ReplaySpec, k: usize) -> Result<Self, String> {
        match &spec.log {
            ClickLog::Simulated(config) => {
                let config = if config.slots == k {
                    config.clone()
                } else {
                    config.clone().with_slots(k)
                };
                let sim = ClickSimulator::new(config.clone()).map_err(|e| e.to_string())?;
                Ok(OpenedLog {
                    name: format!(
                        "generator clicks ({} impressions, {} items, top {}, {} logging, click delay {}, seed {})",
                        config.impressions,
                        config.items,
                        config.slots,
                        config.logging.name(),
                        config.click_delay,
                        config.seed
                    ),
                    items: config.items,
                    user_names: sim.user_feature_names(),
                    affinities: 0,
                    truth: Some(Arc::new(sim.truth().clone())),
                    simulator: Some(config),
                    file: None,
                })
            }
            ClickLog::File(path) => {
                let log = OpenBanditLog::open(path, spec.items).map_err(|e| e.to_string())?;
                let simulated = simulator_beside(path)?;
                if let Some(s) = &simulated
                    && (s.config.items != log.items() || s.config.slots != k)
                {
                    return Err(format!(
                        "{}: the log was simulated with {} items and {} slots (replay it with --items {} --k {})",
                        path.display(),
                        s.config.items,
                        s.config.slots,
                        s.config.items,
                        s.config.slots
                    ));
                }
                Ok(OpenedLog {
                    name: path.display().to_string(),
                    items: log.items(),
                    user_names: log.user_features().to_vec(),
                    affinities: log.affinities(),
                    truth: simulated.as_ref().map(|s| Arc::new(s.truth.clone())),
                    simulator: simulated.map(|s| s.config),
                    file: Some(Arc::new(log)),
                })
            }
        }
    }

    /// Streams the impressions from the start.
    fn stream(&self) -> Result<Box<dyn Iterator<Item = Result<Logged, String>>>, String> {
        let sim = match &self.simulator {
            Some(c) => Some(ClickSimulator::new(c.clone()).map_err(|e| e.to_string())?),
            None => None,
        };
        let Some(log) = &self.file else {
            let sim = sim.ok_or("no log")?;
            return Ok(Box::new(sim.map(|s| {
                Ok(Logged {
                    impression: s.impression,
                    truth: Some(ImpressionTruth {
                        relevance: s.relevance,
                        logging: s.logging_ctr,
                    }),
                })
            })));
        };
        let path = log.path().to_path_buf();
        let file = log.impressions().map_err(|e| e.to_string())?;
        let Some(mut sim) = sim else {
            return Ok(Box::new(file.map(|imp| {
                imp.map(|impression| Logged {
                    impression,
                    truth: None,
                })
                .map_err(|e| e.to_string())
            })));
        };
        // A simulated log: the simulator, regenerated, must tell the same story.
        Ok(Box::new(file.map(move |imp| {
            let impression = imp.map_err(|e| e.to_string())?;
            let same = |s: &LoggedSlot, t: &LoggedSlot| {
                (s.item, s.position, s.click, s.propensity.to_bits(), s.delay)
                    == (t.item, t.position, t.click, t.propensity.to_bits(), t.delay)
            };
            match sim.next() {
                Some(s)
                    if s.impression.user == impression.user
                        && s.impression.slots.len() == impression.slots.len()
                        && s.impression.slots.iter().zip(&impression.slots).all(|(a, b)| same(a, b)) =>
                {
                    Ok(Logged {
                        impression,
                        truth: Some(ImpressionTruth {
                            relevance: s.relevance,
                            logging: s.logging_ctr,
                        }),
                    })
                }
                _ => Err(format!(
                    "{}:{}: the log does not match its {SIMULATOR_FILE} (impression rows differ from the simulator's)",
                    path.display(),
                    impression.line
                )),
            }
        })))
    }
}

/// The examples of the log: each impression becomes an event (its label: the clicked
/// items); its slots go to the sink's board and its feedback pairs (the clicks that arrive
/// within the window) to the inbox.
fn events(
    log: &OpenedLog,
    spec: &ReplaySpec,
    k: usize,
    clip: f64,
    inbox: FeedbackInbox,
    board: SlotBoard,
) -> Result<impl Iterator<Item = Result<Example, String>> + use<>, String> {
    let mut features = ImpressionFeatures::new(
        log.user_names.len(),
        spec.categories,
        if spec.affinity { log.affinities } else { 0 },
    );
    let items = log.items;
    let name = log.name.clone();
    let window = spec.feedback.delay;
    let mut id = 0u64;
    // SIGTERM or SIGINT ends the log here (see `stop`).
    let impressions = super::stop::until_stopped(log.stream()?);
    Ok(impressions.map(move |logged| {
        let Logged {
            impression: imp,
            truth,
        } = logged?;
        if let Some(s) = imp.slots.iter().find(|s| s.position as usize > k) {
            return Err(format!(
                "{name}:{}: position {} beyond the top {k} (use --k {} or more)",
                s.line, s.position, s.position
            ));
        }
        let clicked: Vec<(u32, f64)> = imp
            .slots
            .iter()
            .filter(|s| s.click)
            .map(|s| (s.item, s.propensity))
            .collect();
        let arrived: Vec<(u32, f64)> = imp
            .slots
            .iter()
            .filter(|s| s.click && s.delay.unwrap_or(0) <= window)
            .map(|s| (s.item, s.propensity))
            .collect();
        inbox.post(id, logged_pairs(items, &arrived, clip));
        let example = Example {
            id,
            features: features.encode(&imp),
            label: Some(Label::set(clicked.iter().map(|&(a, _)| a).collect())),
        };
        board
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, (imp.slots, truth));
        id += 1;
        Ok(example)
    }))
}

/// The header of `--dump-rows`: the impression, the row's 0-based position, its item,
/// click and propensity, the booster's top k (`rank_0..`), and the reward model's click
/// probability of every item at the row's position (`q_0..`), fitted before the
/// impression.
fn dump_header(k: usize, items: usize) -> String {
    let mut h = String::from("impression,position,item,click,propensity");
    for j in 0..k {
        h.push_str(&format!(",rank_{j}"));
    }
    for a in 0..items {
        h.push_str(&format!(",q_{a}"));
    }
    h.push('\n');
    h
}

/// Replays the log of `spec` through the booster of `config` (a top-k booster) on
/// `engine`.
pub fn replay_clicks(
    spec: &ReplaySpec,
    config: &BoosterConfig,
    engine: &Engine,
) -> Result<ReplayReport, String> {
    if !config.algorithm.is_topk() {
        return Err(format!(
            "{} cannot learn from logged clicks: use topk-bbm or topk-adaptive (they learn from the clicked items' pairs)",
            config.algorithm
        ));
    }
    let k = config.topk.k;
    let log = Arc::new(OpenedLog::open(spec, k)?);
    let items = log.items;
    if k == 0 || k > items {
        return Err(format!("--k must lie in 1..={items} (the number of items)"));
    }
    let shape = ImpressionFeatures::new(
        log.user_names.len(),
        spec.categories,
        if spec.affinity { log.affinities } else { 0 },
    );
    // The features are the user features' one-hot slots and the affinities: checked
    // against the feature limit before the schema names them.
    let dim = log
        .user_names
        .len()
        .checked_mul(spec.categories.max(1))
        .and_then(|d| d.checked_add(if spec.affinity { log.affinities } else { 0 }))
        .filter(|&d| d <= flowboost_operators::data::MAX_DIM);
    if dim.is_none() {
        return Err(format!(
            "--categories {}: {} user feature(s) times {} slots{} is more than the {} features a stream may have",
            spec.categories,
            log.user_names.len(),
            spec.categories,
            if spec.affinity {
                format!(" plus {} affinities", log.affinities)
            } else {
                String::new()
            },
            flowboost_operators::data::MAX_DIM
        ));
    }
    if items > flowboost_operators::data::MAX_LABELS {
        return Err(format!(
            "{}: {items} items: at most {} (the most labels a stream may have)",
            log.name,
            flowboost_operators::data::MAX_LABELS
        ));
    }
    let schema = Schema {
        attributes: shape.attributes(&log.user_names),
        labels: (0..items).map(|i| format!("item_{i}")).collect(),
        task: Task::Multilabel,
    };
    config.topk.validate(items).map_err(|e| e.to_string())?;
    build(&schema, config).map_err(|e| e.to_string())?;
    let dump: DumpFile = match &spec.dump_rows {
        Some(path) => {
            let mut f =
                BufWriter::new(File::create(path).map_err(|e| format!("{}: {e}", path.display()))?);
            f.write_all(dump_header(k, items).as_bytes())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Arc::new(Mutex::new(Some(f)))
        }
        None => Arc::default(),
    };
    let start = Instant::now();
    let clip = config.topk.clip_probability;
    let inbox = FeedbackInbox::default();
    let board = SlotBoard::default();
    let options = spec.feedback;
    let ttl = options.ttl.unwrap_or_else(|| {
        default_pending_ttl(options.delay, spec.epoch_size, spec.batch_feedback)
    });
    let setup = FeedbackSetup {
        join: JoinConfig {
            ttl: Some(ttl),
            lag: 1,
            window: false,
        },
        topk: config.topk,
        labels: items,
        restored: None,
    };
    let make_sink = {
        let board = board.clone();
        let truth = log.truth.clone();
        let dim = schema.dim();
        let dump = dump.clone();
        move || ReplaySink {
            k,
            items,
            window: options.delay,
            slots: board.clone(),
            truth: truth.clone(),
            impressions: 0,
            rows: 0,
            clicks: 0,
            late_clicks: 0,
            matches: 0,
            matches_top_k: 0,
            matched_clicks: 0,
            matched_clicks_top_k: 0,
            logged: Mean::default(),
            estimators: OffPolicyEstimators::new(k),
            reward: OnlineLogisticReward::new(items, k, dim),
            true_learned: Mean::default(),
            true_logging: Mean::default(),
            true_best: Mean::default(),
            counters: JoinCounts::default(),
            rank: Vec::new(),
            rows_buf: Vec::new(),
            dump: dump.lock().unwrap_or_else(|e| e.into_inner()).take(),
            dump_error: None,
            dump_line: String::new(),
        }
    };
    let build_schema = schema.clone();
    let build_config = config.clone();
    let source_log = log.clone();
    let source_spec = spec.clone();
    let (source_inbox, source_board) = (inbox.clone(), board.clone());
    let rule = epoch_rule(spec.epoch_size, !spec.batch_feedback);
    let run = engine.run(
        move |_, _| build(&build_schema, &build_config),
        move || {
            let examples = events(
                &source_log,
                &source_spec,
                k,
                clip,
                source_inbox.clone(),
                source_board.clone(),
            )?;
            let oracle = Oracle::new(OracleKind::Logged, options.delay, Default::default())
                .with_inbox(source_inbox.clone());
            let sequencer = Sequencer::new(rule, SourceState::default());
            Ok(ItemStream::new(
                examples,
                Some(oracle),
                sequencer,
                SnapshotPolicy::default(),
            ))
        },
        make_sink,
        Some(setup),
    );
    let mut sink = run.map_err(|e| e.to_string())?;
    if let Some(mut out) = sink.dump.take() {
        out.flush().map_err(|e| e.to_string())?;
    }
    if let (Some(e), Some(path)) = (sink.dump_error, &spec.dump_rows) {
        return Err(format!("{}: {e}", path.display()));
    }
    let seconds = start.elapsed().as_secs_f64();
    let true_ctr = log.truth.as_ref().map(|_| TrueCtr {
        summary: sink.true_learned.estimate(),
        learned: sink.true_learned.estimate(),
        logging: sink.true_logging.estimate(),
        best: sink.true_best.estimate(),
    });
    Ok(ReplayReport {
        data: log.name.clone(),
        logging_policy: log.simulator.as_ref().map(|c| c.logging.name().to_string()),
        algorithm: config.algorithm.name().to_string(),
        weak: config.weak.name().to_string(),
        learners: config.learners,
        engine: engine.name().to_string(),
        workers: engine.workers(),
        seed: config.seed,
        k,
        feedback_delay: spec.feedback.delay,
        pending_ttl: ttl,
        batch_feedback: spec.batch_feedback,
        epoch_size: spec.epoch_size,
        items,
        features: schema.dim(),
        impressions: sink.impressions,
        rows: sink.rows,
        clicks: sink.clicks,
        late_clicks: sink.late_clicks,
        matches: sink.matches,
        matches_top_k: sink.matches_top_k,
        matched_clicks: sink.matched_clicks,
        matched_clicks_top_k: sink.matched_clicks_top_k,
        logged_ctr: sink.logged.estimate(),
        ipw_ctr: sink.estimators.ipw(),
        ipw_ctr_position_independent: sink.estimators.ipw_position_independent(),
        snipw_ctr: sink.estimators.snipw(),
        dr_ctr: sink.estimators.dr(),
        true_ctr,
        feedback: sink.counters.into(),
        seconds,
    })
}
