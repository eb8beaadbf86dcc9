use std::path::Path;

/// Why a model file could not be read, written or used. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read the model file: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The file could not be written.
    #[error("{file}: cannot write the model file: {reason}")]
    Write {
        /// The file.
        file: String,
        /// The reason.
        reason: String,
    },
    /// The path is a directory.
    #[error("{file}: is a directory, not a model file")]
    Directory {
        /// The path.
        file: String,
    },
    /// A model file cannot be saved there: the path is a symbolic link, a device, a
    /// named pipe or a socket (the save would replace it), or it is read from one that is
    /// not a regular file.
    #[error(
        "{file}: is {what}, not a regular file: a model is saved only to a regular file (replaced) or a new path"
    )]
    NotRegular {
        /// The path.
        file: String,
        /// What it is ("a symbolic link", "a character device", ...).
        what: &'static str,
    },
    /// The file does not start with the model files' magic bytes.
    #[error("{file}: not a flowboost model file (it does not start with the model magic bytes)")]
    NotAModel {
        /// The file.
        file: String,
    },
    /// The file was written by a newer flowboost.
    #[error(
        "{file}: model format version {found} is newer than this flowboost ({flowboost}) reads (up to {supported}); use a newer flowboost"
    )]
    NewerFormat {
        /// The file.
        file: String,
        /// The file's format version.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
        /// This build's version.
        flowboost: &'static str,
    },
    /// The file was written by an older flowboost whose model state this build does not
    /// read.
    #[error(
        "{file}: model format version {found} is older than this flowboost ({flowboost}) reads (from {oldest}: the Hoeffding trees' state changed); train the model again"
    )]
    OlderFormat {
        /// The file.
        file: String,
        /// The file's format version.
        found: u32,
        /// The oldest version this build reads.
        oldest: u32,
        /// This build's version.
        flowboost: &'static str,
    },
    /// The file ends early.
    #[error("{file}: truncated: {detail}")]
    Truncated {
        /// The file.
        file: String,
        /// What is missing.
        detail: String,
    },
    /// A checksum or the content does not match: the file was damaged.
    #[error("{file}: corrupted: {detail}")]
    Corrupted {
        /// The file.
        file: String,
        /// What does not match.
        detail: String,
    },
    /// The model does not fit the stream or the options it is used with.
    #[error("{file}: {detail}")]
    Mismatch {
        /// The file.
        file: String,
        /// The mismatch, named.
        detail: String,
    },
    /// The model cannot be built (an invalid configuration).
    #[error(transparent)]
    Build(#[from] flowboost_operators::boosters::BuildError),
    /// The model cannot be used so.
    #[error("{0}")]
    Invalid(String),
}

/// Why a model's bytes could not be made or written (no file named: the caller names it).
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The JSON header.
    #[error("{0}")]
    Header(#[from] serde_json::Error),
    /// The postcard body.
    #[error("{0}")]
    Body(#[from] postcard::Error),
    /// Writing (compressing, or to the output).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A header longer than 4 GiB.
    #[error("the header is too large")]
    HeaderTooLarge,
}

impl ModelError {
    pub(crate) fn read(file: &Path, e: impl std::fmt::Display) -> Self {
        ModelError::Read {
            file: file.display().to_string(),
            reason: e.to_string(),
        }
    }

    pub(crate) fn write(file: &Path, e: impl std::fmt::Display) -> Self {
        ModelError::Write {
            file: file.display().to_string(),
            reason: e.to_string(),
        }
    }
}

impl From<ModelError> for String {
    fn from(e: ModelError) -> String {
        e.to_string()
    }
}
