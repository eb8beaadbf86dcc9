//! The replay of logged clicks (the Open Bandit Dataset): the booster learns a ranking of
//! the items from the user features with the logged top-k feedback, and the click-through
//! of its top k is estimated off-policy against the logging policy's.
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
//!   ([`logged_pairs`]).
//! - **Evaluation** (progressive: each impression is predicted before it is learned), per
//!   logged row `i` with item `a_i`, position `j_i`, click `c_i`, propensity `p_i`, and the
//!   booster's top-k `pi_i` (its ranking of the items, highest score first):
//!   the logged policy's CTR `mean c_i`; the IPW estimate of the booster's CTR
//!   `mean c_i 1{pi_i[j_i] = a_i} / p_i`; and the position-independent variant
//!   `mean c_i 1{a_i in pi_i} / (k p_i)`; each with its standard error `sd / sqrt(n)`.

use super::impression_features::ImpressionFeatures;
use super::{Engine, FeedbackOptions, epoch_rule};
use flowboost_connectors::readers::open_bandit::{LoggedSlot, OpenBanditLog};
use flowboost_operators::boosters::{BoosterConfig, build};
use flowboost_operators::data::{Example, Label, Schema, Task};
use flowboost_operators::engine::{
    FeedbackInbox, FeedbackSetup, ItemStream, Oracle, OracleKind, Prediction, PredictionSink,
    Sequencer, SnapshotPolicy, SourceState,
};
use flowboost_operators::join::{JoinConfig, JoinCounts};
use flowboost_operators::topk::logged_pairs;
use flowboost_operators::topk::randomization::ranking;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What to replay and how.
#[derive(Clone, Debug)]
pub struct ReplaySpec {
    /// The log (an OBD `<campaign>.csv` or `.csv.gz`).
    pub data: PathBuf,
    /// The number of items (`None`: from `item_context.csv` beside the log).
    pub items: Option<usize>,
    /// One-hot slots per user feature (values beyond share the last slot).
    pub categories: usize,
    /// Whether the user-item affinities are features.
    pub affinity: bool,
    /// The feedback delay and the join's time-to-live.
    pub feedback: FeedbackOptions,
    /// Inputs per epoch.
    pub epoch_size: usize,
}

/// A mean over the logged rows with its standard error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// The mean.
    pub estimate: f64,
    /// The standard error of the mean, `sd / sqrt(n)` (sample standard deviation).
    pub stderr: f64,
}

/// A running mean and variance (Welford).
#[derive(Clone, Copy, Debug, Default)]
struct Mean {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Mean {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    fn estimate(&self) -> Estimate {
        let stderr = if self.n > 1 {
            (self.m2 / (self.n - 1) as f64 / self.n as f64).sqrt()
        } else {
            0.0
        };
        Estimate {
            estimate: self.mean,
            stderr,
        }
    }
}

/// The result of a replay, printed as one JSON object with `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    /// The log.
    pub data: String,
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
    /// The feedback delay, in events.
    pub feedback_delay: u64,
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
    /// Rows where the booster put the logged item at the logged position.
    pub matches: u64,
    /// Rows where the logged item is in the booster's top k.
    pub matches_top_k: u64,
    /// Clicked rows where the booster put the clicked item at the logged position.
    pub matched_clicks: u64,
    /// Clicked rows where the clicked item is in the booster's top k.
    pub matched_clicks_top_k: u64,
    /// The logging policy's click-through rate (per row).
    pub logged_ctr: Estimate,
    /// The IPW estimate of the booster's click-through rate (per row).
    pub ipw_ctr: Estimate,
    /// The position-independent IPW estimate (assumes a click does not depend on the
    /// position).
    pub ipw_ctr_position_independent: Estimate,
    /// The feedback join's counts.
    pub feedback: JoinCounts,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl ReplayReport {
    /// A human-readable summary.
    pub fn to_text(&self) -> String {
        let e = |x: Estimate| format!("{:.5} ± {:.5}", x.estimate, x.stderr);
        format!(
            "{} on {} ({} engine, {} worker(s), seed {})\n\
             impressions {}, rows {}, clicks {}, items {}, features {}\n\
             logged policy CTR              {}\n\
             booster top-{} CTR, IPW         {}\n\
             booster top-{} CTR, IPW (pos.-independent) {}\n\
             matches: {} rows at the same position ({} clicked), {} rows in the top {} ({} clicked)\n\
             {:.2} s\n",
            self.algorithm,
            self.data,
            self.engine,
            self.workers,
            self.seed,
            self.impressions,
            self.rows,
            self.clicks,
            self.items,
            self.features,
            e(self.logged_ctr),
            self.k,
            e(self.ipw_ctr),
            self.k,
            e(self.ipw_ctr_position_independent),
            self.matches,
            self.matched_clicks,
            self.matches_top_k,
            self.k,
            self.matched_clicks_top_k,
            self.seconds,
        )
    }
}

/// The logged slots of each predicted event, for the sink (taken when scored).
type SlotBoard = Arc<Mutex<HashMap<u64, Vec<LoggedSlot>>>>;

/// Scores each prediction against the event's logged rows.
struct ReplaySink {
    k: usize,
    slots: SlotBoard,
    impressions: u64,
    rows: u64,
    clicks: u64,
    matches: u64,
    matches_top_k: u64,
    matched_clicks: u64,
    matched_clicks_top_k: u64,
    logged: Mean,
    ipw: Mean,
    ipw_pi: Mean,
    counters: JoinCounts,
    rank: Vec<u32>,
}

impl PredictionSink for ReplaySink {
    type Output = ReplaySink;

    fn join_counts(&mut self, counts: JoinCounts) {
        self.counters = counts;
    }

    fn accept(&mut self, out: Prediction, ex: Arc<Example>) -> Result<(), String> {
        let slots = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&ex.id)
            .ok_or_else(|| format!("no logged rows for event {}", ex.id))?;
        ranking(&out.scores, &mut self.rank);
        let top = &self.rank[..self.k.min(self.rank.len())];
        self.impressions += 1;
        for s in &slots {
            let at = top.get(s.position as usize - 1) == Some(&s.item);
            let inside = top.contains(&s.item);
            let c = f64::from(u8::from(s.click));
            self.rows += 1;
            self.clicks += u64::from(s.click);
            self.matches += u64::from(at);
            self.matches_top_k += u64::from(inside);
            self.matched_clicks += u64::from(at && s.click);
            self.matched_clicks_top_k += u64::from(inside && s.click);
            self.logged.push(c);
            self.ipw.push(if at { c / s.propensity } else { 0.0 });
            self.ipw_pi.push(if inside {
                c / (self.k as f64 * s.propensity)
            } else {
                0.0
            });
        }
        Ok(())
    }

    fn finish(self) -> Self::Output {
        self
    }
}

/// The examples of the log: each impression becomes an event (its label: the clicked
/// items); its slots go to the sink's board and its feedback pairs to the inbox.
fn events(
    log: &OpenBanditLog,
    spec: &ReplaySpec,
    k: usize,
    clip: f64,
    inbox: FeedbackInbox,
    board: SlotBoard,
) -> Result<impl Iterator<Item = Result<Example, String>> + use<>, String> {
    let mut features = ImpressionFeatures::new(
        log.user_features().len(),
        spec.categories,
        if spec.affinity { log.affinities() } else { 0 },
    );
    let items = log.items();
    let path = log.path().to_path_buf();
    let mut id = 0u64;
    let impressions = log.impressions().map_err(|e| e.to_string())?;
    Ok(impressions.map(move |imp| {
        let imp = imp.map_err(|e| e.to_string())?;
        if let Some(s) = imp.slots.iter().find(|s| s.position as usize > k) {
            return Err(format!(
                "{}:{}: position {} beyond the top {k} (use --k {} or more)",
                path.display(),
                s.line,
                s.position,
                s.position
            ));
        }
        let clicked: Vec<(u32, f64)> = imp
            .slots
            .iter()
            .filter(|s| s.click)
            .map(|s| (s.item, s.propensity))
            .collect();
        inbox.post(id, logged_pairs(items, &clicked, clip));
        let example = Example {
            id,
            features: features.encode(&imp),
            label: Some(Label::set(clicked.iter().map(|&(a, _)| a).collect())),
        };
        board
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, imp.slots);
        id += 1;
        Ok(example)
    }))
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
    let log = Arc::new(OpenBanditLog::open(&spec.data, spec.items).map_err(|e| e.to_string())?);
    let items = log.items();
    let k = config.topk.k;
    if k == 0 || k > items {
        return Err(format!("--k must lie in 1..={items} (the number of items)"));
    }
    let shape = ImpressionFeatures::new(
        log.user_features().len(),
        spec.categories,
        if spec.affinity { log.affinities() } else { 0 },
    );
    let schema = Schema {
        attributes: shape.attributes(log.user_features()),
        labels: (0..items).map(|i| format!("item_{i}")).collect(),
        task: Task::Multilabel,
    };
    config.topk.validate(items)?;
    build(&schema, config)?;
    let start = Instant::now();
    let clip = config.topk.clip_probability;
    let inbox = FeedbackInbox::default();
    let board = SlotBoard::default();
    let options = spec.feedback;
    let setup = FeedbackSetup {
        join: JoinConfig {
            ttl: options.ttl,
            lag: 1,
        },
        topk: config.topk,
        labels: items,
        restored: None,
    };
    let make_sink = {
        let board = board.clone();
        move || ReplaySink {
            k,
            slots: board.clone(),
            impressions: 0,
            rows: 0,
            clicks: 0,
            matches: 0,
            matches_top_k: 0,
            matched_clicks: 0,
            matched_clicks_top_k: 0,
            logged: Mean::default(),
            ipw: Mean::default(),
            ipw_pi: Mean::default(),
            counters: JoinCounts::default(),
            rank: Vec::new(),
        }
    };
    let build_schema = schema.clone();
    let build_config = config.clone();
    let source_log = log.clone();
    let source_spec = spec.clone();
    let (source_inbox, source_board) = (inbox.clone(), board.clone());
    let rule = epoch_rule(spec.epoch_size, true);
    let sink = engine.run(
        move || build(&build_schema, &build_config).map_err(String::from),
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
    )?;
    Ok(ReplayReport {
        data: spec.data.display().to_string(),
        algorithm: config.algorithm.name().to_string(),
        weak: config.weak.name().to_string(),
        learners: config.learners,
        engine: engine.name().to_string(),
        workers: engine.workers(),
        seed: config.seed,
        k,
        feedback_delay: spec.feedback.delay,
        items,
        features: schema.dim(),
        impressions: sink.impressions,
        rows: sink.rows,
        clicks: sink.clicks,
        matches: sink.matches,
        matches_top_k: sink.matches_top_k,
        matched_clicks: sink.matched_clicks,
        matched_clicks_top_k: sink.matched_clicks_top_k,
        logged_ctr: sink.logged.estimate(),
        ipw_ctr: sink.ipw.estimate(),
        ipw_ctr_position_independent: sink.ipw_pi.estimate(),
        feedback: sink.counters,
        seconds: start.elapsed().as_secs_f64(),
    })
}
