//! The features of a logged impression: one-hot user features and user-item affinities.

use flowboost_connectors::readers::open_bandit::LoggedImpression;
use flowboost_operators::data::{Attribute, Features};

/// Encodes an impression's context as a sparse feature vector, online.
///
/// Each hashed categorical user feature `j` gets `categories` one-hot slots: its values
/// take the slots in the order they first appear in the stream, and once the slots are
/// full, every further value shares the last one ("other"). The user-item affinities
/// follow as numbers (when `affinity`). The encoding is deterministic: it depends on the
/// order of the stream only.
#[derive(Clone, Debug)]
pub struct ImpressionFeatures {
    categories: usize,
    affinity: usize,
    seen: Vec<Vec<String>>,
}

impl ImpressionFeatures {
    /// An encoder for `users` user features and `affinity` affinity columns (0: none).
    pub fn new(users: usize, categories: usize, affinity: usize) -> Self {
        ImpressionFeatures {
            categories: categories.max(1),
            affinity,
            seen: vec![Vec::new(); users],
        }
    }

    /// The number of features.
    pub fn dim(&self) -> usize {
        self.seen.len() * self.categories + self.affinity
    }

    /// The attributes (all numeric): `user_feature_J=I` for the one-hot slot `I` of user
    /// feature `J`, then `affinity_I`.
    pub fn attributes(&self, user_names: &[String]) -> Vec<Attribute> {
        let mut out = Vec::with_capacity(self.dim());
        for j in 0..self.seen.len() {
            let name = user_names
                .get(j)
                .cloned()
                .unwrap_or_else(|| format!("user_feature_{j}"));
            for i in 0..self.categories {
                out.push(Attribute::numeric(format!("{name}={i}")));
            }
        }
        for i in 0..self.affinity {
            out.push(Attribute::numeric(format!("affinity_{i}")));
        }
        out
    }

    /// The slot of value `v` of user feature `j` (learning new values).
    fn slot(&mut self, j: usize, v: &str) -> usize {
        let seen = &mut self.seen[j];
        if let Some(i) = seen.iter().position(|s| s == v) {
            return i;
        }
        if seen.len() < self.categories {
            seen.push(v.to_string());
            seen.len() - 1
        } else {
            self.categories - 1
        }
    }

    /// The features of `imp`.
    pub fn encode(&mut self, imp: &LoggedImpression) -> Features {
        let mut indices = Vec::with_capacity(self.seen.len() + self.affinity);
        let mut values = Vec::with_capacity(indices.capacity());
        for j in 0..self.seen.len() {
            let v = imp.user.get(j).map(String::as_str).unwrap_or("");
            let i = self.slot(j, v);
            indices.push((j * self.categories + i) as u32);
            values.push(1.0);
        }
        let base = self.seen.len() * self.categories;
        for (i, &a) in imp.affinity.iter().take(self.affinity).enumerate() {
            if a != 0.0 {
                indices.push((base + i) as u32);
                values.push(a);
            }
        }
        Features::Sparse {
            indices,
            values,
            dim: self.dim() as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp(user: &[&str], affinity: &[f64]) -> LoggedImpression {
        LoggedImpression {
            line: 2,
            timestamp: "t".into(),
            user: user.iter().map(|s| s.to_string()).collect(),
            affinity: affinity.to_vec(),
            slots: vec![],
            slate_propensity: None,
        }
    }

    #[test]
    fn one_hot_in_order_of_appearance_with_an_overflow_slot() {
        let mut e = ImpressionFeatures::new(2, 2, 3);
        assert_eq!(e.dim(), 7);
        let f = e.encode(&imp(&["x", "p"], &[0.0, 2.0, 0.0]));
        assert_eq!(
            f,
            Features::Sparse {
                indices: vec![0, 2, 5],
                values: vec![1.0, 1.0, 2.0],
                dim: 7
            }
        );
        let f = e.encode(&imp(&["y", "p"], &[0.0; 3]));
        assert_eq!(f.get(1), 1.0);
        assert_eq!(f.get(2), 1.0);
        // A third value of feature 0 shares the last slot.
        let f = e.encode(&imp(&["z", "q"], &[0.0; 3]));
        assert_eq!(f.get(1), 1.0);
        assert_eq!(f.get(3), 1.0);
        let names = e.attributes(&["u0".into(), "u1".into()]);
        assert_eq!(names[1].name, "u0=1");
        assert_eq!(names[6].name, "affinity_2");
    }
}
