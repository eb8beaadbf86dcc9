//! The Page-Hinkley test (Page 1954), as MOA and River run it: a CUSUM of the fading
//! deviations from the running mean.

use super::{DriftConfigError, DriftDetector, DriftState, check_at_least};
use serde::{Deserialize, Serialize};

/// Which changes of the mean Page-Hinkley looks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PageHinkleyMode {
    /// Increases only (MOA's test, and the one for a loss or an error rate).
    Up,
    /// Decreases only.
    Down,
    /// Either (River's default).
    #[default]
    Both,
}

/// Page-Hinkley's parameters. The defaults are River's (`drift.PageHinkley()`):
/// `min_instances` 30, `delta` 0.005, `threshold` 50, `alpha` `1 − 0.0001`, mode
/// [`Both`](PageHinkleyMode::Both).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageHinkleyConfig {
    /// No drift is reported before this many values (since the start or the last reset).
    pub min_instances: u64,
    /// `δ`: the magnitude of change tolerated, subtracted from (up) or added to (down)
    /// each deviation; finite, at least 0.
    pub delta: f64,
    /// `λ`: the detection threshold; finite, at least 0.
    pub threshold: f64,
    /// `α`: the fading factor of the cumulative sums, in `(0, 1]` (1: no fading).
    pub alpha: f64,
    /// Increases, decreases or both.
    pub mode: PageHinkleyMode,
}

impl Default for PageHinkleyConfig {
    fn default() -> Self {
        PageHinkleyConfig {
            min_instances: 30,
            delta: 0.005,
            threshold: 50.0,
            alpha: 1.0 - 0.0001,
            mode: PageHinkleyMode::Both,
        }
    }
}

impl PageHinkleyConfig {
    /// `Ok(())` when every parameter is in range.
    pub fn validate(&self) -> Result<(), DriftConfigError> {
        const D: &str = "Page-Hinkley";
        check_at_least(D, "delta", self.delta, 0.0, "a finite number >= 0")?;
        check_at_least(D, "threshold", self.threshold, 0.0, "a finite number >= 0")?;
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(DriftConfigError::OutOfRange {
                detector: D,
                name: "alpha",
                expected: "in (0, 1]",
                value: self.alpha,
            });
        }
        Ok(())
    }
}

/// The Page-Hinkley test (E. S. Page, *Continuous inspection schemes*, Biometrika 41,
/// 1954), in the fading form of MOA and River.
///
/// After the `t`-th value `x_t` (`t` counted from 1 since the start or the last reset):
///
/// ```text
/// x̄_t = x̄_{t−1} + (x_t − x̄_{t−1}) / t                      the running mean
/// U_t = α · U_{t−1} + (x_t − x̄_t) − δ,   m_t = min(U_1, …, U_t)       (increases)
/// L_t = α · L_{t−1} + (x_t − x̄_t) + δ,   M_t = max(−1, L_1, …, L_t)   (decreases)
/// ```
///
/// with `U_0 = L_0 = 0`; from `t ≥ min_instances` on, a drift is `U_t − m_t > λ` (mode
/// [`Up`](PageHinkleyMode::Up)), `M_t − L_t > λ` ([`Down`](PageHinkleyMode::Down)), or
/// either ([`Both`](PageHinkleyMode::Both)). It never reports a warning.
///
/// **As River 0.26 (the default).** The test is two-sided by default (MOA's and Page's are
/// one-sided: `Up`); the sums fade by `α` (Page's do not: `α = 1`); the maximum of the
/// decreasing sum starts at −1, not at −∞ (River's choice, kept so that the change points
/// agree: it makes the down test slightly less eager while `L` stays below −1); after a
/// drift the next value starts afresh (mean, sums and extrema).
///
/// ```
/// use flowboost_operators::drift::{DriftDetector, DriftState, PageHinkley};
///
/// let mut ph = PageHinkley::default();
/// let mut changes = Vec::new();
/// for i in 0..2000 {
///     let x = if i < 1000 { (i % 2) as f64 } else { 4.0 + (i % 4) as f64 };
///     if ph.update(x) == DriftState::Drift {
///         changes.push(i);
///     }
/// }
/// assert!(!changes.is_empty() && changes[0] >= 1000 && changes[0] < 1050);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageHinkley {
    config: PageHinkleyConfig,
    /// `t`.
    n: u64,
    /// `x̄_t`.
    mean: f64,
    /// `U_t`.
    sum_increase: f64,
    /// `L_t`.
    sum_decrease: f64,
    /// `m_t` (none before the first value).
    min_increase: Option<f64>,
    /// `M_t`.
    max_decrease: f64,
    state: DriftState,
}

impl Default for PageHinkley {
    /// Page-Hinkley with River's defaults.
    fn default() -> Self {
        PageHinkley::fresh(PageHinkleyConfig::default())
    }
}

impl PageHinkley {
    /// A fresh test, or the first parameter out of range.
    pub fn new(config: PageHinkleyConfig) -> Result<Self, DriftConfigError> {
        config.validate()?;
        Ok(PageHinkley::fresh(config))
    }

    fn fresh(config: PageHinkleyConfig) -> Self {
        PageHinkley {
            config,
            n: 0,
            mean: 0.0,
            sum_increase: 0.0,
            sum_decrease: 0.0,
            min_increase: None,
            max_decrease: -1.0,
            state: DriftState::Stable,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &PageHinkleyConfig {
        &self.config
    }

    /// `t`: the values seen since the start or the last reset.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// `U_t`, the cumulative sum for increases.
    pub fn sum_increase(&self) -> f64 {
        self.sum_increase
    }

    /// `L_t`, the cumulative sum for decreases.
    pub fn sum_decrease(&self) -> f64 {
        self.sum_decrease
    }

    /// The statistic for increases, `U_t − m_t` (0 before any value).
    pub fn increase_statistic(&self) -> f64 {
        self.min_increase.map_or(0.0, |m| self.sum_increase - m)
    }

    /// The statistic for decreases, `M_t − L_t`.
    pub fn decrease_statistic(&self) -> f64 {
        self.max_decrease - self.sum_decrease
    }
}

impl DriftDetector for PageHinkley {
    fn update(&mut self, x: f64) -> DriftState {
        if !x.is_finite() {
            return DriftState::Stable;
        }
        if self.state == DriftState::Drift {
            self.reset();
        }
        let c = &self.config;
        self.n += 1;
        self.mean += (1.0 / self.n as f64) * (x - self.mean);
        let dev = x - self.mean;
        self.sum_increase = c.alpha * self.sum_increase + dev - c.delta;
        self.sum_decrease = c.alpha * self.sum_decrease + dev + c.delta;
        if self.min_increase.is_none_or(|m| self.sum_increase < m) {
            self.min_increase = Some(self.sum_increase);
        }
        if self.sum_decrease > self.max_decrease {
            self.max_decrease = self.sum_decrease;
        }
        let drift = self.n >= c.min_instances && {
            let up = self.increase_statistic() > c.threshold;
            let down = self.decrease_statistic() > c.threshold;
            match c.mode {
                PageHinkleyMode::Up => up,
                PageHinkleyMode::Down => down,
                PageHinkleyMode::Both => up || down,
            }
        };
        self.state = if drift {
            DriftState::Drift
        } else {
            DriftState::Stable
        };
        self.state
    }

    fn state(&self) -> DriftState {
        self.state
    }

    fn reset(&mut self) {
        *self = PageHinkley::fresh(self.config.clone());
    }

    fn estimate(&self) -> f64 {
        self.mean
    }
}
