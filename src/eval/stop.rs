//! A graceful stop of the commands that stream files and generators (`run` without
//! Kafka, `eval`, `replay-clicks`): SIGTERM or SIGINT ends the stream where it is, as if
//! the data ended there. The records already read finish their way through the model,
//! the sinks flush, the model is saved if `--save-model` asked for it (a snapshot of the
//! events taken, which `--resume` continues), the report is printed, and the process
//! exits 0. A second signal while stopping exits at once (code 1), as the Kafka job does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The process's stop flag, set by the signals (or by [`request_stop`]).
fn flag() -> &'static Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Asks the streams to end (what SIGTERM and SIGINT do once [`stop_on_signals`] ran).
pub fn request_stop() {
    flag().store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for.
pub fn stop_requested() -> bool {
    flag().load(Ordering::Relaxed)
}

/// Makes SIGTERM and SIGINT ask for a graceful stop; a second one exits at once (code 1).
pub fn stop_on_signals() -> Result<(), String> {
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register_conditional_shutdown(signal, 1, flag().clone())
            .and_then(|_| signal_hook::flag::register(signal, flag().clone()))
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    Ok(())
}

/// `items` until a stop is asked for: the stream ends before the next item is read (no
/// item is read and dropped).
pub fn until_stopped<I: Iterator>(items: I) -> UntilStopped<I> {
    UntilStopped { items, done: false }
}

/// The iterator of [`until_stopped`].
pub struct UntilStopped<I> {
    items: I,
    done: bool,
}

impl<I: Iterator> Iterator for UntilStopped<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        if self.done || stop_requested() {
            self.done = true;
            return None;
        }
        self.items.next()
    }
}

/// Says on stderr that the run ended early because of a signal, if it did.
pub fn log_if_stopped(what: &str) {
    if stop_requested() {
        tracing::warn!(
            "flowboost: {what}: stopped by a signal: the stream ended early, everything read was processed"
        );
    }
}
