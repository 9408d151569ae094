//! Kernel entry points: creation, arguments, queries, and launching NDRanges.

use std::ffi::{c_char, c_void};
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle, into_handle, retain_release};
use super::queue::{begin, submit};
use super::util::{c_str, slice, write_opt, CLResult, Info};
use crate::compiler::kernel_info::{self, ArgKind};
use crate::core::device::Device;
use crate::core::device_enqueue;
use crate::core::kernel::{ArgValue, Kernel, NdRange};
use crate::core::memory::{Mem, IMMUTABLE};
use crate::core::program::Program;
use crate::core::queue::Queue;
use crate::core::sampler::Sampler;

#[cl_entry_point]
fn clCreateKernel(program: cl_program, kernel_name: *const c_char) -> CLResult<cl_kernel> {
    let p = from_handle::<Program>(program)?;
    // "CL_INVALID_VALUE if kernel_name is NULL."
    let name = c_str(kernel_name).ok_or(CL_INVALID_VALUE)?.to_string_lossy().into_owned();
    // "CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable
    // for program."
    let lib = p.library().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
    // "CL_INVALID_KERNEL_NAME if kernel_name is not found in program."
    let k = Kernel::new(p.clone(), lib, &name).ok_or(CL_INVALID_KERNEL_NAME)?;
    Ok(into_handle(k))
}

#[cl_entry_point]
fn clCreateKernelsInProgram(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> CLResult<()> {
    let p = from_handle::<Program>(program)?;
    let lib = p.library().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
    let own: Vec<_> = lib.info.kernels.iter().filter(|k| !kernel_info::is_block_kernel(&k.name)).collect();
    let n = own.len();
    // "CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the
    // number of kernels in program."
    if !kernels.is_null() {
        if (num_kernels as usize) < n {
            return Err(CL_INVALID_VALUE);
        }
        for (i, k) in own.iter().enumerate() {
            let kernel = Kernel::new(p.clone(), lib.clone(), &k.name).ok_or(CL_OUT_OF_HOST_MEMORY)?;
            // SAFETY: kernels has room for num_kernels >= n handles.
            unsafe { kernels.add(i).write(into_handle(kernel)) };
        }
    }
    write_opt(num_kernels_ret, n as cl_uint);
    Ok(())
}

retain_release!(Kernel, cl_kernel, clRetainKernel, clReleaseKernel);

#[cl_entry_point]
fn clCloneKernel(source_kernel: cl_kernel) -> CLResult<cl_kernel> {
    Ok(into_handle(from_handle::<Kernel>(source_kernel)?.duplicate()))
}

#[cl_entry_point]
fn clSetKernelArg(kernel: cl_kernel, arg_index: cl_uint, arg_size: usize, arg_value: *const c_void) -> CLResult<()> {
    set_arg(&*from_handle::<Kernel>(kernel)?, arg_index, arg_size, arg_value)
}

/// `clSetKernelArg` on a kernel object, which a mutable kernel command's update also
/// sets its arguments with.
///
/// # Safety
/// `arg_value` is null or points at `arg_size` bytes.
pub(super) unsafe fn set_arg(
    k: &Kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> CLResult<()> {
    // "CL_INVALID_ARG_INDEX if arg_index is not a valid argument index."
    let a = k.info.args.get(arg_index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
    let value = match a.kind {
        ArgKind::Buffer => {
            // "CL_INVALID_ARG_SIZE if arg_size does not match the size of the data
            // type for an argument that is not a memory object or if the argument is
            // a memory object and arg_size != sizeof(cl_mem)."
            if arg_size != std::mem::size_of::<cl_mem>() {
                return Err(CL_INVALID_ARG_SIZE);
            }
            // "If the argument is a buffer object, the arg_value pointer can be NULL
            // or point to a NULL value in which case a NULL value will be used."
            // SAFETY: arg_value points at a cl_mem when not NULL.
            let mem = if arg_value.is_null() { null_mut() } else { unsafe { *(arg_value as *const cl_mem) } };
            if mem.is_null() {
                ArgValue::Buffer(None)
            } else {
                // "CL_INVALID_MEM_OBJECT for an argument declared to be a memory
                // object when the specified arg_value is not a valid memory object"
                // (an image is not a buffer).
                let m = from_handle::<Mem>(mem)?;
                if !m.is_buffer() {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                // cl_ext_immutable_memory_objects: "CL_INVALID_ARG_VALUE if ... a
                // memory object created with CL_MEM_IMMUTABLE_EXT" reaches an argument
                // the kernel may write through: a global pointer not to const.
                let read_only = a.addr_space == 2 || a.type_qual.split_whitespace().any(|q| q == "const");
                if m.flags & IMMUTABLE != 0 && !read_only {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Buffer(Some(Arc::downgrade(&m)))
            }
        }
        ArgKind::Pipe => {
            if arg_size != std::mem::size_of::<cl_mem>() {
                return Err(CL_INVALID_ARG_SIZE);
            }
            if arg_value.is_null() {
                return Err(CL_INVALID_ARG_VALUE);
            }
            // SAFETY: arg_value points at a cl_mem.
            let m = from_handle::<Mem>(unsafe { *(arg_value as *const cl_mem) })?;
            // "CL_INVALID_ARG_VALUE if ... the argument is declared to be a pipe and
            // arg_value is not a pipe object" (another memory object).
            if m.pipe.is_none() {
                return Err(CL_INVALID_ARG_VALUE);
            }
            ArgValue::Buffer(Some(Arc::downgrade(&m)))
        }
        ArgKind::Image => {
            if arg_size != std::mem::size_of::<cl_mem>() {
                return Err(CL_INVALID_ARG_SIZE);
            }
            if arg_value.is_null() {
                return Err(CL_INVALID_ARG_VALUE);
            }
            // SAFETY: arg_value points at a cl_mem.
            let m = super::image::image_of(unsafe { *(arg_value as *const cl_mem) })?;
            // "CL_INVALID_ARG_VALUE if the argument is an image declared with the
            // read_only qualifier and arg_value refers to an image object created with
            // cl_mem_flags of CL_MEM_WRITE_ONLY or if the image argument is declared
            // with the write_only qualifier and arg_value refers to an image object
            // created with cl_mem_flags of CL_MEM_READ_ONLY."
            // An immutable image reaches read_only arguments only.
            let forbidden = match a.access.as_str() {
                "read_only" => CL_MEM_WRITE_ONLY,
                "write_only" => CL_MEM_READ_ONLY | IMMUTABLE,
                _ => IMMUTABLE,
            };
            if m.flags & forbidden != 0 {
                return Err(CL_INVALID_ARG_VALUE);
            }
            ArgValue::Image(Arc::downgrade(&m))
        }
        ArgKind::Sampler => {
            // "CL_INVALID_SAMPLER for an argument declared to be of type sampler_t when
            // the specified arg_value is not a valid sampler object."
            if arg_size != std::mem::size_of::<cl_sampler>() {
                return Err(CL_INVALID_ARG_SIZE);
            }
            if arg_value.is_null() {
                return Err(CL_INVALID_SAMPLER);
            }
            // SAFETY: arg_value points at a cl_sampler.
            let s = from_handle::<Sampler>(unsafe { *(arg_value as *const cl_sampler) })?;
            ArgValue::Bytes((s.bits() as u64).to_ne_bytes().to_vec())
        }
        ArgKind::Local => {
            // "CL_INVALID_ARG_VALUE if the argument is declared with the local
            // qualifier and arg_value is not NULL"; "CL_INVALID_ARG_SIZE if ...
            // arg_size is zero and the argument is declared with the local qualifier".
            if !arg_value.is_null() {
                return Err(CL_INVALID_ARG_VALUE);
            }
            if arg_size == 0 {
                return Err(CL_INVALID_ARG_SIZE);
            }
            ArgValue::Local(arg_size)
        }
        ArgKind::Value => {
            if arg_size != a.size {
                return Err(CL_INVALID_ARG_SIZE);
            }
            // "CL_INVALID_ARG_VALUE if arg_value specified is not a valid value."
            if arg_value.is_null() {
                return Err(CL_INVALID_ARG_VALUE);
            }
            // "CL_INVALID_DEVICE_QUEUE for an argument declared to be of type queue_t
            // when the specified arg_value is not a valid device queue object." The
            // kernel gets the handle, which the driver looks up when it enqueues.
            if a.type_name == "queue_t" {
                // SAFETY: arg_value points at a cl_command_queue (its size checked).
                let handle = unsafe { *(arg_value as *const cl_command_queue) };
                let q = from_handle::<Queue>(handle).map_err(|_| CL_INVALID_DEVICE_QUEUE)?;
                if q.on_device.is_none() {
                    return Err(CL_INVALID_DEVICE_QUEUE);
                }
            }
            ArgValue::Bytes(slice(arg_value.cast::<u8>(), arg_size).to_vec())
        }
    };
    k.set_arg(arg_index as usize, value)?;
    Ok(())
}

fn kernel_info(k: &Kernel, param: cl_kernel_info) -> CLResult<Info> {
    match param {
        CL_KERNEL_FUNCTION_NAME => Info::of(&k.info.name),
        CL_KERNEL_NUM_ARGS => Info::of(&(k.info.args.len() as cl_uint)),
        CL_KERNEL_REFERENCE_COUNT => Info::of(&k.base.ref_count()),
        CL_KERNEL_CONTEXT => Info::of(&icd::handle_of(&k.program.context)),
        CL_KERNEL_PROGRAM => Info::of(&icd::handle_of(&k.program)),
        CL_KERNEL_ATTRIBUTES => Info::of(&k.info.attributes),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetKernelInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k = from_handle::<Kernel>(kernel)?;
    kernel_info(&k, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

/// Checks the optional device argument of kernel queries.
fn kernel_device(k: &Kernel, device: cl_device_id) -> CLResult<Arc<Device>> {
    // "CL_INVALID_DEVICE if device is not in the list of devices associated with kernel
    // or if device is NULL but there is more than one device associated with kernel."
    let devices = &k.program.context.devices;
    if device.is_null() {
        return if devices.len() == 1 { Ok(devices[0].clone()) } else { Err(CL_INVALID_DEVICE) };
    }
    let d = from_handle::<Device>(device)?;
    if !k.program.context.has_device(&d) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(d)
}

#[cl_entry_point]
fn clGetKernelWorkGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_work_group_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k = from_handle::<Kernel>(kernel)?;
    let d = kernel_device(&k, device)?;
    let info = match param_name {
        CL_KERNEL_WORK_GROUP_SIZE => Info::of(&k.max_work_group_size(&d)),
        CL_KERNEL_COMPILE_WORK_GROUP_SIZE => Info::of(&k.info.reqd_work_group_size.unwrap_or([0; 3])),
        CL_KERNEL_LOCAL_MEM_SIZE => Info::of(&k.local_mem_size()),
        CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => Info::of(&(d.vector_widths()[4] as usize)),
        CL_KERNEL_PRIVATE_MEM_SIZE => Info::of(&0u64),
        // cl_intel_required_subgroup_size's, asked by SYCL runtimes: a CPU kernel's
        // spills are on its stack, never in memory the driver sets aside.
        CL_KERNEL_SPILL_MEM_SIZE_INTEL => Info::of(&0u64),
        // "CL_INVALID_VALUE if param_name is CL_KERNEL_GLOBAL_WORK_SIZE and device is
        // not a custom device and kernel is not a built-in kernel."
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clGetKernelArgInfo(
    kernel: cl_kernel,
    arg_index: cl_uint,
    param_name: cl_kernel_arg_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k = from_handle::<Kernel>(kernel)?;
    let a = k.info.args.get(arg_index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
    let info = match param_name {
        CL_KERNEL_ARG_ADDRESS_QUALIFIER => Info::of(&match a.addr_space {
            1 => CL_KERNEL_ARG_ADDRESS_GLOBAL,
            2 => CL_KERNEL_ARG_ADDRESS_CONSTANT,
            3 => CL_KERNEL_ARG_ADDRESS_LOCAL,
            _ => CL_KERNEL_ARG_ADDRESS_PRIVATE,
        }),
        CL_KERNEL_ARG_ACCESS_QUALIFIER => Info::of(&match a.access.as_str() {
            "read_only" => CL_KERNEL_ARG_ACCESS_READ_ONLY,
            "write_only" => CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
            "read_write" => CL_KERNEL_ARG_ACCESS_READ_WRITE,
            _ => CL_KERNEL_ARG_ACCESS_NONE,
        }),
        CL_KERNEL_ARG_TYPE_NAME => Info::of(&a.type_name),
        // cl_kernel_arg_type_qualifier is a cl_bitfield in the Khronos headers (8 bytes;
        // opencl-sys declares it as cl_uint).
        CL_KERNEL_ARG_TYPE_QUALIFIER => Info::of(&a.type_qual.split_whitespace().fold(0 as cl_bitfield, |q, w| {
            q | cl_bitfield::from(match w {
                "const" => CL_KERNEL_ARG_TYPE_CONST,
                "restrict" => CL_KERNEL_ARG_TYPE_RESTRICT,
                "volatile" => CL_KERNEL_ARG_TYPE_VOLATILE,
                "pipe" => CL_KERNEL_ARG_TYPE_PIPE,
                _ => 0,
            })
        })),
        // Names are recorded only with -cl-kernel-arg-info.
        CL_KERNEL_ARG_NAME => Info::of(a.name.as_ref().ok_or(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)?),
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

/// Sub-groups are runs of the kernel's sub-group size in x, fewer work-items at the end
/// of a row, one row after another (builtins/clc/workitem.c).
#[cl_entry_point]
fn clGetKernelSubGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let k = from_handle::<Kernel>(kernel)?;
    let d = kernel_device(&k, device)?;
    // "CL_INVALID_VALUE if param_name is CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE and the
    // size in bytes specified by input_value_size is not valid or if input_value is
    // NULL" (and likewise for the other queries that take an input).
    let local_size = || -> CLResult<Vec<usize>> {
        let n = input_value_size / size_of::<usize>();
        if input_value.is_null() || input_value_size % size_of::<usize>() != 0 || !(1..=3).contains(&n) {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller passes input_value_size readable bytes (checked non-null).
        Ok(unsafe { std::slice::from_raw_parts(input_value.cast::<usize>(), n) }.to_vec())
    };
    let (sub_group_size, max_items) = (k.info.sub_group_size(), k.max_work_group_size(&d));
    let info = match param_name {
        CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => {
            let local = local_size()?;
            Info::of(&sub_group_size.min(local[0]))
        }
        CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => {
            let local = local_size()?;
            let rows = local[1..].iter().try_fold(1usize, |p, &n| p.checked_mul(n)).ok_or(CL_INVALID_VALUE)?;
            Info::of(&local[0].div_ceil(sub_group_size).checked_mul(rows).ok_or(CL_INVALID_VALUE)?)
        }
        CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT => {
            if input_value.is_null() || input_value_size != size_of::<usize>() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: checked non-null and the size of one size_t.
            let count = unsafe { input_value.cast::<usize>().read_unaligned() };
            // The local size in as many dimensions as the caller's array holds: `count`
            // whole sub-groups in x, or all zero where no group has that many.
            let dims = (param_value_size / size_of::<usize>()).clamp(1, 3);
            let mut size = vec![0usize; dims];
            if let Some(x) = count.checked_mul(sub_group_size).filter(|&x| count > 0 && x <= max_items) {
                size.iter_mut().for_each(|s| *s = 1);
                size[0] = x;
            }
            Info::of(&size[..])
        }
        // A group one work-item wide has as many sub-groups as work-items.
        CL_KERNEL_MAX_NUM_SUB_GROUPS => Info::of(&max_items),
        // No kernel attribute sets a sub-group count.
        CL_KERNEL_COMPILE_NUM_SUB_GROUPS => Info::of(&0usize),
        // cl_intel_required_subgroup_size's: the size the kernel asks for, 0 for none.
        CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL => Info::of(&k.info.reqd_sub_group_size.unwrap_or(0)),
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clSetKernelArgSVMPointer(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> CLResult<()> {
    set_pointer_arg(kernel, arg_index, arg_value)
}

/// An SVM or USM pointer as a kernel argument. "CL_INVALID_ARG_INDEX if arg_index is
/// not a valid argument index", "CL_INVALID_ARG_VALUE if arg_value specified is not a
/// valid value": the argument must be a pointer to global or constant memory. Any
/// address is one with fine-grain system SVM, NULL and pointers into the middle of
/// allocations included.
pub(super) fn set_pointer_arg(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> CLResult<()> {
    set_svm_arg(&*from_handle::<Kernel>(kernel)?, arg_index, arg_value)
}

/// `clSetKernelArgSVMPointer` on a kernel object (see `set_arg`).
pub(super) fn set_svm_arg(k: &Kernel, arg_index: cl_uint, arg_value: *const c_void) -> CLResult<()> {
    let a = k.info.args.get(arg_index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
    if a.kind != ArgKind::Buffer {
        return Err(CL_INVALID_ARG_VALUE);
    }
    k.set_arg(arg_index as usize, ArgValue::Svm(arg_value as usize))?;
    Ok(())
}

#[cl_entry_point]
fn clSetKernelExecInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_exec_info,
    param_value_size: usize,
    param_value: *const c_void,
) -> CLResult<()> {
    from_handle::<Kernel>(kernel)?;
    exec_info(param_name, param_value_size, param_value)
}

/// `clSetKernelExecInfo`'s checks, which a mutable kernel command's update applies too.
pub(super) fn exec_info(param_name: cl_uint, param_value_size: usize, param_value: *const c_void) -> CLResult<()> {
    // "CL_INVALID_VALUE if param_name is not valid, if param_value is NULL or if the
    // size specified by param_value_size is not valid" (an empty SVM pointer list,
    // size 0 and NULL, unsets the previous one), and the USM ones alike. Kernels reach
    // every address the process has, so no setting changes what a launch does.
    let valid = match param_name {
        CL_KERNEL_EXEC_INFO_SVM_PTRS | CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL => {
            param_value_size % std::mem::size_of::<*const c_void>() == 0
                && (param_value_size == 0) == param_value.is_null()
        }
        CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM
        | CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL
        | CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL
        | CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL => {
            param_value_size == std::mem::size_of::<cl_bool>() && !param_value.is_null()
        }
        _ => false,
    };
    if !valid {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// Whether the program allows non-uniform work-groups: OpenCL C 2.0 or later without
/// `-cl-uniform-work-group-size`.
/// # Safety
/// The pointers follow `clEnqueueNDRangeKernel`'s contract: the work sizes null or
/// `work_dim` long, the wait list `num_events_in_wait_list` long, `event` null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn enqueue_ndrange(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
    command: cl_command_type,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events, wait_list)?;
    let (k, range) = ndrange(&q, kernel, work_dim, global_work_offset, global_work_size, local_work_size)?;
    let launch = device_enqueue::launch(&k, &q.device, range, q.workers())?;
    submit(
        &q,
        command,
        wait,
        event,
        false,
        Box::new(move || if launch.run() { Ok(()) } else { Err(CL_OUT_OF_RESOURCES) }),
    )
}

/// `clEnqueueNDRangeKernel`'s checks of the kernel and the geometry, which
/// `clCommandNDRangeKernelKHR` makes too: the kernel and the range.
///
/// # Safety
/// The work sizes are null or `work_dim` long.
pub(super) unsafe fn ndrange(
    q: &Queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
) -> CLResult<(Arc<Kernel>, NdRange)> {
    let k = from_handle::<Kernel>(kernel)?;
    let (dims, global, offset) = geometry(q, &k, work_dim, global_work_offset, global_work_size)?;
    let local = (!local_work_size.is_null()).then(|| sizes(local_work_size, dims, 1));
    Ok((k, NdRange { dims, global, offset, local }))
}

/// `dims` sizes from `p`, the rest `default` (all `default` where `p` is null).
///
/// # Safety
/// `p` is null or points at `dims` sizes.
pub(super) unsafe fn sizes(p: *const usize, dims: usize, default: usize) -> [usize; 3] {
    let mut v = [default; 3];
    if !p.is_null() {
        v[..dims].copy_from_slice(slice(p, dims));
    }
    v
}

/// The checks `clEnqueueNDRangeKernel` and `clGetKernelSuggestedLocalWorkSizeKHR`
/// share: "CL_INVALID_CONTEXT if context associated with command_queue and kernel are
/// not the same", "CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (i.e. a
/// value between 1 and CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)", "CL_INVALID_GLOBAL_OFFSET
/// if the value specified in global_work_size + the corresponding values in
/// global_work_offset for any dimensions is greater than the maximum value
/// representable by size t on the device". Returns the dimensions, the global size (all
/// zero for a NULL one: since OpenCL 2.1 such a launch "will trivially succeed") and the
/// offset.
///
/// # Safety
/// The sizes are null or `work_dim` long.
unsafe fn geometry(
    q: &Queue,
    k: &Kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
) -> CLResult<(usize, [usize; 3], [usize; 3])> {
    if !Arc::ptr_eq(&q.context, &k.program.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    if !(1..=3).contains(&work_dim) {
        return Err(CL_INVALID_WORK_DIMENSION);
    }
    let dims = work_dim as usize;
    let global = if global_work_size.is_null() { [0; 3] } else { sizes(global_work_size, dims, 1) };
    let offset = sizes(global_work_offset, dims, 0);
    if (0..3).any(|d| global[d].checked_add(offset[d]).is_none()) {
        return Err(CL_INVALID_GLOBAL_OFFSET);
    }
    Ok((dims, global, offset))
}

/// `cl_khr_suggested_local_work_size`: the work-group size `clEnqueueNDRangeKernel`
/// would choose, with its errors.
#[cl_entry_point]
fn clGetKernelSuggestedLocalWorkSizeKHR(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    suggested_local_work_size: *mut usize,
) -> CLResult<()> {
    let q = from_handle::<Queue>(queue)?;
    let k = from_handle::<Kernel>(kernel)?;
    let (dims, global, _) = geometry(&q, &k, work_dim, global_work_offset, global_work_size)?;
    // "CL_INVALID_GLOBAL_WORK_SIZE if global_work_size is NULL or if any of the values
    // specified in global_work_size are 0", or their product overflows a size_t.
    if global.contains(&0) || global.iter().try_fold(1usize, |n, &g| n.checked_mul(g)).is_none() {
        return Err(CL_INVALID_GLOBAL_WORK_SIZE);
    }
    // "CL_INVALID_VALUE if suggested_local_work_size is NULL."
    if suggested_local_work_size.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let local = k.suggested_group_size(&q.device, dims, global)?;
    // SAFETY: the caller's array holds `work_dim` sizes.
    unsafe { std::ptr::copy_nonoverlapping(local.as_ptr(), suggested_local_work_size, dims) };
    Ok(())
}

#[cl_entry_point]
fn clEnqueueNDRangeKernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    enqueue_ndrange(
        queue,
        kernel,
        work_dim,
        global_work_offset,
        global_work_size,
        local_work_size,
        num_events_in_wait_list,
        event_wait_list,
        event,
        CL_COMMAND_NDRANGE_KERNEL,
    )
}

#[cl_entry_point]
fn clEnqueueTask(
    queue: cl_command_queue,
    kernel: cl_kernel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    // "equivalent to calling clEnqueueNDRangeKernel with work_dim set to 1,
    // global_work_offset set to NULL, global_work_size[0] set to 1, and
    // local_work_size[0] set to 1."
    let one = [1usize];
    enqueue_ndrange(
        queue,
        kernel,
        1,
        std::ptr::null(),
        one.as_ptr(),
        one.as_ptr(),
        num_events_in_wait_list,
        event_wait_list,
        event,
        CL_COMMAND_TASK,
    )
}

#[cl_entry_point]
fn clEnqueueNativeKernel(
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
) -> CLResult<()> {
    // "CL_INVALID_OPERATION if the device associated with command_queue cannot execute
    // the native kernel" (CL_DEVICE_EXECUTION_CAPABILITIES lacks CL_EXEC_NATIVE_KERNEL).
    from_handle::<crate::core::queue::Queue>(queue).and(Err(CL_INVALID_OPERATION))
}
