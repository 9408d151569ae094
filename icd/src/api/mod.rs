#![allow(non_snake_case)] // entry points keep their OpenCL names

//! The OpenCL C API. Every entry point is reached through the ICD dispatch table
//! (`icd.rs`); each file here holds one object family's entry points, validates their
//! arguments in the order the spec lists the errors, and calls into `crate::core`.

pub(crate) mod command_buffer;
pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod event;
pub mod icd;
pub(crate) mod image;
pub(crate) mod kernel;
pub(crate) mod memory;
pub(crate) mod platform;
pub(crate) mod program;
pub(crate) mod queue;
pub(crate) mod sampler;
pub(crate) mod svm;
pub(crate) mod transfer;
pub(crate) mod unsupported;
pub(crate) mod usm;
pub(crate) mod util;
