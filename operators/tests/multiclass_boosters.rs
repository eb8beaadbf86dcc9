//! The multiclass boosters (Jung, Goetz and Tewari 2017) against hand-computed cases, a
//! direct transcription of Algorithm 2, finite differences (eq. 9 and 10) and the full cost
//! matrix (OnlineMBBM's lazy rows).

// Hand-computed constants are written with all the digits they were computed with.
#![allow(clippy::excessive_precision)]

use flowboost_operators::boosters::{
    AdaBoostOlmStage, Algorithm, AnyStage, BoosterConfig, OnlineMbbmStage, TreeParams, WeakSlot,
    build,
};
use flowboost_operators::data::{Example, Features, Label, Schema, Task};
use flowboost_operators::engine::{InFlight, Prediction, Stage};
use flowboost_operators::learners::SharedViews;
use flowboost_operators::learners::{
    HoeffdingTree, HoeffdingTreeConfig, LeafPrediction, WeakKind, WeakModel,
};
use flowboost_operators::potentials::ZeroOnePotential;
use flowboost_operators::rng::{below, seeded, uniform};
use std::sync::Arc;

/// A tree that never splits and predicts its (weighted) class frequencies: a weak learner
/// whose predictions can be followed by hand.
fn counting_tree(k: usize) -> WeakSlot {
    let schema = Schema::numeric(2, k, Task::Multiclass);
    let config = HoeffdingTreeConfig {
        leaf_prediction: LeafPrediction::MajorityClass,
        max_depth: Some(0),
        ..HoeffdingTreeConfig::default()
    };
    WeakSlot::new(WeakModel::Tree(HoeffdingTree::new(&schema, config, 1)))
}

fn example(id: u64, y: u32) -> Arc<Example> {
    Arc::new(Example {
        id,
        features: Features::Dense(vec![0.5, -0.5]),
        label: Some(Label::Class(y)),
    })
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// `L^y(s) = sum_{l != y} log(1 + exp(s[l] - s[y]))`, naively.
fn logistic_loss(s: &[f64], y: usize) -> f64 {
    (0..s.len())
        .filter(|&l| l != y)
        .map(|l| (1.0 + (s[l] - s[y]).exp()).ln())
        .sum()
}

#[test]
fn olm_cost_matrix_is_eq_9_by_hand() {
    // s = (0.5, -1, 2); C[r, l] = 1 / (1 + exp(s[r] - s[l])), C[r, r] = -sum (30 digits).
    let s = [0.5, -1.0, 2.0];
    let expect = [
        [-1.0, 0.18242552380635634, 0.81757447619364366],
        [
            0.81757447619364366,
            -1.7701486030160769,
            0.95257412682243322,
        ],
        [
            0.18242552380635634,
            0.047425873177566781,
            -0.22985139698392312,
        ],
    ];
    let mut c = [0.0; 9];
    AdaBoostOlmStage::cost_matrix(&s, &mut c);
    for r in 0..3 {
        for l in 0..3 {
            assert!(
                close(c[r * 3 + l], expect[r][l], 1e-15),
                "C[{r},{l}] = {}",
                c[r * 3 + l]
            );
        }
    }
    // The weight -C[y, y] / (k - 1) and the step 2 sqrt(2) / ((k - 1) sqrt(t)).
    assert!(close(
        AdaBoostOlmStage::weight(&s, 1),
        0.88507430150803844,
        1e-15
    ));
    assert!(close(
        AdaBoostOlmStage::step_size(3, 4),
        0.5 * std::f64::consts::SQRT_2,
        1e-15
    ));
    assert!(close(
        AdaBoostOlmStage::step_size(26, 1),
        2.0 * 2f64.sqrt() / 25.0,
        1e-15
    ));
}

#[test]
fn olm_cost_rows_are_the_gradient_of_the_logistic_loss() {
    // Eq. 9: row r of C is grad L^r(s); central differences.
    let mut rng = seeded(1, 1);
    for k in [2usize, 3, 5, 8] {
        for _ in 0..20 {
            let s: Vec<f64> = (0..k).map(|_| uniform(&mut rng) * 8.0 - 4.0).collect();
            let mut c = vec![0.0; k * k];
            AdaBoostOlmStage::cost_matrix(&s, &mut c);
            for r in 0..k {
                assert!(close(
                    AdaBoostOlmStage::logistic_loss(&s, r),
                    logistic_loss(&s, r),
                    1e-12
                ));
                for l in 0..k {
                    let h = 1e-6;
                    let (mut up, mut down) = (s.clone(), s.clone());
                    up[l] += h;
                    down[l] -= h;
                    let fd = (logistic_loss(&up, r) - logistic_loss(&down, r)) / (2.0 * h);
                    assert!(close(c[r * k + l], fd, 1e-7), "k={k} r={r} l={l}");
                }
            }
        }
    }
}

#[test]
fn olm_alpha_gradient_is_eq_10_against_finite_differences() {
    // f(alpha) = L^y(s + alpha e_l); f'(alpha) for l != y and l = y; f'(0) = C[y, l].
    let mut rng = seeded(2, 2);
    for k in [2usize, 3, 4, 10] {
        for _ in 0..30 {
            let s: Vec<f64> = (0..k).map(|_| uniform(&mut rng) * 10.0 - 5.0).collect();
            let y = below(&mut rng, k as u64) as usize;
            let mut c = vec![0.0; k * k];
            AdaBoostOlmStage::cost_matrix(&s, &mut c);
            for l in 0..k {
                for alpha in [-2.0, -0.7, 0.0, 0.3, 1.9] {
                    let f = |a: f64| {
                        let mut t = s.clone();
                        t[l] += a;
                        logistic_loss(&t, y)
                    };
                    let h = 1e-6;
                    let fd = (f(alpha + h) - f(alpha - h)) / (2.0 * h);
                    let g = AdaBoostOlmStage::alpha_gradient(&s, y, l, alpha);
                    assert!(
                        close(g, fd, 1e-7),
                        "k={k} y={y} l={l} alpha={alpha}: {g} vs {fd}"
                    );
                }
                let g0 = AdaBoostOlmStage::alpha_gradient(&s, y, l, 0.0);
                assert!(close(g0, c[y * k + l], 1e-15));
            }
        }
    }
    // The gradient is bounded by k - 1 (the paper's |f'| <= k - 1), and far-ahead true
    // labels have a vanishing gradient (the printed l = y case would give -(k - 1)).
    let s = [30.0, 0.0, 0.0];
    assert!(AdaBoostOlmStage::alpha_gradient(&s, 0, 0, 0.0).abs() < 1e-12);
    assert!(close(
        AdaBoostOlmStage::alpha_gradient(&[0.0; 3], 0, 0, 0.0),
        -1.0,
        1e-15
    ));
}

/// Algorithm 2 transcribed for given weak predictions: returns (alphas after, weights,
/// expert scores).
fn olm_by_hand(
    alphas: &mut [f64],
    t: u64,
    k: usize,
    preds: &[usize],
    y: usize,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut s: Vec<f64> = vec![0.0; k];
    let mut weights = Vec::new();
    let mut experts = Vec::new();
    for (i, &l) in preds.iter().enumerate() {
        // eq. 9 at s^{i-1}
        let c_yy: f64 = (0..k)
            .filter(|&j| j != y)
            .map(|j| 1.0 / (1.0 + (s[y] - s[j]).exp()))
            .sum();
        weights.push(c_yy / (k - 1) as f64);
        let a = alphas[i];
        let mut expert = s.clone();
        expert[l] += a;
        experts.push(expert.clone());
        // eq. 10 (f' of L^y(s + a e_l))
        let grad = if l != y {
            1.0 / (1.0 + (s[y] - s[l] - a).exp())
        } else {
            -(0..k)
                .filter(|&j| j != y)
                .map(|j| 1.0 / (1.0 + (s[y] + a - s[j]).exp()))
                .sum::<f64>()
        };
        let eta = 2.0 * 2f64.sqrt() / ((k - 1) as f64 * (t as f64).sqrt());
        alphas[i] = (a - eta * grad).clamp(-2.0, 2.0);
        s = expert;
    }
    (weights, experts)
}

#[test]
fn olm_stages_follow_algorithm_2_by_hand() {
    let k = 3;
    let mut stages: Vec<AdaBoostOlmStage> = (0..3)
        .map(|i| AdaBoostOlmStage::new(counting_tree(k), i + 1, k, true, 1.0, 9))
        .collect();
    let mut alphas = vec![0.0; 3];
    let labels = [0u32, 1, 0, 2, 0, 0, 1];
    for (t, &y) in labels.iter().enumerate() {
        let mut rec = InFlight::new(t as u64, example(t as u64, y), k);
        let mut preds = Vec::new();
        let mut weights = Vec::new();
        for stage in &mut stages {
            stage.process(&mut rec, &mut SharedViews::last());
            preds.push(stage.last_prediction() as usize);
            weights.push(stage.last_weight());
        }
        let (w, experts) = olm_by_hand(&mut alphas, t as u64 + 1, k, &preds, y as usize);
        for i in 0..3 {
            assert!(close(stages[i].alpha(), alphas[i], 1e-14), "t={t} i={i}");
            assert!(close(weights[i], w[i], 1e-14), "t={t} i={i}");
            for (l, &e) in experts[i].iter().enumerate() {
                assert!(close(rec.trail[i * k + l], e, 1e-14));
            }
        }
        if t == 0 {
            // s^0 = 0: weight (k - 1) / 2 / (k - 1) = 1/2; alpha_1 = -sqrt(2) f'(0) with
            // f'(0) = -1 (right) or 1/2 (wrong).
            assert!(close(weights[0], 0.5, 1e-15));
            let expect = if preds[0] == 0 {
                2f64.sqrt()
            } else {
                -0.5 * 2f64.sqrt()
            };
            assert!(close(stages[0].alpha(), expect, 1e-15));
        }
    }
}

#[test]
fn olm_weak_prediction_is_the_least_expected_cost() {
    // At s = 0 the expected cost of l is (1 - p_l)/2 - p_l (k - 1)/2: the most likely
    // label; elsewhere it is sum_r p_r C[r, l] from eq. 9.
    let mut stage = AdaBoostOlmStage::new(counting_tree(4), 1, 4, false, 1.0, 3);
    assert_eq!(stage.choose_label(&[0.0; 4], &[0.1, 0.2, 0.6, 0.1]), 2);
    let mut rng = seeded(4, 4);
    for _ in 0..200 {
        let s: Vec<f64> = (0..4).map(|_| uniform(&mut rng) * 6.0 - 3.0).collect();
        let mut p: Vec<f64> = (0..4).map(|_| uniform(&mut rng)).collect();
        let total: f64 = p.iter().sum();
        p.iter_mut().for_each(|v| *v /= total);
        let mut c = vec![0.0; 16];
        AdaBoostOlmStage::cost_matrix(&s, &mut c);
        let costs: Vec<f64> = (0..4)
            .map(|l| (0..4).map(|r| p[r] * c[r * 4 + l]).sum())
            .collect();
        let mut fast = vec![0.0; 4];
        AdaBoostOlmStage::expected_costs(&s, &p, &mut fast);
        for (a, b) in fast.iter().zip(&costs) {
            assert!(close(*a, *b, 1e-13));
        }
        let best = (0..4)
            .min_by(|&a, &b| costs[a].total_cmp(&costs[b]))
            .unwrap();
        assert_eq!(stage.choose_label(&s, &p), best);
    }
}

#[test]
fn mbbm_costs_and_weights_by_hand() {
    // k = 3, N = 2, gamma = 0.2: u^0 = (0.8/3 + 0.2, 0.8/3, 0.8/3).
    // Stage 1 (one draw left) at s = 0, y = 0: C[0, 0] = phi_1(1,0,0) = 2 (0.8/3) (the
    // other labels tie it), C[0, 1] = C[0, 2] = 1; w = 2 (1 - 1.6/3) = 0.9333...; the
    // bound min(2, 2 pi2 + 2 pi) = min(2, 2 (0.8/3 + 0.4667) + 2 (0.4667)) = 2.
    let q = 0.8 / 3.0;
    let mut stage1 = OnlineMbbmStage::new(counting_tree(3), 1, 2, 3, 0.2, 1.0, 5);
    let mut pot = ZeroOnePotential::new(3, 1, 0.2);
    let mut row = [0.0; 3];
    pot.cost_row(&[0, 0, 0], 0, &mut row);
    assert!(
        close(row[0], 2.0 * q, 1e-15) && row[1] == 1.0 && row[2] == 1.0,
        "{row:?}"
    );
    let w = stage1.raw_weight(&[0.0; 3], 0);
    assert!(close(w, 2.0 * (1.0 - 2.0 * q), 1e-15), "{w}");
    assert!(close(stage1.weight_bound(), 2.0, 1e-15));
    // Expected excess costs under p: sum_{r != l} p_r (1 - 2q) = (1 - p_l)(1 - 2q).
    let p = [0.5, 0.3, 0.2];
    let mut e = [0.0; 3];
    stage1.expected_costs(&[0.0; 3], &p, &mut e);
    for l in 0..3 {
        assert!(close(e[l], (1.0 - p[l]) * (1.0 - 2.0 * q), 1e-15), "{e:?}");
    }
    assert_eq!(stage1.choose_label(&[0.0; 3], &p), 0);
    // Stage 2 (no draw left): C[0, l] = L^0(s^1 + e_l); after a right vote s^1 = (1,0,0):
    // w = (1 - 0) + (1 - 0) = 2, normalized by k - 1 = 2; after a wrong one, w = 0.
    let mut stage2 = OnlineMbbmStage::new(counting_tree(3), 2, 2, 3, 0.2, 1.0, 5);
    assert_eq!(stage2.weight_bound(), 2.0);
    assert_eq!(stage2.raw_weight(&[1.0, 0.0, 0.0], 0), 2.0);
    assert_eq!(stage2.raw_weight(&[0.0, 1.0, 0.0], 0), 0.0);
    // Through process(): the normalized weights each learner receives.
    let mut stages = [stage1, stage2];
    let mut rec = InFlight::new(0, example(0, 0), 3);
    stages[0].process(&mut rec, &mut SharedViews::last());
    stages[1].process(&mut rec, &mut SharedViews::last());
    assert!(close(stages[0].last_weight(), 1.0 - 2.0 * q, 1e-15));
    let right = stages[0].last_prediction() == 0;
    assert_eq!(stages[1].last_weight(), if right { 1.0 } else { 0.0 });
    assert_eq!(rec.scores.iter().sum::<f64>(), 2.0);
}

#[test]
fn mbbm_lazy_rows_give_the_full_matrix_prediction_and_weight() {
    let mut rng = seeded(6, 6);
    for (k, n, i) in [
        (3usize, 20usize, 5usize),
        (4, 30, 12),
        (6, 25, 3),
        (8, 40, 30),
    ] {
        let mut stage = OnlineMbbmStage::new(counting_tree(k), i, n, k, 0.1, 1.0, 1);
        let left = n - i;
        let mut pot = ZeroOnePotential::new(k, left, 0.1);
        for trial in 0..60 {
            // Votes so far: i - 1 of them.
            let mut s = vec![0.0; k];
            for _ in 0..i - 1 {
                s[below(&mut rng, k as u64) as usize] += 1.0;
            }
            // Peaked or flat class probabilities.
            let mut p: Vec<f64> = (0..k)
                .map(|_| uniform(&mut rng).powi(if trial % 2 == 0 { 8 } else { 1 }))
                .collect();
            let total: f64 = p.iter().sum();
            p.iter_mut().for_each(|v| *v /= total);
            let si: Vec<i64> = s.iter().map(|&v| v as i64).collect();
            let mut c = vec![0.0; k * k];
            for r in 0..k {
                pot.cost_row(&si, r, &mut c[r * k..(r + 1) * k]);
            }
            let full: Vec<f64> = (0..k)
                .map(|l| (0..k).map(|r| p[r] * (c[r * k + l] - c[r * k + r])).sum())
                .collect();
            let mut e = vec![0.0; k];
            stage.expected_costs(&s, &p, &mut e);
            for (a, b) in e.iter().zip(&full) {
                assert!(close(*a, *b, 1e-13), "k={k}: {e:?} vs {full:?}");
            }
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by(|&a, &b| full[a].total_cmp(&full[b]));
            if full[order[1]] - full[order[0]] > 1e-9 {
                assert_eq!(
                    stage.choose_label(&s, &p),
                    order[0],
                    "k={k} s={s:?} p={p:?}"
                );
            }
            let y = below(&mut rng, k as u64) as usize;
            let w: f64 = (0..k).map(|l| c[y * k + l] - c[y * k + y]).sum();
            assert!(close(stage.raw_weight(&s, y), w, 1e-13));
            assert!(w <= stage.weight_bound() + 1e-12);
        }
    }
}

#[test]
fn boosters_build_learn_and_refuse_multilabel() {
    let schema = Schema::numeric(2, 3, Task::Multiclass);
    for algorithm in [Algorithm::OnlineMbbm, Algorithm::AdaBoostOlm] {
        let mut config = BoosterConfig::new(algorithm, WeakKind::Vfdt, 3);
        config.learners = 5;
        config.tree_params = TreeParams::Random;
        let booster = build(&schema, &config).unwrap();
        assert_eq!(booster.stages.len(), 5);
        assert!(booster.stages.iter().all(|s| matches!(
            (algorithm, s),
            (Algorithm::OnlineMbbm, AnyStage::OnlineMbbm(_))
                | (Algorithm::AdaBoostOlm, AnyStage::AdaBoostOlm(_))
        )));
        // A separable 3-class stream is learned.
        let mut runner = booster.into_sequential();
        let mut rng = seeded(8, 8);
        let mut right = 0;
        for t in 0..3000u64 {
            let y = below(&mut rng, 3) as u32;
            let x = vec![y as f64 + 0.3 * uniform(&mut rng), uniform(&mut rng)];
            let ex = Arc::new(Example {
                id: t,
                features: Features::Dense(x),
                label: Some(Label::Class(y)),
            });
            let mut out = Prediction::default();
            runner.process(ex, &mut out);
            if t >= 2000 && out.class == y {
                right += 1;
            }
        }
        assert!(right > 900, "{algorithm}: {right} of 1000");
        let multilabel = Schema::numeric(2, 3, Task::Multilabel);
        assert!(build(&multilabel, &config).is_err());
    }
    // Weight units: 1 for default trees, in [5, 200] per random tree.
    let u = OnlineMbbmStage::random_weight_unit(3, 0);
    assert!((5.0..=200.0).contains(&u));
    assert_ne!(u, OnlineMbbmStage::random_weight_unit(3, 1));
}

#[test]
fn bad_labels_and_scores_do_not_panic() {
    for algorithm in [Algorithm::OnlineMbbm, Algorithm::AdaBoostOlm] {
        let schema = Schema::numeric(2, 3, Task::Multiclass);
        let config = BoosterConfig::new(algorithm, WeakKind::Vfdt, 3);
        let mut runner = build(&schema, &config).unwrap().into_sequential();
        for (t, label) in [Some(Label::Class(7)), None, Some(Label::Class(1))]
            .into_iter()
            .enumerate()
        {
            let ex = Arc::new(Example {
                id: t as u64,
                features: Features::Dense(vec![f64::NAN, 1.0]),
                label,
            });
            let mut out = Prediction::default();
            runner.process(ex, &mut out);
            assert!(out.class < 3);
        }
    }
}
