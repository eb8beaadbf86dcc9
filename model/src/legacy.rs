//! The bodies of format versions 2 to 5, read into today's [`ModelBody`].
//!
//! Version 5 added the model of each event waiting in the feedback join
//! ([`WaitingEvent::model`], for jobs with one model per key); an older file's waiting
//! events all belong to its one model (model 0). Version 6 added the other keys' models
//! (`keyed`, `key_progress`); an older file has none. Everything else reads as it did.

use super::body::{FeedbackRun, ModelBody, Progress, StageBytes};
use flowboost_operators::data::{Example, FeedbackItem};
use flowboost_operators::engine::feedback::{
    FormedPair, JoinCounts, JoinFact, JoinState, Pairing, WaitingEvent,
};
use flowboost_operators::engine::{Position, Prediction, SourceState, Terminal};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A version 5 body.
#[derive(Serialize, Deserialize)]
pub struct ModelBodyV5 {
    stages: Vec<StageBytes>,
    terminal: Terminal,
    score_dim: usize,
    position: Position,
    join: Option<JoinState>,
    source: Option<SourceState>,
    feedback_run: Option<FeedbackRun>,
    progress: Option<Progress>,
}

impl From<ModelBodyV5> for ModelBody {
    fn from(b: ModelBodyV5) -> Self {
        ModelBody {
            stages: b.stages,
            terminal: b.terminal,
            score_dim: b.score_dim,
            position: b.position,
            join: b.join,
            source: b.source,
            feedback_run: b.feedback_run,
            progress: b.progress,
            keyed: Vec::new(),
            key_progress: Vec::new(),
        }
    }
}

/// A version 2 to 4 body.
#[derive(Serialize, Deserialize)]
pub struct ModelBodyV4 {
    stages: Vec<StageBytes>,
    terminal: Terminal,
    score_dim: usize,
    position: Position,
    join: Option<JoinStateV4>,
    source: Option<SourceState>,
    feedback_run: Option<FeedbackRun>,
    progress: Option<Progress>,
}

#[derive(Serialize, Deserialize)]
struct JoinStateV4 {
    epoch: u64,
    facts: BTreeMap<u64, Vec<JoinFactV4>>,
    pairs: Vec<FormedPairV4>,
    counts: JoinCounts,
}

#[derive(Serialize, Deserialize)]
enum JoinFactV4 {
    Event(WaitingEventV4),
    Feedback(FeedbackItem),
    Joined { seq: u64, epoch: u64 },
    Gone { seq: u64, epoch: u64 },
}

/// A formed pair (postcard writes a nested struct's fields in line, so the pair's two
/// members follow `formed` directly).
#[derive(Serialize, Deserialize)]
struct FormedPairV4 {
    formed: u64,
    event: WaitingEventV4,
    feedback: FeedbackItem,
}

#[derive(Serialize, Deserialize)]
struct WaitingEventV4 {
    seq: u64,
    epoch: u64,
    example: Arc<Example>,
    prediction: Prediction,
}

impl From<WaitingEventV4> for WaitingEvent {
    fn from(e: WaitingEventV4) -> Self {
        WaitingEvent {
            seq: e.seq,
            epoch: e.epoch,
            example: e.example,
            prediction: e.prediction,
            model: 0,
        }
    }
}

impl From<JoinStateV4> for JoinState {
    fn from(j: JoinStateV4) -> Self {
        JoinState {
            epoch: j.epoch,
            facts: j
                .facts
                .into_iter()
                .map(|(id, facts)| {
                    let facts = facts
                        .into_iter()
                        .map(|f| match f {
                            JoinFactV4::Event(e) => JoinFact::Event(e.into()),
                            JoinFactV4::Feedback(f) => JoinFact::Feedback(f),
                            JoinFactV4::Joined { seq, epoch } => JoinFact::Joined { seq, epoch },
                            JoinFactV4::Gone { seq, epoch } => JoinFact::Gone { seq, epoch },
                        })
                        .collect();
                    (id, facts)
                })
                .collect(),
            pairs: j
                .pairs
                .into_iter()
                .map(|p| FormedPair {
                    formed: p.formed,
                    pair: Pairing {
                        event: p.event.into(),
                        feedback: p.feedback,
                    },
                })
                .collect(),
            counts: j.counts,
        }
    }
}

impl From<ModelBodyV4> for ModelBody {
    fn from(b: ModelBodyV4) -> Self {
        ModelBody {
            stages: b.stages,
            terminal: b.terminal,
            score_dim: b.score_dim,
            position: b.position,
            join: b.join.map(JoinState::from),
            source: b.source,
            feedback_run: b.feedback_run,
            progress: b.progress,
            keyed: Vec::new(),
            key_progress: Vec::new(),
        }
    }
}
