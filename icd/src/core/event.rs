//! Events: the status of a command (or a user event) and everything waiting on it.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use opencl_sys::*;
use parking_lot::{Condvar, Mutex};

use super::context::Context;
use super::object::{cl_object, Base};

pub(crate) type EventCallback = unsafe extern "C" fn(cl_event, cl_int, *mut c_void);

/// Nanoseconds on the clock every profiling time and the device timer use.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-parameter; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Indices into [`Event::times`], in `CL_PROFILING_COMMAND_*` order.
#[derive(Clone, Copy)]
pub(crate) enum Stamp {
    Queued = 0,
    Submit = 1,
    Start = 2,
    End = 3,
    Complete = 4,
}

struct State {
    status: cl_int,
    callbacks: Vec<(cl_int, EventCallback, usize)>,
    /// The driver's own waiters for completion (a queue whose next command waits for
    /// this event), run when it completes or fails.
    on_done: Vec<Box<dyn FnOnce() + Send>>,
}

/// What an event knows of the command queue that issued it. The queue builds on events
/// (it creates, orders and completes them), so an event sees its queue only through
/// this, and the two modules do not depend on each other.
pub(crate) trait CommandQueue: Send + Sync {
    fn context(&self) -> &Arc<Context>;
    /// `CL_QUEUE_PROFILING_ENABLE`: whether the event answers profiling queries.
    fn profiling(&self) -> bool;
}

#[repr(C)]
pub(crate) struct Event {
    pub(crate) base: Base,
    pub(crate) context: Arc<Context>,
    /// `None` for user events.
    pub(crate) queue: Option<Arc<dyn CommandQueue>>,
    pub(crate) command_type: cl_command_type,
    state: Mutex<State>,
    changed: Condvar,
    /// The queue profiles: only then are `times` taken (reading the clock five times
    /// a command was 5% of back-to-back small launches).
    profiled: bool,
    times: [AtomicU64; 5],
}

cl_object!(Event, CL_INVALID_EVENT);

impl Event {
    fn new(
        context: Arc<Context>,
        queue: Option<Arc<dyn CommandQueue>>,
        command_type: cl_command_type,
        status: cl_int,
    ) -> Arc<Event> {
        let profiled = queue.as_ref().is_some_and(|q| q.profiling());
        let e = Event {
            base: Base::new(),
            context,
            queue,
            profiled,
            command_type,
            state: Mutex::new(State { status, callbacks: Vec::new(), on_done: Vec::new() }),
            changed: Condvar::new(),
            times: Default::default(),
        };
        e.stamp(Stamp::Queued);
        Arc::new(e)
    }

    /// "The execution status of the user event object created is set to CL_SUBMITTED."
    pub(crate) fn new_user(context: Arc<Context>) -> Arc<Event> {
        Event::new(context, None, CL_COMMAND_USER, CL_SUBMITTED)
    }

    pub(crate) fn new_command(queue: Arc<dyn CommandQueue>, command_type: cl_command_type) -> Arc<Event> {
        Event::new(queue.context().clone(), Some(queue), command_type, CL_QUEUED)
    }

    pub(crate) fn is_user(&self) -> bool {
        self.queue.is_none()
    }

    pub(crate) fn status(&self) -> cl_int {
        self.state.lock().status
    }

    fn stamp(&self, which: Stamp) {
        if self.profiled {
            self.times[which as usize].store(now_ns(), Ordering::Release);
        }
    }

    /// A profiling time, once the command has completed and only if its queue profiles.
    pub(crate) fn profiling_time(&self, which: Stamp) -> Option<u64> {
        if !self.profiled || self.status() != CL_COMPLETE {
            return None;
        }
        Some(self.times[which as usize].load(Ordering::Acquire))
    }

    /// Moves the event to `status` (a later state or an error) and runs the callbacks
    /// whose trigger state has been reached.
    pub(crate) fn set_status(self: &Arc<Self>, status: cl_int) {
        match status {
            CL_SUBMITTED => self.stamp(Stamp::Submit),
            CL_RUNNING => self.stamp(Stamp::Start),
            _ => {
                self.stamp(Stamp::End);
                self.stamp(Stamp::Complete);
            }
        }
        let (due, done) = {
            let mut st = self.state.lock();
            st.status = status;
            let (due, keep) = st.callbacks.drain(..).partition(|&(on, _, _)| status <= on);
            st.callbacks = keep;
            let done = if status <= CL_COMPLETE { std::mem::take(&mut st.on_done) } else { Vec::new() };
            (due, done)
        };
        self.changed.notify_all();
        self.run_callbacks(due, status);
        done.into_iter().for_each(|f| f());
    }

    /// Runs `f` once the event has completed or failed: now, if it has.
    pub(crate) fn on_done(&self, f: Box<dyn FnOnce() + Send>) {
        let mut st = self.state.lock();
        if st.status > CL_COMPLETE {
            st.on_done.push(f);
        } else {
            drop(st);
            f();
        }
    }

    /// `clSetEventCallback`: runs now if the trigger state has already been reached.
    pub(crate) fn add_callback(self: &Arc<Self>, on: cl_int, f: EventCallback, user_data: usize) {
        let now = {
            let mut st = self.state.lock();
            if st.status <= on {
                Some(st.status)
            } else {
                st.callbacks.push((on, f, user_data));
                None
            }
        };
        if let Some(status) = now {
            self.run_callbacks(vec![(on, f, user_data)], status);
        }
    }

    fn run_callbacks(self: &Arc<Self>, due: Vec<(cl_int, EventCallback, usize)>, status: cl_int) {
        let handle = Arc::as_ptr(self) as cl_event;
        // Registration order is the order the application expects them in.
        for (on, f, user_data) in due {
            // "event_command_status ... is the execution status of the command for which
            // the callback is invoked": the trigger state, or the error code.
            let reported = if status < 0 { status } else { on };
            // SAFETY: the application registered `f` for exactly this call.
            unsafe { f(handle, reported, user_data as *mut c_void) };
        }
    }

    /// Blocks until the event is complete or failed; returns its final status.
    pub(crate) fn wait(&self) -> cl_int {
        let mut st = self.state.lock();
        while st.status > CL_COMPLETE {
            self.changed.wait(&mut st);
        }
        st.status
    }
}
