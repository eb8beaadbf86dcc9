//! The real broker for tests and demos: the one `scripts/kafka.sh` starts.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The bootstrap address of a running test broker, started once per process.
///
/// `FLOWBOOST_KAFKA_BROKERS` if it is set; else the last line printed by
/// `scripts/kafka.sh start` (the script at `FLOWBOOST_KAFKA_SCRIPT`, or the repository's,
/// found from this crate's source folder), which installs and starts the broker if it is
/// not running. An error says what failed: tests must fail, not pass silently, without a
/// broker.
pub fn test_brokers() -> Result<String, String> {
    static BROKERS: OnceLock<Result<String, String>> = OnceLock::new();
    BROKERS.get_or_init(start_broker).clone()
}

fn start_broker() -> Result<String, String> {
    if let Ok(brokers) = std::env::var("FLOWBOOST_KAFKA_BROKERS")
        && !brokers.trim().is_empty()
    {
        return Ok(brokers.trim().to_string());
    }
    let script = match std::env::var_os("FLOWBOOST_KAFKA_SCRIPT") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka.sh"),
    };
    let output = Command::new("bash")
        .arg(&script)
        .arg("start")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "`{} start` failed ({}); set FLOWBOOST_KAFKA_BROKERS to use another broker.\nstdout:\n{stdout}\nstderr:\n{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    match stdout.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) if line.contains(':') => Ok(line.trim().to_string()),
        _ => Err(format!(
            "`{} start` printed no broker address:\n{stdout}",
            script.display()
        )),
    }
}

/// A topic or group name unique to this call: `PREFIX-PID-NANOS-COUNTER`.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!(
        "{prefix}-{}-{nanos}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
