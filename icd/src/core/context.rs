//! Contexts: a set of devices plus the callbacks the application attached.

use std::any::Any;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Weak};

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
    /// `cl_intel_unified_shared_memory`'s allocations.
    pub(crate) usm: super::svm::Allocations<super::usm::Usm>,
    /// The context's command queues, for `clMemBlockingFreeINTEL`.
    queues: Mutex<Vec<Weak<dyn Drain>>>,
    destructors: Mutex<Vec<(ContextDestructor, usize)>>,
    /// The context's device queues (`CL_QUEUE_ON_DEVICE`) and, per device, the default
    /// one (`super::device_enqueue`).
    pub(crate) device_queues: DeviceQueues,
}

/// A command queue of the context, as the context sees it.
pub(crate) trait Drain: Send + Sync {
    /// Returns once every command enqueued so far has finished.
    fn drain(&self);
}

cl_object!(Context, CL_INVALID_CONTEXT);

impl Context {
    pub(crate) fn new(
        devices: Vec<Arc<Device>>,
        properties: Vec<cl_context_properties>,
        notify: Option<(ContextNotify, usize)>,
    ) -> Arc<Context> {
        let (base, svm, usm, destructors) = (Base::new(), Default::default(), Default::default(), Default::default());
        let (queues, device_queues) = Default::default();
        Arc::new(Context { base, devices, properties, notify, svm, usm, queues, destructors, device_queues })
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

    /// Records a command queue made in the context (dropped ones are forgotten).
    pub(crate) fn add_queue(&self, queue: Weak<dyn Drain>) {
        let mut queues = self.queues.lock();
        queues.retain(|q| q.strong_count() > 0);
        queues.push(queue);
    }

    /// Waits until every command enqueued in the context so far has finished.
    pub(crate) fn drain(&self) {
        let queues: Vec<_> = self.queues.lock().iter().filter_map(Weak::upgrade).collect();
        for q in queues {
            q.drain();
        }
    }

    /// The SVM or USM allocation of the context containing `ptr`: its start and size.
    pub(crate) fn allocation(&self, ptr: usize) -> Option<(usize, usize)> {
        let svm = self.svm.find(ptr).map(|(start, size, _)| (start, size));
        svm.or_else(|| self.usm.find(ptr).map(|(start, size, _)| (start, size)))
    }

    pub(crate) fn add_destructor(&self, f: ContextDestructor, user_data: usize) {
        self.destructors.lock().push((f, user_data));
    }
}

/// A context's device queues, by handle (a queue's address), each with its device's
/// address, its `CL_QUEUE_SIZE` and a weak reference telling whether the application
/// still holds it; and each device's default device queue. Kept apart from the queue
/// type, which builds on the context.
#[derive(Default)]
pub(crate) struct DeviceQueues(Mutex<DeviceQueueList>);

#[derive(Default)]
struct DeviceQueueList {
    all: Vec<DeviceQueue>,
    /// Device address -> the default queue's handle.
    defaults: HashMap<usize, usize>,
}

struct DeviceQueue {
    handle: usize,
    device: usize,
    size: u32,
    alive: Weak<dyn Any + Send + Sync>,
}

impl DeviceQueues {
    /// Records a new device queue, the default of its device where `default`. A device
    /// queue costs a record, so none is refused (the CTS makes the default queue and
    /// then `CL_DEVICE_MAX_ON_DEVICE_QUEUES` more).
    pub(crate) fn add(
        &self,
        handle: usize,
        device: usize,
        size: u32,
        alive: Weak<dyn Any + Send + Sync>,
        default: bool,
    ) {
        let mut list = self.0.lock();
        list.all.retain(|q| q.alive.strong_count() > 0);
        list.all.push(DeviceQueue { handle, device, size, alive });
        if default {
            list.defaults.insert(device, handle);
        }
    }

    fn live(list: &DeviceQueueList, handle: usize) -> Option<&DeviceQueue> {
        list.all.iter().find(|q| q.handle == handle && q.alive.strong_count() > 0)
    }

    /// The handle of the device's default device queue, while the application holds it.
    pub(crate) fn default_for(&self, device: usize) -> Option<usize> {
        let list = self.0.lock();
        let handle = *list.defaults.get(&device)?;
        Self::live(&list, handle).map(|q| q.handle)
    }

    /// `clSetDefaultDeviceCommandQueue`.
    pub(crate) fn set_default(&self, device: usize, handle: usize) {
        self.0.lock().defaults.insert(device, handle);
    }

    /// The `CL_QUEUE_SIZE` of the live device queue `handle` of `device`.
    pub(crate) fn size_of(&self, handle: usize, device: usize) -> Option<u32> {
        let list = self.0.lock();
        Self::live(&list, handle).filter(|q| q.device == device).map(|q| q.size)
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
