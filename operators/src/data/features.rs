use serde::{Deserialize, Serialize};

/// A feature vector, dense or sparse.
///
/// Nominal attributes hold the index of their value as a float (0.0, 1.0, ...). In a
/// sparse vector an absent index means 0.0 (for a nominal attribute: its first value),
/// as in sparse ARFF.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Features {
    /// One value per attribute.
    Dense(Vec<f64>),
    /// The non-zero values only.
    Sparse {
        /// Attribute indices, strictly ascending.
        indices: Vec<u32>,
        /// The value at each index.
        values: Vec<f64>,
        /// The number of attributes.
        dim: u32,
    },
}

impl Features {
    /// The number of attributes.
    pub fn dim(&self) -> usize {
        match self {
            Features::Dense(v) => v.len(),
            Features::Sparse { dim, .. } => *dim as usize,
        }
    }

    /// The value of attribute `j` (0.0 when a sparse vector does not store it).
    #[inline]
    pub fn get(&self, j: usize) -> f64 {
        match self {
            Features::Dense(v) => v.get(j).copied().unwrap_or(0.0),
            Features::Sparse {
                indices, values, ..
            } => match indices.binary_search(&(j as u32)) {
                Ok(p) => values[p],
                Err(_) => 0.0,
            },
        }
    }

    /// Calls `f(index, value)` for every stored value, in index order (every value of a
    /// dense vector, zeros included; only the stored ones of a sparse vector).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        match self {
            Features::Dense(v) => v.iter().enumerate().for_each(|(j, &x)| f(j, x)),
            Features::Sparse {
                indices, values, ..
            } => indices
                .iter()
                .zip(values)
                .for_each(|(&j, &x)| f(j as usize, x)),
        }
    }

    /// The number of stored values.
    pub fn stored(&self) -> usize {
        match self {
            Features::Dense(v) => v.len(),
            Features::Sparse { indices, .. } => indices.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_get_returns_zero_for_absent_indices() {
        let f = Features::Sparse {
            indices: vec![1, 4],
            values: vec![2.5, -1.0],
            dim: 6,
        };
        assert_eq!(f.get(0), 0.0);
        assert_eq!(f.get(1), 2.5);
        assert_eq!(f.get(4), -1.0);
        assert_eq!(f.get(5), 0.0);
        assert_eq!(f.dim(), 6);
        let mut seen = vec![];
        f.for_each(|j, x| seen.push((j, x)));
        assert_eq!(seen, vec![(1, 2.5), (4, -1.0)]);
    }

    #[test]
    fn dense_for_each_visits_every_value() {
        let f = Features::Dense(vec![0.0, 3.0]);
        let mut seen = vec![];
        f.for_each(|j, x| seen.push((j, x)));
        assert_eq!(seen, vec![(0, 0.0), (1, 3.0)]);
        assert_eq!(f.stored(), 2);
    }
}
