//! The consumer lag metric: a thread of its own (on process 0) asks the broker every few
//! seconds for each input partition's high watermark and the group's committed offset, so
//! no worker ever waits on a broker request.

use super::metrics::JobMetrics;
use flowboost_connectors::kafka::{GroupLag, KafkaConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the lag is asked for.
pub const LAG_INTERVAL: Duration = Duration::from_secs(5);

/// The running lag watcher; [`stop`](Self::stop) ends it.
pub struct LagWatcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LagWatcher {
    /// Starts watching `topics` for `group` (nothing when `on` is false).
    pub fn start(
        config: KafkaConfig,
        topics: Vec<String>,
        group: String,
        metrics: Arc<JobMetrics>,
        on: bool,
    ) -> LagWatcher {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = on
            .then(|| {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name("flowboost-lag".into())
                    .spawn(move || {
                        let client = match GroupLag::new(&config, &group) {
                            Ok(c) => c,
                            Err(e) => {
                                tracing::warn!(error = %e, "flowboost: kafka: the consumer lag is not known: {e}");
                                return;
                            }
                        };
                        let mut last: Option<Instant> = None;
                        let mut warned = false;
                        loop {
                            // Once more when stopped: the lag after the last commit.
                            let stopping = stop.load(Ordering::SeqCst);
                            if stopping || last.is_none_or(|t| t.elapsed() >= LAG_INTERVAL) {
                                last = Some(Instant::now());
                                for topic in &topics {
                                    match client.lag(topic) {
                                        Ok(lags) => {
                                            for l in lags {
                                                metrics.set_lag(topic, l.partition, l.lag);
                                            }
                                        }
                                        Err(e) if !warned => {
                                            warned = true;
                                            tracing::warn!(
                                                topic = %topic,
                                                error = %e,
                                                "flowboost: kafka: the consumer lag of `{topic}` is not known: {e}"
                                            );
                                        }
                                        Err(_) => {}
                                    }
                                }
                            }
                            if stopping {
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    })
                    .ok()
            })
            .flatten();
        LagWatcher { stop, thread }
    }

    /// Stops the thread (after a last measurement: call it after the last commit) and
    /// waits for it.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
