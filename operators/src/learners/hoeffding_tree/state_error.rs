//! Why a deserialized tree is refused ([`TreeStateError`], [`StatsError`]): a damaged
//! model file (even with valid checksums) is refused when it is read, never panics later.

/// Why a tree's deserialized state is not a tree this code can use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TreeStateError {
    /// The layout's tables disagree in size.
    #[error("a tree layout of inconsistent sizes")]
    LayoutSizes,
    /// The numeric columns are not numbered in order.
    #[error("a tree layout with misnumbered columns")]
    MisnumberedColumns,
    /// A nominal attribute's counts are not where the layout says.
    #[error("a tree layout with misplaced nominal counts")]
    MisplacedNominalCounts,
    /// The nominal counts overflow.
    #[error("a tree layout with too many counts")]
    TooManyCounts,
    /// No nodes (or too many).
    #[error("a tree without nodes")]
    NoNodes,
    /// A leaf's tables disagree with the layout.
    #[error("tree leaf {0} of inconsistent sizes")]
    LeafSizes(usize),
    /// A leaf's numeric statistics are refused.
    #[error("tree leaf {leaf}: {stats}")]
    LeafStats {
        /// The leaf's node index.
        leaf: usize,
        /// Why.
        stats: StatsError,
    },
    /// A leaf has learned but its numeric statistics have not.
    #[error("tree leaf {0} learned without statistics")]
    LeafWithoutStats(usize),
    /// An inactive leaf's tables disagree with the layout.
    #[error("inactive tree leaf {0} of inconsistent sizes")]
    InactiveLeafSizes(usize),
    /// A split tests an attribute of another kind (or none).
    #[error("tree node {0}: a test of a wrong attribute")]
    WrongTestAttribute(usize),
    /// A split's children are not its own, consecutive, later nodes.
    #[error("tree node {0}: children of inconsistent sizes")]
    ChildrenSizes(usize),
    /// The leaf count disagrees with the leaves.
    #[error("a tree whose leaf count does not match its leaves")]
    LeafCount,
}

/// Why a leaf's deserialized numeric statistics are refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    /// The cells overflow.
    #[error("too many numeric cells")]
    TooManyCells,
    /// The tables disagree in size.
    #[error("numeric statistics of inconsistent sizes")]
    Sizes,
    /// A class is unknown, or the classes are out of order.
    #[error("numeric statistics of unknown or unordered classes")]
    Classes,
    /// Cells for some columns only, without the folded zeros.
    #[error("numeric statistics without zeros but without every column")]
    MissingColumns,
    /// The missing-value table disagrees with the zeros' cells.
    #[error("numeric statistics of inconsistent sizes (zeros, missing)")]
    ZerosMissingSizes,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_the_part() {
        let e = TreeStateError::LeafStats {
            leaf: 3,
            stats: StatsError::Sizes,
        };
        assert_eq!(
            e.to_string(),
            "tree leaf 3: numeric statistics of inconsistent sizes"
        );
        assert_eq!(
            TreeStateError::WrongTestAttribute(2).to_string(),
            "tree node 2: a test of a wrong attribute"
        );
    }
}
