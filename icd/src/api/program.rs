//! Program and kernel entry points.
//!
//! This version of the driver has no kernel compiler yet (the device reports
//! `CL_DEVICE_COMPILER_AVAILABLE = CL_FALSE`): programs can be created from source and
//! queried, builds answer `CL_COMPILER_NOT_AVAILABLE` with a log saying so, and since no
//! program ever has an executable, no kernel object can exist. Every entry point still
//! validates its handles.

use std::ffi::{c_char, c_void};
use std::ptr::null_mut;

use opencl_sys::*;

use super::icd::{self, from_handle, from_handles, into_handle};
use super::queue::begin;
use super::util::{slice, status, with_errcode, CLResult, Info};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::program::Program;

const NO_COMPILER_LOG: &str = "FerroCL: this build of the driver cannot compile OpenCL C yet.\n";

pub(super) unsafe extern "C" fn clCreateProgramWithSource(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    with_errcode(errcode_ret, null_mut(), || {
        let c = from_handle::<Context>(context)?;
        // "CL_INVALID_VALUE if count is zero or if strings or any entry in strings is
        // NULL."
        if count == 0 || strings.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let lens = slice(lengths, count as usize);
        let mut source = Vec::new();
        for (i, &s) in slice(strings as *const *const c_char, count as usize).iter().enumerate() {
            if s.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            // "If an element in lengths is zero, its accompanying string is
            // null-terminated."
            match lens.get(i).copied().unwrap_or(0) {
                0 => source.extend_from_slice(super::util::c_str(s).ok_or(CL_INVALID_VALUE)?.to_bytes()),
                n => source.extend_from_slice(slice(s.cast::<u8>(), n)),
            }
        }
        let source = String::from_utf8_lossy(&source).into_owned();
        Ok(into_handle(Program::from_source(c, source)))
    })
}

pub(super) unsafe extern "C" fn clCreateProgramWithBinary(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    with_errcode(errcode_ret, null_mut(), || {
        from_handle::<Context>(context)?;
        if num_devices == 0 || device_list.is_null() || lengths.is_null() || binaries.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        from_handles::<Device>(device_list, num_devices as usize)?;
        // No binary format exists yet, so every binary is invalid for the device.
        for i in 0..num_devices as usize {
            super::util::write_opt(binary_status.wrapping_add(i), CL_INVALID_BINARY);
        }
        Err(CL_INVALID_BINARY)
    })
}

pub(super) unsafe extern "C" fn clCreateProgramWithIL(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    with_errcode(errcode_ret, null_mut(), || {
        from_handle::<Context>(context)?;
        if il.is_null() || length == 0 {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_OPERATION if no devices in context support intermediate language
        // programs."
        Err(CL_INVALID_OPERATION)
    })
}

pub(super) unsafe extern "C" fn clCreateProgramWithBuiltInKernels(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    kernel_names: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_program {
    with_errcode(errcode_ret, null_mut(), || {
        from_handle::<Context>(context)?;
        if num_devices == 0 || device_list.is_null() || kernel_names.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        from_handles::<Device>(device_list, num_devices as usize)?;
        // "CL_INVALID_VALUE if kernel_names contains a kernel name that is not supported
        // by any of the devices": the device has no built-in kernels.
        Err(CL_INVALID_VALUE)
    })
}

pub(super) unsafe extern "C" fn clRetainProgram(program: cl_program) -> cl_int {
    status(|| icd::retain::<Program>(program))
}

pub(super) unsafe extern "C" fn clReleaseProgram(program: cl_program) -> cl_int {
    status(|| icd::release::<Program>(program))
}

type BuildNotify = Option<unsafe extern "C" fn(cl_program, *mut c_void)>;

/// Shared checks of build, compile and link; then the honest answer: no compiler.
fn no_compiler(
    program: &Program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    notify: BuildNotify,
    user_data: *mut c_void,
    options: *const c_char,
) -> CLResult<()> {
    // "CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or
    // if device_list is not NULL and num_devices is zero", "if pfn_notify is NULL but
    // user_data is not NULL".
    if device_list.is_null() != (num_devices == 0) || (notify.is_none() && !user_data.is_null()) {
        return Err(CL_INVALID_VALUE);
    }
    for d in from_handles::<Device>(device_list, num_devices as usize)? {
        if !program.context.has_device(&d) {
            return Err(CL_INVALID_DEVICE);
        }
    }
    let mut build = program.build.lock();
    build.options = super::util::c_str(options).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    build.status = CL_BUILD_ERROR;
    build.log = NO_COMPILER_LOG.into();
    Err(CL_COMPILER_NOT_AVAILABLE)
}

pub(super) unsafe extern "C" fn clBuildProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> cl_int {
    status(|| no_compiler(&*from_handle::<Program>(program)?, num_devices, device_list, pfn_notify, user_data, options))
}

pub(super) unsafe extern "C" fn clCompileProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    _num_input_headers: cl_uint,
    _input_headers: *const cl_program,
    _header_include_names: *mut *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> cl_int {
    status(|| no_compiler(&*from_handle::<Program>(program)?, num_devices, device_list, pfn_notify, user_data, options))
}

pub(super) unsafe extern "C" fn clLinkProgram(
    context: cl_context,
    _num_devices: cl_uint,
    _device_list: *const cl_device_id,
    _options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    _pfn_notify: BuildNotify,
    _user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    with_errcode(errcode_ret, null_mut(), || {
        from_handle::<Context>(context)?;
        if num_input_programs == 0 || input_programs.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        from_handles::<Program>(input_programs, num_input_programs as usize)?;
        Err(CL_LINKER_NOT_AVAILABLE)
    })
}

pub(super) unsafe extern "C" fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int {
    status(|| from_handle::<crate::core::platform::Platform>(platform).map(drop))
}

fn program_info(p: &Program, param: cl_program_info) -> CLResult<Info> {
    match param {
        CL_PROGRAM_REFERENCE_COUNT => Info::of(&p.base.ref_count()),
        CL_PROGRAM_CONTEXT => Info::of(&icd::handle_of(&p.context)),
        CL_PROGRAM_NUM_DEVICES => Info::of(&(p.context.devices.len() as cl_uint)),
        CL_PROGRAM_DEVICES => Info::of(&p.context.devices.iter().map(icd::handle_of).collect::<Vec<_>>()),
        CL_PROGRAM_SOURCE => Info::of(&p.source),
        CL_PROGRAM_IL => Info::empty(),
        CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => Info::of(&false),
        // "CL_INVALID_PROGRAM_EXECUTABLE if param_name is CL_PROGRAM_NUM_KERNELS or
        // CL_PROGRAM_KERNEL_NAMES and a successful program executable has not been built."
        CL_PROGRAM_NUM_KERNELS | CL_PROGRAM_KERNEL_NAMES => Err(CL_INVALID_PROGRAM_EXECUTABLE),
        CL_PROGRAM_BINARY_SIZES => Info::of(&vec![0usize; p.context.devices.len()]),
        // An array of pointers to fill; with no binaries there is nothing to write.
        CL_PROGRAM_BINARIES => Info::of(&vec![0usize; p.context.devices.len()]),
        _ => Err(CL_INVALID_VALUE),
    }
}

pub(super) unsafe extern "C" fn clGetProgramInfo(
    program: cl_program,
    param_name: cl_program_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let p = from_handle::<Program>(program)?;
        if param_name == CL_PROGRAM_BINARIES && !param_value.is_null() {
            // The application passes an array of pointers; binaries are empty, so only
            // the size check applies.
            let need = p.context.devices.len() * std::mem::size_of::<usize>();
            if param_value_size < need {
                return Err(CL_INVALID_VALUE);
            }
            super::util::write_opt(param_value_size_ret, need);
            return Ok(());
        }
        program_info(&p, param_name)?.write(param_value_size, param_value, param_value_size_ret)
    })
}

pub(super) unsafe extern "C" fn clGetProgramBuildInfo(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let p = from_handle::<Program>(program)?;
        let d = from_handle::<Device>(device)?;
        if !p.context.has_device(&d) {
            return Err(CL_INVALID_DEVICE);
        }
        let build = p.build.lock();
        let info = match param_name {
            CL_PROGRAM_BUILD_STATUS => Info::of(&build.status),
            CL_PROGRAM_BUILD_OPTIONS => Info::of(&build.options),
            CL_PROGRAM_BUILD_LOG => Info::of(&build.log),
            CL_PROGRAM_BINARY_TYPE => Info::of(&CL_PROGRAM_BINARY_TYPE_NONE),
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => Info::of(&0usize),
            _ => Err(CL_INVALID_VALUE),
        }?;
        info.write(param_value_size, param_value, param_value_size_ret)
    })
}

pub(super) unsafe extern "C" fn clSetProgramReleaseCallback(
    program: cl_program,
    _pfn_notify: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    _user_data: *mut c_void,
) -> cl_int {
    // "CL_INVALID_OPERATION if no devices in the context associated with program
    // support destructors for program scope global variables."
    status(|| from_handle::<Program>(program).and(Err(CL_INVALID_OPERATION)))
}

pub(super) unsafe extern "C" fn clSetProgramSpecializationConstant(
    program: cl_program,
    _spec_id: cl_uint,
    _spec_size: usize,
    _spec_value: *const c_void,
) -> cl_int {
    // "CL_INVALID_PROGRAM if program is not a valid program object created from an
    // intermediate language": no program here is.
    status(|| from_handle::<Program>(program).and(Err(CL_INVALID_PROGRAM)))
}

pub(super) unsafe extern "C" fn clCreateKernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    with_errcode(errcode_ret, null_mut(), || {
        from_handle::<Program>(program)?;
        if kernel_name.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable
        // for program."
        Err(CL_INVALID_PROGRAM_EXECUTABLE)
    })
}

pub(super) unsafe extern "C" fn clCreateKernelsInProgram(
    program: cl_program,
    _num_kernels: cl_uint,
    _kernels: *mut cl_kernel,
    _num_kernels_ret: *mut cl_uint,
) -> cl_int {
    status(|| from_handle::<Program>(program).and(Err(CL_INVALID_PROGRAM_EXECUTABLE)))
}

/// No kernel object can exist without a built program, so every kernel handle is
/// invalid.
fn no_kernel() -> cl_int {
    CL_INVALID_KERNEL
}

pub(super) unsafe extern "C" fn clRetainKernel(_kernel: cl_kernel) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clReleaseKernel(_kernel: cl_kernel) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clSetKernelArg(
    _kernel: cl_kernel,
    _arg_index: cl_uint,
    _arg_size: usize,
    _arg_value: *const c_void,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clGetKernelInfo(
    _kernel: cl_kernel,
    _param_name: cl_kernel_info,
    _size: usize,
    _value: *mut c_void,
    _size_ret: *mut usize,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clGetKernelWorkGroupInfo(
    _kernel: cl_kernel,
    _device: cl_device_id,
    _param_name: cl_kernel_work_group_info,
    _size: usize,
    _value: *mut c_void,
    _size_ret: *mut usize,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clGetKernelArgInfo(
    _kernel: cl_kernel,
    _arg_index: cl_uint,
    _param_name: cl_kernel_arg_info,
    _size: usize,
    _value: *mut c_void,
    _size_ret: *mut usize,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clGetKernelSubGroupInfo(
    _kernel: cl_kernel,
    _device: cl_device_id,
    _param_name: cl_kernel_sub_group_info,
    _input_size: usize,
    _input: *const c_void,
    _size: usize,
    _value: *mut c_void,
    _size_ret: *mut usize,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clCloneKernel(_kernel: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    with_errcode(errcode_ret, null_mut(), || Err(no_kernel()))
}

pub(super) unsafe extern "C" fn clSetKernelArgSVMPointer(
    _kernel: cl_kernel,
    _arg_index: cl_uint,
    _arg_value: *const c_void,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clSetKernelExecInfo(
    _kernel: cl_kernel,
    _param_name: cl_kernel_exec_info,
    _size: usize,
    _value: *const c_void,
) -> cl_int {
    no_kernel()
}

pub(super) unsafe extern "C" fn clEnqueueNDRangeKernel(
    queue: cl_command_queue,
    _kernel: cl_kernel,
    _work_dim: cl_uint,
    _global_work_offset: *const usize,
    _global_work_size: *const usize,
    _local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    status(|| begin(queue, num_events_in_wait_list, event_wait_list).and(Err(no_kernel())))
}

pub(super) unsafe extern "C" fn clEnqueueTask(
    queue: cl_command_queue,
    _kernel: cl_kernel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    status(|| begin(queue, num_events_in_wait_list, event_wait_list).and(Err(no_kernel())))
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn clEnqueueNativeKernel(
    queue: cl_command_queue,
    _user_func: Option<unsafe extern "C" fn(*mut c_void)>,
    _args: *mut c_void,
    _cb_args: usize,
    _num_mem_objects: cl_uint,
    _mem_list: *const cl_mem,
    _args_mem_loc: *mut *const c_void,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    // "CL_INVALID_OPERATION if the device associated with command_queue cannot execute
    // the native kernel" (CL_DEVICE_EXECUTION_CAPABILITIES lacks CL_EXEC_NATIVE_KERNEL).
    status(|| from_handle::<crate::core::queue::Queue>(queue).and(Err(CL_INVALID_OPERATION)))
}
