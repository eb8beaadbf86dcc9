//! Waiting, with a deadline, for counters that a client's own thread brings up to date
//! (the producer's deliveries, the commit thread's offset commits).

use super::KafkaError;
use std::time::{Duration, Instant};

/// Calls `poll` about every millisecond until `pending` of what it returns is 0, and
/// returns that; [`KafkaError::Timeout`] after `timeout`, its context `what(n)` for the `n`
/// still pending; an error of `poll` at once.
pub(crate) fn wait_settled<S>(
    timeout: Duration,
    mut poll: impl FnMut() -> Result<S, KafkaError>,
    pending: impl Fn(&S) -> u64,
    what: impl Fn(u64) -> String,
) -> Result<S, KafkaError> {
    let deadline = Instant::now() + timeout;
    loop {
        let stats = poll()?;
        let n = pending(&stats);
        if n == 0 {
            return Ok(stats);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(KafkaError::Timeout {
                context: what(n),
                timeout,
            });
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(1)));
    }
}
