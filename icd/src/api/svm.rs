//! Shared virtual memory entry points: allocation, and the SVM commands. Device memory
//! is host memory, so copies and fills are the host's, and maps, unmaps and migrations
//! are ordering points with nothing to move.

use std::ffi::c_void;
use std::ptr::null_mut;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::from_handle;
use super::queue::{begin, submit};
use super::transfer::Ptr;
use super::util::{slice, status, with_errcode, CLResult};
use crate::core::context::Context;
use crate::core::queue::{once, Action};
use crate::core::region;
use crate::core::svm::{DEFAULT_ALIGNMENT, MAX_ALIGNMENT};

const SVM_FLAGS: cl_svm_mem_flags =
    CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;

/// `clSVMAlloc`'s checks: "NULL ... if context is not a valid context, ... if flags
/// does not contain CL_MEM_SVM_FINE_GRAIN_BUFFER but does contain CL_MEM_SVM_ATOMICS,
/// ... values specified in flags do not follow rules described for supported values",
/// "size is 0 or > CL_DEVICE_MAX_MEM_ALLOC_SIZE", "alignment is not a power of two or
/// the OpenCL implementation cannot support the specified alignment".
fn svm_alloc(context: cl_context, flags: cl_svm_mem_flags, size: usize, alignment: cl_uint) -> CLResult<*mut c_void> {
    let c = from_handle::<Context>(context)?;
    let access = flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY);
    let atomics_alone = flags & CL_MEM_SVM_ATOMICS != 0 && flags & CL_MEM_SVM_FINE_GRAIN_BUFFER == 0;
    if flags & !SVM_FLAGS != 0 || access.count_ones() > 1 || atomics_alone {
        return Err(CL_INVALID_VALUE);
    }
    let max = c.devices.iter().map(|d| d.limits.max_mem_alloc).max().unwrap_or(0);
    let align = if alignment == 0 { DEFAULT_ALIGNMENT } else { alignment as usize };
    if size == 0 || size as u64 > max || !align.is_power_of_two() || align > MAX_ALIGNMENT {
        return Err(CL_INVALID_VALUE);
    }
    let flags = if access == 0 { flags | CL_MEM_READ_WRITE } else { flags };
    c.svm.alloc(flags, size, align.max(DEFAULT_ALIGNMENT)).map(|p| p.cast()).ok_or(CL_OUT_OF_HOST_MEMORY)
}

/// Written out rather than through `#[cl_entry_point]`: the C signature has no error
/// code, a NULL result is the failure.
pub(super) unsafe extern "C" fn clSVMAlloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    alignment: cl_uint,
) -> *mut c_void {
    // A null `errcode_ret`: only the panic guard is wanted.
    with_errcode(null_mut(), null_mut(), || svm_alloc(context, flags, size, alignment))
}

/// "If a NULL pointer is passed in svm_pointer, no action occurs." A pointer
/// `clSVMAlloc` did not return for this context is ignored too, instead of freeing
/// memory the driver does not own. Written out rather than through `#[cl_entry_point]`:
/// the C signature returns nothing.
pub(super) unsafe extern "C" fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) {
    let _ = status(|| {
        from_handle::<Context>(context)?.svm.free(svm_pointer as usize);
        Ok(())
    });
}

pub(crate) type SvmFreeCallback = unsafe extern "C" fn(cl_command_queue, cl_uint, *mut *mut c_void, *mut c_void);

#[cl_entry_point]
fn clEnqueueSVMFree(
    queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *mut c_void,
    pfn_free_func: Option<SvmFreeCallback>,
    user_data: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    // "CL_INVALID_VALUE if num_svm_pointers is 0 and svm_pointers is non-NULL, or if
    // svm_pointers is NULL and num_svm_pointers is not 0."
    if (num_svm_pointers == 0) != svm_pointers.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // The application may reuse its array once the call returns: the command frees
    // (or hands its callback) a copy.
    let mut pointers: Vec<usize> =
        slice(svm_pointers.cast_const(), num_svm_pointers as usize).iter().map(|&p| p as usize).collect();
    let (handle, context, user) = (queue as usize, q.context.clone(), user_data as usize);
    submit(
        &q,
        CL_COMMAND_SVM_FREE,
        wait,
        event,
        false,
        Box::new(move || {
            match pfn_free_func {
                // SAFETY: the application's callback, with the arguments the spec names.
                Some(f) => unsafe {
                    let list = pointers.as_mut_ptr().cast::<*mut c_void>();
                    f(handle as cl_command_queue, pointers.len() as cl_uint, list, user as *mut c_void)
                },
                None => pointers.iter().for_each(|&p| {
                    context.svm.free(p);
                }),
            }
            Ok(())
        }),
    )
}

#[cl_entry_point]
fn clEnqueueSVMMemcpy(
    queue: cl_command_queue,
    blocking: cl_bool,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let blocking = blocking != CL_FALSE;
    submit(&q, CL_COMMAND_SVM_MEMCPY, wait, event, blocking, once(memcpy(dst, src, size)?))
}

/// `clEnqueueSVMMemcpy`, `clEnqueueMemcpyINTEL` and `clCommandSVMMemcpyKHR`:
/// "CL_INVALID_VALUE if dst_ptr or src_ptr is NULL", "CL_MEM_COPY_OVERLAP if the values
/// specified for dst_ptr, src_ptr and size result in an overlapping copy"; the copy
/// itself runs guarded.
pub(super) fn memcpy(dst: *mut c_void, src: *const c_void, size: usize) -> CLResult<Action> {
    if dst.is_null() || src.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    if region::overlaps(dst as usize, size, src as usize, size) {
        return Err(CL_MEM_COPY_OVERLAP);
    }
    let (to, from) = (Ptr(dst.cast()), Ptr(src.cast_mut().cast()));
    Ok(Box::new(move || {
        // SAFETY: both ranges are the application's memory (SVM, USM or, with
        // fine-grain system SVM, any), valid for `size` bytes until the command
        // completes; a wild address faults into the guard.
        guarded(|| unsafe { std::ptr::copy_nonoverlapping(from.get(), to.get(), size) })
    }))
}

#[cl_entry_point]
fn clEnqueueSVMMemFill(
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    submit(&q, CL_COMMAND_SVM_MEMFILL, wait, event, false, once(fill(svm_ptr, pattern, pattern_size, size)?))
}

/// `clEnqueueSVMMemFill`, `clEnqueueMemFillINTEL` and `clCommandSVMMemFillKHR`:
/// "CL_INVALID_VALUE if svm_ptr is NULL", "if svm_ptr is not aligned to pattern_size bytes", "if pattern is NULL or if
/// pattern_size is 0 or if pattern_size is not one of {1, 2, 4, 8, 16, 32, 64, 128}",
/// "if size is not a multiple of pattern_size"; the fill runs guarded.
///
/// # Safety
/// `pattern` is null or `pattern_size` bytes.
pub(super) unsafe fn fill(
    dst: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
) -> CLResult<Action> {
    let valid_pattern = pattern_size.is_power_of_two() && pattern_size <= 128 && !pattern.is_null();
    if dst.is_null() || !valid_pattern || dst as usize % pattern_size != 0 || size % pattern_size != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let bytes = slice(pattern.cast::<u8>(), pattern_size).to_vec();
    let at = Ptr(dst.cast());
    Ok(Box::new(move || {
        // SAFETY: `size` bytes at dst are the application's (see `memcpy`).
        guarded(|| unsafe { region::fill(at.get(), size, &bytes) })
    }))
}

/// Runs a command's access to the application's memory guarded: any pointer may be
/// given (fine-grain system SVM), and one that is not mapped fails the command as a
/// faulting kernel does, instead of the process, and says so as a faulting kernel does.
fn guarded(f: impl FnOnce()) -> CLResult<()> {
    crate::exec::fault::guarded(f).map_err(|fault| {
        eprintln!("FerroCL: a memory command was ended by {fault}; the command fails with CL_OUT_OF_RESOURCES");
        CL_OUT_OF_RESOURCES
    })
}

/// A command with nothing to do but take its place in the queue's order.
///
/// # Safety
/// The wait list is null or `num` handles long; `event` is null or writable.
pub(super) unsafe fn ordering_point(
    queue: cl_command_queue,
    command: cl_command_type,
    blocking: bool,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    check: impl FnOnce() -> CLResult<()>,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num, list)?;
    check()?;
    submit(&q, command, wait, event, blocking, Box::new(|| Ok(())))
}

#[cl_entry_point]
fn clEnqueueSVMMap(
    queue: cl_command_queue,
    blocking: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let blocking = blocking != CL_FALSE;
    ordering_point(queue, CL_COMMAND_SVM_MAP, blocking, num_events_in_wait_list, event_wait_list, event, || {
        // "CL_INVALID_VALUE if svm_ptr is NULL", "if size is 0 or if values specified in
        // map_flags are not valid" (CL_MAP_WRITE_INVALIDATE_REGION excludes the others).
        let all = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
        let invalidate_conflict =
            flags & CL_MAP_WRITE_INVALIDATE_REGION != 0 && flags & (CL_MAP_READ | CL_MAP_WRITE) != 0;
        if svm_ptr.is_null() || size == 0 || flags & !all != 0 || invalidate_conflict {
            return Err(CL_INVALID_VALUE);
        }
        Ok(())
    })
}

#[cl_entry_point]
fn clEnqueueSVMUnmap(
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    ordering_point(queue, CL_COMMAND_SVM_UNMAP, false, num_events_in_wait_list, event_wait_list, event, || {
        // "CL_INVALID_VALUE if svm_ptr is NULL."
        if svm_ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        Ok(())
    })
}

#[cl_entry_point]
fn clEnqueueSVMMigrateMem(
    queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *const c_void,
    sizes: *const usize,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let context = from_handle::<crate::core::queue::Queue>(queue).map(|q| q.context.clone());
    let (n, migrate) = (num_svm_pointers, CL_COMMAND_SVM_MIGRATE_MEM);
    ordering_point(queue, migrate, false, num_events_in_wait_list, event_wait_list, event, || {
        // "CL_INVALID_VALUE if num_svm_pointers is zero or svm_pointers is NULL", "if
        // flags is not 0 or is not any of the values described", "if sizes[i] is non-zero
        // [and] range [svm_pointers[i], svm_pointers[i]+sizes[i]) is not contained within
        // an existing clSVMAlloc allocation", and a NULL pointer among them.
        let valid = CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
        if n == 0 || svm_pointers.is_null() || flags & !valid != 0 {
            return Err(CL_INVALID_VALUE);
        }
        let c = context?;
        let ptrs = slice(svm_pointers.cast_const(), n as usize);
        let sizes = slice(sizes, if sizes.is_null() { 0 } else { n as usize });
        for (i, &p) in ptrs.iter().enumerate() {
            let size = sizes.get(i).copied().unwrap_or(0);
            let inside =
                c.svm.find(p as usize).is_some_and(|(start, len, _)| region::fits(p as usize - start, size, len));
            if p.is_null() || (size != 0 && !inside) {
                return Err(CL_INVALID_VALUE);
            }
        }
        Ok(())
    })
}
