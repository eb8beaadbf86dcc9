//! The multi-label ranking boosters (Jung and Tewari 2018) against hand-computed cost
//! vectors and alpha updates, the paper's VFDT feeding, a transcription of Algorithm 3,
//! and an ensemble that mixes binary, single-label and multi-label weak learners.

use flowboost_operators::boosters::{
    AdaOlmrStage, Algorithm, AnyStage, BoosterConfig, OnlineBmrStage, TreeParams, build,
    logistic_rank_gradient,
};
use flowboost_operators::data::{Example, Features, Label, Schema, Task};
use flowboost_operators::engine::{
    ExpertSelection, InFlight, Prediction, ScoreKind, SequentialRunner, Stage, Terminal,
};
use flowboost_operators::learners::SharedViews;
use flowboost_operators::learners::{
    BinaryRelevance, HoeffdingTree, HoeffdingTreeConfig, LabelVsRest, LinearConfig, LinearLearner,
    WeakKind, WeakLearner, WeakModel, binary_schema,
};
use flowboost_operators::metrics::rank_loss;
use flowboost_operators::potentials::{PairLoss, RankingPotential};
use flowboost_operators::rng::{seeded, uniform};
use std::sync::Arc;

const DIM: usize = 4;

fn schema(k: usize) -> Schema {
    Schema::numeric(DIM, k, Task::Multilabel)
}

fn linear(k: usize, seed: u64) -> WeakModel {
    WeakModel::Linear(LinearLearner::new(
        &schema(k),
        LinearConfig::default(),
        seed,
    ))
}

fn tree(k: usize, seed: u64) -> WeakModel {
    let config = HoeffdingTreeConfig {
        grace_period: 10.0,
        split_confidence: 0.1,
        tie_threshold: 0.1,
        ..HoeffdingTreeConfig::default()
    };
    WeakModel::Tree(HoeffdingTree::new(&schema(k), config, seed))
}

/// A noisy multi-label stream: label `l` is relevant when `x . w_l + b_l > 0`.
fn stream(n: usize, k: usize, seed: u64) -> Vec<Arc<Example>> {
    let mut rng = seeded(seed, 0);
    let w: Vec<Vec<f64>> = (0..k)
        .map(|_| (0..DIM).map(|_| uniform(&mut rng) * 2.0 - 1.0).collect())
        .collect();
    (0..n)
        .map(|i| {
            let x: Vec<f64> = (0..DIM).map(|_| uniform(&mut rng) * 2.0 - 1.0).collect();
            let mut y = Vec::new();
            for (l, wl) in w.iter().enumerate() {
                let m: f64 = wl.iter().zip(&x).map(|(a, b)| a * b).sum::<f64>() - 0.3;
                if (m > 0.0) != (uniform(&mut rng) < 0.05) {
                    y.push(l as u32);
                }
            }
            Arc::new(Example {
                id: i as u64,
                features: Features::Dense(x),
                label: Some(Label::set(y)),
            })
        })
        .collect()
}

fn predict(m: &WeakModel, x: &Features) -> Vec<f64> {
    let mut p = vec![0.0; m.num_labels()];
    m.predict(x, &mut p);
    p
}

fn probes() -> Vec<Features> {
    stream(20, 1, 99)
        .iter()
        .map(|e| e.features.clone())
        .collect()
}

fn same_model(a: &WeakModel, b: &WeakModel) {
    for x in probes() {
        let (pa, pb) = (predict(a, &x), predict(b, &x));
        let ba: Vec<u64> = pa.iter().map(|v| v.to_bits()).collect();
        let bb: Vec<u64> = pb.iter().map(|v| v.to_bits()).collect();
        assert_eq!(ba, bb, "{pa:?} vs {pb:?}");
    }
    assert_eq!(
        serde_json::to_string(a).unwrap(),
        serde_json::to_string(b).unwrap()
    );
}

/// The same predictions on the probes up to `tol` (for transcriptions whose arithmetic
/// differs in the last bits).
fn similar_model(a: &WeakModel, b: &WeakModel, tol: f64) {
    for x in probes() {
        let (pa, pb) = (predict(a, &x), predict(b, &x));
        assert!(close(&pa, &pb, tol), "{pa:?} vs {pb:?}");
    }
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn bmr_cost_vectors_by_hand() {
    // k = 3, Y = {0}, gamma = 0.1: u = (0.4, 0.3, 0.3); stage 1 of 2 (one draw left), s = 0.
    // D = X_r - X_0 is +1 w.p. 0.3, -1 w.p. 0.4, 0 w.p. 0.3.
    // Rank: c[0] = P(D > 1) + P(D = 1)/2 = 0.15; c[1] = (F(1) + F(0)) / 2 with
    // F(1) = P(D > -1) + P(D = -1)/2 = 0.8, F(0) = 0.3 + 0.15 = 0.45: c[1] = 0.625 = c[2].
    let mut s = OnlineBmrStage::new(linear(3, 1), 1, 2, 0.1, PairLoss::Rank, 1.0);
    let c = s.cost_vector(&[0.0; 3], &[0]).unwrap().to_vec();
    assert!(close(&c, &[0.15, 0.625, 0.625], 1e-15), "{c:?}");
    let (w, d) = OnlineBmrStage::normalize(&c);
    assert!((w - 0.475).abs() < 1e-15 && close(&d, &[0.0, 1.0, 1.0], 1e-15));
    // Hinge: c[0] = E(D)_+ = 0.3; c[1] = (E(2 + D)_+ + E(1 + D)_+) / 2 = (1.9 + 0.9) / 2.
    let mut s = OnlineBmrStage::new(linear(3, 1), 1, 2, 0.1, PairLoss::Hinge, 1.0);
    let c = s.cost_vector(&[0.0; 3], &[0]).unwrap().to_vec();
    assert!(close(&c, &[0.3, 1.4, 1.4], 1e-15), "{c:?}");
    // The last stage (no draw left): c[j] = L(s + e_j). Y = {1}, s = (0.5, 0.2, 0.9).
    // Hinge: c[0] = ((1 + 1.5 - 0.2) + (1 + 0.9 - 0.2)) / 2 = 2.0, c[1] = (0.3 + 0.7) / 2,
    // c[2] = (1.3 + 2.7) / 2. Rank: c = (1, 0, 1).
    let s0 = [0.5, 0.2, 0.9];
    let mut s = OnlineBmrStage::new(linear(3, 1), 2, 2, 0.1, PairLoss::Hinge, 1.0);
    let c = s.cost_vector(&s0, &[1]).unwrap().to_vec();
    assert!(close(&c, &[2.0, 0.5, 2.0], 1e-15), "{c:?}");
    let mut s = OnlineBmrStage::new(linear(3, 1), 2, 2, 0.1, PairLoss::Rank, 1.0);
    let c = s.cost_vector(&s0, &[1]).unwrap().to_vec();
    assert_eq!(c, vec![1.0, 0.0, 1.0]);
    // No pair: no cost vector.
    assert!(s.cost_vector(&s0, &[]).is_none());
    assert!(s.cost_vector(&s0, &[0, 1, 2]).is_none());
}

#[test]
fn bmr_feeds_each_relevant_label_with_weight_max_c_minus_c_l() {
    let k = 4;
    let ex = stream(1, k, 5)[0].clone();
    for (kind, make) in [
        ("tree", tree as fn(usize, u64) -> WeakModel),
        ("linear", linear),
    ] {
        for loss in [PairLoss::Rank, PairLoss::Hinge] {
            let scale = 3.5;
            // Stage 2 of 5 (n = 3 draws left), a non-zero s^{i-1} with real values.
            let mut stage = OnlineBmrStage::new(make(k, 7), 2, 5, 0.1, loss, scale);
            let mut reference = make(k, 7);
            // Warm both up identically so that the prediction is not uniform.
            for e in stream(60, k, 8) {
                reference.learn(
                    &e.features,
                    e.label
                        .as_ref()
                        .unwrap()
                        .relevant()
                        .first()
                        .copied()
                        .unwrap_or(0),
                    1.0,
                );
            }
            let mut stage_weak = stage.weak().clone();
            for e in stream(60, k, 8) {
                stage_weak.learn(
                    &e.features,
                    e.label
                        .as_ref()
                        .unwrap()
                        .relevant()
                        .first()
                        .copied()
                        .unwrap_or(0),
                    1.0,
                );
            }
            stage = OnlineBmrStage::new(stage_weak, 2, 5, 0.1, loss, scale);
            let h = predict(&reference, &ex.features);
            let s_prev = vec![0.7, -0.2, 0.35, 1.1];
            let y = Label::set(vec![1, 2]);
            let ex = Arc::new(Example {
                id: 0,
                features: ex.features.clone(),
                label: Some(y.clone()),
            });
            let mut rec = InFlight::new(0, ex.clone(), k);
            rec.scores.copy_from_slice(&s_prev);
            stage.process(&mut rec, &mut SharedViews::last());
            // Expected: c from the potential phi^3, then (x, l, scale (max c - c[l])).
            let mut pot = RankingPotential::new(loss, 3, k, 0.1);
            let mut c = vec![0.0; k];
            assert!(pot.cost_vector(&s_prev, y.relevant(), &mut c));
            let max = c.iter().cloned().fold(f64::MIN, f64::max);
            for &l in y.relevant() {
                let w = scale * (max - c[l as usize]);
                assert!(w > 0.0, "relevant labels are cheaper: {c:?}");
                reference.learn(&ex.features, l, w);
            }
            same_model(stage.weak(), &reference);
            // s^i = s^{i-1} + h^i (alpha = 1), h^i predicted before learning.
            let expect: Vec<f64> = s_prev.iter().zip(&h).map(|(s, h)| s + h).collect();
            assert_eq!(rec.scores, expect, "{kind} {loss:?}");
        }
    }
}

#[test]
fn logistic_gradient_by_hand_and_by_finite_differences() {
    // s = 0, Y = {0}, k = 3: w_Y = 1/2, sigma(0) = 1/2: c = (-1/2, 1/4, 1/4).
    let mut c = [0.0; 3];
    assert!(logistic_rank_gradient(&[0.0; 3], &[0], &mut c));
    assert!(close(&c, &[-0.5, 0.25, 0.25], 1e-15), "{c:?}");
    let l_log = |s: &[f64], y: &[u32]| -> f64 {
        let mut sum = 0.0;
        let mut pairs = 0;
        for &l in y {
            for r in 0..s.len() {
                if !y.contains(&(r as u32)) {
                    pairs += 1;
                    sum += (1.0 + (s[r] - s[l as usize]).exp()).ln();
                }
            }
        }
        sum / pairs as f64
    };
    let s = [1.3, -0.4, 0.2, 2.5, -1.7];
    let y = [0u32, 3];
    let mut c = [0.0; 5];
    assert!(logistic_rank_gradient(&s, &y, &mut c));
    assert!(c.iter().sum::<f64>().abs() < 1e-15);
    for j in 0..5 {
        let h = 1e-6;
        let (mut a, mut b) = (s, s);
        a[j] += h;
        b[j] -= h;
        let fd = (l_log(&a, &y) - l_log(&b, &y)) / (2.0 * h);
        assert!((c[j] - fd).abs() < 1e-8, "j={j}: {} vs {fd}", c[j]);
    }
    // Huge gaps: exponentials that underflow fall back to the direct formula.
    let mut c4 = [0.0; 4];
    assert!(logistic_rank_gradient(
        &[800.0, -900.0, -950.0, 3.0],
        &[1, 2],
        &mut c4
    ));
    assert!(close(&c4, &[0.5, -0.5, -0.5, 0.5], 1e-15), "{c4:?}");
    assert!(!logistic_rank_gradient(&s, &[], &mut c));
    assert!(!logistic_rank_gradient(&s, &[3, 0], &mut c));
    assert_eq!(c, [0.0; 5]);
}

/// Algorithm 3 written out with plain vectors: N linear learners, alpha, the trail.
#[test]
fn ada_olmr_matches_a_transcription_of_algorithm_3() {
    let (k, n, scale) = (4, 3, 2.0);
    let mut stages: Vec<AdaOlmrStage> = (0..n)
        .map(|i| AdaOlmrStage::new(linear(k, i as u64 + 1), true, scale))
        .collect();
    let mut wl: Vec<WeakModel> = (0..n).map(|i| linear(k, i as u64 + 1)).collect();
    let mut alpha = vec![0.0f64; n];
    let sigma = |z: f64| 1.0 / (1.0 + (-z).exp());
    // grad L_log(s) for label set y (the paper's formula, pair by pair).
    let grad = |s: &[f64], y: &[u32]| -> Vec<f64> {
        let mut g = vec![0.0; s.len()];
        let yc: Vec<usize> = (0..s.len()).filter(|r| !y.contains(&(*r as u32))).collect();
        let w = 1.0 / (y.len() * yc.len()) as f64;
        for &l in y {
            for &r in &yc {
                let v = w * sigma(s[r] - s[l as usize]);
                g[r] += v;
                g[l as usize] -= v;
            }
        }
        g
    };
    let mut checked_alpha_moves = 0;
    for (t, ex) in stream(300, k, 3).into_iter().enumerate() {
        let t = t + 1;
        let y = ex.label.as_ref().unwrap().relevant().to_vec();
        let mut rec = InFlight::new(t as u64, ex.clone(), k);
        for s in stages.iter_mut() {
            s.process(&mut rec, &mut SharedViews::last());
        }
        // Reference.
        let hs: Vec<Vec<f64>> = wl.iter().map(|m| predict(m, &ex.features)).collect();
        let mut experts = Vec::new();
        let mut s_prev = vec![0.0; k];
        for i in 0..n {
            let s_i: Vec<f64> = s_prev
                .iter()
                .zip(&hs[i])
                .map(|(s, h)| s + alpha[i] * h)
                .collect();
            experts.extend_from_slice(&s_i);
            if !y.is_empty() && y.len() < k {
                let c = grad(&s_prev, &y);
                let fprime: f64 = grad(&s_i, &y).iter().zip(&hs[i]).map(|(g, h)| g * h).sum();
                let old = alpha[i];
                alpha[i] = (alpha[i] - fprime / (t as f64).sqrt()).clamp(-2.0, 2.0);
                if alpha[i] != old {
                    checked_alpha_moves += 1;
                }
                let max = c.iter().cloned().fold(f64::MIN, f64::max);
                for &l in &y {
                    wl[i].learn(&ex.features, l, scale * (max - c[l as usize]));
                }
            }
            s_prev = s_i;
        }
        assert!(close(&rec.trail, &experts, 1e-12), "t={t}");
        assert!(close(&rec.scores, &s_prev, 1e-12), "t={t}");
        for i in 0..n {
            assert!((stages[i].alpha() - alpha[i]).abs() < 1e-12, "t={t} i={i}");
            assert_eq!(stages[i].rounds(), t as u64);
        }
    }
    assert!(
        checked_alpha_moves > 100,
        "alpha moved {checked_alpha_moves} times"
    );
    for i in 0..n {
        similar_model(stages[i].weak(), &wl[i], 1e-9);
    }
}

#[test]
fn ada_olmr_alpha_update_by_hand() {
    // One stage, k = 3, Y = {0}: s^{i-1} = 0 and alpha = 0 give s^i = 0, so
    // f'(0) = grad L_log(0) . h = -h_0 / 2 + (h_1 + h_2) / 4 = 1/4 - 3 h_0 / 4, and
    // alpha_2 = Pi(0 - f'(0) / sqrt(1)). On a second example at t = 2 with alpha = a:
    // s^i = a h, f'(a) = sum_j c_j(a h) h_j, alpha_3 = Pi(a - f'(a) / sqrt(2)).
    let k = 3;
    let mut weak = linear(k, 3);
    for e in stream(50, k, 4) {
        weak.learn(
            &e.features,
            e.label
                .as_ref()
                .unwrap()
                .relevant()
                .first()
                .copied()
                .unwrap_or(0),
            1.0,
        );
    }
    let mut stage = AdaOlmrStage::new(weak.clone(), false, 1.0);
    let x1 = Features::Dense(vec![0.9, -0.3, 0.5, 0.1]);
    let h = predict(&weak, &x1);
    let ex = Arc::new(Example {
        id: 0,
        features: x1.clone(),
        label: Some(Label::set(vec![0])),
    });
    stage.process(&mut InFlight::new(0, ex, k), &mut SharedViews::last());
    let a1 = (-(0.25 - 0.75 * h[0])).clamp(-2.0, 2.0);
    assert!(
        (stage.alpha() - a1).abs() < 1e-15,
        "{} vs {a1}",
        stage.alpha()
    );
    assert!(a1.abs() > 1e-3, "the example must move alpha: h = {h:?}");
    // The learner then learned (x1, 0) with weight max c - c[0] = 1/4 + 1/2.
    weak.learn(&x1, 0, 0.75);
    same_model(stage.weak(), &weak);
    let x2 = Features::Dense(vec![-0.2, 0.8, -0.6, 0.4]);
    let h = predict(&weak, &x2);
    let s: Vec<f64> = h.iter().map(|v| a1 * v).collect();
    // grad L_log(s) for Y = {2}: c_2 = -(sigma(s0 - s2) + sigma(s1 - s2)) / 2,
    // c_r = sigma(s_r - s_2) / 2.
    let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
    let c = [
        sig(s[0] - s[2]) / 2.0,
        sig(s[1] - s[2]) / 2.0,
        -(sig(s[0] - s[2]) + sig(s[1] - s[2])) / 2.0,
    ];
    let fprime: f64 = c.iter().zip(&h).map(|(c, h)| c * h).sum();
    let a2 = (a1 - fprime / 2f64.sqrt()).clamp(-2.0, 2.0);
    let ex = Arc::new(Example {
        id: 1,
        features: x2,
        label: Some(Label::set(vec![2])),
    });
    let mut rec = InFlight::new(1, ex, k);
    stage.process(&mut rec, &mut SharedViews::last());
    assert!(
        (stage.alpha() - a2).abs() < 1e-15,
        "{} vs {a2}",
        stage.alpha()
    );
    assert!(close(&rec.scores, &s, 1e-15));
}

/// A stream of `n` examples whose label sets are empty or full teaches nothing.
#[test]
fn examples_without_pairs_teach_nothing() {
    let k = 3;
    let mut bmr = OnlineBmrStage::new(linear(k, 1), 1, 3, 0.1, PairLoss::Hinge, 1.0);
    let mut ada = AdaOlmrStage::new(linear(k, 1), false, 1.0);
    let before = linear(k, 1);
    for y in [vec![], vec![0, 1, 2], vec![0, 7]] {
        let ex = Arc::new(Example {
            id: 0,
            features: Features::Dense(vec![0.3, 0.1, -0.2, 0.5]),
            label: Some(Label::Set(y)),
        });
        bmr.process(
            &mut InFlight::new(0, ex.clone(), k),
            &mut SharedViews::last(),
        );
        ada.process(&mut InFlight::new(0, ex, k), &mut SharedViews::last());
    }
    same_model(bmr.weak(), &before);
    same_model(ada.weak(), &before);
    assert_eq!(ada.alpha(), 0.0);
}

/// Binary (one label vs the rest), single-label (trees) and multi-label (binary relevance)
/// weak learners in one ensemble, for both boosters.
#[test]
fn mixed_weak_learner_kinds_boost_together() {
    let k = 4;
    let s = schema(k);
    let bin = binary_schema(&s);
    let kinds = |i: usize| -> WeakModel {
        let seed = 100 + i as u64;
        match i % 3 {
            0 => tree(k, seed),
            1 => WeakModel::LabelVsRest(
                LabelVsRest::new(
                    (i % k) as u32,
                    k,
                    WeakModel::Linear(LinearLearner::new(&bin, LinearConfig::default(), seed)),
                )
                .unwrap(),
            ),
            _ => WeakModel::BinaryRelevance(
                BinaryRelevance::new(
                    (0..k)
                        .map(|l| {
                            WeakModel::Linear(LinearLearner::new(
                                &bin,
                                LinearConfig::default(),
                                seed + 10 * l as u64,
                            ))
                        })
                        .collect(),
                )
                .unwrap(),
            ),
        }
    };
    let n = 9;
    let data = stream(3000, k, 21);
    let mut results = Vec::new();
    for alg in ["online-bmr", "ada-olmr"] {
        let stages: Vec<AnyStage> = (0..n)
            .map(|i| match alg {
                "online-bmr" => AnyStage::OnlineBmr(OnlineBmrStage::new(
                    kinds(i),
                    i + 1,
                    n,
                    0.1,
                    PairLoss::Hinge,
                    1.0,
                )),
                _ => AnyStage::AdaOlmr(AdaOlmrStage::new(kinds(i), true, 1.0)),
            })
            .collect();
        // Every kind predicts a distribution in the paper's format.
        for st in &stages {
            let m = match st {
                AnyStage::OnlineBmr(b) => b.weak().clone(),
                AnyStage::AdaOlmr(a) => a.weak().clone(),
                _ => unreachable!(),
            };
            let p = predict(&m, &data[0].features);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12 && p.iter().all(|v| *v >= 0.0));
        }
        let selection = if alg == "online-bmr" {
            ExpertSelection::Last
        } else {
            ExpertSelection::Hedge
        };
        let terminal = Terminal::new(Task::Multilabel, ScoreKind::Votes, k, n, selection, 3);
        let mut runner = SequentialRunner::new(stages, terminal, k);
        let mut late = 0.0;
        let mut count = 0;
        for (t, ex) in data.iter().enumerate() {
            let mut out = Prediction::default();
            runner.process(ex.clone(), &mut out);
            if t >= 2000 {
                let y = ex.label.as_ref().unwrap().relevant();
                if !y.is_empty() && y.len() < k {
                    late += rank_loss(&out.scores, y);
                    count += 1;
                }
            }
        }
        let late = late / count as f64;
        // The binary and set learners learned from their cost-sensitive reductions: each
        // one-vs-rest learner ranks its label's relevant examples above the irrelevant ones.
        for st in runner.stages() {
            let m = match st {
                AnyStage::OnlineBmr(b) => b.weak(),
                AnyStage::AdaOlmr(a) => a.weak(),
                _ => unreachable!(),
            };
            if let WeakModel::LabelVsRest(b) = m {
                let j = b.label();
                let (mut pos, mut neg) = (vec![], vec![]);
                for ex in &data[2000..] {
                    let p = b.probability(&ex.features);
                    if ex.label.as_ref().unwrap().contains(j) {
                        pos.push(p)
                    } else {
                        neg.push(p)
                    }
                }
                let mut wins = 0.0;
                for a in &pos {
                    for b in &neg {
                        wins += if a > b {
                            1.0
                        } else if a == b {
                            0.5
                        } else {
                            0.0
                        };
                    }
                }
                let auc = wins / (pos.len() * neg.len()) as f64;
                assert!(auc > 0.75, "{alg}: label {j} vs rest AUC {auc}");
            }
        }
        results.push((alg, late));
    }
    for (alg, late) in &results {
        // A random ranking scores 0.5; the mixed ensemble must rank well.
        assert!(*late < 0.2, "{alg}: late rank loss {late}");
    }
}

#[test]
fn build_makes_both_boosters_from_the_config() {
    let s = schema(5);
    for alg in [Algorithm::OnlineBmr, Algorithm::AdaOlmr] {
        let mut c = BoosterConfig::new(alg, WeakKind::Vfdt, 4);
        c.learners = 6;
        c.tree_params = TreeParams::Random;
        let b = build(&s, &c).unwrap();
        assert_eq!(b.stages.len(), 6);
        assert_eq!(b.score_dim, 5);
        assert_eq!(b.terminal.needs_trail(), alg == Algorithm::AdaOlmr);
        for (i, st) in b.stages.iter().enumerate() {
            let scale = match st {
                AnyStage::OnlineBmr(x) => x.weight_scale(),
                AnyStage::AdaOlmr(x) => x.weight_scale(),
                _ => panic!("wrong stage"),
            };
            assert!((3.0..=10.0).contains(&scale), "stage {i}: {scale}");
        }
        // Default tree parameters, or a weak learner that is not a tree: no constant.
        let mut lin = c.clone();
        lin.weak = WeakKind::Linear;
        c.tree_params = TreeParams::Default;
        for st in build(&s, &c)
            .unwrap()
            .stages
            .into_iter()
            .chain(build(&s, &lin).unwrap().stages)
        {
            match st {
                AnyStage::OnlineBmr(x) => assert_eq!(x.weight_scale(), 1.0),
                AnyStage::AdaOlmr(x) => assert_eq!(x.weight_scale(), 1.0),
                _ => panic!("wrong stage"),
            }
        }
        // Not for single-label streams.
        assert!(build(&Schema::numeric(3, 3, Task::Multiclass), &c).is_err());
    }
}
