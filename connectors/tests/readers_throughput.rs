//! Reader throughput on generated files (ignored by default; run in release mode):
//! `cargo test --release -p flowboost-connectors --test readers_throughput -- --ignored --nocapture`

use flowboost_connectors::readers::{DataSource, ReadOptions};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const ROWS: usize = 500_000;

/// Opens and streams `path`, printing the time of the open (scan) and of the stream.
fn time(name: &str, path: &Path, options: &ReadOptions) {
    let bytes = std::fs::metadata(path).unwrap().len() as f64;
    let start = Instant::now();
    let source = DataSource::open(&[path.to_path_buf()], options).unwrap();
    let opened = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut n = 0;
    let mut stored = 0;
    for example in source.examples(0).unwrap() {
        stored += example.unwrap().features.stored();
        n += 1;
    }
    let streamed = start.elapsed().as_secs_f64();
    assert_eq!(n, ROWS);
    println!(
        "{name:<24} {n} rows, {stored} values, {:.0} MB: open {opened:.3} s, stream {streamed:.3} s \
         ({:.2} M rows/s, {:.0} MB/s)",
        bytes / 1e6,
        n as f64 / streamed / 1e6,
        bytes / streamed / 1e6
    );
}

/// A deterministic pseudo-random sequence.
fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

#[test]
#[ignore]
fn throughput() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = 1u64;

    let csv = dir.path().join("wide.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    for _ in 0..ROWS {
        for j in 0..20 {
            write!(
                w,
                "{:.4},",
                (lcg(&mut s) % 100_000) as f64 / 977.0 + j as f64
            )
            .unwrap();
        }
        writeln!(w, "cat{},c{}", lcg(&mut s) % 30, lcg(&mut s) % 5).unwrap();
    }
    drop(w);
    time("csv 20 num + 1 cat", &csv, &ReadOptions::default());

    let svm = dir.path().join("sparse.svm");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&svm).unwrap());
    for _ in 0..ROWS {
        write!(w, "{}", if lcg(&mut s) & 1 == 0 { "-1" } else { "+1" }).unwrap();
        let mut j = 0;
        for _ in 0..30 {
            j += 1 + lcg(&mut s) % 10;
            write!(w, " {j}:{}", (lcg(&mut s) % 1000) as f64 / 1000.0).unwrap();
        }
        writeln!(w).unwrap();
    }
    drop(w);
    time("libsvm 30 nnz", &svm, &ReadOptions::default());

    let arff = dir.path().join("dense.arff");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&arff).unwrap());
    writeln!(w, "@relation r").unwrap();
    for j in 0..50 {
        writeln!(w, "@attribute x{j} numeric").unwrap();
    }
    for l in 0..5 {
        writeln!(w, "@attribute L{l} {{0,1}}").unwrap();
    }
    writeln!(w, "@data").unwrap();
    for _ in 0..ROWS {
        for _ in 0..50 {
            write!(w, "{},", (lcg(&mut s) % 100_000) as f64 / 1e5).unwrap();
        }
        writeln!(w, "0,1,0,0,1").unwrap();
    }
    drop(w);
    let options = ReadOptions {
        labels: Some(5),
        ..ReadOptions::default()
    };
    time("arff 50 num + 5 labels", &arff, &options);

    let gz = dir.path().join("wide.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    std::io::copy(&mut std::fs::File::open(&csv).unwrap(), &mut enc).unwrap();
    enc.finish().unwrap();
    time("csv.gz 20 num + 1 cat", &gz, &ReadOptions::default());
}
