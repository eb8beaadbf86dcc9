use crate::engine::InFlight;
use std::collections::BTreeMap;
use timely::communication::Pull;
use timely::dataflow::channels::Message;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::generic::InputHandleCore;
use timely::progress::frontier::MutableAntichain;

/// Records held by an operator until their timestamp is complete, then released in
/// (timestamp, sequence) order: the order every stage must see, whatever the arrival order.
#[derive(Default)]
pub struct OrderedStash {
    pending: BTreeMap<u64, (Capability<u64>, Vec<InFlight>)>,
}

impl OrderedStash {
    /// Moves everything the input holds into the stash, keeping one capability per
    /// timestamp for output `output_index`.
    pub fn absorb<P: Pull<Message<u64, Vec<InFlight>>>>(
        &mut self,
        input: &mut InputHandleCore<u64, Vec<InFlight>, P>,
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

    /// The earliest timestamp the frontier has passed, with its records sorted by
    /// sequence number (a snapshot marker after the record it follows), if any.
    pub fn next_complete(
        &mut self,
        frontier: &MutableAntichain<u64>,
    ) -> Option<(Capability<u64>, Vec<InFlight>)> {
        let entry = self.pending.first_entry()?;
        if frontier.less_equal(entry.key()) {
            return None;
        }
        let (capability, mut records) = entry.remove();
        records.sort_unstable_by_key(|r| (r.seq, r.snapshot));
        Some((capability, records))
    }
}
