//! The swappable model: the [`ServedModel`] answering now, replaced atomically by a newer
//! one while requests in flight finish on the one they started with.

use super::served_model::ServedModel;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Holds the model that answers. A request takes the current model
/// ([`current`](Self::current): an `Arc`, so it keeps the model it started with until it
/// ends), and a newer one [`replace`](Self::replace)s it at once for the requests after.
#[derive(Debug)]
pub struct ModelSlot {
    current: RwLock<Arc<ServedModel>>,
    loads: AtomicU64,
}

impl ModelSlot {
    /// A slot holding `model`.
    pub fn new(model: ServedModel) -> Self {
        ModelSlot {
            current: RwLock::new(Arc::new(model)),
            loads: AtomicU64::new(1),
        }
    }

    /// The model answering now.
    pub fn current(&self) -> Arc<ServedModel> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The generation the next model loaded will have.
    pub fn next_generation(&self) -> u64 {
        self.loads.load(Ordering::Relaxed) + 1
    }

    /// Makes `model` the one answering; returns the one it replaces.
    pub fn replace(&self, model: ServedModel) -> Arc<ServedModel> {
        self.loads.fetch_add(1, Ordering::Relaxed);
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *current, Arc::new(model))
    }

    /// Models loaded so far (the first one included).
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }
}
