//! Offset commits on a thread of their own, so that the worker that commits never waits on
//! the broker.

use super::settle::wait_settled;
use super::{KafkaError, OffsetCommitter};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Where the commits handed to a [`CommitThread`] stand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Commits handed over.
    pub sent: u64,
    /// Commits the broker accepted.
    pub succeeded: u64,
    /// Commits that failed.
    pub failed: u64,
}

impl CommitStats {
    /// Commits not answered yet.
    pub fn pending(&self) -> u64 {
        self.sent - self.succeeded - self.failed
    }
}

/// What the thread reports.
#[derive(Default)]
struct Outcomes {
    succeeded: u64,
    failed: u64,
    first_error: Option<String>,
}

/// An [`OffsetCommitter`] driven by a thread of its own: [`commit`](Self::commit) hands
/// the offsets over and returns at once; the thread commits them one after the other, in
/// the order given (the last one stands), each synchronously (librdkafka reports the
/// outcome of an asynchronous manual commit only to an `offset_commit_cb`, which the
/// `rdkafka` crate does not set); [`stats`](Self::stats) tells how they went, and
/// [`wait`](Self::wait) waits for all of them. Dropping it ends the thread once the
/// commits handed over are done; a drop with commits still pending (a job stopping on an
/// error, its broker perhaps gone) does not wait for them.
///
/// ```no_run
/// use flowboost_connectors::kafka::{CommitThread, KafkaConfig, OffsetCommitter};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let config = KafkaConfig::new("127.0.0.1:9092");
/// let committer = Arc::new(OffsetCommitter::new(&config, "my-group")?);
/// let mut commits = CommitThread::start(committer)?;
/// commits.commit(&[("events", 0, 42)])?; // returns at once
/// commits.wait(Duration::from_secs(10))?; // the broker accepted it
/// assert_eq!(commits.stats()?.succeeded, 1);
/// # Ok::<(), flowboost_connectors::kafka::KafkaError>(())
/// ```
pub struct CommitThread {
    group: String,
    to_thread: Option<Sender<Vec<(String, i32, i64)>>>,
    outcomes: Arc<Mutex<Outcomes>>,
    sent: u64,
    thread: Option<JoinHandle<()>>,
}

impl CommitThread {
    /// Starts the thread (named `flowboost-commits`) committing through `committer`.
    pub fn start(committer: Arc<OffsetCommitter>) -> Result<Self, KafkaError> {
        let (to_thread, from_worker) = channel::<Vec<(String, i32, i64)>>();
        let outcomes = Arc::new(Mutex::new(Outcomes::default()));
        let reported = Arc::clone(&outcomes);
        let group = committer.group_id().to_string();
        let thread = std::thread::Builder::new()
            .name("flowboost-commits".into())
            .spawn(move || {
                for offsets in from_worker {
                    let offsets: Vec<(&str, i32, i64)> = offsets
                        .iter()
                        .map(|(t, p, o)| (t.as_str(), *p, *o))
                        .collect();
                    let result = committer.commit(&offsets);
                    let mut o = lock(&reported);
                    match result {
                        Ok(()) => o.succeeded += 1,
                        Err(e) => {
                            o.failed += 1;
                            o.first_error.get_or_insert_with(|| e.to_string());
                        }
                    }
                }
            })
            .map_err(|e| KafkaError::Invalid(format!("starting the offset commit thread: {e}")))?;
        Ok(CommitThread {
            group,
            to_thread: Some(to_thread),
            outcomes,
            sent: 0,
            thread: Some(thread),
        })
    }

    /// Hands a commit of `(topic, partition, next offset to read)` to the thread.
    pub fn commit(&mut self, offsets: &[(&str, i32, i64)]) -> Result<(), KafkaError> {
        if offsets.is_empty() {
            return Ok(());
        }
        let owned = offsets
            .iter()
            .map(|&(t, p, o)| (t.to_string(), p, o))
            .collect();
        let sent = self
            .to_thread
            .as_ref()
            .is_some_and(|tx| tx.send(owned).is_ok());
        if !sent {
            return Err(KafkaError::Invalid(format!(
                "committing offsets of group `{}`: the commit thread is gone",
                self.group
            )));
        }
        self.sent += 1;
        Ok(())
    }

    /// How the commits went so far; an error if one failed.
    pub fn stats(&self) -> Result<CommitStats, KafkaError> {
        let o = lock(&self.outcomes);
        if let Some(first_error) = &o.first_error {
            return Err(KafkaError::CommitFailed {
                group: self.group.clone(),
                failed: o.failed,
                first_error: first_error.clone(),
            });
        }
        Ok(CommitStats {
            sent: self.sent,
            succeeded: o.succeeded,
            failed: o.failed,
        })
    }

    /// Waits until every commit handed over is answered; an error if one failed or some
    /// are still unanswered after `timeout`.
    pub fn wait(&self, timeout: Duration) -> Result<CommitStats, KafkaError> {
        wait_settled(
            timeout,
            || self.stats(),
            CommitStats::pending,
            |n| format!("waiting for {n} offset commits of group `{}`", self.group),
        )
    }
}

impl Drop for CommitThread {
    fn drop(&mut self) {
        self.to_thread = None;
        let idle = self.stats().is_ok_and(|s| s.pending() == 0);
        if let Some(thread) = self.thread.take()
            && idle
        {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for CommitThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitThread")
            .field("group", &self.group)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

/// Locks the outcomes, ignoring poisoning (counters).
fn lock(m: &Mutex<Outcomes>) -> MutexGuard<'_, Outcomes> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
