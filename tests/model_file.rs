//! The model file format under damage: a real model file (a Hoeffding-tree booster with
//! pending feedback) mutated a few hundred ways (bytes flipped, truncated, extended,
//! spliced) is always refused with an error naming the file and never panics; the same
//! mutations with their checksums repaired (what a checksum cannot catch) never panic in
//! reading and checking either. (A crafted file with valid checksums can still hold a
//! tree whose inner structure is wrong; the learners do not validate their own invariants
//! on load yet: the model-file fuzz target of the hardening work is where that belongs.)

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::model::{Feedback, FeedbackOutcome, Model, SavedModel};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams};
use flowboost::operators::data::{Example, Label};
use flowboost::operators::learners::WeakKind;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn trained_model_bytes() -> (Vec<u8>, Vec<Example>) {
    let mut g = GeneratorConfig::preset("multiclass", 2).unwrap();
    g.examples = 600;
    let generator = Generator::new(g).unwrap();
    let schema = generator.schema().clone();
    let examples: Vec<Example> = generator.collect();
    let mut config = BoosterConfig::new(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 4);
    config.learners = 3;
    config.tree_params = TreeParams::Random;
    let mut model = Model::new(config, schema).unwrap();
    for (i, ex) in examples.iter().enumerate() {
        if i % 5 == 0 {
            // Some events wait for their label, which comes later (or not at all).
            let mut hidden = ex.clone();
            let label = hidden.label.take();
            model.predict_pending(hidden);
            if i % 10 == 0
                && let Some(Label::Class(y)) = label
            {
                assert_eq!(
                    model.learn_feedback(ex.id, Feedback::Label(Label::Class(y))),
                    FeedbackOutcome::Joined
                );
            }
        } else {
            model.learn_one(ex).unwrap();
        }
    }
    assert!(model.pending() > 0);
    let mut bytes = Vec::new();
    model.save(&mut bytes).unwrap();
    (bytes, examples)
}

/// A small deterministic generator for the mutations.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 17
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(bytes: &[u8], rng: &mut Lcg) -> Vec<u8> {
    let mut m = bytes.to_vec();
    match rng.below(5) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(m.len());
                m[at] ^= 1 << rng.below(8);
            }
        }
        1 => m.truncate(rng.below(m.len())),
        2 => {
            let at = rng.below(m.len());
            let extra: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next() as u8).collect();
            m.splice(at..at, extra);
        }
        3 => {
            let at = rng.below(m.len());
            let len = rng.below(m.len() - at).min(256);
            m.drain(at..at + len);
        }
        _ => {
            let at = rng.below(m.len());
            m[at] = rng.next() as u8;
        }
    }
    m
}

/// The offsets of the header checksum, the body length and the body checksum, so a
/// mutated body can have its checksum repaired.
fn repair_checksums(m: &mut [u8]) -> bool {
    if m.len() < 24 {
        return false;
    }
    let hlen = u32::from_le_bytes(m[20..24].try_into().unwrap()) as usize;
    let hcrc_at = 24 + hlen;
    if hcrc_at + 12 > m.len() {
        return false;
    }
    let hcrc = crc32fast::hash(&m[24..hcrc_at]);
    m[hcrc_at..hcrc_at + 4].copy_from_slice(&hcrc.to_le_bytes());
    let blen_at = hcrc_at + 4;
    let blen = u64::from_le_bytes(m[blen_at..blen_at + 8].try_into().unwrap()) as usize;
    let body_at = blen_at + 8;
    if body_at.checked_add(blen).is_none_or(|e| e + 4 != m.len()) {
        return false;
    }
    let bcrc = crc32fast::hash(&m[body_at..body_at + blen]);
    m[body_at + blen..].copy_from_slice(&bcrc.to_le_bytes());
    true
}

#[test]
fn a_damaged_model_file_is_refused_with_the_file_named() {
    let (bytes, _) = trained_model_bytes();
    assert!(SavedModel::from_bytes(&bytes, "model.fbm").is_ok());
    let mut rng = Lcg(17);
    let mut refused = 0;
    for _ in 0..400 {
        let m = mutate(&bytes, &mut rng);
        if m == bytes {
            continue;
        }
        let result = catch_unwind(|| SavedModel::from_bytes(&m, "model.fbm").map(|_| ()));
        match result {
            Err(_) => panic!("reading a damaged model panicked"),
            Ok(Ok(())) => panic!("a damaged model was accepted"),
            Ok(Err(e)) => {
                let text = e.to_string();
                assert!(text.starts_with("model.fbm: "), "{text}");
                refused += 1;
            }
        }
    }
    assert!(refused > 350, "{refused}");
}

#[test]
fn damage_past_the_checksums_never_panics() {
    let (bytes, examples) = trained_model_bytes();
    let mut tried = 0;
    let mut loaded = 0;
    // Several seeds: the trees' state is checked on load (layout, node links, leaf
    // statistics' sizes), so no damage reaches code that indexes by it.
    for seed in [99u64, 5, 31, 77, 1234, 4321] {
        let mut rng = Lcg(seed);
        for _ in 0..600 {
            let mut m = mutate(&bytes, &mut rng);
            if !repair_checksums(&mut m) || m == bytes {
                continue;
            }
            tried += 1;
            // A model that loads is used: it predicts and learns a few examples.
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let Ok(mut model) = Model::load(&m[..]) else {
                    return false;
                };
                for ex in examples.iter().take(30) {
                    model.predict_one(ex);
                    let _ = model.learn_one(ex);
                }
                true
            }));
            match outcome {
                Ok(true) => loaded += 1,
                Ok(false) => {}
                Err(_) => panic!(
                    "reading a model with repaired checksums made flowboost panic (seed {seed})"
                ),
            }
        }
    }
    assert!(tried > 600, "{tried}");
    eprintln!("{tried} mutations past the checksums, {loaded} still loaded");
}

/// A version 2 file (written before trees could hold inactive leaves: the same body as
/// version 3's, here a version 3 file written by an older flowboost, with events waiting
/// for their feedback) still loads and runs; so does the version 3 file itself.
#[test]
fn version_2_files_still_load() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v3-feedback-pending.fbm");
    let bytes = std::fs::read(fixture).unwrap();
    let saved = SavedModel::from_bytes(&bytes, "model.fbm").unwrap();
    saved.chain("model.fbm").unwrap();
    let at = flowboost::model::MAGIC.len();
    assert_eq!(bytes[at..at + 4], 3u32.to_le_bytes());
    let mut m = bytes.clone();
    m[at..at + 4].copy_from_slice(&2u32.to_le_bytes());
    repair_checksums(&mut m);
    let saved = SavedModel::from_bytes(&m, "model.fbm").unwrap();
    saved.chain("model.fbm").unwrap();
}

/// A file of an older or a newer format version is refused with both versions named (the
/// version field follows the magic bytes; its checksum is repaired so only the version
/// differs).
#[test]
fn other_format_versions_are_refused_by_name() {
    let (bytes, _) = trained_model_bytes();
    let at = flowboost::model::MAGIC.len();
    for (version, words) in [
        (1u32, ["version 1", "older", "train the model again"]),
        (
            flowboost::model::FORMAT_VERSION + 1,
            ["newer", "use a newer flowboost", "model.fbm"],
        ),
    ] {
        let mut m = bytes.clone();
        m[at..at + 4].copy_from_slice(&version.to_le_bytes());
        repair_checksums(&mut m);
        let err = SavedModel::from_bytes(&m, "model.fbm")
            .unwrap_err()
            .to_string();
        for w in words {
            assert!(err.contains(w), "{err}");
        }
    }
}

/// A loaded model keeps its waiting events under a new time-to-live, and learns from
/// their feedback; the default time-to-live bounds what waits.
#[test]
fn a_loaded_model_keeps_its_waiting_events_under_a_new_time_to_live() {
    let (bytes, examples) = trained_model_bytes();
    let loaded = Model::load(&bytes[..]).unwrap();
    let waiting = loaded.pending();
    assert!(waiting > 0);
    let mut model = loaded.with_pending_ttl(1_000);
    assert_eq!(model.pending(), waiting);
    // Event 5 waited for its label (every fifth event did; every tenth got it).
    let Some(Label::Class(y)) = examples[5].label.clone() else {
        panic!("example 5 has a class");
    };
    assert_eq!(
        model.learn_feedback(examples[5].id, Feedback::Label(Label::Class(y))),
        FeedbackOutcome::Joined
    );
    assert_eq!(model.pending(), waiting - 1);
    // Under a short time-to-live, the rest expire.
    let mut short = Model::load(&bytes[..]).unwrap().with_pending_ttl(3);
    for ex in examples.iter().take(10) {
        short.learn_one(ex).unwrap();
        let mut hidden = ex.clone();
        hidden.label = None;
        hidden.id += 1_000_000;
        short.predict_pending(hidden);
    }
    assert!(short.pending() <= 3, "{}", short.pending());
}
