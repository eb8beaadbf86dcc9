//! Offset commits for a group, from one place, for partitions read by several sources.

use super::context::ConnectorContext;
use super::{KafkaConfig, KafkaError};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::RDKafkaErrorCode;
use std::time::Duration;

/// Commits offsets of any topic and partition for a consumer group, synchronously, without
/// reading anything (no assignment, no group membership).
///
/// A job whose partitions are read by several [`PartitionedSource`](super::PartitionedSource)s
/// (one per worker) but whose outputs are delivered in one place commits there, once the
/// outputs of every record before the committed offsets are confirmed.
pub struct OffsetCommitter {
    consumer: BaseConsumer<ConnectorContext>,
    group_id: String,
    timeout: std::time::Duration,
}

impl OffsetCommitter {
    /// A committer for group `group_id`.
    pub fn new(config: &KafkaConfig, group_id: &str) -> Result<Self, KafkaError> {
        let consumer: BaseConsumer<ConnectorContext> = config
            .client_config(&[
                ("group.id", group_id),
                ("client.id", "flowboost-committer"),
                ("enable.auto.commit", "false"),
                ("enable.auto.offset.store", "false"),
                ("session.timeout.ms", "6000"),
                ("heartbeat.interval.ms", "500"),
            ])
            .create_with_context(ConnectorContext::new(config, "flowboost-committer"))
            .map_err(|e| KafkaError::client("creating an offset committer", e))?;
        Ok(OffsetCommitter {
            consumer,
            group_id: group_id.to_string(),
            timeout: config.timeout,
        })
    }

    /// The group.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The group's metadata, for a transactional producer's offsets
    /// ([`KafkaSink::commit_transaction`](super::KafkaSink::commit_transaction)).
    pub(crate) fn group_metadata(&self) -> Option<rdkafka::consumer::ConsumerGroupMetadata> {
        self.consumer.group_metadata()
    }

    /// Commits `(topic, partition, next offset to read)` for the group, synchronously.
    pub fn commit(&self, offsets: &[(&str, i32, i64)]) -> Result<(), KafkaError> {
        if offsets.is_empty() {
            return Ok(());
        }
        let mut list = TopicPartitionList::with_capacity(offsets.len());
        for &(topic, p, offset) in offsets {
            if offset < 0 {
                return Err(KafkaError::Invalid(format!(
                    "commit of offset {offset} for `{topic}` [{p}]"
                )));
            }
            list.add_partition_offset(topic, p, Offset::Offset(offset))
                .map_err(|e| KafkaError::client("building the commit", e))?;
        }
        let result = self.consumer.commit(&list, CommitMode::Sync).map_err(|e| {
            KafkaError::client(
                format!("committing offsets of group `{}`", self.group_id),
                e,
            )
        });
        self.serve_events();
        result
    }

    /// Serves the client's queued events (its logs and errors: see `context`).
    fn serve_events(&self) {
        while self.consumer.poll(std::time::Duration::ZERO).is_some() {}
    }
}

impl OffsetCommitter {
    /// The group's committed offsets (the next record to read) of `partitions` (`(topic,
    /// partition)`), in the same order: `None` for a partition without one.
    pub fn committed(&self, partitions: &[(&str, i32)]) -> Result<Vec<Option<i64>>, KafkaError> {
        if partitions.is_empty() {
            return Ok(Vec::new());
        }
        let mut list = TopicPartitionList::with_capacity(partitions.len());
        for &(topic, p) in partitions {
            list.add_partition(topic, p);
        }
        let list = committed_offsets(&self.consumer, &list, self.timeout);
        self.serve_events();
        let list = list.map_err(|e| {
            KafkaError::client(
                format!(
                    "fetching the committed offsets of group `{}`",
                    self.group_id
                ),
                e,
            )
        })?;
        Ok(partitions
            .iter()
            .map(|&(topic, p)| {
                list.find_partition(topic, p)
                    .and_then(|e| match e.offset() {
                        Offset::Offset(o) => Some(o),
                        _ => None,
                    })
            })
            .collect())
    }
}

impl std::fmt::Debug for OffsetCommitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetCommitter")
            .field("group_id", &self.group_id)
            .finish_non_exhaustive()
    }
}

/// `consumer`'s group's committed offsets of `list`, within `timeout`. A group coordinator
/// that is not ready yet (a broker just started, a coordinator moving) answers with a
/// retriable error: it is asked again (every 100 ms) until the time limit.
pub(crate) fn committed_offsets(
    consumer: &BaseConsumer<ConnectorContext>,
    list: &TopicPartitionList,
    timeout: Duration,
) -> Result<TopicPartitionList, rdkafka::error::KafkaError> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let answer = consumer.committed_offsets(list.clone(), left);
        match answer {
            Err(e)
                if matches!(
                    e.rdkafka_error_code(),
                    Some(
                        RDKafkaErrorCode::NotCoordinator
                            | RDKafkaErrorCode::CoordinatorNotAvailable
                            | RDKafkaErrorCode::CoordinatorLoadInProgress
                    )
                ) && std::time::Instant::now() + Duration::from_millis(100) < deadline =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            answer => return answer,
        }
    }
}
