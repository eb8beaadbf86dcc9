//! `flowboost serve` through real HTTP requests against the real binary: every endpoint,
//! predictions identical to `flowboost predict`, the errors (malformed JSON, a wrong
//! field, a body over the limit, declared or chunked), keyed models, learning with a
//! graceful stop that saves, and following a model file replaced 20 times under load.

mod common;

use common::{flowboost, json_lines, temp_dir};
use flowboost::model::{KeyModel, Model, SavedModel};
use flowboost::operators::boosters::{Algorithm, BoosterConfig};
use flowboost::operators::data::{Attribute, Example, Features, Label, Schema, Task};
use flowboost::operators::learners::WeakKind;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A running `flowboost serve`, stopped (SIGKILL) when dropped.
struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flowboost"))
            .arg("serve")
            .args(["--addr", "127.0.0.1:0", "--threads", "2"])
            .args(args)
            .env("FLOWBOOST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("flowboost serve starts");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let shared = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://") {
                    let rest = &line[at + "listening on http://".len()..];
                    let addr: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
                    let _ = tx.send(addr);
                }
                let mut log = shared.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("serve did not start: {}", log.lock().unwrap());
            }
        };
        Server { child, addr, log }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                return (status, self.log());
            }
            assert!(
                Instant::now() < deadline,
                "serve did not stop: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// An answer: the status, the content type and the body.
struct Answer {
    status: u16,
    content_type: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let r = r.expect("the request is answered");
    let status = r.status().as_u16();
    let content_type = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = r.into_body().read_to_string().unwrap();
    Answer {
        status,
        content_type,
        body,
    }
}

fn post(agent: &ureq::Agent, url: &str, body: &str) -> Answer {
    answer(agent.post(url).send(body))
}

fn get(agent: &ureq::Agent, url: &str) -> Answer {
    answer(agent.get(url).call())
}

/// A CSV of `n` rows of 5 numeric features and a class of 3 (`c0`, `c1`, `c2`), seeded.
fn write_csv(path: &Path, n: usize, seed: u64, only: Option<&str>) -> Vec<Vec<String>> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
    };
    let mut text = String::from("x0,x1,x2,x3,x4,class\n");
    let mut rows = Vec::new();
    while rows.len() < n {
        let x: Vec<String> = (0..5).map(|_| format!("{:.4}", next())).collect();
        let v: Vec<f64> = x.iter().map(|s| s.parse().unwrap()).collect();
        let class = if v[0] + v[1] > 0.3 {
            "c0"
        } else if v[2] > 0.0 {
            "c1"
        } else {
            "c2"
        };
        if only.is_some_and(|o| o != class) {
            continue;
        }
        text.push_str(&format!("{},{class}\n", x.join(",")));
        rows.push(x);
    }
    std::fs::write(path, text).unwrap();
    rows
}

/// A model file learned by `flowboost run` on a CSV of 600 rows.
fn trained_model(dir: &Path, algorithm: &str) -> PathBuf {
    let train = dir.join("train.csv");
    write_csv(&train, 600, 1, None);
    let model = dir.join(format!("{algorithm}.fbm"));
    let out = flowboost(&[
        "run",
        "--data",
        train.to_str().unwrap(),
        "--algo",
        algorithm,
        "--save-model",
        model.to_str().unwrap(),
        "--output",
        "/dev/null",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    model
}

/// The event of a CSV row (dense features).
fn event(id: usize, row: &[String]) -> String {
    format!("{{\"id\":{id},\"features\":[{}]}}", row.join(","))
}

/// The scores of a served prediction, by label index (`score`, or `ranking`).
fn scores(record: &Value) -> Vec<f64> {
    if let Some(s) = record.get("score") {
        return vec![s.as_f64().unwrap()];
    }
    let ranking = record["ranking"].as_array().expect("score or ranking");
    let mut out = vec![f64::NAN; ranking.len()];
    for r in ranking {
        out[r["index"].as_u64().unwrap() as usize] = r["score"].as_f64().unwrap();
    }
    out
}

#[test]
fn predictions_are_those_of_flowboost_predict() {
    let dir = temp_dir("serve-identical");
    for algorithm in ["adaboost-olm", "oza"] {
        let model = trained_model(&dir, algorithm);
        let test = dir.join("test.csv");
        let rows = write_csv(&test, 200, 7, None);
        let predicted = dir.join("predicted.jsonl");
        let out = flowboost(&[
            "predict",
            "--model",
            model.to_str().unwrap(),
            "--data",
            test.to_str().unwrap(),
            "--output",
            predicted.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected = json_lines(&predicted);
        assert_eq!(expected.len(), rows.len());

        let server = Server::start(&["--model", model.to_str().unwrap()]);
        let agent = agent();
        let url = server.url("/v1/predict");
        let mut served = Vec::new();
        // The first half one event per request, the rest as a JSON array and as NDJSON:
        // the model answers them in order, as `predict` reads them.
        for (i, row) in rows[..100].iter().enumerate() {
            let a = post(&agent, &url, &event(i, row));
            assert_eq!(a.status, 200, "{}", a.body);
            assert_eq!(a.content_type, "application/json");
            served.push(a.json());
        }
        let array: Vec<String> = (100..150).map(|i| event(i, &rows[i])).collect();
        let a = post(&agent, &url, &format!("[{}]", array.join(",")));
        assert_eq!(a.status, 200, "{}", a.body);
        served.extend(a.json().as_array().unwrap().iter().cloned());
        let lines: Vec<String> = (150..200).map(|i| event(i, &rows[i])).collect();
        let a = post(&agent, &url, &(lines.join("\n") + "\n"));
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.content_type, "application/x-ndjson");
        for line in a.body.lines() {
            served.push(serde_json::from_str(line).unwrap());
        }
        assert_eq!(served.len(), expected.len());
        for (s, e) in served.iter().zip(&expected) {
            assert_eq!(s["id"], e["id"], "{s} vs {e}");
            assert_eq!(s["class"], e["prediction"], "{algorithm}: {s} vs {e}");
            assert_eq!(s["expert"], e["expert"], "{algorithm}: {s} vs {e}");
            let want: Vec<f64> = e["scores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            let got = scores(s);
            assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{algorithm}: {s} vs {e}"
            );
            assert_eq!(s["model_version"], 600, "{s}");
            assert!(s["prediction"].as_str().unwrap().starts_with('c'), "{s}");
        }
    }
}

#[test]
fn every_endpoint_answers_and_bad_requests_are_refused_with_their_reason() {
    let dir = temp_dir("serve-endpoints");
    let model = trained_model(&dir, "adaboost-olm");
    let server = Server::start(&[
        "--model",
        model.to_str().unwrap(),
        "--max-body-bytes",
        "4096",
    ]);
    let agent = agent();
    let predict = server.url("/v1/predict");

    let a = get(&agent, &server.url("/healthz"));
    assert_eq!((a.status, a.json()["status"].clone()), (200, json!("ok")));
    let a = get(&agent, &server.url("/readyz"));
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["status"], "ready");
    assert_eq!(a.json()["model_version"], 600);

    // /v1/model is `flowboost inspect --json` (but the load time and memory measured).
    let a = get(&agent, &server.url("/v1/model"));
    assert_eq!(a.status, 200);
    let out = flowboost(&["inspect", "--json", model.to_str().unwrap()]);
    let mut inspected: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut served = a.json();
    for v in [&mut inspected, &mut served] {
        let o = v.as_object_mut().unwrap();
        o.remove("load_seconds");
        o.remove("memory_bytes");
    }
    assert_eq!(served, inspected);

    // A label is optional, and ignored; features by name or dense; ids as text.
    let a = post(
        &agent,
        &predict,
        r#"{"id":"7","features":{"x0":0.5,"x2":-1},"label":"c1"}"#,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.json()["id"], 7);

    let cases: &[(&str, u16, &str, Option<&str>)] = &[
        (r#"{"id":1,"features":[1,2"#, 400, "unparseable", None),
        ("", 400, "unparseable", None),
        ("[1,2]", 400, "unparseable", None),
        (r#"{"features":[1,2,3,4,5]}"#, 422, "missing_id", Some("id")),
        (
            r#"{"id":-3,"features":[1,2,3,4,5]}"#,
            422,
            "missing_id",
            Some("id"),
        ),
        (
            r#"{"id":1,"features":{"x9":1}}"#,
            422,
            "unknown_feature",
            Some("features.x9"),
        ),
        (
            r#"{"id":1,"features":{"x1":"abc"}}"#,
            422,
            "malformed",
            Some("features.x1"),
        ),
        (
            r#"{"id":1,"features":[1,2,3]}"#,
            422,
            "wrong_dimension",
            Some("features"),
        ),
        (
            r#"{"id":1,"features":[1,2,3,4,NaN]}"#,
            422,
            "non_finite",
            None,
        ),
        (
            r#"{"id":1,"features":[1,2,3,4,5],"label":"c9"}"#,
            422,
            "unknown_label",
            Some("label"),
        ),
        (r#"{"id":1}"#, 422, "malformed", Some("features")),
    ];
    for (body, status, reason, field) in cases {
        let a = post(&agent, &predict, body);
        assert_eq!(a.status, *status, "{body}: {}", a.body);
        assert_eq!(a.content_type, "application/json");
        let e = &a.json()["error"];
        assert_eq!(e["reason"], *reason, "{body}: {}", a.body);
        if let Some(field) = field {
            assert_eq!(e["field"], *field, "{body}: {}", a.body);
        }
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    // A batch is refused as a whole, naming its bad record.
    let a = post(
        &agent,
        &predict,
        "{\"id\":1,\"features\":[1,2,3,4,5]}\n{\"id\":2,\"features\":{\"nope\":1}}\n",
    );
    assert_eq!(a.status, 422);
    assert_eq!(a.json()["error"]["index"], 1);
    assert_eq!(a.json()["error"]["field"], "features.nope");

    // Over the limit: a declared length is refused before the body is read, a chunked
    // one as soon as it passes the limit.
    let big = format!(
        "[{}]",
        vec![r#"{"id":1,"features":[1,2,3,4,5]}"#; 200].join(",")
    );
    let a = post(&agent, &predict, &big);
    assert_eq!(a.status, 413, "{}", a.body);
    assert_eq!(a.json()["error"]["reason"], "too_large");
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut request = String::from(
        "POST /v1/predict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    for _ in 0..10 {
        request.push_str(&format!("{:x}\r\n{}\r\n", 1000, "x".repeat(1000)));
    }
    s.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("too_large"), "{reply}");

    // Unknown paths and methods; learning without --learn.
    assert_eq!(get(&agent, &server.url("/v2/nothing")).status, 404);
    assert_eq!(get(&agent, &predict).status, 405);
    let a = post(&agent, &server.url("/v1/learn"), r#"{"id":1,"label":"c0"}"#);
    assert_eq!(
        (a.status, a.json()["error"]["reason"].clone()),
        (403, json!("learning_disabled"))
    );

    // Keep-alive: two requests on one connection.
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let body = r#"{"id":5,"features":[1,2,3,4,5]}"#;
    let one = format!(
        "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut reader = BufReader::new(s.try_clone().unwrap());
    for _ in 0..2 {
        s.write_all(one.as_bytes()).unwrap();
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut len = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        assert!(String::from_utf8(body).unwrap().contains("\"id\":5"));
    }

    // The metrics count all of it.
    let a = get(&agent, &server.url("/metrics"));
    assert_eq!(a.status, 200);
    assert!(
        a.content_type.starts_with("application/openmetrics-text"),
        "{}",
        a.content_type
    );
    for want in [
        "flowboost_serve_requests_total{route=\"/v1/predict\",status=\"200\"}",
        "flowboost_serve_requests_total{route=\"/v1/predict\",status=\"413\"}",
        "flowboost_serve_request_duration_seconds_bucket{le=",
        "flowboost_serve_errors_total{reason=\"unknown_feature\"} 2",
        "flowboost_serve_errors_total{reason=\"too_large\"} 2",
        "flowboost_serve_model_version 600",
        "flowboost_serve_model_age_seconds",
        "flowboost_serve_predictions_total 3",
        "# EOF",
    ] {
        assert!(a.body.contains(want), "{want} not in\n{}", a.body);
    }
    let (status, log) = server.stop();
    assert!(status.success(), "{status}: {log}");
}

fn schema() -> Schema {
    Schema {
        attributes: vec![Attribute::numeric("x"), Attribute::numeric("y")],
        labels: vec!["no".into(), "yes".into()],
        task: Task::Binary,
    }
}

fn example(i: u64, flip: bool) -> Example {
    let x = (i % 97) as f64 / 97.0;
    let y = (i % 13) as f64 / 13.0;
    let label = Label::Class(u32::from((x > 0.5) != flip));
    Example {
        id: i,
        features: Features::Dense(vec![x, y]),
        label: Some(label),
    }
}

fn fresh_model() -> Model {
    let config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 3);
    Model::new(config, schema()).unwrap()
}

#[test]
fn a_keyed_model_answers_each_key_with_its_own_model() {
    let dir = temp_dir("serve-keyed");
    let (mut a, mut b) = (fresh_model(), fresh_model());
    for i in 0..400 {
        a.learn_one(&example(i, false)).unwrap();
        b.learn_one(&example(i, true)).unwrap();
    }
    let mut saved = a.to_saved().unwrap();
    let other = b.to_saved().unwrap();
    saved.body.keyed.push(KeyModel {
        stages: other.body.stages,
        terminal: other.body.terminal,
        position: other.body.position,
    });
    let path = dir.join("keyed.fbm");
    saved
        .with_keys(vec!["men".into(), "women".into()], Vec::new())
        .write(&path)
        .unwrap();
    let server = Server::start(&["--model", path.to_str().unwrap()]);
    let agent = agent();
    let url = server.url("/v1/predict");
    for (key, model) in [("men", &mut a), ("women", &mut b)] {
        for x in [0.1, 0.9] {
            let body = json!({"id": 3, "key": key, "features": {"x": x, "y": 0.2}}).to_string();
            let s = post(&agent, &url, &body);
            assert_eq!(s.status, 200, "{}", s.body);
            let p = model.predict_one(&Example {
                id: 3,
                features: Features::Dense(vec![x, 0.2]),
                label: None,
            });
            let s = s.json();
            assert_eq!(s["key"], key);
            assert_eq!(s["class"], p.class);
            assert_eq!(
                s["score"].as_f64().unwrap().to_bits(),
                p.scores[0].to_bits()
            );
        }
    }
    let a = post(&agent, &url, r#"{"id":1,"features":[0.1,0.2]}"#);
    assert_eq!(a.status, 422);
    assert_eq!(
        (
            a.json()["error"]["reason"].clone(),
            a.json()["error"]["field"].clone()
        ),
        (json!("missing_key"), json!("key"))
    );
    let a = post(
        &agent,
        &url,
        r#"{"id":1,"key":"kids","features":[0.1,0.2]}"#,
    );
    assert_eq!(a.json()["error"]["reason"], "unknown_key");
    let m = get(&agent, &server.url("/v1/model")).json();
    assert_eq!(m["keys"].as_array().unwrap().len(), 2);
    drop(server);

    // Learning each key's model, then saving them all in one keyed file.
    let learned = dir.join("learned.fbm");
    let server = Server::start(&[
        "--model",
        path.to_str().unwrap(),
        "--learn",
        "--save-model",
        learned.to_str().unwrap(),
    ]);
    let learn = server.url("/v1/learn");
    let a = post(
        &agent,
        &learn,
        r#"{"id":1,"key":"men","features":[0.1,0.2],"label":"yes"}"#,
    );
    assert_eq!(
        a.json(),
        json!({"id": 1, "outcome": "learned", "key": "men"})
    );
    let a = post(
        &agent,
        &server.url("/v1/predict"),
        r#"{"id":2,"key":"women","features":[0.1,0.2]}"#,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let a = post(&agent, &learn, r#"{"id":2,"key":"women","label":"no"}"#);
    assert_eq!(a.json()["outcome"], "joined");
    let a = post(&agent, &learn, r#"{"id":2,"label":"no"}"#);
    assert_eq!(a.json()["error"]["reason"], "missing_key");
    let (status, log) = server.stop();
    assert!(status.success(), "{log}");
    let saved = SavedModel::read(&learned).unwrap();
    assert_eq!(saved.keys(), ["men", "women"]);
    let chains = saved.chains("learned").unwrap();
    let learned: Vec<u64> = chains.iter().map(|c| c.position.learned).collect();
    assert_eq!(learned, [401, 401]);
}

#[test]
fn learning_serializes_on_the_model_and_a_graceful_stop_saves_it() {
    let dir = temp_dir("serve-learn");
    let start = dir.join("start.fbm");
    fresh_model().save_file(&start).unwrap();
    let saved = dir.join("learned.fbm");
    let server = Server::start(&[
        "--model",
        start.to_str().unwrap(),
        "--learn",
        "--save-model",
        saved.to_str().unwrap(),
    ]);
    let agent = agent();
    let learn = server.url("/v1/learn");
    // Labeled events, from several threads at once.
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let agent = agent.clone();
            let learn = learn.clone();
            s.spawn(move || {
                for batch in 0..5u64 {
                    let lines: Vec<String> = (0..10)
                        .map(|i| {
                            let e = example(t * 1000 + batch * 10 + i, false);
                            let Features::Dense(v) = &e.features else {
                                unreachable!()
                            };
                            let Some(Label::Class(c)) = e.label else {
                                unreachable!()
                            };
                            json!({"id": e.id, "features": v, "label": c}).to_string()
                        })
                        .collect();
                    let a = post(&agent, &learn, &lines.join("\n"));
                    assert_eq!(a.status, 200, "{}", a.body);
                    assert_eq!(a.body.lines().count(), 10);
                    assert!(a.body.contains("\"outcome\":\"learned\""), "{}", a.body);
                }
            });
        }
    });
    // Feedback by id for an event predicted earlier: joined once, then repeated; one
    // for an id never predicted waits.
    let a = post(
        &agent,
        &server.url("/v1/predict"),
        r#"{"id":9001,"features":[0.9,0.1]}"#,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let answers: Vec<String> = [
        r#"{"id":9001,"label":"yes"}"#,
        r#"{"id":9001,"label":"yes"}"#,
        r#"{"id":9002,"label":1}"#,
    ]
    .iter()
    .map(|b| {
        post(&agent, &learn, b).json()["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    })
    .collect();
    assert_eq!(answers, ["joined", "repeated", "held"]);
    let a = post(&agent, &learn, r#"{"id":1,"features":[0.5,0.5]}"#);
    assert_eq!(
        (a.status, a.json()["error"]["reason"].clone()),
        (422, json!("missing_label"))
    );
    let a = post(&agent, &learn, r#"{"id":1,"label":"perhaps"}"#);
    assert_eq!(
        (a.status, a.json()["error"]["reason"].clone()),
        (422, json!("unknown_label"))
    );
    let version = get(&agent, &server.url("/readyz")).json()["model_version"].clone();
    assert_eq!(version, 201, "200 events and one joined feedback");

    let (status, log) = server.stop();
    assert!(status.success(), "{status}: {log}");
    assert!(log.contains("model saved to"), "{log}");
    let model = Model::load_file(&saved).unwrap();
    assert_eq!(model.position().learned, 201);
}

/// Writes `model` to `path` as a job does: a whole file renamed into place.
fn replace(model: &Model, path: &Path) {
    let tmp = path.with_extension("tmp");
    let mut bytes = Vec::new();
    model.save(&mut bytes).unwrap();
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn a_followed_model_is_swapped_20_times_under_load_without_a_failed_request() {
    let dir = temp_dir("serve-follow");
    let path = dir.join("live.fbm");
    let mut model = fresh_model();
    let mut versions = Vec::new();
    for v in 0..=20u64 {
        for i in 0..25 {
            model.learn_one(&example(v * 25 + i, false)).unwrap();
        }
        versions.push(model.clone());
    }
    replace(&versions[0], &path);
    let server = Server::start(&["--follow", path.to_str().unwrap(), "--follow-every", "0.02"]);
    let url = server.url("/v1/predict");
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let load = {
        let (stop, sent, url) = (stop.clone(), sent.clone(), url.clone());
        std::thread::spawn(move || {
            let agent = agent();
            let mut seen = Vec::new();
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let a = post(
                    &agent,
                    &url,
                    &format!("{{\"id\":{i},\"features\":[0.3,0.6]}}"),
                );
                assert_eq!(a.status, 200, "request {i}: {}", a.body);
                let v = a.json()["model_version"].as_u64().unwrap();
                seen.push(v);
                i += 1;
                sent.fetch_add(1, Ordering::Relaxed);
            }
            seen
        })
    };
    let agent = agent();
    let generation = |agent: &ureq::Agent| {
        get(agent, &server.url("/readyz")).json()["model_generation"]
            .as_u64()
            .unwrap()
    };
    for (g, m) in versions.iter().enumerate().skip(1) {
        replace(m, &path);
        let deadline = Instant::now() + Duration::from_secs(30);
        while generation(&agent) < g as u64 + 1 {
            assert!(
                Instant::now() < deadline,
                "version {g} not loaded: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // A damaged file and a model of another schema are refused: the last model serves on.
    std::fs::write(dir.join("bad.tmp"), b"FLOWBOOST MODEL\n garbage").unwrap();
    std::fs::rename(dir.join("bad.tmp"), &path).unwrap();
    let other = Schema {
        attributes: vec![Attribute::numeric("z")],
        ..schema()
    };
    let config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 3);
    std::thread::sleep(Duration::from_millis(300));
    replace(&Model::new(config, other).unwrap(), &path);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let seen = load.join().expect("no request failed");
    assert!(sent.load(Ordering::Relaxed) > 20);
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "model_version went back"
    );
    assert_eq!(seen.first(), Some(&25));
    assert_eq!(seen.last(), Some(&(21 * 25)));
    let a = get(&agent, &server.url("/readyz")).json();
    assert_eq!(
        (a["model_generation"].clone(), a["model_version"].clone()),
        (json!(21), json!(525))
    );
    let metrics = get(&agent, &server.url("/metrics")).body;
    assert!(
        metrics.contains("flowboost_serve_model_reloads_total 20"),
        "{metrics}"
    );
    assert!(
        metrics.contains("flowboost_serve_model_reload_failures_total 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("flowboost_serve_model_generation 21"),
        "{metrics}"
    );
    let log = server.log();
    assert!(log.contains("refused"), "{log}");
}

#[test]
fn a_checkpoint_directory_is_followed_by_its_committed_checkpoint() {
    let dir = temp_dir("serve-checkpoints");
    let mut model = fresh_model();
    let name = |seq: u64| format!("checkpoint-{seq:020}-{:020}.fbm", seq);
    // What the Kafka job does: the checkpoint, then (once its transaction committed) the
    // `committed` marker renamed into place.
    let commit = |seq: u64| {
        let tmp = dir.join("committed.tmp");
        std::fs::write(&tmp, format!("{}\n", name(seq))).unwrap();
        std::fs::rename(&tmp, dir.join("committed")).unwrap();
    };
    for i in 0..30 {
        model.learn_one(&example(i, false)).unwrap();
    }
    replace(&model, &dir.join(name(30)));
    // Nothing committed yet: nothing to serve.
    let refused = Command::new(env!("CARGO_BIN_EXE_flowboost"))
        .args([
            "serve",
            "--follow",
            dir.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("no committed checkpoint in it yet"),
        "{stderr}"
    );
    commit(30);
    let server = Server::start(&["--follow", dir.to_str().unwrap(), "--follow-every", "0.02"]);
    let agent = agent();
    let version = |agent: &ureq::Agent| {
        get(agent, &server.url("/readyz")).json()["model_version"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(version(&agent), 30);
    for i in 30..60 {
        model.learn_one(&example(i, false)).unwrap();
    }
    // A newer checkpoint whose transaction has not committed (a crash now would resume
    // from 30 and delete it) is not served.
    replace(&model, &dir.join(name(60)));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(version(&agent), 30);
    commit(60);
    let deadline = Instant::now() + Duration::from_secs(30);
    while version(&agent) != 60 {
        assert!(Instant::now() < deadline, "{}", server.log());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A client that dribbles its request head is disconnected after `--read-timeout`; one
/// whose body does not come is answered 408; the others are served meanwhile.
#[test]
fn slow_clients_are_cut_off_after_the_read_timeout() {
    let dir = temp_dir("serve-slow");
    let model = trained_model(&dir, "adaboost-olm");
    let server = Server::start(&["--model", model.to_str().unwrap(), "--read-timeout", "0.5"]);
    let addr = server.addr.clone();
    let connect = || {
        let s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    };
    // A head that never ends.
    let mut head = connect();
    head.write_all(b"POST /v1/predict HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // A body that never comes whole.
    let mut body = connect();
    body.write_all(
        b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\": 1,",
    )
    .unwrap();
    let start = Instant::now();
    // Meanwhile a healthy client is served.
    assert_eq!(get(&agent(), &server.url("/healthz")).status, 200);
    let mut answer = String::new();
    body.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    let mut rest = Vec::new();
    // The server closes the dribbling connection (without an answer, or a 408).
    let closed = head.read_to_end(&mut rest);
    assert!(
        closed.is_ok() && (rest.is_empty() || rest.starts_with(b"HTTP/1.1 408")),
        "{closed:?} {}",
        String::from_utf8_lossy(&rest)
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let metrics = get(&agent(), &server.url("/metrics")).body;
    assert!(metrics.contains("request_timeout"), "{metrics}");
}
