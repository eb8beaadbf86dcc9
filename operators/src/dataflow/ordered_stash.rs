use crate::engine::InFlight;
use std::collections::BTreeMap;
use timely::communication::Pull;
use timely::dataflow::channels::Message;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::generic::InputHandleCore;
use timely::progress::frontier::MutableAntichain;

/// Data held by an operator until their timestamp is complete, then released one
/// timestamp at a time, in time order, with a capability for that time.
pub struct TimeStash<D> {
    pending: BTreeMap<u64, (Capability<u64>, Vec<D>)>,
}

impl<D> Default for TimeStash<D> {
    fn default() -> Self {
        TimeStash {
            pending: BTreeMap::new(),
        }
    }
}

impl<D> TimeStash<D> {
    /// Moves everything the input holds into the stash, keeping one capability per
    /// timestamp for output `output_index`.
    pub fn absorb<P: Pull<Message<u64, Vec<D>>>>(
        &mut self,
        input: &mut InputHandleCore<u64, Vec<D>, P>,
        output_index: usize,
    ) {
        input.for_each_time(|time, data| {
            let entry = self
                .pending
                .entry(*time.time())
                .or_insert_with(|| (time.retain(output_index), Vec::new()));
            for batch in data {
                entry.1.append(batch);
            }
        });
    }

    /// The earliest timestamp the frontier has passed, with its data, if any.
    pub fn next_complete(
        &mut self,
        frontier: &MutableAntichain<u64>,
    ) -> Option<(Capability<u64>, Vec<D>)> {
        let entry = self.pending.first_entry()?;
        if frontier.less_equal(entry.key()) {
            return None;
        }
        Some(entry.remove())
    }
}

/// Records held by an operator until their timestamp is complete, then released in
/// (timestamp, order) order: the order every stage must see, whatever the arrival order.
/// Within a timestamp: learning passes first, then the new records, by sequence number;
/// a snapshot marker after the record it follows.
#[derive(Default)]
pub struct OrderedStash {
    stash: TimeStash<InFlight>,
}

impl OrderedStash {
    /// Moves everything the input holds into the stash.
    pub fn absorb<P: Pull<Message<u64, Vec<InFlight>>>>(
        &mut self,
        input: &mut InputHandleCore<u64, Vec<InFlight>, P>,
        output_index: usize,
    ) {
        self.stash.absorb(input, output_index);
    }

    /// The earliest timestamp the frontier has passed, with its records in order, if any.
    pub fn next_complete(
        &mut self,
        frontier: &MutableAntichain<u64>,
    ) -> Option<(Capability<u64>, Vec<InFlight>)> {
        let (capability, mut records) = self.stash.next_complete(frontier)?;
        records.sort_unstable_by_key(InFlight::order);
        Some((capability, records))
    }
}

#[cfg(test)]
mod tests {
    use super::OrderedStash;
    use crate::data::{Example, Features};
    use crate::engine::InFlight;
    use proptest::prelude::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::sync::Arc;
    use timely::dataflow::channels::pact::Exchange;
    use timely::dataflow::operators::generic::Operator;
    use timely::dataflow::operators::generic::operator::source;

    /// One record of the test: its timestamp and kind (0: a learning pass, 1: a new record,
    /// 2: a snapshot marker); its sequence number is its index.
    type Spec = (u64, u8);

    /// What the stash released, in release order: (time, marker, emit, seq).
    type Released = Vec<(u64, bool, bool, u64)>;

    fn record(seq: u64, kind: u8) -> InFlight {
        if kind == 2 {
            return InFlight::marker(seq);
        }
        let example = Arc::new(Example {
            id: seq,
            features: Features::Dense(Vec::new()),
            label: None,
        });
        InFlight {
            emit: kind == 1,
            ..InFlight::new(seq, example, 0)
        }
    }

    /// Runs the records through a timely dataflow of `workers` workers: each worker's
    /// source sends its share (record `i` from worker `i % workers`) in the order of
    /// `arrival`, `chunk` records per activation, at any of their times, lowering its
    /// capability to the earliest time it has left to send as it goes; the records are
    /// exchanged to worker 0, whose operator releases them through an [`OrderedStash`].
    fn run(specs: &[Spec], arrival: &[usize], chunk: usize, workers: usize) -> Released {
        let specs = specs.to_vec();
        let arrival = arrival.to_vec();
        let guards = timely::execute(timely::Config::process(workers), move |worker| {
            let (index, peers) = (worker.index(), worker.peers());
            let mine: Vec<(u64, InFlight)> = arrival
                .iter()
                .filter(|&&i| i % peers == index)
                .map(|&i| (specs[i].0, record(i as u64, specs[i].1)))
                .collect();
            let released = Rc::new(RefCell::new(Released::new()));
            let out = released.clone();
            worker.dataflow::<u64, _, _>(|scope| {
                source(scope, "Shuffled", move |capability, info| {
                    let activator = scope.activator_for(info.address);
                    let mut state = Some((capability, mine.into_iter().peekable()));
                    move |output| {
                        let Some((capability, records)) = state.as_mut() else {
                            return;
                        };
                        for (t, rec) in records.by_ref().take(chunk) {
                            output.session(&capability.delayed(&t)).give(rec);
                        }
                        if records.peek().is_none() {
                            state = None;
                            return;
                        }
                        // What is left to send may come at any of its times.
                        let low = records.clone().map(|(t, _)| t).min().unwrap_or(0);
                        capability.downgrade(&low.max(*capability.time()));
                        activator.activate();
                    }
                })
                .unary_frontier(
                    Exchange::new(|_: &InFlight| 0),
                    "Ordered",
                    |_, _| {
                        let mut stash = OrderedStash::default();
                        move |(input, frontier), output| {
                            stash.absorb(input, output.output_index());
                            while let Some((cap, mut records)) = stash.next_complete(frontier) {
                                let t = *cap.time();
                                out.borrow_mut().extend(
                                    records.iter().map(|r| (t, r.is_marker(), r.emit, r.seq)),
                                );
                                output.session(&cap).give_container(&mut records);
                            }
                        }
                    },
                );
            });
            while worker.step_or_park(None) {}
            released.take()
        })
        .unwrap();
        guards
            .join()
            .into_iter()
            .map(|r| r.unwrap())
            .reduce(|mut a, b| {
                a.extend(b);
                a
            })
            .unwrap_or_default()
    }

    fn case() -> impl Strategy<Value = (Vec<Spec>, Vec<usize>, usize, usize)> {
        prop::collection::vec((0u64..6, 0u8..3), 0..60).prop_flat_map(|specs| {
            let n = specs.len();
            (
                Just(specs),
                Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
                1usize..8,
                1usize..4,
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Whatever the arrival order, the workers and where the frontier moves, every
        /// record comes out once, each timestamp only once it is complete, in (time,
        /// order) order: learning passes, then new records, by sequence number, and a
        /// snapshot marker after the record it follows.
        #[test]
        fn records_come_out_once_in_time_then_record_order(
            (specs, arrival, chunk, workers) in case()
        ) {
            let got = run(&specs, &arrival, chunk, workers);
            let mut want: Released = specs
                .iter()
                .enumerate()
                .map(|(i, &(t, kind))| (t, kind == 2, kind == 1, i as u64))
                .collect();
            want.sort();
            prop_assert_eq!(got, want);
        }
    }
}
