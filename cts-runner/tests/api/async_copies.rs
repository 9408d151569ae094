//! Work-group async copies (1D, strided, 2D/3D from cl_khr_extended_async_copies, the
//! cl_khr_async_work_group_copy_fence fence, prefetch) through the loader, checked
//! against host references. Semantics only: whether copies overlap compute is the
//! benchmark's business.

use crate::common::*;

const SOURCE: &str = r#"
kernel void roundtrip(global const float4 *in, global float4 *out, local float4 *tile) {
    size_t n = get_local_size(0), g = get_group_id(0);
    event_t e = async_work_group_copy(tile, in + g * n, n, 0);
    wait_group_events(1, &e);
    size_t l = get_local_id(0);
    float4 v = tile[n - 1 - l] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy(out + g * n, tile, n, 0);
    wait_group_events(1, &e);
}

kernel void strided(global const int *in, global int *out, local int *tile, int stride) {
    size_t n = get_local_size(0), g = get_group_id(0);
    event_t e = async_work_group_strided_copy(tile, in + g * n * stride, n, stride, 0);
    async_work_group_copy_fence(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_strided_copy(out + g * n * stride, tile, n, stride, e);
    wait_group_events(1, &e);
}

kernel void planes(global const uchar *in, global uchar *out, local uchar *tile) {
    /* A 4x3 block of 5-byte elements out of rows 9 elements apart, through a tight
       local copy, back into rows 7 apart; then 2 planes of that. */
    event_t e = async_work_group_copy_2D2D(tile, 0, in, 2, 5, 4, 3, 9, 4, 0);
    wait_group_events(1, &e);
    async_work_group_copy_fence(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy_2D2D(out, 1, tile, 0, 5, 4, 3, 4, 7, 0);
    e = async_work_group_copy_3D3D(out + 200, 0, tile, 0, 5, 4, 3, 1, 4, 12, 4, 12, e);
    prefetch(in, 64);
    wait_group_events(1, &e);
}
"#;

/// Runs `name` from `source` (float4 `in`, float4 `out`, a `__local` float4 tile of the
/// group's size) over `groups` groups of 64 on the inputs 0, 1, 2..., and checks every
/// output against `want(input, group, item, component)`.
/// Runs kernel `name` of `source` over `groups` groups of 64 and checks it against
/// `want`; returns whether it ran as fibers.
fn run_tile_kernel(source: &str, name: &str, groups: usize, want: impl Fn(&[f32], usize, usize, usize) -> f32) -> bool {
    let env = Env::new();
    let p = build(&env, source, "-cl-std=CL3.0");
    let k = kernel(p, name);
    let n = 64 * groups;
    let input: Vec<f32> = (0..n * 4).map(|i| i as f32).collect();
    let (bi, bo) = (buffer_of(&env, &input), env.buffer(0, n * 16, null_mut()));
    set_arg(k, 0, &bi);
    set_arg(k, 1, &bo);
    ok!(cl!(clSetKernelArg(k, 2, 64 * 16, null())));
    run(&env, k, &[n], Some(&[64]));
    let out: Vec<f32> = read_as(&env, bo, n * 4);
    for g in 0..groups {
        for l in 0..64 {
            for c in 0..4 {
                assert_eq!(out[(g * 64 + l) * 4 + c], want(&input, g, l, c), "{name}: group {g} item {l}");
            }
        }
    }
    let fibers = runs_as_fibers(p, name);
    for m in [bi, bo] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
    fibers
}

#[test]
fn roundtrip_through_local_memory() {
    run_tile_kernel(SOURCE, "roundtrip", 16, |input, g, l, c| input[(g * 64 + 63 - l) * 4 + c] * 2.0);
}

// A kernel that another kernel calls runs its work-items as fibers, one after another
// up to each barrier or wait: the wait must hold every work-item until the whole copy
// has moved (moved in place, each work-item's part moves as it passes the call), and
// each reads the tile backwards, mostly parts others moved. The barrier in a called
// function is inlined: `reversed` alone would run as regions.
const FIBERS: &str = r#"
float4 after_barrier(local float4 *tile, size_t i) {
    barrier(CLK_LOCAL_MEM_FENCE);
    return tile[i];
}
kernel void reversed(global const float4 *in, global float4 *out, local float4 *tile) {
    size_t n = get_local_size(0), g = get_group_id(0), l = get_local_id(0);
    event_t e = async_work_group_copy(tile, in + g * n, n, 0);
    wait_group_events(1, &e);
    float4 v = tile[n - 1 - l];
    out[g * n + l] = v + after_barrier(tile, l);
}
kernel void calls_reversed(global const float4 *in, global float4 *out, local float4 *tile) {
    reversed(in, out, tile);
}
"#;

#[test]
fn a_kernel_run_as_fibers_waits_for_the_whole_copy() {
    let want =
        |input: &[f32], g: usize, l: usize, c: usize| input[(g * 64 + 63 - l) * 4 + c] + input[(g * 64 + l) * 4 + c];
    assert!(run_tile_kernel(FIBERS, "reversed", 4, want), "a kernel another calls runs as fibers");
    // Without its caller, the called function's barrier is inlined into regions.
    let alone = FIBERS.split("kernel void calls_reversed").next().unwrap();
    assert!(!run_tile_kernel(alone, "reversed", 4, want), "a barrier in a called function runs as regions");
}

#[test]
fn strided_gather_and_scatter() {
    let env = Env::new();
    let p = build(&env, SOURCE, "");
    let k = kernel(p, "strided");
    for stride in [1i32, 3, 4, 5] {
        let n = 32 * 4 * stride as usize;
        let input: Vec<i32> = (0..n as i32).collect();
        let (bi, bo) = (buffer_of(&env, &input), buffer_of(&env, &vec![-1i32; n]));
        set_arg(k, 0, &bi);
        set_arg(k, 1, &bo);
        ok!(cl!(clSetKernelArg(k, 2, 32 * 4, null())));
        set_arg(k, 3, &stride);
        run(&env, k, &[128], Some(&[32]));
        let out: Vec<i32> = read_as(&env, bo, n);
        for (i, &v) in out.iter().enumerate() {
            let want = if i % stride as usize == 0 { i as i32 } else { -1 };
            assert_eq!(v, want, "stride {stride}, element {i}: untouched bytes must stay");
        }
        for m in [bi, bo] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn two_and_three_dimensional_copies() {
    let env = Env::new();
    let devext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(devext.contains("cl_khr_extended_async_copies") && devext.contains("cl_khr_async_work_group_copy_fence"));
    let p = build(&env, SOURCE, "");
    let k = kernel(p, "planes");
    let input: Vec<u8> = (0..=255).collect();
    let (bi, bo) = (buffer_of(&env, &input), buffer_of(&env, &vec![0xEEu8; 512]));
    set_arg(k, 0, &bi);
    set_arg(k, 1, &bo);
    ok!(cl!(clSetKernelArg(k, 2, 256, null())));
    run(&env, k, &[8], Some(&[8]));
    let out: Vec<u8> = read_as(&env, bo, 512);
    let mut want = vec![0xEEu8; 512];
    // tile[line][e] = in[(2 + line * 9 + e) * 5 ..]; out[(1 + line * 7 + e) * 5 ..] = tile.
    for line in 0..3 {
        for e in 0..4 {
            for b in 0..5 {
                let v = input[(2 + line * 9 + e) * 5 + b];
                want[(1 + line * 7 + e) * 5 + b] = v;
                want[200 + (line * 4 + e) * 5 + b] = v;
            }
        }
    }
    assert_eq!(out, want);
    for m in [bi, bo] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const ENGINE: &str = r#"
kernel void joined(global const int *in, global int *out, local int *a, local int *b) {
    size_t n = get_local_size(0), g = get_group_id(0), l = get_local_id(0);
    event_t e = async_work_group_copy(a, in + g * 2 * n, n, 0);
    event_t e2 = async_work_group_copy(b, in + g * 2 * n + n, n, e);
    event_t junk[3];
    wait_group_events(1, junk);
    /* Garbage with the top bit set, as deferred imports' events have: one naming no
       import, one naming local memory far from any (waits for nothing). */
    ((private ulong *)junk)[1] = 0x8000000000000001ul;
    ((private ulong *)junk)[2] = 0xfffffffffffffff0ul;
    wait_group_events(2, junk + 1);
    wait_group_events(1, &e2);
    out[g * 2 * n + l] = a[l] + 1;
    out[g * 2 * n + n + l] = b[l] + 1;
}

kernel void fenced(global int *buf, global int *out, local int *tile, local int *back) {
    size_t n = get_local_size(0), g = get_group_id(0), l = get_local_id(0);
    tile[l] = (int)(l * 3 + g);
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(buf + g * n, tile, n, 0);
    async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE);
    /* Waiting for the import first: without the fence it could read stale memory. */
    event_t both[2] = { async_work_group_copy(back, buf + g * n, n, 0), e };
    wait_group_events(2, both);
    out[g * n + l] = back[l];
}

kernel void unwaited(global int *out, local int *tile) {
    size_t n = get_local_size(0), g = get_group_id(0), l = get_local_id(0);
    tile[l] = (int)(g * 1000 + l);
    barrier(CLK_LOCAL_MEM_FENCE);
    async_work_group_copy(out + g * n, tile, n, 0);
}
"#;

/// Group sizes whose copies span less than a cache line's worth per work-item (64 ints
/// in 256 bytes), a line each (256) and several (1024): the sizes at which the driver
/// once moved copies at issue, at the wait and on background workers.
const GROUPS: [usize; 3] = [64, 256, 1024];

#[test]
fn joined_events_cover_both_copies_and_unknown_events_are_ignored() {
    let env = Env::new();
    let p = build(&env, ENGINE, "-cl-std=CL3.0");
    let k = kernel(p, "joined");
    for group in GROUPS {
        let n = group * 8;
        let input: Vec<i32> = (0..n as i32 * 2).map(|i| i * 7 - 3).collect();
        let (bi, bo) = (buffer_of(&env, &input), env.buffer(0, n * 8, null_mut()));
        set_arg(k, 0, &bi);
        set_arg(k, 1, &bo);
        ok!(cl!(clSetKernelArg(k, 2, group * 4, null())));
        ok!(cl!(clSetKernelArg(k, 3, group * 4, null())));
        run(&env, k, &[n], Some(&[group]));
        let out: Vec<i32> = read_as(&env, bo, n * 2);
        for (i, (&o, &x)) in out.iter().zip(&input).enumerate() {
            assert_eq!(o, x + 1, "group size {group}, element {i}");
        }
        for m in [bi, bo] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn a_fence_orders_an_export_before_an_import_of_the_same_memory() {
    let env = Env::new();
    let p = build(&env, ENGINE, "-cl-std=CL3.0");
    let k = kernel(p, "fenced");
    for group in GROUPS {
        let n = group * 8;
        let (buf, bo) = (buffer_of(&env, &vec![-1i32; n]), env.buffer(0, n * 4, null_mut()));
        set_arg(k, 0, &buf);
        set_arg(k, 1, &bo);
        ok!(cl!(clSetKernelArg(k, 2, group * 4, null())));
        ok!(cl!(clSetKernelArg(k, 3, group * 4, null())));
        run(&env, k, &[n], Some(&[group]));
        let out: Vec<i32> = read_as(&env, bo, n);
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, ((i % group) * 3 + i / group) as i32, "group size {group}, element {i}");
        }
        for m in [buf, bo] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn copies_nobody_waits_for_finish_with_their_group() {
    let env = Env::new();
    let p = build(&env, ENGINE, "-cl-std=CL3.0");
    let k = kernel(p, "unwaited");
    for group in GROUPS {
        let n = group * 8;
        let bo = env.buffer(0, n * 4, null_mut());
        set_arg(k, 0, &bo);
        ok!(cl!(clSetKernelArg(k, 1, group * 4, null())));
        run(&env, k, &[n], Some(&[group]));
        let out: Vec<i32> = read_as(&env, bo, n);
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, ((i / group) * 1000 + i % group) as i32, "group size {group}, element {i}");
        }
        ok!(cl!(clReleaseMemObject(bo)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Regions the compiler runs for one work-item of the group (icd/src/compiler/passes/uniform.rs)
/// and regions it must not: the other work-items must see the results either way.
const ONCE: &str = r#"
kernel void shared_offsets(global const int *offsets, global const int *in, global int *out, local int *tile) {
    size_t l = get_local_id(0), n = get_local_size(0);
    int off = offsets[get_group_id(0)];           /* kept in frame memory, the same for all */
    event_t e = async_work_group_copy(tile, in + off, n, 0);
    wait_group_events(1, &e);
    out[get_global_id(0)] = tile[l] + off;
}

typedef struct __attribute__((packed)) { uchar b[3]; } rgb;
kernel void struct_stage(global const rgb *in, global rgb *out, local rgb *tile) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    tile[l] = in[g * n + l];                      /* clang copies a struct with memcpy */
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy((global uchar *)(out + g * n), (local uchar *)tile, n * 3, 0);
    wait_group_events(1, &e);
}

kernel void partial_private(global const int *in, global int *out, local int *tile) {
    size_t n = get_local_size(0);
    int priv[2];
    priv[0] = in[get_local_id(0)];                /* differs per work-item */
    barrier(CLK_LOCAL_MEM_FENCE);
    priv[1] = in[get_group_id(0)];                /* the same for all, but only half of priv */
    event_t e = async_work_group_copy(tile, in, n, 0);
    wait_group_events(1, &e);
    out[get_global_id(0)] = priv[0] * 1000 + priv[1] * 100 + tile[get_local_id(0)];
}
"#;

#[test]
fn regions_run_once_for_the_group_give_every_work_item_their_results() {
    let env = Env::new();
    let p = build(&env, ONCE, "");
    let (groups, group) = (6usize, 64usize);
    let input: Vec<i32> = (0..1024).map(|i| i * 3 + 1).collect();
    let offsets: Vec<i32> = (0..groups as i32).map(|g| 100 + g * 37).collect();
    let (bin, boff) = (buffer_of(&env, &input), buffer_of(&env, &offsets));
    let bo = env.buffer(0, groups * group * 4, null_mut());

    let k = kernel(p, "shared_offsets");
    set_arg(k, 0, &boff);
    set_arg(k, 1, &bin);
    set_arg(k, 2, &bo);
    ok!(cl!(clSetKernelArg(k, 3, group * 4, null())));
    run(&env, k, &[groups * group], Some(&[group]));
    let out: Vec<i32> = read_as(&env, bo, groups * group);
    for (i, &o) in out.iter().enumerate() {
        let off = offsets[i / group];
        assert_eq!(o, input[(off as usize) + i % group] + off, "work-item {i}");
    }
    ok!(cl!(clReleaseKernel(k)));

    let k = kernel(p, "partial_private");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &bo);
    ok!(cl!(clSetKernelArg(k, 2, group * 4, null())));
    run(&env, k, &[groups * group], Some(&[group]));
    let out: Vec<i32> = read_as(&env, bo, groups * group);
    for (i, &o) in out.iter().enumerate() {
        let (g, l) = (i / group, i % group);
        assert_eq!(o, input[l] * 1000 + input[g] * 100 + input[l], "work-item {i}");
    }
    ok!(cl!(clReleaseKernel(k)));

    let k = kernel(p, "struct_stage");
    let bytes: Vec<u8> = (0..groups * group * 3).map(|i| (i * 7 % 251) as u8).collect();
    let (bsi, bso) = (buffer_of(&env, &bytes), env.buffer(0, bytes.len(), null_mut()));
    set_arg(k, 0, &bsi);
    set_arg(k, 1, &bso);
    ok!(cl!(clSetKernelArg(k, 2, group * 3, null())));
    run(&env, k, &[groups * group], Some(&[group]));
    assert_eq!(read_as::<u8>(&env, bso, bytes.len()), bytes);
    ok!(cl!(clReleaseKernel(k)));
    for m in [bin, boff, bo, bsi, bso] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

const HALVES: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void halves(global const half *a, global half *out, local half8 *t) {
    size_t g = get_group_id(0), l = get_local_id(0), n = get_local_size(0);
    event_t e = async_work_group_copy(t, (global const half8 *)a + g * n, n, 0);
    wait_group_events(1, &e);
    half8 v = t[n - 1 - l] * (half)2.0f + (half)0.5f;
    vstore8(v, g * n + l, out);
}
"#;

/// IEEE binary16 bits of `x`, for values exact in half precision.
fn half_bits(x: f32) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    (((b >> 16) & 0x8000) | ((exp as u32) << 10) | ((b >> 13) & 0x3ff)) as u16
}

#[test]
fn half_copies_and_arithmetic() {
    let env = Env::new();
    let p = build(&env, HALVES, "");
    let k = kernel(p, "halves");
    let (groups, n) = (4, 32);
    let values: Vec<f32> = (0..groups * n * 8).map(|i| (i % 256) as f32).collect();
    let input: Vec<u16> = values.iter().map(|&v| half_bits(v)).collect();
    let (bi, bo) = (buffer_of(&env, &input), env.buffer(0, input.len() * 2, null_mut()));
    set_arg(k, 0, &bi);
    set_arg(k, 1, &bo);
    ok!(cl!(clSetKernelArg(k, 2, n * 16, null())));
    run(&env, k, &[groups * n], Some(&[n]));
    let out: Vec<u16> = read_as(&env, bo, input.len());
    for g in 0..groups {
        for l in 0..n {
            for c in 0..8 {
                let src = values[(g * n + n - 1 - l) * 8 + c];
                assert_eq!(out[(g * n + l) * 8 + c], half_bits(src * 2.0 + 0.5), "group {g} item {l} lane {c}");
            }
        }
    }
    for m in [bi, bo] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Imports the group's compute loops move a step at a time while the group computes on
/// the tile before (builtins/clc/workitem.c, "Deferred imports"): several in flight,
/// more than the list holds, waited for newest first, joined to a copy the driver makes.
const PIPELINE: &str = r#"
kernel void pipelined(global const int *in, global int *out, local int *buf, int tiles, int t) {
    size_t g = get_group_id(0);
    global const int *src = in + g * tiles * t;
    event_t ev[3];
    ev[0] = async_work_group_copy(buf, src, t, 0);
    if (tiles > 1) ev[1] = async_work_group_copy(buf + t, src + t, t, 0);
    for (int k = 0; k < tiles; k++) {
        if (k + 2 < tiles) ev[(k + 2) % 3] = async_work_group_copy(buf + (k + 2) % 3 * t, src + (k + 2) * t, t, 0);
        wait_group_events(1, &ev[k % 3]);
        for (int i = get_local_id(0); i < t; i += get_local_size(0))
            out[g * tiles * t + k * t + i] = buf[k % 3 * t + i] * 3 + k;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

kernel void newest_first(global const int *in, global int *out, local int *buf, int t) {
    size_t g = get_group_id(0);
    event_t ev[6];
    for (int k = 0; k < 6; k++) ev[k] = async_work_group_copy(buf + k * t, in + (g * 6 + k) * t, t, 0);
    for (int k = 5; k >= 0; k--) {
        wait_group_events(1, &ev[k]);
        for (int i = get_local_id(0); i < t; i += get_local_size(0)) out[(g * 6 + k) * t + i] = buf[k * t + i] + 1;
    }
}

kernel void chained(global const int *in, global int *out, local int *a, local int *b, int t) {
    size_t g = get_group_id(0);
    event_t e = async_work_group_copy(a, in + g * 2 * t, t, 0);
    e = async_work_group_strided_copy(b, in + g * 2 * t + t, t, 1, e);
    wait_group_events(1, &e);
    for (int i = get_local_id(0); i < t; i += get_local_size(0)) {
        out[g * 2 * t + i] = a[i] - 1;
        out[g * 2 * t + t + i] = b[i] - 1;
    }
}
"#;

#[test]
fn imports_moved_while_the_group_computes_arrive_whole() {
    let env = Env::new();
    let p = build(&env, PIPELINE, "-cl-std=CL3.0");
    let (pipelined, newest_first, chained) = (kernel(p, "pipelined"), kernel(p, "newest_first"), kernel(p, "chained"));
    let groups = 5usize;
    // Tiles below the size deferred, of sizes no step divides, of 5 KiB (six fit in 32 KiB of local memory).
    for (group, t) in [(64usize, 200usize), (64, 1000), (256, 1300), (16, 333), (1, 700)] {
        let tiles = 7usize;
        let n = groups * tiles.max(6) * t;
        let input: Vec<i32> = (0..n as i32).map(|i| i * 5 - 7).collect();
        let (bi, bo) = (buffer_of(&env, &input), env.buffer(0, n * 4, null_mut()));

        set_arg(pipelined, 0, &bi);
        set_arg(pipelined, 1, &bo);
        ok!(cl!(clSetKernelArg(pipelined, 2, 3 * t * 4, null())));
        set_arg(pipelined, 3, &(tiles as i32));
        set_arg(pipelined, 4, &(t as i32));
        run(&env, pipelined, &[groups * group], Some(&[group]));
        let out: Vec<i32> = read_as(&env, bo, groups * tiles * t);
        for (i, &o) in out.iter().enumerate() {
            let k = (i / t % tiles) as i32;
            assert_eq!(o, input[i] * 3 + k, "pipelined: group size {group}, tile {t}, element {i}");
        }

        set_arg(newest_first, 0, &bi);
        set_arg(newest_first, 1, &bo);
        ok!(cl!(clSetKernelArg(newest_first, 2, 6 * t * 4, null())));
        set_arg(newest_first, 3, &(t as i32));
        run(&env, newest_first, &[groups * group], Some(&[group]));
        let out: Vec<i32> = read_as(&env, bo, groups * 6 * t);
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, input[i] + 1, "newest first: group size {group}, tile {t}, element {i}");
        }

        set_arg(chained, 0, &bi);
        set_arg(chained, 1, &bo);
        ok!(cl!(clSetKernelArg(chained, 2, t * 4, null())));
        ok!(cl!(clSetKernelArg(chained, 3, t * 4, null())));
        set_arg(chained, 4, &(t as i32));
        run(&env, chained, &[groups * group], Some(&[group]));
        let out: Vec<i32> = read_as(&env, bo, groups * 2 * t);
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, input[i] - 1, "chained: group size {group}, tile {t}, element {i}");
        }
        for m in [bi, bo] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    for k in [pipelined, newest_first, chained] {
        ok!(cl!(clReleaseKernel(k)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

/// A gather from an address that is not mapped fails the command, whoever moves it (the
/// group itself, or copy workers: the tests run again with `FERROCL_COPY_WORKERS` set),
/// and every other group's copy arrives.
#[test]
fn a_copy_from_a_wild_address_fails_its_command_alone() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void wild_gather(global const int *in, global int *out, local int *tile, uint bad) {
            size_t g = get_group_id(0), n = get_local_size(0) * 16;
            global const int *src = g == bad ? (global const int *)(ulong)16 : in + g * n * 4;
            event_t e = async_work_group_strided_copy(tile, src, n, 4, 0);
            wait_group_events(1, &e);
            for (size_t i = get_local_id(0); i < n; i += get_local_size(0)) out[g * n + i] = tile[i] + 1;
        }"#,
        "",
    );
    let (groups, local) = (6usize, 64usize);
    let n = local * 16;
    let input: Vec<i32> = (0..(groups * n * 4) as i32).collect();
    let bi = buffer_of(&env, &input);
    for bad in [0u32, 3, u32::MAX] {
        let k = kernel(p, "wild_gather");
        let out = buffer_of(&env, &vec![0i32; groups * n]);
        set_arg(k, 0, &bi);
        set_arg(k, 1, &out);
        ok!(cl!(clSetKernelArg(k, 2, n * 4, null())));
        set_arg(k, 3, &bad);
        let status = run_status(&env, k, groups * local, local);
        let want = if bad == u32::MAX { CL_COMPLETE } else { CL_OUT_OF_RESOURCES };
        assert_eq!(status, want, "group {bad} gathers from a wild address");
        let got = read_as::<i32>(&env, out, groups * n);
        for (i, &v) in got.iter().enumerate() {
            let (g, e) = (i / n, i % n);
            if g != bad as usize {
                assert_eq!(v, input[g * n * 4 + e * 4] + 1, "element {i} (group {bad} faulted)");
            }
        }
        ok!(cl!(clReleaseMemObject(out)));
        ok!(cl!(clReleaseKernel(k)));
    }
    ok!(cl!(clReleaseMemObject(bi)));
    ok!(cl!(clReleaseProgram(p)));
}
