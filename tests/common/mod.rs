//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The benchmark data folder (`../shared/data` beside the checkout, or `$FLOWBOOST_SHARED/data`),
/// or `None` (and a note on stderr) when it is absent: the tests that need it then skip.
pub fn shared_data(test: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("FLOWBOOST_SHARED") {
        Some(s) => PathBuf::from(s).join("data"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_note(&format!("skipping {test}: ../shared/data not found"));
        None
    }
}

/// Says that a test skips (some of) its work, where the test runner shows it: written to
/// the process's stderr directly, which the test harness does not capture (it captures
/// `eprintln!`, shown only for failing tests).
pub fn skip_note(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

/// Runs the `flowboost` binary with `args`.
pub fn flowboost(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowboost"))
        .args(args)
        .output()
        .expect("the flowboost binary runs")
}

/// The JSON object on the last line of stdout of a successful run.
pub fn last_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "flowboost failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().expect("some output");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON ({e}): {last}"))
}

/// Every line of a file of JSON lines, parsed.
pub fn json_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flowboost-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
pub mod engines;
pub mod kafka;

/// The first of `n` consecutive TCP ports on 127.0.0.1 that are free now, for the
/// processes of a test cluster (`--hostfile`, `--local-base-port`).
///
/// The ports lie below Linux's ephemeral range (32768 and up), so no client connection
/// (the broker's, the jobs') takes one between this call and the processes' bind, as
/// happened with ports picked from the process id alone. Each call in a test process
/// starts elsewhere, so tests running in parallel get different ports.
pub fn free_ports(n: u16) -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CALLS: AtomicU32 = AtomicU32::new(0);
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let start = (std::process::id() % 1_000) * 12 + call * 16;
    for attempt in 0..SPAN / 16 {
        let base = (LOW + (start + attempt * 16) % SPAN) as u16;
        let bound: Vec<_> = (0..n)
            .map_while(|i| std::net::TcpListener::bind(("127.0.0.1", base + i)).ok())
            .collect();
        if bound.len() == n as usize {
            return base;
        }
    }
    panic!(
        "no {n} consecutive free ports between {LOW} and {}",
        LOW + SPAN
    );
}

/// Runs flowboost and expects exit code 2 with every piece of `expected` on stderr.
pub fn usage_error(args: &[&str], expected: &[&str]) -> String {
    let out = flowboost(args);
    check_error(&out, args, expected)
}

/// Expects `out` (of `flowboost args`) to be exit code 2 without a panic, with every
/// piece of `expected` on stderr; returns stderr.
pub fn check_error(out: &Output, args: &[&str], expected: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "flowboost {}: {}\n{stderr}",
        args.join(" "),
        out.status
    );
    assert!(
        !stderr.contains("panicked"),
        "flowboost {}: {stderr}",
        args.join(" ")
    );
    for e in expected {
        assert!(
            stderr.contains(e),
            "flowboost {}: expected `{e}` in:\n{stderr}",
            args.join(" ")
        );
    }
    stderr
}
