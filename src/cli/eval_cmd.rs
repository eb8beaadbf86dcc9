use super::args::{DataArgs, EngineArgs, ModelArgs};
use super::model_io::{ModelIoArgs, seed};
use super::named_arg::named;
use super::output;
use crate::eval::FeedbackOptions;
use crate::eval::{EvalReport, EvalSpec, GridPoint, Protocol, Series, evaluate, write_svg};
use clap::Args;
use flowboost_operators::thresholding::FeatureScaling;
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

    #[command(flatten)]
    #[allow(missing_docs)]
    pub model_io: ModelIoArgs,

    /// The protocol: prequential (test-then-train on every example), holdout (train on
    /// --data, then score --test while still learning), last20 (score the final 20% of one
    /// stream). Default: holdout with --test, else prequential.
    #[arg(hide_possible_values = true, long, value_parser = named::<Protocol>())]
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

    /// Feedback comes D events after the prediction: every event is predicted with its
    /// label hidden and learned from when its label (or, for top-k boosters, the relevance
    /// of the shown labels) arrives. Top-k boosters always learn from top-k feedback
    /// (default delay 0: right after the prediction).
    #[arg(long, value_name = "D")]
    pub feedback_delay: Option<u64>,

    /// An event waits in the feedback join at most this many epochs for its feedback (and
    /// feedback at most this many for its event); then it expires (counted). The join
    /// also remembers a joined event this long (to tell a repeated feedback record from an
    /// unmatched one). With feedback, every feedback record ends an epoch, so an epoch is
    /// about one event. Default: twice the most epochs that can pass between an event and
    /// its feedback at this --feedback-delay and --batch (nothing expires, and the join's
    /// memory follows the delay, not the stream's length); a --resume keeps its model's.
    /// At least 1.
    #[arg(long, value_name = "EPOCHS", value_parser = super::limits::positive_u64, allow_negative_numbers = true)]
    pub pending_ttl: Option<u64>,

    /// Stream the training file this many times (holdout protocol), as the top-k paper
    /// did; each pass is reshuffled when --shuffle is given. 1 to 10000.
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = super::limits::loops, allow_negative_numbers = true)]
    pub loops: usize,

    /// Write the learning curve (the running mean loss over the whole stream: weighted
    /// rank loss for multi-label, 0-1 loss otherwise) as an SVG picture, one line per run
    /// (per k of --k, per gamma of --gamma-grid).
    #[arg(long, value_name = "FILE.svg")]
    pub curve: Option<PathBuf>,

    /// With --curve: draw each line as the mean of this many runs (seeds S, S+1, ...; the
    /// --shuffle seed moves along with it) with a band of one standard deviation, as the
    /// top-k paper's Figure 1 (10 runs). The reports are those of the first seed. 1 to
    /// 1000 [default: 1].
    #[arg(long, value_name = "R", value_parser = super::limits::curve_runs, allow_negative_numbers = true)]
    pub curve_runs: Option<u64>,

    /// Holdout: freeze the model after the training file: the test file is predicted with
    /// its labels hidden from the model (the thresholding paper's protocol); with
    /// --feedback-delay, the training file's feedback still due is learned before the test
    /// file, as at the end of a stream. Default: the model keeps learning on the test file.
    #[arg(long)]
    pub frozen_test: bool,

    /// Feature scaling fitted on the training file (--data): none, or min-max (dense
    /// features to [0, 1] by the training minimum and maximum; sparse ones divided by
    /// their maximum absolute value, so they stay sparse).
    #[arg(hide_possible_values = true, long, default_value = "none", value_parser = named::<FeatureScaling>())]
    pub scale: FeatureScaling,

    /// Print the report as one JSON object (the last line of stdout).
    #[arg(long)]
    pub json: bool,
}

/// Runs `flowboost eval`.
pub fn run(args: EvalArgs) -> Result<(), String> {
    // Options that would be ignored are errors.
    if let (Some(r), None) = (args.curve_runs, &args.curve) {
        return Err(format!(
            "--curve-runs {r} needs --curve FILE.svg (the runs are averaged into its lines)"
        ));
    }
    let curve_runs = args.curve_runs.unwrap_or(1);
    let start = args.model_io.load()?;
    let data = Arc::new(args.data.open(seed(&args.model, start.as_deref()))?);
    // The signals stop gracefully once the data are open: before, while a reader settles
    // the schema (a pass over the files, endless on an endless pipe), nothing is learned
    // yet, and SIGTERM or SIGINT end the process at once as by default.
    crate::eval::stop::stop_on_signals()?;
    let protocol = match (args.protocol, &args.data.test) {
        (None, Some(_)) => Protocol::Holdout,
        (None, None) => Protocol::Prequential,
        (Some(p), Some(_)) if p != Protocol::Holdout => {
            return Err(format!(
                "--test implies --protocol holdout, not {p} (leave out --test, or the protocol)"
            ));
        }
        (Some(p), _) => p,
    };
    let (base, plan) = args.model_io.plan(start, &args.model, data.schema())?;
    if !args.gamma_grid.is_empty()
        && !base
            .algorithm
            .spec()
            .reads(flowboost_operators::boosters::ModelOption::Gamma)
    {
        return Err(format!(
            "--gamma-grid applies to the optimal boosters (those that read --gamma), not {}",
            base.algorithm
        ));
    }
    let one_run = args.gamma_grid.len() <= 1 && args.model.options.k.len() <= 1 && curve_runs <= 1;
    if !one_run && (plan.start.is_some() || plan.save.is_some()) {
        return Err(
            "--save-model and --load-model take one run (not --gamma-grid, several --k or --curve-runs)"
                .into(),
        );
    }
    let engine = args.engine.engine()?;
    if let (Some(ttl), None) = (args.pending_ttl, args.feedback_delay)
        && !base.algorithm.is_topk()
    {
        return Err(format!(
            "--pending-ttl {ttl} needs --feedback-delay D (without delayed feedback nothing waits in the feedback join; top-k boosters always have it)"
        ));
    }
    let feedback = args.feedback_delay.map(|delay| FeedbackOptions {
        delay,
        ttl: args.pending_ttl,
    });
    let feedback = match (feedback, base.algorithm.is_topk()) {
        (None, true) => Some(FeedbackOptions {
            delay: 0,
            ttl: args.pending_ttl,
        }),
        (f, _) => f,
    };
    let spec = EvalSpec {
        protocol,
        shuffle: args.shuffle,
        predictions: args.predictions.clone(),
        progress: !args.json,
        feedback,
        loops: args.loops,
        curve: args.curve.is_some(),
        frozen_test: args.frozen_test,
        scale: args.scale == FeatureScaling::MinMax,
        model: plan,
        epoch_size: args.engine.batch,
    };
    let ks: Vec<Option<usize>> = if base.algorithm.is_topk() && args.model.options.k.len() > 1 {
        args.model.options.k.iter().map(|&k| Some(k)).collect()
    } else {
        vec![None]
    };
    let gammas: Vec<Option<f64>> = if args.gamma_grid.is_empty() {
        vec![None]
    } else {
        args.gamma_grid.iter().map(|&g| Some(g)).collect()
    };
    let runs = ks.len() * gammas.len();
    let mut best: Option<EvalReport> = None;
    let mut grid = Vec::new();
    let mut series = Vec::new();
    for &k in &ks {
        for &gamma in &gammas {
            // After a stop (SIGTERM, SIGINT), the runs still to come are not started.
            if best.is_some() && crate::eval::stop::stop_requested() {
                break;
            }
            let mut config = base.clone();
            if let Some(k) = k {
                config.topk.k = k;
            }
            if let Some(g) = gamma {
                config.gamma = g;
            }
            let mut run_spec = spec.clone();
            if runs > 1 {
                run_spec.predictions = None;
            }
            let (r, curve) = evaluate(data.clone(), &config, &run_spec, &engine)?;
            let (metric, value, higher) = r.headline();
            let mut name = Vec::new();
            if ks.len() > 1 {
                name.push(format!("k = {}", config.topk.k));
            }
            if gammas.len() > 1 {
                name.push(format!("gamma = {}", config.gamma));
            }
            let name = if name.is_empty() {
                r.algorithm.clone()
            } else {
                name.join(", ")
            };
            if let Some(c) = curve {
                let mut curves = vec![c];
                for extra in 1..curve_runs {
                    if crate::eval::stop::stop_requested() {
                        break;
                    }
                    let mut other = config.clone();
                    other.seed = config.seed.wrapping_add(extra);
                    let mut other_spec = run_spec.clone();
                    other_spec.predictions = None;
                    other_spec.progress = false;
                    other_spec.shuffle = spec.shuffle.map(|s| s.wrapping_add(extra));
                    let (_, c) = evaluate(data.clone(), &other, &other_spec, &engine)?;
                    curves.extend(c);
                }
                series.push(Series::mean_of(name.clone(), &curves));
            }
            if runs > 1 {
                grid.push(GridPoint {
                    gamma: config.gamma,
                    k,
                    metric: metric.to_string(),
                    value,
                    seconds: r.seconds,
                });
                if args.json {
                    output::print_json(&r)?;
                } else {
                    output::println(&format!("{name}: {metric} {value:.4} ({:.2} s)", r.seconds))?;
                }
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
    }
    crate::eval::stop::log_if_stopped("eval");
    let mut report = best.ok_or("nothing was run")?;
    if runs > 1 {
        report.gamma_grid = Some(grid);
    }
    if let Some(path) = &args.curve {
        let y = if data.schema().task == flowboost_operators::data::Task::Multilabel {
            "weighted rank loss, running mean"
        } else {
            "0-1 loss, running mean"
        };
        let title = format!(
            "{} on {}",
            report.algorithm,
            report
                .data
                .first()
                .map(|d| {
                    std::path::Path::new(d)
                        .file_name()
                        .map_or(d.clone(), |f| f.to_string_lossy().into_owned())
                })
                .unwrap_or_default()
        );
        write_svg(path, &title, "events", y, &series)?;
    }
    if args.json {
        output::print_json(&report)
    } else {
        output::print(&report.to_text())
    }
}
