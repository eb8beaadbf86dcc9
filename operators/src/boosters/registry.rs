//! The registry of algorithms: one [`AlgorithmSpec`] per algorithm, the single place that
//! says what an algorithm is called, which tasks it handles, which options it reads and
//! how its terminal is shaped. The command line's value lists and option checks, the
//! model files' headers and the save/load round-trip test all read it.

use super::{Algorithm, BoosterConfig};
use crate::data::Task;
use crate::engine::{ExpertSelection, ScoreKind};
use crate::thresholding::ThresholdAlgorithm;

/// An option that shapes a model, by its command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModelOption {
    /// `--learners`: the number of weak learners.
    Learners,
    /// `--weak`: the weak learner kind.
    Weak,
    /// `--tree-params`: default or random tree parameters.
    TreeParams,
    /// `--feature-subset`: random features per tree.
    FeatureSubset,
    /// `--max-leaves`: a tree stops splitting at this many leaves.
    MaxLeaves,
    /// `--max-depth`: a tree splits no leaf at this depth.
    MaxDepth,
    /// `--max-model-bytes`: the trees' memory budget.
    MaxModelBytes,
    /// `--gamma`: the edge of the optimal boosters.
    Gamma,
    /// `--potential`: OnlineBMR's loss.
    Potential,
    /// `--oza-votes`: how Oza's stages combine their votes.
    OzaVotes,
    /// `--k`: the number of labels shown (top-k boosters).
    K,
    /// `--rho`: the exploration rate (top-k boosters).
    Rho,
    /// `--randomization`: how the shown ranking is randomized (top-k boosters).
    Randomization,
    /// `--clip-probability` (top-k boosters).
    ClipProbability,
    /// `--clip-gradient` (Top-k Adaptive).
    ClipGradient,
    /// `--eta`: the thresholding learners' step size.
    Eta,
    /// `--delta`: SALT's delta.
    Delta,
    /// `--repetitions`: M, update steps per example.
    Repetitions,
    /// `--c`: the passive-aggressive learners' aggressiveness.
    C,
    /// `--kernel`: linear or rbf.
    Kernel,
    /// `--kernel-width`: the RBF width.
    KernelWidth,
    /// `--budget`: the support-vector budget of kernel models.
    Budget,
    /// `--label-set`: how a multi-label booster turns its ranking into a label set.
    LabelSet,
    /// `--threshold-eta`: the learned label-set threshold's step size.
    ThresholdEta,
    /// `--threshold-repetitions`: the learned label-set threshold's steps per example.
    ThresholdRepetitions,
    /// `--online-scaling`: how a thresholding learner scales its features.
    OnlineScaling,
    /// `--grid`: a Hedge-chosen grid of thresholding settings.
    Grid,
}

impl ModelOption {
    /// The command-line flag, e.g. `--learners`.
    pub fn flag(self) -> &'static str {
        match self {
            ModelOption::Learners => "--learners",
            ModelOption::Weak => "--weak",
            ModelOption::TreeParams => "--tree-params",
            ModelOption::FeatureSubset => "--feature-subset",
            ModelOption::MaxLeaves => "--max-leaves",
            ModelOption::MaxDepth => "--max-depth",
            ModelOption::MaxModelBytes => "--max-model-bytes",
            ModelOption::Gamma => "--gamma",
            ModelOption::Potential => "--potential",
            ModelOption::OzaVotes => "--oza-votes",
            ModelOption::K => "--k",
            ModelOption::Rho => "--rho",
            ModelOption::Randomization => "--randomization",
            ModelOption::ClipProbability => "--clip-probability",
            ModelOption::ClipGradient => "--clip-gradient",
            ModelOption::Eta => "--eta",
            ModelOption::Delta => "--delta",
            ModelOption::Repetitions => "--repetitions",
            ModelOption::C => "--c",
            ModelOption::Kernel => "--kernel",
            ModelOption::KernelWidth => "--kernel-width",
            ModelOption::Budget => "--budget",
            ModelOption::LabelSet => "--label-set",
            ModelOption::ThresholdEta => "--threshold-eta",
            ModelOption::ThresholdRepetitions => "--threshold-repetitions",
            ModelOption::OnlineScaling => "--online-scaling",
            ModelOption::Grid => "--grid",
        }
    }
}

impl ModelOption {
    /// The option's value in `config`, as the command line writes it.
    pub fn value(self, config: &BoosterConfig) -> String {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "none".to_string());
        match self {
            ModelOption::Learners => config.learners.to_string(),
            ModelOption::Weak => config.weak.name().to_string(),
            ModelOption::TreeParams => config.tree_params.name().to_string(),
            ModelOption::FeatureSubset => opt(config.feature_subset.map(|m| m.to_string())),
            ModelOption::MaxLeaves => opt(config.max_leaves.map(|m| m.to_string())),
            ModelOption::MaxDepth => opt(config.max_depth.map(|m| m.to_string())),
            ModelOption::MaxModelBytes => opt(config.max_model_bytes.map(|m| m.to_string())),
            ModelOption::Gamma => config.gamma.to_string(),
            ModelOption::Potential => config.potential.name().to_string(),
            ModelOption::OzaVotes => config.oza_votes.name().to_string(),
            ModelOption::K => config.topk.k.to_string(),
            ModelOption::Rho => config.topk.rho.to_string(),
            ModelOption::Randomization => config.topk.randomization.name().to_string(),
            ModelOption::ClipProbability => config.topk.clip_probability.to_string(),
            ModelOption::ClipGradient => config.topk.clip_gradient.to_string(),
            ModelOption::Eta => config.threshold.eta.to_string(),
            ModelOption::Delta => config.threshold.delta.to_string(),
            ModelOption::Repetitions => config.threshold.repetitions.to_string(),
            ModelOption::C => config.threshold.c.to_string(),
            ModelOption::Kernel => {
                let rbf = config.threshold.kernel_width.is_some()
                    || config.algorithm == Algorithm::FaltKernel;
                if rbf { "rbf" } else { "linear" }.to_string()
            }
            ModelOption::KernelWidth => opt(config.threshold.kernel_width.map(|w| w.to_string())),
            ModelOption::Budget => opt(config.threshold.budget.map(|b| b.to_string())),
            ModelOption::LabelSet => opt(config.label_set.map(|k| k.name().to_string())),
            ModelOption::ThresholdEta => config.score_threshold.eta.to_string(),
            ModelOption::ThresholdRepetitions => config.score_threshold.repetitions.to_string(),
            ModelOption::OnlineScaling => config.threshold.scaling.name().to_string(),
            ModelOption::Grid => match &config.threshold.grid {
                None => "off".into(),
                Some(g) => format!("eta {:?} kernel-width {:?}", g.etas, g.kernel_widths),
            },
        }
    }
}

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

/// One algorithm: its names, tasks, family and the options it reads.
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
}

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

/// Every algorithm, in the order of the command line's help.
pub const REGISTRY: &[AlgorithmSpec] = &[
    AlgorithmSpec {
        algorithm: Algorithm::Single,
        name: "single",
        tasks: ALL_TASKS,
        family: Family::Single,
        reads: weak_options!(LabelSet, ThresholdEta, ThresholdRepetitions),
        about: "one weak learner alone",
    },
    AlgorithmSpec {
        algorithm: Algorithm::OnlineBbm,
        name: "online-bbm",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Last, true, false),
        reads: ENSEMBLE_GAMMA,
        about: "Online BBM, importance weights (Beygelzimer, Kale, Luo 2015, Algorithm 1)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::OnlineBbmS,
        name: "online-bbm-s",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Last, true, false),
        reads: ENSEMBLE_GAMMA,
        about: "Online BBM with rejection sampling",
    },
    AlgorithmSpec {
        algorithm: Algorithm::AdaBoostOl,
        name: "adaboost-ol",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Hedge, false, false),
        reads: ENSEMBLE,
        about: "AdaBoost.OL, importance weights (Beygelzimer, Kale, Luo 2015, Algorithm 2)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::AdaBoostOlS,
        name: "adaboost-ol-s",
        tasks: BINARY,
        family: booster(ScoreKind::Margin, ExpertSelection::Hedge, false, false),
        reads: ENSEMBLE,
        about: "AdaBoost.OL.S, with rejection sampling",
    },
    AlgorithmSpec {
        algorithm: Algorithm::Oza,
        name: "oza",
        tasks: SINGLE_LABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, false, false),
        reads: ensemble_options!(OzaVotes),
        about: "Oza and Russell's online boosting (as MOA's OzaBoost)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::OnlineMbbm,
        name: "online-mbbm",
        tasks: SINGLE_LABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, true, false),
        reads: ENSEMBLE_GAMMA,
        about: "OnlineMBBM, exact 0-1 loss potentials (Jung, Goetz, Tewari 2017, Algorithm 1)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::AdaBoostOlm,
        name: "adaboost-olm",
        tasks: SINGLE_LABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Hedge, false, false),
        reads: ENSEMBLE,
        about: "AdaBoost.OLM (Jung, Goetz, Tewari 2017, Algorithm 2)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::OnlineBmr,
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
    },
    AlgorithmSpec {
        algorithm: Algorithm::AdaOlmr,
        name: "ada-olmr",
        tasks: MULTILABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Hedge, false, false),
        reads: ensemble_options!(LabelSet, ThresholdEta, ThresholdRepetitions),
        about: "Ada.OLMR (Jung, Tewari 2018, Algorithm 3)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::TopkBbm,
        name: "topk-bbm",
        tasks: MULTILABEL,
        family: booster(ScoreKind::Votes, ExpertSelection::Last, true, true),
        reads: ensemble_options!(Gamma, K, Rho, Randomization, ClipProbability, LabelSet),
        about: "Top-k BBM, from top-k feedback (Zhang, Jung, Tewari 2019, Algorithm 2)",
    },
    AlgorithmSpec {
        algorithm: Algorithm::TopkAdaptive,
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
    },
    AlgorithmSpec {
        algorithm: Algorithm::Falt,
        name: "falt",
        tasks: MULTILABEL,
        family: Family::Thresholding {
            algorithm: ThresholdAlgorithm::Falt,
            kernel: false,
        },
        reads: FALT,
        about: "FALT, first-order adaptive label thresholding (with --kernel rbf, FALT(k))",
    },
    AlgorithmSpec {
        algorithm: Algorithm::Salt,
        name: "salt",
        tasks: MULTILABEL,
        family: Family::Thresholding {
            algorithm: ThresholdAlgorithm::Salt,
            kernel: false,
        },
        reads: &[O::Eta, O::Delta, O::Repetitions, O::OnlineScaling, O::Grid],
        about: "SALT, second-order adaptive label thresholding",
    },
    AlgorithmSpec {
        algorithm: Algorithm::FaltKernel,
        name: "falt-kernel",
        tasks: MULTILABEL,
        family: Family::Thresholding {
            algorithm: ThresholdAlgorithm::Falt,
            kernel: true,
        },
        reads: FALT,
        about: "FALT with an RBF kernel",
    },
    AlgorithmSpec {
        algorithm: Algorithm::Pa1Br,
        name: "pa1-br",
        tasks: MULTILABEL,
        family: Family::Thresholding {
            algorithm: ThresholdAlgorithm::Pa1Br,
            kernel: false,
        },
        reads: &[O::C, O::Kernel, O::KernelWidth, O::Budget, O::OnlineScaling],
        about: "PA-I binary relevance (with --kernel rbf, PA-I-BR(k))",
    },
    AlgorithmSpec {
        algorithm: Algorithm::Pa2Br,
        name: "pa2-br",
        tasks: MULTILABEL,
        family: Family::Thresholding {
            algorithm: ThresholdAlgorithm::Pa2Br,
            kernel: false,
        },
        reads: &[O::C, O::Kernel, O::KernelWidth, O::Budget, O::OnlineScaling],
        about: "PA-II binary relevance (with --kernel rbf, PA-II-BR(k))",
    },
];

/// The registry entry of `algorithm`.
pub fn spec(algorithm: Algorithm) -> &'static AlgorithmSpec {
    REGISTRY
        .iter()
        .find(|s| s.algorithm == algorithm)
        .expect("every algorithm has a registry entry (checked by a test)")
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
    fn every_algorithm_has_exactly_one_entry_with_a_unique_name() {
        // An exhaustive match: a new variant does not compile until it is listed here.
        let listed = |a: Algorithm| match a {
            Algorithm::Single
            | Algorithm::OnlineBbm
            | Algorithm::OnlineBbmS
            | Algorithm::AdaBoostOl
            | Algorithm::AdaBoostOlS
            | Algorithm::Oza
            | Algorithm::OnlineMbbm
            | Algorithm::AdaBoostOlm
            | Algorithm::OnlineBmr
            | Algorithm::AdaOlmr
            | Algorithm::TopkBbm
            | Algorithm::TopkAdaptive
            | Algorithm::Falt
            | Algorithm::Salt
            | Algorithm::FaltKernel
            | Algorithm::Pa1Br
            | Algorithm::Pa2Br => a,
        };
        let variants = [
            Algorithm::Single,
            Algorithm::OnlineBbm,
            Algorithm::OnlineBbmS,
            Algorithm::AdaBoostOl,
            Algorithm::AdaBoostOlS,
            Algorithm::Oza,
            Algorithm::OnlineMbbm,
            Algorithm::AdaBoostOlm,
            Algorithm::OnlineBmr,
            Algorithm::AdaOlmr,
            Algorithm::TopkBbm,
            Algorithm::TopkAdaptive,
            Algorithm::Falt,
            Algorithm::Salt,
            Algorithm::FaltKernel,
            Algorithm::Pa1Br,
            Algorithm::Pa2Br,
        ]
        .map(listed);
        for a in variants {
            assert_eq!(
                REGISTRY.iter().filter(|s| s.algorithm == a).count(),
                1,
                "{a:?}"
            );
        }
        assert_eq!(REGISTRY.len(), variants.len());
        for s in REGISTRY {
            assert_eq!(by_name(s.name).map(|t| t.algorithm), Some(s.algorithm));
            assert!(!s.tasks.is_empty());
        }
    }
}
