//! Events: user events gating commands, failure propagation, callbacks, profiling,
//! markers and barriers, and bad input.

use std::sync::Mutex;

use crate::common::*;

fn status(e: cl_event) -> cl_int {
    event_info(e, CL_EVENT_COMMAND_EXECUTION_STATUS)
}

#[test]
fn user_event_gates_a_command() {
    let env = Env::new();
    let (user, e) = with_err(|e| cl!(clCreateUserEvent(env.context, e)));
    ok!(e);
    assert_eq!(status(user), CL_SUBMITTED);
    assert_eq!(event_info::<cl_command_type>(user, CL_EVENT_COMMAND_TYPE), CL_COMMAND_USER);
    assert!(event_info::<cl_command_queue>(user, CL_EVENT_COMMAND_QUEUE).is_null());
    assert_eq!(event_info::<cl_context>(user, CL_EVENT_CONTEXT), env.context);
    let m = env.buffer(0, 16, null_mut());
    let data = pattern(16, 8);
    let mut write = null_mut();
    ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_FALSE, 0, 16, data.as_ptr().cast(), 1, &user, &mut write)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(status(write) > CL_RUNNING, "the write must wait for the user event");
    ok!(cl!(clSetUserEventStatus(user, CL_COMPLETE)));
    ok!(cl!(clWaitForEvents(1, &write)));
    assert_eq!(status(write), CL_COMPLETE);
    assert_eq!(env.read(m, 16), data);
    assert_eq!(event_info::<cl_command_queue>(write, CL_EVENT_COMMAND_QUEUE), env.queue);
    err!(CL_INVALID_OPERATION, cl!(clSetUserEventStatus(user, CL_COMPLETE)));
    err!(CL_INVALID_EVENT, cl!(clSetUserEventStatus(write, CL_COMPLETE)));
    for ev in [user, write] {
        ok!(cl!(clReleaseEvent(ev)));
    }
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn failed_user_event_fails_dependents() {
    let env = Env::new();
    let (user, _) = with_err(|e| cl!(clCreateUserEvent(env.context, e)));
    err!(CL_INVALID_VALUE, cl!(clSetUserEventStatus(user, CL_RUNNING)));
    let m = env.buffer(0, 16, null_mut());
    let data = pattern(16, 1);
    let mut write = null_mut();
    ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_FALSE, 0, 16, data.as_ptr().cast(), 1, &user, &mut write)));
    ok!(cl!(clSetUserEventStatus(user, -1234)));
    err!(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, cl!(clWaitForEvents(1, &write)));
    assert!(status(write) < 0);
    assert_eq!(status(user), -1234);
    assert_eq!(env.read(m, 16), vec![0; 16], "the failed write moved nothing");
    // A blocking command on a failed event reports it.
    let mut out = [0u8; 16];
    err!(
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
        cl!(clEnqueueReadBuffer(env.queue, m, CL_TRUE, 0, 16, out.as_mut_ptr().cast(), 1, &user, null_mut()))
    );
    // The queue keeps working for commands that do not depend on the failure.
    assert_eq!(env.read(m, 16), vec![0; 16]);
    for ev in [user, write] {
        ok!(cl!(clReleaseEvent(ev)));
    }
    ok!(cl!(clReleaseMemObject(m)));
}

static SEEN: Mutex<Vec<(usize, cl_int)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_status(_e: cl_event, status: cl_int, user_data: *mut c_void) {
    SEEN.lock().unwrap().push((user_data as usize, status));
}

#[test]
fn callbacks_fire_for_each_state() {
    let env = Env::new();
    let (user, _) = with_err(|e| cl!(clCreateUserEvent(env.context, e)));
    let mut marker = null_mut();
    ok!(cl!(clEnqueueMarkerWithWaitList(env.queue, 1, &user, &mut marker)));
    for (tag, on) in [(100usize, CL_SUBMITTED), (101, CL_RUNNING), (102, CL_COMPLETE)] {
        ok!(cl!(clSetEventCallback(marker, on, Some(on_status), tag as *mut c_void)));
    }
    ok!(cl!(clSetEventCallback(user, CL_COMPLETE, Some(on_status), 200 as *mut c_void)));
    ok!(cl!(clSetUserEventStatus(user, CL_COMPLETE)));
    ok!(cl!(clWaitForEvents(1, &marker)));
    // Callbacks run on the queue's thread right after the status changes.
    for _ in 0..1000 {
        if SEEN.lock().unwrap().len() >= 4 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut seen = SEEN.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, vec![(100, CL_SUBMITTED), (101, CL_RUNNING), (102, CL_COMPLETE), (200, CL_COMPLETE)]);
    // Registering on a completed event calls back at once.
    ok!(cl!(clSetEventCallback(marker, CL_COMPLETE, Some(on_status), 300 as *mut c_void)));
    assert!(SEEN.lock().unwrap().contains(&(300, CL_COMPLETE)));
    err!(CL_INVALID_VALUE, cl!(clSetEventCallback(marker, CL_QUEUED, Some(on_status), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clSetEventCallback(marker, CL_COMPLETE, None, null_mut())));
    for ev in [user, marker] {
        ok!(cl!(clReleaseEvent(ev)));
    }
}

#[test]
fn profiling_times_are_ordered() {
    let env = Env::with_queue(CL_QUEUE_PROFILING_ENABLE);
    let m = env.buffer(0, 1 << 22, null_mut());
    let p = [7u8; 4];
    let mut ev = null_mut();
    ok!(cl!(clEnqueueFillBuffer(env.queue, m, p.as_ptr().cast(), 4, 0, 1 << 22, 0, null(), &mut ev)));
    ok!(cl!(clWaitForEvents(1, &ev)));
    let t = |which| info::<cl_ulong>(|s, v, r| cl!(clGetEventProfilingInfo(ev, which, s, v, r)));
    let times = [
        t(CL_PROFILING_COMMAND_QUEUED),
        t(CL_PROFILING_COMMAND_SUBMIT),
        t(CL_PROFILING_COMMAND_START),
        t(CL_PROFILING_COMMAND_END),
        t(CL_PROFILING_COMMAND_COMPLETE),
    ];
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(times[3] > times[2], "a 4 MiB fill takes measurable time");
    err!(CL_INVALID_VALUE, cl!(clGetEventProfilingInfo(ev, 0xdead, 8, null_mut(), null_mut())));
    ok!(cl!(clReleaseEvent(ev)));

    // Not available without profiling, nor for user events.
    let plain = Env::new();
    let mut ev = null_mut();
    ok!(cl!(clEnqueueMarkerWithWaitList(plain.queue, 0, null(), &mut ev)));
    ok!(cl!(clWaitForEvents(1, &ev)));
    let mut v = 0u64;
    let vp = (&mut v as *mut u64).cast();
    err!(
        CL_PROFILING_INFO_NOT_AVAILABLE,
        cl!(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, 8, vp, null_mut()))
    );
    let (user, _) = with_err(|e| cl!(clCreateUserEvent(plain.context, e)));
    ok!(cl!(clSetUserEventStatus(user, CL_COMPLETE)));
    err!(
        CL_PROFILING_INFO_NOT_AVAILABLE,
        cl!(clGetEventProfilingInfo(user, CL_PROFILING_COMMAND_END, 8, vp, null_mut()))
    );
    for e in [ev, user] {
        ok!(cl!(clReleaseEvent(e)));
    }
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn markers_barriers_and_waits() {
    let env = Env::with_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let (user, _) = with_err(|e| cl!(clCreateUserEvent(env.context, e)));
    let mut barrier = null_mut();
    ok!(cl!(clEnqueueBarrierWithWaitList(env.queue, 1, &user, &mut barrier)));
    assert_eq!(event_info::<cl_command_type>(barrier, CL_EVENT_COMMAND_TYPE), CL_COMMAND_BARRIER);
    let mut marker = null_mut();
    ok!(cl!(clEnqueueMarker(env.queue, &mut marker)));
    assert_eq!(event_info::<cl_command_type>(marker, CL_EVENT_COMMAND_TYPE), CL_COMMAND_MARKER);
    ok!(cl!(clEnqueueWaitForEvents(env.queue, 1, &user)));
    ok!(cl!(clEnqueueBarrier(env.queue)));
    std::thread::sleep(std::time::Duration::from_millis(10));
    assert!(status(marker) > CL_COMPLETE, "the marker follows the barrier, which waits for the user event");
    ok!(cl!(clSetUserEventStatus(user, CL_COMPLETE)));
    ok!(cl!(clFinish(env.queue)));
    assert_eq!(status(marker), CL_COMPLETE);
    assert_eq!(event_info::<cl_uint>(marker, CL_EVENT_REFERENCE_COUNT), 1);
    ok!(cl!(clRetainEvent(marker)));
    assert_eq!(event_info::<cl_uint>(marker, CL_EVENT_REFERENCE_COUNT), 2);
    ok!(cl!(clReleaseEvent(marker)));
    err!(CL_INVALID_VALUE, cl!(clEnqueueMarker(env.queue, null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueWaitForEvents(env.queue, 0, null())));
    err!(CL_INVALID_VALUE, cl!(clWaitForEvents(0, null())));
    err!(CL_INVALID_VALUE, cl!(clWaitForEvents(1, null())));
    let not_event = env.context as cl_event;
    err!(CL_INVALID_EVENT, cl!(clWaitForEvents(1, &not_event)));
    err!(CL_INVALID_EVENT, cl!(clGetEventInfo(not_event, CL_EVENT_CONTEXT, 0, null_mut(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clGetEventInfo(marker, 0xdead, 0, null_mut(), null_mut())));
    // Events of two contexts in one wait.
    let other = Env::new();
    let (u2, _) = with_err(|e| cl!(clCreateUserEvent(other.context, e)));
    ok!(cl!(clSetUserEventStatus(u2, CL_COMPLETE)));
    let mixed = [marker, u2];
    err!(CL_INVALID_CONTEXT, cl!(clWaitForEvents(2, mixed.as_ptr())));
    for e in [user, barrier, marker, u2] {
        ok!(cl!(clReleaseEvent(e)));
    }
}
