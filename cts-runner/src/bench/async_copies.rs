//! The async-copy benchmarks of `cts-runner bench`: copy bandwidth through local memory,
//! a strided gather, 2D tile copies, and a double-buffered kernel against its
//! synchronous twin. Platforms without `cl_khr_extended_async_copies` get no 2D figure.

use crate::cl;
use crate::cl::*;
use crate::session::{arg, best, Session};

pub const METRICS: &[(&str, &str, bool)] = &[
    ("async_copy_gbs", "async copy global->local->global, GB/s", true),
    ("strided_gather_gbs", "async strided gather (stride 4) + copy out, GB/s", true),
    ("strided_gather_cached_gbs", "same, 4 MiB input (in cache), GB/s", true),
    ("copy2d_gbs", "async 2D tile copies (64x64 floats) in and out, GB/s", true),
    ("dbuf_light", "double-buffered vs synchronous twin, copy-bound", true),
    ("dbuf_balanced", "double-buffered vs synchronous twin, balanced", true),
    ("dbuf_heavy", "double-buffered vs synchronous twin, compute-bound", true),
    ("dbuf_light_g2", "  the same, copy-bound, 2 groups", true),
    ("dbuf_balanced_g2", "  the same, balanced, 2 groups", true),
    ("dbuf_light_g4", "  the same, copy-bound, 4 groups", true),
    ("dbuf_balanced_g4", "  the same, balanced, 4 groups", true),
    ("dbuf_light_g8", "  the same, copy-bound, 8 groups", true),
    ("dbuf_balanced_g8", "  the same, balanced, 8 groups", true),
    ("dbuf_light_g128", "  the same, copy-bound, 128 groups", true),
    ("dbuf_balanced_g128", "  the same, balanced, 128 groups", true),
    ("hand_light", "double-buffered vs copying by hand, copy-bound", true),
    ("hand_balanced", "double-buffered vs copying by hand, balanced", true),
    ("hand_light_g2", "  the same, copy-bound, 2 groups", true),
    ("hand_balanced_g2", "  the same, balanced, 2 groups", true),
    ("hand_light_g4", "  the same, copy-bound, 4 groups", true),
    ("hand_balanced_g4", "  the same, balanced, 4 groups", true),
    ("hand_light_g8", "  the same, copy-bound, 8 groups", true),
    ("hand_balanced_g8", "  the same, balanced, 8 groups", true),
    ("hand_light_g128", "  the same, copy-bound, 128 groups", true),
    ("hand_balanced_g128", "  the same, balanced, 128 groups", true),
    ("io_light", "in and out: double-buffered vs synchronous twin, copy-bound", true),
    ("io_balanced", "in and out: double-buffered vs synchronous twin, balanced", true),
    ("io_heavy", "in and out: double-buffered vs synchronous twin, compute-bound", true),
    ("io_light_g2", "  the same, copy-bound, 2 groups", true),
    ("io_balanced_g2", "  the same, balanced, 2 groups", true),
    ("io_light_g4", "  the same, copy-bound, 4 groups", true),
    ("io_balanced_g4", "  the same, balanced, 4 groups", true),
    ("io_light_g8", "  the same, copy-bound, 8 groups", true),
    ("io_balanced_g8", "  the same, balanced, 8 groups", true),
    ("io_light_g128", "  the same, copy-bound, 128 groups", true),
    ("io_balanced_g128", "  the same, balanced, 128 groups", true),
    ("io_hand_light", "in and out: double-buffered vs copying by hand, copy-bound", true),
    ("io_hand_balanced", "in and out: double-buffered vs copying by hand, balanced", true),
    ("io_hand_light_g2", "  the same, copy-bound, 2 groups", true),
    ("io_hand_balanced_g2", "  the same, balanced, 2 groups", true),
    ("io_hand_light_g4", "  the same, copy-bound, 4 groups", true),
    ("io_hand_balanced_g4", "  the same, balanced, 4 groups", true),
    ("io_hand_light_g8", "  the same, copy-bound, 8 groups", true),
    ("io_hand_balanced_g8", "  the same, balanced, 8 groups", true),
    ("io_hand_light_g128", "  the same, copy-bound, 128 groups", true),
    ("io_hand_balanced_g128", "  the same, balanced, 128 groups", true),
    ("dbuf_geomean", "double-buffered vs twin, geo. mean of the 20 points above", true),
    ("twin_self_geomean", "synchronous twin vs itself (noise), geo. mean of 20 points", true),
    ("twin_self_low", "  the same, lowest", true),
    ("twin_self_high", "  the same, highest", true),
    ("dbuf_below_noise", "double-buffered vs twin points below that lowest, of 20", false),
];

pub const SOURCE: &str = r#"
kernel void roundtrip(global const float4 *in, global float4 *out, local float4 *tile, int n) {
    size_t base = get_group_id(0) * (size_t)n;
    event_t e = async_work_group_copy(tile, in + base, n, 0);
    wait_group_events(1, &e);
    e = async_work_group_copy(out + base, tile, n, 0);
    wait_group_events(1, &e);
}

kernel void gather(global const float *in, global float *out, local float *tile, int n, int stride) {
    event_t e = async_work_group_strided_copy(tile, in + get_group_id(0) * (size_t)n * stride, n, stride, 0);
    wait_group_events(1, &e);
    e = async_work_group_copy(out + get_group_id(0) * (size_t)n, tile, n, 0);
    wait_group_events(1, &e);
}

"#;

pub const SOURCE_DBUF: &str = r#"
/* Built once per MODE (-DMODE=n), so each form is a program of its own, as in an
   application (with the mode a kernel argument, every form carried the others' code, and
   regions that are the same for every work-item in one form were not in the others).
   MODE 0: copy each tile, wait, compute it (synchronous twin); 1: copy tile i+1 while
   computing tile i (double-buffered); 2: compute only (calibration); 3: the work-items
   copy each tile themselves, then a barrier (the kernel without async copies). Each work-item
   computes a contiguous run of the tile, `work` dependent steps per element; work < 0
   skips the computation (copies alone). */
#define mode MODE
kernel void tiles(global const float4 *in, global float *out, local float4 *t0, local float4 *t1,
                  int tiles, int tile, int work) {
    int lid = get_local_id(0), lsz = get_local_size(0), run = tile / lsz;
    global const float4 *src = in + get_group_id(0) * (size_t)tiles * tile;
    for (int j = lid; j < tile; j += lsz) { t0[j] = 1.0f; t1[j] = 1.0f; }
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 acc = 0;
    event_t e = 0;
    if (mode == 1) e = async_work_group_copy(t0, src, tile, 0);
    for (int i = 0; i < tiles; i++) {
        local float4 *cur = (i & 1) ? t1 : t0;
        local float4 *nxt = (i & 1) ? t0 : t1;
        if (mode == 0) e = async_work_group_copy(cur, src + (size_t)i * tile, tile, 0);
        if (mode == 3) {
            for (int j = lid * run; j < (lid + 1) * run; j++) cur[j] = src[(size_t)i * tile + j];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (mode < 2) wait_group_events(1, &e);
        if (mode == 1 && i + 1 < tiles) e = async_work_group_copy(nxt, src + (size_t)(i + 1) * tile, tile, 0);
        for (int j = lid * run; work >= 0 && j < (lid + 1) * run; j++) {
            float4 v = cur[j];
            for (int k = 0; k < work; k++) v = v * 0.999f + 0.5f;
            acc += v;
        }
    }
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}

/* The same with every tile written back (a pixel filter or stencil streaming tiles):
   imported, transformed in place, exported. Modes as for `tiles`; in mode 1 tile i+1 is
   imported and tile i-1 exported while tile i computes, so the export has until the
   import over its buffer waits for it. */
kernel void stream(global const float4 *in, global float4 *out, local float4 *t0, local float4 *t1,
                   int tiles, int tile, int work) {
    int lid = get_local_id(0), lsz = get_local_size(0), run = tile / lsz;
    size_t base = get_group_id(0) * (size_t)tiles * tile;
    event_t ein = 0, eout = 0;
    if (mode == 1) ein = async_work_group_copy(t0, in + base, tile, 0);
    for (int i = 0; i < tiles; i++) {
        local float4 *cur = (i & 1) ? t1 : t0;
        local float4 *nxt = (i & 1) ? t0 : t1;
        size_t at = base + (size_t)i * tile;
        if (mode == 0) ein = async_work_group_copy(cur, in + at, tile, 0);
        if (mode == 3) {
            for (int j = lid * run; j < (lid + 1) * run; j++) cur[j] = in[at + j];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (mode < 2) wait_group_events(1, &ein);
        if (mode == 1 && i + 1 < tiles) {
            /* nxt holds tile i-1 until its export is done */
            if (i > 0) wait_group_events(1, &eout);
            ein = async_work_group_copy(nxt, in + at + tile, tile, 0);
        }
        for (int j = lid * run; j < (lid + 1) * run; j++) {
            float4 v = cur[j];
            for (int k = 0; k < work; k++) v = v * 0.999f + 0.5f;
            cur[j] = v + 1.0f;
        }
        if (mode == 3) {
            for (int j = lid * run; j < (lid + 1) * run; j++) out[at + j] = cur[j];
        } else if (mode < 2) {
            barrier(CLK_LOCAL_MEM_FENCE);
            eout = async_work_group_copy(out + at, cur, tile, 0);
            if (mode == 0) wait_group_events(1, &eout);
        }
    }
    if (mode == 1) wait_group_events(1, &eout);
}
"#;

pub const SOURCE_2D: &str = r#"
kernel void tiles2d(global const float *in, global float *out, local float *tile, int width) {
    size_t off = get_group_id(1) * 64 * (size_t)width + get_group_id(0) * 64;
    event_t e = async_work_group_copy_2D2D(tile, 0, in, off, sizeof(float), 64, 64, width, 64, 0);
    wait_group_events(1, &e);
    e = async_work_group_copy_2D2D(out, off, tile, 0, sizeof(float), 64, 64, 64, width, 0);
    wait_group_events(1, &e);
}
"#;

/// Launches per figure, the best kept: the machine's noise only ever slows a run down.
const REPS: usize = 12;

/// Bytes of each benchmark's input: well beyond the caches.
const BYTES: usize = 64 << 20;
/// Input of the cache-resident gather: fits the last-level cache with its output.
const CACHED_BYTES: usize = 4 << 20;

fn local(k: cl_kernel, i: cl_uint, bytes: usize) -> Result<(), String> {
    crate::session::check(cl!(clSetKernelArg(k, i, bytes, std::ptr::null())), "clSetKernelArg")
}

pub(crate) fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let mut out = Vec::new();
    let prog = s.build(SOURCE)?;
    let (a, b) = (s.buffer(BYTES, Some(&vec![1.0; BYTES / 4]))?, s.buffer(BYTES, None)?);

    // Round trip: 16 KiB tiles in and out; bytes read plus bytes written.
    let k = s.kernel(prog, "roundtrip")?;
    let n = 1024usize;
    arg(k, 0, &a)?;
    arg(k, 1, &b)?;
    local(k, 2, n * 16)?;
    arg(k, 3, &(n as i32))?;
    let groups = BYTES / (n * 16);
    let t = s.timed(REPS, k, &[groups * 64], Some(&[64]))?;
    out.push(("async_copy_gbs".into(), 2.0 * BYTES as f64 / t / 1e9));

    // Strided gather of every 4th float into 16 KiB tiles, then copied out: over the
    // whole input (bound by memory: every source cache line holds an element), and over
    // a quarter of the last-level cache, where the copy's own speed shows.
    let k = s.kernel(prog, "gather")?;
    let (n, stride) = (4096usize, 4usize);
    local(k, 2, n * 4)?;
    arg(k, 3, &(n as i32))?;
    arg(k, 4, &(stride as i32))?;
    // The cache-resident case has buffers of its own size, as a program with that much
    // data would.
    let (ca, cb) =
        (s.buffer(CACHED_BYTES, Some(&vec![1.0; CACHED_BYTES / 4]))?, s.buffer(CACHED_BYTES / stride, None)?);
    for (key, bytes, reps, (input, output)) in
        [("strided_gather_gbs", BYTES, REPS, (a, b)), ("strided_gather_cached_gbs", CACHED_BYTES, 4 * REPS, (ca, cb))]
    {
        arg(k, 0, &input)?;
        arg(k, 1, &output)?;
        let groups = bytes / (n * 4 * stride);
        let t = s.timed(reps, k, &[groups * 64], Some(&[64]))?;
        out.push((key.into(), 2.0 * (groups * n * 4) as f64 / t / 1e9));
    }

    // 2D tiles of a 4096 x 4096 float image, where the extension exists.
    if let Ok(p2) = s.build(SOURCE_2D) {
        let k = s.kernel(p2, "tiles2d")?;
        let width = 4096usize;
        arg(k, 0, &a)?;
        arg(k, 1, &b)?;
        local(k, 2, 64 * 64 * 4)?;
        arg(k, 3, &(width as i32))?;
        let g = [width / 64 * 16, width / 64 * 4];
        let t = s.timed(REPS, k, &g, Some(&[16, 4]))?;
        out.push(("copy2d_gbs".into(), 2.0 * BYTES as f64 / t / 1e9));
    }

    // Double buffering, 16 groups of 64 work-items (the figures without a suffix), then
    // 2, 4, 8 and 128: with fewer groups than cores, idle cores may copy meanwhile.
    // The same for tiles written back ("io_" figures): nothing in the group reads an
    // export's destination, so an implementation may move exports on other cores.
    let forms =
        (0..4).map(|mode| s.build_with(SOURCE_DBUF, &format!("-DMODE={mode}"))).collect::<Result<Vec<_>, _>>()?;
    // Every point's twin measured twice, and the double-buffered ratios beside that band.
    let (mut noise, mut against_twin) = (Vec::new(), Vec::new());
    for (kernel, prefix) in [("tiles", ""), ("stream", "io_")] {
        let mut ks = [std::ptr::null_mut(); 4];
        for (k, p) in ks.iter_mut().zip(&forms) {
            *k = s.kernel(*p, kernel)?;
        }
        for groups in [16usize, 2, 4, 8, 128] {
            let figures = double_buffered(s, ks, (a, b), groups, kernel == "stream")?;
            let suffix = if groups == 16 { String::new() } else { format!("_g{groups}") };
            for (key, v) in figures {
                match key {
                    "self_light" | "self_balanced" => noise.push(v),
                    "dbuf_light" | "dbuf_balanced" => against_twin.push(v),
                    _ => {}
                }
                if key.starts_with("self_") {
                    continue;
                }
                if groups == 16 || key != "dbuf_heavy" {
                    let key = if prefix.is_empty() { key.to_string() } else { key.replacen("dbuf_", "", 1) };
                    out.push((format!("{prefix}{key}{suffix}"), v));
                }
            }
        }
    }
    let geomean = |v: &[f64]| (v.iter().map(|r| r.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
    let low = noise.iter().copied().fold(f64::INFINITY, f64::min);
    let high = noise.iter().copied().fold(0.0, f64::max);
    let below = against_twin.iter().filter(|&&r| r < low).count();
    out.extend([
        ("dbuf_geomean".into(), geomean(&against_twin)),
        ("twin_self_geomean".into(), geomean(&noise)),
        ("twin_self_low".into(), low),
        ("twin_self_high".into(), high),
        ("dbuf_below_noise".into(), below as f64),
    ]);
    Ok(out)
}

/// The double-buffered kernel against its synchronous twin (the same copies, each waited
/// for at once) and against the kernel without async copies (work-items copy each tile
/// themselves, then a barrier), with `groups` groups, each streaming its share of
/// `BYTES` in 16 KiB tiles: copy-bound (no computation), balanced (the least
/// computation that takes as long as the copies alone, each measured without the other,
/// so the point is balanced on the host it runs on) and compute-bound (4x). Two tiles
/// fill the device's 32 KiB of local memory; with 8 KiB tiles a copy's bookkeeping
/// (every work-item passes each copy call) was a quarter of the copy on the 2-core
/// machine (copy-bound: 12 GB/s async, 16 by hand; 16 KiB tiles: equal). `ks`: the
/// kernel in each form (`MODE` 0 to 3); `stream`: the kernel is `stream`, whose output is
/// checked.
fn double_buffered(
    s: &Session,
    ks: [cl_kernel; 4],
    (a, b): (cl_mem, cl_mem),
    groups: usize,
    stream: bool,
) -> Result<Vec<(&'static str, f64)>, String> {
    let tile = 1024usize;
    let tiles = BYTES / (tile * 16 * groups);
    for k in ks {
        arg(k, 0, &a)?;
        arg(k, 1, &b)?;
        local(k, 2, tile * 16)?;
        local(k, 3, tile * 16)?;
        arg(k, 4, &(tiles as i32))?;
        arg(k, 5, &(tile as i32))?;
    }
    let once = |work: i32, mode: usize| -> Result<f64, String> {
        arg(ks[mode], 6, &work)?;
        s.run(ks[mode], &[groups * 64], Some(&[64]))
    };
    let time = |work: i32, mode: usize| -> Result<f64, String> {
        once(work, mode)?;
        best((0..3).map(|_| once(work, mode)))
    };
    let copies_alone = time(-1, 0)?;
    // The least work whose computation alone takes as long as the copies alone: doubled
    // until past them, then bisected (doubling alone left the point up to 2x off).
    let mut work = 1;
    while work < 1 << 14 && time(work, 2)? < copies_alone {
        work *= 2;
    }
    let (mut lo, mut hi) = (work / 2, work);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if time(mid, 2)? < copies_alone {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let work = hi;
    let mut out = Vec::new();
    for (key, w) in [("dbuf_light", 0), ("dbuf_balanced", work), ("dbuf_heavy", work * 4)] {
        // Alternating, so that a slow spell of the machine hits the twins alike.
        let (mut sync, mut dbuf, mut hand, mut again) = (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for rep in 0..REPS / 2 {
            // The first launch of each form of `stream` has its output checked.
            let timed = |mode: usize| -> Result<f64, String> {
                let t = once(w, mode)?;
                if stream && rep == 0 {
                    check_stream(s, b, w)?;
                }
                Ok(t)
            };
            sync = sync.min(timed(0)?);
            dbuf = dbuf.min(timed(1)?);
            if key != "dbuf_heavy" {
                hand = hand.min(timed(3)?);
                // The twin once more: how far two measurements of one kernel differ
                // here, the band a ratio against the twin must be read in.
                again = again.min(timed(0)?);
            }
        }
        out.push((key, sync / dbuf));
        match key {
            "dbuf_light" => out.extend([("hand_light", hand / dbuf), ("self_light", sync / again)]),
            "dbuf_balanced" => out.extend([("hand_balanced", hand / dbuf), ("self_balanced", sync / again)]),
            _ => {}
        }
    }
    out.push(("dbuf_balanced_work", work as f64));
    Ok(out)
}

/// The output of a `stream` launch with `work`: a copy-out that left stale tiles would
/// otherwise pass for speed.
fn check_stream(s: &Session, out: cl_mem, work: i32) -> Result<(), String> {
    let mut v = 1.0f32;
    for _ in 0..work {
        v = v * 0.999 + 0.5;
    }
    let want = v + 1.0;
    let got = s.read(out, BYTES)?;
    for (i, c) in got.chunks_exact(4).enumerate().step_by(997) {
        let x = f32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        if (x - want).abs() > want * 1e-3 {
            return Err(format!("stream kernel: element {i} is {x}, expected {want}"));
        }
    }
    Ok(())
}

/// Host memcpy over `BYTES` with one thread per core, counting bytes read plus
/// written: the reference for copy bandwidth.
pub fn host_memcpy_gbs() -> f64 {
    let (src, mut dst) = (vec![1u8; BYTES], vec![0u8; BYTES]);
    let each = BYTES.div_ceil(crate::host::host_threads());
    let parts: Vec<_> = dst.chunks_mut(each).zip(src.chunks(each)).collect();
    let best_t = crate::host::on_host_threads(parts, 20, |(d, c)| d.copy_from_slice(c));
    std::hint::black_box(&dst);
    2.0 * BYTES as f64 / best_t / 1e9
}
