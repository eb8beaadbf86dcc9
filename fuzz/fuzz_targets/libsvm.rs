//! libFuzzer target: `flowboost::fuzz::libsvm`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::libsvm(data));
