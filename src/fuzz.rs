//! The bodies of the fuzz targets: every place where bytes from outside enter flowboost.
//!
//! Each target takes arbitrary bytes and must return, whatever they are: no panic, no
//! abort, memory bounded by the documented limits. The cargo-fuzz crate in `fuzz/` calls
//! them from libFuzzer (nightly, for the long runs); `tests/fuzz_smoke.rs` calls them on
//! stable, with seeds from `../shared/data` and mutations of them, for a short run in
//! every test run (`FLOWBOOST_FUZZ_SECONDS` per target, 30 in CI).
//!
//! ```
//! // A LIBSVM file with a negative index: an error, not a panic.
//! flowboost::fuzz::libsvm(b"1 -3:1\n-1 1:0.5\n");
//! ```

use crate::cli::Cli;
use crate::cli::job_file::job_file_args;
use crate::model::SavedModel;
use clap::Parser;
use flowboost_connectors::kafka::confluent::{WriterSchemas, frame};
use flowboost_connectors::kafka::{RecordDecoder, RecordFormat, avro};
use flowboost_connectors::readers::{DataSource, Format, ReadOptions};
use flowboost_operators::data::{Attribute, Schema, Task};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A fuzz target.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Its name (the file name in `fuzz/fuzz_targets/`).
    pub name: &'static str,
    /// Its body: takes any bytes, returns whatever they are.
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "libsvm",
        run: libsvm,
    },
    Target {
        name: "csv",
        run: csv,
    },
    Target {
        name: "arff",
        run: arff,
    },
    Target {
        name: "sniffed",
        run: sniffed,
    },
    Target {
        name: "kafka_record",
        run: kafka_record,
    },
    Target {
        name: "job_file",
        run: job_file,
    },
    Target {
        name: "model_file",
        run: model_file,
    },
    Target {
        name: "serve_request",
        run: serve_request,
    },
];

/// A LIBSVM file (read with `--format libsvm`).
pub fn libsvm(bytes: &[u8]) {
    data_file("libsvm", Format::Libsvm, bytes);
}

/// A CSV file (read with `--format csv`).
pub fn csv(bytes: &[u8]) {
    data_file("csv", Format::Csv, bytes);
}

/// An ARFF file (read with `--format arff`).
pub fn arff(bytes: &[u8]) {
    data_file("arff", Format::Arff, bytes);
}

/// A data file whose format is sniffed from its content.
pub fn sniffed(bytes: &[u8]) {
    data_file("data", Format::Auto, bytes);
}

/// Opens `bytes` as a data file and reads every example.
fn data_file(extension: &str, format: Format, bytes: &[u8]) {
    let path = scratch(extension);
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    let options = ReadOptions {
        format,
        ..ReadOptions::default()
    };
    if let Ok(source) = DataSource::open(std::slice::from_ref(&path), &options)
        && let Ok(examples) = source.examples(0)
    {
        for e in examples {
            if e.is_err() {
                break;
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// A Kafka record, as an event (JSON and LIBSVM, with and without a key; Avro) and as feedback,
/// against a small declared schema and a multi-label one.
pub fn kafka_record(bytes: &[u8]) {
    let (key, payload) = match bytes.iter().position(|&b| b == 0) {
        Some(i) => (Some(&bytes[..i]), &bytes[i + 1..]),
        None => (None, bytes),
    };
    let schemas = [
        Schema {
            attributes: vec![
                Attribute::numeric("x"),
                Attribute::numeric("y"),
                Attribute::nominal("c", vec!["u".into(), "v".into()]),
            ],
            labels: vec!["a".into(), "b".into(), "c".into()],
            task: Task::Multiclass,
        },
        Schema {
            attributes: (0..8)
                .map(|i| Attribute::numeric(format!("f{i}")))
                .collect(),
            labels: (0..5).map(|i| format!("l{i}")).collect(),
            task: Task::Multilabel,
        },
    ];
    for schema in &schemas {
        for format in [RecordFormat::Json, RecordFormat::Libsvm] {
            let decoder = RecordDecoder::new(schema, format);
            let _ = decoder.decode(key, payload);
            let _ = decoder.decode(None, payload);
            let _ = decoder.decode_feedback(payload);
        }
        // Avro, as the bytes are and behind a valid header (the fingerprint would stop
        // nearly every mutation otherwise).
        let decoder = RecordDecoder::new(schema, RecordFormat::Avro);
        let _ = decoder.decode(None, bytes);
        let mut framed = vec![0xC3, 0x01];
        framed.extend_from_slice(&avro::EVENT_FINGERPRINT.to_le_bytes());
        framed.extend_from_slice(bytes);
        let _ = decoder.decode(None, &framed);
        // Confluent Avro: as the bytes are; behind the framing of the reader's own schema
        // (id 1) and of a writer's schema of every Avro type (id 2); and the bytes as a
        // writer's schema (id 3) with themselves as the record.
        let schemas: HashMap<u32, String> = [
            (1, avro::EVENT_SCHEMA.to_string()),
            (2, FUZZ_WRITER_SCHEMA.to_string()),
            (3, String::from_utf8_lossy(bytes).into_owned()),
        ]
        .into_iter()
        .collect();
        let decoder = RecordDecoder::new(schema, RecordFormat::ConfluentAvro)
            .with_writer_schemas(Arc::new(WriterSchemas::new(schemas)));
        let _ = decoder.decode(None, bytes);
        for id in 1..=3 {
            let mut framed = frame(id).to_vec();
            framed.extend_from_slice(bytes);
            let _ = decoder.decode(None, &framed);
        }
    }
}

/// A writer's schema for the `kafka_record` target: the reader's fields reordered and
/// promoted, in unions, and beside fields of every other Avro type (a recursive one
/// among them) that the reader skips.
const FUZZ_WRITER_SCHEMA: &str = r#"{"type": "record", "name": "fuzz.Event", "fields": [
    {"name": "key", "type": ["string", "null"]},
    {"name": "x", "type": {"type": "record", "name": "X", "fields": [
        {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "null"}}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
        {"name": "f", "type": {"type": "fixed", "name": "F", "size": 3}},
        {"name": "b", "type": "boolean"}, {"name": "fl", "type": "float"},
        {"name": "d", "type": "double"}, {"name": "by", "type": "bytes"},
        {"name": "next", "type": ["null", "X"]}]}},
    {"name": "features", "type": {"type": "array", "items": ["int", "float", "null"]}},
    {"name": "labels", "type": ["null", {"type": "array", "items": "bytes"}]},
    {"name": "id", "type": "int"}]}"#;

/// A job file (`flowboost run --config FILE`), then its options as the command line.
pub fn job_file(bytes: &[u8]) {
    let path = scratch("toml");
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    if let Ok(args) = job_file_args(&path) {
        let argv = std::iter::once("flowboost".into())
            .chain(std::iter::once("run".into()))
            .chain(args);
        let _ = Cli::try_parse_from(argv);
    }
    let _ = std::fs::remove_file(&path);
}

/// A model file: read, checked, and its chains decoded (every key's, for a file with keys); then the same bytes with their
/// two checksums made right, so that the header's JSON and the body's postcard are
/// reached by mutations too (a damaged file stops at its checksum).
pub fn model_file(bytes: &[u8]) {
    for candidate in [Some(bytes.to_vec()), with_checksums(bytes)]
        .into_iter()
        .flatten()
    {
        if let Ok(model) = SavedModel::from_bytes(&candidate, "fuzz.fbm") {
            let _ = model.chains("fuzz.fbm");
        }
    }
}

/// The bytes with the header's and the body's CRC-32 recomputed, where the layout (magic,
/// version, header length, header, CRC, body length, body, CRC) fits.
fn with_checksums(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = bytes.to_vec();
    let mut at = crate::model::MAGIC.len() + 4;
    let header_len = u32::from_le_bytes(out.get(at..at + 4)?.try_into().ok()?) as usize;
    at += 4;
    let header_end = at.checked_add(header_len)?;
    let crc = crc32fast::hash(out.get(at..header_end)?);
    out.get_mut(header_end..header_end + 4)?
        .copy_from_slice(&crc.to_le_bytes());
    at = header_end + 4;
    let body_len = u64::from_le_bytes(out.get(at..at + 8)?.try_into().ok()?);
    at += 8;
    let body_end = at.checked_add(usize::try_from(body_len).ok()?)?;
    let crc = crc32fast::hash(out.get(at..body_end)?);
    out.get_mut(body_end..body_end + 4)?
        .copy_from_slice(&crc.to_le_bytes());
    Some(out)
}

/// A file of this thread's own in the temporary directory.
fn scratch(extension: &str) -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    std::env::temp_dir().join(format!(
        "flowboost-fuzz-{}-{thread}.{extension}",
        std::process::id()
    ))
}

/// A request body of `flowboost serve` (`POST /v1/predict`, with and without waiting
/// for feedback, and `POST /v1/learn`), answered by a small model: split into its records,
/// each decoded against the model's schema, predicted or learned, the errors worded.
pub fn serve_request(bytes: &[u8]) {
    use crate::serve::{ServedModel, split_body};
    use std::sync::OnceLock;
    static MODEL: OnceLock<Option<ServedModel>> = OnceLock::new();
    let model = MODEL.get_or_init(|| {
        use crate::model::Model;
        use flowboost_operators::boosters::{Algorithm, BoosterConfig};
        use flowboost_operators::learners::WeakKind;
        let schema = Schema {
            attributes: vec![
                Attribute::numeric("x"),
                Attribute::nominal("c", vec!["u".into(), "v".into()]),
            ],
            labels: vec!["a".into(), "b".into(), "c".into()],
            task: Task::Multiclass,
        };
        let config = BoosterConfig::new(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 2);
        let path = scratch("serve.fbm");
        Model::new(config, schema).ok()?.save_file(&path).ok()?;
        let model = ServedModel::load(&path, 1).ok();
        let _ = std::fs::remove_file(&path);
        model
    });
    let Some(model) = model else {
        return;
    };
    match split_body(bytes) {
        Ok(split) => {
            for pending in [false, true] {
                if let Err(e) = model.predict(&split.records, pending) {
                    let _ = e.to_json();
                }
            }
            if let Err(e) = model.learn(&split.records) {
                let _ = e.to_json();
            }
        }
        Err(e) => {
            let _ = e.to_json();
        }
    }
}
