use super::args::{DataArgs, EngineArgs, ModelArgs};
use crate::eval::{EvalSpec, Protocol, evaluate};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// Options of `flowboost eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub data: DataArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub engine: EngineArgs,

    /// The protocol: prequential (test-then-train on every example), holdout (train on
    /// --data, then score --test while still learning), last20 (score the final 20% of one
    /// stream). Default: holdout with --test, else prequential.
    #[arg(long, value_parser = parse_protocol)]
    pub protocol: Option<Protocol>,

    /// Shuffle each file with this seed before streaming it.
    #[arg(long, value_name = "SEED")]
    pub shuffle: Option<u64>,

    /// Write one JSON line per evaluated example (id and prediction) to this file.
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,

    /// Print the report as one JSON object (the last line of stdout).
    #[arg(long)]
    pub json: bool,
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    s.parse()
}

/// Runs `flowboost eval`.
pub fn run(args: EvalArgs) -> Result<(), String> {
    let data = Arc::new(args.data.open(args.model.seed)?);
    let protocol = args.protocol.unwrap_or(if args.data.test.is_some() {
        Protocol::Holdout
    } else {
        Protocol::Prequential
    });
    let config = args.model.booster(data.schema().task);
    let engine = args.engine.engine()?;
    let spec = EvalSpec {
        protocol,
        shuffle: args.shuffle,
        predictions: args.predictions.clone(),
        progress: !args.json,
    };
    let report = evaluate(data, &config, &spec, &engine)?;
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
