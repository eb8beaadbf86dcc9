//! How a [`Features`] vector becomes the linear learner's inputs: one input per numeric
//! attribute, one per value of a nominal attribute (one-hot), and a bias.

use crate::data::{AttributeKind, Features, Schema};
use serde::{Deserialize, Serialize};

/// Where the inputs of one attribute start, and how many values it has ([`NUMERIC`] for a
/// numeric attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Slot {
    offset: u32,
    values: u32,
}

/// The `values` of a numeric attribute's slot.
const NUMERIC: u32 = u32::MAX;

/// The map from attributes to encoded inputs, built once from the schema.
///
/// Encoded inputs are numbered `0..width`: the attributes' inputs in attribute order, then
/// the bias (always 1) last.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Encoding {
    slots: Vec<Slot>,
    /// The nominal attributes, ascending: a sparse vector that does not store one of them
    /// means its first value (index 0), as in sparse ARFF.
    nominal: Vec<u32>,
    width: usize,
}

impl Encoding {
    /// The encoding of `schema`'s attributes.
    pub(super) fn new(schema: &Schema) -> Self {
        let mut slots = Vec::with_capacity(schema.attributes.len());
        let mut nominal = Vec::new();
        let mut offset = 0usize;
        for (j, attribute) in schema.attributes.iter().enumerate() {
            let (values, inputs) = match &attribute.kind {
                AttributeKind::Numeric => (NUMERIC, 1),
                AttributeKind::Nominal(v) => {
                    nominal.push(j as u32);
                    (v.len() as u32, v.len())
                }
            };
            slots.push(Slot {
                offset: offset as u32,
                values,
            });
            offset += inputs;
        }
        Encoding {
            slots,
            nominal,
            width: offset + 1,
        }
    }

    /// The number of encoded inputs, the bias included.
    pub(super) fn width(&self) -> usize {
        self.width
    }

    /// Calls `f(input, value)` for every non-zero encoded input of `x`, in ascending input
    /// order for well-formed vectors, the bias last.
    ///
    /// Missing values (`NaN`), infinities, zeros, nominal values outside `0..values` and
    /// attributes the schema does not have are skipped.
    #[inline]
    pub(super) fn for_each(&self, x: &Features, mut f: impl FnMut(usize, f64)) {
        match x {
            Features::Dense(values) => {
                for (slot, &v) in self.slots.iter().zip(values) {
                    self.emit(*slot, v, &mut f);
                }
            }
            Features::Sparse {
                indices, values, ..
            } => {
                let mut next_nominal = 0;
                for (&j, &v) in indices.iter().zip(values) {
                    // Absent nominal attributes before `j` hold their first value.
                    while let Some(&n) = self.nominal.get(next_nominal) {
                        if n > j {
                            break;
                        }
                        if n < j {
                            f(self.slots[n as usize].offset as usize, 1.0);
                        }
                        next_nominal += 1;
                    }
                    if let Some(slot) = self.slots.get(j as usize) {
                        self.emit(*slot, v, &mut f);
                    }
                }
                for &n in &self.nominal[next_nominal..] {
                    f(self.slots[n as usize].offset as usize, 1.0);
                }
            }
        }
        f(self.width - 1, 1.0);
    }

    #[inline(always)]
    fn emit(&self, slot: Slot, v: f64, f: &mut impl FnMut(usize, f64)) {
        if slot.values == NUMERIC {
            if v != 0.0 && v.is_finite() {
                f(slot.offset as usize, v);
            }
        } else if v >= 0.0 && v < slot.values as f64 {
            f(slot.offset as usize + v as usize, 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Attribute, Task};

    fn schema() -> Schema {
        Schema {
            attributes: vec![
                Attribute::numeric("a"),
                Attribute::nominal("b", vec!["x".into(), "y".into(), "z".into()]),
                Attribute::numeric("c"),
                Attribute::nominal("d", vec!["p".into(), "q".into()]),
            ],
            labels: vec!["0".into(), "1".into()],
            task: Task::Binary,
        }
    }

    fn collect(e: &Encoding, x: &Features) -> Vec<(usize, f64)> {
        let mut seen = vec![];
        e.for_each(x, |j, v| seen.push((j, v)));
        seen
    }

    #[test]
    fn dense_one_hot_and_bias() {
        let e = Encoding::new(&schema());
        assert_eq!(e.width(), 1 + 3 + 1 + 2 + 1);
        let x = Features::Dense(vec![2.5, 2.0, 0.0, 1.0]);
        assert_eq!(
            collect(&e, &x),
            vec![(0, 2.5), (3, 1.0), (6, 1.0), (7, 1.0)]
        );
        // Missing, out of range and negative nominal values are skipped.
        let x = Features::Dense(vec![f64::NAN, 3.0, -1.0, f64::NAN, 7.0]);
        assert_eq!(collect(&e, &x), vec![(4, -1.0), (7, 1.0)]);
        let x = Features::Dense(vec![f64::INFINITY, -0.5]);
        assert_eq!(collect(&e, &x), vec![(7, 1.0)]);
    }

    #[test]
    fn sparse_absent_nominal_means_first_value() {
        let e = Encoding::new(&schema());
        let x = Features::Sparse {
            indices: vec![2],
            values: vec![4.0],
            dim: 4,
        };
        assert_eq!(
            collect(&e, &x),
            vec![(1, 1.0), (4, 4.0), (5, 1.0), (7, 1.0)]
        );
        let x = Features::Sparse {
            indices: vec![1, 3, 9],
            values: vec![2.0, f64::NAN, 1.0],
            dim: 10,
        };
        assert_eq!(collect(&e, &x), vec![(3, 1.0), (7, 1.0)]);
    }
}
