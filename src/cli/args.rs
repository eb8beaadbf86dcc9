//! Option groups shared by the subcommands.

use super::named_arg::named;
use clap::Args;
use flowboost_connectors::readers::{Format, Header, ReadOptions, Target};
use flowboost_operators::boosters::{
    Algorithm, BoosterConfig, ModelOption, OzaVotes, Potential, TreeParams,
};
use flowboost_operators::data::{Schema, Task};
use flowboost_operators::dataflow::DataflowOptions;
use flowboost_operators::engine::LabelSetKind;
use flowboost_operators::learners::WeakKind;
use flowboost_operators::thresholding::{
    FeatureScaling, ScoreThresholdConfig, ThresholdAlgorithm, ThresholdConfig, ThresholdGrid,
};
use flowboost_operators::topk::{Randomization, TopKConfig};
use std::path::PathBuf;

use super::limits;
use crate::eval::Engine;
use crate::source::Dataset;

/// The default step size of kernel FALT (`falt-kernel`, `falt --kernel rbf`): 1/4, beyond
/// the paper (which states its eta search for FALT(l) and SALT only). With M = L steps
/// per example and eta = 1, FALT(k) fits each example so hard that a narrow kernel
/// memorizes (scene -4.7, yeast -4.1 points of F1 against M = 1); eta = 1/4 is what the
/// one-pass tuning of docs/thresholding.md chose for FALT(k) on 4 of its 6 MULAN sets.
pub const KERNEL_FALT_ETA: f64 = 0.25;

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
    /// or mediamill (the size of full Mediamill: 43,907 examples, 120 features, 101 labels)
    /// [default: binary].
    #[arg(long, value_name = "NAME")]
    pub generator: Option<String>,
    /// The number of examples the generator produces (default: the preset's).
    #[arg(long, value_name = "N")]
    pub examples: Option<u64>,
    /// The file format; auto looks at the content (and the extension).
    #[arg(long, default_value = "auto", value_parser = named::<Format>())]
    pub format: Format,
    /// MULAN multi-label ARFF: the labels are the last L attributes (LIBSVM: L labels,
    /// ids 0..L-1); at most 65536.
    #[arg(long, value_name = "L", value_parser = limits::labels, allow_negative_numbers = true)]
    pub labels: Option<usize>,
    /// MULAN multi-label ARFF: the XML file naming the labels (matched by name).
    #[arg(long, value_name = "FILE")]
    pub xml: Option<PathBuf>,
    /// CSV/TSV: whether the first row is a header (auto: guessed from its content).
    #[arg(long, default_value = "auto", value_parser = named::<Header>())]
    pub header: Header,
    /// CSV/TSV (and single-label ARFF): the target column: first, last, a column name, or
    /// auto (a column named `target` or `class`, else the last).
    #[arg(long, default_value = "auto")]
    pub target: Target,
    /// CSV/TSV: columns to drop (names or 1-based indices, comma-separated), e.g. the
    /// instance weight of census-income: --ignore 25.
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub ignore: Vec<String>,
    /// CSV/TSV: columns to read as nominal (names or 1-based indices, comma-separated),
    /// whatever they hold. Without it a column of numbers with a few text cells (fewer
    /// than 2, or under 5% of its cells) is an error naming the first such cell.
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub nominal: Vec<String>,
    /// The longest line a reader accepts, in bytes (1 to 1073741824 = 1 GiB); a longer
    /// line is an error naming the file and line [default: 16777216 = 16 MiB].
    #[arg(long, value_name = "BYTES", value_parser = limits::line_bytes, allow_negative_numbers = true)]
    pub max_line_bytes: Option<usize>,
}

/// The model: the algorithm and its weak learners. Every option is optional: a value not
/// given is the default shown in its help, or, with `--load-model`, the model file's.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The algorithm: single (one weak learner alone); binary: online-bbm, online-bbm-s,
    /// adaboost-ol, adaboost-ol-s; multiclass: oza, online-mbbm, adaboost-olm; multi-label
    /// ranking: online-bmr, ada-olmr; multi-label ranking from top-k feedback: topk-bbm,
    /// topk-adaptive; online multi-label classification with a learned threshold (one
    /// learner, no weak learners): falt, salt, falt-kernel, pa1-br, pa2-br.
    /// Default: the adaptive booster for the stream's task: adaboost-ol for binary,
    /// adaboost-olm for multiclass, ada-olmr for multi-label (the papers' adaptive
    /// algorithms, which need no edge gamma).
    #[arg(long)]
    pub algo: Option<Algorithm>,
    /// The number of weak learners N, 1 to 10000 (and N times the features per learner at
    /// most 33554432) [default: 10].
    #[arg(long, value_name = "N", value_parser = limits::learners, allow_negative_numbers = true)]
    pub learners: Option<usize>,
    /// The weak learner: vfdt (Hoeffding tree) or linear (logistic/softmax, VW-style)
    /// [default: vfdt].
    #[arg(hide_possible_values = true, long, value_parser = named::<WeakKind>())]
    pub weak: Option<WeakKind>,
    /// Hoeffding tree parameters: default (MOA's: grace period 200, split confidence 1e-7,
    /// tie threshold 0.05) or random (per tree, as the papers' authors did: split
    /// confidence and tie threshold log-uniform in [0.01, 0.9], grace period 5..20).
    /// Default: random for ensembles (N > 1), default for single.
    #[arg(hide_possible_values = true, long, value_parser = named::<TreeParams>())]
    pub tree_params: Option<TreeParams>,
    /// Each tree looks at this many random features (1 to the dimension; the papers use
    /// 20); default all. The learners times the features each looks at are at most
    /// 33554432 (memory).
    #[arg(long, value_name = "M", value_parser = limits::features, allow_negative_numbers = true)]
    pub feature_subset: Option<usize>,
    /// Each Hoeffding tree stops splitting once it has this many leaves (at least 1;
    /// default: no limit). Bounds a tree's memory on a long stream.
    #[arg(long, value_name = "L", value_parser = limits::positive_usize, allow_negative_numbers = true)]
    pub max_leaves: Option<usize>,
    /// Each Hoeffding tree splits no leaf at this depth (the root is depth 0, so 1 allows
    /// one split; at least 1; default: no limit).
    #[arg(long, value_name = "D", value_parser = limits::positive_usize, allow_negative_numbers = true)]
    pub max_depth: Option<usize>,
    /// A memory budget for the model's Hoeffding trees together, in bytes (a plain
    /// integer, or with a suffix K, M or G for 2^10, 2^20, 2^30, e.g. 64M; 1 to 2^50):
    /// each of the T trees gets BYTES / T, and when it outgrows its share it deactivates
    /// its least promising leaves (MOA's memory management; they keep predicting their
    /// class distribution but stop growing). Default: no budget.
    #[arg(long, value_name = "BYTES", value_parser = limits::model_bytes, allow_negative_numbers = true)]
    pub max_model_bytes: Option<u64>,
    /// The edge gamma of the optimal boosters (online-bbm, online-bbm-s, online-mbbm,
    /// online-bmr, topk-bbm) [default: 0.1].
    #[arg(long, value_name = "G")]
    pub gamma: Option<f64>,
    /// OnlineBMR's potential: rank (the weighted rank loss; the paper's choice for
    /// single-label weak learners) or hinge (the weighted hinge loss; for general ones)
    /// [default: rank].
    #[arg(hide_possible_values = true, long, value_parser = named::<Potential>())]
    pub potential: Option<Potential>,
    /// Oza: how the stages combine their votes: paper (Oza and Russell's hard votes: each
    /// stage adds its weight ln((1 - e) / e) to the label it predicts) or moa (MOA's
    /// OzaBoost: each stage adds its weight times its predicted distribution, and the vote
    /// stops at the first stage of weight 0) [default: paper].
    #[arg(hide_possible_values = true, long, value_name = "RULE", value_parser = named::<OzaVotes>())]
    pub oza_votes: Option<OzaVotes>,

    /// Top-k boosters: the number of labels shown (their relevance is the feedback). A
    /// comma-separated list runs once per k (eval; e.g. for --curve); each k from 1 to the
    /// label count [default: 3].
    #[arg(long, value_delimiter = ',', value_name = "K", value_parser = limits::labels, allow_negative_numbers = true)]
    pub k: Vec<usize>,
    /// Top-k boosters: the exploration rate rho in (0, 1) (with probability rho the shown
    /// ranking is randomized) [default: 0.04].
    #[arg(long, value_name = "RHO")]
    pub rho: Option<f64>,
    /// Top-k boosters: uniform (a random permutation) or single-swap (two random swaps
    /// across the top-k boundary; needs 3 <= k < labels) [default: uniform].
    #[arg(hide_possible_values = true, long, value_parser = named::<Randomization>())]
    pub randomization: Option<Randomization>,
    /// Top-k boosters: probabilities Pr[a, b shown] are clipped to [P, 1 - P] before they
    /// divide (the authors' 0.005; 0 turns it off) [default: 0.005].
    #[arg(long, value_name = "P")]
    pub clip_probability: Option<f64>,
    /// topk-adaptive: the SGD gradient estimate for a learner's weight is clipped to
    /// [-C, C] (the authors' 1.0; 0 turns it off) [default: 1].
    #[arg(long, value_name = "C")]
    pub clip_gradient: Option<f64>,

    /// falt, salt, falt-kernel: the step size eta (> 0) [default: 1 for falt and salt, the
    /// paper's "search the optimal eta around 1"; 0.25 for falt-kernel (beyond the paper,
    /// see docs/thresholding.md); with --grid, a grid of step sizes].
    #[arg(long, value_name = "ETA")]
    pub eta: Option<f64>,
    /// salt: delta (> 0) in H = delta I + diag(s) [default: 1].
    #[arg(long, value_name = "DELTA")]
    pub delta: Option<f64>,
    /// falt, salt, falt-kernel: M, the maximum number of update steps on each example
    /// (stops early at zero loss). The paper searches M in [L/8, 4L] for L labels and
    /// finds larger M better [default: L, the stream's label count].
    #[arg(long, value_name = "M", value_parser = limits::positive_usize, allow_negative_numbers = true)]
    pub repetitions: Option<usize>,
    /// pa1-br, pa2-br: the aggressiveness C (> 0) [default: 1].
    #[arg(long = "c", value_name = "C")]
    pub pa_c: Option<f64>,
    /// falt, pa1-br, pa2-br: the kernel, linear or rbf (K(x, z) = exp(-||x - z||^2 /
    /// (2 delta^2))); falt-kernel is falt with rbf [default: linear].
    #[arg(hide_possible_values = true, long, value_parser = named::<Kernel>())]
    pub kernel: Option<Kernel>,
    /// The RBF kernel width delta^2 (> 0) [default: 1, on features scaled by
    /// --online-scaling; with --grid, a grid of widths].
    #[arg(long, value_name = "DELTA2")]
    pub kernel_width: Option<f64>,
    /// falt, salt, falt-kernel, pa1-br, pa2-br: how the model scales its input features:
    /// min-max (per-feature running minimum and maximum over the examples learned so far,
    /// kept in the model: one pass, no preprocessing; sparse vectors are divided by the
    /// largest magnitude so they stay sparse) or none (the raw features, the paper's
    /// algorithms as written) [default: min-max].
    #[arg(hide_possible_values = true, long, value_name = "HOW", value_parser = named::<FeatureScaling>())]
    pub online_scaling: Option<FeatureScaling>,
    /// falt, salt, falt-kernel (beyond the paper, which tunes offline): run a small grid of
    /// settings side by side on every example and predict with the one whose progressive
    /// loss (1 - the example's F1) is least, by Hedge's weights. The grid: eta in {1/64,
    /// 1/8, 1} (falt, salt); eta in {1/4, 1} times delta^2 in {1/16, 1/4, 1, 4, 16}
    /// (falt-kernel). An --eta or --kernel-width given fixes that axis. Off by default.
    #[arg(long)]
    pub grid: bool,
    /// Kernel models: keep at most this many support vectors (the oldest are removed
    /// first; at least 1). Default: no limit (the paper's algorithms).
    #[arg(long, value_name = "B", value_parser = limits::positive_usize, allow_negative_numbers = true)]
    pub budget: Option<usize>,
    /// Boosters on multi-label streams: how the ranking becomes a label set: top-m (the m
    /// highest-scored labels, m the running mean cardinality; the default) or threshold (an
    /// ALT threshold v . [x; 1] learned online on the standardized scores, see
    /// docs/thresholding.md).
    #[arg(long, value_name = "RULE", value_parser = named::<LabelSetKind>())]
    pub label_set: Option<LabelSetKind>,
    /// --label-set threshold: the threshold's step size (> 0) [default: 0.1].
    #[arg(long, value_name = "ETA")]
    pub threshold_eta: Option<f64>,
    /// --label-set threshold: the maximum number of threshold steps per example
    /// [default: 1].
    #[arg(long, value_name = "M", value_parser = limits::positive_usize, allow_negative_numbers = true)]
    pub threshold_repetitions: Option<usize>,

    /// The seed of every random choice (weak learner parameters, sampling, Hedge, generator)
    /// [default: 1].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// The engine that runs the stages.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// The engine: sequential (a plain loop) or dataflow (timely; the stages in contiguous
    /// blocks across --workers threads). Both give identical predictions.
    #[arg(hide_possible_values = true, long, default_value = "sequential", value_parser = named::<EngineKind>())]
    pub engine: EngineKind,

    /// The number of timely worker threads, 1 to 128 [default: 1]; more than 1 needs
    /// --engine dataflow.
    #[arg(long, value_name = "W", value_parser = limits::workers, allow_negative_numbers = true)]
    pub workers: Option<usize>,

    /// Inputs per epoch, the timestamp of the dataflow and the unit of the feedback
    /// join's time (both engines; with feedback, each feedback record also ends its
    /// epoch, unless replay-clicks --batch-feedback); at least 1.
    #[arg(long, default_value_t = 256, value_name = "B", value_parser = limits::positive_usize, allow_negative_numbers = true)]
    pub batch: usize,
}

impl EngineArgs {
    /// The engine these options describe.
    pub fn engine(&self) -> Result<Engine, String> {
        // --workers and --batch were checked by their value parsers (`limits`).
        match self.engine {
            // `--workers 1` is what the sequential engine does; more would be ignored.
            EngineKind::Sequential => match self.workers {
                Some(w) if w > 1 => Err(format!(
                    "--workers {w} needs --engine dataflow (the sequential engine runs on one thread)"
                )),
                _ => Ok(Engine::Sequential),
            },
            EngineKind::Dataflow => Ok(Engine::Dataflow(DataflowOptions {
                workers: self.workers.unwrap_or(1),
                ..DataflowOptions::default()
            })),
        }
    }
}

/// `--engine`: which engine runs the stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// A plain loop (the reference).
    Sequential,
    /// Timely, the stages in blocks across `--workers` threads.
    Dataflow,
}

flowboost_operators::named_values!(EngineKind, "engine", Sequential => "sequential", Dataflow => "dataflow");

/// `--kernel`: the thresholding learners' kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Inner products of the features.
    Linear,
    /// `K(x, z) = exp(-||x - z||^2 / (2 delta^2))`.
    Rbf,
}

flowboost_operators::named_values!(Kernel, "kernel", Linear => "linear", Rbf => "rbf");

impl ModelArgs {
    /// The seed (given, or 1).
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(1)
    }

    /// The algorithm these options ask for on a stream of `task`.
    pub fn algorithm(&self, task: Task) -> Algorithm {
        self.algo.unwrap_or(match task {
            Task::Binary => Algorithm::AdaBoostOl,
            Task::Multiclass => Algorithm::AdaBoostOlm,
            Task::Multilabel => Algorithm::AdaOlmr,
        })
    }

    /// The options given on the command line (not their defaults).
    pub fn given(&self) -> Vec<ModelOption> {
        use ModelOption as O;
        let mut v = Vec::new();
        let mut add = |given: bool, o: ModelOption| {
            if given {
                v.push(o);
            }
        };
        add(self.learners.is_some(), O::Learners);
        add(self.weak.is_some(), O::Weak);
        add(self.tree_params.is_some(), O::TreeParams);
        add(self.feature_subset.is_some(), O::FeatureSubset);
        add(self.max_leaves.is_some(), O::MaxLeaves);
        add(self.max_depth.is_some(), O::MaxDepth);
        add(self.max_model_bytes.is_some(), O::MaxModelBytes);
        add(self.gamma.is_some(), O::Gamma);
        add(self.potential.is_some(), O::Potential);
        add(self.oza_votes.is_some(), O::OzaVotes);
        add(!self.k.is_empty(), O::K);
        add(self.rho.is_some(), O::Rho);
        add(self.randomization.is_some(), O::Randomization);
        add(self.clip_probability.is_some(), O::ClipProbability);
        add(self.clip_gradient.is_some(), O::ClipGradient);
        add(self.eta.is_some(), O::Eta);
        add(self.delta.is_some(), O::Delta);
        add(self.repetitions.is_some(), O::Repetitions);
        add(self.pa_c.is_some(), O::C);
        add(self.kernel.is_some(), O::Kernel);
        add(self.kernel_width.is_some(), O::KernelWidth);
        add(self.budget.is_some(), O::Budget);
        add(self.online_scaling.is_some(), O::OnlineScaling);
        add(self.grid, O::Grid);
        add(self.label_set.is_some(), O::LabelSet);
        add(self.threshold_eta.is_some(), O::ThresholdEta);
        add(
            self.threshold_repetitions.is_some(),
            O::ThresholdRepetitions,
        );
        v
    }

    /// Sets the options given on the command line in `config`.
    fn apply(&self, config: &mut BoosterConfig) {
        if let Some(n) = self.learners {
            config.learners = n;
        }
        if let Some(w) = self.weak {
            config.weak = w;
        }
        if let Some(t) = self.tree_params {
            config.tree_params = t;
        }
        if self.feature_subset.is_some() {
            config.feature_subset = self.feature_subset;
        }
        if self.max_leaves.is_some() {
            config.max_leaves = self.max_leaves;
        }
        if self.max_depth.is_some() {
            config.max_depth = self.max_depth;
        }
        if self.max_model_bytes.is_some() {
            config.max_model_bytes = self.max_model_bytes;
        }
        if let Some(g) = self.gamma {
            config.gamma = g;
        }
        if let Some(p) = self.potential {
            config.potential = p;
        }
        if let Some(v) = self.oza_votes {
            config.oza_votes = v;
        }
        if let Some(&k) = self.k.first() {
            config.topk.k = k;
        }
        if let Some(r) = self.rho {
            config.topk.rho = r;
        }
        if let Some(r) = self.randomization {
            config.topk.randomization = r;
        }
        if let Some(p) = self.clip_probability {
            config.topk.clip_probability = p;
        }
        if let Some(c) = self.clip_gradient {
            config.topk.clip_gradient = c;
        }
        if let Some(e) = self.eta {
            config.threshold.eta = e;
        }
        if let Some(d) = self.delta {
            config.threshold.delta = d;
        }
        if let Some(m) = self.repetitions {
            config.threshold.repetitions = m;
        }
        if let Some(c) = self.pa_c {
            config.threshold.c = c;
        }
        let rbf = self.kernel == Some(Kernel::Rbf) || config.algorithm == Algorithm::FaltKernel;
        if self.kernel.is_some() || self.kernel_width.is_some() {
            config.threshold.kernel_width = rbf.then(|| self.kernel_width.unwrap_or(1.0));
        }
        if self.budget.is_some() {
            config.threshold.budget = self.budget;
        }
        if let Some(s) = self.online_scaling {
            config.threshold.scaling = s;
        }
        if self.grid {
            config.threshold.grid = Some(ThresholdGrid::default_for(
                &config.threshold,
                self.eta.is_some(),
                self.kernel_width.is_some(),
            ));
        }
        if self.label_set.is_some() {
            config.label_set = self.label_set;
        }
        if let Some(e) = self.threshold_eta {
            config.score_threshold.eta = e;
        }
        if let Some(m) = self.threshold_repetitions {
            config.score_threshold.repetitions = m;
        }
        if let Some(s) = self.seed {
            config.seed = s;
        }
    }

    /// The booster configuration these options describe, for a stream of `task`.
    pub fn booster(&self, task: Task) -> BoosterConfig {
        let algo = self.algorithm(task);
        let mut config = BoosterConfig::new(algo, WeakKind::Vfdt, 1);
        config.topk = TopKConfig::default();
        let kernel_falt = algo == Algorithm::FaltKernel
            || (algo == Algorithm::Falt && self.kernel == Some(Kernel::Rbf));
        config.threshold = ThresholdConfig {
            algorithm: algo.thresholding().unwrap_or(ThresholdAlgorithm::Falt),
            kernel_width: (algo == Algorithm::FaltKernel).then_some(1.0),
            eta: if kernel_falt { KERNEL_FALT_ETA } else { 1.0 },
            scaling: FeatureScaling::MinMax,
            ..ThresholdConfig::default()
        };
        config.score_threshold = ScoreThresholdConfig::default();
        self.apply(&mut config);
        if self.tree_params.is_none() {
            config.tree_params = if algo.stages(config.learners) <= 1 {
                TreeParams::Default
            } else {
                TreeParams::Random
            };
        }
        config
    }

    /// The configuration these options describe for a stream of `schema`: [`booster`]
    /// with the defaults that depend on the stream (M = the label count for falt, salt
    /// and falt-kernel, [`ThresholdConfig::default_repetitions`]).
    ///
    /// [`booster`]: ModelArgs::booster
    pub fn booster_for(&self, schema: &Schema) -> BoosterConfig {
        let mut config = self.booster(schema.task);
        if self.repetitions.is_none()
            && matches!(
                config.algorithm,
                Algorithm::Falt | Algorithm::Salt | Algorithm::FaltKernel
            )
        {
            // A grid's members take M from here when they are built.
            config.threshold.repetitions =
                ThresholdConfig::default_repetitions(schema.num_labels());
        }
        config
    }

    /// The configuration of a model loaded from a file, with the options given on the
    /// command line: an option that differs from the file's value is an error naming it
    /// (a model keeps the options it was trained with).
    pub fn over_saved(&self, saved: &BoosterConfig) -> Result<BoosterConfig, String> {
        if let Some(a) = self.algo
            && a != saved.algorithm
        {
            return Err(format!(
                "--algo {a} does not match the model file's algorithm {}",
                saved.algorithm
            ));
        }
        if let Some(s) = self.seed
            && s != saved.seed
        {
            return Err(format!(
                "--seed {s} does not match the model file's seed {}",
                saved.seed
            ));
        }
        let mut config = saved.clone();
        self.apply(&mut config);
        for o in self.given() {
            let (mine, theirs) = (o.value(&config), o.value(saved));
            if mine != theirs {
                return Err(format!(
                    "{} {mine} does not match the model file's {} {theirs} (the model was trained with it; leave the option out to use the file's)",
                    o.flag(),
                    o.flag()
                ));
            }
        }
        Ok(config)
    }

    /// Options whose values do not fit the stream: a top-k booster's `--k` above the label
    /// count, a `--feature-subset` above the dimension, more learners than the memory
    /// limit on features per learner allows ([`limits::MAX_LEARNER_FEATURES`]).
    pub fn check_schema(&self, config: &BoosterConfig, schema: &Schema) -> Result<(), String> {
        let algo = config.algorithm;
        if algo.is_topk() {
            for &k in &self.k {
                if k > schema.num_labels() {
                    return Err(format!(
                        "--k {k}: the stream has {} labels (k is at most the label count)",
                        schema.num_labels()
                    ));
                }
            }
        }
        if let Some(m) = self.feature_subset
            && m > schema.dim()
        {
            return Err(format!(
                "--feature-subset {m}: the stream has {} features (M is at most the dimension)",
                schema.dim()
            ));
        }
        let stages = algo.stages(config.learners).max(1);
        let per_learner = config
            .feature_subset
            .unwrap_or(usize::MAX)
            .min(schema.dim());
        if stages.saturating_mul(per_learner) > limits::MAX_LEARNER_FEATURES {
            return Err(format!(
                "--learners {}: {stages} learners on {per_learner} features each pass the limit of {} learner-features (about 110 bytes each); use fewer learners or --feature-subset",
                config.learners,
                limits::MAX_LEARNER_FEATURES
            ));
        }
        Ok(())
    }

    /// Options given on the command line that `algo` does not read: an error naming them
    /// (rather than silently ignoring them). The registry says which options each
    /// algorithm reads.
    pub fn check_applicable(&self, algo: Algorithm) -> Result<(), String> {
        let spec = algo.spec();
        let stray: Vec<&str> = self
            .given()
            .into_iter()
            .filter(|&o| !spec.reads(o))
            .map(ModelOption::flag)
            .collect();
        if !stray.is_empty() {
            let reads: Vec<&str> = spec.reads.iter().map(|o| o.flag()).collect();
            return Err(format!(
                "{} {} not apply to {algo} (it reads {}{})",
                stray.join(", "),
                if stray.len() == 1 { "does" } else { "do" },
                if reads.is_empty() {
                    "none of the model options".to_string()
                } else {
                    reads.join(", ")
                },
                if reads.is_empty() { "" } else { ", and --seed" },
            ));
        }
        if algo == Algorithm::Salt
            && (self.kernel == Some(Kernel::Rbf) || self.kernel_width.is_some())
        {
            return Err("salt has no kernel version (the paper kernelizes FALT only)".into());
        }
        if (self.budget.is_some() || self.kernel_width.is_some())
            && !(self.kernel == Some(Kernel::Rbf) || algo == Algorithm::FaltKernel)
        {
            return Err(
                "--budget and --kernel-width apply to kernel models (--kernel rbf or falt-kernel)"
                    .into(),
            );
        }
        Ok(())
    }
}

impl DataArgs {
    /// Opens the dataset these options name (`seed` drives the generator).
    pub fn open(&self, seed: u64) -> Result<Dataset, String> {
        match &self.data {
            Some(data) => {
                if let Some(n) = self.examples {
                    return Err(format!(
                        "--examples {n} is for --generator (the number of examples it makes), not --data {}: a file is read whole",
                        data.display()
                    ));
                }
                let mut files = vec![data.clone()];
                files.extend(self.test.clone());
                let options = ReadOptions {
                    format: self.format,
                    labels: self.labels,
                    xml: self.xml.clone(),
                    header: self.header,
                    target: self.target.clone(),
                    ignore: self.ignore.clone(),
                    nominal: self.nominal.clone(),
                    max_line_bytes: self.max_line_bytes,
                };
                Dataset::open_files(&files, &options)
            }
            None => {
                if self.test.is_some() {
                    return Err("--test needs --data (the training file)".into());
                }
                Dataset::generator(
                    self.generator.as_deref().unwrap_or("binary"),
                    seed,
                    self.examples,
                )
            }
        }
    }
}
