//! The Kafka record codec: JSON and LIBSVM records to examples, every bad-record case,
//! predictions and dead letters to JSON. No broker needed.
#![cfg(feature = "kafka")]

use flowboost_connectors::kafka::{
    DeadLetter, DeadLetterRecord, DecodeErrorKind, PredictionEncoder, PredictionOutput,
    RecordDecoder, RecordFormat,
};
use flowboost_operators::data::{Attribute, Example, Features, Feedback, Label, Schema, Task};
use serde_json::{Value, json};

fn multiclass() -> Schema {
    Schema {
        attributes: vec![
            Attribute::numeric("age"),
            Attribute::numeric("income"),
            Attribute::nominal("color", vec!["red".into(), "green".into(), "blue".into()]),
        ],
        labels: vec!["cat".into(), "dog".into(), "fish".into()],
        task: Task::Multiclass,
    }
}

fn multilabel() -> Schema {
    Schema {
        attributes: (0..4)
            .map(|j| Attribute::numeric(format!("f{j}")))
            .collect(),
        labels: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        task: Task::Multilabel,
    }
}

fn binary_pm1() -> Schema {
    Schema {
        attributes: (0..5)
            .map(|j| Attribute::numeric(format!("f{j}")))
            .collect(),
        labels: vec!["-1".into(), "1".into()],
        task: Task::Binary,
    }
}

fn json_ok(schema: &Schema, v: Value) -> Example {
    let dec = RecordDecoder::new(schema, RecordFormat::Json);
    let bytes = serde_json::to_vec(&v).unwrap();
    dec.decode(None, &bytes)
        .unwrap_or_else(|e| panic!("{v} should decode: {e}"))
}

fn json_err(schema: &Schema, payload: &str) -> (DecodeErrorKind, String) {
    let dec = RecordDecoder::new(schema, RecordFormat::Json);
    match dec.decode(None, payload.as_bytes()) {
        Ok(ex) => panic!("{payload} should not decode, got {ex:?}"),
        Err(e) => (e.kind, e.reason),
    }
}

#[test]
fn json_sparse_by_name_with_a_class_by_name_or_index() {
    let s = multiclass();
    let ex = json_ok(
        &s,
        json!({"id": 42, "features": {"income": 3.5, "age": 30, "color": "blue"}, "label": "dog"}),
    );
    assert_eq!(
        ex,
        Example {
            id: 42,
            features: Features::Sparse {
                indices: vec![0, 1, 2],
                values: vec![30.0, 3.5, 2.0],
                dim: 3
            },
            label: Some(Label::Class(1)),
        }
    );
    let ex = json_ok(&s, json!({"id": "7", "features": {"color": 1}, "label": 2}));
    assert_eq!(ex.id, 7);
    assert_eq!(
        ex.features,
        Features::Sparse {
            indices: vec![2],
            values: vec![1.0],
            dim: 3
        }
    );
    assert_eq!(ex.label, Some(Label::Class(2)));
    // "labels" with one label is fine for a multiclass task.
    let ex = json_ok(&s, json!({"id": 1, "features": {}, "labels": ["cat"]}));
    assert_eq!(ex.label, Some(Label::Class(0)));
}

#[test]
fn json_dense_and_unlabeled() {
    let s = multiclass();
    let ex = json_ok(&s, json!({"id": 0, "features": [1.0, -2, "green"]}));
    assert_eq!(ex.features, Features::Dense(vec![1.0, -2.0, 1.0]));
    assert_eq!(ex.label, None);
    let ex = json_ok(
        &s,
        json!({"id": 0, "features": [1, 2, 0], "label": null, "ts": 5}),
    );
    assert_eq!(ex.label, None);
}

#[test]
fn json_label_sets_for_multilabel() {
    let s = multilabel();
    let ex = json_ok(
        &s,
        json!({"id": 3, "features": [0, 1, 0, 1], "labels": ["c", 0, "c"]}),
    );
    assert_eq!(ex.label, Some(Label::Set(vec![0, 2])));
    let ex = json_ok(&s, json!({"id": 3, "features": {"f1": 1}, "labels": []}));
    assert_eq!(ex.label, Some(Label::Set(vec![])));
    let ex = json_ok(&s, json!({"id": 3, "features": {"f1": 1}, "label": "d"}));
    assert_eq!(ex.label, Some(Label::Set(vec![3])));
}

#[test]
fn json_round_trip_through_the_encoder_of_a_producer() {
    // What a producer writes from an example decodes back to the same example.
    let s = multilabel();
    let dec = RecordDecoder::new(&s, RecordFormat::Json);
    for id in 0..50u64 {
        let values: Vec<f64> = (0..4)
            .map(|j| ((id * 7 + j) % 5) as f64 * 0.25 - 0.5)
            .collect();
        let labels: Vec<u32> = (0..4).filter(|l| (id >> l) & 1 == 1).collect();
        let names: Vec<&str> = labels
            .iter()
            .map(|&l| s.labels[l as usize].as_str())
            .collect();
        let dense = json!({"id": id, "features": values, "labels": names});
        let ex = dec.decode(None, dense.to_string().as_bytes()).unwrap();
        assert_eq!(ex.features, Features::Dense(values.clone()));
        assert_eq!(ex.label, Some(Label::Set(labels.clone())));
        let named: serde_json::Map<String, Value> = values
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(j, x)| (format!("f{j}"), json!(x)))
            .collect();
        let sparse = json!({"id": id, "features": named, "labels": labels});
        let ex2 = dec.decode(None, sparse.to_string().as_bytes()).unwrap();
        assert_eq!(ex2.id, id);
        for (j, &x) in values.iter().enumerate() {
            assert_eq!(ex2.features.get(j), x);
        }
        assert_eq!(ex2.label, ex.label);
    }
}

#[test]
fn json_bad_records_are_errors_with_reasons() {
    let s = multiclass();
    use DecodeErrorKind::*;
    let cases: &[(&str, DecodeErrorKind, &str)] = &[
        (
            "{\"id\": 1, \"features\": [1, 2",
            Unparseable,
            "not valid JSON",
        ),
        ("", Unparseable, "empty"),
        ("[1, 2, 3]", Unparseable, "expected a JSON object"),
        ("\u{feff}garbage", Unparseable, "not valid JSON"),
        (
            "{\"features\": [1, 2, 0], \"label\": 0}",
            MissingId,
            "missing id",
        ),
        (
            "{\"id\": null, \"features\": [1, 2, 0]}",
            MissingId,
            "missing id",
        ),
        ("{\"id\": -4, \"features\": [1, 2, 0]}", MissingId, "bad id"),
        (
            "{\"id\": \"x7\", \"features\": [1, 2, 0]}",
            MissingId,
            "bad id",
        ),
        (
            "{\"id\": 1.5, \"features\": [1, 2, 0]}",
            MissingId,
            "bad id",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2]}",
            WrongDimension,
            "2 values, the schema declares 3",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0, 4]}",
            WrongDimension,
            "4 values",
        ),
        (
            "{\"id\": 1, \"features\": {\"height\": 1}}",
            UnknownFeature,
            "`height`",
        ),
        ("{\"id\": 1, \"features\": [NaN, 2, 0]}", NonFinite, "NaN"),
        (
            "{\"id\": 1, \"features\": {\"age\": Infinity}}",
            NonFinite,
            "Infinity",
        ),
        (
            "{\"id\": 1, \"features\": {\"age\": -Infinity}}",
            NonFinite,
            "-Infinity",
        ),
        (
            "{\"id\": 1, \"features\": {\"age\": 1e999}}",
            NonFinite,
            "infinity",
        ),
        (
            "{\"id\": 1, \"features\": {\"age\": \"nan\"}}",
            NonFinite,
            "NaN",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"label\": \"bird\"}",
            UnknownLabel,
            "`bird`",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"label\": 3}",
            UnknownLabel,
            "unknown label 3",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"label\": -1}",
            UnknownLabel,
            "unknown label -1",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"labels\": [\"cat\", \"bird\"]}",
            UnknownLabel,
            "`bird`",
        ),
        ("{\"id\": 1}", Malformed, "missing features"),
        (
            "{\"id\": 1, \"features\": 3}",
            Malformed,
            "features must be",
        ),
        ("{\"id\": 1, \"features\": [1, null, 0]}", Malformed, "null"),
        (
            "{\"id\": 1, \"features\": [1, true, 0]}",
            Malformed,
            "expected a number",
        ),
        ("{\"id\": 1, \"features\": [1, 2, 5]}", Malformed, "nominal"),
        (
            "{\"id\": 1, \"features\": [1, 2, \"pink\"]}",
            Malformed,
            "unknown value `pink`",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"label\": 0, \"labels\": [0]}",
            Malformed,
            "both",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"labels\": [0, 1]}",
            Malformed,
            "exactly one label",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"labels\": \"cat\"}",
            Malformed,
            "must be an array",
        ),
        (
            "{\"id\": 1, \"features\": [1, 2, 0], \"label\": true}",
            Malformed,
            "name (string) or an index",
        ),
    ];
    for (payload, kind, needle) in cases {
        let (got, reason) = json_err(&s, payload);
        assert_eq!(got, *kind, "{payload}: {reason}");
        assert!(
            reason.contains(needle),
            "{payload}: `{reason}` lacks `{needle}`"
        );
    }
    // A NaN inside a string value elsewhere is not mistaken for a bare NaN.
    let (kind, _) = json_err(&s, "{\"id\": 1, \"note\": \"NaN\", \"features\": [1, 2, 0");
    assert_eq!(kind, Unparseable);
    // Non-UTF-8 bytes.
    let dec = RecordDecoder::new(&s, RecordFormat::Json);
    assert_eq!(
        dec.decode(None, &[0xff, 0xfe, 0x00]).unwrap_err().kind,
        Unparseable
    );
}

#[test]
fn libsvm_lines_with_the_id_in_the_key() {
    let s = binary_pm1();
    let dec = RecordDecoder::new(&s, RecordFormat::Libsvm);
    let ex = dec
        .decode(Some(b"12"), b"+1 1:0.5 4:-2 # comment\n")
        .unwrap();
    assert_eq!(
        ex,
        Example {
            id: 12,
            features: Features::Sparse {
                indices: vec![0, 3],
                values: vec![0.5, -2.0],
                dim: 5
            },
            label: Some(Label::Class(1)),
        }
    );
    let ex = dec.decode(Some(b"13"), b"-1 qid:3 5:1").unwrap();
    assert_eq!(ex.label, Some(Label::Class(0)));
    let ex = dec.decode(Some(b"14"), b"1:1 2:2").unwrap();
    assert_eq!(ex.label, None);
    let ex = dec.decode(Some(b"15"), b"? 2:2").unwrap();
    assert_eq!(ex.label, None);

    let m = multilabel();
    let dec = RecordDecoder::new(&m, RecordFormat::Libsvm);
    let ex = dec.decode(Some(b"1"), b"2,0,b 1:1").unwrap();
    assert_eq!(ex.label, Some(Label::Set(vec![0, 1, 2])));
    let ex = dec.decode(Some(b"2"), b"1:1").unwrap();
    assert_eq!(ex.label, Some(Label::Set(vec![])));
    let ex = dec.decode(Some(b"3"), b"? 1:1").unwrap();
    assert_eq!(ex.label, None);
}

#[test]
fn libsvm_bad_records() {
    use DecodeErrorKind::*;
    let s = binary_pm1();
    let dec = RecordDecoder::new(&s, RecordFormat::Libsvm);
    type Case<'a> = (Option<&'a [u8]>, &'a [u8], DecodeErrorKind, &'a str);
    let cases: &[Case] = &[
        (Some(b"1"), b"", Unparseable, "empty"),
        (Some(b"1"), b"# only a comment", Unparseable, "empty"),
        (
            Some(b"1"),
            b"1 1:1\n-1 2:1",
            Unparseable,
            "more than one line",
        ),
        (Some(b"1"), &[0xff, b' ', b'1'], Unparseable, "UTF-8"),
        (None, b"1 1:1", MissingId, "record key"),
        (Some(b"abc"), b"1 1:1", MissingId, "bad id"),
        (
            Some(b"1"),
            b"1 6:1",
            WrongDimension,
            "index 6, the schema declares 5",
        ),
        (Some(b"1"), b"1 1:nan", NonFinite, "NaN"),
        (Some(b"1"), b"1 1:inf", NonFinite, "inf"),
        (Some(b"1"), b"1 1:1e999", NonFinite, "inf"),
        (Some(b"1"), b"2 1:1", UnknownLabel, "`2`"),
        (Some(b"1"), b"1,-1 1:1", Malformed, "exactly one label"),
        (Some(b"1"), b"1 0:1", Malformed, "start at 1"),
        (Some(b"1"), b"1 3:1 2:1", Malformed, "unsorted"),
        (Some(b"1"), b"1 3:x", Malformed, "bad value"),
        (Some(b"1"), b"1 3", Malformed, "index:value"),
    ];
    for (key, payload, kind, needle) in cases {
        let e = dec.decode(*key, payload).unwrap_err();
        let shown = String::from_utf8_lossy(payload);
        assert_eq!(e.kind, *kind, "{shown}: {}", e.reason);
        assert!(
            e.reason.contains(needle),
            "{shown}: `{}` lacks `{needle}`",
            e.reason
        );
    }
    let m = multilabel();
    let dec = RecordDecoder::new(&m, RecordFormat::Libsvm);
    assert_eq!(
        dec.decode(Some(b"1"), b"0,9 1:1").unwrap_err().kind,
        UnknownLabel
    );
}

#[test]
fn feedback_records() {
    let s = multilabel();
    let dec = RecordDecoder::new(&s, RecordFormat::Libsvm);
    let f = dec
        .decode_feedback(br#"{"id": 9, "labels": ["b", "a"]}"#)
        .unwrap();
    assert_eq!(
        (f.id, f.feedback.clone()),
        (9, Feedback::Label(Label::Set(vec![0, 1])))
    );
    let e = dec.decode_feedback(br#"{"id": 9}"#).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::Malformed);
    let e = dec.decode_feedback(br#"{"labels": []}"#).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::MissingId);
    // Clicks on shown labels: the clicked set, by name or index.
    let f = dec
        .decode_feedback(br#"{"id": 10, "clicks": ["b", 0, "b"]}"#)
        .unwrap();
    assert_eq!((f.id, f.feedback), (10, Feedback::Clicks(vec![0, 1])));
    let f = dec.decode_feedback(br#"{"id": 11, "clicks": []}"#).unwrap();
    assert_eq!(f.feedback, Feedback::Clicks(vec![]));
    for (bad, kind) in [
        (
            &br#"{"id": 12, "clicks": ["zz"]}"#[..],
            DecodeErrorKind::UnknownLabel,
        ),
        (br#"{"id": 12, "clicks": "a"}"#, DecodeErrorKind::Malformed),
        (
            br#"{"id": 12, "clicks": ["a"], "label": "a"}"#,
            DecodeErrorKind::Malformed,
        ),
    ] {
        assert_eq!(dec.decode_feedback(bad).unwrap_err().kind, kind);
    }
}

#[test]
fn predictions_to_json() {
    let enc = PredictionEncoder::new(&binary_pm1());
    let out = enc.encode(&PredictionOutput {
        id: 42,
        class: 1,
        labels: &[],
        scores: &[0.75],
        expert: 10,
        model_version: 1234,
        shown: &[],
        key: None,
    });
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v,
        json!({"id": 42, "prediction": "1", "class": 1, "score": 0.75, "expert": 10, "model_version": 1234})
    );

    let enc = PredictionEncoder::new(&multiclass());
    let out = enc.encode(&PredictionOutput {
        id: 7,
        class: 2,
        labels: &[],
        scores: &[0.1, 0.3, 0.3],
        expert: 3,
        model_version: 5,
        shown: &[],
        key: None,
    });
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["prediction"], "fish");
    assert_eq!(
        v["ranking"],
        json!([
            {"label": "dog", "index": 1, "score": 0.3},
            {"label": "fish", "index": 2, "score": 0.3},
            {"label": "cat", "index": 0, "score": 0.1}
        ])
    );
    assert!(v.get("labels").is_none());

    let enc = PredictionEncoder::new(&multilabel()).with_ranking_limit(2);
    let out = enc.encode(&PredictionOutput {
        id: 8,
        class: 3,
        labels: &[1, 3],
        scores: &[0.0, 2.0, f64::NAN, 3.0],
        expert: 4,
        model_version: 6,
        shown: &[],
        key: None,
    });
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["prediction"], json!(["b", "d"]));
    assert_eq!(v["labels"], json!([1, 3]));
    assert_eq!(v["class"], 3);
    // NaN sorts first under total order and is written as null.
    assert_eq!(v["ranking"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["ranking"][0],
        json!({"label": "c", "index": 2, "score": null})
    );
    assert_eq!(v["ranking"][1]["label"], "d");
}

#[test]
fn dead_letter_json_keeps_the_original_bytes() {
    let payload = [b'{', 0xff, 0x00, b'}'];
    let letter = DeadLetter {
        reason: "unparseable: not UTF-8",
        topic: "events",
        partition: 3,
        offset: 17,
        key: Some(b"42"),
        payload: &payload,
    };
    let record = DeadLetterRecord::from_letter(&letter);
    let parsed = DeadLetterRecord::parse(&record.to_json()).unwrap();
    assert_eq!(parsed, record);
    assert_eq!(parsed.payload().unwrap(), payload);
    assert_eq!(parsed.key().unwrap(), Some(b"42".to_vec()));
    assert_eq!(parsed.payload_text, None);
    assert_eq!((parsed.partition, parsed.offset), (3, 17));
    let text = DeadLetterRecord::from_letter(&DeadLetter {
        payload: b"{\"id\": 1}",
        key: None,
        ..letter
    });
    assert_eq!(text.payload_text.as_deref(), Some("{\"id\": 1}"));
    assert_eq!(text.key_base64, None);
}

/// Dense events with a numeric id take a fast path (no JSON tree); the same event with
/// its id as a string takes the general one. Both decode every case alike, successes and
/// errors (kind and reason).
#[test]
fn dense_events_decode_alike_on_the_fast_and_the_general_path() {
    let schema = multiclass();
    let dec = RecordDecoder::new(&schema, RecordFormat::Json);
    let cases = [
        r#""features": [1.5, -2, 0], "label": "dog""#,
        r#""features": [1e300, 0.1, 2], "label": 2"#,
        r#""features": [0, 0, 1]"#,
        r#""features": [0, 0, 1], "label": null"#,
        r#""features": [0, 0, 1], "labels": ["cat"]"#,
        r#""features": [0, 0, 1], "label": "cat", "extra": {"x": [1]}"#,
        r#""features": [0, 0, 1], "label": "cat", "label": "fish""#,
        r#""features": [0, 0, 3], "label": "cat""#,
        r#""features": [0, 0, 1.5], "label": "cat""#,
        r#""features": [0, 0], "label": "cat""#,
        r#""features": [0, 0, 1], "label": "horse""#,
        r#""features": [0, 0, 1], "label": 7"#,
        r#""features": [0, 0, 1], "label": "cat", "labels": ["dog"]"#,
        r#""features": [0, null, 1], "label": "cat""#,
        r#""features": [1e999, 0, 1], "label": "cat""#,
        r#""features": [0, 0, "blue"], "label": "cat""#,
    ];
    for case in cases {
        // The same length, so parse errors name the same column.
        let fast = format!(r#"{{"id":   42, {case}}}"#);
        let general = format!(r#"{{"id": "42", {case}}}"#);
        let a = dec.decode(None, fast.as_bytes());
        let b = dec.decode(None, general.as_bytes());
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{case}"),
            (Err(a), Err(b)) => {
                assert_eq!(a.kind, b.kind, "{case}");
                assert_eq!(a.reason, b.reason, "{case}");
            }
            (a, b) => panic!("{case}: {a:?} vs {b:?}"),
        }
    }
}
