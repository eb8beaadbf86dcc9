//! A refused request: its HTTP status and the JSON body that names the field and the
//! reason.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use flowboost_connectors::kafka::DecodeError;
use serde::Serialize;

/// Why a request was refused: the HTTP status, a reason (the Kafka job's dead-letter
/// reasons for events — `unparseable`, `missing_id`, `unknown_feature`, ... — and
/// `too_large`, `not_found`, `learning_disabled`, ... for the request itself), the
/// field at fault when there is one, the record's index in a batch, and the reason in
/// words.
///
/// ```
/// use flowboost::serve::ApiError;
///
/// let e = ApiError::too_large(1024);
/// assert_eq!(e.status.as_u16(), 413);
/// assert_eq!(e.body.reason, "too_large");
/// ```
#[derive(Clone, Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body sent (under `"error"`).
    pub body: ErrorBody,
}

/// The JSON body of a refused request (`{"error": {...}}`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ErrorBody {
    /// The reason, snake_case (a metric label too).
    pub reason: &'static str,
    /// The field at fault (`id`, `features`, `features.NAME`, `label`, `key`, ...), if
    /// one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The record's index in a batch (0-based), for a batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// What is wrong, in words.
    pub message: String,
}

#[derive(Serialize)]
struct Envelope<'a> {
    error: &'a ErrorBody,
}

impl ApiError {
    /// A refusal with `status`, `reason` and `message` (no field).
    pub fn new(status: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                reason,
                field: None,
                index: None,
                message: message.into(),
            },
        }
    }

    /// A body over the limit of `limit` bytes (413).
    pub fn too_large(limit: usize) -> Self {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the request body is over the limit of {limit} bytes (--max-body-bytes)"),
        )
    }

    /// An event or feedback record that does not decode (400 for a body that is not
    /// JSON, 422 for one that does not fit the model's schema), naming the field.
    pub fn decode(e: &DecodeError) -> Self {
        let status = match e.kind.name() {
            "unparseable" => StatusCode::BAD_REQUEST,
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError {
            status,
            body: ErrorBody {
                reason: e.kind.name(),
                field: field_of(e),
                index: None,
                message: e.reason.clone(),
            },
        }
    }

    /// Names the field at fault.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.body.field = Some(field.into());
        self
    }

    /// Names the record's index in a batch.
    pub fn at(mut self, index: usize) -> Self {
        self.body.index = Some(index);
        self
    }

    /// The JSON body.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&Envelope { error: &self.body }).unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.to_json()).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// The field a decoding error is about, read from its kind and its words (the codec
/// names a feature as ``feature `NAME` ``).
fn field_of(e: &DecodeError) -> Option<String> {
    let reason = e.reason.as_str();
    let feature = || {
        let rest = &reason[reason.find("feature `")? + "feature `".len()..];
        Some(format!("features.{}", &rest[..rest.find('`')?]))
    };
    match e.kind.name() {
        "unparseable" | "schema" => None,
        "missing_id" => Some("id".into()),
        "unknown_label" => Some("label".into()),
        "wrong_dimension" => Some("features".into()),
        _ => feature().or_else(|| {
            [
                "key",
                "clicks",
                "propensities",
                "labels",
                "label",
                "features",
            ]
            .into_iter()
            .find(|f| reason.contains(&format!("\"{f}\"")) || reason.contains(f))
            .map(str::to_string)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowboost_connectors::kafka::{RecordDecoder, RecordFormat};
    use flowboost_operators::data::{Attribute, Schema, Task};

    fn decoder() -> RecordDecoder {
        let schema = Schema {
            attributes: vec![Attribute::numeric("x"), Attribute::numeric("y")],
            labels: vec!["no".into(), "yes".into()],
            task: Task::Binary,
        };
        RecordDecoder::new(&schema, RecordFormat::Json)
    }

    fn error(payload: &str) -> ErrorBody {
        let e = decoder()
            .decode_event(None, payload.as_bytes())
            .unwrap_err();
        ApiError::decode(&e).body
    }

    #[test]
    fn names_the_field_of_each_kind_of_bad_event() {
        assert_eq!(error("{").reason, "unparseable");
        assert_eq!(error("{").field, None);
        let e = error(r#"{"features":{"x":1}}"#);
        assert_eq!((e.reason, e.field.as_deref()), ("missing_id", Some("id")));
        let e = error(r#"{"id":1,"features":{"z":1}}"#);
        assert_eq!(e.reason, "unknown_feature");
        assert_eq!(e.field.as_deref(), Some("features.z"), "{e:?}");
        let e = error(r#"{"id":1,"features":{"x":"a"}}"#);
        assert_eq!(e.field.as_deref(), Some("features.x"), "{e:?}");
        let e = error(r#"{"id":1,"features":[1]}"#);
        assert_eq!(
            (e.reason, e.field.as_deref()),
            ("wrong_dimension", Some("features"))
        );
        let e = error(r#"{"id":1,"features":[1,2],"label":"maybe"}"#);
        assert_eq!(
            (e.reason, e.field.as_deref()),
            ("unknown_label", Some("label"))
        );
        let e = error(r#"{"id":1,"key":3,"features":[1,2]}"#);
        assert_eq!((e.reason, e.field.as_deref()), ("malformed", Some("key")));
    }
}
