use super::args::{DataArgs, EngineArgs, EngineKind, ModelArgs};
use super::model_io::{ModelIoArgs, seed};
use super::named_arg::named;
use super::output::Output;
use super::prediction_line::PredictionLine;
use crate::eval::{Engine, Scorer, epoch_rule};
use crate::kafka::checkpoint::{Checkpoints, committed_offsets};
use crate::kafka::cluster::Cluster;
use crate::kafka::job_config::{
    ConnectionConfig, FeedbackConfig, JobConfig, JobTopics, MergeConfig, RunConfig, SinkConfig,
    SourceConfig, defaults,
};
use crate::kafka::merge::MergeOrder;
use crate::kafka::{JobSummary, ModelKeys, run_job};
use crate::model::{ModelWriter, Progress as SavedProgress, SavedModel, worker_chains};
use clap::Args;
use flowboost_connectors::generators::clicks::ClickSimConfig;
use flowboost_connectors::kafka::confluent::WriterSchemas;
use flowboost_connectors::kafka::{PREDICTION_SCHEMA, PredictionFormat, RecordFormat, StartFrom};
use flowboost_operators::boosters::build;
use flowboost_operators::data::{Attribute, Example, Schema, Task};
use flowboost_operators::engine::{
    ChainSnapshot, ItemStream, Prediction, PredictionSink, Sequencer, SinkError,
};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use std::time::Instant;

/// Options of `flowboost run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub data: DataArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelArgs,

    /// The number of timely worker threads; the stages are split into contiguous blocks
    /// across them (a pipeline); 1 to 128.
    #[arg(long, default_value_t = 1, value_name = "W", value_parser = super::limits::workers, allow_negative_numbers = true)]
    pub workers: usize,

    /// Records per dataflow timestamp (at least 1).
    #[arg(long, default_value_t = 256, value_name = "B", value_parser = super::limits::positive_usize, allow_negative_numbers = true)]
    pub batch: usize,

    /// Write the predictions (JSON lines: id, prediction, scores, chosen expert) to this
    /// file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print progressive metrics to stderr every this many examples (0: only the summary).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub report_every: u64,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub model_io: ModelIoArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub kafka: KafkaArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub space: SpaceArgs,
}

/// Kafka: with `--source kafka:TOPIC`, `run` reads events from Kafka instead of a file or
/// a generator (see the README's Kafka section and docs/kafka.md).
#[derive(Debug, Args)]
#[command(next_help_heading = "Kafka")]
// The Kafka-only options need the Kafka job: --source kafka:TOPIC, or a job file.
#[command(group(clap::ArgGroup::new("kafka_job").args(["source", "config"]).multiple(true)))]
pub struct KafkaArgs {
    /// A TOML job file whose keys are these options' long names (command-line options
    /// override it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The Kafka bootstrap servers (default: `bootstrap.servers` of --kafka-config or of
    /// FLOWBOOST_KAFKA_SET_BOOTSTRAP_SERVERS).
    #[arg(requires = "kafka_job", long, value_name = "HOST:PORT")]
    pub brokers: Option<String>,
    /// A Kafka client properties file for every client (`client.properties`: Java
    /// properties syntax, librdkafka or Java-client property names, e.g.
    /// security.protocol, sasl.mechanism, sasl.username, sasl.password or
    /// sasl.jaas.config, ssl.ca.location). Overridden by `FLOWBOOST_KAFKA_SET_<KEY>`
    /// environment variables (KEY: the property with `_` for `.`, e.g.
    /// FLOWBOOST_KAFKA_SET_SASL_PASSWORD), then by --kafka-set. In a job file, a relative
    /// path is relative to the job file's folder.
    #[arg(requires = "kafka_job", long, value_name = "FILE")]
    pub kafka_config: Option<PathBuf>,
    /// The events topic: kafka:TOPIC. Turns on the Kafka job.
    #[arg(long, value_name = "kafka:TOPIC")]
    pub source: Option<String>,
    /// The predictions topic: kafka:TOPIC (records keyed by event id).
    #[arg(requires = "kafka_job", long, value_name = "kafka:TOPIC")]
    pub sink: Option<String>,
    /// The feedback topic: kafka:TOPIC, labels (or clicks on shown labels) for earlier
    /// unlabeled events, joined by event id.
    #[arg(requires = "kafka_job", long, value_name = "kafka:TOPIC")]
    pub feedback: Option<String>,
    /// The dead-letter topic: kafka:TOPIC, bad records with the reason and the original
    /// bytes (without it they are only counted and logged).
    #[arg(requires = "kafka_job", long, value_name = "kafka:TOPIC")]
    pub dead_letter: Option<String>,
    /// The consumer group the offsets are committed to.
    #[arg(
        requires = "kafka_job",
        long,
        default_value = defaults::GROUP,
        value_name = "ID"
    )]
    pub group: String,
    /// Where to start: earliest, latest, or committed (the group's offsets; earliest for
    /// partitions without one).
    #[arg(
        hide_possible_values = true,
        requires = "kafka_job",
        long,
        default_value = defaults::START,
        value_name = "WHERE",
        value_parser = named::<StartFrom>()
    )]
    pub start: StartFrom,
    /// Stop once no record came for this many seconds (bounded runs, tests, replays);
    /// 0 to 1e9.
    #[arg(requires = "kafka_job", long, value_name = "SECONDS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub exit_when_idle: Option<f64>,
    /// Serve the metrics in the Prometheus text format over HTTP here.
    #[arg(requires = "kafka_job", long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Print the metrics to stderr every this many seconds (0: never); at most 1e9.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::REPORT_INTERVAL_S, value_name = "SECONDS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub report_interval: f64,
    /// Flush the outputs and commit the offsets this often (1 to 1e12 ms).
    #[arg(requires = "kafka_job", long, default_value_t = defaults::COMMIT_INTERVAL_MS, value_name = "MS", value_parser = super::limits::positive_millis, allow_negative_numbers = true)]
    pub commit_interval_ms: u64,
    /// The events' format: json (JSON objects), libsvm (LIBSVM lines, id in the key), avro
    /// (Avro single-object encoding of the record flowboost.Event:
    /// connectors/schemas/event.avsc) or confluent-avro (Avro framed by a schema
    /// registry's serializers: the byte 0, the writer's schema id, the record; the writer's
    /// schema is fetched from --schema-registry and resolved against flowboost.Event).
    #[arg(
        hide_possible_values = true,
        requires = "kafka_job",
        long,
        default_value = defaults::FORMAT,
        value_name = "FORMAT",
        value_parser = named::<RecordFormat>()
    )]
    pub record_format: RecordFormat,
    /// The predictions' format: json (JSON objects) or confluent-avro (Avro records of
    /// flowboost.Prediction, connectors/schemas/prediction.avsc, registered in
    /// --schema-registry under the subject SINK-value and framed with its id).
    #[arg(
        hide_possible_values = true,
        requires = "kafka_job",
        long,
        default_value = defaults::FORMAT,
        value_name = "FORMAT",
        value_parser = named::<PredictionFormat>()
    )]
    pub prediction_format: PredictionFormat,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub registry: super::registry_args::RegistryArgs,
    /// The merge order's block: records are ordered by (offset / B, topic, partition,
    /// offset); at least 1.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::MERGE_BLOCK, value_name = "B", value_parser = super::limits::positive_i64, allow_negative_numbers = true)]
    pub merge_block: i64,
    /// What the merge orders the partitions' records by: offsets (blocks of --merge-block
    /// offsets per partition), or timestamps (each record's Kafka timestamp, clamped to be
    /// non-decreasing in its partition, in blocks of --merge-block-ms: for impressions and
    /// their clicks on separate topics). A record without a timestamp is then a dead
    /// letter (no_timestamp).
    #[arg(
        hide_possible_values = true,
        requires = "kafka_job",
        long,
        default_value = defaults::MERGE_ORDER,
        value_name = "ORDER",
        value_parser = named::<MergeOrder>()
    )]
    pub merge_order: MergeOrder,
    /// With --merge-order timestamps: the merge order's block in milliseconds of record
    /// timestamps: records are ordered by (timestamp / MS, topic, partition, timestamp,
    /// offset); 1 ms to 1e12 ms.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::MERGE_BLOCK_MS, value_name = "MS", value_parser = super::limits::merge_block_ms, allow_negative_numbers = true)]
    pub merge_block_ms: i64,
    /// Backpressure between partitions: each partition is read at most this many records
    /// past the first of its records the merge has not taken yet (at least twice
    /// --merge-block), so a lagging partition holds the others in the Kafka client, not in
    /// the job. What the job holds is at most about this times the partitions.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::MAX_READ_AHEAD, value_name = "RECORDS", value_parser = super::limits::positive_i64, allow_negative_numbers = true)]
    pub max_read_ahead: i64,
    /// A worker whose partitions are all read to their end and quiet this long stops
    /// fetching and asks the broker for news every 50 ms instead (the first record after a
    /// quiet spell waits up to 50 ms more). 0, the default: never pause. For brokers that
    /// answer an empty fetch at once instead of holding it for `fetch.wait.max.ms`, as
    /// Apache Kafka does: there an idle client would spin.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::IDLE_PAUSE_MS, value_name = "MS", value_parser = super::limits::millis)]
    pub idle_pause_ms: u64,
    /// Checkpoints: write the whole state of the job (model, pending events and feedback,
    /// the stream's position, every source partition's offset) to this directory, and on
    /// start resume from the checkpoint there whose outputs were committed. A checkpoint is
    /// a model file (`flowboost inspect` reads it). With several processes, every process
    /// must see the directory (the same host, or a shared file system); process 0 writes.
    #[arg(requires = "kafka_job", long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Take a checkpoint at the end of the first epoch this many seconds after the last
    /// (with --checkpoint-dir). Predictions become visible to read_committed consumers at
    /// each checkpoint, so this is also their latency. 0.01 to 1e9.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::CHECKPOINT_EVERY_S, value_name = "SECONDS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub checkpoint_every: f64,
    /// Keep this many of the newest checkpoints (at least 2).
    #[arg(requires = "kafka_job", long, default_value_t = defaults::CHECKPOINTS_KEPT, value_name = "K", value_parser = super::limits::positive_usize, allow_negative_numbers = true)]
    pub checkpoints_kept: usize,
    /// With --checkpoint-dir: write predictions and dead letters without transactions
    /// (at-least-once: after a crash, the outputs since the last checkpoint are written
    /// again, identical). By default each checkpoint's outputs are one transaction,
    /// committed with its offsets once it is durable: exactly once for read_committed
    /// consumers.
    #[arg(requires = "kafka_job", long)]
    pub no_transactions: bool,
    /// An unlabeled event waits for its feedback (and feedback for its event) at most
    /// about this many later events: the feedback join's time-to-live, counted in epochs of
    /// --batch events, rounded up. It also bounds the join's memory: at most this many
    /// events and feedback records wait. At least 1 [default: 1000000]. The Kafka job's
    /// (its feedback topic or click window).
    #[arg(long, value_name = "N", value_parser = super::limits::positive_u64, allow_negative_numbers = true)]
    pub pending_ttl: Option<u64>,
    /// A learning pass enters the model this many epochs after its feedback met its event
    /// (at least 1; more lets the stage blocks of several workers work on later epochs
    /// meanwhile) [default: 4]. The Kafka job's.
    #[arg(long, value_name = "EPOCHS", value_parser = super::limits::positive_u64, allow_negative_numbers = true)]
    pub feedback_lag: Option<u64>,
    /// Logged clicks (`run --generator clicks`, events and clicks written by `kafka
    /// produce --generator clicks`): every unlabeled event waits its whole --pending-ttl
    /// window; the click records for it that arrive in the window are merged and learned
    /// at its end (pairs weighted by the clicks' logged propensities); a window that ends
    /// without a click is learned as "no shown item clicked" (counted in no_click).
    /// Clicks after the window are late.
    #[arg(requires = "kafka_job", long)]
    pub click_window: bool,
    /// One model per key: a comma-separated list of keys (campaigns, markets, tenants).
    /// Each event names its model with `"key": "NAME"`; each key's model learns only its
    /// events, and predicts exactly as a job serving that key alone (`--keys KEY`) on the
    /// same topics would; the keys' models are spread over the workers of all processes
    /// by key. An event without a key, or with a key not listed, is a dead letter
    /// (missing_key, unknown_key) that keeps its place in the merged sequence.
    /// Predictions carry their "key"; the summary and the metrics count per key. At most
    /// 1,024 keys of at most 256 bytes. --save-model and --checkpoint-dir keep every key's
    /// model in one file, which loads only into a job with the same keys in the same order.
    #[arg(requires = "kafka_job", long, value_name = "K1,K2,...")]
    pub keys: Option<String>,
    /// On a live stream, a record waits at most this long in the merge for partitions
    /// that are read past the records they held when the job started and have nothing new
    /// (then the order of live records depends on arrival times). Records written before
    /// the job started are always merged in the data's order, however long that takes.
    /// 0 to 1e12.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::MAX_MERGE_WAIT_MS, value_name = "MS", value_parser = super::limits::millis, allow_negative_numbers = true)]
    pub max_merge_wait_ms: u64,
    /// How many epochs the merge may run ahead of the model's output (backpressure: the
    /// sources stop reading beyond it); at least 1.
    #[arg(requires = "kafka_job", long, default_value_t = defaults::MAX_EPOCHS_IN_FLIGHT, value_name = "EPOCHS", value_parser = super::limits::positive_u64, allow_negative_numbers = true)]
    pub max_epochs_in_flight: u64,
    /// The number of processes of the cluster (each with --workers threads); needs
    /// --hostfile and --process; 1 to 128.
    #[arg(long, default_value_t = defaults::PROCESSES, value_name = "P", value_parser = super::limits::workers, allow_negative_numbers = true)]
    pub processes: usize,
    /// This process's index, 0..P.
    #[arg(long, default_value_t = defaults::PROCESS, value_name = "I")]
    pub process: usize,
    /// The processes' addresses, one host:port per line (process 0 first).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Start a local cluster of P processes on this machine (ports from 127.0.0.1:2101 up
    /// by default, see --local-base-port): this process is process 0 and starts the
    /// others with the same options; if one fails, the others are stopped. 1 to 128.
    #[arg(long, value_name = "P", value_parser = super::limits::workers, allow_negative_numbers = true)]
    pub local_cluster: Option<usize>,
    /// The first port of --local-cluster.
    #[arg(long, default_value_t = defaults::LOCAL_BASE_PORT, value_name = "PORT")]
    pub local_base_port: u16,
    /// A librdkafka property for every client, KEY=VALUE (repeatable; overrides
    /// --kafka-config and the environment).
    #[arg(requires = "kafka_job", long = "kafka-set", value_name = "KEY=VALUE")]
    pub kafka_set: Vec<String>,
}

/// The job's feature space, for a Kafka source (a record that does not fit is a dead
/// letter). Without --dim or --feature-names, the schema of --data (its header) or of the
/// --generator preset is used.
#[derive(Debug, Args)]
#[command(next_help_heading = "Feature space (Kafka)")]
pub struct SpaceArgs {
    /// The task: binary, multiclass or multilabel (default: binary for 2 labels, else
    /// multiclass).
    #[arg(hide_possible_values = true, long, value_name = "TASK", value_parser = named::<Task>())]
    pub task: Option<Task>,
    /// The number of numeric features (named f0, f1, ...), 1 to 1048576.
    #[arg(long, value_name = "D", value_parser = super::limits::features, allow_negative_numbers = true)]
    pub dim: Option<usize>,
    /// The feature names, comma-separated (numeric features).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub feature_names: Vec<String>,
    /// The label names, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub label_names: Vec<String>,
    /// The number of labels (named 0, 1, ...), without --label-names; 2 to 65536.
    #[arg(long, value_name = "K", value_parser = super::limits::num_labels, allow_negative_numbers = true)]
    pub num_labels: Option<usize>,
}

/// The first name of `names` that comes twice, if one does.
fn repeated(names: &[String]) -> Option<&str> {
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    names
        .iter()
        .find(|n| !seen.insert(n.as_str()))
        .map(String::as_str)
}

impl SpaceArgs {
    /// The declared schema, if any.
    pub fn schema(&self) -> Result<Option<Schema>, String> {
        if self.dim.is_none() && self.feature_names.is_empty() {
            if self.task.is_some() || !self.label_names.is_empty() || self.num_labels.is_some() {
                return Err("declare the features too: --dim D or --feature-names a,b,c".into());
            }
            return Ok(None);
        }
        for (option, names) in [
            ("--feature-names", &self.feature_names),
            ("--label-names", &self.label_names),
        ] {
            if let Some(name) = repeated(names) {
                return Err(format!(
                    "{option}: `{name}` is given twice (names must differ)"
                ));
            }
        }
        let attributes: Vec<Attribute> = if self.feature_names.is_empty() {
            (0..self.dim.unwrap_or(0))
                .map(|j| Attribute::numeric(format!("f{j}")))
                .collect()
        } else {
            if self.dim.is_some_and(|d| d != self.feature_names.len()) {
                return Err(format!(
                    "--dim {} but {} --feature-names",
                    self.dim.unwrap_or(0),
                    self.feature_names.len()
                ));
            }
            self.feature_names.iter().map(Attribute::numeric).collect()
        };
        if attributes.is_empty() {
            return Err("the feature space needs at least one feature".into());
        }
        let labels: Vec<String> = if self.label_names.is_empty() {
            let k = self
                .num_labels
                .ok_or("declare the labels: --num-labels K or --label-names a,b,c")?;
            (0..k).map(|l| l.to_string()).collect()
        } else {
            self.label_names.clone()
        };
        if labels.len() < 2 {
            return Err(format!(
                "--label-names {}: the feature space needs at least 2 labels",
                labels.join(",")
            ));
        }
        let task = match self.task {
            None if labels.len() == 2 => Task::Binary,
            None => Task::Multiclass,
            Some(task) => task,
        };
        if task == Task::Binary && labels.len() != 2 {
            return Err(format!("a binary task has 2 labels, got {}", labels.len()));
        }
        Ok(Some(Schema {
            attributes,
            labels,
            task,
        }))
    }
}

/// `kafka:TOPIC` to `TOPIC`.
fn topic(option: &str, value: &str) -> Result<String, String> {
    match value.strip_prefix("kafka:") {
        Some(t) if !t.is_empty() => Ok(t.to_string()),
        _ => Err(format!("--{option} {value}: expected kafka:TOPIC")),
    }
}

impl TryFrom<&RunArgs> for JobConfig {
    type Error = String;

    /// The Kafka job's configuration from `flowboost run`'s arguments (a job file's keys
    /// are among them), validated; what needs a broker or a registry (the writer schemas,
    /// the prediction schema's id, the checkpoints, the start model) is added after.
    fn try_from(args: &RunArgs) -> Result<Self, String> {
        let k = &args.kafka;
        let source = topic("source", k.source.as_deref().unwrap_or_default())?;
        let client = crate::kafka::client_args::client_config(
            k.brokers.as_deref(),
            k.kafka_config.as_deref(),
            &k.kafka_set,
        )
        .map_err(|e| format!("--source kafka:TOPIC: {e}"))?;
        let sink = k
            .sink
            .as_deref()
            .ok_or("--source kafka:TOPIC needs --sink kafka:TOPIC")?;
        let topics = JobTopics {
            source,
            sink: topic("sink", sink)?,
            feedback: k
                .feedback
                .as_deref()
                .map(|f| topic("feedback", f))
                .transpose()?,
            dead_letter: k
                .dead_letter
                .as_deref()
                .map(|f| topic("dead-letter", f))
                .transpose()?,
        };
        topics.validate().map_err(|e| e.to_string())?;
        let config = JobConfig {
            connection: ConnectionConfig {
                client,
                group: k.group.clone(),
            },
            topics,
            keys: k.keys.as_deref().map(ModelKeys::parse).transpose()?,
            source: SourceConfig {
                start: k.start,
                format: k.record_format,
                writer_schemas: None,
                idle_pause: (k.idle_pause_ms > 0).then(|| Duration::from_millis(k.idle_pause_ms)),
            },
            merge: merge_config(args),
            feedback: FeedbackConfig {
                pending_ttl: k.pending_ttl.unwrap_or(defaults::PENDING_TTL),
                lag: k.feedback_lag.unwrap_or(defaults::FEEDBACK_LAG),
                click_window: k.click_window,
            },
            sink: SinkConfig {
                prediction_schema_id: None,
                commit_interval: Duration::from_millis(k.commit_interval_ms),
                checkpoint_dir: k.checkpoint_dir.clone(),
                checkpoints_kept: k.checkpoints_kept,
                checkpoint_every: Duration::from_secs_f64(k.checkpoint_every),
                transactions: !k.no_transactions,
                checkpoints: None,
                save_model: None,
            },
            run: RunConfig {
                workers: args.workers,
                cluster: Cluster::new(k.processes, k.process, k.hostfile.as_deref())?,
                metrics_addr: k.metrics_addr.clone(),
                report_interval: (k.report_interval > 0.0)
                    .then(|| Duration::from_secs_f64(k.report_interval)),
                start_model: None,
                resume: false,
                stop: Arc::new(AtomicBool::new(false)),
            },
        };
        config.validate().map_err(|e| e.to_string())?;
        Ok(config)
    }
}

/// The merge's part of the job's configuration. (The value parsers of `limits` checked
/// every count and duration: finite, in range.)
fn merge_config(args: &RunArgs) -> MergeConfig {
    let k = &args.kafka;
    MergeConfig {
        batch: args.batch,
        order: k.merge_order,
        block: k.merge_block,
        block_ms: k.merge_block_ms,
        max_wait: Duration::from_millis(k.max_merge_wait_ms),
        max_read_ahead: k.max_read_ahead,
        max_epochs_in_flight: k.max_epochs_in_flight,
        exit_when_idle: k.exit_when_idle.map(Duration::from_secs_f64),
    }
}

/// The schema registry's part: the events' writer schemas (confluent-avro events), the
/// prediction schema registered (confluent-avro predictions).
fn registry(k: &KafkaArgs, job: &mut JobConfig) -> Result<(), String> {
    let needs = |what: &str| format!("--{what} confluent-avro");
    if k.record_format == RecordFormat::ConfluentAvro {
        let client = k.registry.client(Some(&needs("record-format")))?;
        job.source.writer_schemas = client.map(|c| Arc::new(WriterSchemas::new(c)));
    }
    if k.prediction_format == PredictionFormat::ConfluentAvro {
        let what = needs("prediction-format");
        let client = k.registry.client(Some(&what))?.ok_or(what.clone())?;
        let subject = format!("{}-value", job.topics.sink);
        let id = client
            .register(&subject, PREDICTION_SCHEMA)
            .map_err(|e| format!("{what}: {e}"))?;
        job.sink.prediction_schema_id = Some(id);
    }
    Ok(())
}

/// Opens the checkpoints' directory and chooses the checkpoint to resume from (the
/// newest whose outputs were committed, with transactions); returns the start model.
fn checkpoints(
    job: &mut JobConfig,
    mut start: Option<Arc<SavedModel>>,
) -> Result<Option<Arc<SavedModel>>, String> {
    let Some(dir) = &job.sink.checkpoint_dir else {
        return Ok(start);
    };
    let checkpoints = Checkpoints::open(dir, job.sink.checkpoints_kept)?;
    let transactional = job.sink.transactional();
    let committed = if transactional {
        Some(committed_offsets(job)?)
    } else {
        None
    };
    let restore = checkpoints.choose(committed.as_ref())?;
    if transactional && job.run.cluster.process == 0 {
        checkpoints.drop_newer(restore.as_ref().map(|r| r.path.as_path()))?;
    }
    if job.run.cluster.process == 0 {
        // A crash after a commit and before the marker's rewrite left it one behind.
        checkpoints.mark_committed(restore.as_ref().map(|r| r.path.as_path()))?;
    }
    if let Some(restore) = restore {
        tracing::info!(
            checkpoint = %restore.path.display(),
            events = restore.model.events(),
            "flowboost: kafka: resuming from the checkpoint {} ({} events){}",
            restore.path.display(),
            restore.model.events(),
            if start.is_some() {
                "; --load-model is ignored"
            } else {
                ""
            }
        );
        start = Some(Arc::new(restore.model));
        job.run.resume = true;
    }
    job.sink.checkpoints = Some(checkpoints);
    Ok(start)
}

/// Runs `flowboost run --source kafka:TOPIC ...`.
fn run_kafka(args: RunArgs) -> Result<(), String> {
    if let Some(p) = args.kafka.local_cluster {
        return super::local_cluster::run(p, args.kafka.local_base_port);
    }
    let mut options = JobConfig::try_from(&args)?;
    registry(&args.kafka, &mut options)?;
    let io = &args.model_io;
    if io.save_every.is_some() || io.resume {
        return Err(
            "the Kafka job saves its model when it stops (--save-model), checkpoints with --checkpoint-dir and resumes from its checkpoints; --save-every and --resume are for files and generators"
                .into(),
        );
    }
    let start = checkpoints(&mut options, io.load()?)?;
    // The events' feature space: declared (--dim/--feature-names and the labels), else
    // the start model's, a dataset file's or a generator preset's; never a guess.
    let schema = match (args.space.schema()?, &start) {
        (Some(s), _) => s,
        (None, Some(saved)) if args.data.data.is_none() && args.data.generator.is_none() => {
            saved.header.schema.clone()
        }
        (None, _)
            if args.data.data.is_none() && args.data.generator.as_deref() == Some("clicks") =>
        {
            crate::eval::click_schema(&ClickSimConfig::new(0, 1))?
        }
        (None, _) if args.data.data.is_none() && args.data.generator.is_none() => {
            return Err("the Kafka job needs the events' feature space: declare it (--dim D or --feature-names a,b,c, with --num-labels K or --label-names a,b,c), or take it from --data FILE, --generator NAME or --load-model FILE".into());
        }
        (None, _) => args
            .data
            .open(seed(&args.model, start.as_deref()))?
            .schema()
            .clone(),
    };
    schema.check_limits().map_err(|e| e.to_string())?;
    let (config, plan) = io.plan(start, &args.model, &schema)?;
    options.run.start_model = plan.start;
    options.sink.save_model = plan.save;
    // SIGTERM and SIGINT stop the job gracefully: stop reading, finish what is in flight,
    // deliver, commit, save, exit 0.
    // A second signal while stopping exits at once (code 1).
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register_conditional_shutdown(signal, 1, options.run.stop.clone())
            .and_then(|_| signal_hook::flag::register(signal, options.run.stop.clone()))
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    let summary = run_job(options, schema, config)?;
    tracing::info!(
        events = summary.metrics.events_in,
        predictions = summary.metrics.predictions,
        dead_letters = summary.metrics.dead_letters,
        "flowboost: kafka: done: {}",
        summary_line(&summary)
    );
    super::output::print_json(&summary)
}

fn summary_line(s: &JobSummary) -> String {
    format!(
        "{} events, {} predictions, {} dead letters, {} feedback joined, progressive {} {:.4}, {:.0} events/s over {:.2} s busy",
        s.metrics.events_in,
        s.metrics.predictions,
        s.metrics.dead_letters,
        s.metrics.feedback_joined,
        s.metrics.loss,
        s.metrics.progressive_loss,
        s.events_per_second,
        s.busy_seconds
    )
}

/// Writes predictions as JSON lines and keeps progressive (test-then-train) metrics.
struct RunSink {
    task: Task,
    out: Output,
    scorer: Scorer,
    seen: u64,
    report_every: u64,
    start: Instant,
    model: Option<ModelWriter>,
}

impl PredictionSink for RunSink {
    type Output = Result<(Scorer, u64), String>;

    fn snapshot(&mut self, snapshot: ChainSnapshot) -> Result<(), SinkError> {
        let Some(writer) = &self.model else {
            return Ok(());
        };
        let progress = SavedProgress {
            seen: self.seen,
            scorer: self.scorer.clone(),
        };
        writer
            .write(snapshot, Some(progress), None)
            .map_err(SinkError::new)?;
        Ok(())
    }

    fn accept(&mut self, p: Prediction, ex: Arc<Example>) -> Result<(), SinkError> {
        PredictionLine::new(&p, self.task).write(&mut self.out)?;
        self.scorer.update(&p, ex.label.as_ref());
        self.seen += 1;
        if self.report_every > 0 && self.seen.is_multiple_of(self.report_every) {
            let (name, value) = self.scorer.headline();
            let secs = self.start.elapsed().as_secs_f64();
            tracing::info!(
                examples = self.seen,
                metric = name,
                value,
                "flowboost: {} examples, progressive {name} {value:.4}, {:.0} examples/s",
                self.seen,
                self.seen as f64 / secs.max(1e-9)
            );
        }
        Ok(())
    }

    fn finish(mut self) -> Self::Output {
        self.out.flush()?;
        Ok((self.scorer, self.seen))
    }
}

/// Runs `flowboost run`: source -> dataflow -> sink.
pub fn run(args: RunArgs) -> Result<(), String> {
    if args.kafka.config.is_some() {
        return Err("--config is read by the flowboost binary (main); pass it there".into());
    }
    if args.kafka.source.is_some() {
        return run_kafka(args);
    }
    if args.kafka.sink.is_some()
        || args.kafka.feedback.is_some()
        || args.kafka.brokers.is_some()
        || args.kafka.kafka_config.is_some()
    {
        return Err(
            "--brokers, --kafka-config, --sink and --feedback need --source kafka:TOPIC".into(),
        );
    }
    // The cluster and the feedback join are the Kafka job's: in file mode they would be
    // ignored.
    let k = &args.kafka;
    let job_only = [
        ("--processes", k.processes != 1),
        ("--process", k.process != 0),
        ("--hostfile", k.hostfile.is_some()),
        ("--local-cluster", k.local_cluster.is_some()),
        ("--pending-ttl", k.pending_ttl.is_some()),
        ("--feedback-lag", k.feedback_lag.is_some()),
    ];
    if let Some((option, _)) = job_only.iter().find(|(_, given)| *given) {
        return Err(format!(
            "{option} is for the Kafka job (--source kafka:TOPIC); a run on a file or a generator is one process without a feedback join (use --workers for threads)"
        ));
    }
    let start_model = args.model_io.load()?;
    let data = Arc::new(args.data.open(seed(&args.model, start_model.as_deref()))?);
    // The signals stop gracefully once the data are open: before, while a reader settles
    // the schema (a pass over the files, endless on an endless pipe), nothing is learned
    // yet, and SIGTERM or SIGINT end the process at once as by default.
    crate::eval::stop::stop_on_signals()?;
    let schema = data.schema().clone();
    let (config, plan) = args.model_io.plan(start_model, &args.model, &schema)?;
    let fresh = build(&schema, &config).map_err(|e| e.to_string())?;
    if let Some(saved) = &plan.start
        && plan.resume
        && saved.body.feedback_run.is_some()
    {
        return Err("--resume: the model was saved with delayed feedback pending; resume it with `flowboost eval`".into());
    }
    let resumed = plan.start.as_ref().filter(|_| plan.resume);
    let resumed_source = resumed
        .and_then(|s| s.body.source.clone())
        .unwrap_or_default();
    let skip = resumed_source.events;
    let resumed_progress = resumed.and_then(|s| s.body.progress.clone());
    let engine = EngineArgs {
        engine: EngineKind::Dataflow,
        workers: Some(args.workers),
        batch: args.batch,
    }
    .engine()?;
    let Engine::Dataflow(options) = engine else {
        unreachable!("run always uses the dataflow engine")
    };
    let chains = worker_chains(
        plan.start.as_deref(),
        fresh,
        options.workers,
        schema.clone(),
        config.clone(),
    )?;
    let snapshots = plan.snapshots;
    let rule = epoch_rule(args.batch, false);
    let model_writer = plan.save.clone();
    let out = Mutex::new(Some(Output::create(args.output.as_deref())?));
    let start = Instant::now();
    let task = schema.task;
    let k = schema.num_labels();
    let report_every = args.report_every;
    let make_sink = move || RunSink {
        task,
        out: match out.lock().ok().and_then(|mut o| o.take()) {
            Some(o) => o,
            None => Output::discard(),
        },
        scorer: resumed_progress
            .as_ref()
            .map_or_else(|| Scorer::new(task, k), |p| p.scorer.clone()),
        seen: resumed_progress.as_ref().map_or(0, |p| p.seen),
        report_every,
        start,
        model: model_writer.clone(),
    };
    let source_data = data.clone();
    let run = Engine::Dataflow(options.clone()).run(
        chains,
        move || {
            let mut streams = Vec::new();
            for part in 0..source_data.parts() {
                streams.push(source_data.stream(part)?);
            }
            // SIGTERM or SIGINT ends the stream here: what was read finishes, the model
            // is saved, the run exits 0.
            let examples = crate::eval::stop::until_stopped(
                streams
                    .into_iter()
                    .flatten()
                    .skip(usize::try_from(skip).unwrap_or(usize::MAX)),
            );
            let sequencer = Sequencer::new(rule, resumed_source.clone());
            Ok(ItemStream::new(examples, None, sequencer, snapshots))
        },
        make_sink,
        None,
    );
    let (scorer, seen) = run.map_err(|e| e.to_string())??;
    crate::eval::stop::log_if_stopped("run");
    let secs = start.elapsed().as_secs_f64();
    let (name, value) = scorer.headline();
    tracing::info!(
        examples = seen,
        seconds = secs,
        metric = name,
        value,
        "flowboost: done: {} ({} x {}, {} worker(s)) on {}: {seen} examples in {secs:.2} s ({:.0} examples/s), progressive {name} {value:.4}",
        config.algorithm,
        if config.algorithm == flowboost_operators::boosters::Algorithm::Single {
            1
        } else {
            config.learners
        },
        config.weak.name(),
        options.workers,
        (0..data.parts())
            .map(|i| data.part_name(i))
            .collect::<Vec<_>>()
            .join(" + "),
        seen as f64 / secs.max(1e-9),
    );
    Ok(())
}
