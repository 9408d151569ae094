//! Types shared by the FerroCL driver and the builtins linked into every kernel.
//!
//! Everything here is `#[repr(C)]`: kernels are separate shared objects built by clang,
//! so these layouts are the contract between the driver and code it did not compile.
