//! Device-side enqueue, the objects' part: device queues (`CL_QUEUE_ON_DEVICE`), the
//! device's limits for them, and the `Spawner` through which the executor's
//! `exec::enqueue` makes a launch of a block's kernel for kernel code.
//!
//! A device queue holds no thread and no commands of its own: what kernel code enqueues
//! to it runs in the tree of the host command that enqueued the first parent
//! (`exec::enqueue::DeviceWork`), so the queue is a name kernel code gives and a limit
//! on how many commands it holds at once.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use ferrocl_kernel_abi::{clk, DeviceOp, NdRange as AbiRange};
use opencl_sys::*;
use parking_lot::Mutex;

use super::device::Device;
use super::executable::Executable;
use super::kernel::{ArgValue, Kernel, NdRange};
use super::program::Program;
use super::queue::Queue;
use crate::compiler::kernel_info::{self, SUB_GROUP_SIZE};
use crate::exec::enqueue::Spawner;
use crate::exec::ndrange::Launch;

/// `CL_DEVICE_MAX_ON_DEVICE_QUEUES` (a figure, not a limit: see `DeviceQueues::add`).
pub(crate) const MAX_QUEUES: u32 = 64;
/// `CL_DEVICE_MAX_ON_DEVICE_EVENTS`: events kernel code holds at once.
pub(crate) const MAX_EVENTS: u32 = 4096;
/// What one command takes of a device queue's `CL_QUEUE_SIZE` (a command here is its
/// launch and its block's copy, about this many bytes beside the literal).
const COMMAND_BYTES: u32 = 128;
/// `CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE` (1,024 commands) and `_MAX_SIZE`
/// (65,536), Intel's CPU runtime's figures.
pub(crate) const PREFERRED_SIZE: u32 = 128 << 10;
pub(crate) const MAX_SIZE: u32 = 8 << 20;

/// A context's device queues.
#[derive(Default)]
pub(crate) struct DeviceQueues(Mutex<Inner>);

#[derive(Default)]
struct Inner {
    all: Vec<Weak<Queue>>,
    /// The default device queue of each device (by address).
    defaults: HashMap<usize, Weak<Queue>>,
}

fn key(device: &Arc<Device>) -> usize {
    Arc::as_ptr(device) as usize
}

impl DeviceQueues {
    /// Records a new device queue, the default of its device where `default`. A device
    /// queue costs a small record, so none is refused: the CTS makes the default queue
    /// and then `MAX_QUEUES` more.
    pub(crate) fn add(&self, q: &Arc<Queue>, default: bool) {
        let mut inner = self.0.lock();
        inner.all.retain(|q| q.strong_count() > 0);
        inner.all.push(Arc::downgrade(q));
        if default {
            inner.defaults.insert(key(&q.device), Arc::downgrade(q));
        }
    }

    /// The device's default device queue, while the application holds it.
    pub(crate) fn default_for(&self, device: &Arc<Device>) -> Option<Arc<Queue>> {
        self.0.lock().defaults.get(&key(device)).and_then(Weak::upgrade)
    }

    /// `clSetDefaultDeviceCommandQueue`.
    pub(crate) fn set_default(&self, q: &Arc<Queue>) {
        self.0.lock().defaults.insert(key(&q.device), Arc::downgrade(q));
    }

    /// The device queue kernel code names by `handle` (its handle is its address).
    fn find(&self, handle: usize) -> Option<Arc<Queue>> {
        self.0.lock().all.iter().filter_map(Weak::upgrade).find(|q| Arc::as_ptr(q) as usize == handle)
    }
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
    fn launch(&self, kernel: &str, block: usize, locals: &[usize], range: &AbiRange) -> Result<Arc<Launch>, i32> {
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
        k.launch_child(&self.device, range, self.workers.clone()).map_err(|e| match e {
            CL_OUT_OF_RESOURCES => clk::OUT_OF_RESOURCES,
            CL_INVALID_PROGRAM_EXECUTABLE | CL_INVALID_KERNEL_ARGS => clk::ENQUEUE_FAILURE,
            _ => clk::INVALID_NDRANGE,
        })
    }

    fn queue_capacity(&self, queue: usize) -> Option<usize> {
        let q = self.program.context.device_queues.find(queue)?;
        Arc::ptr_eq(&q.device, &self.device).then(|| (q.on_device.unwrap_or(0) / COMMAND_BYTES).max(1) as usize)
    }

    fn default_queue(&self) -> usize {
        self.program.context.device_queues.default_for(&self.device).map_or(0, |q| Arc::as_ptr(&q) as usize)
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
