//! The exact multiclass 0-1 potential against brute force: every sequence of draws
//! enumerated (small `n`, `k`), the paper's recursion (eq. 3), and the multinomial sum over
//! count vectors (larger `n`); and OnlineMBBM's weight bound against the largest weight.

use flowboost_operators::potentials::{ZeroOnePotential, biased_uniform, zero_one_loss};
use flowboost_operators::rng::{below, seeded};

/// `E L^r(s + X)` by enumerating all `k^n` draw sequences.
fn brute_force(s: &[i64], r: usize, n: usize, gamma: f64) -> f64 {
    let k = s.len();
    let u = biased_uniform(k, gamma, r);
    let mut t: Vec<f64> = s.iter().map(|&v| v as f64).collect();
    fn walk(t: &mut [f64], r: usize, left: usize, prob: f64, u: &[f64]) -> f64 {
        if left == 0 {
            return prob * zero_one_loss(t, r);
        }
        let mut acc = 0.0;
        for l in 0..t.len() {
            t[l] += 1.0;
            acc += walk(t, r, left - 1, prob * u[l], u);
            t[l] -= 1.0;
        }
        acc
    }
    walk(&mut t, r, n, 1.0, &u)
}

/// `E L^r(s + X)` summing the multinomial probabilities of every count vector (in logs).
fn multinomial_sum(s: &[i64], r: usize, n: usize, gamma: f64) -> f64 {
    let k = s.len();
    let u = biased_uniform(k, gamma, r);
    let lf: Vec<f64> = (0..=n)
        .scan(0.0f64, |acc, j| {
            if j > 0 {
                *acc += (j as f64).ln();
            }
            Some(*acc)
        })
        .collect();
    let mut counts = vec![0usize; k];
    let mut total = 0.0;
    #[allow(clippy::too_many_arguments)]
    fn rec(
        i: usize,
        left: usize,
        counts: &mut Vec<usize>,
        s: &[i64],
        r: usize,
        u: &[f64],
        lf: &[f64],
        n: usize,
        total: &mut f64,
    ) {
        let k = counts.len();
        if i == k - 1 {
            counts[i] = left;
            let mut lp = lf[n];
            for (l, &c) in counts.iter().enumerate() {
                lp += c as f64 * u[l].ln() - lf[c];
            }
            let t: Vec<f64> = s
                .iter()
                .zip(counts.iter())
                .map(|(&a, &c)| (a + c as i64) as f64)
                .collect();
            *total += lp.exp() * zero_one_loss(&t, r);
            return;
        }
        for c in 0..=left {
            counts[i] = c;
            rec(i + 1, left - c, counts, s, r, u, lf, n, total);
        }
    }
    rec(0, n, &mut counts, s, r, &u, &lf, n, &mut total);
    total
}

fn random_state(rng: &mut flowboost_operators::rng::Rng, k: usize, spread: u64) -> Vec<i64> {
    (0..k).map(|_| below(rng, spread) as i64).collect()
}

#[test]
fn exact_potential_equals_enumeration_of_all_draw_sequences() {
    let mut rng = seeded(42, 0);
    let mut checked = 0;
    for (k, max_n) in [(2usize, 12usize), (3, 8), (4, 6), (5, 5), (6, 4)] {
        for n in 0..=max_n {
            for gamma in [0.0, 0.1, 0.35, 0.9] {
                let mut phi = ZeroOnePotential::new(k, n, gamma);
                let mut states = vec![vec![0i64; k]];
                let mut tied_lead = vec![1i64; k];
                tied_lead[0] = 2;
                states.push(tied_lead);
                for _ in 0..6 {
                    states.push(random_state(&mut rng, k, n as u64 + 4));
                }
                for s in &states {
                    for r in 0..k {
                        let exact = phi.phi(s, r);
                        let brute = brute_force(s, r, n, gamma);
                        assert!(
                            (exact - brute).abs() <= 1e-12,
                            "k={k} n={n} gamma={gamma} s={s:?} r={r}: {exact} vs {brute}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn gap_form_and_memo_agree_with_the_state_form() {
    let (k, n, gamma) = (4, 5, 0.2);
    let mut phi = ZeroOnePotential::new(k, n, gamma);
    let mut fresh = ZeroOnePotential::new(k, n, gamma);
    let mut rng = seeded(7, 1);
    for _ in 0..200 {
        let s = random_state(&mut rng, k, 9);
        let r = below(&mut rng, k as u64) as usize;
        let gaps: Vec<i64> = (0..k).filter(|&m| m != r).map(|m| s[r] - s[m]).collect();
        let a = phi.phi(&s, r);
        let b = phi.phi_gaps(&gaps);
        let c = ZeroOnePotential::new(k, n, gamma).phi(&s, r);
        let d = fresh.phi_gaps(&gaps);
        assert_eq!(a.to_bits(), b.to_bits());
        assert_eq!(a.to_bits(), c.to_bits(), "the memo changes nothing");
        assert_eq!(a.to_bits(), d.to_bits());
    }
    let [(hits, misses, entries), _] = phi.memo_stats();
    assert!(hits > 0 && misses > 0 && entries as u64 <= misses);
}

#[test]
fn recursion_of_eq_3_holds_for_larger_n() {
    // phi_{n+1}^r(s) = sum_l u_gamma^r[l] phi_n^r(s + e_l).
    let mut rng = seeded(3, 2);
    for (k, n) in [(3usize, 40usize), (5, 30), (8, 25), (26, 20)] {
        for gamma in [0.05, 0.3] {
            let mut now = ZeroOnePotential::new(k, n + 1, gamma);
            let mut later = ZeroOnePotential::new(k, n, gamma);
            for _ in 0..5 {
                let s = random_state(&mut rng, k, 6);
                let r = below(&mut rng, k as u64) as usize;
                let u = biased_uniform(k, gamma, r);
                let mut t = s.clone();
                let mut rhs = 0.0;
                for l in 0..k {
                    t[l] += 1;
                    rhs += u[l] * later.phi(&t, r);
                    t[l] -= 1;
                }
                let lhs = now.phi(&s, r);
                assert!(
                    (lhs - rhs).abs() < 1e-12,
                    "k={k} n={n} s={s:?} r={r}: {lhs} vs {rhs}"
                );
            }
        }
    }
}

#[test]
fn exact_potential_equals_the_multinomial_sum_for_larger_n() {
    let mut rng = seeded(5, 3);
    for (k, n) in [(3usize, 40usize), (4, 22), (5, 14)] {
        let mut phi = ZeroOnePotential::new(k, n, 0.15);
        for _ in 0..8 {
            let s = random_state(&mut rng, k, 8);
            let r = below(&mut rng, k as u64) as usize;
            let exact = phi.phi(&s, r);
            let sum = multinomial_sum(&s, r, n, 0.15);
            assert!(
                (exact - sum).abs() < 1e-12,
                "k={k} n={n} s={s:?} r={r}: {exact} vs {sum}"
            );
        }
    }
}

#[test]
fn potentials_are_proper_and_in_the_unit_interval() {
    // Decreasing in s[r], increasing in the other coordinates (the paper's "proper").
    let mut phi = ZeroOnePotential::new(5, 12, 0.1);
    let mut rng = seeded(9, 4);
    for _ in 0..100 {
        let s = random_state(&mut rng, 5, 10);
        let r = below(&mut rng, 5) as usize;
        let base = phi.phi(&s, r);
        assert!((0.0..=1.0).contains(&base));
        for l in 0..5 {
            let mut t = s.clone();
            t[l] += 1;
            let v = phi.phi(&t, r);
            if l == r {
                assert!(v <= base + 1e-15);
            } else {
                assert!(v >= base - 1e-15);
            }
        }
    }
}

#[test]
fn weight_bound_holds_for_every_state() {
    // w = sum_l (phi(s + e_l) - phi(s + e_r)) over every gap vector that matters
    // (gaps outside [-n - 1, n + 2] behave like its ends).
    for (k, max_n) in [(2usize, 30usize), (3, 14), (4, 7), (5, 4)] {
        for n in 0..=max_n {
            for gamma in [0.0, 0.1, 0.4] {
                let mut phi = ZeroOnePotential::new(k, n, gamma);
                let bound = phi.weight_bound();
                let (lo, hi) = (-(n as i64) - 1, n as i64 + 2);
                let mut gaps = vec![lo; k - 1];
                let mut max_w = 0.0f64;
                loop {
                    // State with r = 0: s[0] = 0, s[m] = -gap.
                    let mut s = vec![0i64];
                    s.extend(gaps.iter().map(|&g| -g));
                    let mut t = s.clone();
                    t[0] += 1;
                    let at_r = phi.phi(&t, 0);
                    let mut w = 0.0;
                    for l in 1..k {
                        let mut t = s.clone();
                        t[l] += 1;
                        w += phi.phi(&t, 0) - at_r;
                    }
                    max_w = max_w.max(w);
                    // Next non-decreasing gap vector (the order of gaps does not matter).
                    let mut i = gaps.len();
                    loop {
                        if i == 0 {
                            break;
                        }
                        i -= 1;
                        if gaps[i] < hi {
                            gaps[i] += 1;
                            let v = gaps[i];
                            for g in gaps.iter_mut().skip(i + 1) {
                                *g = v;
                            }
                            break;
                        }
                        if i == 0 {
                            i = usize::MAX;
                            break;
                        }
                    }
                    if i == usize::MAX {
                        break;
                    }
                }
                assert!(
                    max_w <= bound + 1e-12,
                    "k={k} n={n} gamma={gamma}: max w {max_w} > bound {bound}"
                );
                if n == max_n && gamma == 0.1 {
                    eprintln!("k={k} n={n} gamma={gamma}: max w {max_w:.4}, bound {bound:.4}");
                }
            }
        }
    }
}

#[test]
fn cost_rows_match_the_potentials_of_each_vote() {
    // row(): [phi(s + e_r), phi(s + e_m) for the others in ascending gap order], computed
    // at once; against phi() of each state (and brute force where small).
    let mut rng = seeded(11, 5);
    let mut checked = 0;
    for (k, n) in [
        (2usize, 0usize),
        (2, 7),
        (3, 0),
        (3, 1),
        (3, 9),
        (3, 40),
        (4, 6),
        (4, 33),
        (5, 5),
        (5, 20),
        (8, 12),
        (8, 30),
        (12, 9),
    ] {
        for gamma in [0.0, 0.1, 0.4] {
            let mut row_pot = ZeroOnePotential::new(k, n, gamma);
            let mut phi_pot = ZeroOnePotential::new(k, n, gamma);
            for trial in 0..25 {
                // Small spreads give many equal gaps; large ones, far-off labels.
                let spread = [3u64, 6, 2 * n as u64 + 6][trial % 3];
                let s = random_state(&mut rng, k, spread);
                let r = below(&mut rng, k as u64) as usize;
                let mut others: Vec<usize> = (0..k).filter(|&m| m != r).collect();
                others.sort_by_key(|&m| (s[r] - s[m], m));
                let gaps: Vec<i64> = others.iter().map(|&m| s[r] - s[m]).collect();
                let mut row = vec![0.0; k];
                row_pot.row(&gaps, &mut row);
                let mut t = s.clone();
                t[r] += 1;
                let mut expect = vec![phi_pot.phi(&t, r)];
                for &m in &others {
                    let mut t = s.clone();
                    t[m] += 1;
                    expect.push(phi_pot.phi(&t, r));
                }
                for (i, (&a, &b)) in row.iter().zip(&expect).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-13,
                        "k={k} n={n} gamma={gamma} s={s:?} r={r} entry {i}: {a} vs {b}"
                    );
                }
                if k.checked_pow(n as u32).is_some_and(|c| c <= 20_000) {
                    let brute = brute_force(&t, r, n, gamma);
                    assert!(
                        (row[0] - brute).abs() < 1e-12,
                        "brute: {} vs {brute}",
                        row[0]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 900, "{checked}");
}
