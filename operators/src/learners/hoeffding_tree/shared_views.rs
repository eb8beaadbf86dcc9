//! The per-block context through which the trees of a block of stages share the view of
//! each record's example (see [`SharedViews`]).

use super::memo::ExampleView;
use super::node::Layout;
use std::sync::Arc;

/// The most memory the views of recent examples take, about (a view counts 40 bytes per
/// stored value, plus 256): beyond it, a tree keeps an example's view to itself.
pub(super) const RECENT_BYTES: usize = 8 << 20;

/// A recent example the trees looked at, under the layout it was viewed with.
pub(super) struct Recent {
    pub layout: Arc<Layout>,
    pub example: Arc<ExampleView>,
    /// What it counts for against [`RECENT_BYTES`].
    pub bytes: usize,
}

/// The views of recent examples that the trees of a block of stages share: the first
/// tree to look at an example builds its view (the example as a leaf sees it), and the
/// next trees with the same layout (an ensemble's trees share one) take it instead of
/// building it again.
///
/// The caller passes it to every tree it runs ([`WeakLearner::predict_in`],
/// [`WeakLearner::learn_in`]; a stage gets it in [`Stage::process`]). It keeps one view
/// per place in the run of records ([`SharedViews::run`]) for a run taken through many
/// trees tree by tree, where [`record`](Self::record) names the place of the record the
/// trees look at next; or the last example's view ([`SharedViews::last`]) for records
/// taken one at a time through every tree; or nothing ([`SharedViews::none`]). At most
/// about 8 MiB of views, freed when it is dropped. (A view is only ever taken for an
/// example equal to its own, bit for bit: a wrong place costs a view built again, never a
/// wrong result.)
///
/// [`WeakLearner::predict_in`]: crate::learners::WeakLearner::predict_in
/// [`WeakLearner::learn_in`]: crate::learners::WeakLearner::learn_in
/// [`Stage::process`]: crate::engine::Stage::process
///
/// ```
/// use flowboost_operators::data::{Features, Schema, Task};
/// use flowboost_operators::learners::hoeffding_tree::SharedViews;
/// use flowboost_operators::learners::{HoeffdingTree, HoeffdingTreeConfig, WeakLearner};
///
/// let schema = Schema::numeric(2, 2, Task::Binary);
/// let mut trees: Vec<HoeffdingTree> = (0..3)
///     .map(|i| HoeffdingTree::new(&schema, HoeffdingTreeConfig::default(), i))
///     .collect();
/// let run: Vec<(Features, u32)> = (0..8)
///     .map(|i| (Features::Dense(vec![i as f64, 1.0]), (i % 2) as u32))
///     .collect();
/// let mut views = SharedViews::run(run.len());
/// for tree in &mut trees {
///     for (place, (x, y)) in run.iter().enumerate() {
///         views.record(place);
///         tree.learn_in(x, *y, 1.0, &mut views);
///     }
/// }
/// ```
pub struct SharedViews {
    /// One slot per place (allocated at the first view).
    pub(super) slots: Vec<Option<Recent>>,
    /// How many places it keeps (0: none).
    places: usize,
    /// The bytes the views in the slots count for.
    pub(super) bytes: usize,
    /// The place of the record the trees look at now.
    current: usize,
}

impl SharedViews {
    /// Keeps the views of a run of up to `places` records, by place in the run
    /// ([`record`](Self::record) names the place; places wrap around beyond).
    pub fn run(places: usize) -> SharedViews {
        SharedViews {
            slots: Vec::new(),
            places,
            bytes: 0,
            current: 0,
        }
    }

    /// Keeps the view of the last example only: for records taken one at a time through
    /// every tree.
    pub fn last() -> SharedViews {
        SharedViews::run(1)
    }

    /// Keeps no view: every tree keeps its own.
    pub fn none() -> SharedViews {
        SharedViews::run(0)
    }

    /// Names the place in the run (from 0) of the record the trees look at next.
    #[inline]
    pub fn record(&mut self, place: usize) {
        self.current = place;
    }

    /// The slot of the example the trees look at now (`None`: it keeps none).
    #[inline]
    pub(super) fn slot(&mut self) -> Option<usize> {
        if self.places == 0 {
            return None;
        }
        if self.slots.len() != self.places {
            self.slots.resize_with(self.places, || None);
        }
        Some(if self.current < self.places {
            self.current
        } else {
            self.current % self.places
        })
    }
}

/// A copy shares nothing with the original: it starts empty, keeping as many places.
impl Clone for SharedViews {
    fn clone(&self) -> Self {
        SharedViews::run(self.places)
    }
}

impl std::fmt::Debug for SharedViews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedViews")
            .field("places", &self.places)
            .field("views", &self.slots.iter().flatten().count())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Keeps the last example's view.
impl Default for SharedViews {
    fn default() -> Self {
        SharedViews::last()
    }
}
