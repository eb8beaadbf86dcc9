//! libFuzzer target: `flowboost::fuzz::sniffed`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::sniffed(data));
