use super::InFlight;

/// One weak learner of a booster, with its weight and booster-specific state.
///
/// `process` predicts with the state before the record, learns from the record when its
/// label is known, and adds its vote to `rec.scores`. A stage knows nothing of timely.
pub trait Stage {
    /// Processes one record.
    fn process(&mut self, rec: &mut InFlight);
}
