//! `cl_khr_command_buffer`: commands recorded once and replayed by one enqueue.
//!
//! A recorded command is the checked body of the command an enqueue would have made
//! (`Action`), so recording validates exactly as enqueueing does and a replay skips the
//! checks, the per-command events and the queue's hand-offs. A replay runs the commands
//! one after another, in recording order, on the thread that runs the enqueue: every
//! sync point a command may wait for names an earlier command, so that order satisfies
//! all of them, and the queue's own order keeps the replay after what was enqueued
//! before it.

use std::sync::{Arc, OnceLock};

use opencl_sys::*;
use parking_lot::Mutex;

use super::context::Context;
use super::object::{cl_object, Base, CLResult};
use super::queue::{Action, Queue, Work};

#[repr(C)]
pub(crate) struct CommandBuffer {
    pub(crate) base: Base,
    /// The queue the commands are recorded for (the extension's one).
    pub(crate) queue: Arc<Queue>,
    /// `CL_COMMAND_BUFFER_FLAGS_KHR`.
    pub(crate) flags: cl_command_buffer_flags_khr,
    /// `CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR`: the list as given.
    pub(crate) properties: Vec<cl_command_buffer_properties_khr>,
    /// Commands while recording.
    recording: Mutex<Vec<Action>>,
    /// The commands once finalized, shared by every replay in flight.
    executable: OnceLock<Arc<[Action]>>,
}

cl_object!(CommandBuffer, CL_INVALID_COMMAND_BUFFER_KHR);

impl CommandBuffer {
    pub(crate) fn new(
        queue: Arc<Queue>,
        flags: cl_command_buffer_flags_khr,
        properties: Vec<cl_command_buffer_properties_khr>,
    ) -> CommandBuffer {
        CommandBuffer {
            base: Base::new(),
            queue,
            flags,
            properties,
            recording: Mutex::new(Vec::new()),
            executable: OnceLock::new(),
        }
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.queue.context
    }

    pub(crate) fn finalized(&self) -> bool {
        self.executable.get().is_some()
    }

    /// Appends a command after checking its sync points: each must name a command
    /// recorded before ("CL_INVALID_SYNC_POINT_WAIT_LIST_KHR if ... synchronization-point
    /// objects in sync_point_wait_list are not valid"). Returns the new command's sync
    /// point. `CL_INVALID_OPERATION` once finalized.
    pub(crate) fn record(&self, waits: &[cl_sync_point_khr], command: Action) -> CLResult<cl_sync_point_khr> {
        let mut commands = self.recording.lock();
        if self.finalized() {
            return Err(CL_INVALID_OPERATION);
        }
        if waits.iter().any(|&s| s == 0 || s as usize > commands.len()) {
            return Err(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR);
        }
        let point = cl_sync_point_khr::try_from(commands.len() + 1).map_err(|_| CL_OUT_OF_RESOURCES)?;
        commands.push(command);
        Ok(point)
    }

    /// `clFinalizeCommandBufferKHR`: "CL_INVALID_OPERATION if command_buffer is not in
    /// the Recording state".
    pub(crate) fn finalize(&self) -> CLResult<()> {
        let mut commands = self.recording.lock();
        if self.finalized() {
            return Err(CL_INVALID_OPERATION);
        }
        let all: Arc<[Action]> = std::mem::take(&mut *commands).into();
        self.executable.set(all).map_err(|_| CL_INVALID_OPERATION)
    }

    /// The body of one replay: every command in order; the first that fails ends the
    /// replay with its status.
    pub(crate) fn replay(&self) -> CLResult<Work> {
        let commands = self.executable.get().ok_or(CL_INVALID_OPERATION)?.clone();
        Ok(Box::new(move || commands.iter().try_for_each(|run| run())))
    }

    /// `CL_COMMAND_BUFFER_STATE_KHR`.
    pub(crate) fn state(&self) -> cl_command_buffer_state_khr {
        match self.finalized() {
            true => CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
            false => CL_COMMAND_BUFFER_STATE_RECORDING_KHR,
        }
    }
}
