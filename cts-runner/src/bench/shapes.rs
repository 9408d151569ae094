//! Kernel shapes: the forms real OpenCL code takes, each run over the same data on every
//! platform and checked against the host's answer. Straight-line code and if/else are
//! what a work-item loop vectorises by itself; the others put a loop, or barriers, in
//! each work-item: a loop of uniform length, a block-stride tile loop, a grid-stride
//! loop, an escape-time loop (a different length per work-item), a loop over broadcast
//! data (n-body), barriers in a loop (a stencil in local memory), a local-memory
//! reduction, and a polynomial over 16 KiB tiles read straight from global memory,
//! imported double-buffered with `async_work_group_copy`, or copied by hand; then the last
//! two over 64 MiB the caches do not hold (outside the mean). Figures are G elements (or
//! interactions) per second; the geometric mean compares platforms.

use crate::cl;
use crate::cl::*;
use crate::session::{arg, Session};

pub const METRICS: &[(&str, &str, bool)] = &[
    ("shape_straight", "shape: straight-line polynomial, G elements/s", true),
    ("shape_uniform", "shape: uniform 32-step loop, G elements/s", true),
    ("shape_block", "shape: block-stride tile loop, G elements/s", true),
    ("shape_grid", "shape: grid-stride loop, G elements/s", true),
    ("shape_ifelse", "shape: if/else on data, G elements/s", true),
    ("shape_escape", "shape: escape-time loop, G iterations/s", true),
    ("shape_nbody", "shape: loop over broadcast data (n-body), G interactions/s", true),
    ("shape_stencil", "shape: barriers in a loop (local stencil), G element-steps/s", true),
    ("shape_reduce", "shape: local-memory tree reduction, G elements/s", true),
    ("shape_tiles_direct", "shape: degree-20 polynomial over tiles from global, G elements/s", true),
    ("shape_tiles_async", "  the same, tiles double-buffered by async copies, G elements/s", true),
    ("shape_tiles_hand", "  the same, tiles copied by hand, G elements/s", true),
    ("shape_geomean", "shape: geometric mean of the 12 figures above", true),
    ("shape_tiles_async_mem", "tiles from 64 MiB in memory, double-buffered by async copies, G elements/s", true),
    ("shape_tiles_hand_mem", "  the same, tiles copied by hand, G elements/s", true),
];

/// The shapes the geometric mean covers: the rows above it.
const MEAN_OF: usize = 12;

/// Elements of the streaming shapes: 4 MiB in, 4 MiB out.
const N: usize = 1 << 20;
const GROUP: usize = 64;
/// Elements a block-stride group, or a tile, covers.
const TILE: usize = 4096;
/// Work-items of the grid-stride launch.
const GRID: usize = 4096;
const ESCAPE_WIDTH: usize = 256;
const ESCAPE_MAX: i32 = 256;
const BODIES: usize = 4096;
const STENCIL_GROUP: usize = 256;
const STENCIL_STEPS: i32 = 16;
const TILE_GROUPS: usize = 64;
/// Groups of the tile kernels over data the caches do not hold (64 MiB in, 64 out), where
/// an import can overlap the memory's latency and a copy by hand waits for it.
const MEMORY_TILE_GROUPS: usize = 1024;
const TILES_PER_GROUP: usize = 4;

pub const SOURCE: &str = r#"
#define P8(x) (((((((0.1f * x + 0.2f) * x + 0.3f) * x - 0.4f) * x + 0.5f) * x - 0.6f) * x + 0.7f) * x + 0.8f)
#define P20(x) (P8(P8(x) * 0.5f) * 0.25f + P8(x) * x)

kernel void straight(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = P8(x);
}

kernel void uniform_loop(global const float *in, global float *out, constant float *coef) {
    size_t i = get_global_id(0);
    float x = in[i], acc = 0.0f;
    for (int k = 0; k < 32; k++) acc = acc * x + coef[k];
    out[i] = acc;
}

kernel void block_stride(global const float *in, global float *out, int tile) {
    size_t base = get_group_id(0) * tile;
    for (int i = get_local_id(0); i < tile; i += get_local_size(0)) {
        float x = in[base + i];
        out[base + i] = P8(x);
    }
}

kernel void grid_stride(global const float *in, global float *out, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        float x = in[i];
        out[i] = P8(x);
    }
}

kernel void if_else(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = x > 0.5f ? P8(x) : x * x - 0.25f * x;
}

kernel void escape(global int *out, int width, int max_iter) {
    int i = get_global_id(0);
    float cr = -2.0f + 2.5f * (float)(i % width) / (float)width;
    float ci = -1.25f + 2.5f * (float)(i / width) / (float)width;
    float zr = 0.0f, zi = 0.0f;
    int it = 0;
    while (it < max_iter && zr * zr + zi * zi < 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        it++;
    }
    out[i] = it;
}

kernel void nbody(global const float4 *pos, global float4 *acc, int n) {
    size_t i = get_global_id(0);
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float inv = rsqrt(dx * dx + dy * dy + dz * dz + 0.01f);
        float s = q.w * inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    acc[i] = (float4)(ax, ay, az, 0.0f);
}

kernel void stencil(global const float *in, global float *out, int steps) {
    local float t[258];
    size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
    t[l + 1] = in[g];
    if (l == 0) { t[0] = 0.0f; t[n + 1] = 0.0f; }
    for (int s = 0; s < steps; s++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        float v = (t[l] + t[l + 1] + t[l + 2]) * 0.25f;
        barrier(CLK_LOCAL_MEM_FENCE);
        t[l + 1] = v;
    }
    out[g] = t[l + 1];
}

kernel void local_reduce(global const float *in, global float *partial) {
    local float s[256];
    size_t l = get_local_id(0);
    s[l] = in[get_global_id(0)];
    for (size_t k = get_local_size(0) / 2; k > 0; k /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < k) s[l] += s[l + k];
    }
    if (l == 0) partial[get_group_id(0)] = s[0];
}

kernel void tiles_direct(global const float *in, global float *out, int tiles) {
    size_t base = get_group_id(0) * tiles * 4096;
    for (int t = 0; t < tiles; t++)
        for (int i = get_local_id(0); i < 4096; i += get_local_size(0)) {
            float x = in[base + t * 4096 + i];
            out[base + t * 4096 + i] = P20(x);
        }
}

kernel void tiles_async(global const float *in, global float *out, int tiles) {
    local float buf[2][4096];
    size_t base = get_group_id(0) * tiles * 4096;
    event_t e = async_work_group_copy(buf[0], in + base, 4096, 0);
    for (int t = 0; t < tiles; t++) {
        event_t next = 0;
        if (t + 1 < tiles) next = async_work_group_copy(buf[(t + 1) & 1], in + base + (t + 1) * 4096, 4096, 0);
        wait_group_events(1, &e);
        for (int i = get_local_id(0); i < 4096; i += get_local_size(0)) {
            float x = buf[t & 1][i];
            out[base + t * 4096 + i] = P20(x);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        e = next;
    }
}

kernel void tiles_hand(global const float *in, global float *out, int tiles) {
    local float buf[4096];
    size_t base = get_group_id(0) * tiles * 4096;
    for (int t = 0; t < tiles; t++) {
        for (int i = get_local_id(0); i < 4096; i += get_local_size(0)) buf[i] = in[base + t * 4096 + i];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = get_local_id(0); i < 4096; i += get_local_size(0)) {
            float x = buf[i];
            out[base + t * 4096 + i] = P20(x);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
"#;

fn p8(x: f32) -> f32 {
    ((((((0.1 * x + 0.2) * x + 0.3) * x - 0.4) * x + 0.5) * x - 0.6) * x + 0.7) * x + 0.8
}

fn p20(x: f32) -> f32 {
    p8(p8(x) * 0.5) * 0.25 + p8(x) * x
}

fn if_else(x: f32) -> f32 {
    if x > 0.5 {
        p8(x)
    } else {
        x * x - 0.25 * x
    }
}

/// Inputs in [0, 1): none near a rounding edge of the checks' tolerance.
fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect()
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// `got` against `want` element by element, within a relative `tolerance` (compilers
/// may contract a * b + c into one rounding).
fn close(name: &str, got: &[f32], want: impl Iterator<Item = f32>, tolerance: f32) -> Result<(), String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if (g - w).abs() > tolerance * w.abs().max(1.0) {
            return Err(format!("{name}: element {i} is {g}, the host computes {w}"));
        }
    }
    Ok(())
}

/// One shape: a kernel, its arguments, the launch, how many elements a launch covers,
/// and the check of its output.
struct Shape<'a> {
    key: &'a str,
    kernel: &'a str,
    args: Vec<Arg>,
    global: usize,
    local: usize,
    elements: f64,
    check: Check<'a>,
}

/// Checks a shape's output against the host's answer.
type Check<'a> = Box<dyn Fn(&Session) -> Result<(), String> + 'a>;

enum Arg {
    Mem(cl_mem),
    Int(i32),
}

/// Every shape the platform builds and computes right; a shape that fails its check
/// prints why and gives no figure.
pub fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let prog = s.build(SOURCE)?;
    let data = input(N);
    let inp = s.buffer(N * 4, Some(&data))?;
    let out = s.buffer(N * 4, None)?;
    let coef: Vec<f32> = (0..32).map(|k| 0.5 / (k + 1) as f32).collect();
    let coefs = s.buffer(32 * 4, Some(&coef))?;
    let bodies: Vec<f32> = (0..BODIES * 4)
        .map(|i| match i % 4 {
            3 => 1.0 + (i % 7) as f32 * 0.1,
            c => ((i / 4 * (13 + c * 17)) % 997) as f32 / 997.0 * 10.0,
        })
        .collect();
    let pos = s.buffer(BODIES * 16, Some(&bodies))?;
    let acc = s.buffer(BODIES * 16, None)?;
    let partial = s.buffer(N / 256 * 4, None)?;

    let streaming = |f: fn(f32) -> f32, name: &'static str| -> Check<'static> {
        let want: Vec<f32> = data.iter().map(|&x| f(x)).collect();
        Box::new(move |s: &Session| close(name, &floats(&s.read(out, N * 4)?), want.iter().copied(), 1e-4))
    };
    let shapes = vec![
        Shape {
            key: "shape_straight",
            kernel: "straight",
            args: vec![Arg::Mem(inp), Arg::Mem(out)],
            global: N,
            local: GROUP,
            elements: N as f64,
            check: streaming(p8, "straight"),
        },
        Shape {
            key: "shape_uniform",
            kernel: "uniform_loop",
            args: vec![Arg::Mem(inp), Arg::Mem(out), Arg::Mem(coefs)],
            global: N,
            local: GROUP,
            elements: N as f64,
            check: {
                let want: Vec<f32> = data.iter().map(|&x| coef.iter().fold(0.0, |a, c| a * x + c)).collect();
                Box::new(move |s: &Session| close("uniform", &floats(&s.read(out, N * 4)?), want.iter().copied(), 1e-4))
            },
        },
        Shape {
            key: "shape_block",
            kernel: "block_stride",
            args: vec![Arg::Mem(inp), Arg::Mem(out), Arg::Int(TILE as i32)],
            global: N / TILE * GROUP,
            local: GROUP,
            elements: N as f64,
            check: streaming(p8, "block-stride"),
        },
        Shape {
            key: "shape_grid",
            kernel: "grid_stride",
            args: vec![Arg::Mem(inp), Arg::Mem(out), Arg::Int(N as i32)],
            global: GRID,
            local: GROUP,
            elements: N as f64,
            check: streaming(p8, "grid-stride"),
        },
        Shape {
            key: "shape_ifelse",
            kernel: "if_else",
            args: vec![Arg::Mem(inp), Arg::Mem(out)],
            global: N,
            local: GROUP,
            elements: N as f64,
            check: streaming(if_else, "if/else"),
        },
        escape_shape(out),
        Shape {
            key: "shape_nbody",
            kernel: "nbody",
            args: vec![Arg::Mem(pos), Arg::Mem(acc), Arg::Int(BODIES as i32)],
            global: BODIES,
            local: GROUP,
            elements: (BODIES * BODIES) as f64,
            check: {
                let want = nbody(&bodies);
                Box::new(move |s: &Session| {
                    close("n-body", &floats(&s.read(acc, BODIES * 16)?), want.iter().copied(), 1e-3)
                })
            },
        },
        Shape {
            key: "shape_stencil",
            kernel: "stencil",
            args: vec![Arg::Mem(inp), Arg::Mem(out), Arg::Int(STENCIL_STEPS)],
            global: N,
            local: STENCIL_GROUP,
            elements: N as f64 * STENCIL_STEPS as f64,
            check: {
                let want = stencil(&data);
                Box::new(move |s: &Session| close("stencil", &floats(&s.read(out, N * 4)?), want.iter().copied(), 1e-5))
            },
        },
        Shape {
            key: "shape_reduce",
            kernel: "local_reduce",
            args: vec![Arg::Mem(inp), Arg::Mem(partial)],
            global: N,
            local: 256,
            elements: N as f64,
            check: {
                let want: Vec<f32> =
                    data.chunks(256).map(|c| c.iter().map(|&v| v as f64).sum::<f64>() as f32).collect();
                Box::new(move |s: &Session| {
                    close("reduction", &floats(&s.read(partial, N / 256 * 4)?), want.iter().copied(), 1e-5)
                })
            },
        },
        tiles_shape("shape_tiles_direct", "tiles_direct", TILE_GROUPS, inp, out, &data),
        tiles_shape("shape_tiles_async", "tiles_async", TILE_GROUPS, inp, out, &data),
        tiles_shape("shape_tiles_hand", "tiles_hand", TILE_GROUPS, inp, out, &data),
    ];
    let big = MEMORY_TILE_GROUPS * TILES_PER_GROUP * TILE;
    let big_data = input(big);
    let big_in = s.buffer(big * 4, Some(&big_data))?;
    let big_out = s.buffer(big * 4, None)?;
    let from_memory = [
        tiles_shape("shape_tiles_async_mem", "tiles_async", MEMORY_TILE_GROUPS, big_in, big_out, &big_data),
        tiles_shape("shape_tiles_hand_mem", "tiles_hand", MEMORY_TILE_GROUPS, big_in, big_out, &big_data),
    ];

    let mut figures = Vec::new();
    for shape in &shapes {
        match run(s, prog, shape) {
            Ok(rate) => figures.push((shape.key.to_string(), rate)),
            Err(e) => eprintln!("{} not measured: {e}", shape.kernel),
        }
    }
    if figures.len() == MEAN_OF {
        let mean = (figures.iter().map(|(_, v)| v.ln()).sum::<f64>() / figures.len() as f64).exp();
        figures.push(("shape_geomean".into(), mean));
    }
    for shape in &from_memory {
        match run(s, prog, shape) {
            Ok(rate) => figures.push((shape.key.to_string(), rate)),
            Err(e) => eprintln!("{} over 64 MiB not measured: {e}", shape.kernel),
        }
    }
    for m in [inp, out, coefs, pos, acc, partial, big_in, big_out] {
        cl!(clReleaseMemObject(m));
    }
    cl!(clReleaseProgram(prog));
    Ok(figures)
}

/// Runs one shape once, checks its output, then times it; G elements per second.
/// Launches of each shape, at least: the best of 5 launches of a millisecond moved by a
/// fifth from run to run on the lent VMs, more than the tile kernels' differences.
const SHAPE_BUDGET: std::time::Duration = std::time::Duration::from_millis(200);

fn run(s: &Session, prog: cl_program, shape: &Shape) -> Result<f64, String> {
    let k = s.kernel(prog, shape.kernel)?;
    for (i, a) in shape.args.iter().enumerate() {
        match a {
            Arg::Mem(m) => arg(k, i as u32, m)?,
            Arg::Int(v) => arg(k, i as u32, v)?,
        }
    }
    let (global, local) = ([shape.global], [shape.local]);
    s.run(k, &global, Some(&local))?;
    (shape.check)(s)?;
    let t = s.timed_for(5, SHAPE_BUDGET, k, &global, Some(&local))?;
    cl!(clReleaseKernel(k));
    Ok(shape.elements / t / 1e9)
}

/// Iterations of the escape-time loop per pixel, as the kernel computes them.
fn escape(i: usize) -> i32 {
    let w = ESCAPE_WIDTH as f32;
    let cr = -2.0 + 2.5 * (i % ESCAPE_WIDTH) as f32 / w;
    let ci = -1.25 + 2.5 * (i / ESCAPE_WIDTH) as f32 / w;
    let (mut zr, mut zi, mut it) = (0f32, 0f32, 0);
    while it < ESCAPE_MAX && zr * zr + zi * zi < 4.0 {
        let t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        it += 1;
    }
    it
}

/// The escape-time shape: a pixel's count may differ from the host's where a contracted
/// multiply-add tips a point near the set's edge, so the check allows 1% of pixels to
/// differ; its figure counts the loop's iterations.
fn escape_shape<'a>(out: cl_mem) -> Shape<'a> {
    let pixels = ESCAPE_WIDTH * ESCAPE_WIDTH;
    let want: Vec<i32> = (0..pixels).map(escape).collect();
    let iterations: f64 = want.iter().map(|&c| c as f64).sum();
    Shape {
        key: "shape_escape",
        kernel: "escape",
        args: vec![Arg::Mem(out), Arg::Int(ESCAPE_WIDTH as i32), Arg::Int(ESCAPE_MAX)],
        global: pixels,
        local: GROUP,
        elements: iterations,
        check: Box::new(move |s: &Session| {
            let got = s.read(out, pixels * 4)?;
            let counts = got.chunks_exact(4).map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
            let differ = counts.zip(&want).filter(|(g, w)| g != *w).count();
            match differ * 100 <= pixels {
                true => Ok(()),
                false => Err(format!("escape: {differ} of {pixels} pixels differ from the host's counts")),
            }
        }),
    }
}

fn nbody(pos: &[f32]) -> Vec<f32> {
    let mut acc = vec![0f32; pos.len()];
    for i in 0..BODIES {
        let p = &pos[i * 4..i * 4 + 4];
        let (mut ax, mut ay, mut az) = (0f32, 0f32, 0f32);
        for q in pos.chunks_exact(4) {
            let (dx, dy, dz) = (q[0] - p[0], q[1] - p[1], q[2] - p[2]);
            let inv = 1.0 / (dx * dx + dy * dy + dz * dz + 0.01).sqrt();
            let s = q[3] * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        acc[i * 4..i * 4 + 3].copy_from_slice(&[ax, ay, az]);
    }
    acc
}

fn stencil(data: &[f32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(data.len());
    for group in data.chunks(STENCIL_GROUP) {
        let mut t = vec![0f32; STENCIL_GROUP + 2];
        t[1..=STENCIL_GROUP].copy_from_slice(group);
        for _ in 0..STENCIL_STEPS {
            let v: Vec<f32> = (0..STENCIL_GROUP).map(|l| (t[l] + t[l + 1] + t[l + 2]) * 0.25).collect();
            t[1..=STENCIL_GROUP].copy_from_slice(&v);
        }
        out.extend_from_slice(&t[1..=STENCIL_GROUP]);
    }
    out
}

fn tiles_shape<'a>(key: &'a str, kernel: &'a str, groups: usize, inp: cl_mem, out: cl_mem, data: &[f32]) -> Shape<'a> {
    let n = groups * TILES_PER_GROUP * TILE;
    let want: Vec<f32> = data[..n].iter().map(|&x| p20(x)).collect();
    Shape {
        key,
        kernel,
        args: vec![Arg::Mem(inp), Arg::Mem(out), Arg::Int(TILES_PER_GROUP as i32)],
        global: groups * GROUP,
        local: GROUP,
        elements: n as f64,
        check: Box::new(move |s: &Session| close(kernel, &floats(&s.read(out, n * 4)?), want.iter().copied(), 1e-4)),
    }
}
