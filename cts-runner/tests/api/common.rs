//! Shared setup: FerroCL from this build tree as the only platform, and small helpers
//! for info queries and error codes.

pub use std::ffi::c_void;
pub use std::ptr::{null, null_mut};
use std::sync::Once;

pub use cts_runner::cl;
pub use cts_runner::cl::*;
use cts_runner::icd_env;

/// Asserts an OpenCL call succeeded.
macro_rules! ok {
    ($e:expr) => {
        assert_eq!($e, CL_SUCCESS, "{}", stringify!($e))
    };
}

/// Asserts an OpenCL call returned a specific error.
macro_rules! err {
    ($code:expr, $e:expr) => {
        assert_eq!($e, $code, "{} should return {}", stringify!($e), stringify!($code))
    };
}

static SETUP: Once = Once::new();

/// The FerroCL platform and device, with the loader pointed at this build's driver.
pub fn platform_device() -> (cl_platform_id, cl_device_id) {
    SETUP.call_once(|| {
        let driver = icd_env::build_tree_driver()
            .expect("libferrocl.so is not built: run 'cargo build --workspace' before the tests");
        icd_env::use_only(&driver).unwrap();
    });
    let mut platform = null_mut();
    let mut n = 0;
    ok!(cl!(clGetPlatformIDs(1, &mut platform, &mut n)));
    assert_eq!(n, 1, "the loader should see exactly the FerroCL platform");
    let mut device = null_mut();
    ok!(cl!(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, null_mut())));
    (platform, device)
}

/// A context and an in-order queue (with the given properties) on the FerroCL device.
pub struct Env {
    pub device: cl_device_id,
    pub context: cl_context,
    pub queue: cl_command_queue,
}

impl Env {
    pub fn new() -> Env {
        Env::with_queue(0)
    }

    pub fn with_queue(props: cl_command_queue_properties) -> Env {
        let (_, device) = platform_device();
        let mut e = 0;
        let context = cl!(clCreateContext(null(), 1, &device, None, null_mut(), &mut e));
        ok!(e);
        let queue = cl!(clCreateCommandQueue(context, device, props, &mut e));
        ok!(e);
        Env { device, context, queue }
    }

    pub fn buffer(&self, flags: cl_mem_flags, size: usize, host: *mut c_void) -> cl_mem {
        let mut e = 0;
        let m = cl!(clCreateBuffer(self.context, flags, size, host, &mut e));
        ok!(e);
        m
    }

    /// A buffer filled with `bytes`.
    pub fn buffer_with(&self, bytes: &[u8]) -> cl_mem {
        self.buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.len(), bytes.as_ptr() as *mut c_void)
    }

    pub fn read(&self, mem: cl_mem, size: usize) -> Vec<u8> {
        let mut out = vec![0u8; size];
        ok!(cl!(clEnqueueReadBuffer(
            self.queue,
            mem,
            CL_TRUE,
            0,
            size,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        )));
        out
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        ok!(cl!(clReleaseCommandQueue(self.queue)));
        ok!(cl!(clReleaseContext(self.context)));
    }
}

/// Runs a `clGet*Info`-shaped query: asks for the size, then the value, checks both
/// agree, and returns the bytes.
pub fn info_bytes(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Vec<u8> {
    let mut size = 0;
    ok!(query(0, null_mut(), &mut size));
    let mut buf = vec![0u8; size];
    let mut size2 = 0;
    ok!(query(size, buf.as_mut_ptr().cast(), &mut size2));
    assert_eq!(size, size2);
    buf
}

pub fn info_string(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> String {
    let bytes = info_bytes(query);
    assert_eq!(bytes.last(), Some(&0), "strings are NUL-terminated");
    String::from_utf8(bytes[..bytes.len() - 1].to_vec()).unwrap()
}

pub fn info<T: Copy>(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> T {
    let bytes = info_bytes(query);
    assert_eq!(bytes.len(), std::mem::size_of::<T>());
    // SAFETY: the size matches and T is plain data.
    unsafe { bytes.as_ptr().cast::<T>().read_unaligned() }
}

pub fn device_info<T: Copy>(d: cl_device_id, p: cl_device_info) -> T {
    info(|s, v, r| cl!(clGetDeviceInfo(d, p, s, v, r)))
}

pub fn mem_info<T: Copy>(m: cl_mem, p: cl_mem_info) -> T {
    info(|s, v, r| cl!(clGetMemObjectInfo(m, p, s, v, r)))
}

pub fn event_info<T: Copy>(e: cl_event, p: cl_event_info) -> T {
    info(|s, v, r| cl!(clGetEventInfo(e, p, s, v, r)))
}

/// Calls a function that reports through `errcode_ret` and returns both results.
pub fn with_err<T>(f: impl FnOnce(*mut cl_int) -> T) -> (T, cl_int) {
    let mut e = 1;
    let v = f(&mut e);
    (v, e)
}

/// Deterministic test bytes.
pub fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// An out-of-order device queue (`CL_QUEUE_ON_DEVICE`) on `env`'s device with `extra`
/// properties (`CL_QUEUE_ON_DEVICE_DEFAULT` makes it the default one) and, where given,
/// `CL_QUEUE_SIZE`.
pub fn device_queue(env: &Env, extra: cl_command_queue_properties, size: Option<cl_uint>) -> cl_command_queue {
    let props = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | extra;
    let mut list = vec![CL_QUEUE_PROPERTIES as cl_queue_properties, props];
    if let Some(s) = size {
        list.extend([CL_QUEUE_SIZE as cl_queue_properties, s as cl_queue_properties]);
    }
    list.push(0);
    let (q, e) = with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, list.as_ptr(), e)));
    ok!(e);
    q
}

/// Builds `source` with `options`; panics with the build log on failure.
pub fn build(env: &Env, source: &str, options: &str) -> cl_program {
    let p = program(env, source);
    let opts = std::ffi::CString::new(options).unwrap();
    let e = cl!(clBuildProgram(p, 1, &env.device, opts.as_ptr(), None, null_mut()));
    assert_eq!(e, CL_SUCCESS, "build failed:\n{}", build_log(env, p));
    p
}

pub fn program(env: &Env, source: &str) -> cl_program {
    let src = std::ffi::CString::new(source).unwrap();
    let ptr = src.as_ptr();
    let (p, e) = with_err(|e| cl!(clCreateProgramWithSource(env.context, 1, &ptr as *const _ as *mut _, null(), e)));
    ok!(e);
    p
}

pub fn build_log(env: &Env, p: cl_program) -> String {
    info_string(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_LOG, s, v, r)))
}

pub fn kernel(p: cl_program, name: &str) -> cl_kernel {
    let n = std::ffi::CString::new(name).unwrap();
    let (k, e) = with_err(|e| cl!(clCreateKernel(p, n.as_ptr(), e)));
    ok!(e);
    k
}

pub fn set_arg<T>(k: cl_kernel, i: cl_uint, v: &T) {
    ok!(cl!(clSetKernelArg(k, i, std::mem::size_of::<T>(), (v as *const T).cast())));
}

/// Runs `k` over `global` (with `local`, or NULL) and waits.
/// Runs a 1D launch to its end and returns the command's execution status (negative
/// where the kernel faulted).
pub fn run_status(env: &Env, k: cl_kernel, global: usize, local: usize) -> cl_int {
    let mut ev = null_mut();
    ok!(cl!(clEnqueueNDRangeKernel(env.queue, k, 1, null(), [global].as_ptr(), [local].as_ptr(), 0, null(), &mut ev)));
    ok!(cl!(clFinish(env.queue)));
    let status: cl_int = event_info(ev, CL_EVENT_COMMAND_EXECUTION_STATUS);
    ok!(cl!(clReleaseEvent(ev)));
    status
}

pub fn run(env: &Env, k: cl_kernel, global: &[usize], local: Option<&[usize]>) {
    let l = local.map_or(null(), |l| l.as_ptr());
    ok!(cl!(clEnqueueNDRangeKernel(
        env.queue,
        k,
        global.len() as cl_uint,
        null(),
        global.as_ptr(),
        l,
        0,
        null(),
        null_mut()
    )));
    ok!(cl!(clFinish(env.queue)));
}

/// Reads a buffer of `n` values of T.
pub fn read_as<T: Copy + Default>(env: &Env, m: cl_mem, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    ok!(cl!(clEnqueueReadBuffer(
        env.queue,
        m,
        CL_TRUE,
        0,
        n * std::mem::size_of::<T>(),
        out.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    )));
    out
}

/// A buffer holding `data`.
pub fn buffer_of<T: Copy>(env: &Env, data: &[T]) -> cl_mem {
    env.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        std::mem::size_of_val(data).max(1),
        data.as_ptr() as *mut c_void,
    )
}

/// The machine code of kernel `name`'s launcher in program `p`'s binary (objdump).
pub fn launcher_code(p: cl_program, name: &str) -> String {
    let code = program_code(p);
    code.split("\n\n").filter(|f| f.contains(&format!("<__ferrocl_launch_{name}>:"))).collect::<Vec<_>>().join("\n")
}

/// Whether kernel `name` of program `p` has a flat copy for groups whose sub-groups are
/// its SIMD chunks: an entry point of its own (`__ferrocl_flat_<name>`) where it runs as
/// fibers.
pub fn has_flat_entry(p: cl_program, name: &str) -> bool {
    program_code(p).contains(&format!("<__ferrocl_flat_{name}>:"))
}

/// Whether kernel `name` of program `p` runs its work-items as fibers: only those have
/// a per-work-item entry point (`__ferrocl_item_<name>`) in the program's code.
/// Kernels get code at their first launch: launch `name` before asking.
pub fn runs_as_fibers(p: cl_program, name: &str) -> bool {
    let code = program_code(p);
    assert!(code.contains(&format!("<__ferrocl_launch_{name}>:")), "no code for {name}: launch it first");
    code.contains(&format!("<__ferrocl_item_{name}>:"))
}

/// The disassembly (objdump) of program `p`'s code, from its binary.
fn program_code(p: cl_program) -> String {
    let size: usize = info(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, s, v, r)));
    let mut bin = vec![0u8; size];
    let mut ptrs = [bin.as_mut_ptr()];
    ok!(cl!(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 8, ptrs.as_mut_ptr().cast(), null_mut())));
    let end = bin.windows(4).position(|w| w == b"\n--\n").expect("no payload");
    let so = std::env::temp_dir().join(format!("ferrocl-code-{}-{:p}.so", std::process::id(), p));
    std::fs::write(&so, &bin[end + 4..]).unwrap();
    let out =
        std::process::Command::new("objdump").arg("-d").arg(&so).output().expect("objdump (binutils) is not installed");
    let _ = std::fs::remove_file(&so);
    String::from_utf8_lossy(&out.stdout).into_owned()
}
