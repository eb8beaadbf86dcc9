//! Online multi-label classification with adaptive label thresholding (FALT, SALT,
//! kernel FALT) and the PA-BR baselines; a learned threshold on boosted scores.
