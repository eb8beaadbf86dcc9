use super::limits;
use crate::serve::{DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT, Exploration, ServeOptions};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Options of `flowboost serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The model file to serve (any model file: `eval`, `run` or the Kafka job's, keyed or
    /// not). With --follow and without --model, the newest model of the followed path.
    #[arg(long, value_name = "FILE", required_unless_present = "follow")]
    pub model: Option<PathBuf>,

    /// The address to listen on (`127.0.0.1:0`: a free port, logged).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub addr: String,

    /// The largest request body taken, in bytes: a larger one is refused (413) before it
    /// is read whole. 1 to 1073741824 (1 GiB).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES, value_parser = limits::line_bytes)]
    pub max_body_bytes: usize,

    /// How long a request's head, and then its body, may take to arrive: a client slower
    /// than that is disconnected (head) or answered 408 (body); idle keep-alive connections
    /// are closed after as long (the default is hyper's own).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_READ_TIMEOUT, value_parser = limits::seconds)]
    pub read_timeout: f64,

    /// Learn: `POST /v1/learn` takes labeled events and feedback by id for the events
    /// predicted earlier (which then wait for it, as in the Kafka job's feedback join).
    #[arg(long)]
    pub learn: bool,

    /// Save the model to this file when the server stops (SIGTERM, SIGINT), and every
    /// --save-every seconds (needs --learn).
    #[arg(long, value_name = "FILE")]
    pub save_model: Option<PathBuf>,

    /// Save the model every this many seconds too.
    #[arg(long, value_name = "SECONDS", value_parser = limits::seconds)]
    pub save_every: Option<f64>,

    /// Follow a model a job rewrites: a model file (a job's --save-model with
    /// --save-every), or a Kafka job's --checkpoint-dir (its newest checkpoint). Newer
    /// models are loaded off the request path and swapped in; a damaged or incompatible
    /// one is refused and logged, the old model serving on.
    #[arg(long, value_name = "PATH")]
    pub follow: Option<PathBuf>,

    /// How often to look at --follow's path, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = limits::seconds)]
    pub follow_every: f64,

    /// How `POST /v1/rank` draws the shown slate from a top-k model's scores: `greedy`
    /// (its top k), `epsilon-greedy:E` (a uniformly random slate with probability E) or
    /// `softmax:T` (a Plackett-Luce draw with weights exp((score - max) / T), floored at
    /// 1e-6); each shown item comes
    /// with its exact propensity at its position.
    #[arg(long, value_name = "POLICY", default_value = "greedy")]
    pub explore: Exploration,

    /// Seeds the draws of --explore, with each request's id (the same id and model give
    /// the same slate).
    #[arg(long, value_name = "SEED", default_value_t = 0)]
    pub explore_seed: u64,

    /// The server's worker threads, 1 to 1024 [default: one per core].
    #[arg(long, value_name = "N", value_parser = limits::serve_threads)]
    pub threads: Option<usize>,
}

/// Runs `flowboost serve`.
pub fn run(args: ServeArgs) -> Result<(), String> {
    crate::serve::run(ServeOptions {
        model: args.model,
        addr: args.addr,
        max_body_bytes: args.max_body_bytes,
        read_timeout: Duration::from_secs_f64(args.read_timeout),
        learn: args.learn,
        save_model: args.save_model,
        save_every: args.save_every.map(Duration::from_secs_f64),
        follow: args.follow,
        follow_every: Duration::from_secs_f64(args.follow_every),
        threads: args.threads,
        explore: args.explore,
        explore_seed: args.explore_seed,
    })
}
