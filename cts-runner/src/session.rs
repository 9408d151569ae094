//! A session on one OpenCL platform's first device through the ICD loader: context,
//! queue, program builds (or saved binaries in their place), launches and the small
//! helpers every suite and benchmark uses.

use std::ffi::CString;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use crate::cl;
use crate::cl::*;

/// How long a figure's kernel, or a host reference loop, runs before it is timed. The
/// 16-core VM's cores come up to speed over tens of milliseconds of load and slow down
/// again within 30 ms of idling: saxpy over 64 MiB on FerroCL, launch after launch, rose
/// from 134 to 335 GB/s over 20 launches, and climbed again after each 30 ms pause.
/// Timed right after one warm-up run, the figures measured the climb (there, the host's
/// own saxpy read 255-359 GB/s from run to run). The first 2-core machine (AMD) was at
/// speed at once; the 2-core Xeon VM of session 25 climbs for longer (saxpy 25 -> 70 GB/s
/// over ~40 launches, DESIGN.md), so its figures are partly taken on the climb.
pub(crate) const WARM_UP: Duration = Duration::from_millis(50);

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

/// Whether programs are saved as binaries or loaded from them.
pub fn saving_or_loading_binaries() -> bool {
    binaries().is_some()
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

    /// `timed`, then more launches while `budget` lasts, the best kept (see
    /// `bench::shapes::SHAPE_BUDGET`).
    pub(crate) fn timed_for(
        &self,
        reps: usize,
        budget: Duration,
        k: cl_kernel,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> Result<f64, String> {
        let mut best = self.timed(reps, k, global, local)?;
        let start = Instant::now();
        while start.elapsed() < budget {
            best = best.min(self.run(k, global, local)?);
        }
        Ok(best)
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

pub(crate) fn best(times: impl Iterator<Item = Result<f64, String>>) -> Result<f64, String> {
    times.collect::<Result<Vec<f64>, String>>().map(|v| v.into_iter().fold(f64::INFINITY, f64::min))
}
