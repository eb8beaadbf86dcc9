//! ARFF files (Weka): the header, and dense and sparse data rows, for single-label
//! targets and MULAN multi-label labels.

use super::fields::{Fields, Quoting};
use super::line_error::LineError;
use super::lines::{DataLines, LineReader};
use super::mulan_xml;
use super::nominal::ValueIndex;
use super::number::parse_number;
use super::options::{ReadOptions, Target};
use super::{ReadError, excerpt};
use flowboost_operators::data::{
    Attribute, AttributeKind, Example, Features, Label, MAX_DIM, MAX_LABELS, MAX_NOMINAL_VALUES,
    Schema, Task, nominal_limit_error,
};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether an ARFF field is a missing value: `?` only (an empty field is not one: ARFF
/// writes `?` for a missing value, and an empty field is more likely a mistake).
#[inline]
fn is_missing(v: &str) -> bool {
    v == "?"
}

/// The declarations of an ARFF file.
#[derive(Clone, Debug)]
pub(crate) struct ArffHeader {
    /// The attributes, in file order.
    pub(crate) attributes: Vec<Attribute>,
    /// The line of each attribute's declaration.
    pub(crate) lines: Vec<u64>,
    /// The line number of `@data`.
    pub(crate) data_line: u64,
}

/// Reads the header of an ARFF file up to and including `@data`.
pub(crate) fn read_header(reader: &mut LineReader) -> Result<ArffHeader, ReadError> {
    let path = reader.path().to_path_buf();
    let mut attributes: Vec<Attribute> = Vec::new();
    let mut lines: Vec<u64> = Vec::new();
    // Each attribute name and the line that declared it: a name declared twice is an error.
    let mut seen: FxHashMap<String, u64> = FxHashMap::default();
    let mut declared = false;
    loop {
        let line = match reader.next_line()? {
            Some(line) => line,
            None if !declared => {
                return Err(ReadError::file(&path, "empty file: no data"));
            }
            None => {
                return Err(ReadError::file(
                    &path,
                    "no @data section: the ARFF header ends without `@data`",
                ));
            }
        };
        let number = line.number;
        let text = line.text.trim();
        if text.is_empty() || text.starts_with('%') {
            continue;
        }
        if !text.starts_with('@') {
            let reason = if declared {
                format!(
                    "expected `@attribute` or `@data`, found `{}` (data before `@data`?)",
                    excerpt(text)
                )
            } else {
                format!(
                    "not an ARFF file: expected `@relation`, `@attribute` or `@data`, found `{}`",
                    excerpt(text)
                )
            };
            return Err(ReadError::at(&path, number, reason));
        }
        declared = true;
        let end = text
            .find(|c: char| c.is_whitespace() || c == '{')
            .unwrap_or(text.len());
        let (keyword, rest) = text.split_at(end);
        match keyword.to_ascii_lowercase().as_str() {
            "@relation" => {}
            "@attribute" => {
                let attribute =
                    parse_attribute(rest).map_err(|reason| ReadError::at(&path, number, reason))?;
                // Limits checked as the header is read: memory follows what is allowed.
                if attributes.len() >= MAX_DIM + MAX_LABELS {
                    return Err(ReadError::at(
                        &path,
                        number,
                        format!(
                            "more than {} attributes: at most {MAX_DIM} features and {MAX_LABELS} labels are supported",
                            MAX_DIM + MAX_LABELS
                        ),
                    ));
                }
                if attribute.cardinality().is_some_and(|v| v > MAX_LABELS) {
                    return Err(ReadError::at(
                        &path,
                        number,
                        format!(
                            "attribute `{}`: {} values: at most {MAX_LABELS} labels for a class, {MAX_NOMINAL_VALUES} values for a nominal feature",
                            excerpt(&attribute.name),
                            attribute.cardinality().unwrap_or(0)
                        ),
                    ));
                }
                if let Some(first) = seen.insert(attribute.name.clone(), number) {
                    return Err(ReadError::at(
                        &path,
                        number,
                        format!(
                            "attribute `{}` is declared twice (first on line {first}): attribute names must differ",
                            excerpt(&attribute.name)
                        ),
                    ));
                }
                attributes.push(attribute);
                lines.push(number);
            }
            "@data" => {
                if attributes.is_empty() {
                    return Err(ReadError::at(
                        &path,
                        number,
                        "`@data` before any `@attribute`",
                    ));
                }
                return Ok(ArffHeader {
                    attributes,
                    lines,
                    data_line: number,
                });
            }
            other => {
                return Err(ReadError::at(
                    &path,
                    number,
                    format!("unknown ARFF declaration `{}`", excerpt(other)),
                ));
            }
        }
    }
}

/// Reads one quoted ARFF string (`'...'` or `"..."`, backslash escapes) starting at
/// `text[0]`, into `out`; returns the number of bytes consumed.
fn read_quoted(text: &str, out: &mut Vec<u8>) -> Result<usize, LineError> {
    let bytes = text.as_bytes();
    let quote = bytes[0];
    let mut i = 1;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\\' && i + 1 < bytes.len() {
            out.push(match bytes[i + 1] {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                other => other,
            });
            i += 2;
        } else if c == quote {
            return Ok(i + 1);
        } else {
            out.push(c);
            i += 1;
        }
    }
    Err(LineError::UnterminatedQuote(excerpt(text)))
}

/// Splits `text` on commas outside quotes, trims each field and removes its quotes, and
/// calls `f(index, field)`; returns the number of fields.
pub(crate) fn for_each_field(
    text: &str,
    scratch: &mut Vec<u8>,
    mut f: impl FnMut(usize, &str) -> Result<(), LineError>,
) -> Result<usize, LineError> {
    if !text.bytes().any(|b| b == b'\'' || b == b'"') {
        let mut n = 0;
        for field in text.split(',') {
            f(n, field.trim())?;
            n += 1;
        }
        return Ok(n);
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut n = 0;
    loop {
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        if i < bytes.len() && (bytes[i] == b'\'' || bytes[i] == b'"') {
            scratch.clear();
            i += read_quoted(&text[i..], scratch)?;
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                i += 1;
            }
            if i < bytes.len() && bytes[i] != b',' {
                return Err(LineError::AfterQuotedValue(excerpt(&text[i..])));
            }
            let field = std::str::from_utf8(scratch).map_err(|_| LineError::InvalidUtf8)?;
            f(n, field)?;
        } else {
            let end = text[i..].find(',').map_or(bytes.len(), |p| i + p);
            f(n, text[i..end].trim())?;
            i = end;
        }
        n += 1;
        if i < bytes.len() && bytes[i] == b',' {
            i += 1;
        } else {
            return Ok(n);
        }
    }
}

/// Parses the part of an `@attribute` line after the keyword: a name and a type.
fn parse_attribute(rest: &str) -> Result<Attribute, LineError> {
    let rest = rest.trim_start();
    let (name, after) = if rest.starts_with('\'') || rest.starts_with('"') {
        let mut buf = Vec::new();
        let used = read_quoted(rest, &mut buf)?;
        let name = String::from_utf8(buf).map_err(|_| LineError::InvalidUtf8Name)?;
        (name, &rest[used..])
    } else {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '{')
            .unwrap_or(rest.len());
        (rest[..end].to_string(), &rest[end..])
    };
    if name.is_empty() {
        return Err(LineError::NoAttributeName);
    }
    let ty = after.trim();
    if let Some(list) = ty.strip_prefix('{') {
        let Some(list) = list.strip_suffix('}') else {
            return Err(LineError::UnterminatedNominalList(excerpt(name)));
        };
        let mut values: Vec<String> = Vec::new();
        let mut scratch = Vec::new();
        let mut duplicate = None;
        for_each_field(list, &mut scratch, |_, v| {
            if values.iter().any(|x| x == v) {
                duplicate = Some(v.to_string());
            }
            values.push(v.to_string());
            Ok(())
        })?;
        if let Some(v) = duplicate {
            return Err(LineError::DuplicateNominal {
                attribute: excerpt(name),
                value: excerpt(v),
            });
        }
        if values.len() == 1 && values[0].is_empty() {
            return Err(LineError::EmptyNominalList(excerpt(name)));
        }
        return Ok(Attribute::nominal(name, values));
    }
    let word = ty.split_whitespace().next().unwrap_or("");
    match word.to_ascii_lowercase().as_str() {
        "numeric" | "real" | "integer" => Ok(Attribute::numeric(name)),
        "string" | "date" | "relational" => Err(LineError::UnsupportedType {
            attribute: excerpt(name),
            ty: excerpt(word),
        }),
        "" => Err(LineError::NoType(excerpt(name))),
        _ => Err(LineError::UnknownType {
            attribute: excerpt(name),
            ty: excerpt(word),
        }),
    }
}

/// What one ARFF attribute becomes.
#[derive(Clone, Debug)]
enum Role {
    /// Numeric feature `j`.
    Numeric(u32),
    /// Nominal feature `j` with its values.
    Nominal(u32, ValueIndex),
    /// The single-label target.
    Target(ValueIndex),
    /// Multi-label label `l`; the value with index `one` means relevant.
    Label {
        l: u32,
        one: u32,
        values: ValueIndex,
    },
    /// Dropped.
    Ignored,
}

/// How to turn the rows of an ARFF file into examples.
#[derive(Debug)]
pub(crate) struct ArffPlan {
    /// The longest line (bytes).
    max_line: usize,
    roles: Vec<Role>,
    names: Vec<String>,
    dim: u32,
    multilabel: bool,
    /// Labels that are relevant when a sparse row leaves them out (value index 0 = "1").
    default_relevant: Vec<u32>,
    /// Per file, the line number of `@data`.
    data_lines: Vec<u64>,
}

/// Finds a column among `names` for an `ignore` entry: a name (exact), else a 1-based number.
pub(crate) fn resolve_column(names: &[String], entry: &str) -> Option<usize> {
    if let Some(i) = names.iter().position(|n| n == entry) {
        return Some(i);
    }
    match entry.trim().parse::<usize>() {
        Ok(k) if k >= 1 && k <= names.len() => Some(k - 1),
        _ => None,
    }
}

/// Finds a column by name: exact first, then case-insensitive.
pub(crate) fn find_name(names: &[String], name: &str) -> Option<usize> {
    names
        .iter()
        .position(|n| n == name)
        .or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(name)))
}

/// Reads the headers of all `files`, checks that they agree, and settles the schema.
pub(crate) fn open(
    files: &[PathBuf],
    options: &ReadOptions,
) -> Result<(Schema, Arc<ArffPlan>), ReadError> {
    if !options.nominal.is_empty() {
        return Err(ReadError::file(
            &files[0],
            "nominal columns are for CSV files (an ARFF header declares its nominal attributes)",
        ));
    }
    let mut headers: Vec<ArffHeader> = Vec::with_capacity(files.len());
    for path in files {
        let mut reader = LineReader::open_with(path, options.max_line())?;
        let header = read_header(&mut reader)?;
        // At least one data row.
        loop {
            match reader.next_line()? {
                None => {
                    return Err(ReadError::file(path, "no data: no row after `@data`"));
                }
                Some(line) => {
                    let t = line.text.trim();
                    if !t.is_empty() && !t.starts_with('%') {
                        break;
                    }
                }
            }
        }
        if let Some(first) = headers.first() {
            check_same(&files[0], &first.attributes, path, &header.attributes)?;
        }
        headers.push(header);
    }
    let attributes = headers[0].attributes.clone();
    let declared_at = headers[0].lines.clone();
    let first = &files[0];
    let names: Vec<String> = attributes.iter().map(|a| a.name.clone()).collect();
    let n = attributes.len();

    // Which attributes are labels (multi-label) or the target (single-label).
    let mut label_attrs: Vec<usize> = Vec::new();
    let mut target: Option<usize> = None;
    if let Some(xml) = &options.xml {
        let labels = mulan_xml::read_labels(xml)?;
        for label in &labels {
            match names.iter().position(|n| *n == label.name) {
                Some(i) => label_attrs.push(i),
                None => {
                    return Err(ReadError::at(
                        xml,
                        label.line,
                        format!(
                            "label `{}` is missing from the ARFF attributes of {}",
                            label.name,
                            first.display()
                        ),
                    ));
                }
            }
        }
        if let Some(l) = options.labels
            && l != labels.len()
        {
            return Err(ReadError::file(
                xml,
                format!(
                    "{} labels listed, but {l} labels were asked for",
                    labels.len()
                ),
            ));
        }
        label_attrs.sort_unstable();
    } else if let Some(l) = options.labels {
        if l == 0 || l >= n {
            return Err(ReadError::file(
                first,
                format!("cannot take the last {l} of {n} attributes as labels"),
            ));
        }
        label_attrs = (n - l..n).collect();
    } else {
        let t = match &options.target {
            Target::Auto | Target::Last => n - 1,
            Target::First => 0,
            Target::Name(name) => find_name(&names, name).ok_or_else(|| {
                ReadError::file(
                    first,
                    format!("target attribute `{}` not found", excerpt(name)),
                )
            })?,
        };
        if attributes[t].cardinality().is_none() {
            return Err(ReadError::file(
                first,
                format!(
                    "target attribute `{}` is numeric; a class must be a nominal attribute \
                     (for multi-label data give the label count or the MULAN XML file)",
                    names[t]
                ),
            ));
        }
        target = Some(t);
    }
    if label_attrs.len() >= n {
        return Err(ReadError::file(
            first,
            "every attribute is a label: no feature left",
        ));
    }

    let mut ignored = vec![false; n];
    for entry in &options.ignore {
        let i = resolve_column(&names, entry).ok_or_else(|| {
            ReadError::file(first, format!("ignore: no attribute `{}`", excerpt(entry)))
        })?;
        if Some(i) == target || label_attrs.contains(&i) {
            return Err(ReadError::file(
                first,
                format!("ignore: `{}` is the target or a label", excerpt(entry)),
            ));
        }
        ignored[i] = true;
    }

    let mut roles = Vec::with_capacity(n);
    let mut features = Vec::new();
    let mut labels = Vec::new();
    let mut default_relevant = Vec::new();
    let mut class_names = Vec::new();
    for (i, attribute) in attributes.iter().enumerate() {
        if Some(i) == target {
            let AttributeKind::Nominal(values) = &attribute.kind else {
                unreachable!("checked above");
            };
            class_names = values.clone();
            roles.push(Role::Target(ValueIndex::new(values)));
        } else if label_attrs.contains(&i) {
            let one = match &attribute.kind {
                AttributeKind::Nominal(values) => values.iter().position(|v| v == "1"),
                AttributeKind::Numeric => None,
            };
            let (Some(one), AttributeKind::Nominal(values)) = (one, &attribute.kind) else {
                return Err(ReadError::file(
                    first,
                    format!(
                        "label attribute `{}` must be nominal {{0,1}}",
                        attribute.name
                    ),
                ));
            };
            let l = labels.len() as u32;
            if one == 0 {
                default_relevant.push(l);
            }
            roles.push(Role::Label {
                l,
                one: one as u32,
                values: ValueIndex::new(values),
            });
            labels.push(attribute.name.clone());
        } else if ignored[i] {
            roles.push(Role::Ignored);
        } else {
            if let Some(values) = attribute.cardinality().filter(|&v| v > MAX_NOMINAL_VALUES) {
                return Err(ReadError::at(
                    first,
                    declared_at[i],
                    nominal_limit_error(&attribute.name, &values.to_string()),
                ));
            }
            let j = features.len() as u32;
            roles.push(match &attribute.kind {
                AttributeKind::Numeric => Role::Numeric(j),
                AttributeKind::Nominal(values) => Role::Nominal(j, ValueIndex::new(values)),
            });
            features.push(attribute.clone());
        }
    }
    let multilabel = target.is_none();
    let task = if multilabel {
        Task::Multilabel
    } else if class_names.len() == 2 {
        Task::Binary
    } else {
        Task::Multiclass
    };
    let schema = Schema {
        attributes: features,
        labels: if multilabel { labels } else { class_names },
        task,
    };
    let plan = ArffPlan {
        roles,
        names,
        dim: schema.attributes.len() as u32,
        multilabel,
        default_relevant,
        data_lines: headers.iter().map(|h| h.data_line).collect(),
        max_line: options.max_line(),
    };
    Ok((schema, Arc::new(plan)))
}

/// Checks that the header of `path` declares the same attributes as that of `first`.
fn check_same(
    first: &Path,
    expected: &[Attribute],
    path: &Path,
    found: &[Attribute],
) -> Result<(), ReadError> {
    if expected.len() != found.len() {
        return Err(ReadError::file(
            path,
            format!(
                "declares {} attributes, but {} declares {}",
                found.len(),
                first.display(),
                expected.len()
            ),
        ));
    }
    for (i, (a, b)) in expected.iter().zip(found).enumerate() {
        if a != b {
            return Err(ReadError::file(
                path,
                format!(
                    "attribute {} (`{}`) differs from the one declared in {} (`{}`)",
                    i + 1,
                    b.name,
                    first.display(),
                    a.name
                ),
            ));
        }
    }
    Ok(())
}

impl ArffPlan {
    /// What the value `v` of nominal attribute `i` is, or an error.
    fn nominal(&self, values: &ValueIndex, i: usize, v: &str) -> Result<u32, LineError> {
        values.get(v).ok_or_else(|| LineError::UnknownNominal {
            value: excerpt(v),
            what: format!("attribute `{}`", excerpt(&self.names[i])),
        })
    }

    /// Parses one dense row.
    fn dense(
        &self,
        text: &str,
        fields: &mut Fields,
    ) -> Result<(Features, Option<Label>), LineError> {
        let n = fields.split(text, b',', Quoting::Arff)?;
        if n != self.roles.len() {
            return Err(LineError::field_count(n, self.roles.len()));
        }
        let mut x = Vec::with_capacity(self.dim as usize);
        let mut class = None;
        let mut set = Vec::new();
        for (i, role) in self.roles.iter().enumerate() {
            let v = fields.get(text, i);
            if v.is_empty() {
                let declared = match role {
                    Role::Nominal(_, values)
                    | Role::Target(values)
                    | Role::Label { values, .. } => values.get("").is_some(),
                    Role::Numeric(_) => false,
                    Role::Ignored => true,
                };
                if !declared {
                    return Err(LineError::EmptyValue(excerpt(&self.names[i])));
                }
            }
            match role {
                Role::Numeric(_) => x.push(if is_missing(v) {
                    f64::NAN
                } else {
                    parse_number(v).map_err(|e| {
                        LineError::number(e, v, format!("attribute `{}`", self.names[i]))
                    })?
                }),
                Role::Nominal(_, values) => x.push(if is_missing(v) {
                    f64::NAN
                } else {
                    self.nominal(values, i, v)? as f64
                }),
                Role::Target(values) => {
                    class = if is_missing(v) {
                        None
                    } else {
                        Some(self.nominal(values, i, v)?)
                    };
                }
                Role::Label { l, one, values } => {
                    if is_missing(v) {
                        return Err(LineError::MissingLabel(self.names[i].clone()));
                    }
                    if self.nominal(values, i, v)? == *one {
                        set.push(*l);
                    }
                }
                Role::Ignored => {}
            }
        }
        let label = if self.multilabel {
            Some(Label::Set(set))
        } else {
            class.map(Label::Class)
        };
        Ok((Features::Dense(x), label))
    }

    /// Parses one sparse row `{i v, i v, ...}` (the text starts with `{`).
    fn sparse(
        &self,
        text: &str,
        scratch: &mut Vec<u8>,
    ) -> Result<(Features, Option<Label>), LineError> {
        let bytes = text.as_bytes();
        let mut indices = Vec::new();
        let mut values = Vec::new();
        let mut class = Some(0);
        let mut explicit: Vec<(u32, bool)> = Vec::new();
        let mut previous: Option<usize> = None;
        let mut i = 1;
        let skip = |i: &mut usize| {
            while *i < bytes.len() && (bytes[*i] == b' ' || bytes[*i] == b'\t') {
                *i += 1;
            }
        };
        loop {
            skip(&mut i);
            if i >= bytes.len() {
                return Err(LineError::UnterminatedSparse);
            }
            if bytes[i] == b'}' && previous.is_none() {
                i += 1;
                break;
            }
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if start == i {
                return Err(LineError::BadSparseEntry(excerpt(&text[start..])));
            }
            let index: usize = text[start..i]
                .parse()
                .map_err(|_| LineError::BadSparseIndex(excerpt(&text[start..i])))?;
            if index >= self.roles.len() {
                return Err(LineError::SparseIndexBeyond {
                    index,
                    attributes: self.roles.len(),
                });
            }
            if let Some(p) = previous
                && index <= p
            {
                return Err(LineError::UnsortedSparseIndex { index, previous: p });
            }
            previous = Some(index);
            skip(&mut i);
            let value: &str = if i < bytes.len() && (bytes[i] == b'\'' || bytes[i] == b'"') {
                scratch.clear();
                i += read_quoted(&text[i..], scratch)?;
                std::str::from_utf8(scratch).map_err(|_| LineError::InvalidUtf8)?
            } else {
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b' ' | b'\t') {
                    i += 1;
                }
                &text[start..i]
            };
            if value.is_empty() {
                return Err(LineError::SparseNoValue(index));
            }
            match &self.roles[index] {
                Role::Numeric(j) => {
                    indices.push(*j);
                    values.push(if is_missing(value) {
                        f64::NAN
                    } else {
                        parse_number(value).map_err(|e| {
                            LineError::number(
                                e,
                                value,
                                format!("attribute `{}`", self.names[index]),
                            )
                        })?
                    });
                }
                Role::Nominal(j, vals) => {
                    indices.push(*j);
                    values.push(if is_missing(value) {
                        f64::NAN
                    } else {
                        self.nominal(vals, index, value)? as f64
                    });
                }
                Role::Target(vals) => {
                    class = if is_missing(value) {
                        None
                    } else {
                        Some(self.nominal(vals, index, value)?)
                    };
                }
                Role::Label { l, one, values } => {
                    if is_missing(value) {
                        return Err(LineError::MissingLabel(self.names[index].clone()));
                    }
                    explicit.push((*l, self.nominal(values, index, value)? == *one));
                }
                Role::Ignored => {}
            }
            skip(&mut i);
            match bytes.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {
                    i += 1;
                    break;
                }
                None => {
                    return Err(LineError::UnterminatedSparse);
                }
                Some(_) => {
                    return Err(LineError::BadSparseSeparator(excerpt(&text[i..])));
                }
            }
        }
        skip(&mut i);
        // An instance weight `{w}` may follow (ARFF 3.5); anything else is an error.
        if i < bytes.len() && bytes[i] == b',' {
            let rest = text[i + 1..].trim();
            if !(rest.starts_with('{') && rest.ends_with('}')) {
                return Err(LineError::AfterSparse(excerpt(rest)));
            }
        } else if i < bytes.len() {
            return Err(LineError::AfterSparse(excerpt(&text[i..])));
        }
        let label = if self.multilabel {
            let set: Vec<u32> = if self.default_relevant.is_empty() {
                explicit.iter().filter(|e| e.1).map(|e| e.0).collect()
            } else {
                let mut set: Vec<u32> = self
                    .default_relevant
                    .iter()
                    .copied()
                    .filter(|l| !explicit.iter().any(|e| e.0 == *l))
                    .collect();
                set.extend(explicit.iter().filter(|e| e.1).map(|e| e.0));
                set
            };
            Some(Label::set(set))
        } else {
            class.map(Label::Class)
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

/// The examples of one ARFF file.
pub(crate) struct ArffRows {
    plan: Arc<ArffPlan>,
    lines: DataLines,
    scratch: Vec<u8>,
    fields: Fields,
}

impl ArffRows {
    /// Opens file `index` (of the files the plan was made from) and skips its header.
    pub(crate) fn new(plan: Arc<ArffPlan>, path: &Path, index: usize) -> Result<Self, ReadError> {
        let mut reader = LineReader::open_with(path, plan.max_line)?;
        let data_line = plan.data_lines[index];
        while reader.line_number() < data_line {
            if reader.next_line()?.is_none() {
                return Err(ReadError::file(
                    path,
                    "the file changed: `@data` not found again",
                ));
            }
        }
        Ok(ArffRows {
            plan,
            lines: DataLines::new(reader),
            scratch: Vec::new(),
            fields: Fields::default(),
        })
    }
}

impl Iterator for ArffRows {
    type Item = Result<Example, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (plan, scratch, fields) = (&self.plan, &mut self.scratch, &mut self.fields);
        self.lines.next(|text, id| {
            let text = text.trim();
            if text.is_empty() || text.starts_with('%') {
                return None;
            }
            let parsed = if text.starts_with('{') {
                plan.sparse(text, scratch)
            } else {
                plan.dense(text, fields)
            };
            Some(parsed.map(|(features, label)| Example {
                id,
                features,
                label,
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Result<Vec<String>, LineError> {
        let mut out = vec![];
        let mut scratch = vec![];
        for_each_field(text, &mut scratch, |_, v| {
            out.push(v.to_string());
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn splits_quoted_fields() {
        assert_eq!(fields("a, b ,c").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            fields("'MacGillivray\\'s Warbler', \"x,y\" ,z,").unwrap(),
            ["MacGillivray's Warbler", "x,y", "z", ""]
        );
        assert!(
            fields("'open, b")
                .unwrap_err()
                .to_string()
                .contains("unterminated quote")
        );
        assert!(
            fields("'a' b, c")
                .unwrap_err()
                .to_string()
                .contains("after a quoted value")
        );
    }

    #[test]
    fn parses_attribute_declarations() {
        let a = parse_attribute(" 'Swainson\\'s Thrush' {0,1}").unwrap();
        assert_eq!(
            a,
            Attribute::nominal("Swainson's Thrush", vec!["0".into(), "1".into()])
        );
        let a = parse_attribute(" color{red, 'dark blue'}").unwrap();
        assert_eq!(
            a,
            Attribute::nominal("color", vec!["red".into(), "dark blue".into()])
        );
        assert_eq!(parse_attribute(" x REAL").unwrap(), Attribute::numeric("x"));
        assert!(
            parse_attribute(" d date 'yyyy'")
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        assert!(
            parse_attribute(" s string")
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        assert!(
            parse_attribute(" c {a,b")
                .unwrap_err()
                .to_string()
                .contains("unterminated")
        );
    }

    fn read_rows(content: &str) -> Result<Vec<Result<Example, ReadError>>, ReadError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.arff");
        std::fs::write(&p, content).unwrap();
        let (_, plan) = open(std::slice::from_ref(&p), &ReadOptions::default())?;
        Ok(ArffRows::new(plan, &p, 0)?.collect())
    }

    #[test]
    fn only_a_question_mark_is_missing() {
        let head = "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n";
        let rows = read_rows(&format!("{head}1,x\n?,y\n,y\n2, \n")).unwrap();
        assert!(rows[0].is_ok());
        let Features::Dense(x) = &rows[1].as_ref().unwrap().features else {
            panic!("dense")
        };
        assert!(x[0].is_nan());
        let e = rows[2].as_ref().unwrap_err();
        assert_eq!(e.line, Some(7));
        assert!(
            e.reason.contains("empty value for attribute `a`"),
            "{}",
            e.reason
        );
        let e = rows[3].as_ref().unwrap_err();
        assert!(e.reason.contains("attribute `c`"), "{}", e.reason);
        // A declared empty nominal value is a value.
        let head = "@relation r\n@attribute a numeric\n@attribute c {'',y}\n@data\n";
        let rows = read_rows(&format!("{head}1,''\n2,y\n")).unwrap();
        assert!(rows.iter().all(Result::is_ok));
    }

    #[test]
    fn a_name_declared_twice_is_an_error() {
        let e = read_rows("@relation r\n@attribute a numeric\n% c\n@attribute a real\n@attribute c {x,y}\n@data\n1,2,x\n")
            .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(
            e.reason.contains("`a` is declared twice (first on line 2)"),
            "{}",
            e.reason
        );
    }
}
