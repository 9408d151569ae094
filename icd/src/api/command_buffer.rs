//! `cl_khr_command_buffer`'s entry points, reached through
//! `clGetExtensionFunctionAddress*` (`icd::extension_function`). Each `clCommand*KHR`
//! runs the checks of the enqueue it mirrors (the same functions `transfer`, `image`,
//! `svm` and `kernel` enqueue with), against the command buffer's queue, and records
//! the command's body instead of submitting it.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::event::wait_list;
use super::icd::{self, from_handle, into_handle, retain_release};
use super::queue::{host_queue, submit};
use super::util::{properties, property_array, slice, write_opt, CLResult, Info};
use crate::core::command_buffer::{self as core_cb, CommandBuffer, Dispatch, DispatchState, Recorded};
use crate::core::event::Event;
use crate::core::queue::{self, Action, Queue};

/// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR`, as the headers and registry have it
/// (opencl-sys 0.6 has an older value).
const MUTABLE_DISPATCH_ASSERTS: cl_command_buffer_properties_khr = 0x12B7;
/// `CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR`: every field of a kernel command can
/// be updated (an update builds a new launch, as an enqueue would).
pub(crate) const MUTABLE_FIELDS: cl_mutable_dispatch_fields_khr = CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR
    | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_ARGUMENTS_KHR
    | CL_MUTABLE_DISPATCH_EXEC_INFO_KHR;

/// `CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR`: kernels may print (printf writes as the
/// kernel runs, whoever runs it); replays may overlap (each runs its own copy of every
/// launch, `core::command_buffer`); recorded kernels may enqueue kernels (each replay's
/// copy of a launch has a tree of its own, `exec::enqueue`); commands may be recorded to
/// several queues of one device (cl_khr_command_buffer_multi_device).
pub(crate) const CAPABILITIES: cl_device_command_buffer_capabilities_khr =
    CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR
        | CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
        | CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR
        | CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR;
/// `CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR`: every property a queue
/// of this device can have (a replay runs in order, which an out-of-order queue
/// permits).
pub(crate) const SUPPORTED_QUEUE_PROPERTIES: cl_command_queue_properties =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
/// `CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR`: none.
pub(crate) const REQUIRED_QUEUE_PROPERTIES: cl_command_queue_properties = 0;

/// `CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR` (cl_khr_command_buffer_multi_device):
/// every device of the platform (the device and its sub-devices) shares the host, so
/// commands of any of them synchronise there (universal sync), and a command buffer is
/// remapped to other queues by the user's list or by the driver's.
pub(crate) const PLATFORM_CAPABILITIES: cl_platform_command_buffer_capabilities_khr =
    CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR
        | CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR
        | CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR;

/// The queues a command buffer is created for, or remapped or enqueued to: "CL_INVALID_
/// VALUE if ... num_queues is zero" or "queues is NULL"; "CL_INVALID_COMMAND_QUEUE if
/// any command-queue in queues is not a valid command-queue"; "CL_INVALID_CONTEXT if
/// all the command-queues in queues do not have the same OpenCL context".
///
/// # Safety
/// `queues` is null or holds `num_queues` handles.
unsafe fn queue_list(num_queues: cl_uint, queues: *const cl_command_queue) -> CLResult<Vec<Arc<Queue>>> {
    if num_queues == 0 || queues.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let list = slice(queues, num_queues as usize).iter().map(|&q| host_queue(q)).collect::<CLResult<Vec<_>>>()?;
    if list.iter().any(|q| !Arc::ptr_eq(&q.context, &list[0].context)) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(list)
}

#[cl_entry_point]
fn clCreateCommandBufferKHR(
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    properties_list: *const cl_command_buffer_properties_khr,
) -> CLResult<cl_command_buffer_khr> {
    let list = queue_list(num_queues, queues)?;
    // "CL_INVALID_VALUE if values specified in properties are not valid, or if the same
    // property name is specified more than once."
    let pairs = properties(properties_list).map_err(|_| CL_INVALID_VALUE)?;
    let (mut flags, mut asserts) = (0, 0);
    const FLAGS: cl_command_buffer_flags_khr =
        CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR | CL_COMMAND_BUFFER_MUTABLE_KHR | CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR;
    for &(name, value) in &pairs {
        match name {
            CL_COMMAND_BUFFER_FLAGS_KHR if value & !FLAGS == 0 => flags = value,
            MUTABLE_DISPATCH_ASSERTS if value & !CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR == 0 => {
                asserts = value
            }
            _ => return Err(CL_INVALID_VALUE),
        }
    }
    // "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR if the CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR
    // flag is set, and any device associated with a command-queue in queues cannot
    // natively synchronize with the other devices": no device lists another
    // (CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR), their commands meet on the host.
    let one_device = list.iter().all(|q| Arc::ptr_eq(&q.device, &list[0].device));
    if flags & CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR != 0 && !one_device {
        return Err(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR);
    }
    let array = property_array(&pairs, !properties_list.is_null());
    Ok(into_handle(Arc::new(CommandBuffer::new(list, flags, asserts, array))))
}

/// `clRemapCommandBufferKHR`: a copy of the command buffer whose commands target
/// `queues`: each command the queue at its own queue's index (`automatic` false), or
/// the same spread round-robin over however many queues are given (`automatic`).
#[cl_entry_point]
fn clRemapCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
    automatic: cl_bool,
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    num_handles: cl_uint,
    handles: *const cl_mutable_command_khr,
    handles_ret: *mut cl_mutable_command_khr,
) -> CLResult<cl_command_buffer_khr> {
    let b = from_handle::<CommandBuffer>(command_buffer)?;
    let list = queue_list(num_queues, queues)?;
    // "CL_INVALID_VALUE if automatic is CL_FALSE and num_queues is not equal to the
    // number of queues used on creation of command_buffer".
    if automatic == CL_FALSE && list.len() != b.queues.len() {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_VALUE if handles or handles_ret is NULL and num_handles is > 0, or
    // either handles or handles_ret is not NULL and num_handles is 0".
    if (num_handles > 0 && (handles.is_null() || handles_ret.is_null()))
        || (num_handles == 0 && (!handles.is_null() || !handles_ret.is_null()))
    {
        return Err(CL_INVALID_VALUE);
    }
    let wanted: Vec<usize> = slice(handles, num_handles as usize).iter().map(|&h| h as usize).collect();
    // "CL_INVALID_VALUE if any handle in handles is not a valid command handle belonging
    // to command_buffer".
    let me = Arc::as_ptr(&b) as usize;
    if wanted.iter().any(|&h| !core_cb::dispatch(h).is_some_and(|d| d.buffer == me)) {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_CONTEXT if command_buffer and all the command-queues in queues do not
    // have the same OpenCL context."
    if !Arc::ptr_eq(&list[0].context, b.context()) {
        return Err(CL_INVALID_CONTEXT);
    }
    // Automatic remapping spreads the buffer's queues over the given ones in turn.
    let (copy, pairs) = b.remap(list, |i| i)?;
    for (i, h) in wanted.iter().enumerate() {
        let new = pairs.iter().find(|(old, _)| old == h).map_or(0, |&(_, new)| new);
        // SAFETY: `handles_ret` holds `num_handles` slots by contract (checked non-null).
        unsafe { handles_ret.add(i).write(new as cl_mutable_command_khr) };
    }
    Ok(into_handle(copy))
}

retain_release!(CommandBuffer, cl_command_buffer_khr, clRetainCommandBufferKHR, clReleaseCommandBufferKHR);

#[cl_entry_point]
fn clFinalizeCommandBufferKHR(command_buffer: cl_command_buffer_khr) -> CLResult<()> {
    from_handle::<CommandBuffer>(command_buffer)?.finalize()
}

#[cl_entry_point]
fn clEnqueueCommandBufferKHR(
    num_queues: cl_uint,
    queues: *mut cl_command_queue,
    command_buffer: cl_command_buffer_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let b = from_handle::<CommandBuffer>(command_buffer)?;
    // "CL_INVALID_OPERATION if command_buffer is not in the Executable state."
    let replay = b.replay()?;
    // "CL_INVALID_VALUE if queues is NULL and num_queues is > 0, or queues is not NULL
    // and num_queues is 0", "if num_queues is > 0 and not the same value as num_queues
    // set on command_buffer creation".
    if queues.is_null() != (num_queues == 0) || (num_queues > 0 && num_queues as usize != b.queues.len()) {
        return Err(CL_INVALID_VALUE);
    }
    let list = match num_queues {
        0 => b.queues.clone(),
        // SAFETY: `queues` holds `num_queues` handles by contract.
        n => unsafe { slice(queues, n as usize) }.iter().map(|&q| host_queue(q)).collect::<CLResult<Vec<_>>>()?,
    };
    for (q, recorded) in list.iter().zip(&b.queues) {
        // A substitute queue must be of the recording queue's device ("CL_INCOMPATIBLE_
        // COMMAND_QUEUE_KHR", as the CTS expects of a queue of another device) and
        // context, with properties the device supports for command buffers (none is
        // required).
        if !Arc::ptr_eq(&q.device, &recorded.device) || q.properties & !SUPPORTED_QUEUE_PROPERTIES != 0 {
            return Err(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR);
        }
        if !Arc::ptr_eq(&q.context, b.context()) {
            return Err(CL_INVALID_CONTEXT);
        }
    }
    let mut wait = wait_list(b.context(), num_events_in_wait_list, event_wait_list)?;
    // Across queues the replay is one command of the first, after what the others hold
    // (a marker on each) and before what they take next (a wait on each for the replay):
    // each queue's order holds for the commands recorded to it.
    let others: Vec<&Arc<Queue>> = list[1..].iter().filter(|q| !Arc::ptr_eq(q, &list[0])).collect();
    for q in &others {
        wait.push(q.enqueue(CL_COMMAND_MARKER, Vec::new(), queue::once(Box::new(|| Ok(())))));
    }
    let mut replayed = null_mut();
    submit(&list[0], CL_COMMAND_COMMAND_BUFFER_KHR, wait, &mut replayed, false, replay)?;
    // SAFETY: the event handle `submit` just made.
    let done = from_handle::<Event>(replayed)?;
    for q in &others {
        q.enqueue(CL_COMMAND_BARRIER, vec![done.clone()], queue::once(Box::new(|| Ok(()))));
    }
    match event.is_null() {
        true => icd::release::<Event>(replayed),
        false => {
            // SAFETY: `event` is writable by contract.
            unsafe { event.write(replayed) };
            Ok(())
        }
    }
}

#[cl_entry_point]
fn clGetCommandBufferInfoKHR(
    command_buffer: cl_command_buffer_khr,
    param_name: cl_command_buffer_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let b = from_handle::<CommandBuffer>(command_buffer)?;
    let info = match param_name {
        CL_COMMAND_BUFFER_QUEUES_KHR => Info::of(&b.queues.iter().map(icd::handle_of).collect::<Vec<_>>()),
        CL_COMMAND_BUFFER_NUM_QUEUES_KHR => Info::of(&(b.queues.len() as cl_uint)),
        CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR => Info::of(&b.base.ref_count()),
        CL_COMMAND_BUFFER_STATE_KHR => Info::of(&b.state()),
        CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR => Info::of(&b.properties),
        CL_COMMAND_BUFFER_CONTEXT_KHR => Info::of(&icd::handle_of(b.context())),
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

/// What every `clCommand*KHR` checks before the command's own arguments: the command
/// buffer, still recording; the queue the command is recorded to ("CL_INVALID_COMMAND_
/// QUEUE if ... either command_queue is NULL and command_buffer was created with more
/// than one queue, or command_queue is not NULL and not a command-queue listed on
/// command_buffer creation"; "CL_INVALID_CONTEXT if command_queue is not NULL, and the
/// context associated with command_queue and command_buffer is not the same");
/// properties, of which the extension defines none for commands other than kernels; the
/// mutable handle, "unused, and must be NULL" but for kernels; and the form of the
/// sync-point wait list (that its points exist is checked when the command is
/// recorded). Returns the buffer, its queue's index and the wait list.
///
/// # Safety
/// `properties` is null or zero-terminated; the sync-point list is null or `num` long.
unsafe fn recording(
    command_buffer: cl_command_buffer_khr,
    queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
    kernel: bool,
) -> CLResult<(Arc<CommandBuffer>, Arc<Queue>, Vec<cl_sync_point_khr>)> {
    let b = from_handle::<CommandBuffer>(command_buffer)?;
    let q = match queue.is_null() {
        true if b.queues.len() == 1 => b.queues[0].clone(),
        true => return Err(CL_INVALID_COMMAND_QUEUE),
        false => {
            let q = from_handle::<Queue>(queue)?;
            if !Arc::ptr_eq(&q.context, b.context()) {
                return Err(CL_INVALID_CONTEXT);
            }
            b.queues.iter().find(|r| Arc::ptr_eq(r, &q)).cloned().ok_or(CL_INVALID_COMMAND_QUEUE)?
        }
    };
    if b.finalized() {
        return Err(CL_INVALID_OPERATION);
    }
    // "CL_INVALID_VALUE if values specified in properties are not valid."
    if !kernel && ((!properties.is_null() && properties.read_unaligned() != 0) || !mutable_handle.is_null()) {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR if sync_point_wait_list is NULL and
    // num_sync_points_in_wait_list is > 0, or sync_point_wait_list is not NULL and
    // num_sync_points_in_wait_list is 0".
    if list.is_null() != (num == 0) {
        return Err(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR);
    }
    Ok((b.clone(), q, slice(list, num as usize).to_vec()))
}

/// Where a `clCommand*KHR` call records, as its common parameters give it: the command
/// buffer, queue, properties and mutable handle; then the sync-point wait list and the
/// sync point to return.
type RecordAt =
    (cl_command_buffer_khr, cl_command_queue, *const cl_command_properties_khr, *mut cl_mutable_command_khr);
type Syncs = (cl_uint, *const cl_sync_point_khr, *mut cl_sync_point_khr);

/// Records a command other than a kernel after `recording`'s checks and those `make`
/// runs on the command buffer's queue (the enqueue's), and returns its sync point.
///
/// # Safety
/// As `recording`; the sync point is null or writable.
unsafe fn record(
    (command_buffer, queue, properties, mutable_handle): RecordAt,
    (num, list, sync_point): Syncs,
    make: impl FnOnce(&Queue) -> CLResult<Action>,
) -> CLResult<()> {
    let (b, q, waits) = recording(command_buffer, queue, properties, num, list, mutable_handle, false)?;
    let point = b.record(&waits, Recorded::Fixed(Arc::new(make(&q)?)))?;
    write_opt(sync_point, point);
    Ok(())
}

#[cl_entry_point]
fn clCommandBarrierWithWaitListKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    // A replay runs its commands in order, so every command after the barrier already
    // runs after everything before it.
    record(into, syncs, |_| Ok(Box::new(|| Ok(()))))
}

#[cl_entry_point]
fn clCommandCopyBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |q| super::transfer::copy_buffer(q, src_buffer, dst_buffer, src_offset, dst_offset, size))
}

#[cl_entry_point]
fn clCommandCopyBufferRectKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    let pitches = [src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch];
    record(into, syncs, |q| {
        super::transfer::copy_buffer_rect(q, src_buffer, dst_buffer, src_origin, dst_origin, region, pitches)
    })
}

#[cl_entry_point]
fn clCommandCopyBufferToImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |q| {
        super::image::image_buffer_command(q, dst_image, src_buffer, false, dst_origin, region, src_offset)
    })
}

#[cl_entry_point]
fn clCommandCopyImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |q| super::image::copy_image(q, src_image, dst_image, src_origin, dst_origin, region))
}

#[cl_entry_point]
fn clCommandCopyImageToBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |q| {
        super::image::image_buffer_command(q, src_image, dst_buffer, true, src_origin, region, dst_offset)
    })
}

#[cl_entry_point]
fn clCommandFillBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |q| super::transfer::fill_buffer(q, buffer, pattern, pattern_size, offset, size))
}

#[cl_entry_point]
fn clCommandFillImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |q| super::image::fill_image(q, image, fill_color, origin, region))
}

#[cl_entry_point]
fn clCommandSVMMemcpyKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |_| super::svm::memcpy(dst_ptr, src_ptr, size))
}

#[cl_entry_point]
fn clCommandSVMMemFillKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let into = (command_buffer, command_queue, properties, mutable_handle);
    let syncs = (num_sync_points_in_wait_list, sync_point_wait_list, sync_point);
    record(into, syncs, |_| super::svm::fill(svm_ptr, pattern, pattern_size, size))
}

#[cl_entry_point]
fn clCommandNDRangeKernelKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> CLResult<()> {
    let (n, list) = (num_sync_points_in_wait_list, sync_point_wait_list);
    let (b, q, waits) = recording(command_buffer, command_queue, properties, n, list, mutable_handle, true)?;
    // "CL_INVALID_VALUE if values specified in properties are not valid."
    let pairs = super::util::properties(properties).map_err(|_| CL_INVALID_VALUE)?;
    let (mut fields, mut asserts) = (MUTABLE_FIELDS, b.asserts);
    for &(name, value) in &pairs {
        match name {
            CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR if value & !MUTABLE_FIELDS == 0 => fields = value,
            CL_MUTABLE_DISPATCH_ASSERTS_KHR
                if value & !CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR == 0 =>
            {
                asserts |= value
            }
            _ => return Err(CL_INVALID_VALUE),
        }
    }
    let (k, range) =
        super::kernel::ndrange(&q, kernel, work_dim, global_work_offset, global_work_size, local_work_size)?;
    // "CL_INVALID_VALUE if command_buffer was created with ... NO_ADDITIONAL_WORK_GROUPS
    // and local_work_size is NULL", or the command's properties assert it.
    if asserts & CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR != 0 && range.local.is_none() {
        return Err(CL_INVALID_VALUE);
    }
    // The arguments are those set now; later clSetKernelArg calls do not reach the
    // recorded command. A mutable command buffer may record a kernel whose arguments
    // updates will set ("CL_INVALID_KERNEL_ARGS if the kernel argument values have not
    // been specified and the CL_MUTABLE_DISPATCH_ARGUMENTS_KHR flag was not set").
    let deferrable = b.flags & CL_COMMAND_BUFFER_MUTABLE_KHR != 0 && fields & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR != 0;
    let mut state = DispatchState { args: k.copy(), range, launch: None };
    state.launch = Dispatch::build(&q, &state, deferrable)?;
    let dispatch = Arc::new(Dispatch {
        buffer: Arc::as_ptr(&b) as usize,
        queue: q,
        kernel: k,
        fields,
        properties: property_array(&pairs, !properties.is_null()),
        state: parking_lot::Mutex::new(state),
    });
    let handle = Arc::as_ptr(&dispatch) as cl_mutable_command_khr;
    let point = b.record(&waits, Recorded::Dispatch(dispatch))?;
    write_opt(sync_point, point);
    write_opt(mutable_handle, handle);
    Ok(())
}

#[cl_entry_point]
fn clUpdateMutableCommandsKHR(
    command_buffer: cl_command_buffer_khr,
    num_configs: cl_uint,
    config_types: *const cl_command_buffer_update_type_khr,
    configs: *const *const c_void,
) -> CLResult<()> {
    let b = from_handle::<CommandBuffer>(command_buffer)?;
    // "CL_INVALID_OPERATION if command_buffer has not been finalized", "if
    // command_buffer was not created with the CL_COMMAND_BUFFER_MUTABLE_KHR flag".
    if !b.finalized() || b.flags & CL_COMMAND_BUFFER_MUTABLE_KHR == 0 {
        return Err(CL_INVALID_OPERATION);
    }
    // "CL_INVALID_VALUE if config_types is NULL and num_configs > 0, or config_types is
    // not NULL and num_configs is 0", and the same of configs; "if any element of
    // config_types is not a valid cl_command_buffer_update_type_khr enum", "if any
    // element of configs is NULL".
    if config_types.is_null() != (num_configs == 0) || configs.is_null() != (num_configs == 0) {
        return Err(CL_INVALID_VALUE);
    }
    let (types, configs) = (slice(config_types, num_configs as usize), slice(configs, num_configs as usize));
    if types.iter().any(|&t| t != CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR) || configs.iter().any(|c| c.is_null())
    {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: each config of that type is a cl_mutable_dispatch_config_khr.
    let configs: Vec<cl_mutable_dispatch_config_khr> =
        configs.iter().map(|&c| unsafe { c.cast::<cl_mutable_dispatch_config_khr>().read_unaligned() }).collect();
    // "CL_INVALID_MUTABLE_COMMAND_KHR if command is not a valid mutable command object
    // returned from clCommandNDRangeKernelKHR, or created from command_buffer."
    let me = Arc::as_ptr(&b) as usize;
    let targets = configs
        .iter()
        .map(|c| core_cb::dispatch(c.command as usize).filter(|d| d.buffer == me).ok_or(CL_INVALID_MUTABLE_COMMAND_KHR))
        .collect::<CLResult<Vec<_>>>()?;
    // SAFETY: the config's lists and sizes follow the extension's contract.
    b.update(&targets, |i, state| unsafe { updated(&targets[i], &configs[i], state) })
}

/// A kernel command's state after `config` (the checks of `clUpdateMutableCommandsKHR`,
/// and those of `clSetKernelArg`, `clSetKernelArgSVMPointer`, `clSetKernelExecInfo` and
/// `clEnqueueNDRangeKernel` for what it sets).
///
/// # Safety
/// The config's lists hold their counts of elements; its sizes are null or `work_dim`
/// long.
unsafe fn updated(
    d: &Dispatch,
    config: &cl_mutable_dispatch_config_khr,
    mut state: DispatchState,
) -> CLResult<DispatchState> {
    let c = config;
    let may = |field| d.fields & field != 0;
    // "CL_INVALID_OPERATION if the CL_MUTABLE_DISPATCH_*_KHR property was not set on
    // command recording and" the matching member is given.
    let refused = (!c.global_work_offset.is_null() && !may(CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR))
        || (!c.global_work_size.is_null() && !may(CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR))
        || (!c.local_work_size.is_null() && !may(CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR))
        || ((c.num_args != 0 || c.num_svm_args != 0) && !may(CL_MUTABLE_DISPATCH_ARGUMENTS_KHR))
        || (c.num_exec_infos != 0 && !may(CL_MUTABLE_DISPATCH_EXEC_INFO_KHR));
    // "CL_INVALID_OPERATION if work_dim is not zero and different from the work_dim
    // set on command recording."
    if refused || (c.work_dim != 0 && c.work_dim as usize != state.range.dims) {
        return Err(CL_INVALID_OPERATION);
    }
    // "CL_INVALID_VALUE if arg_list is NULL and num_args > 0, or arg_list is not NULL
    // and num_args is 0", and the same of the SVM and exec-info lists.
    if c.arg_list.is_null() != (c.num_args == 0)
        || c.arg_svm_list.is_null() != (c.num_svm_args == 0)
        || c.exec_info_list.is_null() != (c.num_exec_infos == 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    for info in slice(c.exec_info_list, c.num_exec_infos as usize) {
        super::kernel::exec_info(info.param_name, info.param_value_size, info.param_value)?;
    }
    if c.num_args != 0 || c.num_svm_args != 0 {
        // Set on a new copy: an error leaves the command as it was.
        state.args = state.args.copy();
        for a in slice(c.arg_list, c.num_args as usize) {
            super::kernel::set_arg(&state.args, a.arg_index, a.arg_size, a.arg_value)?;
        }
        for a in slice(c.arg_svm_list, c.num_svm_args as usize) {
            super::kernel::set_svm_arg(&state.args, a.arg_index, a.arg_value)?;
        }
    }
    let before = state.range;
    let dims = before.dims;
    let r = &mut state.range;
    if !c.global_work_offset.is_null() {
        r.offset = super::kernel::sizes(c.global_work_offset, dims, 0);
    }
    if !c.global_work_size.is_null() {
        r.global = super::kernel::sizes(c.global_work_size, dims, 1);
    }
    if !c.local_work_size.is_null() {
        r.local = Some(super::kernel::sizes(c.local_work_size, dims, 1));
    }
    if (0..3).any(|i| r.global[i].checked_add(r.offset[i]).is_none()) {
        return Err(CL_INVALID_GLOBAL_OFFSET);
    }
    // "CL_INVALID_OPERATION if the values of local_work_size and/or global_work_size
    // result in a change to work-group uniformity."
    let uniform =
        |r: &crate::core::kernel::NdRange| r.local.map_or(true, |l| (0..r.dims).all(|i| r.global[i] % l[i] == 0));
    if uniform(&before) != uniform(r) {
        return Err(CL_INVALID_OPERATION);
    }
    state.launch = Dispatch::build(&d.queue, &state, may(CL_MUTABLE_DISPATCH_ARGUMENTS_KHR))?;
    Ok(state)
}

#[cl_entry_point]
fn clGetMutableCommandInfoKHR(
    command: cl_mutable_command_khr,
    param_name: cl_mutable_command_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    // "CL_INVALID_MUTABLE_COMMAND_KHR if command is not a valid mutable command object."
    let d = core_cb::dispatch(command as usize).ok_or(CL_INVALID_MUTABLE_COMMAND_KHR)?;
    let state = d.state.lock().clone();
    let r = state.range;
    let local = match (r.local, &state.launch) {
        (Some(l), _) => l,
        (None, Some(launch)) => launch.local,
        (None, None) => [0; 3],
    };
    let info = match param_name {
        CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR => Info::of(&icd::handle_of(&d.queue)),
        CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR => Info::of(&(d.buffer as *mut c_void)),
        CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR => Info::of(&CL_COMMAND_NDRANGE_KERNEL),
        CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR => Info::of(&d.properties),
        CL_MUTABLE_DISPATCH_KERNEL_KHR => Info::of(&icd::handle_of(&d.kernel)),
        CL_MUTABLE_DISPATCH_DIMENSIONS_KHR => Info::of(&(r.dims as cl_uint)),
        CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR => Info::of(&r.offset[..r.dims]),
        CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR => Info::of(&r.global[..r.dims]),
        CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR => Info::of(&local[..r.dims]),
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

/// The extension's entry points by name, for `clGetExtensionFunctionAddress*`.
pub(super) fn function(name: &[u8]) -> Option<*mut c_void> {
    let f: *const () = match name {
        b"clCreateCommandBufferKHR" => clCreateCommandBufferKHR as *const (),
        b"clRetainCommandBufferKHR" => clRetainCommandBufferKHR as *const (),
        b"clReleaseCommandBufferKHR" => clReleaseCommandBufferKHR as *const (),
        b"clFinalizeCommandBufferKHR" => clFinalizeCommandBufferKHR as *const (),
        b"clEnqueueCommandBufferKHR" => clEnqueueCommandBufferKHR as *const (),
        b"clGetCommandBufferInfoKHR" => clGetCommandBufferInfoKHR as *const (),
        b"clCommandBarrierWithWaitListKHR" => clCommandBarrierWithWaitListKHR as *const (),
        b"clCommandCopyBufferKHR" => clCommandCopyBufferKHR as *const (),
        b"clCommandCopyBufferRectKHR" => clCommandCopyBufferRectKHR as *const (),
        b"clCommandCopyBufferToImageKHR" => clCommandCopyBufferToImageKHR as *const (),
        b"clCommandCopyImageKHR" => clCommandCopyImageKHR as *const (),
        b"clCommandCopyImageToBufferKHR" => clCommandCopyImageToBufferKHR as *const (),
        b"clCommandFillBufferKHR" => clCommandFillBufferKHR as *const (),
        b"clCommandFillImageKHR" => clCommandFillImageKHR as *const (),
        b"clCommandSVMMemcpyKHR" => clCommandSVMMemcpyKHR as *const (),
        b"clCommandSVMMemFillKHR" => clCommandSVMMemFillKHR as *const (),
        b"clCommandNDRangeKernelKHR" => clCommandNDRangeKernelKHR as *const (),
        b"clUpdateMutableCommandsKHR" => clUpdateMutableCommandsKHR as *const (),
        b"clGetMutableCommandInfoKHR" => clGetMutableCommandInfoKHR as *const (),
        b"clRemapCommandBufferKHR" => clRemapCommandBufferKHR as *const (),
        _ => return None,
    };
    Some(f as *mut c_void)
}
