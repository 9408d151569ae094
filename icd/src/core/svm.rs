//! Shared virtual memory. On a CPU the device and the host share one address space, so
//! every SVM level is natural: an SVM allocation is host memory the context records
//! (for `clSVMFree`, `CL_MEM_USES_SVM_POINTER` and migration ranges), and fine-grain
//! system SVM is any pointer at all.

use std::alloc::{self, Layout};
use std::collections::BTreeMap;

use opencl_sys::*;
use parking_lot::Mutex;

/// The largest alignment `clSVMAlloc` accepts: a huge page.
pub(crate) const MAX_ALIGNMENT: usize = 2 << 20;
/// What `clSVMAlloc` aligns to when asked for 0: the largest OpenCL type (long16).
pub(crate) const DEFAULT_ALIGNMENT: usize = 128;

struct Allocation<M> {
    layout: Layout,
    /// What the API that made it records: SVM flags, or a USM allocation's kind.
    meta: M,
}

/// The host allocations of one context made through one API (SVM, USM), by start
/// address.
pub(crate) struct Allocations<M = cl_svm_mem_flags> {
    map: Mutex<BTreeMap<usize, Allocation<M>>>,
}

impl<M> Default for Allocations<M> {
    fn default() -> Self {
        Allocations { map: Mutex::new(BTreeMap::new()) }
    }
}

impl<M: Copy> Allocations<M> {
    /// `size` zeroed bytes aligned to `align` (a power of two, checked by the caller),
    /// or `None` when the heap refuses.
    pub(crate) fn alloc(&self, meta: M, size: usize, align: usize) -> Option<*mut u8> {
        let layout = Layout::from_size_align(size, align).ok()?;
        // SAFETY: size is non-zero (checked by the caller).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return None;
        }
        self.map.lock().insert(ptr as usize, Allocation { layout, meta });
        Some(ptr)
    }

    /// Frees the allocation starting at address `ptr`; false if there is none.
    pub(crate) fn free(&self, ptr: usize) -> bool {
        match self.map.lock().remove(&ptr) {
            // SAFETY: allocated by `alloc` with exactly this layout, and now forgotten.
            Some(a) => unsafe {
                alloc::dealloc(ptr as *mut u8, a.layout);
                true
            },
            None => false,
        }
    }

    /// The allocation containing `ptr`: its start, size and what its API recorded.
    pub(crate) fn find(&self, ptr: usize) -> Option<(usize, usize, M)> {
        let map = self.map.lock();
        let (&start, a) = map.range(..=ptr).next_back()?;
        (ptr < start + a.layout.size()).then_some((start, a.layout.size(), a.meta))
    }
}

impl<M> Drop for Allocations<M> {
    /// Allocations the application never freed go with their context.
    fn drop(&mut self) {
        for (start, a) in std::mem::take(self.map.get_mut()) {
            // SAFETY: allocated by `alloc` with this layout; nothing can use it now.
            unsafe { alloc::dealloc(start as *mut u8, a.layout) };
        }
    }
}

/// `CL_DEVICE_SVM_CAPABILITIES`: every level, with atomics (the host's).
pub(crate) const CAPABILITIES: cl_device_svm_capabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
    | CL_DEVICE_SVM_FINE_GRAIN_BUFFER
    | CL_DEVICE_SVM_FINE_GRAIN_SYSTEM
    | CL_DEVICE_SVM_ATOMICS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_found_by_any_inner_pointer() {
        let a = Allocations::<cl_svm_mem_flags>::default();
        let p = a.alloc(CL_MEM_READ_WRITE, 100, 64).unwrap();
        assert_eq!(p as usize % 64, 0);
        assert_eq!(a.find(p as usize + 99), Some((p as usize, 100, CL_MEM_READ_WRITE)));
        assert_eq!(a.find(p as usize + 100), None);
        assert_eq!(a.find(p as usize - 1), None);
        assert!(!a.free(p as usize + 1));
        assert!(a.free(p as usize));
        assert_eq!(a.find(p as usize), None);
    }
}
