//! Helpers of the Kafka tests: the broker of `scripts/kafka.sh` and fresh topics.

use flowboost::connectors::kafka::testing::{test_brokers, unique_name};
use flowboost::connectors::kafka::{KafkaConfig, admin};

/// The test broker's address; fails the test with the reason if there is none.
pub fn brokers() -> String {
    test_brokers().unwrap_or_else(|e| panic!("no Kafka broker for the tests: {e}"))
}

/// A fresh topic named `PREFIX-...` with `partitions` partitions.
pub fn create(brokers: &str, prefix: &str, partitions: i32) -> String {
    let name = unique_name(prefix);
    admin::create_topic(&KafkaConfig::new(brokers), &name, partitions).expect("create topic");
    name
}

/// Every value of a topic, in topic order: `expect` records read with `flowboost kafka
/// read` (which fails after 60 s without them); its summary must count as many.
pub fn read_lines(brokers: &str, topic: &str, expect: u64) -> Vec<String> {
    let dir = super::temp_dir(&unique_name("read"));
    let file = dir.join("values.jsonl");
    let summary = Cli::read(brokers, topic)
        .opt("--expect", expect)
        .opt("--timeout", 60)
        .opt("--output", file.display())
        .summary();
    let lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len() as u64, summary["records"].as_u64().unwrap());
    let _ = std::fs::remove_dir_all(dir);
    lines
}

/// GETs the job's metrics page at `addr` (reading to the end: the request asks the server
/// to close the connection after its answer, as an HTTP/1.1 client must when it reads to
/// the end).
pub fn scrape(addr: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

/// The value of the series `name` (without labels) on a metrics page.
pub fn metric(page: &str, name: &str) -> u64 {
    page.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} not in:\n{page}"))
}

/// A `flowboost` command line of the Kafka tests, built an option at a time:
///
/// ```ignore
/// let summary = Cli::job(&b, &events, &sink)
///     .opt("--group", &group)
///     .opt("--exit-when-idle", 1.5)
///     .opt("--generator", "binary")
///     .summary();
/// ```
#[derive(Clone, Debug)]
pub struct Cli(Vec<String>);

impl Cli {
    /// `flowboost run` as a Kafka job: `--brokers BROKERS --source kafka:EVENTS --sink
    /// kafka:SINK`, without periodic reports (`--report-interval 0`).
    pub fn job(brokers: &str, events: &str, sink: &str) -> Cli {
        Cli::new(&["run", "--brokers", brokers])
            .opt("--source", format!("kafka:{events}"))
            .opt("--sink", format!("kafka:{sink}"))
            .opt("--report-interval", 0)
    }

    /// `flowboost kafka produce --brokers BROKERS --topic TOPIC`.
    pub fn produce(brokers: &str, topic: &str) -> Cli {
        Cli::new(&["kafka", "produce", "--brokers", brokers, "--topic", topic])
    }

    /// `flowboost kafka read --brokers BROKERS --topic TOPIC`.
    pub fn read(brokers: &str, topic: &str) -> Cli {
        Cli::new(&["kafka", "read", "--brokers", brokers, "--topic", topic])
    }

    /// `flowboost` with `args`.
    pub fn new(args: &[&str]) -> Cli {
        Cli(args.iter().map(|a| a.to_string()).collect())
    }

    /// Adds `name value`.
    pub fn opt(mut self, name: &str, value: impl std::fmt::Display) -> Cli {
        self.0.push(name.to_string());
        self.0.push(value.to_string());
        self
    }

    /// Adds `args` as they are.
    pub fn args(mut self, args: &[&str]) -> Cli {
        self.0.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// The command, its stdout and stderr piped.
    pub fn command(&self) -> std::process::Command {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_flowboost"));
        c.args(&self.0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c
    }

    /// Runs it to its end.
    pub fn output(&self) -> std::process::Output {
        self.command().output().expect("the flowboost binary runs")
    }

    /// Starts it, its stdout and stderr piped.
    pub fn spawn(&self) -> std::process::Child {
        self.command().spawn().expect("the flowboost binary starts")
    }

    /// Runs it to a successful end: the JSON summary on the last line of its stdout.
    pub fn summary(&self) -> serde_json::Value {
        super::last_json(&self.output())
    }
}

/// The address of the metrics page of a job started with `--metrics-addr` (it logs
/// `... metrics on http://ADDRESS/metrics` on its stderr, after at most a few log lines);
/// the rest of its stderr stays in `job`, to read (`wait_with_output`) or leave.
pub fn metrics_address(job: &mut std::process::Child) -> String {
    use std::io::Read;
    let mut stderr = job.stderr.take().expect("the job's stderr is piped");
    let mut seen = String::new();
    let address = loop {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while !line.ends_with(b"\n") && stderr.read(&mut byte).unwrap() == 1 {
            line.push(byte[0]);
        }
        if line.is_empty() {
            panic!("no metrics address in: {seen}");
        }
        let line = String::from_utf8(line).unwrap();
        if let Some(rest) = line.split("metrics on http://").nth(1) {
            break rest
                .split("/metrics")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
        }
        seen.push_str(&line);
    };
    job.stderr = Some(stderr);
    address
}
