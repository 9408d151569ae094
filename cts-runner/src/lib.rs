//! cts-runner: conformance suites and benchmarks for FerroCL and other OpenCL platforms,
//! talking to every platform through the system ICD loader.

// `cl!` calls OpenCL through the loader: its arguments are FFI arguments, so they are
// meant to be evaluated where the call is made (inside the macro's unsafe block).
#![allow(clippy::macro_metavars_in_unsafe)]

pub mod bench;
pub mod chart;
pub mod cl;
pub mod coverage;
pub mod filter;
pub mod host;
pub mod icd_env;
pub mod khronos;
pub mod session;
pub mod stress;
pub mod suite;
