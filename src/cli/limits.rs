//! The limits of the resource-shaping options and the value parsers that check every
//! count, duration and rate on the command line (and in a `--config` job file, which is
//! turned into command-line options): one place, shared by the file, generator and Kafka
//! modes. A value out of range is a usage error (exit code 2) naming the option.
//!
//! The limits keep one option from exhausting the machine's memory (the sizes grow with
//! the product of learners, features and labels) or overflowing a clock:
//!
//! | what | limit |
//! |---|---|
//! | weak learners (`--learners`) | [`MAX_LEARNERS`] |
//! | worker threads (`--workers`) | [`MAX_WORKERS`] |
//! | features (`--dim`, a data file's largest index or column count) | [`MAX_DIM`] |
//! | labels (`--num-labels`, `--labels`, a data file's label ids) | [`MAX_LABELS`] |
//! | learners times features per learner | [`MAX_LEARNER_FEATURES`] |
//! | durations in seconds or milliseconds | [`MAX_SECONDS`] seconds |
//! | rates (events per second) | 0, or at least 1 / [`MAX_SECONDS`] |
//! | the longest line of a data file (`--max-line-bytes`) | [`MAX_MAX_LINE_BYTES`] |
//! | the trees' memory budget (`--max-model-bytes`) | 1 to [`MAX_MODEL_BYTES`] |
//! | items of a click log (`--items`; they are its labels) | 2 to [`MAX_LABELS`] |
//! | one-hot slots per user feature (`--categories`) | 1 to [`MAX_CATEGORIES`] (and the features at most [`MAX_DIM`]) |
//! | simulated impressions (`--impressions`) | 1 to [`MAX_IMPRESSIONS`] |
//! | generated examples (`--examples`) | 0 to [`MAX_EXAMPLES`] |
//! | passes over a training file (`--loops`) | 1 to [`MAX_LOOPS`] |
//! | runs averaged into a learning curve (`--curve-runs`) | 1 to [`MAX_CURVE_RUNS`] |
//! | `serve --threads` | 1 to [`MAX_SERVE_THREADS`] |
//! | `serve --max-body-bytes` | 1 to [`MAX_MAX_LINE_BYTES`] |
//! | a model file read (`--load-model`, `inspect`, `predict`) | [`MAX_MODEL_FILE_BYTES`] |

pub use crate::model::MAX_MODEL_FILE_BYTES;
pub use flowboost_connectors::readers::MAX_MAX_LINE_BYTES;
pub use flowboost_operators::data::{MAX_DIM, MAX_LABELS};

/// The most one-hot slots per hashed user feature of a click log (`--categories`): the
/// features are the user features times the slots (plus the affinities), at most
/// [`MAX_DIM`] in all.
pub const MAX_CATEGORIES: usize = 1 << 16;

/// The most impressions a click simulator makes (`--impressions`): 10^9, a long run at
/// about a million impressions a second, not one that never ends.
pub const MAX_IMPRESSIONS: u64 = 1_000_000_000;

/// The most examples a generator makes (`--examples` of `eval`, `run` and `kafka
/// produce`): 10^10, about three hours at a million examples a second, not a run that
/// never ends.
pub const MAX_EXAMPLES: u64 = 10_000_000_000;

/// The most passes over a training file (`eval --loops`).
pub const MAX_LOOPS: usize = 10_000;

/// The most runs averaged into one line of a learning curve (`eval --curve-runs`): each
/// is a whole run, and every run's curve is kept until they are averaged.
pub const MAX_CURVE_RUNS: u64 = 1_000;

/// The most worker threads of `flowboost serve` (`--threads`).
pub const MAX_SERVE_THREADS: usize = 1_024;

/// The most weak learners of a model (`--learners`).
pub const MAX_LEARNERS: usize = 10_000;

/// The most timely worker threads of one process (`--workers`): timely keeps buffers for
/// every pair of workers, so memory grows with the square of the count.
pub const MAX_WORKERS: usize = 128;

/// The most features all the weak learners of a model may look at together: the stages
/// times the features per learner (`--feature-subset`, else the dimension), 2^25 =
/// 33,554,432. A Hoeffding tree takes about 110 bytes per feature it observes, so this
/// bounds the trees at about 3.7 GB (e.g. 32 learners on 2^20 features).
pub const MAX_LEARNER_FEATURES: usize = 1 << 25;

/// The largest memory budget of a model's trees (`--max-model-bytes`): 2^50 bytes (1 PiB),
/// far above any machine, low enough that no size computation overflows.
pub const MAX_MODEL_BYTES: u64 = 1 << 50;

/// The longest duration any option accepts, in seconds (10^9 s, about 31.7 years).
pub const MAX_SECONDS: f64 = 1e9;

/// An integer in `min..=max`.
fn integer(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let kind = if min == 0 {
        "an integer >= 0"
    } else {
        "a positive integer"
    };
    // The documented limits are shown; the bounds of the integer type are not.
    let range = if max >= 1 << 53 {
        String::new()
    } else {
        format!(" (at most {max})")
    };
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("must be {kind}{range}"))?;
    if n < min {
        return Err(format!("must be at least {min}{range}"));
    }
    if n > max {
        return Err(format!("must be at most {max}"));
    }
    Ok(n)
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A count of at least 1 (batch sizes, epochs, repetitions, loops, ...).
pub fn positive_u64(s: &str) -> Result<u64, String> {
    integer(s, 1, u64::MAX)
}

/// A count of at least 1, as `usize`.
pub fn positive_usize(s: &str) -> Result<usize, String> {
    integer(s, 1, usize::MAX as u64).map(to_usize)
}

/// `--merge-block`: a positive block size (kept as the job's `i64`).
pub fn positive_i64(s: &str) -> Result<i64, String> {
    integer(s, 1, i64::MAX as u64).map(|n| n as i64)
}

/// `--learners`: 1 to [`MAX_LEARNERS`].
pub fn learners(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_LEARNERS as u64).map(to_usize)
}

/// `--workers`: 1 to [`MAX_WORKERS`].
pub fn workers(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_WORKERS as u64).map(to_usize)
}

/// `--dim` and `--feature-subset`: 1 to [`MAX_DIM`].
pub fn features(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_DIM as u64).map(to_usize)
}

/// `--num-labels`: 2 to [`MAX_LABELS`].
pub fn num_labels(s: &str) -> Result<usize, String> {
    integer(s, 2, MAX_LABELS as u64).map(to_usize)
}

/// `--labels` (a multi-label file's label count) and `--k`: 1 to [`MAX_LABELS`].
pub fn labels(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_LABELS as u64).map(to_usize)
}

/// `--items` (a click log's items, its labels): 2 to [`MAX_LABELS`].
pub fn items(s: &str) -> Result<usize, String> {
    integer(s, 2, MAX_LABELS as u64).map(to_usize)
}

/// `--categories`: 1 to [`MAX_CATEGORIES`].
pub fn categories(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_CATEGORIES as u64).map(to_usize)
}

/// `--impressions`: 1 to [`MAX_IMPRESSIONS`].
pub fn impressions(s: &str) -> Result<u64, String> {
    integer(s, 1, MAX_IMPRESSIONS)
}

/// `--examples`: 0 to [`MAX_EXAMPLES`].
pub fn examples(s: &str) -> Result<u64, String> {
    integer(s, 0, MAX_EXAMPLES)
}

/// `--loops`: 1 to [`MAX_LOOPS`].
pub fn loops(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_LOOPS as u64).map(to_usize)
}

/// `--curve-runs`: 1 to [`MAX_CURVE_RUNS`].
pub fn curve_runs(s: &str) -> Result<u64, String> {
    integer(s, 1, MAX_CURVE_RUNS)
}

/// `serve --threads`: 1 to [`MAX_SERVE_THREADS`].
pub fn serve_threads(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_SERVE_THREADS as u64).map(to_usize)
}

/// `--max-line-bytes` and `serve --max-body-bytes`: 1 to [`MAX_MAX_LINE_BYTES`] (1 GiB).
pub fn line_bytes(s: &str) -> Result<usize, String> {
    integer(s, 1, MAX_MAX_LINE_BYTES as u64).map(to_usize)
}

/// `--max-model-bytes`: a number of bytes from 1 to [`MAX_MODEL_BYTES`], a plain integer
/// or one with a binary suffix `K`, `M` or `G` (2^10, 2^20, 2^30; `k`, `m`, `g` too).
pub fn model_bytes(s: &str) -> Result<u64, String> {
    let message = || {
        format!(
            "must be a number of bytes from 1 to {MAX_MODEL_BYTES}, a plain integer or with a suffix K, M or G (e.g. 64M)"
        )
    };
    let t = s.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(message());
    }
    let n: u64 = digits.parse().map_err(|_| message())?;
    match n.checked_mul(unit) {
        Some(b) if (1..=MAX_MODEL_BYTES).contains(&b) => Ok(b),
        _ => Err(message()),
    }
}

/// A duration in seconds: a finite number from 0 to [`MAX_SECONDS`].
pub fn seconds(s: &str) -> Result<f64, String> {
    let message = || format!("must be a number of seconds from 0 to {MAX_SECONDS:e}");
    let x: f64 = s.trim().parse().map_err(|_| message())?;
    if !(x.is_finite() && (0.0..=MAX_SECONDS).contains(&x)) {
        return Err(message());
    }
    Ok(x + 0.0)
}

/// A duration in milliseconds: an integer from 0 to [`MAX_SECONDS`] * 1000.
/// `kafka produce --timestamp-base`: 0 or more (milliseconds since the epoch).
pub fn non_negative_i64(s: &str) -> Result<i64, String> {
    integer(s, 0, i64::MAX as u64).map(|n| n as i64)
}

/// `--merge-block-ms`: 1 ms to [`MAX_SECONDS`] (a block of record timestamps; kept as the
/// job's `i64`).
pub fn merge_block_ms(s: &str) -> Result<i64, String> {
    let max = (MAX_SECONDS * 1000.0) as u64;
    integer(s, 1, max)
        .map(|n| n as i64)
        .map_err(|_| format!("must be a whole number of milliseconds from 1 to {max}"))
}

/// A duration in whole milliseconds, 0 to [`MAX_SECONDS`].
pub fn millis(s: &str) -> Result<u64, String> {
    let max = (MAX_SECONDS * 1000.0) as u64;
    integer(s, 0, max)
        .map_err(|_| format!("must be a whole number of milliseconds from 0 to {max}"))
}

/// A duration in milliseconds of at least 1 (an interval that must move on).
pub fn positive_millis(s: &str) -> Result<u64, String> {
    let max = (MAX_SECONDS * 1000.0) as u64;
    integer(s, 1, max)
        .map_err(|_| format!("must be a whole number of milliseconds from 1 to {max}"))
}

/// A rate in events per second: 0 (no limit) or a finite number of at least
/// 1 / [`MAX_SECONDS`] (one event per [`MAX_SECONDS`] seconds).
pub fn rate(s: &str) -> Result<f64, String> {
    let min = 1.0 / MAX_SECONDS;
    let message = || format!("must be 0 (no limit) or a number of events per second >= {min:e}");
    let x: f64 = s.trim().parse().map_err(|_| message())?;
    if !(x.is_finite() && (x == 0.0 || x >= min)) {
        return Err(message());
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_finite_non_negative_and_bounded() {
        assert_eq!(seconds("2.5"), Ok(2.5));
        assert_eq!(seconds("0"), Ok(0.0));
        assert_eq!(seconds("-0"), Ok(0.0));
        for bad in ["1e20", "nan", "inf", "-1", "x", ""] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(millis("1000"), Ok(1000));
        assert!(millis("1e20").is_err());
        assert!(millis("18446744073709551615").is_err());
        assert_eq!(rate("0"), Ok(0.0));
        assert_eq!(rate("1000"), Ok(1000.0));
        for bad in ["1e-300", "-1", "nan", "inf"] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_are_positive_and_bounded() {
        assert_eq!(learners("10"), Ok(10));
        assert!(learners("0").is_err());
        assert!(
            learners("1000000000")
                .unwrap_err()
                .contains("at most 10000")
        );
        assert!(learners("-1").unwrap_err().contains("positive integer"));
        assert!(workers("500").is_err());
        assert!(features("1000000000").is_err());
        assert!(num_labels("1").is_err());
        assert_eq!(positive_i64("64"), Ok(64));
        assert!(positive_i64("0").is_err());
        assert!(positive_u64("0").is_err());
        assert_eq!(items("46"), Ok(46));
        assert!(items("1000000").unwrap_err().contains("at most 65536"));
        assert!(
            categories("100000000")
                .unwrap_err()
                .contains("at most 65536")
        );
        assert!(categories("0").is_err());
        assert!(
            impressions("18446744073709551615")
                .unwrap_err()
                .contains("at most 1000000000")
        );
    }

    #[test]
    fn model_bytes_take_binary_suffixes_and_are_bounded() {
        assert_eq!(model_bytes("1"), Ok(1));
        assert_eq!(model_bytes("65536"), Ok(65536));
        assert_eq!(model_bytes("64M"), Ok(64 << 20));
        assert_eq!(model_bytes(" 2k "), Ok(2048));
        assert_eq!(model_bytes("1G"), Ok(1 << 30));
        assert_eq!(model_bytes("1048576G"), Ok(MAX_MODEL_BYTES));
        for bad in [
            "0",
            "0M",
            "-1",
            "1.5M",
            "M",
            "",
            "64MB",
            "1e6",
            "+5",
            "2097152G",
            "x",
            "99999999999999999999",
        ] {
            let e = model_bytes(bad).unwrap_err();
            assert!(e.contains("number of bytes"), "{bad}: {e}");
        }
    }
}
