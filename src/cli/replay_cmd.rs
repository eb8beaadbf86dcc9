use super::args::{EngineArgs, ModelArgs};
use super::named_arg::named;
use super::output;
use crate::eval::FeedbackOptions;
use crate::eval::{ClickLog, ReplaySpec, replay_clicks, write_simulated_log};
use clap::Args;
use flowboost_connectors::generators::clicks::{ClickSimConfig, LoggingPolicy};
use flowboost_operators::boosters::Algorithm;
use flowboost_operators::data::Task;
use std::path::PathBuf;

/// The click simulator's options (`replay-clicks --generator clicks`, `simulate-clicks`).
#[derive(Debug, Args)]
pub struct SimulatorArgs {
    /// Simulated logs: the number of impressions, 1 to 1000000000.
    #[arg(long, default_value_t = 100_000, value_name = "N", value_parser = super::limits::impressions, allow_negative_numbers = true)]
    pub impressions: u64,

    /// Simulated logs: the logging policy, uniform (a uniformly random slate) or bts
    /// (Thompson-sampling-like: a Plackett-Luce ranking by the items' posterior click
    /// rates, refreshed every 1,000 impressions; exact propensities).
    #[arg(hide_possible_values = true, long, default_value = "uniform", value_name = "POLICY", value_parser = named::<LoggingPolicy>())]
    pub logging_policy: LoggingPolicy,

    /// Simulated logs: the mean delay of a click, in impressions (geometric; 0: none).
    #[arg(long, default_value_t = 0.0, value_name = "D")]
    pub click_delay: f64,

    /// Simulated logs: the relevance of an average item to an average user, in (0, 1).
    #[arg(long, default_value_t = 0.03, value_name = "R")]
    pub base_relevance: f64,

    /// Simulated logs: the simulator's seed [default: --seed, or 1].
    #[arg(long, value_name = "S")]
    pub sim_seed: Option<u64>,
}

impl SimulatorArgs {
    /// The simulator's configuration for `items` items, `slots` positions and `seed`
    /// (unless --sim-seed).
    pub fn config(&self, items: usize, slots: usize, seed: u64) -> Result<ClickSimConfig, String> {
        let mut c =
            ClickSimConfig::new(self.impressions, self.sim_seed.unwrap_or(seed)).with_slots(slots);
        c.items = items;
        c.logging = self.logging_policy;
        c.click_delay = self.click_delay;
        c.base_relevance = self.base_relevance;
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }
}

/// Options of `flowboost replay-clicks`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The click log: an Open Bandit Dataset `<campaign>.csv` or `.csv.gz` (columns found
    /// by name: timestamp, item_id, position, click, propensity_score, user_feature_*,
    /// user-item_affinity_*; a log written by `flowboost simulate-clicks` has its truth in
    /// the simulator.json beside it). Without --data, --generator clicks.
    #[arg(long, value_name = "FILE", required_unless_present = "generator")]
    pub data: Option<PathBuf>,

    /// Stream a built-in generator instead of a file: clicks (the click simulator with
    /// known truth; see --impressions, --items, --logging-policy, --click-delay).
    #[arg(hide_possible_values = true, long, value_name = "NAME", conflicts_with = "data", value_parser = ["clicks"])]
    pub generator: Option<String>,

    /// The number of items (the labels), 2 to 65536; for a file, default: read from
    /// item_context.csv beside the log; for the simulator, default 46.
    #[arg(long, value_name = "N", value_parser = super::limits::items, allow_negative_numbers = true)]
    pub items: Option<usize>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub simulator: SimulatorArgs,

    /// One-hot slots per hashed user feature, given to values in order of appearance
    /// (further values share the last slot); 1 to 65536, and the user features times C
    /// (plus the affinities) at most 1048576 features.
    #[arg(long, default_value_t = 32, value_name = "C", value_parser = super::limits::categories, allow_negative_numbers = true)]
    pub categories: usize,

    /// Leave the user-item affinity columns out of the features.
    #[arg(long)]
    pub no_affinity: bool,

    /// The logged feedback of an impression is learned D impressions after its
    /// prediction (0: right after it, before the next impression is predicted); clicks
    /// delayed longer than that (simulated logs) are not learned.
    #[arg(long, default_value_t = 0, value_name = "D")]
    pub feedback_delay: u64,

    /// An impression waits in the feedback join at most this many epochs for its feedback
    /// (without --batch-feedback about this many impressions: each feedback record ends an
    /// epoch), and the join remembers a joined impression this long (to tell a repeated
    /// feedback record from an unmatched one). Default: twice the most epochs that can
    /// pass between an impression and its feedback record at this --feedback-delay and
    /// --batch (no feedback is late, and the join's memory follows the delay, not the
    /// length of the log). At least 1.
    #[arg(long, value_name = "EPOCHS", value_parser = super::limits::positive_u64, allow_negative_numbers = true)]
    pub pending_ttl: Option<u64>,

    /// Feedback records do not end epochs: the learning passes of an epoch's feedback
    /// enter the chain at the start of the next epoch, so a feedback delay of D
    /// impressions becomes D to about D + --batch / 2. Far fewer epochs: the dataflow
    /// engine replays several times faster (both engines still give the same report).
    #[arg(long)]
    pub batch_feedback: bool,

    /// Write every logged row with the booster's top k and the reward model's click
    /// probabilities (CSV) to this file, e.g. to check the estimates with another tool
    /// (scripts/obp_check.py).
    #[arg(long, value_name = "FILE")]
    pub dump_rows: Option<PathBuf>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub engine: EngineArgs,

    /// Print the report as one JSON object (the last line of stdout).
    #[arg(long)]
    pub json: bool,
}

/// Runs `flowboost replay-clicks`.
pub fn run(args: ReplayArgs) -> Result<(), String> {
    if args.model.options.k.len() > 1 {
        return Err("replay-clicks takes one --k".into());
    }
    if !matches!(
        args.model.algo,
        Some(Algorithm::TopkBbm | Algorithm::TopkAdaptive)
    ) {
        return Err("replay-clicks needs --algo topk-bbm or --algo topk-adaptive".into());
    }
    let config = args.model.booster(Task::Multilabel);
    let log = match (&args.data, &args.generator) {
        (Some(path), _) => ClickLog::File(path.clone()),
        (None, Some(_)) => ClickLog::Simulated(args.simulator.config(
            args.items.unwrap_or(46),
            config.topk.k,
            args.model.seed(),
        )?),
        (None, None) => return Err("give --data FILE or --generator clicks".into()),
    };
    let spec = ReplaySpec {
        log,
        items: args.items,
        categories: args.categories,
        affinity: !args.no_affinity,
        feedback: FeedbackOptions {
            delay: args.feedback_delay,
            ttl: args.pending_ttl,
        },
        epoch_size: args.engine.batch.max(1),
        batch_feedback: args.batch_feedback,
        dump_rows: args.dump_rows,
    };
    let engine = args.engine.engine()?;
    crate::eval::stop::stop_on_signals()?;
    let report = replay_clicks(&spec, &config, &engine)?;
    crate::eval::stop::log_if_stopped("replay-clicks");
    if args.json {
        output::print_json(&report)?;
    } else {
        output::print(&report.to_text())?;
    }
    Ok(())
}

/// Options of `flowboost simulate-clicks`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The folder to write clicks.csv (or clicks.csv.gz), item_context.csv and
    /// simulator.json into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,

    /// The number of items, 2 to 65536.
    #[arg(long, default_value_t = 46, value_name = "N", value_parser = super::limits::items, allow_negative_numbers = true)]
    pub items: usize,

    /// The number of positions shown per impression, 1 to the items.
    #[arg(long, default_value_t = 3, value_name = "K", value_parser = super::limits::labels, allow_negative_numbers = true)]
    pub slots: usize,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub simulator: SimulatorArgs,

    /// The seed.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,

    /// Write clicks.csv.gz (gzip) instead of clicks.csv.
    #[arg(long)]
    pub gzip: bool,
}

/// Runs `flowboost simulate-clicks`: prints a JSON summary of what it wrote.
pub fn simulate(args: SimulateArgs) -> Result<(), String> {
    let config = args.simulator.config(args.items, args.slots, args.seed)?;
    let summary = write_simulated_log(&config, &args.output, args.gzip)?;
    output::print_json(&summary)
}
