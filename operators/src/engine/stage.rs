use super::InFlight;
use crate::learners::SharedViews;

/// One weak learner of a booster, with its weight and booster-specific state.
///
/// `process` predicts with the state before the record, learns from the record when its
/// label is known, and adds its vote to `rec.scores`. A stage knows nothing of timely.
///
/// `views` is the context of the block of stages the record goes through: the views of
/// the run's examples that the block's trees share ([`SharedViews`]; the caller names the
/// record's place in it). A stage hands it to its weak learner
/// ([`WeakLearner::predict_in`](crate::learners::WeakLearner::predict_in)); it changes no
/// result, only what the trees must build again.
pub trait Stage {
    /// Processes one record.
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews);
}
