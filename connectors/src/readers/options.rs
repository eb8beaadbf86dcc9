//! What the caller tells the readers: the format, the labels, the CSV header and target.

pub use super::lines::{DEFAULT_MAX_LINE_BYTES, MAX_MAX_LINE_BYTES};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The file format of a dataset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// Detect from the content (first declaration line `@...` means ARFF, `label idx:val`
    /// lines mean LIBSVM, anything else CSV), with the file extension as a hint.
    #[default]
    Auto,
    /// Weka ARFF, dense or sparse; MULAN multi-label ARFF with [`ReadOptions::labels`] or
    /// [`ReadOptions::xml`].
    Arff,
    /// LIBSVM / SVMlight: `label idx:val ...` with 1-based indices.
    Libsvm,
    /// Delimited text: comma, tab, semicolon (UCI's `, ` too), with or without a header.
    Csv,
}

flowboost_operators::named_values!(
    Format,
    "format",
    Auto => "auto",
    Arff => "arff",
    Libsvm => "libsvm" | "svmlight",
    Csv => "csv" | "tsv",
);

/// Whether the first row of a CSV file is a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Header {
    /// Decide per file. The first row is a header when (1) [`Target::Name`] names one of
    /// its fields, or (2) one of its fields is `target` or `class` (case-insensitive), or
    /// (3) some column holds a non-numeric, non-missing value in the first row while all
    /// its non-missing values in the other rows of that file are numbers.
    #[default]
    Auto,
    /// Every file starts with a header row.
    Yes,
    /// No file has a header row; columns are named `f0`, `f1`, ... by feature index.
    No,
}

flowboost_operators::named_values!(
    Header,
    "header setting",
    Auto => "auto",
    Yes => "yes" | "true",
    No => "no" | "false",
);

/// Which column (CSV) or attribute (single-label ARFF) holds the class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// CSV: the header column named `target`, else the one named `class` (both
    /// case-insensitive), else the last column. ARFF: the last attribute (Weka's rule).
    #[default]
    Auto,
    /// The first column or attribute.
    First,
    /// The last column or attribute.
    Last,
    /// The column or attribute with this name (exact match first, then case-insensitive).
    Name(String),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Auto => f.write_str("auto"),
            Target::First => f.write_str("first"),
            Target::Last => f.write_str("last"),
            Target::Name(name) => f.write_str(name),
        }
    }
}

impl FromStr for Target {
    type Err = String;

    /// Parses `auto`, `first` and `last` (any case); anything else is a column name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "" => Err("empty target name".to_string()),
            "auto" => Ok(Target::Auto),
            "first" => Ok(Target::First),
            "last" => Ok(Target::Last),
            _ => Ok(Target::Name(s.to_string())),
        }
    }
}

/// How to read a dataset: the format and, per format, how to find its labels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The file format (`Auto` detects it from the content).
    pub format: Format,
    /// Multi-label: the number `L` of labels. For MULAN ARFF the labels are the last `L`
    /// attributes; for LIBSVM it forces a multi-label task with label ids `0..L`.
    pub labels: Option<usize>,
    /// A MULAN XML label header: the labels are the ARFF attributes it names (by name,
    /// in the ARFF's order).
    pub xml: Option<PathBuf>,
    /// CSV: whether the first row is a header.
    pub header: Header,
    /// CSV and single-label ARFF: which column holds the class (not used when `labels`
    /// or `xml` make an ARFF multi-label).
    pub target: Target,
    /// CSV and ARFF: columns to drop, by header name or attribute name, or by 1-based
    /// column number (a name match wins over a number). Not supported for LIBSVM.
    pub ignore: Vec<String>,
    /// CSV: columns to read as nominal whatever they hold (by header name or 1-based
    /// number), e.g. codes that look like numbers. Without it a column is numeric when its
    /// non-missing cells are all numbers, nominal when they are all text or when at least
    /// 2 cells and 5% of them are text; a column of numbers with fewer text cells is an
    /// error naming the first one.
    pub nominal: Vec<String>,
    /// The longest line, in bytes, without its line ending (`None`: 16 MiB,
    /// [`DEFAULT_MAX_LINE_BYTES`]); a longer line is an error naming the file and line.
    pub max_line_bytes: Option<usize>,
}

impl ReadOptions {
    /// The longest line a reader keeps.
    pub fn max_line(&self) -> usize {
        self.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in [Format::Auto, Format::Arff, Format::Libsvm, Format::Csv] {
            assert_eq!(f.to_string().parse::<Format>().unwrap(), f);
        }
        for h in [Header::Auto, Header::Yes, Header::No] {
            assert_eq!(h.to_string().parse::<Header>().unwrap(), h);
        }
        for t in [
            Target::Auto,
            Target::First,
            Target::Last,
            Target::Name("click".into()),
        ] {
            assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
        }
        assert_eq!("TSV".parse::<Format>().unwrap(), Format::Csv);
        assert!("xls".parse::<Format>().is_err());
        assert!("maybe".parse::<Header>().is_err());
    }
}
