use super::{Features, Label};
use serde::{Deserialize, Serialize};

/// One event of a stream: an id, its features and, when known, its label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The event id: the position in the file for file readers, the key for streams.
    pub id: u64,
    /// The input features.
    pub features: Features,
    /// The label, `None` for an unlabeled event.
    pub label: Option<Label>,
}
