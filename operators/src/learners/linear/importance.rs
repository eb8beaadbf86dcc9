//! Importance-weight-aware ("invariant") updates (Karampatziakis & Langford 2011, "Online
//! importance weight aware updates").
//!
//! A gradient step of size `η h` for an example of importance weight `h` overshoots when
//! `η h` is large. The invariant update instead follows the gradient in infinitely small
//! steps for a total learning time `T = η h`, with the per-input learning rates frozen for
//! the duration of the update. In a linear model every small step moves the weights of
//! output `c` along the same direction `D_c x` (the rate-scaled input), so only the scores
//! move, and they move along an ordinary differential equation in score space:
//!
//! ```text
//! dP_c/dt = -ppu_c * dℓ/dP_c(P),   t in [0, T],   ppu_c = Σ_j x_j² rate_{j,c}
//! ```
//!
//! (`ppu_c`, VW's "prediction per update", is how much a unit update coefficient moves
//! score `c`). The learner then sets each weight vector's update coefficient to
//! `(P_c(T) - P_c(0)) / ppu_c`. Splitting `h` into `h/n` applied `n` times gives the same
//! `P(T)` (the flow of an ODE composes), which is the invariance property, and the scores
//! never pass the loss's minimizer, so a huge `h` cannot overshoot.

use super::link::softmax_into;

/// `T · ppu` is capped here: beyond it the logistic margin has grown by about 690 and the
/// prediction is saturated anyway; the cap keeps every intermediate value finite.
const MAX_PUSH: f64 = 1e300;

/// The margin increase `δ >= 0` of the exact importance-aware logistic update.
///
/// For the logistic loss `ln(1 + e^{-z})` of the margin `z = y s` (`y = ±1`), the score
/// ODE is `dz/dt = ppu / (1 + e^z)`, i.e. `(1 + e^z) dz = ppu dt`; integrating from `z0`
/// over a learning time `T` with `a = T · ppu`:
///
/// ```text
/// δ + e^{z0} (e^δ - 1) = a,    δ = z(T) - z0
/// ```
///
/// (equivalently `z(T) = c - W(e^c)` with `c = z0 + e^{z0} + a` and `W` Lambert's function,
/// the closed form in Karampatziakis & Langford's Table 1). Dividing by `1 + e^{z0}`:
/// `σ δ + (1 - σ) expm1(δ) = σ a` with `σ = 1 / (1 + e^{z0})`, which stays finite for any
/// `z0`. The left side is convex and increasing in `δ`, so Newton's method started from an
/// upper bound of the root (`min(σ a, ln(1 + a e^{-z0}))`) decreases monotonically to it.
pub(super) fn logistic_margin_step(z0: f64, a: f64) -> f64 {
    if a.is_nan() || a <= 0.0 || z0.is_nan() {
        return 0.0;
    }
    let a = a.min(MAX_PUSH);
    // σ = 1/(1 + e^{z0}) and ρ = 1 - σ, both from one exponential, without cancellation.
    let e = (-z0.abs()).exp();
    let (sigma, rho, ln_rho) = if z0 >= 0.0 {
        (e / (1.0 + e), 1.0 / (1.0 + e), -e.ln_1p())
    } else {
        (1.0 / (1.0 + e), e / (1.0 + e), z0 - e.ln_1p())
    };
    if sigma == 0.0 {
        return 0.0;
    }
    // Whether ρ e^δ can be computed directly (else in log space).
    let direct = |d: f64| d < 700.0 && rho > f64::MIN_POSITIVE;
    let target = sigma * a;
    // Upper bounds of the root: σ a, and ln(1 + a e^{-z0}) (from dropping σ δ). The
    // second is only smaller when the push is large.
    let mut d = if target > 0.5 {
        let ln_a_over_e = a.ln() - z0;
        let bound = if ln_a_over_e < 700.0 {
            ln_a_over_e.exp().ln_1p()
        } else {
            ln_a_over_e
        };
        target.min(bound)
    } else {
        target
    };
    for _ in 0..100 {
        // f(δ) = σ δ + ρ (e^δ - 1) - σ a and its slope σ + ρ e^δ.
        let (excess, grow) = if direct(d) {
            let m1 = d.exp_m1();
            (rho * m1, rho * (m1 + 1.0))
        } else {
            let g = (ln_rho + d).exp();
            (g - rho, g)
        };
        let f = sigma * d + excess - target;
        if f <= 0.0 {
            break;
        }
        let next = d - f / (sigma + grow);
        if next.is_nan() || next >= d {
            break;
        }
        d = next.max(0.0);
    }
    d
}

/// The largest change of any score in one integration step of [`softmax_flow`].
const FLOW_STEP: f64 = 0.1;
/// A safety cap on the number of integration steps (a huge importance weight needs about
/// `ln(T · ppu) / FLOW_STEP` of them); stopping early leaves a smaller, still safe update.
const FLOW_MAX_STEPS: usize = 20_000;

/// Integrates the softmax score ODE `dP_c/dt = -ppu_c (p_c(P) - 1{c = label})` from
/// `t = 0` to `t = time`, in place; returns the number of integration steps.
///
/// There is no closed form for `k > 2` classes, but the ODE lives in score space (`k`
/// dimensions, whatever the number of inputs), so it is integrated numerically to high
/// accuracy: classical Runge–Kutta (RK4) with steps chosen so that no score moves by more
/// than [`FLOW_STEP`] per step. A typical update (small `T · ppu`) takes one step; a huge
/// importance weight takes `O(log(T · ppu))` steps, because the velocities decay like
/// `1 - p_label` as the scores converge. `work` must hold `6 k` values.
pub(super) fn softmax_flow(
    scores: &mut [f64],
    ppu: &[f64],
    label: usize,
    time: f64,
    work: &mut [f64],
) -> usize {
    let k = scores.len();
    if time.is_nan() || time <= 0.0 || k < 2 {
        return 0;
    }
    let time = time.min(MAX_PUSH);
    let (p, rest) = work.split_at_mut(k);
    let (k1, rest) = rest.split_at_mut(k);
    let (k2, rest) = rest.split_at_mut(k);
    let (k3, rest) = rest.split_at_mut(k);
    let (k4, rest) = rest.split_at_mut(k);
    let tmp = &mut rest[..k];

    let velocity = |at: &[f64], p: &mut [f64], out: &mut [f64]| {
        softmax_into(at, p);
        for c in 0..k {
            let target = if c == label { 1.0 } else { 0.0 };
            out[c] = -ppu[c] * (p[c] - target);
        }
    };

    let mut t = 0.0;
    let mut steps = 0;
    while t < time && steps < FLOW_MAX_STEPS {
        velocity(scores, p, k1);
        let vmax = k1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if !vmax.is_finite() || vmax <= 0.0 {
            break;
        }
        let remaining = time - t;
        let dt = if remaining * vmax <= FLOW_STEP {
            remaining
        } else {
            FLOW_STEP / vmax
        };
        for c in 0..k {
            tmp[c] = scores[c] + 0.5 * dt * k1[c];
        }
        velocity(tmp, p, k2);
        for c in 0..k {
            tmp[c] = scores[c] + 0.5 * dt * k2[c];
        }
        velocity(tmp, p, k3);
        for c in 0..k {
            tmp[c] = scores[c] + dt * k3[c];
        }
        velocity(tmp, p, k4);
        for c in 0..k {
            scores[c] += dt / 6.0 * (k1[c] + 2.0 * k2[c] + 2.0 * k3[c] + k4[c]);
        }
        steps += 1;
        if dt == remaining {
            break;
        }
        t += dt;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The logistic margin ODE integrated by brute force (explicit Euler, tiny steps).
    fn euler_margin(z0: f64, a: f64, n: usize) -> f64 {
        let dt = a / n as f64;
        let mut z = z0;
        for _ in 0..n {
            z += dt / (1.0 + z.exp());
        }
        z - z0
    }

    #[test]
    fn logistic_step_solves_its_equation() {
        for &z0 in &[-50.0, -3.0, -0.5, 0.0, 0.7, 4.0, 30.0] {
            for &a in &[1e-12, 1e-3, 0.3, 1.0, 7.0, 1e3, 1e9] {
                let d = logistic_margin_step(z0, a);
                assert!(d >= 0.0 && d <= a, "z0 {z0} a {a} d {d}");
                // Residual of δ + e^{z0}(e^δ - 1) = a, relative to the scale of its terms.
                let lhs = d + z0.exp() * d.exp_m1();
                let scale = a.max(z0.exp() * d.exp());
                assert!(
                    (lhs - a).abs() <= 1e-12 * scale,
                    "z0 {z0} a {a}: {lhs} vs {a}"
                );
            }
        }
    }

    #[test]
    fn logistic_step_matches_brute_force_integration() {
        for &(z0, a) in &[(0.0, 1.0), (-2.0, 5.0), (1.5, 0.2), (-8.0, 40.0)] {
            let exact = logistic_margin_step(z0, a);
            let brute = euler_margin(z0, a, 2_000_000);
            assert!(
                (exact - brute).abs() < 1e-4 * (1.0 + exact),
                "{exact} vs {brute}"
            );
        }
    }

    #[test]
    fn logistic_step_is_finite_at_extremes() {
        for &z0 in &[-1e300, -800.0, 800.0, 1e300] {
            for &a in &[0.0, 1e-300, 1.0, 1e300, f64::INFINITY, f64::NAN] {
                let d = logistic_margin_step(z0, a);
                assert!(d.is_finite() && d >= 0.0, "z0 {z0} a {a} d {d}");
            }
        }
        // Very wrong and a push smaller than the gap: the margin moves by the whole push.
        assert_eq!(logistic_margin_step(-800.0, 5.0), 5.0);
        // Very wrong and a push larger than the gap: the margin stops just past 0.
        let d = logistic_margin_step(-800.0, 1000.0);
        assert!(d > 800.0 && d < 800.0 + 1000f64.ln(), "{d}");
    }

    /// The softmax ODE by brute force.
    fn euler_flow(scores: &mut [f64], ppu: &[f64], label: usize, time: f64, n: usize) {
        let k = scores.len();
        let dt = time / n as f64;
        let mut p = vec![0.0; k];
        for _ in 0..n {
            softmax_into(scores, &mut p);
            for c in 0..k {
                let target = if c == label { 1.0 } else { 0.0 };
                scores[c] -= dt * ppu[c] * (p[c] - target);
            }
        }
    }

    #[test]
    fn softmax_flow_matches_brute_force_integration() {
        let cases: &[(&[f64], &[f64], usize, f64)] = &[
            (&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0], 0, 0.5),
            (&[2.0, -1.0, 0.5, 3.0], &[0.7, 1.3, 2.0, 0.4], 1, 3.0),
            (&[5.0, 0.0], &[1.0, 1.0], 1, 40.0),
            (
                &[0.0, 1.0, 2.0, 3.0, 4.0],
                &[3.0, 0.5, 1.0, 2.0, 0.1],
                0,
                10.0,
            ),
        ];
        let mut work = vec![0.0; 6 * 5];
        for &(start, ppu, label, time) in cases {
            let mut fast = start.to_vec();
            let mut brute = start.to_vec();
            softmax_flow(&mut fast, ppu, label, time, &mut work);
            euler_flow(&mut brute, ppu, label, time, 1_000_000);
            for (f, b) in fast.iter().zip(&brute) {
                assert!((f - b).abs() < 1e-4, "{fast:?} vs {brute:?}");
            }
        }
    }

    #[test]
    fn softmax_flow_with_two_classes_is_the_logistic_step() {
        // Equal ppu d on both classes: the margin P1 - P0 follows the logistic ODE with
        // ppu 2d.
        let mut work = vec![0.0; 12];
        for &(z0, d, time) in &[(0.0, 1.0, 0.5), (-3.0, 0.8, 4.0), (2.0, 2.0, 100.0)] {
            let mut scores = [0.0, z0];
            softmax_flow(&mut scores, &[d, d], 1, time, &mut work);
            let exact = logistic_margin_step(z0, time * 2.0 * d);
            let got = scores[1] - scores[0] - z0;
            assert!(
                (got - exact).abs() < 1e-6 * (1.0 + exact),
                "{got} vs {exact}"
            );
        }
    }

    #[test]
    fn softmax_flow_survives_huge_pushes() {
        let mut work = vec![0.0; 18];
        let mut scores = [30.0, 0.0, -10.0];
        let steps = softmax_flow(&mut scores, &[1.0, 1.0, 1.0], 2, 1e12, &mut work);
        assert!(scores.iter().all(|s| s.is_finite()));
        assert!(steps < FLOW_MAX_STEPS);
        // The label wins by about ln(push) but not by the push itself.
        assert!(scores[2] - scores[0] > 10.0 && scores[2] - scores[0] < 60.0);
    }
}
