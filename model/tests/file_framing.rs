//! The model file's framing (moved from `file.rs`'s unit tests: they build a `Model`,
//! which stands above the framing): endless and oversized inputs are refused early.

use flowboost_model::{MAX_MODEL_FILE_BYTES, Model, read_bytes, read_limited};
use flowboost_operators::boosters::{Algorithm, BoosterConfig};
use flowboost_operators::data::{Schema, Task};
use flowboost_operators::learners::WeakKind;
use std::io::Read;

fn model_bytes() -> Vec<u8> {
    let mut config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 1);
    config.learners = 2;
    let model = Model::new(config, Schema::numeric(3, 2, Task::Binary)).unwrap();
    let mut bytes = Vec::new();
    model.save(&mut bytes).unwrap();
    bytes
}

/// An endless input is never read whole: zeros are not a model (after the magic
/// bytes' length), and a model followed by zeros forever is one with bytes after
/// its end (after the declared lengths and a short probe).
#[test]
fn endless_inputs_are_read_as_far_as_the_framing_says() {
    let e = match read_limited(std::io::repeat(0), "zeros") {
        Ok(bytes) => read_bytes(&bytes, "zeros").unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("not a flowboost model"), "{e}");
    let bytes = model_bytes();
    let endless = (&bytes[..]).chain(std::io::repeat(0));
    let e = read_limited(endless, "m.fbm").unwrap_err().to_string();
    assert!(
        e.contains("m.fbm") && e.contains("more than 65535 bytes after the end"),
        "{e}"
    );
    // The model alone reads back whole; a prefix of it is returned for `read_bytes`
    // to name what is missing.
    assert_eq!(read_limited(&bytes[..], "m.fbm").unwrap(), bytes);
    let half = read_limited(&bytes[..bytes.len() / 2], "m.fbm").unwrap();
    let e = read_bytes(&half, "m.fbm").unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
}

/// A body length beyond the limit is refused before anything is read or allocated.
#[test]
fn a_body_beyond_the_limit_is_refused_from_its_declared_length() {
    let mut bytes = model_bytes();
    let header_len = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
    let at = 24 + header_len + 4;
    bytes[at..at + 8].copy_from_slice(&(MAX_MODEL_FILE_BYTES + 1).to_le_bytes());
    let e = read_limited(&bytes[..], "big.fbm").unwrap_err().to_string();
    assert!(e.contains("big.fbm") && e.contains("16 GiB"), "{e}");
}
