//! `cts-runner bench`: the kernel benchmarks, run for each named platform in its own
//! process (so memory figures and loader state are per platform), printed side by side
//! with ratios against the first platform and against the host.

use std::ffi::CString;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cl;
use crate::cl::*;

/// One platform's figures, in the order they are printed: (key, label, higher is
/// better). Ratios are first platform / other platform.
pub const METRICS: &[(&str, &str, bool)] = &[
    ("launch_us", "launch latency (global size 1), us", false),
    ("launch16_us", "launch latency, 16 groups of 64 work-items, us", false),
    ("launch16_per_s", "  the same launches back to back, launches/s", true),
    ("cold_build_ms", "cold build + first launch of each kernel, ms", false),
    ("warm_build_ms", "warm build + first launch of each kernel, ms", false),
    ("cold_one_ms", "  later cold builds: 1-kernel program + launch, ms", false),
    ("cold_many_ms", "  later cold builds: 16-kernel program + launches, ms", false),
    ("saxpy_gbs", "saxpy bandwidth, GB/s", true),
    ("saxpy64_gbs", "  the same in groups of 64 work-items, GB/s", true),
    ("saxpy_ids64_gbs", "  the same indexed from group and local ids, GB/s", true),
    ("sgemm_gflops", "barrier-tiled SGEMM 512^3, GFLOP/s", true),
    ("barrier_ns", "barrier cost per work-item, ns", false),
    ("rss_mb", "resident memory: context+queue+program, MiB", false),
    ("peak_rss_mb", "peak resident memory after max-size barrier groups, MiB", false),
    ("mad_float16_gops", "mad(float16) in a loop, G ops/s", true),
    ("mad24_int16_gops", "mad24(int16) in a loop, G ops/s", true),
];

/// Vector builtins at full width: a dependent chain of 256 per work-item, 16 lanes.
/// Built apart from SOURCE, so the cold-build figure keeps measuring the same program.
pub const SOURCE_VECTOR: &str = r#"
kernel void mad_float16(global float16 *o, float s) {
    float16 a = (float16)(get_global_id(0)), b = (float16)(s), c = (float16)(0.5f);
    for (int i = 0; i < 256; i++) a = mad(a, b, c);
    o[get_global_id(0)] = a;
}
kernel void mad24_int16(global int16 *o, int s) {
    int16 a = (int16)(get_global_id(0)), b = (int16)(s), c = (int16)(3);
    for (int i = 0; i < 256; i++) a = mad24(a, b, c);
    o[get_global_id(0)] = a;
}
"#;

/// saxpy indexed as kernels written for GPUs often are, from group and local ids (a
/// platform cannot run its groups as one wider group). Built apart from SOURCE, so the
/// cold-build figure keeps measuring the same program.
pub const SOURCE_IDS: &str = r#"
kernel void saxpy_ids(global float *y, global const float *x, float a) {
    size_t i = get_group_id(0) * get_local_size(0) + get_local_id(0); y[i] = a * x[i] + y[i];
}
"#;

pub const SOURCE: &str = r#"
kernel void noop(global int *a) { }
kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0); y[i] = a * x[i] + y[i];
}
kernel void sgemm(global const float *a, global const float *b, global float *c, int n) {
    local float ta[16][16], tb[16][16];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0;
    for (int t = 0; t < n / 16; t++) {
        ta[ly][lx] = a[row * n + t * 16 + lx];
        tb[ly][lx] = b[(t * 16 + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; k++) acc += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}
kernel void barriers(global int *out, int count) {
    local int x[4096];
    int l = get_local_id(0);
    int acc = 0;
    for (int i = 0; i < count; i++) { x[l] = i; barrier(CLK_LOCAL_MEM_FENCE); acc += x[(l + 1) % get_local_size(0)]; }
    out[get_global_id(0)] = acc;
}
"#;

/// Program binaries in place of builds, for hosts without a compiler: `bench
/// --save-binaries DIR` on a build machine writes each program's binary, `--binaries
/// DIR` loads them instead of building (and builds those not saved, for platforms that
/// compile for themselves). Passed to the per-platform child processes in
/// this variable as `save:DIR` or `load:DIR`.
pub const BINARIES_ENV: &str = "CTS_RUNNER_BINARIES";

enum Binaries {
    Save(std::path::PathBuf),
    Load(std::path::PathBuf),
}

fn binaries() -> Option<&'static Binaries> {
    static MODE: std::sync::OnceLock<Option<Binaries>> = std::sync::OnceLock::new();
    MODE.get_or_init(|| {
        let v = std::env::var(BINARIES_ENV).ok()?;
        match v.split_once(':')? {
            ("save", dir) => Some(Binaries::Save(dir.into())),
            ("load", dir) => Some(Binaries::Load(dir.into())),
            _ => None,
        }
    })
    .as_ref()
}

/// Whether programs come from saved binaries (no compiler: the build figures are skipped).
pub fn loading_binaries() -> bool {
    matches!(binaries(), Some(Binaries::Load(_)))
}

/// A program's binary file: named by a hash (FNV-1a) of the platform, the options and
/// the source, so one directory serves every program and platform.
fn binary_path(dir: &std::path::Path, platform: &str, source: &str, options: &str) -> std::path::PathBuf {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in platform.bytes().chain([0]).chain(options.bytes()).chain([0]).chain(source.bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    dir.join(format!("{h:016x}.bin"))
}

pub struct Session {
    pub(crate) device: cl_device_id,
    pub(crate) context: cl_context,
    queue: cl_command_queue,
}

pub(crate) fn check(code: cl_int, what: &str) -> Result<(), String> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {code}"))
    }
}

pub fn platform_named(name: &str) -> Result<(cl_platform_id, String), String> {
    let mut n = 0;
    cl!(clGetPlatformIDs(0, null_mut(), &mut n));
    let mut ps = vec![null_mut(); n as usize];
    cl!(clGetPlatformIDs(n, ps.as_mut_ptr(), null_mut()));
    let mut seen = Vec::new();
    for p in ps {
        let mut buf = vec![0u8; 256];
        let mut len = 0;
        cl!(clGetPlatformInfo(p, CL_PLATFORM_NAME, 256, buf.as_mut_ptr().cast(), &mut len));
        let pname = String::from_utf8_lossy(&buf[..len.saturating_sub(1)]).into_owned();
        if pname.to_lowercase().contains(&name.to_lowercase()) {
            return Ok((p, pname));
        }
        seen.push(pname);
    }
    Err(format!("no OpenCL platform named '{name}' (found: {})", seen.join(", ")))
}

impl Session {
    /// A session on the first device of the platform whose name contains `name`, and
    /// the platform's full name.
    pub fn named(name: &str) -> Result<(Session, String), String> {
        let (p, full) = platform_named(name)?;
        Ok((Session::new(p)?, full))
    }

    pub(crate) fn new(platform: cl_platform_id) -> Result<Session, String> {
        let mut device = null_mut();
        check(cl!(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, null_mut())), "clGetDeviceIDs")?;
        let mut e = 0;
        let context = cl!(clCreateContext(null(), 1, &device, None, null_mut(), &mut e));
        check(e, "clCreateContext")?;
        let queue = cl!(clCreateCommandQueue(context, device, 0, &mut e));
        check(e, "clCreateCommandQueue")?;
        Ok(Session { device, context, queue })
    }

    pub(crate) fn queue(&self) -> cl_command_queue {
        self.queue
    }

    pub(crate) fn build(&self, source: &str) -> Result<cl_program, String> {
        self.build_with(source, "")
    }

    /// The platform's name, which keys saved binaries.
    fn platform_name(&self) -> String {
        let mut platform: cl_platform_id = null_mut();
        cl!(clGetDeviceInfo(
            self.device,
            CL_DEVICE_PLATFORM,
            8,
            (&mut platform as *mut cl_platform_id).cast(),
            null_mut()
        ));
        let mut buf = vec![0u8; 256];
        let mut len = 0;
        cl!(clGetPlatformInfo(platform, CL_PLATFORM_NAME, 256, buf.as_mut_ptr().cast(), &mut len));
        String::from_utf8_lossy(&buf[..len.saturating_sub(1)]).into_owned()
    }

    /// Builds with options (or, with saved binaries, loads the program's binary); a
    /// failure carries the build log.
    pub(crate) fn build_with(&self, source: &str, options: &str) -> Result<cl_program, String> {
        match binaries() {
            Some(Binaries::Load(dir)) => {
                let path = binary_path(dir, &self.platform_name(), source, options);
                // A platform whose binaries were not saved (another vendor on the
                // measuring host, with its own compiler) builds for itself.
                let bytes = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        return self.build_from_source(source, options).map_err(|build| {
                            format!(
                                "no saved binary {} ({e}): run 'bench --save-binaries' with the same build; \
                                 building from source instead failed: {build}",
                                path.display()
                            )
                        })
                    }
                };
                let (mut ptr, len, mut status, mut e) = (bytes.as_ptr(), bytes.len(), 0, 0);
                let p =
                    cl!(clCreateProgramWithBinary(self.context, 1, &self.device, &len, &mut ptr, &mut status, &mut e));
                // A binary the platform refuses (another vendor's, saved on a machine
                // with another CPU) is built from source where the host can.
                if let Err(refused) = check(e, &format!("clCreateProgramWithBinary({})", path.display())) {
                    return self
                        .build_from_source(source, options)
                        .map_err(|build| format!("{refused}; building from source instead failed: {build}"));
                }
                let opts = CString::new(options).unwrap_or_default();
                self.finish_build(p, &opts)
            }
            Some(Binaries::Save(dir)) => {
                let p = self.build_from_source(source, options)?;
                let path = binary_path(dir, &self.platform_name(), source, options);
                let mut size = 0usize;
                cl!(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, 8, (&mut size as *mut usize).cast(), null_mut()));
                let mut bytes = vec![0u8; size];
                let ptrs = [bytes.as_mut_ptr()];
                check(
                    cl!(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 8, ptrs.as_ptr() as *mut _, null_mut())),
                    "binaries",
                )?;
                std::fs::create_dir_all(dir)
                    .and_then(|_| std::fs::write(&path, &bytes))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(p)
            }
            None => self.build_from_source(source, options),
        }
    }

    fn build_from_source(&self, source: &str, options: &str) -> Result<cl_program, String> {
        let src = CString::new(source).unwrap_or_default();
        let opts = CString::new(options).unwrap_or_default();
        let ptr = src.as_ptr();
        let mut e = 0;
        let p = cl!(clCreateProgramWithSource(self.context, 1, &ptr as *const _ as *mut _, null(), &mut e));
        check(e, "clCreateProgramWithSource")?;
        self.finish_build(p, &opts)
    }

    fn finish_build(&self, p: cl_program, opts: &CString) -> Result<cl_program, String> {
        let code = cl!(clBuildProgram(p, 1, &self.device, opts.as_ptr(), None, null_mut()));
        if code != CL_SUCCESS {
            let mut len = 0;
            cl!(clGetProgramBuildInfo(p, self.device, CL_PROGRAM_BUILD_LOG, 0, null_mut(), &mut len));
            let mut log = vec![0u8; len.max(1)];
            cl!(clGetProgramBuildInfo(p, self.device, CL_PROGRAM_BUILD_LOG, len, log.as_mut_ptr().cast(), null_mut()));
            log.truncate(len.saturating_sub(1));
            cl!(clReleaseProgram(p));
            return Err(format!("clBuildProgram failed: {code}\n{}", String::from_utf8_lossy(&log)));
        }
        Ok(p)
    }

    /// A buffer holding `data`.
    pub(crate) fn buffer_of(&self, data: &[u8]) -> Result<cl_mem, String> {
        let mut e = 0;
        let flags = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
        let m = cl!(clCreateBuffer(self.context, flags, data.len(), data.as_ptr() as *mut _, &mut e));
        check(e, "clCreateBuffer")?;
        Ok(m)
    }

    pub(crate) fn read(&self, m: cl_mem, len: usize) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; len];
        check(
            cl!(clEnqueueReadBuffer(self.queue, m, CL_TRUE, 0, len, out.as_mut_ptr().cast(), 0, null(), null_mut())),
            "clEnqueueReadBuffer",
        )?;
        Ok(out)
    }

    pub(crate) fn kernel(&self, p: cl_program, name: &str) -> Result<cl_kernel, String> {
        let n = CString::new(name).unwrap_or_default();
        let mut e = 0;
        let k = cl!(clCreateKernel(p, n.as_ptr(), &mut e));
        check(e, "clCreateKernel")?;
        Ok(k)
    }

    pub(crate) fn buffer(&self, bytes: usize, init: Option<&[f32]>) -> Result<cl_mem, String> {
        let mut e = 0;
        let (flags, host) = match init {
            Some(d) => (CL_MEM_COPY_HOST_PTR, d.as_ptr() as *mut std::ffi::c_void),
            None => (0, null_mut()),
        };
        let m = cl!(clCreateBuffer(self.context, CL_MEM_READ_WRITE | flags, bytes, host, &mut e));
        check(e, "clCreateBuffer")?;
        Ok(m)
    }

    /// The best of `reps` runs of a kernel, after running it for `WARM_UP` (once at
    /// least, which also takes a first launch's one-off costs out).
    pub(crate) fn timed(
        &self,
        reps: usize,
        k: cl_kernel,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> Result<f64, String> {
        let start = Instant::now();
        while {
            self.run(k, global, local)?;
            start.elapsed() < WARM_UP
        } {}
        best((0..reps).map(|_| self.run(k, global, local)))
    }

    /// Runs a kernel and waits; returns the wall time in seconds.
    pub(crate) fn run(&self, k: cl_kernel, global: &[usize], local: Option<&[usize]>) -> Result<f64, String> {
        let t = Instant::now();
        let l = local.map_or(null(), |l| l.as_ptr());
        let dims = global.len() as cl_uint;
        check(
            cl!(clEnqueueNDRangeKernel(self.queue, k, dims, null(), global.as_ptr(), l, 0, null(), null_mut())),
            "enqueue",
        )?;
        check(cl!(clFinish(self.queue)), "clFinish")?;
        Ok(t.elapsed().as_secs_f64())
    }
}

impl Session {
    /// Enqueues an NDRange with an optional global offset and waits; the error code of
    /// the enqueue (or of `clFinish`) is returned as is, for cases that expect one.
    pub(crate) fn run_nd(
        &self,
        k: cl_kernel,
        offset: Option<&[usize]>,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> Result<(), cl_int> {
        let (o, l) = (offset.map_or(null(), |o| o.as_ptr()), local.map_or(null(), |l| l.as_ptr()));
        let dims = global.len() as cl_uint;
        match cl!(clEnqueueNDRangeKernel(self.queue, k, dims, o, global.as_ptr(), l, 0, null(), null_mut())) {
            CL_SUCCESS => match cl!(clFinish(self.queue)) {
                CL_SUCCESS => Ok(()),
                e => Err(e),
            },
            e => Err(e),
        }
    }

    /// Enqueues an NDRange, waits for it, and returns its event's execution status (a
    /// command can fail after a successful enqueue, which `clFinish` does not report).
    pub(crate) fn run_status(&self, k: cl_kernel, global: &[usize], local: &[usize]) -> Result<cl_int, String> {
        let mut ev: cl_event = null_mut();
        let dims = global.len() as cl_uint;
        check(
            cl!(clEnqueueNDRangeKernel(
                self.queue,
                k,
                dims,
                null(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                null(),
                &mut ev
            )),
            "clEnqueueNDRangeKernel",
        )?;
        cl!(clWaitForEvents(1, &ev));
        let mut status: cl_int = 0;
        cl!(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, 4, (&mut status as *mut cl_int).cast(), null_mut()));
        cl!(clReleaseEvent(ev));
        Ok(status)
    }

    /// `clEnqueueTask` and wait.
    pub(crate) fn run_task(&self, k: cl_kernel) -> Result<(), String> {
        check(cl!(clEnqueueTask(self.queue, k, 0, null(), null_mut())), "clEnqueueTask")?;
        check(cl!(clFinish(self.queue)), "clFinish")
    }

    /// A `size_t`-sized (or smaller, zero-extended) device property.
    pub(crate) fn device_info(&self, param: cl_device_info) -> usize {
        let mut v = 0usize;
        cl!(clGetDeviceInfo(self.device, param, 8, (&mut v as *mut usize).cast(), null_mut()));
        v
    }

    /// The device's extension string.
    pub(crate) fn extensions(&self) -> String {
        let mut buf = vec![0u8; 8192];
        let mut len = 0;
        cl!(clGetDeviceInfo(self.device, CL_DEVICE_EXTENSIONS, buf.len(), buf.as_mut_ptr().cast(), &mut len));
        String::from_utf8_lossy(&buf[..len.min(buf.len())]).trim_end_matches('\0').to_string()
    }

    /// The device's extension string contains `name`.
    pub(crate) fn has_extension(&self, name: &str) -> bool {
        self.extensions().split_whitespace().any(|e| e == name)
    }
}

pub(crate) fn arg<T>(k: cl_kernel, i: cl_uint, v: &T) -> Result<(), String> {
    check(cl!(clSetKernelArg(k, i, std::mem::size_of::<T>(), (v as *const T).cast())), "clSetKernelArg")
}

fn status_kib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

pub(crate) fn best(times: impl Iterator<Item = Result<f64, String>>) -> Result<f64, String> {
    times.collect::<Result<Vec<f64>, String>>().map(|v| v.into_iter().fold(f64::INFINITY, f64::min))
}

/// Kernels of the later cold builds: each `x[i] = f(x[i], y[i], a)`, calling builtins
/// as ordinary code does. `unique` goes into every kernel's code, not a comment: some
/// platforms cache compiled kernels by their code.
fn cold_kernels(count: usize, unique: u64) -> String {
    let mut src = String::new();
    for i in 0..count {
        src += &format!(
            "kernel void k{i}(global float *x, global const float *y, float a) {{\n\
             size_t g = get_global_id(0);\n\
             x[g] = fmax(sqrt(fabs(x[g])) * a, y[g] * {i}.5f) + sin(y[g] + {unique}.0f);\n}}\n"
        );
    }
    src
}

/// A number no earlier run has used (time and process).
fn unique_number() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    ((nanos as u64) ^ (std::process::id() as u64) << 40) % 1_000_000_007
}

/// Median time of three builds, each of a program no process has seen, plus one launch
/// of each of its kernels: what every test of a conformance suite and every start of
/// a tool pays, once the platform's first build in the process is done.
fn later_cold_builds(s: &Session, count: usize, scratch: cl_mem) -> Result<f64, String> {
    let mut times = Vec::new();
    for round in 0..3 {
        let src = cold_kernels(count, unique_number() + round);
        let t = Instant::now();
        let prog = s.build(&src)?;
        for i in 0..count {
            let k = s.kernel(prog, &format!("k{i}"))?;
            arg(k, 0, &scratch)?;
            arg(k, 1, &scratch)?;
            arg(k, 2, &2.0f32)?;
            s.run(k, &[64], None)?;
            cl!(clReleaseKernel(k));
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
        cl!(clReleaseProgram(prog));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[1])
}

/// Creates every kernel of the benchmark program and runs each on one small group.
fn first_launches(s: &Session, prog: cl_program, scratch: cl_mem) -> Result<(), String> {
    for (name, global, local) in [
        ("noop", [1, 1], [1, 1]),
        ("saxpy", [16, 1], [16, 1]),
        ("sgemm", [16, 16], [16, 16]),
        ("barriers", [16, 1], [16, 1]),
    ] {
        let k = s.kernel(prog, name)?;
        arg(k, 0, &scratch)?;
        match name {
            "saxpy" => {
                arg(k, 1, &scratch)?;
                arg(k, 2, &1.0f32)?;
            }
            "sgemm" => {
                arg(k, 1, &scratch)?;
                arg(k, 2, &scratch)?;
                arg(k, 3, &16i32)?;
            }
            "barriers" => arg(k, 1, &1i32)?,
            _ => {}
        }
        let dims = if name == "sgemm" { 2 } else { 1 };
        s.run(k, &global[..dims], Some(&local[..dims]))?;
        cl!(clReleaseKernel(k));
    }
    Ok(())
}

/// Measures one platform; returns `key=value` lines. `warm` is a source file some
/// earlier process has built already.
pub fn measure(platform: &str, warm: &str) -> Result<Vec<(String, f64)>, String> {
    let (p, _) = platform_named(platform)?;
    let s = Session::new(p)?;
    let mut out = Vec::new();
    if warm.is_empty() {
        // `bench --async-only`.
        return crate::bench_async::measure(&s);
    }

    let scratch = s.buffer(1 << 16, None)?;
    let prog = if binaries().is_some() {
        // Programs from (or for) saved binaries: the compiler figures need a compiler
        // and fresh sources, so they are left out; the program is SOURCE itself.
        s.build(SOURCE)?
    } else {
        build_figures(&s, warm, scratch, &mut out)?
    };
    launch_figures(&s, prog, scratch, &mut out)?;
    Ok(out)
}

/// The compiler's figures: a cold build (a source no process has seen, each kernel
/// launched once: some platforms compile a kernel only at its first launch), a warm one,
/// and later cold builds. Returns the warm-built program.
fn build_figures(s: &Session, warm: &str, scratch: cl_mem, out: &mut Vec<(String, f64)>) -> Result<cl_program, String> {
    // Unique code, not a comment: some platforms cache compiled kernels by their code
    // (PoCL's "cold" build of this program with only a new comment took 25 ms, 230 ms
    // for one new small kernel).
    let n = unique_number();
    let unique: String = SOURCE
        .lines()
        .map(|l| match l.starts_with("kernel void") {
            true => l.replacen(") {", &format!(") {{ {{ volatile int unique_build = {n}; }}"), 1),
            false => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    let t = Instant::now();
    let cold = s.build(&unique)?;
    first_launches(s, cold, scratch)?;
    out.push(("cold_build_ms".into(), t.elapsed().as_secs_f64() * 1e3));

    // Warm: byte-identical source built before by another process.
    let warm_src = std::fs::read_to_string(warm).map_err(|e| format!("{warm}: {e}"))?;
    let t = Instant::now();
    let prog = s.build(&warm_src)?;
    first_launches(s, prog, scratch)?;
    out.push(("warm_build_ms".into(), t.elapsed().as_secs_f64() * 1e3));
    out.push(("cold_one_ms".into(), later_cold_builds(s, 1, scratch)?));
    out.push(("cold_many_ms".into(), later_cold_builds(s, 16, scratch)?));
    Ok(prog)
}

/// Measures the launches that follow, on `prog`.
fn launch_figures(s: &Session, prog: cl_program, scratch: cl_mem, out: &mut Vec<(String, f64)>) -> Result<(), String> {
    let k = s.kernel(prog, "noop")?;
    arg(k, 0, &scratch)?;
    out.push(("rss_mb".into(), status_kib("VmRSS:") / 1024.0));

    // Launch latency: many tiny launches, each waited for.
    for _ in 0..50 {
        s.run(k, &[1], None)?;
    }
    let reps = 2000;
    let t = Instant::now();
    for _ in 0..reps {
        s.run(k, &[1], None)?;
    }
    out.push(("launch_us".into(), t.elapsed().as_secs_f64() * 1e6 / reps as f64));

    // A small launch spread over the workers: 16 groups of 64, each launch waited for,
    // then the same launches enqueued back to back with one wait at the end.
    let t = Instant::now();
    for _ in 0..reps {
        s.run(k, &[1024], Some(&[64]))?;
    }
    out.push(("launch16_us".into(), t.elapsed().as_secs_f64() * 1e6 / reps as f64));
    let (global, local) = ([1024usize], [64usize]);
    let t = Instant::now();
    for _ in 0..reps {
        let (g, l) = (global.as_ptr(), local.as_ptr());
        check(cl!(clEnqueueNDRangeKernel(s.queue, k, 1, null(), g, l, 0, null(), null_mut())), "enqueue")?;
    }
    check(cl!(clFinish(s.queue)), "clFinish")?;
    out.push(("launch16_per_s".into(), reps as f64 / t.elapsed().as_secs_f64()));

    // saxpy over 64 MiB arrays: 12 bytes per element.
    let n = 16 << 20;
    let (y, x) = (s.buffer(n * 4, Some(&vec![1.0; n]))?, s.buffer(n * 4, Some(&vec![2.0; n]))?);
    let sk = s.kernel(prog, "saxpy")?;
    // With the platform's group size, then in the groups of 64 an application often
    // asks for: 262,144 of them, where what a platform spends per group shows.
    let ik = s.kernel(s.build(SOURCE_IDS)?, "saxpy_ids")?;
    for k in [sk, ik] {
        arg(k, 0, &y)?;
        arg(k, 1, &x)?;
        arg(k, 2, &3.0f32)?;
    }
    for (key, k, local) in
        [("saxpy_gbs", sk, None), ("saxpy64_gbs", sk, Some(&[64usize][..])), ("saxpy_ids64_gbs", ik, Some(&[64][..]))]
    {
        let t = s.timed(5, k, &[n], local)?;
        out.push((key.into(), 12.0 * n as f64 / t / 1e9));
    }

    // SGEMM 512^3 with 16x16 local tiles and two barriers per tile.
    let m = 512usize;
    let (a, b, c) = (
        s.buffer(m * m * 4, Some(&vec![1.0; m * m]))?,
        s.buffer(m * m * 4, Some(&vec![0.5; m * m]))?,
        s.buffer(m * m * 4, None)?,
    );
    let gk = s.kernel(prog, "sgemm")?;
    arg(gk, 0, &a)?;
    arg(gk, 1, &b)?;
    arg(gk, 2, &c)?;
    arg(gk, 3, &(m as i32))?;
    let t = s.timed(3, gk, &[m, m], Some(&[16, 16]))?;
    out.push(("sgemm_gflops".into(), 2.0 * (m * m * m) as f64 / t / 1e9));

    // Barrier cost: the same work with 200 and with 0 barriers per work-item.
    let bk = s.kernel(prog, "barriers")?;
    let items = 256 * 64;
    let bout = s.buffer(items * 4, None)?;
    arg(bk, 0, &bout)?;
    let timed = |count: i32| -> Result<f64, String> {
        arg(bk, 1, &count)?;
        s.timed(3, bk, &[items], Some(&[256]))
    };
    let (with, without) = (timed(200)?, timed(0)?);
    out.push(("barrier_ns".into(), (with - without).max(0.0) * 1e9 / (200.0 * items as f64)));

    // Peak memory: barrier groups at the device's largest work-group size.
    let mut max_wg = 0usize;
    cl!(clGetDeviceInfo(s.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, 8, (&mut max_wg as *mut usize).cast(), null_mut()));
    let wg = max_wg;
    let pout = s.buffer(wg * 8 * 4, None)?;
    arg(bk, 0, &pout)?;
    arg(bk, 1, &4i32)?;
    s.run(bk, &[wg * 8], Some(&[wg]))?;
    out.push(("peak_rss_mb".into(), status_kib("VmHWM:") / 1024.0));

    // Vector builtins: 64 Ki work-items x 256 dependent operations x 16 lanes.
    let vprog = s.build(SOURCE_VECTOR)?;
    let n = 1 << 16;
    let vout = s.buffer(n * 64, None)?;
    for (key, name, scalar) in
        [("mad_float16_gops", "mad_float16", 0.999f32.to_bits()), ("mad24_int16_gops", "mad24_int16", 3)]
    {
        let k = s.kernel(vprog, name)?;
        arg(k, 0, &vout)?;
        arg(k, 1, &scalar)?;
        let t = s.timed(5, k, &[n], None)?;
        out.push((key.into(), (n * 16 * 256) as f64 / t / 1e9));
    }
    out.extend(crate::bench_vector::measure(s)?);
    out.extend(crate::bench_reduce::measure(s)?);
    out.extend(crate::bench_async::measure(s)?);
    out.extend(crate::bench_image::measure(s)?);
    Ok(())
}

/// The host's own SGEMM 512^3 with one thread per core: rows of C split between the
/// threads, i-k-j order so that the inner loop is a vector FMA along a row of B. What
/// the cores give plain compiled code; the barrier-tiled kernel's scaling from 1 to N
/// cores is read against this one's, which shows the clock and shared-core limits of
/// the host (a VM's cores may be hyper-threads).
pub fn host_sgemm_gflops() -> f64 {
    let a: Vec<f32> = (0..SGEMM_N * SGEMM_N).map(|i| (i % 7) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..SGEMM_N * SGEMM_N).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut c = vec![0f32; SGEMM_N * SGEMM_N];
    let rows = SGEMM_N.div_ceil(host_threads());
    let parts: Vec<_> = c.chunks_mut(rows * SGEMM_N).enumerate().collect();
    let best_t = on_host_threads(parts, 6, |(part, cc)| sgemm_rows(&a, &b, cc, *part * rows));
    std::hint::black_box(&c);
    2.0 * (SGEMM_N * SGEMM_N * SGEMM_N) as f64 / best_t / 1e9
}

/// Threads for the host's reference loops: one per core this process may run on (a
/// `taskset` mask included).
pub fn host_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |t| t.get())
}

/// Runs `pass` over every part, one thread per part, for `WARM_UP` and then `passes`
/// times, and returns the best of those times, from a pass's start to the last
/// thread's end. The threads start once and pass a barrier before and after each pass:
/// spawning them per pass cost as much as the pass on 16 cores (the host's sum fell
/// from 95 GB/s at 8 cores to 77 at 16).
pub fn on_host_threads<P: Send>(parts: Vec<P>, passes: usize, pass: impl Fn(&mut P) + Sync) -> f64 {
    let barrier = std::sync::Barrier::new(parts.len());
    // Set by the first thread between the barriers once `WARM_UP` has passed, read by
    // all after the second: every thread runs the same passes.
    let warm = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|s| {
        let timers: Vec<_> = parts
            .into_iter()
            .enumerate()
            .map(|(i, mut part)| {
                let (barrier, pass, warm) = (&barrier, &pass, &warm);
                s.spawn(move || {
                    while !warm.load(Ordering::Relaxed) {
                        barrier.wait();
                        pass(&mut part);
                        if i == 0 && start.elapsed() >= WARM_UP {
                            warm.store(true, Ordering::Relaxed);
                        }
                        barrier.wait();
                    }
                    let mut best_t = f64::INFINITY;
                    for _ in 0..passes {
                        barrier.wait();
                        let t = Instant::now();
                        pass(&mut part);
                        barrier.wait();
                        best_t = best_t.min(t.elapsed().as_secs_f64());
                    }
                    best_t
                })
            })
            .collect();
        // Every thread waited for the slowest at the second barrier: the largest of
        // their best times is the best pass.
        timers.into_iter().map(|h| h.join().unwrap_or(f64::INFINITY)).fold(0.0, f64::max)
    })
}

const SGEMM_N: usize = 512;

/// How long a figure's kernel, or a host reference loop, runs before it is timed. The
/// 16-core VM's cores come up to speed over tens of milliseconds of load and slow down
/// again within 30 ms of idling: saxpy over 64 MiB on FerroCL, launch after launch, rose
/// from 134 to 335 GB/s over 20 launches, and climbed again after each 30 ms pause.
/// Timed right after one warm-up run, the figures measured the climb (there, the host's
/// own saxpy read 255-359 GB/s from run to run). The first 2-core machine (AMD) was at
/// speed at once; the 2-core Xeon VM of session 25 climbs for longer (saxpy 25 -> 70 GB/s
/// over ~40 launches, DESIGN.md), so its figures are partly taken on the climb.
pub(crate) const WARM_UP: Duration = Duration::from_millis(50);

/// Rows `first..` of C = A B, as many as `c` holds; with FMA where the CPU has it, as
/// the kernels are compiled for the CPU they run on.
fn sgemm_rows(a: &[f32], b: &[f32], c: &mut [f32], first: usize) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { sgemm_rows_fma(a, b, c, first) };
    }
    sgemm_rows_plain(a, b, c, first)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sgemm_rows_fma(a: &[f32], b: &[f32], c: &mut [f32], first: usize) {
    sgemm_rows_plain(a, b, c, first)
}

#[inline(always)]
fn sgemm_rows_plain(a: &[f32], b: &[f32], c: &mut [f32], first: usize) {
    for (r, crow) in c.chunks_mut(SGEMM_N).enumerate() {
        let arow = &a[(first + r) * SGEMM_N..][..SGEMM_N];
        crow.fill(0.0);
        for (aik, brow) in arow.iter().zip(b.chunks(SGEMM_N)) {
            for (cv, bv) in crow.iter_mut().zip(brow) {
                *cv = aik.mul_add(*bv, *cv);
            }
        }
    }
}

/// The host's own saxpy over the same arrays with one thread per core: what the
/// machine's memory system delivers to plain compiled code.
pub fn host_saxpy_gbs() -> f64 {
    let n = 16usize << 20;
    let (mut y, x) = (vec![1.0f32; n], vec![2.0f32; n]);
    let each = n.div_ceil(host_threads());
    let parts: Vec<_> = y.chunks_mut(each).zip(x.chunks(each)).collect();
    let best_t = on_host_threads(parts, 6, |(yc, xc)| {
        for (yv, xv) in yc.iter_mut().zip(xc.iter()) {
            *yv += 3.0 * xv;
        }
    });
    std::hint::black_box(&y);
    12.0 * n as f64 / best_t / 1e9
}

#[cfg(test)]
mod tests {
    use super::on_host_threads;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn host_threads_run_every_pass_over_every_part_alike() {
        let passes = AtomicUsize::new(0);
        let mut data = vec![0u32; 1000];
        let parts: Vec<&mut [u32]> = data.chunks_mut(300).collect();
        let t = on_host_threads(parts, 5, |part| {
            passes.fetch_add(1, Ordering::Relaxed);
            part.iter_mut().for_each(|v| *v += 1);
        });
        assert!(t.is_finite() && t >= 0.0, "best pass time {t}");
        // Warm-up passes first, as many for every part, then the 5 timed ones.
        let per_part = data[0];
        assert!(per_part > 5, "{per_part} passes: none to warm up");
        assert!(data.iter().all(|&v| v == per_part), "every element passed {per_part} times");
        assert_eq!(passes.load(Ordering::Relaxed), 4 * per_part as usize, "4 parts, each every pass");
    }
}
