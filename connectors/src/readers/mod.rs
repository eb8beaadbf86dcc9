//! Streaming file readers. PLACEHOLDER.
