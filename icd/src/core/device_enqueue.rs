//! Device-side enqueue, the objects' part: device queues (`CL_QUEUE_ON_DEVICE`), the
//! device's limits for them, and the `Spawner` through which the executor's
//! `exec::enqueue` makes a launch of a block's kernel for kernel code.
//!
//! A device queue holds no thread and no commands of its own: what kernel code enqueues
//! to it runs in the tree of the host command that enqueued the first parent
//! (`exec::enqueue::DeviceWork`), so the queue is a name kernel code gives and a limit
//! on how many commands it holds at once.

use std::collections::HashMap;
use std::sync::Arc;

use ferrocl_kernel_abi::{clk, DeviceOp, NdRange as AbiRange};
use opencl_sys::*;
use parking_lot::Mutex;

use super::device::Device;
use super::executable::Executable;
use super::kernel::{ArgValue, Kernel, NdRange};
use super::object::CLResult;
use super::program::Program;
use crate::compiler::kernel_info::{self, SUB_GROUP_SIZE};
use crate::exec::enqueue::{ChildLaunch, DeviceSide, Spawner};
use crate::exec::ndrange::Launch;

/// `CL_DEVICE_MAX_ON_DEVICE_QUEUES` (a figure, not a limit: see
/// `context::DeviceQueues::add`).
pub(crate) const MAX_QUEUES: u32 = 64;
/// `CL_DEVICE_MAX_ON_DEVICE_EVENTS`: events kernel code holds at once.
pub(crate) const MAX_EVENTS: u32 = 4096;
/// What one command takes of a device queue's `CL_QUEUE_SIZE`: the queue is a limit on
/// commands held at once, not memory of the device's (a command here is its launch and
/// its block's copy in host memory, about 1 KiB). Every child waits for its parent's
/// end, so a launch's work-items' children are all held at once: the CTS's command
/// buffer test has 4,096 on a queue of the preferred size.
const COMMAND_BYTES: u32 = 16;
/// `CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE` (16,384 commands) and `_MAX_SIZE`
/// (262,144).
pub(crate) const PREFERRED_SIZE: u32 = 256 << 10;
pub(crate) const MAX_SIZE: u32 = 4 << 20;

/// `Kernel::launch` for a command from the host: a launch of a kernel whose program has
/// blocks' kernels carries the tree of the commands its work-items enqueue.
pub(crate) fn launch(
    k: &Arc<Kernel>,
    device: &Arc<Device>,
    range: NdRange,
    workers: Option<crate::exec::pool::Workers>,
) -> CLResult<Arc<Launch>> {
    let launch = k.launch(device, range, workers.clone())?;
    if let Some(code) = k.enqueues() {
        let spawn = Spawn::new(k.program.clone(), code.clone(), device.clone(), workers);
        let _ = launch.device.set(DeviceSide::top(Arc::new(spawn)));
    }
    Ok(launch)
}

/// The key of a device in a context's `DeviceQueues`: its address.
pub(crate) fn key(device: &Arc<Device>) -> usize {
    Arc::as_ptr(device) as usize
}

/// What a launch of a kernel that may enqueue kernels can make: launches of the blocks'
/// kernels of its program, on its device and workers.
pub(crate) struct Spawn {
    program: Arc<Program>,
    code: Arc<Executable>,
    device: Arc<Device>,
    workers: Option<crate::exec::pool::Workers>,
    /// One kernel object per block kernel launched, whose copies take the arguments.
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
}

impl Spawn {
    pub(crate) fn new(
        program: Arc<Program>,
        code: Arc<Executable>,
        device: Arc<Device>,
        workers: Option<crate::exec::pool::Workers>,
    ) -> Spawn {
        Spawn { program, code, device, workers, kernels: Default::default() }
    }

    fn kernel(&self, name: &str) -> Option<Arc<Kernel>> {
        if !kernel_info::is_block_kernel(name) {
            return None;
        }
        let mut kernels = self.kernels.lock();
        if let Some(k) = kernels.get(name) {
            return Some(k.clone());
        }
        let k = Kernel::internal(self.program.clone(), self.code.clone(), name)?;
        kernels.insert(name.to_string(), k.clone());
        Some(k)
    }
}

/// The geometry of an `ndrange_t`; `None` where it cannot be one.
fn range_of(r: &AbiRange) -> Option<NdRange> {
    let dims = r.work_dim as usize;
    if !(1..=3).contains(&dims) {
        return None;
    }
    let pick = |v: [usize; 3], default: usize| [0, 1, 2].map(|d| if d < dims { v[d] } else { default });
    let local = pick(r.local, 1);
    let local = (!r.local[..dims].iter().all(|&l| l == 0)).then_some(local);
    Some(NdRange { dims, global: pick(r.global, 1), offset: pick(r.offset, 0), local })
}

impl Spawner for Spawn {
    fn launch(
        &self,
        kernel: &str,
        block: usize,
        locals: &[usize],
        range: &AbiRange,
    ) -> Result<Arc<dyn ChildLaunch>, i32> {
        let base = self.kernel(kernel).ok_or(clk::ENQUEUE_FAILURE)?;
        if base.info.args.len() != locals.len() + 1 {
            return Err(clk::INVALID_ARG_SIZE);
        }
        let range = range_of(range).ok_or(clk::INVALID_NDRANGE)?;
        // "CLK_INVALID_NDRANGE if ... global_work_size is 0": a launch of nothing is an
        // error here, unlike clEnqueueNDRangeKernel's.
        if range.global[..range.dims].contains(&0) {
            return Err(clk::INVALID_NDRANGE);
        }
        let k = base.copy();
        let set = |i, v| k.set_arg(i, v).map_err(|_| clk::ENQUEUE_FAILURE);
        set(0, ArgValue::Svm(block))?;
        for (i, &size) in locals.iter().enumerate() {
            set(i + 1, ArgValue::Local(size))?;
        }
        match k.launch(&self.device, range, self.workers.clone()) {
            Ok(launch) => Ok(launch),
            Err(CL_OUT_OF_RESOURCES) => Err(clk::OUT_OF_RESOURCES),
            Err(CL_INVALID_PROGRAM_EXECUTABLE | CL_INVALID_KERNEL_ARGS) => Err(clk::ENQUEUE_FAILURE),
            Err(_) => Err(clk::INVALID_NDRANGE),
        }
    }

    fn queue_capacity(&self, queue: usize) -> Option<usize> {
        let size = self.program.context.device_queues.size_of(queue, key(&self.device))?;
        Some((size / COMMAND_BYTES).max(1) as usize)
    }

    fn default_queue(&self) -> usize {
        self.program.context.device_queues.default_for(key(&self.device)).unwrap_or(0)
    }

    fn kernel_query(&self, kernel: &str, op: DeviceOp, range: Option<&AbiRange>) -> usize {
        let Some(k) = self.kernel(kernel) else { return 0 };
        let local = range.and_then(range_of).and_then(|r| r.local);
        match op {
            DeviceOp::KernelWorkGroupSize => k.max_work_group_size(&self.device),
            DeviceOp::KernelPreferredMultiple => self.device.vector_widths()[4] as usize,
            DeviceOp::KernelMaxSubGroupSize => local.map_or(SUB_GROUP_SIZE, |l| l[0].min(SUB_GROUP_SIZE)),
            DeviceOp::KernelSubGroupCount => local.map_or(1, |l| l[0].div_ceil(SUB_GROUP_SIZE) * l[1] * l[2]),
            _ => 0,
        }
    }

    fn max_events(&self) -> usize {
        MAX_EVENTS as usize
    }
}
