//! The fuzz targets of `flowboost::fuzz` on stable: every target gets its seeds (files of
//! `../shared/data`, records, a job file, model files made here) and then mutations of
//! them (bit flips, random bytes, cut, repeated and spliced ranges, tokens that broke
//! readers before: huge indices, NaN, separators) for `FLOWBOOST_FUZZ_SECONDS` seconds
//! (default 2; `scripts/test.sh` gives 30). A panic fails the test with the input that
//! caused it written to `target/fuzz-crash-TARGET.bin`; an abort kills the test binary.
//! The long runs use libFuzzer through `fuzz/` (nightly), see docs/hardening.md.

mod common;

use common::{flowboost, shared_data, temp_dir};
use flowboost::fuzz::TARGETS;
use std::path::Path;
use std::time::{Duration, Instant};

/// A small, seeded generator (xorshift64*): the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"4294967295",
    b"1048577",
    b"-1",
    b"-3",
    b"0",
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"1e309",
    b"1e-400",
    b"2.5",
    b":",
    b"::",
    b",",
    b"\n",
    b"\r\n",
    b" ",
    b"\t",
    b"\"",
    b"'",
    b"{",
    b"}",
    b"[",
    b"]",
    b"?",
    b"%",
    b"@attribute x numeric\n",
    b"@attribute c {a,b}\n",
    b"@data\n",
    b"{0 1,5 2}\n",
    b"\"id\":",
    b"\"label\":",
    b"\"features\":",
    b"\"labels\":[",
    b"\"clicks\":[",
    b"[kafka]\n",
    b"learners = ",
    b"workers = 1000000",
    b"dim = ",
    b"\x00",
    b"\xff\xfe",
    b"FLOWBOOST MODEL\n",
];

/// One mutation of `input` (and maybe of `other`, for splices), at most `max` bytes.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], max: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let len = out.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                out.splice(i..i, t.iter().copied());
            }
            3 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(64)).min(len);
                out.drain(a..b);
            }
            4 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(256)).min(len);
                let piece = out[a..b].to_vec();
                let at = rng.below(out.len() + 1);
                for _ in 0..=rng.below(3) {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            5 => out.truncate(rng.below(len + 1)),
            6 if !other.is_empty() => {
                let a = rng.below(other.len());
                let b = (a + rng.below(512)).min(other.len());
                let at = rng.below(len + 1);
                out.splice(at..at, other[a..b].iter().copied());
            }
            _ => {
                // A digit run made long (indices and counts past every limit).
                let i = rng.below(len + 1);
                let digits = b"9".repeat(1 + rng.below(24));
                out.splice(i..i, digits);
            }
        }
    }
    out.truncate(max);
    out
}

/// The first `n` bytes of a file (the whole of a small one).
fn head(path: &Path, n: usize) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    Some(bytes[..bytes.len().min(n)].to_vec())
}

fn data_seeds(test: &str, files: &[&str]) -> Vec<Vec<u8>> {
    let Some(root) = shared_data(test) else {
        return Vec::new();
    };
    files
        .iter()
        .filter_map(|f| head(&root.join(f), 16 * 1024))
        .collect()
}

/// Model files of a few algorithms and tasks, made with the binary.
fn model_seeds() -> Vec<Vec<u8>> {
    let dir = temp_dir("fuzz-models");
    let mut out = Vec::new();
    for (generator, algo) in [
        ("binary", "adaboost-ol"),
        ("multiclass", "oza"),
        ("multilabel", "ada-olmr"),
    ] {
        let file = dir.join(format!("{algo}.fbm"));
        flowboost(&[
            "run",
            "--generator",
            generator,
            "--examples",
            "300",
            "--algo",
            algo,
            "--learners",
            "3",
            "--output",
            "/dev/null",
            "--save-model",
            file.to_str().unwrap(),
        ]);
        out.push(std::fs::read(&file).unwrap());
    }
    out
}

/// The Avro body of an event of `dim` features (its single-object header cut off).
fn avro_body(dim: usize) -> Vec<u8> {
    use flowboost::operators::data::{Example, Features, Label, Schema, Task};
    let mut schema = Schema::numeric(dim, 5, Task::Multilabel);
    schema.labels = (0..5).map(|i| format!("l{i}")).collect();
    let ex = Example {
        id: 5,
        features: Features::Dense(vec![0.5; dim]),
        label: Some(Label::Set(vec![1, 3])),
    };
    flowboost::connectors::kafka::avro::encode_event(&schema, &ex, true, Some("k"))[10..].to_vec()
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let libsvm = ["a9a/a9a", "mushrooms/mushrooms"];
    let csv = [
        "car/car.data.csv",
        "balance-scale/balance-scale.csv",
        "adult/adult.data",
    ];
    let arff = [
        "emotions/emotions-train.arff",
        "scene/scene-train.arff",
        "birds/birds-train.arff",
    ];
    let mut s: Vec<Vec<u8>> = match target {
        "libsvm" => data_seeds("fuzz libsvm", &libsvm),
        "csv" => data_seeds("fuzz csv", &csv),
        "arff" => data_seeds("fuzz arff", &arff),
        "sniffed" => [&libsvm[..], &csv[..], &arff[..]]
            .iter()
            .flat_map(|f| data_seeds("fuzz sniffed", f))
            .collect(),
        "kafka_record" => vec![
            br#"7{"id": 7, "features": {"x": 0.5, "y": -1, "c": "u"}, "label": "b"}"#.to_vec(),
            br#"{"id": 8, "features": [1, 2, 3, 4, 5, 6, 7, 8], "labels": ["l1", "l3"]}"#.to_vec(),
            br#"{"id": 9, "label": "a"}"#.to_vec(),
            br#"{"id": 9, "clicks": ["l2"], "shown": ["l2", "l4"]}"#.to_vec(),
            b"12\x00b 1:0.5 2:-3\n".to_vec(),
            b"l1,l3 1:1 8:2.5".to_vec(),
            // Avro bodies (the target frames them with the Confluent framing and schema
            // ids) and a writer's schema (the target takes the bytes as one, too).
            avro_body(3),
            avro_body(8),
            flowboost::connectors::kafka::avro::EVENT_SCHEMA.as_bytes().to_vec(),
        ],
        "job_file" => vec![
            b"[kafka]\nbrokers = \"127.0.0.1:9092\"\nsource = \"kafka:events\"\nsink = \"kafka:p\"\ngroup = \"g\"\nexit-when-idle = 5\n[schema]\ntask = \"multilabel\"\ndim = 120\nnum-labels = 101\n[model]\nalgo = \"ada-olmr\"\nlearners = 10\n".to_vec(),
            b"workers = 2\nbatch = 64\nfeature-names = [\"a\", \"b\"]\ncompress-model = true\n".to_vec(),
        ],
        "model_file" => model_seeds(),
        "serve_request" => vec![
            br#"{"id": 7, "features": {"x": 0.5, "c": "u"}, "label": "b"}"#.to_vec(),
            br#"[{"id": 8, "features": [1, 0]}, {"id": 9, "features": [NaN, 1]}]"#.to_vec(),
            b"{\"id\": 8, \"features\": [1, 0]}\n{\"id\": 8, \"label\": \"a\"}\n{\"id\": 9, \"clicks\": [\"a\"]}\n".to_vec(),
        ],
        _ => Vec::new(),
    };
    s.push(Vec::new());
    s
}

#[test]
fn every_fuzz_target_survives_its_seeds_and_their_mutations() {
    let seconds: f64 = std::env::var("FLOWBOOST_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let mut report = Vec::new();
    for t in TARGETS {
        let (name, target) = (t.name, t.run);
        let seeds = seeds(name);
        let max = seeds.iter().map(Vec::len).max().unwrap_or(0).max(64 * 1024);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        let start = Instant::now();
        let mut runs = 0u64;
        let run = |input: &[u8]| {
            let result = std::panic::catch_unwind(|| target(input));
            if result.is_err() {
                let file = Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join(format!("../fuzz-crash-{name}.bin"));
                std::fs::write(&file, input).unwrap();
                panic!(
                    "fuzz target {name} panicked on an input of {} bytes (written to {})",
                    input.len(),
                    file.display()
                );
            }
        };
        for s in &seeds {
            run(s);
            runs += 1;
        }
        while start.elapsed() < Duration::from_secs_f64(seconds) {
            let a = &seeds[rng.below(seeds.len())];
            let b = &seeds[rng.below(seeds.len())];
            let input = mutate(&mut rng, a, b, max);
            run(&input);
            runs += 1;
        }
        report.push(format!("{name}: {runs} inputs ({} seeds)", seeds.len()));
    }
    eprintln!("fuzz smoke, {seconds} s per target: {}", report.join(", "));
    assert!(report.len() == TARGETS.len());
}
