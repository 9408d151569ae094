//! The object model behind the API: what each object holds and how commands run.

pub(crate) mod binary;
pub(crate) mod command_buffer;
pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod device_enqueue;
pub(crate) mod event;
pub(crate) mod executable;
pub(crate) mod host;
pub(crate) mod image;
pub(crate) mod kernel;
pub(crate) mod memory;
pub(crate) mod object;
pub(crate) mod partition;
pub(crate) mod platform;
pub(crate) mod program;
pub(crate) mod queue;
pub(crate) mod region;
pub(crate) mod sampler;
pub(crate) mod svm;
pub(crate) mod usm;

/// `CL_MAKE_VERSION`.
pub(crate) const fn cl_version(major: u32, minor: u32, patch: u32) -> u32 {
    (major << 22) | (minor << 12) | patch
}

pub(crate) const DRIVER_VERSION: &str = env!("CARGO_PKG_VERSION");
