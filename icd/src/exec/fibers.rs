//! Work-items as fibers, for kernels with barriers: each work-item of a group runs on
//! its own small stack; `barrier()` suspends it until every work-item of the group has
//! reached a barrier (or finished), `sub_group_barrier()` until every work-item of its
//! sub-group has reached one of those. All fibers of a group run on one worker thread,
//! so they share its `__local` memory and see each other's writes.

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
    /// What the fiber that last suspended waits for.
    waits_for: Cell<Wait>,
}

/// Where a fiber stands between its turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Wait {
    /// Runs on its next turn.
    #[default]
    Nothing,
    /// At a work-group barrier.
    Group,
    /// At a sub-group barrier.
    SubGroup,
    Finished,
}

/// # Safety
/// Called by kernel code with its own group.
pub(crate) unsafe extern "C" fn barrier(group: *const Group) {
    // SAFETY: the caller's contract.
    unsafe { suspend(group, Wait::Group) }
}

/// # Safety
/// Called by kernel code with its own group.
pub(crate) unsafe extern "C" fn sub_group_barrier(group: *const Group) {
    // SAFETY: the caller's contract.
    unsafe { suspend(group, Wait::SubGroup) }
}

/// # Safety
/// Called by kernel code with its own group.
unsafe fn suspend(group: *const Group, wait: Wait) {
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
        (*running).waits_for.set(wait);
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
        // Each fiber's sub-group: runs of the sub-group size in x, row after row.
        let width = g.sub_group_size.max(1);
        let per_row = g.local_size[0].div_ceil(width);
        let sub_group: Vec<usize> = (0..g.local_size[2])
            .flat_map(|z| (0..g.local_size[1]).flat_map(move |y| (0..g.local_size[0]).map(move |x| (z, y, x))))
            .map(|(z, y, x)| (z * g.local_size[1] + y) * per_row + x / width)
            .collect();
        let mut state = vec![Wait::Nothing; self.active.len()];
        loop {
            for (f, s) in self.active.iter_mut().zip(state.iter_mut()).filter(|(_, s)| **s == Wait::Nothing) {
                self.running.waits_for.set(Wait::Group);
                *s = match f.resume(()) {
                    CoroutineResult::Yield(()) => self.running.waits_for.get(),
                    CoroutineResult::Return(()) => Wait::Finished,
                };
            }
            if !release(&mut state, &sub_group) {
                break;
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

/// Lets waiting fibers run on: those at a work-group barrier once every fiber is at one
/// (or finished), those at a sub-group barrier once every other fiber of their
/// sub-group (`sub_group`: each fiber's) is at one, at the group's or finished: the
/// fibers at the sub-group's barrier are the work-items in its call. Fibers waiting for
/// each other otherwise (undefined in OpenCL) are all let go rather than left to wait.
/// `false` once every fiber has finished.
fn release(state: &mut [Wait], sub_group: &[usize]) -> bool {
    if state.iter().all(|&s| s == Wait::Finished) {
        return false;
    }
    let at = |s: Wait, kind: Wait| s == kind || s == Wait::Finished;
    let mut released = false;
    if state.iter().all(|&s| at(s, Wait::Group)) {
        state.iter_mut().filter(|s| **s == Wait::Group).for_each(|s| *s = Wait::Nothing);
        return true;
    }
    // A fiber waiting at the group's barrier is not in its sub-group's call (a
    // non-uniform function called by the work-items of a branch it did not take).
    let groups = sub_group.iter().copied().max().map_or(0, |m| m + 1);
    let mut ready = vec![true; groups];
    for (&s, &g) in state.iter().zip(sub_group) {
        ready[g] &= at(s, Wait::SubGroup) || s == Wait::Group;
    }
    for (s, &g) in state.iter_mut().zip(sub_group) {
        if ready[g] && *s == Wait::SubGroup {
            *s = Wait::Nothing;
            released = true;
        }
    }
    if !released {
        state.iter_mut().filter(|s| **s != Wait::Finished).for_each(|s| *s = Wait::Nothing);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_release_their_own_fibers() {
        use Wait::*;
        // Sub-group 0 (fibers 0, 1) at its barrier, sub-group 1 at the group's: only
        // sub-group 0 runs on.
        let mut s = [SubGroup, SubGroup, Group, Group];
        assert!(release(&mut s, &[0, 0, 1, 1]));
        assert_eq!(s, [Nothing, Nothing, Group, Group]);
        // Now all at the group's barrier (one finished): all run on.
        let mut s = [Group, Finished, Group, Group];
        assert!(release(&mut s, &[0, 0, 1, 1]));
        assert_eq!(s, [Nothing, Finished, Nothing, Nothing]);
        // Half a sub-group at each kind: the half in the sub-group's call runs on, the
        // other waits for the group.
        let mut s = [SubGroup, Group, Group, Group];
        assert!(release(&mut s, &[0, 0, 1, 1]));
        assert_eq!(s, [Nothing, Group, Group, Group]);
        assert!(!release(&mut [Finished; 3], &[0, 0, 0]));
    }
}
