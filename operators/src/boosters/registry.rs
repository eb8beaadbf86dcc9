//! The registry of algorithms: one entry per algorithm, the single place that says what an
//! algorithm is called, which tasks it handles, which options it reads, how its terminal
//! is shaped and how it builds its stages. The [`Algorithm`] enum and [`REGISTRY`] are
//! both made from the one list in `algorithms!` below: adding an algorithm is adding an
//! entry there. The command line's value lists and option checks, the model files'
//! headers, [`build`](super::build) and the save/load round-trip test all read it.

use super::{
    AdaBoostOlStage, AdaBoostOlmStage, AdaOlmrStage, AnyStage, BuildError, OnlineBbmStage,
    OnlineBmrStage, OnlineMbbmStage, OzaStage, SingleStage, StageContext, ThresholdStage,
    TopkAdaptiveStage, TopkBbmStage,
};
use crate::data::Task;
use crate::engine::{ExpertSelection, ScoreKind};
use crate::thresholding::{ThresholdAlgorithm, ThresholdLearner};
use serde::{Deserialize, Serialize};

pub use super::options::ModelOption;

/// What kind of model an algorithm builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// One weak learner alone.
    Single,
    /// A booster: `N` weak learners, a running score of `kind`, the expert chosen by
    /// `selection`; `optimal` boosters need the edge gamma, `topk` ones learn from the
    /// shown labels only.
    Booster {
        /// How the terminal reads the scores.
        kind: ScoreKind,
        /// Which expert the terminal follows.
        selection: ExpertSelection,
        /// Whether the booster reads the edge gamma.
        optimal: bool,
        /// Whether the booster learns from top-k feedback.
        topk: bool,
    },
    /// One online multi-label classifier with its own threshold.
    Thresholding {
        /// The algorithm.
        algorithm: ThresholdAlgorithm,
        /// Whether the RBF kernel is forced on (`falt-kernel`).
        kernel: bool,
    },
}

/// One algorithm: its names, tasks, family, the options it reads and how it builds its
/// stages.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmSpec {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The command-line name.
    pub name: &'static str,
    /// The tasks it handles.
    pub tasks: &'static [Task],
    /// What it builds.
    pub family: Family,
    /// The options it reads (besides `--seed`, which every algorithm reads).
    pub reads: &'static [ModelOption],
    /// One line for the help and `inspect`.
    pub about: &'static str,
    /// Builds one stage (see [`StageContext`]); [`build`](super::build) calls it for each
    /// of the `N` stages (once for `single` and the thresholding learners).
    pub stage: StageBuilder,
}

/// How a registry entry builds stage `i` of `N`.
pub type StageBuilder = fn(&StageContext<'_>) -> Result<AnyStage, BuildError>;
use ModelOption as O;

/// The options of one weak learner (`--weak` and what shapes it), then `$extra`; with
/// `@after [..]`, those options first.
macro_rules! weak_options {
    ($($extra:ident),* $(,)?) => {
        weak_options!(@after [] $($extra),*)
    };
    (@after [$($first:ident),*] $($extra:ident),*) => {
        &[
            $(O::$first,)*
            O::Weak,
            O::TreeParams,
            O::FeatureSubset,
            O::MaxLeaves,
            O::MaxDepth,
            O::MaxModelBytes,
            $(O::$extra,)*
        ]
    };
}
/// The options of every weak-learner ensemble (`--learners`, then [`weak_options`]),
/// then `$extra`.
macro_rules! ensemble_options {
    ($($extra:ident),* $(,)?) => {
        weak_options!(@after [Learners] $($extra),*)
    };
}
/// The options of every weak-learner ensemble.
const ENSEMBLE: &[ModelOption] = ensemble_options!();
/// An ensemble's options and the weak learners' edge `--gamma` (the optimal boosters).
const ENSEMBLE_GAMMA: &[ModelOption] = ensemble_options!(Gamma);
/// The options of FALT, with or without its kernel.
const FALT: &[ModelOption] = &[
    O::Eta,
    O::Repetitions,
    O::Kernel,
    O::KernelWidth,
    O::Budget,
    O::OnlineScaling,
    O::Grid,
];
/// The options of the passive-aggressive baselines.
const PA: &[ModelOption] = &[O::C, O::Kernel, O::KernelWidth, O::Budget, O::OnlineScaling];
const ALL_TASKS: &[Task] = &[Task::Binary, Task::Multiclass, Task::Multilabel];
const BINARY: &[Task] = &[Task::Binary];
const SINGLE_LABEL: &[Task] = &[Task::Binary, Task::Multiclass];
const MULTILABEL: &[Task] = &[Task::Multilabel];

const fn booster(kind: ScoreKind, selection: ExpertSelection, optimal: bool, topk: bool) -> Family {
    Family::Booster {
        kind,
        selection,
        optimal,
        topk,
    }
}

const fn thresholding(algorithm: ThresholdAlgorithm, kernel: bool) -> Family {
    Family::Thresholding { algorithm, kernel }
}

/// The one stage of a thresholding learner (`falt`, `salt`, `falt-kernel`, `pa1-br`,
/// `pa2-br`): its hyper-parameters are [`BoosterConfig::threshold_config`].
///
/// [`BoosterConfig::threshold_config`]: super::BoosterConfig::threshold_config
fn threshold_stage(cx: &StageContext<'_>) -> Result<AnyStage, BuildError> {
    let algorithm = cx.config.algorithm;
    let config = cx
        .config
        .threshold_config()
        .ok_or(BuildError::NotThresholding(algorithm))?;
    let learner = ThresholdLearner::new(&config, cx.schema.dim(), cx.labels, cx.seed)
        .map_err(BuildError::Thresholding)?;
    Ok(AnyStage::Threshold(ThresholdStage::new(learner)))
}

/// Makes [`Algorithm`] (one variant per entry, with the entry's doc) and [`REGISTRY`]
/// (the entries, in order) from one list, so that the two cannot disagree.
macro_rules! algorithms {
    ($(
        $(#[$doc:meta])*
        $variant:ident {
            name: $name:literal,
            tasks: $tasks:expr,
            family: $family:expr,
            reads: $reads:expr,
            about: $about:literal,
            stage: $stage:expr $(,)?
        }
    ),* $(,)?) => {
        /// The algorithms, by their command-line names: one per [`REGISTRY`] entry, in its
        /// order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum Algorithm {
            $($(#[$doc])* $variant,)*
        }

        /// Every algorithm, in the order of the command line's help.
        pub const REGISTRY: &[AlgorithmSpec] = &[$(
            AlgorithmSpec {
                algorithm: Algorithm::$variant,
                name: $name,
                tasks: $tasks,
                family: $family,
                reads: $reads,
                about: $about,
                stage: $stage,
            },
        )*];
    };
}

algorithms! {
    /// One weak learner alone (`single`).
    Single {
        name: "single",
        tasks: ALL_TASKS,
        family: Family::Single,
        reads: weak_options!(LabelSet, ThresholdEta, ThresholdRepetitions),
        about: "one weak learner alone",
        stage: |cx| Ok(AnyStage::Single(SingleStage::new(cx.weak()))),
    },
    /// Online BBM with importance weights (`online-bbm`).
    OnlineBbm {
        name: "online-bbm",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Last, true, false),
        reads: ENSEMBLE_GAMMA,
        about: "Online BBM, importance weights (Beygelzimer, Kale, Luo 2015, Algorithm 1)",
        stage: |cx| {
            let (weak, i, n, gamma) = (cx.weak(), cx.position(), cx.n, cx.config.gamma);
            Ok(AnyStage::OnlineBbm(OnlineBbmStage::new(weak, i, n, gamma, false, cx.seed)))
        },
    },
    /// Online BBM with rejection sampling (`online-bbm-s`).
    OnlineBbmS {
        name: "online-bbm-s",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Last, true, false),
        reads: ENSEMBLE_GAMMA,
        about: "Online BBM with rejection sampling",
        stage: |cx| {
            let (weak, i, n, gamma) = (cx.weak(), cx.position(), cx.n, cx.config.gamma);
            Ok(AnyStage::OnlineBbm(OnlineBbmStage::new(weak, i, n, gamma, true, cx.seed)))
        },
    },
    /// AdaBoost.OL with importance weights (`adaboost-ol`).
    AdaBoostOl {
        name: "adaboost-ol",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Hedge, false, false),
        reads: ENSEMBLE,
        about: "AdaBoost.OL, importance weights (Beygelzimer, Kale, Luo 2015, Algorithm 2)",
        stage: |cx| {
            let (weak, i) = (cx.weak(), cx.position());
            Ok(AnyStage::AdaBoostOl(AdaBoostOlStage::new(weak, i, false, cx.trail, cx.seed)))
        },
    },
    /// AdaBoost.OL.S, with rejection sampling (`adaboost-ol-s`).
    AdaBoostOlS {
        name: "adaboost-ol-s",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Hedge, false, false),
        reads: ENSEMBLE,
        about: "AdaBoost.OL.S, with rejection sampling",
        stage: |cx| {
            let (weak, i) = (cx.weak(), cx.position());
            Ok(AnyStage::AdaBoostOl(AdaBoostOlStage::new(weak, i, true, cx.trail, cx.seed)))
        },
    },
    /// Oza and Russell's online boosting (`oza`).
    Oza {
        name: "oza",
        tasks: SINGLE_LABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, false, false),
        reads: ensemble_options!(OzaVotes),
        about: "Oza and Russell's online boosting (as MOA's OzaBoost)",
        stage: |cx| {
            let (weak, i, votes) = (cx.weak(), cx.position(), cx.config.oza_votes);
            Ok(AnyStage::Oza(OzaStage::new(weak, i, cx.seed, votes)))
        },
    },
    /// OnlineMBBM, the optimal multiclass booster (`online-mbbm`).
    OnlineMbbm {
        name: "online-mbbm",
        tasks: SINGLE_LABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, true, false),
        reads: ENSEMBLE_GAMMA,
        about: "OnlineMBBM, exact 0-1 loss potentials (Jung, Goetz, Tewari 2017, Algorithm 1)",
        stage: |cx| {
            let (weak, i, n, k) = (cx.weak(), cx.position(), cx.n, cx.labels);
            let (gamma, unit) = (cx.config.gamma, cx.weight_unit());
            Ok(AnyStage::OnlineMbbm(OnlineMbbmStage::new(weak, i, n, k, gamma, unit, cx.seed)))
        },
    },
    /// AdaBoost.OLM, the adaptive multiclass booster (`adaboost-olm`).
    AdaBoostOlm {
        name: "adaboost-olm",
        tasks: SINGLE_LABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Hedge, false, false),
        reads: ENSEMBLE,
        about: "AdaBoost.OLM (Jung, Goetz, Tewari 2017, Algorithm 2)",
        stage: |cx| {
            let (weak, i, k, unit) = (cx.weak(), cx.position(), cx.labels, cx.weight_unit());
            Ok(AnyStage::AdaBoostOlm(AdaBoostOlmStage::new(weak, i, k, cx.trail, unit, cx.seed)))
        },
    },
    /// OnlineBMR, the optimal multi-label ranking booster (`online-bmr`).
    OnlineBmr {
        name: "online-bmr",
        tasks: MULTILABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, true, false),
        reads: ensemble_options!(
            Gamma,
            Potential,
            LabelSet,
            ThresholdEta,
            ThresholdRepetitions
        ),
        about: "OnlineBMR, exact rank or hinge potentials (Jung, Tewari 2018, Algorithm 2)",
        stage: |cx| {
            let (model, i, n, gamma) = (cx.weak_model(), cx.position(), cx.n, cx.config.gamma);
            let (loss, scale) = (cx.config.potential.loss(), cx.weight_scale());
            Ok(AnyStage::OnlineBmr(OnlineBmrStage::new(model, i, n, gamma, loss, scale)))
        },
    },
    /// Ada.OLMR, the adaptive multi-label ranking booster (`ada-olmr`).
    AdaOlmr {
        name: "ada-olmr",
        tasks: MULTILABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Hedge, false, false),
        reads: ensemble_options!(LabelSet, ThresholdEta, ThresholdRepetitions),
        about: "Ada.OLMR (Jung, Tewari 2018, Algorithm 3)",
        stage: |cx| {
            let (model, scale) = (cx.weak_model(), cx.weight_scale());
            Ok(AnyStage::AdaOlmr(AdaOlmrStage::new(model, cx.trail, scale)))
        },
    },
    /// Top-k BBM, the optimal booster under top-k feedback (`topk-bbm`).
    TopkBbm {
        name: "topk-bbm",
        tasks: MULTILABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, true, true),
        reads: ensemble_options!(Gamma, K, Rho, Randomization, ClipProbability, LabelSet),
        about: "Top-k BBM, from top-k feedback (Zhang, Jung, Tewari 2019, Algorithm 2)",
        stage: |cx| {
            let (model, i, n, gamma) = (cx.weak_model(), cx.position(), cx.n, cx.config.gamma);
            Ok(AnyStage::TopkBbm(TopkBbmStage::new(model, i, n, gamma, cx.weight_scale())))
        },
    },
    /// Top-k Adaptive, the adaptive booster under top-k feedback (`topk-adaptive`).
    TopkAdaptive {
        name: "topk-adaptive",
        tasks: MULTILABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Hedge, false, true),
        reads: ensemble_options!(
            K,
            Rho,
            Randomization,
            ClipProbability,
            ClipGradient,
            LabelSet
        ),
        about: "Top-k Adaptive, from top-k feedback (Zhang, Jung, Tewari 2019, Algorithm 3)",
        stage: |cx| {
            let (model, topk, scale) = (cx.weak_model(), cx.config.topk, cx.weight_scale());
            let stage = TopkAdaptiveStage::new(model, topk.rho, topk.clip_gradient, scale);
            Ok(AnyStage::TopkAdaptive(stage))
        },
    },
    /// FALT, first-order adaptive label thresholding (`falt`; with `--kernel rbf`, FALT(k)).
    Falt {
        name: "falt",
        tasks: MULTILABEL,
        family: thresholding(ThresholdAlgorithm::Falt, false),
        reads: FALT,
        about: "FALT, first-order adaptive label thresholding (with --kernel rbf, FALT(k))",
        stage: threshold_stage,
    },
    /// SALT, second-order adaptive label thresholding (`salt`).
    Salt {
        name: "salt",
        tasks: MULTILABEL,
        family: thresholding(ThresholdAlgorithm::Salt, false),
        reads: &[O::Eta, O::Delta, O::Repetitions, O::OnlineScaling, O::Grid],
        about: "SALT, second-order adaptive label thresholding",
        stage: threshold_stage,
    },
    /// FALT(k), FALT with an RBF kernel (`falt-kernel`).
    FaltKernel {
        name: "falt-kernel",
        tasks: MULTILABEL,
        family: thresholding(ThresholdAlgorithm::Falt, true),
        reads: FALT,
        about: "FALT with an RBF kernel",
        stage: threshold_stage,
    },
    /// PA-I binary relevance (`pa1-br`; with `--kernel rbf`, PA-I-BR(k)).
    Pa1Br {
        name: "pa1-br",
        tasks: MULTILABEL,
        family: thresholding(ThresholdAlgorithm::Pa1Br, false),
        reads: PA,
        about: "PA-I binary relevance (with --kernel rbf, PA-I-BR(k))",
        stage: threshold_stage,
    },
    /// PA-II binary relevance (`pa2-br`; with `--kernel rbf`, PA-II-BR(k)).
    Pa2Br {
        name: "pa2-br",
        tasks: MULTILABEL,
        family: thresholding(ThresholdAlgorithm::Pa2Br, false),
        reads: PA,
        about: "PA-II binary relevance (with --kernel rbf, PA-II-BR(k))",
        stage: threshold_stage,
    },
}

/// The registry entry of `algorithm`.
pub fn spec(algorithm: Algorithm) -> &'static AlgorithmSpec {
    // `algorithms!` makes the variants and the entries from one list, in one order.
    &REGISTRY[algorithm as usize]
}

/// The registry entry named `name`.
pub fn by_name(name: &str) -> Option<&'static AlgorithmSpec> {
    REGISTRY.iter().find(|s| s.name == name)
}

impl AlgorithmSpec {
    /// Whether it reads `option`.
    pub fn reads(&self, option: ModelOption) -> bool {
        self.reads.contains(&option)
    }

    /// Whether it handles `task`.
    pub fn handles(&self, task: Task) -> bool {
        self.tasks.contains(&task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_has_its_own_entry_with_a_unique_name() {
        for (i, s) in REGISTRY.iter().enumerate() {
            assert_eq!(s.algorithm as usize, i, "{:?}", s.algorithm);
            assert_eq!(spec(s.algorithm).name, s.name);
            assert_eq!(by_name(s.name).map(|t| t.algorithm), Some(s.algorithm));
            assert!(!s.tasks.is_empty(), "{}", s.name);
        }
    }
}
