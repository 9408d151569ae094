//! Command queues. A queue's commands run in submission order (which also satisfies
//! out-of-order queues: the spec permits, never requires, reordering), on a small pool of
//! dispatcher threads that every queue of the process shares, so enqueueing returns at
//! once and the host keeps going. A queue whose next command waits for an event that
//! has not completed holds no thread: the event's completion puts it back on the ready
//! list. (A thread per queue made 4,001 threads of 4,000 queues.)
//!
//! A thread that waits for the queue (`clFinish`) does not sleep while commands are
//! pending: it runs them itself. Only one thread executes a queue's commands at a time
//! (the `busy` flag), in FIFO order, so whoever runs them, order is kept; the saving is
//! the hand-offs between threads, which dominate the latency of small commands.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::thread;
use std::time::Duration;

use opencl_sys::*;
use parking_lot::{Condvar, Mutex, MutexGuard};

use super::context::Context;
use super::device::Device;
use super::event::{CommandQueue, Event};
use super::object::CLResult;
use super::object::{cl_object, Base};
use crate::exec::spin::Spinner;

/// What `cl_khr_priority_hints` and `cl_khr_throttle_hints` ask of a queue.
#[derive(Clone, Copy, Default)]
pub(crate) struct Hints {
    /// `CL_QUEUE_PRIORITY_HIGH_KHR`.
    pub(crate) urgent: bool,
    /// `CL_QUEUE_THROTTLE_LOW_KHR`.
    pub(crate) throttled: bool,
}

/// The body of a command, run once its wait list is complete.
pub(crate) type Work = Box<dyn FnOnce() -> CLResult<()> + Send>;

/// The body of a command that can run again: what a command buffer records
/// (`command_buffer`) and a plain enqueue runs once (`once`).
pub(crate) type Action = Box<dyn Fn() -> CLResult<()> + Send + Sync>;

/// An action as the body of one enqueued command.
pub(crate) fn once(action: Action) -> Work {
    Box::new(action)
}

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
    /// The queue is on the ready list (or a dispatcher has just taken it from there).
    scheduled: bool,
    /// Its next command waits for an event, whose completion schedules it again.
    blocked: bool,
}

#[derive(Default)]
struct Commands {
    state: Mutex<State>,
    changed: Condvar,
    /// `cl_khr_priority_hints`' high priority: the queue goes to the front of the ready
    /// list, so free dispatchers take its commands before other queues'.
    urgent: bool,
}

/// How long a dispatcher looks for the next command before it sleeps: waking a
/// sleeping thread costs the enqueuing one a system call (back-to-back small launches
/// on the 2-core machine ran at 250,000-280,000/s when every command woke it, at
/// 680,000-900,000/s when it was already awake).
const SPIN: Duration = Duration::from_micros(50);
/// After a spin found the core shared (other processes' threads want it), the
/// dispatcher sleeps at once for this long: a thread that yields to a busy process waits
/// a whole time slice for its core back, and the command it then takes waits with it.
const BACK_OFF: Duration = Duration::from_secs(1);

/// What a queue offers a thread looking for work.
enum Next {
    Run(Submission),
    /// The next command waits for this event.
    Waits(Arc<Event>),
    Nothing,
}

impl Commands {
    /// The next command, if no other thread is executing one and its wait list is
    /// complete (a failed event counts: the command then fails).
    fn next(&self, st: &mut State) -> Next {
        if st.busy {
            return Next::Nothing;
        }
        let Some(head) = st.pending.front() else { return Next::Nothing };
        if let Some(e) = head.wait_for.iter().find(|e| e.status() > CL_COMPLETE) {
            return Next::Waits(e.clone());
        }
        st.busy = true;
        st.pending.pop_front().map_or(Next::Nothing, Next::Run)
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

    /// Puts the queue on the ready list unless it is there, running or blocked.
    fn schedule(self: &Arc<Self>, st: &mut State) -> bool {
        let ready = !st.pending.is_empty() && !st.busy && !st.scheduled && !st.blocked;
        st.scheduled |= ready;
        ready
    }

    /// Runs the queue's commands on this thread while the next one is ready; returns
    /// the state, locked, and why it stopped (`Waits` or `Nothing`).
    fn run_ready<'a>(&'a self, mut st: MutexGuard<'a, State>) -> (MutexGuard<'a, State>, Next) {
        loop {
            match self.next(&mut st) {
                Next::Run(s) => {
                    drop(st);
                    self.run(s);
                    st = self.state.lock();
                }
                stop => return (st, stop),
            }
        }
    }

    /// A dispatcher's turn at the queue: runs its commands while the next one is ready;
    /// one that waits for an event leaves the queue blocked until the event completes.
    fn serve(self: &Arc<Self>) {
        let mut st = self.state.lock();
        st.scheduled = false;
        if let (mut st, Next::Waits(e)) = self.run_ready(st) {
            st.blocked = true;
            drop(st);
            let me = self.clone();
            e.on_done(Box::new(move || me.unblock()));
        }
    }

    fn unblock(self: &Arc<Self>) {
        let mut st = self.state.lock();
        st.blocked = false;
        if self.schedule(&mut st) {
            drop(st);
            DISPATCH.push(self.clone());
        }
    }

    /// Runs pending commands on the calling thread (waiting while another thread runs
    /// one, or for the events the next one waits for) until nothing is pending.
    fn finish(&self) {
        let mut st = self.state.lock();
        loop {
            st = match self.run_ready(st) {
                (st, Next::Waits(e)) => {
                    drop(st);
                    e.wait();
                    self.state.lock()
                }
                (st, _) if st.pending.is_empty() && !st.busy => return,
                (mut st, _) => {
                    self.changed.wait(&mut st);
                    st
                }
            };
        }
    }
}

impl super::context::Drain for Commands {
    fn drain(&self) {
        self.finish();
    }
}

/// The dispatchers every queue shares, and the queues ready for one.
struct Dispatch {
    ready: Mutex<VecDeque<Arc<Commands>>>,
    /// `ready`'s length, read without the lock by spinning dispatchers.
    waiting: AtomicUsize,
    wake: Condvar,
    /// Dispatchers started, and those not running a command.
    threads: AtomicUsize,
    idle: AtomicUsize,
}

static DISPATCH: LazyLock<Dispatch> = LazyLock::new(|| Dispatch {
    ready: Mutex::new(VecDeque::new()),
    waiting: AtomicUsize::new(0),
    wake: Condvar::new(),
    threads: AtomicUsize::new(0),
    idle: AtomicUsize::new(0),
});

/// At most this many dispatchers: enough that every core can run a command of another
/// queue while some wait in long ones (a queue's command holds its dispatcher).
fn max_dispatchers() -> usize {
    (Device::get().host.cores as usize * 2).max(4)
}

impl Dispatch {
    fn push(&self, c: Arc<Commands>) {
        let waiting = {
            let mut ready = self.ready.lock();
            match c.urgent {
                true => ready.push_front(c),
                false => ready.push_back(c),
            }
            self.waiting.store(ready.len(), Ordering::Relaxed);
            ready.len()
        };
        if self.idle.load(Ordering::Relaxed) >= waiting {
            self.wake.notify_one();
            return;
        }
        // More queues ready than dispatchers free (a long kernel holds its
        // dispatcher): one more, up to the bound.
        let n = self.threads.fetch_add(1, Ordering::Relaxed);
        if n >= max_dispatchers() {
            self.threads.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        self.idle.fetch_add(1, Ordering::Relaxed);
        let started = thread::Builder::new().name("ferrocl-queue".into()).spawn(|| DISPATCH.dispatcher());
        if started.is_err() {
            self.idle.fetch_sub(1, Ordering::Relaxed);
            self.threads.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn dispatcher(&self) {
        // On one core the enqueuing thread cannot run while this one looks.
        let mut spinner = (Device::get().host.cores > 1).then(|| Spinner::new(BACK_OFF));
        loop {
            if let Some(s) = spinner.as_mut().filter(|s| s.may_spin()) {
                s.spin(SPIN, || self.waiting.load(Ordering::Relaxed) != 0);
            }
            let c = {
                let mut ready = self.ready.lock();
                while ready.is_empty() {
                    self.wake.wait(&mut ready);
                }
                let c = ready.pop_front();
                self.waiting.store(ready.len(), Ordering::Relaxed);
                c
            };
            if let Some(c) = c {
                self.idle.fetch_sub(1, Ordering::Relaxed);
                c.serve();
                self.idle.fetch_add(1, Ordering::Relaxed);
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
    /// `cl_khr_throttle_hints`' low throttle: launches take half the device's workers.
    pub(crate) throttled: bool,
    /// A device queue (`CL_QUEUE_ON_DEVICE`): its `CL_QUEUE_SIZE` in bytes. Only kernel
    /// code enqueues to it (`super::device_enqueue`).
    pub(crate) on_device: Option<u32>,
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
        hints: Hints,
    ) -> CLResult<Arc<Queue>> {
        let commands = Arc::new(Commands { urgent: hints.urgent, ..Default::default() });
        context.add_queue(Arc::downgrade(&commands) as std::sync::Weak<dyn super::context::Drain>);
        let throttled = hints.throttled;
        let on_device = None;
        Ok(Arc::new(Queue {
            base: Base::new(),
            context,
            device,
            properties,
            properties_array,
            throttled,
            on_device,
            commands,
        }))
    }

    /// A device queue of `size` bytes (`CL_QUEUE_ON_DEVICE`), the device's default one
    /// where `default` (`CL_QUEUE_ON_DEVICE_DEFAULT`).
    pub(crate) fn new_on_device(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
        size: u32,
    ) -> CLResult<Arc<Queue>> {
        let commands = Arc::new(Commands::default());
        let q = Arc::new(Queue {
            base: Base::new(),
            context: context.clone(),
            device,
            properties,
            properties_array,
            throttled: false,
            on_device: Some(size),
            commands,
        });
        let alive = Arc::downgrade(&q) as std::sync::Weak<dyn std::any::Any + Send + Sync>;
        let default = properties & CL_QUEUE_ON_DEVICE_DEFAULT != 0;
        let device = Arc::as_ptr(&q.device) as usize;
        context.device_queues.add(Arc::as_ptr(&q) as usize, device, size, alive, default);
        Ok(q)
    }

    /// The workers this queue's launches run on: the device's, or the first half of
    /// them on a low-throttle queue (at least one).
    pub(crate) fn workers(&self) -> Option<crate::exec::pool::Workers> {
        if !self.throttled {
            return self.device.workers();
        }
        let all = self.device.worker_list();
        Some(all[..all.len().div_ceil(2)].into())
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
        let ready = {
            let mut st = self.commands.state.lock();
            st.pending.push_back(Submission { event: event.clone(), wait_for, work });
            self.commands.schedule(&mut st)
        };
        if ready {
            DISPATCH.push(self.commands.clone());
        }
        event
    }

    /// Blocks until every command enqueued so far has finished, running pending
    /// commands on this thread rather than waiting for the queue's thread to.
    pub(crate) fn finish(&self) {
        self.commands.finish();
    }
}

/// Runs a command whose wait list is complete.
fn execute(Submission { event, wait_for, work }: Submission) {
    // "If the execution of a command is terminated, the command-queue associated
    // with this terminated command, and the associated context (and all other
    // command-queue associated with this context) may no longer be available."
    // We keep the queue usable and fail only commands that depend on the failure.
    if wait_for.iter().any(|e| e.status() < 0) {
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
