//! The model options: every option that shapes a model, declared once in
//! [`model_options!`](crate::model_options). One entry says everything about an option:
//! its help text (the doc comment), its command-line flag and value parser (the range it
//! accepts), the field of the command line's arguments that holds it, how the model
//! header ([`BoosterConfig`]) shows it (`header`) and how a given value reaches the
//! configuration, and so the stages (`apply`). The registry's entries say which options
//! each algorithm reads.
//!
//! The list is a macro that hands its entries to another macro, so that each crate makes
//! what it needs from the same list: this module makes [`ModelOption`] (its flag and its
//! header value); the command line (`flowboost::cli::args`) makes its `clap` arguments,
//! the list of given options and their application to a [`BoosterConfig`]. The `arg` and
//! `apply` parts are read only there, so the names they use (`limits::learners`,
//! `named::<WeakKind>()`, the `Kernel` value) are the command line's.

use super::{Algorithm, BoosterConfig};
use std::fmt::Display;

/// Every model option, in the order of the command line's help: hands the list to the
/// macro `$then`, which receives, per option,
///
/// ```text
/// /// The help text.
/// Variant {
///     flag: "name",                 // --name on the command line
///     field: name: Option<T>,       // its field (Option<T>, Vec<T> or bool) in the CLI
///     arg: (value_name = "N", ..),  // the rest of its clap `#[arg(..)]`
///     header: |c| expr,             // its value in a BoosterConfig `c`, as text
///     apply: |c, &v, args| expr,    // sets a given value `v` in `c` (`args`: the others)
/// },
/// ```
///
/// Adding a model option is adding one entry here (and its field in [`BoosterConfig`],
/// and its name in the `reads` of the algorithms that read it).
#[macro_export]
macro_rules! model_options {
    ($then:ident) => { $then! {
        /// The number of weak learners N, 1 to 10000 (and N times the features per learner at
        /// most 33554432) [default: 10].
        Learners {
            flag: "learners",
            field: learners: Option<usize>,
            arg: (value_name = "N", value_parser = limits::learners, allow_negative_numbers = true),
            header: |c| c.learners.to_string(),
            apply: |c, &n, _| c.learners = n,
        },
        /// The weak learner: vfdt (Hoeffding tree) or linear (logistic/softmax, VW-style)
        /// [default: vfdt].
        Weak {
            flag: "weak",
            field: weak: Option<WeakKind>,
            arg: (hide_possible_values = true, value_parser = named::<WeakKind>()),
            header: |c| c.weak.name().to_string(),
            apply: |c, &w, _| c.weak = w,
        },
        /// Hoeffding tree parameters: default (MOA's: grace period 200, split confidence 1e-7,
        /// tie threshold 0.05) or random (per tree, as the papers' authors did: split
        /// confidence and tie threshold log-uniform in [0.01, 0.9], grace period 5..20).
        /// Default: random for ensembles (N > 1), default for single.
        TreeParams {
            flag: "tree-params",
            field: tree_params: Option<TreeParams>,
            arg: (hide_possible_values = true, value_parser = named::<TreeParams>()),
            header: |c| c.tree_params.name().to_string(),
            apply: |c, &t, _| c.tree_params = t,
        },
        /// Each tree looks at this many random features (1 to the dimension; the papers use
        /// 20); default all. The learners times the features each looks at are at most
        /// 33554432 (memory).
        FeatureSubset {
            flag: "feature-subset",
            field: feature_subset: Option<usize>,
            arg: (value_name = "M", value_parser = limits::features, allow_negative_numbers = true),
            header: |c| or_none(c.feature_subset),
            apply: |c, &m, _| c.feature_subset = Some(m),
        },
        /// Each Hoeffding tree stops splitting once it has this many leaves (at least 1;
        /// default: no limit). Bounds a tree's memory on a long stream.
        MaxLeaves {
            flag: "max-leaves",
            field: max_leaves: Option<usize>,
            arg: (
                value_name = "L",
                value_parser = limits::positive_usize,
                allow_negative_numbers = true,
            ),
            header: |c| or_none(c.max_leaves),
            apply: |c, &l, _| c.max_leaves = Some(l),
        },
        /// Each Hoeffding tree splits no leaf at this depth (the root is depth 0, so 1 allows
        /// one split; at least 1; default: no limit).
        MaxDepth {
            flag: "max-depth",
            field: max_depth: Option<usize>,
            arg: (
                value_name = "D",
                value_parser = limits::positive_usize,
                allow_negative_numbers = true,
            ),
            header: |c| or_none(c.max_depth),
            apply: |c, &d, _| c.max_depth = Some(d),
        },
        /// A memory budget for the model's Hoeffding trees together, in bytes (a plain
        /// integer, or with a suffix K, M or G for 2^10, 2^20, 2^30, e.g. 64M; 1 to 2^50):
        /// each of the T trees gets BYTES / T, and when it outgrows its share it deactivates
        /// its least promising leaves (MOA's memory management; they keep predicting their
        /// class distribution but stop growing). Default: no budget.
        MaxModelBytes {
            flag: "max-model-bytes",
            field: max_model_bytes: Option<u64>,
            arg: (
                value_name = "BYTES",
                value_parser = limits::model_bytes,
                allow_negative_numbers = true,
            ),
            header: |c| or_none(c.max_model_bytes),
            apply: |c, &b, _| c.max_model_bytes = Some(b),
        },
        /// The edge gamma of the optimal boosters (online-bbm, online-bbm-s, online-mbbm,
        /// online-bmr, topk-bbm) [default: 0.1].
        Gamma {
            flag: "gamma",
            field: gamma: Option<f64>,
            arg: (value_name = "G"),
            header: |c| c.gamma.to_string(),
            apply: |c, &g, _| c.gamma = g,
        },
        /// OnlineBMR's potential: rank (the weighted rank loss; the paper's choice for
        /// single-label weak learners) or hinge (the weighted hinge loss; for general ones)
        /// [default: rank].
        Potential {
            flag: "potential",
            field: potential: Option<Potential>,
            arg: (hide_possible_values = true, value_parser = named::<Potential>()),
            header: |c| c.potential.name().to_string(),
            apply: |c, &p, _| c.potential = p,
        },
        /// Oza: how the stages combine their votes: paper (Oza and Russell's hard votes: each
        /// stage adds its weight ln((1 - e) / e) to the label it predicts) or moa (MOA's
        /// OzaBoost: each stage adds its weight times its predicted distribution, and the vote
        /// stops at the first stage of weight 0) [default: paper].
        OzaVotes {
            flag: "oza-votes",
            field: oza_votes: Option<OzaVotes>,
            arg: (
                hide_possible_values = true,
                value_name = "RULE",
                value_parser = named::<OzaVotes>(),
            ),
            header: |c| c.oza_votes.name().to_string(),
            apply: |c, &v, _| c.oza_votes = v,
        },
        /// Top-k boosters: the number of labels shown (their relevance is the feedback). A
        /// comma-separated list runs once per k (eval; e.g. for --curve); each k from 1 to the
        /// label count [default: 3].
        K {
            flag: "k",
            field: k: Vec<usize>,
            arg: (
                value_delimiter = ',',
                value_name = "K",
                value_parser = limits::labels,
                allow_negative_numbers = true,
            ),
            header: |c| c.topk.k.to_string(),
            apply: |c, &k, _| c.topk.k = k,
        },
        /// Top-k boosters: the exploration rate rho in (0, 1) (with probability rho the shown
        /// ranking is randomized) [default: 0.04].
        Rho {
            flag: "rho",
            field: rho: Option<f64>,
            arg: (value_name = "RHO"),
            header: |c| c.topk.rho.to_string(),
            apply: |c, &r, _| c.topk.rho = r,
        },
        /// Top-k boosters: uniform (a random permutation) or single-swap (two random swaps
        /// across the top-k boundary; needs 3 <= k < labels) [default: uniform].
        Randomization {
            flag: "randomization",
            field: randomization: Option<Randomization>,
            arg: (hide_possible_values = true, value_parser = named::<Randomization>()),
            header: |c| c.topk.randomization.name().to_string(),
            apply: |c, &r, _| c.topk.randomization = r,
        },
        /// Top-k boosters: probabilities Pr[a, b shown] are clipped to [P, 1 - P] before they
        /// divide (the authors' 0.005; 0 turns it off) [default: 0.005].
        ClipProbability {
            flag: "clip-probability",
            field: clip_probability: Option<f64>,
            arg: (value_name = "P"),
            header: |c| c.topk.clip_probability.to_string(),
            apply: |c, &p, _| c.topk.clip_probability = p,
        },
        /// topk-adaptive: the SGD gradient estimate for a learner's weight is clipped to
        /// [-C, C] (the authors' 1.0; 0 turns it off) [default: 1].
        ClipGradient {
            flag: "clip-gradient",
            field: clip_gradient: Option<f64>,
            arg: (value_name = "C"),
            header: |c| c.topk.clip_gradient.to_string(),
            apply: |c, &g, _| c.topk.clip_gradient = g,
        },
        /// falt, salt, falt-kernel: the step size eta (> 0) [default: 1 for falt and salt, the
        /// paper's "search the optimal eta around 1"; 0.25 for falt-kernel (beyond the paper,
        /// see docs/thresholding.md); with --grid, a grid of step sizes].
        Eta {
            flag: "eta",
            field: eta: Option<f64>,
            arg: (value_name = "ETA"),
            header: |c| c.threshold.eta.to_string(),
            apply: |c, &e, _| c.threshold.eta = e,
        },
        /// salt: delta (> 0) in H = delta I + diag(s) [default: 1].
        Delta {
            flag: "delta",
            field: delta: Option<f64>,
            arg: (value_name = "DELTA"),
            header: |c| c.threshold.delta.to_string(),
            apply: |c, &d, _| c.threshold.delta = d,
        },
        /// falt, salt, falt-kernel: M, the maximum number of update steps on each example
        /// (stops early at zero loss). The paper searches M in [L/8, 4L] for L labels and
        /// finds larger M better [default: L, the stream's label count].
        Repetitions {
            flag: "repetitions",
            field: repetitions: Option<usize>,
            arg: (
                value_name = "M",
                value_parser = limits::positive_usize,
                allow_negative_numbers = true,
            ),
            header: |c| c.threshold.repetitions.to_string(),
            apply: |c, &m, _| c.threshold.repetitions = m,
        },
        /// pa1-br, pa2-br: the aggressiveness C (> 0) [default: 1].
        C {
            flag: "c",
            field: pa_c: Option<f64>,
            arg: (value_name = "C"),
            header: |c| c.threshold.c.to_string(),
            apply: |c, &pa_c, _| c.threshold.c = pa_c,
        },
        /// falt, pa1-br, pa2-br: the kernel, linear or rbf (K(x, z) = exp(-||x - z||^2 /
        /// (2 delta^2))); falt-kernel is falt with rbf [default: linear].
        Kernel {
            flag: "kernel",
            field: kernel: Option<Kernel>,
            arg: (hide_possible_values = true, value_parser = named::<Kernel>()),
            header: |c| kernel_name(c).to_string(),
            apply: |c, _, args| args.apply_kernel(c),
        },
        /// The RBF kernel width delta^2 (> 0) [default: 1, on features scaled by
        /// --online-scaling; with --grid, a grid of widths].
        KernelWidth {
            flag: "kernel-width",
            field: kernel_width: Option<f64>,
            arg: (value_name = "DELTA2"),
            header: |c| or_none(c.threshold.kernel_width),
            apply: |c, _, args| args.apply_kernel(c),
        },
        /// falt, salt, falt-kernel, pa1-br, pa2-br: how the model scales its input features:
        /// min-max (per-feature running minimum and maximum over the examples learned so far,
        /// kept in the model: one pass, no preprocessing; sparse vectors are divided by the
        /// largest magnitude so they stay sparse) or none (the raw features, the paper's
        /// algorithms as written) [default: min-max].
        OnlineScaling {
            flag: "online-scaling",
            field: online_scaling: Option<FeatureScaling>,
            arg: (
                hide_possible_values = true,
                value_name = "HOW",
                value_parser = named::<FeatureScaling>(),
            ),
            header: |c| c.threshold.scaling.name().to_string(),
            apply: |c, &s, _| c.threshold.scaling = s,
        },
        /// falt, salt, falt-kernel (beyond the paper, which tunes offline): run a small grid of
        /// settings side by side on every example and predict with the one whose progressive
        /// loss (1 - the example's F1) is least, by Hedge's weights. The grid: eta in {1/64,
        /// 1/8, 1} (falt, salt); eta in {1/4, 1} times delta^2 in {1/16, 1/4, 1, 4, 16}
        /// (falt-kernel). An --eta or --kernel-width given fixes that axis. Off by default.
        Grid {
            flag: "grid",
            field: grid: bool,
            arg: (),
            header: |c| grid_value(c),
            apply: |c, _, args| args.apply_grid(c),
        },
        /// Kernel models: keep at most this many support vectors (the oldest are removed
        /// first; at least 1). Default: no limit (the paper's algorithms).
        Budget {
            flag: "budget",
            field: budget: Option<usize>,
            arg: (
                value_name = "B",
                value_parser = limits::positive_usize,
                allow_negative_numbers = true,
            ),
            header: |c| or_none(c.threshold.budget),
            apply: |c, &b, _| c.threshold.budget = Some(b),
        },
        /// Boosters on multi-label streams: how the ranking becomes a label set: top-m (the m
        /// highest-scored labels, m the running mean cardinality; the default) or threshold (an
        /// ALT threshold v . [x; 1] learned online on the standardized scores, see
        /// docs/thresholding.md).
        LabelSet {
            flag: "label-set",
            field: label_set: Option<LabelSetKind>,
            arg: (value_name = "RULE", value_parser = named::<LabelSetKind>()),
            header: |c| or_none(c.label_set.map(|k| k.name())),
            apply: |c, &k, _| c.label_set = Some(k),
        },
        /// --label-set threshold: the threshold's step size (> 0) [default: 0.1].
        ThresholdEta {
            flag: "threshold-eta",
            field: threshold_eta: Option<f64>,
            arg: (value_name = "ETA"),
            header: |c| c.score_threshold.eta.to_string(),
            apply: |c, &e, _| c.score_threshold.eta = e,
        },
        /// --label-set threshold: the maximum number of threshold steps per example
        /// [default: 1].
        ThresholdRepetitions {
            flag: "threshold-repetitions",
            field: threshold_repetitions: Option<usize>,
            arg: (
                value_name = "M",
                value_parser = limits::positive_usize,
                allow_negative_numbers = true,
            ),
            header: |c| c.score_threshold.repetitions.to_string(),
            apply: |c, &m, _| c.score_threshold.repetitions = m,
        },
    } };
}

/// The text of an optional value: the value, or `none`.
fn or_none<T: Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// `--kernel`'s value in `config`: rbf when a kernel width is set (always for
/// `falt-kernel`), else linear.
fn kernel_name(config: &BoosterConfig) -> &'static str {
    let rbf = config.threshold.kernel_width.is_some() || config.algorithm == Algorithm::FaltKernel;
    if rbf { "rbf" } else { "linear" }
}

/// `--grid`'s value in `config`: off, or the grid's axes.
fn grid_value(config: &BoosterConfig) -> String {
    match &config.threshold.grid {
        None => "off".into(),
        Some(g) => format!("eta {:?} kernel-width {:?}", g.etas, g.kernel_widths),
    }
}

/// Makes [`ModelOption`] from the list.
macro_rules! model_option_enum {
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
        /// An option that shapes a model, by its command-line name (the doc is its help).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ModelOption {
            $($(#[$doc])* $variant,)*
        }

        impl ModelOption {
            /// Every model option, in the order of the command line's help.
            pub const ALL: &[ModelOption] = &[$(ModelOption::$variant,)*];

            /// The command-line flag, e.g. `--learners`.
            pub fn flag(self) -> &'static str {
                match self {
                    $(ModelOption::$variant => concat!("--", $flag),)*
                }
            }

            /// The option's value in `config`, as the command line writes it.
            pub fn value(self, config: &BoosterConfig) -> String {
                match self {
                    $(ModelOption::$variant => {
                        let $config = config;
                        $header
                    })*
                }
            }
        }
    };
}

crate::model_options!(model_option_enum);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learners::WeakKind;

    #[test]
    fn flags_are_unique_and_every_value_is_written() {
        let config = BoosterConfig::new(Algorithm::Falt, WeakKind::Vfdt, 1);
        let mut flags: Vec<&str> = ModelOption::ALL.iter().map(|o| o.flag()).collect();
        for o in ModelOption::ALL {
            assert!(o.flag().starts_with("--"), "{o:?}");
            assert!(!o.value(&config).is_empty(), "{o:?}");
        }
        flags.sort_unstable();
        flags.dedup();
        assert_eq!(flags.len(), ModelOption::ALL.len());
        assert_eq!(ModelOption::Gamma.flag(), "--gamma");
        assert_eq!(ModelOption::C.flag(), "--c");
        assert_eq!(ModelOption::Kernel.value(&config), "linear");
        assert_eq!(ModelOption::Grid.value(&config), "off");
    }
}
