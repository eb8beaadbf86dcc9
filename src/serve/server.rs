//! The server: the runtime, the listener, the follower and the saver, and the graceful
//! stop (SIGTERM or SIGINT: stop taking connections, finish the requests in flight, save
//! the model if `--save-model` asked for it, exit 0; a second signal exits at once).

use super::exploration::Exploration;
use super::follow::{FileStamp, Follower};
use super::metrics::ServeMetrics;
use super::model_slot::ModelSlot;
use super::rank::RankPolicy;
use super::routes::{ServeState, router};
use super::served_model::ServedModel;
use crate::eval::stop::{stop_on_signals, stop_requested};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The largest request body by default: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;

/// How long a request's head, and then its body, may take to arrive by default.
pub const DEFAULT_READ_TIMEOUT: f64 = 30.0;

/// How `flowboost serve` runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The model file to serve (without it, the newest of `follow`).
    pub model: Option<PathBuf>,
    /// The address to listen on (`127.0.0.1:0`: a free port, logged).
    pub addr: String,
    /// The largest request body taken, in bytes.
    pub max_body_bytes: usize,
    /// How long a request's head, and then its body, may take to arrive.
    pub read_timeout: Duration,
    /// Learn from `/v1/learn` (and keep predicted events waiting for their feedback).
    pub learn: bool,
    /// Where to save the model (on a graceful stop, and every `save_every`).
    pub save_model: Option<PathBuf>,
    /// How often to save the model while serving.
    pub save_every: Option<Duration>,
    /// A model file a job rewrites, or a Kafka job's checkpoint directory, to follow.
    pub follow: Option<PathBuf>,
    /// How often to look at `follow`.
    pub follow_every: Duration,
    /// The runtime's worker threads (default: one per core).
    pub threads: Option<usize>,
    /// How `/v1/rank` draws its slates (top-k models).
    pub explore: Exploration,
    /// Seeds the draws of `/v1/rank`, with each request's id.
    pub explore_seed: u64,
}

/// Runs the server until SIGTERM or SIGINT.
pub fn run(options: ServeOptions) -> Result<(), String> {
    if options.learn && options.follow.is_some() {
        return Err("--learn and --follow exclude each other: a followed model is replaced by the job's, and what serve learned would be lost".into());
    }
    if options.save_model.is_some() && !options.learn {
        return Err("--save-model needs --learn (a model that learns nothing is the file it was loaded from)".into());
    }
    if options.save_every.is_some() && options.save_model.is_none() {
        return Err("--save-every needs --save-model".into());
    }
    if let Some(path) = &options.save_model {
        crate::model::check_save_path(path).map_err(|e| format!("--save-model {e}"))?;
    }
    let path = match (&options.model, &options.follow) {
        (Some(model), _) => model.clone(),
        (None, Some(follow)) => Follower::newest(follow)?,
        (None, None) => return Err("give --model FILE (or --follow PATH)".into()),
    };
    let served = ServedModel::load(&path, 1)?;
    tracing::info!(
        "flowboost: serve: {} loaded: {} record(s) learned{}",
        path.display(),
        served.learned(),
        served
            .keys()
            .map(|k| format!(", {} key(s)", k.len()))
            .unwrap_or_default()
    );
    match served.top_k() {
        Some(k) => options.explore.validate(served.schema().num_labels(), k)?,
        None if options.explore != Exploration::Greedy => {
            return Err(format!(
                "--explore {}: the model is not a top-k booster (--algo topk-bbm or topk-adaptive): only top-k models rank",
                options.explore
            ));
        }
        None => {}
    }
    stop_on_signals()?;
    let state = Arc::new(ServeState {
        slot: ModelSlot::new(served),
        metrics: ServeMetrics::default(),
        max_body_bytes: options.max_body_bytes,
        read_timeout: options.read_timeout,
        learn: options.learn,
        rank: RankPolicy {
            exploration: options.explore,
            seed: options.explore_seed,
        },
        ready: AtomicBool::new(true),
    });
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("flowboost-serve");
    if let Some(n) = options.threads {
        builder.worker_threads(n.max(1));
    }
    let runtime = builder
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    runtime.block_on(serve(&options, state.clone(), FileStamp::of(&path)))?;
    if let Some(path) = &options.save_model {
        save(&state, path)?;
    }
    tracing::info!("flowboost: serve: stopped");
    Ok(())
}

/// Saves the answering model to `path`.
fn save(state: &ServeState, path: &std::path::Path) -> Result<(), String> {
    let model = state.slot.current();
    model
        .save(path)
        .map_err(|e| format!("saving the model to {}: {e}", path.display()))?;
    state.metrics.saves.inc();
    tracing::info!(
        "flowboost: serve: model saved to {} ({} record(s) learned)",
        path.display(),
        model.learned()
    );
    Ok(())
}

async fn serve(
    options: &ServeOptions,
    state: Arc<ServeState>,
    loaded: Option<FileStamp>,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(&options.addr)
        .await
        .map_err(|e| format!("--addr {}: {e}", options.addr))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("--addr {}: {e}", options.addr))?;
    tracing::info!("flowboost: serve: listening on http://{local}");
    if let Some(target) = options.follow.clone() {
        tokio::spawn(follow(
            Follower::new(&target, loaded),
            state.clone(),
            options.follow_every,
        ));
    }
    if let (Some(path), Some(every)) = (options.save_model.clone(), options.save_every) {
        tokio::spawn(save_every(path, every, state.clone()));
    }
    // TCP_NODELAY on every connection: without it a response written while the previous
    // one is unacknowledged (pipelined requests, a body in several writes) waits for the
    // client's delayed ACK, up to 40 ms.
    super::accept::serve(
        listener,
        router(state.clone()),
        options.read_timeout,
        DRAIN,
        stopped(state),
    )
    .await;
    Ok(())
}

/// How long a stop waits for the requests in flight.
const DRAIN: Duration = Duration::from_secs(30);

/// Ends when a stop is asked for (and marks the server not ready).
async fn stopped(state: Arc<ServeState>) {
    while !stop_requested() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    state.ready.store(false, Ordering::Relaxed);
    tracing::info!("flowboost: serve: stopping: finishing the requests in flight");
}

/// Looks for a newer model every `every`, loading it off the request path.
async fn follow(mut follower: Follower, state: Arc<ServeState>, every: Duration) {
    while !stop_requested() {
        tokio::time::sleep(every).await;
        let shared = state.clone();
        let looked = tokio::task::spawn_blocking(move || {
            let r = follower.poll(&shared.slot);
            (follower, r)
        })
        .await;
        let Ok((back, result)) = looked else {
            tracing::warn!("flowboost: serve: --follow: the loading task failed");
            return;
        };
        follower = back;
        match result {
            Ok(false) => {}
            Ok(true) => {
                state.metrics.reloads.inc();
                let model = state.slot.current();
                tracing::info!(
                    "flowboost: serve: now serving {} (generation {}, {} record(s) learned)",
                    model.path().display(),
                    model.generation(),
                    model.learned()
                );
            }
            Err(e) => {
                state.metrics.reload_failures.inc();
                tracing::warn!(
                    "flowboost: serve: --follow: refused: {e}; the old model keeps serving"
                );
            }
        }
    }
}

/// Saves the model every `every`.
async fn save_every(path: PathBuf, every: Duration, state: Arc<ServeState>) {
    while !stop_requested() {
        tokio::time::sleep(every).await;
        let shared = state.clone();
        let target = path.clone();
        match tokio::task::spawn_blocking(move || save(&shared, &target)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("flowboost: serve: {e}"),
            Err(e) => tracing::warn!("flowboost: serve: saving: {e}"),
        }
    }
}
