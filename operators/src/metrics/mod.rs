//! Evaluation metrics: accuracy for single-label tasks; rank loss, Hamming loss and the
//! set-based precision, recall and F1 scores for multi-label tasks.
