use serde::{Deserialize, Serialize};

/// The label of one example.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Label {
    /// One class, `0..k` (for binary tasks 1 is positive, 0 negative).
    Class(u32),
    /// A set of relevant labels, sorted ascending, without repeats; may be empty.
    Set(Vec<u32>),
}

impl Label {
    /// A label set from any order, sorted and de-duplicated.
    pub fn set(mut labels: Vec<u32>) -> Self {
        labels.sort_unstable();
        labels.dedup();
        Label::Set(labels)
    }

    /// The class of a single-label example, `None` for a label set.
    pub fn class(&self) -> Option<u32> {
        match self {
            Label::Class(c) => Some(*c),
            Label::Set(_) => None,
        }
    }

    /// The relevant labels: the class alone, or the set.
    pub fn relevant(&self) -> &[u32] {
        match self {
            Label::Class(c) => std::slice::from_ref(c),
            Label::Set(s) => s,
        }
    }

    /// Whether label `l` is relevant.
    pub fn contains(&self, l: u32) -> bool {
        match self {
            Label::Class(c) => *c == l,
            Label::Set(s) => s.binary_search(&l).is_ok(),
        }
    }
}
