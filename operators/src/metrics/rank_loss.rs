/// The unweighted rank loss of `scores` against the relevant labels `relevant` (sorted):
/// the number of pairs (l relevant, r irrelevant) with `s[l] < s[r]`, ties counting 1/2.
pub fn unweighted_rank_loss(scores: &[f64], relevant: &[u32]) -> f64 {
    let mut loss = 0.0;
    for &l in relevant {
        let sl = scores[l as usize];
        let mut ri = 0;
        for (r, &sr) in scores.iter().enumerate() {
            if ri < relevant.len() && relevant[ri] as usize == r {
                ri += 1;
                continue;
            }
            if sl < sr {
                loss += 1.0;
            } else if sl == sr {
                loss += 0.5;
            }
        }
    }
    loss
}

/// The weighted rank loss of the multi-label ranking paper,
/// `L = w_Y sum_{l in Y} sum_{r not in Y} (1(s[l] < s[r]) + 1/2 1(s[l] = s[r]))` with
/// `w_Y = 1 / (|Y| |Y^c|)`: the fraction of mis-ordered (relevant, irrelevant) pairs, ties
/// counting one half. It is 0 when there is no such pair (`Y` empty or all labels).
/// `relevant` must be sorted ascending and within `0..scores.len()`.
pub fn rank_loss(scores: &[f64], relevant: &[u32]) -> f64 {
    let pairs = relevant.len() * (scores.len() - relevant.len());
    if pairs == 0 {
        return 0.0;
    }
    unweighted_rank_loss(scores, relevant) / pairs as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_cases() {
        // Y = {0, 2}; irrelevant {1, 3}. Pairs: (0,1): 0.9 > 0.5 ok; (0,3): 0.9 > 0.1 ok;
        // (2,1): 0.5 = 0.5 tie -> 1/2; (2,3): 0.5 > 0.1 ok. Loss = 0.5 / 4.
        let s = [0.9, 0.5, 0.5, 0.1];
        assert_eq!(unweighted_rank_loss(&s, &[0, 2]), 0.5);
        assert_eq!(rank_loss(&s, &[0, 2]), 0.125);
        // Perfectly reversed ranking: every pair wrong.
        assert_eq!(rank_loss(&[0.0, 1.0, 2.0], &[0]), 1.0);
        // No pairs.
        assert_eq!(rank_loss(&[0.3, 0.2], &[]), 0.0);
        assert_eq!(rank_loss(&[0.3, 0.2], &[0, 1]), 0.0);
        // All tied: one half.
        assert_eq!(rank_loss(&[1.0; 5], &[1, 3]), 0.5);
    }

    #[test]
    fn matches_brute_force_over_all_subsets() {
        let s = [0.3, -1.0, 0.3, 2.0, 0.0];
        for mask in 0u32..32 {
            let y: Vec<u32> = (0..5).filter(|l| mask & (1 << l) != 0).collect();
            let mut brute = 0.0;
            let mut pairs = 0;
            for l in 0..5 {
                for r in 0..5 {
                    if mask & (1 << l) != 0 && mask & (1 << r) == 0 {
                        pairs += 1;
                        brute += if s[l] < s[r] {
                            1.0
                        } else if s[l] == s[r] {
                            0.5
                        } else {
                            0.0
                        };
                    }
                }
            }
            let expect = if pairs == 0 {
                0.0
            } else {
                brute / pairs as f64
            };
            assert_eq!(rank_loss(&s, &y), expect, "mask {mask}");
        }
    }
}
