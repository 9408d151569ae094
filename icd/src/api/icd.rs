//! The ICD boundary: the dispatch table the loader calls through, the base every
//! handle starts with, and the registry that validates handles without dereferencing
//! them.
//!
//! A handle is `Arc::into_raw` of a `#[repr(C)]` object whose first field is [`Base`].
//! The loader reads the dispatch pointer at offset 0 (and, under cl_khr_icd 2.0, its own
//! per-platform data at offset 8). The driver never trusts a pointer it is given: it
//! looks the address up in [`HANDLES`] first, so garbage, freed or foreign handles get
//! the object's `CL_INVALID_*` code instead of a crash.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, LazyLock};

use opencl_sys::cl_icd::*;
use opencl_sys::*;
use parking_lot::Mutex;

use super::util::c_str;
use super::*;
use crate::core::device::Device;
pub(crate) use crate::core::object::{Base, CLResult, ClObject, Kind};
use crate::core::platform::Platform;

/// cl_khr_icd 2.0 marks a dispatch table by storing this tag in the two slots a loader
/// never calls (`clGetPlatformIDs` and `clUnloadCompiler`).
const CL_ICD2_TAG_KHR: isize = 0x4F50454E434C3331;

/// Live handles and their family. Entries are added when a handle is given out and
/// removed when its API reference count reaches zero. The platform and its device live
/// for the whole process: they are registered with the registry itself and never
/// released, so the loader may cache their handles.
static HANDLES: LazyLock<Mutex<HashMap<usize, Kind>>> = LazyLock::new(|| {
    let mut handles = HashMap::new();
    for (ptr, base, kind) in [
        (Arc::as_ptr(Platform::get()) as usize, &Platform::get().base, Kind::Platform),
        (Arc::as_ptr(Device::get()) as usize, &Device::get().base, Kind::Device),
    ] {
        stamp(base);
        handles.insert(ptr, kind);
    }
    Mutex::new(handles)
});

/// cl_khr_icd 2.0 dispatch data, set by the loader before it creates any object.
static DISPATCH_DATA: AtomicPtr<c_void> = AtomicPtr::new(null_mut());

/// Fills in the fields the loader reads from every handle.
fn stamp(base: &Base) {
    base.set_dispatch(&*DISPATCH as *const cl_icd_dispatch as *const c_void, DISPATCH_DATA.load(Ordering::Acquire));
}

/// Gives `obj` to the API as a new handle with reference count 1.
pub(crate) fn into_handle<T: ClObject>(obj: Arc<T>) -> *mut c_void {
    stamp(obj.base());
    let ptr = Arc::into_raw(obj);
    HANDLES.lock().insert(ptr as usize, T::KIND);
    ptr as *mut c_void
}

/// The handle of an object that has been given out (handles are the object's address).
pub(crate) fn handle_of<T: ClObject>(obj: &Arc<T>) -> *mut c_void {
    // The process-lifetime platform and device are given out by being registered.
    LazyLock::force(&HANDLES);
    Arc::as_ptr(obj) as *mut c_void
}

/// Validates a handle and takes a reference to its object.
pub(crate) fn from_handle<T: ClObject>(handle: *mut c_void) -> CLResult<Arc<T>> {
    let handles = HANDLES.lock();
    if handles.get(&(handle as usize)) != Some(&T::KIND) {
        return Err(T::INVALID);
    }
    // SAFETY: registered addresses are `Arc<T>` pointers of the registered family whose
    // API reference keeps them alive; holding the registry lock keeps a concurrent
    // release from dropping that reference before ours is taken.
    unsafe {
        Arc::increment_strong_count(handle as *const T);
        Ok(Arc::from_raw(handle as *const T))
    }
}

/// Validates a list of handles (`CL_INVALID_VALUE` for a null list with a count).
///
/// # Safety
/// `list` is null or points at `n` handles.
pub(crate) unsafe fn from_handles<T: ClObject>(list: *const *mut c_void, n: usize) -> CLResult<Vec<Arc<T>>> {
    if list.is_null() && n != 0 {
        return Err(CL_INVALID_VALUE);
    }
    super::util::slice(list, n).iter().map(|&h| from_handle(h)).collect()
}

pub(crate) fn retain<T: ClObject>(handle: *mut c_void) -> CLResult<()> {
    let handles = HANDLES.lock();
    if handles.get(&(handle as usize)) != Some(&T::KIND) {
        return Err(T::INVALID);
    }
    // SAFETY: validated above; the registry lock keeps the object alive meanwhile.
    let obj = unsafe { &*(handle as *const T) };
    obj.base().retain();
    Ok(())
}

pub(crate) fn release<T: ClObject>(handle: *mut c_void) -> CLResult<()> {
    let mut handles = HANDLES.lock();
    if handles.get(&(handle as usize)) != Some(&T::KIND) {
        return Err(T::INVALID);
    }
    // SAFETY: validated above; the registry lock keeps the object alive meanwhile.
    let obj = unsafe { &*(handle as *const T) };
    if obj.base().release() {
        handles.remove(&(handle as usize));
        drop(handles);
        obj.released();
        // SAFETY: this is the reference `into_handle` leaked; the handle is gone from
        // the registry so nobody else can reach it through the API.
        drop(unsafe { Arc::from_raw(handle as *const T) });
    }
    Ok(())
}

macro_rules! dispatch_table {
    ($($name:ident => $path:path),* $(,)?) => {
        fn build_dispatch() -> cl_icd_dispatch {
            // SAFETY: every field is an `Option` of a function pointer: all-zero is `None`.
            let mut d: cl_icd_dispatch = unsafe { std::mem::zeroed() };
            $( d.$name = Some($path); )*
            // SAFETY: the tag is never called; loaders compare it. A non-null function
            // pointer value is all the type requires.
            unsafe {
                d.clGetPlatformIDs = std::mem::transmute::<isize, clGetPlatformIDs_t>(CL_ICD2_TAG_KHR);
                d.clUnloadCompiler = std::mem::transmute::<isize, clUnloadCompiler_t>(CL_ICD2_TAG_KHR);
            }
            d
        }

        /// Every entry point by name, for cl_khr_icd 2.0 loaders that build their own
        /// table.
        fn entry_point(name: &[u8]) -> *mut c_void {
            $( if name == stringify!($name).as_bytes() {
                return $path as *const () as *mut c_void;
            } )*
            null_mut()
        }
    };
}

static DISPATCH: LazyLock<cl_icd_dispatch> = LazyLock::new(build_dispatch);

dispatch_table! {
    clGetPlatformInfo => platform::get_platform_info,
    clGetDeviceIDs => device::clGetDeviceIDs,
    clGetDeviceInfo => device::clGetDeviceInfo,
    clCreateSubDevices => device::clCreateSubDevices,
    clRetainDevice => device::clRetainDevice,
    clReleaseDevice => device::clReleaseDevice,
    clGetDeviceAndHostTimer => device::clGetDeviceAndHostTimer,
    clGetHostTimer => device::clGetHostTimer,
    clCreateContext => context::clCreateContext,
    clCreateContextFromType => context::clCreateContextFromType,
    clRetainContext => context::clRetainContext,
    clReleaseContext => context::clReleaseContext,
    clGetContextInfo => context::clGetContextInfo,
    clSetContextDestructorCallback => context::clSetContextDestructorCallback,
    clCreateCommandQueue => queue::clCreateCommandQueue,
    clCreateCommandQueueWithProperties => queue::clCreateCommandQueueWithProperties,
    clRetainCommandQueue => queue::clRetainCommandQueue,
    clReleaseCommandQueue => queue::clReleaseCommandQueue,
    clGetCommandQueueInfo => queue::clGetCommandQueueInfo,
    clSetCommandQueueProperty => queue::clSetCommandQueueProperty,
    clSetDefaultDeviceCommandQueue => queue::clSetDefaultDeviceCommandQueue,
    clFlush => queue::clFlush,
    clFinish => queue::clFinish,
    clEnqueueMarker => queue::clEnqueueMarker,
    clEnqueueMarkerWithWaitList => queue::clEnqueueMarkerWithWaitList,
    clEnqueueBarrier => queue::clEnqueueBarrier,
    clEnqueueBarrierWithWaitList => queue::clEnqueueBarrierWithWaitList,
    clEnqueueWaitForEvents => queue::clEnqueueWaitForEvents,
    clCreateBuffer => memory::clCreateBuffer,
    clCreateBufferWithProperties => memory::clCreateBufferWithProperties,
    clCreateSubBuffer => memory::clCreateSubBuffer,
    clRetainMemObject => memory::clRetainMemObject,
    clReleaseMemObject => memory::clReleaseMemObject,
    clGetMemObjectInfo => memory::clGetMemObjectInfo,
    clSetMemObjectDestructorCallback => memory::clSetMemObjectDestructorCallback,
    clEnqueueReadBuffer => transfer::clEnqueueReadBuffer,
    clEnqueueWriteBuffer => transfer::clEnqueueWriteBuffer,
    clEnqueueCopyBuffer => transfer::clEnqueueCopyBuffer,
    clEnqueueFillBuffer => transfer::clEnqueueFillBuffer,
    clEnqueueReadBufferRect => transfer::clEnqueueReadBufferRect,
    clEnqueueWriteBufferRect => transfer::clEnqueueWriteBufferRect,
    clEnqueueCopyBufferRect => transfer::clEnqueueCopyBufferRect,
    clEnqueueMapBuffer => transfer::clEnqueueMapBuffer,
    clEnqueueUnmapMemObject => transfer::clEnqueueUnmapMemObject,
    clEnqueueMigrateMemObjects => transfer::clEnqueueMigrateMemObjects,
    clWaitForEvents => event::clWaitForEvents,
    clGetEventInfo => event::clGetEventInfo,
    clRetainEvent => event::clRetainEvent,
    clReleaseEvent => event::clReleaseEvent,
    clGetEventProfilingInfo => event::clGetEventProfilingInfo,
    clCreateUserEvent => event::clCreateUserEvent,
    clSetUserEventStatus => event::clSetUserEventStatus,
    clSetEventCallback => event::clSetEventCallback,
    clCreateProgramWithSource => program::clCreateProgramWithSource,
    clCreateProgramWithBinary => program::clCreateProgramWithBinary,
    clCreateProgramWithIL => program::clCreateProgramWithIL,
    clCreateProgramWithBuiltInKernels => program::clCreateProgramWithBuiltInKernels,
    clRetainProgram => program::clRetainProgram,
    clReleaseProgram => program::clReleaseProgram,
    clBuildProgram => program::clBuildProgram,
    clCompileProgram => program::clCompileProgram,
    clLinkProgram => program::clLinkProgram,
    clUnloadPlatformCompiler => program::clUnloadPlatformCompiler,
    clGetProgramInfo => program::clGetProgramInfo,
    clGetProgramBuildInfo => program::clGetProgramBuildInfo,
    clSetProgramReleaseCallback => program::clSetProgramReleaseCallback,
    clSetProgramSpecializationConstant => program::clSetProgramSpecializationConstant,
    clCreateKernel => kernel::clCreateKernel,
    clCreateKernelsInProgram => kernel::clCreateKernelsInProgram,
    clRetainKernel => kernel::clRetainKernel,
    clReleaseKernel => kernel::clReleaseKernel,
    clSetKernelArg => kernel::clSetKernelArg,
    clGetKernelInfo => kernel::clGetKernelInfo,
    clGetKernelWorkGroupInfo => kernel::clGetKernelWorkGroupInfo,
    clGetKernelArgInfo => kernel::clGetKernelArgInfo,
    clGetKernelSubGroupInfo => kernel::clGetKernelSubGroupInfo,
    clGetKernelSubGroupInfoKHR => kernel::clGetKernelSubGroupInfo,
    clCloneKernel => kernel::clCloneKernel,
    clSetKernelArgSVMPointer => kernel::clSetKernelArgSVMPointer,
    clSetKernelExecInfo => kernel::clSetKernelExecInfo,
    clEnqueueNDRangeKernel => kernel::clEnqueueNDRangeKernel,
    clEnqueueTask => kernel::clEnqueueTask,
    clEnqueueNativeKernel => kernel::clEnqueueNativeKernel,
    clCreateImage2D => image::clCreateImage2D,
    clCreateImage3D => image::clCreateImage3D,
    clCreateImage => image::clCreateImage,
    clCreateImageWithProperties => image::clCreateImageWithProperties,
    clGetSupportedImageFormats => image::clGetSupportedImageFormats,
    clGetImageInfo => image::clGetImageInfo,
    clEnqueueReadImage => image::clEnqueueReadImage,
    clEnqueueWriteImage => image::clEnqueueWriteImage,
    clEnqueueCopyImage => image::clEnqueueCopyImage,
    clEnqueueFillImage => image::clEnqueueFillImage,
    clEnqueueCopyImageToBuffer => image::clEnqueueCopyImageToBuffer,
    clEnqueueCopyBufferToImage => image::clEnqueueCopyBufferToImage,
    clEnqueueMapImage => image::clEnqueueMapImage,
    clCreateSampler => sampler::clCreateSampler,
    clCreateSamplerWithProperties => sampler::clCreateSamplerWithProperties,
    clRetainSampler => sampler::clRetainSampler,
    clReleaseSampler => sampler::clReleaseSampler,
    clGetSamplerInfo => sampler::clGetSamplerInfo,
    clCreatePipe => memory::clCreatePipe,
    clGetPipeInfo => memory::clGetPipeInfo,
    clSVMAlloc => svm::clSVMAlloc,
    clSVMFree => svm::clSVMFree,
    clEnqueueSVMFree => svm::clEnqueueSVMFree,
    clEnqueueSVMMemcpy => svm::clEnqueueSVMMemcpy,
    clEnqueueSVMMemFill => svm::clEnqueueSVMMemFill,
    clEnqueueSVMMap => svm::clEnqueueSVMMap,
    clEnqueueSVMUnmap => svm::clEnqueueSVMUnmap,
    clEnqueueSVMMigrateMem => svm::clEnqueueSVMMigrateMem,
    clCreateFromGLBuffer => unsupported::clCreateFromGLBuffer,
    clCreateFromGLTexture => unsupported::clCreateFromGLTexture,
    clCreateFromGLTexture2D => unsupported::clCreateFromGLTexture2D,
    clCreateFromGLTexture3D => unsupported::clCreateFromGLTexture3D,
    clCreateFromGLRenderbuffer => unsupported::clCreateFromGLRenderbuffer,
    clGetGLObjectInfo => unsupported::clGetGLObjectInfo,
    clGetGLTextureInfo => unsupported::clGetGLTextureInfo,
    clEnqueueAcquireGLObjects => unsupported::clEnqueueAcquireGLObjects,
    clEnqueueReleaseGLObjects => unsupported::clEnqueueReleaseGLObjects,
    clGetGLContextInfoKHR => unsupported::clGetGLContextInfoKHR,
    clCreateEventFromGLsyncKHR => unsupported::clCreateEventFromGLsyncKHR,
    clGetExtensionFunctionAddress => get_extension_function_address,
    clGetExtensionFunctionAddressForPlatform => clGetExtensionFunctionAddressForPlatform,
}

// The three exported symbols below are thin wrappers: the driver never takes the
// address of an exported name, because the loader (or another driver) may define the
// same name and the dynamic linker would bind our reference to theirs.

unsafe extern "C" fn get_platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    platform::get_platform_ids(num_entries, platforms, num_platforms)
}

/// `clRetain*` and `clRelease*` of an object family: they change the API reference count
/// (`core::object::Base`), and a release of the application's last reference detaches
/// the object from what it was attached to (`ClObject::released`).
macro_rules! retain_release {
    ($ty:ty, $handle:ty, $retain:ident, $release:ident) => {
        #[ferrocl_macros::cl_entry_point]
        fn $retain(object: $handle) -> $crate::api::util::CLResult<()> {
            $crate::api::icd::retain::<$ty>(object)
        }

        #[ferrocl_macros::cl_entry_point]
        fn $release(object: $handle) -> $crate::api::util::CLResult<()> {
            $crate::api::icd::release::<$ty>(object)
        }
    };
}
pub(super) use retain_release;

/// The loader's entry into the driver: the platforms this ICD provides.
///
/// # Safety
/// Pointers follow the cl_khr_icd contract (null or valid for `num_entries`).
#[no_mangle]
pub unsafe extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    get_platform_ids(num_entries, platforms, num_platforms)
}

/// Extension functions reachable by name. Core entry points are not returned here (the
/// spec reserves this for extensions), except through the cl_khr_icd 2.0 query below.
fn extension_function(name: &[u8]) -> *mut c_void {
    match name {
        b"clIcdGetPlatformIDsKHR" => get_platform_ids as *const () as *mut c_void,
        b"clIcdGetFunctionAddressForPlatformKHR" => icd_get_function_address_for_platform as *const () as *mut c_void,
        b"clIcdSetPlatformDispatchDataKHR" => icd_set_platform_dispatch_data as *const () as *mut c_void,
        // cl_khr_il_program's name for the core entry point.
        b"clCreateProgramWithILKHR" if crate::compiler::spirv::find().is_some() => {
            entry_point(b"clCreateProgramWithIL")
        }
        // cl_khr_create_command_queue's name for the core entry point.
        b"clCreateCommandQueueWithPropertiesKHR" => entry_point(b"clCreateCommandQueueWithProperties"),
        b"clGetKernelSuggestedLocalWorkSizeKHR" => {
            kernel::clGetKernelSuggestedLocalWorkSizeKHR as *const () as *mut c_void
        }
        _ => usm::function(name).or_else(|| command_buffer::function(name)).unwrap_or(null_mut()),
    }
}

unsafe extern "C" fn get_extension_function_address(func_name: *const c_char) -> *mut c_void {
    c_str(func_name).map_or(null_mut(), |n| extension_function(n.to_bytes()))
}

/// # Safety
/// `func_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    get_extension_function_address(func_name)
}

unsafe extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    match from_handle::<Platform>(platform) {
        Ok(_) => get_extension_function_address(func_name),
        Err(_) => null_mut(),
    }
}

unsafe extern "C" fn icd_get_function_address_for_platform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    if from_handle::<Platform>(platform).is_err() {
        return null_mut();
    }
    match c_str(func_name) {
        Some(n) => match entry_point(n.to_bytes()) {
            p if p.is_null() => extension_function(n.to_bytes()),
            p => p,
        },
        None => null_mut(),
    }
}

unsafe extern "C" fn icd_set_platform_dispatch_data(platform: cl_platform_id, data: *mut c_void) -> cl_int {
    if from_handle::<Platform>(platform).is_err() {
        return CL_INVALID_PLATFORM;
    }
    DISPATCH_DATA.store(data, Ordering::Release);
    // The platform and device exist before the loader calls this; later objects copy
    // the value when they are given out.
    Platform::get().base.set_dispatch_data(data);
    Device::get().base.set_dispatch_data(data);
    CL_SUCCESS
}
