//! The data model shared by every layer: schemas, feature vectors, labels and examples.

mod example;
mod features;
mod feedback;
mod label;
mod schema;

pub use example::Example;
pub use features::Features;
pub use feedback::{Feedback, FeedbackItem};
pub use label::Label;
pub use schema::{
    Attribute, AttributeKind, LimitError, MAX_DIM, MAX_LABELS, MAX_NOMINAL_VALUES, Schema, Task,
    nominal_limit_error,
};
