//! Closed-loop production (`kafka produce --follow-group G`): the producer waits while the
//! consumer group `G` has more than `--max-backlog` records of the events topic produced
//! but not committed, and with `--delete-committed` deletes the records `G` has committed
//! (on the events and the feedback topic), as a topic's retention would.
//!
//! A long load test then keeps a bounded backlog: the job, not the producer, sets the
//! pace, and the broker's log stays small however many records pass through it.

use flowboost_connectors::kafka::{GroupLag, KafkaConfig, admin};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often the producer asks for the group's backlog while it sends.
pub const CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// How long the producer keeps asking a broker that does not answer.
const MAX_FAILING: Duration = Duration::from_secs(120);

/// How long the producer sleeps between two looks while the backlog is over its bound.
const WAIT_STEP: Duration = Duration::from_millis(50);

/// A producer that follows a consumer group (see the module's documentation).
pub struct FollowGroup {
    config: KafkaConfig,
    lag: GroupLag,
    events: String,
    feedback: Option<String>,
    max_backlog: u64,
    delete: bool,
    last_check: Instant,
    /// Records sent since the last look.
    since_check: u64,
    /// The low watermark this producer last set per `(topic, partition)`.
    deleted_to: BTreeMap<(String, i32), i64>,
    /// Time spent waiting for the group.
    pub waited: Duration,
}

impl FollowGroup {
    /// Follows `group` on `events` (and deletes on `feedback` too, with `delete`).
    pub fn new(
        config: &KafkaConfig,
        group: &str,
        events: &str,
        feedback: Option<&str>,
        max_backlog: u64,
        delete: bool,
    ) -> Result<Self, String> {
        let lag = GroupLag::new(config, group).map_err(|e| e.to_string())?;
        Ok(FollowGroup {
            config: config.clone(),
            lag,
            events: events.to_string(),
            feedback: feedback.map(str::to_string),
            max_backlog,
            delete,
            last_check: Instant::now(),
            since_check: 0,
            deleted_to: BTreeMap::new(),
            waited: Duration::ZERO,
        })
    }

    /// Called as records are sent, with the records the producer still holds
    /// (`in_flight`: not yet on the broker): every [`CHECK_INTERVAL`] or quarter of the
    /// bound sent, whichever comes first, it deletes
    /// what the group committed (with `--delete-committed`) and waits while the backlog
    /// (records on the broker past the group's committed offsets, plus `in_flight`) is
    /// over the bound.
    pub fn pace(&mut self, in_flight: impl Fn() -> u64) -> Result<(), String> {
        // A look every CHECK_INTERVAL, and at least every quarter of the bound sent (a fast
        // producer sends many records in an interval).
        self.since_check += 1;
        if self.last_check.elapsed() < CHECK_INTERVAL
            && self.since_check < (self.max_backlog / 4).max(1)
        {
            return Ok(());
        }
        self.since_check = 0;
        let started = Instant::now();
        let mut failing: Option<(Instant, String)> = None;
        loop {
            // A busy broker may not answer in time: the producer asks again for up to
            // MAX_FAILING before it gives up.
            let backlog = match self.look() {
                Ok(b) => {
                    failing = None;
                    b + in_flight()
                }
                Err(e) => {
                    let since = failing.get_or_insert_with(|| {
                        tracing::warn!(
                            topic = %self.events,
                            error = %e,
                            "flowboost: kafka: the backlog of `{}` is not known yet: {e}",
                            self.events
                        );
                        (Instant::now(), e.clone())
                    });
                    if since.0.elapsed() > MAX_FAILING {
                        return Err(format!(
                            "--follow-group: the backlog is unknown for {} s: {e}",
                            MAX_FAILING.as_secs()
                        ));
                    }
                    u64::MAX
                }
            };
            self.last_check = Instant::now();
            if backlog <= self.max_backlog {
                break;
            }
            std::thread::sleep(WAIT_STEP);
        }
        self.waited += started.elapsed();
        Ok(())
    }

    /// The group's backlog on the events topic; deletes what it committed on the way.
    fn look(&mut self) -> Result<u64, String> {
        let mut backlog = 0;
        let topics = std::iter::once(self.events.clone()).chain(self.feedback.clone());
        let mut delete = Vec::new();
        let mut deletable = 0u64;
        for topic in topics {
            let lags = self.lag.lag(&topic).map_err(|e| e.to_string())?;
            for l in lags {
                if topic == self.events {
                    backlog += l.lag.max(0) as u64;
                }
                let done = self
                    .deleted_to
                    .get(&(topic.clone(), l.partition))
                    .copied()
                    .unwrap_or(0);
                if self.delete && l.position > done {
                    deletable += (l.position - done) as u64;
                    delete.push((topic.clone(), l.partition, l.position));
                }
            }
        }
        // Deleting is a request to the broker: done once a quarter of the bound is
        // committed.
        if !delete.is_empty() && deletable >= (self.max_backlog / 4).max(1) {
            let before: Vec<(&str, i32, i64)> = delete
                .iter()
                .map(|(t, p, o)| (t.as_str(), *p, *o))
                .collect();
            admin::delete_records(&self.config, &before).map_err(|e| e.to_string())?;
            for (t, p, o) in delete {
                self.deleted_to.insert((t, p), o);
            }
        }
        Ok(backlog)
    }
}
