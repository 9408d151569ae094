//! Work-items as fibers, for kernels with barriers: each work-item of a group runs on
//! its own small stack; `barrier()` suspends it, and the group moves on when every
//! work-item has suspended (or finished). All fibers of a group run on one worker
//! thread, so they share its `__local` memory and see each other's writes.

use std::cell::Cell;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use ferrocl_kernel_abi::{Group, ItemFn};

use super::fault::DriverSection;

/// Stack per work-item. Kernels keep private arrays on it; the device's maximum
/// work-group size times this is the worst-case reservation per worker, committed only
/// as pages are touched.
pub(crate) const STACK_SIZE: usize = 128 << 10;

/// What `barrier` needs to suspend the running fiber; the group's `runtime` points at
/// it while its work-items run as fibers (and is null otherwise).
#[derive(Default)]
struct Running {
    current: Cell<*const Yielder<(), ()>>,
}

/// # Safety
/// Called by kernel code with its own group.
pub(crate) unsafe extern "C" fn barrier(group: *const Group) {
    // SAFETY: the group is the one the calling work-item runs in.
    let running = unsafe { (*group).runtime as *const Running };
    if running.is_null() {
        // Not on a fiber: a group of one work-item run directly; nothing to wait for.
        return;
    }
    // Switching fibers is the driver's code: a watchdog interrupt waits for the switch
    // back into the kernel.
    let _driver = DriverSection::enter();
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
pub(crate) struct Fibers {
    stacks: Vec<DefaultStack>,
    /// The group's fibers while it runs. A field, not a local, so that a group a fault
    /// ended (the guard jumps past this frame) can still give its stacks back.
    active: Vec<Coroutine<(), (), (), DefaultStack>>,
    running: Box<Running>,
}

impl Fibers {
    /// Runs all work-items of `group` as fibers, resuming them round-robin until all
    /// have finished.
    ///
    /// # Safety
    /// `item`, `group` and `args` must be valid for the whole call (the kernel library
    /// and the launch outlive it).
    pub(crate) unsafe fn run_group(
        &mut self,
        item: ItemFn,
        group: *const Group,
        args: *const u8,
    ) -> Result<(), String> {
        // Allocating and switching fibers is the driver's code; only the work-items are
        // the kernel's.
        let _driver = DriverSection::enter();
        // The fibers see a copy of the group whose `runtime` lets `barrier` find them.
        let mut own = *group;
        own.runtime = &*self.running as *const Running as *mut _;
        let group = &own as *const Group;
        let running = &*self.running as *const Running as usize;
        let g = &own;
        let ids: Vec<[usize; 3]> = (0..g.local_size[2])
            .flat_map(|z| (0..g.local_size[1]).flat_map(move |y| (0..g.local_size[0]).map(move |x| [x, y, z])))
            .collect();
        // Left over only if a fault ended the previous group before `abandon`.
        // SAFETY: as for `abandon`.
        unsafe { self.abandon() };
        for lid in ids {
            let stack = match self.stacks.pop() {
                Some(s) => s,
                None => match DefaultStack::new(STACK_SIZE) {
                    Ok(s) => s,
                    Err(e) => {
                        // SAFETY: none of the fibers has started.
                        unsafe { self.abandon() };
                        return Err(format!("cannot allocate a fiber stack: {e}"));
                    }
                },
            };
            let (group, args) = (group as usize, args as usize);
            self.active.push(Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                // SAFETY: the worker's `Running` outlives its fibers.
                unsafe { (*(running as *const Running)).current.set(y) };
                // SAFETY: the caller keeps group, args and the library alive.
                DriverSection::kernel(|| unsafe { item(group as *const Group, args as *const u8, lid.as_ptr()) });
            }));
        }
        let mut live = self.active.len();
        while live > 0 {
            live = 0;
            for f in self.active.iter_mut().filter(|f| !f.done()) {
                if let CoroutineResult::Yield(()) = f.resume(()) {
                    live += 1;
                }
            }
        }
        self.stacks.extend(self.active.drain(..).map(Coroutine::into_stack));
        Ok(())
    }

    /// Takes back the stacks of a group that did not finish: one a fault (or the
    /// watchdog) ended midway, whose fibers are suspended in `barrier` or were running
    /// when the guard jumped out of them.
    ///
    /// # Safety
    /// No fiber of the group may be resumed again. Their frames are kernel code and the
    /// fiber closure's plain captures: nothing on them needs dropping, which is what
    /// makes `force_reset` (a `longjmp` back to the start) sound here.
    pub(crate) unsafe fn abandon(&mut self) {
        for mut f in self.active.drain(..) {
            // SAFETY: see above.
            unsafe { f.force_reset() };
            self.stacks.push(f.into_stack());
        }
    }
}
