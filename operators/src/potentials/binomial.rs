/// `ln(j!)` for `j = 0..=n`, by summing logarithms (relative error about `n` ulps).
pub fn ln_factorials(n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n + 1);
    let mut acc = 0.0f64;
    out.push(0.0);
    for j in 1..=n {
        acc += (j as f64).ln();
        out.push(acc);
    }
    out
}

/// The binomial probabilities `C(n, j) p^j (1 - p)^(n - j)` for `j = 0..=n`, computed in log
/// space so they neither overflow nor underflow to NaN for large `n` (tested to `n = 10,000`).
/// `p` must lie in `[0, 1]`.
pub fn binomial_pmf_row(n: usize, p: f64) -> Vec<f64> {
    let q = 1.0 - p;
    let lf = ln_factorials(n);
    (0..=n)
        .map(|j| {
            if (p == 0.0 && j > 0) || (q == 0.0 && j < n) {
                return 0.0;
            }
            let lp = if j == 0 { 0.0 } else { j as f64 * p.ln() };
            let lq = if j == n { 0.0 } else { (n - j) as f64 * q.ln() };
            (lf[n] - lf[j] - lf[n - j] + lp + lq).exp()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact binomial coefficient for small n by Pascal's triangle (u128, no rounding).
    fn choose(n: usize, k: usize) -> u128 {
        let mut row = vec![1u128];
        for _ in 0..n {
            let mut next = vec![1u128; row.len() + 1];
            for i in 1..row.len() {
                next[i] = row[i - 1] + row[i];
            }
            row = next;
        }
        row[k]
    }

    #[test]
    fn matches_direct_products_for_small_n() {
        for n in [0usize, 1, 2, 5, 17, 60] {
            for &p in &[0.5, 0.55, 0.7, 0.95] {
                let row = binomial_pmf_row(n, p);
                for (j, &v) in row.iter().enumerate() {
                    let direct = choose(n, j) as f64 * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32);
                    assert!(
                        (v - direct).abs() <= 1e-12 * direct.max(1e-300),
                        "n={n} j={j} p={p}: {v} vs {direct}"
                    );
                }
            }
        }
    }

    #[test]
    fn large_n_is_finite_and_sums_to_one() {
        for n in [1000usize, 10_000] {
            let row = binomial_pmf_row(n, 0.55);
            assert!(row.iter().all(|v| v.is_finite() && *v >= 0.0));
            let total: f64 = row.iter().sum();
            assert!((total - 1.0).abs() < 1e-10, "n={n}: {total}");
        }
    }

    #[test]
    fn degenerate_probabilities() {
        assert_eq!(binomial_pmf_row(3, 0.0), vec![1.0, 0.0, 0.0, 0.0]);
        assert_eq!(binomial_pmf_row(3, 1.0), vec![0.0, 0.0, 0.0, 1.0]);
    }
}
