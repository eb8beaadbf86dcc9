//! Avro events (`--record-format avro`): the record `flowboost.Event` of
//! [`EVENT_SCHEMA`] (the file `connectors/schemas/event.avsc`) in Avro's single-object
//! encoding, as the Avro specification defines it: the two bytes `C3 01`, the schema's
//! 64-bit Rabin fingerprint (CRC-64-AVRO of its Parsing Canonical Form, 8 bytes,
//! little-endian), then the record in Avro's binary encoding.
//!
//! ```text
//! record flowboost.Event {
//!   long id;                      // at least 0
//!   array<double> features;       // one value per declared feature
//!   union { null, string } label;           // binary / multiclass: a label name
//!   union { null, array<string> } labels;   // multi-label: the relevant label names
//!   union { null, string } key;             // the model, with one model per key
//! }
//! ```
//!
//! The fingerprint names the schema, so a record written with any other schema is a dead
//! letter (`unparseable`), never a misread event; no schema registry is involved. Labels
//! follow the JSON rules: `label` and `labels` both null is an unlabeled event, both set is
//! malformed, and a multi-label task makes a sorted set without repeats. A feature value is
//! 8 bytes, read as it was written: no text to parse, which is why this format costs a
//! small part of what JSON does per event.
//!
//! Every count and length in a record is checked against the bytes that are left before
//! anything is taken, so a hostile count cannot make the decoder allocate more than the
//! record holds.

use super::{DecodeError, DecodeErrorKind, DecodedEvent, RecordDecoder};
use flowboost_operators::data::{Example, Features, Label, Schema};

/// The Avro schema of an event (`connectors/schemas/event.avsc`).
pub const EVENT_SCHEMA: &str = include_str!("../../../schemas/event.avsc");

/// The Parsing Canonical Form of [`EVENT_SCHEMA`] (what its fingerprint is taken of).
pub const EVENT_SCHEMA_CANONICAL: &str = concat!(
    r#"{"name":"flowboost.Event","type":"record","fields":["#,
    r#"{"name":"id","type":"long"},"#,
    r#"{"name":"features","type":{"type":"array","items":"double"}},"#,
    r#"{"name":"label","type":["null","string"]},"#,
    r#"{"name":"labels","type":["null",{"type":"array","items":"string"}]},"#,
    r#"{"name":"key","type":["null","string"]}]}"#
);

/// The CRC-64-AVRO (Rabin) fingerprint of [`EVENT_SCHEMA`].
pub const EVENT_FINGERPRINT: u64 = fingerprint(EVENT_SCHEMA_CANONICAL.as_bytes());

/// The two bytes that open a single-object encoded record.
const MARKER: [u8; 2] = [0xC3, 0x01];

/// The header's length: the marker and the fingerprint.
const HEADER: usize = 10;

/// The 64-bit Rabin fingerprint of `bytes` (CRC-64-AVRO, the Avro specification's
/// algorithm).
pub const fn fingerprint(bytes: &[u8]) -> u64 {
    const EMPTY: u64 = 0xc15d_213a_a4d7_a795;
    const TABLE: [u64; 256] = {
        let mut table = [0u64; 256];
        let mut i = 0;
        while i < 256 {
            let mut fp = i as u64;
            let mut j = 0;
            while j < 8 {
                fp = (fp >> 1) ^ (EMPTY & 0u64.wrapping_sub(fp & 1));
                j += 1;
            }
            table[i] = fp;
            i += 1;
        }
        table
    };
    let mut fp = EMPTY;
    let mut i = 0;
    while i < bytes.len() {
        fp = (fp >> 8) ^ TABLE[((fp ^ bytes[i] as u64) & 0xff) as usize];
        i += 1;
    }
    fp
}

/// Encodes `ex` as an Avro event (single-object encoding), its label only if
/// `with_label`, with `key` if given. Sparse features are written densely (zeros where
/// nothing is stored).
///
/// # Panics
///
/// If the example's label names a label index the schema does not have (the caller's own
/// examples: a schema's generator or reader never makes one).
///
/// ```
/// use flowboost_connectors::kafka::avro::{encode_event, EVENT_FINGERPRINT};
/// use flowboost_connectors::kafka::{RecordDecoder, RecordFormat};
/// use flowboost_operators::data::{Example, Features, Label, Schema, Task};
///
/// let schema = Schema::numeric(2, 2, Task::Binary);
/// let ex = Example {
///     id: 7,
///     features: Features::Dense(vec![0.5, -1.0]),
///     label: Some(Label::Class(1)),
/// };
/// let bytes = encode_event(&schema, &ex, true, None);
/// assert_eq!(bytes[..2], [0xC3, 0x01]);
/// assert_eq!(bytes[2..10], EVENT_FINGERPRINT.to_le_bytes());
/// let decoder = RecordDecoder::new(&schema, RecordFormat::Avro);
/// assert_eq!(decoder.decode(None, &bytes).unwrap(), ex);
/// ```
pub fn encode_event(schema: &Schema, ex: &Example, with_label: bool, key: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + 16 + 8 * schema.dim());
    out.extend_from_slice(&MARKER);
    out.extend_from_slice(&EVENT_FINGERPRINT.to_le_bytes());
    encode_body(&mut out, schema, ex, with_label, key);
    out
}

/// Appends the Avro binary encoding of the record `flowboost.Event` of `ex` to `out`
/// (what follows the header in the single-object encoding and in the Confluent wire
/// format).
///
/// # Panics
///
/// As [`encode_event`].
pub(super) fn encode_body(
    out: &mut Vec<u8>,
    schema: &Schema,
    ex: &Example,
    with_label: bool,
    key: Option<&str>,
) {
    let dim = schema.dim();
    write_long(out, ex.id as i64);
    if dim > 0 {
        write_long(out, dim as i64);
        for j in 0..dim {
            out.extend_from_slice(&ex.features.get(j).to_le_bytes());
        }
    }
    write_long(out, 0);
    let name = |l: u32| schema.labels[l as usize].as_str();
    match ex.label.as_ref().filter(|_| with_label) {
        None => {
            write_long(out, 0);
            write_long(out, 0);
        }
        Some(Label::Class(c)) => {
            write_long(out, 1);
            write_string(out, name(*c));
            write_long(out, 0);
        }
        Some(Label::Set(set)) => {
            write_long(out, 0);
            write_long(out, 1);
            if !set.is_empty() {
                write_long(out, set.len() as i64);
                for &l in set {
                    write_string(out, name(l));
                }
            }
            write_long(out, 0);
        }
    }
    match key {
        None => write_long(out, 0),
        Some(k) => {
            write_long(out, 1);
            write_string(out, k);
        }
    }
}

/// An Avro `long`: zig-zag, then 7 bits a byte, low bits first.
pub(super) fn write_long(out: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// An Avro `string`: its length in bytes, then its UTF-8 bytes.
pub(super) fn write_string(out: &mut Vec<u8>, s: &str) {
    write_long(out, s.len() as i64);
    out.extend_from_slice(s.as_bytes());
}

/// Decodes one Avro event (see the module's documentation).
pub(super) fn decode_event(
    dec: &RecordDecoder,
    payload: &[u8],
) -> Result<DecodedEvent, DecodeError> {
    if payload.len() < HEADER || payload[..2] != MARKER {
        return Err(unparseable(
            "not an Avro single-object encoded record (it opens with the bytes C3 01 and the \
             schema's fingerprint)",
        ));
    }
    let fp = u64::from_le_bytes(payload[2..HEADER].try_into().expect("8 bytes"));
    if fp != EVENT_FINGERPRINT {
        return Err(unparseable(format!(
            "written with the schema of fingerprint {fp:016x}, not flowboost.Event's \
             ({EVENT_FINGERPRINT:016x}, connectors/schemas/event.avsc)"
        )));
    }
    let mut r = Reader {
        bytes: payload,
        at: HEADER,
    };
    let id = r.long("id")?;
    check_id(id)?;
    let features = r.features(dec)?;
    let label = match r.union("label")? {
        false => None,
        true => Some(dec.label_by_name(r.string("label")?)?),
    };
    let labels = match r.union("labels")? {
        false => None,
        true => Some(r.label_names(dec)?),
    };
    let key = match r.union("key")? {
        false => None,
        true => Some(r.string("key")?.to_owned()),
    };
    r.finish()?;
    event(dec, id, features, label, labels, key)
}

/// An event id: at least 0.
pub(super) fn check_id(id: i64) -> Result<u64, DecodeError> {
    u64::try_from(id).map_err(|_| {
        DecodeError::new(
            DecodeErrorKind::MissingId,
            format!("the id is negative: {id}"),
        )
    })
}

/// The event of the fields of a record, checked: a non-negative id, not both a label and
/// labels.
pub(super) fn event(
    dec: &RecordDecoder,
    id: i64,
    features: Vec<f64>,
    label: Option<u32>,
    labels: Option<Vec<u32>>,
    key: Option<String>,
) -> Result<DecodedEvent, DecodeError> {
    let id = check_id(id)?;
    let label = match (label, labels) {
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                "both \"label\" and \"labels\": give one of them",
            ));
        }
        (Some(l), None) => Some(dec.single_label(l)),
        (None, Some(ids)) => Some(dec.make_label(ids)?),
    };
    Ok(DecodedEvent {
        example: Example {
            id,
            features: Features::Dense(features),
            label,
        },
        key,
    })
}

pub(super) fn unparseable(reason: impl Into<String>) -> DecodeError {
    DecodeError::new(DecodeErrorKind::Unparseable, reason)
}

/// A position in a record.
pub(super) struct Reader<'a> {
    /// The whole record (offsets in errors count from its first byte).
    pub bytes: &'a [u8],
    /// The next byte to read.
    pub at: usize,
}

impl<'a> Reader<'a> {
    /// The bytes left.
    pub fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// Checks that the record ends here.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.at != self.bytes.len() {
            return Err(unparseable(format!(
                "{} bytes after the event's last field (at byte {})",
                self.left(),
                self.at
            )));
        }
        Ok(())
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], DecodeError> {
        if n > self.left() {
            return Err(self.ends_inside(field));
        }
        let bytes = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(bytes)
    }

    /// An Avro `int` (a `long` within 32 bits).
    pub fn int(&mut self, field: &str) -> Result<i32, DecodeError> {
        let at = self.at;
        let n = self.long(field)?;
        i32::try_from(n).map_err(|_| {
            unparseable(format!(
                "\"{field}\": an int of more than 32 bits (at byte {at})"
            ))
        })
    }

    /// An Avro `float`.
    pub fn float(&mut self, field: &str) -> Result<f32, DecodeError> {
        let b = self.take(4, field)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An Avro `double`.
    pub fn double(&mut self, field: &str) -> Result<f64, DecodeError> {
        let b = self.take(8, field)?;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// The length of an Avro `bytes` or `string`, checked against the bytes left.
    pub fn length(&mut self, field: &str) -> Result<usize, DecodeError> {
        let at = self.at;
        let len = self.long(field)?;
        usize::try_from(len)
            .ok()
            .filter(|&n| n <= self.left())
            .ok_or_else(|| {
                unparseable(format!(
                    "\"{field}\": a string of {len} bytes (at byte {at}) where {} are left",
                    self.left()
                ))
            })
    }

    pub fn ends_inside(&self, field: &str) -> DecodeError {
        unparseable(format!(
            "the record ends inside \"{field}\" (at byte {})",
            self.at
        ))
    }

    /// An Avro `long` (at most 10 bytes).
    pub fn long(&mut self, field: &str) -> Result<i64, DecodeError> {
        let mut z: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.bytes.get(self.at) else {
                return Err(self.ends_inside(field));
            };
            self.at += 1;
            if i == 9 && b > 1 {
                break;
            }
            z |= u64::from(b & 0x7F) << (7 * i);
            if b < 0x80 {
                return Ok((z >> 1) as i64 ^ -((z & 1) as i64));
            }
        }
        Err(unparseable(format!(
            "\"{field}\": a long of more than 64 bits (at byte {})",
            self.at
        )))
    }

    /// A union of null and one type: `false` for null, `true` for the other branch.
    fn union(&mut self, field: &str) -> Result<bool, DecodeError> {
        let at = self.at;
        match self.long(field)? {
            0 => Ok(false),
            1 => Ok(true),
            branch => Err(unparseable(format!(
                "\"{field}\": union branch {branch} (at byte {at}); it has 0 (null) and 1"
            ))),
        }
    }

    /// An Avro `string` (or `bytes` holding UTF-8), borrowed from the record.
    pub fn string(&mut self, field: &str) -> Result<&'a str, DecodeError> {
        let at = self.at;
        let len = self.length(field)?;
        let bytes = &self.bytes[self.at..self.at + len];
        self.at += len;
        std::str::from_utf8(bytes)
            .map_err(|_| unparseable(format!("\"{field}\": not UTF-8 (at byte {at})")))
    }

    /// The count of the next block of an array (0 at its end); a negative count is
    /// followed by the block's size in bytes, which is read and not needed.
    pub fn block(&mut self, field: &str) -> Result<u64, DecodeError> {
        let count = self.long(field)?;
        if count < 0 {
            self.long(field)?;
        }
        Ok(count.unsigned_abs())
    }

    /// The dense feature vector: exactly the schema's number of checked values.
    pub fn features(&mut self, dec: &RecordDecoder) -> Result<Vec<f64>, DecodeError> {
        let dim = dec.schema.dim();
        let mut values = Vec::with_capacity(dim);
        loop {
            let at = self.at;
            let n = self.block("features")?;
            if n == 0 {
                break;
            }
            if n > (dim - values.len()) as u64 {
                return Err(too_many_features(dim, n, at, values.len()));
            }
            let n = n as usize;
            if 8 * n > self.left() {
                return Err(self.ends_inside("features"));
            }
            for chunk in self.bytes[self.at..self.at + 8 * n].chunks_exact(8) {
                let x = f64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                values.push(dec.check_value(values.len(), x)?);
            }
            self.at += 8 * n;
        }
        check_dimension(&values, dim)?;
        Ok(values)
    }

    /// The dense feature vector, each value read by `value` (a writer's schema whose
    /// items are not doubles): exactly the schema's number of checked values.
    pub fn features_by(
        &mut self,
        dec: &RecordDecoder,
        mut value: impl FnMut(&mut Self) -> Result<f64, DecodeError>,
    ) -> Result<Vec<f64>, DecodeError> {
        let dim = dec.schema.dim();
        let mut values = Vec::with_capacity(dim);
        loop {
            let at = self.at;
            let n = self.block("features")?;
            if n == 0 {
                break;
            }
            if n > (dim - values.len()) as u64 {
                return Err(too_many_features(dim, n, at, values.len()));
            }
            for _ in 0..n {
                let x = value(self)?;
                values.push(dec.check_value(values.len(), x)?);
            }
        }
        check_dimension(&values, dim)?;
        Ok(values)
    }

    /// An array of label names, each read by `name` (a writer's schema whose items are
    /// not plain strings), as label indices.
    pub fn label_names_by(
        &mut self,
        dec: &RecordDecoder,
        mut name: impl FnMut(&mut Self) -> Result<&'a str, DecodeError>,
    ) -> Result<Vec<u32>, DecodeError> {
        let mut ids = Vec::new();
        loop {
            let at = self.at;
            let n = self.block("labels")?;
            if n == 0 {
                return Ok(ids);
            }
            // Each name takes one byte at least.
            if n > self.left() as u64 {
                return Err(too_many_names(n, at, self.left()));
            }
            for _ in 0..n {
                ids.push(dec.label_by_name(name(self)?)?);
            }
        }
    }

    /// An array of label names, as label indices.
    pub fn label_names(&mut self, dec: &RecordDecoder) -> Result<Vec<u32>, DecodeError> {
        let mut ids = Vec::new();
        loop {
            let at = self.at;
            let n = self.block("labels")?;
            if n == 0 {
                return Ok(ids);
            }
            // Each name takes one byte at least (its length).
            if n > self.left() as u64 {
                return Err(too_many_names(n, at, self.left()));
            }
            for _ in 0..n {
                ids.push(dec.label_by_name(self.string("labels")?)?);
            }
        }
    }
}

fn too_many_features(dim: usize, n: u64, at: usize, read: usize) -> DecodeError {
    DecodeError::new(
        DecodeErrorKind::WrongDimension,
        format!(
            "\"features\" has more than the {dim} values the schema declares \
             (a block of {n} at byte {at} after {read})"
        ),
    )
}

fn check_dimension(values: &[f64], dim: usize) -> Result<(), DecodeError> {
    if values.len() != dim {
        return Err(DecodeError::new(
            DecodeErrorKind::WrongDimension,
            format!(
                "\"features\" has {} values; the schema declares {dim}",
                values.len()
            ),
        ));
    }
    Ok(())
}

fn too_many_names(n: u64, at: usize, left: usize) -> DecodeError {
    unparseable(format!(
        "\"labels\": a block of {n} names (at byte {at}) where {left} bytes are left"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::RecordFormat;
    use flowboost_operators::data::Task;

    fn schema(task: Task) -> Schema {
        let mut s = Schema::numeric(3, 3, task);
        s.labels = vec!["a".into(), "b".into(), "c".into()];
        s
    }

    fn decoder(task: Task) -> RecordDecoder {
        RecordDecoder::new(&schema(task), RecordFormat::Avro)
    }

    fn header() -> Vec<u8> {
        let mut v = MARKER.to_vec();
        v.extend_from_slice(&EVENT_FINGERPRINT.to_le_bytes());
        v
    }

    #[test]
    fn the_fingerprint_is_the_specifications() {
        // The specification's fingerprint of the schema "null" (its canonical form is
        // `"null"`), as Avro's own test vectors give it.
        assert_eq!(fingerprint(br#""null""#) as i64, 7195948357588979594);
        assert_eq!(fingerprint(br#""int""#) as i64, 8247732601305521295);
        assert_eq!(fingerprint(b""), 0xc15d_213a_a4d7_a795);
    }

    #[test]
    fn a_hand_encoded_event() {
        // id 2 -> zig-zag 4; a block of 3 doubles; end of the array; label "b"; labels
        // null; key "k".
        let mut bytes = header();
        bytes.extend_from_slice(&[0x04, 0x06]);
        for x in [0.5f64, -1.25, 3.0] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes.extend_from_slice(&[0x00, 0x02, 0x02, b'b', 0x00, 0x02, 0x02, b'k']);
        let event = decode_event(&decoder(Task::Multiclass), &bytes).unwrap();
        assert_eq!(event.example.id, 2);
        assert_eq!(
            event.example.features,
            Features::Dense(vec![0.5, -1.25, 3.0])
        );
        assert_eq!(event.example.label, Some(Label::Class(1)));
        assert_eq!(event.key.as_deref(), Some("k"));
        // And the encoder writes those very bytes.
        let encoded = encode_event(&schema(Task::Multiclass), &event.example, true, Some("k"));
        assert_eq!(encoded, bytes);
    }

    #[test]
    fn round_trips_every_label_shape() {
        let cases = [
            (Task::Binary, Some(Label::Class(0))),
            (Task::Multiclass, Some(Label::Class(2))),
            (Task::Multiclass, None),
            (Task::Multilabel, Some(Label::Set(vec![0, 2]))),
            (Task::Multilabel, Some(Label::Set(vec![]))),
            (Task::Multilabel, None),
        ];
        for (task, label) in cases {
            let ex = Example {
                id: 1 << 40,
                features: Features::Dense(vec![f64::MIN_POSITIVE, -0.0, 1e300]),
                label,
            };
            for key in [None, Some("model-é")] {
                let bytes = encode_event(&schema(task), &ex, true, key);
                let event = decode_event(&decoder(task), &bytes).unwrap();
                assert_eq!(event.example, ex, "{task:?}");
                assert_eq!(event.key.as_deref(), key);
            }
            // Without its label, the same event is unlabeled.
            let bytes = encode_event(&schema(task), &ex, false, None);
            assert_eq!(
                decode_event(&decoder(task), &bytes).unwrap().example.label,
                None
            );
        }
        // A sparse example is written densely.
        let sparse = Example {
            id: 0,
            features: Features::Sparse {
                indices: vec![1],
                values: vec![4.0],
                dim: 3,
            },
            label: None,
        };
        let bytes = encode_event(&schema(Task::Binary), &sparse, true, None);
        assert_eq!(
            decode_event(&decoder(Task::Binary), &bytes)
                .unwrap()
                .example
                .features,
            Features::Dense(vec![0.0, 4.0, 0.0])
        );
    }

    #[test]
    fn blocks_with_sizes_and_several_blocks() {
        // Features in two blocks, the second with a negative count and its byte size.
        let mut bytes = header();
        bytes.push(0x00); // id 0
        bytes.push(0x02); // 1 value
        bytes.extend_from_slice(&1.0f64.to_le_bytes());
        bytes.extend_from_slice(&[0x03, 0x20]); // -2 values, 16 bytes
        bytes.extend_from_slice(&2.0f64.to_le_bytes());
        bytes.extend_from_slice(&3.0f64.to_le_bytes());
        bytes.push(0x00);
        // labels: [a] then [c, a] in two blocks (multi-label: sorted, no repeats).
        bytes.extend_from_slice(&[0x00, 0x02, 0x02, 0x02, b'a', 0x04, 0x02, b'c', 0x02, b'a']);
        bytes.extend_from_slice(&[0x00, 0x00]);
        let event = decode_event(&decoder(Task::Multilabel), &bytes).unwrap();
        assert_eq!(event.example.features, Features::Dense(vec![1.0, 2.0, 3.0]));
        assert_eq!(event.example.label, Some(Label::Set(vec![0, 2])));
    }

    fn kind_of(task: Task, bytes: &[u8]) -> (DecodeErrorKind, String) {
        let e = decode_event(&decoder(task), bytes).unwrap_err();
        (e.kind, e.reason)
    }

    #[test]
    fn every_bad_record_is_a_worded_error() {
        let ex = Example {
            id: 5,
            features: Features::Dense(vec![1.0, 2.0, 3.0]),
            label: Some(Label::Class(1)),
        };
        let good = encode_event(&schema(Task::Binary), &ex, true, None);
        use DecodeErrorKind::*;
        let cases: Vec<(Vec<u8>, DecodeErrorKind, &str)> = vec![
            (b"{\"id\": 1}".to_vec(), Unparseable, "single-object"),
            (vec![], Unparseable, "single-object"),
            (
                {
                    let mut b = good.clone();
                    b[3] ^= 1;
                    b
                },
                Unparseable,
                "fingerprint",
            ),
            (
                good[..good.len() - 1].to_vec(),
                Unparseable,
                "ends inside \"key\"",
            ),
            (good[..20].to_vec(), Unparseable, "ends inside \"features\""),
            (
                {
                    let mut b = good.clone();
                    b.push(0);
                    b
                },
                Unparseable,
                "1 bytes after",
            ),
            (
                {
                    let mut b = header();
                    b.push(0x01); // id -1
                    b
                },
                MissingId,
                "negative",
            ),
            (
                {
                    let mut b = header();
                    b.extend_from_slice(&[0xFF; 11]);
                    b
                },
                Unparseable,
                "more than 64 bits",
            ),
        ];
        for (bytes, kind, words) in cases {
            let (k, reason) = kind_of(Task::Binary, &bytes);
            assert_eq!(k, kind, "{reason}");
            assert!(reason.contains(words), "{reason} lacks {words}");
        }
        // Wrong dimension: too few, and a hostile count (never allocated).
        let mut short = header();
        short.extend_from_slice(&[0x00, 0x02]);
        short.extend_from_slice(&1.0f64.to_le_bytes());
        short.extend_from_slice(&[0x00, 0x00, 0x00, 0x00]);
        let (k, reason) = kind_of(Task::Binary, &short);
        assert_eq!(k, WrongDimension);
        assert!(
            reason.contains("has 1 values; the schema declares 3"),
            "{reason}"
        );
        let mut hostile = header();
        hostile.push(0x00);
        let mut huge = Vec::new();
        write_long(&mut huge, i64::MAX);
        hostile.extend_from_slice(&huge);
        let (k, reason) = kind_of(Task::Binary, &hostile);
        assert_eq!(k, WrongDimension, "{reason}");
        // A hostile label count, a long string length, a bad union branch.
        let mut labels = header();
        labels.extend_from_slice(&[0x00, 0x06]);
        for _ in 0..3 {
            labels.extend_from_slice(&0.0f64.to_le_bytes());
        }
        labels.extend_from_slice(&[0x00, 0x00, 0x02]);
        labels.extend_from_slice(&huge);
        let (k, reason) = kind_of(Task::Multilabel, &labels);
        assert!(
            k == Unparseable && reason.contains("bytes are left"),
            "{reason}"
        );
        let mut long_string = header();
        long_string.extend_from_slice(&[0x00, 0x06]);
        for _ in 0..3 {
            long_string.extend_from_slice(&0.0f64.to_le_bytes());
        }
        long_string.extend_from_slice(&[0x00, 0x02, 0x7E]);
        let (k, reason) = kind_of(Task::Binary, &long_string);
        assert!(
            k == Unparseable && reason.contains("a string of 63 bytes"),
            "{reason}"
        );
        let mut branch = good.clone();
        let at = good.len() - 5; // the label union's branch
        branch[at] = 0x04;
        let (k, reason) = kind_of(Task::Binary, &branch);
        assert!(
            k == Unparseable && reason.contains("union branch 2"),
            "{reason}"
        );
        // Values the decoder checks as it does in JSON.
        let nan = Example {
            features: Features::Dense(vec![1.0, f64::NAN, 3.0]),
            ..ex.clone()
        };
        let (k, _) = kind_of(
            Task::Binary,
            &encode_event(&schema(Task::Binary), &nan, true, None),
        );
        assert_eq!(k, NonFinite);
        let mut unknown = encode_event(&schema(Task::Binary), &ex, false, None);
        unknown.truncate(unknown.len() - 3);
        unknown.extend_from_slice(&[0x02, 0x02, b'z', 0x00, 0x00]);
        let (k, _) = kind_of(Task::Binary, &unknown);
        assert_eq!(k, UnknownLabel);
        let mut both = encode_event(&schema(Task::Binary), &ex, true, None);
        both.truncate(both.len() - 2);
        both.extend_from_slice(&[0x02, 0x02, 0x02, b'a', 0x00, 0x00]);
        let (k, reason) = kind_of(Task::Binary, &both);
        assert!(k == Malformed && reason.contains("both"), "{reason}");
    }

    #[test]
    fn the_apache_implementation_agrees() {
        use apache_avro::rabin::Rabin;
        use apache_avro::types::{Record, Value};
        let schema = apache_avro::Schema::parse_str(EVENT_SCHEMA).unwrap();
        assert_eq!(schema.canonical_form(), EVENT_SCHEMA_CANONICAL);
        let fp = schema.fingerprint::<Rabin>();
        assert_eq!(fp.bytes, EVENT_FINGERPRINT.to_le_bytes());
        // A record written by the Apache implementation decodes to the same event as ours.
        let mut record = Record::new(&schema).unwrap();
        record.put("id", Value::Long(9));
        record.put(
            "features",
            Value::Array(vec![
                Value::Double(0.25),
                Value::Double(-2.0),
                Value::Double(7.5),
            ]),
        );
        record.put("label", Value::Union(0, Box::new(Value::Null)));
        record.put(
            "labels",
            Value::Union(
                1,
                Box::new(Value::Array(vec![
                    Value::String("c".into()),
                    Value::String("a".into()),
                ])),
            ),
        );
        record.put("key", Value::Union(1, Box::new(Value::String("m".into()))));
        let mut bytes = header();
        bytes.extend(apache_avro::to_avro_datum(&schema, record).unwrap());
        let event = decode_event(&decoder(Task::Multilabel), &bytes).unwrap();
        let ex = Example {
            id: 9,
            features: Features::Dense(vec![0.25, -2.0, 7.5]),
            label: Some(Label::Set(vec![0, 2])),
        };
        assert_eq!(event.example, ex);
        assert_eq!(event.key.as_deref(), Some("m"));
        // And its reader takes what our encoder writes.
        let ours = encode_event(&schema_of(), &ex, true, Some("m"));
        let value = apache_avro::from_avro_datum(&schema, &mut &ours[HEADER..], None).unwrap();
        let Value::Record(fields) = value else {
            panic!("not a record: {value:?}")
        };
        assert_eq!(fields[0], ("id".to_string(), Value::Long(9)));
        assert_eq!(
            fields[3].1,
            Value::Union(
                1,
                Box::new(Value::Array(vec![
                    Value::String("a".into()),
                    Value::String("c".into()),
                ]))
            )
        );
    }

    fn schema_of() -> Schema {
        schema(Task::Multilabel)
    }
}
