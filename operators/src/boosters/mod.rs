//! The boosters, each as a chain of stages (one per weak learner) and a terminal.
//!
//! [`Algorithm`] names them as the command line does; [`build`] turns a schema and a
//! [`BoosterConfig`] into stages and a terminal for either engine.

mod ada_olmr;
mod adaboost_ol;
mod adaboost_olm;
mod any_stage;
mod online_bbm;
mod online_bmr;
mod online_mbbm;
mod options;
mod oza;
pub mod registry;
mod single;
mod stage_context;
mod summary;
mod threshold_stage;
mod topk_adaptive;
mod topk_bbm;
mod weak_slot;

pub use ada_olmr::{AdaOlmrStage, logistic_rank_gradient, logistic_rank_gradient_with};
pub use adaboost_ol::{AdaBoostOlStage, logistic_weight};
pub use adaboost_olm::AdaBoostOlmStage;
pub use any_stage::AnyStage;
pub use online_bbm::OnlineBbmStage;
pub use online_bmr::{OnlineBmrStage, RANDOM_WEIGHT_SCALE_RANGE, random_weight_scale};
pub use online_mbbm::OnlineMbbmStage;
pub use oza::{OzaStage, OzaVotes};
pub use registry::{Algorithm, AlgorithmSpec, Family, ModelOption, REGISTRY, StageBuilder};
pub use single::SingleStage;
pub use stage_context::StageContext;
pub use summary::StageSummary;
pub use threshold_stage::ThresholdStage;
pub use topk_adaptive::{TopkAdaptiveStage, estimated_logistic_gradient};
pub use topk_bbm::TopkBbmStage;
pub use weak_slot::WeakSlot;

use crate::data::{Schema, Task};
use crate::engine::{
    Chain, ExpertSelection, LabelSetKind, LabelSetRule, Position, ScoreKind, Terminal,
};
use crate::learners::{
    HoeffdingTree, HoeffdingTreeConfig, LinearConfig, LinearLearner, WeakKind, WeakModel,
};
use crate::potentials::PairLoss;
use crate::rng::{seeded, splitmix64};
use crate::thresholding::{
    ScoreThresholdConfig, ThresholdAlgorithm, ThresholdConfig, ThresholdConfigError,
};
use crate::topk::{TopKConfig, TopKError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

impl Algorithm {
    /// Every algorithm, in the registry's order (the command line's help).
    pub fn all() -> impl Iterator<Item = Algorithm> {
        REGISTRY.iter().map(|s| s.algorithm)
    }

    /// The algorithm's registry entry.
    pub fn spec(self) -> &'static AlgorithmSpec {
        registry::spec(self)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The tasks the algorithm handles.
    pub fn supports(self, task: Task) -> bool {
        self.spec().handles(task)
    }

    /// Whether the algorithm is one online multi-label classifier of the thresholding
    /// family (one stage, its own threshold) rather than a booster.
    pub fn is_thresholding(self) -> bool {
        self.thresholding().is_some()
    }

    /// The thresholding algorithm behind `falt`, `salt`, `falt-kernel`, `pa1-br`,
    /// `pa2-br`.
    pub fn thresholding(self) -> Option<ThresholdAlgorithm> {
        match self.spec().family {
            Family::Thresholding { algorithm, .. } => Some(algorithm),
            _ => None,
        }
    }

    /// Whether the algorithm learns from top-k feedback (its terminal shows a randomized
    /// top-k of its ranking).
    pub fn is_topk(self) -> bool {
        matches!(self.spec().family, Family::Booster { topk: true, .. })
    }

    /// The number of weak learners (stages) a configuration of `learners` builds.
    pub fn stages(self, learners: usize) -> usize {
        match self.spec().family {
            Family::Booster { .. } => learners,
            Family::Single | Family::Thresholding { .. } => 1,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, UnknownAlgorithm> {
        registry::by_name(s)
            .map(|spec| spec.algorithm)
            .ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

/// A name that is no algorithm's ([`Algorithm`]'s `FromStr`); the message lists the
/// algorithms.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm '{0}' (expected one of: {names})", names = algorithm_names())]
pub struct UnknownAlgorithm(pub String);

/// The algorithms' names, in the registry's order, separated by commas.
fn algorithm_names() -> String {
    let names: Vec<_> = REGISTRY.iter().map(|a| a.name).collect();
    names.join(", ")
}

/// How each Hoeffding tree of an ensemble gets its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TreeParams {
    /// MOA's defaults for every tree.
    Default,
    /// Per-tree random parameters, as the multiclass and multi-label papers' authors did
    /// (see [`HoeffdingTreeConfig::randomized`]).
    Random,
}

crate::named_values!(TreeParams, "tree parameters", Default => "default", Random => "random");

/// The loss behind OnlineBMR's potentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Potential {
    /// The weighted rank loss (for single-label weak learners).
    Rank,
    /// The weighted hinge loss `w_Y sum (1 + s[r] - s[l])_+` (for general weak learners).
    Hinge,
}

crate::named_values!(Potential, "potential", Rank => "rank", Hinge => "hinge");

impl Potential {
    /// The pairwise loss behind the potential.
    pub fn loss(self) -> PairLoss {
        match self {
            Potential::Rank => PairLoss::Rank,
            Potential::Hinge => PairLoss::Hinge,
        }
    }
}

/// Everything needed to build a booster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoosterConfig {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The number of weak learners `N` (forced to 1 for `single`).
    pub learners: usize,
    /// The weak learner kind.
    pub weak: WeakKind,
    /// The edge `gamma` of the optimal boosters (Online BBM).
    pub gamma: f64,
    /// The run's seed: every random choice derives from it and the stage index.
    pub seed: u64,
    /// Tree parameters: defaults or per-tree random.
    pub tree_params: TreeParams,
    /// The number of random features each tree looks at (`None`: all).
    pub feature_subset: Option<usize>,
    /// Each tree stops splitting once it has this many leaves (`None`: no limit).
    #[serde(default)]
    pub max_leaves: Option<usize>,
    /// Each tree splits no leaf at this depth (the root is depth 0; `None`: no limit).
    #[serde(default)]
    pub max_depth: Option<usize>,
    /// The memory budget of the model's Hoeffding trees together, in bytes (`None`: no
    /// budget): each of the `T` trees gets `max_model_bytes / T` (see
    /// [`tree_byte_budget`]) and deactivates its least promising leaves to stay within
    /// it (see [`HoeffdingTree::set_max_bytes`]).
    #[serde(default)]
    pub max_model_bytes: Option<u64>,
    /// The linear learner's parameters.
    pub linear: LinearConfig,
    /// OnlineBMR's potential.
    pub potential: Potential,
    /// How Oza's stages combine their votes (files written before 2026-11-28 have none:
    /// the paper's rule).
    #[serde(default)]
    pub oza_votes: OzaVotes,
    /// The top-k feedback setting of `topk-bbm` and `topk-adaptive`.
    pub topk: TopKConfig,
    /// The thresholding learners' hyper-parameters (`falt`, `salt`, `falt-kernel`,
    /// `pa1-br`, `pa2-br`; the algorithm field inside is set from `algorithm`). For
    /// `falt-kernel` a kernel width is required (the default is 1 when unset).
    pub threshold: ThresholdConfig,
    /// The label-set rule of the boosters on multi-label streams (`None`: their default,
    /// top-m; the thresholding learners always use their own threshold).
    pub label_set: Option<LabelSetKind>,
    /// The learned threshold of `label_set = Learned`.
    pub score_threshold: ScoreThresholdConfig,
}

impl BoosterConfig {
    /// A configuration with the defaults: 10 learners, gamma 0.1, default tree parameters.
    pub fn new(algorithm: Algorithm, weak: WeakKind, seed: u64) -> Self {
        BoosterConfig {
            algorithm,
            learners: 10,
            weak,
            gamma: 0.1,
            seed,
            tree_params: TreeParams::Default,
            feature_subset: None,
            max_leaves: None,
            max_depth: None,
            max_model_bytes: None,
            linear: LinearConfig::default(),
            potential: Potential::Rank,
            oza_votes: OzaVotes::Paper,
            topk: TopKConfig::default(),
            threshold: ThresholdConfig::default(),
            label_set: None,
            score_threshold: ScoreThresholdConfig::default(),
        }
    }

    /// The thresholding learner's configuration for `algorithm` (its algorithm set, and
    /// the RBF kernel forced on for `falt-kernel`, width 1 unless given).
    pub fn threshold_config(&self) -> Option<ThresholdConfig> {
        let algorithm = self.algorithm.thresholding()?;
        let mut c = self.threshold.clone();
        c.algorithm = algorithm;
        if self.algorithm == Algorithm::FaltKernel && c.kernel_width.is_none() {
            c.kernel_width = Some(1.0);
        }
        Some(c)
    }
}

/// A built booster: its stages, its terminal and the size of its score vectors.
pub type Booster = Chain<AnyStage>;

/// Each tree's memory budget for a model budget of `max_model_bytes` shared by `trees`
/// trees: an equal share, `max_model_bytes / trees` rounded down (the same for every
/// worker count: it depends on the configuration only).
pub fn tree_byte_budget(max_model_bytes: u64, trees: usize) -> usize {
    let share = max_model_bytes / (trees.max(1) as u64);
    usize::try_from(share).unwrap_or(usize::MAX)
}

/// Gives `stages` the settings of `config` that are not part of their state: every
/// Hoeffding tree's share of `config.max_model_bytes` (see [`tree_byte_budget`]; or no
/// budget) and Oza's vote rule. [`build`] does it; whoever restores stages from their
/// serialized state (a model file, a checkpoint) must do it again.
pub fn apply_settings(stages: &mut [AnyStage], config: &BoosterConfig) {
    let mut trees = 0;
    for stage in stages.iter_mut() {
        if let Some(w) = stage.learner_mut() {
            w.for_each_tree_mut(&mut |_| trees += 1);
        }
    }
    let budget = config.max_model_bytes.map(|b| tree_byte_budget(b, trees));
    for stage in stages.iter_mut() {
        if let Some(w) = stage.learner_mut() {
            w.for_each_tree_mut(&mut |t| t.set_max_bytes(budget));
        }
        if let AnyStage::Oza(s) = stage {
            s.set_votes(config.oza_votes);
        }
    }
}

/// Builds weak learner `i` (0-based) of an ensemble.
pub fn build_weak(schema: &Schema, config: &BoosterConfig, i: usize) -> WeakModel {
    let seed = splitmix64(config.seed ^ splitmix64(i as u64 + 1));
    match config.weak {
        WeakKind::Vfdt => {
            let mut tc = match config.tree_params {
                TreeParams::Default => HoeffdingTreeConfig::default(),
                TreeParams::Random => {
                    HoeffdingTreeConfig::randomized(&mut seeded(config.seed, 1_000_000 + i as u64))
                }
            };
            tc.feature_subset = config.feature_subset;
            tc.max_leaves = config.max_leaves;
            tc.max_depth = config.max_depth;
            WeakModel::Tree(HoeffdingTree::new(schema, tc, seed))
        }
        WeakKind::Linear => {
            WeakModel::Linear(LinearLearner::new(schema, config.linear.clone(), seed))
        }
    }
}

/// Why a booster cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// The algorithm does not handle the stream's task.
    #[error("{algorithm} does not handle {task} streams (it handles: {handles})")]
    Task {
        /// The algorithm.
        algorithm: Algorithm,
        /// The stream's task.
        task: &'static str,
        /// The tasks it handles.
        handles: String,
    },
    /// Fewer than two labels.
    #[error("a stream needs at least 2 labels")]
    TooFewLabels,
    /// No weak learner.
    #[error("the number of learners must be at least 1")]
    NoLearners,
    /// The edge is outside `[0, 1)`.
    #[error("gamma must lie in [0, 1), got {0}")]
    Gamma(f64),
    /// The top-k setting does not fit the labels.
    #[error(transparent)]
    TopK(#[from] TopKError),
    /// A thresholding learner's hyper-parameters are invalid.
    #[error(transparent)]
    Thresholding(ThresholdConfigError),
    /// The stage builder of a thresholding learner got another algorithm.
    #[error("{0} is not a thresholding algorithm")]
    NotThresholding(Algorithm),
    /// A label-set rule on a stream that is not multi-label.
    #[error("the label-set rule ({}) applies to multi-label streams only", .0.name())]
    LabelSetTask(LabelSetKind),
    /// The learned threshold with a top-k booster.
    #[error(
        "the learned threshold needs every relevant label; top-k boosters see only \
                 the shown ones (use --label-set top-m)"
    )]
    LearnedTopK,
    /// The learned threshold's hyper-parameters are invalid.
    #[error(transparent)]
    LabelSet(ThresholdConfigError),
}

/// Builds the stages and terminal of `config.algorithm` for streams of `schema`: the
/// checks every algorithm shares, then the registry entry's stage builder for each stage
/// (see [`AlgorithmSpec::stage`]), then the terminal its family calls for.
pub fn build(schema: &Schema, config: &BoosterConfig) -> Result<Booster, BuildError> {
    let alg = config.algorithm;
    let spec = alg.spec();
    if !spec.handles(schema.task) {
        let handles: Vec<&str> = [Task::Binary, Task::Multiclass, Task::Multilabel]
            .into_iter()
            .filter(|&t| spec.handles(t))
            .map(Task::name)
            .collect();
        return Err(BuildError::Task {
            algorithm: alg,
            task: schema.task.name(),
            handles: handles.join(", "),
        });
    }
    if schema.num_labels() < 2 {
        return Err(BuildError::TooFewLabels);
    }
    let (kind, selection) = match spec.family {
        Family::Thresholding { .. } => return build_thresholding(schema, config),
        Family::Single => (ScoreKind::Votes, ExpertSelection::Last),
        Family::Booster {
            kind, selection, ..
        } => (kind, selection),
    };
    let k = schema.num_labels();
    let n = alg.stages(config.learners);
    if n == 0 {
        return Err(BuildError::NoLearners);
    }
    if !(0.0..1.0).contains(&config.gamma) {
        return Err(BuildError::Gamma(config.gamma));
    }
    let score_dim = match kind {
        ScoreKind::Margin => 1,
        ScoreKind::Votes => k,
    };
    if alg.is_topk() {
        config.topk.validate(k)?;
    }
    let mut stages = (0..n)
        .map(|i| (spec.stage)(&StageContext::new(schema, config, i, n)))
        .collect::<Result<Vec<AnyStage>, BuildError>>()?;
    let mut terminal = Terminal::new(schema.task, kind, score_dim, n, selection, config.seed);
    if alg.is_topk() {
        terminal = terminal.with_topk(config.topk, config.seed);
    }
    if let Some(kind) = config.label_set {
        if schema.task != Task::Multilabel {
            return Err(BuildError::LabelSetTask(kind));
        }
        if kind == LabelSetKind::Learned && alg.is_topk() {
            return Err(BuildError::LearnedTopK);
        }
        terminal = terminal.with_label_set(
            LabelSetRule::new(kind, schema.dim(), &config.score_threshold)
                .map_err(BuildError::LabelSet)?,
        );
    }
    apply_settings(&mut stages, config);
    Ok(Booster {
        stages,
        terminal,
        score_dim,
        position: Position::default(),
    })
}

/// One online multi-label classifier of the thresholding family: one stage (the registry
/// entry's), its own threshold.
fn build_thresholding(schema: &Schema, config: &BoosterConfig) -> Result<Booster, BuildError> {
    let k = schema.num_labels();
    let stage = (config.algorithm.spec().stage)(&StageContext::new(schema, config, 0, 1))?;
    let rule = LabelSetRule::new(LabelSetKind::Positive, 0, &config.score_threshold)
        .map_err(BuildError::LabelSet)?;
    let terminal = Terminal::new(
        schema.task,
        ScoreKind::Votes,
        k,
        1,
        ExpertSelection::Last,
        config.seed,
    )
    .with_label_set(rule);
    Ok(Booster {
        stages: vec![stage],
        terminal,
        score_dim: k,
        position: Position::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::LimitError;

    #[test]
    fn error_messages_are_the_documented_ones() {
        assert_eq!(
            "nope".parse::<Algorithm>().unwrap_err().to_string(),
            format!(
                "unknown algorithm 'nope' (expected one of: {})",
                REGISTRY
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        assert_eq!(
            BuildError::LabelSetTask(LabelSetKind::Learned).to_string(),
            format!(
                "the label-set rule ({}) applies to multi-label streams only",
                LabelSetKind::Learned.name()
            )
        );
        assert_eq!(
            BuildError::LearnedTopK.to_string(),
            "the learned threshold needs every relevant label; top-k boosters see only the \
             shown ones (use --label-set top-m)"
        );
        assert_eq!(
            BuildError::NotThresholding(Algorithm::AdaBoostOl).to_string(),
            "adaboost-ol is not a thresholding algorithm"
        );
        let topk = TopKError::Rho(2.0);
        assert_eq!(BuildError::from(topk.clone()).to_string(), topk.to_string());
        assert_eq!(
            LimitError::Labels(5000).to_string(),
            format!(
                "5000 labels: at most {} are supported",
                crate::data::MAX_LABELS
            )
        );
        assert_eq!(
            LimitError::Features(7).to_string(),
            format!("7 features: at most {} are supported", crate::data::MAX_DIM)
        );
        assert_eq!(
            LimitError::NominalValues {
                name: "city".into(),
                values: 2000
            }
            .to_string(),
            crate::data::nominal_limit_error("city", "2000")
        );
    }
}
