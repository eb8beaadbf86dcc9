//! A `flowboost serve` process for the tests and an HTTP client (ureq), shared by the
//! serving tests that came after `tests/serve.rs`.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A running `flowboost serve`, stopped (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    pub fn start(args: &[&str]) -> Server {
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

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// SIGTERM, then the exit status.
    pub fn stop(mut self) -> (std::process::ExitStatus, String) {
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

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// An answer: the status, the content type and the body.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

pub fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
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

pub fn post(agent: &ureq::Agent, url: &str, body: &str) -> Answer {
    answer(agent.post(url).send(body))
}

pub fn get(agent: &ureq::Agent, url: &str) -> Answer {
    answer(agent.get(url).call())
}
