//! Device-side enqueue (OpenCL C 2.0): the driver's side of builtins/clc/enqueue.c.
//!
//! Kernel code hands each `enqueue_kernel` and `enqueue_marker` to `enqueue`, and the
//! event functions to `device`. A launch from the host that may enqueue carries a
//! `DeviceWork`: the commands its work-items (and their children, and theirs) enqueued,
//! and their events. Those commands run after the launch's groups, on the thread that
//! ran the launch, one at a time in the order they were enqueued once what they wait
//! for is complete: a child never starts before its parent has finished, which every
//! flag allows (`CLK_ENQUEUE_FLAGS_NO_WAIT` lets a child start earlier; it need not).
//! The host command completes when every command of its tree has.
//!
//! What a command needs of the rest of the driver (a launch of a block's kernel, the
//! device queues, the kernel queries) comes through `Spawner`, which the objects layer
//! implements.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use ferrocl_kernel_abi::{clk, DeviceOp, Enqueue, Group, NdRange};
use parking_lot::Mutex;

use super::fault::DriverSection;

/// A launch of a block's kernel, as a tree runs it (`ndrange::Launch`).
pub(crate) trait ChildLaunch: Send + Sync {
    /// Places the launch in its tree (once, before it runs).
    fn join(&self, side: DeviceSide);
    /// Runs every group; false when one failed.
    fn run_all(self: Arc<Self>) -> bool;
}

/// What device-side enqueue needs of the objects layer.
pub(crate) trait Spawner: Send + Sync {
    /// A launch of the block kernel `kernel` over `range`, its literal at `block` and
    /// its `__local` parameters `locals` bytes each; a `CLK_*` error otherwise.
    fn launch(
        &self,
        kernel: &str,
        block: usize,
        locals: &[usize],
        range: &NdRange,
    ) -> Result<Arc<dyn ChildLaunch>, i32>;
    /// The commands a device queue holds at once (`None`: not a device queue of the
    /// launch's context and device).
    fn queue_capacity(&self, queue: usize) -> Option<usize>;
    /// The default device queue's handle (0: none).
    fn default_queue(&self) -> usize;
    /// `get_kernel_work_group_size` and the other queries of a block's kernel.
    fn kernel_query(&self, kernel: &str, op: DeviceOp, range: Option<&NdRange>) -> usize;
    /// Events that may be alive at once (`CL_DEVICE_MAX_ON_DEVICE_EVENTS`).
    fn max_events(&self) -> usize;
}

/// A launch's place in device-side enqueue: the tree it belongs to and, for a
/// command enqueued by kernel code, that command's event.
pub(crate) struct DeviceSide {
    pub(crate) work: Arc<DeviceWork>,
    pub(crate) command: Option<usize>,
}

impl DeviceSide {
    /// The side of a launch from the host.
    pub(crate) fn top(spawner: Arc<dyn Spawner>) -> DeviceSide {
        DeviceSide { work: Arc::new(DeviceWork::new(spawner)), command: None }
    }

    /// The same for another run of the launch (a command buffer's replay).
    pub(crate) fn fresh(&self) -> Option<DeviceSide> {
        self.command.is_none().then(|| DeviceSide::top(self.work.spawner.clone()))
    }
}

/// The most events one tree records (commands' and user events, released ones
/// included: a record is kept for the tree's order): about 100 MiB of them. Past it a
/// kernel creating and releasing user events in a loop gets none, and enqueues fail.
const TREE_EVENTS: usize = 1 << 20;

/// `CL_COMPLETE`, `CL_SUBMITTED`.
const COMPLETE: i32 = 0;
const SUBMITTED: i32 = 2;

/// A device-side event: a command's, or a user event.
struct Event {
    /// References kernel code holds (`retain_event`/`release_event`); the event is
    /// valid while above 0.
    refs: u32,
    /// `CL_SUBMITTED` until complete, then `CL_COMPLETE` or a negative error.
    status: i32,
    user: bool,
    /// For a command: itself plus its children not yet complete.
    left: usize,
    /// The command that enqueued this one (`None`: the launch from the host).
    parent: Option<usize>,
    /// When the command's launch started and ended.
    started: Option<Instant>,
    ended: Option<Instant>,
    /// Where `capture_event_profiling_info` asked for the times.
    capture: Vec<usize>,
    /// The device queue holding the command.
    queue: usize,
}

/// A command waiting to run.
struct Command {
    event: usize,
    /// `None`: a marker.
    launch: Option<Arc<dyn ChildLaunch>>,
    wait: Vec<usize>,
    /// The block literal's copy, which the launch points to.
    _block: Vec<super::Aligned>,
}

#[derive(Default)]
struct State {
    events: Vec<Event>,
    pending: VecDeque<Command>,
    /// Commands each device queue holds (enqueued, not complete).
    held: HashMap<usize, usize>,
    /// Events kernel code holds a reference to.
    live: usize,
    /// A command of the tree failed.
    failed: bool,
}

impl State {
    /// The event of a handle kernel code gave, if it is one it holds.
    fn event(&mut self, handle: usize) -> Option<&mut Event> {
        self.events.get_mut(handle.checked_sub(1)?).filter(|e| e.refs > 0)
    }

    fn add(&mut self, event: Event) -> usize {
        self.live += (event.refs > 0) as usize;
        self.events.push(event);
        self.events.len()
    }

    /// One of `index`'s parts (itself, or a child) is done; completes it and its
    /// parents as their last parts finish, writing the times asked for. Returns the
    /// captures to write: `(address, [execution, with children])`.
    fn part_done(&mut self, mut index: usize, status: i32, captures: &mut Vec<(usize, [u64; 2])>) {
        let mut status = status;
        loop {
            let e = &mut self.events[index - 1];
            if status < 0 && e.status >= 0 {
                e.status = status;
            }
            e.left -= 1;
            if e.left > 0 {
                return;
            }
            if e.status > 0 {
                e.status = COMPLETE;
            }
            status = e.status;
            if let (Some(s), Some(end)) = (e.started, e.ended) {
                let exec = end.duration_since(s).as_nanos() as u64;
                let total = s.elapsed().as_nanos() as u64;
                captures.extend(e.capture.drain(..).map(|at| (at, [exec, total])));
            }
            if let Some(n) = self.held.get_mut(&e.queue) {
                *n -= 1;
            }
            match e.parent {
                Some(p) => index = p,
                None => return,
            }
        }
    }
}

/// The commands kernel code enqueued under one launch from the host, and their events.
pub(crate) struct DeviceWork {
    spawner: Arc<dyn Spawner>,
    state: Mutex<State>,
}

thread_local! {
    /// The device side of the launch whose groups this thread runs (`Current`).
    static CURRENT: Cell<*const DeviceSide> = const { Cell::new(std::ptr::null()) };
}

/// Marks the device side of the launch whose groups the thread runs, for the services,
/// until dropped.
pub(crate) struct Current(*const DeviceSide);

impl Current {
    pub(crate) fn enter(side: &DeviceSide) -> Current {
        Current(CURRENT.with(|c| c.replace(side)))
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// The device side of the launch whose groups this thread runs.
fn side() -> Option<&'static DeviceSide> {
    let side = CURRENT.with(Cell::get);
    // SAFETY: `Current` marks the side for as long as the launch's groups run on this
    // thread (the launch holds it), and the services are called only from them.
    unsafe { side.as_ref() }
}

/// Reads `n` values kernel code passed (a wild pointer faults inside the kernel's
/// guard, failing its group, before the driver holds anything).
///
/// # Safety
/// Called from kernel code, inside its fault guard.
unsafe fn read_list<T: Copy>(p: *const T, n: usize) -> Vec<T> {
    (0..n).map(|i| unsafe { p.add(i).read_unaligned() }).collect()
}

/// `Services::enqueue`.
pub(crate) unsafe extern "C" fn enqueue(_group: *const Group, request: *const Enqueue) -> i32 {
    let Some(side) = side() else { return clk::INVALID_QUEUE };
    // SAFETY: kernel code passes its request; its pointers are read under the guard.
    let r = unsafe { request.read() };
    let work = &side.work;
    let events = match (r.num_events, r.events.is_null()) {
        (0, true) => Vec::new(),
        (0, false) | (_, true) => return clk::INVALID_EVENT_WAIT_LIST,
        // More events than can exist at once cannot all be valid (and a count from
        // kernel code must not size an allocation).
        (n, false) if n as usize > work.spawner.max_events() => return clk::INVALID_EVENT_WAIT_LIST,
        // SAFETY: as above.
        (n, false) => unsafe { read_list(r.events, n as usize) },
    };
    if r.kernel.is_null() {
        // enqueue_marker: "CLK_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL or
        // num_events_in_wait_list is 0".
        if events.is_empty() {
            return clk::INVALID_EVENT_WAIT_LIST;
        }
        return work.submit(side.command, r.queue, None, events, r.event_ret);
    }
    // SAFETY: as above; the name is the compiler's constant.
    let name = unsafe { std::ffi::CStr::from_ptr(r.kernel.cast()) }.to_string_lossy().into_owned();
    // SAFETY: as above.
    let locals = unsafe { read_list(r.locals, r.num_locals as usize) };
    // "CLK_INVALID_ARG_SIZE if ... the size of local memory arguments is 0".
    if locals.contains(&0) {
        return clk::INVALID_ARG_SIZE;
    }
    if r.range.is_null() || r.block.is_null() || r.flags > 2 {
        return clk::ENQUEUE_FAILURE;
    }
    // SAFETY: as above.
    let range = unsafe { r.range.read_unaligned() };
    // SAFETY: as above: a block literal starts with its size.
    let size = unsafe { r.block.cast::<u32>().read_unaligned() } as usize;
    if !(8..=1 << 20).contains(&size) {
        return clk::INVALID_ARG_SIZE;
    }
    let mut block = super::aligned_zeroed(size);
    // SAFETY: the literal is `size` bytes (read under the guard); the copy holds them.
    unsafe { std::ptr::copy_nonoverlapping(r.block, block.as_mut_ptr().cast::<u8>(), size) };
    let launch = {
        let _driver = DriverSection::enter();
        match work.spawner.launch(&name, block.as_ptr() as usize, &locals, &range) {
            Ok(l) => l,
            Err(code) => return code,
        }
    };
    work.submit(side.command, r.queue, Some((launch, block)), events, r.event_ret)
}

/// `Services::device`.
pub(crate) unsafe extern "C" fn device(_group: *const Group, op: u32, event: usize, value: usize) -> usize {
    let Some(side) = side() else { return 0 };
    let Some(op) = DeviceOp::from_u32(op) else { return 0 };
    let work = &side.work;
    match op {
        DeviceOp::KernelWorkGroupSize
        | DeviceOp::KernelPreferredMultiple
        | DeviceOp::KernelMaxSubGroupSize
        | DeviceOp::KernelSubGroupCount => {
            if event == 0 {
                return 0;
            }
            // SAFETY: the compiler's constant name and the kernel's `ndrange_t`, read
            // under the guard.
            let name = unsafe { std::ffi::CStr::from_ptr(event as *const std::ffi::c_char) };
            let range = (value != 0).then(|| unsafe { (value as *const NdRange).read_unaligned() });
            let _driver = DriverSection::enter();
            work.spawner.kernel_query(&name.to_string_lossy(), op, range.as_ref())
        }
        DeviceOp::DefaultQueue => work.spawner.default_queue(),
        DeviceOp::CaptureProfiling => {
            let write = {
                let _driver = DriverSection::enter();
                let mut s = work.state.lock();
                match s.event(event) {
                    Some(e) if !e.user && e.status > 0 => {
                        e.capture.push(value);
                        None
                    }
                    Some(e) if !e.user => e.started.zip(e.ended).map(|(s, end)| {
                        let exec = end.duration_since(s).as_nanos() as u64;
                        [exec, exec]
                    }),
                    _ => None,
                }
            };
            if let (Some(times), false) = (write, value == 0) {
                // SAFETY: kernel code's `__global` pointer, written under its guard.
                unsafe { (value as *mut [u64; 2]).write_unaligned(times) };
            }
            0
        }
        _ => {
            let _driver = DriverSection::enter();
            work.event_op(op, event, value)
        }
    }
}

impl DeviceWork {
    fn new(spawner: Arc<dyn Spawner>) -> DeviceWork {
        DeviceWork { spawner, state: Mutex::new(State::default()) }
    }

    /// The event functions but profiling.
    fn event_op(&self, op: DeviceOp, event: usize, value: usize) -> usize {
        let mut s = self.state.lock();
        match op {
            DeviceOp::RetainEvent => {
                if let Some(e) = s.event(event) {
                    e.refs += 1;
                }
                0
            }
            DeviceOp::ReleaseEvent => {
                let released = s.event(event).map(|e| {
                    e.refs -= 1;
                    e.refs == 0
                });
                if released == Some(true) {
                    s.live -= 1;
                }
                0
            }
            DeviceOp::CreateUserEvent => {
                if s.live >= self.spawner.max_events() || s.events.len() >= TREE_EVENTS {
                    return 0;
                }
                s.add(Event {
                    refs: 1,
                    status: SUBMITTED,
                    user: true,
                    left: 0,
                    parent: None,
                    started: None,
                    ended: None,
                    capture: Vec::new(),
                    queue: 0,
                })
            }
            DeviceOp::SetUserEventStatus => {
                let status = value as i64 as i32;
                // "status ... can be either CL_COMPLETE or a negative integer value",
                // set once.
                if let Some(e) = s.event(event).filter(|e| e.user && e.status == SUBMITTED) {
                    if status == COMPLETE || status < 0 {
                        e.status = status;
                    }
                }
                0
            }
            DeviceOp::IsValidEvent => s.event(event).is_some() as usize,
            _ => 0,
        }
    }

    /// Adds a command (a kernel's launch and its block, or a marker) enqueued by the
    /// command `parent` (`None`: the host's launch).
    fn submit(
        self: &Arc<Self>,
        parent: Option<usize>,
        queue: usize,
        launch: Option<(Arc<dyn ChildLaunch>, Vec<super::Aligned>)>,
        wait: Vec<usize>,
        event_ret: *mut usize,
    ) -> i32 {
        let handle = {
            let _driver = DriverSection::enter();
            let Some(capacity) = self.spawner.queue_capacity(queue) else { return clk::INVALID_QUEUE };
            let mut s = self.state.lock();
            if wait.iter().any(|&e| s.event(e).is_none()) {
                return clk::INVALID_EVENT_WAIT_LIST;
            }
            let held = s.held.get(&queue).copied().unwrap_or(0);
            if held >= capacity {
                return clk::DEVICE_QUEUE_FULL;
            }
            let returned = !event_ret.is_null();
            if returned && (s.live >= self.spawner.max_events() || s.events.len() >= TREE_EVENTS) {
                return clk::EVENT_ALLOCATION_FAILURE;
            }
            if s.events.len() >= TREE_EVENTS {
                return clk::OUT_OF_RESOURCES;
            }
            *s.held.entry(queue).or_default() += 1;
            if let Some(p) = parent {
                s.events[p - 1].left += 1;
            }
            let event = s.add(Event {
                refs: returned as u32,
                status: SUBMITTED,
                user: false,
                left: 1,
                parent,
                started: None,
                ended: None,
                capture: Vec::new(),
                queue,
            });
            let (launch, block) = launch.map_or((None, Vec::new()), |(l, b)| (Some(l), b));
            if let Some(l) = &launch {
                // A launch fresh from the spawner: its side is set here only.
                l.join(DeviceSide { work: self.clone(), command: Some(event) });
            }
            s.pending.push_back(Command { event, launch, wait, _block: block });
            event
        };
        if !event_ret.is_null() {
            // SAFETY: kernel code's `clk_event_t *`, written under its guard.
            unsafe { event_ret.write_unaligned(handle) };
        }
        clk::SUCCESS
    }

    /// Runs the tree's commands (after the host's launch): each, in the order they came,
    /// once its wait list is complete; false when one failed, or waited for an event
    /// never set (which would hang the host command: it fails instead).
    pub(crate) fn drain(&self) -> bool {
        loop {
            let next = {
                let mut s = self.state.lock();
                let ready = s
                    .pending
                    .iter()
                    .position(|c| c.wait.iter().all(|&w| s.events.get(w - 1).is_some_and(|e| e.status <= COMPLETE)));
                match ready {
                    Some(i) => s.pending.remove(i),
                    None if s.pending.is_empty() => return !s.failed,
                    None => {
                        eprintln!(
                            "FerroCL: {} device-side command(s) wait for events nothing left can complete (a user \
                             event never set); the command fails with CL_OUT_OF_RESOURCES",
                            s.pending.len()
                        );
                        s.pending.clear();
                        return false;
                    }
                }
            };
            let Some(command) = next else { continue };
            // A wait list with a failed event fails the command without running it.
            let waited_failed = {
                let s = self.state.lock();
                command.wait.iter().filter_map(|&w| s.events.get(w - 1)).map(|e| e.status).find(|&st| st < 0)
            };
            let status = match (&command.launch, waited_failed) {
                (_, Some(st)) => st,
                (None, None) => COMPLETE,
                (Some(launch), None) => {
                    let start = Instant::now();
                    let ok = launch.clone().run_all();
                    let mut s = self.state.lock();
                    let e = &mut s.events[command.event - 1];
                    e.started = Some(start);
                    e.ended = Some(Instant::now());
                    if ok {
                        COMPLETE
                    } else {
                        // CL_OUT_OF_RESOURCES, as a fault makes a host command.
                        -5
                    }
                }
            };
            let mut captures = Vec::new();
            {
                let mut s = self.state.lock();
                if status < 0 {
                    s.failed = true;
                }
                s.part_done(command.event, status, &mut captures);
            }
            for (at, times) in captures {
                // Kernel code's `__global` pointer, given at its capture call: a wild
                // one must not take the process down.
                // SAFETY: written under a fault guard.
                let _ = super::fault::guarded(|| unsafe { (at as *mut [u64; 2]).write_unaligned(times) });
            }
        }
    }
}

// SAFETY: the block copies hold plain bytes; launches are Send + Sync.
unsafe impl Send for Command {}
