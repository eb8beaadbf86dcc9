//! libFuzzer target: `flowboost::fuzz::serve_request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::serve_request(data));
