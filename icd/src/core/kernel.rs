//! Kernel objects: one kernel of a built program and its argument values.

use std::sync::Arc;

use ferrocl_kernel_abi::{ItemFn, LaunchFn};
use opencl_sys::*;
use parking_lot::Mutex;

use super::memory::Mem;
use super::program::{KernelLibrary, Program};
use crate::api::icd::{Base, ClObject, Kind};
use crate::compiler::ir;

#[derive(Clone)]
pub enum ArgValue {
    Bytes(Vec<u8>),
    /// A buffer, or NULL.
    Buffer(Option<Arc<Mem>>),
    /// A `__local` argument of this many bytes.
    Local(usize),
}

#[repr(C)]
pub struct Kernel {
    pub base: Base,
    pub program: Arc<Program>,
    pub library: Arc<KernelLibrary>,
    pub info: ir::Kernel,
    pub launch: LaunchFn,
    pub item: Option<ItemFn>,
    pub args: Mutex<Vec<Option<ArgValue>>>,
}

// SAFETY: the function pointers point into `library`, which the kernel keeps loaded.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl ClObject for Kernel {
    const KIND: Kind = Kind::Kernel;
    const INVALID: cl_int = CL_INVALID_KERNEL;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Kernel {
    pub fn new(program: Arc<Program>, library: Arc<KernelLibrary>, name: &str) -> Option<Arc<Kernel>> {
        let info = library.kernel(name)?.clone();
        let (launch, item) = library.entry(name)?;
        let args = Mutex::new(vec![None; info.args.len()]);
        program.kernel_attached();
        Some(Arc::new(Kernel { base: Base::new(), program, library, info, launch, item, args }))
    }

    /// `clCloneKernel`: same kernel, a copy of the argument values.
    pub fn duplicate(&self) -> Arc<Kernel> {
        self.program.kernel_attached();
        Arc::new(Kernel {
            base: Base::new(),
            program: self.program.clone(),
            library: self.library.clone(),
            info: self.info.clone(),
            launch: self.launch,
            item: self.item,
            args: Mutex::new(self.args.lock().clone()),
        })
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.program.kernel_detached();
    }
}
