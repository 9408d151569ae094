//! OpenCL C builtins for FerroCL kernels, exported under clang's mangled names and
//! linked (as `libferrocl_builtins.a`) into each kernel's shared object.
//!
//! The archive is linked with `--gc-sections` semantics of static archives: a kernel
//! pulls in only the members it references, so builtins avoid anything that can panic
//! (which would drag in the standard library's formatting and unwinding). Work-item
//! functions and barriers live in `clc/workitem.c`, compiled to bitcode with the kernel
//! so they can be inlined.

pub mod async_copies;

/// Identifies the archive's ABI: the driver looks for this name
/// (`ferrocl_kernel_abi::BUILTINS_ABI_SYMBOL`) in the archive's symbol index and refuses
/// an archive without it. Change the number with any change of the contract.
#[no_mangle]
pub static FERROCL_BUILTINS_ABI_10: u32 = 10;
