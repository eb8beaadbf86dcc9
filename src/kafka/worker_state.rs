//! What the operators of one worker share to stop together: whether the job is stopping,
//! the first error, whether the sources are done and the merge found the job idle (and
//! the consumers' transient errors, reported at the end). Data travels in the dataflow's
//! streams (and the merge's read limits through [`ReadLimits`](super::read_limits)).

/// The shared state of one worker's operators (one thread: `Rc<RefCell<_>>`).
#[derive(Default)]
pub struct WorkerState {
    /// A stop was decided (here or, through the control stream, elsewhere).
    pub stopping: bool,
    /// The first error seen on this worker (its own, or another's through the control
    /// stream).
    pub error: Option<String>,
    /// This worker's source has stopped reading.
    pub source_done: bool,
    /// Worker 0's merge found the job idle for `--exit-when-idle`.
    pub idle: bool,
    /// Transient consumer errors so far (a metric), and the last one.
    pub consumer_errors: u64,
    /// The last transient consumer error.
    pub last_consumer_error: Option<String>,
}

impl std::fmt::Debug for WorkerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerState")
            .field("stopping", &self.stopping)
            .field("error", &self.error)
            .field("source_done", &self.source_done)
            .field("idle", &self.idle)
            .finish_non_exhaustive()
    }
}

impl WorkerState {
    /// Records a fatal error (the first one wins).
    pub fn fail(&mut self, error: String) {
        self.error.get_or_insert(error);
    }

    /// Records the consumers' transient error count; the first error is logged
    /// (a job whose every fetch fails would otherwise only wait, reading nothing).
    pub fn consumer_errors(&mut self, count: u64, last: Option<String>) {
        if self.consumer_errors == 0 && count > 0 {
            tracing::warn!(
                error = last.as_deref().unwrap_or("(no message)"),
                "flowboost: kafka: a consumer error (retried by the client; counted in flowboost_consumer_errors_total): {}",
                last.as_deref().unwrap_or("(no message)")
            );
        }
        self.consumer_errors = count;
        if last.is_some() {
            self.last_consumer_error = last;
        }
    }
}
