//! Option groups shared by the subcommands.

use clap::Args;
use flowboost_connectors::readers::{Format, Header, ReadOptions, Target};
use flowboost_operators::boosters::{Algorithm, BoosterConfig, Potential, TreeParams};
use flowboost_operators::data::Task;
use flowboost_operators::dataflow::DataflowOptions;
use flowboost_operators::engine::LabelSetKind;
use flowboost_operators::learners::WeakKind;
use flowboost_operators::thresholding::{
    ScoreThresholdConfig, ThresholdAlgorithm, ThresholdConfig,
};
use flowboost_operators::topk::{Randomization, TopKConfig};
use std::path::PathBuf;

use crate::eval::Engine;
use crate::source::Dataset;

/// Where the examples come from.
#[derive(Debug, Args)]
pub struct DataArgs {
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
}

/// The model: the algorithm and its weak learners.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The algorithm: single (one weak learner alone); binary: online-bbm, online-bbm-s,
    /// adaboost-ol, adaboost-ol-s; multiclass: oza, online-mbbm, adaboost-olm; multi-label
    /// ranking: online-bmr, ada-olmr; multi-label ranking from top-k feedback: topk-bbm,
    /// topk-adaptive; online multi-label classification with a learned threshold (one
    /// learner, no weak learners): falt, salt, falt-kernel, pa1-br, pa2-br.
    /// Default: the adaptive booster for the stream's task (adaboost-ol for binary, oza for
    /// multiclass, single for multi-label).
    #[arg(long, value_parser = parse_algorithm)]
    pub algo: Option<Algorithm>,
    /// The number of weak learners N (ignored by single).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub learners: usize,
    /// The weak learner: vfdt (Hoeffding tree) or linear (logistic/softmax, VW-style).
    #[arg(long, default_value = "vfdt", value_parser = parse_weak)]
    pub weak: WeakKind,
    /// Hoeffding tree parameters: default (MOA's: grace period 200, split confidence 1e-7,
    /// tie threshold 0.05) or random (per tree, as the papers' authors did: split
    /// confidence and tie threshold log-uniform in [0.01, 0.9], grace period 5..20).
    /// Default: random for ensembles (N > 1), default for single.
    #[arg(long, value_parser = parse_tree_params)]
    pub tree_params: Option<TreeParams>,
    /// Each tree looks at this many random features (the papers use 20); default all.
    #[arg(long, value_name = "M")]
    pub feature_subset: Option<usize>,
    /// The edge gamma of the optimal boosters (online-bbm, online-bbm-s, online-mbbm,
    /// online-bmr, topk-bbm).
    #[arg(long, default_value_t = 0.1, value_name = "G")]
    pub gamma: f64,
    /// OnlineBMR's potential: rank (the weighted rank loss; the paper's choice for
    /// single-label weak learners) or hinge (the weighted hinge loss; for general ones).
    #[arg(long, default_value = "rank", value_parser = parse_potential)]
    pub potential: Potential,

    /// Top-k boosters: the number of labels shown (their relevance is the feedback). A
    /// comma-separated list runs once per k (eval; e.g. for --curve).
    #[arg(long, value_delimiter = ',', default_value = "3", value_name = "K")]
    pub k: Vec<usize>,
    /// Top-k boosters: the exploration rate rho in (0, 1) (with probability rho the shown
    /// ranking is randomized).
    #[arg(long, default_value_t = 0.04, value_name = "RHO")]
    pub rho: f64,
    /// Top-k boosters: uniform (a random permutation) or single-swap (two random swaps
    /// across the top-k boundary; needs 3 <= k < labels).
    #[arg(long, default_value = "uniform", value_parser = parse_randomization)]
    pub randomization: Randomization,
    /// Top-k boosters: probabilities Pr[a, b shown] are clipped to [P, 1 - P] before they
    /// divide (the authors' 0.005; 0 turns it off).
    #[arg(long, default_value_t = 0.005, value_name = "P")]
    pub clip_probability: f64,
    /// topk-adaptive: the SGD gradient estimate for a learner's weight is clipped to
    /// [-C, C] (the authors' 1.0; 0 turns it off).
    #[arg(long, default_value_t = 1.0, value_name = "C")]
    pub clip_gradient: f64,

    /// falt, salt, falt-kernel: the step size eta (> 0).
    #[arg(long, default_value_t = 1.0, value_name = "ETA")]
    pub eta: f64,
    /// salt: delta (> 0) in H = delta I + diag(s).
    #[arg(long, default_value_t = 1.0, value_name = "DELTA")]
    pub delta: f64,
    /// falt, salt, falt-kernel: M, the maximum number of update steps on each example
    /// (stops early at zero loss). The paper searches M in [L/8, 4L] for L labels.
    #[arg(long, default_value_t = 1, value_name = "M")]
    pub repetitions: usize,
    /// pa1-br, pa2-br: the aggressiveness C (> 0).
    #[arg(long = "c", default_value_t = 1.0, value_name = "C")]
    pub pa_c: f64,
    /// falt, pa1-br, pa2-br: the kernel, linear or rbf (K(x, z) = exp(-||x - z||^2 /
    /// (2 delta^2))); falt-kernel is falt with rbf.
    #[arg(long, default_value = "linear", value_parser = ["linear", "rbf"])]
    pub kernel: String,
    /// The RBF kernel width delta^2 (> 0; default 1).
    #[arg(long, value_name = "DELTA2")]
    pub kernel_width: Option<f64>,
    /// Kernel models: keep at most this many support vectors (the oldest are removed
    /// first). Default: no limit (the paper's algorithms).
    #[arg(long, value_name = "B")]
    pub budget: Option<usize>,
    /// Boosters on multi-label streams: how the ranking becomes a label set: top-m (the m
    /// highest-scored labels, m the running mean cardinality; the default) or threshold (an
    /// ALT threshold v . [x; 1] learned online on the standardized scores, see
    /// docs/thresholding.md).
    #[arg(long, value_parser = parse_label_set, value_name = "RULE")]
    pub label_set: Option<LabelSetKind>,
    /// --label-set threshold: the threshold's step size (> 0).
    #[arg(long, default_value_t = 0.1, value_name = "ETA")]
    pub threshold_eta: f64,
    /// --label-set threshold: the maximum number of threshold steps per example.
    #[arg(long, default_value_t = 1, value_name = "M")]
    pub threshold_repetitions: usize,

    /// The seed of every random choice (weak learner parameters, sampling, Hedge, generator).
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
}

/// The engine that runs the stages.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// The engine: sequential (a plain loop) or dataflow (timely; the stages in contiguous
    /// blocks across --workers threads). Both give identical predictions.
    #[arg(long, default_value = "sequential", value_parser = ["sequential", "dataflow"])]
    pub engine: String,

    /// The number of timely worker threads (dataflow engine).
    #[arg(long, default_value_t = 1, value_name = "W")]
    pub workers: usize,

    /// Records per dataflow timestamp (dataflow engine).
    #[arg(long, default_value_t = 256, value_name = "B")]
    pub batch: usize,
}

impl EngineArgs {
    /// The engine these options describe.
    pub fn engine(&self) -> Result<Engine, String> {
        if self.workers == 0 {
            return Err("--workers must be at least 1".into());
        }
        match self.engine.as_str() {
            "sequential" => Ok(Engine::Sequential),
            _ => Ok(Engine::Dataflow(DataflowOptions {
                workers: self.workers,
                batch: self.batch.max(1),
                ..DataflowOptions::default()
            })),
        }
    }
}

impl ModelArgs {
    /// The booster configuration these options describe, for a stream of `task`.
    pub fn booster(&self, task: Task) -> BoosterConfig {
        let algo = self.algo.unwrap_or(match task {
            Task::Binary => Algorithm::AdaBoostOl,
            Task::Multiclass => Algorithm::Oza,
            Task::Multilabel => Algorithm::Single,
        });
        let mut config = BoosterConfig::new(algo, self.weak, self.seed);
        config.learners = self.learners;
        config.gamma = self.gamma;
        config.tree_params =
            self.tree_params
                .unwrap_or(if algo == Algorithm::Single || self.learners <= 1 {
                    TreeParams::Default
                } else {
                    TreeParams::Random
                });
        config.feature_subset = self.feature_subset;
        config.potential = self.potential;
        config.topk = TopKConfig {
            k: self.k.first().copied().unwrap_or(3),
            rho: self.rho,
            randomization: self.randomization,
            clip_probability: self.clip_probability,
            clip_gradient: self.clip_gradient,
        };
        config.threshold = ThresholdConfig {
            algorithm: algo.thresholding().unwrap_or(ThresholdAlgorithm::Falt),
            eta: self.eta,
            delta: self.delta,
            repetitions: self.repetitions,
            c: self.pa_c,
            kernel_width: (self.kernel == "rbf" || algo == Algorithm::FaltKernel)
                .then(|| self.kernel_width.unwrap_or(1.0)),
            budget: self.budget,
        };
        config.label_set = self.label_set;
        config.score_threshold = ScoreThresholdConfig {
            eta: self.threshold_eta,
            repetitions: self.threshold_repetitions,
            ..ScoreThresholdConfig::default()
        };
        config
    }

    /// Options that only some algorithms read, given to another: an error naming them
    /// (rather than silently ignoring them).
    pub fn check_applicable(&self, algo: Algorithm) -> Result<(), String> {
        let thresholding = algo.is_thresholding();
        if !thresholding && (self.kernel != "linear" || self.kernel_width.is_some()) {
            return Err(format!(
                "--kernel and --kernel-width apply to falt, falt-kernel, pa1-br and pa2-br, not {algo}"
            ));
        }
        if algo == Algorithm::Salt && (self.kernel != "linear" || self.kernel_width.is_some()) {
            return Err("salt has no kernel version (the paper kernelizes FALT only)".into());
        }
        if self.budget.is_some() && !(self.kernel == "rbf" || algo == Algorithm::FaltKernel) {
            return Err("--budget applies to kernel models (--kernel rbf or falt-kernel)".into());
        }
        if thresholding && self.label_set.is_some() {
            return Err(format!(
                "{algo} predicts its own label set (its learned threshold); --label-set is for the boosters"
            ));
        }
        Ok(())
    }
}

impl DataArgs {
    /// Opens the dataset these options name (`seed` drives the generator).
    pub fn open(&self, seed: u64) -> Result<Dataset, String> {
        match &self.data {
            Some(data) => {
                let mut files = vec![data.clone()];
                files.extend(self.test.clone());
                let options = ReadOptions {
                    format: self.format,
                    labels: self.labels,
                    xml: self.xml.clone(),
                    header: self.header,
                    target: self.target.clone(),
                    ignore: self.ignore.clone(),
                };
                Dataset::open_files(&files, &options)
            }
            None => {
                if self.test.is_some() {
                    return Err("--test needs --data (the training file)".into());
                }
                Dataset::generator(&self.generator, seed, self.examples)
            }
        }
    }
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse()
}

fn parse_label_set(s: &str) -> Result<LabelSetKind, String> {
    s.parse()
}

fn parse_randomization(s: &str) -> Result<Randomization, String> {
    s.parse()
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

fn parse_header(s: &str) -> Result<Header, String> {
    s.parse()
}

fn parse_target(s: &str) -> Result<Target, String> {
    s.parse()
}

fn parse_weak(s: &str) -> Result<WeakKind, String> {
    match s {
        "vfdt" => Ok(WeakKind::Vfdt),
        "linear" => Ok(WeakKind::Linear),
        _ => Err(format!(
            "unknown weak learner '{s}' (expected vfdt or linear)"
        )),
    }
}

fn parse_potential(s: &str) -> Result<Potential, String> {
    match s {
        "rank" => Ok(Potential::Rank),
        "hinge" => Ok(Potential::Hinge),
        _ => Err(format!("unknown potential '{s}' (expected rank or hinge)")),
    }
}

fn parse_tree_params(s: &str) -> Result<TreeParams, String> {
    match s {
        "default" => Ok(TreeParams::Default),
        "random" => Ok(TreeParams::Random),
        _ => Err(format!(
            "unknown tree parameters '{s}' (expected default or random)"
        )),
    }
}
