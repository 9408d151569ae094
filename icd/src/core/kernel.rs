//! Kernel objects: one kernel of a built program and its argument values.

use std::any::Any;
use std::sync::Arc;

use opencl_sys::*;
use parking_lot::Mutex;

use super::device::Device;
use super::executable::{Entry, Executable};
use super::memory::Mem;
use super::object::{cl_object, Base, CLResult};
use super::program::Program;
use crate::compiler::kernel_info;
use crate::exec::copies::validate;
use crate::exec::ndrange::{local_arg_bytes, Launch};

#[derive(Clone)]
pub(crate) enum ArgValue {
    Bytes(Vec<u8>),
    /// A buffer, or NULL. Weak: setting an argument does not keep the buffer alive past
    /// the application's last release (its destructor callbacks must run then; the
    /// CTS's retain_mem_object_set_kernel_arg waits for them). A launch holds it.
    Buffer(Option<std::sync::Weak<Mem>>),
    /// A `__local` argument of this many bytes.
    Local(usize),
    /// An image; weak like buffers.
    Image(std::sync::Weak<Mem>),
    /// A pointer given with `clSetKernelArgSVMPointer`: any address (fine-grain system
    /// SVM), passed as it is.
    Svm(usize),
}

#[repr(C)]
pub(crate) struct Kernel {
    pub(crate) base: Base,
    pub(crate) program: Arc<Program>,
    /// The program's code as built when the kernel was created.
    code: Arc<Executable>,
    pub(crate) info: kernel_info::Kernel,
    /// The entry points for the shapes of launch seen so far, by the formats of the
    /// image arguments (`Executable::entry_for`): a kernel launched again finds them
    /// here without the program's table.
    entries: Mutex<Vec<(Vec<u32>, Entry)>>,
    /// One slot per argument of `info`, set by `set_arg`.
    args: Mutex<Vec<Option<ArgValue>>>,
    /// What a work-group of this kernel has cost lately (ns, 0: unknown): the pool runs
    /// launches too small to pay for waking a worker on the issuing thread alone.
    pub(crate) group_ns: Arc<std::sync::atomic::AtomicU64>,
    /// Its last launch with copy workers gave them copies (`helpers::CopyQueue::settle`).
    copies_given: Arc<std::sync::atomic::AtomicBool>,
}

// SAFETY: the entry points' function pointers point into the libraries `entries` holds,
// which the kernel keeps loaded.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

cl_object!(Kernel, CL_INVALID_KERNEL;
    /// Detached from its program when the application releases it, not when the last
    /// launch holding it ends: a program may be built again right after its kernels'
    /// release (the CTS's multiple_build_program), while a worker may still hold it.
    fn released(&self) {
        self.program.kernel_detached();
    }
);

impl Kernel {
    /// The application's kernel `name` (`None` for a block's kernel, which is the
    /// driver's).
    pub(crate) fn new(program: Arc<Program>, code: Arc<Executable>, name: &str) -> Option<Arc<Kernel>> {
        if kernel_info::is_block_kernel(name) {
            return None;
        }
        let info = code.info.kernels.iter().find(|k| k.name == name)?.clone();
        let args = Mutex::new(vec![None; info.args.len()]);
        program.kernel_attached();
        let (group_ns, entries, copies_given) = Default::default();
        Some(Arc::new(Kernel { base: Base::new(), program, code, info, entries, args, group_ns, copies_given }))
    }

    /// Whether the kernel's program has blocks' kernels, which its kernels may enqueue
    /// (`super::device_enqueue`), and the program's code they come from.
    pub(crate) fn enqueues(&self) -> Option<&Arc<Executable>> {
        self.code.has_blocks.then_some(&self.code)
    }

    /// The kernel of a block kernel code enqueues (`super::device_enqueue`): not the
    /// application's, so not counted as attached to the program.
    pub(crate) fn internal(program: Arc<Program>, code: Arc<Executable>, name: &str) -> Option<Arc<Kernel>> {
        let info = code.info.kernels.iter().find(|k| k.name == name)?.clone();
        let args = Mutex::new(vec![None; info.args.len()]);
        let (group_ns, entries, copies_given) = Default::default();
        Some(Arc::new(Kernel { base: Base::new(), program, code, info, entries, args, group_ns, copies_given }))
    }

    /// `clCloneKernel`: same kernel, a copy of the argument values.
    pub(crate) fn duplicate(&self) -> Arc<Kernel> {
        self.program.kernel_attached();
        self.copy()
    }

    /// A copy holding the arguments set now, which the application never sees: a
    /// command buffer's kernel command keeps its own arguments in one. It does not
    /// count as a kernel attached to the program.
    pub(crate) fn copy(&self) -> Arc<Kernel> {
        Arc::new(Kernel {
            base: Base::new(),
            program: self.program.clone(),
            code: self.code.clone(),
            info: self.info.clone(),
            entries: Mutex::new(self.entries.lock().clone()),
            args: Mutex::new(self.args.lock().clone()),
            group_ns: Default::default(),
            copies_given: Default::default(),
        })
    }
}

/// The geometry of one launch as the application gave it.
#[derive(Clone, Copy)]
pub(crate) struct NdRange {
    /// 1 to 3.
    pub(crate) dims: usize,
    /// Sizes and offsets, 1 and 0 past `dims`.
    pub(crate) global: [usize; 3],
    pub(crate) offset: [usize; 3],
    /// `None` when the application leaves the work-group size to the driver.
    pub(crate) local: Option<[usize; 3]>,
}

impl Kernel {
    /// `__local` bytes a launch needs: the kernel's own variables plus the local
    /// arguments set so far.
    /// `clSetKernelArg*`: the value of argument `index`, checked by the caller against
    /// the argument's kind; `CL_INVALID_ARG_INDEX` past the last argument.
    pub(crate) fn set_arg(&self, index: usize, value: ArgValue) -> CLResult<()> {
        *self.args.lock().get_mut(index).ok_or(CL_INVALID_ARG_INDEX)? = Some(value);
        Ok(())
    }

    pub(crate) fn local_mem_size(&self) -> u64 {
        let args = self.args.lock();
        let local = local_arg_bytes(args.iter().filter_map(|a| match a {
            Some(ArgValue::Local(s)) => Some(*s),
            _ => None,
        }));
        // An overflowing sum is refused at enqueue; the query reports the most it can.
        self.info.static_local_size.saturating_add(local.map_or(u64::MAX, |l| l as u64))
    }

    /// `CL_KERNEL_WORK_GROUP_SIZE`: the device's maximum.
    pub(crate) fn max_work_group_size(&self, device: &Device) -> usize {
        device.limits.max_work_group_size
    }

    /// Prepares a launch over `range` on `device` with the arguments as they are now
    /// (later `clSetKernelArg` calls do not affect it): chooses the work-group size when
    /// the application did not, checks the geometry and arguments as
    /// `clEnqueueNDRangeKernel` must, and packs the argument block. `workers` run it
    /// (`None`: all the pool's).
    pub(crate) fn launch(
        self: &Arc<Self>,
        device: &Device,
        range: NdRange,
        workers: Option<crate::exec::pool::Workers>,
    ) -> CLResult<Arc<Launch>> {
        let NdRange { dims, global, offset, local } = range;
        let limits = &device.limits;
        // "CL_INVALID_WORK_ITEM_SIZE if the number of work-items specified in any of
        // local_work_size[0], ... local_work_size[work_dim - 1] is greater than the
        // corresponding values specified by CL_DEVICE_MAX_WORK_ITEM_SIZES[0], ...": the
        // application's group is checked before the range it cuts, whose overflow a
        // huge group would otherwise be reported as.
        if let Some(l) = local {
            if (0..dims).any(|d| l[d] == 0) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if (0..dims).any(|d| l[d] > limits.max_work_item_sizes[d]) {
                return Err(CL_INVALID_WORK_ITEM_SIZE);
            }
        }
        // Every work-item has a linear id (`get_global_linear_id`, the group count), so
        // their number must be a size_t: "CL_INVALID_GLOBAL_WORK_SIZE if any of the values
        // ... exceed the maximum value representable by size_t on the device".
        if global.iter().try_fold(1usize, |n, &g| n.checked_mul(g)).is_none() {
            return Err(CL_INVALID_GLOBAL_WORK_SIZE);
        }
        let local = self.group_size(device, dims, global, local)?;

        let Packed { block, mut keep, local_args, buffers, images } = self.pack_args()?;
        let entry = self.entry(&images)?;
        keep.push(entry.library.clone());
        let validation =
            validate::Launch::when_validating(&self.info.name, &buffers, entry.library.static_local_query());
        // "CL_OUT_OF_RESOURCES if there is a failure to queue the execution instance of
        // kernel on the command-queue because of insufficient resources needed to execute
        // the kernel": __local memory over the device's size.
        // The arguments live in the worker's arena, which is the device's figure; the
        // kernel's own variables may take the total further (see LOCAL_MEM_WITH_VARIABLES).
        let local_arg_total = local_arg_bytes(local_args.iter().map(|&(_, s)| s)).ok_or(CL_OUT_OF_RESOURCES)?;
        let local_bytes = self.info.static_local_size.saturating_add(local_arg_total as u64);
        if local_arg_total as u64 > limits.local_mem_size || local_bytes > crate::core::device::LOCAL_MEM_WITH_VARIABLES
        {
            return Err(CL_OUT_OF_RESOURCES);
        }
        // A kernel with barriers runs its groups as regions, one item loop per region:
        // there a loop whose group size is a constant pays (`Executable::fixed_launch`).
        let fixed = (self.info.regions && self.info.reqd_work_group_size.is_none() && validation.is_none())
            .then(|| {
                let n_groups: usize = (0..3).map(|d| global[d].div_ceil(local[d])).product();
                let estimate = self.group_ns.load(std::sync::atomic::Ordering::Relaxed).saturating_mul(n_groups as u64);
                self.code.fixed_launch(&self.info.name, &images, local, estimate)
            })
            .flatten();
        let launch = match fixed {
            Some(fixed) => {
                keep.push(fixed.library);
                fixed.launch
            }
            None => entry.launch,
        };
        // Validation mode checks each group apart.
        let group_use = if validation.is_some() { kernel_info::GroupUse::Whole } else { self.info.group_use };
        let merge = crate::exec::ndrange::merge_for(group_use != kernel_info::GroupUse::Whole, local);
        let copy_queue = (self.info.driver_copies && validation.is_none() && crate::exec::copies::helpers::enabled())
            .then(|| Arc::new(crate::exec::copies::helpers::CopyQueue::new(self.copies_given.clone())));
        Ok(Arc::new(Launch {
            kernel: self.info.name.as_str().into(),
            faulted: Default::default(),
            cancelled: Default::default(),
            launch,
            item: entry.item,
            flat: entry.flat,
            frame_size: self.info.frame_size as usize,
            regions: self.info.regions,
            stream: buffers.iter().map(|(start, end)| end - start).sum::<usize>() as u64 > device.host.cache_bytes,
            validation,
            static_locals: self.info.static_local_size > 0,
            flush_denormals: build_option(&self.program, "-cl-denorms-are-zero"),
            prints: self.info.prints,
            copy_queue,
            args: block,
            local_args,
            local_arg_total,
            work_dim: dims as u32,
            global,
            local,
            offset,
            _keep: keep,
            group_ns: self.group_ns.clone(),
            merge,
            rows: group_use == kernel_info::GroupUse::Ids,
            sub_group_size: self.info.sub_group_size(),
            workers,
            device: Default::default(),
        }))
    }

    /// Some argument has not been set.
    pub(crate) fn missing_args(&self) -> bool {
        self.args.lock().iter().any(Option::is_none)
    }

    /// `clGetKernelSuggestedLocalWorkSizeKHR`: the work-group size a launch over
    /// `global` given no local size gets, once every argument is set.
    pub(crate) fn suggested_group_size(
        &self,
        device: &Device,
        dims: usize,
        global: [usize; 3],
    ) -> CLResult<[usize; 3]> {
        // "CL_INVALID_KERNEL_ARGS if all argument values for kernel have not been set."
        if self.args.lock().iter().any(Option::is_none) {
            return Err(CL_INVALID_KERNEL_ARGS);
        }
        self.group_size(device, dims, global, None)
    }

    /// The work-group size of a launch: the application's, checked, or one the driver
    /// picks; the spec's errors for a size that does not fit the kernel or the range.
    fn group_size(
        &self,
        device: &Device,
        dims: usize,
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> CLResult<[usize; 3]> {
        let limits = &device.limits;
        let local = match local {
            None => match self.info.reqd_work_group_size {
                Some(r) => r,
                None => {
                    // A group of a kernel without barriers is a loop over its work-items:
                    // the bigger, the less the per-group cost (saxpy over 64 MiB: 38-40 GB/s
                    // at 256, 44-48 at 4096). Barrier kernels keep per-item frames or fiber
                    // stacks, so their groups stay small.
                    let synchronising = self.info.fibers || self.info.regions;
                    let cap = if synchronising { 256 } else { limits.max_work_group_size };
                    pick_local_size(
                        global,
                        dims,
                        limits.max_work_item_sizes,
                        cap.min(self.max_work_group_size(device)),
                        device.compute_units() as usize,
                    )
                }
            },
            // Checked by `launch`.
            Some(l) => l,
        };
        // "CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and does not match the
        // required work-group size for kernel in the program source", "if the total number of
        // work-items in the work-group ... is greater than the value specified by
        // CL_KERNEL_WORK_GROUP_SIZE", and (uniform work-groups) "if the number of work-items
        // specified in global_work_size is not evenly divisible by the size of work-group".
        if self.info.reqd_work_group_size.is_some_and(|r| r != local) {
            return Err(CL_INVALID_WORK_GROUP_SIZE);
        }
        if local.iter().product::<usize>() > self.max_work_group_size(device) {
            return Err(CL_INVALID_WORK_GROUP_SIZE);
        }
        if !non_uniform_allowed(&self.program) && (0..dims).any(|d| global[d] % local[d] != 0) {
            return Err(CL_INVALID_WORK_GROUP_SIZE);
        }
        Ok(local)
    }

    /// The argument block as the arguments are now (later `clSetKernelArg` calls do not
    /// affect a launch), with the objects it points into.
    fn pack_args(self: &Arc<Self>) -> CLResult<Packed> {
        let values = self.args.lock().clone();
        // "CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified."
        if values.iter().any(Option::is_none) {
            return Err(CL_INVALID_KERNEL_ARGS);
        }
        let mut block = crate::exec::aligned_zeroed(self.info.args_size);
        // SAFETY: plain byte storage viewed as bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(block.as_mut_ptr().cast::<u8>(), block.len() * 128) };
        let mut keep: Vec<Arc<dyn Any + Send + Sync>> = vec![self.clone()];
        let mut local_args = Vec::new();
        let mut buffers = Vec::new();
        let mut images = Vec::new();
        for (a, v) in self.info.args.iter().zip(values.into_iter().flatten()) {
            match v {
                ArgValue::Bytes(b) => bytes[a.offset..a.offset + b.len()].copy_from_slice(&b),
                ArgValue::Buffer(Some(weak)) => {
                    // A buffer released since it was set: using it is an error, not a
                    // dangling pointer.
                    let m = weak.upgrade().ok_or(CL_INVALID_KERNEL_ARGS)?;
                    bytes[a.offset..a.offset + 8].copy_from_slice(&(m.data() as usize).to_ne_bytes());
                    buffers.push((m.data() as usize, m.data() as usize + m.size));
                    keep.push(m);
                }
                ArgValue::Buffer(None) => {}
                ArgValue::Svm(ptr) => {
                    bytes[a.offset..a.offset + 8].copy_from_slice(&ptr.to_ne_bytes());
                    // An allocation of the context counts like a buffer (async-copy
                    // validation, streaming stores); other addresses are the application's.
                    if let Some((start, size)) = self.program.context.allocation(ptr) {
                        buffers.push((start, start + size));
                    }
                }
                ArgValue::Image(weak) => {
                    let m = weak.upgrade().ok_or(CL_INVALID_KERNEL_ARGS)?;
                    let image = m.image.as_ref().ok_or(CL_INVALID_KERNEL_ARGS)?;
                    // The kernel gets the descriptor, which lives as long as `m`.
                    let desc = &image.kernel as *const ferrocl_kernel_abi::Image as usize;
                    images.push(image.kernel.key);
                    bytes[a.offset..a.offset + 8].copy_from_slice(&desc.to_ne_bytes());
                    buffers.push((m.data() as usize, m.data() as usize + m.size));
                    keep.push(m);
                }
                ArgValue::Local(size) => local_args.push((a.offset, size)),
            }
        }
        Ok(Packed { block, keep, local_args, buffers, images })
    }
}

impl Kernel {
    /// The entry points for a launch with images of these formats: the kernel's own
    /// table, else the program's code, which may make them now (the kernel's first
    /// launch of this shape). A failure goes into the program's build log: "there is no
    /// successfully built program executable" for this launch.
    fn entry(&self, images: &[u32]) -> CLResult<Entry> {
        if let Some((_, e)) = self.entries.lock().iter().find(|(f, _)| f.as_slice() == images) {
            return Ok(e.clone());
        }
        match self.code.entry_for(&self.info.name, images) {
            Ok(e) => {
                self.entries.lock().push((images.to_vec(), e.clone()));
                Ok(e)
            }
            Err(log) => {
                // The failure is kept (`Executable`): each launch gets it again, the log
                // says it once.
                // Said on stderr too, as a kernel fault is: runtimes (SYCL's) report
                // the launch's error code without the log.
                let mut build = self.program.build.lock();
                if !build.log.contains(&log) {
                    eprintln!("FerroCL: kernel {} could not be compiled for its launch:\n{log}", self.info.name);
                    build.log += &log;
                }
                Err(CL_INVALID_PROGRAM_EXECUTABLE)
            }
        }
    }
}

/// A launch's argument block and what it holds.
struct Packed {
    block: Vec<crate::exec::Aligned>,
    /// The kernel and the memory objects the block points into, alive until the launch ends.
    keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// (offset in the block, size) of each `__local` argument.
    local_args: Vec<(usize, usize)>,
    /// `[start, end)` of each buffer argument.
    buffers: Vec<(usize, usize)>,
    /// The format of each image argument (kernel-abi `image_key`), in order.
    images: Vec<u32>,
}

/// Whether the program was built with `option`.
fn build_option(p: &Program, option: &str) -> bool {
    p.build.lock().options.split_whitespace().any(|w| w == option)
}

fn non_uniform_allowed(p: &Program) -> bool {
    let opts = p.build.lock().options.clone();
    (opts.contains("-cl-std=CL2.0") || opts.contains("-cl-std=CL3.0")) && !opts.contains("-cl-uniform-work-group-size")
}

/// A local size for `global` when the application passes NULL: per dimension the
/// largest divisor within budget (at most `cap` work-items), leaving enough groups to
/// keep every worker busy.
fn pick_local_size(global: [usize; 3], dims: usize, max_items: [usize; 3], cap: usize, workers: usize) -> [usize; 3] {
    let total: usize = global.iter().product();
    let target = (total / (workers * 4)).clamp(1, cap.max(1));
    let mut local = [1; 3];
    let mut budget = target;
    for d in 0..dims {
        let cap = budget.min(max_items[d]).min(global[d]).max(1);
        local[d] = (1..=cap).rev().find(|c| global[d] % c == 0).unwrap_or(1);
        budget = (budget / local[d]).max(1);
    }
    local
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_local_sizes_divide_and_spread() {
        let p = |g, d| pick_local_size(g, d, [1024; 3], 256, 2);
        assert_eq!(p([1024, 1, 1], 1), [128, 1, 1]);
        assert_eq!(p([1 << 20, 1, 1], 1), [256, 1, 1]);
        assert_eq!(pick_local_size([1 << 20, 1, 1], 1, [4096; 3], 4096, 2), [4096, 1, 1]);
        assert_eq!(p([7, 1, 1], 1), [1, 1, 1]);
        assert_eq!(p([1, 1, 1], 1), [1, 1, 1]);
        let l = p([640, 480, 1], 2);
        assert!(640 % l[0] == 0 && 480 % l[1] == 0 && l[0] * l[1] <= 256);
    }
}
