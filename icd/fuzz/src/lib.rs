//! What the fuzz targets share: the driver reached through its ICD dispatch table, the
//! way the loader reaches it, and one context with a built program that every input may
//! use (building a program per input would spend each run in clang).
//!
//! The driver is linked in as a crate, so libFuzzer's coverage and the sanitizers see its
//! code; kernels are built by the real clang and linked with the real builtins.

// OpenCL handles are raw pointers; the harness passes them to the driver, which
// validates them, and never dereferences one itself.
#![allow(clippy::not_unsafe_ptr_arg_deref)]
// `cl!`'s arguments are plain values and handles: nothing unsafe hides in them.
#![allow(clippy::macro_metavars_in_unsafe)]

pub mod api;
pub mod binary;
pub mod il;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use opencl_sys::cl_icd::_cl_icd_dispatch;
use opencl_sys::*;

/// The driver's dispatch table and its one platform and device.
pub struct Driver {
    pub table: &'static _cl_icd_dispatch,
    pub platform: cl_platform_id,
    pub device: cl_device_id,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`: sizes above it must be refused, so inputs may use them.
    pub max_alloc: usize,
}

// SAFETY: the handles are the driver's process-wide platform and device, which the
// driver itself shares between threads; the table is immutable.
unsafe impl Sync for Driver {}
// SAFETY: as above.
unsafe impl Send for Driver {}

/// Calls an entry point through the dispatch table: `cl!(clFinish(queue))`.
#[macro_export]
macro_rules! cl {
    ($name:ident($($arg:expr),* $(,)?)) => {
        // SAFETY: the arguments are what the fuzz input says; the driver validates every
        // handle, size and flag, and every pointer passed is null or to memory the
        // harness owns with at least the size passed along with it.
        unsafe { ($crate::driver().table.$name.expect(stringify!($name)))($($arg),*) }
    };
}

/// The builtins archive, where tools/fuzz or a workspace build left it.
fn locate_builtins() {
    if std::env::var_os("FERROCL_BUILTINS").is_some() {
        return;
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target");
    for profile in ["release", "debug"] {
        let path = format!("{root}/{profile}/libferrocl_builtins.a");
        if std::path::Path::new(&path).is_file() {
            // Set before the driver reads it, while libFuzzer runs on one thread.
            std::env::set_var("FERROCL_BUILTINS", path);
            return;
        }
    }
}

/// `clCreateKernelsInProgram` on whatever `p` became, and the kernels released.
pub fn create_and_release_kernels(p: cl_program) {
    let mut kernels = [null_mut(); 8];
    let mut n = 0;
    if cl!(clCreateKernelsInProgram(p, 8, kernels.as_mut_ptr(), &mut n)) == CL_SUCCESS {
        for &k in &kernels[..n as usize] {
            cl!(clReleaseKernel(k));
        }
    }
}

pub fn driver() -> &'static Driver {
    static DRIVER: OnceLock<Driver> = OnceLock::new();
    DRIVER.get_or_init(|| {
        locate_builtins();
        let mut platform = null_mut();
        // SAFETY: one entry, with room for it.
        let err = unsafe { ferrocl::api::icd::clIcdGetPlatformIDsKHR(1, &mut platform, null_mut()) };
        assert_eq!(err, CL_SUCCESS, "no FerroCL platform");
        // SAFETY: every handle starts with the dispatch table pointer (cl_khr_icd).
        let table = unsafe { &**(platform as *const *const _cl_icd_dispatch) };
        let mut driver = Driver { table, platform, device: null_mut(), max_alloc: 0 };
        let mut device = null_mut();
        // SAFETY: one entry, with room for it.
        let err = unsafe { (table.clGetDeviceIDs.unwrap())(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, null_mut()) };
        assert_eq!(err, CL_SUCCESS);
        driver.device = device;
        let mut max_alloc: cl_ulong = 0;
        // SAFETY: a cl_ulong query into a cl_ulong.
        unsafe {
            (table.clGetDeviceInfo.unwrap())(
                device,
                CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                8,
                &mut max_alloc as *mut cl_ulong as *mut c_void,
                null_mut(),
            )
        };
        driver.max_alloc = max_alloc as usize;
        driver
    })
}

/// The kernels inputs launch. Each bounds its accesses by the trailing `n` (elements
/// of the global buffers) and `nl` (elements of the `__local` argument), which the
/// harness sets from what it knows of the arguments right before a launch: the fuzzer
/// drives the driver, not the kernels into undefined behaviour.
pub const SOURCE: &str = r#"
kernel void fill(global int *out, int value, uint n) {
    size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    if (i < n) out[i] = value + (int)get_group_id(1);
}
kernel void divide(global int *out, int a, int b, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = a / (b - (int)i) + a % (b + (int)i);
}
kernel void reduce(global const float *in, global float *out, local float *scratch, uint n, uint nl) {
    size_t l = get_local_id(0), g = get_global_id(0);
    if (l < nl) scratch[l] = g < n ? in[g] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (size_t k = 0; k < min(get_local_size(0), (size_t)nl); k++) s += scratch[k];
        if (get_group_id(0) < n) out[get_group_id(0)] = s;
    }
}
kernel void stage(global const int *in, global int *out, local int *tile, uint n, uint nl) {
    size_t base = get_group_id(0) * get_local_size(0);
    size_t count = base < n ? min(get_local_size(0), (size_t)n - base) : 0;
    count = min(count, (size_t)nl);
    event_t e = async_work_group_copy(tile, in + min(base, (size_t)n), count, 0);
    wait_group_events(1, &e);
    size_t l = get_local_id(0);
    if (l < count) out[base + l] = tile[l] * 2;
}
kernel void scalars(global uchar *out, char a, short2 b, long c, float4 d, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = (uchar)(a + b.y + (uchar)c + (int)d.w);
}
kernel void tiles(global int *out, uint n) {
    local int tile[64];
    size_t l = get_local_id(0);
    if (l < 64) tile[l] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_global_id(0) < n) out[get_global_id(0)] = tile[l % 64];
}
"#;

/// What the harness knows of each kernel's parameters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Param {
    /// A `global T *`, with `T`'s size.
    Global(usize),
    /// A `local T *`, with `T`'s size.
    Local(usize),
    /// A by-value argument of this size.
    Value(usize),
    /// `uint n`: the fewest elements any global argument holds.
    N,
    /// `uint nl`: the elements the local argument holds.
    NL,
}

pub const KERNELS: &[(&str, &[Param])] = {
    use Param::*;
    &[
        ("fill", &[Global(4), Value(4), N]),
        ("divide", &[Global(4), Value(4), Value(4), N]),
        ("reduce", &[Global(4), Global(4), Local(4), N, NL]),
        ("stage", &[Global(4), Global(4), Local(4), N, NL]),
        ("scalars", &[Global(1), Value(1), Value(4), Value(8), Value(16), N]),
        ("tiles", &[Global(4), N]),
    ]
};

/// A context, an in-order queue and the built program, made once per process.
pub struct Fixture {
    pub context: cl_context,
    pub queue: cl_command_queue,
    pub program: cl_program,
}

// SAFETY: OpenCL handles may be used from any thread; these are never released.
unsafe impl Sync for Fixture {}
// SAFETY: as above.
unsafe impl Send for Fixture {}

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let d = driver();
        let mut err = 0;
        let context = cl!(clCreateContext(null(), 1, &d.device, None, null_mut(), &mut err));
        assert_eq!(err, CL_SUCCESS);
        let queue = cl!(clCreateCommandQueueWithProperties(context, d.device, null(), &mut err));
        assert_eq!(err, CL_SUCCESS);
        let mut source = SOURCE.as_ptr() as *const std::ffi::c_char;
        let len = SOURCE.len();
        let program = cl!(clCreateProgramWithSource(context, 1, &mut source, &len, &mut err));
        assert_eq!(err, CL_SUCCESS);
        let err = cl!(clBuildProgram(program, 0, null(), null(), None, null_mut()));
        assert_eq!(err, CL_SUCCESS, "the fuzz kernels do not build:\n{}", build_log(program));
        Fixture { context, queue, program }
    })
}

/// The program's build log, for a harness assertion.
pub fn build_log(program: cl_program) -> String {
    let d = driver();
    let mut log = vec![0u8; 1 << 16];
    cl!(clGetProgramBuildInfo(
        program,
        d.device,
        CL_PROGRAM_BUILD_LOG,
        log.len(),
        log.as_mut_ptr() as *mut c_void,
        null_mut()
    ));
    String::from_utf8_lossy(&log).trim_end_matches('\0').to_string()
}
