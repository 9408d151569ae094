//! The object model behind the API: what each object holds and how commands run.

pub mod binary;
pub mod context;
pub mod device;
pub mod event;
pub mod host;
pub mod image;
pub mod kernel;
pub mod memory;
pub mod object;
pub mod platform;
pub mod program;
pub mod queue;
pub mod region;
pub mod sampler;
pub mod svm;

/// `CL_MAKE_VERSION`.
pub const fn cl_version(major: u32, minor: u32, patch: u32) -> u32 {
    (major << 22) | (minor << 12) | patch
}

pub const DRIVER_VERSION: &str = env!("CARGO_PKG_VERSION");
