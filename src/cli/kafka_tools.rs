//! `flowboost kafka produce|read`: the producer and the reader used by the demo and the
//! benchmark scripts (and handy for trying a job by hand).

use super::named_arg::named;
use crate::kafka::client_args::ClientArgs;
use crate::source::Dataset;
use clap::{Args, Subcommand};
use flowboost_connectors::generators::clicks::LoggingPolicy;
use flowboost_connectors::kafka::testing::unique_name;
use flowboost_connectors::kafka::{
    KafkaConfig, KafkaSink, PartitionedSource, RecordFormat, SourceRecord, StartFrom, admin, avro,
    confluent,
};
use flowboost_operators::data::{Example, Features, Label, Schema};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `flowboost kafka`: tools around a Kafka job.
#[derive(Debug, Args)]
pub struct KafkaToolArgs {
    /// The tool.
    #[command(subcommand)]
    pub tool: Tool,
}

/// The tools.
#[derive(Debug, Subcommand)]
pub enum Tool {
    /// Produces a built-in generator's stream as JSON events (keyed by id), optionally
    /// with malformed records, unlabeled events and their labels on a feedback topic.
    /// Prints a JSON summary.
    Produce(Box<ProduceArgs>),
    /// Reads a topic from the start until it is idle; prints a JSON summary (records,
    /// keys, `removed_before_read`: the offsets no longer on the broker, removed by
    /// retention or deletion; and with --latency-from, latency percentiles from the events'
    /// timestamps).
    Read(Box<ReadArgs>),
    /// Creates a topic with --partitions partitions (nothing if it exists).
    CreateTopic(Box<CreateArgs>),
}

/// Options of `flowboost kafka create-topic`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub client: ClientArgs,
    /// The topic.
    #[arg(long)]
    pub topic: String,
    /// Its partitions.
    #[arg(long, default_value_t = 4)]
    pub partitions: i32,
    /// A topic setting, `KEY=VALUE` (repeatable), e.g. `retention.ms=60000`: an output
    /// topic that nobody reads to its end keeps only its last minute.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub configs: Vec<String>,
}

/// Options of `flowboost kafka produce`.
#[derive(Debug, Args)]
pub struct ProduceArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub client: ClientArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub registry: super::registry_args::RegistryArgs,
    /// The events topic (created with --partitions if missing).
    #[arg(long)]
    pub topic: String,
    /// Partitions of the topics created.
    #[arg(long, default_value_t = 4)]
    pub partitions: i32,
    /// The generator: binary, multiclass, multilabel or mediamill; or clicks: the click
    /// simulator's log (as `replay-clicks --generator clicks`, same seed, same
    /// impressions), impressions on --topic, their clicks on --feedback-topic.
    #[arg(long, default_value = "multiclass")]
    pub generator: String,
    /// How many events, 0 to 10000000000.
    #[arg(long, default_value_t = 300, value_parser = super::limits::examples, allow_negative_numbers = true)]
    pub examples: u64,
    /// The generator's seed (the click simulator's too).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// --generator clicks: the number of impressions, 1 to 1000000000 [default: 100000].
    #[arg(long, value_name = "N", value_parser = super::limits::impressions, allow_negative_numbers = true)]
    pub impressions: Option<u64>,
    /// --generator clicks: the logging policy, uniform or bts (see `replay-clicks`).
    #[arg(hide_possible_values = true, long, default_value = "uniform", value_name = "POLICY", value_parser = named::<LoggingPolicy>())]
    pub logging_policy: LoggingPolicy,
    /// --generator clicks: the mean delay of a click, in impressions (geometric; 0: none);
    /// a click of impression i with delay d is produced after impression i + d.
    #[arg(long, default_value_t = 0.0, value_name = "D")]
    pub click_delay: f64,
    /// The simulated clock's start, in milliseconds since the epoch: event (impression)
    /// i, and a feedback (click) record produced right after it, get the record timestamp
    /// MS + i. --generator clicks: default the wall clock rounded down to the hour
    /// (records older than a topic's retention would be deleted), so two logs of the same
    /// seed differ by a whole number of hours: the same order under any --merge-block-ms
    /// that divides an hour. Other generators: without it, the producer's clock.
    #[arg(long, value_name = "MS", value_parser = super::limits::non_negative_i64)]
    pub timestamp_base: Option<i64>,
    /// With --timestamp-base (not --generator clicks): each record's timestamp is moved
    /// back by a pseudo-random 0..=J ms (a function of the seed and the record), so that
    /// timestamps go backwards within partitions, as with several producers (a test of
    /// the merge's clamp).
    #[arg(long, default_value_t = 0, value_name = "J", value_parser = super::limits::non_negative_i64, requires = "timestamp_base")]
    pub timestamp_jitter: i64,
    /// Every K-th event is sent without its label (0: none)...
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub unlabeled_every: u64,
    /// ...and its label goes to this topic, --feedback-delay events later.
    #[arg(long, value_name = "TOPIC")]
    pub feedback_topic: Option<String>,
    /// How many events later the feedback of an unlabeled event is sent.
    #[arg(long, default_value_t = 10, value_name = "D")]
    pub feedback_delay: u64,
    /// After every M-th event, one malformed record (cycling through: not JSON (not Avro),
    /// no id (a negative id), wrong dimension, NaN, unknown label) (0: none).
    #[arg(long, default_value_t = 0, value_name = "M")]
    pub malformed_every: u64,
    /// The events' format: json (JSON objects), avro (Avro single-object encoding of the
    /// record flowboost.Event: connectors/schemas/event.avsc) or confluent-avro (the same
    /// record registered in --schema-registry under the subject TOPIC-value, framed with
    /// its id as a schema registry's serializers do); feedback records are JSON. (libsvm
    /// is read by `run`, not written here.)
    #[arg(
        hide_possible_values = true,
        long,
        default_value = "json",
        value_name = "FORMAT",
        value_parser = named::<RecordFormat>()
    )]
    pub record_format: RecordFormat,
    /// Events per second (0: as fast as possible; else at least 1e-9), paced from the
    /// delivery of the first record (a new client takes up to a second to connect).
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND", value_parser = super::limits::rate, allow_negative_numbers = true)]
    pub rate: f64,
    /// Each event (impression) gets a "key" from this comma-separated list, a
    /// pseudo-random function of the seed and its position: the models of a job run with
    /// `run --keys` (campaigns, markets, tenants).
    #[arg(long, value_name = "K1,K2,...")]
    pub keys: Option<String>,
    /// With --keys: only the events of this key (and their feedback) are sent, each with
    /// the timestamp it has in the whole stream: the stream of that key alone.
    #[arg(long, value_name = "KEY", requires = "keys")]
    pub only_key: Option<String>,
    /// Closed-loop production: wait while the consumer group GROUP (a job's `--group`)
    /// has more than --max-backlog records of --topic produced but not committed, so the
    /// job sets the pace and the backlog stays bounded on a long load test.
    #[arg(long, value_name = "GROUP")]
    pub follow_group: Option<String>,
    /// With --follow-group: the most records of --topic ahead of the group's committed
    /// offsets (checked every 0.1 s and every quarter of it sent, so the producer may pass
    /// it by a quarter).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 200_000,
        requires = "follow_group"
    )]
    pub max_backlog: u64,
    /// With --follow-group: delete the records the group has committed, on --topic and
    /// --feedback-topic (Kafka's DeleteRecords, as a retention would), so the broker's log
    /// stays small on a long load test. The records are gone for every other reader of the
    /// topics.
    #[arg(long, requires = "follow_group")]
    pub delete_committed: bool,
}

impl ProduceArgs {
    /// The group this producer follows, if any (see [`FollowGroup`](crate::kafka::FollowGroup)).
    fn follow(
        &self,
        config: &KafkaConfig,
        feedback: Option<&str>,
    ) -> Result<Option<crate::kafka::backlog::FollowGroup>, String> {
        self.follow_group
            .as_ref()
            .map(|g| {
                crate::kafka::backlog::FollowGroup::new(
                    config,
                    g,
                    &self.topic,
                    feedback,
                    self.max_backlog,
                    self.delete_committed,
                )
            })
            .transpose()
    }
}

/// `kafka produce --keys`: which key each event gets, and which are sent.
struct EventKeys {
    keys: crate::kafka::ModelKeys,
    only: Option<u32>,
    seed: u64,
}

impl EventKeys {
    fn new(a: &ProduceArgs) -> Result<Option<Self>, String> {
        let Some(list) = &a.keys else {
            return Ok(None);
        };
        let keys = crate::kafka::ModelKeys::parse(list)?;
        let only = match &a.only_key {
            None => None,
            Some(k) => Some(
                keys.model(k)
                    .ok_or_else(|| format!("--only-key {k}: not one of --keys {list}"))?,
            ),
        };
        Ok(Some(EventKeys {
            keys,
            only,
            seed: a.seed,
        }))
    }

    /// The model (key index) of event `i`.
    fn model(&self, i: u64) -> u32 {
        (splitmix64(self.seed ^ 0x6b65_7973 ^ i.wrapping_mul(0x9e37_79b9)) % self.keys.len() as u64)
            as u32
    }

    /// Event `i`'s key, and whether it is sent.
    fn key(&self, i: u64) -> (&str, bool) {
        let m = self.model(i);
        (self.keys.name(m), self.only.is_none_or(|o| o == m))
    }

    /// Adds event `i`'s key to its JSON; whether it is sent.
    fn mark(&self, i: u64, event: &mut Value) -> bool {
        let (name, sent) = self.key(i);
        event["key"] = json!(name);
        sent
    }
}

/// Options of `flowboost kafka read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub client: ClientArgs,
    /// The topic.
    #[arg(long)]
    pub topic: String,
    /// Stop after this many seconds without a record (0 to 1e9).
    #[arg(long, default_value_t = 3.0, value_name = "SECONDS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub idle: f64,
    /// Stop after this many records.
    #[arg(long)]
    pub max: Option<u64>,
    /// Or once this many records were read (waiting at most --timeout seconds).
    #[arg(long)]
    pub expect: Option<u64>,
    /// The limit for --expect, in seconds (0 to 1e9).
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: f64,
    /// The events topic: latency = this record's timestamp - the event's (same key).
    #[arg(long, value_name = "TOPIC")]
    pub latency_from: Option<String>,
    /// With --latency-from: leave out the events produced in the first this many seconds
    /// (the producer's and the job's warm-up); 0 to 1e9.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub latency_skip: f64,
    /// With --latency-from: also leave out the first this many events (in the order of
    /// their timestamps): a warm-up that does not depend on when the producer's client got
    /// ready (`kafka produce --rate` paces from its first delivery).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub latency_skip_events: u64,
    /// With --latency-from: also write every measured event's latency to this file, one
    /// JSON object per line (`{"key":..,"produced_ms":..,"latency_ms":..}`) in the order of
    /// the events' timestamps: where in a run its tail comes from.
    #[arg(long, value_name = "FILE", requires = "latency_from")]
    pub latency_output: Option<PathBuf>,
    /// Write the records' values as lines to this file.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Which records to read: read_committed (those of committed transactions, and every
    /// record written without one: what a job's downstream consumers should use) or
    /// read_uncommitted (also those of open and aborted transactions).
    #[arg(hide_possible_values = true, long, default_value = "read_committed", value_name = "LEVEL", value_parser = ["read_committed", "read_uncommitted"])]
    pub isolation: String,
}

/// Runs a tool.
pub fn run(args: KafkaToolArgs) -> Result<(), String> {
    match args.tool {
        Tool::Produce(a) => produce(*a),
        Tool::Read(a) => read(*a),
        Tool::CreateTopic(a) => {
            check_topic("--topic", &a.topic)?;
            if a.partitions < 1 {
                return Err(format!("--partitions {}: at least 1", a.partitions));
            }
            let config = a.client.config()?;
            let mut settings = Vec::new();
            for c in &a.configs {
                match c.split_once('=') {
                    Some((k, v)) if !k.trim().is_empty() => settings.push((k.trim(), v.trim())),
                    _ => return Err(format!("--config `{c}`: expected KEY=VALUE")),
                }
            }
            admin::create_topic_with(&config, &a.topic, a.partitions, &settings)
                .map_err(|e| e.to_string())?;
            Ok(())
        }
    }
}

/// The JSON event of an example (`with_label`: its label too).
pub fn event_json(schema: &Schema, ex: &Example, with_label: bool) -> Value {
    let features: Value = match &ex.features {
        Features::Dense(v) => json!(v),
        Features::Sparse {
            indices, values, ..
        } => {
            let mut m = serde_json::Map::new();
            for (&j, &x) in indices.iter().zip(values) {
                m.insert(schema.attributes[j as usize].name.clone(), json!(x));
            }
            Value::Object(m)
        }
    };
    let mut obj = json!({"id": ex.id, "features": features});
    if with_label && let Some(label) = &ex.label {
        let (k, v) = label_json(schema, label);
        obj[k] = v;
    }
    obj
}

/// `("label", name)` or `("labels", [names])`.
pub fn label_json(schema: &Schema, label: &Label) -> (&'static str, Value) {
    match label {
        Label::Class(c) => ("label", json!(schema.labels[*c as usize])),
        Label::Set(s) => (
            "labels",
            json!(
                s.iter()
                    .map(|&l| schema.labels[l as usize].clone())
                    .collect::<Vec<_>>()
            ),
        ),
    }
}

fn malformed(kind: u64, id: u64, dim: usize) -> Vec<u8> {
    match kind % 5 {
        0 => b"this is not JSON {".to_vec(),
        1 => br#"{"features": [1.0], "label": 0}"#.to_vec(),
        2 => format!(r#"{{"id": {id}, "features": {:?}}}"#, vec![0.5; dim + 3]).into_bytes(),
        3 => {
            let mut v = vec!["0.5".to_string(); dim];
            v[0] = "NaN".into();
            format!(r#"{{"id": {id}, "features": [{}]}}"#, v.join(",")).into_bytes()
        }
        _ => format!(
            r#"{{"id": {id}, "features": {:?}, "label": "no-such-label"}}"#,
            vec![0.5; dim]
        )
        .into_bytes(),
    }
}

/// A malformed Avro event, of kind `kind` as [`malformed`]'s: single-object encoded, or
/// with `confluent` (the id of the event schema), in the Confluent framing.
fn malformed_avro(kind: u64, id: u64, schema: &Schema, confluent: Option<u32>) -> Vec<u8> {
    let mut ex = Example {
        id,
        features: Features::Dense(vec![0.5; schema.dim()]),
        label: None,
    };
    let mut schema = schema.clone();
    match kind % 5 {
        0 => return b"this is not Avro".to_vec(),
        1 => ex.id = u64::MAX, // written as the long -1
        2 => {
            let extra = schema.attributes[..3.min(schema.dim())].to_vec();
            schema.attributes.extend(extra);
        }
        3 => ex.features = Features::Dense(vec![f64::NAN; schema.dim()]),
        _ => {
            schema.labels.push("no-such-label".into());
            ex.label = Some(Label::Class(schema.labels.len() as u32 - 1));
        }
    }
    match confluent {
        Some(schema_id) => confluent::encode_event(&schema, &ex, true, None, schema_id),
        None => avro::encode_event(&schema, &ex, true, None),
    }
}

/// Checks a topic name as Kafka does (1 to 249 characters of ASCII letters, digits, `.`,
/// `_` and `-`; not `.` or `..`), so that a bad name is an error before any connection.
pub fn check_topic(option: &str, topic: &str) -> Result<(), String> {
    let fail = |why: &str| Err(format!("{option} `{topic}`: {why}"));
    if topic.is_empty() {
        return fail("a topic name cannot be empty");
    }
    if topic.len() > 249 {
        return fail("a topic name has at most 249 characters");
    }
    if topic == "." || topic == ".." {
        return fail("a topic name cannot be `.` or `..`");
    }
    if let Some(c) = topic
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return fail(&format!(
            "a topic name has only ASCII letters, digits, `.`, `_` and `-`, not {c:?}"
        ));
    }
    Ok(())
}

fn produce(a: ProduceArgs) -> Result<(), String> {
    // Everything the options decide is checked before the first connection.
    check_topic("--topic", &a.topic)?;
    if let Some(f) = &a.feedback_topic {
        check_topic("--feedback-topic", f)?;
        if *f == a.topic {
            return Err(format!(
                "--topic and --feedback-topic are the same topic `{f}`: give each its own"
            ));
        }
    }
    if a.partitions < 1 {
        return Err(format!("--partitions {}: at least 1", a.partitions));
    }
    if a.generator != "clicks" {
        Dataset::generator(&a.generator, a.seed, Some(a.examples))
            .map_err(|e| format!("--generator {}: {e}", a.generator))?;
    }
    if a.record_format == RecordFormat::Libsvm {
        return Err("--record-format: kafka produce writes json or avro events".into());
    }
    if a.generator == "clicks" {
        if a.record_format != RecordFormat::Json {
            return Err("--generator clicks writes JSON impressions (--record-format json)".into());
        }
        return produce_clicks(a);
    }
    if a.impressions.is_some() {
        return Err("--impressions is for --generator clicks (else --examples)".into());
    }
    if a.click_delay != 0.0 {
        return Err(format!(
            "--click-delay {} is for --generator clicks (the delay of its clicks)",
            a.click_delay
        ));
    }
    if a.logging_policy != LoggingPolicy::Uniform {
        return Err(
            "--logging-policy is for --generator clicks (the policy of its logged slates)".into(),
        );
    }
    let config = a.client.config()?;
    // Confluent Avro: the event schema's id in the registry (registered under the
    // subject TOPIC-value, Confluent's TopicNameStrategy).
    let schema_id = match a.record_format {
        RecordFormat::ConfluentAvro => {
            let what = "--record-format confluent-avro";
            let client = a.registry.client(Some(what))?.ok_or(what)?;
            let subject = format!("{}-value", a.topic);
            Some(
                client
                    .register(&subject, avro::EVENT_SCHEMA)
                    .map_err(|e| format!("{what}: {e}"))?,
            )
        }
        _ => None,
    };
    admin::create_topic(&config, &a.topic, a.partitions).map_err(|e| e.to_string())?;
    if let Some(f) = &a.feedback_topic {
        admin::create_topic(&config, f, a.partitions).map_err(|e| e.to_string())?;
    }
    let data = Dataset::generator(&a.generator, a.seed, Some(a.examples))?;
    let schema = data.schema().clone();
    let keys = EventKeys::new(&a)?;
    // The record timestamp of what is sent after event `at` (record `salt` of it), with
    // --timestamp-base; else the producer's.
    let (base, jitter, seed) = (a.timestamp_base, a.timestamp_jitter, a.seed);
    let stamp = move |at: u64, salt: u64| {
        base.map(|b| {
            let h = splitmix64(seed ^ at.wrapping_mul(4).wrapping_add(salt));
            let back = i64::try_from(h % (jitter as u64 + 1)).unwrap_or(0);
            click_timestamp(b, at).saturating_sub(back).max(0)
        })
    };
    let mut sink = KafkaSink::new(&config, &a.topic).map_err(|e| e.to_string())?;
    let mut feedback_sink = match &a.feedback_topic {
        Some(f) => Some(KafkaSink::new(&config, f).map_err(|e| e.to_string())?),
        None => None,
    };
    let mut follow = a.follow(&config, a.feedback_topic.as_deref())?;
    let mut due: std::collections::VecDeque<(u64, u64, Label)> = Default::default();
    let (mut events, mut bad, mut unlabeled, mut feedback) = (0u64, 0u64, 0u64, 0u64);
    let start = Instant::now();
    let mut pacer = Pacer::new(a.rate);
    let mut send_feedback = |due: &mut std::collections::VecDeque<(u64, u64, Label)>,
                             now: u64,
                             all: bool,
                             feedback: &mut u64|
     -> Result<(), String> {
        while let Some((at, _, _)) = due.front() {
            if !all && *at > now {
                break;
            }
            let (at, id, label) = due.pop_front().expect("front exists");
            if let Some(fs) = feedback_sink.as_mut() {
                let (k, v) = label_json(&schema, &label);
                let body = json!({"id": id, k: v}).to_string();
                let key = id.to_string();
                match stamp(at, 1) {
                    Some(ts) => fs.send_at(Some(key.as_bytes()), body.as_bytes(), ts),
                    None => fs.send(Some(key.as_bytes()), body.as_bytes()),
                }
                .map_err(|e| e.to_string())?;
                *feedback += 1;
            }
        }
        Ok(())
    };
    for (i, ex) in data.stream(0)?.enumerate() {
        let ex = ex?;
        let i = i as u64;
        pacer.wait(i, &mut sink)?;
        if let Some(f) = follow.as_mut() {
            f.pace(|| sink.stats().pending())?;
        }
        let hide = a.unlabeled_every > 0 && (i + 1).is_multiple_of(a.unlabeled_every);
        let (model_key, sent) = match &keys {
            Some(k) => {
                let (name, sent) = k.key(i);
                (Some(name), sent)
            }
            None => (None, true),
        };
        let body = match a.record_format {
            RecordFormat::Avro => avro::encode_event(&schema, &ex, !hide, model_key),
            RecordFormat::ConfluentAvro => confluent::encode_event(
                &schema,
                &ex,
                !hide,
                model_key,
                schema_id.unwrap_or_default(),
            ),
            _ => {
                let mut event = event_json(&schema, &ex, !hide);
                if let Some(name) = model_key {
                    event["key"] = json!(name);
                }
                event.to_string().into_bytes()
            }
        };
        let key = ex.id.to_string();
        if sent {
            match stamp(i, 0) {
                Some(ts) => sink.send_at(Some(key.as_bytes()), &body, ts),
                None => sink.send(Some(key.as_bytes()), &body),
            }
            .map_err(|e| e.to_string())?;
            events += 1;
        }
        if hide && sent {
            unlabeled += 1;
            if let Some(label) = ex.label.clone() {
                due.push_back((i + a.feedback_delay, ex.id, label));
            }
        }
        send_feedback(&mut due, i, false, &mut feedback)?;
        if a.malformed_every > 0 && (i + 1).is_multiple_of(a.malformed_every) {
            let body = match a.record_format {
                RecordFormat::Avro | RecordFormat::ConfluentAvro => {
                    malformed_avro(bad, 1_000_000_000 + bad, &schema, schema_id)
                }
                _ => malformed(bad, 1_000_000_000 + bad, schema.dim()),
            };
            let key = format!("bad-{bad}");
            match stamp(i, 2) {
                Some(ts) => sink.send_at(Some(key.as_bytes()), &body, ts),
                None => sink.send(Some(key.as_bytes()), &body),
            }
            .map_err(|e| e.to_string())?;
            bad += 1;
        }
    }
    send_feedback(&mut due, u64::MAX, true, &mut feedback)?;
    let timeout = Duration::from_secs(120);
    sink.flush(timeout).map_err(|e| e.to_string())?;
    if let Some(fs) = feedback_sink.as_mut() {
        fs.flush(timeout).map_err(|e| e.to_string())?;
    }
    let summary = json!({
        "produced": events + bad,
        "events": events,
        "malformed": bad,
        "unlabeled": unlabeled,
        "feedback": feedback,
        "seconds": start.elapsed().as_secs_f64(),
        "waited_for_group_seconds": follow.as_ref().map(|f| f.waited.as_secs_f64()),
    });
    super::output::print_json(&summary)
}

/// The simulated clock of `kafka produce --generator clicks` advances one millisecond per
/// impression; by default it starts at the wall clock rounded down to a multiple of this
/// (an hour), so that logs of the same seed differ by whole hours (`--timestamp-base`
/// fixes it).
pub const CLICK_BASE_ROUNDING_MS: i64 = 3_600_000;

/// Paces a producer at `rate` events per second (0: as fast as possible). The clock starts
/// once the first record sent is delivered: a new client takes up to a second to connect and
/// (being idempotent) to obtain its producer id, and the records stamped meanwhile would
/// wait in it that long and leave as one burst, not at the rate.
struct Pacer {
    rate: f64,
    /// When the clock started, and the index of the first event paced from it.
    start: Option<(Instant, u64)>,
}

impl Pacer {
    fn new(rate: f64) -> Self {
        Pacer { rate, start: None }
    }

    /// Waits until event `i` is due: `(i - first) / rate` seconds after the clock started
    /// (`first`: the event it started at). The rate is at least 1e-9 (its value parser), but
    /// that may still pass what a Duration holds: then the event never comes due.
    fn wait(&mut self, i: u64, sink: &mut KafkaSink) -> Result<(), String> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        let (start, first) = match self.start {
            Some(started) => started,
            None if sink.stats().produced == 0 => return Ok(()),
            None => {
                sink.flush(Duration::from_secs(120))
                    .map_err(|e| format!("delivering the first record: {e}"))?;
                *self.start.insert((Instant::now(), i))
            }
        };
        let at =
            Duration::try_from_secs_f64((i - first) as f64 / self.rate).unwrap_or(Duration::MAX);
        let now = start.elapsed();
        if at > now {
            std::thread::sleep(at - now);
        }
        Ok(())
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The default start of the simulated clock: now, rounded down to the hour.
fn click_base_now() -> i64 {
    let now = crate::kafka::latency::unix_ms();
    now - now.rem_euclid(CLICK_BASE_ROUNDING_MS)
}

/// The record timestamp of impression `i`, and of the clicks produced right after it.
pub fn click_timestamp(base: i64, i: u64) -> i64 {
    base.saturating_add(i64::try_from(i).unwrap_or(i64::MAX))
}

/// `kafka produce --generator clicks`: the click simulator's impressions as unlabeled
/// events on the topic, their clicks as logged-click records on the feedback topic, each
/// produced after impression `i + d` (`d` its delay); clicks still due at the end follow
/// the last impression. Every record has the simulated time of the impression it follows
/// as its timestamp ([`click_timestamp`]): impression `i` and a click due after it get
/// `base + i` ms (`--timestamp-base`, by default the hour it starts in), whatever
/// `--rate`.
fn produce_clicks(a: ProduceArgs) -> Result<(), String> {
    use crate::eval::ClickEncoder;
    use flowboost_connectors::generators::clicks::{ClickSimConfig, ClickSimulator};
    let feedback_topic = a
        .feedback_topic
        .clone()
        .ok_or("--generator clicks needs --feedback-topic (the clicks' topic)")?;
    if a.unlabeled_every > 0 || a.malformed_every > 0 {
        return Err("--generator clicks: every impression is unlabeled and its clicks go to --feedback-topic; --unlabeled-every and --malformed-every do not apply".into());
    }
    let mut sim_config = ClickSimConfig::new(a.impressions.unwrap_or(100_000), a.seed);
    sim_config.logging = a.logging_policy;
    sim_config.click_delay = a.click_delay;
    sim_config.validate().map_err(|e| e.to_string())?;
    if a.timestamp_jitter > 0 {
        return Err(
            "--timestamp-jitter is not for --generator clicks (its clock is the simulator's)"
                .into(),
        );
    }
    let base = a.timestamp_base.unwrap_or_else(click_base_now);
    let keys = EventKeys::new(&a)?;
    let mut encoder = ClickEncoder::new(&sim_config)?;
    let sim = ClickSimulator::new(sim_config).map_err(|e| e.to_string())?;
    let config = a.client.config()?;
    admin::create_topic(&config, &a.topic, a.partitions).map_err(|e| e.to_string())?;
    admin::create_topic(&config, &feedback_topic, a.partitions).map_err(|e| e.to_string())?;
    let mut sink = KafkaSink::new(&config, &a.topic).map_err(|e| e.to_string())?;
    let mut clicks_sink = KafkaSink::new(&config, &feedback_topic).map_err(|e| e.to_string())?;
    // (due after this impression, impression, order) -> record.
    let mut follow = a.follow(&config, Some(&feedback_topic))?;
    let mut due: std::collections::BTreeMap<(u64, u64, usize), crate::eval::ClickRecord> =
        Default::default();
    let (mut events, mut records, mut clicks, mut clicked) = (0u64, 0u64, 0u64, 0u64);
    let start = Instant::now();
    let mut pacer = Pacer::new(a.rate);
    let mut send =
        |due: &mut std::collections::BTreeMap<(u64, u64, usize), crate::eval::ClickRecord>,
         now: u64,
         records: &mut u64|
         -> Result<(), String> {
            while let Some(entry) = due.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let at = entry.key().0;
                let r = entry.remove();
                clicks_sink
                    .send_at(
                        Some(r.id.to_string().as_bytes()),
                        r.json().to_string().as_bytes(),
                        click_timestamp(base, at),
                    )
                    .map_err(|e| e.to_string())?;
                *records += 1;
            }
            Ok(())
        };
    for (i, imp) in sim.enumerate() {
        let i = i as u64;
        pacer.wait(i, &mut sink)?;
        if let Some(f) = follow.as_mut() {
            f.pace(|| sink.stats().pending())?;
        }
        let (mut event, due_clicks) = encoder.encode(i, &imp);
        if keys.as_ref().is_some_and(|k| !k.mark(i, &mut event)) {
            // Another key's impression: neither it nor its clicks are sent.
            send(&mut due, i, &mut records)?;
            continue;
        }
        sink.send_at(
            Some(i.to_string().as_bytes()),
            event.to_string().as_bytes(),
            click_timestamp(base, i),
        )
        .map_err(|e| e.to_string())?;
        events += 1;
        clicked += u64::from(!due_clicks.is_empty());
        for (n, (d, r)) in due_clicks.into_iter().enumerate() {
            clicks += r.clicks.len() as u64;
            due.insert((i.saturating_add(d), i, n), r);
        }
        send(&mut due, i, &mut records)?;
    }
    send(&mut due, u64::MAX, &mut records)?;
    let timeout = Duration::from_secs(120);
    sink.flush(timeout).map_err(|e| e.to_string())?;
    clicks_sink.flush(timeout).map_err(|e| e.to_string())?;
    let summary = json!({
        "produced": events + records,
        "events": events,
        "impressions": events,
        "clicked_impressions": clicked,
        "clicks": clicks,
        "feedback": records,
        "seconds": start.elapsed().as_secs_f64(),
        "timestamp_base_ms": base,
        "waited_for_group_seconds": follow.as_ref().map(|f| f.waited.as_secs_f64()),
    });
    super::output::print_json(&summary)
}

/// One line of `kafka read --latency-output`.
#[derive(serde::Serialize)]
struct LatencyLine<'a> {
    /// The event record's key (the event id).
    key: std::borrow::Cow<'a, str>,
    /// The event record's timestamp.
    produced_ms: i64,
    /// The output record's timestamp less the event's.
    latency_ms: i64,
}

/// Reads every record of `topic` from the start.
fn read_all(
    config: &KafkaConfig,
    topic: &str,
    idle: Duration,
    max: Option<u64>,
    expect: Option<(u64, Duration)>,
    to_end: bool,
) -> Result<Vec<SourceRecord>, String> {
    let mut source = PartitionedSource::new(
        config,
        topic,
        &unique_name("flowboost-read"),
        0,
        1,
        StartFrom::Earliest,
    )
    .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let start = Instant::now();
    loop {
        let batch = source
            .poll_batch(10_000, Duration::from_millis(100))
            .map_err(|e| e.to_string())?;
        out.extend(batch);
        if max.is_some_and(|m| out.len() as u64 >= m) {
            break;
        }
        // Every partition read to the end it had (idle is then only a fallback).
        if to_end && source.partitions().iter().all(|&p| source.at_end(p)) {
            break;
        }
        match expect {
            Some((n, limit)) => {
                if out.len() as u64 >= n || start.elapsed() >= limit {
                    break;
                }
            }
            None => {
                if source.is_idle(idle) {
                    break;
                }
            }
        }
    }
    Ok(out)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn read(a: ReadArgs) -> Result<(), String> {
    let config = a
        .client
        .config()?
        .set("isolation.level", a.isolation.clone());
    let idle = Duration::from_secs_f64(a.idle);
    let expect = a.expect.map(|n| (n, Duration::from_secs_f64(a.timeout)));
    let records = read_all(&config, &a.topic, idle, a.max, expect, false)?;
    // Offsets no longer on the broker (retention, deletion): a reader from the start
    // cannot see them, which explains a topic that reads fewer records than it was sent.
    let removed: i64 = admin::watermarks(&config, &a.topic)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|w| w.low.max(0))
        .sum();
    if records.is_empty() && removed > 0 {
        tracing::warn!(
            topic = %a.topic,
            removed,
            "flowboost: kafka read: `{}` has no records left: its first {removed} offsets were removed (retention or deletion) before this read",
            a.topic
        );
    }
    if let Some(path) = &a.output {
        let mut f = super::output::Output::create(Some(path))?;
        for r in &records {
            f.write(&r.payload)?;
            f.write(b"\n")?;
        }
        f.flush()?;
    }
    let mut keys: HashMap<&[u8], usize> = HashMap::new();
    for r in &records {
        *keys
            .entry(r.key.as_deref().unwrap_or_default())
            .or_default() += 1;
    }
    let ts: Vec<i64> = records.iter().filter_map(|r| r.timestamp_ms).collect();
    let mut summary = json!({
        "topic": a.topic,
        "records": records.len(),
        "isolation": a.isolation,
        "distinct_keys": keys.len(),
        "removed_before_read": removed,
        "first_timestamp_ms": ts.iter().min(),
        "last_timestamp_ms": ts.iter().max(),
    });
    if let Some(events_topic) = &a.latency_from {
        let events = read_all(
            &config,
            events_topic,
            Duration::from_secs(60),
            None,
            None,
            true,
        )?;
        let mut produced: HashMap<&[u8], i64> = HashMap::new();
        for r in &events {
            if let (Some(k), Some(t)) = (&r.key, r.timestamp_ms) {
                produced.entry(k.as_slice()).or_insert(t);
            }
        }
        let mut stamps: Vec<i64> = produced.values().copied().collect();
        stamps.sort_unstable();
        let after_seconds = stamps
            .first()
            .map_or(i64::MIN, |&t| t + (a.latency_skip * 1000.0) as i64);
        // (With the events stamped in the same millisecond as the N-th.)
        let after_events = usize::try_from(a.latency_skip_events)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .map_or(i64::MIN, |n| {
                stamps.get(n).map_or(i64::MAX, |&t| t.saturating_add(1))
            });
        let skip_before = after_seconds.max(after_events);
        let mut lat: Vec<f64> = Vec::new();
        let mut series: Vec<LatencyLine<'_>> = Vec::new();
        let mut first_event = i64::MAX;
        let mut last_out = i64::MIN;
        let mut skipped = 0u64;
        for r in &records {
            if let (Some(k), Some(t)) = (&r.key, r.timestamp_ms)
                && let Some(&e) = produced.get(k.as_slice())
            {
                if e < skip_before {
                    skipped += 1;
                    continue;
                }
                lat.push((t - e) as f64);
                if a.latency_output.is_some() {
                    series.push(LatencyLine {
                        produced_ms: e,
                        key: String::from_utf8_lossy(k),
                        latency_ms: t - e,
                    });
                }
                first_event = first_event.min(e);
                last_out = last_out.max(t);
            }
        }
        if let Some(path) = &a.latency_output {
            series.sort_unstable_by(|a, b| (a.produced_ms, &a.key).cmp(&(b.produced_ms, &b.key)));
            let mut f = super::output::Output::create(Some(path))?;
            for line in &series {
                f.json_line(line)?;
            }
            f.flush()?;
        }
        lat.sort_by(f64::total_cmp);
        let mean = lat.iter().sum::<f64>() / lat.len().max(1) as f64;
        let span = (last_out - first_event) as f64 / 1000.0;
        summary["latency_ms"] = json!({
            "matched": lat.len(),
            "skipped": skipped,
            "p50": percentile(&lat, 0.5),
            "p90": percentile(&lat, 0.9),
            "p99": percentile(&lat, 0.99),
            "max": lat.last(),
            "mean": mean,
        });
        summary["end_to_end_events_per_second"] = json!(if span > 0.0 {
            lat.len() as f64 / span
        } else {
            0.0
        });
    }
    super::output::print_json(&summary)
}
