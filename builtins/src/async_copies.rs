//! Work-group async copies (OpenCL C 6.15.11), `cl_khr_extended_async_copies` (2D2D,
//! 3D3D) and `cl_khr_async_work_group_copy_fence`, for every gentype and direction.
//!
//! The exports themselves are generated (`build.rs`: one function per overload, under
//! its mangled name); each describes its copy as one shape (planes x lines x elements,
//! strides in elements) and calls the functions here, which hand it to the driver's copy
//! engine through the group's `Services` (see `icd/src/exec/copies`). The IR rewrite
//! passes the calling work-item's context as a hidden last argument, as it does for
//! work-item queries, so no thread-local is needed to find it.
//!
//! Every work-item of a group calls each copy and only the first issues it. The calls
//! of the others (the copy is issued: take its event; a wait in a kernel run as regions:
//! note it) are answered from the group's `CopyLog` by an inline fast path in the
//! kernel (`__ferrocl_fast_*` in builtins/clc/workitem.c, see DESIGN.md for why), which
//! calls these functions only when the driver has work to do. The driver answers every
//! case itself too (validation mode sends every call to it).

use ferrocl_kernel_abi::{AsyncCopy, WorkItem};

/// # Safety
/// `wi` is the launcher's context; the addresses are the kernel's arguments.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn shaped(
    wi: *const WorkItem,
    dst: usize,
    src: usize,
    elem: usize,
    per_line: usize,
    lines: usize,
    planes: usize,
    src_line: usize,
    src_plane: usize,
    dst_line: usize,
    dst_plane: usize,
    to_local: bool,
    event: usize,
) -> usize {
    // SAFETY: the launcher passes its live context.
    let wi = unsafe { &*wi };
    let copy = AsyncCopy {
        dst,
        src,
        elem,
        per_line,
        lines,
        planes,
        src_line,
        src_plane,
        dst_line,
        dst_plane,
        to_local: to_local as u32,
        hints: 0,
    };
    // SAFETY: `group` and its services are the running launch's.
    unsafe { ((*(*wi.group).services).copy)(wi.group, wi.item, &copy, event) }
}

/// `async_work_group_copy`: one line of `n` elements.
///
/// # Safety
/// As [`shaped`].
#[inline(always)]
pub unsafe fn contiguous(
    wi: *const WorkItem,
    dst: usize,
    src: usize,
    elem: usize,
    n: usize,
    to_local: bool,
    event: usize,
) -> usize {
    // SAFETY: as the caller's.
    unsafe { shaped(wi, dst, src, elem, n, 1, 1, 0, 0, 0, 0, to_local, event) }
}

/// `async_work_group_strided_copy`: `n` lines of one element; the stride applies to the
/// global side.
///
/// # Safety
/// As [`shaped`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn strided(
    wi: *const WorkItem,
    dst: usize,
    src: usize,
    elem: usize,
    n: usize,
    stride: usize,
    to_local: bool,
    event: usize,
) -> usize {
    let (src_line, dst_line) = if to_local { (stride, 1) } else { (1, stride) };
    // SAFETY: as the caller's.
    unsafe { shaped(wi, dst, src, elem, 1, n, 1, src_line, 0, dst_line, 0, to_local, event) }
}

/// `wait_group_events`: the wait, then the barrier it implies (a no-op outside fibers:
/// kernels run as regions end their region after the call).
///
/// # Safety
/// `wi` is the launcher's context; `events` points at `count` events.
#[inline(always)]
pub unsafe fn wait(wi: *const WorkItem, count: i32, events: *const usize) {
    // SAFETY: the launcher passes its live context.
    let wi = unsafe { &*wi };
    // SAFETY: `group` and its services are the running launch's.
    unsafe {
        let services = &*(*wi.group).services;
        if count > 0 {
            (services.wait)(wi.group, wi.item, count as u32, events);
        }
        (services.barrier)(wi.group);
    }
}

/// `async_work_group_copy_fence`: copies before it complete before copies after it start.
///
/// # Safety
/// `wi` is the launcher's context.
#[inline(always)]
pub unsafe fn fence(wi: *const WorkItem, flags: u32) {
    // SAFETY: the launcher passes its live context, with the running launch's group.
    unsafe { ((*(*(*wi).group).services).fence)((*wi).group, (*wi).item, flags) }
}

/// `prefetch`: one prefetch per 64-byte line (elements can be larger than a line).
///
/// # Safety
/// A prefetch never faults, whatever the address.
#[inline(always)]
pub unsafe fn prefetch(p: usize, elem: usize, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = n.saturating_mul(elem);
        let mut at = 0;
        while at < bytes {
            // SAFETY: prefetches are hints and do not fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(at) as *const i8) };
            at += if elem >= 64 { elem } else { 64 - 64 % elem };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, elem, n);
}

mod exports {
    #![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
    //! # Safety (of every export)
    //! Called by kernel code with the arguments OpenCL C gives the builtin and the
    //! launcher's context.
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/async_exports.rs"));
}
