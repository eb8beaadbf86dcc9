//! The choice of algorithm and its hyper-parameters.

use super::scaling::FeatureScaling;
use serde::{Deserialize, Serialize};

/// The online multi-label algorithm.
///
/// With [`ThresholdConfig::kernel_width`] set, `Falt`, `Pa1Br` and `Pa2Br` become the
/// paper's RBF-kernel versions FALT(k), PA-I-BR(k) and PA-II-BR(k); `Salt` has no kernel
/// version (the paper, section 5: its diagonal H needs the explicit feature map).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThresholdAlgorithm {
    /// First-order ALT: online gradient descent on the ALT loss (eq. 6).
    Falt,
    /// Second-order ALT: adaptive mirror descent with a diagonal AdaGrad matrix per
    /// predictor (Algorithm 3).
    Salt,
    /// Binary relevance of PA-I binary classifiers (Crammer et al. 2006).
    Pa1Br,
    /// Binary relevance of PA-II binary classifiers (Crammer et al. 2006).
    Pa2Br,
}

crate::named_values!(
    ThresholdAlgorithm,
    "thresholding algorithm",
    Falt => "falt",
    Salt => "salt",
    Pa1Br => "pa1-br" | "pa-i-br" | "pa1",
    Pa2Br => "pa2-br" | "pa-ii-br" | "pa2",
);

/// Hyper-parameters of a [`ThresholdLearner`](super::ThresholdLearner).
///
/// The defaults follow the paper's sensitivity analysis (section 6.4: "search the optimal
/// eta around 1", "delta in SALT should also be searched around 1"): `eta = 1`,
/// `delta = 1`, `c = 1` (the middle of the paper's PA grid `[2^-15, 2^10]` on a log scale
/// is lower, but 1 is the usual PA default), `repetitions = 1` (plain Algorithm 1, the
/// setting of the regret theorems), linear, no budget, raw features, no grid: the paper's
/// algorithms as written. The command line's defaults differ where the paper says how to
/// choose (M from the label count, [`ThresholdConfig::default_repetitions`]) and where a
/// kernel model is a trap without them (online min-max scaling); see
/// `docs/thresholding.md`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThresholdConfig {
    /// The algorithm.
    pub algorithm: ThresholdAlgorithm,
    /// FALT / SALT step size eta (> 0).
    pub eta: f64,
    /// SALT's delta (> 0): H = delta I + diag(s).
    pub delta: f64,
    /// M (>= 1): the maximum number of update steps on each example (FALT, SALT, kernel
    /// FALT). The example is learned again, from the updated model, until its loss is
    /// zero or M steps were taken (a step at zero loss would not change the model, so
    /// stopping there is exact). The paper's experiments search M in `[2^-3, 2^2] * L`,
    /// i.e. an absolute count between L/8 and 4L for L labels (see
    /// [`ThresholdConfig::paper_repetitions`]). Ignored by the PA baselines.
    pub repetitions: usize,
    /// PA aggressiveness C (> 0).
    pub c: f64,
    /// RBF kernel width: the paper's delta^2 in `K(x, z) = exp(-||x - z||^2 / (2 delta^2))`
    /// (> 0). `None`: the linear models.
    pub kernel_width: Option<f64>,
    /// Kernel models only: the maximum number of support vectors (>= 1); `None`: no limit.
    /// When a new support vector makes the count exceed the budget, the oldest support
    /// vector is removed (a sliding window of the B most recent ones).
    pub budget: Option<usize>,
    /// How the model scales its input features (beyond the paper, which does not say):
    /// [`FeatureScaling::MinMax`] keeps online min-max statistics inside the model (see
    /// [`OnlineMinMax`](super::scaling::OnlineMinMax)).
    pub scaling: FeatureScaling,
    /// Beyond the paper: run one model per setting of this grid side by side and predict
    /// with the member of largest Hedge weight (see [`HedgeGrid`](super::grid::HedgeGrid));
    /// FALT, SALT and FALT(k) only. `None`: one model with `eta` and `kernel_width`.
    pub grid: Option<ThresholdGrid>,
}

/// The settings a [`HedgeGrid`](super::grid::HedgeGrid) runs side by side: every
/// combination of a step size and (kernel models) a kernel width; the other
/// hyper-parameters (M, SALT's delta, the budget) are the configuration's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThresholdGrid {
    /// The step sizes eta.
    pub etas: Vec<f64>,
    /// The RBF widths delta^2 (kernel models; empty for the linear ones).
    pub kernel_widths: Vec<f64>,
}

impl ThresholdGrid {
    /// The most members a grid may have.
    pub const MAX_MEMBERS: usize = 64;
    /// The default step sizes of the linear models (FALT(l), SALT): 2^-6, 2^-3, 1, which
    /// include every step size our one-pass tuning chose on the six MULAN sets of
    /// `docs/thresholding.md` (the paper: "search the optimal eta around 1").
    pub const LINEAR_ETAS: [f64; 3] = [0.015625, 0.125, 1.0];
    /// The default step sizes of FALT(k): 2^-2 and 1.
    pub const KERNEL_ETAS: [f64; 2] = [0.25, 1.0];
    /// The default RBF widths delta^2 of FALT(k) on min-max scaled features: 2^-4 to 2^4
    /// in factors of 4 (the tuned widths of `docs/thresholding.md` range from 2^-4 on birds
    /// and mediamill to 2^4 on bibtex).
    pub const KERNEL_WIDTHS: [f64; 5] = [0.0625, 0.25, 1.0, 4.0, 16.0];

    /// The default grid for `config`'s algorithm and kernel, with the step size (and the
    /// kernel width) fixed to `config`'s where `fix_eta` (`fix_width`) says so.
    pub fn default_for(config: &ThresholdConfig, fix_eta: bool, fix_width: bool) -> Self {
        let kernel = config.kernel_width.is_some();
        let etas = if fix_eta {
            vec![config.eta]
        } else if kernel {
            Self::KERNEL_ETAS.to_vec()
        } else {
            Self::LINEAR_ETAS.to_vec()
        };
        let kernel_widths = match config.kernel_width {
            Some(w) if fix_width => vec![w],
            Some(_) => Self::KERNEL_WIDTHS.to_vec(),
            None => Vec::new(),
        };
        ThresholdGrid {
            etas,
            kernel_widths,
        }
    }

    /// The members' configurations (each without a grid and with raw features: the grid
    /// scales once for all of them), step sizes outermost.
    pub fn members(&self, base: &ThresholdConfig) -> Vec<ThresholdConfig> {
        let widths: Vec<Option<f64>> = if base.kernel_width.is_some() {
            self.kernel_widths.iter().map(|&w| Some(w)).collect()
        } else {
            vec![None]
        };
        let mut v = Vec::new();
        for &eta in &self.etas {
            for &kernel_width in &widths {
                v.push(ThresholdConfig {
                    eta,
                    kernel_width,
                    grid: None,
                    scaling: FeatureScaling::None,
                    ..base.clone()
                });
            }
        }
        v
    }
}

impl Default for ThresholdConfig {
    fn default() -> Self {
        ThresholdConfig {
            algorithm: ThresholdAlgorithm::Falt,
            eta: 1.0,
            delta: 1.0,
            repetitions: 1,
            c: 1.0,
            kernel_width: None,
            budget: None,
            scaling: FeatureScaling::None,
            grid: None,
        }
    }
}

impl ThresholdConfig {
    /// A default configuration of `algorithm`.
    pub fn new(algorithm: ThresholdAlgorithm) -> Self {
        ThresholdConfig {
            algorithm,
            ..ThresholdConfig::default()
        }
    }

    /// M as the paper parameterizes it, `factor * num_labels` (the paper's grid is
    /// `factor` in `[2^-3, 2^2]`), rounded, at least 1.
    pub fn paper_repetitions(factor: f64, num_labels: usize) -> usize {
        let m = (factor * num_labels as f64).round();
        if m.is_finite() && m >= 1.0 {
            m as usize
        } else {
            1
        }
    }

    /// The command line's default M for `num_labels` labels: `M = L`, the factor 2^0 of the
    /// paper's search range `[2^-3, 2^2] * L` (just above its geometric middle 2^-0.5, on
    /// the side the paper recommends, section 6.4: "smaller M leads to worse results in
    /// many metrics ... we allow to take a large value of M"). M is a maximum: an example
    /// stops at zero loss.
    pub fn default_repetitions(num_labels: usize) -> usize {
        Self::paper_repetitions(1.0, num_labels)
    }

    /// Checks every parameter; the error names the parameter and the valid range.
    pub fn validate(&self) -> Result<(), ThresholdConfigError> {
        let positive = |name: &'static str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(ThresholdConfigError::NotPositive { name, value })
            }
        };
        match self.algorithm {
            ThresholdAlgorithm::Falt => positive("eta", self.eta)?,
            ThresholdAlgorithm::Salt => {
                positive("eta", self.eta)?;
                positive("delta", self.delta)?;
            }
            ThresholdAlgorithm::Pa1Br | ThresholdAlgorithm::Pa2Br => positive("C", self.c)?,
        }
        if self.repetitions == 0 {
            return Err(ThresholdConfigError::NoRepetitions);
        }
        if let Some(width) = self.kernel_width {
            positive("kernel width (delta^2)", width)?;
            if self.algorithm == ThresholdAlgorithm::Salt {
                return Err(ThresholdConfigError::SaltKernel);
            }
        }
        if let Some(grid) = &self.grid {
            if matches!(
                self.algorithm,
                ThresholdAlgorithm::Pa1Br | ThresholdAlgorithm::Pa2Br
            ) {
                return Err(ThresholdConfigError::GridAlgorithm);
            }
            if grid.etas.is_empty() {
                return Err(ThresholdConfigError::GridNoEtas);
            }
            for &eta in &grid.etas {
                positive("the grid's eta", eta)?;
            }
            match self.kernel_width {
                Some(_) if grid.kernel_widths.is_empty() => {
                    return Err(ThresholdConfigError::GridNoKernelWidths);
                }
                None if !grid.kernel_widths.is_empty() => {
                    return Err(ThresholdConfigError::GridKernelWidths);
                }
                _ => {}
            }
            for &w in &grid.kernel_widths {
                positive("the grid's kernel width (delta^2)", w)?;
            }
            let members = grid.etas.len() * grid.kernel_widths.len().max(1);
            if members > ThresholdGrid::MAX_MEMBERS {
                return Err(ThresholdConfigError::GridMembers(members));
            }
        }
        match (self.budget, self.kernel_width) {
            (Some(0), _) => Err(ThresholdConfigError::ZeroBudget),
            (Some(_), None) => Err(ThresholdConfigError::BudgetWithoutKernel),
            _ => Ok(()),
        }
    }
}

/// Why a thresholding learner's hyper-parameters are invalid
/// ([`ThresholdConfig::validate`], [`ThresholdLearner::new`](super::ThresholdLearner::new),
/// [`ScoreThresholdConfig::validate`](super::ScoreThresholdConfig::validate)); the message
/// names the parameter and the valid range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ThresholdConfigError {
    /// A parameter that must be a finite number > 0 is not.
    #[error("{name} must be a finite number > 0, got {value}")]
    NotPositive {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// M is 0.
    #[error("repetitions (M) must be at least 1")]
    NoRepetitions,
    /// A kernel width for SALT.
    #[error(
        "SALT has no kernel version (the paper kernelizes FALT only); \
                            drop the kernel width or use FALT"
    )]
    SaltKernel,
    /// A grid of a passive-aggressive learner.
    #[error("the grid applies to falt, salt and falt-kernel")]
    GridAlgorithm,
    /// A grid without step sizes.
    #[error("the grid needs at least one step size")]
    GridNoEtas,
    /// A kernel model's grid without kernel widths.
    #[error("the grid needs at least one kernel width")]
    GridNoKernelWidths,
    /// Kernel widths in a linear model's grid.
    #[error("the grid's kernel widths apply to kernel models only")]
    GridKernelWidths,
    /// A grid of more than [`ThresholdGrid::MAX_MEMBERS`] members.
    #[error("the grid has {0} members (at most {max})", max = ThresholdGrid::MAX_MEMBERS)]
    GridMembers(usize),
    /// A budget of 0 support vectors.
    #[error("budget must be at least 1 support vector")]
    ZeroBudget,
    /// A budget for a linear model.
    #[error("budget applies to kernel models only; set a kernel width too")]
    BudgetWithoutKernel,
    /// No labels.
    #[error("the number of labels must be at least 1")]
    NoLabels,
    /// More labels than a `u32` counts.
    #[error("too many labels: {0}")]
    TooManyLabels(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_messages_name_the_parameter() {
        let message = |c: ThresholdConfig| c.validate().unwrap_err().to_string();
        let salt = ThresholdConfig::new(ThresholdAlgorithm::Salt);
        assert_eq!(
            message(ThresholdConfig {
                eta: 0.0,
                ..ThresholdConfig::default()
            }),
            "eta must be a finite number > 0, got 0"
        );
        assert_eq!(
            message(ThresholdConfig {
                kernel_width: Some(1.0),
                ..salt
            }),
            "SALT has no kernel version (the paper kernelizes FALT only); drop the kernel width or use FALT"
        );
        assert_eq!(
            message(ThresholdConfig {
                repetitions: 0,
                ..ThresholdConfig::default()
            }),
            "repetitions (M) must be at least 1"
        );
        assert_eq!(
            ThresholdConfigError::GridMembers(300).to_string(),
            format!(
                "the grid has 300 members (at most {})",
                ThresholdGrid::MAX_MEMBERS
            )
        );
        assert_eq!(
            message(ThresholdConfig {
                budget: Some(3),
                ..ThresholdConfig::default()
            }),
            "budget applies to kernel models only; set a kernel width too"
        );
    }
}
