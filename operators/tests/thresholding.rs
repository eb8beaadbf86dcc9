//! Adaptive label thresholding (FALT, SALT, kernel FALT), the PA-BR baselines and the
//! score threshold: hand-computed steps, the loss against finite differences, kernel FALT
//! against an independent direct implementation, sparse/dense identity, learning on a
//! synthetic stream, configuration errors and bad input.

use flowboost_operators::data::Features;
use flowboost_operators::rng::{Rng, seeded, uniform};
use flowboost_operators::thresholding::loss::{alt_gradient, alt_loss};
use flowboost_operators::thresholding::{
    FeatureScaling, ScoreThreshold, ScoreThresholdConfig, ThresholdAlgorithm, ThresholdConfig,
    ThresholdGrid, ThresholdLearner, ThresholdModel,
};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn sym(rng: &mut Rng) -> f64 {
    2.0 * uniform(rng) - 1.0
}

/// Example-based F1 of one prediction (1 when both sets are empty).
fn f1(predicted: &[u32], relevant: &[u32]) -> f64 {
    if predicted.is_empty() && relevant.is_empty() {
        return 1.0;
    }
    let hits = predicted.iter().filter(|p| relevant.contains(p)).count();
    2.0 * hits as f64 / (predicted.len() + relevant.len()) as f64
}

fn dense(v: &[f64]) -> Features {
    Features::Dense(v.to_vec())
}

fn sparse_of(v: &[f64]) -> Features {
    let mut indices = Vec::new();
    let mut values = Vec::new();
    for (j, &x) in v.iter().enumerate() {
        if x != 0.0 {
            indices.push(j as u32);
            values.push(x);
        }
    }
    Features::Sparse {
        indices,
        values,
        dim: v.len() as u32,
    }
}

fn config(algorithm: ThresholdAlgorithm) -> ThresholdConfig {
    ThresholdConfig::new(algorithm)
}

/// Every model of the family, with a kernel width and budget for the kernel ones.
fn all_configs(width: f64, budget: Option<usize>, repetitions: usize) -> Vec<ThresholdConfig> {
    let mut out = Vec::new();
    for algorithm in [
        ThresholdAlgorithm::Falt,
        ThresholdAlgorithm::Salt,
        ThresholdAlgorithm::Pa1Br,
        ThresholdAlgorithm::Pa2Br,
    ] {
        out.push(ThresholdConfig {
            repetitions,
            ..config(algorithm)
        });
        if algorithm != ThresholdAlgorithm::Salt {
            out.push(ThresholdConfig {
                repetitions,
                kernel_width: Some(width),
                budget,
                ..config(algorithm)
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The loss (eq. 4) and its subgradient.

#[test]
fn loss_and_gradient_match_a_hand_computed_case() {
    // L = 4, s = (2.0, 0.5, -1.0, 0.3), t = 0.2, Y = {0, 2}, Ybar = {1, 3}.
    // Y:    i=0: margin 2.0-0.2 = 1.8 >= 1 -> 0, a_0 = 0
    //       i=2: margin -1.0-0.2 = -1.2   -> 2.2, a_2 = 1;  average over |Y| = 2: 1.1
    // Ybar: j=1: margin 0.2-0.5 = -0.3    -> 1.3, b_1 = 1
    //       j=3: margin 0.2-0.3 = -0.1    -> 1.1, b_3 = 1;  average over 2: 1.2
    // f = 2.3; g = (0, +1/2, -1/2, +1/2), g_thr = a/|Y| - b/|Ybar| = 1/2 - 2/2 = -1/2.
    let s = [2.0, 0.5, -1.0, 0.3];
    let mut g = [f64::NAN; 5];
    let loss = alt_gradient(&s, 0.2, &[0, 2], &mut g);
    assert!(close(loss, 2.3, 1e-12), "{loss}");
    assert!(close(alt_loss(&s, 0.2, &[0, 2]), 2.3, 1e-12));
    let want = [0.0, 0.5, -0.5, 0.5, -0.5];
    for (a, b) in g.iter().zip(want) {
        assert!(close(*a, b, 1e-15), "{g:?}");
    }

    // Y empty (the average over Y is dropped): s = (0.5, -2), t = 0.
    // j=0: 1-(0-0.5) = 1.5, b_0 = 1; j=1: 1-(0+2) < 0 -> 0. f = 1.5/2 = 0.75.
    // g = (1/2, 0), g_thr = 0 - 1/2.
    let loss = alt_gradient(&[0.5, -2.0], 0.0, &[], &mut g[..3]);
    assert_eq!(loss, 0.75);
    assert_eq!(&g[..3], &[0.5, 0.0, -0.5]);

    // All labels relevant: s = (0.5, 3), t = 0: i=0: 1-0.5 = 0.5, a_0 = 1; i=1: 0.
    // f = 0.5/2 = 0.25, g = (-1/2, 0), g_thr = 1/2 - 0.
    let loss = alt_gradient(&[0.5, 3.0], 0.0, &[0, 1], &mut g[..3]);
    assert_eq!(loss, 0.25);
    assert_eq!(&g[..3], &[-0.5, 0.0, 0.5]);

    // Repeated and out-of-range relevant labels: {0, 0, 7} with L = 2 is Y = {0}.
    assert_eq!(
        alt_loss(&[0.5, 3.0], 0.0, &[0, 0, 7]),
        alt_loss(&[0.5, 3.0], 0.0, &[0])
    );
}

#[test]
fn gradient_matches_finite_differences() {
    let mut rng = seeded(11, 0);
    let (l, d) = (6, 5);
    let mut checked = 0;
    for _ in 0..200 {
        let w: Vec<f64> = (0..(l + 1) * d).map(|_| 2.0 * sym(&mut rng)).collect();
        let x: Vec<f64> = (0..d).map(|_| sym(&mut rng)).collect();
        let relevant: Vec<u32> = (0..l as u32).filter(|_| uniform(&mut rng) < 0.4).collect();
        // loss as a function of W (predictor-major here: w[i * d + j]).
        let f = |w: &[f64]| {
            let score = |i: usize| (0..d).map(|j| w[i * d + j] * x[j]).sum::<f64>();
            let s: Vec<f64> = (0..l).map(score).collect();
            alt_loss(&s, score(l), &relevant)
        };
        let s: Vec<f64> = (0..=l)
            .map(|i| (0..d).map(|j| w[i * d + j] * x[j]).sum())
            .collect();
        // Skip draws near a kink of the hinge, where the loss is not differentiable.
        let near_kink = (0..l).any(|i| ((s[i] - s[l]).abs() - 1.0).abs() < 1e-3);
        if near_kink {
            continue;
        }
        let mut g = vec![0.0; l + 1];
        alt_gradient(&s[..l], s[l], &relevant, &mut g);
        let h = 1e-6;
        for i in 0..=l {
            for j in 0..d {
                let mut up = w.clone();
                up[i * d + j] += h;
                let mut down = w.clone();
                down[i * d + j] -= h;
                let numeric = (f(&up) - f(&down)) / (2.0 * h);
                let analytic = g[i] * x[j];
                assert!(
                    (numeric - analytic).abs() < 1e-6,
                    "predictor {i} feature {j}: numeric {numeric} analytic {analytic}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} draws checked");
}

// ---------------------------------------------------------------------------------------
// FALT and SALT steps.

fn falt_weight(learner: &ThresholdLearner, i: usize, j: usize) -> f64 {
    match learner.model() {
        ThresholdModel::Falt(m) => m.weight(i, j),
        ThresholdModel::Salt(m) => m.weight(i, j),
        ThresholdModel::PaBr(m) => m.weight(i, j),
        other => panic!("not a linear model: {other:?}"),
    }
}

#[test]
fn one_falt_step_matches_hand_computation() {
    // L = 2, d = 2, eta = 0.5, W_1 = 0.
    let cfg = ThresholdConfig {
        eta: 0.5,
        ..config(ThresholdAlgorithm::Falt)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    // Step 1: x = (1, 2), Y = {0}: all scores 0, every margin 0 < 1, a_0 = b_1 = 1.
    // grad^0 = -x, grad^1 = +x, grad^thr = (1/1 - 1/1) x = 0.
    // w0 = 0.5 (1, 2) = (0.5, 1), w1 = (-0.5, -1), wthr = 0.
    m.learn(&dense(&[1.0, 2.0]), &[0]);
    let w = |m: &ThresholdLearner| [0, 1, 2].map(|i| [falt_weight(m, i, 0), falt_weight(m, i, 1)]);
    assert_eq!(w(&m), [[0.5, 1.0], [-0.5, -1.0], [0.0, 0.0]]);
    // Step 2: x = (0, 1), Y = {0, 1} (Ybar empty): s0 = 1, s1 = -1, t = 0.
    // i=0: margin 1, not < 1 -> a_0 = 0; i=1: margin -1 -> a_1 = 1; a = 1, |Y| = 2.
    // grad^0 = 0, grad^1 = -(1/2) x, grad^thr = (1/2) x.
    // w1 = (-0.5, -1 + 0.5 * 0.5) = (-0.5, -0.75); wthr = (0, -0.25).
    let mut scores = [0.0; 2];
    let mut labels = Vec::new();
    let t = m.predict(&dense(&[0.0, 1.0]), &mut scores, &mut labels);
    assert_eq!(
        (t, scores, labels.as_slice()),
        (0.0, [1.0, -1.0], &[0u32][..])
    );
    m.learn(&dense(&[0.0, 1.0]), &[0, 1]);
    assert_eq!(w(&m), [[0.5, 1.0], [-0.5, -0.75], [0.0, -0.25]]);
    // Predict x = (1, 1): s0 = 1.5, s1 = -1.25, t = -0.25 -> relative (1.75, -1.0).
    let t = m.predict(&dense(&[1.0, 1.0]), &mut scores, &mut labels);
    assert_eq!(
        (t, scores, labels.as_slice()),
        (-0.25, [1.75, -1.0], &[0u32][..])
    );
}

#[test]
fn falt_repetitions_stop_at_zero_loss() {
    // eta = 0.125, x = (1, 2), ||x||^2 = 5, Y = {0}, L = 2. Each step adds +-0.125 x to
    // w0 / w1 (the threshold gradient is 0), i.e. +-0.625 to the margins:
    // after 1 step the margins are 0.625 < 1 (loss > 0), after 2 steps 1.25 >= 1 (loss 0).
    let x = dense(&[1.0, 2.0]);
    let run = |m: usize| {
        let cfg = ThresholdConfig {
            eta: 0.125,
            repetitions: m,
            ..config(ThresholdAlgorithm::Falt)
        };
        let mut learner = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
        learner.learn(&x, &[0]);
        (falt_weight(&learner, 0, 0), falt_weight(&learner, 1, 1))
    };
    assert_eq!(run(1), (0.125, -0.25));
    assert_eq!(run(2), (0.25, -0.5));
    assert_eq!(run(10), (0.25, -0.5));
}

#[test]
fn one_salt_step_matches_hand_computation() {
    // L = 2, d = 2, eta = 1, delta = 1.
    let cfg = config(ThresholdAlgorithm::Salt);
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    // Step 1: x = (3, 4), Y = {0}: grad^0 = -x, grad^1 = +x, grad^thr = 0.
    // s^0 = (3, 4), H^0 = 1 + (3, 4) = (4, 5): w0 = (3/4, 4/5); w1 = -(3/4, 4/5); wthr = 0.
    m.learn(&dense(&[3.0, 4.0]), &[0]);
    assert_eq!(falt_weight(&m, 0, 0), 0.75);
    assert_eq!(falt_weight(&m, 0, 1), 0.8);
    assert_eq!(falt_weight(&m, 1, 0), -0.75);
    assert_eq!(falt_weight(&m, 1, 1), -0.8);
    assert_eq!(falt_weight(&m, 2, 0), 0.0);
    // Step 2: x = (0, 2), Y = {1}: s0 = 1.6, s1 = -1.6, t = 0: a_1 = 1, b_0 = 1.
    // grad^1 = -x = (0, -2), grad^0 = +x = (0, 2), grad^thr = 0.
    // Feature 1 of w0: s^2 = 16 + 4 = 20, w0_1 = 0.8 - 2 / (1 + sqrt 20); w1 symmetric.
    m.learn(&dense(&[0.0, 2.0]), &[1]);
    let want = 0.8 - 2.0 / (1.0 + 20f64.sqrt());
    assert!(close(falt_weight(&m, 0, 1), want, 1e-14));
    assert!(close(falt_weight(&m, 1, 1), -want, 1e-14));
    assert_eq!(
        falt_weight(&m, 0, 0),
        0.75,
        "x_0 = 0 leaves feature 0 alone"
    );
    match m.model() {
        ThresholdModel::Salt(s) => {
            assert!(close(s.squared_gradient_sum(0, 1), 20.0, 1e-14));
            assert_eq!(s.squared_gradient_sum(2, 1), 0.0);
        }
        _ => unreachable!(),
    }
}

// ---------------------------------------------------------------------------------------
// PA-I-BR and PA-II-BR.

#[test]
fn pa_steps_match_the_closed_forms() {
    let x1 = dense(&[1.0, 2.0]); // ||x1||^2 = 5
    let x2 = dense(&[1.0, 0.0]); // ||x2||^2 = 1
    // PA-I, C = 0.1: loss 1 on both labels, tau = min(0.1, 1/5) = 0.1.
    let cfg = ThresholdConfig {
        c: 0.1,
        ..config(ThresholdAlgorithm::Pa1Br)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    m.learn(&x1, &[0]);
    assert!(close(falt_weight(&m, 0, 1), 0.2, 1e-15));
    assert!(close(falt_weight(&m, 1, 0), -0.1, 1e-15));
    // PA-I, C = 10: tau = min(10, 1/5) = 0.2: w0 = 0.2 x1, w1 = -0.2 x1.
    // Then x2, Y = {1}: s0 = 0.2, s1 = -0.2.
    //   label 0 (y = -1): loss = 1 + 0.2 = 1.2, tau = min(10, 1.2/1) = 1.2: w0 = (0.2 - 1.2, 0.4)
    //   label 1 (y = +1): loss = 1 + 0.2 = 1.2, tau = 1.2: w1 = (-0.2 + 1.2, -0.4)
    let cfg = ThresholdConfig {
        c: 10.0,
        ..config(ThresholdAlgorithm::Pa1Br)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    m.learn(&x1, &[0]);
    assert!(close(falt_weight(&m, 0, 0), 0.2, 1e-15));
    m.learn(&x2, &[1]);
    assert!(close(falt_weight(&m, 0, 0), -1.0, 1e-14));
    assert!(close(falt_weight(&m, 0, 1), 0.4, 1e-14));
    assert!(close(falt_weight(&m, 1, 0), 1.0, 1e-14));
    assert!(close(falt_weight(&m, 1, 1), -0.4, 1e-14));
    let (mut s, mut labels) = ([0.0; 2], Vec::new());
    let t = m.predict(&x2, &mut s, &mut labels);
    assert_eq!((t, labels.as_slice()), (0.0, &[1u32][..]));
    // PA-II, C = 0.5: tau = loss / (||x||^2 + 1/(2C)) = 1 / (5 + 1) = 1/6.
    let cfg = ThresholdConfig {
        c: 0.5,
        ..config(ThresholdAlgorithm::Pa2Br)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    m.learn(&x1, &[0]);
    assert!(close(falt_weight(&m, 0, 1), 2.0 / 6.0, 1e-15));
    assert!(close(falt_weight(&m, 1, 0), -1.0 / 6.0, 1e-15));
    // Then x2, Y = {1}: s0 = 1/6, loss_0 = 1 + 1/6, tau_0 = (7/6) / (1 + 1) = 7/12.
    m.learn(&x2, &[1]);
    assert!(close(falt_weight(&m, 0, 0), 1.0 / 6.0 - 7.0 / 12.0, 1e-14));
}

fn rbf(x: &[f64], z: &[f64], width: f64) -> f64 {
    let d: f64 = x.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum();
    (-d / (2.0 * width)).exp()
}

#[test]
fn kernel_pa_steps_match_the_closed_forms() {
    // RBF: ||phi(x)||^2 = K(x, x) = 1.
    let (x1, x2, z) = ([1.0, 0.5], [0.0, -1.0], [0.3, 0.3]);
    let width = 0.7;
    let k12 = rbf(&x1, &x2, width);
    // PA-II, C = 0.5: first step tau = 1 / (1 + 1) = 0.5 on both labels: alpha = (0.5, -0.5).
    // Second, x2 with Y = {1}: s0 = 0.5 k12, s1 = -0.5 k12;
    //   label 0 (y=-1): loss 1 + 0.5 k12, tau0 = loss / 2, alpha = -tau0
    //   label 1 (y=+1): loss 1 + 0.5 k12, tau1 = loss / 2, alpha = +tau1
    let cfg = ThresholdConfig {
        c: 0.5,
        kernel_width: Some(width),
        ..config(ThresholdAlgorithm::Pa2Br)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    m.learn(&dense(&x1), &[0]);
    m.learn(&dense(&x2), &[1]);
    let tau = (1.0 + 0.5 * k12) / 2.0;
    let ThresholdModel::KernelPaBr(model) = m.model() else {
        unreachable!()
    };
    let svs = model.support().vectors();
    assert_eq!(svs.len(), 2);
    assert_eq!(svs[0].coefficients(), &[0.5, -0.5]);
    assert!(close(svs[1].coefficients()[0], -tau, 1e-14));
    assert!(close(svs[1].coefficients()[1], tau, 1e-14));
    let (mut s, mut labels) = ([0.0; 2], Vec::new());
    m.predict(&dense(&z), &mut s, &mut labels);
    let (k1, k2) = (rbf(&x1, &z, width), rbf(&x2, &z, width));
    assert!(close(s[0], 0.5 * k1 - tau * k2, 1e-12));
    assert!(close(s[1], -0.5 * k1 + tau * k2, 1e-12));
    // PA-I with a small C clips: tau = min(C, 1 / 1).
    let cfg = ThresholdConfig {
        c: 0.25,
        kernel_width: Some(width),
        ..config(ThresholdAlgorithm::Pa1Br)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    m.learn(&dense(&x1), &[1]);
    let ThresholdModel::KernelPaBr(model) = m.model() else {
        unreachable!()
    };
    assert_eq!(model.support().vectors()[0].coefficients(), &[-0.25, 0.25]);
}

// ---------------------------------------------------------------------------------------
// Kernel FALT against a direct implementation of section 5.

/// FALT(k) written directly from the paper: a list of (x_k, tau_k), scores as the direct
/// sum of tau_k^(i) K(x_k, x), one list entry per example (its steps merged), and the
/// same budget rule (remove the oldest) applied per example.
struct DirectKernelFalt {
    l: usize,
    eta: f64,
    m: usize,
    width: f64,
    budget: Option<usize>,
    svs: Vec<(Vec<f64>, Vec<f64>)>,
}

impl DirectKernelFalt {
    fn scores(&self, x: &[f64]) -> Vec<f64> {
        let mut s = vec![0.0; self.l + 1];
        for (z, tau) in &self.svs {
            let k = rbf(x, z, self.width);
            for i in 0..=self.l {
                s[i] += tau[i] * k;
            }
        }
        s
    }

    fn learn(&mut self, x: &[f64], y: &[u32]) {
        let l = self.l;
        let mut merged: Option<Vec<f64>> = None;
        for _ in 0..self.m {
            let mut s = self.scores(x);
            if let Some(tau) = &merged {
                let k = rbf(x, x, self.width);
                for i in 0..=l {
                    s[i] += tau[i] * k;
                }
            }
            let t = s[l];
            let ny = y.len() as f64;
            let nb = (l - y.len()) as f64;
            let mut tau = vec![0.0; l + 1];
            let (mut a, mut b) = (0.0, 0.0);
            for i in 0..l {
                if y.contains(&(i as u32)) {
                    if s[i] - t < 1.0 {
                        a += 1.0;
                        tau[i] = self.eta / ny;
                    }
                } else if t - s[i] < 1.0 {
                    b += 1.0;
                    tau[i] = -self.eta / nb;
                }
            }
            let pa = if ny > 0.0 { a / ny } else { 0.0 };
            let pb = if nb > 0.0 { b / nb } else { 0.0 };
            tau[l] = self.eta * (pb - pa);
            if a == 0.0 && b == 0.0 {
                break;
            }
            match &mut merged {
                None => merged = Some(tau),
                Some(m) => m.iter_mut().zip(&tau).for_each(|(u, v)| *u += v),
            }
        }
        if let Some(tau) = merged {
            self.svs.push((x.to_vec(), tau));
        }
        if let Some(budget) = self.budget {
            while self.svs.len() > budget {
                self.svs.remove(0);
            }
        }
    }
}

/// A nonlinear multi-label stream: label i is relevant when x is within radius r_i of a
/// centre c_i (a constant feature 1 is not needed by the RBF models).
fn ball_stream(seed: u64, n: usize, d: usize, l: usize) -> Vec<(Vec<f64>, Vec<u32>)> {
    let mut rng = seeded(seed, 1);
    let centres: Vec<Vec<f64>> = (0..l)
        .map(|_| (0..d).map(|_| sym(&mut rng)).collect())
        .collect();
    let radius2 = 0.45 * d as f64;
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| sym(&mut rng)).collect();
            let y = (0..l as u32)
                .filter(|&i| {
                    let c = &centres[i as usize];
                    let d2: f64 = x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum();
                    d2 < radius2
                })
                .collect();
            (x, y)
        })
        .collect()
}

#[test]
fn kernel_falt_equals_the_direct_computation_with_and_without_budget() {
    let (d, l) = (4, 3);
    let stream = ball_stream(5, 300, d, l);
    for (budget, repetitions) in [(None, 1), (None, 4), (Some(25), 3)] {
        let cfg = ThresholdConfig {
            eta: 0.5,
            repetitions,
            kernel_width: Some(0.8),
            budget,
            ..config(ThresholdAlgorithm::Falt)
        };
        let mut model = ThresholdLearner::new(&cfg, d, l, 0).unwrap();
        let mut direct = DirectKernelFalt {
            l,
            eta: 0.5,
            m: repetitions,
            width: 0.8,
            budget,
            svs: Vec::new(),
        };
        let (mut s, mut labels) = (vec![0.0; l], Vec::new());
        for (x, y) in &stream {
            let t = model.predict(&dense(x), &mut s, &mut labels);
            let want = direct.scores(x);
            assert!(close(t, want[l], 1e-9), "threshold {t} vs {}", want[l]);
            for i in 0..l {
                assert!(close(s[i], want[i] - want[l], 1e-9), "{s:?} vs {want:?}");
            }
            model.learn(&dense(x), y);
            direct.learn(x, y);
            assert_eq!(model.support_vectors(), direct.svs.len());
        }
        if let Some(b) = budget {
            assert_eq!(model.support_vectors(), b, "the budget was reached");
        }
    }
}

#[test]
fn budget_bounds_the_support_vectors_and_a_large_budget_changes_nothing() {
    let (d, l) = (5, 4);
    let stream = ball_stream(9, 600, d, l);
    for algorithm in [
        ThresholdAlgorithm::Falt,
        ThresholdAlgorithm::Pa1Br,
        ThresholdAlgorithm::Pa2Br,
    ] {
        let cfg = |budget| ThresholdConfig {
            repetitions: 2,
            kernel_width: Some(1.0),
            budget,
            ..config(algorithm)
        };
        let mut small = ThresholdLearner::new(&cfg(Some(30)), d, l, 0).unwrap();
        let mut large = ThresholdLearner::new(&cfg(Some(stream.len())), d, l, 0).unwrap();
        let mut free = ThresholdLearner::new(&cfg(None), d, l, 0).unwrap();
        let (mut s1, mut s2, mut l1, mut l2) = (vec![0.0; l], vec![0.0; l], Vec::new(), Vec::new());
        for (x, y) in &stream {
            let x = dense(x);
            let t1 = large.predict(&x, &mut s1, &mut l1);
            let t2 = free.predict(&x, &mut s2, &mut l2);
            assert_eq!(t1.to_bits(), t2.to_bits());
            assert_eq!(
                s1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                s2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(l1, l2);
            small.learn(&x, y);
            large.learn(&x, y);
            free.learn(&x, y);
            assert!(small.support_vectors() <= 30);
        }
        assert_eq!(small.support_vectors(), 30, "{algorithm}");
        assert!(free.support_vectors() > 30);
        assert_eq!(large.support_vectors(), free.support_vectors());
    }
}

// ---------------------------------------------------------------------------------------
// Sparse and dense inputs.

#[test]
fn sparse_and_dense_inputs_give_bit_identical_results() {
    let (d, l) = (20, 4);
    let mut rng = seeded(3, 2);
    let truth: Vec<f64> = (0..(l + 1) * d).map(|_| sym(&mut rng)).collect();
    let stream: Vec<(Vec<f64>, Vec<u32>)> = (0..400)
        .map(|_| {
            let x: Vec<f64> = (0..d)
                .map(|_| {
                    let u = uniform(&mut rng);
                    if u < 0.65 {
                        0.0
                    } else if u < 0.67 {
                        f64::NAN
                    } else {
                        sym(&mut rng)
                    }
                })
                .collect();
            let score = |i: usize| {
                (0..d)
                    .map(|j| {
                        if x[j].is_nan() {
                            0.0
                        } else {
                            truth[i * d + j] * x[j]
                        }
                    })
                    .sum::<f64>()
            };
            let y = (0..l as u32)
                .filter(|&i| score(i as usize) > score(l))
                .collect();
            (x, y)
        })
        .collect();
    for cfg in all_configs(2.0, Some(50), 3) {
        let mut a = ThresholdLearner::new(&cfg, d, l, 0).unwrap();
        let mut b = ThresholdLearner::new(&cfg, d, l, 0).unwrap();
        let (mut sa, mut sb, mut la, mut lb) = (vec![0.0; l], vec![0.0; l], Vec::new(), Vec::new());
        for (x, y) in &stream {
            let (xd, xs) = (dense(x), sparse_of(x));
            let ta = a.predict(&xd, &mut sa, &mut la);
            let tb = b.predict(&xs, &mut sb, &mut lb);
            assert_eq!(ta.to_bits(), tb.to_bits(), "{cfg:?}");
            for (u, v) in sa.iter().zip(&sb) {
                assert_eq!(u.to_bits(), v.to_bits(), "{cfg:?}");
            }
            assert_eq!(la, lb);
            a.learn(&xd, y);
            b.learn(&xs, y);
        }
        assert!(
            sa.iter().any(|&v| v != 0.0),
            "the model learned something: {cfg:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Learning.

/// A stream whose labels are a linear ALT classifier of the features (with a constant 1
/// feature): label i is relevant when u_i . x > u_thr . x + 1 (about one label in four).
fn linear_stream(seed: u64, n: usize, d: usize, l: usize) -> Vec<(Vec<f64>, Vec<u32>)> {
    let mut rng = seeded(seed, 7);
    let dim = d + 1;
    let u: Vec<f64> = (0..(l + 1) * dim).map(|_| sym(&mut rng)).collect();
    (0..n)
        .map(|_| {
            let mut x: Vec<f64> = (0..d).map(|_| sym(&mut rng)).collect();
            x.push(1.0);
            let score = |i: usize| (0..dim).map(|j| u[i * dim + j] * x[j]).sum::<f64>();
            let y = (0..l as u32)
                .filter(|&i| score(i as usize) > score(l) + 1.0)
                .collect();
            (x, y)
        })
        .collect()
}

/// The best F1 of a constant prediction on `window`: all labels, or the labels relevant
/// in more than half of the examples.
fn trivial_f1(window: &[(Vec<f64>, Vec<u32>)], l: usize) -> f64 {
    let all: Vec<u32> = (0..l as u32).collect();
    let frequent: Vec<u32> = all
        .iter()
        .copied()
        .filter(|i| window.iter().filter(|(_, y)| y.contains(i)).count() * 2 > window.len())
        .collect();
    let mean = |p: &[u32]| window.iter().map(|(_, y)| f1(p, y)).sum::<f64>() / window.len() as f64;
    mean(&all).max(mean(&frequent))
}

/// Prequential F1 over the first `head` and the last `tail` examples.
fn prequential_f1(
    learner: &mut ThresholdLearner,
    stream: &[(Vec<f64>, Vec<u32>)],
    head: usize,
    tail: usize,
) -> (f64, f64) {
    let l = learner.num_labels();
    let (mut s, mut labels) = (vec![0.0; l], Vec::new());
    let (mut first, mut last) = (0.0, 0.0);
    for (t, (x, y)) in stream.iter().enumerate() {
        let x = dense(x);
        learner.predict(&x, &mut s, &mut labels);
        let f = f1(&labels, y);
        if t < head {
            first += f;
        }
        if t >= stream.len() - tail {
            last += f;
        }
        learner.learn(&x, y);
    }
    (first / head as f64, last / tail as f64)
}

#[test]
fn every_algorithm_learns_a_linear_stream() {
    // The paper's algorithms (no budget): each learns well beyond its first examples and
    // beyond the best constant prediction.
    let (d, l, n) = (8, 5, 4000);
    let stream = linear_stream(21, n, d, l);
    let baseline = trivial_f1(&stream[n - 1000..], l);
    let mut failures = Vec::new();
    for cfg in all_configs(2.0, None, 1) {
        let mut learner = ThresholdLearner::new(&cfg, d + 1, l, 0).unwrap();
        let (first, last) = prequential_f1(&mut learner, &stream, 200, 1000);
        println!(
            "{} kernel {:?}: F1 first 200 {first:.3}, last 1000 {last:.3}, trivial {baseline:.3}",
            cfg.algorithm, cfg.kernel_width
        );
        if !(last > first + 0.1 && last > baseline + 0.2) {
            failures.push(format!("{cfg:?}: {first} -> {last}, trivial {baseline}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn budgeted_kernel_models_still_learn_a_linear_stream() {
    // With a budget (beyond the paper) the kernel models keep the 1000 most recent
    // support vectors: memory is bounded and they still learn well beyond a constant
    // prediction, though less than without the budget.
    let (d, l, n) = (8, 5, 4000);
    let stream = linear_stream(21, n, d, l);
    let baseline = trivial_f1(&stream[n - 1000..], l);
    for cfg in all_configs(2.0, Some(1000), 1) {
        if cfg.kernel_width.is_none() {
            continue;
        }
        let mut learner = ThresholdLearner::new(&cfg, d + 1, l, 0).unwrap();
        let (first, last) = prequential_f1(&mut learner, &stream, 200, 1000);
        println!("{} budget 1000: F1 {first:.3} -> {last:.3}", cfg.algorithm);
        assert!(
            last > baseline + 0.3,
            "{cfg:?}: {last} vs trivial {baseline}"
        );
        assert!(last > first + 0.05, "{cfg:?}: {first} -> {last}");
        assert_eq!(learner.support_vectors(), 1000);
    }
}

#[test]
fn repetitions_help_falt_and_salt() {
    // The paper's finding (section 6.4): a larger M is better. Checked loosely: M = L
    // is at least as good as M = 1 minus a little noise, and both learn.
    let (d, l, n) = (8, 5, 3000);
    let stream = linear_stream(4, n, d, l);
    for algorithm in [ThresholdAlgorithm::Falt, ThresholdAlgorithm::Salt] {
        let run = |m| {
            let cfg = ThresholdConfig {
                repetitions: m,
                ..config(algorithm)
            };
            let mut learner = ThresholdLearner::new(&cfg, d + 1, l, 0).unwrap();
            prequential_f1(&mut learner, &stream, 200, 1000).1
        };
        let (one, many) = (run(1), run(l));
        println!("{algorithm}: M=1 {one:.3}, M=L {many:.3}");
        assert!(many > one - 0.02, "{algorithm}: M=1 {one}, M=L {many}");
    }
}

#[test]
fn kernel_falt_learns_a_nonlinear_stream_that_linear_falt_cannot() {
    let (d, l, n) = (3, 4, 3000);
    let stream = ball_stream(13, n, d, l);
    let baseline = trivial_f1(&stream[n - 1000..], l);
    let linear_cfg = config(ThresholdAlgorithm::Falt);
    let kernel_cfg = |budget| ThresholdConfig {
        kernel_width: Some(0.5),
        budget,
        repetitions: 4,
        ..config(ThresholdAlgorithm::Falt)
    };
    let mut linear = ThresholdLearner::new(&linear_cfg, d, l, 0).unwrap();
    let mut kernel = ThresholdLearner::new(&kernel_cfg(None), d, l, 0).unwrap();
    let mut budgeted = ThresholdLearner::new(&kernel_cfg(Some(300)), d, l, 0).unwrap();
    let (_, lin) = prequential_f1(&mut linear, &stream, 200, 1000);
    let (first, ker) = prequential_f1(&mut kernel, &stream, 200, 1000);
    let (_, bud) = prequential_f1(&mut budgeted, &stream, 200, 1000);
    println!(
        "balls: linear {lin:.3}, kernel {first:.3} -> {ker:.3}, budget 300 {bud:.3}, trivial {baseline:.3}"
    );
    assert!(ker > lin + 0.15, "kernel {ker} vs linear {lin}");
    assert!(ker > baseline + 0.3 && ker > first + 0.1);
    // The 300 most recent support vectors still beat the linear model.
    assert!(bud > lin + 0.05, "budget 300: {bud} vs linear {lin}");
    assert_eq!(budgeted.support_vectors(), 300);
}

// ---------------------------------------------------------------------------------------
// The score threshold.

#[test]
fn score_threshold_step_matches_hand_computation() {
    // dim 1, no standardization, eta = 0.5, x = (2), s = (1, -1, 0.5), Y = {0}, theta = 0.
    // Y:    i=0: margin 1 - 0 = 1, not < 1            -> a = 0
    // Ybar: j=1: margin 0 + 1 = 1, not < 1; j=2: 0 - 0.5 < 1 -> b = 1, |Ybar| = 2
    // g = 0 - 1/2; v <- v - 0.5 * (-1/2) * (2, 1) = (0.5, 0.25).
    let cfg = ScoreThresholdConfig {
        eta: 0.5,
        repetitions: 1,
        standardize: false,
        learn_scale: false,
    };
    let mut t = ScoreThreshold::new(&cfg, 1, 0).unwrap();
    let x = dense(&[2.0]);
    let s = [1.0, -1.0, 0.5];
    t.learn(&x, &s, &[0]);
    assert_eq!((t.weight(0), t.weight(1)), (0.5, 0.25));
    let mut labels = Vec::new();
    // theta(x) = 0.5 * 2 + 0.25 = 1.25: no score above it.
    assert_eq!(t.predict(&x, &s, &mut labels), 1.25);
    assert!(labels.is_empty());
    assert_eq!(t.predict(&x, &[2.0, 1.3, 1.25], &mut labels), 1.25);
    assert_eq!(labels, vec![0, 1]);
}

/// Scores of a known linear scorer on an arbitrary scale, and labels from a known
/// linear threshold.
fn scored_stream(
    seed: u64,
    n: usize,
    d: usize,
    l: usize,
    scale: f64,
    offset: f64,
) -> Vec<(Vec<f64>, Vec<f64>, Vec<u32>)> {
    let mut rng = seeded(seed, 9);
    let u: Vec<f64> = (0..l * d).map(|_| sym(&mut rng)).collect();
    let c: Vec<f64> = (0..=d).map(|_| 0.5 * sym(&mut rng)).collect();
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| sym(&mut rng)).collect();
            let raw: Vec<f64> = (0..l)
                .map(|i| (0..d).map(|j| u[i * d + j] * x[j]).sum())
                .collect();
            let theta = (0..d).map(|j| c[j] * x[j]).sum::<f64>() + c[d];
            let y = (0..l as u32).filter(|&i| raw[i as usize] > theta).collect();
            let s = raw.iter().map(|r| scale * r + offset).collect();
            (x, s, y)
        })
        .collect()
}

#[test]
fn score_threshold_learns_a_threshold_on_scaled_scores() {
    let (d, l, n) = (5, 8, 4000);
    let stream = scored_stream(17, n, d, l, 100.0, 50.0);
    let mut t = ScoreThreshold::new(&ScoreThresholdConfig::default(), d, 0).unwrap();
    let mut labels = Vec::new();
    let (mut first, mut last, mut at_mean) = (0.0, 0.0, 0.0);
    for (k, (x, s, y)) in stream.iter().enumerate() {
        let x = dense(x);
        t.predict(&x, s, &mut labels);
        if k < 200 {
            first += f1(&labels, y) / 200.0;
        }
        if k >= n - 1000 {
            last += f1(&labels, y) / 1000.0;
            // A fixed threshold at the running mean of the scores.
            let (mu, _) = t.scale();
            let fixed: Vec<u32> = (0..l as u32).filter(|&i| s[i as usize] > mu).collect();
            at_mean += f1(&fixed, y) / 1000.0;
        }
        t.learn(&x, s, y);
    }
    println!(
        "score threshold: F1 {first:.3} -> {last:.3}, fixed at the mean {at_mean:.3}, alpha {} v {:?} scale {:?}",
        t.alpha(),
        (0..=d).map(|j| t.weight(j)).collect::<Vec<_>>(),
        t.scale()
    );
    // The threshold starts at 0 on the standardized scale, i.e. at the running mean of
    // the scores, which is already a fair rule on this stream (F1 about 0.9 over the first
    // 200): the learned threshold must improve on it and clearly beat the fixed rule.
    assert!(last > first + 0.03, "{first} -> {last}");
    assert!(
        last > at_mean + 0.1,
        "{last} vs fixed at the mean {at_mean}"
    );
    assert!(last > 0.95);
}

#[test]
fn standardized_score_threshold_is_scale_invariant() {
    // Scaling every score by 2^10 is exact in floating point, and so is the whole
    // standardization: the predicted sets are identical and the thresholds scale.
    let (d, l) = (4, 6);
    let stream = scored_stream(23, 1500, d, l, 1.0, 0.0);
    let cfg = ScoreThresholdConfig {
        repetitions: 3,
        ..ScoreThresholdConfig::default()
    };
    let mut a = ScoreThreshold::new(&cfg, d, 0).unwrap();
    let mut b = ScoreThreshold::new(&cfg, d, 0).unwrap();
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    for (x, s, y) in &stream {
        let x = dense(x);
        let scaled: Vec<f64> = s.iter().map(|v| v * 1024.0).collect();
        let ta = a.predict(&x, s, &mut la);
        let tb = b.predict(&x, &scaled, &mut lb);
        assert_eq!(la, lb);
        assert_eq!((ta * 1024.0).to_bits(), tb.to_bits());
        a.learn(&x, s, y);
        b.learn(&x, &scaled, y);
    }
}

// ---------------------------------------------------------------------------------------
// Configuration errors and bad input.

#[test]
fn invalid_configurations_are_errors() {
    let bad = [
        ThresholdConfig {
            eta: 0.0,
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            eta: -1.0,
            ..config(ThresholdAlgorithm::Salt)
        },
        ThresholdConfig {
            eta: f64::NAN,
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            delta: 0.0,
            ..config(ThresholdAlgorithm::Salt)
        },
        ThresholdConfig {
            repetitions: 0,
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            c: 0.0,
            ..config(ThresholdAlgorithm::Pa1Br)
        },
        ThresholdConfig {
            c: -2.0,
            ..config(ThresholdAlgorithm::Pa2Br)
        },
        ThresholdConfig {
            kernel_width: Some(0.0),
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            kernel_width: Some(-1.0),
            ..config(ThresholdAlgorithm::Pa1Br)
        },
        ThresholdConfig {
            kernel_width: Some(f64::INFINITY),
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            kernel_width: Some(1.0),
            budget: Some(0),
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            budget: Some(10),
            ..config(ThresholdAlgorithm::Falt)
        },
        ThresholdConfig {
            kernel_width: Some(1.0),
            ..config(ThresholdAlgorithm::Salt)
        },
    ];
    for cfg in &bad {
        let err = ThresholdLearner::new(cfg, 3, 2, 0).expect_err(&format!("{cfg:?}"));
        assert!(!err.to_string().is_empty());
    }
    assert!(ThresholdLearner::new(&ThresholdConfig::default(), 3, 0, 0).is_err());
    for cfg in all_configs(1.0, Some(5), 2) {
        assert!(ThresholdLearner::new(&cfg, 3, 2, 0).is_ok());
    }
    let bad_scores = [
        ScoreThresholdConfig {
            eta: 0.0,
            ..ScoreThresholdConfig::default()
        },
        ScoreThresholdConfig {
            repetitions: 0,
            ..ScoreThresholdConfig::default()
        },
    ];
    for cfg in &bad_scores {
        assert!(ScoreThreshold::new(cfg, 3, 0).is_err());
    }
    assert_eq!(
        "salt".parse::<ThresholdAlgorithm>(),
        Ok(ThresholdAlgorithm::Salt)
    );
    assert!("nope".parse::<ThresholdAlgorithm>().is_err());
}

#[test]
fn bad_numbers_never_panic_and_non_finite_values_count_as_zero() {
    let (d, l) = (4, 3);
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        -1e308,
        5e-324,
        0.0,
        1.0,
    ];
    let mut rng = seeded(1, 1);
    let clean_stream = linear_stream(2, 200, d - 1, l);
    for cfg in all_configs(1.0, Some(20), 3) {
        // A model trained on clean data: NaN and inf are read as 0.
        let mut m = ThresholdLearner::new(&cfg, d, l, 0).unwrap();
        for (x, y) in &clean_stream {
            m.learn(&dense(x), y);
        }
        let (mut s1, mut s2, mut l1, mut l2) = (vec![0.0; l], vec![0.0; l], Vec::new(), Vec::new());
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let t1 = m.predict(&dense(&[0.5, bad, -0.25, 1.0]), &mut s1, &mut l1);
            let t2 = m.predict(&dense(&[0.5, 0.0, -0.25, 1.0]), &mut s2, &mut l2);
            assert_eq!(t1.to_bits(), t2.to_bits(), "{cfg:?}");
            assert_eq!(l1, l2);
            assert_eq!(
                s1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                s2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
        // Garbage in: nothing panics, the predicted sets stay valid label lists.
        for _ in 0..300 {
            let x: Vec<f64> = (0..d)
                .map(|_| specials[(uniform(&mut rng) * specials.len() as f64) as usize])
                .collect();
            let y: Vec<u32> = (0..l as u32 + 2)
                .filter(|_| uniform(&mut rng) < 0.5)
                .collect();
            let xs = if uniform(&mut rng) < 0.5 {
                dense(&x)
            } else {
                // Wrong dimension on purpose: an index beyond the model is ignored.
                Features::Sparse {
                    indices: vec![0, 2, 7],
                    values: vec![x[0], x[1], x[2]],
                    dim: 9,
                }
            };
            m.predict(&xs, &mut s1, &mut l1);
            assert!(l1.windows(2).all(|w| w[0] < w[1]) && l1.iter().all(|&i| (i as usize) < l));
            m.learn(&xs, &y);
            m.learn(&dense(&x[..2]), &[]);
        }
    }
    let mut t = ScoreThreshold::new(&ScoreThresholdConfig::default(), d, 0).unwrap();
    let mut labels = Vec::new();
    for _ in 0..100 {
        let x: Vec<f64> = (0..d)
            .map(|_| specials[(uniform(&mut rng) * 8.0) as usize])
            .collect();
        let s: Vec<f64> = (0..l)
            .map(|_| specials[(uniform(&mut rng) * 8.0) as usize])
            .collect();
        t.predict(&dense(&x), &s, &mut labels);
        t.learn(&dense(&x), &s, &[0, 5]);
    }
}

#[test]
fn trained_models_survive_a_json_round_trip() {
    let (d, l) = (6, 4);
    let stream = linear_stream(8, 300, d - 1, l);
    for cfg in all_configs(1.5, Some(40), 2) {
        let mut m = ThresholdLearner::new(&cfg, d, l, 0).unwrap();
        for (x, y) in &stream[..250] {
            m.learn(&dense(x), y);
        }
        let json = serde_json::to_string(&m).unwrap();
        let mut back: ThresholdLearner = serde_json::from_str(&json).unwrap();
        let (mut s1, mut s2, mut l1, mut l2) = (vec![0.0; l], vec![0.0; l], Vec::new(), Vec::new());
        for (x, y) in &stream[250..] {
            let x = dense(x);
            assert_eq!(
                m.predict(&x, &mut s1, &mut l1).to_bits(),
                back.predict(&x, &mut s2, &mut l2).to_bits()
            );
            assert_eq!((&s1, &l1), (&s2, &l2));
            m.learn(&x, y);
            back.learn(&x, y);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Beyond the paper: online min-max scaling and the Hedge grid.

#[test]
fn online_scaling_makes_a_kernel_model_independent_of_the_features_units() {
    // The nonlinear ball stream, once as it is and once with every feature in other
    // units (times 1000, plus 500). Unscaled, the fixed width sees the second stream as
    // distances of about 10^6 and learns nothing; scaled, both streams look alike.
    let (d, l, n) = (6, 4, 3000);
    let stream = ball_stream(5, n, d, l);
    let units: Vec<(Vec<f64>, Vec<u32>)> = stream
        .iter()
        .map(|(x, y)| (x.iter().map(|v| 1000.0 * v + 500.0).collect(), y.clone()))
        .collect();
    let kernel = |scaling| ThresholdConfig {
        kernel_width: Some(0.5),
        repetitions: 4,
        scaling,
        ..config(ThresholdAlgorithm::Falt)
    };
    let run = |cfg: &ThresholdConfig, s: &[(Vec<f64>, Vec<u32>)]| {
        let mut m = ThresholdLearner::new(cfg, d, l, 0).unwrap();
        prequential_f1(&mut m, s, 200, 1000).1
    };
    let scaled = run(&kernel(FeatureScaling::MinMax), &stream);
    let scaled_units = run(&kernel(FeatureScaling::MinMax), &units);
    let raw_units = run(&kernel(FeatureScaling::None), &units);
    let baseline = trivial_f1(&stream[n - 1000..], l);
    println!(
        "scaled {scaled:.3}, other units {scaled_units:.3}, unscaled other units {raw_units:.3}, trivial {baseline:.3}"
    );
    assert!(
        (scaled - scaled_units).abs() < 0.02,
        "{scaled} vs {scaled_units}"
    );
    assert!(scaled > baseline + 0.1, "{scaled} vs trivial {baseline}");
    assert!(
        scaled_units > raw_units + 0.1,
        "{scaled_units} vs {raw_units}"
    );
}

#[test]
fn online_scaling_uses_the_learned_examples_only() {
    // Predicting never moves the statistics (a frozen test stays frozen); learning does.
    let cfg = ThresholdConfig {
        scaling: FeatureScaling::MinMax,
        ..config(ThresholdAlgorithm::Falt)
    };
    let mut m = ThresholdLearner::new(&cfg, 2, 2, 0).unwrap();
    let (mut s, mut labels) = (vec![0.0; 2], Vec::new());
    m.predict(&dense(&[3.0, -7.0]), &mut s, &mut labels);
    assert_eq!(
        m.scaler().unwrap().range(0),
        Some((f64::INFINITY, f64::NEG_INFINITY))
    );
    m.learn(&dense(&[3.0, -7.0]), &[0]);
    m.learn(&dense(&[5.0, -1.0]), &[1]);
    assert_eq!(m.scaler().unwrap().range(0), Some((3.0, 5.0)));
    assert_eq!(m.scaler().unwrap().range(1), Some((-7.0, -1.0)));
}

#[test]
fn hedge_grid_follows_its_least_loss_member_and_predicts_as_it_alone() {
    let (d, l, n) = (8, 5, 2000);
    let stream = linear_stream(21, n, d, l);
    let base = ThresholdConfig {
        repetitions: 2,
        ..config(ThresholdAlgorithm::Falt)
    };
    // A member that barely moves (eta 1e-6) against a working one.
    let grid = ThresholdConfig {
        grid: Some(ThresholdGrid {
            etas: vec![1e-6, 0.5],
            kernel_widths: vec![],
        }),
        ..base.clone()
    };
    let mut g = ThresholdLearner::new(&grid, d + 1, l, 0).unwrap();
    let mut members: Vec<ThresholdLearner> = [1e-6, 0.5]
        .iter()
        .map(|&eta| {
            ThresholdLearner::new(
                &ThresholdConfig {
                    eta,
                    ..base.clone()
                },
                d + 1,
                l,
                0,
            )
            .unwrap()
        })
        .collect();
    let (mut s1, mut s2, mut l1, mut l2) = (vec![0.0; l], vec![0.0; l], Vec::new(), Vec::new());
    let mut f1_sums = [0.0; 3];
    for (t, (x, y)) in stream.iter().enumerate() {
        let x = dense(x);
        g.predict(&x, &mut s1, &mut l1);
        f1_sums[2] += f1(&l1, y);
        for (k, m) in members.iter().enumerate() {
            m.predict(&x, &mut s2, &mut l2);
            f1_sums[k] += f1(&l2, y);
        }
        let ThresholdModel::Grid(h) = g.model() else {
            panic!("not a grid")
        };
        if t >= 200 {
            // The grid predicts exactly as its leader alone, and the leader is the
            // working member.
            assert_eq!(h.leader(), 1, "example {t}: {:?}", h.weights());
            members[1].predict(&x, &mut s2, &mut l2);
            assert_eq!((&s1, &l1), (&s2, &l2), "example {t}");
        }
        g.learn(&x, y);
        for m in &mut members {
            m.learn(&x, y);
        }
    }
    let ThresholdModel::Grid(h) = g.model() else {
        panic!("not a grid")
    };
    let w = h.weights();
    assert!(w[1] > 0.999, "{w:?}");
    assert_eq!(h.settings(), &[(1e-6, None), (0.5, None)]);
    println!(
        "prequential F1 sums: eta 1e-6 {}, eta 0.5 {}, grid {}",
        f1_sums[0], f1_sums[1], f1_sums[2]
    );
    assert!(f1_sums[2] > f1_sums[0] + 0.1 * n as f64, "{f1_sums:?}");
    assert!(f1_sums[2] > f1_sums[1] - 0.05 * n as f64, "{f1_sums:?}");
}

#[test]
fn grids_and_scaled_models_survive_a_json_round_trip() {
    let (d, l) = (6, 4);
    let stream = linear_stream(8, 300, d - 1, l);
    let linear = ThresholdConfig {
        repetitions: 2,
        scaling: FeatureScaling::MinMax,
        ..config(ThresholdAlgorithm::Salt)
    };
    let kernel = ThresholdConfig {
        kernel_width: Some(1.0),
        budget: Some(40),
        ..linear.clone()
    };
    let kernel = ThresholdConfig {
        algorithm: ThresholdAlgorithm::Falt,
        ..kernel
    };
    for cfg in [
        linear.clone(),
        ThresholdConfig {
            grid: Some(ThresholdGrid::default_for(&linear, false, false)),
            ..linear.clone()
        },
        ThresholdConfig {
            grid: Some(ThresholdGrid::default_for(&kernel, false, false)),
            ..kernel.clone()
        },
    ] {
        let mut m = ThresholdLearner::new(&cfg, d, l, 0).unwrap();
        for (x, y) in &stream[..250] {
            m.learn(&dense(x), y);
        }
        let json = serde_json::to_string(&m).unwrap();
        let mut back: ThresholdLearner = serde_json::from_str(&json).unwrap();
        let (mut s1, mut s2, mut l1, mut l2) = (vec![0.0; l], vec![0.0; l], Vec::new(), Vec::new());
        for (x, y) in &stream[250..] {
            let x = dense(x);
            assert_eq!(
                m.predict(&x, &mut s1, &mut l1).to_bits(),
                back.predict(&x, &mut s2, &mut l2).to_bits()
            );
            assert_eq!((&s1, &l1), (&s2, &l2));
            m.learn(&x, y);
            back.learn(&x, y);
        }
    }
}

#[test]
fn invalid_grids_are_errors() {
    let falt = config(ThresholdAlgorithm::Falt);
    let grid = |etas: Vec<f64>, kernel_widths: Vec<f64>| {
        Some(ThresholdGrid {
            etas,
            kernel_widths,
        })
    };
    for (cfg, needle) in [
        (
            ThresholdConfig {
                grid: grid(vec![1.0], vec![]),
                ..config(ThresholdAlgorithm::Pa1Br)
            },
            "grid applies",
        ),
        (
            ThresholdConfig {
                grid: grid(vec![], vec![]),
                ..falt.clone()
            },
            "step size",
        ),
        (
            ThresholdConfig {
                grid: grid(vec![f64::NAN], vec![]),
                ..falt.clone()
            },
            "eta",
        ),
        (
            ThresholdConfig {
                grid: grid(vec![1.0], vec![2.0]),
                ..falt.clone()
            },
            "kernel models only",
        ),
        (
            ThresholdConfig {
                grid: grid(vec![1.0], vec![]),
                kernel_width: Some(1.0),
                ..falt.clone()
            },
            "kernel width",
        ),
        (
            ThresholdConfig {
                grid: grid(vec![1.0], vec![-1.0]),
                kernel_width: Some(1.0),
                ..falt.clone()
            },
            "kernel width",
        ),
        (
            ThresholdConfig {
                grid: grid(vec![1.0; 13], vec![1.0; 5]),
                kernel_width: Some(1.0),
                ..falt.clone()
            },
            "members",
        ),
    ] {
        let err = ThresholdLearner::new(&cfg, 3, 2, 0).unwrap_err();
        assert!(err.to_string().contains(needle), "{cfg:?}: {err}");
    }
}
