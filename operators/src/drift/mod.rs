//! Concept-drift detectors: [`Adwin`] (adaptive windowing), [`PageHinkley`] (a CUSUM test
//! on the fading deviations from the mean) and [`Ddm`] (the drift detection method on an
//! error rate).
//!
//! Each watches one stream of numbers (a learner's loss, its 0/1 errors) through the one
//! trait [`DriftDetector`]: [`update`](DriftDetector::update) takes the next value and
//! says whether the stream is [`Stable`](DriftState::Stable), in a
//! [`Warning`](DriftState::Warning) zone (DDM only) or has changed
//! ([`Drift`](DriftState::Drift)). Their state is plain data (serde, `Clone`,
//! `PartialEq`), so a model file or a checkpoint holds a detector mid-window and resumes
//! it exactly.
//!
//! By default each behaves as River 0.26's detector of the same name (`drift.ADWIN`,
//! `drift.PageHinkley`, `drift.binary.DDM`) with River's default parameters: the same
//! change points on the same values, index for index (`operators/tests/drift.rs` checks
//! it against `operators/tests/fixtures/drift_river.json`, written by
//! `scripts/drift_river_fixture.py`). Where River departs from the paper, each type's
//! documentation says how; `docs/drift.md` summarizes.
//!
//! After a [`Drift`](DriftState::Drift), the next `update` first resets the detector (as
//! River does; [`AdwinConfig::reset_on_drift`] turns this off for ADWIN, which then keeps
//! the window the cut left, as in the paper). A value that is not finite (NaN, an
//! infinity) is ignored: the state does not change and `update` answers
//! [`Stable`](DriftState::Stable).
//!
//! ```
//! use flowboost_operators::drift::{Adwin, DriftDetector, DriftState};
//!
//! let mut adwin = Adwin::default();
//! let mut changes = Vec::new();
//! for i in 0..2000 {
//!     let x = if i < 1000 { (i % 2) as f64 } else { 5.0 + (i % 3) as f64 };
//!     if adwin.update(x) == DriftState::Drift {
//!         changes.push(i);
//!     }
//! }
//! assert_eq!(changes.len(), 1);
//! assert!(changes[0] >= 1000 && changes[0] < 1100);
//! ```

mod adwin;
mod ddm;
mod page_hinkley;

pub use adwin::{Adwin, AdwinConfig, Bucket};
pub use ddm::{Ddm, DdmConfig};
pub use page_hinkley::{PageHinkley, PageHinkleyConfig, PageHinkleyMode};

use serde::{Deserialize, Serialize};

/// What a detector says after a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DriftState {
    /// No change detected.
    #[default]
    Stable,
    /// A change may be under way (DDM's warning zone): the time to grow a background
    /// learner.
    Warning,
    /// A change was detected at this value.
    Drift,
}

/// A drift detector: one value at a time in, a [`DriftState`] out.
pub trait DriftDetector {
    /// Takes the next value of the watched stream and says whether it changed. A value
    /// that is not finite is ignored (the state is unchanged; the answer is
    /// [`DriftState::Stable`]).
    fn update(&mut self, x: f64) -> DriftState;

    /// What the last [`update`](Self::update) said ([`DriftState::Stable`] before any).
    fn state(&self) -> DriftState;

    /// Forgets everything seen (the parameters stay).
    fn reset(&mut self);

    /// The detector's current estimate of the stream's mean (ADWIN: the window's mean;
    /// Page-Hinkley: the running mean; DDM: the error rate `p`); 0 before any value.
    fn estimate(&self) -> f64;
}

/// A parameter of a detector out of its range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DriftConfigError {
    /// A confidence (ADWIN's `delta`) outside `(0, 1)`.
    #[error("{detector}: the confidence {name} must lie strictly between 0 and 1, not {value}")]
    Confidence {
        /// The detector.
        detector: &'static str,
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A count below its minimum.
    #[error("{detector}: {name} must be at least {min}, not {value}")]
    TooSmall {
        /// The detector.
        detector: &'static str,
        /// The parameter.
        name: &'static str,
        /// The least allowed value.
        min: u64,
        /// The value given.
        value: u64,
    },
    /// A real parameter that is not finite or lies outside its range.
    #[error("{detector}: {name} must be {expected}, not {value}")]
    OutOfRange {
        /// The detector.
        detector: &'static str,
        /// The parameter.
        name: &'static str,
        /// The range, in words.
        expected: &'static str,
        /// The value given.
        value: f64,
    },
    /// DDM's warning threshold above its drift threshold.
    #[error("DDM: the warning threshold ({warning}) must not exceed the drift threshold ({drift})")]
    WarningAboveDrift {
        /// The warning threshold.
        warning: f64,
        /// The drift threshold.
        drift: f64,
    },
}

/// The parameters of one detector of any kind (what a model's options will store).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DetectorConfig {
    /// ADWIN.
    Adwin(AdwinConfig),
    /// Page-Hinkley.
    PageHinkley(PageHinkleyConfig),
    /// DDM.
    Ddm(DdmConfig),
}

impl DetectorConfig {
    /// A fresh detector with these parameters, or the first parameter out of range.
    pub fn build(&self) -> Result<Detector, DriftConfigError> {
        Ok(match self {
            DetectorConfig::Adwin(c) => Detector::Adwin(Adwin::new(c.clone())?),
            DetectorConfig::PageHinkley(c) => Detector::PageHinkley(PageHinkley::new(c.clone())?),
            DetectorConfig::Ddm(c) => Detector::Ddm(Ddm::new(c.clone())?),
        })
    }
}

/// One detector of any kind, as one serializable value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Detector {
    /// ADWIN.
    Adwin(Adwin),
    /// Page-Hinkley.
    PageHinkley(PageHinkley),
    /// DDM.
    Ddm(Ddm),
}

impl DriftDetector for Detector {
    fn update(&mut self, x: f64) -> DriftState {
        match self {
            Detector::Adwin(d) => d.update(x),
            Detector::PageHinkley(d) => d.update(x),
            Detector::Ddm(d) => d.update(x),
        }
    }

    fn state(&self) -> DriftState {
        match self {
            Detector::Adwin(d) => d.state(),
            Detector::PageHinkley(d) => d.state(),
            Detector::Ddm(d) => d.state(),
        }
    }

    fn reset(&mut self) {
        match self {
            Detector::Adwin(d) => d.reset(),
            Detector::PageHinkley(d) => d.reset(),
            Detector::Ddm(d) => d.reset(),
        }
    }

    fn estimate(&self) -> f64 {
        match self {
            Detector::Adwin(d) => d.estimate(),
            Detector::PageHinkley(d) => d.estimate(),
            Detector::Ddm(d) => d.estimate(),
        }
    }
}

/// `Ok(())` when `value` is finite and at least `min`.
fn check_at_least(
    detector: &'static str,
    name: &'static str,
    value: f64,
    min: f64,
    expected: &'static str,
) -> Result<(), DriftConfigError> {
    if value.is_finite() && value >= min {
        Ok(())
    } else {
        Err(DriftConfigError::OutOfRange {
            detector,
            name,
            expected,
            value,
        })
    }
}
