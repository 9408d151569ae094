//! One kernel launch over an NDRange: geometry, the argument block, and the mapping
//! from a group index to the group the launcher runs.

use std::any::Any;
use std::sync::Arc;

use ferrocl_kernel_abi::{FlatFn, Group, ItemFn, LaunchFn};

use super::pool::{Pool, Worker};
use super::SERVICES;

/// Alignment of each `__local` argument inside the worker's (128-byte aligned) arena:
/// enough for any OpenCL type.
const LOCAL_ALIGN: usize = 128;

pub(crate) struct Launch {
    /// The kernel's name, for messages.
    pub(crate) kernel: Arc<str>,
    /// A group faulted (reported once).
    pub(crate) faulted: std::sync::atomic::AtomicBool,
    /// The watchdog stopped the launch: groups not yet started do not start.
    pub(crate) cancelled: std::sync::atomic::AtomicBool,
    pub(crate) launch: LaunchFn,
    /// Set for kernels that run their work-items as fibers.
    pub(crate) item: Option<ItemFn>,
    /// A kernel run as fibers whose only barriers are sub-group ones: runs a group whose
    /// sub-groups are its SIMD chunks without fibers (`FlatFn`).
    pub(crate) flat: Option<FlatFn>,
    /// Frame memory per work-item of a kernel run as barrier regions.
    pub(crate) frame_size: usize,
    /// The kernel runs as barrier regions.
    pub(crate) regions: bool,
    /// The kernel's buffers exceed the last-level cache: async copies into them may
    /// bypass it.
    pub(crate) stream: bool,
    /// Set in async-copy validation mode.
    pub(crate) validation: Option<Arc<super::copies::validate::Launch>>,
    /// The kernel declares `__local` variables (which do not live in the arena).
    pub(crate) static_locals: bool,
    /// Built with `-cl-denorms-are-zero`: groups run flushing denormals to zero.
    pub(crate) flush_denormals: bool,
    /// The kernel calls `printf`, which writes past the host's stdio buffer
    /// (builtins/clc/printf.c).
    pub(crate) prints: bool,
    /// The launch's copy workers, for a kernel whose copies the driver moves
    /// (`copies::helpers`): its groups run on pool workers, and workers without a group
    /// stay with the launch to move copies.
    pub(crate) copy_queue: Option<Arc<super::copies::helpers::CopyQueue>>,
    /// The packed argument block.
    pub(crate) args: Vec<super::Aligned>,
    /// `(offset in the block, bytes)` of each `__local` argument.
    pub(crate) local_args: Vec<(usize, usize)>,
    /// Arena bytes the `__local` arguments take (checked against the arena at enqueue).
    pub(crate) local_arg_total: usize,
    pub(crate) work_dim: u32,
    pub(crate) global: [usize; 3],
    pub(crate) local: [usize; 3],
    pub(crate) offset: [usize; 3],
    /// Objects the kernel uses (buffers, the kernel library), held only to keep them
    /// alive until the launch is dropped.
    pub(crate) _keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The kernel's recent cost per group (`Kernel::group_ns`), for the pool.
    pub(crate) group_ns: Arc<std::sync::atomic::AtomicU64>,
    /// How many consecutive groups of a row in x one call of the launcher may run
    /// (`merge_for`); 1 for kernels that need each group as a whole.
    pub(crate) merge: usize,
    /// The groups a call runs are looped over by its launcher (`Group::row`), for a
    /// kernel that reads group ids; otherwise they run as one group as many times as
    /// wide, for a kernel that cannot tell groups apart.
    pub(crate) rows: bool,
    /// The kernel's sub-group size (`Group::sub_group_size`).
    pub(crate) sub_group_size: usize,
    /// The workers of the sub-device the launch runs on (`None`: the whole device).
    pub(crate) workers: Option<super::pool::Workers>,
    /// For a kernel that may enqueue kernels (device-side enqueue): the tree of commands
    /// it belongs to; set once, by the objects layer or by the parent's enqueue.
    pub(crate) device: std::sync::OnceLock<super::enqueue::DeviceSide>,
}

/// The most work-items in x one call of the launcher may run: the item loop's bound
/// (builtins/clc/workitem.c masks it, so that LLVM knows the 32-bit induction variable
/// cannot overflow), and the driver's own largest group size.
const MERGED_ITEMS: usize = 4096;

/// `Launch::merge` for a kernel launched in groups `local` wide in x that `merges`: its
/// work-items share nothing with their group's others (no `__local` memory, barriers or
/// copies; `Kernel::group_use`). A call of its launcher then runs up to `MERGED_ITEMS`
/// work-items of consecutive groups. A call per group of 64 left short loops between the
/// driver's per-group steps, which the kernel's loads could not run ahead of: saxpy over
/// 64 MiB in groups of 64 on the 2-core machine, three rounds of medians (a C host
/// program), 26.0, 29.9, 30.4 GB/s a call per group, 48.5, 59.6, 65.9 merged (with the
/// pool's chunks counted in calls), PoCL 44.9, 42.9, 57.0.
pub(crate) fn merge_for(merges: bool, local: [usize; 3]) -> usize {
    if merges {
        (MERGED_ITEMS / local[0].max(1)).max(1)
    } else {
        1
    }
}

// SAFETY: the function pointers point into a library `keep` holds; the block holds
// plain bytes and addresses of buffers `keep` holds.
unsafe impl Send for Launch {}
unsafe impl Sync for Launch {}

/// Bytes of `__local` argument memory a launch needs in each worker's arena; `None`
/// when the sum does not fit in a `usize` (the sizes come from the application).
pub(crate) fn local_arg_bytes(mut sizes: impl Iterator<Item = usize>) -> Option<usize> {
    sizes.try_fold(0usize, |sum, s| sum.checked_add(s.checked_next_multiple_of(LOCAL_ALIGN)?))
}

impl Launch {
    fn num_groups(&self) -> [usize; 3] {
        [0, 1, 2].map(|d| self.global[d].div_ceil(self.local[d]))
    }

    /// Group `index` of a launch of `n` groups per dimension.
    fn group(&self, index: usize, n: [usize; 3]) -> Group {
        let mut group = Group {
            enqueued_local_size: self.local,
            global_offset: self.offset,
            global_size: self.global,
            num_groups: n,
            work_dim: self.work_dim,
            row: 1,
            sub_group_size: self.sub_group_size,
            services: &SERVICES,
            runtime: std::ptr::null_mut(),
            ..Default::default()
        };
        self.place(&mut group, index);
        group
    }

    /// How many groups from `index` (before `end`) one call of the launcher runs:
    /// `merge` at most, within the row of groups in x.
    fn span(&self, index: usize, end: usize, n: [usize; 3]) -> usize {
        if self.merge <= 1 {
            return 1;
        }
        let row_left = if n[1] * n[2] == 1 { n[0] - index } else { n[0] - index % n[0] };
        self.merge.min(row_left).min(end - index)
    }

    /// Makes `group` group `index`: its id and size (the rest is the same for every
    /// group of the launch).
    fn place(&self, group: &mut Group, index: usize) {
        let n = group.num_groups;
        // Divisions cost tens of cycles each, per group: 1D launches need none.
        let id =
            if n[1] * n[2] == 1 { [index, 0, 0] } else { [index % n[0], (index / n[0]) % n[1], index / (n[0] * n[1])] };
        group.group_id = id;
        group.row = 1;
        group.row_at = 0;
        // The last group of a dimension may be partial (non-uniform work-groups).
        group.local_size = [0, 1, 2].map(|d| self.local[d].min(self.global[d] - id[d] * self.local[d]));
    }

    /// The argument block for a group on `w`: the shared block, or the worker's copy
    /// with `__local` arguments pointing into its arena.
    fn args_for(&self, w: &mut Worker) -> *const u8 {
        if self.local_args.is_empty() {
            return self.args.as_ptr().cast();
        }
        w.args.clear();
        w.args.extend_from_slice(&self.args);
        let block = w.args.as_mut_ptr().cast::<u8>();
        let arena = w.arena.as_mut_ptr().cast::<u8>();
        let mut at = 0;
        for &(offset, size) in &self.local_args {
            // SAFETY: offsets come from the kernel's layout, inside the block; the sum
            // of local sizes was checked against the arena at enqueue.
            unsafe { block.add(offset).cast::<usize>().write_unaligned(arena.add(at) as usize) };
            at += size.div_ceil(LOCAL_ALIGN) * LOCAL_ALIGN;
        }
        block
    }

    /// Runs groups `range`; returns how many failed (the kernel faulted in them, or the
    /// watchdog stopped the launch before they ran). What does not change between groups
    /// (the argument block, frames, the fault guard, the denormals mode) is set up once
    /// for the range: per group it was most of a small group's time (saxpy with groups
    /// of 64 work-items, 2-core machine: 6.8-8.3 GB/s, 30-36 with large groups; perf:
    /// the kernel 16% of the samples, the fault guard and group set-up 60%).
    fn run_groups(&self, w: &mut Worker, range: std::ops::Range<usize>, n: [usize; 3]) -> usize {
        // Everything the kernel keeps on this thread's stack lies below this frame.
        let stack_marker = 0u8;
        // The services of device-side enqueue find the launch through it.
        let _current = self.device.get().map(super::enqueue::Current::enter);
        let args = self.args_for(w);
        let most_items: usize = self.local.iter().product();
        if self.frame_size > 0 {
            let bytes = self.frame_size * most_items;
            if w.frames.len() * 128 < bytes {
                w.frames = super::aligned_zeroed(bytes);
            }
        }
        let _mode = self.flush_denormals.then(super::denormals::FlushDenormals::begin);
        let sections = super::fault::Sections::here();
        // What every group of the range shares; `run_one` places each group in it.
        let mut group = self.group(range.start, n);
        if self.frame_size > 0 {
            group.frames = w.frames.as_mut_ptr().cast();
        }
        group.local_begin = w.arena.as_mut_ptr().cast();
        group.local_end = group.local_begin.wrapping_byte_add(self.local_arg_total);
        group.stack_top = std::ptr::addr_of!(stack_marker).cast_mut().cast();
        group.scratch = w.scratch.as_mut_ptr().cast();
        group.copies = (&mut w.copies as *mut super::copies::group::GroupCopies).cast();
        let mut failed = 0;
        let mut next = range.start;
        while next < range.end {
            // The group running, for the report of a fault that ends the guarded call.
            let mut current = next;
            // The first group whose async copy faulted (`usize::MAX`: none).
            let mut bad_copy = usize::MAX;
            // A hardware fault in the kernel ends the group (and fails the launch)
            // instead of the process; the range goes on with the next group.
            let ran = super::fault::guarded_as(super::watchdog::Stoppable::tag(self), || {
                let mut index = next;
                while index < range.end {
                    // A fault leaves the guarded call without returning: what it must
                    // find afterwards is in memory before the kernel runs.
                    recorded(&mut current, index);
                    if self.cancelled.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    let count = self.span(index, range.end, n);
                    // SAFETY: the launch's library and block, on this worker.
                    if !unsafe { self.run_one(w, &mut group, index, count, args, sections) } {
                        if bad_copy == usize::MAX {
                            recorded(&mut bad_copy, index);
                        }
                        let more = failed + count;
                        recorded(&mut failed, more);
                    }
                    index += count;
                }
                recorded(&mut current, range.end);
            });
            if let Err(fault) = ran {
                // SAFETY: the group's fibers are never resumed: the group is over.
                unsafe { w.fibers.abandon() };
                // Copies it left in flight still write its local memory.
                w.copies.finish();
                // A fault inside a sub-group call leaves its work-items marked as in it
                // (builtins/clc/collectives.c), which the next group must not see.
                w.clear_collective_marks();
                // Groups merged into a call that faulted end with it; of a call that
                // loops over its groups only the one the launcher was running does:
                // those before it are done, and those after it run anew.
                let (current, count) = if self.rows {
                    // SAFETY: a field of `group`, which the launcher writes through the
                    // pointer it was given.
                    (current + unsafe { std::ptr::read_volatile(&group.row_at) }, 1)
                } else {
                    (current, self.span(current, range.end, n))
                };
                failed += count;
                // The application learns of it from the command's status; this says
                // why, once per launch.
                if !self.faulted.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    let merged = match count {
                        1 => String::new(),
                        _ => format!(" (run in one call with the next {} in x)", count - 1),
                    };
                    eprintln!(
                        "FerroCL: kernel {} was ended by {fault}, in work-group {:?}{merged}; the command fails \
                         with CL_OUT_OF_RESOURCES",
                        self.kernel,
                        self.group(current, n).group_id
                    );
                }
                next = current + count;
            } else {
                if bad_copy != usize::MAX && !self.faulted.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    eprintln!(
                        "FerroCL: an async copy of kernel {} faulted (an address it was given is not mapped), in \
                         work-group {:?}; the command fails with CL_OUT_OF_RESOURCES",
                        self.kernel,
                        self.group(bad_copy, n).group_id
                    );
                }
                // Stopped by the watchdog: the groups left count as failed.
                failed += range.end - current;
                next = range.end;
            }
        }
        failed
    }

    /// Runs groups `index..index + count` (`span`) inside the range's fault guard, in
    /// `group` (the range's shared fields set); `false` when one of its async copies
    /// faulted.
    ///
    /// # Safety
    /// `args` is the launch's block for `w` (`args_for`), `group` points into `w`, and
    /// the call runs inside `fault::guarded_as`.
    unsafe fn run_one(
        &self,
        w: &mut Worker,
        group: &mut Group,
        index: usize,
        count: usize,
        args: *const u8,
        sections: super::fault::Sections,
    ) -> bool {
        self.place(group, index);
        if count > 1 && self.rows {
            // The launcher runs groups `index..index + count` one after another.
            group.row = count as u32;
        } else if count > 1 {
            // Groups `index..index + count` of one row as one group: the same ids for
            // every work-item (`get_global_id` is the group's id times the enqueued
            // size, plus the local id), the last one possibly partial.
            let x = group.group_id[0] * self.local[0];
            group.local_size[0] = (self.local[0] * count).min(self.global[0] - x);
        }
        let items: usize = group.local_size.iter().product();
        {
            // Setting the group up is the driver's code, not the kernel's.
            let _driver = sections.enter();
            group.frames_end = group.frames.wrapping_byte_add(self.frame_size * items);
            w.copies.begin(items, self.regions, self.stream, self.copy_queue.as_ref());
            if let Some((l, v)) = self.validation.as_ref().and_then(|l| Some((l, w.copies.validator()?))) {
                let arena = w.arena.as_ptr() as usize;
                // Without the library's answer for its own variables, copies into them
                // could not be told from strays: no local check then.
                let local =
                    (!self.static_locals || l.static_local.is_some()).then(|| (arena, arena + self.local_arg_total));
                v.begin(l.clone(), group.group_id, group.local_size, local);
            }
        }
        // SAFETY: the launcher, item and flat functions come from the kernel library that
        // `keep` holds, and take exactly these arguments.
        unsafe {
            match self.item {
                Some(_)
                    if items > 1
                        && self.flat.is_some_and(|flat| flat(std::ptr::from_mut(group).cast_const(), args)) => {}
                Some(item) if items > 1 => {
                    if let Err(e) = w.fibers.run_group(item, group, args) {
                        panic!("{e}");
                    }
                }
                // Mutable: the launcher of a call running several groups writes
                // `row_at`.
                _ => (self.launch)(std::ptr::from_mut(group).cast_const(), args),
            }
        }
        let _driver = sections.enter();
        w.copies.finish()
    }

    /// The same launch (kernel, arguments, geometry) with fresh state of a run (the
    /// fault and cancellation flags, the copy workers' queue): what a command buffer
    /// runs at each replay, so that replays in flight at once do not share it.
    pub(crate) fn again(&self) -> Arc<Launch> {
        Arc::new(Launch {
            kernel: self.kernel.clone(),
            faulted: Default::default(),
            cancelled: Default::default(),
            launch: self.launch,
            item: self.item,
            flat: self.flat,
            frame_size: self.frame_size,
            regions: self.regions,
            stream: self.stream,
            validation: self.validation.clone(),
            static_locals: self.static_locals,
            flush_denormals: self.flush_denormals,
            prints: self.prints,
            copy_queue: self.copy_queue.as_ref().map(|q| Arc::new(q.fresh())),
            args: self.args.clone(),
            local_args: self.local_args.clone(),
            local_arg_total: self.local_arg_total,
            work_dim: self.work_dim,
            global: self.global,
            local: self.local,
            offset: self.offset,
            _keep: self._keep.clone(),
            group_ns: self.group_ns.clone(),
            merge: self.merge,
            rows: self.rows,
            sub_group_size: self.sub_group_size,
            workers: self.workers.clone(),
            device: self.device.get().and_then(|d| d.fresh()).map(std::sync::OnceLock::from).unwrap_or_default(),
        })
    }

    /// Runs every group on the worker pool; returns when all are done.
    pub(crate) fn run(self: Arc<Self>) -> bool {
        if self.global.contains(&0) {
            return true;
        }
        if self.prints {
            extern "C" {
                /// The C library's standard output stream.
                static stdout: *mut libc::FILE;
            }
            // What the host printed before the launch comes before what the kernel prints.
            // SAFETY: the C library initialises `stdout` before any code of ours runs;
            // fflush accepts any stream it opened.
            unsafe { libc::fflush(stdout) };
        }
        let n = self.num_groups();
        let me = self.clone();
        let _watched = super::watchdog::watch(self.clone());
        // A call merges groups of one row only.
        let merged = self.merge.min(n[0]);
        let ran = Pool::get().run(
            n.iter().product(),
            merged,
            &self.group_ns,
            self.copy_queue.clone(),
            self.workers.clone(),
            Box::new(move |w, groups| me.run_groups(w, groups, n)),
        );
        // A launch from the host runs the commands its work-items enqueued (and theirs)
        // before it completes.
        match self.device.get() {
            Some(d) if d.command.is_none() => d.work.drain() && ran,
            _ => ran,
        }
    }
}

impl super::enqueue::ChildLaunch for Launch {
    fn join(&self, side: super::enqueue::DeviceSide) {
        let _ = self.device.set(side);
    }

    fn run_all(self: Arc<Self>) -> bool {
        self.run()
    }
}

/// Stores `value` in `slot` for certain before what follows: a fault jumps out of the
/// guarded call, and a value the compiler kept in a register would be lost.
fn recorded(slot: &mut usize, value: usize) {
    // SAFETY: a plain store through a valid reference.
    unsafe { std::ptr::write_volatile(slot, value) };
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

impl super::watchdog::Stoppable for Launch {
    /// The launch's address: what its groups' guards are tagged with.
    fn tag(&self) -> usize {
        self as *const Launch as usize
    }

    fn stop(&self) {
        self.cancelled.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
