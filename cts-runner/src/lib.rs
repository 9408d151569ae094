//! cts-runner: conformance suites and benchmarks for FerroCL and other OpenCL platforms,
//! talking to every platform through the system ICD loader.

pub mod bench;
pub mod cl;
pub mod icd_env;
