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
//! Every work-item of a group calls each copy; the first issues it and the others take
//! its event from the group's `CopyLog` without calling the driver (a few loads).

use ferrocl_kernel_abi::{AsyncCopy, CopyLog, WorkItem};

/// The calling work-item's copy log when the fast paths may use it (not in validation
/// mode, where every call must reach the driver).
///
/// # Safety
/// `wi` is the context the launcher passed; the log lives as long as the group runs,
/// which is longer than any call that uses it.
#[inline(always)]
unsafe fn fast_log<'a>(wi: &WorkItem) -> Option<&'a mut CopyLog> {
    // SAFETY: `copies` is null or the running group's log, which outlives the group's
    // work-items; only the thread running the group touches it.
    let log = unsafe { wi.copies.as_mut()? };
    (log.slow == 0).then_some(log)
}

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
    let item = wi.item;
    // Every work-item after the first: the copy is issued, take its event.
    // SAFETY: as `fast_log`.
    if let Some(log) = unsafe { fast_log(wi) } {
        if item < log.items {
            // SAFETY: `reached` has `items` entries and `events` has `ops`.
            unsafe {
                let k = *log.reached.add(item) as usize;
                if k < log.ops {
                    *log.reached.add(item) = k as u32 + 1;
                    return *log.events.add(k);
                }
            }
        }
    }
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
    unsafe { ((*(*wi.group).services).copy)(wi.group, item, &copy, event) }
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
    // Regions: note the events; the region's end completes them. Unknown events (the
    // CTS passes an uninitialised one) are ignored; events past 64 go to the driver.
    // SAFETY: as `fast_log`.
    if let Some(log) = unsafe { fast_log(wi) } {
        if log.defer != 0 {
            let mut noted = 0;
            while noted < count {
                // SAFETY: `events` holds `count` events.
                let e = unsafe { *events.add(noted as usize) };
                if e.wrapping_sub(1) < log.issued {
                    if e > 64 {
                        break;
                    }
                    log.waited |= 1 << (e - 1);
                }
                noted += 1;
            }
            if noted == count {
                return;
            }
        }
    }
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
