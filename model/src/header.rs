use flowboost_operators::boosters::BoosterConfig;
use flowboost_operators::data::Schema;
use flowboost_operators::engine::Position;
use serde::{Deserialize, Serialize};

/// The first bytes of every model file.
pub const MAGIC: &[u8; 16] = b"FLOWBOOST MODEL\n";

/// The format version this build writes (and the newest it reads). Version 2: the
/// Hoeffding trees keep sparse-aware, class-sparse leaf statistics. Version 3: a tree may
/// hold leaves deactivated by its memory budget (`--max-model-bytes`), a node variant
/// version 2 readers do not know; version 2 files load unchanged. Version 4: a tree leaf
/// that keeps statistics for some of its columns only (a wide sparse stream) is written at
/// that size, another node variant; version 2 and 3 files load unchanged. Version 5: each
/// event waiting in the feedback join names its model (one model per key); the waiting
/// events of version 2 to 4 files belong to their one model. Version 6: a file may hold
/// one model per key (the header's `keys`; the body's `keyed` and `key_progress`); version
/// 2 to 5 files load as models without keys.
pub const FORMAT_VERSION: u32 = 6;

/// The oldest format version this build reads (version 1's trees are not readable).
pub const OLDEST_FORMAT_VERSION: u32 = 2;

/// How a model file's body is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// As is.
    None,
    /// DEFLATE (zlib framing).
    Deflate,
}

/// What a model file says about its model, readable without loading it: a JSON object
/// right after the magic bytes and the format version (`head -c 4096 model.fbm` shows it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelHeader {
    /// The format version of the file.
    pub format: u32,
    /// The flowboost version that wrote it.
    pub flowboost: String,
    /// The algorithm's command-line name.
    pub algorithm: String,
    /// Every option that shapes the model.
    pub config: BoosterConfig,
    /// The stream's schema: task, features (names and kinds) and labels.
    pub schema: Schema,
    /// Where the model's stream stood: events taken, records learned from, the next
    /// sequence number.
    pub position: Position,
    /// The number of stages (weak learners).
    pub stages: usize,
    /// Events waiting for feedback, saved with the model.
    pub pending: usize,
    /// How the body is stored.
    pub compression: Compression,
    /// A Kafka job's checkpoint: the next offset to read of every source partition, where
    /// a restored job goes on (empty for other models).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<SourceOffset>,
    /// A job with one model per key (`run --keys`): the keys, in model order (empty for a
    /// model without keys). `stages` and `position` are the first key's model's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// A Kafka job's snapshot at its stream's end (its `--save-model` file and last
    /// checkpoint): a job resumed from it that reads nothing new saves it again,
    /// unchanged. Absent (false) otherwise, and in files written before 2026-11-27.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_end: bool,
}

/// Where a Kafka job's checkpoint stands in one source partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceOffset {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The next offset to read: every record before it is in the checkpoint's state.
    pub offset: i64,
    /// With `--merge-order timestamps`: the merge's order key of the record before
    /// `offset` (its timestamp, clamped to be non-decreasing in the partition;
    /// `i64::MIN` when none was read), where the clamp goes on after a restore. Absent
    /// with `--merge-order offsets` (files of earlier versions have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_key: Option<i64>,
}
