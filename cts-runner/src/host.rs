//! The host's own loops (saxpy, memcpy, SGEMM, sum on every core), the references the
//! benchmarks' figures are printed against.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::session::WARM_UP;

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
