//! The one CPU device and the limits it reports.

use std::sync::{Arc, LazyLock};

use opencl_sys::*;

use super::cl_version;
use super::host::HostFacts;
use super::object::{cl_object, Base};
use crate::compiler;

#[repr(C)]
pub(crate) struct Device {
    pub(crate) base: Base,
    pub(crate) host: HostFacts,
    pub(crate) limits: Limits,
    /// What the compiler builds this device's kernels for.
    pub(crate) compile_target: compiler::Target,
    /// For a sub-device: its parent and its workers (`None`: the root device, on every
    /// worker).
    pub(crate) partition: Option<Partition>,
}

/// What makes a sub-device one (`core::partition` makes them).
pub(crate) struct Partition {
    pub(crate) parent: Arc<Device>,
    /// The pool's workers it runs on.
    pub(crate) workers: crate::exec::pool::Workers,
    /// `CL_DEVICE_PARTITION_TYPE`: the properties it was made with, the affinity domain
    /// `NEXT_PARTITIONABLE` chose in its place, and the terminating 0.
    pub(crate) properties: Vec<cl_device_partition_property>,
}

cl_object!(Device, CL_INVALID_DEVICE);

/// Limits chosen by the driver (as opposed to facts read from the machine).
#[derive(Clone)]
pub(crate) struct Limits {
    pub(crate) max_work_group_size: usize,
    pub(crate) max_work_item_sizes: [usize; 3],
    pub(crate) local_mem_size: u64,
    pub(crate) max_mem_alloc: u64,
    pub(crate) global_mem: u64,
    pub(crate) max_constant_buffer: u64,
    pub(crate) max_parameter_size: usize,
    /// Required alignment of sub-buffer origins and our allocations, in bytes.
    pub(crate) base_addr_align: usize,
    pub(crate) printf_buffer_size: usize,
}

/// Work-items of one group run as fibers when the kernel has barriers; the largest
/// group times the fiber stack size is the per-worker reservation (4096 x 128 KiB,
/// committed only as stacks are touched), so the two are chosen together.
pub(crate) const MAX_WORK_GROUP_SIZE: usize = 4096;

/// See the global memory comment in `DEVICE`.
const MAX_GLOBAL_MEM: u64 = 6 << 30;

/// 32 KiB of local memory per work-group, the full-profile minimum. The Khronos CTS
/// 2D/3D async-copy tests skip every configuration when local memory exceeds about 8x
/// the maximum work-group size (their buffers are sized from local memory and checked
/// against the group size), so this pair lets them actually run. It bounds the `__local`
/// arguments of a launch (each worker's preallocated arena).
pub(crate) const LOCAL_MEM_SIZE: u64 = 32 << 10;
/// Most `__local` memory one launch may use when the kernel's own `__local` variables
/// take it past `LOCAL_MEM_SIZE`. Those variables have sizes fixed when the program is
/// compiled and live in each worker thread's TLS block, not in the arena, so a kernel
/// that declares more than the device figure still runs, as it does on PoCL (1 MiB of
/// local memory). The CTS's test_half declares 16x the maximum work-group size
/// (`__local double16 data[4096 / 8]`, 64 KiB), which no figure that keeps the 2D/3D
/// async-copy tests running can cover.
pub(crate) const LOCAL_MEM_WITH_VARIABLES: u64 = 1 << 20;

static DEVICE: LazyLock<Arc<Device>> = LazyLock::new(|| {
    let host = HostFacts::probe();
    // Device memory is host memory, and programs keep host copies of their buffers:
    // half the RAM is what a program can realistically give the device. It is capped so
    // one allocation (a quarter, the spec's minimum) stays under 2 GiB: the Khronos CTS
    // sizes its 2D/3D async-copy buffers from these figures, holds several copies of
    // each (all of RAM exhausted a 24 GB machine), and verifies them with 32-bit byte
    // offsets (buffers over 2 GiB fail whatever the driver does).
    let global_mem = (host.memory_bytes / 2).min(MAX_GLOBAL_MEM);
    let limits = Limits {
        max_work_group_size: MAX_WORK_GROUP_SIZE,
        max_work_item_sizes: [MAX_WORK_GROUP_SIZE; 3],
        local_mem_size: LOCAL_MEM_SIZE,
        // The spec's minimum: max(1/4 of global memory, 128 MiB).
        max_mem_alloc: (global_mem / 4).max(128 << 20),
        global_mem,
        max_constant_buffer: 1 << 20,
        max_parameter_size: 1024,
        base_addr_align: 128,
        printf_buffer_size: 1 << 20,
    };
    let compile_target = compiler::Target {
        // The OpenCL C extensions; the IL ones concern the SPIR-V reader, not clang.
        extensions: EXTENSIONS.iter().map(|(n, _)| *n).collect(),
        pre_3_extensions: PRE_3_EXTENSIONS.to_vec(),
        features: OPENCL_C_FEATURES.iter().map(|(n, _)| *n).collect(),
        cpu: match compiler::cross_cpu() {
            Some(cpu) => format!("-march={cpu}"),
            None => format!("{}|{}", host.cpu_name, host.cpu_flags),
        },
    };
    crate::exec::pool::configure(crate::exec::pool::PoolConfig {
        cores: host.cores as usize,
        local_mem: limits.local_mem_size as usize,
    });
    Arc::new(Device { base: Base::new(), host, limits, compile_target, partition: None })
});

/// OpenCL C versions the compiler accepts (`-cl-std=`).
pub(crate) const OPENCL_C_VERSIONS: &[(&str, u32)] = &[
    ("OpenCL C", cl_version(1, 0, 0)),
    ("OpenCL C", cl_version(1, 1, 0)),
    ("OpenCL C", cl_version(1, 2, 0)),
    ("OpenCL C", cl_version(2, 0, 0)),
    ("OpenCL C", cl_version(3, 0, 0)),
];

/// Device extensions that work at this version of the driver. Each entry is added in
/// the same change that makes it work.
pub(crate) const EXTENSIONS: &[(&str, u32)] = &[
    ("cl_khr_byte_addressable_store", cl_version(1, 0, 0)),
    ("cl_khr_fp16", cl_version(1, 0, 0)),
    ("cl_khr_fp64", cl_version(1, 0, 0)),
    ("cl_khr_global_int32_base_atomics", cl_version(1, 0, 0)),
    ("cl_khr_global_int32_extended_atomics", cl_version(1, 0, 0)),
    ("cl_khr_local_int32_base_atomics", cl_version(1, 0, 0)),
    ("cl_khr_local_int32_extended_atomics", cl_version(1, 0, 0)),
    ("cl_khr_int64_base_atomics", cl_version(1, 0, 0)),
    ("cl_khr_int64_extended_atomics", cl_version(1, 0, 0)),
    ("cl_khr_extended_async_copies", cl_version(1, 0, 0)),
    ("cl_khr_async_work_group_copy_fence", cl_version(1, 0, 0)),
    ("cl_khr_3d_image_writes", cl_version(1, 0, 0)),
    ("cl_khr_depth_images", cl_version(1, 0, 0)),
    ("cl_khr_image2d_from_buffer", cl_version(1, 0, 0)),
    ("cl_khr_extended_bit_ops", cl_version(1, 0, 0)),
    ("cl_khr_integer_dot_product", cl_version(2, 0, 0)),
    ("cl_khr_subgroup_shuffle", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_shuffle_relative", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_rotate", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_extended_types", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_clustered_reduce", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_ballot", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_non_uniform_vote", cl_version(1, 0, 0)),
    ("cl_khr_subgroup_non_uniform_arithmetic", cl_version(1, 0, 0)),
    ("cl_intel_required_subgroup_size", cl_version(1, 0, 0)),
    ("cl_intel_subgroups", cl_version(1, 0, 0)),
    ("cl_khr_work_group_uniform_arithmetic", cl_version(1, 0, 0)),
    ("cl_ext_float_atomics", cl_version(1, 0, 0)),
    ("cl_khr_kernel_clock", cl_version(1, 0, 0)),
];

/// Extensions the compiler enables in OpenCL C before 3.0 (which has
/// `__opencl_c_subgroups`) without the device claiming them: `cl_khr_subgroups`
/// requires sub-groups to make independent forward progress, and the sub-groups of one
/// work-group run one after another on one thread (as Intel's CPU runtime's do; it does
/// not claim the extension either), but OpenCL C 2.0 programs that call sub-group
/// functions still build.
pub(crate) const PRE_3_EXTENSIONS: &[&str] = &["cl_khr_subgroups"];

/// Extensions of SPIR-V programs, claimed where the translator is installed (so they
/// are not in the list clang is told about).
pub(crate) const IL_EXTENSIONS: &[(&str, u32)] = &[
    ("cl_khr_il_program", cl_version(1, 0, 0)),
    ("cl_khr_spirv_queries", cl_version(1, 0, 0)),
    ("cl_khr_spirv_no_integer_wrap_decoration", cl_version(1, 0, 0)),
    ("cl_khr_spirv_linkonce_odr", cl_version(1, 0, 0)),
    ("cl_khr_expect_assume", cl_version(1, 0, 0)),
    // `__devicelib_assert_fail`, which SYCL modules call on a failed assert
    // (builtins/clc/printf.c).
    ("cl_intel_devicelib_assert", cl_version(1, 0, 0)),
];

/// Extensions of the API alone (so not in the list clang is told about).
pub(crate) const API_EXTENSIONS: &[(&str, u32)] = &[
    ("cl_intel_unified_shared_memory", cl_version(1, 1, 0)),
    ("cl_khr_device_uuid", cl_version(1, 0, 0)),
    ("cl_khr_suggested_local_work_size", cl_version(1, 0, 0)),
    ("cl_khr_priority_hints", cl_version(1, 0, 0)),
    ("cl_khr_throttle_hints", cl_version(1, 0, 0)),
    ("cl_khr_create_command_queue", cl_version(1, 0, 0)),
    ("cl_ext_immutable_memory_objects", cl_version(1, 0, 0)),
    ("cl_khr_command_buffer", cl_version(0, 9, 8)),
    ("cl_khr_command_buffer_mutable_dispatch", cl_version(0, 9, 5)),
    ("cl_khr_command_buffer_multi_device", cl_version(0, 9, 2)),
    ("cl_intel_device_attribute_query", cl_version(1, 0, 0)),
];

/// A UUID (RFC 9562 version 8, made from a hash) naming `what`: the same text gives
/// the same UUID in every process, as `cl_khr_device_uuid` wants of the device's and
/// the driver's.
pub(crate) fn uuid(what: &str) -> [u8; 16] {
    // Two FNV-1a hashes with different bases: no crate for sixteen bytes.
    let fnv = |basis: u64| what.bytes().fold(basis, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&fnv(0xcbf2_9ce4_8422_2325).to_be_bytes());
    out[8..].copy_from_slice(&fnv(0x6c62_272e_07bb_0142).to_be_bytes());
    out[6] = (out[6] & 0x0f) | 0x80;
    out[8] = (out[8] & 0x3f) | 0x80;
    out
}

impl Device {
    /// `CL_DEVICE_UUID_KHR`: the host's processor, cores and machine id (where the
    /// system has one), so that two machines with the same processor differ.
    pub(crate) fn uuid(&self) -> [u8; 16] {
        let machine = std::fs::read_to_string("/etc/machine-id").unwrap_or_default();
        let h = &self.host;
        uuid(&format!("FerroCL device|{}|{}|{}|{}", h.cpu_vendor, h.cpu_name, h.cores, machine.trim()))
    }
}

/// The extensions the device reports: `EXTENSIONS`, `API_EXTENSIONS`, and
/// `IL_EXTENSIONS` where the SPIR-V translator is installed.
pub(crate) fn extensions() -> Vec<(&'static str, u32)> {
    let il = crate::compiler::spirv::find().map(|_| IL_EXTENSIONS).unwrap_or_default();
    EXTENSIONS.iter().chain(API_EXTENSIONS).chain(il).copied().collect()
}

/// What `cl_khr_spirv_queries` reports the device reads in SPIR-V modules: extended
/// instruction sets, extensions and capabilities. The lists are the ones the Khronos
/// CTS (test_api's spirv_queries) requires of an OpenCL 3.0 full-profile device with
/// this device's features and OpenCL C extensions (images and read-write images,
/// sub-groups and work-group collectives, the generic address space, pipes, no
/// device-side enqueue), plus `SPV_INTEL_memory_access_aliasing`, which SYCL modules
/// use and the driver reads. Empty without the translator.
pub(crate) struct SpirvQueries {
    pub(crate) instruction_sets: &'static [&'static std::ffi::CStr],
    pub(crate) extensions: Vec<&'static std::ffi::CStr>,
    pub(crate) capabilities: Vec<u32>,
}

pub(crate) fn spirv_queries() -> SpirvQueries {
    if crate::compiler::spirv::find().is_none() {
        return SpirvQueries { instruction_sets: &[], extensions: Vec::new(), capabilities: Vec::new() };
    }
    // SPIR-V capability numbers (SPIR-V specification, section 3.31).
    let mut capabilities = vec![
        4,    // Addresses
        5,    // Linkage
        6,    // Kernel
        7,    // Vector16
        8,    // Float16Buffer
        11,   // Int64
        22,   // Int16
        39,   // Int8
        13,   // ImageBasic
        14,   // ImageReadWrite
        20,   // LiteralSampler
        43,   // Sampled1D
        44,   // Image1D
        46,   // SampledBuffer
        47,   // ImageBuffer
        18,   // Groups (sub-groups, work-group collectives)
        38,   // GenericPointer
        58,   // SubgroupDispatch (SPIR-V 1.1 with sub-groups)
        17,   // Pipes
        19,   // DeviceEnqueue
        5910, // MemoryAccessAliasingINTEL
    ];
    // UniformDecoration: SPIR-V 1.6's, accepted (and dropped: a hint) by `legalize`.
    if crate::compiler::spirv::versions().contains(&(1, 6)) {
        capabilities.push(71);
    }
    let mut extensions = vec![c"SPV_INTEL_memory_access_aliasing"];
    let has = |name: &str| extensions_named(name);
    let by_extension: &[(&str, &[&std::ffi::CStr], &[u32])] = &[
        ("cl_khr_fp16", &[], &[9]),
        ("cl_khr_fp64", &[], &[10]),
        ("cl_khr_int64_base_atomics", &[], &[12]),
        ("cl_khr_expect_assume", &[c"SPV_KHR_expect_assume"], &[5629]),
        ("cl_khr_extended_bit_ops", &[c"SPV_KHR_bit_instructions"], &[6025]),
        // Both input forms (CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR).
        ("cl_khr_integer_dot_product", &[c"SPV_KHR_integer_dot_product"], &[6019, 6018, 6017]),
        ("cl_khr_spirv_linkonce_odr", &[c"SPV_KHR_linkonce_odr"], &[]),
        ("cl_khr_spirv_no_integer_wrap_decoration", &[c"SPV_KHR_no_integer_wrap_decoration"], &[]),
        ("cl_khr_subgroup_clustered_reduce", &[], &[67]),
        // GroupNonUniform, GroupNonUniformVote, GroupNonUniformArithmetic,
        // GroupNonUniformBallot.
        ("cl_khr_subgroup_non_uniform_vote", &[], &[61, 62]),
        ("cl_khr_subgroup_non_uniform_arithmetic", &[], &[63]),
        ("cl_khr_subgroup_ballot", &[], &[64]),
        ("cl_khr_subgroup_rotate", &[c"SPV_KHR_subgroup_rotate"], &[6026]),
        ("cl_khr_subgroup_shuffle", &[], &[65]),
        ("cl_khr_subgroup_shuffle_relative", &[], &[66]),
        // ShaderClockKHR: `OpReadClockKHR` becomes the kernel clock's calls
        // (`spirv::legalize`).
        ("cl_khr_kernel_clock", &[c"SPV_KHR_shader_clock"], &[5055]),
        // GroupUniformArithmeticKHR: the translator's `work_group_reduce_bitwise_*`.
        ("cl_khr_work_group_uniform_arithmetic", &[c"SPV_KHR_uniform_group_instructions"], &[6400]),
        // AtomicFloat32AddEXT, AtomicFloat64AddEXT, AtomicFloat32MinMaxEXT,
        // AtomicFloat64MinMaxEXT: float and double (`fp_atomics::CAPABILITIES`).
        (
            "cl_ext_float_atomics",
            &[c"SPV_EXT_shader_atomic_float_add", c"SPV_EXT_shader_atomic_float_min_max"],
            &[6033, 6034, 5612, 5613],
        ),
    ];
    for &(name, exts, caps) in by_extension {
        if has(name) {
            extensions.extend_from_slice(exts);
            capabilities.extend_from_slice(caps);
        }
    }
    SpirvQueries { instruction_sets: &[c"OpenCL.std"], extensions, capabilities }
}

/// The device reports extension `name`.
fn extensions_named(name: &str) -> bool {
    extensions().iter().any(|&(n, _)| n == name)
}

/// The intermediate languages the device reads: SPIR-V, in the versions the translator
/// knows.
pub(crate) fn intermediate_languages() -> Vec<(&'static str, u32)> {
    crate::compiler::spirv::versions()
        .iter()
        .map(|&(major, minor)| ("SPIR-V", cl_version(major.into(), minor.into(), 0)))
        .collect()
}

/// OpenCL C 3.0 optional features the device supports.
pub(crate) const OPENCL_C_FEATURES: &[(&str, u32)] = &[
    ("__opencl_c_int64", cl_version(3, 0, 0)),
    ("__opencl_c_fp64", cl_version(3, 0, 0)),
    ("__opencl_c_program_scope_global_variables", cl_version(3, 0, 0)),
    ("__opencl_c_generic_address_space", cl_version(3, 0, 0)),
    ("__opencl_c_atomic_order_acq_rel", cl_version(3, 0, 0)),
    ("__opencl_c_atomic_order_seq_cst", cl_version(3, 0, 0)),
    ("__opencl_c_atomic_scope_device", cl_version(3, 0, 0)),
    ("__opencl_c_atomic_scope_all_devices", cl_version(3, 0, 0)),
    ("__opencl_c_work_group_collective_functions", cl_version(3, 0, 0)),
    ("__opencl_c_subgroups", cl_version(3, 0, 0)),
    ("__opencl_c_images", cl_version(3, 0, 0)),
    ("__opencl_c_read_write_images", cl_version(3, 0, 0)),
    ("__opencl_c_3d_image_writes", cl_version(3, 0, 0)),
    ("__opencl_c_pipes", cl_version(3, 0, 0)),
    ("__opencl_c_device_enqueue", cl_version(3, 0, 0)),
    // cl_khr_integer_dot_product's, with its version.
    ("__opencl_c_integer_dot_product_input_4x8bit", cl_version(2, 0, 0)),
    ("__opencl_c_integer_dot_product_input_4x8bit_packed", cl_version(2, 0, 0)),
    // cl_khr_kernel_clock's scopes.
    ("__opencl_c_kernel_clock_scope_device", cl_version(1, 0, 0)),
    ("__opencl_c_kernel_clock_scope_work_group", cl_version(1, 0, 0)),
    ("__opencl_c_kernel_clock_scope_sub_group", cl_version(1, 0, 0)),
];

/// OpenCL 2.0 pipes' limits: the spec's minimum packet size and pipe arguments, as
/// Intel's CPU runtime has them; reservations are limited by a pipe's ring alone.
pub(crate) mod pipes {
    pub(crate) const MAX_PACKET_SIZE: u32 = 1024;
    pub(crate) const MAX_ARGS: u32 = 16;
    pub(crate) const MAX_ACTIVE_RESERVATIONS: u32 = 65536;
}

/// cl_ext_float_atomics' queries and capability bits (cl_ext.h; opencl-sys lacks them).
pub(crate) mod fp_atomics {
    use opencl_sys::cl_device_info;
    pub(crate) const SINGLE: cl_device_info = 0x4231;
    pub(crate) const DOUBLE: cl_device_info = 0x4232;
    pub(crate) const HALF: cl_device_info = 0x4233;
    const GLOBAL_LOAD_STORE: u64 = 1 << 0;
    const GLOBAL_ADD: u64 = 1 << 1;
    const GLOBAL_MIN_MAX: u64 = 1 << 2;
    const LOCAL_LOAD_STORE: u64 = 1 << 16;
    const LOCAL_ADD: u64 = 1 << 17;
    const LOCAL_MIN_MAX: u64 = 1 << 18;
    /// Float's and double's: add, sub, min and max in global and local memory
    /// (builtins/clc/atomics_c11.cl), and load and store, which every atomic type has.
    /// Half atomics are not offered.
    pub(crate) const CAPABILITIES: u64 =
        GLOBAL_LOAD_STORE | GLOBAL_ADD | GLOBAL_MIN_MAX | LOCAL_LOAD_STORE | LOCAL_ADD | LOCAL_MIN_MAX;
}

/// Whether the device claims an OpenCL C feature.
pub(crate) fn has_feature(name: &str) -> bool {
    OPENCL_C_FEATURES.iter().any(|(n, _)| *n == name)
}

/// `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`, from the atomic features claimed.
pub(crate) fn atomic_capabilities() -> u64 {
    [
        ("", CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP),
        ("__opencl_c_atomic_order_acq_rel", CL_DEVICE_ATOMIC_ORDER_ACQ_REL),
        ("__opencl_c_atomic_order_seq_cst", CL_DEVICE_ATOMIC_ORDER_SEQ_CST),
        ("__opencl_c_atomic_scope_device", CL_DEVICE_ATOMIC_SCOPE_DEVICE),
        ("__opencl_c_atomic_scope_all_devices", CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES),
    ]
    .iter()
    .filter(|(f, _)| f.is_empty() || has_feature(f))
    .fold(0, |caps, (_, c)| caps | c)
}

/// Largest program-scope `__global` variable (the OpenCL minimum when supported);
/// the variables live in the kernel library's data.
pub(crate) const MAX_GLOBAL_VARIABLE_SIZE: usize = 64 << 10;

impl Device {
    pub(crate) fn get() -> &'static Arc<Device> {
        &DEVICE
    }

    /// A sub-device of `parent` (`partition::create`): the parent's facts and limits,
    /// its own workers.
    pub(crate) fn sub_device(parent: &Device, partition: Partition) -> Arc<Device> {
        Arc::new(Device {
            base: Base::new(),
            host: parent.host.clone(),
            limits: parent.limits.clone(),
            compile_target: parent.compile_target.clone(),
            partition: Some(partition),
        })
    }

    /// The workers a launch on this device runs on (`None`: all of them).
    pub(crate) fn workers(&self) -> Option<crate::exec::pool::Workers> {
        self.partition.as_ref().map(|p| p.workers.clone())
    }

    /// This device's workers by the pool's numbers.
    pub(crate) fn worker_list(&self) -> Vec<usize> {
        match &self.partition {
            Some(p) => p.workers.to_vec(),
            None => (0..crate::exec::pool::Pool::get().workers).collect(),
        }
    }

    /// `CL_DEVICE_MAX_COMPUTE_UNITS`: a core per worker.
    pub(crate) fn compute_units(&self) -> u32 {
        match &self.partition {
            Some(p) => p.workers.len() as u32,
            None => self.host.cores,
        }
    }

    /// Preferred and native vector widths (char, short, int, long, float, double, half):
    /// the elements of the widest vector registers the kernels are compiled for, at
    /// most 16, the widest vector OpenCL C has (a vision library sizes its kernels from
    /// these and gave up on OpenCL for 8-bit data when they said 64). Half is computed
    /// in float lanes (LLVM promotes it), so it has float's width.
    pub(crate) fn vector_widths(&self) -> [u32; 7] {
        let bytes = if self.host.has_avx512 {
            64
        } else if self.host.has_avx2 {
            32
        } else {
            16
        };
        // 0 for a floating-point type whose extension is not supported.
        let has = |e: &str| EXTENSIONS.iter().any(|(n, _)| *n == e);
        let dbl = if has("cl_khr_fp64") { bytes / 8 } else { 0 };
        let half = if has("cl_khr_fp16") { bytes / 4 } else { 0 };
        [bytes, bytes / 2, bytes / 4, bytes / 8, bytes / 4, dbl, half].map(|w| w.min(16))
    }

    /// The minimum cl_khr_fp64 requires; x86 doubles are IEEE 754 with FMA in hardware
    /// or in libm.
    pub(crate) fn double_fp_config(&self) -> cl_device_fp_config {
        CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_INF_NAN | CL_FP_DENORM
    }

    /// cl_khr_fp16: half arithmetic is done in float and rounded to nearest (LLVM's
    /// promotion), or in the CPU's half instructions (AVX512-FP16, which ignore the
    /// denormal flush modes); either keeps denormals, infinities and NaNs.
    pub(crate) fn half_fp_config(&self) -> cl_device_fp_config {
        CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST
    }

    /// Division and `sqrt` are the CPU's IEEE 754 instructions (`divss`, `sqrtss` and
    /// their vector forms; `sqrt` is `__builtin_sqrtf` in builtins/clc/math.cl), so
    /// they are correctly rounded, with `-cl-fp32-correctly-rounded-divide-sqrt` or
    /// without.
    pub(crate) fn single_fp_config(&self) -> cl_device_fp_config {
        let fma = if self.host.has_fma { CL_FP_FMA } else { 0 };
        CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT | fma
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macros_the_compiler_defines_by_hand_are_of_what_the_device_claims() {
        for m in compiler::SPIR_ONLY_MACROS {
            assert!(EXTENSIONS.iter().chain(OPENCL_C_FEATURES).any(|(n, _)| n == m), "{m} is not claimed");
        }
    }
}
