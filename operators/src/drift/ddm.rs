//! DDM, the drift detection method (Gama, Medas, Castillo and Rodrigues 2004), on a
//! stream of errors.

use super::{DriftConfigError, DriftDetector, DriftState, check_at_least};
use serde::{Deserialize, Serialize};

/// DDM's parameters. The defaults are River's (`drift.binary.DDM()`) and the paper's:
/// `warm_start` 30, `warning_threshold` 2, `drift_threshold` 3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DdmConfig {
    /// No warning or drift until more than this many values (since the start or the last
    /// reset) have been seen.
    pub warm_start: u64,
    /// The warning zone's multiple of `s_min` (2 in the paper: about 95% confidence);
    /// finite, above 0.
    pub warning_threshold: f64,
    /// The drift's multiple of `s_min` (3 in the paper: about 99%); finite, at least the
    /// warning threshold.
    pub drift_threshold: f64,
}

impl Default for DdmConfig {
    fn default() -> Self {
        DdmConfig {
            warm_start: 30,
            warning_threshold: 2.0,
            drift_threshold: 3.0,
        }
    }
}

impl DdmConfig {
    /// `Ok(())` when every parameter is in range.
    pub fn validate(&self) -> Result<(), DriftConfigError> {
        const D: &str = "DDM";
        let positive = "a finite number > 0";
        check_at_least(
            D,
            "warning_threshold",
            self.warning_threshold,
            0.0,
            positive,
        )?;
        check_at_least(D, "drift_threshold", self.drift_threshold, 0.0, positive)?;
        if self.warning_threshold == 0.0 {
            return Err(DriftConfigError::OutOfRange {
                detector: D,
                name: "warning_threshold",
                expected: positive,
                value: 0.0,
            });
        }
        if self.warning_threshold > self.drift_threshold {
            return Err(DriftConfigError::WarningAboveDrift {
                warning: self.warning_threshold,
                drift: self.drift_threshold,
            });
        }
        Ok(())
    }
}

/// DDM (J. Gama, P. Medas, G. Castillo, P. Rodrigues, *Learning with drift detection*,
/// SBIA 2004): the error rate of a learner should fall while the stream is stationary,
/// so a significant rise signals a change.
///
/// The input is an error stream: `x_t = 1` for a mistake, 0 for a right answer (a value
/// in between, such as a cost-weighted loss in `[0, 1]`, is taken as such; values outside
/// `[0, 1]` are clamped). After the `t`-th value (`t` from 1 since the start or the last
/// reset):
///
/// ```text
/// p_t = p_{t−1} + (x_t − p_{t−1}) / t        the error rate
/// s_t = sqrt(p_t (1 − p_t) / t)              its binomial standard deviation
/// ```
///
/// and once `t > warm_start`: if `p_t + s_t ≤ p_min + s_min`, then `(p_min, s_min) =
/// (p_t, s_t)`; then the answer is
///
/// ```text
/// Drift     if p_t + s_t > p_min + drift_threshold · s_min,
/// Warning   else if p_t + s_t > p_min + warning_threshold · s_min,
/// Stable    else.
/// ```
///
/// **As River 0.26 (the default), where it departs from the paper:** the comparisons are
/// strict (`>`; the paper writes `≥`, which differs only on exact ties); the minimum is
/// kept and the test made only once more than `warm_start` values have been seen (MOA's
/// `minNumInstances`, 30, likewise counts values); after a drift the next value starts
/// afresh. As in River and MOA, an error-free warm start gives `p_min = s_min = 0`, so the
/// first mistake after it is a drift.
///
/// ```
/// use flowboost_operators::drift::{Ddm, DriftDetector, DriftState};
///
/// let mut ddm = Ddm::default();
/// let mut first_warning = None;
/// let mut drift = None;
/// for i in 0..2000u64 {
///     // One mistake in 10, then one in 2 from value 1000 on.
///     let x = if i < 1000 { (i % 10 == 0) as u8 } else { (i % 2 == 0) as u8 };
///     match ddm.update(f64::from(x)) {
///         DriftState::Warning if first_warning.is_none() => first_warning = Some(i),
///         DriftState::Drift if drift.is_none() => drift = Some(i),
///         _ => {}
///     }
/// }
/// let (w, d) = (first_warning.unwrap_or(0), drift.unwrap_or(0));
/// assert!(1000 <= w && w < d && d < 1100, "warning at {w}, drift at {d}");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ddm {
    config: DdmConfig,
    /// `t`.
    n: u64,
    /// `p_t`.
    p: f64,
    /// `(p_min, s_min)`, once set.
    min: Option<(f64, f64)>,
    state: DriftState,
}

impl Default for Ddm {
    /// DDM with River's defaults.
    fn default() -> Self {
        Ddm::fresh(DdmConfig::default())
    }
}

impl Ddm {
    /// A fresh DDM, or the first parameter out of range.
    pub fn new(config: DdmConfig) -> Result<Self, DriftConfigError> {
        config.validate()?;
        Ok(Ddm::fresh(config))
    }

    fn fresh(config: DdmConfig) -> Self {
        Ddm {
            config,
            n: 0,
            p: 0.0,
            min: None,
            state: DriftState::Stable,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &DdmConfig {
        &self.config
    }

    /// `t`: the values seen since the start or the last reset.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// `p_t`, the error rate.
    pub fn error_rate(&self) -> f64 {
        self.p
    }

    /// `s_t = sqrt(p_t (1 − p_t) / t)` (0 before any value).
    pub fn std_dev(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            (self.p * (1.0 - self.p) / self.n as f64).sqrt()
        }
    }

    /// `(p_min, s_min)`, once the warm start is over.
    pub fn minimum(&self) -> Option<(f64, f64)> {
        self.min
    }
}

impl DriftDetector for Ddm {
    fn update(&mut self, x: f64) -> DriftState {
        if !x.is_finite() {
            return DriftState::Stable;
        }
        if self.state == DriftState::Drift {
            self.reset();
        }
        let x = x.clamp(0.0, 1.0);
        self.n += 1;
        let n = self.n as f64;
        self.p += (1.0 / n) * (x - self.p);
        let s = (self.p * (1.0 - self.p) / n).sqrt();
        let ps = self.p + s;
        self.state = DriftState::Stable;
        if self.n > self.config.warm_start {
            let (p_min, s_min) = match self.min {
                Some((p_min, s_min)) if ps > p_min + s_min => (p_min, s_min),
                _ => (self.p, s),
            };
            self.min = Some((p_min, s_min));
            if ps > p_min + self.config.drift_threshold * s_min {
                self.state = DriftState::Drift;
            } else if ps > p_min + self.config.warning_threshold * s_min {
                self.state = DriftState::Warning;
            }
        }
        self.state
    }

    fn state(&self) -> DriftState {
        self.state
    }

    fn reset(&mut self) {
        *self = Ddm::fresh(self.config.clone());
    }

    fn estimate(&self) -> f64 {
        self.p
    }
}
