use serde::{Deserialize, Serialize};

/// The online rule that turns a multi-label ranking into a label set.
///
/// `TopCardinality`: predict the `m` highest-scored labels, where `m` is the mean size of
/// the label sets seen so far, rounded to the nearest integer, at least 1 (1 before any
/// label is seen). Ties in score go to the lower label index. The estimate is updated only
/// from labels the model learns from, after the prediction, so it never peeks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelSetRule {
    seen: u64,
    total_labels: u64,
}

impl LabelSetRule {
    /// The current set size `m`.
    pub fn size(&self) -> usize {
        if self.seen == 0 {
            return 1;
        }
        let mean = self.total_labels as f64 / self.seen as f64;
        (mean.round() as usize).max(1)
    }

    /// Writes the predicted set (sorted) for `scores` into `out`.
    pub fn predict(&self, scores: &[f64], out: &mut Vec<u32>) {
        out.clear();
        let m = self.size().min(scores.len());
        out.extend(0..scores.len() as u32);
        // Highest score first, lower index first among equal scores.
        out.sort_by(|&a, &b| {
            scores[b as usize]
                .total_cmp(&scores[a as usize])
                .then(a.cmp(&b))
        });
        out.truncate(m);
        out.sort_unstable();
    }

    /// Records the size of one true label set.
    pub fn observe(&mut self, relevant: usize) {
        self.seen += 1;
        self.total_labels += relevant as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_m_with_online_mean_cardinality() {
        let mut r = LabelSetRule::default();
        let mut out = vec![];
        r.predict(&[0.1, 0.7, 0.7, 0.2], &mut out);
        assert_eq!(out, vec![1]); // m = 1 before any label, tie broken to the lower index
        r.observe(2);
        r.observe(3);
        assert_eq!(r.size(), 3); // 2.5 rounds to 3
        r.predict(&[0.1, 0.7, 0.7, 0.2], &mut out);
        assert_eq!(out, vec![1, 2, 3]);
        r.observe(0);
        r.observe(0);
        r.observe(0);
        assert_eq!(r.size(), 1); // mean 1.0
    }
}
