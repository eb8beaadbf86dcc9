//! libFuzzer target: `flowboost::fuzz::kafka_record`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowboost::fuzz::kafka_record(data));
