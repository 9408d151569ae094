//! Running kernels: a pool of pinned workers takes work-groups of an NDRange
//! (`pool`), each group runs as a loop over work-items or, when the kernel has
//! barriers, as fibers (`fibers`); `ndrange` ties them to a launch.

pub(crate) mod copies;
pub(crate) mod denormals;
pub(crate) mod fault;
pub(crate) mod fibers;
pub(crate) mod ndrange;
pub(crate) mod occupancy;
pub(crate) mod pool;
pub(crate) mod spin;
pub(crate) mod watchdog;

use ferrocl_kernel_abi::Services;

/// What kernel code calls in the driver.
pub(crate) static SERVICES: Services = Services {
    barrier: fibers::barrier,
    copy: copies::group::copy,
    wait: copies::group::wait,
    fence: copies::group::fence,
    settle: copies::group::settle,
};

/// Storage aligned for any OpenCL type: the largest (`double16`, `long16`) needs 128
/// bytes, which is also `CL_DEVICE_MEM_BASE_ADDR_ALIGN`. Argument blocks and local
/// arenas are made of these so that clang's aligned vector moves are valid.
#[repr(C, align(128))]
#[derive(Clone, Copy)]
pub(crate) struct Aligned(pub(crate) [u8; 128]);

/// `bytes` of zeroed, 128-byte aligned storage.
pub(crate) fn aligned_zeroed(bytes: usize) -> Vec<Aligned> {
    vec![Aligned([0; 128]); bytes.div_ceil(128).max(1)]
}
