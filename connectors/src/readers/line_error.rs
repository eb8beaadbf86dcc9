//! Why one line of a data file does not parse: the reason of a [`ReadError`] about a line.
//!
//! The parsers of the formats return it; the reader that knows the file and the line
//! number makes the [`ReadError`] of it. Quoted pieces of the data are
//! [`excerpt`](super::excerpt)s, taken where the error is made.
//!
//! [`ReadError`]: super::ReadError

use super::number::NumberError;

/// Why one line (a row, a header line) of a data file does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LineError {
    // Fields and numbers, in every format.
    /// A field that is not a number.
    #[error("bad number `{value}` for {what}")]
    BadNumber {
        /// The field (an excerpt).
        value: String,
        /// Whose value it is (`column `x``, `attribute `x``, `index 3`, `the label`).
        what: String,
    },
    /// `NaN` or an infinity where a finite number must be.
    #[error(
        "NaN or infinity `{value}` for {what} (write `?` or leave the field empty for a missing value)"
    )]
    NonFinite {
        /// The field (an excerpt).
        value: String,
        /// Whose value it is.
        what: String,
    },
    /// Fewer fields than columns.
    #[error("truncated line: {found} fields, expected {expected}")]
    TooFewFields {
        /// The fields of the line.
        found: usize,
        /// The columns (attributes).
        expected: usize,
    },
    /// More fields than columns.
    #[error("too many fields: {found}, expected {expected}")]
    TooManyFields {
        /// The fields of the line.
        found: usize,
        /// The columns (attributes).
        expected: usize,
    },
    /// A nominal value not declared (ARFF) or not seen by the scan (CSV).
    #[error("unknown nominal value `{value}` for {what}")]
    UnknownNominal {
        /// The value (an excerpt).
        value: String,
        /// Whose value it is (`column `x`` or `attribute `x``).
        what: String,
    },
    /// A quoted field or value that is not UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,

    // CSV.
    /// A CSV class the scan did not see.
    #[error("unknown class `{0}`")]
    UnknownClass(String),
    /// A `"` field without its closing quote.
    #[error("truncated line: unterminated quoted field")]
    UnterminatedField,
    /// Text between a quoted field's closing quote and the delimiter.
    #[error("unexpected text after quoted field {0}")]
    AfterQuotedField(usize),

    // ARFF.
    /// A quoted string without its closing quote.
    #[error("unterminated quote in `{0}`")]
    UnterminatedQuote(String),
    /// Text between a quoted value and the comma.
    #[error("unexpected text after a quoted value: `{0}`")]
    AfterQuotedValue(String),
    /// A quoted attribute name that is not UTF-8.
    #[error("invalid UTF-8 in a name")]
    InvalidUtf8Name,
    /// `@attribute` alone.
    #[error("`@attribute` without a name")]
    NoAttributeName,
    /// `{a, b` without `}`.
    #[error("attribute `{0}`: unterminated nominal list (no closing `}}`)")]
    UnterminatedNominalList(String),
    /// A nominal value declared twice.
    #[error("attribute `{attribute}`: nominal value `{value}` is listed twice")]
    DuplicateNominal {
        /// The attribute (an excerpt).
        attribute: String,
        /// The value (an excerpt).
        value: String,
    },
    /// `{}`.
    #[error("attribute `{0}`: empty nominal list")]
    EmptyNominalList(String),
    /// `string`, `date` or `relational`.
    #[error(
        "attribute `{attribute}`: type `{ty}` is not supported (only numeric and nominal attributes; drop it from the file)"
    )]
    UnsupportedType {
        /// The attribute (an excerpt).
        attribute: String,
        /// The type (an excerpt).
        ty: String,
    },
    /// An attribute without a type.
    #[error("attribute `{0}` has no type")]
    NoType(String),
    /// A type ARFF does not have.
    #[error("attribute `{attribute}`: unknown type `{ty}`")]
    UnknownType {
        /// The attribute (an excerpt).
        attribute: String,
        /// The type (an excerpt).
        ty: String,
    },
    /// An empty field where the attribute declares no empty value.
    #[error("empty value for attribute `{0}` (ARFF writes `?` for a missing value)")]
    EmptyValue(String),
    /// `?` for a label of a multi-label dataset.
    #[error("missing value for label `{0}`")]
    MissingLabel(String),
    /// A sparse row without its `}`.
    #[error("truncated line: unterminated `{{` (no closing `}}`)")]
    UnterminatedSparse,
    /// A sparse entry that does not start with an index.
    #[error("bad sparse entry `{0}`: expected `index value`")]
    BadSparseEntry(String),
    /// A sparse index that does not parse.
    #[error("bad sparse index `{0}`")]
    BadSparseIndex(String),
    /// A sparse index past the last attribute.
    #[error(
        "sparse index {index} beyond the declared dimension ({attributes} attributes, indices 0..{})",
        .attributes - 1
    )]
    SparseIndexBeyond {
        /// The index.
        index: usize,
        /// The attributes declared (at least 1).
        attributes: usize,
    },
    /// A sparse index not above the one before it.
    #[error("duplicate or unsorted sparse index {index} (after {previous})")]
    UnsortedSparseIndex {
        /// The index.
        index: usize,
        /// The index before it.
        previous: usize,
    },
    /// A sparse index without a value.
    #[error("sparse index {0} has no value")]
    SparseNoValue(usize),
    /// Something other than `,` or `}` after a sparse entry.
    #[error("bad sparse entry near `{0}`: expected `,` or `}}`")]
    BadSparseSeparator(String),
    /// Something other than an instance weight after a sparse row.
    #[error("unexpected text after `}}`: `{0}`")]
    AfterSparse(String),

    // LIBSVM.
    /// A multi-label id that is not a natural number.
    #[error("bad label id `{0}` (expected 0, 1, 2, ...)")]
    BadLabelId(String),
    /// A class label with a fraction.
    #[error(
        "label `{0}` is not an integer: LIBSVM class labels are integers (+1/-1, or 0, 1, 2, ...)"
    )]
    FractionalLabel(String),
    /// A token without `:`.
    #[error("bad feature `{0}`: expected index:value")]
    BadFeature(String),
    /// A feature index that does not parse.
    #[error("bad index `{index}` in `{token}`")]
    BadIndex {
        /// The index (an excerpt).
        index: String,
        /// Its token (an excerpt).
        token: String,
    },
    /// Index 0.
    #[error("index 0: LIBSVM indices start at 1")]
    IndexZero,
    /// An index not above the one before it.
    #[error("duplicate or unsorted index {index} (after {previous})")]
    UnsortedIndex {
        /// The index.
        index: u32,
        /// The index before it.
        previous: u32,
    },
    /// An index past the dimension the scan settled.
    #[error("index {index} beyond the declared dimension {dim}")]
    IndexBeyond {
        /// The index.
        index: u32,
        /// The dimension.
        dim: u32,
    },
    /// A multi-label id past the labels the scan settled.
    #[error("label out of range: label id {id}, the labels are 0..{last}")]
    LabelOutOfRange {
        /// The label id.
        id: u32,
        /// The last label id.
        last: u32,
    },
    /// A class the scan did not see.
    #[error("unknown class label `{0}`")]
    UnknownClassLabel(String),
    /// (Sniffing) nothing on the line.
    #[error("no label and no features")]
    Empty,
    /// (Sniffing) a label that is no number.
    #[error("bad label `{0}`")]
    BadLabel(String),
    /// (Sniffing) an index that is no number.
    #[error("bad index `{0}`")]
    BadIndexAlone(String),
    /// (Sniffing) `index:` without a value.
    #[error("no value in `{0}`")]
    NoValue(String),
}

impl LineError {
    /// The error about a row of `found` fields where there are `expected` columns.
    pub(crate) fn field_count(found: usize, expected: usize) -> Self {
        if found < expected {
            LineError::TooFewFields { found, expected }
        } else {
            LineError::TooManyFields { found, expected }
        }
    }

    /// The error about field `value` of `what` (a column, an attribute, an index, the
    /// label) that is not a finite number.
    pub(crate) fn number(e: NumberError, value: &str, what: impl Into<String>) -> Self {
        let (value, what) = (super::excerpt(value), what.into());
        match e {
            NumberError::Invalid => LineError::BadNumber { value, what },
            NumberError::NonFinite => LineError::NonFinite { value, what },
        }
    }
}
