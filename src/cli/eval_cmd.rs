use super::args::{DataArgs, EngineArgs, ModelArgs};
use crate::eval::{EvalReport, EvalSpec, GridPoint, Protocol, evaluate};
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

    /// Run once per gamma of this comma-separated list (e.g. 0.2,0.1,0.01,0.001) and report
    /// each; the last report is the best gamma's, with the whole grid in `gamma_grid`.
    #[arg(long, value_delimiter = ',', value_name = "G,G,...")]
    pub gamma_grid: Vec<f64>,

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
    let mut config = args.model.booster(data.schema().task);
    let engine = args.engine.engine()?;
    let spec = EvalSpec {
        protocol,
        shuffle: args.shuffle,
        predictions: args.predictions.clone(),
        progress: !args.json,
    };
    let report = if args.gamma_grid.is_empty() {
        evaluate(data, &config, &spec, &engine)?
    } else {
        let mut best: Option<EvalReport> = None;
        let mut grid = Vec::new();
        for &gamma in &args.gamma_grid {
            config.gamma = gamma;
            let mut run_spec = spec.clone();
            run_spec.predictions = None;
            let r = evaluate(data.clone(), &config, &run_spec, &engine)?;
            let (metric, value, higher) = r.headline();
            grid.push(GridPoint {
                gamma,
                metric: metric.to_string(),
                value,
                seconds: r.seconds,
            });
            if args.json {
                println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
            } else {
                println!("gamma {gamma}: {metric} {value:.4} ({:.2} s)", r.seconds);
            }
            let better = match &best {
                None => true,
                Some(b) => {
                    let (_, bv, _) = b.headline();
                    if higher { value > bv } else { value < bv }
                }
            };
            if better {
                best = Some(r);
            }
        }
        let mut best = best.ok_or("--gamma-grid needs at least one value")?;
        best.gamma_grid = Some(grid);
        best
    };
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
