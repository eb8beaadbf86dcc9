//! End-to-end latency: from an event record's timestamp (set by its producer, or by the
//! broker under `LogAppendTime`) to its prediction handed to the sink's producer, which
//! stamps the prediction record then. The merge on worker 0 sends each event's timestamp
//! with its position ([`EventTime`]) to the sink on worker 0, which keeps them
//! ([`EventTimes`]), takes each back when it writes its prediction and counts the
//! difference ([`LatencyHistogram`]).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Now, in milliseconds since the Unix epoch, as record timestamps count them.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The most event timestamps held at once: beyond it the oldest are forgotten (their
/// predictions are then not measured). The merge holds far fewer in flight.
pub const MAX_EVENT_TIMES: usize = 1 << 20;

/// The Kafka timestamp of the event the merge stamped at position `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventTime {
    /// The event's position in the merged sequence.
    pub seq: u64,
    /// Its record's timestamp (milliseconds since the Unix epoch).
    pub timestamp_ms: i64,
}

/// The timestamps of the events stamped and not yet written, in sequence order.
#[derive(Debug, Default)]
pub struct EventTimes {
    times: VecDeque<(u64, i64)>,
}

impl EventTimes {
    /// Notes the timestamp of the event at position `seq` (positions grow).
    pub fn note(&mut self, seq: u64, timestamp_ms: i64) {
        if self.times.len() >= MAX_EVENT_TIMES {
            self.times.pop_front();
        }
        self.times.push_back((seq, timestamp_ms));
    }

    /// The timestamp of the event at `seq`, forgotten with those of the events before it
    /// (predictions are written in sequence order; an event before it has none).
    pub fn take(&mut self, seq: u64) -> Option<i64> {
        while let Some(&(s, t)) = self.times.front() {
            if s > seq {
                return None;
            }
            self.times.pop_front();
            if s == seq {
                return Some(t);
            }
        }
        None
    }

    /// How many timestamps are held.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

/// Latencies in whole milliseconds: exact counts up to [`HISTOGRAM_MS`], the rest in one
/// overflow count (with the largest seen).
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    over: u64,
    count: u64,
    sum_ms: f64,
    max_ms: i64,
}

/// Milliseconds counted one by one (a minute); larger latencies share one count.
pub const HISTOGRAM_MS: usize = 60_000;

/// The bucket bounds (seconds) of the Prometheus histogram, whole milliseconds: fine below
/// a second (steps of a quarter to two thirds), so that a quantile over any window (the
/// difference of two scrapes) is known to within its bucket; 50 ms is a bound.
const BOUNDS_SECONDS: [f64; 24] = [
    0.001, 0.002, 0.003, 0.005, 0.007, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2,
    0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
];

/// Percentiles of the latencies counted (milliseconds; `None` before the first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Predictions measured.
    pub count: u64,
    /// The median.
    pub p50: Option<u64>,
    /// The 90th percentile.
    pub p90: Option<u64>,
    /// The 99th percentile.
    pub p99: Option<u64>,
    /// The largest.
    pub max: Option<i64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; HISTOGRAM_MS + 1],
            over: 0,
            count: 0,
            sum_ms: 0.0,
            max_ms: 0,
        }
    }
}

impl LatencyHistogram {
    /// Counts one latency (a negative one, from clocks that disagree, as 0).
    pub fn observe(&mut self, ms: i64) {
        let ms = ms.max(0);
        match usize::try_from(ms).ok().filter(|&m| m <= HISTOGRAM_MS) {
            Some(m) => self.counts[m] += 1,
            None => self.over += 1,
        }
        self.count += 1;
        self.sum_ms += ms as f64;
        self.max_ms = self.max_ms.max(ms);
    }

    /// The smallest latency with at least a fraction `q` of the counted ones at or below
    /// it (the nearest rank); the largest seen when that is past the exact range.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (ms, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(ms as u64);
            }
        }
        Some(self.max_ms as u64)
    }

    /// The percentiles.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            p50: self.quantile(0.5),
            p90: self.quantile(0.9),
            p99: self.quantile(0.99),
            max: (self.count > 0).then_some(self.max_ms),
        }
    }

    /// The Prometheus histogram.
    pub fn buckets(&self) -> LatencyBuckets {
        let mut out = Vec::with_capacity(BOUNDS_SECONDS.len() + 1);
        let mut from = 0;
        for bound in BOUNDS_SECONDS {
            // Whole milliseconds at or below the bound.
            let to = ((bound * 1000.0).round() as usize).min(HISTOGRAM_MS);
            out.push((bound, self.counts[from..=to].iter().sum()));
            from = to + 1;
        }
        let rest = self.counts.get(from..).map_or(0, |c| c.iter().sum::<u64>()) + self.over;
        out.push((f64::INFINITY, rest));
        LatencyBuckets {
            sum_seconds: self.sum_ms / 1000.0,
            count: self.count,
            buckets: out,
        }
    }
}

/// The latencies as a Prometheus histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyBuckets {
    /// The sum of the latencies, in seconds.
    pub sum_seconds: f64,
    /// How many.
    pub count: u64,
    /// Each bucket's own count (not cumulative) by its upper bound in seconds; the last
    /// bound is infinite.
    pub buckets: Vec<(f64, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_come_back_by_position_and_skipped_ones_are_forgotten() {
        let mut t = EventTimes::default();
        for (seq, ts) in [(1, 10), (2, 20), (4, 40)] {
            t.note(seq, ts);
        }
        assert_eq!(t.take(2), Some(20), "1 had no prediction: forgotten");
        assert_eq!(t.len(), 1);
        assert_eq!(t.take(3), None, "3 was not noted; 4 stays");
        assert_eq!(t.take(4), Some(40));
        assert!(t.is_empty());
    }

    #[test]
    fn percentiles_are_nearest_ranks_and_buckets_add_up() {
        let mut h = LatencyHistogram::default();
        assert_eq!(h.summary(), LatencySummary::default());
        // 1..=100 ms, one each; one negative (counted as 0) and one past the exact range.
        for ms in 1..=100 {
            h.observe(ms);
        }
        h.observe(-3);
        h.observe(90_000);
        let s = h.summary();
        assert_eq!(s.count, 102);
        // Ranks: 51st of 102 is 50 ms (0, then 1..); 92nd is 91; 101st is 100.
        assert_eq!(
            (s.p50, s.p90, s.p99, s.max),
            (Some(50), Some(91), Some(100), Some(90_000))
        );
        assert_eq!(h.quantile(1.0), Some(90_000));
        let LatencyBuckets {
            sum_seconds: sum,
            count,
            buckets,
        } = h.buckets();
        assert_eq!(count, 102);
        assert_eq!(sum, (5050.0 + 90_000.0) / 1000.0);
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), 102);
        // At or below 1 ms: the 0 and the 1; below 2 ms: the 2 more; the last: 90 s.
        assert_eq!(&buckets[..2], &[(0.001, 2), (0.002, 1)]);
        assert_eq!(buckets.last(), Some(&(f64::INFINITY, 1)));
        // Every bound is a whole number of milliseconds (the counts' unit), rising: a
        // bucket holds exactly the latencies its bound says.
        for w in BOUNDS_SECONDS.windows(2) {
            assert!(w[0] < w[1], "{w:?}");
        }
        for b in BOUNDS_SECONDS {
            assert_eq!((b * 1000.0).round() / 1000.0, b, "{b}");
        }
        // 50 ms is a bound: its bucket ends at 50, the next one starts at 51.
        let at_50: u64 = buckets
            .iter()
            .take_while(|b| b.0 <= 0.05)
            .map(|b| b.1)
            .sum();
        assert_eq!(at_50, 2 + 49, "the 0, and 1..=50 ms");
    }
}
