//! Nominal values: their deterministic order, and the lookup of a value's index.

use super::number::parse_number;
use rustc_hash::FxHashMap;

/// Up to this many values, a lookup compares strings one by one (faster than hashing).
const LINEAR: usize = 8;

/// The index of each value of a nominal attribute (or of each class).
#[derive(Clone, Debug)]
pub(crate) enum ValueIndex {
    /// Few values: linear search.
    Small(Vec<String>),
    /// Many values: a hash map.
    Large(FxHashMap<String, u32>),
}

impl ValueIndex {
    /// The index of `values` (the first occurrence wins for a repeated value).
    pub(crate) fn new(values: &[String]) -> Self {
        if values.len() <= LINEAR {
            ValueIndex::Small(values.to_vec())
        } else {
            let mut map = FxHashMap::default();
            for (i, v) in values.iter().enumerate() {
                map.entry(v.clone()).or_insert(i as u32);
            }
            ValueIndex::Large(map)
        }
    }

    /// The index of `value`, if it is one of the values.
    #[inline]
    pub(crate) fn get(&self, value: &str) -> Option<u32> {
        match self {
            ValueIndex::Small(values) => values.iter().position(|v| v == value).map(|i| i as u32),
            ValueIndex::Large(map) => map.get(value).copied(),
        }
    }
}

/// A value as a number for ordering and matching (`-0` is `0`), if it is one.
#[inline]
fn number_key(value: &str) -> Option<f64> {
    parse_number(value).ok().map(|x| x + 0.0)
}

/// Puts a set of distinct values in the readers' deterministic order: numerically when
/// every value is a finite number (values equal as numbers, like `1` and `1.0`, are
/// merged, keeping the lexicographically smallest text), else lexicographically (by
/// bytes).
pub(crate) fn sort_values(values: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut values: Vec<String> = values.into_iter().collect();
    let numbers: Option<Vec<f64>> = values.iter().map(|v| number_key(v)).collect();
    match numbers {
        Some(numbers) if !values.is_empty() => {
            let mut pairs: Vec<(f64, String)> = numbers.into_iter().zip(values).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
            pairs.dedup_by(|later, first| later.0 == first.0);
            pairs.into_iter().map(|(_, v)| v).collect()
        }
        _ => {
            values.sort_unstable();
            values.dedup();
            values
        }
    }
}

/// The class index of a class value: by number when the classes are all numbers (so
/// `1` and `1.0` are one class), else by text.
#[derive(Clone, Debug)]
pub(crate) enum ClassIndex {
    /// Numeric classes, ascending.
    Numeric(Vec<f64>),
    /// Text classes.
    Text(ValueIndex),
}

impl ClassIndex {
    /// The lookup for classes in the order [`sort_values`] gives.
    pub(crate) fn new(sorted: &[String]) -> Self {
        let numbers: Option<Vec<f64>> = sorted.iter().map(|v| number_key(v)).collect();
        match numbers {
            Some(numbers) if !numbers.is_empty() => ClassIndex::Numeric(numbers),
            _ => ClassIndex::Text(ValueIndex::new(sorted)),
        }
    }

    /// The class index of `value`, if it is a known class.
    #[inline]
    pub(crate) fn get(&self, value: &str) -> Option<u32> {
        match self {
            ClassIndex::Numeric(numbers) => {
                let x = number_key(value)?;
                numbers
                    .binary_search_by(|c| c.total_cmp(&x))
                    .ok()
                    .map(|i| i as u32)
            }
            ClassIndex::Text(index) => index.get(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn numbers_sort_numerically_and_merge_equal_values() {
        assert_eq!(
            sort_values(s(&["10", "+1", "-1", "2", "1.0"])),
            s(&["-1", "+1", "2", "10"])
        );
        assert_eq!(
            sort_values(s(&["b", "10", "a", "2"])),
            s(&["10", "2", "a", "b"])
        );
        assert!(sort_values(Vec::new()).is_empty());
    }

    #[test]
    fn lookups() {
        let many: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
        let idx = ValueIndex::new(&many);
        assert_eq!(idx.get("v13"), Some(13));
        assert_eq!(idx.get("v20"), None);
        let few = ValueIndex::new(&s(&["a", "b"]));
        assert_eq!(few.get("b"), Some(1));
        let classes = ClassIndex::new(&s(&["-1", "+1"]));
        assert_eq!(classes.get("1"), Some(1));
        assert_eq!(classes.get("-1.0"), Some(0));
        assert_eq!(classes.get("0"), None);
        let text = ClassIndex::new(&s(&["<=50K", ">50K"]));
        assert_eq!(text.get(">50K"), Some(1));
        let zero = ClassIndex::new(&sort_values(s(&["-0", "1"])));
        assert_eq!(zero.get("0"), Some(0));
    }
}
