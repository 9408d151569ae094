//! Work-items as fibers, for kernels with barriers: each work-item of a group runs on
//! its own small stack; `barrier()` suspends it, and the group moves on when every
//! work-item has suspended (or finished). All fibers of a group run on one worker
//! thread, so they share its `__local` memory and see each other's writes.

use std::cell::Cell;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use ferrocl_kernel_abi::{Group, ItemFn, Services};

/// Stack per work-item. Kernels keep private arrays on it; the device's maximum
/// work-group size times this is the worst-case reservation per worker, committed only
/// as pages are touched.
pub const STACK_SIZE: usize = 128 << 10;

thread_local! {
    /// The fiber running on this thread, so `barrier` can suspend it.
    static CURRENT: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
}

unsafe extern "C" fn barrier(_group: *const Group) {
    let y = CURRENT.get();
    if y.is_null() {
        // Not on a fiber: a group of one work-item run directly; nothing to wait for.
        return;
    }
    // SAFETY: CURRENT points at the yielder of the fiber executing this call, which
    // lives as long as the fiber.
    unsafe { (*y).suspend(()) };
    CURRENT.set(y);
}

pub static SERVICES: Services = Services { barrier };

/// A worker's reusable fiber stacks.
#[derive(Default)]
pub struct Fibers {
    stacks: Vec<DefaultStack>,
}

impl Fibers {
    /// Runs all work-items of `group` as fibers, resuming them round-robin until all
    /// have finished.
    ///
    /// # Safety
    /// `item`, `group` and `args` must be valid for the whole call (the kernel library
    /// and the launch outlive it).
    pub unsafe fn run_group(&mut self, item: ItemFn, group: *const Group, args: *const u8) -> Result<(), String> {
        let g = &*group;
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
                CURRENT.set(y);
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
        CURRENT.set(std::ptr::null());
        self.stacks.extend(fibers.into_iter().map(Coroutine::into_stack));
        Ok(())
    }
}
