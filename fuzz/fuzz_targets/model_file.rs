//! libFuzzer target: `flowboost::fuzz::model_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::model_file(data));
