use serde::{Deserialize, Serialize};

/// The kind of prediction problem a stream poses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// Two classes; label 1 is the positive class, label 0 the negative one.
    Binary,
    /// One label out of `k > 2` (or `k = 2` when the classes are not ordered as negative / positive).
    Multiclass,
    /// A set of relevant labels out of `k`.
    Multilabel,
}

crate::named_values!(
    Task,
    "task",
    Binary => "binary",
    Multiclass => "multiclass",
    Multilabel => "multilabel" | "multi-label",
);

/// Whether an attribute holds numbers or one value out of a fixed set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AttributeKind {
    /// A real value.
    Numeric,
    /// One of the listed values; the feature value is the index into this list (0-based).
    Nominal(Vec<String>),
}

/// One input attribute (feature) of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    /// The attribute's name as the file gives it (or `f<index>` when it has none).
    pub name: String,
    /// Numeric or nominal.
    pub kind: AttributeKind,
}

impl Attribute {
    /// A numeric attribute.
    pub fn numeric(name: impl Into<String>) -> Self {
        Attribute {
            name: name.into(),
            kind: AttributeKind::Numeric,
        }
    }

    /// A nominal attribute with the given values.
    pub fn nominal(name: impl Into<String>, values: Vec<String>) -> Self {
        Attribute {
            name: name.into(),
            kind: AttributeKind::Nominal(values),
        }
    }

    /// The number of values of a nominal attribute, `None` for a numeric one.
    pub fn cardinality(&self) -> Option<usize> {
        match &self.kind {
            AttributeKind::Numeric => None,
            AttributeKind::Nominal(v) => Some(v.len()),
        }
    }
}

/// The most features (attributes) a schema may have: 2^20 = 1,048,576. Memory grows with
/// the dimension (the attribute names, and per feature in the learners: one Hoeffding
/// tree on 2^20 features takes about 2.6 GB), so the readers and the command line refuse
/// a larger one (say a LIBSVM index of 4294967295) with an error naming the file and
/// line or the option.
pub const MAX_DIM: usize = 1 << 20;

/// The most labels (classes, or multi-label labels) a schema may have: 2^16 = 65,536.
pub const MAX_LABELS: usize = 1 << 16;

/// The most values a nominal input attribute may have: 1,024. A Hoeffding tree keeps
/// `values x labels` counts per nominal attribute in every leaf, and a split on it makes
/// one leaf per value, so a column of ids or free text (200,000 distinct values in a
/// 200,000-row CSV file took 22 GB before this limit) is refused with an error naming the
/// attribute (and the file and line); drop such a column (`--ignore`).
pub const MAX_NOMINAL_VALUES: usize = 1 << 10;

/// The error of a nominal attribute of `values` (a count, or "more than N") values, over
/// [`MAX_NOMINAL_VALUES`].
pub fn nominal_limit_error(name: &str, values: &str) -> String {
    let name: String = name.chars().take(64).collect();
    format!(
        "attribute `{name}`: {values} distinct values: a nominal attribute may have at most {MAX_NOMINAL_VALUES} (an id or free-text column? drop it with --ignore)"
    )
}

/// Why a schema is over a limit ([`Schema::check_limits`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// A nominal attribute of more than [`MAX_NOMINAL_VALUES`] values.
    #[error("{}", nominal_limit_error(name, &values.to_string()))]
    NominalValues {
        /// The attribute.
        name: String,
        /// Its number of values.
        values: usize,
    },
    /// More than [`MAX_DIM`] features.
    #[error("{0} features: at most {MAX_DIM} are supported")]
    Features(usize),
    /// More than [`MAX_LABELS`] labels.
    #[error("{0} labels: at most {MAX_LABELS} are supported")]
    Labels(usize),
}

/// What a stream looks like: its attributes, its labels and its task.
///
/// Every reader knows the schema before the first example (from the file header or a
/// first pass over the header line), so learners can be sized up front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    /// The input attributes, in feature-index order.
    pub attributes: Vec<Attribute>,
    /// The label names, in label-index order (class names for binary and multiclass).
    pub labels: Vec<String>,
    /// The task.
    pub task: Task,
}

impl Schema {
    /// The number of input features (attributes).
    pub fn dim(&self) -> usize {
        self.attributes.len()
    }

    /// An error naming the limit when the schema has more than [`MAX_DIM`] features, more
    /// than [`MAX_LABELS`] labels, or a nominal attribute of more than
    /// [`MAX_NOMINAL_VALUES`] values.
    pub fn check_limits(&self) -> Result<(), LimitError> {
        if let Some(a) = self
            .attributes
            .iter()
            .find(|a| a.cardinality().is_some_and(|v| v > MAX_NOMINAL_VALUES))
        {
            return Err(LimitError::NominalValues {
                name: a.name.clone(),
                values: a.cardinality().unwrap_or(0),
            });
        }
        if self.dim() > MAX_DIM {
            return Err(LimitError::Features(self.dim()));
        }
        if self.num_labels() > MAX_LABELS {
            return Err(LimitError::Labels(self.num_labels()));
        }
        Ok(())
    }

    /// The number of labels `k` (2 for a binary task).
    pub fn num_labels(&self) -> usize {
        self.labels.len()
    }

    /// A schema of `dim` numeric features named `f0..`, and labels named `0..k-1`.
    pub fn numeric(dim: usize, num_labels: usize, task: Task) -> Self {
        Schema {
            attributes: (0..dim)
                .map(|j| Attribute::numeric(format!("f{j}")))
                .collect(),
            labels: (0..num_labels).map(|l| l.to_string()).collect(),
            task,
        }
    }
}
