//! Dead letters: rejected records, with the reason and their original bytes.

use super::{KafkaConfig, KafkaError, KafkaSink, SinkStats};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A rejected record and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadLetter<'a> {
    /// Why it was rejected (a [`DecodeError`](super::DecodeError)'s text, say).
    pub reason: &'a str,
    /// The topic it was read from.
    pub topic: &'a str,
    /// Its partition there.
    pub partition: i32,
    /// Its offset there.
    pub offset: i64,
    /// Its key, if any.
    pub key: Option<&'a [u8]>,
    /// Its original bytes.
    pub payload: &'a [u8],
}

/// The JSON form of a dead letter, as written to the dead-letter topic:
///
/// ```json
/// {"reason":"unknown_label: unknown label `x` ...","topic":"events","partition":2,
///  "offset":17,"key_base64":"NDI=","payload_base64":"eyJpZCI6...","payload_text":"{\"id\":..."}
/// ```
///
/// `payload_base64` (standard alphabet, with padding) holds the original bytes exactly,
/// whatever they are; `payload_text` repeats them as a string when they are valid UTF-8
/// (for people reading the topic), else `null`. `key_base64` is `null` for a record
/// without a key. The dead-letter record's own key is the original key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetterRecord {
    /// Why the record was rejected.
    pub reason: String,
    /// The source topic.
    pub topic: String,
    /// The source partition.
    pub partition: i32,
    /// The source offset.
    pub offset: i64,
    /// The original key, base64.
    pub key_base64: Option<String>,
    /// The original bytes, base64.
    pub payload_base64: String,
    /// The original bytes as text, when they are UTF-8.
    pub payload_text: Option<String>,
}

impl DeadLetterRecord {
    /// The JSON form of `letter`.
    pub fn from_letter(letter: &DeadLetter<'_>) -> Self {
        DeadLetterRecord {
            reason: letter.reason.to_string(),
            topic: letter.topic.to_string(),
            partition: letter.partition,
            offset: letter.offset,
            key_base64: letter.key.map(|k| BASE64.encode(k)),
            payload_base64: BASE64.encode(letter.payload),
            payload_text: std::str::from_utf8(letter.payload).ok().map(str::to_string),
        }
    }

    /// The JSON bytes.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("serializing a dead letter cannot fail")
    }

    /// Parses a dead-letter record (reading the dead-letter topic).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("not a dead letter: {e}"))
    }

    /// The original bytes.
    pub fn payload(&self) -> Result<Vec<u8>, String> {
        BASE64
            .decode(&self.payload_base64)
            .map_err(|e| format!("bad payload_base64: {e}"))
    }

    /// The original key.
    pub fn key(&self) -> Result<Option<Vec<u8>>, String> {
        self.key_base64
            .as_ref()
            .map(|k| BASE64.decode(k).map_err(|e| format!("bad key_base64: {e}")))
            .transpose()
    }
}

/// Writes dead letters to a topic, counting them.
#[derive(Debug)]
pub struct DeadLetterWriter {
    sink: KafkaSink,
    written: u64,
}

impl DeadLetterWriter {
    /// A writer to `topic` (producer settings as for [`KafkaSink::new`]).
    pub fn new(config: &KafkaConfig, topic: &str) -> Result<Self, KafkaError> {
        Ok(DeadLetterWriter {
            sink: KafkaSink::new(config, topic)?,
            written: 0,
        })
    }

    /// Enqueues one dead letter, keyed by the original key.
    pub fn write(&mut self, letter: &DeadLetter<'_>) -> Result<(), KafkaError> {
        let json = DeadLetterRecord::from_letter(letter).to_json();
        self.sink.send(letter.key, &json)?;
        self.written += 1;
        Ok(())
    }

    /// How many dead letters were written (enqueued).
    pub fn count(&self) -> u64 {
        self.written
    }

    /// Waits until every dead letter written so far is acknowledged
    /// (see [`KafkaSink::flush`]).
    pub fn flush(&mut self, timeout: Duration) -> Result<SinkStats, KafkaError> {
        self.sink.flush(timeout)
    }

    /// The underlying sink's counters.
    pub fn stats(&self) -> SinkStats {
        self.sink.stats()
    }
}
