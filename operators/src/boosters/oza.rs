use super::WeakSlot;
use super::weak_slot::top_label;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::rng::{Rng, seeded};
use rand_distr::{Distribution, Poisson};
use serde::{Deserialize, Serialize};

/// How Oza's stages combine their predictions into the ensemble's vote (`--oza-votes`).
///
/// Both rules weight stage `m` by `ln((1 - e_m) / e_m)`; they differ in what a stage votes
/// with and where the vote stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OzaVotes {
    /// Oza and Russell's rule (2001): each stage adds its weight to the one label it
    /// predicts (a hard vote); a stage with `e_m >= 1/2` or no statistics adds 0 and the
    /// later stages still vote; `e_m` is floored at `1e-6`.
    #[default]
    Paper,
    /// MOA's `OzaBoost.getVotesForInstance`: each stage adds its weight times its
    /// predicted distribution over the labels (a soft vote), and the vote stops at the
    /// first stage whose weight is 0 (`e_m = 0`, `e_m >= 1/2` or no statistics): the
    /// stages after it add nothing, whatever their weights.
    Moa,
}

crate::named_values!(OzaVotes, "vote rule", Paper => "paper", Moa => "moa");

/// One stage of Oza and Russell's online boosting (2001), as in MOA's `OzaBoost`.
///
/// Prediction: stage `m` votes for its predicted label with weight `ln((1 - e_m) / e_m)`,
/// `e_m = lambda_sw / (lambda_sc + lambda_sw)`; a stage with `e_m >= 1/2` or no statistics
/// yet votes 0, and `e_m` is floored at `1e-6` so that a stage never wrong votes with a
/// large finite weight. With [`OzaVotes::Moa`] the stage votes with its predicted
/// distribution instead, as MOA does (see there). Learning: with `lambda` carried from the
/// previous stage (1 at the first), the stage learns the example with importance weight
/// `K ~ Poisson(lambda)`; then, if it now classifies the example correctly,
/// `lambda_sc += lambda` and `lambda <- lambda t / (2 lambda_sc)`, else
/// `lambda_sw += lambda` and `lambda <- lambda t / (2 lambda_sw)`, with `t` the number of
/// labeled examples seen.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OzaStage {
    weak: WeakSlot,
    lambda_sc: f64,
    lambda_sw: f64,
    t: u64,
    rng: Rng,
    /// The vote rule: a setting of the model, not part of the stage's state (the model's
    /// configuration gives it again on a restore, see [`super::apply_settings`]).
    #[serde(skip)]
    votes: OzaVotes,
}

impl OzaStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// Stage `i` (1-based), combining its vote by `votes`.
    pub fn new(weak: WeakSlot, i: usize, seed: u64, votes: OzaVotes) -> Self {
        OzaStage {
            weak,
            lambda_sc: 0.0,
            lambda_sw: 0.0,
            t: 0,
            rng: seeded(seed, i as u64),
            votes,
        }
    }

    /// Sets the vote rule (a restored stage gets it from the model's configuration).
    pub fn set_votes(&mut self, votes: OzaVotes) {
        self.votes = votes;
    }

    /// The stage's vote weight under its vote rule: `ln((1 - e) / e)`, 0 when
    /// `e >= 1/2` or unknown, `e` floored at `1e-6` by [`OzaVotes::Paper`] and 0 when
    /// `e = 0` by [`OzaVotes::Moa`] (MOA's `getEnsembleMemberWeight`).
    pub fn vote_weight(&self) -> f64 {
        let total = self.lambda_sc + self.lambda_sw;
        if total <= 0.0 {
            return 0.0;
        }
        let e = self.lambda_sw / total;
        let e = match self.votes {
            OzaVotes::Paper => e.max(1e-6),
            OzaVotes::Moa if e == 0.0 => return 0.0,
            OzaVotes::Moa => e,
        };
        if e >= 0.5 { 0.0 } else { ((1.0 - e) / e).ln() }
    }

    /// Adds this stage's vote to `rec.scores` and returns the label it predicts now, if
    /// that was needed for the vote (the learning step asks for it otherwise).
    fn vote(&mut self, rec: &mut InFlight, views: &mut SharedViews) -> Option<u32> {
        let x = &rec.example.features;
        match self.votes {
            OzaVotes::Paper => {
                let c = self.weak.predict_class(x, views);
                rec.scores[c as usize] += self.vote_weight();
                Some(c)
            }
            OzaVotes::Moa => {
                if rec.votes_closed {
                    return None;
                }
                let w = self.vote_weight();
                if w <= 0.0 {
                    rec.votes_closed = true;
                    return None;
                }
                let p = self.weak.predict(x, views);
                for (s, &v) in rec.scores.iter_mut().zip(p) {
                    *s += w * v;
                }
                Some(top_label(p))
            }
        }
    }
}

impl Stage for OzaStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let predicted = self.vote(rec, views);
        let ex = &*rec.example;
        if let Some(&Label::Class(y)) = rec.label() {
            let lambda = rec.carry;
            self.t += 1;
            let k = match Poisson::new(lambda) {
                Ok(p) => p.sample(&mut self.rng),
                Err(_) => 0.0,
            };
            // A weight of 0 changes nothing (`WeakLearner::learn`), and prediction is a
            // function of the state: without learning, the class predicted now is the
            // one the vote saw.
            let after = if k > 0.0 {
                self.weak.learn(&ex.features, y, k, views);
                self.weak.predict_class(&ex.features, views)
            } else {
                match predicted {
                    Some(c) => c,
                    None => self.weak.predict_class(&ex.features, views),
                }
            };
            let t = self.t as f64;
            if after == y {
                self.lambda_sc += lambda;
                rec.carry = lambda * t / (2.0 * self.lambda_sc);
            } else {
                self.lambda_sw += lambda;
                rec.carry = lambda * t / (2.0 * self.lambda_sw);
            }
        }
    }
}
