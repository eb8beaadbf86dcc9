//! The endpoints: `POST /v1/predict`, `POST /v1/rank`, `POST /v1/learn`, `GET /v1/model`, `GET /healthz`,
//! `GET /readyz`, `GET /metrics`; anything else is a JSON 404 (or 405).

use super::api_error::ApiError;
use super::metrics::ServeMetrics;
use super::model_slot::ModelSlot;
use super::rank::{RankPolicy, rank};
use super::request::{BodyShape, join_answers, split_body};
use super::served_model::ServedModel;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Bodies above this size are answered off the runtime's threads (a blocking task).
const INLINE_BODY_BYTES: usize = 64 * 1024;

/// What the handlers share.
#[derive(Debug)]
pub struct ServeState {
    /// The model answering.
    pub slot: ModelSlot,
    /// The counters.
    pub metrics: ServeMetrics,
    /// The largest request body taken, in bytes.
    pub max_body_bytes: usize,
    /// How long a request's body may take to arrive once its head has.
    pub read_timeout: Duration,
    /// Whether `/v1/learn` is on (and predictions wait for their feedback).
    pub learn: bool,
    /// How `/v1/rank` draws its slates.
    pub rank: RankPolicy,
    /// Cleared when the server begins to stop (`/readyz` then answers 503).
    pub ready: AtomicBool,
}

/// The router of every endpoint over `state`.
pub fn router(state: Arc<ServeState>) -> Router {
    Router::new()
        .route("/v1/predict", post(predict))
        .route("/v1/learn", post(learn))
        .route("/v1/rank", post(rank_route))
        .route("/v1/model", get(model))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// Counts the answer of `route` and hands it back.
fn finish(
    state: &ServeState,
    route: &str,
    start: Instant,
    answer: Result<Response, ApiError>,
) -> Response {
    let response = match answer {
        Ok(r) => r,
        Err(e) => {
            state.metrics.error(e.body.reason);
            if e.status.is_server_error() {
                tracing::warn!("flowboost: serve: {route}: {}", e.body.message);
            }
            e.into_response()
        }
    };
    state
        .metrics
        .observe(route, response.status().as_u16(), start.elapsed());
    response
}

fn with_type(body: impl Into<Body>, content_type: &'static str) -> Response {
    let mut r = Response::new(body.into());
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// Reads a body of at most `--max-body-bytes`: a declared length over it is refused before
/// anything is read, a body without one as soon as it passes the limit, and a body that
/// does not arrive within `--read-timeout` with 408.
async fn read_body(headers: &HeaderMap, body: Body, state: &ServeState) -> Result<Bytes, ApiError> {
    let limit = state.max_body_bytes;
    if let Some(len) = headers.get(header::CONTENT_LENGTH) {
        let len = len
            .to_str()
            .ok()
            .and_then(|l| l.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    "a bad Content-Length",
                )
            })?;
        if len > limit as u64 {
            return Err(ApiError::too_large(limit));
        }
    }
    let read = tokio::time::timeout(state.read_timeout, axum::body::to_bytes(body, limit));
    let Ok(read) = read.await else {
        return Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the request body did not arrive within {} s (--read-timeout)",
                state.read_timeout.as_secs_f64()
            ),
        ));
    };
    read.map_err(|e| {
        let mut source: Option<&dyn std::error::Error> = Some(&e);
        while let Some(s) = source {
            if s.to_string().contains("length limit exceeded") {
                return ApiError::too_large(limit);
            }
            source = s.source();
        }
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("reading the body: {e}"),
        )
    })
}

/// Runs `work` on the model: inline for a small body, as a blocking task for a large one.
async fn on_model<T: Send + 'static>(
    model: Arc<ServedModel>,
    body: Bytes,
    work: fn(&ServedModel, &[u8]) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    if body.len() <= INLINE_BODY_BYTES {
        return work(&model, &body);
    }
    tokio::task::spawn_blocking(move || work(&model, &body))
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("the request's task failed: {e}"),
            )
        })?
}

/// The answers of a body and how to join them.
struct Answers {
    shape: BodyShape,
    records: Vec<Vec<u8>>,
}

fn predict_body(model: &ServedModel, body: &[u8]) -> Result<Answers, ApiError> {
    let split = split_body(body)?;
    let records = model.predict(&split.records, false)?;
    Ok(Answers {
        shape: split.shape,
        records,
    })
}

fn predict_pending_body(model: &ServedModel, body: &[u8]) -> Result<Answers, ApiError> {
    let split = split_body(body)?;
    let records = model.predict(&split.records, true)?;
    Ok(Answers {
        shape: split.shape,
        records,
    })
}

fn learn_body(model: &ServedModel, body: &[u8]) -> Result<Answers, ApiError> {
    let split = split_body(body)?;
    let answers = model.learn(&split.records)?;
    let records = answers
        .iter()
        .map(|a| serde_json::to_vec(a).unwrap_or_default())
        .collect();
    Ok(Answers {
        shape: split.shape,
        records,
    })
}

fn answer(answers: &Answers) -> Response {
    let content_type = match answers.shape {
        BodyShape::Lines => "application/x-ndjson",
        BodyShape::One | BodyShape::Array => "application/json",
    };
    with_type(join_answers(answers.shape, &answers.records), content_type)
}

/// The answers, with the `flowboost-model-generation` header naming the model that gave
/// them.
fn answered_by(answers: &Answers, model: &ServedModel) -> Response {
    let mut response = answer(answers);
    if let Ok(v) = HeaderValue::from_str(&model.generation().to_string()) {
        response
            .headers_mut()
            .insert("flowboost-model-generation", v);
    }
    response
}

async fn predict(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let start = Instant::now();
    let (parts, body) = request.into_parts();
    let result = async {
        let body = read_body(&parts.headers, body, &state).await?;
        let model = state.slot.current();
        let work = if state.learn {
            predict_pending_body
        } else {
            predict_body
        };
        let answers = on_model(model.clone(), body, work).await?;
        state.metrics.predicted.inc_by(answers.records.len() as u64);
        Ok(answered_by(&answers, &model))
    }
    .await;
    finish(&state, "/v1/predict", start, result)
}

async fn rank_route(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let start = Instant::now();
    let (parts, body) = request.into_parts();
    let result = async {
        let body = read_body(&parts.headers, body, &state).await?;
        let model = state.slot.current();
        let policy = state.rank;
        let work = move |model: &ServedModel, body: &[u8]| -> Result<Answers, ApiError> {
            let split = split_body(body)?;
            let records = rank(model, &split.records, policy)?;
            Ok(Answers {
                shape: split.shape,
                records,
            })
        };
        let answers = if body.len() <= INLINE_BODY_BYTES {
            work(&model, &body)?
        } else {
            let model = model.clone();
            tokio::task::spawn_blocking(move || work(&model, &body))
                .await
                .map_err(|e| {
                    ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal",
                        format!("the request's task failed: {e}"),
                    )
                })??
        };
        state.metrics.predicted.inc_by(answers.records.len() as u64);
        Ok(answered_by(&answers, &model))
    }
    .await;
    finish(&state, "/v1/rank", start, result)
}

async fn learn(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let start = Instant::now();
    let (parts, body) = request.into_parts();
    let result = async {
        if !state.learn {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "learning_disabled",
                "this server does not learn: start it with --learn",
            ));
        }
        let body = read_body(&parts.headers, body, &state).await?;
        let answers = on_model(state.slot.current(), body, learn_body).await?;
        state
            .metrics
            .learn_records
            .inc_by(answers.records.len() as u64);
        Ok(answer(&answers))
    }
    .await;
    finish(&state, "/v1/learn", start, result)
}

async fn model(State(state): State<Arc<ServeState>>) -> Response {
    let start = Instant::now();
    let model = state.slot.current();
    let body = model.inspection().to_vec();
    finish(
        &state,
        "/v1/model",
        start,
        Ok(with_type(body, "application/json")),
    )
}

async fn healthz(State(state): State<Arc<ServeState>>) -> Response {
    let start = Instant::now();
    let r = with_type(&b"{\"status\":\"ok\"}"[..], "application/json");
    finish(&state, "/healthz", start, Ok(r))
}

async fn readyz(State(state): State<Arc<ServeState>>) -> Response {
    let start = Instant::now();
    let model = state.slot.current();
    let ready = state.ready.load(Ordering::Relaxed);
    let body = serde_json::json!({
        "status": if ready { "ready" } else { "stopping" },
        "model_version": model.learned(),
        "model_generation": model.generation(),
        "model": model.path().display().to_string(),
    });
    let mut r = with_type(body.to_string(), "application/json");
    if !ready {
        *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    }
    finish(&state, "/readyz", start, Ok(r))
}

async fn metrics(State(state): State<Arc<ServeState>>) -> Response {
    let start = Instant::now();
    let model = state.slot.current();
    // This scrape's own request is counted in the next one.
    let body = state.metrics.exposition(&model);
    let r = with_type(
        body,
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
    );
    finish(&state, "/metrics", start, Ok(r))
}

async fn not_found(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let start = Instant::now();
    let e = ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no endpoint {}: see /v1/predict, /v1/rank, /v1/learn, /v1/model, /healthz, /readyz, /metrics",
            request.uri().path()
        ),
    );
    finish(&state, "other", start, Err(e))
}

async fn method_not_allowed(State(state): State<Arc<ServeState>>, request: Request) -> Response {
    let start = Instant::now();
    let e = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{} is not allowed on {} (POST /v1/predict, /v1/rank and /v1/learn, GET the others)",
            request.method(),
            request.uri().path()
        ),
    );
    finish(&state, "other", start, Err(e))
}
