//! The read limits: how far each source may read, decided by worker 0's merge and sent to
//! every source by the control operator ([`Control::Limits`](super::record::Control::Limits)).
//!
//! This is a feedback edge (the merge is downstream of the sources), so it does not travel
//! in the merge's output streams: a timely feedback edge would need a loop with a
//! timestamp summary, and its progress would hold the sources' frontier to the merge's.
//! It crosses from the merge to the control operator of the same worker through this
//! handle instead, and from there to every source on the (broadcast) control stream.

use super::merge_state::ReadLimitsUpdate;
use super::partition_offset::PartitionOffset;
use std::cell::RefCell;
use std::rc::Rc;
use timely::scheduling::Activator;

/// The merge's latest read limits, shared with the control operator of its worker (one
/// thread: `Rc<RefCell<_>>`).
#[derive(Clone, Default)]
pub struct ReadLimits {
    inner: Rc<RefCell<Shared>>,
}

#[derive(Default)]
struct Shared {
    limits: Vec<PartitionOffset>,
    changed: bool,
    control: Option<Activator>,
}

impl std::fmt::Debug for ReadLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = self.inner.borrow();
        f.debug_struct("ReadLimits")
            .field("limits", &shared.limits)
            .field("changed", &shared.changed)
            .finish_non_exhaustive()
    }
}

impl ReadLimits {
    /// The control operator: woken by urgent updates.
    pub fn wake(&self, control: Activator) {
        self.inner.borrow_mut().control = Some(control);
    }

    /// The merge's new limits (woken at once when urgent).
    pub fn publish(&self, update: ReadLimitsUpdate) {
        let mut shared = self.inner.borrow_mut();
        if update.urgent
            && let Some(control) = &shared.control
        {
            control.activate();
        }
        shared.limits = update.limits;
        shared.changed = true;
    }

    /// The limits, if they changed since they were last taken.
    pub fn take_changed(&self) -> Option<Vec<PartitionOffset>> {
        let mut shared = self.inner.borrow_mut();
        std::mem::take(&mut shared.changed).then(|| shared.limits.clone())
    }
}
