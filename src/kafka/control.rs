//! The job's control stream: a stop (idle, a signal) or an error anywhere is broadcast to
//! every worker of every process, so all of them stop together, with the same message.

use super::read_limits::ReadLimits;
use super::record::Control;
use super::worker_state::WorkerState;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use timely::dataflow::Stream;
use timely::dataflow::operators::generic::operator::source;
use timely::dataflow::operators::vec::Broadcast;

/// Every worker's control operator: it watches the process's signal flag, its worker's
/// error and (on worker 0) the merge's idle decision; the first of them makes it send
/// `Stop` to all workers. It ends once it has sent one or its worker's source has stopped
/// (someone else's `Stop`). On worker 0 it also sends the merge's read limits
/// ([`Control::Limits`]) to every source when they change.
pub fn control<'scope>(
    scope: timely::dataflow::Scope<'scope, u64>,
    signal: Arc<AtomicBool>,
    worker: Rc<RefCell<WorkerState>>,
    read_limits: ReadLimits,
) -> Stream<'scope, u64, Vec<Control>> {
    source(scope, "Control", move |capability, info| {
        read_limits.wake(scope.activator_for(info.address.clone()));
        let activator = scope.activator_for(info.address);
        let mut capability = Some(capability);
        move |output| {
            let Some(cap) = capability.as_ref() else {
                return;
            };
            let (stop, error, done) = {
                let w = worker.borrow();
                let signalled = signal.load(Ordering::SeqCst);
                (
                    signalled || w.idle || w.error.is_some(),
                    w.error.clone(),
                    w.source_done,
                )
            };
            if stop {
                if signal.load(Ordering::SeqCst) && error.is_none() {
                    tracing::info!(
                        "flowboost: kafka: stopping (signal): finishing what is in flight"
                    );
                }
                output.session(cap).give(Control::Stop { error });
                worker.borrow_mut().stopping = true;
                capability = None;
                return;
            }
            if done {
                capability = None;
                return;
            }
            if let Some(limits) = read_limits.take_changed() {
                output.session(cap).give(Control::Limits(limits));
            }
            // The merge wakes it when the read limits change; the rest can wait this long.
            activator.activate_after(Duration::from_millis(100));
        }
    })
    .broadcast()
}
