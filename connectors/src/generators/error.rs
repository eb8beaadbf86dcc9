//! The one error type of the generators: a parameter out of its range.

/// Why a [`GeneratorConfig`](super::GeneratorConfig) or a
/// [`ClickSimConfig`](super::clicks::ClickSimConfig) is invalid; each names the parameter.
///
/// ```
/// use flowboost_connectors::generators::{GeneratorConfig, GeneratorError};
///
/// let mut config = GeneratorConfig::preset("binary", 1).unwrap();
/// config.dim = 0;
/// assert_eq!(config.validate(), Err(GeneratorError::NoDim));
/// assert_eq!(config.validate().unwrap_err().to_string(), "generator: dim must be at least 1");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GeneratorError {
    /// `dim` is 0.
    #[error("generator: dim must be at least 1")]
    NoDim,
    /// `dim` does not fit a feature index.
    #[error("generator: dim {0} is too large")]
    DimTooLarge(usize),
    /// Fewer than 2 labels.
    #[error("generator: labels must be at least 2, got {0}")]
    TooFewLabels(usize),
    /// More labels than a label id can name.
    #[error("generator: {0} labels are too many")]
    TooManyLabels(usize),
    /// A binary stream with other than 2 labels.
    #[error("generator: a binary stream has 2 labels, got {0}")]
    BinaryLabels(usize),
    /// `noise` outside `[0, 1)`.
    #[error("generator: noise must be in [0, 1), got {0}")]
    Noise(f64),
    /// `cardinality` outside `(0, labels)`.
    #[error("generator: cardinality must be in (0, {labels}), got {cardinality}")]
    Cardinality {
        /// The number of labels.
        labels: usize,
        /// The cardinality asked for.
        cardinality: f64,
    },
    /// A multi-label stream with `cardinality < 1`.
    #[error(
        "generator: every multi-label example has a relevant label, so cardinality \
         must be at least 1, got {0}"
    )]
    MultilabelCardinality(f64),
    /// The click simulator's `items` outside `1..=2^32-1`.
    #[error("click simulator: items must be in 1..=2^32-1, got {0}")]
    Items(usize),
    /// The click simulator's `slots` outside `1..=items`.
    #[error("click simulator: slots must be in 1..={items} (the items), got {slots}")]
    Slots {
        /// The number of items.
        items: usize,
        /// The number of slots asked for.
        slots: usize,
    },
    /// One of the click simulator's sizes is 0.
    #[error("click simulator: user_features, feature_values and latent must be at least 1")]
    NoUserModel,
    /// The base relevance outside `(0, 1)`.
    #[error("click simulator: base relevance must be in (0, 1), got {0}")]
    BaseRelevance(f64),
    /// A negative or non-finite affinity scale.
    #[error("click simulator: affinity scale must be finite and >= 0, got {0}")]
    AffinityScale(f64),
    /// Not one examination probability per slot.
    #[error("click simulator: {given} examination probabilities for {slots} slots")]
    ExaminationCount {
        /// How many were given.
        given: usize,
        /// The number of slots.
        slots: usize,
    },
    /// An examination probability outside `(0, 1]`.
    #[error("click simulator: examination probability {0} outside (0, 1]")]
    Examination(f64),
    /// A negative or non-finite click delay.
    #[error("click simulator: click delay must be finite and >= 0, got {0}")]
    ClickDelay(f64),
    /// The bts policy never updating.
    #[error("click simulator: bts_update_every must be at least 1")]
    BtsUpdateEvery,
    /// A negative or non-finite bts sharpness.
    #[error("click simulator: bts sharpness must be finite and >= 0, got {0}")]
    BtsSharpness(f64),
    /// Too many slate prefixes for the bts policy's exact propensities.
    #[error(
        "click simulator: the bts policy's exact propensities enumerate items^(slots-1) slate \
         prefixes: too many for {items} items and {slots} slots"
    )]
    BtsPrefixes {
        /// The number of items.
        items: usize,
        /// The number of slots.
        slots: usize,
    },
}
