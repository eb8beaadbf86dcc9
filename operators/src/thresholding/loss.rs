//! The ALT multi-label loss (eq. 4 of the paper) and its subgradient (the gradient in
//! eq. 6).
//!
//! With label scores `s_i = x . w^(i)` and the threshold score `t = x . w^(L+1)`:
//!
//! ```text
//! f(W) = 1/|Y|  sum_{i in Y}    (1 - (s_i - t))_+
//!      + 1/|Yb| sum_{j in Ybar} (1 - (t - s_j))_+
//! ```
//!
//! and the subgradient with respect to predictor `i` is `g_i x`, with
//!
//! ```text
//! g_i     = -a_i / |Y|            for i in Y,     a_i = 1[s_i - t < 1]
//! g_j     =  b_j / |Ybar|         for j in Ybar,  b_j = 1[t - s_j < 1]
//! g_(L+1) =  a / |Y| - b / |Ybar|                 a = sum a_i, b = sum b_j
//! ```
//!
//! (at a kink, margin exactly 1, the paper's strict `< 1` picks the zero subgradient).
//!
//! **Empty sets.** The paper divides by `|Y|` and `|Ybar|` without saying what happens when
//! one of them is empty (an example with no relevant label, or with all labels relevant).
//! Here the corresponding average is dropped (an empty sum counts as 0, so `a / |Y|` is 0
//! when `Y` is empty): an example with no relevant label then pushes the threshold above
//! every label score, one with all labels relevant pushes it below every score, which is
//! what the constraints of problem (1) ask for.
//!
//! Relevant labels are given as a sorted slice of label indices; indices `>= L` are
//! ignored and repeats count once.

/// The loss and the threshold predictor's gradient coefficient, calling `per_label(i, g_i)`
/// for every label `i < num_labels` with its gradient coefficient.
#[inline]
pub fn alt_terms(
    num_labels: usize,
    score: impl Fn(usize) -> f64,
    threshold: f64,
    relevant: &[u32],
    mut per_label: impl FnMut(usize, f64),
) -> (f64, f64) {
    debug_assert!(
        relevant.windows(2).all(|w| w[0] <= w[1]),
        "relevant labels must be sorted"
    );
    let mut positives = 0usize;
    let mut last = None;
    for &l in relevant {
        if (l as usize) < num_labels && last != Some(l) {
            positives += 1;
            last = Some(l);
        }
    }
    let negatives = num_labels - positives;
    let inv_pos = if positives > 0 {
        1.0 / positives as f64
    } else {
        0.0
    };
    let inv_neg = if negatives > 0 {
        1.0 / negatives as f64
    } else {
        0.0
    };
    let (mut pos_loss, mut neg_loss) = (0.0, 0.0);
    let (mut a, mut b) = (0usize, 0usize);
    let mut p = 0;
    for i in 0..num_labels {
        while p < relevant.len() && (relevant[p] as usize) < i {
            p += 1;
        }
        let s = score(i);
        if p < relevant.len() && relevant[p] as usize == i {
            let margin = s - threshold;
            if margin < 1.0 {
                a += 1;
                pos_loss += 1.0 - margin;
                per_label(i, -inv_pos);
            } else {
                per_label(i, 0.0);
            }
        } else {
            let margin = threshold - s;
            if margin < 1.0 {
                b += 1;
                neg_loss += 1.0 - margin;
                per_label(i, inv_neg);
            } else {
                per_label(i, 0.0);
            }
        }
    }
    let loss = pos_loss * inv_pos + neg_loss * inv_neg;
    let threshold_gradient = a as f64 * inv_pos - b as f64 * inv_neg;
    (loss, threshold_gradient)
}

/// The loss `f` of eq. (4) for label scores `scores` (length L) and threshold score
/// `threshold`.
pub fn alt_loss(scores: &[f64], threshold: f64, relevant: &[u32]) -> f64 {
    alt_terms(scores.len(), |i| scores[i], threshold, relevant, |_, _| {}).0
}

/// The loss of eq. (4) and its subgradient: writes `gradient[i] = g_i` for the L label
/// predictors and `gradient[L] = g_(L+1)` for the threshold predictor (`gradient.len()
/// == scores.len() + 1`), so that the gradient with respect to `w^(i)` is `g_i x`.
/// Returns the loss.
///
/// # Panics
/// If `gradient.len() != scores.len() + 1`.
pub fn alt_gradient(scores: &[f64], threshold: f64, relevant: &[u32], gradient: &mut [f64]) -> f64 {
    let l = scores.len();
    assert_eq!(gradient.len(), l + 1, "gradient needs L + 1 entries");
    let (loss, g_threshold) = alt_terms(
        l,
        |i| scores[i],
        threshold,
        relevant,
        |i, g| gradient[i] = g,
    );
    gradient[l] = g_threshold;
    loss
}
