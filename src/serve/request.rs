//! The request decoder: a request body to its events (or feedback records), each decoded
//! exactly as the Kafka job decodes a record, against the model's schema.
//!
//! A body is one of:
//!
//! - one JSON object (an event, possibly spread over several lines): the answer is one
//!   JSON object;
//! - a JSON array of objects: the answer is a JSON array, in the same order;
//! - NDJSON, one object per line (blank lines skipped): the answer is NDJSON, one line per
//!   event, in the same order.
//!
//! Every record of a batch must decode, or the request is refused as a whole (nothing is
//! predicted or learned), naming the first bad record's index, its field and the reason.

use super::api_error::ApiError;
use axum::http::StatusCode;
use serde_json::value::RawValue;

/// How a body held its records (and so how the answer holds its records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyShape {
    /// One JSON object.
    One,
    /// A JSON array.
    Array,
    /// One JSON object per line.
    Lines,
}

/// A body split into its records' bytes.
#[derive(Debug)]
pub struct SplitBody<'a> {
    /// How the body held them.
    pub shape: BodyShape,
    /// Each record's JSON text.
    pub records: Vec<&'a [u8]>,
}

/// The most records one request may hold.
pub const MAX_BATCH_RECORDS: usize = 100_000;

/// Splits a body into its records (their JSON is decoded later, one by one).
///
/// ```
/// use flowboost::serve::{BodyShape, split_body};
///
/// let one = split_body(br#"{"id": 1, "features": [0.5]}"#).unwrap();
/// assert_eq!((one.shape, one.records.len()), (BodyShape::One, 1));
/// let array = split_body(br#"[{"id": 1, "features": [0.5]}, {"id": 2, "features": [1]}]"#).unwrap();
/// assert_eq!((array.shape, array.records.len()), (BodyShape::Array, 2));
/// let lines = split_body(b"{\"id\": 1, \"features\": [0.5]}\n\n{\"id\": 2, \"features\": [1]}\n").unwrap();
/// assert_eq!((lines.shape, lines.records.len()), (BodyShape::Lines, 2));
/// assert_eq!(split_body(b"  ").unwrap_err().body.reason, "unparseable");
/// ```
pub fn split_body(body: &[u8]) -> Result<SplitBody<'_>, ApiError> {
    let body = body.trim_ascii();
    let unparseable =
        |message: String| ApiError::new(StatusCode::BAD_REQUEST, "unparseable", message);
    if body.is_empty() {
        return Err(unparseable(
            "an empty body: expected a JSON event, a JSON array of events or NDJSON".into(),
        ));
    }
    let text = std::str::from_utf8(body).map_err(|e| unparseable(format!("not UTF-8: {e}")))?;
    let split = if body[0] == b'[' {
        let items: Vec<&RawValue> = serde_json::from_str(text)
            .map_err(|e| unparseable(format!("not a JSON array of events: {e}")))?;
        SplitBody {
            shape: BodyShape::Array,
            records: items.into_iter().map(|r| r.get().as_bytes()).collect(),
        }
    } else if serde_json::from_str::<&RawValue>(text).is_ok() {
        SplitBody {
            shape: BodyShape::One,
            records: vec![body],
        }
    } else {
        let records: Vec<&[u8]> = body
            .split(|&b| b == b'\n')
            .map(<[u8]>::trim_ascii)
            .filter(|line| !line.is_empty())
            .collect();
        if records.len() == 1 {
            // Not JSON, and not several lines: one event, which the codec refuses with
            // its reason (a bare `NaN` is `non_finite`, not `unparseable`).
            return Ok(SplitBody {
                shape: BodyShape::One,
                records,
            });
        }
        SplitBody {
            shape: BodyShape::Lines,
            records,
        }
    };
    if split.records.len() > MAX_BATCH_RECORDS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_records",
            format!(
                "{} records in one request: at most {MAX_BATCH_RECORDS}",
                split.records.len()
            ),
        ));
    }
    Ok(split)
}

/// Joins the answers of a batch as its request held its records.
pub fn join_answers(shape: BodyShape, answers: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(answers.iter().map(|a| a.len() + 1).sum::<usize>() + 2);
    match shape {
        BodyShape::One => {
            for a in answers {
                out.extend_from_slice(a);
            }
        }
        BodyShape::Array => {
            out.push(b'[');
            for (i, a) in answers.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(a);
            }
            out.push(b']');
        }
        BodyShape::Lines => {
            for a in answers {
                out.extend_from_slice(a);
                out.push(b'\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pretty_printed_event_is_one_event() {
        let s = split_body(b"{\n  \"id\": 1,\n  \"features\": [1]\n}\n").unwrap();
        assert_eq!(s.shape, BodyShape::One);
        assert_eq!(s.records.len(), 1);
    }

    #[test]
    fn bad_bodies_are_refused_with_a_reason() {
        for bad in [&b"[{}"[..], b"\xff\xfe", b"[1,", b""] {
            let e = split_body(bad).unwrap_err();
            assert_eq!(e.body.reason, "unparseable", "{bad:?}");
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
        }
        // Records that are not JSON split fine: each is refused when decoded.
        assert_eq!(split_body(b"nope").unwrap().records, [&b"nope"[..]]);
        let s = split_body(b"{\"id\":1}\nnope").unwrap();
        assert_eq!(s.records, [&b"{\"id\":1}"[..], b"nope"]);
    }

    #[test]
    fn answers_join_in_the_request_s_shape() {
        let a = vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()];
        assert_eq!(join_answers(BodyShape::Array, &a), b"[{\"a\":1},{\"b\":2}]");
        assert_eq!(
            join_answers(BodyShape::Lines, &a),
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(join_answers(BodyShape::One, &a[..1]), b"{\"a\":1}");
    }
}
