//! The binary boosters against hand-computed cases and against a direct transcription of
//! the paper's Algorithms 1 and 2 (Beygelzimer, Kale and Luo 2015).

use flowboost_operators::boosters::{
    AdaBoostOlStage, Algorithm, AnyStage, BoosterConfig, OnlineBbmStage, OzaStage, OzaVotes,
    WeakSlot, build, logistic_weight,
};
use flowboost_operators::data::{Example, Features, Label, Schema, Task};
use flowboost_operators::engine::{InFlight, Prediction, Stage};
use flowboost_operators::learners::SharedViews;
use flowboost_operators::learners::{
    LinearConfig, LinearLearner, WeakKind, WeakLearner, WeakModel,
};
use flowboost_operators::rng::{seeded, uniform};
use std::sync::Arc;

fn schema() -> Schema {
    Schema::numeric(3, 2, Task::Binary)
}

fn linear(seed: u64) -> LinearLearner {
    LinearLearner::new(&schema(), LinearConfig::default(), seed)
}

/// A small noisy linear stream with labels in {0, 1}.
fn stream(n: usize) -> Vec<Arc<Example>> {
    let mut rng = seeded(42, 0);
    (0..n)
        .map(|i| {
            let x: Vec<f64> = (0..3).map(|_| uniform(&mut rng) * 2.0 - 1.0).collect();
            let noise = uniform(&mut rng) < 0.1;
            let y = u32::from((x[0] - 0.5 * x[1] + 0.2 > 0.0) != noise);
            Arc::new(Example {
                id: i as u64,
                features: Features::Dense(x),
                label: Some(Label::Class(y)),
            })
        })
        .collect()
}

fn sign_of(l: &LinearLearner, x: &Features) -> f64 {
    let mut p = [0.0; 2];
    l.predict(x, &mut p);
    if p[1] >= p[0] { 1.0 } else { -1.0 }
}

#[test]
fn online_bbm_weights_match_the_binomial_formula_by_hand() {
    // N = 3, i = 1: m = N - i = 2 trials, p = 1/2 + gamma/2 = 0.6:
    // C(2, k) 0.6^k 0.4^(2-k) = [0.16, 0.48, 0.36]; normalized by the max 0.48.
    let w = OnlineBbmStage::normalized_weights(2, 0.2);
    let expect = [0.16 / 0.48, 1.0, 0.36 / 0.48];
    for (a, b) in w.iter().zip(expect) {
        assert!((a - b).abs() < 1e-15, "{w:?}");
    }
    let stage = OnlineBbmStage::new(
        WeakSlot::new(WeakModel::Linear(linear(1))),
        1,
        3,
        0.2,
        false,
        1,
    );
    // k = floor((N - i - s + 1) / 2) = floor((3 - s) / 2).
    for (s, k) in [
        (0.0, Some(1)),
        (1.0, Some(1)),
        (-1.0, Some(2)),
        (2.0, Some(0)),
        (3.0, Some(0)),
        (4.0, None),
        (-2.0, Some(2)),
        (-3.0, None),
    ] {
        let expect = k.map_or(0.0, |k: usize| expect[k]);
        assert!((stage.weight(s) - expect).abs() < 1e-15, "margin {s}");
    }
}

#[test]
fn online_bbm_weights_stay_finite_for_a_thousand_learners() {
    for m in [0usize, 1, 10, 999] {
        let w = OnlineBbmStage::normalized_weights(m, 0.1);
        assert_eq!(w.len(), m + 1);
        assert!(w.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
        assert!(w.contains(&1.0));
    }
}

#[test]
fn adaboost_ol_first_round_by_hand() {
    // Fresh learners predict p = 1/2, so WL(x) = +1 (sign(0) = +1). Label y = -1 (class 0).
    // Stage 1: z = -1, s^0 = 0, s^1 = 0 + alpha z = 0 (alpha = 0), eta_1 = 4,
    //   alpha <- Pi(0 + 4 (-1) / (1 + e^0)) = -2; weight 1 / (1 + e^0) = 1/2.
    // Stage 2: same margins (alpha was 0), alpha <- -2.
    let mut s1 = AdaBoostOlStage::new(
        WeakSlot::new(WeakModel::Linear(linear(1))),
        1,
        false,
        true,
        1,
    );
    let mut s2 = AdaBoostOlStage::new(
        WeakSlot::new(WeakModel::Linear(linear(2))),
        2,
        false,
        true,
        1,
    );
    let ex = Arc::new(Example {
        id: 0,
        features: Features::Dense(vec![0.5, -0.5, 1.0]),
        label: Some(Label::Class(0)),
    });
    let mut rec = InFlight::new(0, ex.clone(), 1);
    s1.process(&mut rec, &mut SharedViews::last());
    s2.process(&mut rec, &mut SharedViews::last());
    assert_eq!(s1.alpha(), -2.0);
    assert_eq!(s2.alpha(), -2.0);
    assert_eq!(rec.scores, vec![0.0]);
    assert_eq!(rec.trail, vec![0.0, 0.0]);
    // Each learner learned (x, y) with weight 1/2: the same as a fresh learner taught so.
    let mut reference = linear(1);
    reference.learn(&ex.features, 0, 0.5);
    let (mut a, mut b) = ([0.0; 2], [0.0; 2]);
    reference.predict(&ex.features, &mut a);
    s1.weak().model().predict(&ex.features, &mut b);
    assert_eq!(a, b);
}

#[test]
fn adaboost_ol_matches_a_transcription_of_algorithm_2() {
    let n = 3;
    let mut config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Linear, 9);
    config.learners = n;
    let booster = build(&schema(), &config).unwrap();
    let mut runner = booster.into_sequential();
    // The reference: the same weak learners (same seeds), Algorithm 2 written out.
    let mut wl: Vec<LinearLearner> = (0..n)
        .map(
            |i| match flowboost_operators::boosters::build_weak(&schema(), &config, i) {
                WeakModel::Linear(l) => l,
                _ => unreachable!(),
            },
        )
        .collect();
    let mut alpha = vec![0.0f64; n];
    let mut v = vec![0.0f64; n]; // log Hedge weights
    for (t, ex) in stream(300).into_iter().enumerate() {
        let t = t + 1;
        let x = &ex.features;
        let y = if ex.label.as_ref().unwrap().class() == Some(1) {
            1.0
        } else {
            -1.0
        };
        let h: Vec<f64> = wl.iter().map(|l| sign_of(l, x)).collect();
        // Experts' raw scores with the weights before the update.
        let mut raw = vec![0.0; n];
        let mut acc = 0.0;
        for i in 0..n {
            acc += alpha[i] * h[i];
            raw[i] = acc;
        }
        let mut out = Prediction::default();
        runner.process(ex.clone(), &mut out);
        let chosen = out.expert as usize - 1;
        assert!((out.scores[0] - raw[chosen]).abs() < 1e-12, "t={t}");
        assert_eq!(out.class, u32::from(raw[chosen] >= 0.0));
        // Updates.
        let eta = 4.0 / (t as f64).sqrt();
        let mut s_prev = 0.0;
        for i in 0..n {
            let z = y * h[i];
            let s = s_prev + alpha[i] * z;
            let w = 1.0 / (1.0 + s_prev.exp());
            alpha[i] = (alpha[i] + eta * z / (1.0 + s.exp())).clamp(-2.0, 2.0);
            wl[i].learn(x, u32::from(y > 0.0), w);
            v[i] -= f64::from((raw[i] >= 0.0) != (y > 0.0));
            s_prev = s;
        }
    }
    // The stages' alphas and the terminal's Hedge weights agree with the transcription.
    for (i, stage) in runner.stages().iter().enumerate() {
        let AnyStage::AdaBoostOl(stage) = stage else {
            unreachable!()
        };
        let a = stage.alpha();
        assert!(
            (a - alpha[i]).abs() < 1e-12,
            "alpha {i}: {a} vs {}",
            alpha[i]
        );
    }
    let p = runner.terminal().hedge_probabilities().unwrap();
    let max = v.iter().cloned().fold(f64::MIN, f64::max);
    let z: f64 = v.iter().map(|l| (l - max).exp()).sum();
    for i in 0..n {
        assert!((p[i] - (v[i] - max).exp() / z).abs() < 1e-12);
    }
}

#[test]
fn online_bbm_matches_a_transcription_of_algorithm_1() {
    let n = 4;
    let gamma = 0.1;
    let mut config = BoosterConfig::new(Algorithm::OnlineBbm, WeakKind::Linear, 3);
    config.learners = n;
    config.gamma = gamma;
    let mut runner = build(&schema(), &config).unwrap().into_sequential();
    let mut wl: Vec<LinearLearner> = (0..n)
        .map(
            |i| match flowboost_operators::boosters::build_weak(&schema(), &config, i) {
                WeakModel::Linear(l) => l,
                _ => unreachable!(),
            },
        )
        .collect();
    let choose = |m: u64, k: u64| -> f64 {
        (0..k).fold(1.0, |acc, j| acc * (m - j) as f64 / (j + 1) as f64)
    };
    for ex in stream(300) {
        let x = &ex.features;
        let y = if ex.label.as_ref().unwrap().class() == Some(1) {
            1.0
        } else {
            -1.0
        };
        let h: Vec<f64> = wl.iter().map(|l| sign_of(l, x)).collect();
        let mut out = Prediction::default();
        runner.process(ex.clone(), &mut out);
        let total: f64 = h.iter().sum();
        assert_eq!(out.scores, vec![total]);
        assert_eq!(out.class, u32::from(total >= 0.0));
        let mut s = 0.0;
        for i in 1..=n {
            let m = (n - i) as i64;
            let k = ((m as f64 - s + 1.0) / 2.0).floor() as i64;
            let p = 0.5 + gamma / 2.0;
            let w = if k < 0 || k > m {
                0.0
            } else {
                choose(m as u64, k as u64) * p.powi(k as i32) * (1.0 - p).powi((m - k) as i32)
            };
            let max = (0..=m)
                .map(|j| {
                    choose(m as u64, j as u64) * p.powi(j as i32) * (1.0 - p).powi((m - j) as i32)
                })
                .fold(0.0, f64::max);
            wl[i - 1].learn(x, u32::from(y > 0.0), w / max);
            s += y * h[i - 1];
        }
    }
    // Same learners at the end: their predictions agree on fresh points.
    for ex in stream(20) {
        let mut a = [0.0; 2];
        let mut b = [0.0; 2];
        for (i, stage) in runner.stages().iter().enumerate() {
            let AnyStage::OnlineBbm(stage) = stage else {
                unreachable!()
            };
            stage.weak().model().predict(&ex.features, &mut a);
            wl[i].predict(&ex.features, &mut b);
            assert!((a[0] - b[0]).abs() < 1e-9, "learner {i}: {a:?} vs {b:?}");
        }
    }
}

#[test]
fn logistic_weight_is_stable_for_huge_margins() {
    assert_eq!(logistic_weight(0.0), 0.5);
    assert_eq!(logistic_weight(1e6), 0.0);
    assert_eq!(logistic_weight(-1e6), 1.0);
    assert!((logistic_weight(2.0) - 1.0 / (1.0 + 2f64.exp())).abs() < 1e-16);
    assert!((logistic_weight(-30.0) - 1.0 / (1.0 + (-30f64).exp())).abs() < 1e-16);
    assert!(logistic_weight(f64::INFINITY) == 0.0 && logistic_weight(f64::NEG_INFINITY) == 1.0);
}

#[test]
fn oza_vote_weight_by_hand() {
    let mut stage = OzaStage::new(
        WeakSlot::new(WeakModel::Linear(linear(1))),
        1,
        1,
        OzaVotes::Paper,
    );
    assert_eq!(stage.vote_weight(), 0.0); // no statistics yet
    // One labeled record: lambda = 1; the learner learns it with weight K ~ Poisson(1).
    let ex = Arc::new(Example {
        id: 0,
        features: Features::Dense(vec![1.0, 0.0, 0.0]),
        label: Some(Label::Class(1)),
    });
    let mut rec = InFlight::new(0, ex, 2);
    stage.process(&mut rec, &mut SharedViews::last());
    // Either right (sc = 1, lambda <- 1 * 1 / (2 * 1) = 0.5, e = 0 -> floored 1e-6) or
    // wrong (sw = 1, lambda <- 0.5, e = 1 -> vote 0).
    assert_eq!(rec.carry, 0.5);
    let w = stage.vote_weight();
    assert!(
        w == 0.0 || (w - ((1.0 - 1e-6) / 1e-6f64).ln()).abs() < 1e-9,
        "{w}"
    );
}

/// An Oza stage over linear learner `seed` with the statistics `lambda_sc`, `lambda_sw`
/// (set through its serialized form: they are not public), trained on `stream` first.
fn oza_with(
    seed: u64,
    trained: usize,
    lambda_sc: f64,
    lambda_sw: f64,
    votes: OzaVotes,
) -> OzaStage {
    let mut learner = WeakModel::Linear(linear(seed));
    for ex in stream(trained) {
        let Some(Label::Class(y)) = ex.label else {
            unreachable!()
        };
        learner.learn(&ex.features, y, 1.0);
    }
    let stage = OzaStage::new(WeakSlot::new(learner), 1, seed, votes);
    // (As text: the generator's state is a u128, which `serde_json::Value` cannot hold.)
    let fresh = serde_json::to_string(&stage).unwrap();
    let json = fresh
        .replace("\"lambda_sc\":0.0", &format!("\"lambda_sc\":{lambda_sc:?}"))
        .replace("\"lambda_sw\":0.0", &format!("\"lambda_sw\":{lambda_sw:?}"));
    for (name, v) in [("lambda_sc", lambda_sc), ("lambda_sw", lambda_sw)] {
        assert!(json.contains(&format!("\"{name}\":{v:?}")), "{json}");
    }
    let mut stage: OzaStage = serde_json::from_str(&json).unwrap();
    // The vote rule is a setting, not state: a deserialized stage has the default.
    stage.set_votes(votes);
    stage
}

#[test]
fn oza_vote_weights_of_both_rules_by_hand() {
    let ln3 = 3f64.ln();
    let floored = ((1.0 - 1e-6) / 1e-6f64).ln();
    // (lambda_sc, lambda_sw, the paper's weight, MOA's weight)
    for (sc, sw, paper, moa) in [
        (3.0, 1.0, ln3, ln3),     // e = 1/4
        (4.0, 0.0, floored, 0.0), // e = 0: floored by the paper's rule, 0 for MOA
        (1.0, 1.0, 0.0, 0.0),     // e = 1/2
        (1.0, 2.0, 0.0, 0.0),     // e > 1/2
        (0.0, 0.0, 0.0, 0.0),     // no statistics
    ] {
        let p = oza_with(1, 0, sc, sw, OzaVotes::Paper).vote_weight();
        let m = oza_with(1, 0, sc, sw, OzaVotes::Moa).vote_weight();
        assert!((p - paper).abs() < 1e-12, "paper {sc} {sw}: {p}");
        assert!((m - moa).abs() < 1e-12, "moa {sc} {sw}: {m}");
    }
}

/// MOA's rule: each stage adds its weight times its predicted distribution, and the vote
/// stops at the first stage of weight 0; the paper's rule adds each weight to the
/// predicted label and goes on past a stage of weight 0.
#[test]
fn oza_moa_votes_add_weighted_distributions_until_a_stage_of_weight_zero() {
    let x = Features::Dense(vec![0.3, -0.8, 0.5]);
    let predict_only = || {
        InFlight::predict_only(
            0,
            Arc::new(Example {
                id: 0,
                features: x.clone(),
                label: None,
            }),
            2,
        )
    };
    let chain = |votes| {
        vec![
            oza_with(1, 300, 3.0, 1.0, votes), // weight ln 3
            oza_with(2, 50, 7.0, 3.0, votes),  // weight ln(7/3)
            oza_with(3, 0, 2.0, 2.0, votes),   // weight 0
            oza_with(4, 200, 9.0, 1.0, votes), // weight ln 9, after the stop
        ]
    };
    let dist = |seed: u64, trained: usize| {
        let mut p = vec![0.0; 2];
        oza_with(seed, trained, 0.0, 0.0, OzaVotes::Moa)
            .learner()
            .predict(&x, &mut p);
        p
    };
    let (p1, p2) = (dist(1, 300), dist(2, 50));
    assert!(p1[0] != p1[1] && p2[0] != p2[1], "{p1:?} {p2:?}");
    let mut rec = predict_only();
    for stage in &mut chain(OzaVotes::Moa) {
        stage.process(&mut rec, &mut SharedViews::last());
    }
    let (w1, w2) = (3f64.ln(), (7.0f64 / 3.0).ln());
    let expected: Vec<f64> = (0..2).map(|c| w1 * p1[c] + w2 * p2[c]).collect();
    assert_close(&rec.scores, &expected);
    assert!(rec.votes_closed);
    // The paper's rule: hard votes, stage 4 included.
    let mut rec = predict_only();
    for stage in &mut chain(OzaVotes::Paper) {
        stage.process(&mut rec, &mut SharedViews::last());
    }
    let top = |p: &[f64]| usize::from(p[1] > p[0]);
    let mut expected = [0.0; 2];
    expected[top(&p1)] += w1;
    expected[top(&p2)] += w2;
    expected[top(&dist(4, 200))] += 9f64.ln();
    assert_close(&rec.scores, &expected);
    assert!(!rec.votes_closed);
}

/// `got` equals `expected` to within 1e-12 in every entry.
fn assert_close(got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        assert!((g - e).abs() < 1e-12, "{got:?} against {expected:?}");
    }
}
