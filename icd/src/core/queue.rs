//! Command queues. Each queue owns one thread that runs its commands in submission
//! order (which also satisfies out-of-order queues: the spec permits, never requires,
//! reordering), so enqueueing returns at once and the host keeps going.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};
use std::thread;

use opencl_sys::*;

use super::context::Context;
use super::device::Device;
use super::event::Event;
use crate::api::icd::{Base, ClObject, Kind};
use crate::api::util::CLResult;

/// The body of a command, run on the queue's thread once its wait list is complete.
pub type Work = Box<dyn FnOnce() -> CLResult<()> + Send>;

struct Submission {
    event: Arc<Event>,
    wait_for: Vec<Arc<Event>>,
    work: Work,
}

#[repr(C)]
pub struct Queue {
    pub base: Base,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub properties: cl_command_queue_properties,
    /// The property list as given, for `CL_QUEUE_PROPERTIES_ARRAY`.
    pub properties_array: Vec<cl_queue_properties>,
    /// Closing the channel (dropping the queue) lets the thread drain and exit.
    commands: mpsc::Sender<Submission>,
}

impl ClObject for Queue {
    const KIND: Kind = Kind::Queue;
    const INVALID: cl_int = CL_INVALID_COMMAND_QUEUE;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Queue {
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
    ) -> CLResult<Arc<Queue>> {
        let (commands, pending) = mpsc::channel();
        thread::Builder::new()
            .name("ferrocl-queue".into())
            .spawn(move || run_commands(pending))
            .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        Ok(Arc::new(Queue { base: Base::new(), context, device, properties, properties_array, commands }))
    }

    /// Submits a command; it runs after every command enqueued before it and after
    /// every event in `wait_for`.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        work: Work,
    ) -> Arc<Event> {
        let event = Event::new_command(self, command_type);
        event.set_status(CL_SUBMITTED);
        let sub = Submission { event: event.clone(), wait_for, work };
        if let Err(mpsc::SendError(sub)) = self.commands.send(sub) {
            // The thread only goes away with the queue, which `self` keeps alive.
            sub.event.set_status(CL_OUT_OF_RESOURCES);
        }
        event
    }

    /// Blocks until every command enqueued so far has finished.
    pub fn finish(self: &Arc<Self>) {
        self.enqueue(CL_COMMAND_MARKER, Vec::new(), Box::new(|| Ok(()))).wait();
    }
}

fn run_commands(pending: mpsc::Receiver<Submission>) {
    for Submission { event, wait_for, work } in pending {
        // "If the execution of a command is terminated, the command-queue associated
        // with this terminated command, and the associated context (and all other
        // command-queue associated with this context) may no longer be available."
        // We keep the queue usable and fail only commands that depend on the failure.
        if wait_for.iter().map(|e| e.wait()).any(|s| s < 0) {
            event.set_status(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
            continue;
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
}
