//! One model per key: the keys a job serves (`flowboost run --keys`), each the name of an
//! independent model (a campaign, a market, a tenant).

use std::collections::HashMap;

/// The most keys a job may serve (each key holds a whole model and a few operators).
pub const MAX_KEYS: usize = 1024;

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// Dead-letter reason of an event without a `"key"` in a job with one model per key.
pub const MISSING_KEY: &str = "missing_key";

/// Dead-letter reason of an event whose `"key"` is not one of the job's keys.
pub const UNKNOWN_KEY: &str = "unknown_key";

/// The keys of a job with one model per key, in the order given: model `m` is the model
/// of the `m`-th key.
///
/// ```
/// use flowboost::kafka::ModelKeys;
///
/// let keys = ModelKeys::parse("all, men,women").unwrap();
/// assert_eq!(keys.len(), 3);
/// assert_eq!(keys.model("men"), Some(1));
/// assert_eq!(keys.name(2), "women");
/// assert_eq!(keys.model("kids"), None);
/// assert!(ModelKeys::parse("a,a").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelKeys {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl ModelKeys {
    /// Parses a comma-separated list of distinct, non-empty keys (spaces around each are
    /// dropped): at most [`MAX_KEYS`] keys of at most [`MAX_KEY_BYTES`] bytes.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut names = Vec::new();
        let mut index = HashMap::new();
        for raw in list.split(',') {
            let name = raw.trim();
            if name.is_empty() {
                return Err(format!("--keys `{list}`: an empty key"));
            }
            if name.len() > MAX_KEY_BYTES {
                return Err(format!(
                    "--keys: a key of {} bytes (at most {MAX_KEY_BYTES})",
                    name.len()
                ));
            }
            if names.len() == MAX_KEYS {
                return Err(format!("--keys: more than {MAX_KEYS} keys"));
            }
            if index.insert(name.to_string(), names.len() as u32).is_some() {
                return Err(format!("--keys: `{name}` is given twice"));
            }
            names.push(name.to_string());
        }
        Ok(ModelKeys { names, index })
    }

    /// The number of keys (and of models).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no keys (never, for a parsed list).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The model of a key.
    pub fn model(&self, key: &str) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// The key of model `model` (which must be below [`len`](Self::len)).
    pub fn name(&self, model: u32) -> &str {
        &self.names[model as usize]
    }

    /// The keys, in model order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The model of an event with key `key`, or the dead-letter reason kind and the
    /// reason in words.
    pub fn route(&self, key: Option<&str>) -> Result<u32, (&'static str, String)> {
        match key {
            None => Err((
                MISSING_KEY,
                format!(
                    "no \"key\": the job keeps one model per key ({})",
                    self.shown()
                ),
            )),
            Some(k) => self.model(k).ok_or_else(|| {
                let mut shown: String = k.chars().take(64).collect();
                if shown.len() < k.len() {
                    shown.push_str("...");
                }
                (
                    UNKNOWN_KEY,
                    format!("unknown key `{shown}`: the job's keys are {}", self.shown()),
                )
            }),
        }
    }

    /// The first keys, for messages.
    fn shown(&self) -> String {
        let mut s = self
            .names
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.names.len() > 8 {
            s.push_str(&format!(", ... ({} keys)", self.names.len()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_declared_keys_and_words_the_others() {
        let keys = ModelKeys::parse("a,b").unwrap();
        assert_eq!(keys.route(Some("b")), Ok(1));
        let (kind, reason) = keys.route(None).unwrap_err();
        assert_eq!(kind, MISSING_KEY);
        assert!(reason.contains("a, b"), "{reason}");
        let (kind, reason) = keys.route(Some("c")).unwrap_err();
        assert_eq!(kind, UNKNOWN_KEY);
        assert!(reason.contains("`c`"), "{reason}");
    }

    #[test]
    fn refuses_bad_lists() {
        for bad in ["", "a,,b", "a, a", &"x".repeat(MAX_KEY_BYTES + 1)] {
            assert!(ModelKeys::parse(bad).is_err(), "{bad}");
        }
        let many: Vec<String> = (0..=MAX_KEYS).map(|i| i.to_string()).collect();
        assert!(ModelKeys::parse(&many.join(",")).is_err());
        assert_eq!(ModelKeys::parse(" a ,b").unwrap().names(), ["a", "b"]);
    }
}
