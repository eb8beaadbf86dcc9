//! Delimited text files: CSV, TSV, semicolon-separated, UCI's `, ` (fields are trimmed),
//! with or without a header row, plain or gzip.
//!
//! A CSV file does not declare its schema, so [`open`] scans every given file once:
//! a column is numeric when all its non-missing values are numbers, nominal with the
//! values seen (sorted) when they are all text, or when at least 2 cells and 5% of them
//! are text, or when [`ReadOptions::nominal`] names it; a column of numbers with fewer
//! text cells is an error naming the first (a typo, not a category). The classes are the
//! target values seen, with one trailing `.` removed (UCI adult.test writes `>50K.`),
//! sorted numerically when all are numbers, else lexicographically; NaN and infinity are
//! not classes in a target column of numbers. Missing values (`?` or an empty field) read
//! as `NaN`. A read that gives no feature column, or a target found by `auto` with a
//! different value in every one of at least 20 rows, is an error (the file is likely not
//! CSV, or the class is another column).

use super::arff::{find_name, resolve_column};
use super::fields::{Fields, Quoting};
use super::line_error::LineError;
use super::lines::{DataLines, LineReader};
use super::nominal::{ClassIndex, ValueIndex, sort_values};
use super::number::{Cell, classify, is_missing, is_number, parse_number};
use super::options::{Format, Header, ReadOptions, Target};
use super::sniff;
use super::{ReadError, excerpt};
use flowboost_operators::data::{
    Attribute, Example, Features, Label, MAX_DIM, MAX_LABELS, MAX_NOMINAL_VALUES, Schema, Task,
    nominal_limit_error,
};
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// While a column looks numeric, the scan keeps at most this many distinct values.
const NUMERIC_VALUES_KEPT: usize = 1024;

/// A column of numbers and text is nominal when its text cells are at least this many...
const MIXED_MIN_TEXT_CELLS: u64 = 2;

/// ... and at least 1 in this many of its non-missing cells (5%); else the text cells are
/// taken for mistakes and the first one is an error (see [`ColumnScan::mixed_error`]).
const MIXED_MIN_TEXT_SHARE: u64 = 20;

/// A target column found by [`Target::Auto`] whose rows all hold different values, at
/// least this many, is an error (a regression target, an id, or a file that is not CSV),
/// not one class per row; a target the caller names is taken as it is.
const DISTINCT_TARGET_ROWS: u64 = 20;

/// Where a cell is: the index of the file among those opened, the line, and the cell's
/// text (as an error quotes it).
type CellAt = (usize, u64, String);

/// Keeps in `slot` the earlier (by file, then line) of its cell and `(file, line, v)`.
fn keep_first(slot: &mut Option<CellAt>, file: usize, line: u64, v: &str) {
    if slot
        .as_ref()
        .is_none_or(|(f, l, _)| (file, line) < (*f, *l))
    {
        *slot = Some((file, line, excerpt(v)));
    }
}

/// Whether a line carries no record: blank, or a UCI comment line starting with `|`.
fn is_comment(text: &str) -> bool {
    let t = text.trim_start();
    t.is_empty() || t.starts_with('|')
}

/// The delimiter of a file, from its first row: a tab if there is one, else `;` when
/// there are more semicolons than commas, else `,`.
fn detect_delimiter(line: &str) -> u8 {
    let count = |c: u8| line.bytes().filter(|&b| b == c).count();
    if count(b'\t') > 0 {
        b'\t'
    } else if count(b';') > count(b',') {
        b';'
    } else {
        b','
    }
}

/// Splits a row on `delim` (fields trimmed; `"..."` quoting with `""` for a quote) and
/// calls `f(index, field)`; returns the number of fields.
pub(crate) fn for_each_field(
    line: &str,
    delim: u8,
    scratch: &mut Vec<u8>,
    mut f: impl FnMut(usize, &str) -> Result<(), LineError>,
) -> Result<usize, LineError> {
    let bytes = line.as_bytes();
    if !bytes.contains(&b'"') {
        let mut n = 0;
        for field in line.split(delim as char) {
            f(n, field.trim())?;
            n += 1;
        }
        return Ok(n);
    }
    let blank = |b: u8| b == b' ' || (b == b'\t' && delim != b'\t');
    let mut i = 0;
    let mut n = 0;
    loop {
        while i < bytes.len() && blank(bytes[i]) {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'"' {
            scratch.clear();
            i += 1;
            let mut closed = false;
            while i < bytes.len() {
                if bytes[i] == b'"' {
                    if bytes.get(i + 1) == Some(&b'"') {
                        scratch.push(b'"');
                        i += 2;
                    } else {
                        i += 1;
                        closed = true;
                        break;
                    }
                } else {
                    scratch.push(bytes[i]);
                    i += 1;
                }
            }
            if !closed {
                return Err(LineError::UnterminatedField);
            }
            while i < bytes.len() && blank(bytes[i]) {
                i += 1;
            }
            if i < bytes.len() && bytes[i] != delim {
                return Err(LineError::AfterQuotedField(n + 1));
            }
            let field = std::str::from_utf8(scratch).map_err(|_| LineError::InvalidUtf8)?;
            f(n, field)?;
        } else {
            let end = bytes[i..]
                .iter()
                .position(|&b| b == delim)
                .map_or(bytes.len(), |p| i + p);
            f(n, line[i..end].trim())?;
            i = end;
        }
        n += 1;
        if i < bytes.len() && bytes[i] == delim {
            i += 1;
        } else {
            return Ok(n);
        }
    }
}

/// What the scan learned about one column.
#[derive(Debug, Default)]
struct ColumnScan {
    /// Some non-missing value is not a number (`NaN` and `inf` count as numbers here).
    text: bool,
    /// The distinct non-missing values (all of them once the column holds text).
    values: FxHashSet<String>,
    /// More than [`NUMERIC_VALUES_KEPT`] values came while the column was numeric.
    overflow: bool,
    /// Where (file, line) the column first held more than [`MAX_NOMINAL_VALUES`] distinct
    /// text values: the line an error names if the column is a nominal feature.
    crossed: Option<(PathBuf, u64)>,
    /// It held more than [`MAX_LABELS`] distinct text values (they are no longer kept).
    too_many: bool,
    /// Its non-missing cells: finite numbers, NaN or infinities, and text.
    finite: u64,
    non_finite: u64,
    texts: u64,
    /// The first text cell, and the first NaN or infinity.
    first_text: Option<CellAt>,
    first_non_finite: Option<CellAt>,
}

impl ColumnScan {
    /// Notes where (`path`, `line`) the column passed the nominal limit; past
    /// [`MAX_LABELS`] distinct text values (more than any column may use, as a target or a
    /// feature) it keeps no more values (`too_many`), so the scan's memory stays bounded
    /// whatever the column holds (it may yet be ignored).
    fn check_limit(&mut self, path: &Path, line: u64) {
        if !self.text || self.values.len() <= MAX_NOMINAL_VALUES {
            return;
        }
        if self.crossed.is_none() {
            self.crossed = Some((path.to_path_buf(), line));
        }
        if self.values.len() > MAX_LABELS {
            self.too_many = true;
            self.overflow = true;
            self.values = FxHashSet::default();
        }
    }

    /// The error of a column with too many values to be a target (more than `limit`,
    /// named `what`) or a nominal feature, at the line where it passed the limit.
    fn limit_error(&self, fallback: &Path, reason: String) -> ReadError {
        match &self.crossed {
            Some((path, line)) => ReadError::at(path, *line, reason),
            None => ReadError::file(fallback, reason),
        }
    }
}

impl ColumnScan {
    /// Counts the non-missing cell `v` of kind `cell`, at `line` of file `file`, and
    /// observes its value.
    #[inline]
    fn note(&mut self, v: &str, cell: Cell, file: usize, line: u64) {
        match cell {
            Cell::Finite => self.finite += 1,
            Cell::NonFinite => {
                self.non_finite += 1;
                keep_first(&mut self.first_non_finite, file, line, v);
            }
            Cell::Text => {
                self.texts += 1;
                keep_first(&mut self.first_text, file, line, v);
            }
        }
        self.observe(v, cell != Cell::Text);
    }

    /// The error of a feature column of numbers with a few text cells (fewer than
    /// [`MIXED_MIN_TEXT_CELLS`], or under 1 in [`MIXED_MIN_TEXT_SHARE`] of its cells),
    /// naming the first text cell; `None` when the column is all numbers, all text, or
    /// nominal by the rule.
    fn mixed_error(&self, files: &[PathBuf], name: &str, reference: &str) -> Option<ReadError> {
        let numbers = self.finite + self.non_finite;
        if self.texts == 0
            || numbers == 0
            || (self.texts >= MIXED_MIN_TEXT_CELLS
                && self.texts * MIXED_MIN_TEXT_SHARE >= numbers + self.texts)
        {
            return None;
        }
        let (file, line, cell) = self.first_text.as_ref()?;
        let others = if self.texts == 1 {
            "the only non-number".to_string()
        } else {
            format!("one of {} non-numbers", self.texts)
        };
        Some(ReadError::at(
            &files[*file],
            *line,
            format!(
                "column `{}`: `{cell}` is not a number ({others} among {numbers} numbers): \
                 fix the cell, write `?` or nothing for a missing value, or read the column as \
                 nominal with --nominal '{reference}'",
                excerpt(name)
            ),
        ))
    }

    #[inline]
    fn observe(&mut self, v: &str, number: bool) {
        if !number && !self.text {
            self.text = true;
        }
        if self.overflow {
            return;
        }
        if !self.values.contains(v) {
            if !self.text && self.values.len() >= NUMERIC_VALUES_KEPT {
                self.overflow = true;
                self.values = FxHashSet::default();
            } else {
                self.values.insert(v.to_string());
            }
        }
    }
}

/// Per file: the delimiter and whether the first row is a header.
#[derive(Clone, Copy, Debug)]
struct FileLayout {
    delim: u8,
    header: bool,
    /// The data records the scan counted (what [`CsvRows`] yields, bad ones included).
    records: u64,
}

/// What one column becomes.
#[derive(Debug)]
enum Role {
    Numeric,
    Nominal(ValueIndex),
    Target,
    Ignored,
}

/// How to turn CSV rows into examples.
#[derive(Debug)]
pub(crate) struct CsvPlan {
    /// The longest line (bytes).
    max_line: usize,
    roles: Vec<Role>,
    names: Vec<String>,
    dim: usize,
    classes: ClassIndex,
    layouts: Vec<FileLayout>,
}

/// A class value as the schema knows it: one trailing `.` removed.
#[inline]
fn class_value(v: &str) -> &str {
    v.strip_suffix('.').unwrap_or(v)
}

/// Calls `f(row_line_number, row_text)` for every data row of `path` (the header, if
/// any, excluded); a non-UTF-8 line is passed as `None`.
fn for_each_row(
    path: &Path,
    header: bool,
    max_line: usize,
    mut f: impl FnMut(u64, Option<&str>) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let mut reader = LineReader::open_with(path, max_line)?;
    let mut skip_header = header;
    loop {
        match reader.next_line() {
            Ok(Some(line)) => {
                if is_comment(line.text) {
                    continue;
                }
                if skip_header {
                    skip_header = false;
                    continue;
                }
                f(line.number, Some(line.text))?;
            }
            Ok(None) => return Ok(()),
            Err(e) => {
                if reader.failed() {
                    return Err(e);
                }
                f(e.line.unwrap_or(0), None)?
            }
        }
    }
}

/// Scans all `files` and settles the schema.
pub(crate) fn open(
    files: &[PathBuf],
    options: &ReadOptions,
    learnable: bool,
) -> Result<(Schema, Arc<CsvPlan>), ReadError> {
    let first_path = &files[0];
    if options.labels.is_some() || options.xml.is_some() {
        return Err(ReadError::file(
            first_path,
            "multi-label options (labels, xml) are not supported for CSV files",
        ));
    }
    let mut scratch = Vec::new();
    let mut fields = Fields::default();
    let mut columns: Vec<ColumnScan> = Vec::new();
    let mut ncols = 0usize;
    let mut header_names: Option<(Vec<String>, &PathBuf)> = None;
    let mut layouts = Vec::with_capacity(files.len());
    for (file_index, path) in files.iter().enumerate() {
        // The first row decides the delimiter (and the column count, for the first file).
        let mut reader = LineReader::open_with(path, options.max_line())?;
        let (first_line, first_text) = loop {
            match reader.next_line()? {
                None => return Err(ReadError::file(path, "empty file: no data")),
                Some(line) if is_comment(line.text) => continue,
                Some(line) => break (line.number, line.text.to_string()),
            }
        };
        drop(reader);
        let lower = first_text.trim_start().to_ascii_lowercase();
        if lower.starts_with("@relation") || lower.starts_with("@attribute") {
            return Err(ReadError::at(
                path,
                first_line,
                "this looks like an ARFF file, not CSV (use the arff or auto format)",
            ));
        }
        let delim = detect_delimiter(&first_text);
        let mut first: Vec<String> = Vec::new();
        for_each_field(&first_text, delim, &mut scratch, |_, v| {
            first.push(v.to_string());
            Ok(())
        })
        .map_err(|reason| ReadError::at(path, first_line, reason))?;
        if first.len() > MAX_DIM + 1 {
            return Err(ReadError::at(
                path,
                first_line,
                format!(
                    "{} columns: at most {MAX_DIM} features (and the target) are supported",
                    first.len()
                ),
            ));
        }
        if columns.is_empty() {
            ncols = first.len();
            columns = (0..ncols).map(|_| ColumnScan::default()).collect();
        } else if first.len() != ncols {
            return Err(ReadError::at(
                path,
                first_line,
                format!(
                    "{} columns, but {} has {ncols}",
                    first.len(),
                    first_path.display()
                ),
            ));
        }
        // The other rows: the global column scan, and per-file facts for the header rule.
        let mut rest_numeric = vec![true; ncols];
        let mut rest_any = vec![false; ncols];
        let mut records = 0u64;
        for_each_row(path, true, options.max_line(), |line, text| {
            records += 1;
            let Some(text) = text else { return Ok(()) };
            if fields.split(text, delim, Quoting::Csv) != Ok(ncols) {
                return Ok(());
            }
            for i in 0..ncols {
                let v = fields.get(text, i);
                if is_missing(v) {
                    continue;
                }
                let column = &mut columns[i];
                let cell = classify(v);
                rest_any[i] = true;
                if cell == Cell::Text {
                    rest_numeric[i] = false;
                }
                column.note(v, cell, file_index, line);
                column.check_limit(path, line);
            }
            Ok(())
        })?;
        let is_header = match options.header {
            Header::Yes => true,
            Header::No => false,
            Header::Auto => {
                let named = |v: &String| match &options.target {
                    Target::Name(n) => v == n || v.eq_ignore_ascii_case(n),
                    _ => false,
                };
                first.iter().any(|v| {
                    named(v) || v.eq_ignore_ascii_case("target") || v.eq_ignore_ascii_case("class")
                }) || (0..ncols).any(|i| {
                    let v = &first[i];
                    !is_missing(v) && !is_number(v) && rest_any[i] && rest_numeric[i]
                })
            }
        };
        if is_header {
            match &header_names {
                None => {
                    if let Some(reason) = duplicate_name(&first) {
                        return Err(ReadError::at(path, first_line, reason));
                    }
                    header_names = Some((first, path));
                }
                Some((names, from)) if *names != first => {
                    return Err(ReadError::at(
                        path,
                        first_line,
                        format!("the header differs from that of {}", from.display()),
                    ));
                }
                Some(_) => {}
            }
        } else {
            records += 1;
            for (i, v) in first.iter().enumerate() {
                if !is_missing(v) {
                    columns[i].note(v, classify(v), file_index, first_line);
                    columns[i].check_limit(path, first_line);
                }
            }
        }
        if records == 0 {
            return Err(ReadError::file(
                path,
                "empty file: no data (only a header row)",
            ));
        }
        layouts.push(FileLayout {
            delim,
            header: is_header,
            records,
        });
    }

    // Column roles.
    let header = header_names.map(|(names, _)| names);
    let names: Vec<String> = match &header {
        Some(names) => names.clone(),
        None => (1..=ncols).map(|c| format!("column {c}")).collect(),
    };
    let target = match &options.target {
        Target::Name(name) => {
            let Some(header) = &header else {
                return Err(ReadError::file(
                    first_path,
                    format!(
                        "target column `{}` given, but the file has no header row",
                        excerpt(name)
                    ),
                ));
            };
            find_name(header, name).ok_or_else(|| {
                ReadError::file(
                    first_path,
                    format!("target column `{}` not found in the header", excerpt(name)),
                )
            })?
        }
        Target::First => 0,
        Target::Last => ncols - 1,
        Target::Auto => header
            .as_ref()
            .and_then(|h| {
                h.iter()
                    .position(|n| n.eq_ignore_ascii_case("target"))
                    .or_else(|| h.iter().position(|n| n.eq_ignore_ascii_case("class")))
            })
            .unwrap_or(ncols - 1),
    };
    let mut ignored = vec![false; ncols];
    for entry in &options.ignore {
        let i = match &header {
            Some(h) => resolve_column(h, entry),
            None => match entry.trim().parse::<usize>() {
                Ok(k) if (1..=ncols).contains(&k) => Some(k - 1),
                _ => None,
            },
        }
        .ok_or_else(|| {
            ReadError::file(
                first_path,
                format!("ignore: no column `{}`", excerpt(entry)),
            )
        })?;
        if i == target {
            return Err(ReadError::file(
                first_path,
                format!("ignore: `{}` is the target column", excerpt(entry)),
            ));
        }
        ignored[i] = true;
    }
    // How a feature column is read: `--nominal` columns as nominal whatever they hold;
    // a column of numbers with a few text cells is an error naming the first one.
    let column_reference = |i: usize| match &header {
        Some(h) if !h[i].is_empty() => h[i].clone(),
        _ => (i + 1).to_string(),
    };
    let mut nominal = vec![false; ncols];
    for entry in &options.nominal {
        let i = match &header {
            Some(h) => resolve_column(h, entry),
            None => match entry.trim().parse::<usize>() {
                Ok(k) if (1..=ncols).contains(&k) => Some(k - 1),
                _ => None,
            },
        }
        .ok_or_else(|| {
            ReadError::file(
                first_path,
                format!("nominal: no column `{}`", excerpt(entry)),
            )
        })?;
        if i == target {
            return Err(ReadError::file(
                first_path,
                format!(
                    "nominal: `{}` is the target column (its values are classes already)",
                    excerpt(entry)
                ),
            ));
        }
        nominal[i] = true;
        columns[i].text = true;
    }
    for i in 0..ncols {
        if i == target || ignored[i] || nominal[i] {
            continue;
        }
        if let Some(e) = columns[i].mixed_error(files, &names[i], &column_reference(i)) {
            return Err(e);
        }
    }
    // The target: NaN and infinity are not classes where the other values are numbers.
    if columns[target].finite > 0
        && let Some((file, line, cell)) = &columns[target].first_non_finite
    {
        return Err(ReadError::at(
            &files[*file],
            *line,
            format!(
                "the target column `{}`: `{cell}` is not a class (NaN and infinity are not \
                 classes; write `?` or nothing for an unlabeled row)",
                excerpt(&names[target])
            ),
        ));
    }

    // A second pass for columns whose values were not all kept.
    let recollect: Vec<usize> = (0..ncols)
        .filter(|&i| {
            !ignored[i]
                && !columns[i].too_many
                && columns[i].overflow
                && (columns[i].text || i == target)
        })
        .collect();
    if !recollect.is_empty() {
        for &i in &recollect {
            columns[i].values.clear();
        }
        for (path, layout) in files.iter().zip(&layouts) {
            for_each_row(path, layout.header, options.max_line(), |line, text| {
                let Some(text) = text else { return Ok(()) };
                if fields.split(text, layout.delim, Quoting::Csv) != Ok(ncols) {
                    return Ok(());
                }
                for &i in &recollect {
                    let v = fields.get(text, i);
                    if columns[i].too_many {
                        continue;
                    }
                    if !is_missing(v) && !columns[i].values.contains(v) {
                        columns[i].values.insert(v.to_string());
                        columns[i].check_limit(path, line);
                    }
                }
                Ok(())
            })?;
        }
    }

    let mut roles = Vec::with_capacity(ncols);
    let mut attributes = Vec::new();
    let mut class_names = Vec::new();
    for i in 0..ncols {
        if i == target {
            if columns[i].too_many {
                return Err(columns[i].limit_error(
                    first_path,
                    format!(
                        "the target column `{}`: more than {MAX_LABELS} distinct values: at most {MAX_LABELS} labels are supported",
                        excerpt(&names[i])
                    ),
                ));
            }
            let values: FxHashSet<String> = columns[i]
                .values
                .iter()
                .map(|v| class_value(v))
                .filter(|v| !is_missing(v))
                .map(str::to_string)
                .collect();
            class_names = sort_values(values);
            roles.push(Role::Target);
        } else if ignored[i] {
            roles.push(Role::Ignored);
        } else {
            let name = match &header {
                Some(h) if !h[i].is_empty() => h[i].clone(),
                _ => format!("f{}", attributes.len()),
            };
            if columns[i].text {
                if columns[i].too_many || columns[i].values.len() > MAX_NOMINAL_VALUES {
                    let count = if columns[i].too_many {
                        format!("more than {MAX_LABELS}")
                    } else {
                        columns[i].values.len().to_string()
                    };
                    return Err(
                        columns[i].limit_error(first_path, nominal_limit_error(&name, &count))
                    );
                }
                let values = sort_values(std::mem::take(&mut columns[i].values));
                roles.push(Role::Nominal(ValueIndex::new(&values)));
                attributes.push(Attribute::nominal(name, values));
            } else {
                roles.push(Role::Numeric);
                attributes.push(Attribute::numeric(name));
            }
        }
    }
    if attributes.is_empty() {
        return Err(ReadError::file(
            first_path,
            if ncols == 1 {
                format!(
                    "one column per row, so no feature: this does not look like CSV{}",
                    looks_like(first_path, options.max_line())
                )
            } else {
                "no feature column left (every column but the target is ignored)".to_string()
            },
        ));
    }
    // (Records to be scored need no label: a target column of missing values only is
    // a file of unlabeled records then.)
    if learnable && class_names.is_empty() {
        return Err(ReadError::file(
            first_path,
            format!("the target column `{}` has no values", names[target]),
        ));
    }
    let labeled = columns[target].finite + columns[target].non_finite + columns[target].texts;
    if options.target == Target::Auto
        && labeled >= DISTINCT_TARGET_ROWS
        && class_names.len() as u64 == labeled
    {
        return Err(ReadError::file(
            first_path,
            format!(
                "the target column `{}` holds a different value in each of its {labeled} rows: \
                 not classes (a regression target? an id?); choose the class column with \
                 --target{}",
                excerpt(&names[target]),
                if ncols <= 2 {
                    looks_like(first_path, options.max_line())
                } else {
                    String::new()
                }
            ),
        ));
    }
    let task = if class_names.len() == 2 {
        Task::Binary
    } else {
        Task::Multiclass
    };
    let plan = CsvPlan {
        max_line: options.max_line(),
        roles,
        names,
        dim: attributes.len(),
        classes: ClassIndex::new(&class_names),
        layouts,
    };
    let schema = Schema {
        attributes,
        labels: class_names,
        task,
    };
    Ok((schema, Arc::new(plan)))
}

/// What a file that does not read well as CSV looks like, as a hint to add to an error:
/// `" (it looks like LIBSVM: --format libsvm, or auto)"`, or a word on delimiters.
fn looks_like(path: &Path, max_line: usize) -> String {
    match sniff::detect_content(path, max_line) {
        Ok(format @ (Format::Libsvm | Format::Arff)) => {
            format!(" (it looks like {format}: --format {format}, or auto)")
        }
        _ => " (CSV fields are separated by commas, tabs or semicolons)".to_string(),
    }
}

/// The reason of a header row that names a column twice, if it does (empty names aside:
/// those columns are named by their index).
fn duplicate_name(names: &[String]) -> Option<String> {
    let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        if let Some(first) = seen.insert(name, i) {
            return Some(format!(
                "the header names column `{}` twice (columns {} and {}): header names must differ",
                excerpt(name),
                first + 1,
                i + 1
            ));
        }
    }
    None
}

impl CsvPlan {
    /// The data records of file `index` as the scan that settled the schema counted them.
    pub(crate) fn records(&self, index: usize) -> Option<u64> {
        self.layouts.get(index).map(|l| l.records)
    }

    /// Parses one row.
    fn parse(
        &self,
        text: &str,
        delim: u8,
        fields: &mut Fields,
    ) -> Result<(Features, Option<Label>), LineError> {
        let n = fields.split(text, delim, Quoting::Csv)?;
        if n != self.roles.len() {
            return Err(LineError::field_count(n, self.roles.len()));
        }
        let mut x = Vec::with_capacity(self.dim);
        let mut class = None;
        for (i, role) in self.roles.iter().enumerate() {
            let v = fields.get(text, i);
            match role {
                Role::Numeric => x.push(if is_missing(v) {
                    f64::NAN
                } else {
                    parse_number(v).map_err(|e| {
                        LineError::number(e, v, format!("column `{}`", self.names[i]))
                    })?
                }),
                Role::Nominal(values) => x.push(if is_missing(v) {
                    f64::NAN
                } else {
                    values.get(v).ok_or_else(|| LineError::UnknownNominal {
                        value: excerpt(v),
                        what: format!("column `{}`", self.names[i]),
                    })? as f64
                }),
                Role::Target => {
                    let c = class_value(v);
                    class = if is_missing(v) || is_missing(c) {
                        None
                    } else {
                        Some(
                            self.classes
                                .get(c)
                                .ok_or_else(|| LineError::UnknownClass(excerpt(v)))?,
                        )
                    };
                }
                Role::Ignored => {}
            }
        }
        Ok((Features::Dense(x), class.map(Label::Class)))
    }
}

/// The examples of one CSV file.
pub(crate) struct CsvRows {
    plan: Arc<CsvPlan>,
    lines: DataLines,
    layout: FileLayout,
    skip_header: bool,
    fields: Fields,
}

impl CsvRows {
    /// Opens file `index` (of the files the plan was made from).
    pub(crate) fn new(plan: Arc<CsvPlan>, path: &Path, index: usize) -> Result<Self, ReadError> {
        let layout = plan.layouts[index];
        Ok(CsvRows {
            lines: DataLines::new(LineReader::open_with(path, plan.max_line)?),
            plan,
            layout,
            skip_header: layout.header,
            fields: Fields::default(),
        })
    }
}

impl Iterator for CsvRows {
    type Item = Result<Example, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (plan, delim) = (&self.plan, self.layout.delim);
        let (skip_header, fields) = (&mut self.skip_header, &mut self.fields);
        self.lines.next(|text, id| {
            if is_comment(text) || std::mem::take(skip_header) {
                return None;
            }
            Some(
                plan.parse(text, delim, fields)
                    .map(|(features, label)| Example {
                        id,
                        features,
                        label,
                    }),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str, delim: u8) -> Result<Vec<String>, LineError> {
        let mut out = vec![];
        let mut scratch = vec![];
        for_each_field(line, delim, &mut scratch, |_, v| {
            out.push(v.to_string());
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn splits_fields() {
        assert_eq!(
            fields("39, State-gov, ?", b',').unwrap(),
            ["39", "State-gov", "?"]
        );
        assert_eq!(fields("a\t b\t", b'\t').unwrap(), ["a", "b", ""]);
        assert_eq!(
            fields(" \"x, \"\"y\"\"\" ,2,\"\"", b',').unwrap(),
            ["x, \"y\"", "2", ""]
        );
        assert!(
            fields("\"open,2", b',')
                .unwrap_err()
                .to_string()
                .contains("unterminated")
        );
    }

    #[test]
    fn detects_delimiters() {
        assert_eq!(detect_delimiter("a\tb,c"), b'\t');
        assert_eq!(detect_delimiter("a;b;c,5"), b';');
        assert_eq!(detect_delimiter("39, State-gov"), b',');
        assert_eq!(detect_delimiter("one"), b',');
    }

    fn open_text(content: &str, options: &ReadOptions) -> Result<Schema, ReadError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, content).unwrap();
        open(std::slice::from_ref(&p), options, true).map(|(schema, _)| schema)
    }

    /// A header, then `rows` rows of a numeric column `n`, a text column and a class.
    fn numeric_file(rows: usize, odd: &[(usize, &str)]) -> String {
        let mut text = "n,word,y\n".to_string();
        for r in 0..rows {
            let n = odd
                .iter()
                .find(|(at, _)| *at == r)
                .map_or_else(|| (r % 7).to_string(), |(_, v)| v.to_string());
            text.push_str(&format!("{n},w{},{}\n", r % 3, r % 2));
        }
        text
    }

    #[test]
    fn a_few_text_cells_in_a_numeric_column_are_an_error() {
        let options = ReadOptions::default();
        for odd in ["0x1F", "1_000", "é", "\0", "ten"] {
            let e = open_text(&numeric_file(50, &[(10, odd)]), &options).unwrap_err();
            // Line 1 is the header: row 10 is line 12.
            assert_eq!(e.line, Some(12), "{odd:?}: {e}");
            assert!(e.reason.contains("column `n`"), "{}", e.reason);
            assert!(e.reason.contains("is not a number"), "{}", e.reason);
            assert!(e.reason.contains("--nominal 'n'"), "{}", e.reason);
        }
        // Two cells among 50 (4%): still an error, naming the first.
        let e = open_text(&numeric_file(50, &[(30, "b"), (20, "a")]), &options).unwrap_err();
        assert_eq!(e.line, Some(22));
        assert!(e.reason.contains("`a` is not a number"), "{}", e.reason);
        // Said nominal: read as nominal, numbers and text alike.
        let nominal = ReadOptions {
            nominal: vec!["n".into()],
            ..ReadOptions::default()
        };
        let schema = open_text(&numeric_file(50, &[(10, "0x1F")]), &nominal).unwrap();
        assert_eq!(schema.attributes[0].cardinality(), Some(8));
        // An unknown column, or the target, cannot be said nominal.
        for (entry, reason) in [("zz", "no column `zz`"), ("y", "is the target")] {
            let options = ReadOptions {
                nominal: vec![entry.into()],
                ..ReadOptions::default()
            };
            let e = open_text(&numeric_file(50, &[]), &options).unwrap_err();
            assert!(e.reason.contains(reason), "{}", e.reason);
        }
    }

    #[test]
    fn a_column_of_numbers_and_repeated_words_is_nominal() {
        // UCI car's doors and persons: 2, 3, 4, 5more; 2, 4, more.
        let mut text = String::new();
        for r in 0..40 {
            let doors = ["2", "3", "4", "5more"][r % 4];
            let persons = ["2", "4", "more"][r % 3];
            text.push_str(&format!("{doors},{persons},{}\n", ["acc", "unacc"][r % 2]));
        }
        let schema = open_text(&text, &ReadOptions::default()).unwrap();
        assert_eq!(schema.attributes[0].cardinality(), Some(4));
        assert_eq!(schema.attributes[1].cardinality(), Some(3));
        // A column of numbers, NaN included, stays numeric (NaN is an error per row).
        let schema = open_text(&numeric_file(30, &[(5, "nan")]), &ReadOptions::default()).unwrap();
        assert_eq!(schema.attributes[0].cardinality(), None);
    }

    #[test]
    fn nan_and_infinity_are_not_classes_of_a_numeric_target() {
        let e = open_text("a,b\n1,1\n2,0\n3,nan\n4,inf\n", &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.reason.contains("`nan` is not a class"), "{}", e.reason);
        // Missing classes are unlabeled rows.
        let schema = open_text("a,b\n1,1\n2,0\n3,?\n4,\n", &ReadOptions::default()).unwrap();
        assert_eq!(schema.labels, ["0", "1"]);
    }

    #[test]
    fn one_column_or_one_class_per_row_is_not_csv() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a9a");
        let mut text = String::new();
        for r in 0..30 {
            text.push_str(&format!("{} 3:1 {}:1\n", ["-1", "+1"][r % 2], 10 + r));
        }
        std::fs::write(&p, text).unwrap();
        let options = ReadOptions {
            format: Format::Csv,
            ..ReadOptions::default()
        };
        let e = open(std::slice::from_ref(&p), &options, true).unwrap_err();
        assert!(e.reason.contains("does not look like CSV"), "{}", e.reason);
        assert!(e.reason.contains("--format libsvm"), "{}", e.reason);
        // A distinct value in every row of the target: not classes.
        let mut text = "x,y\n".to_string();
        for r in 0..25 {
            text.push_str(&format!("{},{}.5\n", r % 4, r));
        }
        let e = open_text(&text, &ReadOptions::default()).unwrap_err();
        assert!(
            e.reason.contains("different value in each of its 25 rows"),
            "{}",
            e.reason
        );
        // Named, the target is taken as it is.
        let named = ReadOptions {
            target: Target::Name("y".into()),
            ..ReadOptions::default()
        };
        assert_eq!(open_text(&text, &named).unwrap().labels.len(), 25);
        // Every feature column ignored.
        let options = ReadOptions {
            ignore: vec!["x".into()],
            ..ReadOptions::default()
        };
        let e = open_text("x,y\n1,a\n2,b\n", &options).unwrap_err();
        assert!(e.reason.contains("no feature column left"), "{}", e.reason);
    }

    #[test]
    fn a_header_naming_a_column_twice_is_an_error() {
        let e = open_text("a,b,a,y\n1,2,3,x\n4,5,6,z\n", &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(
            e.reason.contains("`a` twice (columns 1 and 3)"),
            "{}",
            e.reason
        );
        // Empty names are not duplicates: those columns are named by index.
        assert!(
            open_text(
                ",,y\n1,2,x\n3,4,z\n",
                &ReadOptions {
                    header: Header::Yes,
                    ..ReadOptions::default()
                }
            )
            .is_ok()
        );
    }
}
