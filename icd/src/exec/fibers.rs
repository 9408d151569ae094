//! Work-items as fibers, for kernels with barriers: each work-item of a group runs on
//! its own small stack; `barrier()` suspends it, and the group moves on when every
//! work-item has suspended (or finished). All fibers of a group run on one worker
//! thread, so they share its `__local` memory and see each other's writes.

use std::cell::Cell;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use ferrocl_kernel_abi::{Group, ItemFn};

/// Stack per work-item. Kernels keep private arrays on it; the device's maximum
/// work-group size times this is the worst-case reservation per worker, committed only
/// as pages are touched.
pub const STACK_SIZE: usize = 128 << 10;

/// What `barrier` needs to suspend the running fiber; the group's `runtime` points at
/// it while its work-items run as fibers (and is null otherwise).
#[derive(Default)]
struct Running {
    current: Cell<*const Yielder<(), ()>>,
}

/// # Safety
/// Called by kernel code with its own group.
pub unsafe extern "C" fn barrier(group: *const Group) {
    // SAFETY: the group is the one the calling work-item runs in.
    let running = unsafe { (*group).runtime as *const Running };
    if running.is_null() {
        // Not on a fiber: a group of one work-item run directly; nothing to wait for.
        return;
    }
    // SAFETY: `runtime` points at the worker's `Running` for the whole group, and
    // `current` at the yielder of the fiber executing this call.
    unsafe {
        let y = (*running).current.get();
        (*y).suspend(());
        // Other fibers ran meanwhile and set their own yielder.
        (*running).current.set(y);
    }
}

/// A worker's reusable fiber stacks.
#[derive(Default)]
pub struct Fibers {
    stacks: Vec<DefaultStack>,
    running: Box<Running>,
}

impl Fibers {
    /// Runs all work-items of `group` as fibers, resuming them round-robin until all
    /// have finished.
    ///
    /// # Safety
    /// `item`, `group` and `args` must be valid for the whole call (the kernel library
    /// and the launch outlive it).
    pub unsafe fn run_group(&mut self, item: ItemFn, group: *const Group, args: *const u8) -> Result<(), String> {
        // The fibers see a copy of the group whose `runtime` lets `barrier` find them.
        let mut own = *group;
        own.runtime = &*self.running as *const Running as *mut _;
        let group = &own as *const Group;
        let running = &*self.running as *const Running as usize;
        let g = &own;
        let ids: Vec<[usize; 3]> = (0..g.local_size[2])
            .flat_map(|z| (0..g.local_size[1]).flat_map(move |y| (0..g.local_size[0]).map(move |x| [x, y, z])))
            .collect();
        let mut fibers = Vec::with_capacity(ids.len());
        for lid in ids {
            let stack = match self.stacks.pop() {
                Some(s) => s,
                None => DefaultStack::new(STACK_SIZE).map_err(|e| format!("cannot allocate a fiber stack: {e}"))?,
            };
            let (group, args) = (group as usize, args as usize);
            fibers.push(Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                // SAFETY: the worker's `Running` outlives its fibers.
                unsafe { (*(running as *const Running)).current.set(y) };
                // SAFETY: the caller keeps group, args and the library alive.
                unsafe { item(group as *const Group, args as *const u8, lid.as_ptr()) };
            }));
        }
        let mut live = fibers.len();
        while live > 0 {
            live = 0;
            for f in fibers.iter_mut().filter(|f| !f.done()) {
                if let CoroutineResult::Yield(()) = f.resume(()) {
                    live += 1;
                }
            }
        }
        self.stacks.extend(fibers.into_iter().map(Coroutine::into_stack));
        Ok(())
    }
}
