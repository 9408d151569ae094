//! Platform features beside the kernels: float atomics under contention
//! (`cl_ext_float_atomics`' `atomic_fetch_add` against the compare-exchange loop
//! kernels write without it, each checked), sub-devices (a saxpy split in halves run at
//! once on two sub-devices of half the cores, against the same saxpy as one launch on
//! the whole device), and device-side enqueue (the command-buffer section's 100 small
//! saxpy launches, each waiting for the one before, enqueued by one work-item of a
//! kernel). A platform without a feature gets no figures for it.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::time::Instant;

use crate::cl;
use crate::cl::*;
use crate::session::{arg, best, check, Session};

const ATOMICS: &str = r#"
kernel void fetch_add(global atomic_float *sums, int rounds) {
    for (int i = 0; i < rounds; i++)
        atomic_fetch_add_explicit(&sums[get_global_id(0) & 63], 1.0f, memory_order_relaxed);
}
kernel void cas_add(global atomic_uint *sums, int rounds) {
    for (int i = 0; i < rounds; i++) {
        global atomic_uint *s = &sums[get_global_id(0) & 63];
        uint old = atomic_load_explicit(s, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(s, &old, as_uint(as_float(old) + 1.0f),
                                                      memory_order_relaxed, memory_order_relaxed)) {}
    }
}
"#;

const SAXPY: &str = "kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0); y[i] = a * x[i] + y[i];
}";

/// Float additions a second under contention: 64 counters, every work-item adding 1 to
/// one `ROUNDS` times, with the built-in atomic and with a compare-exchange loop.
fn atomics(s: &Session, out: &mut Vec<(String, f64)>) -> Result<(), String> {
    if !s.has_extension("cl_ext_float_atomics") {
        return Ok(());
    }
    let Ok(prog) = s.build_with(ATOMICS, "-cl-std=CL3.0") else { return Ok(()) };
    const ITEMS: usize = 1 << 14;
    const ROUNDS: i32 = 64;
    let sums = s.buffer(64 * 4, Some(&[0.0; 64]))?;
    for (key, name) in [("fatomic_add_mops", "fetch_add"), ("fatomic_cas_mops", "cas_add")] {
        let k = s.kernel(prog, name)?;
        arg(k, 0, &sums)?;
        arg(k, 1, &ROUNDS)?;
        let zero = 0f32;
        let fill =
            |q| cl!(clEnqueueFillBuffer(q, sums, (&zero as *const f32).cast(), 4, 0, 256, 0, null(), null_mut()));
        let t = best((0..5).map(|_| {
            check(fill(s.queue()), "clEnqueueFillBuffer")?;
            s.run(k, &[ITEMS], None)
        }))?;
        // Every addition landed: each counter got ITEMS / 64 * ROUNDS ones (exact in float).
        let bytes = s.read(sums, 256)?;
        let want = (ITEMS / 64) as f32 * ROUNDS as f32;
        if let Some(c) = bytes.chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).find(|&v| v != want) {
            return Err(format!("{name}: a counter holds {c}, not {want}"));
        }
        out.push((key.into(), (ITEMS as f64 * ROUNDS as f64) / t / 1e6));
        cl!(clReleaseKernel(k));
    }
    cl!(clReleaseMemObject(sums));
    cl!(clReleaseProgram(prog));
    Ok(())
}

/// A context, queue and saxpy kernel with its buffers on `devices`' first device.
struct Side {
    context: cl_context,
    queues: Vec<cl_command_queue>,
    program: cl_program,
    kernel: cl_kernel,
    buffers: [cl_mem; 2],
}

impl Side {
    fn new(devices: &[cl_device_id], n: usize) -> Result<Side, String> {
        let mut e = 0;
        let count = devices.len() as cl_uint;
        let context = cl!(clCreateContext(null(), count, devices.as_ptr(), None, null_mut(), &mut e));
        check(e, "clCreateContext")?;
        let queues = devices
            .iter()
            .map(|&d| {
                let q = cl!(clCreateCommandQueue(context, d, 0, &mut e));
                check(e, "clCreateCommandQueue").map(|_| q)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let src = std::ffi::CString::new(SAXPY).unwrap();
        let ptr = src.as_ptr();
        let program = cl!(clCreateProgramWithSource(context, 1, &ptr as *const _ as *mut _, null(), &mut e));
        check(e, "clCreateProgramWithSource")?;
        check(cl!(clBuildProgram(program, count, devices.as_ptr(), null(), None, null_mut())), "clBuildProgram")?;
        let kernel = cl!(clCreateKernel(program, c"saxpy".as_ptr(), &mut e));
        check(e, "clCreateKernel")?;
        let data = vec![1.0f32; n];
        let flags = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
        let mut buffer = || {
            let m = cl!(clCreateBuffer(context, flags, n * 4, data.as_ptr() as *mut c_void, &mut e));
            check(e, "clCreateBuffer").map(|_| m)
        };
        let buffers = [buffer()?, buffer()?];
        arg(kernel, 0, &buffers[0])?;
        arg(kernel, 1, &buffers[1])?;
        arg(kernel, 2, &0.5f32)?;
        Ok(Side { context, queues, program, kernel, buffers })
    }

    /// One launch per queue over its share of `n`, all at once; seconds.
    fn run(&self, n: usize) -> Result<f64, String> {
        let share = n / self.queues.len();
        let t = Instant::now();
        for (i, &q) in self.queues.iter().enumerate() {
            let (offset, global) = ([i * share], [share]);
            let code = cl!(clEnqueueNDRangeKernel(
                q,
                self.kernel,
                1,
                offset.as_ptr(),
                global.as_ptr(),
                null(),
                0,
                null(),
                null_mut()
            ));
            check(code, "clEnqueueNDRangeKernel")?;
            check(cl!(clFlush(q)), "clFlush")?;
        }
        for &q in &self.queues {
            check(cl!(clFinish(q)), "clFinish")?;
        }
        Ok(t.elapsed().as_secs_f64())
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        for m in self.buffers {
            cl!(clReleaseMemObject(m));
        }
        cl!(clReleaseKernel(self.kernel));
        cl!(clReleaseProgram(self.program));
        for &q in &self.queues {
            cl!(clReleaseCommandQueue(q));
        }
        cl!(clReleaseContext(self.context));
    }
}

/// saxpy over 2 x 32 MiB in halves on two sub-devices at once, and whole on the device.
fn sub_devices(s: &Session, out: &mut Vec<(String, f64)>) -> Result<(), String> {
    let cores = s.device_info(CL_DEVICE_MAX_COMPUTE_UNITS) as u32 as isize;
    if cores < 2 {
        return Ok(());
    }
    let props = [CL_DEVICE_PARTITION_EQUALLY, cores / 2, 0];
    let mut subs = [null_mut(); 2];
    let mut n_subs = 0;
    let made = cl!(clCreateSubDevices(s.device, props.as_ptr(), 2, subs.as_mut_ptr(), &mut n_subs));
    if made != CL_SUCCESS || n_subs < 2 {
        return Ok(());
    }
    const N: usize = 8 << 20;
    let pair = Side::new(&subs, N)?;
    let whole = Side::new(&[s.device], N)?;
    pair.run(N)?;
    whole.run(N)?;
    let (mut halves, mut one) = (f64::INFINITY, f64::INFINITY);
    // Alternated, so that neither gets a quieter stretch of the run.
    for _ in 0..5 {
        halves = halves.min(pair.run(N)?);
        one = one.min(whole.run(N)?);
    }
    out.push(("subdev_pair_ms".into(), halves * 1e3));
    out.push(("subdev_whole_ms".into(), one * 1e3));
    drop((pair, whole));
    for d in subs.iter().take(n_subs as usize) {
        cl!(clReleaseDevice(*d));
    }
    Ok(())
}

const CHILDREN: &str = r#"
kernel void parent(global float *y, global const float *x, float a, int launches) {
    queue_t q = get_default_queue();
    void (^saxpy)(void) = ^{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; };
    clk_event_t prev, next;
    enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4096, 64), 0, 0, &prev, saxpy);
    for (int n = 1; n < launches; n++) {
        enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4096, 64), 1, &prev, &next, saxpy);
        release_event(prev);
        prev = next;
    }
    release_event(prev);
}
"#;

/// 100 saxpy launches of 4096 floats in groups of 64, each after the one before,
/// enqueued by a kernel's one work-item; microseconds for the parent and its children,
/// best of 40, checked.
fn device_enqueue(s: &Session, out: &mut Vec<(String, f64)>) -> Result<(), String> {
    if s.device_info(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES) as cl_bitfield & CL_DEVICE_QUEUE_SUPPORTED == 0 {
        return Ok(());
    }
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    let mut e = 0;
    let queue = cl!(clCreateCommandQueueWithProperties(s.context, s.device, props.as_ptr(), &mut e));
    if e != CL_SUCCESS {
        return Ok(());
    }
    let Ok(prog) = s.build_with(CHILDREN, "-cl-std=CL2.0") else { return Ok(()) };
    const N: usize = 4096;
    const LAUNCHES: i32 = 100;
    let (y, x) = (s.buffer(N * 4, Some(&vec![0.0; N]))?, s.buffer(N * 4, Some(&vec![1.0; N]))?);
    let k = s.kernel(prog, "parent")?;
    arg(k, 0, &y)?;
    arg(k, 1, &x)?;
    arg(k, 2, &1.0f32)?;
    arg(k, 3, &LAUNCHES)?;
    let runs = 41;
    let t = best((0..runs).map(|_| s.run(k, &[1], Some(&[1]))))?;
    // Every child ran, each after the one before: y is x added `runs` x 100 times.
    let want = (runs * LAUNCHES) as f32;
    let bytes = s.read(y, N * 4)?;
    if let Some(v) = bytes.chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).find(|&v| v != want) {
        return Err(format!("device-side enqueue: y holds {v}, not {want}"));
    }
    out.push(("dev_enqueue100_us".into(), t * 1e6));
    for m in [y, x] {
        cl!(clReleaseMemObject(m));
    }
    cl!(clReleaseKernel(k));
    cl!(clReleaseProgram(prog));
    cl!(clReleaseCommandQueue(queue));
    Ok(())
}

pub fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let mut out = Vec::new();
    atomics(s, &mut out)?;
    sub_devices(s, &mut out)?;
    device_enqueue(s, &mut out)?;
    Ok(out)
}
