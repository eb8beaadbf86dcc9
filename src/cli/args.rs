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
    /// The number of examples the generator produces, 0 to 10000000000 (default: the
    /// preset's).
    #[arg(long, value_name = "N", value_parser = limits::examples, allow_negative_numbers = true)]
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
    /// The model options (one field per [`ModelOption`]).
    #[command(flatten)]
    pub options: ModelOptionArgs,

    /// The seed of every random choice (weak learner parameters, sampling, Hedge, generator)
    /// [default: 1].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// A model option's command-line field: whether it was given, and its value (an
/// `Option`'s value, a list's first, a flag that is set).
trait GivenValue {
    /// The value's type.
    type Value;
    /// The value, if the option was given.
    fn given(&self) -> Option<&Self::Value>;
}

impl<T> GivenValue for Option<T> {
    type Value = T;
    fn given(&self) -> Option<&T> {
        self.as_ref()
    }
}

impl<T> GivenValue for Vec<T> {
    type Value = T;
    fn given(&self) -> Option<&T> {
        self.first()
    }
}

impl GivenValue for bool {
    type Value = bool;
    fn given(&self) -> Option<&bool> {
        self.then_some(self)
    }
}

/// Makes [`ModelOptionArgs`] from the list of model options.
macro_rules! model_option_args {
    ($(
        $(#[$doc:meta])*
        $variant:ident {
            flag: $flag:literal,
            field: $field:ident: $ty:ty,
            arg: ($($arg:tt)*),
            header: |$config:ident| $header:expr,
            apply: |$c:ident, $value:pat, $args:tt| $apply:expr $(,)?
        }
    ),* $(,)?) => {
        /// The model options on the command line: one field per [`ModelOption`], each
        /// declared once in [`flowboost_operators::model_options!`].
        #[derive(Debug, Args)]
        pub struct ModelOptionArgs {
            $(
                $(#[$doc])*
                #[arg(long = $flag, $($arg)*)]
                pub $field: $ty,
            )*
        }

        impl ModelOptionArgs {
            /// The options given on the command line (not their defaults), in the help's
            /// order.
            pub fn given(&self) -> Vec<ModelOption> {
                let mut given = Vec::new();
                $(
                    if GivenValue::given(&self.$field).is_some() {
                        given.push(ModelOption::$variant);
                    }
                )*
                given
            }

            /// Sets the options given on the command line in `config`, in the help's
            /// order.
            fn apply(&self, config: &mut BoosterConfig) {
                $(
                    if let Some($value) = GivenValue::given(&self.$field) {
                        let $c = &mut *config;
                        let $args = self;
                        $apply;
                    }
                )*
            }
        }
    };
}

flowboost_operators::model_options!(model_option_args);

impl ModelOptionArgs {
    /// `--kernel` and `--kernel-width`: the RBF kernel's width (`--kernel-width`, or 1)
    /// with `--kernel rbf` or `falt-kernel`, else no kernel.
    fn apply_kernel(&self, config: &mut BoosterConfig) {
        let rbf = self.kernel == Some(Kernel::Rbf) || config.algorithm == Algorithm::FaltKernel;
        config.threshold.kernel_width = rbf.then(|| self.kernel_width.unwrap_or(1.0));
    }

    /// `--grid`: the default grid around the configuration's step size and kernel width
    /// (an `--eta` or `--kernel-width` given fixes that axis).
    fn apply_grid(&self, config: &mut BoosterConfig) {
        config.threshold.grid = Some(ThresholdGrid::default_for(
            &config.threshold,
            self.eta.is_some(),
            self.kernel_width.is_some(),
        ));
    }
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

    /// The options given on the command line (not their defaults), in the help's order.
    pub fn given(&self) -> Vec<ModelOption> {
        self.options.given()
    }

    /// Sets the options given on the command line in `config`.
    fn apply(&self, config: &mut BoosterConfig) {
        self.options.apply(config);
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
            || (algo == Algorithm::Falt && self.options.kernel == Some(Kernel::Rbf));
        config.threshold = ThresholdConfig {
            algorithm: algo.thresholding().unwrap_or(ThresholdAlgorithm::Falt),
            kernel_width: (algo == Algorithm::FaltKernel).then_some(1.0),
            eta: if kernel_falt { KERNEL_FALT_ETA } else { 1.0 },
            scaling: FeatureScaling::MinMax,
            ..ThresholdConfig::default()
        };
        config.score_threshold = ScoreThresholdConfig::default();
        self.apply(&mut config);
        if self.options.tree_params.is_none() {
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
        if self.options.repetitions.is_none()
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
            for &k in &self.options.k {
                if k > schema.num_labels() {
                    return Err(format!(
                        "--k {k}: the stream has {} labels (k is at most the label count)",
                        schema.num_labels()
                    ));
                }
            }
        }
        if let Some(m) = self.options.feature_subset
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
        let options = &self.options;
        if algo == Algorithm::Salt
            && (options.kernel == Some(Kernel::Rbf) || options.kernel_width.is_some())
        {
            return Err("salt has no kernel version (the paper kernelizes FALT only)".into());
        }
        if (options.budget.is_some() || options.kernel_width.is_some())
            && !(options.kernel == Some(Kernel::Rbf) || algo == Algorithm::FaltKernel)
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
    /// The first option given that only a data file's reader uses (`None` if none was).
    fn file_option(&self) -> Option<&'static str> {
        [
            (self.format != Format::default(), "--format"),
            (self.labels.is_some(), "--labels"),
            (self.xml.is_some(), "--xml"),
            (self.header != Header::default(), "--header"),
            (self.target != Target::default(), "--target"),
            (!self.ignore.is_empty(), "--ignore"),
            (!self.nominal.is_empty(), "--nominal"),
            (self.max_line_bytes.is_some(), "--max-line-bytes"),
        ]
        .into_iter()
        .find_map(|(given, option)| given.then_some(option))
    }

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
                if let Some(option) = self.file_option() {
                    return Err(format!(
                        "{option} is for a data file (--data FILE): the generator {} would ignore it",
                        self.generator.as_deref().unwrap_or("binary")
                    ));
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
