//! libFuzzer target: `flowboost::fuzz::csv`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::csv(data));
