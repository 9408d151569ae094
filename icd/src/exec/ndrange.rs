//! One kernel launch over an NDRange: geometry, the argument block, and the mapping
//! from a group index to the group the launcher runs.

use std::any::Any;
use std::sync::Arc;

use ferrocl_kernel_abi::{Group, ItemFn, LaunchFn};

use super::pool::{Pool, Worker};
use super::SERVICES;

/// Alignment of each `__local` argument inside the worker's (128-byte aligned) arena:
/// enough for any OpenCL type.
const LOCAL_ALIGN: usize = 128;

pub struct Launch {
    /// The kernel's name, for messages.
    pub kernel: Arc<str>,
    /// A group faulted (reported once).
    pub faulted: std::sync::atomic::AtomicBool,
    /// The watchdog stopped the launch: groups not yet started do not start.
    pub cancelled: std::sync::atomic::AtomicBool,
    pub launch: LaunchFn,
    /// Set for kernels that run their work-items as fibers.
    pub item: Option<ItemFn>,
    /// Frame memory per work-item of a kernel run as barrier regions.
    pub frame_size: usize,
    /// The kernel runs as barrier regions.
    pub regions: bool,
    /// The kernel's buffers exceed the last-level cache: async copies into them may
    /// bypass it.
    pub stream: bool,
    /// Set in async-copy validation mode.
    pub validation: Option<Arc<super::copies::validate::Launch>>,
    /// The kernel declares `__local` variables (which do not live in the arena).
    pub static_locals: bool,
    /// Built with `-cl-denorms-are-zero`: groups run flushing denormals to zero.
    pub flush_denormals: bool,
    /// The packed argument block.
    pub args: Vec<super::Aligned>,
    /// `(offset in the block, bytes)` of each `__local` argument.
    pub local_args: Vec<(usize, usize)>,
    /// Arena bytes the `__local` arguments take (checked against the arena at enqueue).
    pub local_arg_total: usize,
    pub work_dim: u32,
    pub global: [usize; 3],
    pub local: [usize; 3],
    pub offset: [usize; 3],
    /// Objects the kernel uses (buffers, the kernel library), kept alive until done.
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The kernel's recent cost per group (`Kernel::group_ns`), for the pool.
    pub group_ns: Arc<std::sync::atomic::AtomicU64>,
}

// SAFETY: the function pointers point into a library `keep` holds; the block holds
// plain bytes and addresses of buffers `keep` holds.
unsafe impl Send for Launch {}
unsafe impl Sync for Launch {}

/// Bytes of `__local` argument memory a launch needs in each worker's arena; `None`
/// when the sum does not fit in a `usize` (the sizes come from the application).
pub fn local_arg_bytes(mut sizes: impl Iterator<Item = usize>) -> Option<usize> {
    sizes.try_fold(0usize, |sum, s| sum.checked_add(s.checked_next_multiple_of(LOCAL_ALIGN)?))
}

impl Launch {
    fn num_groups(&self) -> [usize; 3] {
        [0, 1, 2].map(|d| self.global[d].div_ceil(self.local[d]))
    }

    /// Group `index` of a launch of `n` groups per dimension.
    fn group(&self, index: usize, n: [usize; 3]) -> Group {
        // Divisions cost tens of cycles each, per group: 1D launches need none.
        let id =
            if n[1] * n[2] == 1 { [index, 0, 0] } else { [index % n[0], (index / n[0]) % n[1], index / (n[0] * n[1])] };
        Group {
            group_id: id,
            // The last group of a dimension may be partial (non-uniform work-groups).
            local_size: [0, 1, 2].map(|d| self.local[d].min(self.global[d] - id[d] * self.local[d])),
            enqueued_local_size: self.local,
            global_offset: self.offset,
            global_size: self.global,
            num_groups: n,
            work_dim: self.work_dim,
            _pad: 0,
            services: &SERVICES,
            runtime: std::ptr::null_mut(),
            ..Default::default()
        }
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

    /// Runs group `index`; `false` when the kernel faulted in it.
    fn run_group(&self, w: &mut Worker, index: usize, n: [usize; 3]) -> bool {
        if self.cancelled.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        // Everything the kernel keeps on this thread's stack lies below this frame.
        let stack_marker = 0u8;
        let mut group = self.group(index, n);
        let args = self.args_for(w);
        let items: usize = group.local_size.iter().product();
        if self.frame_size > 0 {
            let bytes = self.frame_size * items;
            if w.frames.len() * 128 < bytes {
                w.frames = super::aligned_zeroed(bytes);
            }
            group.frames = w.frames.as_mut_ptr().cast();
            group.frames_end = group.frames.wrapping_byte_add(bytes);
        }
        let arena = w.arena.as_mut_ptr();
        group.local_begin = arena.cast();
        group.local_end = group.local_begin.wrapping_byte_add(self.local_arg_total);
        group.stack_top = std::ptr::addr_of!(stack_marker).cast_mut().cast();
        group.scratch = w.scratch.as_mut_ptr().cast();
        w.copies.begin(items, self.regions, self.stream);
        if let (Some(l), Some(v)) = (&self.validation, w.copies.validator()) {
            let arena = w.arena.as_ptr() as usize;
            // Without the library's answer for its own variables, copies into them could
            // not be told from strays: no local check then.
            let local =
                (!self.static_locals || l.static_local.is_some()).then(|| (arena, arena + self.local_arg_total));
            v.begin(l.clone(), group.group_id, group.local_size, local);
        }
        group.copies = (&mut w.copies as *mut super::copies::group::GroupCopies).cast();
        let _mode = self.flush_denormals.then(super::denormals::FlushDenormals::begin);
        // A hardware fault in the kernel ends the group (and fails the launch) instead
        // of the process.
        let fibers = &mut w.fibers;
        let ran = super::fault::guarded_as(super::watchdog::Stoppable::tag(self), || {
            // SAFETY: the launcher and item functions come from the kernel library that
            // `keep` holds, and take exactly these arguments.
            unsafe {
                match self.item {
                    Some(item) if items > 1 => {
                        if let Err(e) = fibers.run_group(item, &group, args) {
                            panic!("{e}");
                        }
                    }
                    _ => (self.launch)(&group, args),
                }
            }
        });
        let copied = w.copies.finish();
        match ran {
            Ok(()) if copied => true,
            Ok(()) => {
                if !self.faulted.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    eprintln!(
                        "FerroCL: an async copy of kernel {} faulted (an address it was given is not mapped), in \
                         work-group {:?}; the command fails with CL_OUT_OF_RESOURCES",
                        self.kernel, group.group_id
                    );
                }
                false
            }
            Err(fault) => {
                // SAFETY: the group's fibers are never resumed: the group is over.
                unsafe { w.fibers.abandon() };
                // The application learns of it from the command's status; this says why,
                // once per launch.
                if !self.faulted.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    eprintln!(
                        "FerroCL: kernel {} was ended by {fault}, in work-group {:?}; the command fails with \
                         CL_OUT_OF_RESOURCES",
                        self.kernel, group.group_id
                    );
                }
                false
            }
        }
    }

    /// Runs every group on the worker pool; returns when all are done.
    pub fn run(self: Arc<Self>) -> bool {
        if self.global.contains(&0) {
            return true;
        }
        let n = self.num_groups();
        let me = self.clone();
        let _watched = super::watchdog::watch(self.clone());
        Pool::get().run(n.iter().product(), &self.group_ns, Box::new(move |w, g| me.run_group(w, g, n)))
    }
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
