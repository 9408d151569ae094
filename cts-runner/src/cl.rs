//! The OpenCL host API, opened at run time from the system ICD loader.
//!
//! Linking `-lOpenCL` would make a machine without the loader fail before `main`;
//! opening it here lets the runner say what to install. Types and constants come from
//! `opencl-sys` (which, unlike `cl-sys`, covers OpenCL 3.0).

use std::ffi::c_void;
use std::sync::OnceLock;

use opencl_sys::cl_function_types::*;

pub use opencl_sys::*;

macro_rules! host_api {
    ($($name:ident: $ty:ty),* $(,)?) => {
        /// Entry points of the loader; `None` where an old loader lacks one.
        #[allow(non_snake_case)]
        pub struct Api {
            _lib: libloading::Library,
            $(pub $name: $ty,)*
        }

        impl Api {
            fn open() -> Result<Api, String> {
                // CTS_RUNNER_OPENCL_LIBRARY picks one loader (another build of ocl-icd, or
                // none at all: that is how the message below is tested).
                let names = match std::env::var("CTS_RUNNER_OPENCL_LIBRARY") {
                    Ok(path) => vec![path],
                    Err(_) => vec!["libOpenCL.so.1".to_string(), "libOpenCL.so".to_string()],
                };
                let lib = names
                    .iter()
                    // SAFETY: the ICD loader's initialisers are safe to run.
                    .find_map(|n| unsafe { libloading::Library::new(n) }.ok())
                    .ok_or_else(|| {
                        "no OpenCL ICD loader (libOpenCL.so.1) found: install it with 'apt-get install ocl-icd-libopencl1'"
                            .to_string()
                    })?;
                // SAFETY: each symbol is looked up under its OpenCL name and typed with
                // that function's C signature.
                unsafe {
                    Ok(Api {
                        $($name: lib.get::<$ty>(concat!(stringify!($name), "\0").as_bytes()).ok().and_then(|s| *s),)*
                        _lib: lib,
                    })
                }
            }
        }
    };
}

host_api! {
    clBuildProgram: clBuildProgram_t,
    clCloneKernel: clCloneKernel_t,
    clCompileProgram: clCompileProgram_t,
    clCreateBuffer: clCreateBuffer_t,
    clCreateBufferWithProperties: clCreateBufferWithProperties_t,
    clCreateCommandQueue: clCreateCommandQueue_t,
    clCreateCommandQueueWithProperties: clCreateCommandQueueWithProperties_t,
    clCreateContext: clCreateContext_t,
    clCreateContextFromType: clCreateContextFromType_t,
    clCreateImage: clCreateImage_t,
    clCreateImage2D: clCreateImage2D_t,
    clCreateImage3D: clCreateImage3D_t,
    clCreateImageWithProperties: clCreateImageWithProperties_t,
    clCreateKernel: clCreateKernel_t,
    clCreateKernelsInProgram: clCreateKernelsInProgram_t,
    clCreatePipe: clCreatePipe_t,
    clCreateProgramWithBinary: clCreateProgramWithBinary_t,
    clCreateProgramWithBuiltInKernels: clCreateProgramWithBuiltInKernels_t,
    clCreateProgramWithIL: clCreateProgramWithIL_t,
    clCreateProgramWithSource: clCreateProgramWithSource_t,
    clCreateSampler: clCreateSampler_t,
    clCreateSamplerWithProperties: clCreateSamplerWithProperties_t,
    clCreateSubBuffer: clCreateSubBuffer_t,
    clCreateSubDevices: clCreateSubDevices_t,
    clCreateUserEvent: clCreateUserEvent_t,
    clEnqueueBarrier: clEnqueueBarrier_t,
    clEnqueueBarrierWithWaitList: clEnqueueBarrierWithWaitList_t,
    clEnqueueCopyBuffer: clEnqueueCopyBuffer_t,
    clEnqueueCopyBufferRect: clEnqueueCopyBufferRect_t,
    clEnqueueCopyBufferToImage: clEnqueueCopyBufferToImage_t,
    clEnqueueCopyImage: clEnqueueCopyImage_t,
    clEnqueueCopyImageToBuffer: clEnqueueCopyImageToBuffer_t,
    clEnqueueFillBuffer: clEnqueueFillBuffer_t,
    clEnqueueFillImage: clEnqueueFillImage_t,
    clEnqueueMapBuffer: clEnqueueMapBuffer_t,
    clEnqueueMapImage: clEnqueueMapImage_t,
    clEnqueueMarker: clEnqueueMarker_t,
    clEnqueueMarkerWithWaitList: clEnqueueMarkerWithWaitList_t,
    clEnqueueMigrateMemObjects: clEnqueueMigrateMemObjects_t,
    clEnqueueNDRangeKernel: clEnqueueNDRangeKernel_t,
    clEnqueueNativeKernel: clEnqueueNativeKernel_t,
    clEnqueueReadBuffer: clEnqueueReadBuffer_t,
    clEnqueueReadBufferRect: clEnqueueReadBufferRect_t,
    clEnqueueReadImage: clEnqueueReadImage_t,
    clEnqueueSVMFree: clEnqueueSVMFree_t,
    clEnqueueSVMMap: clEnqueueSVMMap_t,
    clEnqueueSVMMemFill: clEnqueueSVMMemFill_t,
    clEnqueueSVMMemcpy: clEnqueueSVMMemcpy_t,
    clEnqueueSVMMigrateMem: clEnqueueSVMMigrateMem_t,
    clEnqueueSVMUnmap: clEnqueueSVMUnmap_t,
    clEnqueueTask: clEnqueueTask_t,
    clEnqueueUnmapMemObject: clEnqueueUnmapMemObject_t,
    clEnqueueWaitForEvents: clEnqueueWaitForEvents_t,
    clEnqueueWriteBuffer: clEnqueueWriteBuffer_t,
    clEnqueueWriteBufferRect: clEnqueueWriteBufferRect_t,
    clEnqueueWriteImage: clEnqueueWriteImage_t,
    clFinish: clFinish_t,
    clFlush: clFlush_t,
    clGetCommandQueueInfo: clGetCommandQueueInfo_t,
    clGetContextInfo: clGetContextInfo_t,
    clGetDeviceAndHostTimer: clGetDeviceAndHostTimer_t,
    clGetDeviceIDs: clGetDeviceIDs_t,
    clGetDeviceInfo: clGetDeviceInfo_t,
    clGetEventInfo: clGetEventInfo_t,
    clGetEventProfilingInfo: clGetEventProfilingInfo_t,
    clGetExtensionFunctionAddress: clGetExtensionFunctionAddress_t,
    clGetExtensionFunctionAddressForPlatform: clGetExtensionFunctionAddressForPlatform_t,
    clGetHostTimer: clGetHostTimer_t,
    clGetImageInfo: clGetImageInfo_t,
    clGetKernelArgInfo: clGetKernelArgInfo_t,
    clGetKernelInfo: clGetKernelInfo_t,
    clGetKernelSubGroupInfo: clGetKernelSubGroupInfo_t,
    clGetKernelWorkGroupInfo: clGetKernelWorkGroupInfo_t,
    clGetMemObjectInfo: clGetMemObjectInfo_t,
    clGetPipeInfo: clGetPipeInfo_t,
    clGetPlatformIDs: clGetPlatformIDs_t,
    clGetPlatformInfo: clGetPlatformInfo_t,
    clGetProgramBuildInfo: clGetProgramBuildInfo_t,
    clGetProgramInfo: clGetProgramInfo_t,
    clGetSamplerInfo: clGetSamplerInfo_t,
    clGetSupportedImageFormats: clGetSupportedImageFormats_t,
    clLinkProgram: clLinkProgram_t,
    clReleaseCommandQueue: clReleaseCommandQueue_t,
    clReleaseContext: clReleaseContext_t,
    clReleaseDevice: clReleaseDevice_t,
    clReleaseEvent: clReleaseEvent_t,
    clReleaseKernel: clReleaseKernel_t,
    clReleaseMemObject: clReleaseMemObject_t,
    clReleaseProgram: clReleaseProgram_t,
    clReleaseSampler: clReleaseSampler_t,
    clRetainCommandQueue: clRetainCommandQueue_t,
    clRetainContext: clRetainContext_t,
    clRetainDevice: clRetainDevice_t,
    clRetainEvent: clRetainEvent_t,
    clRetainKernel: clRetainKernel_t,
    clRetainMemObject: clRetainMemObject_t,
    clRetainProgram: clRetainProgram_t,
    clRetainSampler: clRetainSampler_t,
    clSVMAlloc: clSVMAlloc_t,
    clSVMFree: clSVMFree_t,
    clSetCommandQueueProperty: clSetCommandQueueProperty_t,
    clSetContextDestructorCallback: clSetContextDestructorCallback_t,
    clSetDefaultDeviceCommandQueue: clSetDefaultDeviceCommandQueue_t,
    clSetEventCallback: clSetEventCallback_t,
    clSetKernelArg: clSetKernelArg_t,
    clSetKernelArgSVMPointer: clSetKernelArgSVMPointer_t,
    clSetKernelExecInfo: clSetKernelExecInfo_t,
    clSetMemObjectDestructorCallback: clSetMemObjectDestructorCallback_t,
    clSetProgramReleaseCallback: clSetProgramReleaseCallback_t,
    clSetProgramSpecializationConstant: clSetProgramSpecializationConstant_t,
    clSetUserEventStatus: clSetUserEventStatus_t,
    clUnloadPlatformCompiler: clUnloadPlatformCompiler_t,
    clWaitForEvents: clWaitForEvents_t,
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The loader's entry points, or why they cannot be had.
pub fn api() -> Result<&'static Api, String> {
    API.get_or_init(Api::open).as_ref().map_err(Clone::clone)
}

/// Calls an OpenCL function through the loader:
/// `cl!(clGetPlatformIDs(0, null_mut(), &mut n))`. Panics with a clear message when
/// the loader is missing or too old to have the function.
#[macro_export]
macro_rules! cl {
    ($name:ident($($arg:expr),* $(,)?)) => {{
        let api = $crate::cl::api().unwrap_or_else(|e| panic!("{e}"));
        let f = api.$name.unwrap_or_else(|| panic!("the OpenCL ICD loader has no {}", stringify!($name)));
        #[allow(unused_unsafe)]
        // SAFETY: the caller passes arguments valid for this OpenCL entry point.
        unsafe { f($($arg),*) }
    }};
}

/// `cl_khr_command_buffer`'s entry points, looked up through the loader's
/// extension-function lookup as an application does (the benchmark and the tests use
/// them).
pub struct CommandBuffers {
    pub create:
        unsafe extern "C" fn(cl_uint, *const cl_command_queue, *const cl_properties, *mut cl_int) -> *mut c_void,
    pub release: unsafe extern "C" fn(*mut c_void) -> cl_int,
    pub retain: unsafe extern "C" fn(*mut c_void) -> cl_int,
    pub finalize: unsafe extern "C" fn(*mut c_void) -> cl_int,
    pub enqueue: unsafe extern "C" fn(
        cl_uint,
        *mut cl_command_queue,
        *mut c_void,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    pub info: unsafe extern "C" fn(*mut c_void, cl_uint, usize, *mut c_void, *mut usize) -> cl_int,
    pub barrier: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    pub fill: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_mem,
        *const c_void,
        usize,
        usize,
        usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    pub copy: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_mem,
        cl_mem,
        usize,
        usize,
        usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    pub svm_copy: Option<
        unsafe extern "C" fn(
            *mut c_void,
            cl_command_queue,
            *const cl_properties,
            *mut c_void,
            *const c_void,
            usize,
            cl_uint,
            *const cl_uint,
            *mut cl_uint,
            *mut *mut c_void,
        ) -> cl_int,
    >,
    pub ndrange: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_kernel,
        cl_uint,
        *const usize,
        *const usize,
        *const usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    /// `clRemapCommandBufferKHR` (cl_khr_command_buffer_multi_device), where offered.
    pub remap: Option<
        unsafe extern "C" fn(
            *mut c_void,
            cl_bool,
            cl_uint,
            *const cl_command_queue,
            cl_uint,
            *const *mut c_void,
            *mut *mut c_void,
            *mut cl_int,
        ) -> *mut c_void,
    >,
}

impl CommandBuffers {
    /// The entry points `platform` offers; `None` where a required one is missing
    /// (`svm_copy` and `remap` are optional: PoCL has no `clCommandSVMMemcpyKHR`).
    ///
    /// # Safety
    /// `platform` is a platform handle the loader gave.
    pub unsafe fn of(platform: cl_platform_id) -> Option<CommandBuffers> {
        let find = |name: &std::ffi::CStr| {
            let f = crate::cl!(clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr()));
            (!f.is_null()).then_some(f)
        };
        // SAFETY: each address is the platform's entry point of that name, whose C
        // signature the field's type spells; function pointers are pointer-sized.
        unsafe {
            Some(CommandBuffers {
                create: as_fn(find(c"clCreateCommandBufferKHR")?),
                release: as_fn(find(c"clReleaseCommandBufferKHR")?),
                retain: as_fn(find(c"clRetainCommandBufferKHR")?),
                finalize: as_fn(find(c"clFinalizeCommandBufferKHR")?),
                enqueue: as_fn(find(c"clEnqueueCommandBufferKHR")?),
                info: as_fn(find(c"clGetCommandBufferInfoKHR")?),
                barrier: as_fn(find(c"clCommandBarrierWithWaitListKHR")?),
                fill: as_fn(find(c"clCommandFillBufferKHR")?),
                copy: as_fn(find(c"clCommandCopyBufferKHR")?),
                svm_copy: find(c"clCommandSVMMemcpyKHR").map(|f| as_fn(f)),
                ndrange: as_fn(find(c"clCommandNDRangeKernelKHR")?),
                remap: find(c"clRemapCommandBufferKHR").map(|f| as_fn(f)),
            })
        }
    }
}

/// A looked-up entry point as the function pointer type `F`.
///
/// # Safety
/// `F` is a pointer-sized function pointer type with the entry point's C signature.
pub unsafe fn as_fn<F: Copy>(f: *mut c_void) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: a function pointer of the size of a pointer, as the caller says.
    unsafe { std::mem::transmute_copy(&f) }
}
