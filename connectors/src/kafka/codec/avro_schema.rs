//! Avro schemas as the registry gives them (a writer's schema), parsed into an arena of
//! types: a named type is one node, and every reference to it (recursion included) is its
//! index, so a recursive schema is a finite graph.
//!
//! Bounded: the text is at most [`MAX_SCHEMA_BYTES`], its JSON nesting at most
//! serde_json's recursion limit (128), and the parser recurses once per JSON level, so a
//! hostile schema costs time and memory in proportion to its (bounded) size. Logical types
//! are read as their underlying types; documentation, defaults of the writer's fields,
//! aliases and other attributes are not needed to read data written with the schema and
//! are not kept.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// The largest schema text parsed (bytes).
pub const MAX_SCHEMA_BYTES: usize = 1 << 20;

/// Why a schema is not usable: it does not parse, or it does not resolve to the reader's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct SchemaError {
    /// What is wrong, in words.
    pub reason: String,
}

pub(super) fn schema_error(reason: impl Into<String>) -> SchemaError {
    SchemaError {
        reason: reason.into(),
    }
}

/// The index of a type in [`Parsed::nodes`].
pub(super) type NodeId = u32;

/// One Avro type.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record {
        /// The full name.
        name: String,
        fields: Vec<(String, NodeId)>,
    },
    Enum {
        name: String,
        symbols: usize,
    },
    Array(NodeId),
    Map(NodeId),
    Union(Vec<NodeId>),
    Fixed {
        name: String,
        size: usize,
    },
    /// A named type whose definition is being parsed (replaced once it is).
    Pending(String),
}

impl Node {
    /// The type's name in messages: `long`, `array`, `record a.B`, ...
    pub(super) fn describe(&self) -> String {
        match self {
            Node::Null => "null".into(),
            Node::Boolean => "boolean".into(),
            Node::Int => "int".into(),
            Node::Long => "long".into(),
            Node::Float => "float".into(),
            Node::Double => "double".into(),
            Node::Bytes => "bytes".into(),
            Node::String => "string".into(),
            Node::Record { name, .. } => format!("record {name}"),
            Node::Enum { name, .. } => format!("enum {name}"),
            Node::Array(_) => "array".into(),
            Node::Map(_) => "map".into(),
            Node::Union(_) => "union".into(),
            Node::Fixed { name, .. } => format!("fixed {name}"),
            Node::Pending(name) => format!("record {name}"),
        }
    }
}

/// A parsed schema: its types and the root's index.
#[derive(Clone, Debug)]
pub(super) struct Parsed {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    /// Per node: whether every value of the type takes zero bytes (null, fixed(0), and
    /// records of such fields). Every other type takes one byte at least.
    pub zero_size: Vec<bool>,
}

/// Parses a schema's JSON text.
pub(super) fn parse(text: &str) -> Result<Parsed, SchemaError> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(schema_error(format!(
            "the schema has {} bytes; at most {MAX_SCHEMA_BYTES} are read",
            text.len()
        )));
    }
    let json: Value = serde_json::from_str(text)
        .map_err(|e| schema_error(format!("the schema is not JSON: {e}")))?;
    let mut p = Parser {
        nodes: Vec::new(),
        names: HashMap::new(),
    };
    let root = p.schema(&json, "")?;
    let zero_size = zero_sizes(&p.nodes);
    Ok(Parsed {
        nodes: p.nodes,
        root,
        zero_size,
    })
}

struct Parser {
    nodes: Vec<Node>,
    /// Full name -> node.
    names: HashMap<String, NodeId>,
}

const PRIMITIVES: [&str; 8] = [
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

fn primitive(name: &str) -> Option<Node> {
    Some(match name {
        "null" => Node::Null,
        "boolean" => Node::Boolean,
        "int" => Node::Int,
        "long" => Node::Long,
        "float" => Node::Float,
        "double" => Node::Double,
        "bytes" => Node::Bytes,
        "string" => Node::String,
        _ => return None,
    })
}

/// Whether `name` is an Avro name: `[A-Za-z_][A-Za-z0-9_]*`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Parser {
    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        (self.nodes.len() - 1) as NodeId
    }

    /// The full name of a type named `name` (with its own `namespace`, if any) inside
    /// namespace `ns`, and the namespace its own members inherit.
    fn full_name(
        &self,
        object: &Map<String, Value>,
        ns: &str,
    ) -> Result<(String, String), SchemaError> {
        let name = match object.get("name") {
            Some(Value::String(s)) => s.as_str(),
            _ => return Err(schema_error("a named type without a \"name\" string")),
        };
        let full = if name.contains('.') {
            name.to_string()
        } else {
            let namespace = match object.get("namespace") {
                None => ns,
                Some(Value::Null) => "",
                Some(Value::String(s)) => s.as_str(),
                Some(_) => return Err(schema_error(format!("`{name}`: a non-string namespace"))),
            };
            if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{namespace}.{name}")
            }
        };
        if !full.split('.').all(valid_name) {
            return Err(schema_error(format!("`{full}` is not a valid Avro name")));
        }
        if PRIMITIVES.contains(&full.as_str()) {
            return Err(schema_error(format!("`{full}` redefines a primitive type")));
        }
        if self.names.contains_key(&full) {
            return Err(schema_error(format!("the type `{full}` is defined twice")));
        }
        let inner = match full.rfind('.') {
            Some(dot) => full[..dot].to_string(),
            None => String::new(),
        };
        Ok((full, inner))
    }

    fn define(&mut self, full: &str, node: Node) -> NodeId {
        let id = self.push(node);
        self.names.insert(full.to_string(), id);
        id
    }

    /// A reference to a type by name (a primitive, or a named type defined earlier).
    fn reference(&mut self, name: &str, ns: &str) -> Result<NodeId, SchemaError> {
        if let Some(node) = primitive(name) {
            return Ok(self.push(node));
        }
        let candidates = if name.contains('.') || ns.is_empty() {
            vec![name.to_string()]
        } else {
            vec![format!("{ns}.{name}"), name.to_string()]
        };
        candidates
            .iter()
            .find_map(|n| self.names.get(n).copied())
            .ok_or_else(|| schema_error(format!("unknown type `{name}`")))
    }

    fn schema(&mut self, json: &Value, ns: &str) -> Result<NodeId, SchemaError> {
        match json {
            Value::String(name) => self.reference(name, ns),
            Value::Array(branches) => {
                let mut ids = Vec::with_capacity(branches.len());
                for b in branches {
                    if b.is_array() {
                        return Err(schema_error("a union directly inside a union"));
                    }
                    let id = self.schema(b, ns)?;
                    if matches!(self.nodes[id as usize], Node::Union(_)) {
                        return Err(schema_error("a union directly inside a union"));
                    }
                    ids.push(id);
                }
                Ok(self.push(Node::Union(ids)))
            }
            Value::Object(object) => self.complex(object, ns),
            other => Err(schema_error(format!(
                "a schema is a string, an array or an object, not {other}"
            ))),
        }
    }

    fn complex(&mut self, object: &Map<String, Value>, ns: &str) -> Result<NodeId, SchemaError> {
        let ty = match object.get("type") {
            Some(Value::String(t)) => t.as_str(),
            // `{"type": {...}}` or `{"type": [...]}`: the inner schema.
            Some(inner @ (Value::Object(_) | Value::Array(_))) => return self.schema(inner, ns),
            _ => return Err(schema_error("an object schema without a \"type\"")),
        };
        match ty {
            "record" | "error" => {
                let (full, inner) = self.full_name(object, ns)?;
                let id = self.define(&full, Node::Pending(full.clone()));
                let Some(Value::Array(list)) = object.get("fields") else {
                    return Err(schema_error(format!(
                        "record `{full}` without a \"fields\" array"
                    )));
                };
                let mut fields: Vec<(String, NodeId)> = Vec::with_capacity(list.len());
                for f in list {
                    let Value::Object(f) = f else {
                        return Err(schema_error(format!(
                            "record `{full}`: a field that is not an object"
                        )));
                    };
                    let name = match f.get("name") {
                        Some(Value::String(n)) if valid_name(n) => n.clone(),
                        _ => {
                            return Err(schema_error(format!(
                                "record `{full}`: a field without a valid \"name\""
                            )));
                        }
                    };
                    if fields.iter().any(|(n, _)| *n == name) {
                        return Err(schema_error(format!(
                            "record `{full}`: the field `{name}` appears twice"
                        )));
                    }
                    let Some(t) = f.get("type") else {
                        return Err(schema_error(format!(
                            "record `{full}`: the field `{name}` has no \"type\""
                        )));
                    };
                    let t = self.schema(t, &inner)?;
                    fields.push((name, t));
                }
                self.nodes[id as usize] = Node::Record { name: full, fields };
                Ok(id)
            }
            "enum" => {
                let (full, _) = self.full_name(object, ns)?;
                let Some(Value::Array(symbols)) = object.get("symbols") else {
                    return Err(schema_error(format!(
                        "enum `{full}` without a \"symbols\" array"
                    )));
                };
                if !symbols.iter().all(|s| s.as_str().is_some_and(valid_name)) {
                    return Err(schema_error(format!(
                        "enum `{full}`: a symbol is not a name"
                    )));
                }
                let node = Node::Enum {
                    name: full.clone(),
                    symbols: symbols.len(),
                };
                Ok(self.define(&full, node))
            }
            "fixed" => {
                let (full, _) = self.full_name(object, ns)?;
                let size = object
                    .get("size")
                    .and_then(Value::as_u64)
                    .and_then(|s| usize::try_from(s).ok())
                    .ok_or_else(|| {
                        schema_error(format!("fixed `{full}` without a non-negative \"size\""))
                    })?;
                let node = Node::Fixed {
                    name: full.clone(),
                    size,
                };
                Ok(self.define(&full, node))
            }
            "array" => {
                let items = object
                    .get("items")
                    .ok_or_else(|| schema_error("an array without \"items\""))?;
                let items = self.schema(items, ns)?;
                Ok(self.push(Node::Array(items)))
            }
            "map" => {
                let values = object
                    .get("values")
                    .ok_or_else(|| schema_error("a map without \"values\""))?;
                let values = self.schema(values, ns)?;
                Ok(self.push(Node::Map(values)))
            }
            // A primitive written as an object (perhaps with a logical type), or a
            // reference to a named type.
            name => self.reference(name, ns),
        }
    }
}

/// Which types always take zero bytes: the least fixed point of "null, fixed(0), or a
/// record whose fields all take zero bytes" (a record that contains itself without a
/// union in between has no finite value, and is not zero-sized).
fn zero_sizes(nodes: &[Node]) -> Vec<bool> {
    let mut zero: Vec<bool> = nodes
        .iter()
        .map(|n| matches!(n, Node::Null | Node::Fixed { size: 0, .. }))
        .collect();
    loop {
        let mut changed = false;
        for (i, n) in nodes.iter().enumerate() {
            if let Node::Record { fields, .. } = n
                && !zero[i]
                && fields.iter().all(|&(_, f)| zero[f as usize])
            {
                zero[i] = true;
                changed = true;
            }
        }
        if !changed {
            return zero;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        let p = parse(text).unwrap();
        p.nodes[p.root as usize].clone()
    }

    #[test]
    fn primitives_complex_types_and_names() {
        assert_eq!(root(r#""long""#), Node::Long);
        assert_eq!(
            root(r#"{"type": "long", "logicalType": "timestamp-millis"}"#),
            Node::Long
        );
        let p = parse(
            r#"{"type": "record", "name": "A", "namespace": "x.y", "fields": [
                {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["P", "Q"]}},
                {"name": "f", "type": {"type": "fixed", "name": "z.F", "size": 3}},
                {"name": "again", "type": ["null", "E", "x.y.E", "z.F"]},
                {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "A"}}}
            ]}"#,
        )
        .unwrap();
        let Node::Record { name, fields } = &p.nodes[p.root as usize] else {
            panic!()
        };
        assert_eq!(name, "x.y.A");
        let e = fields[0].1;
        assert_eq!(
            p.nodes[e as usize],
            Node::Enum {
                name: "x.y.E".into(),
                symbols: 2
            }
        );
        let Node::Union(branches) = &p.nodes[fields[2].1 as usize] else {
            panic!()
        };
        assert_eq!(branches[1], e);
        assert_eq!(branches[2], e);
        assert_eq!(branches[3], fields[1].1);
        // The recursive reference is the record itself.
        let Node::Map(v) = p.nodes[fields[3].1 as usize] else {
            panic!()
        };
        assert_eq!(p.nodes[v as usize], Node::Array(p.root));
    }

    #[test]
    fn zero_sized_types() {
        let p = parse(
            r#"{"type": "record", "name": "R", "fields": [
                {"name": "a", "type": "null"},
                {"name": "b", "type": {"type": "fixed", "name": "F0", "size": 0}},
                {"name": "c", "type": {"type": "record", "name": "S", "fields": []}}
            ]}"#,
        )
        .unwrap();
        assert!(p.zero_size[p.root as usize]);
        let p = parse(r#"{"type": "record", "name": "L", "fields": [{"name": "n", "type": "L"}]}"#)
            .unwrap();
        assert!(!p.zero_size[p.root as usize]);
    }

    #[test]
    fn bad_schemas_are_worded_errors() {
        let deep = format!("{}\"long\"{}", "[".repeat(200), "]".repeat(200));
        let huge = format!("\"{}\"", "x".repeat(MAX_SCHEMA_BYTES));
        let cases = [
            ("{", "not JSON"),
            ("12", "a schema is"),
            (r#""Nope""#, "unknown type `Nope`"),
            (r#"{"type": "record", "name": "R"}"#, "\"fields\""),
            (
                r#"{"type": "record", "name": "1R", "fields": []}"#,
                "not a valid",
            ),
            (
                r#"{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]}"#,
                "twice",
            ),
            (
                r#"["null", {"type": "record", "name": "R", "fields": []}, {"type": "record", "name": "R", "fields": []}]"#,
                "defined twice",
            ),
            (r#"["null", ["int"]]"#, "inside a union"),
            (r#"{"type": "fixed", "name": "F", "size": -1}"#, "size"),
            (r#"{"type": "enum", "name": "E", "symbols": [1]}"#, "symbol"),
            (r#"{"type": "array"}"#, "items"),
            (
                r#"{"type": "record", "name": "int", "fields": []}"#,
                "primitive",
            ),
            (deep.as_str(), "not JSON"),
            (huge.as_str(), "at most"),
        ];
        for (text, words) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.reason.contains(words), "{text:.60}: {e} lacks {words}");
        }
    }

    #[test]
    fn the_reader_schema_parses() {
        let p = parse(super::super::avro::EVENT_SCHEMA).unwrap();
        let Node::Record { name, fields } = &p.nodes[p.root as usize] else {
            panic!()
        };
        assert_eq!(name, "flowboost.Event");
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["id", "features", "label", "labels", "key"]);
    }
}
