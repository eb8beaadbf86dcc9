//! Potentials and boost-by-majority weights, computed exactly (no Monte Carlo).

mod binomial;

pub use binomial::binomial_pmf_row;
