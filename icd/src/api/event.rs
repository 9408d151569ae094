//! Event entry points and the wait-list check every enqueue shares.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle, into_handle, retain_release};
use super::util::{slice, CLResult, Info};
use crate::core::context::Context;
use crate::core::event::{Event, EventCallback, Stamp};

/// Validates an enqueue's `event_wait_list`.
///
/// # Safety
/// `list` is null or points at `num` event handles, as the OpenCL contract asks of a wait
/// list.
pub(crate) unsafe fn wait_list(
    context: &Arc<Context>,
    num: cl_uint,
    list: *const cl_event,
) -> CLResult<Vec<Arc<Event>>> {
    // "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list
    // > 0, or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event
    // objects in event_wait_list are not valid events."
    if list.is_null() != (num == 0) {
        return Err(CL_INVALID_EVENT_WAIT_LIST);
    }
    let events: Vec<Arc<Event>> = slice(list, num as usize)
        .iter()
        .map(|&e| from_handle::<Event>(e).map_err(|_| CL_INVALID_EVENT_WAIT_LIST))
        .collect::<CLResult<_>>()?;
    // "CL_INVALID_CONTEXT if context associated with command_queue and events in
    // event_wait_list are not the same."
    if events.iter().any(|e| !Arc::ptr_eq(&e.context, context)) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(events)
}

/// The events of `clWaitForEvents` and `clEnqueueWaitForEvents`: "CL_INVALID_VALUE if
/// num_events is zero or event_list is NULL", `CL_INVALID_EVENT` for a handle that is
/// not an event.
///
/// # Safety
/// `list` is null or points at `num` event handles.
pub(crate) unsafe fn event_list_of(num: cl_uint, list: *const cl_event) -> CLResult<Vec<Arc<Event>>> {
    if num == 0 || list.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    slice(list, num as usize).iter().map(|&e| from_handle::<Event>(e)).collect()
}

#[cl_entry_point]
fn clWaitForEvents(num_events: cl_uint, event_list: *const cl_event) -> CLResult<()> {
    let events = event_list_of(num_events, event_list)?;
    // "CL_INVALID_CONTEXT if events specified in event_list do not belong to the
    // same context."
    if events.iter().any(|e| !Arc::ptr_eq(&e.context, &events[0].context)) {
        return Err(CL_INVALID_CONTEXT);
    }
    // "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any
    // of the events in event_list is a negative integer value." All are waited for.
    let failed = events.iter().map(|e| e.wait()).fold(false, |f, s| f | (s < 0));
    if failed {
        Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    } else {
        Ok(())
    }
}

fn event_info(e: &Event, param: cl_event_info) -> CLResult<Info> {
    match param {
        // A queue's handle is its address, which the event holds as a trait object.
        CL_EVENT_COMMAND_QUEUE => {
            Info::of(&e.queue.as_ref().map_or(null_mut(), |q| Arc::as_ptr(q) as *const () as *mut c_void))
        }
        CL_EVENT_CONTEXT => Info::of(&icd::handle_of(&e.context)),
        CL_EVENT_COMMAND_TYPE => Info::of(&e.command_type),
        CL_EVENT_COMMAND_EXECUTION_STATUS => Info::of(&e.status()),
        CL_EVENT_REFERENCE_COUNT => Info::of(&e.base.ref_count()),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetEventInfo(
    event: cl_event,
    param_name: cl_event_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let e = from_handle::<Event>(event)?;
    event_info(&e, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clGetEventProfilingInfo(
    event: cl_event,
    param_name: cl_profiling_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let e = from_handle::<Event>(event)?;
    let stamp = match param_name {
        CL_PROFILING_COMMAND_QUEUED => Stamp::Queued,
        CL_PROFILING_COMMAND_SUBMIT => Stamp::Submit,
        CL_PROFILING_COMMAND_START => Stamp::Start,
        CL_PROFILING_COMMAND_END => Stamp::End,
        CL_PROFILING_COMMAND_COMPLETE => Stamp::Complete,
        _ => return Err(CL_INVALID_VALUE),
    };
    // "CL_PROFILING_INFO_NOT_AVAILABLE if the CL_QUEUE_PROFILING_ENABLE flag is not
    // set for the command-queue, if the execution status of the command identified
    // by event is not CL_COMPLETE or if event is a user event object."
    let t = e.profiling_time(stamp).ok_or(CL_PROFILING_INFO_NOT_AVAILABLE)?;
    Info::of(&t)?.write(param_value_size, param_value, param_value_size_ret)
}

retain_release!(Event, cl_event, clRetainEvent, clReleaseEvent);

#[cl_entry_point]
fn clCreateUserEvent(context: cl_context) -> CLResult<cl_event> {
    let c = from_handle::<Context>(context)?;
    Ok(into_handle(Event::new_user(c)))
}

#[cl_entry_point]
fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> CLResult<()> {
    let e = from_handle::<Event>(event)?;
    // "CL_INVALID_EVENT if event is not a valid user event object."
    if !e.is_user() {
        return Err(CL_INVALID_EVENT);
    }
    // "CL_INVALID_VALUE if the execution_status is not CL_COMPLETE or a negative
    // integer value."
    if execution_status > CL_COMPLETE {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_OPERATION if the execution_status for event has already been
    // changed by a previous call to clSetUserEventStatus."
    if e.status() != CL_SUBMITTED {
        return Err(CL_INVALID_OPERATION);
    }
    e.set_status(execution_status);
    Ok(())
}

#[cl_entry_point]
fn clSetEventCallback(
    event: cl_event,
    command_exec_callback_type: cl_int,
    pfn_notify: Option<EventCallback>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let e = from_handle::<Event>(event)?;
    // "CL_INVALID_VALUE if pfn_event_notify is NULL or if command_exec_callback_type
    // is not CL_SUBMITTED, CL_RUNNING, or CL_COMPLETE."
    let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
    if ![CL_SUBMITTED, CL_RUNNING, CL_COMPLETE].contains(&command_exec_callback_type) {
        return Err(CL_INVALID_VALUE);
    }
    e.add_callback(command_exec_callback_type, f, user_data as usize);
    Ok(())
}
