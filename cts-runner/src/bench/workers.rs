//! `cts-runner bench --only workers`: FerroCL's copy workers against its inline engine.
//!
//! A double-buffered kernel imports tiles with one copy shape (contiguous, strided
//! gathers of floats 4 and 16 apart, 2D tiles of 64-byte rows 1 KiB apart) and computes
//! on each (none, balanced, heavy), or computes tiles and exports each to every 16th
//! float; groups from one to four per core. Its synchronous twin (each copy waited for
//! at once) runs the balanced points. The parent (`main.rs`) runs this section in
//! rounds of three processes: `FERROCL_COPY_WORKERS=0`, `=model` and `=0` again, keeps
//! each point's best over the rounds, and prints each point's time with workers over its
//! time without, and the band the two runs without them span (the machine's noise).
//!
//! Contiguous imports of 256 KiB (the issue's other contiguous shape) do not fit: local
//! memory is 32 KiB (`core::device::LOCAL_MEM_SIZE` says why).

use crate::cl;
use crate::cl::*;
use crate::session::{arg, Session};

pub const SOURCE: &str = r#"
/* One tile of `n` floats into `dst`: kind 0 contiguous, 1 every `stride`-th float,
   2 rows of 16 floats `stride` floats apart. */
event_t import(local float *dst, global const float *src, int n, int kind, int stride) {
    if (kind == 0) return async_work_group_copy(dst, src, n, 0);
    if (kind == 1) return async_work_group_strided_copy(dst, src, n, stride, 0);
    return async_work_group_copy_2D2D(dst, 0, src, 0, sizeof(float), 16, n / 16, stride, 16, 0);
}

float work_on(float v, int work) {
    for (int k = 0; k < work; k++) v = v * 0.999f + 0.5f;
    return v;
}

/* `sync`: each copy waited for as soon as it is made (the synchronous twin). Kind 3
   computes tiles and exports each to every `stride`-th float. */
kernel void sweep(global float *in, global float *out, local float *t0, local float *t1, int n,
                  int kind, int stride, int work, int tiles, int sync) {
    size_t g = get_group_id(0);
    size_t span = kind == 0 ? (size_t)n : kind == 2 ? (size_t)n / 16 * stride : (size_t)n * stride;
    global float *src = in + g * tiles * span;
    float acc = 0.0f;
    if (kind == 3) {
        event_t e;
        int pending = 0;
        for (int t = 0; t < tiles; t++) {
            local float *cur = (t & 1) ? t1 : t0;
            for (int i = get_local_id(0); i < n; i += get_local_size(0)) cur[i] = work_on((float)(i & 7), work);
            barrier(CLK_LOCAL_MEM_FENCE);
            /* The export two tiles back read this tile's buffer: the last one waited. */
            if (pending) wait_group_events(1, &e);
            e = async_work_group_strided_copy(src + t * span, cur, n, stride, 0);
            if (sync) wait_group_events(1, &e);
            pending = !sync;
        }
        if (pending) wait_group_events(1, &e);
    } else {
        event_t e = import(t0, src, n, kind, stride);
        for (int t = 0; t < tiles; t++) {
            local float *cur = (t & 1) ? t1 : t0;
            local float *nxt = (t & 1) ? t0 : t1;
            if (sync) {
                if (t > 0) e = import(cur, src + t * span, n, kind, stride);
                wait_group_events(1, &e);
            } else {
                wait_group_events(1, &e);
                if (t + 1 < tiles) e = import(nxt, src + (t + 1) * span, n, kind, stride);
            }
            for (int i = get_local_id(0); i < n; i += get_local_size(0)) acc += work_on(cur[i], work);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    out[get_global_id(0)] = acc;
}
"#;

/// The copy shapes: (name, kind, stride in floats).
pub const COPIES: &[(&str, i32, i32)] = &[
    ("contiguous", 0, 1),
    ("stride 4", 1, 4),
    ("stride 16", 1, 16),
    ("2D, 64-byte rows", 2, 256),
    ("export, stride 16", 3, 16),
];
/// Dependent steps per element: none, balanced, heavy.
pub const WORK: &[(&str, i32)] = &[("none", 0), ("balanced", 8), ("heavy", 32)];
/// The work the synchronous twin runs (an index into `WORK`).
pub const SYNC_WORK: usize = 1;
/// Floats per tile: 16 KiB, two tiles filling the 32 KiB of local memory.
const TILE: usize = 4096;
/// Tiles the launch imports in all, shared among its groups.
const TILES: usize = 256;
/// Launches of each point, at least: with the best of 3, two runs of the same code
/// differed by up to 0.70-1.57x on the 2-core machine.
const BUDGET: std::time::Duration = std::time::Duration::from_millis(150);

/// The group counts of the sweep for a device of `cores` compute units: 1, 2, a
/// quarter, half, all of them and four times as many, each once.
pub fn group_counts(cores: usize) -> Vec<usize> {
    let mut g = vec![1, 2, cores / 4, cores / 2, cores, 4 * cores];
    g.retain(|&n| n > 0);
    g.sort_unstable();
    g.dedup();
    g
}

/// The environment variable naming the copies a sweep runs (`bench --copy`): names
/// or parts of them, one a line; empty or unset runs all.
pub const COPY_ENV: &str = "FERROCL_BENCH_COPY";

/// Whether the copy `name` is among `copies` (`COPY_ENV`'s form).
pub fn chosen(copies: &str, name: &str) -> bool {
    copies.trim().is_empty() || copies.lines().any(|c| !c.is_empty() && name.contains(c))
}

/// The key of one point; `sync` for the synchronous twin.
pub fn key(copy: usize, work: usize, groups: usize, sync: bool) -> String {
    format!("{}_{copy}_{work}_g{groups}", if sync { "twin" } else { "sweep" })
}

/// Each point's best time in ms, and the device's compute units (`sweep_cores`).
pub(crate) fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let prog = s.build(SOURCE)?;
    let k = s.kernel(prog, "sweep")?;
    let cores = s.device_info(CL_DEVICE_MAX_COMPUTE_UNITS as cl_device_info).max(1);
    // The largest span: a tile of floats 16 apart.
    let bytes = TILES * TILE * 16 * 4;
    let (a, b) = (s.buffer(bytes, Some(&vec![0.5f32; bytes / 4]))?, s.buffer(4 * cores * 64 * 4, None)?);
    arg(k, 0, &a)?;
    arg(k, 1, &b)?;
    for i in [2, 3] {
        crate::session::check(cl!(clSetKernelArg(k, i, TILE * 4, std::ptr::null())), "clSetKernelArg")?;
    }
    arg(k, 4, &(TILE as i32))?;
    let mut out = vec![("sweep_cores".to_string(), cores as f64)];
    let copies = std::env::var(COPY_ENV).unwrap_or_default();
    for (c, &(_, kind, stride)) in COPIES.iter().enumerate().filter(|(_, c)| chosen(&copies, c.0)) {
        arg(k, 5, &kind)?;
        arg(k, 6, &stride)?;
        for (w, &(_, work)) in WORK.iter().enumerate() {
            arg(k, 7, &work)?;
            for sync in [false, true].into_iter().filter(|&t| !t || w == SYNC_WORK) {
                arg(k, 9, &(sync as i32))?;
                for groups in group_counts(cores) {
                    let tiles = (TILES / groups).max(2);
                    arg(k, 8, &(tiles as i32))?;
                    let t = s.timed_for(3, BUDGET, k, &[groups * 64], Some(&[64]))?;
                    out.push((key(c, w, groups, sync), t * 1e3));
                }
            }
        }
    }
    cl!(clReleaseKernel(k));
    cl!(clReleaseProgram(prog));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_counts_cover_one_to_four_per_core_once() {
        assert_eq!(group_counts(16), vec![1, 2, 4, 8, 16, 64]);
        assert_eq!(group_counts(2), vec![1, 2, 8]);
    }
}
