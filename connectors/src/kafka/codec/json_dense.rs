//! The fast path of the JSON event decoder, for the common shape of an event: a numeric
//! id, numeric features (dense, or named) and a label (or labels), e.g.
//! `{"features":[0.5,-0.7],"id":4,"label":"1"}` or
//! `{"id":4,"features":{"x":0.5,"y":-0.7}}`, its fields in any order.
//!
//! It reads the payload in one pass without building a JSON tree: the feature values are
//! parsed straight into the example's vectors by `lexical-core` under its JSON number
//! grammar (correctly rounded, the same `f64` as `serde_json` with `float_roundtrip`
//! gives; a test below compares them), the label and the key by `serde_json`, and any
//! other field is parsed and dropped by `serde_json`. Anything it does not take (a string id, an
//! unknown feature name or one with an escape, a string among the values (a nominal
//! value's name), a repeated field (any field: the general path
//! refuses them), an escape in a field name, any error) returns `None`, and the general path, which words every error, decides: the
//! fast path only ever gives the example the general path would give.

use super::{DecodedEvent, RecordDecoder};
use flowboost_operators::data::{Example, Features};
use serde_json::Value;

/// The JSON number grammar (no leading `+`, no leading zeros, digits on both sides of a
/// point, no `NaN` or `Infinity`).
const JSON_NUMBER: u128 = lexical_core::format::JSON;

/// The event of `payload` if it has the common shape and decodes without error; `None`
/// where the general path must decide.
pub(super) fn decode(dec: &RecordDecoder, payload: &[u8]) -> Option<DecodedEvent> {
    let mut c = Cursor {
        bytes: payload,
        at: 0,
    };
    let mut id = None;
    let mut features = None;
    let mut label = None;
    let mut labels = None;
    let mut key = None;
    // The names of the other fields (skipped), to leave a repeated one to the general
    // path, which refuses it.
    let mut others: Vec<&[u8]> = Vec::new();
    c.skip_space();
    c.expect(b'{')?;
    c.skip_space();
    if !c.eat(b'}') {
        loop {
            c.skip_space();
            let name = c.plain_string()?;
            c.skip_space();
            c.expect(b':')?;
            c.skip_space();
            match name {
                b"id" => set_once(&mut id, c.id()?)?,
                b"features" => set_once(&mut features, c.features(dec)?)?,
                b"label" => set_once(&mut label, c.label(dec)?)?,
                b"labels" => set_once(&mut labels, c.value::<Value>()?)?,
                b"key" => set_once(&mut key, c.value::<Option<String>>()?)?,
                other => {
                    // A repeated field is the general path's error.
                    if others.contains(&other) {
                        return None;
                    }
                    others.push(other);
                    // Skipped, but checked as the general path's parse checks it (as a
                    // tree: skipping it unparsed would let a number out of range pass).
                    let start = c.at;
                    c.value::<Value>()?;
                    std::str::from_utf8(&payload[start..c.at]).ok()?;
                }
            }
            c.skip_space();
            if c.eat(b',') {
                continue;
            }
            c.expect(b'}')?;
            break;
        }
    }
    c.skip_space();
    if c.at != payload.len() {
        return None;
    }
    let label = match (label, labels) {
        (Some(LabelField::Index(l)), None) => Some(dec.single_label(l)),
        (label, labels) => {
            let label = label.map(|l| match l {
                LabelField::Index(l) => Value::from(l),
                LabelField::Tree(v) => v,
            });
            super::json::labels(dec, label.as_ref(), labels.as_ref()).ok()?
        }
    };
    Some(DecodedEvent {
        example: Example {
            id: id?,
            features: features?,
            label,
        },
        key: key.flatten(),
    })
}

/// A `"label"` field: a known label name or index, already looked up, or any other value
/// (for [`super::json::labels`] to judge).
enum LabelField {
    Index(u32),
    Tree(Value),
}

/// Sets a field seen for the first time; `None` for a repeated one (the general path
/// refuses it, naming the field).
fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// A position in the payload.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Takes `byte` if it comes next.
    fn eat(&mut self, byte: u8) -> bool {
        let next = self.bytes.get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    /// A string without escapes (a field name, a label name), as its bytes between the
    /// quotes.
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let rest = &self.bytes[self.at..];
        let len = memchr::memchr2(b'"', b'\\', rest)?;
        // No escapes here; no control characters and only UTF-8 in any JSON string.
        if rest[len] != b'"' || rest[..len].iter().any(|&b| b < 0x20) {
            return None;
        }
        std::str::from_utf8(&rest[..len]).ok()?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// A non-negative integer that fits a `u64`, digits only.
    fn id(&mut self) -> Option<u64> {
        let rest = &self.bytes[self.at..];
        let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 || (len > 1 && rest[0] == b'0') {
            return None;
        }
        let mut id: u64 = 0;
        for &d in &rest[..len] {
            id = id.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        self.at += len;
        Some(id)
    }

    /// The `"features"` value: an array (dense) or an object (named).
    fn features(&mut self, dec: &RecordDecoder) -> Option<Features> {
        match self.bytes.get(self.at)? {
            b'[' => self.dense(dec).map(Features::Dense),
            b'{' => self.named(dec),
            _ => None,
        }
    }

    /// One JSON number, as `serde_json` with `float_roundtrip` reads it.
    fn number(&mut self) -> Option<f64> {
        let (x, used) = lexical_core::parse_partial_with_options::<f64, JSON_NUMBER>(
            &self.bytes[self.at..],
            &lexical_core::ParseFloatOptions::new(),
        )
        .ok()?;
        self.at += used;
        Some(x)
    }

    /// An object of named features, each a known name without escapes and a JSON number
    /// that passes the decoder's checks: the general path's sparse features (by index). A
    /// repeated name (which the general path refuses) is left to it.
    fn named(&mut self, dec: &RecordDecoder) -> Option<Features> {
        self.expect(b'{')?;
        self.skip_space();
        let mut pairs: Vec<(u32, f64)> = Vec::new();
        if !self.eat(b'}') {
            loop {
                let name = std::str::from_utf8(self.plain_string()?).ok()?;
                self.skip_space();
                self.expect(b':')?;
                self.skip_space();
                let j = dec.feature(name)?;
                let x = self.number()?;
                pairs.push((j, dec.check_value(j as usize, x).ok()?));
                self.skip_space();
                if self.eat(b',') {
                    self.skip_space();
                    continue;
                }
                self.expect(b'}')?;
                break;
            }
        }
        pairs.sort_unstable_by_key(|p| p.0);
        if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let (indices, values) = pairs.into_iter().unzip();
        Some(Features::Sparse {
            indices,
            values,
            dim: dec.schema.dim() as u32,
        })
    }

    /// An array of exactly the schema's number of values, each a JSON number that passes
    /// the decoder's checks.
    fn dense(&mut self, dec: &RecordDecoder) -> Option<Vec<f64>> {
        let dim = dec.schema.dim();
        self.expect(b'[')?;
        self.skip_space();
        let mut values = Vec::with_capacity(dim);
        if !self.eat(b']') {
            loop {
                if values.len() == dim {
                    return None;
                }
                let x = self.number()?;
                values.push(dec.check_value(values.len(), x).ok()?);
                self.skip_space();
                if self.eat(b',') {
                    self.skip_space();
                    continue;
                }
                self.expect(b']')?;
                break;
            }
        }
        (values.len() == dim).then_some(values)
    }

    /// A `"label"` value: a string without escapes or an integer is looked up here; an
    /// unknown one is `None`; anything else is parsed by `serde_json`.
    fn label(&mut self, dec: &RecordDecoder) -> Option<LabelField> {
        match self.bytes.get(self.at)? {
            b'"' => {
                let start = self.at;
                if let Some(name) = self.plain_string() {
                    let name = std::str::from_utf8(name).ok()?;
                    return dec.label_by_name(name).ok().map(LabelField::Index);
                }
                self.at = start;
            }
            b'0'..=b'9' => {
                let start = self.at;
                if let Some(index) = self.id()
                    && !matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E'))
                {
                    return dec.label_by_index(index).ok().map(LabelField::Index);
                }
                self.at = start;
            }
            _ => {}
        }
        self.value::<Value>().map(LabelField::Tree)
    }

    /// One JSON value, by `serde_json`.
    fn value<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        let mut stream =
            serde_json::Deserializer::from_slice(&self.bytes[self.at..]).into_iter::<T>();
        let value = stream.next()?.ok()?;
        self.at += stream.byte_offset();
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowboost_operators::data::{Attribute, Label, Schema, Task};

    fn decoder(dim: usize) -> RecordDecoder {
        let schema = Schema {
            attributes: (0..dim)
                .map(|j| Attribute::numeric(format!("x{j}")))
                .collect(),
            task: Task::Binary,
            labels: vec!["0".into(), "1".into()],
        };
        RecordDecoder::new(&schema, super::super::RecordFormat::Json)
    }

    #[test]
    fn the_common_shape_decodes_in_any_field_order_with_other_fields_skipped() {
        let dec = decoder(2);
        for text in [
            r#"{"features":[0.5,-2e-3],"id":4,"label":"1"}"#,
            r#" { "id" : 4 , "extra": {"a": [1, "x\"y"]}, "label": 1, "features" : [ 0.5 , -0.002 ] } "#,
        ] {
            let ev = decode(&dec, text.as_bytes()).expect(text);
            assert_eq!(ev.example.id, 4);
            assert_eq!(ev.example.features, Features::Dense(vec![0.5, -0.002]));
            assert_eq!(ev.example.label, Some(Label::Class(1)));
            assert_eq!(ev.key, None);
        }
        // Named features: by index, any missing.
        for text in [
            r#"{"id":4,"features":{"x1":-2e-3,"x0":0.5},"label":"1"}"#,
            r#"{ "features" : { "x1" : -0.002 } , "id" : 4 , "label" : "1" }"#,
        ] {
            let ev = decode(&dec, text.as_bytes()).expect(text);
            let x0: &[f64] = if text.contains("x0") { &[0.5] } else { &[] };
            let (indices, values) = if x0.is_empty() {
                (vec![1], vec![-0.002])
            } else {
                (vec![0, 1], vec![0.5, -0.002])
            };
            assert_eq!(
                ev.example.features,
                Features::Sparse {
                    indices,
                    values,
                    dim: 2
                },
                "{text}"
            );
            assert_eq!(ev.example.label, Some(Label::Class(1)));
        }
        let ev = decode(&dec, br#"{"id":0,"features":[1,2],"key":"k"}"#).unwrap();
        assert_eq!(ev.example.label, None);
        assert_eq!(ev.key.as_deref(), Some("k"));
    }

    #[test]
    fn anything_else_is_left_to_the_general_path() {
        let dec = decoder(2);
        for text in [
            r#"{"id":"4","features":[1,2]}"#,
            r#"{"id":4.0,"features":[1,2]}"#,
            r#"{"id":04,"features":[1,2]}"#,
            r#"{"id":18446744073709551616,"features":[1,2]}"#,
            r#"{"id":4,"features":{"zz":1}}"#,
            r#"{"id":4,"features":{"x0":"1"}}"#,
            r#"{"id":4,"features":{"x\u0030":1}}"#,
            r#"{"id":4,"features":{"x0":1,"x0":2}}"#,
            r#"{"id":4,"features":{"x0":1,}}"#,
            r#"{"id":4,"features":{"x0":NaN}}"#,
            r#"{"id":4,"features":5}"#,
            r#"{"id":4,"features":[1]}"#,
            r#"{"id":4,"features":[1,2,3]}"#,
            r#"{"id":4,"features":[1,"2"]}"#,
            r#"{"id":4,"features":[1,NaN]}"#,
            r#"{"id":4,"features":[1,1e400]}"#,
            r#"{"id":4,"features":[1,.5]}"#,
            r#"{"id":4,"features":[1,+5]}"#,
            r#"{"id":4,"features":[1,5.]}"#,
            r#"{"id":4,"features":[1,0x5]}"#,
            r#"{"id":4,"features":[1,2],"id":5}"#,
            r#"{"id":4,"features":[1,2],"note":1,"note":2}"#,
            r#"{"id":4,"features":[1,2],"label":"7"}"#,
            r#"{"id":4,"features":[1,2],"key":3}"#,
            r#"{"i\u0064":4,"features":[1,2]}"#,
            r#"{"id":4,"features":[1,2]} x"#,
            r#"{"id":4,"features":[1,2],}"#,
            r#"{"id":4,"features":[1,2]"#,
            r#"{"features":[1,2]}"#,
            r#"[1,2]"#,
            "",
        ] {
            assert!(decode(&dec, text.as_bytes()).is_none(), "{text}");
        }
    }

    /// A repeated field is a dead letter naming it (the general path; the fast path
    /// leaves it there), whichever field it is and however the payload is laid out.
    #[test]
    fn repeated_fields_are_malformed_and_named() {
        use super::super::DecodeErrorKind;
        let dec = decoder(2);
        for (text, field) in [
            (r#"{"id":4,"features":[1,2],"id":5}"#, "id"),
            (r#"{"id":4,"id":4,"features":[1,2]}"#, "id"),
            (r#"{"id":"4","features":[1,2],"id":"5"}"#, "id"),
            (
                r#"{"id":4,"features":[1,2],"label":"1","label":"0"}"#,
                "label",
            ),
            (r#"{"id":4,"features":[1,2],"note":1,"note":2}"#, "note"),
            (r#"{"id":4,"features":[1,2],"features":[2,1]}"#, "features"),
            (r#"{"id":4,"features":{"x0":1,"x0":2}}"#, "x0"),
            (r#"{"id":4,"features":[1,2],"key":"a","key":"b"}"#, "key"),
        ] {
            assert!(decode(&dec, text.as_bytes()).is_none(), "{text}");
            let e = dec.decode(None, text.as_bytes()).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::Malformed, "{text}: {}", e.reason);
            assert!(
                e.reason.contains(&format!("duplicate field `{field}`")),
                "{text}: {}",
                e.reason
            );
        }
        // Feedback records too.
        let e = dec
            .decode_feedback(br#"{"id":4,"label":"1","label":"0"}"#)
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Malformed, "{}", e.reason);
        assert!(e.reason.contains("`label`"), "{}", e.reason);
    }

    /// Bytes that are not JSON are dead letters saying so, even when the letters `NaN` or
    /// `Infinity` occur in them; a bare `NaN` or `Infinity` where a value belongs is
    /// still named as such.
    #[test]
    fn random_bytes_are_not_json_and_bare_non_finite_values_are_named() {
        use super::super::DecodeErrorKind;
        use flowboost_operators::rng::{below, seeded};
        let dec = decoder(2);
        let mut rng = seeded(5, 0);
        for round in 0..20 {
            let mut bytes: Vec<u8> = (0..(1 << 16)).map(|_| below(&mut rng, 256) as u8).collect();
            // The letters of the non-finite tokens, here and there.
            for (i, token) in [&b"NaN"[..], b"Infinity", b"-Infinity"].iter().enumerate() {
                let at = 100 * (i + 1) + round;
                bytes[at..at + token.len()].copy_from_slice(token);
            }
            if round % 2 == 0 {
                bytes[0] = b'{';
            }
            let e = dec.decode(None, &bytes).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::Unparseable, "{}", e.reason);
            assert!(e.reason.contains("not valid JSON"), "{}", e.reason);
        }
        for (text, token) in [
            (r#"{"id":4,"features":[1,NaN]}"#, "`NaN`"),
            (r#"{"id":4,"features":[Infinity,1]}"#, "`Infinity`"),
            (r#"{"id":4,"features":[1,-Infinity]}"#, "`-Infinity`"),
            ("{\"id\":4,\n\"features\":\n[1,\n NaN]}", "`NaN`"),
            (r#"{"id":4,"features":{"x0":NaN}}"#, "`NaN`"),
        ] {
            let e = dec.decode(None, text.as_bytes()).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::NonFinite, "{text}: {}", e.reason);
            assert!(e.reason.contains(token), "{text}: {}", e.reason);
        }
    }

    /// The values the fast path parses are the `f64`s `serde_json` (with
    /// `float_roundtrip`, as the general path parses) gives, bit for bit, on numbers
    /// written every way JSON allows: shortest, with 17 to 25 digits, exponents, integers,
    /// subnormals and near the overflow.
    #[test]
    fn numbers_parse_as_serde_json_parses_them() {
        use flowboost_operators::rng::{seeded, uniform};
        use rand::Rng as _;
        let mut rng = seeded(7, 0);
        let dec = decoder(1);
        let mut checked = 0;
        for i in 0..200_000 {
            let x = f64::from_bits(rng.next_u64());
            if !x.is_finite() {
                continue;
            }
            let text = match i % 6 {
                0 => format!("{x}"),
                1 => format!("{x:e}"),
                2 => format!("{x:.17e}"),
                3 => format!("{:.25e}", x),
                4 => format!("{}", (x.abs().log10().clamp(-300.0, 300.0) * 1e6) as i64),
                _ => format!("{:.3}", uniform(&mut rng) * 1e6 - 5e5),
            };
            let text = text.replace("e", if i % 2 == 0 { "e" } else { "E" });
            let payload = format!(r#"{{"id":1,"features":[{text}]}}"#);
            let want: f64 = serde_json::from_str(&text).unwrap();
            let got = decode(&dec, payload.as_bytes()).unwrap();
            assert_eq!(
                got.example.features,
                Features::Dense(vec![want]),
                "{text}: {want:e}"
            );
            assert_eq!(
                match &got.example.features {
                    Features::Dense(v) => v[0].to_bits(),
                    _ => unreachable!(),
                },
                want.to_bits(),
                "{text}"
            );
            checked += 1;
        }
        assert!(checked > 190_000);
    }

    /// Wherever the fast path takes a record, the general path gives the same event: on
    /// events of a multi-label schema with a nominal attribute, mutated (spaces, reordered
    /// and extra fields, repeated fields, bytes changed, cut or inserted).
    #[test]
    fn the_fast_path_agrees_with_the_general_path() {
        use flowboost_operators::rng::{below, seeded};
        let schema = Schema {
            attributes: vec![
                Attribute::numeric("a"),
                Attribute::nominal("c", vec!["x".into(), "y".into()]),
                Attribute::numeric("b"),
            ],
            task: Task::Multilabel,
            labels: vec!["p".into(), "q".into(), "r".into()],
        };
        let dec = RecordDecoder::new(&schema, super::super::RecordFormat::Json);
        let mut rng = seeded(11, 0);
        let pieces = [
            r#""id":12"#,
            r#""id":"12""#,
            r#""features":[0.25,1,-3e2]"#,
            r#""features":[0.25,"y",-3e2]"#,
            r#""features":[0.25,1.5,-3e2]"#,
            r#""features":{"a":1}"#,
            r#""features":{"b":-3e2,"a":0.25,"c":1}"#,
            r#""features":{"c":"y","a":1}"#,
            r#""features":{"c":1.5}"#,
            r#""features":{"a":1,"a":2}"#,
            r#""features":{}"#,
            r#""features":{"a":1e400,"b":2}"#,
            r#""labels":["p","r"]"#,
            r#""labels":[2,0,2]"#,
            r#""labels":[]"#,
            r#""label":"q""#,
            r#""label":1"#,
            r#""label":7"#,
            r#""label":"\u0071""#,
            r#""labels":null"#,
            r#""key":"m1""#,
            r#""key":null"#,
            r#""note":{"x":[1,{"y":""}"}]}"#,
        ];
        let (mut fast, mut total) = (0, 0);
        for _ in 0..20_000 {
            let n = below(&mut rng, 4) as usize;
            let mut fields: Vec<&str> = (0..n)
                .map(|_| pieces[below(&mut rng, pieces.len() as u64) as usize])
                .collect();
            if below(&mut rng, 2) == 0 {
                fields.insert(0, pieces[2]);
                fields.insert(0, pieces[0]);
            }
            let sep = [",", " , ", ",\n"][below(&mut rng, 3) as usize];
            let mut text = format!("{{{}}}", fields.join(sep)).into_bytes();
            match below(&mut rng, 6) {
                0 => {
                    let at = below(&mut rng, text.len() as u64) as usize;
                    let bytes = b" ,:[]{}\"0-e.9x\x01\xff";
                    text[at] = bytes[below(&mut rng, bytes.len() as u64) as usize];
                }
                1 => {
                    let at = below(&mut rng, text.len() as u64 + 1) as usize;
                    text.truncate(at);
                }
                2 => {
                    let at = below(&mut rng, text.len() as u64 + 1) as usize;
                    text.insert(at, b' ');
                }
                _ => {}
            }
            total += 1;
            if let Some(event) = decode(&dec, &text) {
                fast += 1;
                let general = super::super::json::decode_event_tree(&dec, &text);
                assert_eq!(
                    general.as_ref(),
                    Ok(&event),
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
        // Both kinds of case occur.
        assert!(fast > total / 10 && fast < total, "{fast} of {total}");
    }
}
