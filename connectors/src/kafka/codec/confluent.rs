//! Avro events framed as a Confluent schema registry's serializers write them
//! (`--record-format confluent-avro`): the byte `0`, the writer's schema id (4 bytes,
//! big-endian), then the record in Avro's binary encoding, written with that schema.
//!
//! The writer's schema is fetched from the registry by its id once, resolved against
//! flowboost's reader schema ([`EVENT_SCHEMA`](super::avro::EVENT_SCHEMA)) into a plan
//! (see the module `avro_resolve`'s rules: fields by name in any order, unknown fields
//! skipped, missing fields from their defaults, numeric promotions, unions), and kept in
//! a bounded cache ([`WriterSchemas`]). A record whose schema the registry does not know,
//! cannot be asked for, or that does not resolve to the reader's, is a dead letter of kind
//! `schema` naming the reason; the registry is asked again about a failed id after
//! [`WriterSchemas::retry_after`], not for every record.

use super::avro::{Reader, encode_body};
use super::avro_resolve::Plan;
use super::{DecodeError, DecodeErrorKind, DecodedEvent, RecordDecoder};
use crate::kafka::registry::{RegistryClient, RegistryError};
use flowboost_operators::data::{Example, Schema};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The first byte of a record in the Confluent wire format.
pub const MAGIC: u8 = 0;

/// The framing's length: the magic byte and the schema id.
pub const FRAME: usize = 5;

/// The Confluent framing of a record written with schema `id`: the magic byte and the id.
pub fn frame(id: u32) -> [u8; FRAME] {
    let b = id.to_be_bytes();
    [MAGIC, b[0], b[1], b[2], b[3]]
}

/// Encodes `ex` as a Confluent-framed Avro event written with flowboost's own schema
/// ([`EVENT_SCHEMA`](super::avro::EVENT_SCHEMA)) registered as `schema_id`; its label only
/// if `with_label`, with `key` if given.
///
/// # Panics
///
/// As [`avro::encode_event`](super::avro::encode_event).
pub fn encode_event(
    schema: &Schema,
    ex: &Example,
    with_label: bool,
    key: Option<&str>,
    schema_id: u32,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME + 16 + 8 * schema.dim());
    out.extend_from_slice(&frame(schema_id));
    encode_body(&mut out, schema, ex, with_label, key);
    out
}

/// Where writer schemas come from: a registry, or (tests, tools) a fixed set.
pub trait SchemaSource: Send + Sync {
    /// The text of the schema with this id.
    fn schema_text(&self, id: u32) -> Result<String, RegistryError>;
}

impl SchemaSource for RegistryClient {
    fn schema_text(&self, id: u32) -> Result<String, RegistryError> {
        self.schema_by_id(id)
    }
}

/// A fixed set of schemas by id (tests, fuzzing); any other id is unknown.
impl SchemaSource for HashMap<u32, String> {
    fn schema_text(&self, id: u32) -> Result<String, RegistryError> {
        self.get(&id).cloned().ok_or(RegistryError::UnknownId {
            url: "(fixed schemas)".into(),
            id,
        })
    }
}

/// What is known of one schema id.
#[derive(Clone)]
enum Known {
    /// Resolved.
    Plan(Arc<Plan>),
    /// Fetched, and it does not resolve to the reader's (ids are immutable: for good).
    Incompatible(Arc<str>),
    /// Not fetched (unknown, registry error): until then, records of it are dead letters
    /// without asking again.
    Failed { reason: Arc<str>, until: Instant },
}

struct Cache {
    entries: HashMap<u32, (Known, u64)>,
    tick: u64,
}

/// The writer schemas of a job: fetched by id from a [`SchemaSource`] the first time a
/// record names them, resolved against the reader's schema once, and kept (at most
/// `capacity` ids, the least recently used dropped first). Shared by the job's workers.
pub struct WriterSchemas {
    source: Box<dyn SchemaSource>,
    capacity: usize,
    retry_after: Duration,
    cache: Mutex<Cache>,
}

impl fmt::Debug for WriterSchemas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriterSchemas")
            .field("capacity", &self.capacity)
            .field("retry_after", &self.retry_after)
            .finish_non_exhaustive()
    }
}

fn schema_kind(reason: impl Into<String>) -> DecodeError {
    DecodeError::new(DecodeErrorKind::Schema, reason)
}

impl WriterSchemas {
    /// Schemas from `source`, at most 1,000 ids kept, a failed id asked again after 10 s.
    pub fn new(source: impl SchemaSource + 'static) -> Self {
        WriterSchemas {
            source: Box::new(source),
            capacity: 1000,
            retry_after: Duration::from_secs(10),
            cache: Mutex::new(Cache {
                entries: HashMap::new(),
                tick: 0,
            }),
        }
    }

    /// Keeps at most `capacity` ids (at least 1).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// Asks the source again about an id that failed after this long.
    pub fn with_retry_after(mut self, retry_after: Duration) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// How long a failed id is not asked for again.
    pub fn retry_after(&self) -> Duration {
        self.retry_after
    }

    /// The number of ids cached.
    pub fn cached(&self) -> usize {
        self.lock().entries.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The plan of schema `id`: cached, or fetched and resolved now.
    fn plan(&self, id: u32) -> Result<Arc<Plan>, DecodeError> {
        let now = Instant::now();
        {
            let mut cache = self.lock();
            cache.tick += 1;
            let tick = cache.tick;
            if let Some((known, used)) = cache.entries.get_mut(&id) {
                *used = tick;
                match known {
                    Known::Plan(p) => return Ok(p.clone()),
                    Known::Incompatible(reason) => return Err(schema_kind(reason.to_string())),
                    Known::Failed { reason, until } if now < *until => {
                        return Err(schema_kind(reason.to_string()));
                    }
                    Known::Failed { .. } => {}
                }
            }
        }
        // Asked without the lock: other workers keep decoding meanwhile.
        let known = match self.source.schema_text(id) {
            Ok(text) => match Plan::compile(&text) {
                Ok(plan) => Known::Plan(Arc::new(plan)),
                Err(e) => Known::Incompatible(
                    format!(
                        "the writer's schema (id {id}) does not resolve to flowboost.Event: {e}"
                    )
                    .into(),
                ),
            },
            Err(e) => Known::Failed {
                reason: format!(
                    "{e} (asked again after {} s)",
                    self.retry_after.as_secs_f64()
                )
                .into(),
                until: now + self.retry_after,
            },
        };
        let mut cache = self.lock();
        if cache.entries.len() >= self.capacity && !cache.entries.contains_key(&id) {
            let oldest = cache
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(&k, _)| k);
            if let Some(k) = oldest {
                cache.entries.remove(&k);
            }
        }
        let tick = cache.tick;
        cache.entries.insert(id, (known.clone(), tick));
        match known {
            Known::Plan(p) => Ok(p),
            Known::Incompatible(reason) | Known::Failed { reason, .. } => {
                Err(schema_kind(reason.to_string()))
            }
        }
    }
}

/// Decodes one Confluent-framed Avro event.
pub(super) fn decode_event(
    dec: &RecordDecoder,
    payload: &[u8],
) -> Result<DecodedEvent, DecodeError> {
    if payload.len() < FRAME || payload[0] != MAGIC {
        let what = match payload.first() {
            None => "an empty record".to_string(),
            Some(&b) if b != MAGIC => format!("its first byte is {b:#04x}"),
            Some(_) => format!("{} bytes", payload.len()),
        };
        return Err(DecodeError::new(
            DecodeErrorKind::Unparseable,
            format!(
                "not in the Confluent wire format (the byte 0, a 4-byte schema id, the Avro \
                 record): {what}"
            ),
        ));
    }
    let id = u32::from_be_bytes([payload[1], payload[2], payload[3], payload[4]]);
    let Some(schemas) = dec.writer_schemas.as_ref() else {
        return Err(schema_kind(format!(
            "schema id {id}: no schema registry to ask (--schema-registry)"
        )));
    };
    let plan = schemas.plan(id)?;
    let mut r = Reader {
        bytes: payload,
        at: FRAME,
    };
    plan.decode(dec, &mut r)
}

#[cfg(test)]
mod tests {
    use super::super::avro::{EVENT_SCHEMA, write_long, write_string};
    use super::*;
    use crate::kafka::RecordFormat;
    use flowboost_operators::data::{Features, Label, Task};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn schema(task: Task) -> Schema {
        let mut s = Schema::numeric(3, 3, task);
        s.labels = vec!["a".into(), "b".into(), "c".into()];
        s
    }

    fn decoder(task: Task, schemas: &[(u32, &str)]) -> RecordDecoder {
        let map: HashMap<u32, String> = schemas.iter().map(|&(i, s)| (i, s.into())).collect();
        RecordDecoder::new(&schema(task), RecordFormat::ConfluentAvro)
            .with_writer_schemas(Arc::new(WriterSchemas::new(map)))
    }

    fn framed(id: u32, body: &[u8]) -> Vec<u8> {
        let mut v = frame(id).to_vec();
        v.extend_from_slice(body);
        v
    }

    /// A writer's schema that differs from the reader's: fields reordered, `labels`
    /// removed (the reader's default: null), fields the reader does not know (of every
    /// Avro type, a recursive one among them), numbers to promote, a union where the
    /// reader has none.
    const WRITER_A: &str = r#"{"type": "record", "name": "Event", "namespace": "com.acme",
      "fields": [
        {"name": "key", "type": ["null", "string"]},
        {"name": "source", "type": {"type": "record", "name": "Source", "fields": [
            {"name": "host", "type": "string"},
            {"name": "tags", "type": {"type": "map", "values": {"type": "array", "items": "long"}}},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
            {"name": "ok", "type": "boolean"},
            {"name": "f", "type": "float"},
            {"name": "d", "type": "double"},
            {"name": "i", "type": "int"},
            {"name": "raw", "type": "bytes"},
            {"name": "nothing", "type": "null"},
            {"name": "u", "type": ["null", "int", "string"]}
        ]}},
        {"name": "chain", "type": {"type": "record", "name": "Link", "fields": [
            {"name": "v", "type": "int"},
            {"name": "next", "type": ["null", "Link"]}
        ]}},
        {"name": "features", "type": {"type": "array", "items": "float"}},
        {"name": "id", "type": ["null", "int"]},
        {"name": "label", "type": "bytes"}
      ]}"#;

    fn writer_a_record(id: i32, features: [f32; 3], label: &str) -> apache_avro::types::Value {
        use apache_avro::types::Value;
        let link = |v: i32, next: Value| {
            Value::Record(vec![("v".into(), Value::Int(v)), ("next".into(), next)])
        };
        let chain = link(
            1,
            Value::Union(1, Box::new(link(2, Value::Union(0, Box::new(Value::Null))))),
        );
        let source = Value::Record(vec![
            ("host".into(), Value::String("h1".into())),
            (
                "tags".into(),
                Value::Map(
                    [(
                        "t".to_string(),
                        Value::Array(vec![Value::Long(-5), Value::Long(1 << 40)]),
                    )]
                    .into_iter()
                    .collect(),
                ),
            ),
            ("kind".into(), Value::Enum(1, "B".into())),
            ("digest".into(), Value::Fixed(4, vec![1, 2, 3, 4])),
            ("ok".into(), Value::Boolean(true)),
            ("f".into(), Value::Float(1.5)),
            ("d".into(), Value::Double(-2.5)),
            ("i".into(), Value::Int(-7)),
            ("raw".into(), Value::Bytes(vec![0, 255])),
            ("nothing".into(), Value::Null),
            (
                "u".into(),
                Value::Union(2, Box::new(Value::String("s".into()))),
            ),
        ]);
        Value::Record(vec![
            (
                "key".into(),
                Value::Union(1, Box::new(Value::String("m".into()))),
            ),
            ("source".into(), source),
            ("chain".into(), chain),
            (
                "features".into(),
                Value::Array(features.iter().map(|&x| Value::Float(x)).collect()),
            ),
            ("id".into(), Value::Union(1, Box::new(Value::Int(id)))),
            ("label".into(), Value::Bytes(label.as_bytes().to_vec())),
        ])
    }

    #[test]
    fn a_differing_writer_schema_written_by_the_apache_implementation() {
        let writer = apache_avro::Schema::parse_str(WRITER_A).unwrap();
        let dec = decoder(Task::Multiclass, &[(42, WRITER_A)]);
        for (id, features, label, class) in [
            (3, [0.5f32, -2.25, 3.0], "b", 1),
            (0, [1e-3f32, 0.0, -1e30], "c", 2),
        ] {
            let body =
                apache_avro::to_avro_datum(&writer, writer_a_record(id, features, label)).unwrap();
            let event = dec.decode_event(None, &framed(42, &body)).unwrap();
            assert_eq!(
                event.example,
                Example {
                    id: id as u64,
                    features: Features::Dense(features.iter().map(|&x| f64::from(x)).collect()),
                    label: Some(Label::Class(class)),
                }
            );
            assert_eq!(event.key.as_deref(), Some("m"));
        }
        // A record that selects the writer's union branch the reader cannot take.
        let mut record = writer_a_record(1, [0.0; 3], "a");
        if let apache_avro::types::Value::Record(fields) = &mut record {
            fields[4].1 =
                apache_avro::types::Value::Union(0, Box::new(apache_avro::types::Value::Null));
        }
        let body = apache_avro::to_avro_datum(&writer, record).unwrap();
        let e = dec.decode_event(None, &framed(42, &body)).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Malformed, "{e}");
        assert!(
            e.reason.contains("\"id\"") && e.reason.contains("null"),
            "{e}"
        );
    }

    #[test]
    fn the_readers_own_schema_reads_as_the_single_object_decoder_does() {
        let dec = decoder(Task::Multilabel, &[(1, EVENT_SCHEMA)]);
        let single = RecordDecoder::new(&schema(Task::Multilabel), RecordFormat::Avro);
        let ex = Example {
            id: 1 << 40,
            features: Features::Dense(vec![0.25, -0.0, 9.0]),
            label: Some(Label::Set(vec![0, 2])),
        };
        let s = schema(Task::Multilabel);
        for (with_label, key) in [(true, Some("k")), (false, None)] {
            let bytes = encode_event(&s, &ex, with_label, key, 1);
            assert_eq!(bytes[..FRAME], [0, 0, 0, 0, 1]);
            let ours = dec.decode_event(None, &bytes).unwrap();
            let theirs = single
                .decode_event(
                    None,
                    &super::super::avro::encode_event(&s, &ex, with_label, key),
                )
                .unwrap();
            assert_eq!(ours, theirs);
        }
        // And the Apache implementation reads what we write with its schema.
        let reader = apache_avro::Schema::parse_str(EVENT_SCHEMA).unwrap();
        let bytes = encode_event(&s, &ex, true, Some("k"), 1);
        let value = apache_avro::from_avro_datum(&reader, &mut &bytes[FRAME..], None).unwrap();
        assert!(matches!(value, apache_avro::types::Value::Record(_)));
    }

    #[test]
    fn hand_encoded_bytes_with_promotions_and_blocks() {
        // Writer: labels first (array of bytes, in two blocks), features as longs then
        // ints in a union, id a long, an extra string; no label and no key (defaults).
        let writer = r#"{"type": "record", "name": "x.Event", "fields": [
            {"name": "labels", "type": ["null", {"type": "array", "items": "bytes"}]},
            {"name": "features", "type": {"type": "array", "items": ["long", "int"]}},
            {"name": "note", "type": "string"},
            {"name": "id", "type": "long"}]}"#;
        let mut b = Vec::new();
        write_long(&mut b, 1); // labels: branch 1 (the array)
        write_long(&mut b, -1); // a block of 1 with its size
        write_long(&mut b, 2);
        write_string(&mut b, "c");
        write_long(&mut b, 1);
        write_string(&mut b, "a");
        write_long(&mut b, 0);
        write_long(&mut b, 3); // features: 3 values
        write_long(&mut b, 0); // long 7
        write_long(&mut b, 7);
        write_long(&mut b, 1); // int -1
        write_long(&mut b, -1);
        write_long(&mut b, 0); // long 2^53
        write_long(&mut b, 1 << 53);
        write_long(&mut b, 0);
        write_string(&mut b, "ignored");
        write_long(&mut b, 12);
        let dec = decoder(Task::Multilabel, &[(9, writer)]);
        let event = dec.decode_event(None, &framed(9, &b)).unwrap();
        assert_eq!(
            event.example,
            Example {
                id: 12,
                features: Features::Dense(vec![7.0, -1.0, (1u64 << 53) as f64]),
                label: Some(Label::Set(vec![0, 2])),
            }
        );
        assert_eq!(event.key, None);
        // Truncated anywhere: a worded error, never a panic.
        for cut in 0..b.len() {
            let e = dec.decode_event(None, &framed(9, &b[..cut])).unwrap_err();
            assert!(
                matches!(
                    e.kind,
                    DecodeErrorKind::Unparseable | DecodeErrorKind::WrongDimension
                ),
                "{cut}: {e}"
            );
        }
    }

    /// A source that counts its fetches and fails the first `fail` of them.
    struct Counting {
        schemas: HashMap<u32, String>,
        asked: Arc<AtomicUsize>,
        fail: usize,
    }

    impl SchemaSource for Counting {
        fn schema_text(&self, id: u32) -> Result<String, RegistryError> {
            let n = self.asked.fetch_add(1, Ordering::SeqCst);
            if n < self.fail {
                return Err(RegistryError::Transport {
                    url: "http://r".into(),
                    what: format!("fetching schema id {id}"),
                    reason: "connection refused".into(),
                });
            }
            self.schemas.schema_text(id)
        }
    }

    #[test]
    fn bad_records_and_bad_schemas_are_dead_letters_with_reasons() {
        let incompatible = [
            (
                r#"{"type": "record", "name": "Event", "fields": [
                    {"name": "id", "type": "string"},
                    {"name": "features", "type": {"type": "array", "items": "double"}}]}"#,
                "field `id`: the writer's string is not the reader's long",
            ),
            (
                r#"{"type": "record", "name": "Event", "fields": [
                    {"name": "features", "type": {"type": "array", "items": "double"}}]}"#,
                "no field `id`",
            ),
            (
                r#"{"type": "record", "name": "Click", "fields": []}"#,
                "the writer's record is `Click`",
            ),
            (r#""long""#, "not a record"),
            (
                r#"{"type": "record", "name": "Event", "fields": [
                    {"name": "id", "type": "long"},
                    {"name": "features", "type": {"type": "array", "items": "string"}}]}"#,
                "its items: the writer's string is not the reader's double",
            ),
            (
                r#"{"type": "record", "name": "Event", "fields": [
                    {"name": "id", "type": ["null", "boolean"]},
                    {"name": "features", "type": {"type": "array", "items": "double"}}]}"#,
                "no branch of the writer's union",
            ),
            ("{not json", "not JSON"),
        ];
        let asked = Arc::new(AtomicUsize::new(0));
        let schemas: HashMap<u32, String> = incompatible
            .iter()
            .enumerate()
            .map(|(i, (s, _))| (i as u32, s.to_string()))
            .collect();
        let source = Counting {
            schemas,
            asked: asked.clone(),
            fail: 0,
        };
        let dec = RecordDecoder::new(&schema(Task::Binary), RecordFormat::ConfluentAvro)
            .with_writer_schemas(Arc::new(WriterSchemas::new(source)));
        for (i, (_, words)) in incompatible.iter().enumerate() {
            // Every record of the schema: the same reason, the registry asked once.
            for _ in 0..3 {
                let e = dec
                    .decode_event(None, &framed(i as u32, &[0, 0]))
                    .unwrap_err();
                assert_eq!(e.kind, DecodeErrorKind::Schema, "{e}");
                assert!(e.reason.contains(words), "{e} lacks {words}");
                assert!(e.reason.contains(&format!("id {i}")), "{e}");
            }
        }
        assert_eq!(asked.load(Ordering::SeqCst), incompatible.len());
        // An unknown id; the framing wrong; no registry at all.
        let e = dec.decode_event(None, &framed(77, &[])).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Schema);
        assert!(e.reason.contains("no schema with id 77"), "{e}");
        for (bytes, words) in [
            (&b""[..], "an empty record"),
            (&[1, 0, 0, 0, 1, 0][..], "first byte is 0x01"),
            (&[0xC3, 0x01, 0, 0, 0, 0][..], "first byte is 0xc3"),
            (&[0, 0, 0][..], "3 bytes"),
        ] {
            let e = dec.decode_event(None, bytes).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::Unparseable);
            assert!(e.reason.contains(words), "{e} lacks {words}");
        }
        let none = RecordDecoder::new(&schema(Task::Binary), RecordFormat::ConfluentAvro);
        let e = none.decode_event(None, &framed(1, &[])).unwrap_err();
        assert!(e.reason.contains("--schema-registry"), "{e}");
    }

    #[test]
    fn a_failed_fetch_is_retried_later_and_the_cache_is_bounded() {
        let asked = Arc::new(AtomicUsize::new(0));
        let source = Counting {
            schemas: (0..5).map(|i| (i, EVENT_SCHEMA.to_string())).collect(),
            asked: asked.clone(),
            fail: 1,
        };
        let schemas = Arc::new(
            WriterSchemas::new(source)
                .with_retry_after(Duration::from_millis(200))
                .with_capacity(2),
        );
        let dec = RecordDecoder::new(&schema(Task::Binary), RecordFormat::ConfluentAvro)
            .with_writer_schemas(schemas.clone());
        let ex = Example {
            id: 1,
            features: Features::Dense(vec![1.0, 2.0, 3.0]),
            label: Some(Label::Class(0)),
        };
        let record = |id| encode_event(&schema(Task::Binary), &ex, true, None, id);
        let e = dec.decode_event(None, &record(0)).unwrap_err();
        assert!(e.reason.contains("connection refused"), "{e}");
        assert!(e.reason.contains("asked again after 0.2 s"), "{e}");
        // Within the window: not asked again.
        assert!(dec.decode_event(None, &record(0)).is_err());
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(dec.decode_event(None, &record(0)).unwrap().example, ex);
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        for id in 1..5 {
            dec.decode_event(None, &record(id)).unwrap();
            assert!(schemas.cached() <= 2);
        }
        // 4 was used last: still there; 0 was dropped and is fetched again.
        dec.decode_event(None, &record(4)).unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 6);
        dec.decode_event(None, &record(0)).unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 7);
    }

    #[test]
    fn hostile_records_of_hostile_schemas_are_bounded() {
        let writer = r#"{"type": "record", "name": "Event", "fields": [
            {"name": "nulls", "type": {"type": "array", "items": "null"}},
            {"name": "strings", "type": {"type": "array", "items": "string"}},
            {"name": "loop", "type": {"type": "record", "name": "L", "fields": [{"name": "l", "type": "L"}]}},
            {"name": "id", "type": "long"},
            {"name": "features", "type": {"type": "array", "items": "double"}}]}"#;
        let dec = decoder(Task::Binary, &[(1, writer)]);
        // An array of i64::MAX nulls: nothing to read, skipped at once.
        let mut b = Vec::new();
        write_long(&mut b, i64::MAX);
        write_long(&mut b, 0);
        // An array claiming i64::MAX strings: refused before reading any.
        write_long(&mut b, i64::MAX);
        let e = dec.decode_event(None, &framed(1, &b)).unwrap_err();
        assert!(e.reason.contains("bytes are left"), "{e}");
        // A block with a negative byte size.
        let mut c = Vec::new();
        write_long(&mut c, 0);
        write_long(&mut c, -1);
        write_long(&mut c, -5);
        let e = dec.decode_event(None, &framed(1, &c)).unwrap_err();
        assert!(e.reason.contains("a block of -5 bytes"), "{e}");
        // A record that contains itself: its skip stops at the depth bound.
        let mut d = Vec::new();
        write_long(&mut d, 0);
        write_long(&mut d, 0);
        let e = dec.decode_event(None, &framed(1, &d)).unwrap_err();
        assert!(e.reason.contains("nested more than"), "{e}");
    }
}
