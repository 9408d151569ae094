//! Platform and device queries.

use crate::common::*;

#[test]
fn platform_strings_and_versions() {
    let (p, _) = platform_device();
    let s = |param| info_string(|sz, v, r| cl!(clGetPlatformInfo(p, param, sz, v, r)));
    assert_eq!(s(CL_PLATFORM_NAME), "FerroCL");
    assert_eq!(s(CL_PLATFORM_PROFILE), "FULL_PROFILE");
    assert!(s(CL_PLATFORM_VERSION).starts_with("OpenCL 3.0 "));
    assert!(!s(CL_PLATFORM_VENDOR).is_empty());
    assert!(s(CL_PLATFORM_EXTENSIONS).split(' ').any(|e| e == "cl_khr_icd"));
    let v: cl_version = info(|sz, v, r| cl!(clGetPlatformInfo(p, CL_PLATFORM_NUMERIC_VERSION, sz, v, r)));
    assert_eq!(v, (3 << 22));
    let ext = info_bytes(|sz, v, r| cl!(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, sz, v, r)));
    assert_eq!(ext.len() % std::mem::size_of::<cl_name_version>(), 0);
    // cl_khr_icd 2.0.0: loader-managed dispatch.
    let icd = ext.chunks(std::mem::size_of::<cl_name_version>()).find(|c| c[4..].starts_with(b"cl_khr_icd\0"));
    let version = u32::from_ne_bytes(icd.expect("cl_khr_icd with its version")[..4].try_into().unwrap());
    assert_eq!(version, 2 << 22);
    let _: cl_ulong = info(|sz, v, r| cl!(clGetPlatformInfo(p, CL_PLATFORM_HOST_TIMER_RESOLUTION, sz, v, r)));
}

#[test]
fn platform_bad_queries() {
    let (p, _) = platform_device();
    let mut small = [0u8; 3];
    err!(CL_INVALID_VALUE, cl!(clGetPlatformInfo(p, CL_PLATFORM_NAME, 3, small.as_mut_ptr().cast(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clGetPlatformInfo(p, 0xdead, 0, null_mut(), null_mut())));
    // Size-only query with a null value pointer is allowed.
    let mut size = 0;
    ok!(cl!(clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, null_mut(), &mut size)));
    assert_eq!(size, "FerroCL".len() + 1);
    err!(CL_INVALID_VALUE, cl!(clGetPlatformIDs(0, &mut null_mut(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clGetPlatformIDs(1, null_mut(), null_mut())));
}

/// Every OpenCL 3.0 device query answers, with a size that matches its type.
#[test]
fn every_device_query_answers() {
    let (_, d) = platform_device();
    let u = std::mem::size_of::<cl_uint>();
    let ul = std::mem::size_of::<cl_ulong>();
    let z = std::mem::size_of::<usize>();
    let fixed: &[(cl_device_info, usize)] = &[
        (CL_DEVICE_TYPE, ul),
        (CL_DEVICE_VENDOR_ID, u),
        (CL_DEVICE_MAX_COMPUTE_UNITS, u),
        (CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, u),
        (CL_DEVICE_MAX_WORK_ITEM_SIZES, 3 * z),
        (CL_DEVICE_MAX_WORK_GROUP_SIZE, z),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, u),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, u),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, u),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, u),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, u),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, u),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, u),
        (CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, u),
        (CL_DEVICE_MAX_CLOCK_FREQUENCY, u),
        (CL_DEVICE_ADDRESS_BITS, u),
        (CL_DEVICE_MAX_MEM_ALLOC_SIZE, ul),
        (CL_DEVICE_IMAGE_SUPPORT, u),
        (CL_DEVICE_MAX_READ_IMAGE_ARGS, u),
        (CL_DEVICE_MAX_WRITE_IMAGE_ARGS, u),
        (CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, u),
        (CL_DEVICE_IMAGE2D_MAX_WIDTH, z),
        (CL_DEVICE_IMAGE2D_MAX_HEIGHT, z),
        (CL_DEVICE_IMAGE3D_MAX_WIDTH, z),
        (CL_DEVICE_IMAGE3D_MAX_HEIGHT, z),
        (CL_DEVICE_IMAGE3D_MAX_DEPTH, z),
        (CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, z),
        (CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, z),
        (CL_DEVICE_MAX_SAMPLERS, u),
        (CL_DEVICE_IMAGE_PITCH_ALIGNMENT, u),
        (CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, u),
        (CL_DEVICE_MAX_PIPE_ARGS, u),
        (CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, u),
        (CL_DEVICE_PIPE_MAX_PACKET_SIZE, u),
        (CL_DEVICE_MAX_PARAMETER_SIZE, z),
        (CL_DEVICE_MEM_BASE_ADDR_ALIGN, u),
        (CL_DEVICE_SINGLE_FP_CONFIG, ul),
        (CL_DEVICE_DOUBLE_FP_CONFIG, ul),
        (CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, u),
        (CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, u),
        (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, ul),
        (CL_DEVICE_GLOBAL_MEM_SIZE, ul),
        (CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, ul),
        (CL_DEVICE_MAX_CONSTANT_ARGS, u),
        (CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, z),
        (CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE, z),
        (CL_DEVICE_LOCAL_MEM_TYPE, u),
        (CL_DEVICE_LOCAL_MEM_SIZE, ul),
        (CL_DEVICE_ERROR_CORRECTION_SUPPORT, u),
        (CL_DEVICE_PROFILING_TIMER_RESOLUTION, z),
        (CL_DEVICE_ENDIAN_LITTLE, u),
        (CL_DEVICE_AVAILABLE, u),
        (CL_DEVICE_COMPILER_AVAILABLE, u),
        (CL_DEVICE_LINKER_AVAILABLE, u),
        (CL_DEVICE_EXECUTION_CAPABILITIES, ul),
        (CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, ul),
        (CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, ul),
        (CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, u),
        (CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, u),
        (CL_DEVICE_MAX_ON_DEVICE_QUEUES, u),
        (CL_DEVICE_MAX_ON_DEVICE_EVENTS, u),
        (CL_DEVICE_PLATFORM, z),
        (CL_DEVICE_NUMERIC_VERSION, u),
        (CL_DEVICE_PRINTF_BUFFER_SIZE, z),
        (CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, u),
        (CL_DEVICE_PARENT_DEVICE, z),
        (CL_DEVICE_PARTITION_MAX_SUB_DEVICES, u),
        (CL_DEVICE_PARTITION_AFFINITY_DOMAIN, ul),
        (CL_DEVICE_REFERENCE_COUNT, u),
        (CL_DEVICE_SVM_CAPABILITIES, ul),
        (CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT, u),
        (CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT, u),
        (CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT, u),
        (CL_DEVICE_MAX_NUM_SUB_GROUPS, u),
        (CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, u),
        (CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, ul),
        (CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, ul),
        (CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, u),
        (CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, u),
        (CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, u),
        (CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, ul),
        (CL_DEVICE_PIPE_SUPPORT, u),
        (CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, z),
        (CL_DEVICE_HALF_FP_CONFIG, ul),
    ];
    for &(param, size) in fixed {
        let bytes = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, param, s, v, r)));
        assert_eq!(bytes.len(), size, "size of device query {param:#x}");
    }
    for param in [
        CL_DEVICE_NAME,
        CL_DEVICE_VENDOR,
        CL_DRIVER_VERSION,
        CL_DEVICE_PROFILE,
        CL_DEVICE_VERSION,
        CL_DEVICE_OPENCL_C_VERSION,
        CL_DEVICE_EXTENSIONS,
        CL_DEVICE_BUILT_IN_KERNELS,
        CL_DEVICE_IL_VERSION,
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
    ] {
        info_string(|s, v, r| cl!(clGetDeviceInfo(d, param, s, v, r)));
    }
    let nv = std::mem::size_of::<cl_name_version>();
    for param in [
        CL_DEVICE_OPENCL_C_ALL_VERSIONS,
        CL_DEVICE_OPENCL_C_FEATURES,
        CL_DEVICE_EXTENSIONS_WITH_VERSION,
        CL_DEVICE_ILS_WITH_VERSION,
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION,
    ] {
        let b = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, param, s, v, r)));
        assert_eq!(b.len() % nv, 0, "cl_name_version array {param:#x}");
    }
    let _ = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_PARTITION_PROPERTIES, s, v, r)));
    let _ = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_PARTITION_TYPE, s, v, r)));
}

#[test]
fn device_values_are_truthful() {
    let (p, d) = platform_device();
    assert_eq!(device_info::<cl_device_type>(d, CL_DEVICE_TYPE), CL_DEVICE_TYPE_CPU);
    let cores = std::thread::available_parallelism().unwrap().get() as cl_uint;
    assert_eq!(device_info::<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS), cores);
    assert_eq!(device_info::<cl_platform_id>(d, CL_DEVICE_PLATFORM), p);
    let version = info_string(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_VERSION, s, v, r)));
    assert!(version.starts_with("OpenCL 3.0 "));
    let conformance =
        info_string(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED, s, v, r)));
    // The form test_computeinfo checks: vYYYY-MM-DD-XX with a valid month and day.
    let parts: Vec<&str> = conformance.strip_prefix('v').unwrap_or("").split('-').collect();
    assert!(
        parts.len() == 4
            && parts.iter().zip([4, 2, 2, 2]).all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_digit()))
            && (1..=12).contains(&parts[1].parse::<u32>().unwrap())
            && (1..=31).contains(&parts[2].parse::<u32>().unwrap()),
        "{conformance}"
    );
    let all = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_ALL_VERSIONS, s, v, r)));
    assert!(all.len() / std::mem::size_of::<cl_name_version>() >= 3);
    // Global memory is half the machine's memory (host copies of buffers live in the
    // same RAM); allocations may take the spec's minimum share of it.
    let phys = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) as u64 * libc::sysconf(libc::_SC_PAGESIZE) as u64 };
    let global: cl_ulong = device_info(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    assert_eq!(global, (phys / 2).min(6 << 30));
    let max_alloc: cl_ulong = device_info(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    assert!(max_alloc >= (global / 4).max(128 << 20));
    assert!(device_info::<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE) >= 32 << 10);
    let wg: usize = device_info(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    let sizes: [usize; 3] = device_info(d, CL_DEVICE_MAX_WORK_ITEM_SIZES);
    assert!(wg >= 1 && sizes[0] >= wg.min(sizes[0]));
    // Images, with at least the OpenCL 3.0 minimum limits.
    assert_eq!(device_info::<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT), CL_TRUE);
    assert!(device_info::<usize>(d, CL_DEVICE_IMAGE2D_MAX_WIDTH) >= 16384);
    assert!(device_info::<usize>(d, CL_DEVICE_IMAGE3D_MAX_DEPTH) >= 2048);
    assert!(device_info::<usize>(d, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE) >= 65536);
    assert!(device_info::<cl_uint>(d, CL_DEVICE_MAX_READ_IMAGE_ARGS) >= 128);
    assert!(device_info::<cl_uint>(d, CL_DEVICE_MAX_SAMPLERS) >= 16);
    // Pipes (`pipes.rs`) and device-side enqueue (`device_enqueue.rs`) are supported.
    assert_eq!(device_info::<cl_bool>(d, CL_DEVICE_PIPE_SUPPORT), CL_TRUE);
    // Every SVM level: device and host share the address space.
    let svm = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
        | CL_DEVICE_SVM_FINE_GRAIN_BUFFER
        | CL_DEVICE_SVM_FINE_GRAIN_SYSTEM
        | CL_DEVICE_SVM_ATOMICS;
    assert_eq!(device_info::<cl_ulong>(d, CL_DEVICE_SVM_CAPABILITIES), svm);
    let queues = CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT;
    assert_eq!(device_info::<cl_ulong>(d, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES), queues);
    assert!(device_info::<cl_uint>(d, CL_DEVICE_MAX_ON_DEVICE_QUEUES) >= 1);
    // The extension string and the versioned list name the same extensions.
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, s, v, r)));
    let listed = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, s, v, r)));
    let names: Vec<String> = listed
        .chunks(std::mem::size_of::<cl_name_version>())
        .map(|c| String::from_utf8_lossy(&c[4..]).trim_end_matches('\0').to_string())
        .collect();
    let words: Vec<&str> = ext.split_whitespace().collect();
    assert_eq!(words.len(), names.len());
    assert!(names.iter().all(|n| words.contains(&n.as_str())));
}

/// Vector widths are OpenCL C vector sizes (at most 16: a vision library sizes its
/// kernels from these and gave up on 8-bit data when they said 64) from the host's
/// vector registers: 16 bytes of char for SSE, AVX2 and AVX-512 alike, float's lanes
/// for int and half (half is computed in float lanes).
#[test]
fn vector_widths_are_opencl_c_vector_sizes() {
    let (_, d) = platform_device();
    let widths = |pairs: [(cl_device_info, cl_device_info); 7]| {
        pairs.map(|(preferred, native)| {
            let (p, n) = (device_info::<cl_uint>(d, preferred), device_info::<cl_uint>(d, native));
            assert!([1, 2, 4, 8, 16].contains(&p) && p == n, "{preferred:#x}: {p}, native {n}");
            p
        })
    };
    let [char, short, int, long, float, double, half] = widths([
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, CL_DEVICE_NATIVE_VECTOR_WIDTH_INT),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE),
        (CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF),
    ]);
    let avx512 = std::arch::is_x86_feature_detected!("avx512f");
    let bytes = if avx512 {
        64
    } else if std::arch::is_x86_feature_detected!("avx2") {
        32
    } else {
        16
    };
    assert_eq!([char, short, int, long], [16, (bytes / 2).min(16), bytes / 4, bytes / 8]);
    assert_eq!([float, double, half], [int, long, int]);
}

#[test]
fn device_ids_and_bad_input() {
    let (p, d) = platform_device();
    let mut got = null_mut();
    let mut n = 0;
    ok!(cl!(clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &mut got, &mut n)));
    assert_eq!((got, n), (d, 1));
    ok!(cl!(clGetDeviceIDs(p, CL_DEVICE_TYPE_DEFAULT, 1, &mut got, null_mut())));
    err!(CL_DEVICE_NOT_FOUND, cl!(clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &mut got, &mut n)));
    err!(CL_INVALID_DEVICE_TYPE, cl!(clGetDeviceIDs(p, 1 << 20, 1, &mut got, &mut n)));
    err!(CL_INVALID_VALUE, cl!(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, &mut got, &mut n)));
    err!(CL_INVALID_VALUE, cl!(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, null_mut(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clGetDeviceInfo(d, 0xdead, 0, null_mut(), null_mut())));
    let mut small = 0u8;
    err!(CL_INVALID_VALUE, cl!(clGetDeviceInfo(d, CL_DEVICE_NAME, 1, (&mut small as *mut u8).cast(), null_mut())));
    // Root devices: retain/release succeed and leave the count at 1.
    ok!(cl!(clRetainDevice(d)));
    ok!(cl!(clReleaseDevice(d)));
    assert_eq!(device_info::<cl_uint>(d, CL_DEVICE_REFERENCE_COUNT), 1);
    // Counting the sub-devices a partition would make creates none (sub_devices.rs
    // tests partitions).
    let props = [CL_DEVICE_PARTITION_EQUALLY as cl_device_partition_property, 1, 0];
    let mut n = 0;
    ok!(cl!(clCreateSubDevices(d, props.as_ptr(), 0, null_mut(), &mut n)));
    assert_eq!(n, device_info::<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
}

#[test]
fn timers_share_one_clock() {
    let (_, d) = platform_device();
    let (mut dev, mut host, mut host2) = (0, 0, 0);
    ok!(cl!(clGetDeviceAndHostTimer(d, &mut dev, &mut host)));
    ok!(cl!(clGetHostTimer(d, &mut host2)));
    assert!(dev > 0 && host2 >= host);
    err!(CL_INVALID_VALUE, cl!(clGetDeviceAndHostTimer(d, null_mut(), &mut host)));
    err!(CL_INVALID_VALUE, cl!(clGetHostTimer(d, null_mut())));
}

#[test]
fn unknown_extension_functions_are_null() {
    let (p, _) = platform_device();
    let none = cl!(clGetExtensionFunctionAddressForPlatform(p, c"clNoSuchFunctionFCL".as_ptr()));
    assert!(none.is_null());
}

#[test]
fn the_device_and_driver_have_stable_uuids() {
    let (_, d) = platform_device();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_khr_device_uuid"), "{extensions}");
    let device: [u8; 16] = device_info(d, CL_DEVICE_UUID_KHR);
    let driver: [u8; 16] = device_info(d, CL_DRIVER_UUID_KHR);
    assert_eq!(device, device_info::<[u8; 16]>(d, CL_DEVICE_UUID_KHR), "the same on every query");
    assert_ne!(device, driver);
    for u in [device, driver] {
        assert_eq!((u[6] >> 4, u[8] >> 6), (8, 2), "RFC 9562 version 8: {u:x?}");
    }
    assert_eq!(device_info::<cl_bool>(d, CL_DEVICE_LUID_VALID_KHR), CL_FALSE);
    assert_eq!(device_info::<[u8; 8]>(d, CL_DEVICE_LUID_KHR), [0; 8]);
    assert_eq!(device_info::<cl_uint>(d, CL_DEVICE_NODE_MASK_KHR), 0);
    // Another process (the loader started afresh) sees the same UUIDs.
    let dump = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "platform::print_uuid_for_another_process", "--nocapture", "--ignored"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dump.stdout);
    assert!(text.contains(&format!("uuid={device:02x?}")), "{text}");
}

#[test]
#[ignore = "run by the_device_and_driver_have_stable_uuids in a child process"]
fn print_uuid_for_another_process() {
    let (_, d) = platform_device();
    println!("uuid={:02x?}", device_info::<[u8; 16]>(d, CL_DEVICE_UUID_KHR));
}

#[test]
fn intel_device_attributes_describe_the_cpu() {
    let (_, d) = platform_device();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_intel_device_attribute_query"), "{extensions}");
    let cores: cl_uint = device_info(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    let eus: cl_uint = device_info(d, CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL);
    assert_eq!(eus, cores);
    for query in
        [CL_DEVICE_NUM_SLICES_INTEL, CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL, CL_DEVICE_NUM_THREADS_PER_EU_INTEL]
    {
        assert_eq!(device_info::<cl_uint>(d, query), 1);
    }
    // The CPUID signature: the family as /proc/cpuinfo gives it is in bits 8-11 (and
    // 20-27 past 15).
    let id: cl_uint = device_info(d, CL_DEVICE_ID_INTEL);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let family: u32 = cpuinfo
        .lines()
        .find(|l| l.starts_with("cpu family"))
        .unwrap()
        .split(':')
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!((id >> 8 & 0xF) + (id >> 20 & 0xFF), family, "{id:#x}");
    assert_eq!(device_info::<cl_bitfield>(d, CL_DEVICE_FEATURE_CAPABILITIES_INTEL), 0);
}
