//! The schema registry's options (Confluent-framed Avro), shared by `flowboost run` and
//! `flowboost kafka produce`.

use clap::Args;
use flowboost_connectors::kafka::registry::{RegistryClient, RegistryConfig, Secret};
use std::path::PathBuf;
use std::time::Duration;

/// The environment variable that holds the registry's `user:password` when
/// `--schema-registry-user-info` is not given (out of sight of `ps`).
pub const USER_INFO_ENV: &str = "FLOWBOOST_SCHEMA_REGISTRY_USER_INFO";

/// Where the schema registry is and how to reach it.
#[derive(Clone, Debug, Default, Args)]
pub struct RegistryArgs {
    /// The schema registry (Confluent-compatible REST API; for Apicurio Registry, its
    /// /apis/ccompat/v7 URL) of --record-format confluent-avro and
    /// --prediction-format confluent-avro: an http:// or https:// URL.
    #[arg(long, value_name = "URL")]
    pub schema_registry: Option<String>,
    /// The CA certificates (PEM) to trust for an https:// registry, instead of the
    /// system's.
    #[arg(long, value_name = "FILE", requires = "schema_registry")]
    pub schema_registry_ca: Option<PathBuf>,
    /// HTTP basic authentication for the registry, USER:PASSWORD (better: the environment
    /// variable FLOWBOOST_SCHEMA_REGISTRY_USER_INFO, which `ps` does not show). Never
    /// printed.
    #[arg(long, value_name = "USER:PASSWORD", requires = "schema_registry")]
    pub schema_registry_user_info: Option<String>,
    /// Each request to the registry takes at most this long (a registry that is down
    /// costs the records of an unknown schema id this, then they are dead letters);
    /// 0.001 to 1e9.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS", value_parser = super::limits::seconds)]
    pub schema_registry_timeout: f64,
}

impl RegistryArgs {
    /// The registry's client, if a registry is given; `why` names what needs one, for
    /// the error when none is.
    pub fn client(&self, why: Option<&str>) -> Result<Option<RegistryClient>, String> {
        let Some(url) = &self.schema_registry else {
            return match why {
                Some(why) => Err(format!("{why} needs --schema-registry URL")),
                None => Ok(None),
            };
        };
        let user_info = self
            .schema_registry_user_info
            .clone()
            .or_else(|| std::env::var(USER_INFO_ENV).ok().filter(|s| !s.is_empty()));
        if let Some(u) = &user_info
            && !u.contains(':')
        {
            return Err(
                "--schema-registry-user-info: expected USER:PASSWORD (not shown here)".into(),
            );
        }
        let config = RegistryConfig {
            url: url.clone(),
            ca_file: self.schema_registry_ca.clone(),
            user_info: user_info.map(Secret::new),
            timeout: Duration::from_secs_f64(self.schema_registry_timeout.max(0.001)),
        };
        RegistryClient::new(&config)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}
