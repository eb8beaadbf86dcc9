use super::args::{EngineArgs, ModelArgs};
use crate::eval::FeedbackOptions;
use crate::eval::{ReplaySpec, replay_clicks};
use clap::Args;
use flowboost_operators::boosters::Algorithm;
use flowboost_operators::data::Task;
use std::path::PathBuf;

/// Options of `flowboost replay-clicks`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The click log: an Open Bandit Dataset `<campaign>.csv` or `.csv.gz` (columns found
    /// by name: timestamp, item_id, position, click, propensity_score, user_feature_*,
    /// user-item_affinity_*).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,

    /// The number of items; default: read from item_context.csv beside the log.
    #[arg(long, value_name = "N")]
    pub items: Option<usize>,

    /// One-hot slots per hashed user feature, given to values in order of appearance
    /// (further values share the last slot).
    #[arg(long, default_value_t = 32, value_name = "C")]
    pub categories: usize,

    /// Leave the user-item affinity columns out of the features.
    #[arg(long)]
    pub no_affinity: bool,

    /// The logged feedback of an impression is learned D impressions after its
    /// prediction (0: right after it, before the next impression is predicted).
    #[arg(long, default_value_t = 0, value_name = "D")]
    pub feedback_delay: u64,

    /// An impression waits in the feedback join at most this many epochs for its feedback
    /// (about this many impressions: each feedback record ends an epoch). Default: no
    /// limit.
    #[arg(long, value_name = "EPOCHS")]
    pub pending_ttl: Option<u64>,

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
    if args.model.k.len() > 1 {
        return Err("replay-clicks takes one --k".into());
    }
    if !matches!(
        args.model.algo,
        Some(Algorithm::TopkBbm | Algorithm::TopkAdaptive)
    ) {
        return Err("replay-clicks needs --algo topk-bbm or --algo topk-adaptive".into());
    }
    let config = args.model.booster(Task::Multilabel);
    let spec = ReplaySpec {
        data: args.data,
        items: args.items,
        categories: args.categories,
        affinity: !args.no_affinity,
        feedback: FeedbackOptions {
            delay: args.feedback_delay,
            ttl: args.pending_ttl,
        },
        epoch_size: args.engine.batch.max(1),
    };
    let report = replay_clicks(&spec, &config, &args.engine.engine()?)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
