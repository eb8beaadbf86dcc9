//! [`DataSource`]: one dataset of one or more files (e.g. train and test) with one
//! schema, streamed example by example.

use super::ReadError;
use super::arff::{self, ArffPlan, ArffRows};
use super::csv::{self, CsvPlan, CsvRows};
use super::libsvm::{self, LibsvmPlan, LibsvmRows};
use super::options::{Format, ReadOptions};
use super::sniff;
use flowboost_operators::data::{Example, Schema};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the readers settled at open time, per format.
#[derive(Clone, Debug)]
enum Plan {
    Arff(Arc<ArffPlan>),
    Libsvm(Arc<LibsvmPlan>),
    Csv(Arc<CsvPlan>),
}

/// One dataset: one or more files of one format that share one schema.
///
/// [`open`](DataSource::open) settles the schema: from the header for ARFF (every
/// file's header must declare the same attributes), and from a streaming scan of all
/// the files for LIBSVM (dimension, labels) and CSV (column kinds, categories, classes),
/// so a train and a test file get one consistent encoding. Then
/// [`examples`](DataSource::examples) streams the examples of one file, as many times
/// as wanted.
///
/// ```no_run
/// use flowboost_connectors::readers::{DataSource, ReadOptions};
/// use std::path::PathBuf;
///
/// let files = [PathBuf::from("adult.data"), PathBuf::from("adult.test")];
/// let source = DataSource::open(&files, &ReadOptions::default())?;
/// println!("{} features, {} classes", source.schema().dim(), source.schema().num_labels());
/// for example in source.examples(0)? {
///     let example = example?;
///     // learn from `example` ...
/// }
/// # Ok::<(), flowboost_connectors::readers::ReadError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DataSource {
    files: Vec<PathBuf>,
    format: Format,
    schema: Schema,
    plan: Plan,
}

impl DataSource {
    /// Open one or more files of one dataset (e.g. train and test) and settle one schema for all of them.
    ///
    /// With [`Format::Auto`] each file's format is detected from its content, and all
    /// must agree. Errors: no file, a missing or empty file, a file of another format
    /// than asked, a header that does not parse or differs between files, options that
    /// do not fit the format or the data (an unknown target or ignored column, a MULAN
    /// XML label absent from the ARFF, ...).
    pub fn open(files: &[PathBuf], options: &ReadOptions) -> Result<DataSource, ReadError> {
        Self::open_with(files, options, true)
    }

    /// Opens files to be scored by a model (nothing learned): as [`open`](Self::open),
    /// but the files may hold fewer than 2 labels (all of one class, or none: unlabeled
    /// records), since a model that scores them takes its labels from its own schema.
    pub fn open_for_scoring(
        files: &[PathBuf],
        options: &ReadOptions,
    ) -> Result<DataSource, ReadError> {
        Self::open_with(files, options, false)
    }

    fn open_with(
        files: &[PathBuf],
        options: &ReadOptions,
        learnable: bool,
    ) -> Result<DataSource, ReadError> {
        let Some(first) = files.first() else {
            return Err(ReadError::file(Path::new(""), "no data file given"));
        };
        let format = match options.format {
            Format::Auto => {
                let format = sniff::detect(first, options.max_line())?;
                for path in &files[1..] {
                    let other = sniff::detect(path, options.max_line())?;
                    if other != format {
                        return Err(ReadError::file(
                            path,
                            format!(
                                "looks like {other}, but {} looks like {format}: give the format",
                                first.display()
                            ),
                        ));
                    }
                }
                format
            }
            format => format,
        };
        let (schema, plan) = match format {
            Format::Arff => {
                let (schema, plan) = arff::open(files, options)?;
                (schema, Plan::Arff(plan))
            }
            Format::Libsvm => {
                let (schema, plan) = libsvm::open(files, options)?;
                (schema, Plan::Libsvm(plan))
            }
            Format::Csv | Format::Auto => {
                let (schema, plan) = csv::open(files, options, learnable)?;
                (schema, Plan::Csv(plan))
            }
        };
        // The readers check the dimension and the label ids line by line where they can
        // (LIBSVM); this catches the rest (an ARFF header or a CSV row of more columns).
        schema
            .check_limits()
            .map_err(|reason| ReadError::file(first, reason.to_string()))?;
        let source = DataSource {
            files: files.to_vec(),
            format,
            schema,
            plan,
        };
        if learnable && source.schema.num_labels() < 2 {
            // A bad line may be why (a class cell that did not read): it is named first.
            for index in 0..files.len() {
                if let Some(Err(e)) = source.examples(index)?.find(Result::is_err) {
                    return Err(e);
                }
            }
            return Err(ReadError::file(
                first,
                too_few_labels(&source.schema.labels, format),
            ));
        }
        Ok(source)
    }

    /// The schema shared by all the files: attributes, labels and task.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The files, in the order given to [`open`](DataSource::open).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The format of the files (never [`Format::Auto`]).
    pub fn format(&self) -> Format {
        self.format
    }

    /// The number of data records of file `index` (what [`examples`](Self::examples)
    /// yields, bad records included), when opening the source counted them: CSV files are
    /// read whole to settle their schema, so a caller that needs the count (a protocol
    /// that scores the last fifth, a holdout split) need not read them again. `None` for
    /// ARFF and LIBSVM files and for an index past the files. A file changed since
    /// [`open`](Self::open) may hold another number.
    pub fn records(&self, index: usize) -> Option<u64> {
        match &self.plan {
            Plan::Csv(plan) => plan.records(index),
            Plan::Arff(_) | Plan::Libsvm(_) => None,
        }
    }

    /// Stream the examples of file `index` (ids are 0-based record numbers in that file).
    ///
    /// Every data record (a line that is not blank nor a comment, and not the header)
    /// gets the next id, bad ones included. A bad record yields an error naming the
    /// file, line and reason, and the stream goes on with the next line; an I/O or
    /// decompression error ends it.
    pub fn examples(&self, index: usize) -> Result<Examples, ReadError> {
        let Some(path) = self.files.get(index) else {
            return Err(ReadError::file(
                Path::new(""),
                format!("no file {index}: the source has {} files", self.files.len()),
            ));
        };
        let inner = match &self.plan {
            Plan::Arff(plan) => Inner::Arff(ArffRows::new(Arc::clone(plan), path, index)?),
            Plan::Libsvm(plan) => Inner::Libsvm(LibsvmRows::new(Arc::clone(plan), path)?),
            Plan::Csv(plan) => Inner::Csv(CsvRows::new(Arc::clone(plan), path, index)?),
        };
        Ok(Examples { inner })
    }
}

/// The error of a dataset of fewer than 2 labels (no stream can be learned from one).
fn too_few_labels(labels: &[String], format: Format) -> String {
    let found = match labels {
        [] => "no label".to_string(),
        [one] => format!("one label, `{}`", super::excerpt(one)),
        _ => format!("{} labels", labels.len()),
    };
    let hint = match format {
        Format::Csv | Format::Auto => " (is the target column the right one? --target)",
        Format::Arff => " (the class attribute declares one value)",
        Format::Libsvm => "",
    };
    format!("{found} in the data: a stream needs at least 2 labels{hint}")
}

/// The reader behind an [`Examples`] stream.
enum Inner {
    Arff(ArffRows),
    Libsvm(LibsvmRows),
    Csv(CsvRows),
}

/// The examples of one file, read lazily line by line: an iterator of
/// `Result<Example, ReadError>` (see [`DataSource::examples`]).
pub struct Examples {
    inner: Inner,
}

impl Iterator for Examples {
    type Item = Result<Example, ReadError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Arff(rows) => rows.next(),
            Inner::Libsvm(rows) => rows.next(),
            Inner::Csv(rows) => rows.next(),
        }
    }
}

impl std::fmt::Debug for Examples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let format = match self.inner {
            Inner::Arff(_) => "arff",
            Inner::Libsvm(_) => "libsvm",
            Inner::Csv(_) => "csv",
        };
        f.debug_struct("Examples")
            .field("format", &format)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewer_than_two_labels_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for (name, content, hint) in [
            ("one.csv", "a,y\n1,x\n2,x\n", "--target"),
            ("one.svm", "1 1:1\n1 2:1\n", "one label, `1`"),
            (
                "one.arff",
                "@relation r\n@attribute a numeric\n@attribute c {x}\n@data\n1,x\n",
                "declares one value",
            ),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, content).unwrap();
            let e =
                DataSource::open(std::slice::from_ref(&p), &ReadOptions::default()).unwrap_err();
            assert_eq!(e.path, p);
            assert!(e.reason.contains("at least 2 labels"), "{e}");
            assert!(e.reason.contains(hint), "{e}");
        }
        // A bad line is named rather than the label count it may have caused.
        let p = dir.path().join("bad.csv");
        std::fs::write(&p, "a,y\n1,x\n2,\"y\n").unwrap();
        let e = DataSource::open(std::slice::from_ref(&p), &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }
}
