//! LIBSVM / SVMlight files: `label idx:val idx:val ... # comment`, 1-based indices.
//!
//! A label field with a comma (`1,4`), or no label field at all (the line starts with an
//! `idx:val` token), makes the whole dataset multi-label, with label ids as written
//! (0-based). Otherwise two distinct numeric labels make a binary task (the larger one
//! is the positive class 1), more make a multiclass task (classes sorted numerically).

use super::line_error::LineError;
use super::lines::{DataLines, LineReader};
use super::number::parse_number;
use super::options::ReadOptions;
use super::{ReadError, excerpt};
use flowboost_operators::data::{Example, Features, Label, MAX_DIM, MAX_LABELS, Schema, Task};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Splits a line into its label field (`""` when absent) and its feature part, without
/// the comment; `None` for a blank or comment-only line.
fn split(line: &str) -> Option<(&str, &str)> {
    let line = match line.find('#') {
        Some(p) => &line[..p],
        None => line,
    };
    let line = line.trim_start();
    if line.is_empty() {
        return None;
    }
    let end = line
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(line.len());
    let first = &line[..end];
    if first.contains(':') {
        Some(("", line))
    } else {
        Some((first, &line[end..]))
    }
}

/// Whether a label field makes the dataset multi-label.
fn is_multilabel(label: &str) -> bool {
    label.is_empty() || label.contains(',')
}

/// Parses the label ids of a multi-label field (`""` is the empty set).
fn label_ids(
    label: &str,
    mut f: impl FnMut(u32) -> Result<(), LineError>,
) -> Result<(), LineError> {
    for part in label.split(',') {
        if part.is_empty() {
            continue;
        }
        let id: u32 = part
            .parse()
            .map_err(|_| LineError::BadLabelId(excerpt(part)))?;
        f(id)?;
    }
    Ok(())
}

/// A single-label class label as a number: an integer (`+1`, `-1`, `0`, `2`, `3.0`); a
/// fraction such as `1.5` is an error, not one more class.
#[inline]
fn class_label(label: &str) -> Result<f64, LineError> {
    let x = parse_number(label).map_err(|e| LineError::number(e, label, "the label"))?;
    if x.fract() != 0.0 {
        return Err(LineError::FractionalLabel(excerpt(label)));
    }
    Ok(x + 0.0)
}

/// Parses the `idx:val` tokens of a line and calls `f(index, value)` (1-based index).
#[inline]
fn features(
    rest: &str,
    mut f: impl FnMut(u32, f64) -> Result<(), LineError>,
) -> Result<(), LineError> {
    let mut previous = 0u32;
    for token in rest.split_ascii_whitespace() {
        let Some((index, value)) = token.split_once(':') else {
            return Err(LineError::BadFeature(excerpt(token)));
        };
        if index == "qid" {
            continue;
        }
        let index: u32 = index.parse().map_err(|_| LineError::BadIndex {
            index: excerpt(index),
            token: excerpt(token),
        })?;
        if index == 0 {
            return Err(LineError::IndexZero);
        }
        if index <= previous {
            return Err(LineError::UnsortedIndex { index, previous });
        }
        previous = index;
        let value = parse_number(value)
            .map_err(|e| LineError::number(e, value, format!("index {index}")))?;
        f(index, value)?;
    }
    Ok(())
}

/// Whether a line has the shape of a LIBSVM line: `Some(has_features)` if so.
#[cfg(test)]
fn sniff_line(line: &str) -> Option<bool> {
    line_shape(line).ok()
}

/// The shape of a line as LIBSVM: `Ok(has_features)`, or why it is not a LIBSVM line.
pub(crate) fn line_shape(line: &str) -> Result<bool, LineError> {
    let Some((label, rest)) = split(line) else {
        return Err(LineError::Empty);
    };
    if is_multilabel(label) {
        label_ids(label, |_| Ok(()))?;
    } else if label.parse::<f64>().is_err() {
        return Err(LineError::BadLabel(excerpt(label)));
    }
    let mut any = false;
    for token in rest.split_ascii_whitespace() {
        let Some((index, value)) = token.split_once(':') else {
            return Err(LineError::BadFeature(excerpt(token)));
        };
        if index != "qid" && index.parse::<u32>().is_err() {
            return Err(LineError::BadIndexAlone(excerpt(index)));
        }
        if value.is_empty() {
            return Err(LineError::NoValue(excerpt(token)));
        }
        any = true;
    }
    Ok(any)
}

/// How to turn LIBSVM lines into examples.
#[derive(Debug)]
pub(crate) struct LibsvmPlan {
    /// The longest line (bytes).
    max_line: usize,
    /// Label ids `0..k` (multi-label), or `None` for single-label.
    multilabel: Option<u32>,
    /// Single-label classes, ascending.
    classes: Vec<f64>,
    /// The dimension: the largest index seen.
    dim: u32,
}

/// Scans all `files` for the dimension and the labels, and settles the schema.
pub(crate) fn open(
    files: &[PathBuf],
    options: &ReadOptions,
) -> Result<(Schema, Arc<LibsvmPlan>), ReadError> {
    let first = &files[0];
    if !options.ignore.is_empty() {
        return Err(ReadError::file(
            first,
            "ignore is not supported for LIBSVM files",
        ));
    }
    if options.xml.is_some() {
        return Err(ReadError::file(
            first,
            "a MULAN XML label file goes with ARFF files only",
        ));
    }
    if !options.nominal.is_empty() {
        return Err(ReadError::file(
            first,
            "nominal columns are for CSV files (LIBSVM features are numbers)",
        ));
    }
    let mut dim = 0u32;
    let mut classes: FxHashMap<u64, String> = FxHashMap::default();
    let mut multilabel = options.labels.is_some();
    let mut max_id: Option<u32> = None;
    let mut valid = 0u64;
    // The first bad line: the scan goes on (the stream reports each bad line in its
    // turn), but when the good lines alone make no usable schema, this is the error.
    let mut first_bad: Option<ReadError> = None;
    for path in files {
        let mut reader = LineReader::open_with(path, options.max_line())?;
        let mut records = 0u64;
        loop {
            let line = match reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    if reader.failed() {
                        return Err(e);
                    }
                    first_bad.get_or_insert(e);
                    records += 1;
                    continue;
                }
            };
            let Some((label, rest)) = split(line.text) else {
                continue;
            };
            records += 1;
            let mut max_index = 0;
            let parsed = features(rest, |i, _| {
                max_index = i;
                Ok(())
            });
            // The memory of a schema grows with its dimension: an index above the limit
            // is an error here, before anything is sized by it.
            if max_index as usize > MAX_DIM {
                return Err(ReadError::at(
                    path,
                    line.number,
                    format!("index {max_index} is above the largest supported dimension {MAX_DIM}"),
                ));
            }
            // The indices before a bad token still count, so that a later error names
            // the bad token rather than the dimension.
            dim = dim.max(max_index);
            if let Err(reason) = parsed {
                first_bad.get_or_insert_with(|| ReadError::at(path, line.number, reason));
                continue;
            }
            if is_multilabel(label) {
                let mut largest = None;
                if let Err(reason) = label_ids(label, |id| {
                    largest = largest.max(Some(id));
                    Ok(())
                }) {
                    first_bad.get_or_insert_with(|| ReadError::at(path, line.number, reason));
                    continue;
                }
                if largest.is_some_and(|id| id as usize >= MAX_LABELS) {
                    return Err(ReadError::at(
                        path,
                        line.number,
                        format!(
                            "label id {} is above the largest supported label id {}",
                            largest.unwrap_or_default(),
                            MAX_LABELS - 1
                        ),
                    ));
                }
                multilabel = true;
                max_id = max_id.max(largest);
            } else {
                let x = match class_label(label) {
                    Ok(x) => x,
                    Err(reason) => {
                        first_bad.get_or_insert_with(|| ReadError::at(path, line.number, reason));
                        continue;
                    }
                };
                if let Ok(id) = label.parse::<u32>() {
                    max_id = max_id.max(Some(id));
                }
                let text = classes
                    .entry((x + 0.0).to_bits())
                    .or_insert_with(|| label.to_string());
                if label < text.as_str() {
                    *text = label.to_string();
                }
                if classes.len() > MAX_LABELS {
                    return Err(ReadError::at(
                        path,
                        line.number,
                        format!(
                            "more than {MAX_LABELS} distinct labels: at most {MAX_LABELS} are supported"
                        ),
                    ));
                }
            }
            valid += 1;
        }
        if records == 0 {
            return Err(ReadError::file(path, "empty file: no data"));
        }
    }
    if (valid == 0 || (!multilabel && classes.len() < 2))
        && let Some(mut e) = first_bad
    {
        if valid == 0 {
            e.reason.push_str(" (no valid LIBSVM line in the files)");
        }
        return Err(e);
    }
    if valid == 0 {
        return Err(ReadError::file(first, "no valid LIBSVM line in the files"));
    }
    let attributes = Schema::numeric(dim as usize, 0, Task::Binary).attributes;
    if multilabel {
        let k = match options.labels {
            Some(k) => k,
            None => max_id.map_or(0, |m| m as usize + 1),
        };
        if k == 0 {
            return Err(ReadError::file(
                first,
                "no label ids in the multi-label data: give the label count",
            ));
        }
        // A numeric label of a line without ids counts as an id once the data are
        // multi-label: check the count before making the labels.
        if k > MAX_LABELS {
            return Err(ReadError::file(
                first,
                format!(
                    "label id {} is above the largest supported label id {}",
                    k - 1,
                    MAX_LABELS - 1
                ),
            ));
        }
        let schema = Schema {
            attributes,
            labels: (0..k).map(|l| l.to_string()).collect(),
            task: Task::Multilabel,
        };
        let plan = LibsvmPlan {
            max_line: options.max_line(),
            multilabel: Some(k as u32),
            classes: Vec::new(),
            dim,
        };
        return Ok((schema, Arc::new(plan)));
    }
    let mut sorted: Vec<(f64, String)> = classes
        .into_iter()
        .map(|(bits, text)| (f64::from_bits(bits), text))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let task = if sorted.len() == 2 {
        Task::Binary
    } else {
        Task::Multiclass
    };
    let schema = Schema {
        attributes,
        labels: sorted.iter().map(|c| c.1.clone()).collect(),
        task,
    };
    let plan = LibsvmPlan {
        max_line: options.max_line(),
        multilabel: None,
        classes: sorted.iter().map(|c| c.0).collect(),
        dim,
    };
    Ok((schema, Arc::new(plan)))
}

impl LibsvmPlan {
    /// Parses the label and features of one line.
    fn parse(&self, label: &str, rest: &str) -> Result<(Features, Label), LineError> {
        let mut indices = Vec::new();
        let mut values = Vec::new();
        features(rest, |i, v| {
            if i > self.dim {
                return Err(LineError::IndexBeyond {
                    index: i,
                    dim: self.dim,
                });
            }
            indices.push(i - 1);
            values.push(v);
            Ok(())
        })?;
        let label = match self.multilabel {
            Some(k) => {
                let mut ids = Vec::new();
                label_ids(label, |id| {
                    if id >= k {
                        return Err(LineError::LabelOutOfRange { id, last: k - 1 });
                    }
                    ids.push(id);
                    Ok(())
                })?;
                Label::set(ids)
            }
            None => {
                let x = class_label(label)?;
                let class = self
                    .classes
                    .binary_search_by(|c| c.total_cmp(&x))
                    .map_err(|_| LineError::UnknownClassLabel(excerpt(label)))?;
                Label::Class(class as u32)
            }
        };
        Ok((
            Features::Sparse {
                indices,
                values,
                dim: self.dim,
            },
            label,
        ))
    }
}

/// The examples of one LIBSVM file.
pub(crate) struct LibsvmRows {
    plan: Arc<LibsvmPlan>,
    lines: DataLines,
}

impl LibsvmRows {
    /// Opens `path` for reading with `plan`.
    pub(crate) fn new(plan: Arc<LibsvmPlan>, path: &Path) -> Result<Self, ReadError> {
        Ok(LibsvmRows {
            lines: DataLines::new(LineReader::open_with(path, plan.max_line)?),
            plan,
        })
    }
}

impl Iterator for LibsvmRows {
    type Item = Result<Example, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let plan = &self.plan;
        self.lines.next(|text, id| {
            let (label, rest) = split(text)?;
            Some(plan.parse(label, rest).map(|(features, label)| Example {
                id,
                features,
                label: Some(label),
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_label_and_features() {
        assert_eq!(split("+1 3:1 # c"), Some(("+1", " 3:1 ")));
        assert_eq!(split("1,4 3:0.5"), Some(("1,4", " 3:0.5")));
        assert_eq!(split("3:0.5 4:1"), Some(("", "3:0.5 4:1")));
        assert_eq!(split("  # only a comment"), None);
        assert_eq!(split(""), None);
    }

    #[test]
    fn class_labels_are_integers() {
        assert_eq!(class_label("+1"), Ok(1.0));
        assert_eq!(class_label("-1"), Ok(-1.0));
        assert_eq!(class_label("3.0"), Ok(3.0));
        assert_eq!(class_label("-0").map(f64::to_bits), Ok(0f64.to_bits()));
        let e = class_label("1.5").unwrap_err().to_string();
        assert!(e.contains("`1.5` is not an integer"), "{e}");
        assert!(class_label("nan").unwrap_err().to_string().contains("NaN"));
    }

    #[test]
    fn a_fractional_label_is_an_error_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.svm");
        std::fs::write(&p, "1 1:1\n-1 2:1\n1.5 1:1\n-1 2:1\n").unwrap();
        let (schema, plan) = open(std::slice::from_ref(&p), &ReadOptions::default()).unwrap();
        assert_eq!(schema.labels, ["-1", "1"]);
        let rows: Vec<_> = LibsvmRows::new(plan, &p).unwrap().collect();
        let e = rows[2].as_ref().unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.reason.contains("not an integer"), "{}", e.reason);
        // Only fractions: no class, and the error names the first bad line.
        std::fs::write(&p, "0.5 1:1\n1.5 2:1\n").unwrap();
        let e = open(std::slice::from_ref(&p), &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn sniffs_lines() {
        assert_eq!(sniff_line("-1 3:1 11:1"), Some(true));
        assert_eq!(sniff_line("1,2 qid:3 4:0.5"), Some(true));
        assert_eq!(sniff_line("1,2,3"), Some(false));
        assert_eq!(sniff_line("a,b,c"), None);
        assert_eq!(sniff_line("1 2 3"), None);
        assert_eq!(sniff_line("0,2019-11-24 00:00:17.004101+00:00,79,2"), None);
    }
}
