//! Command queues. Each queue has a thread that runs its commands in submission order
//! (which also satisfies out-of-order queues: the spec permits, never requires,
//! reordering), so enqueueing returns at once and the host keeps going.
//!
//! A thread that waits for the queue (`clFinish`) does not sleep while commands are
//! pending: it runs them itself. Only one thread executes a queue's commands at a time
//! (the `busy` flag), in FIFO order, so whoever runs them, order is kept; the saving is
//! the hand-offs between threads, which dominate the latency of small commands.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use opencl_sys::*;
use parking_lot::{Condvar, Mutex};

use super::context::Context;
use super::device::Device;
use super::event::{CommandQueue, Event};
use super::object::CLResult;
use super::object::{cl_object, Base};
use crate::exec::spin::Spinner;

/// The body of a command, run once its wait list is complete.
pub(crate) type Work = Box<dyn FnOnce() -> CLResult<()> + Send>;

struct Submission {
    event: Arc<Event>,
    wait_for: Vec<Arc<Event>>,
    work: Work,
}

#[derive(Default)]
struct State {
    pending: VecDeque<Submission>,
    /// A thread is executing a command of this queue.
    busy: bool,
    /// The queue object is gone: the thread exits once nothing is pending.
    closed: bool,
}

#[derive(Default)]
struct Commands {
    state: Mutex<State>,
    changed: Condvar,
    /// Commands pending, readable without the lock by the queue's thread spinning.
    pending: AtomicUsize,
}

/// How long the queue's thread looks for the next command before it sleeps: waking a
/// sleeping thread costs the enqueuing one a system call (back-to-back small launches
/// on the 2-core machine ran at 250,000-280,000/s when every command woke it, at
/// 680,000-900,000/s when it was already awake).
const SPIN: Duration = Duration::from_micros(50);
/// After a spin found the core shared (other processes' threads want it), the queue's
/// thread sleeps at once for this long: a thread that yields to a busy process waits a
/// whole time slice for its core back, and the command it then takes waits with it.
const BACK_OFF: Duration = Duration::from_secs(1);

impl Commands {
    /// Takes the next command if no other thread is executing one.
    fn take(&self, st: &mut State) -> Option<Submission> {
        if st.busy {
            return None;
        }
        let s = st.pending.pop_front()?;
        self.pending.store(st.pending.len(), Ordering::Relaxed);
        st.busy = true;
        Some(s)
    }

    fn run(&self, s: Submission) {
        execute(s);
        let mut st = self.state.lock();
        st.busy = false;
        // With more pending, this thread takes the next command itself (every drainer
        // goes on while any is pending), so waking the others would only make them find
        // the queue busy again. They are woken when the queue falls idle, which is all
        // they wait for. (On the 16-core host, back-to-back launches: 142,000-159,000/s
        // before, 157,000-197,000 after, within that machine's noise.)
        if st.pending.is_empty() {
            drop(st);
            self.changed.notify_all();
        }
    }

    /// Runs pending commands on the calling thread (waiting while another thread runs
    /// one) until `done` holds. With a spinner, a wait for the next command first looks
    /// for it for up to `SPIN`.
    fn drain(&self, done: impl Fn(&State) -> bool, mut spin: Option<&mut Spinner>) {
        let mut st = self.state.lock();
        loop {
            if let Some(s) = self.take(&mut st) {
                drop(st);
                self.run(s);
                if let Some(spinner) = spin.as_deref_mut().filter(|s| s.may_spin()) {
                    spinner.spin(SPIN, || self.pending.load(Ordering::Relaxed) != 0);
                }
                st = self.state.lock();
            } else if done(&st) {
                return;
            } else {
                self.changed.wait(&mut st);
            }
        }
    }
}

#[repr(C)]
pub(crate) struct Queue {
    pub(crate) base: Base,
    pub(crate) context: Arc<Context>,
    pub(crate) device: Arc<Device>,
    pub(crate) properties: cl_command_queue_properties,
    /// The property list as given, for `CL_QUEUE_PROPERTIES_ARRAY`.
    pub(crate) properties_array: Vec<cl_queue_properties>,
    commands: Arc<Commands>,
}

cl_object!(Queue, CL_INVALID_COMMAND_QUEUE);

impl CommandQueue for Queue {
    fn context(&self) -> &Arc<Context> {
        &self.context
    }

    fn profiling(&self) -> bool {
        self.properties & CL_QUEUE_PROFILING_ENABLE != 0
    }
}

impl Queue {
    pub(crate) fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
    ) -> CLResult<Arc<Queue>> {
        let commands = Arc::new(Commands::default());
        let theirs = commands.clone();
        thread::Builder::new()
            .name("ferrocl-queue".into())
            .spawn(move || queue_thread(&theirs))
            .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        Ok(Arc::new(Queue { base: Base::new(), context, device, properties, properties_array, commands }))
    }

    /// Submits a command; it runs after every command enqueued before it and after
    /// every event in `wait_for`.
    pub(crate) fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        work: Work,
    ) -> Arc<Event> {
        let event = Event::new_command(self.clone(), command_type);
        event.set_status(CL_SUBMITTED);
        {
            let mut st = self.commands.state.lock();
            st.pending.push_back(Submission { event: event.clone(), wait_for, work });
            self.commands.pending.store(st.pending.len(), Ordering::Relaxed);
        }
        self.commands.changed.notify_all();
        event
    }

    /// Blocks until every command enqueued so far has finished, running pending
    /// commands on this thread rather than waiting for the queue's thread to.
    pub(crate) fn finish(&self) {
        self.commands.drain(|st| st.pending.is_empty() && !st.busy, None);
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.commands.state.lock().closed = true;
        self.commands.changed.notify_all();
    }
}

fn queue_thread(c: &Commands) {
    // On one core the enqueuing thread cannot run while this one looks.
    let mut spinner = (Device::get().host.cores > 1).then(|| Spinner::new(BACK_OFF));
    c.drain(|st| st.closed && st.pending.is_empty() && !st.busy, spinner.as_mut());
}

fn execute(Submission { event, wait_for, work }: Submission) {
    // "If the execution of a command is terminated, the command-queue associated
    // with this terminated command, and the associated context (and all other
    // command-queue associated with this context) may no longer be available."
    // We keep the queue usable and fail only commands that depend on the failure.
    if wait_for.iter().map(|e| e.wait()).any(|s| s < 0) {
        event.set_status(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        return;
    }
    drop(wait_for);
    event.set_status(CL_RUNNING);
    let status = match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(())) => CL_COMPLETE,
        Ok(Err(code)) => code,
        Err(_) => CL_OUT_OF_RESOURCES,
    };
    event.set_status(status);
}
