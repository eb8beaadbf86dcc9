//! Deterministic random numbers: every random choice in flowboost comes from a generator
//! seeded from `(seed, stream index)`, so results do not depend on thread timing or on the
//! number of workers.

use rand_pcg::Pcg64Mcg;

/// The generator used everywhere: small, fast, portable and serializable.
pub type Rng = Pcg64Mcg;

/// A generator for stream `index` of the run seeded with `seed` (SplitMix64 mixing, so
/// neighbouring seeds and indices give unrelated streams).
pub fn seeded(seed: u64, index: u64) -> Rng {
    let a = splitmix64(seed ^ 0x5851_f42d_4c95_7f2d);
    let b = splitmix64(a ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let state = ((a as u128) << 64) | (b as u128);
    Pcg64Mcg::new(state | 1)
}

/// A uniform draw in [0, 1) with 53 random bits.
#[inline]
pub fn uniform(rng: &mut Rng) -> f64 {
    use rand::Rng as _;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..n` (`n > 0`), without modulo bias (Lemire's method with
/// rejection).
#[inline]
pub fn below(rng: &mut Rng, n: u64) -> u64 {
    use rand::Rng as _;
    debug_assert!(n > 0);
    let threshold = n.wrapping_neg() % n;
    loop {
        let m = (rng.next_u64() as u128) * (n as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// One step of SplitMix64: a bijective 64-bit mixer.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn same_seed_same_stream_and_different_indices_differ() {
        let mut a = seeded(7, 3);
        let mut b = seeded(7, 3);
        let mut c = seeded(7, 4);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = seeded(1, 1);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[below(&mut r, 3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(below(&mut r, 1), 0);
    }
}
