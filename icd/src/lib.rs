//! FerroCL: a CPU OpenCL 3.0 platform loaded through the OpenCL ICD loader.
//!
//! `api` is the C boundary (argument checks and spec error codes, one file per object
//! family); `core` holds the object model and the logic behind each entry point.

#[cfg(feature = "mimalloc")]
mod alloc;
pub mod api;
pub(crate) mod compiler;
pub(crate) mod core;
pub(crate) mod exec;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static HEAP: alloc::DriverAlloc = alloc::DriverAlloc;
