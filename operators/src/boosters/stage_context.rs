//! What a registry entry's build function sees: the stream, the configuration and which
//! stage of how many it builds.

use super::{
    BoosterConfig, OnlineMbbmStage, TreeParams, WeakSlot, build_weak, random_weight_scale,
};
use crate::data::Schema;
use crate::learners::{WeakKind, WeakModel};

/// The inputs of one stage's construction: [`AlgorithmSpec::stage`] turns one into the
/// stage (weak learner `i` of `n`).
///
/// [`AlgorithmSpec::stage`]: super::AlgorithmSpec::stage
///
/// # Example
///
/// ```
/// use flowboost_operators::boosters::{Algorithm, AnyStage, BoosterConfig, StageContext};
/// use flowboost_operators::data::{Schema, Task};
/// use flowboost_operators::learners::WeakKind;
///
/// let schema = Schema::numeric(4, 3, Task::Multiclass);
/// let config = BoosterConfig::new(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 7);
/// let cx = StageContext::new(&schema, &config, 0, config.learners);
/// let stage = (config.algorithm.spec().stage)(&cx).expect("a valid configuration");
/// assert!(matches!(stage, AnyStage::AdaBoostOlm(_)));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct StageContext<'a> {
    /// The stream's schema.
    pub schema: &'a Schema,
    /// The booster's configuration.
    pub config: &'a BoosterConfig,
    /// The stage's index, 0-based (its weak learner's).
    pub i: usize,
    /// The number of stages `N`.
    pub n: usize,
    /// The number of labels `k`.
    pub labels: usize,
    /// Whether the terminal follows Hedge's choice of expert (the adaptive boosters'
    /// stages keep a trail of their experts' losses).
    pub trail: bool,
    /// The run's seed.
    pub seed: u64,
}

impl<'a> StageContext<'a> {
    /// The context of stage `i` (0-based) of `n` for `config` on streams of `schema`.
    pub fn new(schema: &'a Schema, config: &'a BoosterConfig, i: usize, n: usize) -> Self {
        let trail = match config.algorithm.spec().family {
            super::Family::Booster { selection, .. } => {
                selection == crate::engine::ExpertSelection::Hedge
            }
            super::Family::Single | super::Family::Thresholding { .. } => false,
        };
        StageContext {
            schema,
            config,
            i,
            n,
            labels: schema.num_labels(),
            trail,
            seed: config.seed,
        }
    }

    /// The stage's 1-based position (the papers' `i`).
    pub fn position(&self) -> usize {
        self.i + 1
    }

    /// The stage's weak learner (see [`build_weak`]).
    pub fn weak_model(&self) -> WeakModel {
        build_weak(self.schema, self.config, self.i)
    }

    /// The stage's weak learner in its slot (the boosters that feed it by importance
    /// weight or sampling).
    pub fn weak(&self) -> WeakSlot {
        WeakSlot::new(self.weak_model())
    }

    /// Whether the weak learners are Hoeffding trees with per-tree random parameters
    /// (whose weights the papers' authors scaled per tree).
    fn random_trees(&self) -> bool {
        (self.config.weak, self.config.tree_params) == (WeakKind::Vfdt, TreeParams::Random)
    }

    /// The multiclass boosters' weight unit: per-tree random for random trees, as the
    /// authors did (see [`OnlineMbbmStage::random_weight_unit`]); else 1.
    pub fn weight_unit(&self) -> f64 {
        if self.random_trees() {
            OnlineMbbmStage::random_weight_unit(self.seed, self.i)
        } else {
            1.0
        }
    }

    /// The multi-label boosters' weight constant: the authors' per-tree constant for
    /// random trees (see [`random_weight_scale`]); else 1.
    pub fn weight_scale(&self) -> f64 {
        if self.random_trees() {
            random_weight_scale(self.seed, self.i)
        } else {
            1.0
        }
    }
}
