//! `cl_khr_command_buffer`: 100 small kernel launches (saxpy over 4096 floats in groups
//! of 64, each reading what the one before wrote) replayed from a command buffer
//! against the same 100 enqueued one by one, each batch ended by `clFinish`. A platform
//! without the extension gets no figures.

use std::ptr::{null, null_mut};
use std::time::Instant;

use crate::cl;
use crate::cl::*;
use crate::session::{arg, check, Session};

const LAUNCHES: usize = 100;
const N: usize = 4096;
const LOCAL: usize = 64;

const SOURCE: &str = "kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0); y[i] = a * x[i] + y[i];
}";

/// The platform's command-buffer entry points, where it has them.
fn entry_points(s: &Session) -> Option<CommandBuffers> {
    let mut platform: cl_platform_id = null_mut();
    let size = std::mem::size_of::<cl_platform_id>();
    cl!(clGetDeviceInfo(s.device, CL_DEVICE_PLATFORM, size, (&mut platform as *mut cl_platform_id).cast(), null_mut()));
    // SAFETY: the device's platform, from the loader.
    unsafe { CommandBuffers::of(platform) }
}

/// Microseconds for the best of `rounds` batches of `batch` runs of `f`.
fn best_us(rounds: usize, batch: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..batch {
            f()?;
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    Ok(best)
}

pub fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let Some(e) = entry_points(s) else { return Ok(Vec::new()) };
    let prog = s.build(SOURCE)?;
    let k = s.kernel(prog, "saxpy")?;
    let (y, x) = (s.buffer(N * 4, Some(&vec![0.0; N]))?, s.buffer(N * 4, Some(&vec![1.0; N]))?);
    arg(k, 0, &y)?;
    arg(k, 1, &x)?;
    arg(k, 2, &1.0f32)?;
    let (global, local) = ([N], [LOCAL]);
    let mut err = 0;
    let q = s.queue();
    // SAFETY: the platform's entry points, with one queue and a checked result.
    let b = unsafe { (e.create)(1, &q, null(), &mut err) };
    check(err, "clCreateCommandBufferKHR")?;
    for _ in 0..LAUNCHES {
        let (g, l) = (global.as_ptr(), local.as_ptr());
        // SAFETY: a one-dimensional launch of the kernel whose arguments are set.
        let code = unsafe { (e.ndrange)(b, null_mut(), null(), k, 1, null(), g, l, 0, null(), null_mut(), null_mut()) };
        check(code, "clCommandNDRangeKernelKHR")?;
    }
    // SAFETY: the command buffer made above.
    check(unsafe { (e.finalize)(b) }, "clFinalizeCommandBufferKHR")?;

    let replay = || {
        // SAFETY: the finalized command buffer on its own queue.
        check(unsafe { (e.enqueue)(0, null_mut(), b, 0, null(), null_mut()) }, "clEnqueueCommandBufferKHR")?;
        check(cl!(clFinish(q)), "clFinish")
    };
    let one_by_one = || {
        for _ in 0..LAUNCHES {
            let (g, l) = (global.as_ptr(), local.as_ptr());
            check(cl!(clEnqueueNDRangeKernel(q, k, 1, null(), g, l, 0, null(), null_mut())), "enqueue")?;
        }
        check(cl!(clFinish(q)), "clFinish")
    };
    // Both warmed, then alternated, so that neither gets a quieter stretch of the run.
    best_us(1, 20, replay)?;
    best_us(1, 20, one_by_one)?;
    let (mut replayed, mut enqueued) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        replayed = replayed.min(best_us(1, 40, replay)?);
        enqueued = enqueued.min(best_us(1, 40, one_by_one)?);
    }
    // Every launch ran: 20 + 200 replays and as many batches by hand, of 100 each.
    let expected = (2 * (20 + 5 * 40) * LAUNCHES) as f32;
    let got = f32::from_ne_bytes(s.read(y, 4)?[..4].try_into().unwrap());
    if got != expected {
        return Err(format!("command buffer replays: y[0] is {got}, not {expected}"));
    }
    // SAFETY: the command buffer made above, no longer in use after clFinish.
    check(unsafe { (e.release)(b) }, "clReleaseCommandBufferKHR")?;
    cl!(clReleaseKernel(k));
    cl!(clReleaseProgram(prog));
    cl!(clReleaseMemObject(x));
    cl!(clReleaseMemObject(y));
    Ok(vec![("cb_replay100_us".into(), replayed), ("cb_enqueue100_us".into(), enqueued)])
}
