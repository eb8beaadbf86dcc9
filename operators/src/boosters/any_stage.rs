//! [`AnyStage`]: a stage of any booster, made from one list of the stage types.

use super::summary::threshold_summary;
use super::{
    AdaBoostOlStage, AdaBoostOlmStage, AdaOlmrStage, OnlineBbmStage, OnlineBmrStage,
    OnlineMbbmStage, OzaStage, SingleStage, StageSummary, ThresholdStage, TopkAdaptiveStage,
    TopkBbmStage,
};
use crate::engine::{InFlight, Stage};
use crate::learners::{SharedViews, WeakModel};
use serde::{Deserialize, Serialize};

/// Makes [`AnyStage`] (its variants, in the list's order, then `Threshold`), its
/// [`Stage`] dispatch, [`AnyStage::learner_mut`] and [`AnyStage::summary`] from the list of
/// the weak-learner stage types; `with alpha` marks the stages that learn a weight (their
/// `alpha()` is in the summary). Every listed type has `process`, `learner` and
/// `learner_mut`.
macro_rules! any_stage {
    (@alpha $s:ident) => { None };
    (@alpha $s:ident alpha) => { Some($s.alpha()) };
    ($(
        $(#[$doc:meta])*
        $variant:ident($stage:ty) $(with $alpha:ident)?,
    )*) => {
        /// A stage of any booster (static dispatch; serializable for checkpoints: the
        /// variants' order is part of the model file format).
        // Stages sit in a vector, one per weak learner, and are never moved in a hot path:
        // the size of the largest variant costs nothing that boxing would save.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub enum AnyStage {
            $($(#[$doc])* $variant($stage),)*
            /// `falt`, `salt`, `falt-kernel`, `pa1-br`, `pa2-br`.
            Threshold(ThresholdStage),
        }

        impl Stage for AnyStage {
            #[inline]
            fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
                match self {
                    $(AnyStage::$variant(s) => s.process(rec, views),)*
                    AnyStage::Threshold(s) => s.process(rec, views),
                }
            }
        }

        impl AnyStage {
            /// The stage's weak learner (`None` for a thresholding stage).
            pub fn learner_mut(&mut self) -> Option<&mut WeakModel> {
                match self {
                    $(AnyStage::$variant(s) => Some(s.learner_mut()),)*
                    AnyStage::Threshold(_) => None,
                }
            }

            /// The stage's weight and the size of its learner.
            pub fn summary(&self) -> StageSummary {
                match self {
                    $(AnyStage::$variant(s) => StageSummary {
                        alpha: any_stage!(@alpha s $($alpha)?),
                        learner: s.learner().summary(),
                    },)*
                    AnyStage::Threshold(s) => threshold_summary(s),
                }
            }
        }
    };
}

any_stage! {
    /// `single`.
    Single(SingleStage),
    /// `online-bbm`, `online-bbm-s`.
    OnlineBbm(OnlineBbmStage),
    /// `adaboost-ol`, `adaboost-ol-s`.
    AdaBoostOl(AdaBoostOlStage) with alpha,
    /// `oza`.
    Oza(OzaStage),
    /// `online-mbbm`.
    OnlineMbbm(OnlineMbbmStage),
    /// `adaboost-olm`.
    AdaBoostOlm(AdaBoostOlmStage) with alpha,
    /// `online-bmr`.
    OnlineBmr(OnlineBmrStage),
    /// `ada-olmr`.
    AdaOlmr(AdaOlmrStage) with alpha,
    /// `topk-bbm`.
    TopkBbm(TopkBbmStage),
    /// `topk-adaptive`.
    TopkAdaptive(TopkAdaptiveStage) with alpha,
}
