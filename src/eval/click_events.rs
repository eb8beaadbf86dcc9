//! The click simulator's log as Kafka records (`flowboost kafka produce --generator
//! clicks`), and the feature space the Kafka job reads them with (`flowboost run
//! --generator clicks`).
//!
//! - **Impression** (events topic, keyed by its id, unlabeled): `{"id": i, "features":
//!   {"user_feature_0=3": 1.0, ...}, "logged": [{"item": "item_7", "position": 1,
//!   "propensity": 0.0217}, ...]}`: the user features one-hot, as `replay-clicks` encodes
//!   them ([`ImpressionFeatures`], 32 slots per feature, given to values in order of first
//!   appearance, no affinities), and the logged slate (what the logging policy showed,
//!   with its propensities; the job does not need it, consumers of the topic may).
//! - **Clicks** (feedback topic, keyed by the impression's id): `{"id": i, "clicks":
//!   ["item_7"], "propensities": [0.0217]}`, produced after impression `i + d` for a click
//!   of delay `d` (the clicks of one impression due at the same time share one record).
//!
//! With the click window (`run --click-window`), the job learns each impression at the end
//! of its window from the click records that came in it, or as "no shown item clicked".

use super::impression_features::ImpressionFeatures;
use flowboost_connectors::generators::clicks::{
    ClickSimConfig, ClickSimulator, SimulatedImpression,
};
use flowboost_operators::data::{Features, Schema, Task};
use serde_json::{Value, json};

/// One-hot slots per user feature in the Kafka events (`replay-clicks`' default
/// `--categories`).
pub const CLICK_CATEGORIES: usize = 32;

/// The feature space of the simulator's impressions: the user features one-hot
/// (`user_feature_J=S`), the items as labels `item_0..`, multi-label.
pub fn click_schema(config: &ClickSimConfig) -> Result<Schema, String> {
    let sim = ClickSimulator::new(ClickSimConfig {
        impressions: 0,
        ..config.clone()
    })
    .map_err(|e| e.to_string())?;
    let names = sim.user_feature_names();
    let shape = ImpressionFeatures::new(names.len(), CLICK_CATEGORIES, 0);
    Ok(Schema {
        attributes: shape.attributes(&names),
        labels: (0..config.items).map(|i| format!("item_{i}")).collect(),
        task: Task::Multilabel,
    })
}

/// One click record: the impression's id, its clicked items with their propensities.
#[derive(Clone, Debug, PartialEq)]
pub struct ClickRecord {
    /// The impression.
    pub id: u64,
    /// (item, propensity) of each click, in position order.
    pub clicks: Vec<(u32, f64)>,
}

impl ClickRecord {
    /// The record's JSON.
    pub fn json(&self) -> Value {
        json!({
            "id": self.id,
            "clicks": self.clicks.iter().map(|&(a, _)| format!("item_{a}")).collect::<Vec<_>>(),
            "propensities": self.clicks.iter().map(|&(_, p)| p).collect::<Vec<_>>(),
        })
    }
}

/// Encodes the simulator's impressions as Kafka records, in order.
pub struct ClickEncoder {
    schema: Schema,
    features: ImpressionFeatures,
}

impl ClickEncoder {
    /// An encoder for the log of `config`.
    pub fn new(config: &ClickSimConfig) -> Result<Self, String> {
        let schema = click_schema(config)?;
        Ok(ClickEncoder {
            features: ImpressionFeatures::new(config.user_features, CLICK_CATEGORIES, 0),
            schema,
        })
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The event of impression `id` (unlabeled), and its clicks grouped by delay: `(d,
    /// record)` for the record due after impression `id + d`, in increasing `d`.
    pub fn encode(&mut self, id: u64, s: &SimulatedImpression) -> (Value, Vec<(u64, ClickRecord)>) {
        let features = match self.features.encode(&s.impression) {
            Features::Sparse {
                indices, values, ..
            } => {
                let mut m = serde_json::Map::new();
                for (&j, &x) in indices.iter().zip(&values) {
                    m.insert(self.schema.attributes[j as usize].name.clone(), json!(x));
                }
                Value::Object(m)
            }
            Features::Dense(v) => json!(v),
        };
        let logged: Vec<Value> = s
            .impression
            .slots
            .iter()
            .map(|slot| {
                json!({
                    "item": format!("item_{}", slot.item),
                    "position": slot.position,
                    "propensity": slot.propensity,
                })
            })
            .collect();
        let event = json!({"id": id, "features": features, "logged": logged});
        let mut slots: Vec<_> = s.impression.slots.iter().filter(|x| x.click).collect();
        slots.sort_by_key(|x| (x.delay.unwrap_or(0), x.position));
        let mut clicks: Vec<(u64, ClickRecord)> = Vec::new();
        for slot in slots {
            let d = slot.delay.unwrap_or(0);
            match clicks.last_mut() {
                Some((at, r)) if *at == d => r.clicks.push((slot.item, slot.propensity)),
                _ => clicks.push((
                    d,
                    ClickRecord {
                        id,
                        clicks: vec![(slot.item, slot.propensity)],
                    },
                )),
            }
        }
        (event, clicks)
    }
}
