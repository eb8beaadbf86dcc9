//! libFuzzer target: `flowboost::fuzz::job_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::job_file(data));
