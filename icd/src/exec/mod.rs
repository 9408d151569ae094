//! Running kernels: a pool of pinned workers takes work-groups of an NDRange
//! (`pool`), each group runs as a loop over work-items or, when the kernel has
//! barriers, as fibers (`fibers`); `ndrange` ties them to a launch.

pub(crate) mod copies;
pub(crate) mod denormals;
pub(crate) mod enqueue;
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
    sub_group_barrier: fibers::sub_group_barrier,
    enqueue: enqueue::enqueue,
    device: enqueue::device,
};

/// Storage aligned for any OpenCL type: the largest (`double16`, `long16`) needs 128
/// bytes, which is also `CL_DEVICE_MEM_BASE_ADDR_ALIGN`. Argument blocks and local
/// arenas are made of these so that clang's aligned vector moves are valid.
#[repr(C, align(128))]
#[derive(Clone, Copy)]
pub(crate) struct Aligned(pub(crate) [u8; 128]);

/// `bytes` of zeroed, 128-byte aligned storage, from the allocator's zeroed memory: large
/// blocks (the collectives' scratch of every worker, 576 KiB) are fresh pages the
/// kernel zeroes when first touched, not written here.
pub(crate) fn aligned_zeroed(bytes: usize) -> Vec<Aligned> {
    let n = bytes.div_ceil(128).max(1);
    let Ok(layout) = std::alloc::Layout::array::<Aligned>(n) else {
        panic!("aligned_zeroed: {bytes} bytes overflow a layout")
    };
    // SAFETY: a non-zero-sized layout.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Aligned>();
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n` `Aligned`s, as
    // a Vec of capacity `n` would hold them, and all-zero bytes are a valid `Aligned`.
    unsafe { Vec::from_raw_parts(p, n, n) }
}
