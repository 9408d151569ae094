//! Program entry points: creation, build/compile/link, binaries and queries.

use std::ffi::{c_char, c_void};
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle, from_handles, into_handle, retain_release};
use super::util::{c_str, fallible_vec, slice, utf8_lossy, with_errcode, write_opt, CLResult, Info};
use crate::compiler::kernel_info;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::program::{self, Program};

#[cl_entry_point]
fn clCreateProgramWithSource(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
) -> CLResult<cl_program> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_VALUE if count is zero or if strings or any entry in strings is
    // NULL."
    if count == 0 || strings.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let lens = slice(lengths, count as usize);
    let mut parts = Vec::with_capacity(count as usize);
    for (i, &s) in slice(strings as *const *const c_char, count as usize).iter().enumerate() {
        if s.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "If an element in lengths is zero, its accompanying string is
        // null-terminated."
        parts.push(match lens.get(i).copied().unwrap_or(0) {
            0 => c_str(s).ok_or(CL_INVALID_VALUE)?.to_bytes(),
            n => slice(s.cast::<u8>(), n),
        });
    }
    // Sized by the application: a source too big for memory is CL_OUT_OF_HOST_MEMORY,
    // not an abort.
    let total = parts.iter().try_fold(0usize, |n, p| n.checked_add(p.len())).ok_or(CL_OUT_OF_HOST_MEMORY)?;
    let mut source = fallible_vec(total)?;
    parts.iter().for_each(|p| source.extend_from_slice(p));
    let source = utf8_lossy(source)?;
    Ok(into_handle(Program::from_source(c, source)))
}

/// Checks a device list against the program's context (`CL_INVALID_DEVICE`).
///
/// # Safety
/// `list` is null or points at `num` device handles.
unsafe fn devices_of(c: &Context, num: cl_uint, list: *const cl_device_id) -> CLResult<Vec<Arc<Device>>> {
    // "CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or
    // if device_list is not NULL and num_devices is zero."
    if list.is_null() != (num == 0) {
        return Err(CL_INVALID_VALUE);
    }
    let devs = from_handles::<Device>(list, num as usize)?;
    if devs.iter().any(|d| !c.has_device(d)) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(devs)
}

#[cl_entry_point]
fn clCreateProgramWithBinary(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
) -> CLResult<cl_program> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_VALUE if device_list is NULL or num_devices is zero", "if lengths
    // or binaries is NULL or if any entry in lengths[i] is zero or binaries[i] is
    // NULL".
    if num_devices == 0 || device_list.is_null() || lengths.is_null() || binaries.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    devices_of(&c, num_devices, device_list)?;
    let lens = slice(lengths, num_devices as usize);
    let bins = slice(binaries as *const *const u8, num_devices as usize);
    if (0..num_devices as usize).any(|i| lens[i] == 0 || bins[i].is_null()) {
        return Err(CL_INVALID_VALUE);
    }
    let mut unpacked = None;
    let mut failed = false;
    for i in 0..num_devices as usize {
        let b = program::from_binary(slice(bins[i], lens[i]));
        write_opt(binary_status.wrapping_add(i), if b.is_ok() { CL_SUCCESS } else { CL_INVALID_BINARY });
        failed |= b.is_err();
        unpacked = unpacked.or(b.ok());
    }
    // "CL_INVALID_BINARY if an invalid program binary was encountered for any device."
    match (failed, unpacked) {
        (false, Some(b)) => Ok(into_handle(Program::from_binary(c, b))),
        _ => Err(CL_INVALID_BINARY),
    }
}

#[cl_entry_point]
fn clCreateProgramWithIL(context: cl_context, il: *const c_void, length: usize) -> CLResult<cl_program> {
    let c = from_handle::<Context>(context)?;
    if il.is_null() || length == 0 {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_OPERATION if no devices in context support intermediate language
    // programs": the device reads SPIR-V only through the translator.
    if crate::compiler::spirv::find().is_none() {
        c.notify_error(crate::compiler::spirv::MISSING);
        return Err(CL_INVALID_OPERATION);
    }
    // "CL_INVALID_VALUE if ... the length-byte memory pointed to by il does not
    // contain well-formed intermediate language input".
    let module = slice(il.cast::<u8>(), length);
    let mut copy = fallible_vec(length)?;
    copy.extend_from_slice(module);
    match Program::from_il(c.clone(), copy) {
        Ok(p) => Ok(into_handle(p)),
        Err(why) => {
            c.notify_error(&format!("clCreateProgramWithIL: {why}"));
            Err(CL_INVALID_VALUE)
        }
    }
}

#[cl_entry_point]
fn clCreateProgramWithBuiltInKernels(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    kernel_names: *const c_char,
) -> CLResult<cl_program> {
    let c = from_handle::<Context>(context)?;
    if num_devices == 0 || device_list.is_null() || kernel_names.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    devices_of(&c, num_devices, device_list)?;
    // "CL_INVALID_VALUE if kernel_names contains a kernel name that is not supported
    // by any of the devices": the device has no built-in kernels.
    Err(CL_INVALID_VALUE)
}

retain_release!(Program, cl_program, clRetainProgram, clReleaseProgram);

type BuildNotify = Option<unsafe extern "C" fn(cl_program, *mut c_void)>;

/// Checks shared by build and compile: devices, callback, options string, and that
/// no kernel is attached.
///
/// # Safety
/// `list` is null or points at `num` device handles.
unsafe fn check_build(
    p: &Program,
    num: cl_uint,
    list: *const cl_device_id,
    notify: BuildNotify,
    user_data: *mut c_void,
) -> CLResult<()> {
    devices_of(&p.context, num, list)?;
    // "CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL."
    if notify.is_none() && !user_data.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_OPERATION if there are kernel objects attached to program."
    if p.has_kernels() {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(())
}

/// Longest options string: FerroCL passes the options to clang on its command line,
/// which holds about 2 MiB in all and 128 KiB an argument, so longer ones cannot work
/// (and a 768 MiB one, copied, aborted the process out of memory).
const MAX_OPTIONS: usize = 1 << 20;

/// The options as text; `CL_INVALID_BUILD_OPTIONS` past `MAX_OPTIONS`.
///
/// # Safety
/// `options` is null or a NUL-terminated string.
unsafe fn options_of(options: *const c_char) -> CLResult<String> {
    let Some(s) = c_str(options) else { return Ok(String::new()) };
    if s.to_bytes().len() > MAX_OPTIONS {
        return Err(CL_INVALID_BUILD_OPTIONS);
    }
    Ok(s.to_string_lossy().into_owned())
}

/// Builds run synchronously; the callback, if any, runs when the build is done.
fn notify_done(program: cl_program, notify: BuildNotify, user_data: *mut c_void) {
    if let Some(f) = notify {
        // SAFETY: the application registered `f` for this call.
        unsafe { f(program, user_data) };
    }
}

#[cl_entry_point]
fn clBuildProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> CLResult<()> {
    let p = from_handle::<Program>(program)?;
    check_build(&p, num_devices, device_list, pfn_notify, user_data)?;
    // "CL_INVALID_OPERATION if program was not created with clCreateProgramWithSource,
    // clCreateProgramWithIL or clCreateProgramWithBinary."
    if p.origin == program::Origin::Linked {
        return Err(CL_INVALID_OPERATION);
    }
    let result = options_of(options).and_then(|o| p.build(&o));
    notify_done(program, pfn_notify, user_data);
    result
}

#[cl_entry_point]
fn clCompileProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> CLResult<()> {
    let p = from_handle::<Program>(program)?;
    check_build(&p, num_devices, device_list, pfn_notify, user_data)?;
    // "CL_INVALID_VALUE if num_input_headers is zero and header_include_names or
    // input_headers are not NULL or if num_input_headers is not zero and
    // header_include_names or input_headers are NULL."
    let n = num_input_headers as usize;
    if (n == 0) != input_headers.is_null() || (n == 0) != header_include_names.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let programs = from_handles::<Program>(input_headers, n)?;
    let names = slice(header_include_names as *const *const c_char, n);
    let mut headers = Vec::new();
    for (h, &name) in programs.iter().zip(names) {
        let name = c_str(name).ok_or(CL_INVALID_VALUE)?.to_string_lossy().into_owned();
        headers.push((name, h.source.clone()));
    }
    // "CL_INVALID_OPERATION if program was not created with clCreateProgramWithSource
    // or clCreateProgramWithIL."
    if !matches!(p.origin, program::Origin::Source | program::Origin::Il) {
        return Err(CL_INVALID_OPERATION);
    }
    let result = options_of(options).and_then(|o| p.compile(&o, &headers));
    notify_done(program, pfn_notify, user_data);
    // clCompileProgram's own codes for what clBuildProgram reports as build errors.
    result.map_err(|e| match e {
        CL_INVALID_BUILD_OPTIONS => CL_INVALID_COMPILER_OPTIONS,
        CL_BUILD_PROGRAM_FAILURE => CL_COMPILE_PROGRAM_FAILURE,
        e => e,
    })
}

/// Written out rather than through `#[cl_entry_point]`: a failed link returns the program
/// (whose log says why) and an error code together.
pub(super) unsafe extern "C" fn clLinkProgram(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let mut link_failed = false;
    let program = with_errcode(errcode_ret, null_mut(), || {
        let c = from_handle::<Context>(context)?;
        devices_of(&c, num_devices, device_list)?;
        // "CL_INVALID_VALUE if num_input_programs is zero and input_programs is NULL or
        // if num_input_programs is zero and input_programs is not NULL or if
        // num_input_programs is not zero and input_programs is NULL."
        if num_input_programs == 0 || input_programs.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        if pfn_notify.is_none() && !user_data.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let inputs = from_handles::<Program>(input_programs, num_input_programs as usize)?;
        // "CL_INVALID_OPERATION if the compilation or build of a program executable for
        // any of the devices listed in device_list by a previous call to
        // clCompileProgram or clBuildProgram for program has not completed", i.e. each
        // input must be a compiled object or a library.
        if inputs.iter().any(|p| p.build.lock().ir.is_none()) {
            return Err(CL_INVALID_OPERATION);
        }
        let options = options_of(options).map_err(|_| CL_INVALID_LINKER_OPTIONS)?;
        let (p, result) = Program::from_link(c, &options, &inputs);
        let handle = into_handle(p);
        notify_done(handle, pfn_notify, user_data);
        match result {
            Ok(()) => Ok(handle),
            // "CL_LINK_PROGRAM_FAILURE if there is a failure to link the compiled binaries
            // and/or libraries": the program is returned all the same, so the application
            // can read why from its build log (the CTS's link_error_returns_program).
            Err(CL_BUILD_PROGRAM_FAILURE) => {
                link_failed = true;
                Ok(handle)
            }
            Err(e) => {
                let _ = icd::release::<Program>(handle);
                Err(if e == CL_INVALID_BUILD_OPTIONS { CL_INVALID_LINKER_OPTIONS } else { e })
            }
        }
    });
    if link_failed {
        write_opt(errcode_ret, CL_LINK_PROGRAM_FAILURE);
    }
    program
}

#[cl_entry_point]
fn clUnloadPlatformCompiler(platform: cl_platform_id) -> CLResult<()> {
    from_handle::<crate::core::platform::Platform>(platform).map(drop)
}

fn program_info(p: &Program, param: cl_program_info) -> CLResult<Info> {
    let lib = p.library();
    let names = || -> CLResult<Vec<String>> {
        // "CL_INVALID_PROGRAM_EXECUTABLE if param_name is CL_PROGRAM_NUM_KERNELS or
        // CL_PROGRAM_KERNEL_NAMES and a successful program executable has not been built
        // for at least one device in the list of devices associated with program."
        let lib = lib.as_ref().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        Ok(lib.info.kernels.iter().filter(|k| !kernel_info::is_block_kernel(&k.name)).map(|k| k.name.clone()).collect())
    };
    match param {
        CL_PROGRAM_REFERENCE_COUNT => Info::of(&p.base.ref_count()),
        CL_PROGRAM_CONTEXT => Info::of(&icd::handle_of(&p.context)),
        CL_PROGRAM_NUM_DEVICES => Info::of(&(p.context.devices.len() as cl_uint)),
        CL_PROGRAM_DEVICES => Info::of(&p.context.devices.iter().map(icd::handle_of).collect::<Vec<_>>()),
        CL_PROGRAM_SOURCE => Info::of(&p.source),
        // "If program is created with clCreateProgramWithSource, clCreateProgramWithBinary
        // or clCreateProgramWithBuiltinKernels, the memory pointed to by param_value will
        // be unchanged and param_value_size_ret will be set to 0."
        CL_PROGRAM_IL => p.il.as_ref().map_or_else(Info::empty, |il| Info::of(&il.module)),
        CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => Info::of(&false),
        CL_PROGRAM_NUM_KERNELS => Info::of(&names()?.len()),
        CL_PROGRAM_KERNEL_NAMES => Info::of(&names()?.join(";")),
        CL_PROGRAM_BINARY_SIZES => Info::of(&vec![p.binary().len(); p.context.devices.len()]),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetProgramInfo(
    program: cl_program,
    param_name: cl_program_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let p = from_handle::<Program>(program)?;
    if param_name == CL_PROGRAM_BINARIES {
        // The value is an array of application pointers that we fill, one per device.
        let n = p.context.devices.len();
        let need = n * std::mem::size_of::<*mut u8>();
        if !param_value.is_null() {
            if param_value_size < need {
                return Err(CL_INVALID_VALUE);
            }
            let binary = p.binary();
            for &dst in slice(param_value as *const *mut u8, n) {
                // "If an entry value in the array is NULL, the implementation skips
                // copying the program binary for the specific device."
                if !dst.is_null() {
                    // SAFETY: the application sized each entry from BINARY_SIZES.
                    unsafe { std::ptr::copy_nonoverlapping(binary.as_ptr(), dst, binary.len()) };
                }
            }
        }
        write_opt(param_value_size_ret, need);
        return Ok(());
    }
    program_info(&p, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clGetProgramBuildInfo(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
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
        CL_PROGRAM_BINARY_TYPE => Info::of(&build.binary_type),
        CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => {
            Info::of(&(build.library.as_ref().map_or(0, |l| l.info.global_variable_size) as usize))
        }
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clSetProgramReleaseCallback(
    program: cl_program,
    _pfn_notify: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    _user_data: *mut c_void,
) -> CLResult<()> {
    // "CL_INVALID_OPERATION if no devices in the context associated with program
    // support destructors for program scope global variables."
    from_handle::<Program>(program).and(Err(CL_INVALID_OPERATION))
}

#[cl_entry_point]
fn clSetProgramSpecializationConstant(
    program: cl_program,
    spec_id: cl_uint,
    spec_size: usize,
    spec_value: *const c_void,
) -> CLResult<()> {
    let p = from_handle::<Program>(program)?;
    // "CL_INVALID_OPERATION if no devices associated with program support
    // intermediate language programs" (without the translator), else
    // "CL_INVALID_PROGRAM if program is not a valid program object created from an
    // intermediate language (e.g. SPIR-V)".
    if crate::compiler::spirv::find().is_none() {
        return Err(CL_INVALID_OPERATION);
    }
    if p.il.is_none() {
        return Err(CL_INVALID_PROGRAM);
    }
    // "CL_INVALID_VALUE if spec_value is NULL" (the size is checked against the
    // constant's own).
    if spec_value.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    p.set_spec_constant(spec_id, slice(spec_value.cast::<u8>(), spec_size))
}
