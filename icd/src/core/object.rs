//! What every object the API hands out has in common: the base the ICD loader reads, the
//! family it belongs to, and the result type of operations that fail with a spec code.
//!
//! The base's first two fields are the loader's (the dispatch table pointer, and under
//! cl_khr_icd 2.0 the loader's per-platform data). Core never fills them: the C
//! boundary does when it gives the object out as a handle (`api::icd`), so core knows
//! nothing of dispatch tables or handle registries.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use opencl_sys::cl_int;

/// The outcome of an operation that fails with an OpenCL error code.
pub(crate) type CLResult<T> = Result<T, cl_int>;

/// The fields every handle starts with, in the layout the ICD loader reads.
#[repr(C)]
pub(crate) struct Base {
    /// The ICD dispatch table (`cl_icd_dispatch`), set when the object is given out.
    dispatch: AtomicPtr<c_void>,
    /// cl_khr_icd 2.0: the loader's data for this platform, echoed in every object.
    dispatch_data: AtomicPtr<c_void>,
    /// The count the API sees (`CL_*_REFERENCE_COUNT`). Internal references are `Arc`
    /// clones and do not show here, so a fresh object reports 1 as the CTS expects.
    api_refs: AtomicU32,
}

impl Base {
    pub(crate) fn new() -> Base {
        Base {
            dispatch: AtomicPtr::new(null_mut()),
            dispatch_data: AtomicPtr::new(null_mut()),
            api_refs: AtomicU32::new(1),
        }
    }

    pub(crate) fn ref_count(&self) -> u32 {
        self.api_refs.load(Ordering::Acquire)
    }

    /// Fills the loader's fields; done by the C boundary before the handle escapes.
    pub(crate) fn set_dispatch(&self, table: *const c_void, data: *mut c_void) {
        self.dispatch.store(table.cast_mut(), Ordering::Release);
        self.dispatch_data.store(data, Ordering::Release);
    }

    /// cl_khr_icd 2.0: the loader may set its data after the object was given out.
    pub(crate) fn set_dispatch_data(&self, data: *mut c_void) {
        self.dispatch_data.store(data, Ordering::Release);
    }

    /// `clRetain*`.
    pub(crate) fn retain(&self) {
        self.api_refs.fetch_add(1, Ordering::AcqRel);
    }

    /// `clRelease*`: true when this was the application's last reference.
    pub(crate) fn release(&self) -> bool {
        self.api_refs.fetch_sub(1, Ordering::AcqRel) == 1
    }
}

impl Default for Base {
    fn default() -> Self {
        Self::new()
    }
}

/// Object families, used to tell handles of one family from another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Platform,
    Device,
    Context,
    Queue,
    Mem,
    Event,
    Program,
    Kernel,
    Sampler,
    CommandBuffer,
}

/// An object the API hands out as a handle.
pub(crate) trait ClObject: Send + Sync + Sized + 'static {
    const KIND: Kind;
    /// The error for an invalid handle of this family, e.g. `CL_INVALID_CONTEXT`.
    const INVALID: cl_int;
    fn base(&self) -> &Base;
    /// The application released its last reference. The object itself may live on a
    /// while (commands in flight hold it); what depends on the application's view (a
    /// program's attached kernels) changes now.
    fn released(&self) {}
}

/// `impl ClObject` for an object family whose struct has a `base: Base` field and
/// whose `Kind` variant has the struct's name: `cl_object!(Context, CL_INVALID_CONTEXT);`,
/// with any overrides of the trait's provided methods after a semicolon.
macro_rules! cl_object {
    ($ty:ident, $invalid:ident $(; $($item:item)*)?) => {
        impl $crate::core::object::ClObject for $ty {
            const KIND: $crate::core::object::Kind = $crate::core::object::Kind::$ty;
            const INVALID: opencl_sys::cl_int = opencl_sys::$invalid;
            fn base(&self) -> &$crate::core::object::Base {
                &self.base
            }
            $($($item)*)?
        }
    };
}
pub(crate) use cl_object;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_references_count_from_one() {
        let b = Base::new();
        assert_eq!(b.ref_count(), 1);
        b.retain();
        assert!(!b.release());
        assert!(b.release(), "the application's last release is reported");
    }
}
