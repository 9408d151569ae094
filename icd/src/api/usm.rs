//! `cl_intel_unified_shared_memory`: allocations, frees, queries and the USM commands,
//! reached through `clGetExtensionFunctionAddress*` (`icd::extension_function`). Every
//! kind is host memory (`core::usm`), so fills and copies are the host's and migrations
//! and advice are ordering points with nothing to move.

use std::ffi::c_void;
use std::ptr::null_mut;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{from_handle, handle_of};
use super::queue::{begin, submit};
use super::svm::ordering_point;
use super::util::{properties, CLResult, Info};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::queue::once;
use crate::core::usm::{alloc_flags, Kind, Usm, MAX_ALIGNMENT};

/// The checks every allocation makes, in the order the extension lists its errors
/// (context, device, alignment, properties, size), then the allocation.
///
/// # Safety
/// `props` is null or a zero-terminated property list.
unsafe fn alloc(
    context: cl_context,
    device: cl_device_id,
    props: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
    kind: Kind,
) -> CLResult<*mut c_void> {
    let c = from_handle::<Context>(context)?;
    // A device allocation names its device; a shared one may name none.
    let with_device = kind == Kind::Device || !device.is_null();
    if with_device {
        let d = from_handle::<Device>(device).map_err(|_| CL_INVALID_DEVICE)?;
        if !c.has_device(&d) {
            return Err(CL_INVALID_DEVICE);
        }
    }
    // "CL_INVALID_VALUE if alignment is not zero or a power of two", "if alignment is
    // greater than the size of the largest data type supported".
    let align = if alignment == 0 { MAX_ALIGNMENT } else { alignment as usize };
    if !align.is_power_of_two() || align > MAX_ALIGNMENT {
        return Err(CL_INVALID_VALUE);
    }
    let flags = alloc_flags(&properties(props)?, kind)?;
    // "CL_INVALID_BUFFER_SIZE if size is zero or greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE".
    let max = c.devices.iter().map(|d| d.limits.max_mem_alloc).max().unwrap_or(0);
    if size == 0 || size as u64 > max {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    // Every allocation gets the largest alignment: it costs nothing on the heap's
    // sizes, and the streaming stores of async copies like whole lines.
    let usm = Usm { kind, with_device, flags };
    c.usm.alloc(usm, size, MAX_ALIGNMENT).map(|p| p.cast()).ok_or(CL_OUT_OF_HOST_MEMORY)
}

#[cl_entry_point]
fn clHostMemAllocINTEL(
    context: cl_context,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
) -> CLResult<*mut c_void> {
    alloc(context, null_mut(), properties, size, alignment, Kind::Host)
}

#[cl_entry_point]
fn clDeviceMemAllocINTEL(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
) -> CLResult<*mut c_void> {
    alloc(context, device, properties, size, alignment, Kind::Device)
}

#[cl_entry_point]
fn clSharedMemAllocINTEL(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
) -> CLResult<*mut c_void> {
    alloc(context, device, properties, size, alignment, Kind::Shared)
}

/// "CL_INVALID_VALUE if ptr is not a value returned by clHostMemAllocINTEL,
/// clDeviceMemAllocINTEL, clSharedMemAllocINTEL, or a NULL pointer"; with `blocking`,
/// the commands enqueued in the context before the call finish first.
fn free(context: cl_context, ptr: *mut c_void, blocking: bool) -> CLResult<()> {
    let c = from_handle::<Context>(context)?;
    if ptr.is_null() {
        return Ok(());
    }
    if !c.usm.find(ptr as usize).is_some_and(|(start, ..)| start == ptr as usize) {
        return Err(CL_INVALID_VALUE);
    }
    if blocking {
        c.drain();
    }
    // Another thread may have freed it meanwhile: that free succeeded, this one did not.
    if !c.usm.free(ptr as usize) {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

#[cl_entry_point]
fn clMemFreeINTEL(context: cl_context, ptr: *mut c_void) -> CLResult<()> {
    free(context, ptr, false)
}

#[cl_entry_point]
fn clMemBlockingFreeINTEL(context: cl_context, ptr: *mut c_void) -> CLResult<()> {
    free(context, ptr, true)
}

#[cl_entry_point]
fn clGetMemAllocInfoINTEL(
    context: cl_context,
    ptr: *const c_void,
    param_name: cl_mem_info_intel,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let c = from_handle::<Context>(context)?;
    // Any pointer may be asked about; one outside every allocation is of unknown type,
    // with no base, size, device or flags.
    let found = c.usm.find(ptr as usize);
    let info = match param_name {
        CL_MEM_ALLOC_TYPE_INTEL => Info::of(&found.map_or(CL_MEM_TYPE_UNKNOWN_INTEL, |(.., u)| u.kind.code())),
        CL_MEM_ALLOC_BASE_PTR_INTEL => Info::of(&(found.map_or(0, |(start, ..)| start) as *mut c_void)),
        CL_MEM_ALLOC_SIZE_INTEL => Info::of(&found.map_or(0, |(_, size, _)| size)),
        CL_MEM_ALLOC_DEVICE_INTEL => {
            let device = found.filter(|(.., u)| u.with_device).and_then(|_| c.devices.first());
            Info::of(&device.map_or(null_mut(), handle_of))
        }
        // The property name doubles as the query (a `cl_mem_properties_intel`).
        n if n as cl_mem_properties_intel == CL_MEM_ALLOC_FLAGS_INTEL => Info::of(&found.map_or(0, |(.., u)| u.flags)),
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clSetKernelArgMemPointerINTEL(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> CLResult<()> {
    // Version 1.1.0: "any pointer value is valid and may be set as an argument".
    super::kernel::set_pointer_arg(kernel, arg_index, arg_value)
}

#[cl_entry_point]
fn clEnqueueMemFillINTEL(
    queue: cl_command_queue,
    dst_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    // The same errors as clEnqueueSVMMemFill's: the largest vector type is 128 bytes.
    let action = super::svm::fill(dst_ptr, pattern, pattern_size, size)?;
    submit(&q, CL_COMMAND_MEMFILL_INTEL, wait, event, false, once(action))
}

#[cl_entry_point]
fn clEnqueueMemcpyINTEL(
    queue: cl_command_queue,
    blocking: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let action = super::svm::memcpy(dst_ptr, src_ptr, size)?;
    submit(&q, CL_COMMAND_MEMCPY_INTEL, wait, event, blocking != CL_FALSE, once(action))
}

#[cl_entry_point]
fn clEnqueueMigrateMemINTEL(
    queue: cl_command_queue,
    _ptr: *const c_void,
    _size: usize,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (n, list, migrate) = (num_events_in_wait_list, event_wait_list, CL_COMMAND_MIGRATEMEM_INTEL);
    ordering_point(queue, migrate, false, n, list, event, || {
        // "CL_INVALID_VALUE if flags is not a supported combination of memory migration
        // flags" (0, to the queue's device, is valid from version 1.2.0 on; runtimes pass
        // it). A hint: host memory has nowhere to go.
        if flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0 {
            return Err(CL_INVALID_VALUE);
        }
        Ok(())
    })
}

#[cl_entry_point]
fn clEnqueueMemAdviseINTEL(
    queue: cl_command_queue,
    _ptr: *const c_void,
    _size: usize,
    _advice: cl_mem_advice_intel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // The extension defines no advice; "if a memory advice hint is not supported by the
    // device it will be ignored".
    let (n, list) = (num_events_in_wait_list, event_wait_list);
    ordering_point(queue, CL_COMMAND_MEMADVISE_INTEL, false, n, list, event, || Ok(()))
}

/// The extension's entry points by name, for `clGetExtensionFunctionAddress*`.
pub(super) fn function(name: &[u8]) -> Option<*mut c_void> {
    let f: *const () = match name {
        b"clHostMemAllocINTEL" => clHostMemAllocINTEL as *const (),
        b"clDeviceMemAllocINTEL" => clDeviceMemAllocINTEL as *const (),
        b"clSharedMemAllocINTEL" => clSharedMemAllocINTEL as *const (),
        b"clMemFreeINTEL" => clMemFreeINTEL as *const (),
        b"clMemBlockingFreeINTEL" => clMemBlockingFreeINTEL as *const (),
        b"clGetMemAllocInfoINTEL" => clGetMemAllocInfoINTEL as *const (),
        b"clSetKernelArgMemPointerINTEL" => clSetKernelArgMemPointerINTEL as *const (),
        b"clEnqueueMemFillINTEL" => clEnqueueMemFillINTEL as *const (),
        b"clEnqueueMemcpyINTEL" => clEnqueueMemcpyINTEL as *const (),
        b"clEnqueueMigrateMemINTEL" => clEnqueueMigrateMemINTEL as *const (),
        b"clEnqueueMemAdviseINTEL" => clEnqueueMemAdviseINTEL as *const (),
        _ => return None,
    };
    Some(f as *mut c_void)
}
