//! Kafka client properties as users already have them: a `client.properties` file (Java
//! properties syntax, librdkafka or Java-client property names), environment overrides,
//! and the translation of the Java-client-only keys that have a librdkafka equivalent.
//!
//! Pure: no broker, no environment read here (the caller passes the variables), so every
//! rule is unit-tested.
//!
//! - [`parse_properties`]: Java's `Properties.load` syntax: `key=value`, `key: value` or
//!   `key value`; `#` and `!` comment lines; blank lines; a line ending in an odd number of
//!   backslashes continues on the next (whose leading white space is skipped); escapes
//!   `\t \n \r \f \uXXXX`, and `\` before any other character stands for that character.
//! - [`env_overrides`]: `FLOWBOOST_KAFKA_SET_<KEY>`, the property's dots as `_`
//!   (`FLOWBOOST_KAFKA_SET_SASL_PASSWORD` sets `sasl.password`).
//! - [`translate`]: the properties of every layer (file, environment, command line; later
//!   ones win per key) to librdkafka settings. `bootstrap.servers` is taken apart (the
//!   brokers when no `--brokers` is given). Java-only keys: `sasl.jaas.config` (PLAIN, SCRAM,
//!   OAUTHBEARER and Kerberos login modules) becomes `sasl.username` / `sasl.password` (or
//!   the OAUTHBEARER and Kerberos equivalents); `ssl.truststore.location` of type PEM
//!   becomes `ssl.ca.location` (JKS or PKCS12: an error saying how to export a PEM CA);
//!   `ssl.keystore.*` of type PKCS12 is passed on (librdkafka reads PKCS#12 keystores), of
//!   type PEM becomes `ssl.certificate.location` and `ssl.key.location`, of type JKS is an
//!   error saying how to convert it; an empty `ssl.endpoint.identification.algorithm` becomes
//!   `none`; the serializer and deserializer classes (flowboost reads and writes bytes) are
//!   left out. Every other key is passed to librdkafka as it is, which rejects the keys it
//!   does not know when a client is created.
//!
//! A secret ([`is_secret`]) is never part of an error's text.

use std::fmt;
use std::path::{Path, PathBuf};

/// The prefix of the environment variables that set a client property.
pub const ENV_PREFIX: &str = "FLOWBOOST_KAFKA_SET_";

/// Where a property was set: a file's line, an environment variable, the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Line `line` (1-based; the first line of a continued one) of the file `path`.
    File {
        /// The properties file.
        path: PathBuf,
        /// The line.
        line: usize,
    },
    /// The environment variable of that name.
    Env(String),
    /// The command line (`--kafka-set KEY=VALUE`).
    CommandLine,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Env(name) => write!(f, "environment variable {name}"),
            Origin::CommandLine => write!(f, "--kafka-set"),
        }
    }
}

/// One property as set, before translation.
#[derive(Clone, PartialEq, Eq)]
pub struct Property {
    /// Its name.
    pub key: String,
    /// Its value (a secret: see [`is_secret`]; `Debug` does not show it).
    pub value: String,
    /// Where it was set.
    pub origin: Origin,
}

impl fmt::Debug for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Property")
            .field("key", &self.key)
            .field("value", &redacted_value(&self.key, &self.value))
            .field("origin", &self.origin)
            .finish()
    }
}

/// What is wrong with the client properties.
#[derive(Debug, thiserror::Error)]
pub enum PropertiesError {
    /// The file could not be read.
    #[error("{}: cannot read the Kafka client properties: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A property (or a line) that cannot be used; the reason never quotes a secret.
    #[error("{origin}: {reason}")]
    Invalid {
        /// Where.
        origin: Origin,
        /// Why.
        reason: String,
    },
}

fn invalid(origin: &Origin, reason: impl Into<String>) -> PropertiesError {
    PropertiesError::Invalid {
        origin: origin.clone(),
        reason: reason.into(),
    }
}

/// Whether the value of property `key` is a secret, never shown: a key that contains
/// `password` or `secret` (`sasl.password`, `ssl.key.password`, `ssl.keystore.password`,
/// `sasl.oauthbearer.client.secret`, ...), and `sasl.jaas.config`, `ssl.key.pem`,
/// `ssl.keystore.key`, `sasl.oauthbearer.config`,
/// `sasl.oauthbearer.assertion.private.key.pem`, `basic.auth.user.info`.
pub fn is_secret(key: &str) -> bool {
    let key = key.trim().to_ascii_lowercase();
    key.contains("password")
        || key.contains("secret")
        || matches!(
            key.as_str(),
            "sasl.jaas.config"
                | "ssl.key.pem"
                | "ssl.keystore.key"
                | "sasl.oauthbearer.config"
                | "sasl.oauthbearer.assertion.private.key.pem"
                | "basic.auth.user.info"
        )
}

/// What is shown for the value of `key`: the value, or `[redacted]` for a secret.
pub fn redacted_value<'a>(key: &str, value: &'a str) -> &'a str {
    if is_secret(key) { "[redacted]" } else { value }
}

/// `settings` as `Debug` shows them: each (key, value) with secrets' values redacted.
pub(crate) fn redacted_settings(settings: &[(String, String)]) -> Vec<(&str, &str)> {
    settings
        .iter()
        .map(|(k, v)| (k.as_str(), redacted_value(k, v)))
        .collect()
}

/// `text` with each of `secrets` (those of at least 3 characters: shorter ones would
/// garble the text, and are no secrets) replaced by `[redacted]`.
pub fn redact_values(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| s.chars().count() >= 3) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "[redacted]");
        }
    }
    out
}

/// Parses a Java properties text (see the [module](self)); `path` names it in errors.
/// Later keys do not replace earlier ones here: every property is returned in order.
pub fn parse_properties(text: &str, path: &Path) -> Result<Vec<Property>, PropertiesError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((index, first)) = lines.next() {
        let origin = Origin::File {
            path: path.to_path_buf(),
            line: index + 1,
        };
        let first = first.trim_start_matches([' ', '\t', '\u{c}']);
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        // The logical line: natural lines joined while one ends in an odd number of `\`.
        let mut logical = String::new();
        let mut part = first;
        loop {
            let trailing = part.len() - part.trim_end_matches('\\').len();
            if trailing % 2 == 1 {
                logical.push_str(&part[..part.len() - 1]);
                match lines.next() {
                    Some((_, next)) => part = next.trim_start_matches([' ', '\t', '\u{c}']),
                    None => break,
                }
            } else {
                logical.push_str(part);
                break;
            }
        }
        let (key, value) = split_key_value(&logical);
        let key = unescape(key, &origin, None)?;
        let value = unescape(value, &origin, Some(&key))?;
        if key.is_empty() {
            return Err(invalid(&origin, "a value without a key"));
        }
        out.push(Property { key, value, origin });
    }
    Ok(out)
}

/// Splits a logical line at the first unescaped `=`, `:` or white space (then white space
/// and at most one `=` or `:`): the key and the value, both still escaped.
fn split_key_value(line: &str) -> (&str, &str) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut key_end = bytes.len();
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'=' | b':' | b' ' | b'\t' | b'\x0c' => {
                key_end = i;
                break;
            }
            _ => i += 1,
        }
    }
    let key_end = key_end.min(bytes.len());
    let mut j = key_end;
    while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\x0c') {
        j += 1;
    }
    if j < bytes.len() && matches!(bytes[j], b'=' | b':') {
        j += 1;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\x0c') {
            j += 1;
        }
    }
    (&line[..key_end], &line[j..])
}

/// Resolves the escapes of a key or value (`key`: the value's key, to keep a secret out
/// of the error).
fn unescape(s: &str, origin: &Origin, key: Option<&str>) -> Result<String, PropertiesError> {
    let what = match key {
        None => "the key".to_string(),
        Some(k) => format!("the value of `{k}`"),
    };
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or_else(|| {
                        invalid(origin, format!("{what}: a malformed \\uXXXX escape"))
                    })?;
                // A surrogate pair: two escapes.
                let c = if (0xd800..0xdc00).contains(&unit) {
                    let rest: String = chars.by_ref().take(6).collect();
                    let low = rest
                        .strip_prefix("\\u")
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .filter(|l| (0xdc00..0xe000).contains(l));
                    low.and_then(|l| {
                        char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (l - 0xdc00))
                    })
                } else {
                    char::from_u32(unit)
                };
                out.push(c.ok_or_else(|| {
                    invalid(origin, format!("{what}: a \\u escape that is no character"))
                })?);
            }
            Some(other) => out.push(other),
            // A lone backslash at the very end (the last line of the file).
            None => {}
        }
    }
    Ok(out)
}

/// The client properties set in the environment: every variable
/// `FLOWBOOST_KAFKA_SET_<KEY>` (`<KEY>` the property's name in capitals with `_` for
/// `.`: `FLOWBOOST_KAFKA_SET_SASL_PASSWORD` is `sasl.password`), sorted by name. (A
/// librdkafka property whose name has an `_` cannot be set this way.)
pub fn env_overrides(
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<Property>, PropertiesError> {
    let mut out = Vec::new();
    for (name, value) in vars {
        let Some(suffix) = name.strip_prefix(ENV_PREFIX) else {
            continue;
        };
        let origin = Origin::Env(name.clone());
        if suffix.is_empty()
            || suffix.starts_with('_')
            || suffix.ends_with('_')
            || suffix.contains("__")
            || !suffix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(invalid(
                &origin,
                format!(
                    "expected {ENV_PREFIX}<KEY>, the property's name in capitals with `_` for `.` (e.g. {ENV_PREFIX}SASL_PASSWORD)"
                ),
            ));
        }
        let key = suffix.to_ascii_lowercase().replace('_', ".");
        out.push(Property { key, value, origin });
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(out)
}

/// The settings of one client: its brokers (from `bootstrap.servers`, if set) and its
/// librdkafka properties.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientSettings {
    /// `bootstrap.servers`, if a layer set it.
    pub bootstrap_servers: Option<String>,
    /// librdkafka properties, in the order of the keys' first setting.
    pub settings: Vec<(String, String)>,
    /// Java-client keys left out (no meaning for flowboost), with where they were set.
    pub dropped: Vec<(String, Origin)>,
}

impl fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSettings")
            .field("bootstrap_servers", &self.bootstrap_servers)
            .field("settings", &redacted_settings(&self.settings))
            .field("dropped", &self.dropped)
            .finish()
    }
}

/// The keys of the Java client that flowboost leaves out: (de)serializer classes (flowboost
/// reads and writes the records' bytes itself).
const DROPPED: &[&str] = &[
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
];

/// Translates the properties of every layer, in order (later ones win per key), to
/// librdkafka settings (see the [module](self)).
pub fn translate(
    layers: impl IntoIterator<Item = Property>,
) -> Result<ClientSettings, PropertiesError> {
    let mut props = last_settings(layers)?;
    let mut out = ClientSettings::default();
    let mut extra: Vec<(String, String)> = Vec::new();
    if let Some(p) = take(&mut props, "bootstrap.servers") {
        out.bootstrap_servers = Some(p.value.trim().to_string()).filter(|v| !v.is_empty());
    }
    if let Some(p) = take(&mut props, "sasl.jaas.config") {
        extra.extend(jaas(&p)?);
    }
    translate_truststore(&mut props, &mut extra)?;
    translate_keystore(&mut props, &mut extra)?;
    for p in props {
        if DROPPED.contains(&p.key.as_str()) {
            out.dropped.push((p.key, p.origin));
            continue;
        }
        if p.key == "ssl.endpoint.identification.algorithm" && p.value.trim().is_empty() {
            out.settings.push((p.key, "none".into()));
            continue;
        }
        out.settings.push((p.key, p.value));
    }
    for (key, value) in extra {
        match out.settings.iter_mut().find(|(k, _)| *k == key) {
            Some(kv) => kv.1 = value,
            None => out.settings.push((key, value)),
        }
    }
    Ok(out)
}

/// The last setting of each key, in the order of first appearance.
fn last_settings(
    layers: impl IntoIterator<Item = Property>,
) -> Result<Vec<Property>, PropertiesError> {
    let mut props: Vec<Property> = Vec::new();
    for p in layers {
        let key = p.key.trim().to_string();
        if key.is_empty() {
            return Err(invalid(&p.origin, "an empty property name"));
        }
        match props.iter_mut().find(|q| q.key == key) {
            Some(q) => *q = Property { key, ..p },
            None => props.push(Property { key, ..p }),
        }
    }
    Ok(props)
}

/// Removes and returns the property `key`.
fn take(props: &mut Vec<Property>, key: &str) -> Option<Property> {
    let i = props.iter().position(|p| p.key == key)?;
    Some(props.remove(i))
}

/// The Java truststore keys: a PEM file becomes `ssl.ca.location`, inline certificates
/// `ssl.ca.pem`; any other store type is an error saying how to export a PEM CA.
fn translate_truststore(
    props: &mut Vec<Property>,
    extra: &mut Vec<(String, String)>,
) -> Result<(), PropertiesError> {
    // Truststore: PEM -> ssl.ca.location; inline certificates -> ssl.ca.pem.
    let truststore_type = take(props, "ssl.truststore.type");
    let truststore_password = take(props, "ssl.truststore.password");
    if let Some(p) = take(props, "ssl.truststore.location") {
        let kind = store_type(truststore_type.as_ref(), "JKS");
        match kind.as_str() {
            "PEM" => extra.push(("ssl.ca.location".into(), p.value.clone())),
            other => {
                let file = &p.value;
                let how = if other == "PKCS12" {
                    format!("`openssl pkcs12 -in {file} -nokeys -out ca.pem`")
                } else {
                    format!(
                        "`keytool -exportcert -rfc -keystore {file} -alias ALIAS -file ca.pem` (`keytool -list -keystore {file}` shows the aliases)"
                    )
                };
                return Err(invalid(
                    &p.origin,
                    format!(
                        "ssl.truststore.location is a {other} truststore{}; librdkafka needs the CA certificate(s) as PEM: export them with {how}, then set ssl.ca.location=ca.pem (or ssl.truststore.type=PEM if the file is PEM already)",
                        if truststore_type.is_none() {
                            " (ssl.truststore.type not set: Java's default, JKS)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
    } else if let Some(t) = &truststore_password
        && take_peek(props, "ssl.truststore.certificates").is_none()
    {
        return Err(invalid(
            &t.origin,
            "ssl.truststore.password without ssl.truststore.location",
        ));
    }
    if let Some(p) = take(props, "ssl.truststore.certificates") {
        extra.push(("ssl.ca.pem".into(), p.value));
    }
    Ok(())
}

/// The Java keystore keys: PKCS12 is librdkafka's own `ssl.keystore.*`; a PEM file becomes
/// the certificate and key files; the inline chain and key their `*.pem` settings; a JKS
/// keystore is an error saying how to convert it.
fn translate_keystore(
    props: &mut Vec<Property>,
    extra: &mut Vec<(String, String)>,
) -> Result<(), PropertiesError> {
    // Keystore: PKCS12 is librdkafka's own ssl.keystore.*; PEM -> certificate + key files.
    let keystore_type = take(props, "ssl.keystore.type");
    if let Some(p) = props
        .iter()
        .find(|p| p.key == "ssl.keystore.location")
        .cloned()
    {
        let kind = store_type(keystore_type.as_ref(), "JKS");
        match kind.as_str() {
            "PKCS12" => {}
            "PEM" => {
                take(props, "ssl.keystore.location");
                extra.push(("ssl.certificate.location".into(), p.value.clone()));
                extra.push(("ssl.key.location".into(), p.value.clone()));
                if let Some(pw) = take(props, "ssl.keystore.password") {
                    extra.push(("ssl.key.password".into(), pw.value));
                }
            }
            other => {
                let file = &p.value;
                return Err(invalid(
                    &p.origin,
                    format!(
                        "ssl.keystore.location is a {other} keystore{}; librdkafka reads PKCS#12 keystores (or PEM files): convert it with `keytool -importkeystore -srckeystore {file} -destkeystore keystore.p12 -deststoretype PKCS12`, then set ssl.keystore.location=keystore.p12 and ssl.keystore.type=PKCS12",
                        if keystore_type.is_none() {
                            " (ssl.keystore.type not set: Java's default, JKS)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
    }
    if let Some(p) = take(props, "ssl.keystore.certificate.chain") {
        extra.push(("ssl.certificate.pem".into(), p.value));
    }
    if let Some(p) = take(props, "ssl.keystore.key") {
        extra.push(("ssl.key.pem".into(), p.value));
    }
    Ok(())
}

fn take_peek<'a>(props: &'a [Property], key: &str) -> Option<&'a Property> {
    props.iter().find(|p| p.key == key)
}

/// A store's type in capitals (`default` when not set).
fn store_type(p: Option<&Property>, default: &str) -> String {
    p.map_or(default.to_string(), |p| p.value.trim().to_ascii_uppercase())
}

/// `sasl.jaas.config` to librdkafka's settings: `LoginModule flag key="value" ...;`.
fn jaas(p: &Property) -> Result<Vec<(String, String)>, PropertiesError> {
    let JaasLogin { module, options } = parse_jaas(&p.value).map_err(|reason| {
        invalid(
            &p.origin,
            format!("sasl.jaas.config: {reason} (expected `LoginModuleClass required key=\"value\" ...;`)"),
        )
    })?;
    let short = module.rsplit('.').next().unwrap_or(&module);
    let get = |name: &str| {
        options
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    match short {
        "PlainLoginModule" | "ScramLoginModule" => {
            let (Some(user), Some(password)) = (get("username"), get("password")) else {
                return Err(invalid(
                    &p.origin,
                    format!(
                        "sasl.jaas.config: {short} needs username=\"...\" and password=\"...\""
                    ),
                ));
            };
            out.push(("sasl.username".into(), user));
            out.push(("sasl.password".into(), password));
        }
        "OAuthBearerLoginModule" => {
            // The client-credentials flow (Java's clientId/clientSecret/scope against
            // sasl.oauthbearer.token.endpoint.url): librdkafka's `oidc` method.
            if let Some(id) = get("clientId") {
                out.push(("sasl.oauthbearer.method".into(), "oidc".into()));
                out.push(("sasl.oauthbearer.client.id".into(), id));
                if let Some(secret) = get("clientSecret") {
                    out.push(("sasl.oauthbearer.client.secret".into(), secret));
                }
                if let Some(scope) = get("scope") {
                    out.push(("sasl.oauthbearer.scope".into(), scope));
                }
            } else if let Some(jwt) = get("unsecuredLoginStringClaim_sub") {
                out.push(("sasl.oauthbearer.config".into(), format!("principal={jwt}")));
            } else {
                return Err(invalid(
                    &p.origin,
                    "sasl.jaas.config: OAuthBearerLoginModule without clientId=\"...\" (or unsecuredLoginStringClaim_sub): set librdkafka's sasl.oauthbearer.* properties instead",
                ));
            }
        }
        "Krb5LoginModule" => {
            if let Some(keytab) = get("keyTab") {
                out.push(("sasl.kerberos.keytab".into(), keytab));
            }
            if let Some(principal) = get("principal") {
                out.push(("sasl.kerberos.principal".into(), principal));
            }
        }
        _ => {
            return Err(invalid(
                &p.origin,
                format!(
                    "sasl.jaas.config: the login module {module} has no librdkafka equivalent that flowboost knows (PlainLoginModule, ScramLoginModule, OAuthBearerLoginModule, Krb5LoginModule); set librdkafka's sasl.* properties instead"
                ),
            ));
        }
    }
    Ok(out)
}

/// The one login module of a `sasl.jaas.config`.
#[derive(Debug)]
struct JaasLogin {
    /// The login module's class.
    module: String,
    /// Its options, `key=value`, in order.
    options: Vec<(String, String)>,
}

/// Why a `sasl.jaas.config` does not parse. Never quotes a value (it may be a secret).
#[derive(Debug, PartialEq, thiserror::Error)]
enum JaasError {
    #[error("no login module")]
    NoModule,
    #[error("the login module {0} has no control flag (required)")]
    NoFlag(String),
    #[error("no `;` at the end")]
    NoEnd,
    #[error("more than one login module (flowboost takes one)")]
    SecondModule,
    #[error("an option without a name")]
    NoOptionName,
    #[error("option `{0}` has no `=`")]
    NoEquals(String),
    #[error("the value of option `{0}` has no closing quote")]
    Unterminated(String),
}

/// Parses `Module flag key=value ... ;` (values in double quotes with `\"` and `\\`, or
/// bare words). Errors never quote a value.
fn parse_jaas(text: &str) -> Result<JaasLogin, JaasError> {
    let mut rest = text.trim();
    let word = |s: &str| -> usize {
        s.find(|c: char| c.is_whitespace() || c == '=' || c == ';' || c == '"')
            .unwrap_or(s.len())
    };
    let n = word(rest);
    if n == 0 {
        return Err(JaasError::NoModule);
    }
    let module = rest[..n].to_string();
    rest = rest[n..].trim_start();
    let n = word(rest);
    let flag = &rest[..n];
    if !matches!(flag, "required" | "requisite" | "sufficient" | "optional") {
        return Err(JaasError::NoFlag(module));
    }
    rest = rest[n..].trim_start();
    let mut options = Vec::new();
    loop {
        if rest.is_empty() {
            return Err(JaasError::NoEnd);
        }
        if let Some(after) = rest.strip_prefix(';') {
            if !after.trim().is_empty() {
                return Err(JaasError::SecondModule);
            }
            break;
        }
        let n = word(rest);
        if n == 0 {
            return Err(JaasError::NoOptionName);
        }
        let name = rest[..n].to_string();
        rest = rest[n..].trim_start();
        let Some(after) = rest.strip_prefix('=') else {
            return Err(JaasError::NoEquals(name));
        };
        rest = after.trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            value.push(e);
                        }
                    }
                    '"' => {
                        end = Some(i + 1);
                        break;
                    }
                    c => value.push(c),
                }
            }
            let Some(end) = end else {
                return Err(JaasError::Unterminated(name));
            };
            rest = &quoted[end..];
            value
        } else {
            let n = word(rest);
            let value = rest[..n].to_string();
            rest = &rest[n..];
            value
        };
        rest = rest.trim_start();
        options.push((name, value));
    }
    Ok(JaasLogin { module, options })
}

/// Reads and parses a properties file ([`parse_properties`]).
pub fn read_properties(path: &Path) -> Result<Vec<Property>, PropertiesError> {
    let bytes = crate::readers::read_small_file(path).map_err(|source| PropertiesError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    // Java reads properties files as ISO 8859-1 (Properties.load(InputStream)) or UTF-8
    // (Reader); UTF-8 is what files hold today: take it, else each byte as Latin-1.
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => e.into_bytes().iter().map(|&b| b as char).collect(),
    };
    parse_properties(&text, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, String)> {
        parse_properties(text, Path::new("client.properties"))
            .unwrap()
            .into_iter()
            .map(|p| (p.key, p.value))
            .collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn settings(text: &str) -> Result<ClientSettings, PropertiesError> {
        translate(parse_properties(text, Path::new("client.properties"))?)
    }

    #[test]
    fn the_java_properties_syntax() {
        let text = "# a comment\n! another\n\n   \na=b\nc: d\ne f\n  g  =  h i  \nempty=\nalone\n\
                    multi = one, \\\n    two, \\\n\tthree\nesc\\=aped\\ key = x\\ty\\u0041\\\\\n\
                    colon\\:key:v:w\nback=slash\\\\\n";
        assert_eq!(
            parse(text),
            kv(&[
                ("a", "b"),
                ("c", "d"),
                ("e", "f"),
                ("g", "h i  "),
                ("empty", ""),
                ("alone", ""),
                ("multi", "one, two, three"),
                ("esc=aped key", "x\tyA\\"),
                ("colon:key", "v:w"),
                ("back", "slash\\"),
            ])
        );
        // CRLF line ends, a surrogate pair, `\` before an ordinary character.
        assert_eq!(
            parse("k=v\r\nsmile=\\ud83d\\ude00\r\nq=\\q\\\"\r\n"),
            kv(&[("k", "v"), ("smile", "😀"), ("q", "q\"")])
        );
        // A comment line ending in `\` does not continue.
        assert_eq!(parse("# x \\\na=b\n"), kv(&[("a", "b")]));
    }

    #[test]
    fn errors_name_the_file_and_line_and_never_a_secret() {
        let e = parse_properties("a=b\nsasl.password=p\\u12zzsecret\n", Path::new("c.props"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.props:2: "), "{e}");
        assert!(e.contains("sasl.password") && e.contains("\\uXXXX"), "{e}");
        assert!(!e.contains("secret"), "{e}");
        let e = parse_properties("\n\n=v\n", Path::new("c.props"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "c.props:3: a value without a key");
        // The line of a continued line is its first.
        let e = settings("a=b\nsasl.jaas.config=org.x.Nope \\\n  required;\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("client.properties:2: sasl.jaas.config"),
            "{e}"
        );
    }

    #[test]
    fn jaas_logins_become_librdkafka_credentials() {
        let s = settings(
            "bootstrap.servers=b1:9093,b2:9093\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"alice\" password=\"p=a;s \\\\\"q\\\\\"\";\n",
        )
        .unwrap();
        assert_eq!(s.bootstrap_servers.as_deref(), Some("b1:9093,b2:9093"));
        assert_eq!(
            s.settings,
            kv(&[
                ("security.protocol", "SASL_SSL"),
                ("sasl.mechanism", "SCRAM-SHA-512"),
                ("sasl.username", "alice"),
                ("sasl.password", "p=a;s \"q\""),
            ])
        );
        let s = settings(
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username='x' password=bare;\n",
        );
        // A single-quoted value is a bare word with quotes.
        assert_eq!(
            s.unwrap().settings,
            kv(&[("sasl.username", "'x'"), ("sasl.password", "bare")])
        );
        let s = settings(
            "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"id\" clientSecret=\"s3\" scope=\"kafka\";\n",
        )
        .unwrap();
        assert_eq!(
            s.settings,
            kv(&[
                ("sasl.oauthbearer.method", "oidc"),
                ("sasl.oauthbearer.client.id", "id"),
                ("sasl.oauthbearer.client.secret", "s3"),
                ("sasl.oauthbearer.scope", "kafka"),
            ])
        );
        for (bad, why) in [
            (
                "com.x.IamLoginModule required;",
                "has no librdkafka equivalent",
            ),
            (
                "org.x.PlainLoginModule required username=\"u\";",
                "needs username",
            ),
            ("org.x.PlainLoginModule username=\"u\";", "no control flag"),
            (
                "org.x.PlainLoginModule required password=\"topsecret",
                "no closing quote",
            ),
            (
                "org.x.PlainLoginModule required password=\"topsecret\"",
                "no `;`",
            ),
        ] {
            let e = settings(&format!("sasl.jaas.config={bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(!e.contains("topsecret"), "{e}");
        }
    }

    #[test]
    fn truststores_and_keystores() {
        let s = settings("ssl.truststore.location=/c/ca.pem\nssl.truststore.type=pem\nssl.truststore.password=x\n")
            .unwrap();
        assert_eq!(s.settings, kv(&[("ssl.ca.location", "/c/ca.pem")]));
        let e = settings("ssl.truststore.location=/c/t.jks\nssl.truststore.password=changeit\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("client.properties:1: ")
                && e.contains("JKS")
                && e.contains("ssl.ca.location")
                && e.contains("keytool -exportcert -rfc -keystore /c/t.jks"),
            "{e}"
        );
        assert!(!e.contains("changeit"), "{e}");
        let e = settings("ssl.truststore.type=PKCS12\nssl.truststore.location=/c/t.p12\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("openssl pkcs12 -in /c/t.p12 -nokeys"), "{e}");
        let s = settings(
            "ssl.keystore.location=/k.p12\nssl.keystore.type=PKCS12\nssl.keystore.password=pw\n",
        )
        .unwrap();
        assert_eq!(
            s.settings,
            kv(&[
                ("ssl.keystore.location", "/k.p12"),
                ("ssl.keystore.password", "pw")
            ])
        );
        let s = settings(
            "ssl.keystore.type=PEM\nssl.keystore.location=/k.pem\nssl.keystore.password=pw\n",
        )
        .unwrap();
        assert_eq!(
            s.settings,
            kv(&[
                ("ssl.certificate.location", "/k.pem"),
                ("ssl.key.location", "/k.pem"),
                ("ssl.key.password", "pw"),
            ])
        );
        let e = settings("ssl.keystore.location=/k.jks\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("keytool -importkeystore") && e.contains("PKCS12"),
            "{e}"
        );
    }

    #[test]
    fn java_only_keys_are_dropped_or_mapped_and_the_rest_passed_on() {
        let s = settings(
            "key.serializer=org.apache.kafka.common.serialization.StringSerializer\n\
             client.dns.lookup=use_all_dns_ips\nssl.endpoint.identification.algorithm=\nacks=all\nno.such.key=1\n",
        )
        .unwrap();
        assert_eq!(
            s.settings,
            kv(&[
                ("client.dns.lookup", "use_all_dns_ips"),
                ("ssl.endpoint.identification.algorithm", "none"),
                ("acks", "all"),
                ("no.such.key", "1"),
            ])
        );
        assert_eq!(s.dropped.len(), 1);
        assert_eq!(s.dropped[0].0, "key.serializer");
    }

    #[test]
    fn later_layers_win_and_the_environment_names_keys_by_rule() {
        let file = parse_properties(
            "sasl.username=u\nsasl.password=from-file\nbootstrap.servers=f:1\n",
            Path::new("f"),
        )
        .unwrap();
        let env = env_overrides(vec![
            ("PATH".to_string(), "/bin".to_string()),
            ("FLOWBOOST_KAFKA_PORT".to_string(), "9092".to_string()),
            (
                "FLOWBOOST_KAFKA_SET_SASL_PASSWORD".to_string(),
                "from-env".to_string(),
            ),
            (
                "FLOWBOOST_KAFKA_SET_BOOTSTRAP_SERVERS".to_string(),
                "e:1".to_string(),
            ),
        ])
        .unwrap();
        assert_eq!(env[0].key, "bootstrap.servers");
        assert_eq!(env[1].key, "sasl.password");
        let flag = Property {
            key: "sasl.username".into(),
            value: "v".into(),
            origin: Origin::CommandLine,
        };
        let s = translate(file.into_iter().chain(env).chain([flag])).unwrap();
        assert_eq!(s.bootstrap_servers.as_deref(), Some("e:1"));
        assert_eq!(
            s.settings,
            kv(&[("sasl.username", "v"), ("sasl.password", "from-env")])
        );
        let debug = format!("{s:?}");
        assert!(
            !debug.contains("from-env") && debug.contains("[redacted]"),
            "{debug}"
        );
        for bad in [
            "FLOWBOOST_KAFKA_SET_",
            "FLOWBOOST_KAFKA_SET_SASL__X",
            "FLOWBOOST_KAFKA_SET_A-B",
        ] {
            let e = env_overrides(vec![(bad.to_string(), "v".to_string())])
                .unwrap_err()
                .to_string();
            assert!(e.contains(bad) && e.contains("SASL_PASSWORD"), "{e}");
        }
    }

    #[test]
    fn secrets_are_known_by_name() {
        for k in [
            "sasl.password",
            "ssl.key.password",
            "ssl.keystore.password",
            "sasl.oauthbearer.client.secret",
            "ssl.key.pem",
            "sasl.jaas.config",
            "Some.Other.PASSWORD.thing",
            "basic.auth.user.info",
        ] {
            assert!(is_secret(k), "{k}");
        }
        for k in [
            "sasl.username",
            "ssl.ca.location",
            "bootstrap.servers",
            "ssl.key.location",
        ] {
            assert!(!is_secret(k), "{k}");
        }
        let p = Property {
            key: "sasl.password".into(),
            value: "hunter2".into(),
            origin: Origin::CommandLine,
        };
        assert!(!format!("{p:?}").contains("hunter2"));
    }

    #[test]
    fn secrets_are_cut_out_of_text() {
        let secrets = vec!["hunter2".to_string(), "ab".to_string()];
        assert_eq!(
            redact_values("user x password hunter2 at ab", &secrets),
            "user x password [redacted] at ab"
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = read_properties(Path::new("/no/such/client.properties"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/no/such/client.properties: cannot read"),
            "{e}"
        );
    }
}
