//! Device entry points and the answer to every `clGetDeviceInfo` query.

use std::ffi::c_void;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle};
use super::util::{write_opt, CLResult, Info};
use crate::core::device::{self, Device};
use crate::core::device_enqueue;
use crate::core::event::now_ns;
use crate::core::image;
use crate::core::partition;
use crate::core::platform::{self, Platform};
use crate::core::{cl_version, DRIVER_VERSION};

/// The header's name, which is not upper case (a lint error as a pattern).
const DOT_PRODUCT_ACCELERATION_PACKED: cl_device_info =
    CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED;

/// Device types this platform can answer for.
const KNOWN_TYPES: cl_device_type = CL_DEVICE_TYPE_DEFAULT
    | CL_DEVICE_TYPE_CPU
    | CL_DEVICE_TYPE_GPU
    | CL_DEVICE_TYPE_ACCELERATOR
    | CL_DEVICE_TYPE_CUSTOM;

/// Whether our CPU device matches a requested type (`CL_DEVICE_TYPE_ALL` included).
pub(crate) fn matches_type(device_type: cl_device_type) -> CLResult<bool> {
    if device_type == CL_DEVICE_TYPE_ALL {
        return Ok(true);
    }
    if device_type == 0 || device_type & !KNOWN_TYPES != 0 {
        return Err(CL_INVALID_DEVICE_TYPE);
    }
    Ok(device_type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT) != 0)
}

#[cl_entry_point]
fn clGetDeviceIDs(
    platform: cl_platform_id,
    device_type: cl_device_type,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> CLResult<()> {
    // "CL_INVALID_PLATFORM if platform is not a valid platform."
    if !platform.is_null() {
        from_handle::<Platform>(platform)?;
    }
    // "CL_INVALID_DEVICE_TYPE if device_type is not a valid value."
    let found = matches_type(device_type)?;
    // "CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL or if
    // both num_devices and devices are NULL."
    if (num_entries == 0 && !devices.is_null()) || (num_devices.is_null() && devices.is_null()) {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found."
    if !found {
        return Err(CL_DEVICE_NOT_FOUND);
    }
    if !devices.is_null() {
        // SAFETY: devices has room for num_entries >= 1 handles.
        unsafe { devices.write(icd::handle_of(Device::get())) };
    }
    write_opt(num_devices, 1);
    Ok(())
}

/// Pointers to static C strings, as `const char*[]` queries return them.
fn c_strings(names: &[&'static std::ffi::CStr]) -> Vec<*mut c_void> {
    names.iter().map(|n| n.as_ptr().cast_mut().cast()).collect()
}

fn device_info(d: &Device, param: cl_device_info) -> CLResult<Info> {
    let l = &d.limits;
    let h = &d.host;
    let w = d.vector_widths();
    let none_u32 = 0u32;
    let none_u64 = 0u64;
    match param {
        CL_DEVICE_TYPE => Info::of(&CL_DEVICE_TYPE_CPU),
        CL_DEVICE_VENDOR_ID => Info::of(&0x4643_4c00u32),
        CL_DEVICE_MAX_COMPUTE_UNITS => Info::of(&d.compute_units()),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => Info::of(&3u32),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => Info::of(&l.max_work_item_sizes),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => Info::of(&l.max_work_group_size),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR | CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR => Info::of(&w[0]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT | CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT => Info::of(&w[1]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT | CL_DEVICE_NATIVE_VECTOR_WIDTH_INT => Info::of(&w[2]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG | CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG => Info::of(&w[3]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT | CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT => Info::of(&w[4]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE | CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE => Info::of(&w[5]),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF | CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => Info::of(&w[6]),
        CL_DEVICE_MAX_CLOCK_FREQUENCY => Info::of(&h.max_clock_mhz),
        CL_DEVICE_ADDRESS_BITS => Info::of(&64u32),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => Info::of(&l.max_mem_alloc),
        CL_DEVICE_GLOBAL_MEM_SIZE => Info::of(&l.global_mem),
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => Info::of(&CL_READ_WRITE_CACHE),
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => Info::of(&h.cacheline),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => Info::of(&h.cache_bytes),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => Info::of(&l.max_constant_buffer),
        CL_DEVICE_MAX_CONSTANT_ARGS => Info::of(&8u32),
        CL_DEVICE_LOCAL_MEM_TYPE => Info::of(&CL_GLOBAL),
        CL_DEVICE_LOCAL_MEM_SIZE => Info::of(&l.local_mem_size),
        CL_DEVICE_MAX_PARAMETER_SIZE => Info::of(&l.max_parameter_size),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => Info::of(&(l.base_addr_align as u32 * 8)),
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => Info::of(&(l.base_addr_align as u32)),
        CL_DEVICE_SINGLE_FP_CONFIG => Info::of(&d.single_fp_config()),
        CL_DEVICE_DOUBLE_FP_CONFIG => Info::of(&d.double_fp_config()),
        CL_DEVICE_HALF_FP_CONFIG => Info::of(&d.half_fp_config()),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => Info::of(&false),
        CL_DEVICE_HOST_UNIFIED_MEMORY => Info::of(&true),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => Info::of(&1usize),
        CL_DEVICE_ENDIAN_LITTLE => Info::of(&true),
        CL_DEVICE_AVAILABLE => Info::of(&true),
        // Kernels compile with an external clang; without one, builds report
        // CL_COMPILER_NOT_AVAILABLE and say what to install.
        CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => Info::of(&crate::compiler::available()),
        CL_DEVICE_EXECUTION_CAPABILITIES => Info::of(&CL_EXEC_KERNEL),
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => {
            Info::of(&(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE))
        }
        CL_DEVICE_PLATFORM => Info::of(&icd::handle_of(Platform::get())),
        CL_DEVICE_NAME => Info::of(&h.cpu_name),
        // cl_khr_device_uuid: no LUID (a Windows notion) and no node mask.
        CL_DEVICE_UUID_KHR => Info::of(&d.uuid()),
        CL_DRIVER_UUID_KHR => Info::of(&device::uuid(&format!("FerroCL driver {DRIVER_VERSION}"))),
        CL_DEVICE_LUID_VALID_KHR => Info::of(&CL_FALSE),
        CL_DEVICE_LUID_KHR => Info::of(&[0u8; CL_LUID_SIZE_KHR]),
        CL_DEVICE_NODE_MASK_KHR => Info::of(&0u32),
        CL_DEVICE_VENDOR => Info::of(&h.cpu_vendor),
        CL_DRIVER_VERSION => Info::of(DRIVER_VERSION),
        CL_DEVICE_PROFILE => Info::of(platform::PROFILE),
        CL_DEVICE_VERSION => Info::of(&format!("OpenCL 3.0 FerroCL {DRIVER_VERSION}")),
        CL_DEVICE_NUMERIC_VERSION => Info::of(&cl_version(3, 0, 0)),
        // "the highest fully backwards compatible OpenCL C version": 1.2 for 3.0 devices.
        // Every optional feature of OpenCL C 2.0 is there (pipes, device-side enqueue,
        // the generic address space, program-scope variables, ...).
        CL_DEVICE_OPENCL_C_VERSION => Info::of("OpenCL C 2.0 FerroCL"),
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => Info::of(&platform::name_versions(device::OPENCL_C_VERSIONS)),
        CL_DEVICE_OPENCL_C_FEATURES => Info::of(&platform::name_versions(device::OPENCL_C_FEATURES)),
        CL_DEVICE_EXTENSIONS => Info::of(&platform::extension_string(&device::extensions())),
        CL_DEVICE_EXTENSIONS_WITH_VERSION => Info::of(&platform::name_versions(&device::extensions())),
        // cl_khr_spirv_queries: the names as arrays of pointers to static C strings.
        CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR => Info::of(&c_strings(device::spirv_queries().instruction_sets)),
        CL_DEVICE_SPIRV_EXTENSIONS_KHR => Info::of(&c_strings(&device::spirv_queries().extensions)),
        CL_DEVICE_SPIRV_CAPABILITIES_KHR => Info::of(&device::spirv_queries().capabilities),
        CL_DEVICE_ILS_WITH_VERSION => Info::of(&platform::name_versions(&device::intermediate_languages())),
        // "SPIR-V_1.0 SPIR-V_1.1 ...", empty without the translator.
        CL_DEVICE_IL_VERSION => Info::of(
            &device::intermediate_languages()
                .iter()
                .map(|&(n, v)| format!("{n}_{}.{}", v >> 22, (v >> 12) & 0x3ff))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => Info::of(&Vec::<cl_name_version>::new()),
        CL_DEVICE_BUILT_IN_KERNELS => Info::of(""),
        // No conformance run has been recorded. The CTS requires the form vYYYY-MM-DD-XX
        // with a valid month and day, so "none" is year 0, January 1 (as Mesa rusticl).
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => Info::of("v0000-01-01-00"),
        CL_DEVICE_PRINTF_BUFFER_SIZE => Info::of(&l.printf_buffer_size),
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => Info::of(&true),
        CL_DEVICE_PARENT_DEVICE => {
            Info::of(&d.partition.as_ref().map_or(std::ptr::null_mut(), |p| icd::handle_of(&p.parent)))
        }
        // A sub-device per compute unit at most; a device of one cannot be partitioned.
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => Info::of(&d.compute_units()),
        // "If the device cannot be partitioned ... a value of 0 will be returned."
        // "If the device cannot be partitioned ... a value of 0 will be returned."
        CL_DEVICE_PARTITION_PROPERTIES => Info::of(&match d.compute_units() {
            0 | 1 => vec![0],
            _ if partition::affinity_domains(&d.worker_list()) == 0 => {
                vec![CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS]
            }
            _ => {
                vec![CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS, CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN]
            }
        }),
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => Info::of(&partition::affinity_domains(&d.worker_list())),
        // The root device's is empty ("param_value_size_ret may be set to 0").
        CL_DEVICE_PARTITION_TYPE => match &d.partition {
            Some(p) => Info::of(&p.properties[..]),
            None => Info::empty(),
        },
        CL_DEVICE_REFERENCE_COUNT => Info::of(&d.partition.as_ref().map_or(1, |_| d.base.ref_count())),
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT => Info::of(&true),
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT => {
            Info::of(&cl_bool::from(device::has_feature("__opencl_c_work_group_collective_functions")))
        }
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT => {
            Info::of(&cl_bool::from(device::has_feature("__opencl_c_generic_address_space")))
        }
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => Info::of(&(w[4] as usize)),
        // The sub-groups of a work-group run one after another on its thread
        // (builtins/clc/workitem.c), as Intel's CPU runtime's do: one spinning on
        // another never lets it run.
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => Info::of(&CL_FALSE),
        // Sub-groups are runs of work-items in x within a row: a group one work-item
        // wide has as many sub-groups as work-items.
        CL_DEVICE_MAX_NUM_SUB_GROUPS => Info::of(&(l.max_work_group_size as u32)),
        device::fp_atomics::SINGLE | device::fp_atomics::DOUBLE => Info::of(&device::fp_atomics::CAPABILITIES),
        device::fp_atomics::HALF => Info::of(&none_u64),
        // Every scope reads one monotonic clock (builtins/clc/workitem.c).
        CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR => Info::of(
            &(CL_DEVICE_KERNEL_CLOCK_SCOPE_DEVICE_KHR
                | CL_DEVICE_KERNEL_CLOCK_SCOPE_WORK_GROUP_KHR
                | CL_DEVICE_KERNEL_CLOCK_SCOPE_SUB_GROUP_KHR),
        ),
        // cl_intel_device_attribute_query, as Intel's CPU runtime answers it: the CPU's
        // signature; one slice of one sub-slice whose "EUs" are the cores, each a thread;
        // no DP4A or DPAS instructions; no GPU IP version.
        CL_DEVICE_IP_VERSION_INTEL => Info::of(&0u32),
        CL_DEVICE_ID_INTEL => Info::of(&h.cpu_signature),
        CL_DEVICE_NUM_SLICES_INTEL | CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL | CL_DEVICE_NUM_THREADS_PER_EU_INTEL => {
            Info::of(&1u32)
        }
        CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL => Info::of(&d.compute_units()),
        CL_DEVICE_FEATURE_CAPABILITIES_INTEL => Info::of(&none_u64),
        CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR => Info::of(&super::command_buffer::CAPABILITIES),
        // cl_khr_command_buffer_multi_device: no device synchronises with another on
        // its own; the platform's universal sync (on the host) serves them all.
        CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR => Info::of(&none_u32),
        CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR => Info::of(&Vec::<cl_device_id>::new()),
        CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR => {
            Info::of(&super::command_buffer::SUPPORTED_QUEUE_PROPERTIES)
        }
        CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR => Info::of(&super::command_buffer::MUTABLE_FIELDS),
        CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR => {
            Info::of(&super::command_buffer::REQUIRED_QUEUE_PROPERTIES)
        }
        CL_DEVICE_SUB_GROUP_SIZES_INTEL => Info::of(&crate::compiler::kernel_info::SUB_GROUP_SIZES[..]),
        // Every order and scope (x86 atomics are sequentially consistent across the
        // host), as the OpenCL C features claim.
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES => Info::of(&device::atomic_capabilities()),
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => {
            Info::of(&(device::atomic_capabilities() | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM))
        }
        // Images: any number of arguments costs nothing (each is a pointer), so these
        // are the OpenCL minimums, raised where programs are known to want more.
        CL_DEVICE_IMAGE_SUPPORT => Info::of(&true),
        CL_DEVICE_MAX_READ_IMAGE_ARGS => Info::of(&128u32),
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS | CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => Info::of(&64u32),
        CL_DEVICE_MAX_SAMPLERS => Info::of(&16u32),
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT => Info::of(&image::PITCH_ALIGNMENT),
        CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => Info::of(&image::BASE_ADDRESS_ALIGNMENT),
        CL_DEVICE_IMAGE2D_MAX_WIDTH | CL_DEVICE_IMAGE2D_MAX_HEIGHT => Info::of(&image::LIMITS.max_2d),
        CL_DEVICE_IMAGE3D_MAX_WIDTH | CL_DEVICE_IMAGE3D_MAX_HEIGHT | CL_DEVICE_IMAGE3D_MAX_DEPTH => {
            Info::of(&image::LIMITS.max_3d)
        }
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE => Info::of(&image::LIMITS.max_buffer),
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => Info::of(&image::LIMITS.max_array),
        CL_DEVICE_SVM_CAPABILITIES => Info::of(&crate::core::svm::CAPABILITIES),
        CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL => Info::of(&crate::core::usm::CAPABILITIES),
        // Pipes (builtins/clc/pipes.c): reservations are limited only by the ring.
        CL_DEVICE_MAX_PIPE_ARGS => Info::of(&device::pipes::MAX_ARGS),
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS => Info::of(&device::pipes::MAX_ACTIVE_RESERVATIONS),
        CL_DEVICE_PIPE_MAX_PACKET_SIZE => Info::of(&device::pipes::MAX_PACKET_SIZE),
        CL_DEVICE_PIPE_SUPPORT => Info::of(&true),
        // Device-side enqueue (core/device_enqueue.rs, exec/enqueue.rs).
        CL_DEVICE_MAX_ON_DEVICE_QUEUES => Info::of(&device_enqueue::MAX_QUEUES),
        CL_DEVICE_MAX_ON_DEVICE_EVENTS => Info::of(&device_enqueue::MAX_EVENTS),
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE => Info::of(&device_enqueue::PREFERRED_SIZE),
        CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE => Info::of(&device_enqueue::MAX_SIZE),
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => {
            Info::of(&(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE))
        }
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => {
            Info::of(&(CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT))
        }
        // "0 indicates that the device has no preference": any alignment is as fast.
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => Info::of(&none_u32),
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE | CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => {
            Info::of(&device::MAX_GLOBAL_VARIABLE_SIZE)
        }
        // cl_khr_integer_dot_product: both input forms, computed with ordinary vector
        // instructions, which the spec's "accelerated" does not describe.
        CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES => {
            Info::of(&(CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT | CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED))
        }
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT | DOT_PRODUCT_ACCELERATION_PACKED => {
            Info::of(&[CL_FALSE; 6])
        }
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetDeviceInfo(
    device: cl_device_id,
    param_name: cl_device_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let d = from_handle::<Device>(device)?;
    device_info(&d, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clCreateSubDevices(
    in_device: cl_device_id,
    properties: *const cl_device_partition_property,
    num_devices: cl_uint,
    out_devices: *mut cl_device_id,
    num_devices_ret: *mut cl_uint,
) -> CLResult<()> {
    let d = from_handle::<Device>(in_device)?;
    if properties.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // The list up to its first 0: the end of the list, or of a partition's counts
    // (`CL_DEVICE_PARTITION_BY_COUNTS_LIST_END` is 0), after which nothing is read:
    // Intel's SYCL runtime ends its counts with a single 0.
    let mut list = Vec::new();
    for i in 0..partition::MOST_PROPERTIES {
        // SAFETY: the caller passes a 0-terminated list, read up to its first 0.
        let p = unsafe { properties.add(i).read() };
        list.push(p);
        if p == 0 {
            break;
        }
    }
    let scheme = partition::parse(&list)?;
    let subs = partition::create(&d, &scheme)?;
    // "CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the number
    // of sub-devices created by the partition scheme."
    if !out_devices.is_null() && (num_devices as usize) < subs.len() {
        return Err(CL_INVALID_VALUE);
    }
    write_opt(num_devices_ret, subs.len() as cl_uint);
    if !out_devices.is_null() {
        for (i, sub) in subs.into_iter().enumerate() {
            // SAFETY: out_devices has room for num_devices >= subs.len() handles.
            unsafe { out_devices.add(i).write(icd::into_handle(sub)) };
        }
    }
    Ok(())
}

/// Root devices: "the reference count ... is not changed" by retain/release; the
/// handle is still validated. Sub-devices count their references like other objects.
#[cl_entry_point]
fn clRetainDevice(device: cl_device_id) -> CLResult<()> {
    match from_handle::<Device>(device)?.partition {
        Some(_) => icd::retain::<Device>(device),
        None => Ok(()),
    }
}

#[cl_entry_point]
fn clReleaseDevice(device: cl_device_id) -> CLResult<()> {
    match from_handle::<Device>(device)?.partition {
        Some(_) => icd::release::<Device>(device),
        None => Ok(()),
    }
}

#[cl_entry_point]
fn clGetDeviceAndHostTimer(
    device: cl_device_id,
    device_timestamp: *mut cl_ulong,
    host_timestamp: *mut cl_ulong,
) -> CLResult<()> {
    from_handle::<Device>(device)?;
    // "CL_INVALID_VALUE if host_timestamp or device_timestamp is NULL."
    if device_timestamp.is_null() || host_timestamp.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // Device and host share one clock.
    let now = now_ns();
    write_opt(device_timestamp, now);
    write_opt(host_timestamp, now);
    Ok(())
}

#[cl_entry_point]
fn clGetHostTimer(device: cl_device_id, host_timestamp: *mut cl_ulong) -> CLResult<()> {
    from_handle::<Device>(device)?;
    if host_timestamp.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    write_opt(host_timestamp, now_ns());
    Ok(())
}
