// The kernel-side library's parts: which files are compiled to bitcode, with which
// flags, and in which order they are linked into a kernel module. The driver includes
// this file (`icd/src/compiler/library.rs`) and compiles the parts once per clang and
// CPU; the table lives here, beside the sources it names, so adding a part is one edit
// in one folder. Paths in `include_str!` are relative to this file.

/// Kernel-side libraries compiled (per clang and CPU, into the cache) to bitcode and
/// linked into every kernel module, so they inline: (file name, source, language
/// arguments). The OpenCL C ones use the kernels' address-space mangling and OpenCL's
/// default header (which declares what they define).
macro_rules! opencl_library {
    ($std:literal) => {
        opencl_library!($std, "+cl_khr_fp64,+cl_khr_fp16,+cl_khr_byte_addressable_store")
    };
    ($std:literal, $($extensions:literal),+) => {
        &[
            "-x",
            "cl",
            $std,
            "-Xclang",
            "-ffake-address-space-map",
            "-Xclang",
            "-finclude-default-header",
            "-Xclang",
            concat!("-cl-ext=-all,", $($extensions),+),
            "-Wno-psabi",
        ]
    };
}
/// OpenCL C 3.0 parts: where clang declares the functions of the features they define.
macro_rules! opencl_library_3 {
    ($features:literal) => {
        opencl_library!(
            "-cl-std=CL3.0",
            "+cl_khr_fp64,+__opencl_c_fp64,+__opencl_c_int64,+cl_khr_fp16,+__opencl_c_generic_address_space,",
            $features
        )
    };
}
const OPENCL_LIBRARY: &[&str] = opencl_library!("-cl-std=CL1.2");
/// For the forms with generic pointers, which clang declares only from OpenCL C 2.0.
const OPENCL_LIBRARY_GENERIC: &[&str] = opencl_library!("-cl-std=CL2.0");

/// In link order: a part comes before the parts it calls (checked when linking), so
/// one "link only what is needed" pass per part resolves everything.
const BITCODE_LIBRARIES: &[(&str, &str, &[&str])] = &[
    (
        "image.cl",
        include_str!("image.cl"),
        opencl_library_3!(
            "+__opencl_c_images,+__opencl_c_read_write_images,+__opencl_c_3d_image_writes,+cl_khr_3d_image_writes,\
             +cl_khr_depth_images"
        ),
    ),
    ("generic.cl", include_str!("generic.cl"), OPENCL_LIBRARY_GENERIC),
    ("convert.cl", include_str!("convert.cl"), OPENCL_LIBRARY),
    ("vload.cl", include_str!("vload.cl"), OPENCL_LIBRARY),
    ("misc.cl", include_str!("misc.cl"), OPENCL_LIBRARY),
    ("geometric.cl", include_str!("geometric.cl"), OPENCL_LIBRARY),
    ("relational.cl", include_str!("relational.cl"), OPENCL_LIBRARY),
    ("common.cl", include_str!("common.cl"), OPENCL_LIBRARY),
    ("integer.cl", include_str!("integer.cl"), OPENCL_LIBRARY),
    ("math.cl", include_str!("math.cl"), OPENCL_LIBRARY),
    (
        "atomics.cl",
        include_str!("atomics.cl"),
        &["-x", "cl", "-cl-std=CL1.2", "-Xclang", "-ffake-address-space-map"],
    ),
    (
        "atomics_c11.cl",
        include_str!("atomics_c11.cl"),
        // With 64-bit atomics and every order and scope, as the device claims.
        opencl_library_3!(
            "+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics,+__opencl_c_atomic_order_acq_rel,\
             +__opencl_c_atomic_order_seq_cst,+__opencl_c_atomic_scope_device,+__opencl_c_atomic_scope_all_devices"
        ),
    ),
    (
        "enqueue.cl",
        include_str!("enqueue.cl"),
        opencl_library_3!("+__opencl_c_device_enqueue,+__opencl_c_program_scope_global_variables")
    ),
    ("collectives.c", include_str!("collectives.c"), &["-x", "c"]),
    ("enqueue.c", include_str!("enqueue.c"), &["-x", "c"]),
    ("pipes.c", include_str!("pipes.c"), &["-x", "c"]),
    ("workitem.c", include_str!("workitem.c"), &["-x", "c"]),
    ("printf.c", include_str!("printf.c"), &["-x", "c"]),
];

/// The headers library parts include: the macros the OpenCL C parts share, and the
/// structures the C parts share with the driver.
const LIBRARY_HEADERS: &[(&str, &str)] = &[
    ("clc.h", include_str!("clc.h")),
    ("workitem.h", include_str!("workitem.h")),
];

/// Declarations of our extensions' builtins (clang has none), included into kernels.
pub(super) const EXTENSIONS_HEADER: &str = include_str!("ferrocl-extensions.h");
