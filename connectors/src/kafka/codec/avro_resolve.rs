//! Avro schema resolution between a writer's schema and flowboost's reader schema
//! ([`EVENT_SCHEMA`](super::avro::EVENT_SCHEMA)), compiled once per writer schema into a
//! [`Plan`]: for each of the writer's fields in its order, either "read it as the
//! reader's field F, converting so" or "skip a value of this type". A record is then read
//! in one pass, with the same checks as the single-object decoder (every count and length
//! against the bytes left), and no value tree.
//!
//! The rules are the Avro specification's, for this reader:
//!
//! - the writer's schema is a record with the reader's unqualified name (`Event`); its
//!   fields are matched to the reader's by name, in any order;
//! - a writer's field the reader does not have is read and discarded, whatever its type
//!   (recursive types included);
//! - a reader's field the writer does not have takes its default (`label`, `labels` and
//!   `key` default to null); `id` and `features` have none, so a writer's schema without
//!   them does not resolve;
//! - numbers are promoted: `int` to `long`, `float` or `double`; `long` to `float` or
//!   `double`; `float` to `double`; `bytes` reads as `string` (UTF-8 checked);
//! - a writer's union: each branch is resolved on its own; a record that selects a branch
//!   that does not resolve is malformed (the schema resolves if one branch does); a
//!   reader's union (`["null", T]`) takes a writer's `null` as its null branch and
//!   anything else as `T`.

use super::avro::{Reader, check_id, event, unparseable};
use super::avro_schema::{Node, NodeId, Parsed, SchemaError, parse, schema_error};
use super::{DecodeError, DecodeErrorKind, DecodedEvent, RecordDecoder};
use std::fmt;

/// Values nested deeper than this (records in records, ..., through recursive types) are
/// not read.
const MAX_DEPTH: u32 = 64;

/// A reader's type, as far as flowboost's reader schema needs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ReaderType {
    Long,
    Double,
    String,
    ArrayOf(&'static ReaderType),
    /// `["null", T]`.
    Optional(&'static ReaderType),
}

impl fmt::Display for ReaderType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReaderType::Long => f.write_str("long"),
            ReaderType::Double => f.write_str("double"),
            ReaderType::String => f.write_str("string"),
            ReaderType::ArrayOf(t) => write!(f, "array<{t}>"),
            ReaderType::Optional(t) => write!(f, "[null, {t}]"),
        }
    }
}

/// A field of the reader's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Id,
    Features,
    Label,
    Labels,
    Key,
}

/// The reader's fields (`connectors/schemas/event.avsc`): name, what it becomes, its type,
/// whether it has a default (null).
const READER: [(&str, Target, ReaderType, bool); 5] = [
    ("id", Target::Id, ReaderType::Long, false),
    (
        "features",
        Target::Features,
        ReaderType::ArrayOf(&ReaderType::Double),
        false,
    ),
    (
        "label",
        Target::Label,
        ReaderType::Optional(&ReaderType::String),
        true,
    ),
    (
        "labels",
        Target::Labels,
        ReaderType::Optional(&ReaderType::ArrayOf(&ReaderType::String)),
        true,
    ),
    (
        "key",
        Target::Key,
        ReaderType::Optional(&ReaderType::String),
        true,
    ),
];

/// How a writer's value is read as the reader's.
#[derive(Clone, Debug, PartialEq)]
enum Read {
    /// A writer's `null` as the reader's null branch.
    Null,
    Int,
    Long,
    Float,
    Double,
    /// A writer's `string` or `bytes`.
    Str,
    Array(Box<Read>),
    /// A writer's union: per branch, how it reads, or why it does not.
    Union(Box<[Result<Read, Mismatch>]>),
}

/// Why a writer's type does not read as the reader's.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
enum Mismatch {
    /// The types differ.
    #[error("the writer's {writer} is not the reader's {reader}")]
    Type {
        /// The writer's type, described.
        writer: String,
        /// The reader's type.
        reader: ReaderType,
    },
    /// A branch of the writer's union does not resolve.
    #[error("the writer's union branch {branch}: {why}")]
    Branch {
        /// The branch's index.
        branch: usize,
        /// Why it does not.
        why: Box<Mismatch>,
    },
    /// No branch of the writer's union resolves.
    #[error("no branch of the writer's union resolves to the reader's {0}")]
    NoBranch(ReaderType),
    /// The items of an array do not resolve.
    #[error("its items: {0}")]
    Items(Box<Mismatch>),
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// A writer's field the reader does not have.
    Skip { field: String, node: NodeId },
    /// A reader's field.
    Field(Target, Read),
}

/// The resolution of one writer's schema against the reader's.
#[derive(Clone, Debug)]
pub struct Plan {
    parsed: Parsed,
    steps: Vec<Step>,
}

/// The unqualified name of a full name.
fn unqualified(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

impl Plan {
    /// Parses a writer's schema and resolves it against flowboost's reader schema.
    pub fn compile(writer: &str) -> Result<Plan, SchemaError> {
        let parsed = parse(writer)?;
        let Node::Record { name, fields } = &parsed.nodes[parsed.root as usize] else {
            return Err(schema_error(format!(
                "the writer's schema is {}, not a record",
                parsed.nodes[parsed.root as usize].describe()
            )));
        };
        if unqualified(name) != "Event" {
            return Err(schema_error(format!(
                "the writer's record is `{name}`, the reader's `flowboost.Event` (records \
                 resolve by their unqualified name)"
            )));
        }
        let mut steps = Vec::with_capacity(fields.len());
        let mut seen = [false; READER.len()];
        for (field, node) in fields {
            match READER.iter().position(|(n, ..)| n == field) {
                Some(i) => {
                    let (_, target, ty, _) = READER[i];
                    let read = resolve(&parsed, *node, ty)
                        .map_err(|e| schema_error(format!("field `{field}`: {e}")))?;
                    seen[i] = true;
                    steps.push(Step::Field(target, read));
                }
                None => steps.push(Step::Skip {
                    field: field.clone(),
                    node: *node,
                }),
            }
        }
        for (i, (field, _, ty, default)) in READER.iter().enumerate() {
            if !seen[i] && !default {
                return Err(schema_error(format!(
                    "the writer's record has no field `{field}`, and the reader's `{field}` \
                     ({ty}) has no default"
                )));
            }
        }
        Ok(Plan { parsed, steps })
    }

    /// Reads one record's body (from `r`'s position to the end of its bytes).
    pub(super) fn decode(
        &self,
        dec: &RecordDecoder,
        r: &mut Reader<'_>,
    ) -> Result<DecodedEvent, DecodeError> {
        let (mut id, mut features, mut label, mut labels, mut key) = (None, None, None, None, None);
        // Skipping costs at most this many steps (a bound on the work a record of a
        // hostile schema, such as records of many null fields, can cause).
        let mut budget = 8 * r.bytes.len() as u64 + 65_536;
        for step in &self.steps {
            match step {
                Step::Skip { field, node } => self.skip(r, *node, field, 0, &mut budget)?,
                Step::Field(Target::Id, read) => {
                    let n = long(r, read, "id")?;
                    check_id(n)?;
                    id = Some(n);
                }
                Step::Field(Target::Features, read) => features = Some(features_of(r, read, dec)?),
                Step::Field(Target::Label, read) => {
                    label = opt_string(r, read, "label")?
                        .map(|s| dec.label_by_name(s))
                        .transpose()?;
                }
                Step::Field(Target::Labels, read) => labels = opt_labels(r, read, dec)?,
                Step::Field(Target::Key, read) => {
                    key = opt_string(r, read, "key")?.map(str::to_owned)
                }
            }
        }
        r.finish()?;
        let (Some(id), Some(features)) = (id, features) else {
            return Err(malformed("the writer's schema lacks `id` or `features`"));
        };
        event(dec, id, features, label, labels, key)
    }

    /// Reads and discards a value of the writer's type `node` (of the field `field`).
    fn skip(
        &self,
        r: &mut Reader<'_>,
        node: NodeId,
        field: &str,
        depth: u32,
        budget: &mut u64,
    ) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH || *budget == 0 {
            return Err(unparseable(format!(
                "\"{field}\": nested more than {MAX_DEPTH} deep, or too much work for the \
                 record's size (at byte {})",
                r.at
            )));
        }
        *budget -= 1;
        match &self.parsed.nodes[node as usize] {
            Node::Null => {}
            Node::Boolean => {
                let at = r.at;
                if r.take(1, field)?[0] > 1 {
                    return Err(unparseable(format!(
                        "\"{field}\": a boolean that is neither 0 nor 1 (at byte {at})"
                    )));
                }
            }
            Node::Int => {
                r.int(field)?;
            }
            Node::Long => {
                r.long(field)?;
            }
            Node::Float => {
                r.take(4, field)?;
            }
            Node::Double => {
                r.take(8, field)?;
            }
            Node::Bytes | Node::String => {
                let n = r.length(field)?;
                r.take(n, field)?;
            }
            Node::Fixed { size, .. } => {
                r.take(*size, field)?;
            }
            Node::Enum { symbols, .. } => {
                let at = r.at;
                let i = r.long(field)?;
                if i < 0 || i as u64 >= *symbols as u64 {
                    return Err(unparseable(format!(
                        "\"{field}\": enum symbol {i} of {symbols} (at byte {at})"
                    )));
                }
            }
            Node::Array(items) => self.skip_blocks(r, None, *items, field, depth, budget)?,
            Node::Map(values) => {
                self.skip_blocks(r, Some(()), *values, field, depth, budget)?;
            }
            Node::Union(branches) => {
                let at = r.at;
                let b = r.long(field)?;
                let Some(&branch) = usize::try_from(b).ok().and_then(|b| branches.get(b)) else {
                    return Err(unparseable(format!(
                        "\"{field}\": union branch {b} of {} (at byte {at})",
                        branches.len()
                    )));
                };
                self.skip(r, branch, field, depth + 1, budget)?;
            }
            Node::Record { fields, .. } => {
                for &(_, f) in fields {
                    self.skip(r, f, field, depth + 1, budget)?;
                }
            }
            Node::Pending(name) => {
                return Err(malformed(format!("`{name}` is not defined")));
            }
        }
        Ok(())
    }

    /// Skips the blocks of an array (`key` `None`) or of a map (each entry a string key
    /// and a value).
    fn skip_blocks(
        &self,
        r: &mut Reader<'_>,
        key: Option<()>,
        item: NodeId,
        field: &str,
        depth: u32,
        budget: &mut u64,
    ) -> Result<(), DecodeError> {
        let zero = key.is_none() && self.parsed.zero_size[item as usize];
        loop {
            let at = r.at;
            let count = r.long(field)?;
            if count == 0 {
                return Ok(());
            }
            if count < 0 {
                // A block with its size in bytes: skipped whole.
                let size = r.long(field)?;
                let size = usize::try_from(size).map_err(|_| {
                    unparseable(format!(
                        "\"{field}\": a block of {size} bytes (at byte {at})"
                    ))
                })?;
                r.take(size, field)?;
                continue;
            }
            if zero {
                // Values of no bytes: nothing to read, however many.
                continue;
            }
            // Each entry takes one byte at least.
            if count as u64 > r.left() as u64 {
                return Err(unparseable(format!(
                    "\"{field}\": a block of {count} values (at byte {at}) where {} bytes \
                     are left",
                    r.left()
                )));
            }
            for _ in 0..count {
                if key.is_some() {
                    let n = r.length(field)?;
                    r.take(n, field)?;
                }
                self.skip(r, item, field, depth + 1, budget)?;
            }
        }
    }
}

fn malformed(reason: impl Into<String>) -> DecodeError {
    DecodeError::new(DecodeErrorKind::Malformed, reason)
}

/// How the writer's type `node` reads as the reader's `ty`, or why it does not.
fn resolve(p: &Parsed, node: NodeId, ty: ReaderType) -> Result<Read, Mismatch> {
    let n = &p.nodes[node as usize];
    if let Node::Union(branches) = n {
        let reads: Vec<Result<Read, Mismatch>> = branches
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                resolve(p, b, ty).map_err(|why| Mismatch::Branch {
                    branch: i,
                    why: Box::new(why),
                })
            })
            .collect();
        if reads.iter().all(Result::is_err) {
            return Err(Mismatch::NoBranch(ty));
        }
        return Ok(Read::Union(reads.into()));
    }
    let mismatch = || {
        Err(Mismatch::Type {
            writer: n.describe(),
            reader: ty,
        })
    };
    match (ty, n) {
        (ReaderType::Optional(_), Node::Null) => Ok(Read::Null),
        (ReaderType::Optional(inner), _) => resolve(p, node, *inner),
        (ReaderType::Long, Node::Int) => Ok(Read::Int),
        (ReaderType::Long, Node::Long) => Ok(Read::Long),
        (ReaderType::Double, Node::Int) => Ok(Read::Int),
        (ReaderType::Double, Node::Long) => Ok(Read::Long),
        (ReaderType::Double, Node::Float) => Ok(Read::Float),
        (ReaderType::Double, Node::Double) => Ok(Read::Double),
        (ReaderType::String, Node::String | Node::Bytes) => Ok(Read::Str),
        (ReaderType::ArrayOf(item), Node::Array(items)) => resolve(p, *items, *item)
            .map(|r| Read::Array(Box::new(r)))
            .map_err(|why| Mismatch::Items(Box::new(why))),
        _ => mismatch(),
    }
}

/// The branch a record selects in a writer's union.
fn branch<'p>(
    r: &mut Reader<'_>,
    branches: &'p [Result<Read, Mismatch>],
    field: &str,
) -> Result<&'p Read, DecodeError> {
    let at = r.at;
    let b = r.long(field)?;
    match usize::try_from(b).ok().and_then(|b| branches.get(b)) {
        Some(Ok(read)) => Ok(read),
        Some(Err(why)) => Err(malformed(format!("\"{field}\" (at byte {at}): {why}"))),
        None => Err(unparseable(format!(
            "\"{field}\": union branch {b} (at byte {at}); the writer's union has {}",
            branches.len()
        ))),
    }
}

fn internal(field: &str) -> DecodeError {
    malformed(format!(
        "\"{field}\": the plan does not fit the reader's type"
    ))
}

fn long(r: &mut Reader<'_>, read: &Read, field: &str) -> Result<i64, DecodeError> {
    match read {
        Read::Int => r.int(field).map(i64::from),
        Read::Long => r.long(field),
        Read::Union(branches) => {
            let read = branch(r, branches, field)?;
            long(r, read, field)
        }
        _ => Err(internal(field)),
    }
}

fn double(r: &mut Reader<'_>, read: &Read, field: &str) -> Result<f64, DecodeError> {
    match read {
        Read::Int => r.int(field).map(f64::from),
        Read::Long => r.long(field).map(|n| n as f64),
        Read::Float => r.float(field).map(f64::from),
        Read::Double => r.double(field),
        Read::Union(branches) => {
            let read = branch(r, branches, field)?;
            double(r, read, field)
        }
        _ => Err(internal(field)),
    }
}

fn features_of(
    r: &mut Reader<'_>,
    read: &Read,
    dec: &RecordDecoder,
) -> Result<Vec<f64>, DecodeError> {
    match read {
        Read::Array(item) if **item == Read::Double => r.features(dec),
        Read::Array(item) => r.features_by(dec, |r| double(r, item, "features")),
        Read::Union(branches) => {
            let read = branch(r, branches, "features")?;
            features_of(r, read, dec)
        }
        _ => Err(internal("features")),
    }
}

fn string<'a>(r: &mut Reader<'a>, read: &Read, field: &str) -> Result<&'a str, DecodeError> {
    match read {
        Read::Str => r.string(field),
        Read::Union(branches) => {
            let read = branch(r, branches, field)?;
            string(r, read, field)
        }
        _ => Err(internal(field)),
    }
}

fn opt_string<'a>(
    r: &mut Reader<'a>,
    read: &Read,
    field: &str,
) -> Result<Option<&'a str>, DecodeError> {
    match read {
        Read::Null => Ok(None),
        Read::Str => r.string(field).map(Some),
        Read::Union(branches) => {
            let read = branch(r, branches, field)?;
            opt_string(r, read, field)
        }
        _ => Err(internal(field)),
    }
}

fn opt_labels(
    r: &mut Reader<'_>,
    read: &Read,
    dec: &RecordDecoder,
) -> Result<Option<Vec<u32>>, DecodeError> {
    match read {
        Read::Null => Ok(None),
        Read::Array(item) if **item == Read::Str => r.label_names(dec).map(Some),
        Read::Array(item) => r
            .label_names_by(dec, |r| string(r, item, "labels"))
            .map(Some),
        Read::Union(branches) => {
            let read = branch(r, branches, "labels")?;
            opt_labels(r, read, dec)
        }
        _ => Err(internal("labels")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_table_is_event_avsc() {
        // Every reader field of the table, with its type, is in event.avsc, in order;
        // the reader's own schema resolves to reading every field as written.
        let plan = Plan::compile(super::super::avro::EVENT_SCHEMA).unwrap();
        let fields: Vec<Target> = plan
            .steps
            .iter()
            .map(|s| match s {
                Step::Field(t, _) => *t,
                Step::Skip { .. } => panic!("skips {s:?}"),
            })
            .collect();
        assert_eq!(fields, READER.map(|(_, t, ..)| t));
        let v: serde_json::Value = serde_json::from_str(super::super::avro::EVENT_SCHEMA).unwrap();
        for (f, (name, _, ty, default)) in v["fields"].as_array().unwrap().iter().zip(READER) {
            assert_eq!(f["name"], name);
            assert_eq!(f.get("default").is_some(), default, "{name}");
            if default {
                assert!(
                    f["default"].is_null(),
                    "{name}: only null defaults are read"
                );
                assert!(matches!(ty, ReaderType::Optional(_)));
            }
        }
    }
}
