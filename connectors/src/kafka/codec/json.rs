//! JSON records: `{"id": ..., "features": {...} or [...], "label": ... or "labels": [...]}`.

use super::{DecodeError, DecodeErrorKind, DecodedEvent, RecordDecoder, parse_id};
use flowboost_operators::data::{Example, Features, Feedback, Label};
use serde_json::{Map, Value};

/// Decodes one JSON event, with its model key (`"key"`) if it has one.
pub(super) fn decode_event(
    dec: &RecordDecoder,
    payload: &[u8],
) -> Result<DecodedEvent, DecodeError> {
    match super::json_dense::decode(dec, payload) {
        Some(event) => Ok(event),
        None => decode_event_tree(dec, payload),
    }
}

/// The general path of [`decode_event`]: the payload as a JSON tree, every error worded.
pub(super) fn decode_event_tree(
    dec: &RecordDecoder,
    payload: &[u8],
) -> Result<DecodedEvent, DecodeError> {
    let object = parse_object(payload)?;
    let id = id(&object)?;
    let key = match object.get("key") {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) => Some(k.clone()),
        Some(other) => {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!("\"key\" must be a string, got {}", type_name(other)),
            ));
        }
    };
    let features = match object.get("features") {
        None | Some(Value::Null) => {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                "missing features",
            ));
        }
        Some(Value::Array(values)) => dense(dec, values)?,
        Some(Value::Object(named)) => sparse(dec, named)?,
        Some(other) => {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!(
                    "features must be an object {{\"name\": value, ...}} or an array of {} values, got {}",
                    dec.schema.dim(),
                    type_name(other)
                ),
            ));
        }
    };
    let label = label(dec, &object)?;
    Ok(DecodedEvent {
        example: Example {
            id,
            features,
            label,
        },
        key,
    })
}

/// Decodes one JSON feedback record (an id and a label).
pub(super) fn decode_feedback(
    dec: &RecordDecoder,
    payload: &[u8],
) -> Result<super::FeedbackRecord, DecodeError> {
    let object = parse_object(payload)?;
    let id = id(&object)?;
    if let Some(clicks) = object.get("clicks").filter(|v| !v.is_null()) {
        if object.contains_key("label") || object.contains_key("labels") {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                "both \"clicks\" and a label: give one of them",
            ));
        }
        let Value::Array(items) = clicks else {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!("\"clicks\" must be an array, got {}", type_name(clicks)),
            ));
        };
        let mut ids = items
            .iter()
            .map(|v| label_index(dec, v))
            .collect::<Result<Vec<u32>, _>>()?;
        let propensities = match object.get("propensities").filter(|v| !v.is_null()) {
            None => None,
            Some(p) => Some(propensities(p, &ids)?),
        };
        if let Some(p) = propensities {
            return Ok(super::FeedbackRecord {
                id,
                feedback: Feedback::Logged(ids.into_iter().zip(p).collect()),
            });
        }
        ids.sort_unstable();
        ids.dedup();
        return Ok(super::FeedbackRecord {
            id,
            feedback: Feedback::Clicks(ids),
        });
    }
    match label(dec, &object)? {
        Some(label) => Ok(super::FeedbackRecord {
            id,
            feedback: Feedback::Label(label),
        }),
        None => Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            "feedback without a label (expected \"label\", \"labels\" or \"clicks\")",
        )),
    }
}

/// The `"propensities"` of logged clicks: one number in (0, 1] per click, in the clicks'
/// order.
fn propensities(value: &Value, clicks: &[u32]) -> Result<Vec<f64>, DecodeError> {
    let Value::Array(values) = value else {
        return Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            format!(
                "\"propensities\" must be an array, got {}",
                type_name(value)
            ),
        ));
    };
    if values.len() != clicks.len() {
        return Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            format!(
                "{} \"propensities\" for {} \"clicks\": give one per click",
                values.len(),
                clicks.len()
            ),
        ));
    }
    values
        .iter()
        .map(|v| match v.as_f64() {
            Some(p) if p > 0.0 && p <= 1.0 => Ok(p),
            _ => Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!("a propensity must be a number in (0, 1], got {v}"),
            )),
        })
        .collect()
}

/// The marker of the duplicate-field error [`StrictObject`] raises (to tell it from the
/// parser's syntax errors).
const DUPLICATE: &str = "duplicate field";

/// A JSON object whose fields are each given once: the event or feedback object, and
/// the named features in it (`"features": {...}`). `serde_json` keeps the last of
/// repeated fields, so `{"id": 1, "id": 2}` would be event 2 without a word; here it is
/// an error naming the field. The content of other fields is parsed as JSON values
/// (checked, not judged).
struct StrictObject(Map<String, Value>);

impl<'de> serde::Deserialize<'de> for StrictObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor { top: true })
    }
}

struct StrictVisitor {
    /// The event object itself: its `features` object is strict too.
    top: bool,
}

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = StrictObject;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<StrictObject, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "{DUPLICATE} `{key}`"
                )));
            }
            let value = if self.top && key == "features" {
                // Named features are strict; an array or another value is taken as is.
                map.next_value::<FeaturesValue>()?.0
            } else {
                map.next_value::<Value>()?
            };
            out.insert(key, value);
        }
        Ok(StrictObject(out))
    }
}

/// The `"features"` value: an object of named features is a [`StrictObject`]; anything
/// else a plain value.
struct FeaturesValue(Value);

impl<'de> serde::Deserialize<'de> for FeaturesValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = FeaturesValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<FeaturesValue, A::Error> {
                StrictVisitor { top: false }
                    .visit_map(map)
                    .map(|o| FeaturesValue(Value::Object(o.0)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<FeaturesValue, A::Error> {
                serde::Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(FeaturesValue)
            }
            fn visit_bool<E>(self, v: bool) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::Null))
            }
            fn visit_none<E>(self) -> Result<FeaturesValue, E> {
                Ok(FeaturesValue(Value::Null))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses the payload as one JSON object whose fields are each given once (see
/// [`StrictObject`]).
fn parse_object(payload: &[u8]) -> Result<Map<String, Value>, DecodeError> {
    if payload.iter().all(u8::is_ascii_whitespace) {
        return Err(DecodeError::new(
            DecodeErrorKind::Unparseable,
            "empty record",
        ));
    }
    // Anything but an object: parsed as a value, to name what it is.
    let first = payload.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return match serde_json::from_slice::<Value>(payload) {
            Ok(other) => Err(DecodeError::new(
                DecodeErrorKind::Unparseable,
                format!("expected a JSON object, got {}", type_name(&other)),
            )),
            Err(e) => Err(parse_error(payload, &e)),
        };
    }
    match serde_json::from_slice::<StrictObject>(payload) {
        Ok(StrictObject(object)) => Ok(object),
        Err(e) => Err(parse_error(payload, &e)),
    }
}

/// The dead letter of a payload `serde_json` could not parse: a repeated field, a
/// non-finite number where the parser stopped, or not JSON at all.
fn parse_error(payload: &[u8], e: &serde_json::Error) -> DecodeError {
    let text = e.to_string();
    if e.classify() == serde_json::error::Category::Data && text.starts_with(DUPLICATE) {
        return DecodeError::new(
            DecodeErrorKind::Malformed,
            format!("{text}: each field may appear once"),
        );
    }
    if text.contains("number out of range") {
        return DecodeError::new(
            DecodeErrorKind::NonFinite,
            format!("a number overflows to infinity: {e}"),
        );
    }
    if let Some(token) = non_finite_token_at(payload, e) {
        return DecodeError::new(
            DecodeErrorKind::NonFinite,
            format!("`{token}` is not allowed (NaN and infinity are not valid values)"),
        );
    }
    DecodeError::new(DecodeErrorKind::Unparseable, format!("not valid JSON: {e}"))
}

/// A bare `NaN`, `Infinity` or `-Infinity` (what Python's `json.dumps` writes for
/// non-finite floats) where the parser stopped, if that is why it stopped. Only there: a
/// payload that is not JSON at all may hold those letters anywhere, and is not JSON
/// rather than a record with a non-finite value.
fn non_finite_token_at(payload: &[u8], e: &serde_json::Error) -> Option<&'static str> {
    // The error's line and column (1-based, in bytes) as an offset.
    let line_start = if e.line() <= 1 {
        0
    } else {
        payload
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .nth(e.line() - 2)
            .map(|(i, _)| i + 1)?
    };
    let at = line_start + e.column().saturating_sub(1);
    // The parser stops on the token's first byte, or just after it.
    for start in at.saturating_sub(2)..=at.saturating_add(1) {
        let rest = payload.get(start..)?;
        for token in ["NaN", "-Infinity", "Infinity"] {
            if rest.starts_with(token.as_bytes()) {
                return Some(token);
            }
        }
    }
    None
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn id(object: &Map<String, Value>) -> Result<u64, DecodeError> {
    match object.get("id") {
        None | Some(Value::Null) => Err(DecodeError::new(DecodeErrorKind::MissingId, "missing id")),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::MissingId,
                format!("bad id {n}: expected a non-negative integer"),
            )
        }),
        Some(Value::String(s)) => parse_id(s),
        Some(other) => Err(DecodeError::new(
            DecodeErrorKind::MissingId,
            format!(
                "bad id: expected a non-negative integer, got {}",
                type_name(other)
            ),
        )),
    }
}

/// One feature value of attribute `j`.
fn value(dec: &RecordDecoder, j: usize, v: &Value) -> Result<f64, DecodeError> {
    let name = &dec.schema.attributes[j].name;
    match v {
        Value::Number(n) => {
            let x = n.as_f64().ok_or_else(|| {
                DecodeError::new(
                    DecodeErrorKind::Malformed,
                    format!("feature `{name}`: {n} is not a number"),
                )
            })?;
            dec.check_value(j, x)
        }
        Value::String(s) => {
            if let Some(index) = dec.nominal_value(j, s) {
                return index;
            }
            match s.trim().parse::<f64>() {
                Ok(x) => dec.check_value(j, x),
                Err(_) => Err(DecodeError::new(
                    DecodeErrorKind::Malformed,
                    format!("feature `{name}`: `{s}` is not a number"),
                )),
            }
        }
        Value::Null => Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            format!("feature `{name}` is null (missing values are not allowed)"),
        )),
        other => Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            format!(
                "feature `{name}`: expected a number, got {}",
                type_name(other)
            ),
        )),
    }
}

fn dense(dec: &RecordDecoder, values: &[Value]) -> Result<Features, DecodeError> {
    let dim = dec.schema.dim();
    if values.len() != dim {
        return Err(DecodeError::new(
            DecodeErrorKind::WrongDimension,
            format!(
                "wrong dimension: {} values, the schema declares {dim} features",
                values.len()
            ),
        ));
    }
    let dense = values
        .iter()
        .enumerate()
        .map(|(j, v)| value(dec, j, v))
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(Features::Dense(dense))
}

fn sparse(dec: &RecordDecoder, named: &Map<String, Value>) -> Result<Features, DecodeError> {
    let mut pairs = Vec::with_capacity(named.len());
    for (name, v) in named {
        let j = dec.feature(name).ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::UnknownFeature,
                format!("unknown feature `{name}`"),
            )
        })?;
        pairs.push((j, value(dec, j as usize, v)?));
    }
    pairs.sort_unstable_by_key(|p| p.0);
    // Two names of one index can only come from a schema with a repeated name, whose
    // later attributes are unreachable by name; keep the last value.
    pairs.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            earlier.1 = later.1;
            true
        } else {
            false
        }
    });
    let (indices, values) = pairs.into_iter().unzip();
    Ok(Features::Sparse {
        indices,
        values,
        dim: dec.schema.dim() as u32,
    })
}

/// One label index from a JSON value: a name (string) or an index (number).
fn label_index(dec: &RecordDecoder, v: &Value) -> Result<u32, DecodeError> {
    match v {
        Value::String(name) => dec.label_by_name(name),
        Value::Number(n) => match n.as_u64() {
            Some(index) => dec.label_by_index(index),
            None => Err(dec.unknown_label(&n.to_string())),
        },
        other => Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            format!(
                "a label must be a name (string) or an index (number), got {}",
                type_name(other)
            ),
        )),
    }
}

fn label(dec: &RecordDecoder, object: &Map<String, Value>) -> Result<Option<Label>, DecodeError> {
    labels(dec, object.get("label"), object.get("labels"))
}

/// The label of an event from its `label` and `labels` fields.
pub(super) fn labels(
    dec: &RecordDecoder,
    single: Option<&Value>,
    several: Option<&Value>,
) -> Result<Option<Label>, DecodeError> {
    let single = single.filter(|v| !v.is_null());
    let several = several.filter(|v| !v.is_null());
    match (single, several) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            "both \"label\" and \"labels\": give one of them",
        )),
        (Some(v), None) => Ok(Some(dec.single_label(label_index(dec, v)?))),
        (None, Some(Value::Array(items))) => {
            let ids = items
                .iter()
                .map(|v| label_index(dec, v))
                .collect::<Result<Vec<u32>, _>>()?;
            dec.make_label(ids).map(Some)
        }
        (None, Some(other)) => Err(DecodeError::new(
            DecodeErrorKind::Malformed,
            format!("\"labels\" must be an array, got {}", type_name(other)),
        )),
    }
}
