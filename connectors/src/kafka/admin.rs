//! Topic administration: create topics with `N` partitions (tests, demos, setup scripts),
//! list a topic's partitions, and delete the records before given offsets.

use super::context::{ConnectorContext, Watched, fetch_metadata, metadata_client};
use super::{KafkaConfig, KafkaError};
use rdkafka::ClientContext;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::Client;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::types::RDKafkaErrorCode;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// Creates topic `name` with `partitions` partitions (replication factor 1) and waits
/// until the broker's metadata show them. Returns `true` if it created the topic, `false`
/// if a topic of that name already existed (whatever its partition count: check with
/// [`topic_partitions`]).
pub fn create_topic(config: &KafkaConfig, name: &str, partitions: i32) -> Result<bool, KafkaError> {
    create_topic_with(config, name, partitions, &[])
}

/// [`create_topic`] with topic settings (`("retention.ms", "60000")`, ...), applied when
/// the topic is created (an existing topic keeps its own).
pub fn create_topic_with(
    config: &KafkaConfig,
    name: &str,
    partitions: i32,
    settings: &[(&str, &str)],
) -> Result<bool, KafkaError> {
    if partitions < 1 {
        return Err(KafkaError::Invalid(format!(
            "topic `{name}`: {partitions} partitions (at least 1)"
        )));
    }
    // Metadata first: a client that cannot reach the cluster says why within seconds (the
    // admin client's own errors are not served; see `context`).
    let probe = metadata_client(config, "flowboost-admin")?;
    fetch_metadata(&probe, config.timeout, "connecting")?;
    let admin = admin_client(config)?;
    let mut topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
    for &(key, value) in settings {
        topic = topic.set(key, value);
    }
    let options = AdminOptions::new().operation_timeout(Some(config.timeout));
    let results = block_on(admin.create_topics([&topic], &options))
        .map_err(|e| KafkaError::client(format!("creating topic `{name}`"), e))?;
    let mut created = true;
    for result in results {
        match result {
            Ok(_) => {}
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => created = false,
            Err((topic, code)) => {
                return Err(KafkaError::client(
                    format!("creating topic `{topic}`"),
                    rdkafka::error::KafkaError::AdminOp(code),
                ));
            }
        }
    }
    // Wait until the metadata show the partitions (instant on one node, not guaranteed).
    let deadline = Instant::now() + config.timeout;
    loop {
        match topic_partitions_with(&probe, name, config.timeout) {
            Ok(found) if !created || found.len() as i32 >= partitions => return Ok(created),
            Ok(_) | Err(KafkaError::UnknownTopic(_)) if Instant::now() < deadline => {
                thread::sleep(Duration::from_millis(50));
            }
            Ok(found) => {
                return Err(KafkaError::Invalid(format!(
                    "topic `{name}`: {} partitions visible after creation, {partitions} asked",
                    found.len()
                )));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Deletes the records before `offset` of each `(topic, partition, offset)` (Kafka's
/// DeleteRecords: the partition's low watermark moves to `offset`), as a topic's retention
/// would. Errors name the first partition that refused.
pub fn delete_records(config: &KafkaConfig, before: &[(&str, i32, i64)]) -> Result<(), KafkaError> {
    if before.is_empty() {
        return Ok(());
    }
    let admin = admin_client(config)?;
    let mut list = rdkafka::TopicPartitionList::with_capacity(before.len());
    for &(topic, partition, offset) in before {
        list.add_partition_offset(topic, partition, rdkafka::Offset::Offset(offset))
            .map_err(|e| KafkaError::client(format!("deleting records of `{topic}`"), e))?;
    }
    let options = AdminOptions::new().operation_timeout(Some(config.timeout));
    let result = block_on(admin.delete_records(&list, &options))
        .map_err(|e| KafkaError::client("deleting records", e))?;
    for e in result.elements() {
        if let Err(err) = e.error() {
            return Err(KafkaError::client(
                format!("deleting records of `{}` [{}]", e.topic(), e.partition()),
                err,
            ));
        }
    }
    Ok(())
}

/// A partition's low and high watermarks: the first offset still on the broker (those
/// below were removed by retention or deletion) and the next offset to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermarks {
    /// The partition id.
    pub partition: i32,
    /// The first offset still on the broker.
    pub low: i64,
    /// The offset the next record will get.
    pub high: i64,
}

/// The watermarks of every partition of `topic`, by ascending partition id.
pub fn watermarks(config: &KafkaConfig, topic: &str) -> Result<Vec<Watermarks>, KafkaError> {
    let consumer = metadata_client(config, "flowboost-admin")?;
    topic_partitions_with(&consumer, topic, config.timeout)?
        .into_iter()
        .map(|partition| partition_watermarks(consumer.client(), topic, partition, config.timeout))
        .collect()
}

/// The watermarks of one partition, asked of the broker with `client` (a blocking request:
/// never on a worker's loop).
pub(crate) fn partition_watermarks<C: ClientContext>(
    client: &Client<C>,
    topic: &str,
    partition: i32,
    timeout: Duration,
) -> Result<Watermarks, KafkaError> {
    let (low, high) = client
        .fetch_watermarks(topic, partition, timeout)
        .map_err(|e| {
            KafkaError::client(
                format!("fetching the watermarks of `{topic}` [{partition}]"),
                e,
            )
        })?;
    Ok(Watermarks {
        partition,
        low,
        high,
    })
}

/// The partition ids of `topic`, ascending; [`KafkaError::UnknownTopic`] if the broker
/// does not know it.
pub fn topic_partitions(config: &KafkaConfig, topic: &str) -> Result<Vec<i32>, KafkaError> {
    let consumer = metadata_client(config, "flowboost-admin")?;
    topic_partitions_with(&consumer, topic, config.timeout)
}

/// An admin client of `config`.
fn admin_client(config: &KafkaConfig) -> Result<AdminClient<ConnectorContext>, KafkaError> {
    config
        .client_config(&[])
        .create_with_context(ConnectorContext::new(config, "flowboost-admin"))
        .map_err(|e| KafkaError::client("creating an admin client", e))
}

/// The partition ids of `topic` through an existing consumer (not yet assigned: its queue
/// is served while it waits, see [`fetch_metadata`]).
pub(crate) fn topic_partitions_with<C: ConsumerContext + Watched>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    timeout: Duration,
) -> Result<Vec<i32>, KafkaError> {
    // The metadata of all topics: asking for one topic by name makes a broker with
    // `auto.create.topics.enable` create it, so a misspelt source topic would be created
    // empty and read as "0 events".
    let metadata = fetch_metadata(
        consumer,
        timeout,
        &format!("fetching the metadata of topic `{topic}`"),
    )?;
    let Some(t) = metadata.topics().iter().find(|t| t.name() == topic) else {
        return Err(KafkaError::UnknownTopic(topic.to_string()));
    };
    if t.error().is_some() || t.partitions().is_empty() {
        return Err(KafkaError::UnknownTopic(topic.to_string()));
    }
    let mut ids: Vec<i32> = t.partitions().iter().map(|p| p.id()).collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Wakes the thread that waits in [`block_on`].
struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on this thread. The admin client's futures are completed
/// by the client's own polling thread, so no runtime is needed.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut context = Context::from_waker(&waker);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => thread::park(),
        }
    }
}
