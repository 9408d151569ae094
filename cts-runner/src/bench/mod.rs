//! `cts-runner bench`: the kernel benchmarks, run for each named platform in its own
//! process (so memory figures and loader state are per platform), printed side by side
//! with ratios against the first platform and against the host.

use std::ptr::{null, null_mut};
use std::time::Instant;

pub mod async_copies;
pub mod builds;
pub mod command_buffers;
pub mod features;
pub mod image;
pub mod reduce;
pub mod shapes;
pub mod vector;
pub mod workers;

use crate::cl;
use crate::cl::*;
use crate::session::{arg, check, platform_named, saving_or_loading_binaries, Session};

/// One platform's figures, in the order they are printed: (key, label, higher is
/// better). Ratios are first platform / other platform.
pub const METRICS: &[(&str, &str, bool)] = &[
    ("launch_us", "launch latency (global size 1), us", false),
    ("launch16_us", "launch latency, 16 groups of 64 work-items, us", false),
    ("launch16_per_s", "  the same launches back to back, launches/s", true),
    ("cb_replay100_us", "100 small launches replayed from a command buffer, us", false),
    ("cb_enqueue100_us", "  the same 100 launches enqueued one by one, us", false),
    ("dev_enqueue100_us", "  the same 100 launches enqueued by a kernel (device-side enqueue), us", false),
    ("fatomic_add_mops", "float atomic_fetch_add on 64 counters, M ops/s", true),
    ("fatomic_cas_mops", "  the same as a compare-exchange loop, M ops/s", true),
    ("subdev_pair_ms", "saxpy 2x32 MiB as halves on two sub-devices at once, ms", false),
    ("subdev_whole_ms", "  the same as one launch on the whole device, ms", false),
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
    ("mad_half16_gops", "mad(half16) in a loop, G ops/s", true),
    ("axpb_float16_gops", "a*b+c on float16 in a loop, G ops/s", true),
    ("axpb_half16_gops", "a*b+c on half16 in a loop, G ops/s", true),
];

/// Vector builtins at full width: a dependent chain of 256 per work-item, 16 lanes.
/// Built apart from SOURCE, so the cold-build figure keeps measuring the same program.
pub const SOURCE_VECTOR: &str = r#"
kernel void mad_float16(global float16 *o, float s) {
    float16 a = (float16)(get_global_id(0)), b = (float16)(s), c = (float16)(0.5f);
    for (int i = 0; i < 256; i++) a = mad(a, b, c);
    o[get_global_id(0)] = a;
}
kernel void axpb_float16(global float16 *o, float s) {
    float16 a = (float16)(get_global_id(0)), b = (float16)(s), c = (float16)(0.5f);
    for (int i = 0; i < 256; i++) a = a * b + c;
    o[get_global_id(0)] = a;
}
kernel void mad24_int16(global int16 *o, int s) {
    int16 a = (int16)(get_global_id(0)), b = (int16)(s), c = (int16)(3);
    for (int i = 0; i < 256; i++) a = mad24(a, b, c);
    o[get_global_id(0)] = a;
}
"#;

/// The same chain in half (cl_khr_fp16), built apart: a platform without half skips it.
pub const SOURCE_HALF: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void mad_half16(global half16 *o, float s) {
    half16 a = convert_half16((float16)(get_global_id(0) & 7)), b = (half16)((half)s), c = (half16)(0.5h);
    for (int i = 0; i < 256; i++) a = mad(a, b, c);
    o[get_global_id(0)] = a;
}
kernel void axpb_half16(global half16 *o, float s) {
    half16 a = convert_half16((float16)(get_global_id(0) & 7)), b = (half16)((half)s), c = (half16)(0.5h);
    for (int i = 0; i < 256; i++) a = a * b + c;
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

fn status_kib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
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
/// earlier process has built already; `only` names one section to run alone (`async`,
/// `builds`, `vector`, `shapes`, `workers`, `commands`, `features`), or `warm`: only build `warm`.
pub fn measure(platform: &str, warm: &str, only: Option<&str>) -> Result<Vec<(String, f64)>, String> {
    let (p, _) = platform_named(platform)?;
    let s = Session::new(p)?;
    let mut out = Vec::new();
    match only {
        Some("async") => return async_copies::measure(&s),
        Some("builds") => return builds::measure(&s, unique_number()),
        Some("vector") => return vector_chains(&s),
        Some("shapes") => return shapes::measure(&s),
        Some("workers") => return workers::measure(&s),
        Some("commands") => return command_buffers::measure(&s),
        Some("features") => return features::measure(&s),
        // The warm source built and each kernel launched once (some platforms make a
        // kernel's code at its first launch), for the measuring process to find in the
        // cache.
        Some("warm") => {
            let src = std::fs::read_to_string(warm).map_err(|e| format!("{warm}: {e}"))?;
            let (prog, scratch) = (s.build(&src)?, s.buffer(1 << 16, None)?);
            first_launches(&s, prog, scratch)?;
            cl!(clReleaseProgram(prog));
            cl!(clReleaseMemObject(scratch));
            return Ok(out);
        }
        Some(other) => return Err(format!("no bench section {other}")),
        None => {}
    }

    let scratch = s.buffer(1 << 16, None)?;
    let prog = if saving_or_loading_binaries() {
        // Programs from (or for) saved binaries: the compiler figures need a compiler
        // and fresh sources, so they are left out; the program is SOURCE itself.
        s.build(SOURCE)?
    } else {
        let prog = build_figures(&s, warm, scratch, &mut out)?;
        out.extend(builds::measure(&s, unique_number())?);
        prog
    };
    launch_figures(&s, prog, scratch, &mut out)?;
    Ok(out)
}

/// Vector arithmetic at full width, float, int and half side by side: 64 Ki work-items
/// x 256 dependent operations x 16 lanes, G ops/s. The programs are built before any
/// runs, so `--save-binaries` saves both even where the code cannot run here (built for
/// another CPU with `FERROCL_TARGET_CPU`).
fn vector_chains(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let vprog = s.build(SOURCE_VECTOR)?;
    // A platform without half skips its rows.
    let hprog = s.build(SOURCE_HALF).ok();
    let mut out = Vec::new();
    let n = 1 << 16;
    let vout = s.buffer(n * 64, None)?;
    let b = 0.999f32;
    let mut chain = |prog: cl_program, key: &str, name: &str, scalar: u32| -> Result<(), String> {
        let k = s.kernel(prog, name)?;
        arg(k, 0, &vout)?;
        arg(k, 1, &scalar)?;
        let t = s.timed(5, k, &[n], None)?;
        out.push((key.into(), (n * 16 * 256) as f64 / t / 1e9));
        Ok(())
    };
    chain(vprog, "mad_float16_gops", "mad_float16", b.to_bits())?;
    chain(vprog, "mad24_int16_gops", "mad24_int16", 3)?;
    chain(vprog, "axpb_float16_gops", "axpb_float16", b.to_bits())?;
    if let Some(hprog) = hprog {
        for (key, name) in [("mad_half16_gops", "mad_half16"), ("axpb_half16_gops", "axpb_half16")] {
            chain(hprog, key, name, b.to_bits())?;
            check_half_chain(s, vout, n, name, b)?;
        }
    }
    cl!(clReleaseMemObject(vout));
    Ok(out)
}

/// The half chains' results against the host's: lane values start at `gid & 7` and
/// take 256 steps of `a * b + 0.5` with every step rounded to half, fused (one
/// rounding: an fma, or a contracted `a * b + c`) or not (the product rounded too: mad
/// may be either, and Intel's runtime rounds the product); each
/// exact result fits a float, so computing in float and rounding once is the fused
/// answer. A platform's fast half must still be half.
fn check_half_chain(s: &Session, out: cl_mem, n: usize, name: &str, b: f32) -> Result<(), String> {
    let b = half_round(b as f64);
    let steps = |a0: f64, fused: bool| {
        (0..256).fold(a0, |a, _| match fused {
            true => half_round(a * b + 0.5),
            false => half_round(half_round(a * b) + 0.5),
        })
    };
    let bytes = s.read(out, n * 32)?;
    for gid in 0..n {
        let a0 = (gid & 7) as f64;
        let (fused, unfused) = (steps(a0, true), steps(a0, false));
        for lane in 0..16 {
            let at = (gid * 16 + lane) * 2;
            let got = half_value(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
            if got != fused && got != unfused {
                return Err(format!(
                    "{name}: work-item {gid} lane {lane} is {got}, not {fused} (or unfused {unfused})"
                ));
            }
        }
    }
    Ok(())
}

/// `x` rounded to the nearest half (ties to even), for finite values in half's range.
fn half_round(x: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    let quantum = 2f64.powi((x.abs().log2().floor() as i32).max(-14) - 10);
    (x / quantum).round_ties_even() * quantum
}

/// A half's value from its bits.
fn half_value(h: u16) -> f64 {
    let (sign, exp, frac) = (if h >> 15 == 1 { -1.0 } else { 1.0 }, ((h >> 10) & 31) as i32, (h & 1023) as f64);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 => {
            if frac == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
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
        check(cl!(clEnqueueNDRangeKernel(s.queue(), k, 1, null(), g, l, 0, null(), null_mut())), "enqueue")?;
    }
    check(cl!(clFinish(s.queue())), "clFinish")?;
    out.push(("launch16_per_s".into(), reps as f64 / t.elapsed().as_secs_f64()));
    out.extend(command_buffers::measure(s)?);
    out.extend(features::measure(s)?);

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
    // The kernel's `local int x[4096]` holds one slot a work-item: Intel's runtime
    // allows groups of 8192, which wrote past it and crashed.
    let wg = max_wg.min(4096);
    let pout = s.buffer(wg * 8 * 4, None)?;
    arg(bk, 0, &pout)?;
    arg(bk, 1, &4i32)?;
    s.run(bk, &[wg * 8], Some(&[wg]))?;
    out.push(("peak_rss_mb".into(), status_kib("VmHWM:") / 1024.0));

    out.extend(vector_chains(s)?);
    out.extend(vector::measure(s)?);
    out.extend(reduce::measure(s)?);
    out.extend(shapes::measure(s)?);
    out.extend(async_copies::measure(s)?);
    out.extend(image::measure(s)?);
    Ok(())
}
