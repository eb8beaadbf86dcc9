//! What can stop a run of the engine ([`SequentialRunner`](super::SequentialRunner),
//! the dataflow's `run_dataflow`): the caller's source or sink, the caller's model
//! builder, or the engine itself (a state it cannot serialize, a snapshot it cannot
//! assemble, a worker that fails).
//!
//! The caller's failures are the caller's own types, carried boxed ([`SourceError`],
//! [`SinkError`]), so that a sink can report a model file it could not write or a
//! broker that refused a record without the engine knowing either; their message is the
//! caller's, unchanged.

use super::{CodecError, SnapshotError};
use std::error::Error;
use std::fmt;

/// Any error, boxed: what a caller's source, sink or model builder reports.
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

macro_rules! caller_error {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Its message (and its [`source`](Error::source)) is the wrapped error's. Text
        /// converts into it (`From<String>`, `From<&str>`), and so does any boxed error;
        /// [`new`](Self::new) takes any error.
        #[derive(Debug)]
        pub struct $name(BoxError);

        impl $name {
            /// Wraps `error` (any error type, or text).
            pub fn new(error: impl Into<BoxError>) -> Self {
                $name(error.into())
            }

            /// The wrapped error.
            pub fn get_ref(&self) -> &(dyn Error + Send + Sync + 'static) {
                &*self.0
            }

            /// The wrapped error, to downcast.
            pub fn into_inner(self) -> BoxError {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl Error for $name {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                self.0.source()
            }
        }

        impl From<String> for $name {
            fn from(message: String) -> Self {
                $name(message.into())
            }
        }

        impl From<&str> for $name {
            fn from(message: &str) -> Self {
                $name(message.into())
            }
        }

        impl From<BoxError> for $name {
            fn from(error: BoxError) -> Self {
                $name(error)
            }
        }
    };
}

caller_error!(
    /// Why a run's source failed: it could not start (a file that does not open), or an
    /// item of it is bad (a record that does not parse). The runners stop at the first.
    SourceError
);

caller_error!(
    /// Why a [`PredictionSink`](super::PredictionSink) could not take a prediction or a
    /// snapshot (an output that cannot be written, a model file that cannot be saved).
    /// The runners stop at the first.
    SinkError
);

/// Why a run of the engine stopped before its sink finished.
///
/// ```
/// use flowboost_operators::engine::{RunError, SinkError};
///
/// let e = RunError::from(SinkError::from("disk full"));
/// assert_eq!(e.to_string(), "disk full");
/// assert!(matches!(e, RunError::Sink(_)));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The source failed (the caller's error).
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The sink failed (the caller's error).
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// The caller's builder could not make a worker's chain.
    #[error(transparent)]
    Build(BoxError),
    /// A stage's state could not be serialized for a snapshot.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The parts of a snapshot do not make one.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A dataflow run was asked for 0 workers.
    #[error("the number of workers must be at least 1")]
    NoWorkers,
    /// Timely could not start the workers (its message).
    #[error("{0}")]
    Start(String),
    /// A worker thread panicked (timely's message).
    #[error("a worker failed: {0}")]
    Worker(String),
    /// Worker 0 ended without a result.
    #[error("worker 0 returned nothing")]
    NoResult,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("inner")]
    struct Inner;

    #[test]
    fn caller_errors_keep_the_message_and_the_source() {
        let e = SinkError::new(Outer(Inner));
        assert_eq!(e.to_string(), "outer");
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("inner")
        );
        assert!(e.into_inner().downcast::<Outer>().is_ok());
        let e = RunError::from(SourceError::from(String::from("bad line 3")));
        assert_eq!(e.to_string(), "bad line 3");
        assert!(e.source().is_none());
        let e = RunError::Build(Box::new(Outer(Inner)));
        assert_eq!(e.to_string(), "outer");
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("inner")
        );
    }
}
