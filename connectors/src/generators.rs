//! Synthetic stream generators. PLACEHOLDER.
