//! Contexts: a set of devices plus the callbacks the application attached.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use opencl_sys::*;
use parking_lot::Mutex;

use super::device::Device;
use super::object::{cl_object, Base};

pub(crate) type ContextNotify = unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void);
pub(crate) type ContextDestructor = unsafe extern "C" fn(cl_context, *mut c_void);

#[repr(C)]
pub(crate) struct Context {
    pub(crate) base: Base,
    pub(crate) devices: Vec<Arc<Device>>,
    /// The property list as given, for `CL_CONTEXT_PROPERTIES` (empty when none was).
    pub(crate) properties: Vec<cl_context_properties>,
    /// The error callback; kept so asynchronous errors can be reported later.
    pub(crate) notify: Option<(ContextNotify, usize)>,
    /// `clSVMAlloc`'s allocations.
    pub(crate) svm: super::svm::Allocations,
    destructors: Mutex<Vec<(ContextDestructor, usize)>>,
}

cl_object!(Context, CL_INVALID_CONTEXT);

impl Context {
    pub(crate) fn new(
        devices: Vec<Arc<Device>>,
        properties: Vec<cl_context_properties>,
        notify: Option<(ContextNotify, usize)>,
    ) -> Arc<Context> {
        let (base, svm, destructors) = (Base::new(), Default::default(), Mutex::new(Vec::new()));
        Arc::new(Context { base, devices, properties, notify, svm, destructors })
    }

    /// Tells the application's error callback, if any, why a call failed ("information
    /// on errors that occur in this context").
    pub(crate) fn notify_error(&self, why: &str) {
        if let Some((f, user_data)) = self.notify {
            let text = std::ffi::CString::new(why.replace('\0', " ")).unwrap_or_default();
            // SAFETY: the application registered `f` with `user_data` for this context;
            // the string outlives the call.
            unsafe { f(text.as_ptr(), std::ptr::null(), 0, user_data as *mut c_void) };
        }
    }

    pub(crate) fn has_device(&self, device: &Arc<Device>) -> bool {
        self.devices.iter().any(|d| Arc::ptr_eq(d, device))
    }

    pub(crate) fn add_destructor(&self, f: ContextDestructor, user_data: usize) {
        self.destructors.lock().push((f, user_data));
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // "called in the reverse order in which they were registered" and before the
        // context's resources are freed.
        let handle = self as *mut Context as cl_context;
        for (f, user_data) in self.destructors.get_mut().drain(..).rev() {
            // SAFETY: the application registered `f` for exactly this call.
            unsafe { f(handle, user_data as *mut c_void) };
        }
    }
}
