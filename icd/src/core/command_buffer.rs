//! `cl_khr_command_buffer`: commands recorded once and replayed by one enqueue, and
//! `cl_khr_command_buffer_mutable_dispatch`'s kernel commands updated between replays.
//!
//! A recorded command is the checked body of the command an enqueue would have made
//! (`Action`), so recording validates exactly as enqueueing does and a replay skips the
//! checks, the per-command events and the queue's hand-offs. A kernel command is a
//! `Dispatch`: the launch built from the arguments and geometry it has now, which an
//! update replaces. A replay runs the commands one after another, in recording order,
//! on the thread that runs the enqueue: every sync point a command may wait for names
//! an earlier command, so that order satisfies all of them, and the queue's own order
//! keeps the replay after what was enqueued before it. Each replay takes the launches
//! its kernels have when it is enqueued and runs fresh copies of them
//! (`Launch::again`), so replays in flight at once (simultaneous use) and later
//! updates do not reach each other.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, OnceLock};

use opencl_sys::*;
use parking_lot::Mutex;

use super::context::Context;
use super::kernel::{Kernel, NdRange};
use super::object::{cl_object, Base, CLResult};
use super::queue::{Action, Queue, Work};
use crate::exec::ndrange::Launch;

/// One recorded command. A command other than a kernel runs the same whatever queue it
/// was recorded to (every queue's device shares the host's memory), so a remapped copy
/// shares it.
#[derive(Clone)]
pub(crate) enum Recorded {
    Fixed(Arc<Action>),
    Dispatch(Arc<Dispatch>),
}

/// A kernel command: `clCommandNDRangeKernelKHR`'s, whose handle
/// (`cl_mutable_command_khr`) is the address of this object.
pub(crate) struct Dispatch {
    /// The command buffer's address (its handle), which the command belongs to.
    pub(crate) buffer: usize,
    pub(crate) queue: Arc<Queue>,
    /// The kernel the application recorded, for `CL_MUTABLE_DISPATCH_KERNEL_KHR`.
    pub(crate) kernel: Arc<Kernel>,
    /// `CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR`.
    pub(crate) fields: cl_mutable_dispatch_fields_khr,
    /// `CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR`: the list as given.
    pub(crate) properties: Vec<cl_command_properties_khr>,
    pub(crate) state: Mutex<DispatchState>,
}

/// What a kernel command launches now.
#[derive(Clone)]
pub(crate) struct DispatchState {
    /// A copy of the kernel holding the command's arguments: updates set them here,
    /// never on the application's kernel.
    pub(crate) args: Arc<Kernel>,
    pub(crate) range: NdRange,
    /// `None` while arguments are missing (recorded before they were set, which a
    /// mutable command buffer allows): the command buffer cannot be enqueued.
    pub(crate) launch: Option<Arc<Launch>>,
}

impl Dispatch {
    /// The launch of `state`'s kernel copy over its range; `None` when an argument is
    /// not set and `deferrable` says that is allowed.
    pub(crate) fn build(queue: &Queue, state: &DispatchState, deferrable: bool) -> CLResult<Option<Arc<Launch>>> {
        match super::device_enqueue::launch(&state.args, &queue.device, state.range, queue.workers()) {
            Ok(launch) => Ok(Some(launch)),
            Err(CL_INVALID_KERNEL_ARGS) if deferrable && state.args.missing_args() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The kernel commands of live command buffers by handle, for
/// `clGetMutableCommandInfoKHR`, which is given no command buffer to look in.
static DISPATCHES: LazyLock<Mutex<HashMap<usize, Arc<Dispatch>>>> = LazyLock::new(Default::default);

/// The kernel command with handle `handle`.
pub(crate) fn dispatch(handle: usize) -> Option<Arc<Dispatch>> {
    DISPATCHES.lock().get(&handle).cloned()
}

/// A kernel command's handle and its remapped copy's.
pub(crate) type HandlePair = (usize, usize);

#[repr(C)]
pub(crate) struct CommandBuffer {
    pub(crate) base: Base,
    /// The queues commands are recorded to (`cl_khr_command_buffer_multi_device`: one or
    /// more, of the context's devices and sub-devices); the first runs the replay.
    pub(crate) queues: Vec<Arc<Queue>>,
    /// `CL_COMMAND_BUFFER_FLAGS_KHR`.
    pub(crate) flags: cl_command_buffer_flags_khr,
    /// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR`.
    pub(crate) asserts: cl_bitfield,
    /// `CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR`: the list as given.
    pub(crate) properties: Vec<cl_command_buffer_properties_khr>,
    /// Commands while recording.
    recording: Mutex<Vec<Recorded>>,
    /// The commands once finalized, shared by every replay in flight.
    executable: OnceLock<Arc<[Recorded]>>,
    /// Updates of kernel commands take this, so that a replay sees all of one or none.
    updating: Mutex<()>,
}

cl_object!(CommandBuffer, CL_INVALID_COMMAND_BUFFER_KHR;
    /// Its kernel commands' handles end with it.
    fn released(&self) {
        let me = self as *const CommandBuffer as usize;
        DISPATCHES.lock().retain(|_, d| d.buffer != me);
    }
);

impl CommandBuffer {
    pub(crate) fn new(
        queues: Vec<Arc<Queue>>,
        flags: cl_command_buffer_flags_khr,
        asserts: cl_bitfield,
        properties: Vec<cl_command_buffer_properties_khr>,
    ) -> CommandBuffer {
        CommandBuffer {
            base: Base::new(),
            queues,
            flags,
            asserts,
            properties,
            recording: Mutex::new(Vec::new()),
            executable: OnceLock::new(),
            updating: Mutex::new(()),
        }
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.queues[0].context
    }

    /// `clRemapCommandBufferKHR`: a deep copy whose commands target `queues` (the queue
    /// at each command's queue's index in this buffer, or by `map` for automatic
    /// remapping), in the same state; `map_handles` gets each kernel command's
    /// handle and its copy's. Kernel commands are rebuilt for their new queue's device
    /// and workers.
    pub(crate) fn remap(
        self: &Arc<Self>,
        queues: Vec<Arc<Queue>>,
        map: impl Fn(usize) -> usize,
    ) -> CLResult<(Arc<CommandBuffer>, Vec<HandlePair>)> {
        let _whole = self.updating.lock();
        let copy = Arc::new(CommandBuffer::new(queues, self.flags, self.asserts, self.properties.clone()));
        let recorded: Vec<Recorded> = match self.executable.get() {
            Some(all) => all.to_vec(),
            None => self.recording.lock().clone(),
        };
        let mut handles = Vec::new();
        let mut commands = Vec::with_capacity(recorded.len());
        for c in recorded {
            commands.push(match c {
                Recorded::Fixed(action) => Recorded::Fixed(action),
                Recorded::Dispatch(d) => {
                    let index = self.queues.iter().position(|q| Arc::ptr_eq(q, &d.queue)).unwrap_or(0);
                    let queue = copy.queues[map(index) % copy.queues.len()].clone();
                    let old = d.state.lock().clone();
                    let mut state = DispatchState { args: old.args.copy(), range: old.range, launch: None };
                    if old.launch.is_some() {
                        state.launch = Dispatch::build(&queue, &state, false)?;
                    }
                    let new = Arc::new(Dispatch {
                        buffer: Arc::as_ptr(&copy) as usize,
                        queue,
                        kernel: d.kernel.clone(),
                        fields: d.fields,
                        properties: d.properties.clone(),
                        state: Mutex::new(state),
                    });
                    handles.push((Arc::as_ptr(&d) as usize, Arc::as_ptr(&new) as usize));
                    DISPATCHES.lock().insert(Arc::as_ptr(&new) as usize, new.clone());
                    Recorded::Dispatch(new)
                }
            });
        }
        match self.finalized() {
            true => {
                let _ = copy.executable.set(commands.into());
            }
            false => *copy.recording.lock() = commands,
        }
        Ok((copy, handles))
    }

    pub(crate) fn finalized(&self) -> bool {
        self.executable.get().is_some()
    }

    /// Appends a command after checking its sync points: each must name a command
    /// recorded before ("CL_INVALID_SYNC_POINT_WAIT_LIST_KHR if ... synchronization-point
    /// objects in sync_point_wait_list are not valid"). Returns the new command's sync
    /// point. `CL_INVALID_OPERATION` once finalized.
    pub(crate) fn record(&self, waits: &[cl_sync_point_khr], command: Recorded) -> CLResult<cl_sync_point_khr> {
        let mut commands = self.recording.lock();
        if self.finalized() {
            return Err(CL_INVALID_OPERATION);
        }
        if waits.iter().any(|&s| s == 0 || s as usize > commands.len()) {
            return Err(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR);
        }
        let point = cl_sync_point_khr::try_from(commands.len() + 1).map_err(|_| CL_OUT_OF_RESOURCES)?;
        if let Recorded::Dispatch(d) = &command {
            DISPATCHES.lock().insert(Arc::as_ptr(d) as usize, d.clone());
        }
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
        let all: Arc<[Recorded]> = std::mem::take(&mut *commands).into();
        self.executable.set(all).map_err(|_| CL_INVALID_OPERATION)
    }

    /// The body of one replay: every command in order, each kernel command with the
    /// launch it has now; the first that fails ends the replay with its status.
    /// `CL_INVALID_OPERATION` unless executable (finalized, every argument set).
    pub(crate) fn replay(&self) -> CLResult<Work> {
        let commands = self.executable.get().ok_or(CL_INVALID_OPERATION)?.clone();
        let launches = {
            let _whole = self.updating.lock();
            let launch_of = |c: &Recorded| match c {
                Recorded::Fixed(_) => Ok(None),
                Recorded::Dispatch(d) => d.state.lock().launch.clone().map(Some).ok_or(CL_INVALID_OPERATION),
            };
            commands.iter().map(launch_of).collect::<CLResult<Vec<_>>>()?
        };
        Ok(Box::new(move || {
            commands.iter().zip(&launches).try_for_each(|step| match step {
                (Recorded::Fixed(action), _) => (**action)(),
                (_, Some(launch)) => run(launch),
                (_, None) => Err(CL_INVALID_OPERATION),
            })
        }))
    }

    /// `CL_COMMAND_BUFFER_STATE_KHR`.
    pub(crate) fn state(&self) -> cl_command_buffer_state_khr {
        let Some(commands) = self.executable.get() else { return CL_COMMAND_BUFFER_STATE_RECORDING_KHR };
        let _whole = self.updating.lock();
        let missing = |c: &Recorded| matches!(c, Recorded::Dispatch(d) if d.state.lock().launch.is_none());
        match commands.iter().any(missing) {
            true => CL_COMMAND_BUFFER_STATE_FINALIZED_KHR,
            false => CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
        }
    }

    /// Applies updates of this buffer's kernel commands, all or (on an error, which
    /// `stage` reports) none: `stage` is given each command's state (as earlier
    /// updates in the list left it) and returns the new one.
    pub(crate) fn update(
        &self,
        targets: &[Arc<Dispatch>],
        mut stage: impl FnMut(usize, DispatchState) -> CLResult<DispatchState>,
    ) -> CLResult<()> {
        let _whole = self.updating.lock();
        let mut staged: Vec<(Arc<Dispatch>, DispatchState)> = Vec::new();
        for (i, d) in targets.iter().enumerate() {
            let current = match staged.iter().position(|(s, _)| Arc::ptr_eq(s, d)) {
                Some(at) => staged.remove(at).1,
                None => d.state.lock().clone(),
            };
            staged.push((d.clone(), stage(i, current)?));
        }
        for (d, state) in staged {
            *d.state.lock() = state;
        }
        Ok(())
    }
}

/// Runs a fresh copy of `launch`; a faulting kernel fails the command.
pub(crate) fn run(launch: &Launch) -> CLResult<()> {
    match launch.again().run() {
        true => Ok(()),
        false => Err(CL_OUT_OF_RESOURCES),
    }
}
