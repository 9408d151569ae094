//! The kernels-basics suite: what ordinary OpenCL C programs rely on, each case checked
//! against a host reference. Work-item functions in 1, 2 and 3 dimensions with offsets
//! and non-uniform groups; barriers in loops, in called functions and at the largest
//! group size; `__local` memory that concurrent groups must not share; tiled integer
//! matmul; arguments by value (structs, vectors) and NULL buffers; atomics; integer,
//! float and vector builtins; control flow; program-scope variables; `clEnqueueTask`;
//! and a kernel that does not compile.

use std::ptr::{null, null_mut};

use crate::cl;
use crate::cl::*;
use crate::session::{check, Session};
use crate::suite::{lacking, with_program, Case, Needs, Programs, Verdict};

const SOURCE: &str = r#"
typedef struct { int a; float b; char c; long d; int4 v; } record;
constant int primes[5] = {2, 3, 5, 7, 11};

kernel void ids(global int *out) {
    size_t i = get_global_linear_id();
    global int *o = out + i * 27;
    o[0] = get_work_dim();
    for (uint d = 0; d < 3; d++) {
        global int *f = o + 1 + d * 8;
        f[0] = get_global_id(d); f[1] = get_local_id(d); f[2] = get_group_id(d);
        f[3] = get_global_offset(d); f[4] = get_local_size(d); f[5] = get_num_groups(d);
        f[6] = get_global_size(d); f[7] = get_enqueued_local_size(d);
    }
    o[25] = i;
    o[26] = get_local_linear_id();
}

kernel void reduce(global const int *in, global int *out, local int *scratch) {
    size_t lid = get_local_id(0), n = get_local_size(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = 1; s < n; s *= 2) {
        if (lid % (2 * s) == 0 && lid + s < n) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = scratch[0];
}

/* Hillis-Steele prefix sums, `rounds` times over: barriers inside nested loops. */
kernel void scan(global const int *in, global int *out, local int *a, int rounds) {
    size_t lid = get_local_id(0), n = get_local_size(0);
    a[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < rounds; r++) {
        for (size_t off = 1; off < n; off <<= 1) {
            int v = a[lid];
            if (lid >= off) v += a[lid - off];
            barrier(CLK_LOCAL_MEM_FENCE);
            a[lid] = v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    out[get_global_id(0)] = a[lid];
}

/* A barrier in a function that is not inlined. */
__attribute__((noinline)) void publish(local int *l, int v) {
    l[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
}
kernel void reverse_via_call(global const int *in, global int *out, local int *l) {
    size_t lid = get_local_id(0), n = get_local_size(0);
    publish(l, in[get_global_id(0)]);
    out[get_global_id(0)] = l[n - 1 - lid];
}

/* Each group fills a kernel-scope local array with its own id, works a while so groups
   overlap in time, and checks nobody else wrote there. */
kernel void isolation(global int *out, int spin) {
    local int slot[64];
    size_t lid = get_local_id(0), g = get_group_id(0);
    slot[lid] = (int)(g * 1000 + lid);
    int x = 0;
    for (int i = 0; i < spin; i++) x += (i ^ (int)lid) & 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int ok = 1;
    for (size_t i = 0; i < get_local_size(0); i++) ok &= slot[i] == (int)(g * 1000 + i);
    out[get_global_id(0)] = ok * 1000000 + x;
}

/* 64 KiB of kernel-scope local memory, twice the device's figure (allowed for a kernel's
   own variables): each group fills it, then every work-item sums a strided slice in
   reverse, so a group sharing or losing any of it gets a wrong sum. */
kernel void big_local(global long *out) {
    local long big[8192];
    size_t lid = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    for (size_t i = lid; i < 8192; i += n) big[i] = (long)(g * 100000 + i);
    barrier(CLK_LOCAL_MEM_FENCE);
    long sum = 0;
    for (size_t i = n - 1 - lid; i < 8192; i += n) sum += big[i];
    out[get_global_id(0)] = sum;
}

/* Two __local arguments, for the limits on their sizes. */
kernel void two_locals(global int *out, local int *a, local int *b) {
    size_t lid = get_local_id(0);
    a[lid] = (int)lid;
    b[lid] = 2 * (int)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = a[lid] + b[get_local_size(0) - 1 - lid];
}

/* A 3D group transposes its 4x4x4 cube through local memory. */
kernel void transpose3d(global const int *in, global int *out) {
    local int cube[4][4][4];
    size_t x = get_local_id(0), y = get_local_id(1), z = get_local_id(2);
    size_t g = (get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
    cube[z][y][x] = in[g * 64 + (z * 4 + y) * 4 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g * 64 + (z * 4 + y) * 4 + x] = cube[x][y][z];
}

#define T 8
kernel void matmul(global const int *a, global const int *b, global int *c, int n, int m, int k) {
    local int ta[T][T], tb[T][T];
    int row = get_global_id(1), col = get_global_id(0), ly = get_local_id(1), lx = get_local_id(0);
    int acc = 0;
    for (int t = 0; t < k; t += T) {
        ta[ly][lx] = (row < n && t + lx < k) ? a[row * k + t + lx] : 0;
        tb[ly][lx] = (col < m && t + ly < k) ? b[(t + ly) * m + col] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < T; i++) acc += ta[ly][i] * tb[i][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < n && col < m) c[row * m + col] = acc;
}

kernel void by_value(record r, int4 v, float8 f, global int *out, global const int *maybe_null, uchar u, short s) {
    out[0] = r.a; out[1] = as_int(r.b); out[2] = r.c; out[3] = (int)r.d; out[4] = (int)(r.d >> 32);
    vstore4(r.v, 0, out + 5);
    vstore4(v, 0, out + 9);
    vstore8(as_int8(f), 0, out + 13);
    out[21] = maybe_null == 0;
    out[22] = u;
    out[23] = s;
}

kernel void atomics(global const int *in, global int *acc, global int *hist, global int *per_group) {
    local int count;
    size_t gid = get_global_id(0);
    if (get_local_id(0) == 0) count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = in[gid];
    atomic_add(&acc[0], 1);
    atomic_max(&acc[1], v);
    atomic_min(&acc[2], v);
    atomic_xor(&acc[3], v);
    atomic_sub(&acc[4], v & 7);
    atomic_inc(&hist[v & 15]);
    atomic_inc(&count);
    int old = acc[5];
    while (atomic_cmpxchg(&acc[5], old, old + 2) != old) old = acc[5];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) per_group[get_group_id(0)] = count;
}

kernel void int_ops(global const int *a, global const int *b, global int *out) {
    size_t i = get_global_id(0);
    int x = a[i], y = b[i];
    global int *o = out + i * 16;
    o[0] = clz(x); o[1] = popcount(x); o[2] = rotate(x, y); o[3] = mul_hi(x, y);
    o[4] = add_sat(x, y); o[5] = sub_sat(x, y); o[6] = abs_diff(x, y); o[7] = hadd(x, y);
    o[8] = rhadd(x, y); o[9] = clamp(x, -1000, 1000); o[10] = mul_hi((uint)x, (uint)y); o[11] = max(x, y);
    o[12] = min(x, y); o[13] = ctz(x); o[14] = abs(x); o[15] = convert_uchar_sat(x) + (convert_short_sat(y) << 8);
}

kernel void float_exact(global const float *a, global const float *b, global const float *c, global float *out,
                        global int *ints) {
    size_t i = get_global_id(0);
    float x = a[i], y = b[i], z = c[i];
    global float *o = out + i * 10;
    o[0] = fma(x, y, z); o[1] = fabs(x); o[2] = floor(x); o[3] = ceil(x); o[4] = trunc(x);
    o[5] = round(x); o[6] = rint(x); o[7] = copysign(x, y); o[8] = x * y; o[9] = x + y;
    ints[i * 3] = convert_int_sat(x);
    ints[i * 3 + 1] = convert_int_sat_rte(x);
    ints[i * 3 + 2] = convert_int_rtn(clamp(x, -1e9f, 1e9f));
}

kernel void float_approx(global const float *a, global float *out) {
    size_t i = get_global_id(0);
    float x = a[i];
    global float *o = out + i * 8;
    o[0] = sin(x); o[1] = cos(x); o[2] = exp(x * 0.1f); o[3] = log(fabs(x) + 1.0f);
    o[4] = sqrt(fabs(x)); o[5] = pow(fabs(x) + 0.5f, 1.5f); o[6] = atan(x); o[7] = x / (fabs(x) + 3.0f);
}

kernel void vectors(global const int *in, global int *out) {
    int4 a = vload4(0, in), b = vload4(1, in);
    vstore8(shuffle2(a, b, (uint8)(7, 0, 6, 1, 5, 2, 4, 3)), 0, out);
    vstore4(a.wzyx, 0, out + 8);
    vstore2(a.hi, 0, out + 12);
    vstore2(b.odd, 0, out + 14);
    vstore4(select(a, b, a > b), 0, out + 16);
    vstore3(vload3(1, in) * 2, 0, out + 20);
    vstore4(convert_int4(convert_float4(a) * 0.5f), 0, out + 23);
    vstore4(as_int4(as_float4(b)), 0, out + 27);
    out[31] = dot(convert_float4(a), convert_float4(b));
    int16 w = (int16)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16) * a.x;
    out[32] = w.sF + w.s0 + w.hi.lo.s1;
}

kernel void control(global const int *in, global int *out) {
    size_t i = get_global_id(0);
    int x = in[i], r = 0;
    switch (x & 3) {
    case 0: r = 10; break;
    case 1: r = 20; /* falls through */
    case 2: r += 5; break;
    default: r = -1;
    }
    for (int j = 0; j < 10; j++) {
        if (j == (x & 7)) continue;
        if (j > 8) break;
        r += j;
    }
    unsigned c = (unsigned)x & 0xffff;
    while (c > 1 && r < 100000) {
        c = (c & 1) ? 3 * c + 1 : c / 2;
        r++;
    }
    out[i] = r + primes[i % 5];
}

kernel void task(global int *out) {
    out[0] = get_global_size(0) + get_local_size(0) * 10 + get_work_dim() * 100;
}
"#;

/// Program-scope global variables: optional in OpenCL 3.0.
const GLOBALS_SOURCE: &str = r#"
global int counter = 100;
global int squares[8];
kernel void store(global int *out) {
    size_t i = get_global_id(0);
    squares[i] = (int)(i * i) + counter;
    out[i] = counter;
}
kernel void load(global int *out) { out[get_global_id(0)] = squares[get_global_id(0)]; }
"#;

const FP64_SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void fp64(global const double *a, global const double *b, global double *out) {
    size_t i = get_global_id(0);
    double x = a[i], y = b[i];
    out[i * 5] = x * y; out[i * 5 + 1] = x / y; out[i * 5 + 2] = sqrt(fabs(x));
    out[i * 5 + 3] = fma(x, y, 1.0); out[i * 5 + 4] = x - y;
}
"#;

/// A kernel argument.
enum A {
    /// A buffer holding these bytes; read back after the launch.
    Buf(Vec<u8>),
    /// A NULL buffer.
    Null,
    Local(usize),
    /// Bytes passed by value.
    Val(Vec<u8>),
}

fn le<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain numbers, read as their bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }.to_vec()
}

fn ints(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap_or_default())).collect()
}

fn floats(b: &[u8]) -> Vec<f32> {
    ints(b).into_iter().map(|i| f32::from_bits(i as u32)).collect()
}

/// Launches `kernel` and returns every buffer argument's bytes afterwards.
fn launch(
    s: &Session,
    p: cl_program,
    kernel: &str,
    args: &[A],
    range: (Option<&[usize]>, &[usize], Option<&[usize]>),
) -> Result<Vec<Vec<u8>>, String> {
    let k = s.kernel(p, kernel)?;
    let mut mems = Vec::new();
    let result = (|| {
        for (i, a) in args.iter().enumerate() {
            let i = i as cl_uint;
            let code = match a {
                A::Buf(bytes) => {
                    let m = s.buffer_of(bytes)?;
                    mems.push((m, bytes.len()));
                    cl!(clSetKernelArg(k, i, 8, (&m as *const cl_mem).cast()))
                }
                A::Null => cl!(clSetKernelArg(k, i, 8, null())),
                A::Local(n) => cl!(clSetKernelArg(k, i, *n, null())),
                A::Val(v) => cl!(clSetKernelArg(k, i, v.len(), v.as_ptr().cast())),
            };
            check(code, &format!("clSetKernelArg({i})"))?;
        }
        let (offset, global, local) = range;
        s.run_nd(k, offset, global, local).map_err(|e| format!("clEnqueueNDRangeKernel/clFinish failed: {e}"))?;
        mems.iter().map(|&(m, n)| s.read(m, n)).collect()
    })();
    for (m, _) in mems {
        cl!(clReleaseMemObject(m));
    }
    cl!(clReleaseKernel(k));
    result
}

/// Compares element by element, naming the first difference.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Verdict {
    if got.len() != want.len() {
        return Verdict::Failed(format!("{what}: {} values, expected {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None => Verdict::Passed,
        Some(i) => {
            let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
            Verdict::Failed(format!("{what}[{i}] = {:?}, expected {:?} ({bad} differ)", got[i], want[i]))
        }
    }
}

/// Deterministic ints spread over the whole range, with the edge values first.
fn values(n: usize, seed: u32) -> Vec<i32> {
    let edges = [0, 1, -1, i32::MAX, i32::MIN, 255, -256, 1 << 20];
    crate::suite::random(seed as u64)
        .take(n)
        .enumerate()
        .map(|(i, x)| edges.get(i).copied().unwrap_or((x >> 32) as i32))
        .collect()
}

/// The 27 values `ids` writes for each work-item, from the range alone.
fn ids_reference(offset: &[usize], global: &[usize], local: &[usize]) -> Vec<i32> {
    let dims = global.len();
    let at = |v: &[usize], d: usize, none: usize| if d < dims { v[d] } else { none };
    let (g, l, o) =
        ([0, 1, 2].map(|d| at(global, d, 1)), [0, 1, 2].map(|d| at(local, d, 1)), [0, 1, 2].map(|d| at(offset, d, 0)));
    let mut out = vec![0; g[0] * g[1] * g[2] * 27];
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                let id = [x, y, z];
                let lin = (z * g[1] + y) * g[0] + x;
                let f = &mut out[lin * 27..lin * 27 + 27];
                f[0] = dims as i32;
                let mut size = [0; 3];
                let mut lid = [0; 3];
                for d in 0..3 {
                    let group = id[d] / l[d];
                    let groups = g[d].div_ceil(l[d]);
                    size[d] = if group == groups - 1 && g[d] % l[d] != 0 { g[d] % l[d] } else { l[d] };
                    lid[d] = id[d] % l[d];
                    let v = [id[d] + o[d], lid[d], group, o[d], size[d], groups, g[d], l[d]];
                    for (k, v) in v.into_iter().enumerate() {
                        f[1 + d * 8 + k] = v as i32;
                    }
                }
                f[25] = lin as i32;
                f[26] = ((lid[2] * size[1] + lid[1]) * size[0] + lid[0]) as i32;
            }
        }
    }
    out
}

fn ids_case(
    s: &Session,
    p: cl_program,
    offset: &[usize],
    global: &[usize],
    local: &[usize],
) -> Result<Verdict, String> {
    let n: usize = global.iter().product();
    let out = launch(s, p, "ids", &[A::Buf(vec![0; n * 27 * 4])], (Some(offset), global, Some(local)))?;
    Ok(same("work-item values", &ints(&out[0]), &ids_reference(offset, global, local)))
}

/// The largest group `kernel` can run with.
fn kernel_group_limit(s: &Session, p: cl_program, kernel: &str) -> Result<usize, String> {
    let k = s.kernel(p, kernel)?;
    let mut v = 0usize;
    let code = cl!(clGetKernelWorkGroupInfo(
        k,
        s.device,
        CL_KERNEL_WORK_GROUP_SIZE,
        8,
        (&mut v as *mut usize).cast(),
        std::ptr::null_mut()
    ));
    cl!(clReleaseKernel(k));
    check(code, "clGetKernelWorkGroupInfo").map(|_| v)
}

fn reduce_case(s: &Session, p: cl_program, group: Option<usize>) -> Result<Verdict, String> {
    let group = match group {
        Some(g) => g,
        None => kernel_group_limit(s, p, "reduce")?,
    };
    let groups = 6;
    let input: Vec<i32> = values(group * groups, group as u32).iter().map(|v| v % 1000).collect();
    let out = launch(
        s,
        p,
        "reduce",
        &[A::Buf(le(&input)), A::Buf(vec![0; groups * 4]), A::Local(group * 4)],
        (None, &[group * groups], Some(&[group])),
    )?;
    let want: Vec<i32> = input.chunks(group).map(|c| c.iter().sum()).collect();
    Ok(same("group sums", &ints(&out[1]), &want))
}

fn scan_case(s: &Session, p: cl_program, group: usize, rounds: usize) -> Result<Verdict, String> {
    let groups = 5;
    let input: Vec<i32> = values(group * groups, 7).iter().map(|v| v % 100).collect();
    let args =
        [A::Buf(le(&input)), A::Buf(vec![0; input.len() * 4]), A::Local(group * 4), A::Val(le(&[rounds as i32]))];
    let out = launch(s, p, "scan", &args, (None, &[group * groups], Some(&[group])))?;
    let mut want = input.clone();
    for chunk in want.chunks_mut(group) {
        for _ in 0..rounds {
            for i in 1..chunk.len() {
                chunk[i] = chunk[i].wrapping_add(chunk[i - 1]);
            }
        }
    }
    Ok(same("prefix sums", &ints(&out[1]), &want))
}

fn reverse_case(s: &Session, p: cl_program, group: usize) -> Result<Verdict, String> {
    let input = values(group * 4, 3);
    let args = [A::Buf(le(&input)), A::Buf(vec![0; input.len() * 4]), A::Local(group * 4)];
    let out = launch(s, p, "reverse_via_call", &args, (None, &[group * 4], Some(&[group])))?;
    let want: Vec<i32> = input.chunks(group).flat_map(|c| c.iter().rev().copied()).collect();
    Ok(same("reversed groups", &ints(&out[1]), &want))
}

fn isolation_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let (groups, spin) = (256, 2000);
    let out = launch(
        s,
        p,
        "isolation",
        &[A::Buf(vec![0; groups * 64 * 4]), A::Val(le(&[spin]))],
        (None, &[groups * 64], Some(&[64])),
    )?;
    let want: Vec<i32> = (0..groups * 64)
        .map(|i| 1_000_000 + (0..spin).filter(|j| (j ^ (i % 64) as i32) & 1 == 1).count() as i32)
        .collect();
    Ok(same("per-item 1000000 (local memory intact) + spin count", &ints(&out[0]), &want))
}

fn big_local_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let (groups, group) = (32usize, 64usize);
    let out =
        launch(s, p, "big_local", &[A::Buf(vec![0; groups * group * 8])], (None, &[groups * group], Some(&[group])))?;
    let got: Vec<i64> = out[0].chunks_exact(8).map(|c| i64::from_ne_bytes(c.try_into().unwrap_or_default())).collect();
    let want: Vec<i64> = (0..groups * group)
        .map(|i| {
            let (g, lid) = (i / group, i % group);
            (group - 1 - lid..8192).step_by(group).map(|j| (g * 100000 + j) as i64).sum()
        })
        .collect();
    Ok(same("strided sums of a 64 KiB local array", &got, &want))
}

/// `__local` argument sizes the application chooses: the arena's size works, one byte
/// more is refused, and sums that overflow are refused rather than wrapped.
fn local_limits_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let arena = s.device_info(CL_DEVICE_LOCAL_MEM_SIZE);
    let group = 16;
    let k = s.kernel(p, "two_locals")?;
    let out = s.buffer_of(&vec![0; group * 4])?;
    let result = (|| {
        check(cl!(clSetKernelArg(k, 0, 8, (&out as *const cl_mem).cast())), "clSetKernelArg(0)")?;
        // The arguments are rounded up to 128 bytes each, so this pair fills the arena.
        let cases = [
            (arena - 128, 128, CL_SUCCESS),
            (arena - 128, 129, CL_OUT_OF_RESOURCES),
            (usize::MAX, 64, CL_OUT_OF_RESOURCES),
            (1 << 63, 1 << 63, CL_OUT_OF_RESOURCES),
            (64, 64, CL_SUCCESS),
        ];
        for (a, b, want) in cases {
            check(cl!(clSetKernelArg(k, 1, a, null())), "clSetKernelArg(1)")?;
            check(cl!(clSetKernelArg(k, 2, b, null())), "clSetKernelArg(2)")?;
            let got = match s.run_nd(k, None, &[group], Some(&[group])) {
                Ok(()) => CL_SUCCESS,
                Err(e) => e,
            };
            if got != want {
                return Ok(Verdict::Failed(format!("__local arguments of {a} and {b} bytes: {got}, expected {want}")));
            }
        }
        let want: Vec<i32> = (0..group as i32).map(|l| l + 2 * (group as i32 - 1 - l)).collect();
        Ok(same("the launch after the refused ones", &ints(&s.read(out, group * 4)?), &want))
    })();
    cl!(clReleaseMemObject(out));
    cl!(clReleaseKernel(k));
    result
}

fn transpose_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let groups = [3, 2, 2];
    let n = 64 * groups.iter().product::<usize>();
    let input = values(n, 11);
    let global = groups.map(|g| g * 4);
    let out =
        launch(s, p, "transpose3d", &[A::Buf(le(&input)), A::Buf(vec![0; n * 4])], (None, &global, Some(&[4, 4, 4])))?;
    let mut want = vec![0; n];
    for g in 0..n / 64 {
        for z in 0..4 {
            for y in 0..4 {
                for x in 0..4 {
                    want[g * 64 + (z * 4 + y) * 4 + x] = input[g * 64 + (x * 4 + y) * 4 + z];
                }
            }
        }
    }
    Ok(same("transposed cubes", &ints(&out[1]), &want))
}

fn matmul_case(s: &Session, p: cl_program, n: usize, m: usize, k: usize) -> Result<Verdict, String> {
    let a: Vec<i32> = values(n * k, 5).iter().map(|v| v % 50).collect();
    let b: Vec<i32> = values(k * m, 6).iter().map(|v| v % 50).collect();
    let dims = [n, m, k].map(|v| A::Val(le(&[v as i32])));
    let mut args = vec![A::Buf(le(&a)), A::Buf(le(&b)), A::Buf(vec![0; n * m * 4])];
    args.extend(dims);
    let out = launch(s, p, "matmul", &args, (None, &[m.next_multiple_of(8), n.next_multiple_of(8)], Some(&[8, 8])))?;
    let want: Vec<i32> = (0..n * m).map(|i| (0..k).map(|j| a[i / m * k + j] * b[j * m + i % m]).sum()).collect();
    Ok(same("product", &ints(&out[2]), &want))
}

fn by_value_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    // record { int a; float b; char c; long d; int4 v; }: 48 bytes, v at 32.
    let mut record = vec![0u8; 48];
    record[0..4].copy_from_slice(&(-7i32).to_ne_bytes());
    record[4..8].copy_from_slice(&2.5f32.to_ne_bytes());
    record[8] = (-3i8) as u8;
    record[16..24].copy_from_slice(&0x1234_5678_9abc_def0i64.to_ne_bytes());
    record[32..48].copy_from_slice(&le(&[1i32, -2, 3, -4]));
    let f: Vec<f32> = (0..8).map(|i| i as f32 * 0.25 - 1.0).collect();
    let args = [
        A::Val(record),
        A::Val(le(&[10i32, 20, 30, 40])),
        A::Val(le(&f)),
        A::Buf(vec![0; 24 * 4]),
        A::Null,
        A::Val(vec![200]),
        A::Val(le(&[-12345i16])),
    ];
    let out = launch(s, p, "by_value", &args, (None, &[1], None))?;
    let mut want =
        vec![-7, 2.5f32.to_bits() as i32, -3, 0x9abc_def0u32 as i32, 0x1234_5678, 1, -2, 3, -4, 10, 20, 30, 40];
    want.extend(f.iter().map(|v| v.to_bits() as i32));
    want.extend([1, 200, -12345]);
    Ok(same("fields", &ints(&out[0]), &want))
}

fn atomics_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let (group, groups) = (64, 40);
    let input: Vec<i32> = values(group * groups, 9).iter().map(|v| v & 0xfffff).collect();
    let acc = [0, i32::MIN, i32::MAX, 0, 0, 0];
    let args = [A::Buf(le(&input)), A::Buf(le(&acc)), A::Buf(vec![0; 64]), A::Buf(vec![0; groups * 4])];
    let out = launch(s, p, "atomics", &args, (None, &[group * groups], Some(&[group])))?;
    let n = input.len() as i32;
    let want_acc = [
        n,
        *input.iter().max().unwrap_or(&0),
        *input.iter().min().unwrap_or(&0),
        input.iter().fold(0, |a, v| a ^ v),
        -input.iter().map(|v| v & 7).sum::<i32>(),
        2 * n,
    ];
    let mut hist = vec![0; 16];
    for v in &input {
        hist[(v & 15) as usize] += 1;
    }
    Ok(match same("add, max, min, xor, sub, cmpxchg", &ints(&out[1]), &want_acc) {
        Verdict::Passed => match same("histogram (atomic_inc)", &ints(&out[2]), &hist) {
            Verdict::Passed => same("local atomic_inc counts", &ints(&out[3]), &vec![group as i32; groups]),
            v => v,
        },
        v => v,
    })
}

fn int_ops_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let n = 64;
    let (a, b) = (values(n, 21), values(n, 22));
    let out = launch(s, p, "int_ops", &[A::Buf(le(&a)), A::Buf(le(&b)), A::Buf(vec![0; n * 64])], (None, &[n], None))?;
    let want: Vec<i32> = a
        .iter()
        .zip(&b)
        .flat_map(|(&x, &y)| {
            let (wx, wy) = (x as i64, y as i64);
            [
                x.leading_zeros() as i32,
                x.count_ones() as i32,
                x.rotate_left(y as u32 & 31),
                ((wx * wy) >> 32) as i32,
                x.saturating_add(y),
                x.saturating_sub(y),
                (wx - wy).unsigned_abs() as u32 as i32,
                ((wx + wy) >> 1) as i32,
                ((wx + wy + 1) >> 1) as i32,
                x.clamp(-1000, 1000),
                ((x as u32 as u64 * y as u32 as u64) >> 32) as i32,
                x.max(y),
                x.min(y),
                x.trailing_zeros() as i32,
                x.unsigned_abs() as i32,
                x.clamp(0, 255) + ((y.clamp(-32768, 32767) as i16 as i32) << 8),
            ]
        })
        .collect();
    Ok(same("clz, popcount, rotate, mul_hi, add_sat, sub_sat, abs_diff, hadd, rhadd, clamp, mul_hi(uint), max, min, ctz, abs, convert_*_sat", &ints(&out[2]), &want))
}

fn float_inputs(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let special = [0.5, -0.5, 1.5, 2.5, -2.5, 3e9, -3e9, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -0.0, 7.0];
    let v = values(3 * n, 31);
    let f = |i: usize| (v[i] % 100_000) as f32 / 97.0;
    let a = (0..n).map(|i| special.get(i).copied().unwrap_or(f(i))).collect();
    (a, (0..n).map(|i| f(n + i)).collect(), (0..n).map(|i| f(2 * n + i)).collect())
}

/// A float's bits, with every NaN as one (their payloads and signs are not specified).
fn bits(f: f32) -> u32 {
    if f.is_nan() {
        0x7fc0_0000
    } else {
        f.to_bits()
    }
}

fn float_exact_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let n = 48;
    let (a, b, c) = (float_inputs(n).0, float_inputs(n).1, float_inputs(n).2);
    let args = [A::Buf(le(&a)), A::Buf(le(&b)), A::Buf(le(&c)), A::Buf(vec![0; n * 40]), A::Buf(vec![0; n * 12])];
    let out = launch(s, p, "float_exact", &args, (None, &[n], None))?;
    let want: Vec<u32> = (0..n)
        .flat_map(|i| {
            let (x, y, z) = (a[i], b[i], c[i]);
            [
                x.mul_add(y, z),
                x.abs(),
                x.floor(),
                x.ceil(),
                x.trunc(),
                x.round(),
                x.round_ties_even(),
                x.copysign(y),
                x * y,
                x + y,
            ]
            .map(bits)
        })
        .collect();
    let got: Vec<u32> = floats(&out[3]).into_iter().map(bits).collect();
    let want_ints: Vec<i32> =
        a.iter().flat_map(|&x| [x as i32, x.round_ties_even() as i32, x.clamp(-1e9, 1e9).floor() as i32]).collect();
    Ok(match same("fma, fabs, floor, ceil, trunc, round, rint, copysign, *, + (bits)", &got, &want) {
        Verdict::Passed => same("convert_int_sat, _sat_rte, _rtn", &ints(&out[4]), &want_ints),
        v => v,
    })
}

/// Distance in units in the last place between two floats of the same sign.
fn ulps(a: f32, b: f64) -> f64 {
    let b32 = b as f32;
    let ulp = (f32::from_bits(b32.abs().to_bits() + 1) - b32.abs()) as f64;
    (a as f64 - b).abs() / ulp
}

fn float_approx_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let n = 64;
    let a: Vec<f32> = values(n, 41).iter().map(|&v| (v % 10_000) as f32 / 1000.0).collect();
    let out = launch(s, p, "float_approx", &[A::Buf(le(&a)), A::Buf(vec![0; n * 32])], (None, &[n], None))?;
    let got = floats(&out[1]);
    // The OpenCL C full-profile limits, in ulps.
    let limits = [
        ("sin", 4.0),
        ("cos", 4.0),
        ("exp", 3.0),
        ("log", 3.0),
        ("sqrt", 3.0),
        ("pow", 16.0),
        ("atan", 5.0),
        ("/", 2.5),
    ];
    for (i, &x) in a.iter().enumerate() {
        let x = x as f64;
        let want = [
            x.sin(),
            x.cos(),
            (x as f32 * 0.1) as f64,
            (x.abs() as f32 + 1.0) as f64,
            x.abs(),
            (x.abs() as f32 + 0.5) as f64,
            x.atan(),
            x,
        ];
        let want = [
            want[0],
            want[1],
            want[2].exp(),
            want[3].ln(),
            want[4].sqrt(),
            want[5].powf(1.5),
            want[6],
            x / (x.abs() as f32 + 3.0) as f64,
        ];
        for (j, (&(name, limit), w)) in limits.iter().zip(want).enumerate() {
            let g = got[i * 8 + j];
            let e = ulps(g, w);
            // Near zero an ulp of the result is meaningless for sin/cos; allow an absolute error there.
            if e > limit && (g as f64 - w).abs() > 1e-6 {
                return Ok(Verdict::Failed(format!("{name}({x}) = {g}, expected {w} ({e:.1} ulp > {limit})")));
            }
        }
    }
    Ok(Verdict::Passed)
}

fn vectors_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let input = [3, -9, 14, 2, 5, -9, 7, 100];
    let out = launch(s, p, "vectors", &[A::Buf(le(&input)), A::Buf(vec![0; 33 * 4])], (None, &[1], None))?;
    let (a, b) = (&input[..4], &input[4..]);
    let ab: Vec<i32> = input.to_vec();
    let mut want: Vec<i32> = [7, 0, 6, 1, 5, 2, 4, 3].iter().map(|&i| ab[i]).collect();
    want.extend([a[3], a[2], a[1], a[0], a[2], a[3], b[1], b[3]]);
    want.extend((0..4).map(|i| if a[i] > b[i] { b[i] } else { a[i] }));
    want.extend(input[3..6].iter().map(|v| v * 2));
    want.extend(a.iter().map(|&v| (v as f32 * 0.5) as i32));
    want.extend(b);
    want.push((0..4).map(|i| (a[i] * b[i]) as f32).sum::<f32>() as i32);
    want.push(16 * a[0] + a[0] + 10 * a[0]);
    Ok(same("shuffle2, swizzles, select, vload3/vstore3, conversions, dot, int16", &ints(&out[1]), &want))
}

fn control_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let n = 200;
    let input = values(n, 51);
    let out = launch(s, p, "control", &[A::Buf(le(&input)), A::Buf(vec![0; n * 4])], (None, &[n], None))?;
    let primes = [2, 3, 5, 7, 11];
    let want: Vec<i32> = input
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let mut r = match x & 3 {
                0 => 10,
                1 => 25,
                2 => 5,
                _ => -1,
            };
            r += (0..9).filter(|&j| j != (x & 7)).sum::<i32>();
            let mut c = x as u32 & 0xffff;
            while c > 1 && r < 100_000 {
                c = if c & 1 == 1 { c.wrapping_mul(3).wrapping_add(1) } else { c / 2 };
                r += 1;
            }
            r + primes[i % 5]
        })
        .collect();
    Ok(same("switch/loops/constant table", &ints(&out[1]), &want))
}

fn task_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let k = s.kernel(p, "task")?;
    let m = s.buffer_of(&[0; 4])?;
    let r = crate::session::arg(k, 0, &m).and_then(|_| s.run_task(k)).and_then(|_| s.read(m, 4));
    cl!(clReleaseMemObject(m));
    cl!(clReleaseKernel(k));
    Ok(same("global size + 10 x local size + 100 x dims", &ints(&r?), &[111]))
}

/// OpenCL 2.1 and later: a global size of 0 in any dimension is a command that
/// completes and runs nothing, with or without a local size.
fn zero_size_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let k = s.kernel(p, "task")?;
    let m = s.buffer_of(&[7; 4])?;
    let result = (|| {
        crate::session::arg(k, 0, &m)?;
        let ranges: [(&[usize], Option<&[usize]>); 5] =
            [(&[0], None), (&[0], Some(&[4])), (&[8, 0], None), (&[4, 4, 0], Some(&[2, 2, 2])), (&[0, 0, 0], None)];
        for (global, local) in ranges {
            if let Err(e) = s.run_nd(k, None, global, local) {
                return Ok(Verdict::Failed(format!("global {global:?}, local {local:?}: {e}")));
            }
        }
        Ok(same("the buffer (no work-item ran)", &s.read(m, 4)?, &[7; 4]))
    })();
    cl!(clReleaseMemObject(m));
    cl!(clReleaseKernel(k));
    result
}

/// A launch whose work-items number more than a size_t holds (each dimension fits,
/// their product does not) is refused with CL_INVALID_GLOBAL_WORK_SIZE: every
/// work-item's linear id must be representable. Found by the `api` fuzz target.
fn overflowing_size_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let k = s.kernel(p, "task")?;
    let m = s.buffer_of(&[7; 4])?;
    let result = (|| {
        crate::session::arg(k, 0, &m)?;
        let ranges: [(&[usize], Option<&[usize]>); 3] =
            [(&[1 << 40, 1 << 40], None), (&[1 << 32, 1 << 32, 2], Some(&[1, 1, 1])), (&[usize::MAX, 2], None)];
        for (global, local) in ranges {
            match s.run_nd(k, None, global, local) {
                Err(CL_INVALID_GLOBAL_WORK_SIZE) => {}
                other => {
                    return Ok(Verdict::Failed(format!(
                        "global {global:?}: {other:?}, expected CL_INVALID_GLOBAL_WORK_SIZE"
                    )))
                }
            }
        }
        Ok(same("the buffer (no work-item ran)", &s.read(m, 4)?, &[7; 4]))
    })();
    cl!(clReleaseMemObject(m));
    cl!(clReleaseKernel(k));
    result
}

/// A buffer set as a kernel argument is destroyed at the application's last release
/// (its destructor callback runs), a later launch reports the missing argument, and a
/// buffer released right after an enqueue still serves that launch.
fn released_argument_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static DESTROYED: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn destroyed(_: cl_mem, _: *mut std::ffi::c_void) {
        DESTROYED.fetch_add(1, Ordering::SeqCst);
    }
    let k = s.kernel(p, "task")?;
    let result = (|| {
        let m = s.buffer_of(&[0; 4])?;
        check(cl!(clSetMemObjectDestructorCallback(m, Some(destroyed), null_mut())), "destructor callback")?;
        crate::session::arg(k, 0, &m)?;
        let before = DESTROYED.load(Ordering::SeqCst);
        cl!(clReleaseMemObject(m));
        if DESTROYED.load(Ordering::SeqCst) != before + 1 {
            return Ok(Verdict::Failed("the buffer outlived its last release (held by the kernel argument)".into()));
        }
        match s.run_nd(k, None, &[1], None) {
            Err(CL_INVALID_KERNEL_ARGS) => {}
            other => {
                return Ok(Verdict::Failed(format!(
                    "launch with a released buffer: {other:?}, expected CL_INVALID_KERNEL_ARGS"
                )))
            }
        }
        // Released after the enqueue, before the launch ran: the launch keeps it.
        let out = s.buffer_of(&[0; 4])?;
        crate::session::arg(k, 0, &out)?;
        let host = s.buffer_of(&[0; 4])?;
        let one = [1usize];
        let mut ev: cl_event = null_mut();
        check(
            cl!(clEnqueueNDRangeKernel(s.queue(), k, 1, null(), one.as_ptr(), null(), 0, null(), &mut ev)),
            "clEnqueueNDRangeKernel",
        )?;
        check(cl!(clEnqueueCopyBuffer(s.queue(), out, host, 0, 0, 4, 1, &ev, null_mut())), "clEnqueueCopyBuffer")?;
        cl!(clReleaseMemObject(out));
        let got = s.read(host, 4);
        cl!(clReleaseMemObject(host));
        cl!(clReleaseEvent(ev));
        Ok(same("the launch's result, its buffer released after the enqueue", &ints(&got?), &[111]))
    })();
    cl!(clReleaseKernel(k));
    result
}

/// Kernels that fault (a wild write, a trap, a stack overflow, in a plain kernel and in
/// one with barriers, and async copies from an unmapped address, a large one copy
/// threads may run and a small one the copy service runs itself): the command's event
/// reports an error, and the process, the queue and the same kernels go on working.
fn faults_case(s: &Session) -> Result<Verdict, String> {
    const SRC: &str = "kernel void wild(global int *x, int bad) {\n\
        size_t g = get_global_id(0); if ((int)g == bad) *(volatile global int *)(ulong)16 = 1; x[g] = (int)g; }\n\
        kernel void trap(global int *x, int bad) {\n\
        size_t g = get_global_id(0); if ((int)g == bad) __builtin_trap(); x[g] = (int)g; }\n\
        __attribute__((noinline)) int overflow(global int *x) {\n\
        volatile int big[1 << 22]; for (int i = 0; i < 8; i++) big[i * 4099] = x[i]; return big[x[0] & 7]; }\n\
        kernel void deep(global int *x, int bad) {\n\
        size_t g = get_global_id(0); x[g] = (int)g == bad ? overflow(x) : (int)g; }\n\
        kernel void wild_barrier(global int *x, local int *l, int bad) {\n\
        size_t g = get_global_id(0), i = get_local_id(0); l[i] = (int)g; barrier(CLK_LOCAL_MEM_FENCE);\n\
        if ((int)g == bad) *(volatile global int *)(ulong)16 = 1; x[g] = l[i]; }\n\
        kernel void wild_copy(global int *x, local int *l, int bad) {\n\
        int wild = bad >= 0 && (int)get_group_id(0) == bad / 64;\n\
        global const int *src = wild ? (global const int *)(ulong)65536 : x;\n\
        event_t e = async_work_group_copy(l, src, wild ? 4096 : 64, 0); wait_group_events(1, &e);\n\
        x[get_global_id(0)] = (int)get_global_id(0); }\n\
        kernel void wild_small_copy(global int *x, local int *l, int bad) {\n\
        int wild = bad >= 0 && (int)get_group_id(0) == bad / 64;\n\
        global const int *src = wild ? (global const int *)(ulong)65536 : x;\n\
        event_t e = async_work_group_copy(l, src, 16, 0); wait_group_events(1, &e);\n\
        x[get_global_id(0)] = (int)get_global_id(0); }\n";
    let p = s.build(SRC)?;
    let n = 256usize;
    let run = |name: &str, bad: i32| -> Result<(cl_int, Vec<i32>), String> {
        let k = s.kernel(p, name)?;
        let m = s.buffer_of(&vec![0u8; n * 4])?;
        let result = (|| {
            crate::session::arg(k, 0, &m)?;
            if name == "wild_barrier" || name.ends_with("_copy") {
                check(cl!(clSetKernelArg(k, 1, 4096 * 4, null())), "clSetKernelArg")?;
                crate::session::arg(k, 2, &bad)?;
            } else {
                crate::session::arg(k, 1, &bad)?;
            }
            let status = s.run_status(k, &[n], &[64])?;
            Ok((status, ints(&s.read(m, n * 4)?)))
        })();
        cl!(clReleaseMemObject(m));
        cl!(clReleaseKernel(k));
        result
    };
    let all: Vec<i32> = (0..n as i32).collect();
    let result = (|| {
        for name in ["wild", "trap", "deep", "wild_barrier", "wild_copy", "wild_small_copy"] {
            let (status, _) = run(name, 100)?;
            if status >= 0 {
                return Ok(Verdict::Failed(format!("{name}: the faulting launch reported status {status}")));
            }
            let (status, got) = run(name, -1)?;
            if status != CL_COMPLETE || got != all {
                return Ok(Verdict::Failed(format!("{name}: the next launch, which does not fault: status {status}")));
            }
        }
        Ok(Verdict::Passed)
    })();
    cl!(clReleaseProgram(p));
    result
}

/// `FERROCL_KERNEL_TIMEOUT`: a kernel that never ends is stopped and its command fails;
/// the process and the kernel go on. The variable is read when the driver starts, so the
/// case runs itself again in a child process with it set.
fn watchdog_case(s: &Session) -> Result<Verdict, String> {
    const NAME: &str = "kernels/watchdog/endless_kernel/stopped";
    if std::env::var_os("FERROCL_KERNEL_TIMEOUT").is_none() {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let out = std::process::Command::new(exe)
            .args(["suite", "--filter", NAME])
            .env("FERROCL_KERNEL_TIMEOUT", "0.5")
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        return Ok(match out.status.success() && text.contains(&format!("passed {NAME}")) {
            true => Verdict::Passed,
            false => Verdict::Failed(format!("in a child process with FERROCL_KERNEL_TIMEOUT=0.5: {text}")),
        });
    }
    // `copies` spends most of its time in the driver's own code (the async-copy services,
    // allocating as its copy log grows): the watchdog's interrupt must wait for that code
    // to end, or a lock or the allocator would be left held and the next launch hang.
    let p = s.build(
        "kernel void endless(global int *x, int stop) {\n\
         size_t g = get_global_id(0); int i = 0; while (x[0] != stop) i++; x[g + 1] = i + (int)g; }\n\
         kernel void copies(global int *x, int stop) {\n\
         local int l[2048]; size_t i = get_local_id(0); int n = 0;\n\
         do { event_t e = async_work_group_copy(l, x + 1, (size_t)(1 + n % 2) * 1024, 0); wait_group_events(1, &e); n++;\n\
         barrier(CLK_LOCAL_MEM_FENCE); } while (x[0] != stop);\n\
         barrier(CLK_GLOBAL_MEM_FENCE); x[get_global_id(0) + 1] = l[i] + n; }\n",
    )?;
    let m = s.buffer_of(&[0u8; 2049 * 4])?;
    let result = (|| {
        for (name, rounds) in [("endless", 1), ("copies", 6), ("endless", 1)] {
            let k = s.kernel(p, name)?;
            crate::session::arg(k, 0, &m)?;
            let runs = std::iter::repeat((1i32, false)).take(rounds).chain([(0, true)]);
            for (stop, want_ok) in runs {
                crate::session::arg(k, 1, &stop)?;
                let t = std::time::Instant::now();
                let status = s.run_status(k, &[64], &[16])?;
                if (status == CL_COMPLETE) != want_ok {
                    cl!(clReleaseKernel(k));
                    return Ok(Verdict::Failed(format!(
                        "{name}, stop={stop}: status {status} after {:.1} s",
                        t.elapsed().as_secs_f64()
                    )));
                }
            }
            cl!(clReleaseKernel(k));
        }
        Ok(Verdict::Passed)
    })();
    cl!(clReleaseMemObject(m));
    cl!(clReleaseProgram(p));
    result
}

fn globals_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let first = launch(s, p, "store", &[A::Buf(vec![0; 32])], (None, &[8], None))?;
    let second = launch(s, p, "load", &[A::Buf(vec![0; 32])], (None, &[8], None))?;
    Ok(match same("initialised program-scope variable", &ints(&first[0]), &[100; 8]) {
        Verdict::Passed => {
            same("values kept between launches", &ints(&second[0]), &(0..8).map(|i| i * i + 100).collect::<Vec<_>>())
        }
        v => v,
    })
}

fn fp64_case(s: &Session, p: cl_program) -> Result<Verdict, String> {
    let n = 32;
    let v = values(2 * n, 61);
    let a: Vec<f64> = v[..n].iter().map(|&x| x as f64 / 7.0).collect();
    let b: Vec<f64> = v[n..].iter().map(|&x| x as f64 / 3.0 + 0.5).collect();
    let out = launch(s, p, "fp64", &[A::Buf(le(&a)), A::Buf(le(&b)), A::Buf(vec![0; n * 40])], (None, &[n], None))?;
    let got: Vec<u64> = out[2].chunks_exact(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap_or_default())).collect();
    let want: Vec<u64> = a
        .iter()
        .zip(&b)
        .flat_map(|(&x, &y)| [x * y, x / y, x.abs().sqrt(), x.mul_add(y, 1.0), x - y].map(f64::to_bits))
        .collect();
    Ok(same("*, /, sqrt, fma, - (bits, correctly rounded)", &got, &want))
}

fn compile_error_case(s: &Session) -> Verdict {
    match s.build("kernel void broken(global int *o) { o[0] = undeclared_name; }") {
        Ok(_) => Verdict::Failed("a kernel using an undeclared name built".into()),
        Err(e) if e.contains(&CL_BUILD_PROGRAM_FAILURE.to_string()) && e.contains("undeclared_name") => Verdict::Passed,
        Err(e) => Verdict::Failed(format!("expected CL_BUILD_PROGRAM_FAILURE and a log naming the error, got: {e}")),
    }
}

/// A case's check, given the program its kernels are in.
type Check = Box<dyn Fn(&Session, cl_program) -> Result<Verdict, String>>;

/// A range for `ids`: name, global offset, global size, local size.
type Range = (&'static str, &'static [usize], &'static [usize], &'static [usize]);

fn nothing<'a>() -> Needs<'a> {
    Box::new(|_: &Session| None)
}

pub fn cases(programs: &Programs) -> Vec<Case<'_>> {
    let mut out: Vec<Case> = Vec::new();
    let mut add = |name: String, needs: Needs<'static>, key: &'static str, src: &'static str, f: Check| {
        out.push(Case {
            name: format!("kernels/{name}"),
            run: with_program(programs, key, move || src.to_string(), needs, f),
        });
    };
    let basic = |name: &str, f: Check| (name.to_string(), f);
    let ranges: &[Range] =
        &[("1d", &[5], &[96], &[16]), ("2d", &[3, 7], &[24, 10], &[8, 5]), ("3d", &[1, 2, 3], &[8, 6, 4], &[4, 3, 2])];
    for &(dims, offset, global, local) in ranges {
        add(
            format!("workitem/uniform/{dims}"),
            nothing(),
            "kernels-basic",
            SOURCE,
            Box::new(move |s, p| ids_case(s, p, offset, global, local)),
        );
        let ragged: Vec<usize> = global.iter().map(|g| g + 3).collect();
        add(
            format!("workitem/non_uniform/{dims}"),
            Box::new(|s: &Session| {
                (s.device_info(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT) == 0)
                    .then(|| "the device lacks non-uniform work-groups".to_string())
            }),
            "kernels-basic",
            SOURCE,
            Box::new(move |s, p| ids_case(s, p, offset, &ragged, local)),
        );
    }
    let mut plain = vec![
        basic("barrier/reduce/group1", Box::new(|s, p| reduce_case(s, p, Some(1)))),
        basic("barrier/reduce/group7", Box::new(|s, p| reduce_case(s, p, Some(7)))),
        basic("barrier/reduce/group64", Box::new(|s, p| reduce_case(s, p, Some(64)))),
        basic("barrier/reduce/group100", Box::new(|s, p| reduce_case(s, p, Some(100)))),
        basic("barrier/reduce/largest_group", Box::new(|s, p| reduce_case(s, p, None))),
        basic("barrier/scan_nested_loops/group64_rounds1", Box::new(|s, p| scan_case(s, p, 64, 1))),
        basic("barrier/scan_nested_loops/group33_rounds3", Box::new(|s, p| scan_case(s, p, 33, 3))),
        basic("barrier/in_called_function/group16", Box::new(|s, p| reverse_case(s, p, 16))),
        basic("barrier/in_called_function/group256", Box::new(|s, p| reverse_case(s, p, 256))),
        basic("local/isolation/256_groups", Box::new(isolation_case)),
        basic("local/transpose/3d_groups", Box::new(transpose_case)),
        basic("local/variables_over_device_figure/64KiB", Box::new(big_local_case)),
        basic("local/argument_limits/arena_and_overflow", Box::new(local_limits_case)),
        basic("local/matmul/40x48x36", Box::new(|s, p| matmul_case(s, p, 40, 48, 36))),
        basic("local/matmul/7x5x3", Box::new(|s, p| matmul_case(s, p, 7, 5, 3))),
        basic("args/by_value/struct_vectors_scalars_null", Box::new(by_value_case)),
        basic("atomics/global_and_local/all", Box::new(atomics_case)),
        basic("builtins/integer/all", Box::new(int_ops_case)),
        basic("builtins/float_exact/all", Box::new(float_exact_case)),
        basic("builtins/float_ulp/all", Box::new(float_approx_case)),
        basic("builtins/vectors/all", Box::new(vectors_case)),
        basic("control/flow/switch_loops", Box::new(control_case)),
        basic("enqueue/task/one_item", Box::new(task_case)),
        basic("enqueue/zero_size/runs_nothing", Box::new(zero_size_case)),
        basic("enqueue/global_size/overflowing_product_refused", Box::new(overflowing_size_case)),
        basic("args/released_buffer/not_kept_alive", Box::new(released_argument_case)),
    ];
    for (name, f) in plain.drain(..) {
        add(name, nothing(), "kernels-basic", SOURCE, f);
    }
    add(
        "program_scope/globals/kept_between_launches".into(),
        Box::new(|s: &Session| {
            (s.device_info(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE) == 0)
                .then(|| "the device lacks program-scope global variables".to_string())
        }),
        "kernels-globals",
        GLOBALS_SOURCE,
        Box::new(globals_case),
    );
    add(
        "builtins/fp64/correctly_rounded".into(),
        lacking(Some("cl_khr_fp64")),
        "kernels-fp64",
        FP64_SOURCE,
        Box::new(fp64_case),
    );
    out.push(Case { name: "kernels/build/compile_error/log".into(), run: Box::new(compile_error_case) });
    out.push(Case {
        name: "kernels/watchdog/endless_kernel/stopped".into(),
        run: Box::new(|s: &Session| watchdog_case(s).unwrap_or_else(Verdict::Failed)),
    });
    out.push(Case {
        name: "kernels/faults/wild_write_trap_stack_overflow_copy/survived".into(),
        run: Box::new(|s: &Session| faults_case(s).unwrap_or_else(Verdict::Failed)),
    });
    out
}
