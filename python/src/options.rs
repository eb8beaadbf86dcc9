//! The model options as keyword arguments: the command line's list
//! (`flowboost_operators::model_options!`) made into a struct of given values, set from
//! Python objects by the option's name (the flag with `_` for `-`), applied to a
//! [`BoosterConfig`] with the command line's defaults (`flowboost run --help`).

use flowboost_operators::boosters::{
    Algorithm, BoosterConfig, ModelOption, OzaVotes, Potential, TreeParams,
};
use flowboost_operators::data::{Schema, Task};
use flowboost_operators::engine::LabelSetKind;
use flowboost_operators::learners::WeakKind;
use flowboost_operators::thresholding::{
    FeatureScaling, ScoreThresholdConfig, ThresholdAlgorithm, ThresholdConfig, ThresholdGrid,
};
use flowboost_operators::topk::{Randomization, TopKConfig};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::str::FromStr;

/// falt-kernel's default step size (the command line's).
const KERNEL_FALT_ETA: f64 = 0.25;
/// The most weak learners (the command line's).
const MAX_LEARNERS: usize = 10_000;
/// Learners times the features each looks at, at most (the command line's).
const MAX_LEARNER_FEATURES: usize = 1 << 25;
/// The largest trees' memory budget (the command line's).
const MAX_MODEL_BYTES: u64 = 1 << 50;

/// `kernel`: linear or rbf (as on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Inner products of the features.
    Linear,
    /// The RBF kernel.
    Rbf,
}

flowboost_operators::named_values!(Kernel, "kernel", Linear => "linear", Rbf => "rbf");

/// A value read from a Python object for option `name`.
trait FromPy: Sized {
    fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self>;
}

fn positive(value: &Bound<'_, PyAny>, name: &str) -> PyResult<usize> {
    let n: i64 = value
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{name}: expected an integer")))?;
    if n < 1 {
        return Err(PyValueError::new_err(format!(
            "{name}: {n} is not a positive integer"
        )));
    }
    usize::try_from(n).map_err(|_| PyValueError::new_err(format!("{name}: {n} is too large")))
}

impl FromPy for Option<usize> {
    fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        let n = positive(value, name)?;
        if name == "learners" && n > MAX_LEARNERS {
            return Err(PyValueError::new_err(format!(
                "learners: {n} is more than {MAX_LEARNERS}"
            )));
        }
        Ok(Some(n))
    }
}

impl FromPy for Option<u64> {
    fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        let n = positive(value, name)? as u64;
        if n > MAX_MODEL_BYTES {
            return Err(PyValueError::new_err(format!(
                "{name}: {n} is more than {MAX_MODEL_BYTES}"
            )));
        }
        Ok(Some(n))
    }
}

impl FromPy for Option<f64> {
    fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        if value.is_instance_of::<pyo3::types::PyString>() {
            return Err(PyTypeError::new_err(format!("{name}: expected a number")));
        }
        let x: f64 = value
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{name}: expected a number")))?;
        if !x.is_finite() {
            return Err(PyValueError::new_err(format!(
                "{name}: {x} is not a finite number"
            )));
        }
        Ok(Some(x))
    }
}

impl FromPy for bool {
    fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        value
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{name}: expected True or False")))
    }
}

impl FromPy for Vec<usize> {
    fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        Ok(vec![positive(value, name)?])
    }
}

/// Named values (`weak="linear"`), parsed as the command line parses them.
macro_rules! from_py_named {
    ($($ty:ty),*) => {$(
        impl FromPy for Option<$ty> {
            fn from_py(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
                let text: String = value
                    .extract()
                    .map_err(|_| PyTypeError::new_err(format!("{name}: expected a string")))?;
                <$ty>::from_str(&text)
                    .map(Some)
                    .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))
            }
        }
    )*};
}

from_py_named!(
    WeakKind,
    TreeParams,
    Potential,
    OzaVotes,
    Randomization,
    Kernel,
    FeatureScaling,
    LabelSetKind
);

/// Whether a field holds a given value.
trait GivenValue {
    type Value;
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

macro_rules! given_options {
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
        /// The model options given as keyword arguments.
        #[derive(Debug, Default)]
        pub struct Given {
            $(pub $field: $ty,)*
        }

        impl Given {
            /// Sets option `flag` (the command line's name) from `value`; `false` for no
            /// such option.
            pub fn set(&mut self, flag: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
                let name = flag.replace('-', "_");
                match flag {
                    $($flag => {
                        self.$field = FromPy::from_py(value, &name)?;
                        Ok(true)
                    })*
                    _ => Ok(false),
                }
            }

            /// The options given.
            pub fn given(&self) -> Vec<ModelOption> {
                let mut given = Vec::new();
                $(
                    if GivenValue::given(&self.$field).is_some() {
                        given.push(ModelOption::$variant);
                    }
                )*
                given
            }

            /// Sets the given options in `config`.
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

flowboost_operators::model_options!(given_options);

impl Given {
    fn apply_kernel(&self, config: &mut BoosterConfig) {
        let rbf = self.kernel == Some(Kernel::Rbf) || config.algorithm == Algorithm::FaltKernel;
        config.threshold.kernel_width = rbf.then(|| self.kernel_width.unwrap_or(1.0));
    }

    fn apply_grid(&self, config: &mut BoosterConfig) {
        config.threshold.grid = Some(ThresholdGrid::default_for(
            &config.threshold,
            self.eta.is_some(),
            self.kernel_width.is_some(),
        ));
    }

    /// The configuration of `algo` on a stream of `schema`, as `flowboost run --algo
    /// ALGO` with these options builds it (the same defaults), or why not.
    pub fn config(
        &self,
        algo: Algorithm,
        seed: u64,
        schema: &Schema,
    ) -> Result<BoosterConfig, String> {
        self.check_applicable(algo)?;
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
        config.seed = seed;
        if self.tree_params.is_none() {
            config.tree_params = if algo.stages(config.learners) <= 1 {
                TreeParams::Default
            } else {
                TreeParams::Random
            };
        }
        if self.repetitions.is_none()
            && matches!(
                algo,
                Algorithm::Falt | Algorithm::Salt | Algorithm::FaltKernel
            )
        {
            config.threshold.repetitions =
                ThresholdConfig::default_repetitions(schema.num_labels());
        }
        self.check_schema(&config, schema)?;
        Ok(config)
    }

    fn check_schema(&self, config: &BoosterConfig, schema: &Schema) -> Result<(), String> {
        let algo = config.algorithm;
        if algo.is_topk() {
            for &k in &self.k {
                if k > schema.num_labels() {
                    return Err(format!(
                        "k={k}: the model has {} labels (k is at most the label count)",
                        schema.num_labels()
                    ));
                }
            }
        }
        if let Some(m) = self.feature_subset
            && m > schema.dim()
        {
            return Err(format!(
                "feature_subset={m}: the model has {} features (at most the dimension)",
                schema.dim()
            ));
        }
        let stages = algo.stages(config.learners).max(1);
        let per_learner = config
            .feature_subset
            .unwrap_or(usize::MAX)
            .min(schema.dim());
        if stages.saturating_mul(per_learner) > MAX_LEARNER_FEATURES {
            return Err(format!(
                "learners={}: {stages} learners on {per_learner} features each pass the limit of {MAX_LEARNER_FEATURES} learner-features; use fewer learners, fewer features (max_features) or feature_subset",
                config.learners
            ));
        }
        if schema.task == Task::Multilabel || config.label_set.is_none() {
            Ok(())
        } else {
            Err("label_set applies to multi-label models only".into())
        }
    }

    fn check_applicable(&self, algo: Algorithm) -> Result<(), String> {
        let spec = algo.spec();
        let stray: Vec<String> = self
            .given()
            .into_iter()
            .filter(|&o| !spec.reads(o))
            .map(|o| o.flag().trim_start_matches("--").replace('-', "_"))
            .collect();
        if !stray.is_empty() {
            return Err(format!("{} do not apply to {algo}", stray.join(", ")));
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
                "budget and kernel_width apply to kernel models (kernel=\"rbf\" or FALTKernel)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The options `config`'s algorithm reads, by keyword name, with their values as the
/// command line writes them (what a loaded model was trained with).
pub fn options_of(config: &BoosterConfig) -> Vec<(String, String)> {
    let spec = config.algorithm.spec();
    ModelOption::ALL
        .iter()
        .filter(|&&o| spec.reads(o))
        .map(|&o| {
            (
                o.flag().trim_start_matches("--").replace('-', "_"),
                o.value(config),
            )
        })
        .collect()
}
