//! Command-queue entry points, synchronisation commands, and the submit path every
//! enqueue shares.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::event::{event_list_of, wait_list};
use super::icd::{self, from_handle, into_handle, retain_release};
use super::util::{properties, property_array, write_opt, CLResult, Info};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::device_enqueue;
use crate::core::event::Event;
use crate::core::queue::{Hints, Queue, Work};

const KNOWN_PROPERTIES: cl_command_queue_properties = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
    | CL_QUEUE_PROFILING_ENABLE
    | CL_QUEUE_ON_DEVICE
    | CL_QUEUE_ON_DEVICE_DEFAULT;
fn create_queue(
    context: cl_context,
    device: cl_device_id,
    props: cl_command_queue_properties,
    props_array: Vec<cl_queue_properties>,
    hints: Option<Hints>,
    size: Option<cl_queue_properties>,
) -> CLResult<cl_command_queue> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_DEVICE if device is not a valid device or is not associated with
    // context."
    let d = from_handle::<Device>(device)?;
    if !c.has_device(&d) {
        return Err(CL_INVALID_DEVICE);
    }
    // "CL_INVALID_VALUE if values specified in properties are not valid": unknown bits;
    // CL_QUEUE_ON_DEVICE without CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE ("If
    // CL_QUEUE_ON_DEVICE is set, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE must also be
    // set"), CL_QUEUE_ON_DEVICE_DEFAULT without CL_QUEUE_ON_DEVICE ("can only be used
    // with CL_QUEUE_ON_DEVICE").
    let on_device = props & CL_QUEUE_ON_DEVICE != 0;
    if props & !KNOWN_PROPERTIES != 0
        || (on_device && props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0)
        || (props & CL_QUEUE_ON_DEVICE_DEFAULT != 0 && !on_device)
    {
        return Err(CL_INVALID_VALUE);
    }
    if !on_device {
        return Ok(into_handle(Queue::new(c, d, props, props_array, hints.unwrap_or_default())?));
    }
    // CL_QUEUE_SIZE "must be a value <= CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE".
    let size = match size {
        None => device_enqueue::PREFERRED_SIZE,
        Some(s) if s <= device_enqueue::MAX_SIZE as cl_queue_properties => s as u32,
        Some(_) => return Err(CL_INVALID_VALUE),
    };
    // "If a default device queue has already been created, calling
    // clCreateCommandQueueWithProperties with CL_QUEUE_PROPERTIES set to
    // CL_QUEUE_ON_DEVICE and CL_QUEUE_ON_DEVICE_DEFAULT will return the default device
    // queue that has already been created and increment its reference count by 1."
    if props & CL_QUEUE_ON_DEVICE_DEFAULT != 0 {
        if let Some(handle) = c.device_queues.default_for(device_enqueue::key(&d)) {
            // Released meanwhile: made anew below.
            if icd::retain::<Queue>(handle as cl_command_queue).is_ok() {
                return Ok(handle as cl_command_queue);
            }
        }
    }
    Ok(into_handle(Queue::new_on_device(c, d, props, props_array, size)?))
}

/// A `cl_khr_priority_hints` or `cl_khr_throttle_hints` value: exactly one of the
/// high, medium and low bits (`CL_INVALID_VALUE` otherwise); whether it is `pick`.
fn hint(value: cl_queue_properties, pick: cl_queue_properties) -> CLResult<bool> {
    const ONE_OF: [cl_queue_properties; 3] = [1 << 0, 1 << 1, 1 << 2];
    match ONE_OF.contains(&value) {
        true => Ok(value == pick),
        false => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clCreateCommandQueue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
) -> CLResult<cl_command_queue> {
    create_queue(context, device, properties, Vec::new(), None, None)
}

#[cl_entry_point]
fn clCreateCommandQueueWithProperties(
    context: cl_context,
    device: cl_device_id,
    properties_list: *const cl_queue_properties,
) -> CLResult<cl_command_queue> {
    let pairs = properties(properties_list).map_err(|_| CL_INVALID_VALUE)?;
    let (mut props, mut size, mut hints) = (0, None, None::<Hints>);
    for &(name, value) in &pairs {
        match name as cl_uint {
            CL_QUEUE_PROPERTIES => props = value,
            CL_QUEUE_SIZE => size = Some(value),
            n if n as cl_queue_properties == CL_QUEUE_PRIORITY_KHR => {
                hints.get_or_insert_with(Hints::default).urgent = hint(value, CL_QUEUE_PRIORITY_HIGH_KHR as _)?
            }
            n if n as cl_queue_properties == CL_QUEUE_THROTTLE_KHR => {
                hints.get_or_insert_with(Hints::default).throttled = hint(value, CL_QUEUE_THROTTLE_LOW_KHR as _)?
            }
            _ => return Err(CL_INVALID_VALUE),
        }
    }
    // CL_QUEUE_SIZE "can only be specified if CL_QUEUE_ON_DEVICE is set".
    if size.is_some() && props & CL_QUEUE_ON_DEVICE == 0 {
        return Err(CL_INVALID_VALUE);
    }
    // Both hint extensions: "CL_INVALID_QUEUE_PROPERTIES if ... [the hint] is
    // specified and the queue is a CL_QUEUE_ON_DEVICE".
    if hints.is_some() && props & CL_QUEUE_ON_DEVICE != 0 {
        return Err(CL_INVALID_QUEUE_PROPERTIES);
    }
    create_queue(context, device, props, property_array(&pairs, !properties_list.is_null()), hints, size)
}

// "clReleaseCommandQueue performs an implicit flush": commands already run on the
// queue's thread, which finishes them before it exits.
retain_release!(Queue, cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue);

fn queue_info(q: &Queue, param: cl_command_queue_info) -> CLResult<Info> {
    match param {
        CL_QUEUE_CONTEXT => Info::of(&icd::handle_of(&q.context)),
        CL_QUEUE_DEVICE => Info::of(&icd::handle_of(&q.device)),
        CL_QUEUE_REFERENCE_COUNT => Info::of(&q.base.ref_count()),
        CL_QUEUE_PROPERTIES => Info::of(&q.properties),
        CL_QUEUE_PROPERTIES_ARRAY => Info::of(&q.properties_array),
        // "CL_INVALID_COMMAND_QUEUE ... if command_queue is not a valid command-queue for
        // param_name": the size only exists for device queues.
        CL_QUEUE_SIZE => Info::of(&q.on_device.ok_or(CL_INVALID_COMMAND_QUEUE)?),
        // "the current default command-queue for the underlying device".
        CL_QUEUE_DEVICE_DEFAULT => Info::of(
            &(q.context.device_queues.default_for(device_enqueue::key(&q.device)).unwrap_or(0) as cl_command_queue),
        ),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetCommandQueueInfo(
    queue: cl_command_queue,
    param_name: cl_command_queue_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let q = from_handle::<Queue>(queue)?;
    queue_info(&q, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

/// Deprecated in 1.1 and not in the 3.0 core; queues keep the properties they were
/// created with.
#[cl_entry_point]
fn clSetCommandQueueProperty(
    queue: cl_command_queue,
    _properties: cl_command_queue_properties,
    _enable: cl_bool,
    _old_properties: *mut cl_command_queue_properties,
) -> CLResult<()> {
    from_handle::<Queue>(queue)?;
    Err(CL_INVALID_OPERATION)
}

#[cl_entry_point]
fn clSetDefaultDeviceCommandQueue(context: cl_context, device: cl_device_id, queue: cl_command_queue) -> CLResult<()> {
    let c = from_handle::<Context>(context)?;
    let d = from_handle::<Device>(device)?;
    if !c.has_device(&d) {
        return Err(CL_INVALID_DEVICE);
    }
    // "CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue for
    // device": a device queue of this context and device.
    let q = from_handle::<Queue>(queue)?;
    if q.on_device.is_none() || !Arc::ptr_eq(&q.device, &d) || !Arc::ptr_eq(&q.context, &c) {
        return Err(CL_INVALID_COMMAND_QUEUE);
    }
    c.device_queues.set_default(device_enqueue::key(&d), icd::handle_of(&q) as usize);
    Ok(())
}

#[cl_entry_point]
fn clFlush(queue: cl_command_queue) -> CLResult<()> {
    // Commands are handed to the queue's thread when enqueued, so they are issued.
    host_queue(queue).map(drop)
}

#[cl_entry_point]
fn clFinish(queue: cl_command_queue) -> CLResult<()> {
    host_queue(queue)?.finish();
    Ok(())
}

/// A host command-queue: "CL_INVALID_COMMAND_QUEUE if command_queue is not a valid
/// host command-queue" (a device queue takes commands from kernels alone).
pub(crate) fn host_queue(queue: cl_command_queue) -> CLResult<Arc<Queue>> {
    let q = from_handle::<Queue>(queue)?;
    match q.on_device {
        Some(_) => Err(CL_INVALID_COMMAND_QUEUE),
        None => Ok(q),
    }
}

/// The part of an enqueue before its command-specific checks: the queue and its
/// validated wait list.
///
/// # Safety
/// `list` is null or points at `num` event handles.
pub(crate) unsafe fn begin(
    queue: cl_command_queue,
    num: cl_uint,
    list: *const cl_event,
) -> CLResult<(Arc<Queue>, Vec<Arc<Event>>)> {
    let q = host_queue(queue)?;
    let wait = wait_list(&q.context, num, list)?;
    Ok((q, wait))
}

/// Submits a checked command, hands its event to the application if asked, and waits
/// for it when the call is blocking.
///
/// # Safety
/// `event_ret` is null or writable, as the OpenCL contract asks of an `event` out-
/// parameter.
pub(crate) unsafe fn submit(
    queue: &Arc<Queue>,
    command_type: cl_command_type,
    wait: Vec<Arc<Event>>,
    event_ret: *mut cl_event,
    blocking: bool,
    work: Work,
) -> CLResult<()> {
    let event = queue.enqueue(command_type, wait, work);
    if !event_ret.is_null() {
        write_opt(event_ret, into_handle(event.clone()));
    }
    // "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the ... operations are blocking
    // and the execution status of any of the events in event_wait_list is a negative
    // integer value."
    if blocking && event.wait() < 0 {
        return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    }
    Ok(())
}

/// Markers and barriers: an in-order thread already runs them after every earlier
/// command, which is what both promise when their wait list is empty.
///
/// # Safety
/// The wait list is null or `num` handles long; `event` is null or writable.
unsafe fn sync_command(
    queue: cl_command_queue,
    command_type: cl_command_type,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num, list)?;
    submit(&q, command_type, wait, event, false, Box::new(|| Ok(())))
}

#[cl_entry_point]
fn clEnqueueMarkerWithWaitList(
    queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    sync_command(queue, CL_COMMAND_MARKER, num_events_in_wait_list, event_wait_list, event)
}

#[cl_entry_point]
fn clEnqueueBarrierWithWaitList(
    queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    sync_command(queue, CL_COMMAND_BARRIER, num_events_in_wait_list, event_wait_list, event)
}

#[cl_entry_point]
fn clEnqueueMarker(queue: cl_command_queue, event: *mut cl_event) -> CLResult<()> {
    from_handle::<Queue>(queue)?;
    // "CL_INVALID_VALUE if event is a NULL value."
    if event.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    sync_command(queue, CL_COMMAND_MARKER, 0, std::ptr::null(), event)
}

#[cl_entry_point]
fn clEnqueueBarrier(queue: cl_command_queue) -> CLResult<()> {
    sync_command(queue, CL_COMMAND_BARRIER, 0, std::ptr::null(), null_mut())
}

#[cl_entry_point]
fn clEnqueueWaitForEvents(queue: cl_command_queue, num_events: cl_uint, event_list: *const cl_event) -> CLResult<()> {
    let q = from_handle::<Queue>(queue)?;
    let events = event_list_of(num_events, event_list)?;
    if events.iter().any(|e| !Arc::ptr_eq(&e.context, &q.context)) {
        return Err(CL_INVALID_CONTEXT);
    }
    submit(&q, CL_COMMAND_BARRIER, events, null_mut(), false, Box::new(|| Ok(())))
}
