//! The `flowboost` command line.

pub mod args;
mod eval_cmd;
mod inspect_cmd;
pub mod job_file;
pub mod kafka_tools;
pub mod limits;
mod local_cluster;
pub mod model_io;
pub(crate) mod named_arg;
pub mod output;
mod predict_cmd;
mod prediction_line;
pub mod registry_args;
mod replay_cmd;
mod run_cmd;
mod serve_cmd;

pub use eval_cmd::EvalArgs;
pub use inspect_cmd::InspectArgs;
pub use predict_cmd::PredictArgs;
pub use replay_cmd::{ReplayArgs, SimulateArgs, SimulatorArgs};
pub use run_cmd::RunArgs;
pub use serve_cmd::ServeArgs;

use clap::{Parser, Subcommand};

/// flowboost: online boosting as a streaming dataflow.
#[derive(Debug, Parser)]
#[command(name = "flowboost", version, about, long_about = None, args_override_self = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate an online learner on a dataset file or a built-in generator, with the
    /// papers' protocols (prequential, holdout, last20).
    Eval(Box<EvalArgs>),
    /// The main job: source (a dataset file or the built-in generator) -> the boosting
    /// dataflow on --workers threads -> predictions as JSON lines (stdout or --output), with
    /// progressive metrics on stderr.
    Run(Box<RunArgs>),
    /// Replay a log of clicks (Open Bandit Dataset, or the click simulator): a top-k
    /// booster learns a ranking of the items from the user features with the logged
    /// feedback, and the click-through of its top k is estimated off-policy (IPW, SNIPW,
    /// doubly robust, with 95% intervals) against the logged policy's, beside the true
    /// click-through on simulated logs.
    ReplayClicks(Box<ReplayArgs>),
    /// Write a simulated click log with known truth (the click simulator: users, items, a
    /// position-based click model, click delays, a uniform or bts logging policy) in the
    /// Open Bandit Dataset's format: clicks.csv, item_context.csv, simulator.json.
    SimulateClicks(Box<SimulateArgs>),
    /// Predict with a saved model (nothing is learned): a dataset file or a built-in
    /// generator in, JSON lines out.
    Predict(Box<PredictArgs>),
    /// Describe a model file: algorithm and options, schema, examples learned, every
    /// stage's weight and size, memory and file size.
    Inspect(InspectArgs),
    /// Serve a model over HTTP: predictions (`POST /v1/predict`), learning (`POST
    /// /v1/learn`, with --learn), the model (`GET /v1/model`), health and metrics; it can
    /// follow the model a streaming job rewrites (--follow). See docs/serving.md.
    Serve(Box<ServeArgs>),
    /// Kafka tools: produce a generator's stream as JSON events, read a topic (with
    /// latency from the events' timestamps), create a topic.
    Kafka(kafka_tools::KafkaToolArgs),
}

/// Runs the parsed command line; errors come back as messages (exit code 2).
pub fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Eval(args) => eval_cmd::run(*args),
        Command::Run(args) => run_cmd::run(*args),
        Command::Kafka(args) => kafka_tools::run(args),
        Command::ReplayClicks(args) => replay_cmd::run(*args),
        Command::SimulateClicks(args) => replay_cmd::simulate(*args),
        Command::Predict(args) => predict_cmd::run(*args),
        Command::Inspect(args) => inspect_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(*args),
    }
}
