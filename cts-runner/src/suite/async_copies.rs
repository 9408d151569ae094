//! The async-copy conformance suite: every gentype and width in both directions, plain
//! and strided (strides 1, 3, 4, 5) at a size each copy path of an engine may take
//! (tiny, and tens of KiB); the 2D/3D copies of cl_khr_extended_async_copies for
//! element sizes 1 to 64 with line and plane margins; and fence orderings of
//! cl_khr_async_work_group_copy_fence. Every destination byte is checked, and so are
//! the bytes around the copied ones (they must keep the fill pattern).

use std::ptr::null;

use crate::cl;
use crate::cl::*;
use crate::session::{check, Session};
use crate::suite::{lacking, with_program, Case, Programs, Verdict};

const TYPES: &[(&str, usize)] = &[
    ("char", 1),
    ("uchar", 1),
    ("short", 2),
    ("ushort", 2),
    ("int", 4),
    ("uint", 4),
    ("long", 8),
    ("ulong", 8),
    ("float", 4),
    ("double", 8),
    ("half", 2),
];
const WIDTHS: &[usize] = &[1, 2, 3, 4, 8, 16];
const STRIDES: &[usize] = &[0, 1, 3, 4, 5];
const ELEMENT_SIZES: &[usize] = &[1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 32, 47, 64];
const FILL: u8 = 0xA5;
const GROUP: usize = 64;
const MARGIN: usize = 3;

enum Arg {
    Mem(cl_mem),
    Local(usize),
    Int(i32),
}

fn launch(s: &Session, k: cl_kernel, args: &[Arg], groups: usize) -> Result<(), String> {
    launch_with(s, k, args, groups, GROUP)
}

fn launch_with(s: &Session, k: cl_kernel, args: &[Arg], groups: usize, local: usize) -> Result<(), String> {
    for (i, a) in args.iter().enumerate() {
        let i = i as cl_uint;
        let code = match a {
            Arg::Mem(m) => cl!(clSetKernelArg(k, i, 8, (m as *const cl_mem).cast())),
            Arg::Local(n) => cl!(clSetKernelArg(k, i, *n, null())),
            Arg::Int(v) => cl!(clSetKernelArg(k, i, 4, (v as *const i32).cast())),
        };
        check(code, "clSetKernelArg")?;
    }
    s.run(k, &[groups * local], Some(&[local])).map(|_| ())
}

/// Deterministic bytes.
fn bytes(n: usize, seed: u64) -> Vec<u8> {
    crate::suite::random(seed).take(n).map(|x| x as u8).collect()
}

fn compare(got: &[u8], want: &[u8]) -> Verdict {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None if got.len() == want.len() => Verdict::Passed,
        None => Verdict::Failed(format!("{} bytes read, {} expected", got.len(), want.len())),
        Some(i) => {
            let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
            Verdict::Failed(format!("byte {i}: {:#04x}, expected {:#04x} ({bad} bytes differ)", got[i], want[i]))
        }
    }
}

fn pragmas(t: &str) -> &'static str {
    match t {
        "half" => "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
        "double" => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
        _ => "",
    }
}

/// Kernels copying `n` elements per group between global and local memory, plain
/// (`stride` 0) or strided, with `margin` elements of the fill pattern around them.
fn vector_source(t: &str) -> String {
    let mut s = pragmas(t).to_string();
    for &w in WIDTHS {
        let tn = if w == 1 { t.to_string() } else { format!("{t}{w}") };
        s += &format!(
            r#"
kernel void g2l_{tn}(global const {tn} *src, global uchar *dst, local {tn} *tile, int n, int stride, int margin) {{
    size_t lid = get_local_id(0), lsz = get_local_size(0), g = get_group_id(0);
    size_t total = (size_t)(n + 2 * margin) * sizeof({tn});
    local uchar *b = (local uchar *)tile;
    for (size_t i = lid; i < total; i += lsz) b[i] = {FILL};
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e;
    if (stride == 0) e = async_work_group_copy(tile + margin, src + g * n, n, 0);
    else e = async_work_group_strided_copy(tile + margin, src + g * n * stride, n, stride, 0);
    wait_group_events(1, &e);
    for (size_t i = lid; i < total; i += lsz) dst[g * total + i] = b[i];
}}
kernel void l2g_{tn}(global const uchar *src, global {tn} *dst, local {tn} *tile, int n, int stride, int margin) {{
    size_t lid = get_local_id(0), lsz = get_local_size(0), g = get_group_id(0);
    size_t bytes = (size_t)n * sizeof({tn});
    local uchar *b = (local uchar *)tile;
    for (size_t i = lid; i < bytes; i += lsz) b[i] = src[g * bytes + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t span = stride == 0 ? n : (size_t)(n - 1) * stride + 1;
    global {tn} *d = dst + g * (span + margin);
    event_t e;
    if (stride == 0) e = async_work_group_copy(d, tile, n, 0);
    else e = async_work_group_strided_copy(d, tile, n, stride, 0);
    wait_group_events(1, &e);
}}
"#
        );
    }
    s
}

fn vector_case(
    s: &Session,
    p: cl_program,
    tn: &str,
    elem: usize,
    to_local: bool,
    stride: usize,
    n: usize,
) -> Result<Verdict, String> {
    let groups = 3;
    let k = s.kernel(p, &format!("{}_{tn}", if to_local { "g2l" } else { "l2g" }))?;
    let step = stride.max(1);
    let span = if stride == 0 { n } else { (n - 1) * stride + 1 };
    let verdict = if to_local {
        let src = bytes(groups * n * step * elem, (elem * 31 + stride) as u64);
        let per_group = (n + 2 * MARGIN) * elem;
        let (a, d) = (s.buffer_of(&src)?, s.buffer_of(&vec![0; groups * per_group])?);
        let args = [
            Arg::Mem(a),
            Arg::Mem(d),
            Arg::Local(per_group),
            Arg::Int(n as i32),
            Arg::Int(stride as i32),
            Arg::Int(MARGIN as i32),
        ];
        launch(s, k, &args, groups)?;
        let got = s.read(d, groups * per_group)?;
        let mut want = vec![FILL; groups * per_group];
        for g in 0..groups {
            for i in 0..n {
                let from = (g * n * step + i * step) * elem;
                let to = g * per_group + (MARGIN + i) * elem;
                want[to..to + elem].copy_from_slice(&src[from..from + elem]);
            }
        }
        release(&[a, d]);
        compare(&got, &want)
    } else {
        let src = bytes(groups * n * elem, (elem * 37 + stride) as u64);
        let per_group = (span + MARGIN) * elem;
        let (a, d) = (s.buffer_of(&src)?, s.buffer_of(&vec![FILL; groups * per_group])?);
        let args = [
            Arg::Mem(a),
            Arg::Mem(d),
            Arg::Local(n * elem),
            Arg::Int(n as i32),
            Arg::Int(stride as i32),
            Arg::Int(MARGIN as i32),
        ];
        launch(s, k, &args, groups)?;
        let got = s.read(d, groups * per_group)?;
        let mut want = vec![FILL; groups * per_group];
        for g in 0..groups {
            for i in 0..n {
                let from = (g * n + i) * elem;
                let to = g * per_group + i * step * elem;
                want[to..to + elem].copy_from_slice(&src[from..from + elem]);
            }
        }
        release(&[a, d]);
        compare(&got, &want)
    };
    cl!(clReleaseKernel(k));
    Ok(verdict)
}

fn release(ms: &[cl_mem]) {
    for &m in ms {
        cl!(clReleaseMemObject(m));
    }
}

const ND_SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_extended_async_copies : enable
event_t copy_in(local uchar *tile, global const uchar *src, int elem, int per_line, int lines, int planes,
                int sl, int sp, int dl, int dp) {
    if (planes == 0) return async_work_group_copy_2D2D(tile, 1, src, 2, elem, per_line, lines, sl, dl, 0);
    return async_work_group_copy_3D3D(tile, 1, src, 2, elem, per_line, lines, planes, sl, sp, dl, dp, 0);
}
kernel void g2l(global const uchar *src, global uchar *dst, local uchar *tile, int tile_bytes, int elem,
                int per_line, int lines, int planes, int sl, int sp, int dl, int dp) {
    size_t lid = get_local_id(0), lsz = get_local_size(0);
    for (size_t i = lid; i < tile_bytes; i += lsz) tile[i] = 0xA5;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = copy_in(tile, src, elem, per_line, lines, planes, sl, sp, dl, dp);
    wait_group_events(1, &e);
    for (size_t i = lid; i < tile_bytes; i += lsz) dst[i] = tile[i];
}
kernel void l2g(global const uchar *src, global uchar *dst, local uchar *tile, int tile_bytes, int elem,
                int per_line, int lines, int planes, int sl, int sp, int dl, int dp) {
    size_t lid = get_local_id(0), lsz = get_local_size(0);
    for (size_t i = lid; i < tile_bytes; i += lsz) tile[i] = src[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e;
    if (planes == 0) e = async_work_group_copy_2D2D(dst, 1, tile, 2, elem, per_line, lines, sl, dl, 0);
    else e = async_work_group_copy_3D3D(dst, 1, tile, 2, elem, per_line, lines, planes, sl, sp, dl, dp, 0);
    wait_group_events(1, &e);
}
"#;

/// One 2D (`planes` 0) or 3D copy of `elem`-byte elements with margins between lines
/// and planes on both sides; offsets: 2 elements in the source, 1 in the destination.
fn nd_case(s: &Session, p: cl_program, to_local: bool, elem: usize, planes: usize) -> Result<Verdict, String> {
    let (per_line, lines) = (5, 4);
    let (sl, dl) = (per_line + 3, per_line + 2);
    let (sp, dp) = (lines * sl + 2, lines * dl + 1);
    let np = planes.max(1);
    let src_bytes = (2 + (np - 1) * sp + (lines - 1) * sl + per_line) * elem;
    let dst_bytes = (1 + (np - 1) * dp + (lines - 1) * dl + per_line) * elem + 2 * elem;
    let src = bytes(src_bytes, elem as u64 * 7 + planes as u64);
    let mut want = if to_local { vec![0xA5; dst_bytes] } else { vec![FILL; dst_bytes] };
    for pl in 0..np {
        for l in 0..lines {
            let from = (2 + pl * sp + l * sl) * elem;
            let to = (1 + pl * dp + l * dl) * elem;
            want[to..to + per_line * elem].copy_from_slice(&src[from..from + per_line * elem]);
        }
    }
    let k = s.kernel(p, if to_local { "g2l" } else { "l2g" })?;
    let (a, d) = (s.buffer_of(&src)?, s.buffer_of(&vec![FILL; dst_bytes])?);
    let tile = if to_local { dst_bytes } else { src_bytes };
    let ints = [tile, elem, per_line, lines, planes, sl, sp, dl, dp].map(|v| Arg::Int(v as i32));
    let mut args = vec![Arg::Mem(a), Arg::Mem(d), Arg::Local(tile)];
    args.extend(ints);
    launch(s, k, &args, 1)?;
    let got = s.read(d, dst_bytes)?;
    release(&[a, d]);
    cl!(clReleaseKernel(k));
    Ok(compare(&got, &want))
}

/// Fence orderings (cl_khr_async_work_group_copy_fence): one copy, a fence, and a
/// second copy that reads what the first wrote or writes what it read.
const FENCE_SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_async_work_group_copy_fence : enable
#define FILL_LOCAL(l, from) for (size_t i = get_local_id(0); i < n; i += get_local_size(0)) l[i] = from[g * n + i]; \
    barrier(CLK_LOCAL_MEM_FENCE)
#define DUMP(l, to) for (size_t i = get_local_id(0); i < n; i += get_local_size(0)) to[g * n + i] = l[i]
/* export local -> global, then import into the same local memory */
kernel void import_after_export_aliased_local(global const int *a, global const int *b, global int *g1,
        global int *out, local int *l1, local int *l2, int n) {
    size_t g = get_group_id(0);
    FILL_LOCAL(l1, a);
    event_t e = async_work_group_copy(g1 + g * n, l1, n, 0);
    async_work_group_copy_fence(CLK_LOCAL_MEM_FENCE);
    event_t f = async_work_group_copy(l1, b + g * n, n, 0);
    event_t both[2] = { f, e };
    wait_group_events(2, both);
    DUMP(l1, out);
}
/* export to global memory, then import that global memory */
kernel void import_after_export_aliased_global(global const int *a, global const int *b, global int *g1,
        global int *out, local int *l1, local int *l2, int n) {
    size_t g = get_group_id(0);
    FILL_LOCAL(l1, a);
    event_t e = async_work_group_copy(g1 + g * n, l1, n, 0);
    async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE);
    event_t f = async_work_group_copy(l2, g1 + g * n, n, 0);
    event_t both[2] = { f, e };
    wait_group_events(2, both);
    DUMP(l2, out);
}
/* import into local memory, then export that local memory */
kernel void export_after_import_aliased_local(global const int *a, global const int *b, global int *g1,
        global int *out, local int *l1, local int *l2, int n) {
    size_t g = get_group_id(0);
    event_t e = async_work_group_copy(l1, a + g * n, n, 0);
    async_work_group_copy_fence(CLK_LOCAL_MEM_FENCE);
    event_t f = async_work_group_copy(out + g * n, l1, n, 0);
    event_t both[2] = { f, e };
    wait_group_events(2, both);
}
/* import from global memory, then export over that global memory */
kernel void export_after_import_aliased_global(global const int *a, global const int *b, global int *g1,
        global int *out, local int *l1, local int *l2, int n) {
    size_t g = get_group_id(0);
    FILL_LOCAL(l2, b);
    event_t e = async_work_group_copy(l1, g1 + g * n, n, 0);
    async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE);
    event_t f = async_work_group_copy(g1 + g * n, l2, n, 0);
    event_t both[2] = { f, e };
    wait_group_events(2, both);
    DUMP(l1, out);
}
/* both memories aliased: export local to global, then import it back into the same local memory */
kernel void import_after_export_aliased_global_and_local(global const int *a, global const int *b,
        global int *g1, global int *out, local int *l1, local int *l2, int n) {
    size_t g = get_group_id(0);
    FILL_LOCAL(l1, a);
    event_t e = async_work_group_copy(g1 + g * n, l1, n, 0);
    async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    event_t f = async_work_group_copy(l1, g1 + g * n, n, 0);
    event_t both[2] = { f, e };
    wait_group_events(2, both);
    DUMP(l1, out);
}
/* both aliased: import global into local, then export that local memory over the same global memory */
kernel void export_after_import_aliased_global_and_local(global const int *a, global const int *b,
        global int *g1, global int *out, local int *l1, local int *l2, int n) {
    size_t g = get_group_id(0);
    event_t e = async_work_group_copy(l1, g1 + g * n, n, 0);
    async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    event_t f = async_work_group_copy(g1 + g * n, l1, n, 0);
    event_t both[2] = { f, e };
    wait_group_events(2, both);
    DUMP(l1, out);
}
"#;

const FENCES: &[&str] = &[
    "import_after_export_aliased_local",
    "import_after_export_aliased_global",
    "import_after_export_aliased_global_and_local",
    "export_after_import_aliased_local",
    "export_after_import_aliased_global",
    "export_after_import_aliased_global_and_local",
];

fn fence_case(s: &Session, p: cl_program, name: &str, n: usize) -> Result<Verdict, String> {
    let groups = 3;
    let ints = |seed: u64| bytes(groups * n * 4, seed);
    let (a, b, g) = (ints(1), ints(2), ints(3));
    let (ba, bb, bg, bo) =
        (s.buffer_of(&a)?, s.buffer_of(&b)?, s.buffer_of(&g)?, s.buffer_of(&vec![0; groups * n * 4])?);
    let k = s.kernel(p, name)?;
    let args = [
        Arg::Mem(ba),
        Arg::Mem(bb),
        Arg::Mem(bg),
        Arg::Mem(bo),
        Arg::Local(n * 4),
        Arg::Local(n * 4),
        Arg::Int(n as i32),
    ];
    launch(s, k, &args, groups)?;
    let (out, g1) = (s.read(bo, groups * n * 4)?, s.read(bg, groups * n * 4)?);
    release(&[ba, bb, bg, bo]);
    cl!(clReleaseKernel(k));
    // (expected out, expected g1)
    let (want_out, want_g1) = match name {
        "import_after_export_aliased_local" => (&b, &a),
        "import_after_export_aliased_global" => (&a, &a),
        "import_after_export_aliased_global_and_local" => (&a, &a),
        "export_after_import_aliased_local" => (&a, &g),
        "export_after_import_aliased_global" => (&g, &b),
        _ => (&g, &g),
    };
    Ok(match compare(&out, want_out) {
        Verdict::Passed => match compare(&g1, want_g1) {
            Verdict::Failed(w) => Verdict::Failed(format!("global memory after the copies: {w}")),
            v => v,
        },
        Verdict::Failed(w) => Verdict::Failed(format!("copied data: {w}")),
        v => v,
    })
}

/// Copies issued where every work-item runs (their regions hold per-work-item work),
/// whose work-items each move a part of the copy as they pass it (`in_region` into local
/// memory, `out_region` out of it), and copies in regions run once for the group; the
/// double-buffered `stream` also waits for its exports under a condition, which puts a
/// barrier at the join after that wait (compiler/passes/regions.rs).
const SHARED_SOURCE: &str = r#"
kernel void stream(global const uint *in, global uint *out, local uint *t0, local uint *t1, int tiles, int n) {
    size_t lid = get_local_id(0), lsz = get_local_size(0);
    size_t base = get_group_id(0) * (size_t)tiles * n;
    event_t ein = async_work_group_copy(t0, in + base, n, 0), eout = 0;
    for (int i = 0; i < tiles; i++) {
        local uint *cur = (i & 1) ? t1 : t0, *nxt = (i & 1) ? t0 : t1;
        wait_group_events(1, &ein);
        if (i + 1 < tiles) {
            if (i > 0) wait_group_events(1, &eout);
            ein = async_work_group_copy(nxt, in + base + (size_t)(i + 1) * n, n, 0);
        }
        for (size_t j = lid; j < n; j += lsz) cur[j] = cur[j] * 3u + (uint)i;
        barrier(CLK_LOCAL_MEM_FENCE);
        eout = async_work_group_copy(out + base + (size_t)i * n, cur, n, 0);
    }
    wait_group_events(1, &eout);
}
kernel void in_region(global const uchar *in, global uchar *out, global uint *scratch, local uchar *tile, int n) {
    size_t lid = get_local_id(0), lsz = get_local_size(0), g = get_group_id(0);
    scratch[get_global_id(0)] = (uint)lid * 7u;
    event_t e = async_work_group_copy(tile, in + g * (size_t)n, n, 0);
    scratch[get_global_id(0)] += 1u;
    wait_group_events(1, &e);
    for (size_t j = lid; j < n; j += lsz) out[g * (size_t)n + j] = tile[j];
}
kernel void out_region(global const uchar *in, global uchar *out, global uint *scratch, local uchar *tile, int n) {
    size_t lid = get_local_id(0), lsz = get_local_size(0), g = get_group_id(0);
    for (size_t j = lid; j < n; j += lsz) tile[j] = in[g * (size_t)n + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[get_global_id(0)] = (uint)lid * 7u;
    event_t e = async_work_group_copy(out + g * (size_t)n, tile, n, 0);
    scratch[get_global_id(0)] += 1u;
    wait_group_events(1, &e);
}
/* The group ends with its copy in flight: the driver completes it. */
kernel void never_waited(global const uchar *in, global uchar *out, global uint *scratch, local uchar *tile, int n) {
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[get_global_id(0)] = (uint)get_local_id(0) * 7u;
    event_t e = async_work_group_copy(tile, in + get_group_id(0) * (size_t)n, n, 0);
    scratch[get_global_id(0)] += 1u;
}
"#;

/// `stream` over 5 tiles of `n` uints per group; the others copy `n` bytes per group.
/// Every output element is checked, and every work-item's own stores.
fn shared_case(s: &Session, p: cl_program, kernel: &str, local: usize, n: usize) -> Result<Verdict, String> {
    let groups = 3;
    let k = s.kernel(p, kernel)?;
    let verdict = if kernel == "stream" {
        let tiles = 5;
        let words = groups * tiles * n;
        let input: Vec<u32> = crate::suite::random(n as u64).take(words).map(|x| x as u32).collect();
        let raw: Vec<u8> = input.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let (a, d) = (s.buffer_of(&raw)?, s.buffer_of(&vec![0; words * 4])?);
        let args = [
            Arg::Mem(a),
            Arg::Mem(d),
            Arg::Local(n * 4),
            Arg::Local(n * 4),
            Arg::Int(tiles as i32),
            Arg::Int(n as i32),
        ];
        launch_with(s, k, &args, groups, local)?;
        let got = s.read(d, words * 4)?;
        release(&[a, d]);
        let want: Vec<u8> = input
            .iter()
            .enumerate()
            .flat_map(|(i, w)| w.wrapping_mul(3).wrapping_add(((i / n) % tiles) as u32).to_ne_bytes())
            .collect();
        compare(&got, &want)
    } else {
        let input = bytes(groups * n, n as u64 + 17);
        let items = groups * local;
        let (a, d, sc) = (s.buffer_of(&input)?, s.buffer_of(&vec![0; groups * n])?, s.buffer_of(&vec![0; items * 4])?);
        let args = [Arg::Mem(a), Arg::Mem(d), Arg::Mem(sc), Arg::Local(n), Arg::Int(n as i32)];
        launch_with(s, k, &args, groups, local)?;
        let (got, scratch) = (s.read(d, groups * n)?, s.read(sc, items * 4)?);
        release(&[a, d, sc]);
        let want_scratch: Vec<u8> = (0..items).flat_map(|i| ((i % local) as u32 * 7 + 1).to_ne_bytes()).collect();
        match compare(&scratch, &want_scratch) {
            Verdict::Passed if kernel != "never_waited" => compare(&got, &input),
            Verdict::Failed(w) => Verdict::Failed(format!("work-items' own stores: {w}")),
            v => v,
        }
    };
    cl!(clReleaseKernel(k));
    Ok(verdict)
}

pub fn cases(programs: &Programs) -> Vec<Case<'_>> {
    let mut out = Vec::new();
    for &(t, size) in TYPES {
        let ext = match t {
            "half" => Some("cl_khr_fp16"),
            "double" => Some("cl_khr_fp64"),
            _ => None,
        };
        for &w in WIDTHS {
            let tn = if w == 1 { t.to_string() } else { format!("{t}{w}") };
            let elem = size * if w == 3 { 4 } else { w };
            for to_local in [true, false] {
                for &stride in STRIDES {
                    // A copy small enough to run when issued, and one of ~12 KiB.
                    for n in [5, (12 << 10) / elem] {
                        let kind = if stride == 0 { "copy".to_string() } else { format!("strided{stride}") };
                        let dir = if to_local { "global_to_local" } else { "local_to_global" };
                        let tn2 = tn.clone();
                        out.push(Case {
                            name: format!("async/{kind}/{dir}/{tn}/n{n}"),
                            run: with_program(
                                programs,
                                t,
                                move || vector_source(t),
                                lacking(ext),
                                move |s, p| vector_case(s, p, &tn2, elem, to_local, stride, n),
                            ),
                        });
                    }
                }
            }
        }
    }
    for planes in [0, 3] {
        for &elem in ELEMENT_SIZES {
            for to_local in [true, false] {
                let dims = if planes == 0 { "2D" } else { "3D" };
                let dir = if to_local { "global_to_local" } else { "local_to_global" };
                out.push(Case {
                    name: format!("async/{dims}/{dir}/elem{elem}"),
                    run: with_program(
                        programs,
                        "nd",
                        || ND_SOURCE.to_string(),
                        lacking(Some("cl_khr_extended_async_copies")),
                        move |s, p| nd_case(s, p, to_local, elem, planes),
                    ),
                });
            }
        }
    }
    // Work-group sizes: one work-item, one that does not divide the copy, a usual one and
    // a large one; sizes that leave the large group's last work-items no part, with a tail
    // that is no whole number of 64-byte moves, and 16 KiB.
    for kernel in ["stream", "in_region", "out_region", "never_waited"] {
        for local in [1, 7, 64, 256] {
            for n in [300, 1029, 4096] {
                out.push(Case {
                    name: format!("async/shared/{kernel}/wg{local}/n{n}"),
                    run: with_program(
                        programs,
                        "shared",
                        || SHARED_SOURCE.to_string(),
                        lacking(None),
                        move |s, p| shared_case(s, p, kernel, local, n),
                    ),
                });
            }
        }
    }
    for &f in FENCES {
        for n in [48, 2048] {
            out.push(Case {
                name: format!("async/fence/{f}/n{n}"),
                run: with_program(
                    programs,
                    "fence",
                    || FENCE_SOURCE.to_string(),
                    lacking(Some("cl_khr_async_work_group_copy_fence")),
                    move |s, p| fence_case(s, p, f, n),
                ),
            });
        }
    }
    out
}
