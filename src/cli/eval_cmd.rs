use crate::eval::{EvalSpec, Protocol, evaluate};
use crate::source::Dataset;
use clap::Args;
use flowboost_connectors::readers::{Format, Header, ReadOptions, Target};
use flowboost_operators::boosters::{Algorithm, BoosterConfig, TreeParams};
use flowboost_operators::learners::WeakKind;
use std::path::PathBuf;

/// Options of `flowboost eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The algorithm: single (one weak learner alone), online-bbm, online-bbm-s,
    /// adaboost-ol, adaboost-ol-s, oza.
    #[arg(long, default_value = "single", value_parser = parse_algorithm)]
    pub algo: Algorithm,

    /// The dataset file (the training file for --protocol holdout). ARFF (dense or
    /// sparse, MULAN multi-label), LIBSVM/SVMlight, CSV or TSV, optionally gzip-compressed.
    /// Without --data, a built-in generator supplies the stream (see --generator).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,

    /// The test file (same format and schema as --data); implies --protocol holdout.
    #[arg(long, value_name = "FILE")]
    pub test: Option<PathBuf>,

    /// The built-in generator used when --data is absent: binary, multiclass, multilabel,
    /// or mediamill (the size of full Mediamill: 43,907 examples, 120 features, 101 labels).
    #[arg(long, default_value = "binary", value_name = "NAME")]
    pub generator: String,

    /// The number of examples the generator produces (default: the preset's).
    #[arg(long, value_name = "N")]
    pub examples: Option<u64>,

    /// The file format; auto looks at the content (and the extension).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: Format,

    /// MULAN multi-label ARFF: the labels are the last L attributes.
    #[arg(long, value_name = "L")]
    pub labels: Option<usize>,

    /// MULAN multi-label ARFF: the XML file naming the labels (matched by name).
    #[arg(long, value_name = "FILE")]
    pub xml: Option<PathBuf>,

    /// CSV/TSV: whether the first row is a header (auto: guessed from its content).
    #[arg(long, default_value = "auto", value_parser = parse_header)]
    pub header: Header,

    /// CSV/TSV (and single-label ARFF): the target column: first, last, a column name, or
    /// auto (a column named `target` or `class`, else the last).
    #[arg(long, default_value = "auto", value_parser = parse_target)]
    pub target: Target,

    /// CSV/TSV: columns to drop (names or 1-based indices, comma-separated), e.g. the
    /// instance weight of census-income: --ignore 25.
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub ignore: Vec<String>,

    /// The protocol: prequential (test-then-train on every example), holdout (train on
    /// --data, then score --test while still learning), last20 (score the final 20% of one
    /// stream). Default: holdout with --test, else prequential.
    #[arg(long, value_parser = parse_protocol)]
    pub protocol: Option<Protocol>,

    /// Shuffle each file with this seed before streaming it.
    #[arg(long, value_name = "SEED")]
    pub shuffle: Option<u64>,

    /// The number of weak learners N (ignored by single).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub learners: usize,

    /// The weak learner: vfdt (Hoeffding tree) or linear (logistic/softmax, VW-style).
    #[arg(long, default_value = "vfdt", value_parser = parse_weak)]
    pub weak: WeakKind,

    /// Hoeffding tree parameters: default (MOA's) or random (per tree, as the papers'
    /// authors did: split confidence and tie threshold log-uniform in [0.01, 0.9], grace
    /// period 5..20).
    #[arg(long, default_value = "default", value_parser = parse_tree_params)]
    pub tree_params: TreeParams,

    /// Each tree looks at this many random features (the papers use 20); default all.
    #[arg(long, value_name = "M")]
    pub feature_subset: Option<usize>,

    /// The edge gamma of the optimal boosters (online-bbm, online-bbm-s).
    #[arg(long, default_value_t = 0.1, value_name = "G")]
    pub gamma: f64,

    /// The seed of every random choice (weak learner parameters, sampling, Hedge, generator).
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,

    /// Write one JSON line per evaluated example (id and prediction) to this file.
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,

    /// Print the report as one JSON object (the last line of stdout).
    #[arg(long)]
    pub json: bool,
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse()
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    s.parse()
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse().map_err(|e| format!("{e}"))
}

fn parse_header(s: &str) -> Result<Header, String> {
    s.parse().map_err(|e| format!("{e}"))
}

fn parse_target(s: &str) -> Result<Target, String> {
    s.parse().map_err(|e| format!("{e}"))
}

fn parse_weak(s: &str) -> Result<WeakKind, String> {
    match s {
        "vfdt" => Ok(WeakKind::Vfdt),
        "linear" => Ok(WeakKind::Linear),
        _ => Err(format!("unknown weak learner '{s}' (expected vfdt or linear)")),
    }
}

fn parse_tree_params(s: &str) -> Result<TreeParams, String> {
    match s {
        "default" => Ok(TreeParams::Default),
        "random" => Ok(TreeParams::Random),
        _ => Err(format!("unknown tree parameters '{s}' (expected default or random)")),
    }
}

/// Opens the dataset the arguments name.
pub fn open_dataset(args: &EvalArgs) -> Result<Dataset, String> {
    match &args.data {
        Some(data) => {
            let mut files = vec![data.clone()];
            files.extend(args.test.clone());
            let options = ReadOptions {
                format: args.format.clone(),
                labels: args.labels,
                xml: args.xml.clone(),
                header: args.header.clone(),
                target: args.target.clone(),
                ignore: args.ignore.clone(),
            };
            Dataset::open_files(&files, &options)
        }
        None => {
            if args.test.is_some() {
                return Err("--test needs --data (the training file)".into());
            }
            Dataset::generator(&args.generator, args.seed, args.examples)
        }
    }
}

/// Runs `flowboost eval`.
pub fn run(args: EvalArgs) -> Result<(), String> {
    let data = open_dataset(&args)?;
    let protocol = args.protocol.unwrap_or(if args.test.is_some() {
        Protocol::Holdout
    } else {
        Protocol::Prequential
    });
    let mut config = BoosterConfig::new(args.algo, args.weak, args.seed);
    config.learners = args.learners;
    config.gamma = args.gamma;
    config.tree_params = args.tree_params;
    config.feature_subset = args.feature_subset;
    let spec = EvalSpec {
        protocol,
        shuffle: args.shuffle,
        predictions: args.predictions.clone(),
        progress: !args.json,
    };
    let report = evaluate(&data, &config, &spec)?;
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
