//! libFuzzer target: `flowboost::fuzz::arff`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::arff(data));
