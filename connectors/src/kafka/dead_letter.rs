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
///
/// A dead letter must fit the producer's message size
/// ([`fit`](Self::fit)): when the whole record does not, `payload_text` is left out; when
/// the original bytes alone do not fit, `payload_base64` holds their first bytes only,
/// `payload_truncated` is true and `payload_sha256` is the digest of all of them.
/// `payload_size` is always the original size in bytes.
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
    /// The original bytes as text, when they are UTF-8 (and the record fits with them).
    pub payload_text: Option<String>,
    /// The original size in bytes.
    #[serde(default)]
    pub payload_size: u64,
    /// Whether `payload_base64` holds only the first bytes (the record would not fit).
    #[serde(default)]
    pub payload_truncated: bool,
    /// The SHA-256 of the original bytes (hex), when they are truncated.
    #[serde(default)]
    pub payload_sha256: Option<String>,
}

/// The most bytes of a reason a dead letter keeps.
pub const MAX_REASON_BYTES: usize = 4096;

impl DeadLetterRecord {
    /// The JSON form of `letter`, whole.
    pub fn from_letter(letter: &DeadLetter<'_>) -> Self {
        let mut reason = letter.reason;
        if reason.len() > MAX_REASON_BYTES {
            let mut end = MAX_REASON_BYTES;
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            reason = &reason[..end];
        }
        DeadLetterRecord {
            reason: reason.to_string(),
            topic: letter.topic.to_string(),
            partition: letter.partition,
            offset: letter.offset,
            key_base64: letter.key.map(|k| BASE64.encode(k)),
            payload_base64: BASE64.encode(letter.payload),
            payload_text: std::str::from_utf8(letter.payload).ok().map(str::to_string),
            payload_size: letter.payload.len() as u64,
            payload_truncated: false,
            payload_sha256: None,
        }
    }

    /// The JSON bytes of `letter` in at most `max_bytes` (as [`from_letter`](Self::from_letter)
    /// when that fits; else without the text; else with the original bytes truncated and
    /// their digest). Only a key or a topic name near `max_bytes` by itself can make the
    /// result longer.
    pub fn fit(letter: &DeadLetter<'_>, max_bytes: usize) -> Vec<u8> {
        let mut record = Self::from_letter(letter);
        let json = record.to_json();
        if json.len() <= max_bytes {
            return json;
        }
        record.payload_text = None;
        let json = record.to_json();
        if json.len() <= max_bytes {
            return json;
        }
        use sha2::Digest;
        record.payload_truncated = true;
        record.payload_sha256 = Some(
            sha2::Sha256::digest(letter.payload)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        );
        record.payload_base64.clear();
        let room = max_bytes.saturating_sub(record.to_json().len());
        // base64 writes 4 bytes per 3 (no escaping needed in JSON).
        let keep = (room / 4 * 3).min(letter.payload.len());
        record.payload_base64 = BASE64.encode(&letter.payload[..keep]);
        record.to_json()
    }

    /// The JSON bytes.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("serializing a dead letter cannot fail")
    }

    /// Parses a dead-letter record (reading the dead-letter topic).
    pub fn parse(bytes: &[u8]) -> Result<Self, DeadLetterError> {
        serde_json::from_slice(bytes).map_err(DeadLetterError::NotADeadLetter)
    }

    /// The original bytes.
    pub fn payload(&self) -> Result<Vec<u8>, DeadLetterError> {
        BASE64
            .decode(&self.payload_base64)
            .map_err(DeadLetterError::Payload)
    }

    /// The original key.
    pub fn key(&self) -> Result<Option<Vec<u8>>, DeadLetterError> {
        self.key_base64
            .as_ref()
            .map(|k| BASE64.decode(k).map_err(DeadLetterError::Key))
            .transpose()
    }
}

/// Why a dead-letter record read back from its topic cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DeadLetterError {
    /// The bytes are not the JSON of a [`DeadLetterRecord`].
    #[error("not a dead letter: {0}")]
    NotADeadLetter(#[source] serde_json::Error),
    /// `payload_base64` is not base64.
    #[error("bad payload_base64: {0}")]
    Payload(#[source] base64::DecodeError),
    /// `key_base64` is not base64.
    #[error("bad key_base64: {0}")]
    Key(#[source] base64::DecodeError),
}

/// How dead letters are written to their topic: the JSON of [`DeadLetterRecord`], made to
/// fit the producer's message size. [`send`](Self::send) writes one through any
/// [`KafkaSink`] (the job's own producer, so that dead letters and predictions share its
/// transactions).
#[derive(Clone, Debug)]
pub struct DeadLetterTopic {
    topic: String,
    max_bytes: usize,
}

/// librdkafka's default `message.max.bytes` (also Apache Kafka's default record limit).
pub const DEFAULT_MESSAGE_MAX_BYTES: usize = 1_000_000;

impl DeadLetterTopic {
    /// Dead letters to `topic`. Each is made to fit `message.max.bytes` (from `config`'s
    /// settings, else librdkafka's default of 1,000,000), less room for the key and the
    /// record's framing.
    pub fn new(config: &KafkaConfig, topic: &str) -> Self {
        let limit = config
            .settings
            .iter()
            .rev()
            .find(|(k, _)| k == "message.max.bytes")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(DEFAULT_MESSAGE_MAX_BYTES);
        DeadLetterTopic {
            topic: topic.to_string(),
            max_bytes: limit.saturating_sub(1024).max(1024),
        }
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Enqueues one dead letter on `sink`'s producer, keyed by the original key, made to
    /// fit the producer's message size (see [`DeadLetterRecord::fit`]).
    pub fn send(&self, sink: &mut KafkaSink, letter: &DeadLetter<'_>) -> Result<(), KafkaError> {
        let room = self
            .max_bytes
            .saturating_sub(letter.key.map_or(0, <[u8]>::len));
        let json = DeadLetterRecord::fit(letter, room.max(512));
        sink.send_to_topic(&self.topic, letter.key, &json)
    }
}

/// Writes dead letters to a topic with a producer of its own, counting them.
#[derive(Debug)]
pub struct DeadLetterWriter {
    sink: KafkaSink,
    format: DeadLetterTopic,
    written: u64,
}

impl DeadLetterWriter {
    /// A writer to `topic` (producer settings as for [`KafkaSink::new`]; sizes as for
    /// [`DeadLetterTopic::new`]).
    pub fn new(config: &KafkaConfig, topic: &str) -> Result<Self, KafkaError> {
        Ok(DeadLetterWriter {
            sink: KafkaSink::new(config, topic)?,
            format: DeadLetterTopic::new(config, topic),
            written: 0,
        })
    }

    /// Enqueues one dead letter (see [`DeadLetterTopic::send`]).
    pub fn write(&mut self, letter: &DeadLetter<'_>) -> Result<(), KafkaError> {
        self.format.send(&mut self.sink, letter)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn letter(payload: &[u8]) -> DeadLetter<'_> {
        DeadLetter {
            reason: "not_json: expected value at line 1 column 1",
            topic: "events",
            partition: 3,
            offset: 17,
            key: Some(b"42"),
            payload,
        }
    }

    #[test]
    fn a_dead_letter_that_fits_keeps_everything() {
        let payload = b"not json at all";
        let json = DeadLetterRecord::fit(&letter(payload), 10_000);
        let r = DeadLetterRecord::parse(&json).unwrap();
        assert_eq!(r, DeadLetterRecord::from_letter(&letter(payload)));
        assert_eq!(r.payload().unwrap(), payload);
        assert_eq!(r.payload_text.as_deref(), Some("not json at all"));
        assert_eq!(r.payload_size, 15);
        assert!(!r.payload_truncated);
    }

    #[test]
    fn a_large_one_drops_the_text_then_truncates_with_size_and_digest() {
        // 600 KB of text: with its text (and base64) about 1.4 MB; base64 alone 800 KB.
        let payload = vec![b'x'; 600_000];
        let json = DeadLetterRecord::fit(&letter(&payload), 1_000_000);
        assert!(json.len() <= 1_000_000);
        let r = DeadLetterRecord::parse(&json).unwrap();
        assert_eq!(r.payload_text, None);
        assert!(!r.payload_truncated);
        assert_eq!(r.payload().unwrap(), payload);
        // 900 KB: base64 alone is 1.2 MB, so the bytes are cut.
        let payload: Vec<u8> = (0..900_000u32).map(|i| (i % 251) as u8).collect();
        let json = DeadLetterRecord::fit(&letter(&payload), 1_000_000);
        assert!(json.len() <= 1_000_000, "{}", json.len());
        let r = DeadLetterRecord::parse(&json).unwrap();
        assert!(r.payload_truncated);
        assert_eq!(r.payload_size, 900_000);
        let kept = r.payload().unwrap();
        assert!(kept.len() > 700_000, "{}", kept.len());
        assert_eq!(kept[..], payload[..kept.len()]);
        use sha2::Digest;
        let digest: String = sha2::Sha256::digest(&payload)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(r.payload_sha256.as_deref(), Some(digest.as_str()));
        assert_eq!((r.topic.as_str(), r.partition, r.offset), ("events", 3, 17));
    }

    #[test]
    fn a_huge_reason_is_cut_at_a_character_boundary() {
        let reason = "é".repeat(MAX_REASON_BYTES);
        let l = DeadLetter {
            reason: &reason,
            ..letter(b"x")
        };
        let r = DeadLetterRecord::from_letter(&l);
        assert!(r.reason.len() <= MAX_REASON_BYTES);
        assert!(r.reason.chars().all(|c| c == 'é'));
    }
}
