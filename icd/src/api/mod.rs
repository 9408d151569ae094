#![allow(non_snake_case)] // entry points keep their OpenCL names

//! The OpenCL C API. Every entry point is reached through the ICD dispatch table
//! (`icd.rs`); each file here holds one object family's entry points, validates their
//! arguments in the order the spec lists the errors, and calls into `crate::core`.

pub mod context;
pub mod device;
pub mod event;
pub mod icd;
pub mod image;
pub mod kernel;
pub mod memory;
pub mod platform;
pub mod program;
pub mod queue;
pub mod sampler;
pub mod svm;
pub mod transfer;
pub mod unsupported;
pub mod util;
