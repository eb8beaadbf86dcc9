//! A client of a Confluent-compatible schema registry (Confluent Schema Registry, Apicurio
//! Registry's `/apis/ccompat/v7`, Redpanda, Karapace): fetch a schema by id, register a
//! schema under a subject. Blocking HTTP or HTTPS ([`ureq`] over the system's OpenSSL),
//! with bounded timeouts, an optional CA file and HTTP basic authentication whose
//! credentials never appear in a message, a `Debug` output or an error.
//!
//! ```no_run
//! use flowboost_connectors::kafka::registry::{RegistryClient, RegistryConfig};
//!
//! let client = RegistryClient::new(&RegistryConfig::new("http://127.0.0.1:8081")).unwrap();
//! let id = client.register("events-value", r#""long""#).unwrap();
//! assert_eq!(client.schema_by_id(id).unwrap(), r#""long""#);
//! ```

use base64::Engine;
use serde::Deserialize;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;
use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};

/// The largest answer read from the registry (bytes).
const MAX_ANSWER: u64 = 4 << 20;

/// A secret (a password): its `Debug` and `Display` show `<redacted>`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The secret itself (for the one place that sends it).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where the registry is and how to reach it.
#[derive(Clone, Debug)]
pub struct RegistryConfig {
    /// The base URL, `http://` or `https://` (for Apicurio, ending in `/apis/ccompat/v7`).
    pub url: String,
    /// PEM certificates of the CAs to trust instead of the system's (HTTPS).
    pub ca_file: Option<PathBuf>,
    /// HTTP basic authentication, `user:password` (Confluent's `basic.auth.user.info`).
    pub user_info: Option<Secret>,
    /// Each request (connecting, sending, answering) takes at most this long.
    pub timeout: Duration,
}

impl RegistryConfig {
    /// A registry at `url`, without a CA file or credentials, with a 10 s timeout.
    pub fn new(url: impl Into<String>) -> Self {
        RegistryConfig {
            url: url.into(),
            ca_file: None,
            user_info: None,
            timeout: Duration::from_secs(10),
        }
    }
}

/// What went wrong talking to the registry. The messages name the registry by its URL
/// (which holds no credentials: [`RegistryClient::new`] refuses a URL with a user) and
/// never show the credentials.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The URL is not `http://HOST...` or `https://HOST...`, or names a user.
    #[error("schema registry: {0}")]
    BadUrl(String),
    /// The CA file cannot be read or holds no PEM certificate.
    #[error("schema registry: the CA file {path}: {reason}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The registry has no schema of this id.
    #[error("schema registry {url}: no schema with id {id}")]
    UnknownId {
        /// The registry.
        url: String,
        /// The schema id.
        id: u32,
    },
    /// The registry answered with an error status.
    #[error("schema registry {url}: {what}: HTTP {status}: {message}")]
    Status {
        /// The registry.
        url: String,
        /// What was asked.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The registry's message (its JSON `message`, or the start of its answer).
        message: String,
    },
    /// No answer: refused, unreachable, timed out, TLS failed.
    #[error("schema registry {url}: {what}: {reason}")]
    Transport {
        /// The registry.
        url: String,
        /// What was asked.
        what: String,
        /// Why (the HTTP client's words).
        reason: String,
    },
    /// An answer that is not what the API promises.
    #[error("schema registry {url}: {what}: unexpected answer: {reason}")]
    BadAnswer {
        /// The registry.
        url: String,
        /// What was asked.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// A blocking client of a Confluent-compatible schema registry.
#[derive(Clone)]
pub struct RegistryClient {
    url: String,
    agent: ureq::Agent,
    /// `Basic ...`, if any.
    authorization: Option<Secret>,
}

impl fmt::Debug for RegistryClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryClient")
            .field("url", &self.url)
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[derive(Deserialize)]
struct SchemaAnswer {
    schema: String,
    #[serde(default, rename = "schemaType")]
    schema_type: Option<String>,
}

#[derive(Deserialize)]
struct IdAnswer {
    id: u32,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    #[serde(default)]
    error_code: Option<i64>,
    #[serde(default)]
    message: Option<String>,
}

/// Percent-encodes a path segment (a subject name).
fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl RegistryClient {
    /// A client for the registry of `config` (checks the URL and reads the CA file; does
    /// not connect).
    pub fn new(config: &RegistryConfig) -> Result<Self, RegistryError> {
        let url = config.url.trim_end_matches('/').to_string();
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .ok_or_else(|| {
                RegistryError::BadUrl("the URL must start with http:// or https://".into())
            })?;
        let authority = rest.split('/').next().unwrap_or("");
        if authority.contains('@') {
            // Not echoed: it holds a password.
            return Err(RegistryError::BadUrl(
                "the URL names a user: give the credentials as user:password in \
                 --schema-registry-user-info or FLOWBOOST_SCHEMA_REGISTRY_USER_INFO instead"
                    .into(),
            ));
        }
        if authority.is_empty() || rest.contains(['?', '#', ' ']) {
            return Err(RegistryError::BadUrl(format!(
                "`{url}` is not a base URL (http[s]://HOST[:PORT][/PATH])"
            )));
        }
        let mut tls = TlsConfig::builder().provider(TlsProvider::NativeTls);
        tls = match &config.ca_file {
            Some(path) => {
                let ca_error = |reason: String| RegistryError::CaFile {
                    path: path.clone(),
                    reason,
                };
                let pem =
                    crate::readers::read_small_file(path).map_err(|e| ca_error(e.to_string()))?;
                let mut certs = Vec::new();
                for item in ureq::tls::parse_pem(&pem) {
                    match item {
                        Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
                        Ok(_) => {}
                        Err(e) => return Err(ca_error(e.to_string())),
                    }
                }
                if certs.is_empty() {
                    return Err(ca_error("no PEM certificate in it".into()));
                }
                let certs: Vec<Certificate<'static>> = certs;
                tls.root_certs(RootCerts::new_with_certs(&certs))
            }
            None => tls.root_certs(RootCerts::PlatformVerifier),
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            .max_redirects(0)
            .user_agent(concat!("flowboost/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls.build())
            .build()
            .into();
        let authorization = config.user_info.as_ref().map(|u| {
            Secret(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(u.expose())
            ))
        });
        Ok(RegistryClient {
            url,
            agent,
            authorization,
        })
    }

    /// The registry's base URL (no credentials in it).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The text of the schema registered with `id` (`GET /schemas/ids/{id}`); an Avro
    /// schema only.
    pub fn schema_by_id(&self, id: u32) -> Result<String, RegistryError> {
        let what = format!("fetching schema id {id}");
        let path = format!("{}/schemas/ids/{id}", self.url);
        let mut request = self.agent.get(&path).header("Accept", ACCEPT);
        if let Some(a) = &self.authorization {
            request = request.header("Authorization", a.expose());
        }
        let answer = request.call();
        let (status, body) = self.answer(answer, &what)?;
        if status == 404 {
            return Err(RegistryError::UnknownId {
                url: self.url.clone(),
                id,
            });
        }
        self.check(status, &body, &what)?;
        let a: SchemaAnswer = serde_json::from_str(&body).map_err(|e| self.bad(&what, e))?;
        match a.schema_type.as_deref() {
            None | Some("AVRO") => Ok(a.schema),
            Some(other) => Err(RegistryError::BadAnswer {
                url: self.url.clone(),
                what,
                reason: format!("a {other} schema, not an Avro one"),
            }),
        }
    }

    /// Registers an Avro schema under `subject` (`POST /subjects/{subject}/versions`), or
    /// finds it there already; returns its id.
    pub fn register(&self, subject: &str, schema: &str) -> Result<u32, RegistryError> {
        let what = format!("registering a schema under subject `{subject}`");
        let path = format!("{}/subjects/{}/versions", self.url, segment(subject));
        let body = serde_json::json!({ "schema": schema, "schemaType": "AVRO" }).to_string();
        let mut request = self
            .agent
            .post(&path)
            .header("Accept", ACCEPT)
            .header("Content-Type", "application/vnd.schemaregistry.v1+json");
        if let Some(a) = &self.authorization {
            request = request.header("Authorization", a.expose());
        }
        let answer = request.send(body.as_bytes());
        let (status, body) = self.answer(answer, &what)?;
        self.check(status, &body, &what)?;
        let a: IdAnswer = serde_json::from_str(&body).map_err(|e| self.bad(&what, e))?;
        Ok(a.id)
    }

    /// The status and body of an answer (at most [`MAX_ANSWER`] bytes).
    fn answer(
        &self,
        answer: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        what: &str,
    ) -> Result<(u16, String), RegistryError> {
        let transport = |e: ureq::Error| RegistryError::Transport {
            url: self.url.clone(),
            what: what.to_string(),
            reason: e.to_string(),
        };
        let mut response = answer.map_err(transport)?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_string()
            .map_err(transport)?;
        Ok((status, body))
    }

    /// An error status as an error, with the registry's message.
    fn check(&self, status: u16, body: &str, what: &str) -> Result<(), RegistryError> {
        if (200..300).contains(&status) {
            return Ok(());
        }
        let message = match serde_json::from_str::<ErrorAnswer>(body) {
            Ok(ErrorAnswer {
                error_code,
                message: Some(m),
            }) => match error_code {
                Some(code) => format!("{m} (error code {code})"),
                None => m,
            },
            _ => body.chars().take(200).collect(),
        };
        Err(RegistryError::Status {
            url: self.url.clone(),
            what: what.to_string(),
            status,
            message,
        })
    }

    fn bad(&self, what: &str, e: serde_json::Error) -> RegistryError {
        RegistryError::BadAnswer {
            url: self.url.clone(),
            what: what.to_string(),
            reason: e.to_string(),
        }
    }
}

const ACCEPT: &str = "application/vnd.schemaregistry.v1+json, application/json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_secrets() {
        let bad = |url: &str| RegistryClient::new(&RegistryConfig::new(url)).unwrap_err();
        assert!(matches!(bad("ftp://x"), RegistryError::BadUrl(_)));
        assert!(matches!(bad("http://"), RegistryError::BadUrl(_)));
        let e = bad("https://me:hunter2@registry:8081").to_string();
        assert!(!e.contains("hunter2"), "{e}");
        assert!(e.contains("--schema-registry-user-info"), "{e}");
        let mut config = RegistryConfig::new("http://127.0.0.1:1/apis/ccompat/v7/");
        config.user_info = Some(Secret::new("me:hunter2"));
        let client = RegistryClient::new(&config).unwrap();
        assert_eq!(client.url(), "http://127.0.0.1:1/apis/ccompat/v7");
        assert!(!format!("{client:?} {config:?}").contains("hunter2"));
        let missing = RegistryConfig {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..RegistryConfig::new("https://r")
        };
        assert!(matches!(
            RegistryClient::new(&missing).unwrap_err(),
            RegistryError::CaFile { .. }
        ));
        assert_eq!(segment("a b/c-value"), "a%20b%2Fc-value");
    }

    /// A minimal Confluent-compatible registry on a loopback port: one thread, one
    /// request per connection. It knows schema 1, registers anything as id 7 (under
    /// `t-value`), answers 500 for schema 5, never answers for schema 6, and wants
    /// `auth` as the Authorization header if given (401 otherwise). Returns its URL and
    /// the requests it saw (method and path).
    pub(crate) fn fake_registry(
        schema_1: &'static str,
        auth: Option<&'static str>,
    ) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            let mut hung = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let (mut length, mut authorization) = (0usize, None);
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    let (name, value) = h.split_once(':').unwrap_or((&h, ""));
                    let value = value.trim().to_string();
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.parse().unwrap_or(0),
                        "authorization" => authorization = Some(value),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).ok();
                let mut parts = line.split_whitespace();
                let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                log.lock().unwrap().push(format!("{method} {path}"));
                let (status, answer) = if auth.is_some() && authorization.as_deref() != auth {
                    (
                        401,
                        r#"{"error_code":401,"message":"Unauthorized"}"#.to_string(),
                    )
                } else {
                    match (method, path) {
                        ("GET", "/schemas/ids/1") => {
                            (200, serde_json::json!({ "schema": schema_1 }).to_string())
                        }
                        ("GET", "/schemas/ids/5") => (500, "oops".to_string()),
                        ("GET", "/schemas/ids/6") => {
                            hung.push(stream);
                            continue;
                        }
                        ("GET", "/schemas/ids/8") => (
                            200,
                            r#"{"schema":"syntax = \"proto3\";","schemaType":"PROTOBUF"}"#.into(),
                        ),
                        ("POST", "/subjects/t-value/versions") => {
                            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
                            assert!(v["schema"].is_string());
                            (200, r#"{"id":7}"#.to_string())
                        }
                        ("GET", _) => (
                            404,
                            r#"{"error_code":40403,"message":"Schema not found"}"#.to_string(),
                        ),
                        _ => (405, "{}".to_string()),
                    }
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (url, seen)
    }

    #[test]
    fn fetches_registers_and_reports_errors_over_http() {
        let (url, seen) = fake_registry(r#""long""#, Some("Basic bWU6aHVudGVyMg=="));
        let mut config = RegistryConfig::new(format!("{url}/"));
        config.user_info = Some(Secret::new("me:hunter2"));
        config.timeout = Duration::from_millis(500);
        let client = RegistryClient::new(&config).unwrap();
        assert_eq!(client.schema_by_id(1).unwrap(), r#""long""#);
        assert_eq!(client.register("t-value", r#""long""#).unwrap(), 7);
        let e = client.schema_by_id(2).unwrap_err();
        assert!(matches!(e, RegistryError::UnknownId { id: 2, .. }), "{e}");
        let e = client.schema_by_id(5).unwrap_err().to_string();
        assert!(e.contains("HTTP 500: oops"), "{e}");
        let e = client.schema_by_id(8).unwrap_err().to_string();
        assert!(e.contains("PROTOBUF schema"), "{e}");
        // A registry that accepts and never answers: the timeout, not a hang.
        let t = std::time::Instant::now();
        let e = client.schema_by_id(6).unwrap_err();
        assert!(matches!(e, RegistryError::Transport { .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        // Wrong credentials: the registry's refusal, without the password.
        config.user_info = Some(Secret::new("me:wrong"));
        let e = RegistryClient::new(&config)
            .unwrap()
            .schema_by_id(1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("HTTP 401") && !e.contains("wrong"), "{e}");
        assert_eq!(
            seen.lock().unwrap()[..2],
            ["GET /schemas/ids/1", "POST /subjects/t-value/versions"]
        );
        // Nobody listening.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let e = RegistryClient::new(&RegistryConfig::new(format!("http://127.0.0.1:{port}")))
            .unwrap()
            .schema_by_id(1)
            .unwrap_err();
        assert!(matches!(e, RegistryError::Transport { .. }), "{e}");
    }

    /// HTTPS with a CA file: `openssl s_server -WWW` serves a schema file under a
    /// self-signed certificate (made here with the openssl command); trusted through
    /// `ca_file`, refused without it.
    #[test]
    fn https_with_a_ca_file() {
        use std::process::{Command, Stdio};
        if Command::new("openssl").arg("version").output().is_err() {
            eprintln!("note: no openssl command: the HTTPS test did not run");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args([
                "-keyout",
                "key.pem",
                "-out",
                "cert.pem",
                "-subj",
                "/CN=localhost",
            ])
            .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
            .current_dir(dir.path())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success());
        std::fs::create_dir_all(dir.path().join("schemas/ids")).unwrap();
        std::fs::write(
            dir.path().join("schemas/ids/1"),
            r#"{"schema": "\"long\""}"#,
        )
        .unwrap();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let mut server = Command::new("openssl")
            .args(["s_server", "-WWW", "-quiet", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-cert", "cert.pem", "-key", "key.pem"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "s_server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut config = RegistryConfig::new(format!("https://127.0.0.1:{port}"));
        config.timeout = Duration::from_secs(5);
        let untrusted = RegistryClient::new(&config).unwrap().schema_by_id(1);
        config.ca_file = Some(dir.path().join("cert.pem"));
        let trusted = RegistryClient::new(&config).unwrap().schema_by_id(1);
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(trusted.unwrap(), r#""long""#);
        let e = untrusted.unwrap_err();
        assert!(matches!(e, RegistryError::Transport { .. }), "{e}");
    }

    #[test]
    fn confluent_records_decode_through_the_registry() {
        use crate::kafka::confluent::{WriterSchemas, encode_event};
        use crate::kafka::{DecodeErrorKind, RecordDecoder, RecordFormat};
        use flowboost_operators::data::{Example, Features, Label, Schema, Task};
        let (url, seen) = fake_registry(crate::kafka::avro::EVENT_SCHEMA, None);
        let client = RegistryClient::new(&RegistryConfig::new(url)).unwrap();
        let schema = Schema::numeric(2, 2, Task::Binary);
        let dec = RecordDecoder::new(&schema, RecordFormat::ConfluentAvro)
            .with_writer_schemas(std::sync::Arc::new(WriterSchemas::new(client)));
        let ex = Example {
            id: 3,
            features: Features::Dense(vec![1.0, 2.0]),
            label: Some(Label::Class(1)),
        };
        for _ in 0..3 {
            let bytes = encode_event(&schema, &ex, true, None, 1);
            assert_eq!(dec.decode(None, &bytes).unwrap(), ex);
        }
        let e = dec
            .decode(None, &encode_event(&schema, &ex, true, None, 3))
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Schema);
        assert!(e.reason.contains("no schema with id 3"), "{e}");
        // Schema 1 was fetched once.
        assert_eq!(
            *seen.lock().unwrap(),
            ["GET /schemas/ids/1", "GET /schemas/ids/3"]
        );
    }
}
