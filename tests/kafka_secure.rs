//! Secured clusters through the CLI, as users run it, against the SASL_SSL listener
//! (SCRAM-SHA-512, a throwaway CA) of the broker of `scripts/kafka.sh`: a job end to end
//! with `--kafka-config FILE` and exactly-once checkpoints, a password given only in the
//! environment, a job file with a list of `kafka-set` values and a `kafka-config` beside
//! it; and the clear errors, within seconds, of a wrong password, an untrusted CA and a
//! broker that is not there. The password must appear in no output and no file.
//!
//! The tests that need the secured listener skip (saying so) when the broker's
//! environment names none (`FLOWBOOST_KAFKA_BROKERS` set without
//! `FLOWBOOST_KAFKA_SASL_BROKERS` and `FLOWBOOST_KAFKA_SASL_CONFIG`).

mod common;

use common::kafka::{Cli, metric, metrics_address, scrape};
use common::{skip_note, temp_dir};
use flowboost::connectors::kafka::testing::{SecuredListener, test_broker, unique_name};
use flowboost::connectors::kafka::{OffsetCommitter, admin};
use flowboost::kafka::client_args::client_config_with;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// The secured listener, or `None` (with a note) when the broker has none.
fn secured(test: &str) -> Option<SecuredListener> {
    let broker = test_broker().unwrap_or_else(|e| panic!("no Kafka broker for the tests: {e}"));
    if broker.secured.is_none() {
        skip_note(&format!(
            "skipping {test}: the test broker has no SASL_SSL listener (set FLOWBOOST_KAFKA_SASL_BROKERS and FLOWBOOST_KAFKA_SASL_CONFIG, or let scripts/kafka.sh start it)"
        ));
    }
    broker.secured
}

/// The value of `key` in a properties file of `key=value` lines.
fn property(file: &Path, key: &str) -> String {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")).map(str::to_string))
        .unwrap_or_else(|| panic!("no {key} in {}", file.display()))
}

/// The listener's properties file without the password line (written to `dir`).
fn without_password(listener: &SecuredListener, dir: &Path) -> PathBuf {
    let text: String = std::fs::read_to_string(&listener.config)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("sasl.password"))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = dir.join("no-password.properties");
    std::fs::write(&file, text).unwrap();
    file
}

/// The same credentials as a Java client's `client.properties`: a JAAS login and a PEM
/// truststore, continued lines and comments.
fn java_style(listener: &SecuredListener, dir: &Path) -> PathBuf {
    let c = &listener.config;
    let text = format!(
        "# As the Java client reads it\nbootstrap.servers = {}\nsecurity.protocol: SASL_SSL\n\
         sasl.mechanism=SCRAM-SHA-512\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    \
         username=\"{}\" \\\n    password=\"{}\";\n\
         ssl.truststore.type=PEM\nssl.truststore.location={}\n\
         key.serializer=org.apache.kafka.common.serialization.ByteArraySerializer\n\
         client.dns.lookup=use_all_dns_ips\n",
        listener.brokers,
        property(c, "sasl.username"),
        property(c, "sasl.password"),
        property(c, "ssl.ca.location"),
    );
    let file = dir.join("java-client.properties");
    std::fs::write(&file, text).unwrap();
    file
}

/// Asserts that `secret` is in none of the bytes of `what`.
fn assert_absent(secret: &str, what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text.contains(secret),
        "the password appears in {what}:\n{text}"
    );
}

/// Asserts it in the stdout and stderr of a run.
fn assert_absent_in(secret: &str, what: &str, out: &Output) {
    assert_absent(secret, &format!("the stdout of {what}"), &out.stdout);
    assert_absent(secret, &format!("the stderr of {what}"), &out.stderr);
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Runs `cli`, which must fail within 15 s; returns its stderr.
fn fails_quickly(cli: Cli, what: &str) -> String {
    let start = Instant::now();
    let out = cli.output();
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{what} succeeded:\n{stderr}");
    assert!(
        took < Duration::from_secs(15),
        "{what} took {took:?} to fail:\n{stderr}"
    );
    stderr
}

/// The last line of a failed run's stderr: its error.
fn error_line(stderr: &str) -> &str {
    stderr.lines().last().unwrap_or_default()
}

/// The job of these tests: a binary model on `events`, its predictions to `sink`.
fn job(config: &Path, events: &str, sink: &str, group: &str) -> Cli {
    Cli::new(&["run", "--kafka-config", &config.display().to_string()])
        .opt("--source", format!("kafka:{events}"))
        .opt("--sink", format!("kafka:{sink}"))
        .opt("--report-interval", 0)
        .opt("--group", group)
        .opt("--generator", "binary")
        .opt("--learners", 5)
        .opt("--exit-when-idle", 2)
}

#[test]
fn a_job_over_sasl_ssl_with_scram_end_to_end_exactly_once() {
    let Some(listener) = secured("a_job_over_sasl_ssl_with_scram_end_to_end_exactly_once") else {
        return;
    };
    let password = property(&listener.config, "sasl.password");
    let dir = temp_dir(&unique_name("secure-e2e"));
    let config = listener.config.display().to_string();
    let java = java_style(&listener, &dir);
    let (events, sink) = (unique_name("fb-sec-events"), unique_name("fb-sec-pred"));
    let group = unique_name("fb-sec-group");
    let mut outputs: Vec<(String, Output)> = Vec::new();
    // Topics created over SASL_SSL (the brokers from the file's bootstrap.servers).
    let out = Cli::new(&["kafka", "create-topic", "--kafka-config", &config])
        .opt("--topic", &events)
        .opt("--partitions", 2)
        .output();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    outputs.push(("kafka create-topic".into(), out));
    let produce = |n: u64, seed: u64| {
        Cli::new(&["kafka", "produce", "--kafka-config", &config])
            .opt("--topic", &events)
            .opt("--partitions", 2)
            .opt("--generator", "binary")
            .opt("--examples", n)
            .opt("--seed", seed)
            .output()
    };
    let out = produce(300, 1);
    assert_eq!(common::last_json(&out)["events"], 300);
    outputs.push(("kafka produce".into(), out));
    // The job, from the Java client's properties, with exactly-once checkpoints and its
    // metrics page.
    let checkpoints = dir.join("checkpoints");
    let model = dir.join("model.fbm");
    let run = || {
        job(&java, &events, &sink, &group)
            .opt("--checkpoint-dir", checkpoints.display())
            .opt("--checkpoint-every", 0.3)
            .opt("--save-model", model.display())
            .opt("--metrics-addr", "127.0.0.1:0")
    };
    let mut child = run().spawn();
    let addr = metrics_address(&mut child);
    let mut page = scrape(&addr);
    let start = Instant::now();
    while metric(&page, "flowboost_events_in_total") < 300
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(200));
        page = scrape(&addr);
    }
    assert_absent(&password, "the metrics page", page.as_bytes());
    assert_eq!(metric(&page, "flowboost_events_in_total"), 300, "{page}");
    let out = child.wait_with_output().unwrap();
    let summary = common::last_json(&out);
    assert_eq!(summary["events_in"], 300, "{summary}");
    assert_eq!(summary["predictions"], 300, "{summary}");
    outputs.push(("the first job".into(), out));
    // Predictions read back over SASL_SSL, read_committed: one per event.
    let read = |expect: u64| {
        let file = dir.join(format!("read-{expect}.jsonl"));
        let out = Cli::new(&["kafka", "read", "--kafka-config", &config])
            .opt("--topic", &sink)
            .opt("--expect", expect)
            .opt("--timeout", 30)
            .opt("--idle", 3)
            .opt("--output", file.display())
            .output();
        let mut ids: Vec<u64> = common::json_lines(&file)
            .iter()
            .map(|p| p["id"].as_u64().unwrap())
            .collect();
        ids.sort_unstable();
        (out, ids)
    };
    let (out, ids) = read(300);
    assert_eq!(common::last_json(&out)["records"], 300);
    assert_eq!(
        ids,
        (0..300).collect::<Vec<u64>>(),
        "one prediction per event"
    );
    outputs.push(("kafka read".into(), out));
    // The group's offsets are committed (over SASL_SSL: the library API with the file).
    let client = client_config_with(None, Some(&listener.config), &[], Vec::new()).unwrap();
    let partitions = admin::topic_partitions(&client, &events).unwrap();
    let committer = OffsetCommitter::new(&client, &group).unwrap();
    let keys: Vec<(&str, i32)> = partitions.iter().map(|&p| (events.as_str(), p)).collect();
    let committed: i64 = committer
        .committed(&keys)
        .unwrap()
        .into_iter()
        .map(|o| o.expect("an offset committed on every partition"))
        .sum();
    assert_eq!(committed, 300);
    // More events; the second run resumes from its checkpoint and writes each prediction
    // once: 400 records in all.
    let out = produce(100, 2);
    assert_eq!(common::last_json(&out)["events"], 100);
    outputs.push(("the second kafka produce".into(), out));
    let out = run().output();
    let summary = common::last_json(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(stderr.contains("resuming from the checkpoint"), "{stderr}");
    assert_eq!(summary["events_in"], 100, "only the new events: {summary}");
    assert_eq!(summary["predictions"], 100, "{summary}");
    outputs.push(("the second job".into(), out));
    let (out, ids) = read(400);
    assert_eq!(common::last_json(&out)["records"], 400, "nothing twice");
    // (The second batch's generator numbers its events from 0 again.)
    let mut expected: Vec<u64> = (0..300).chain(0..100).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "one prediction per event");
    outputs.push(("the second kafka read".into(), out));
    // The password is in no output, no checkpoint, not in the model, not in `inspect`.
    for (what, out) in &outputs {
        assert_absent_in(&password, what, out);
    }
    let written = files(&checkpoints);
    assert!(!written.is_empty());
    for f in written.iter().chain([&model]) {
        assert_absent(
            &password,
            &f.display().to_string(),
            &std::fs::read(f).unwrap(),
        );
        if f.extension().is_none_or(|e| e != "fbm") {
            // The `committed` marker (a checkpoint's name) is not a model file.
            continue;
        }
        let out = Cli::new(&["inspect", &f.display().to_string()]).output();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_absent_in(&password, "flowboost inspect", &out);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_password_from_the_environment_alone_works_and_is_never_logged() {
    let Some(listener) =
        secured("the_password_from_the_environment_alone_works_and_is_never_logged")
    else {
        return;
    };
    let password = property(&listener.config, "sasl.password");
    let dir = temp_dir(&unique_name("secure-env"));
    let config = without_password(&listener, &dir);
    let config_arg = config.display().to_string();
    let (events, sink) = (
        unique_name("fb-sec-env-events"),
        unique_name("fb-sec-env-pred"),
    );
    let with_env = |cli: Cli| {
        let mut c = cli.command();
        c.env("FLOWBOOST_KAFKA_SET_SASL_PASSWORD", &password)
            // Everything librdkafka says about security and its settings, at debug.
            .env("FLOWBOOST_LOG", "debug");
        c.output().unwrap()
    };
    // Without the variable, there is no password (librdkafka says so).
    let stderr = fails_quickly(
        Cli::new(&["kafka", "produce", "--kafka-config", &config_arg]).opt("--topic", &events),
        "a produce without the password",
    );
    assert!(
        error_line(&stderr).contains("sasl.password must be set"),
        "{stderr}"
    );
    let out = with_env(
        Cli::new(&["kafka", "produce", "--kafka-config", &config_arg])
            .opt("--topic", &events)
            .opt("--partitions", 1)
            .opt("--generator", "binary")
            .opt("--examples", 50)
            .opt("--kafka-set", "debug=security,conf"),
    );
    assert_eq!(common::last_json(&out)["events"], 50);
    assert_absent_in(&password, "kafka produce at debug", &out);
    let out = with_env(
        job(&config, &events, &sink, &unique_name("fb-sec-env-group"))
            .opt("--kafka-set", "debug=security"),
    );
    assert_eq!(common::last_json(&out)["predictions"], 50);
    assert_absent_in(&password, "the job at debug", &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("librdkafka"),
        "librdkafka's debug lines are logged: {stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_wrong_password_fails_within_seconds_naming_the_cause() {
    let Some(listener) = secured("a_wrong_password_fails_within_seconds_naming_the_cause") else {
        return;
    };
    let config = listener.config.display().to_string();
    let wrong = "not-the-password-42";
    let topic = unique_name("fb-sec-wrong");
    let expected = "SASL authentication failed for user \"flowboost\" (wrong user or password?)";
    for (what, cli) in [
        (
            "the job",
            job(
                &listener.config,
                &topic,
                &unique_name("fb-sec-wrong-pred"),
                "g",
            )
            .opt("--kafka-set", format!("sasl.password={wrong}")),
        ),
        (
            "the exactly-once job",
            job(
                &listener.config,
                &topic,
                &unique_name("fb-sec-wrong-pred"),
                "g",
            )
            .opt("--kafka-set", format!("sasl.password={wrong}"))
            .opt(
                "--checkpoint-dir",
                temp_dir(&unique_name("wrong")).display(),
            ),
        ),
        (
            "kafka produce",
            Cli::new(&["kafka", "produce", "--kafka-config", &config])
                .opt("--topic", &topic)
                .opt("--kafka-set", format!("sasl.password={wrong}")),
        ),
        (
            "kafka read",
            Cli::new(&["kafka", "read", "--kafka-config", &config])
                .opt("--topic", &topic)
                .opt("--kafka-set", format!("sasl.password={wrong}")),
        ),
    ] {
        let stderr = fails_quickly(cli, what);
        let line = error_line(&stderr);
        assert!(
            line.starts_with(&format!(
                "flowboost: error: kafka: {}: {expected}",
                listener.brokers
            )),
            "{what}: {stderr}"
        );
        assert!(
            !stderr.contains(wrong),
            "{what} shows the password: {stderr}"
        );
    }
}

#[test]
fn an_untrusted_ca_fails_within_seconds_naming_the_cause() {
    let Some(listener) = secured("an_untrusted_ca_fails_within_seconds_naming_the_cause") else {
        return;
    };
    let bundle = "/etc/ssl/certs/ca-certificates.crt";
    if !Path::new(bundle).is_file() {
        skip_note(&format!(
            "skipping an_untrusted_ca_fails_within_seconds_naming_the_cause: no {bundle}"
        ));
        return;
    }
    let config = listener.config.display().to_string();
    let topic = unique_name("fb-sec-ca");
    let expected = "TLS handshake failed: certificate verify failed (is ssl.ca.location the CA that signed the broker's certificate?)";
    for (what, cli) in [
        (
            "the job",
            job(
                &listener.config,
                &topic,
                &unique_name("fb-sec-ca-pred"),
                "g",
            )
            .opt("--kafka-set", format!("ssl.ca.location={bundle}")),
        ),
        (
            "kafka produce",
            Cli::new(&["kafka", "produce", "--kafka-config", &config])
                .opt("--topic", &topic)
                .opt("--kafka-set", format!("ssl.ca.location={bundle}")),
        ),
        (
            "kafka read",
            Cli::new(&["kafka", "read", "--kafka-config", &config])
                .opt("--topic", &topic)
                .opt("--kafka-set", format!("ssl.ca.location={bundle}")),
        ),
    ] {
        let stderr = fails_quickly(cli, what);
        let line = error_line(&stderr);
        assert!(
            line.starts_with(&format!(
                "flowboost: error: kafka: {}: {expected}",
                listener.brokers
            )),
            "{what}: {stderr}"
        );
    }
}

#[test]
fn an_unreachable_broker_fails_within_seconds_naming_the_cause() {
    // A port nobody listens on (bound, then let go).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let brokers = format!("127.0.0.1:{port}");
    let topic = unique_name("fb-sec-none");
    for (what, cli) in [
        (
            "the job",
            Cli::job(&brokers, &topic, "out")
                .opt("--generator", "binary")
                .opt("--exit-when-idle", 2),
        ),
        ("kafka produce", Cli::produce(&brokers, &topic)),
        ("kafka read", Cli::read(&brokers, &topic)),
        (
            "kafka create-topic",
            Cli::new(&[
                "kafka",
                "create-topic",
                "--brokers",
                &brokers,
                "--topic",
                &topic,
            ]),
        ),
    ] {
        let stderr = fails_quickly(cli, what);
        let line = error_line(&stderr);
        assert!(
            line.starts_with(&format!(
                "flowboost: error: kafka: {brokers}: cannot connect to any broker"
            )) && line.contains("Connection refused"),
            "{what}: {stderr}"
        );
    }
}

#[test]
fn a_job_file_with_a_kafka_set_list_and_a_kafka_config_beside_it() {
    let Some(listener) = secured("a_job_file_with_a_kafka_set_list_and_a_kafka_config_beside_it")
    else {
        return;
    };
    let dir = temp_dir(&unique_name("secure-job-file"));
    std::fs::copy(&listener.config, dir.join("client.properties")).unwrap();
    let (events, sink) = (
        unique_name("fb-sec-file-events"),
        unique_name("fb-sec-file-pred"),
    );
    let out = Cli::new(&[
        "kafka",
        "produce",
        "--kafka-config",
        &listener.config.display().to_string(),
    ])
    .opt("--topic", &events)
    .opt("--partitions", 1)
    .opt("--generator", "binary")
    .opt("--examples", 40)
    .output();
    assert_eq!(common::last_json(&out)["events"], 40);
    // Two librdkafka settings as a list: one `--kafka-set` each (joined with a comma, the
    // first would get the value `1,fetch.wait.max.ms=50`, which librdkafka refuses).
    let file = dir.join("job.toml");
    std::fs::write(
        &file,
        format!(
            "[kafka]\nkafka-config = \"client.properties\"\nsource = \"kafka:{events}\"\nsink = \"kafka:{sink}\"\n\
             group = \"{}\"\nexit-when-idle = 2\nreport-interval = 0\n\
             kafka-set = [\"queued.min.messages=1\", \"fetch.wait.max.ms=50\"]\n\
             [model]\ngenerator = \"binary\"\nlearners = 3\n",
            unique_name("fb-sec-file-group")
        ),
    )
    .unwrap();
    // From another folder: the kafka-config is found beside the job file.
    let out = Cli::new(&["run", "--config", &file.display().to_string()])
        .command()
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let summary = common::last_json(&out);
    assert_eq!(summary["predictions"], 40, "{summary}");
    let _ = std::fs::remove_dir_all(dir);
}
