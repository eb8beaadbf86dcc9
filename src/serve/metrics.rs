//! The server's metrics, in the OpenMetrics text format the Kafka job's `/metrics` uses
//! (the `prometheus-client` crate): requests by route and status, latency histograms by
//! route, errors by reason, events predicted and learned, and the model answering (its
//! version, generation and age).

use super::served_model::ServedModel;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A request's route and status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The route (`/v1/predict`, ...; `other` for unknown paths).
    pub route: String,
    /// The HTTP status code.
    pub status: u16,
}

/// A route.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    /// The route.
    pub route: String,
}

/// A refusal's reason.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    /// The reason (the error body's `reason`).
    pub reason: String,
}

type LatencyFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// The server's counters, shared by the request handlers and the follower.
#[derive(Debug)]
pub struct ServeMetrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    errors: Family<ReasonLabels, Counter>,
    /// Events predicted.
    pub predicted: Counter,
    /// Records taken by `/v1/learn` (labeled events and feedback).
    pub learn_records: Counter,
    /// Models loaded after the first (`--follow`).
    pub reloads: Counter,
    /// Newer files refused (damaged or incompatible): the old model kept serving.
    pub reload_failures: Counter,
    /// Models saved (`--save-model`).
    pub saves: Counter,
    model_version: Gauge<i64>,
    model_generation: Gauge<i64>,
    model_age: Gauge<f64, AtomicU64>,
    model_loaded: Gauge<f64, AtomicU64>,
}

/// Latency buckets: 25 µs to about 1.6 s, doubling.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(25e-6, 2.0, 17))
}

impl Default for ServeMetrics {
    fn default() -> Self {
        let mut m = ServeMetrics {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            errors: Family::default(),
            predicted: Counter::default(),
            learn_records: Counter::default(),
            reloads: Counter::default(),
            reload_failures: Counter::default(),
            saves: Counter::default(),
            model_version: Gauge::default(),
            model_generation: Gauge::default(),
            model_age: Gauge::default(),
            model_loaded: Gauge::default(),
            registry: Registry::default(),
        };
        let mut registry = Registry::default();
        m.register(&mut registry);
        m.registry = registry;
        m
    }
}

impl ServeMetrics {
    /// Registers every metric in `r`.
    fn register(&self, r: &mut Registry) {
        r.register(
            "flowboost_serve_requests",
            "HTTP requests answered, by route and status",
            self.requests.clone(),
        );
        r.register(
            "flowboost_serve_request_duration_seconds",
            "Time from a request's head read to its answer, by route",
            self.latency.clone(),
        );
        r.register(
            "flowboost_serve_errors",
            "Requests refused, by reason (the Kafka job's dead-letter reasons for records)",
            self.errors.clone(),
        );
        r.register(
            "flowboost_serve_predictions",
            "Events predicted",
            self.predicted.clone(),
        );
        r.register(
            "flowboost_serve_learn_records",
            "Records taken by /v1/learn: labeled events and feedback",
            self.learn_records.clone(),
        );
        r.register(
            "flowboost_serve_model_reloads",
            "Newer models loaded by --follow",
            self.reloads.clone(),
        );
        r.register(
            "flowboost_serve_model_reload_failures",
            "Newer model files refused (damaged or incompatible); the old model kept serving",
            self.reload_failures.clone(),
        );
        r.register(
            "flowboost_serve_model_saves",
            "Models saved",
            self.saves.clone(),
        );
        r.register(
            "flowboost_serve_model_version",
            "Records the answering model has learned from (all its keys together)",
            self.model_version.clone(),
        );
        r.register(
            "flowboost_serve_model_generation",
            "The answering model's count among the models loaded (1: the first)",
            self.model_generation.clone(),
        );
        r.register(
            "flowboost_serve_model_age_seconds",
            "Seconds since the answering model's file was written",
            self.model_age.clone(),
        );
        r.register(
            "flowboost_serve_model_loaded_timestamp_seconds",
            "When the answering model was loaded (Unix time)",
            self.model_loaded.clone(),
        );
    }

    /// Counts a request answered on `route` with `status` in `elapsed`.
    pub fn observe(&self, route: &str, status: u16, elapsed: Duration) {
        let route = route.to_string();
        self.requests
            .get_or_create(&RequestLabels {
                route: route.clone(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels { route })
            .observe(elapsed.as_secs_f64());
    }

    /// Counts a refusal for `reason`.
    pub fn error(&self, reason: &str) {
        self.errors
            .get_or_create(&ReasonLabels {
                reason: reason.to_string(),
            })
            .inc();
    }

    /// The exposition, with the gauges of `model` (the one answering now).
    pub fn exposition(&self, model: &ServedModel) -> String {
        let secs = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        self.model_version
            .set(i64::try_from(model.learned()).unwrap_or(i64::MAX));
        self.model_generation
            .set(i64::try_from(model.generation()).unwrap_or(i64::MAX));
        let age = model
            .modified()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        self.model_age.set(age);
        self.model_loaded.set(secs(model.loaded()));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
