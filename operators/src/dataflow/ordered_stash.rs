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
