//! The exact pairwise potentials of OnlineBMR against brute force.
//!
//! - By the definition (eq. 1 of Jung and Tewari 2018): `phi^0 = L`, `phi^i(s) =
//!   E_{l ~ u_gamma^Y} phi^{i-1}(s + e_l)`, expanded over all `k^n` draw sequences.
//! - By enumeration of every label-count outcome `X` of `n` draws (all compositions of `n`
//!   into `k` parts, with their multinomial probabilities): `phi^n(s) = E L(s + X)`.
//!
//! Both for the rank and the hinge loss, integer and real-valued scores (with integer and
//! non-integer gaps), to 1e-12.

use flowboost_operators::potentials::{
    PairLoss, RankingPotential, StepSumTable, binomial_pmf_row, step_probabilities,
};

/// The weighted pairwise loss `w_Y sum_{l in Y, r not in Y} f(s[r] - s[l])`.
fn loss(kind: PairLoss, s: &[f64], y: &[u32]) -> f64 {
    let mut sum = 0.0;
    let mut pairs = 0;
    for l in 0..s.len() {
        if !y.contains(&(l as u32)) {
            continue;
        }
        for r in 0..s.len() {
            if y.contains(&(r as u32)) {
                continue;
            }
            pairs += 1;
            sum += match kind {
                PairLoss::Rank => {
                    if s[l] < s[r] {
                        1.0
                    } else if s[l] == s[r] {
                        0.5
                    } else {
                        0.0
                    }
                }
                PairLoss::Hinge => (1.0 + s[r] - s[l]).max(0.0),
            };
        }
    }
    sum / pairs as f64
}

/// `u_gamma^Y` written out from its definition (with the documented cap gamma <= 1/|Y|).
fn baseline(k: usize, y: &[u32], gamma: f64) -> Vec<f64> {
    let g = gamma.min(1.0 / y.len() as f64);
    let a = (1.0 - g * y.len() as f64) / k as f64;
    (0..k)
        .map(|l| if y.contains(&(l as u32)) { a + g } else { a })
        .collect()
}

/// `phi^n(s)` by the recursion of eq. 1, over all `k^n` sequences of draws.
fn potential_by_recursion(kind: PairLoss, n: usize, s: &mut Vec<f64>, y: &[u32], u: &[f64]) -> f64 {
    if n == 0 {
        return loss(kind, s, y);
    }
    let mut e = 0.0;
    for l in 0..s.len() {
        if u[l] == 0.0 {
            continue;
        }
        s[l] += 1.0;
        e += u[l] * potential_by_recursion(kind, n - 1, s, y, u);
        s[l] -= 1.0;
    }
    e
}

/// Every count vector of `n` draws over `k` labels.
fn compositions(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![n]];
    }
    let mut out = Vec::new();
    for first in 0..=n {
        for mut rest in compositions(n - first, k - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

fn ln_factorial(n: usize) -> f64 {
    (1..=n).map(|i| (i as f64).ln()).sum()
}

/// `phi^n(s) = E L(s + X)` by enumeration of all label-count outcomes `X`.
fn potential_by_counts(kind: PairLoss, n: usize, s: &[f64], y: &[u32], u: &[f64]) -> f64 {
    let k = s.len();
    let mut e = 0.0;
    let mut t = vec![0.0; k];
    for x in compositions(n, k) {
        let mut ln_p = ln_factorial(n);
        let mut impossible = false;
        for l in 0..k {
            ln_p -= ln_factorial(x[l]);
            if x[l] > 0 {
                if u[l] == 0.0 {
                    impossible = true;
                }
                ln_p += x[l] as f64 * u[l].ln();
            }
        }
        if impossible {
            continue;
        }
        for l in 0..k {
            t[l] = s[l] + x[l] as f64;
        }
        e += ln_p.exp() * loss(kind, &t, y);
    }
    e
}

/// All non-empty proper subsets of `0..k`.
fn label_sets(k: usize) -> Vec<Vec<u32>> {
    (1u32..(1 << k) - 1)
        .map(|mask| (0..k as u32).filter(|l| mask & (1 << l) != 0).collect())
        .collect()
}

/// Score vectors to test for `k` labels: zeros, integers, reals with integer gaps
/// (half-integers), and generic reals.
fn score_vectors(k: usize) -> Vec<Vec<f64>> {
    let ints = [2.0, -1.0, 0.0, 3.0, -2.0, 1.0];
    let halves = [0.5, 1.5, -0.5, 0.5, 2.5, -1.5];
    let reals = [0.3, -1.27, 0.9, 2.41, -0.05, 1.618];
    vec![
        vec![0.0; k],
        ints[..k].to_vec(),
        halves[..k].to_vec(),
        reals[..k].to_vec(),
        reals[..k].iter().map(|v| v * 7.0).collect(),
    ]
}

fn assert_close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12,
        "{what}: exact {a} vs brute force {b} (diff {:e})",
        (a - b).abs()
    );
}

#[test]
fn cost_vectors_match_the_recursive_definition() {
    for kind in [PairLoss::Rank, PairLoss::Hinge] {
        for k in [2usize, 3, 4] {
            for n in [0usize, 1, 2, 4] {
                for gamma in [0.0, 0.1, 0.3] {
                    let mut pot = RankingPotential::new(kind, n, k, gamma);
                    let mut c = vec![0.0; k];
                    for y in label_sets(k) {
                        let u = baseline(k, &y, gamma);
                        for s in score_vectors(k) {
                            assert!(pot.cost_vector(&s, &y, &mut c));
                            for j in 0..k {
                                let mut sj = s.clone();
                                sj[j] += 1.0;
                                let brute = potential_by_recursion(kind, n, &mut sj, &y, &u);
                                assert_close(
                                    c[j],
                                    brute,
                                    &format!(
                                        "{kind:?} k={k} n={n} gamma={gamma} Y={y:?} s={s:?} j={j}"
                                    ),
                                );
                            }
                            let v = pot.value(&s, &y).unwrap();
                            let brute = potential_by_recursion(kind, n, &mut s.clone(), &y, &u);
                            assert_close(v, brute, &format!("value {kind:?} k={k} n={n} Y={y:?}"));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn cost_vectors_match_enumeration_over_label_counts() {
    for kind in [PairLoss::Rank, PairLoss::Hinge] {
        for (k, ns) in [
            (2usize, vec![7usize, 15, 30]),
            (3, vec![6, 12]),
            (5, vec![5, 7]),
        ] {
            for n in ns {
                // gamma 0.45 exceeds 1/|Y| for |Y| >= 3: the capped baseline.
                for gamma in [0.0, 0.05, 0.2, 0.45] {
                    let mut pot = RankingPotential::new(kind, n, k, gamma);
                    let mut c = vec![0.0; k];
                    for y in label_sets(k) {
                        let u = baseline(k, &y, gamma);
                        for s in score_vectors(k) {
                            assert!(pot.cost_vector(&s, &y, &mut c));
                            for j in 0..k {
                                let mut sj = s.clone();
                                sj[j] += 1.0;
                                let brute = potential_by_counts(kind, n, &sj, &y, &u);
                                assert_close(
                                    c[j],
                                    brute,
                                    &format!(
                                        "{kind:?} k={k} n={n} gamma={gamma} Y={y:?} s={s:?} j={j}"
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn pair_terms_match_enumeration_for_many_gaps() {
    // Gaps on a fine grid across and beyond the support, integers included.
    for (n, up, down) in [
        (0usize, 0.3, 0.4),
        (1, 0.2, 0.5),
        (9, 0.1, 0.35),
        (25, 0.0, 0.6),
    ] {
        let t = StepSumTable::new(n, up, down);
        let row = |d: i64| t.pmf(d);
        for i in -160..=160 {
            let g = i as f64 * 0.25;
            for kind in [PairLoss::Rank, PairLoss::Hinge] {
                let brute: f64 = (-(n as i64)..=n as i64)
                    .map(|d| row(d) * kind.at(g + d as f64))
                    .sum();
                assert_close(t.term(kind, g), brute, &format!("{kind:?} n={n} g={g}"));
                let three = t.terms3(kind, g);
                for (j, shift) in [-1.0, 0.0, 1.0].into_iter().enumerate() {
                    assert_close(
                        three[j],
                        t.term(kind, g + shift),
                        &format!("terms3 {kind:?} n={n} g={g}"),
                    );
                }
            }
        }
        // The pmf is the trinomial law.
        let stay = 1.0 - up - down;
        for d in -(n as i64)..=n as i64 {
            let mut p = 0.0;
            for minus in 0..=n {
                let plus = minus as i64 + d;
                if plus < 0 || plus as usize + minus > n {
                    continue;
                }
                let plus = plus as usize;
                let zero = n - plus - minus;
                let ln_c =
                    ln_factorial(n) - ln_factorial(plus) - ln_factorial(minus) - ln_factorial(zero);
                let mut term = ln_c.exp();
                term *= up.powi(plus as i32) * down.powi(minus as i32) * stay.powi(zero as i32);
                p += term;
            }
            assert_close(t.pmf(d), p, &format!("pmf n={n} d={d}"));
        }
    }
}

#[test]
fn large_n_is_exact_against_an_independent_formula() {
    // D_n as a binomial mixture: M ~ Bin(n, up + down) non-zero steps, of which
    // Bin(M, up / (up + down)) are +1: P(D = d) = sum_m B(n, q)(m) B(m, rho)((m + d) / 2).
    for (n, k, y, gamma) in [
        (1000usize, 101usize, 4usize, 0.05),
        (1000, 6, 2, 0.2),
        (400, 14, 11, 0.2),
    ] {
        let (up, down) = step_probabilities(k, y, gamma);
        let t = StepSumTable::new(n, up, down);
        let q = up + down;
        let outer = binomial_pmf_row(n, q);
        let mut p = vec![0.0; 2 * n + 1];
        for (m, &pm) in outer.iter().enumerate() {
            if pm == 0.0 {
                continue;
            }
            let inner = binomial_pmf_row(m, up / q);
            for (plus, &pp) in inner.iter().enumerate() {
                let d = 2 * plus as i64 - m as i64;
                p[(d + n as i64) as usize] += pm * pp;
            }
        }
        let mut total = 0.0;
        for d in -(n as i64)..=n as i64 {
            let v = t.pmf(d);
            assert!(v.is_finite() && v >= 0.0);
            assert_close(
                v,
                p[(d + n as i64) as usize],
                &format!("pmf n={n} k={k} d={d}"),
            );
            total += v;
        }
        assert_close(total, 1.0, "total");
        // Upper tails keep their relative precision (summed from the top).
        for d in (n as i64 - 20)..=n as i64 {
            let tail: f64 = (d..=n as i64).map(|e| p[(e + n as i64) as usize]).sum();
            if tail > 0.0 {
                assert!(
                    (t.at_least(d) - tail).abs() <= 1e-9 * tail,
                    "tail n={n} d={d}"
                );
            }
        }
        // Costs are finite, proper (relevant labels cheaper) and bounded for both losses.
        let mut scores = vec![0.0; k];
        for (j, s) in scores.iter_mut().enumerate() {
            *s = ((j * 37) % 11) as f64 * 0.71 - 3.0;
        }
        let relevant: Vec<u32> = (0..y as u32).collect();
        for kind in [PairLoss::Rank, PairLoss::Hinge] {
            let mut pot = RankingPotential::new(kind, n, k, gamma);
            let mut c = vec![0.0; k];
            assert!(pot.cost_vector(&scores, &relevant, &mut c));
            assert!(
                c.iter().all(|v| v.is_finite() && *v >= 0.0),
                "{kind:?}: {c:?}"
            );
            let v = pot.value(&scores, &relevant).unwrap();
            for (j, &cj) in c.iter().enumerate() {
                // Adding a vote to a relevant label never increases the potential; to an
                // irrelevant one never decreases it.
                if (j as u32) < y as u32 {
                    assert!(cj <= v + 1e-12, "{kind:?} j={j}");
                } else {
                    assert!(cj >= v - 1e-12, "{kind:?} j={j}");
                }
            }
        }
    }
}
