//! OpenCL C 2.0 and 3.0 features through the driver, compared with host references:
//! work-group collectives, the generic address space (`to_global`, `to_local`,
//! `to_private`, `get_fence`, builtins on generic pointers) and the C11 atomics on
//! generic pointers with the default order and scope.

use crate::common::*;

const COLLECTIVES: &str = r#"
kernel void ints(global const int *in, global int *out) {
    size_t g = get_global_id(0);
    int x = in[g];
    global int *o = out + g * 9;
    o[0] = work_group_reduce_add(x);
    o[1] = work_group_reduce_min(x);
    o[2] = work_group_reduce_max(x);
    o[3] = work_group_scan_inclusive_add(x);
    o[4] = work_group_scan_exclusive_add(x);
    o[5] = work_group_scan_exclusive_min(x);
    o[6] = work_group_broadcast(x, 3);
    o[7] = work_group_all(x > -1000);
    o[8] = work_group_any(x == 7);
}
// In a called function the collective is inlined into the kernel, which runs as regions.
int helper_sum(int x) { return work_group_reduce_add(x); }
kernel void in_helper(global const int *in, global int *out) {
    out[get_global_id(0)] = helper_sum(in[get_global_id(0)]) * 1000 + work_group_scan_inclusive_add(1);
}
kernel void wide(global const int *in, global long *out, global float *f, global double *d) {
    size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
    long x = (long)in[g] << 33;
    out[g * 2] = work_group_scan_inclusive_max(x);
    out[g * 2 + 1] = work_group_broadcast(x, 2, 1);
    f[g] = work_group_reduce_add((float)in[g]);
    d[g] = work_group_scan_exclusive_max((double)in[g]);
}
"#;

/// Host references of one group's collectives, in local-id order.
fn scan(xs: &[i64], inclusive: bool, op: fn(i64, i64) -> i64, identity: i64) -> Vec<i64> {
    let mut r = identity;
    xs.iter()
        .map(|&x| {
            let before = r;
            r = op(r, x);
            if inclusive {
                r
            } else {
                before
            }
        })
        .collect()
}

#[test]
fn work_group_collectives_match_the_host_in_every_group() {
    let env = Env::new();
    let p = build(&env, COLLECTIVES, "-cl-std=CL2.0");
    // Groups of 48 (the last of a non-uniform range: 200 = 4 x 48 + 8).
    let (n, local) = (200usize, 48usize);
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 37 + 11) % 101 - 50).collect();
    let k = kernel(p, "ints");
    let (bin, bout) = (buffer_of(&env, &input), env.buffer(0, n * 9 * 4, null_mut()));
    set_arg(k, 0, &bin);
    set_arg(k, 1, &bout);
    run(&env, k, &[n], Some(&[local]));
    let out: Vec<i32> = read_as(&env, bout, n * 9);
    for (gi, group) in input.chunks(local).enumerate() {
        let xs: Vec<i64> = group.iter().map(|&x| x as i64).collect();
        let add = |a: i64, b: i64| a + b;
        let (incl, excl) = (scan(&xs, true, add, 0), scan(&xs, false, add, 0));
        let excl_min = scan(&xs, false, i64::min, i32::MAX as i64);
        for (l, _) in group.iter().enumerate() {
            let o = &out[(gi * local + l) * 9..][..9];
            let want = [
                xs.iter().sum::<i64>(),
                *xs.iter().min().unwrap(),
                *xs.iter().max().unwrap(),
                incl[l],
                excl[l],
                excl_min[l],
                xs[3.min(xs.len() - 1)],
                1,
                xs.contains(&7) as i64,
            ];
            let got: Vec<i64> = o.iter().map(|&v| v as i64).collect();
            assert_eq!(got, want, "group {gi}, work-item {l}");
        }
    }

    let k = kernel(p, "in_helper");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &bout);
    run(&env, k, &[n], Some(&[local]));
    let out: Vec<i32> = read_as(&env, bout, n);
    for (gi, group) in input.chunks(local).enumerate() {
        let sum: i32 = group.iter().sum();
        for l in 0..group.len() {
            assert_eq!(out[gi * local + l], sum * 1000 + l as i32 + 1, "in a helper: group {gi}, work-item {l}");
        }
    }

    // 2D groups of 4 x 3: broadcast from (2, 1), long scans, float and double.
    let k = kernel(p, "wide");
    let (w, h) = (8usize, 6usize);
    let input: Vec<i32> = (0..(w * h) as i32).map(|i| (i * 13) % 29 - 9).collect();
    let bin = buffer_of(&env, &input);
    let (bl, bf, bd) = (
        env.buffer(0, w * h * 16, null_mut()),
        env.buffer(0, w * h * 4, null_mut()),
        env.buffer(0, w * h * 8, null_mut()),
    );
    for (i, m) in [bin, bl, bf, bd].iter().enumerate() {
        set_arg(k, i as cl_uint, m);
    }
    run(&env, k, &[w, h], Some(&[4, 3]));
    let (l, f, d): (Vec<i64>, Vec<f32>, Vec<f64>) =
        (read_as(&env, bl, w * h * 2), read_as(&env, bf, w * h), read_as(&env, bd, w * h));
    for gy in 0..h / 3 {
        for gx in 0..w / 4 {
            let at = |x: usize, y: usize| (gy * 3 + y) * w + gx * 4 + x;
            let xs: Vec<i64> =
                (0..3).flat_map(|y| (0..4).map(move |x| (x, y))).map(|(x, y)| input[at(x, y)] as i64).collect();
            let maxes = scan(&xs, true, i64::max, i64::MIN);
            let excl_max = scan(&xs, false, i64::max, i64::MIN);
            for (i, (x, y)) in (0..3).flat_map(|y| (0..4).map(move |x| (x, y))).enumerate() {
                let g = at(x, y);
                assert_eq!(l[g * 2], maxes[i] << 33, "long inclusive max at ({x}, {y})");
                assert_eq!(l[g * 2 + 1], (input[at(2, 1)] as i64) << 33, "2D broadcast at ({x}, {y})");
                assert_eq!(f[g], xs.iter().sum::<i64>() as f32, "float reduce at ({x}, {y})");
                let want = if i == 0 { f64::NEG_INFINITY } else { excl_max[i] as f64 };
                assert_eq!(d[g], want, "double exclusive max at ({x}, {y})");
            }
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const GENERIC: &str = r#"
int where(generic int *p) {
    return (to_global(p) != 0) | (to_local(p) != 0) << 1 | (to_private(p) != 0) << 2 | get_fence(p) << 4;
}
global int program_scope = 3;
kernel void spaces(global int *g, local int *la, global int *out) {
    local int lv[16];
    int p = 5;
    int *q = &p;
    size_t i = get_global_id(0) * 6;
    out[i] = where(g + 1);
    out[i + 1] = where(la + get_local_id(0));
    out[i + 2] = where(&lv[get_local_id(0)]);
    out[i + 3] = where(q);
    out[i + 4] = where(&program_scope);
    out[i + 5] = (to_global((generic int *)0) == 0) + *q;
}
// A private variable whose address lives across a barrier: the region transform keeps
// it in frame memory, and it is still private.
kernel void framed(global int *out) {
    int v = (int)get_global_id(0);
    generic int *p = &v;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = where(p) * 1000 + *p;
}
// Builtins with generic pointer arguments, and the C11 atomics with default order and
// scope on generic pointers.
kernel void builtins(global float *f, global int *n, global atomic_int *counter, local atomic_int *lc) {
    size_t i = get_global_id(0);
    generic float *gf = f + 8 * i;
    float whole;
    int e;
    gf[0] = fract(1.25f + i, &whole);
    gf[1] = whole;
    gf[2] = frexp(12.0f, &e);
    n[i] = e;
    vstore2(vload2(0, (generic const float *)gf) * 2.0f, 2, gf);
    vstore_half(3.5f, 12, (generic half *)gf);
    gf[7] = vload_half(12, (generic const half *)gf);
    if (get_local_id(0) == 0) atomic_init(lc, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    generic atomic_int *any = get_local_id(0) % 2 ? (generic atomic_int *)lc : (generic atomic_int *)counter;
    atomic_fetch_add(any, 1);
    atomic_fetch_add_explicit(counter, 10, memory_order_acq_rel);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) atomic_fetch_add_explicit(counter, atomic_load(lc) * 1000, memory_order_seq_cst,
                                                          memory_scope_device);
}
"#;

#[test]
fn generic_pointers_know_where_they_point() {
    let env = Env::new();
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let p = build(&env, GENERIC, std);
        let k = kernel(p, "spaces");
        let (n, local) = (64usize, 16usize);
        let (bg, bout) = (env.buffer(0, 64, null_mut()), env.buffer(0, n * 6 * 4, null_mut()));
        set_arg(k, 0, &bg);
        ok!(cl!(clSetKernelArg(k, 1, local * 4, null())));
        set_arg(k, 2, &bout);
        run(&env, k, &[n], Some(&[local]));
        let out: Vec<i32> = read_as(&env, bout, n * 6);
        // to_global, to_local, to_private bits, then get_fence (2 global, 1 local, 0 private).
        let (global, local_, private) = (1 | 2 << 4, 2 | 1 << 4, 4);
        for i in 0..n {
            assert_eq!(&out[i * 6..i * 6 + 6], &[global, local_, local_, private, global, 6], "{std}, work-item {i}");
        }
        let k2 = kernel(p, "framed");
        set_arg(k2, 0, &bout);
        run(&env, k2, &[n], Some(&[local]));
        let out: Vec<i32> = read_as(&env, bout, n);
        assert_eq!(
            out,
            (0..n as i32).map(|i| private * 1000 + i).collect::<Vec<_>>(),
            "{std}: framed private variable"
        );
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseKernel(k2)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

#[test]
fn builtins_and_atomics_take_generic_pointers() {
    let env = Env::new();
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let p = build(&env, GENERIC, std);
        let k = kernel(p, "builtins");
        let (n, local) = (32usize, 8usize);
        let init: Vec<f32> = (0..n * 8).map(|i| i as f32).collect();
        let (bf, bn, bc) = (buffer_of(&env, &init), env.buffer(0, n * 4, null_mut()), buffer_of(&env, &[0i32]));
        set_arg(k, 0, &bf);
        set_arg(k, 1, &bn);
        set_arg(k, 2, &bc);
        ok!(cl!(clSetKernelArg(k, 3, 4, null())));
        run(&env, k, &[n], Some(&[local]));
        let (f, e, c): (Vec<f32>, Vec<i32>, Vec<i32>) =
            (read_as(&env, bf, n * 8), read_as(&env, bn, n), read_as(&env, bc, 1));
        for i in 0..n {
            let g = &f[i * 8..i * 8 + 8];
            assert_eq!((g[0], g[1]), (0.25, 1.0 + i as f32), "{std}: fract through a generic pointer");
            assert_eq!((g[2], e[i]), (0.75, 4), "{std}: frexp through a generic pointer");
            assert_eq!((g[4], g[5]), (0.5, 2.0 + 2.0 * i as f32), "{std}: vload2/vstore2");
            assert_eq!(g[7], 3.5, "{std}: vstore_half/vload_half");
        }
        // Even work-items add 1 to the global counter, odd ones to their group's local one;
        // every work-item adds 10; each group adds its local count x 1000.
        let groups = n / local;
        assert_eq!(c[0], (n / 2 + 10 * n + groups * (local / 2) * 1000) as i32, "{std}: atomics on generic pointers");
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

const SUB_GROUPS: &str = r#"
#define BODY \
    size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0); \
    int x = in[g]; \
    global int *o = out + g * 10; \
    o[0] = get_sub_group_size(); \
    o[1] = get_max_sub_group_size(); \
    o[2] = get_num_sub_groups(); \
    o[3] = get_sub_group_id(); \
    o[4] = get_sub_group_local_id(); \
    o[5] = sub_group_reduce_add(x) + sub_group_scan_inclusive_max(x); \
    o[6] = sub_group_scan_exclusive_add(x); \
    o[7] = sub_group_scan_exclusive_min(x) == INT_MAX; \
    o[8] = sub_group_broadcast(x, 1) + sub_group_all(x > 0) * 1000 + sub_group_any(x == 5) * 100000; \
    sub_group_barrier(CLK_GLOBAL_MEM_FENCE); \
    o[9] = get_enqueued_num_sub_groups();
kernel void sub(global const int *in, global int *out) { BODY }
__attribute__((intel_reqd_sub_group_size(16))) kernel void sub16(global const int *in, global int *out) { BODY }
"#;

/// What `SUB_GROUPS` writes for each work-item of a launch of `global` in groups of
/// `local` (two dimensions), with sub-groups of `s`: runs of `s` work-items in x, the
/// last of a row shorter, numbered row after row.
fn sub_group_reference(input: &[i32], global: [usize; 2], local: [usize; 2], s: usize) -> Vec<i32> {
    let mut want = vec![0; input.len() * 10];
    for gy in 0..global[1] {
        for gx in 0..global[0] {
            let g = gy * global[0] + gx;
            // This group's size (the last of a dimension may be partial).
            let size = [0, 1].map(|d| local[d].min(global[d] - [gx, gy][d] / local[d] * local[d]));
            let (lx, ly) = (gx % local[0], gy % local[1]);
            let first = lx / s * s;
            let members: Vec<i32> = (first..size[0].min(first + s)).map(|x| input[g - lx + x]).collect();
            let l = lx - first;
            let before: i32 = members[..l].iter().sum();
            let max_so_far = *members[..=l].iter().max().unwrap();
            let all = members.iter().all(|&v| v > 0) as i32;
            let any = members.contains(&5) as i32;
            let source = *members.get(1).unwrap_or(&members[0]);
            want[g * 10..g * 10 + 10].copy_from_slice(&[
                members.len() as i32,
                s.min(local[0]) as i32,
                (size[0].div_ceil(s) * size[1]) as i32,
                (ly * size[0].div_ceil(s) + lx / s) as i32,
                l as i32,
                members.iter().sum::<i32>() + max_so_far,
                before,
                (l == 0) as i32,
                source + 1000 * all + 100000 * any,
                (local[0].div_ceil(s) * local[1]) as i32,
            ]);
        }
    }
    want
}

#[test]
fn sub_groups_are_runs_of_the_sub_group_size_in_x() {
    let env = Env::new();
    let p = build(&env, SUB_GROUPS, "-cl-std=CL3.0");
    // 1D with a partial last group (100 = 3 x 32 + 4), and 2D with rows of 10: 8 + 2 in
    // sub-groups of 8, one of 10 in sub-groups of 16.
    for (name, s) in [("sub", 8usize), ("sub16", 16)] {
        let k = kernel(p, name);
        for (global, local) in [([100usize, 1usize], [32usize, 1usize]), ([20, 6], [10, 3]), ([64, 4], [64, 2])] {
            let n = global[0] * global[1];
            let input: Vec<i32> = (0..n as i32).map(|i| i * 7 - 300).collect();
            let (bin, bout) = (buffer_of(&env, &input), env.buffer(0, n * 40, null_mut()));
            set_arg(k, 0, &bin);
            set_arg(k, 1, &bout);
            run(&env, k, &global, Some(&local));
            let out: Vec<i32> = read_as(&env, bout, n * 10);
            let want = sub_group_reference(&input, global, local, s);
            for g in 0..n {
                assert_eq!(
                    &out[g * 10..g * 10 + 10],
                    &want[g * 10..g * 10 + 10],
                    "{name} {global:?}/{local:?}: work-item {g}"
                );
            }
            for b in [bin, bout] {
                ok!(cl!(clReleaseMemObject(b)));
            }
        }
        // The host's view agrees.
        let query = |param: cl_kernel_sub_group_info, input: &[usize], out_len: usize| -> (cl_int, Vec<usize>) {
            let mut v = vec![0usize; out_len];
            let e = cl!(clGetKernelSubGroupInfo(
                k,
                env.device,
                param,
                std::mem::size_of_val(input),
                input.as_ptr().cast(),
                out_len * 8,
                v.as_mut_ptr().cast(),
                null_mut()
            ));
            (e, v)
        };
        let max_group: usize =
            info(|n, v, r| cl!(clGetKernelWorkGroupInfo(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, n, v, r)));
        let device_max: usize = device_info(env.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        assert_eq!(max_group, device_max, "sub-groups do not limit the group");
        assert_eq!(query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[32, 2], 1), (CL_SUCCESS, vec![s]));
        assert_eq!(query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[6, 4], 1), (CL_SUCCESS, vec![6]));
        assert_eq!(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[32, 2], 1), (CL_SUCCESS, vec![32 / s * 2]));
        assert_eq!(
            query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[10, 3, 2], 1),
            (CL_SUCCESS, vec![10usize.div_ceil(s) * 6])
        );
        assert_eq!(query(CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[3], 3), (CL_SUCCESS, vec![3 * s, 1, 1]));
        assert_eq!(query(CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[device_max], 2), (CL_SUCCESS, vec![0, 0]));
        assert_eq!(query(CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[0], 1), (CL_SUCCESS, vec![0]));
        assert_eq!(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &[1, 2, 3, 4], 1).0, CL_INVALID_VALUE);
        assert_eq!(query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[], 1).0, CL_INVALID_VALUE);
        assert_eq!(query(0x1234, &[1], 1).0, CL_INVALID_VALUE);
        assert_eq!(query(CL_KERNEL_MAX_NUM_SUB_GROUPS, &[], 1), (CL_SUCCESS, vec![device_max]));
        // cl_intel_required_subgroup_size's: the size the kernel asked for, 0 for none.
        let asked = if name == "sub16" { 16 } else { 0 };
        assert_eq!(query(CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, &[], 1), (CL_SUCCESS, vec![asked]));
        let spill: cl_ulong =
            info(|n, v, r| cl!(clGetKernelWorkGroupInfo(k, env.device, CL_KERNEL_SPILL_MEM_SIZE_INTEL, n, v, r)));
        assert_eq!(spill, 0);
        ok!(cl!(clReleaseKernel(k)));
    }
    let sub16 = kernel(p, "sub16");
    let attributes = info_string(|n, v, r| cl!(clGetKernelInfo(sub16, CL_KERNEL_ATTRIBUTES, n, v, r)));
    assert_eq!(attributes, "intel_reqd_sub_group_size(16)");
    ok!(cl!(clReleaseKernel(sub16)));
    ok!(cl!(clReleaseProgram(p)));
    // The device's sub-group sizes, which a kernel may ask for; others fail its build.
    let sizes = info_bytes(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, n, v, r)));
    let sizes: Vec<usize> = sizes.chunks(8).map(|c| usize::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(sizes, [4, 8, 16, 32, 64]);
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|x| x == "cl_intel_required_subgroup_size"), "{ext}");
    // Sub-groups run one after another: no independent forward progress, so not
    // cl_khr_subgroups (OpenCL 3.0's sub-group feature stays).
    assert!(!ext.split(' ').any(|x| x == "cl_khr_subgroups"), "{ext}");
    assert_eq!(device_info::<cl_bool>(env.device, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS), CL_FALSE);
    assert_eq!(
        device_info::<cl_uint>(env.device, CL_DEVICE_MAX_NUM_SUB_GROUPS) as usize,
        device_info::<usize>(env.device, CL_DEVICE_MAX_WORK_GROUP_SIZE)
    );
    let bad = "__attribute__((intel_reqd_sub_group_size(12))) kernel void k(global int *o) { o[0] = 1; }";
    let p = program(&env, bad);
    assert_eq!(cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut())), CL_BUILD_PROGRAM_FAILURE);
    let log = build_log(&env, p);
    assert!(log.contains("intel_reqd_sub_group_size(12)"), "{log}");
    ok!(cl!(clReleaseProgram(p)));
}

const EXCHANGES: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define EXCHANGE(NAME, ATTRIBUTES) \
ATTRIBUTES kernel void NAME(global const int *in, global const uint *arg, int delta, global int *out, \
                            global char *cout, global double *dout, global float *hout) { \
    size_t g = get_global_id(0); \
    int x = in[g]; \
    uint a = arg[g]; \
    global int *o = out + g * 6; \
    o[0] = sub_group_shuffle(x, a); \
    o[1] = sub_group_shuffle_xor(x, a & 15); \
    o[2] = sub_group_shuffle_up(x, a & 7); \
    o[3] = sub_group_shuffle_down(x, a & 7); \
    o[4] = sub_group_rotate(x, delta); \
    o[5] = sub_group_clustered_rotate(x, delta, 8); \
    cout[g] = sub_group_shuffle((char)x, a); \
    dout[g] = sub_group_shuffle_down((double)x * 0.5, a & 7); \
    hout[g] = sub_group_rotate((half)(x & 1023), delta); \
}
EXCHANGE(exchange, )
EXCHANGE(exchange32, __attribute__((intel_reqd_sub_group_size(32))))

/* cl_khr_subgroup_extended_types: vectors broadcast (as clang passes each: char3 as an
   integer, long16 through memory), 8- and 16-bit reductions and scans. */
__attribute__((intel_reqd_sub_group_size(16)))
kernel void wide(global const int *in, uint from, global char3 *c3, global short8 *s8, global long16 *l16,
                 global double4 *d4, global half2 *h2, global int *sums) {
    size_t g = get_global_id(0);
    int x = in[g];
    c3[g] = sub_group_broadcast((char3)((char)x, (char)(x >> 8), (char)(x >> 16)), from);
    s8[g] = sub_group_broadcast((short8)((short)x) + (short8)(0, 1, 2, 3, 4, 5, 6, 7), from);
    l16[g] = sub_group_broadcast((long16)x * (long16)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), from);
    d4[g] = sub_group_broadcast((double4)(x, -x, 0.5 * x, 2.0), from);
    h2[g] = sub_group_broadcast((half2)((half)(x & 255), (half)1.5), from);
    sums[g * 4] = sub_group_reduce_add((char)x);
    sums[g * 4 + 1] = sub_group_scan_inclusive_max((short)x);
    sums[g * 4 + 2] = sub_group_scan_exclusive_add((uchar)x);
    sums[g * 4 + 3] = sub_group_reduce_min((ushort)x);
}

/* cl_khr_subgroup_clustered_reduce, in sub-groups of 32 (clusters up to the sub-group's
   size). */
__attribute__((intel_reqd_sub_group_size(32)))
kernel void clustered(global const int *in, global int *out, global float *fout, uint zero) {
    size_t g = get_global_id(0);
    int x = in[g];
    global int *o = out + g * 8;
    /* Undefined results, but never a division by zero in the host process. */
    o[6] = sub_group_clustered_rotate(x, 1, zero);
    o[7] = sub_group_clustered_reduce_add(x, zero);
    o[0] = sub_group_clustered_reduce_add(x, 8);
    o[1] = sub_group_clustered_reduce_max(x, 16);
    o[2] = sub_group_clustered_reduce_xor(x, 4);
    o[3] = sub_group_clustered_reduce_logical_or(x & 16, 2);
    o[4] = sub_group_clustered_reduce_min((char)x, 32);
    o[5] = (int)sub_group_clustered_reduce_and((ulong)(uint)x, 4);
    fout[g] = sub_group_clustered_reduce_mul((float)(x & 7) * 0.5f + 0.5f, 4);
}
"#;

#[test]
fn sub_group_shuffles_and_rotations_read_the_named_work_item() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    for e in ["cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative", "cl_khr_subgroup_rotate"] {
        assert!(ext.split(' ').any(|x| x == e), "{e} in {ext}");
    }
    let (n, local) = (256usize, 64usize);
    let input: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(2654435761u32 as i32) >> 7).collect();
    for (std, name, sub) in
        [("", "exchange", 8usize), ("-cl-std=CL2.0", "exchange32", 32), ("-cl-std=CL3.0", "exchange", 8)]
    {
        // Indices within the sub-group (others are undefined).
        let args: Vec<u32> = (0..n as u32).map(|i| (i * 37 + 11) % sub as u32).collect();
        let p = build(&env, EXCHANGES, std);
        let k = kernel(p, name);
        for delta in [3i32, -1, 70] {
            let (bin, barg) = (buffer_of(&env, &input), buffer_of(&env, &args));
            let bufs = [n * 24, n, n * 8, n * 4].map(|size| env.buffer(0, size, null_mut()));
            set_arg(k, 0, &bin);
            set_arg(k, 1, &barg);
            set_arg(k, 2, &delta);
            for (i, b) in bufs.iter().enumerate() {
                set_arg(k, 3 + i as cl_uint, b);
            }
            run(&env, k, &[n], Some(&[local]));
            let out: Vec<i32> = read_as(&env, bufs[0], n * 6);
            let chars: Vec<i8> = read_as(&env, bufs[1], n);
            let doubles: Vec<f64> = read_as(&env, bufs[2], n);
            let halves: Vec<f32> = read_as(&env, bufs[3], n);
            for g in 0..n {
                // Sub-groups of `sub` in groups of 64 (a multiple).
                let (base, l, a) = (g - g % sub, g % sub, args[g] as usize);
                let at = |i: usize| input[base + i];
                let rotated = (l as u32).wrapping_add(delta as u32) as usize % sub;
                let clustered = l / 8 * 8 + (l as u32).wrapping_add(delta as u32) as usize % 8;
                let what = format!("{std} {name} delta {delta} work-item {g}");
                assert_eq!(out[g * 6], at(a), "{what}: shuffle");
                // Out of the sub-group the result is undefined: only the defined ones.
                if l ^ (a & 15) < sub {
                    assert_eq!(out[g * 6 + 1], at(l ^ (a & 15)), "{what}: shuffle_xor");
                }
                if a & 7 <= l {
                    assert_eq!(out[g * 6 + 2], at(l - (a & 7)), "{what}: shuffle_up");
                }
                if l + (a & 7) < sub {
                    assert_eq!(out[g * 6 + 3], at(l + (a & 7)), "{what}: shuffle_down");
                    assert_eq!(doubles[g], at(l + (a & 7)) as f64 * 0.5, "{what}: shuffle_down on double");
                }
                assert_eq!(out[g * 6 + 4], at(rotated), "{what}: rotate");
                assert_eq!(out[g * 6 + 5], at(clustered), "{what}: clustered_rotate");
                assert_eq!(chars[g], at(a) as i8, "{what}: shuffle on char");
                assert_eq!(halves[g], (at(rotated) & 1023) as f32, "{what}: rotate on half");
            }
            for b in [bin, barg].iter().chain(&bufs) {
                ok!(cl!(clReleaseMemObject(*b)));
            }
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

#[test]
fn sub_group_broadcasts_vectors_and_reduces_narrow_types() {
    let env = Env::new();
    // Sub-groups of 16 (the kernel asks for them) in groups of 64.
    let (n, local, sub, from) = (256usize, 64usize, 16usize, 13u32);
    let input: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(2654435761u32 as i32) >> 5).collect();
    for std in ["", "-cl-std=CL3.0"] {
        let p = build(&env, EXCHANGES, std);
        let k = kernel(p, "wide");
        let bin = buffer_of(&env, &input);
        // char3 and half2 take 4 bytes, short8 16, long16 128, double4 32, the sums 16.
        let bufs = [4, 16, 128, 32, 4, 16].map(|size| env.buffer(0, n * size, null_mut()));
        set_arg(k, 0, &bin);
        set_arg(k, 1, &from);
        for (i, b) in bufs.iter().enumerate() {
            set_arg(k, 2 + i as cl_uint, b);
        }
        run(&env, k, &[n], Some(&[local]));
        let c3: Vec<i8> = read_as(&env, bufs[0], n * 4);
        let s8: Vec<i16> = read_as(&env, bufs[1], n * 8);
        let l16: Vec<i64> = read_as(&env, bufs[2], n * 16);
        let d4: Vec<f64> = read_as(&env, bufs[3], n * 4);
        let h2: Vec<u16> = read_as(&env, bufs[4], n * 2);
        let sums: Vec<i32> = read_as(&env, bufs[5], n * 4);
        for g in 0..n {
            let group = &input[g - g % sub..][..sub];
            let (x, l) = (group[from as usize], g % sub);
            let what = format!("{std} work-item {g}");
            assert_eq!(&c3[g * 4..g * 4 + 3], &[x as i8, (x >> 8) as i8, (x >> 16) as i8], "{what}: char3");
            assert_eq!(&s8[g * 8..g * 8 + 8], &(0..8).map(|i| (x as i16).wrapping_add(i)).collect::<Vec<_>>()[..]);
            assert_eq!(&l16[g * 16..g * 16 + 16], &(1..=16).map(|i| x as i64 * i).collect::<Vec<_>>()[..], "{what}");
            assert_eq!(&d4[g * 4..g * 4 + 4], &[x as f64, -x as f64, 0.5 * x as f64, 2.0], "{what}: double4");
            assert_eq!(crate::builtins::half_bits_to_f32(h2[g * 2]), (x & 255) as f32, "{what}: half2");
            assert_eq!(crate::builtins::half_bits_to_f32(h2[g * 2 + 1]), 1.5, "{what}: half2");
            let char_sum = group.iter().fold(0i8, |a, &v| a.wrapping_add(v as i8));
            let short_max = group[..=l].iter().map(|&v| v as i16).max().unwrap();
            let uchar_before = group[..l].iter().fold(0u8, |a, &v| a.wrapping_add(v as u8));
            let ushort_min = group.iter().map(|&v| v as u16).min().unwrap();
            let want = [char_sum as i32, short_max as i32, uchar_before as i32, ushort_min as i32];
            assert_eq!(&sums[g * 4..g * 4 + 4], &want, "{what}: 8- and 16-bit reductions and scans");
        }
        for b in std::iter::once(&bin).chain(&bufs) {
            ok!(cl!(clReleaseMemObject(*b)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

#[test]
fn sub_group_clustered_reductions_fold_each_cluster() {
    let env = Env::new();
    let (n, local) = (256usize, 64usize);
    let input: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(2654435761u32 as i32) >> 9).collect();
    let p = build(&env, EXCHANGES, "-cl-std=CL3.0");
    let k = kernel(p, "clustered");
    let (bin, bout, bf) =
        (buffer_of(&env, &input), env.buffer(0, n * 32, null_mut()), env.buffer(0, n * 4, null_mut()));
    set_arg(k, 0, &bin);
    set_arg(k, 1, &bout);
    set_arg(k, 2, &bf);
    set_arg(k, 3, &0u32);
    run(&env, k, &[n], Some(&[local]));
    let out: Vec<i32> = read_as(&env, bout, n * 8);
    let floats: Vec<f32> = read_as(&env, bf, n);
    for g in 0..n {
        let cluster = |size: usize| &input[g - g % size..][..size];
        let and4 = cluster(4).iter().fold(u64::MAX, |a, &v| a & v as u32 as u64);
        let want = [
            cluster(8).iter().fold(0i32, |a, &v| a.wrapping_add(v)),
            *cluster(16).iter().max().unwrap(),
            cluster(4).iter().fold(0, |a, &v| a ^ v),
            cluster(2).iter().any(|&v| v & 16 != 0) as i32,
            cluster(32).iter().map(|&v| v as i8).min().unwrap() as i32,
            and4 as i32,
        ];
        assert_eq!(&out[g * 8..g * 8 + 6], &want, "work-item {g}");
        // In local-id order, as the spec's reference folds.
        let mul = cluster(4).iter().fold(1.0f32, |a, &v| a * ((v & 7) as f32 * 0.5 + 0.5));
        assert_eq!(floats[g], mul, "work-item {g}: mul on float");
    }
    for b in [bin, bout, bf] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const UNIFORM_ARITHMETIC: &str = r#"
kernel void folds(global const int *in, global int *out, global float *fout) {
    size_t g = get_global_id(0);
    int x = in[g];
    global int *o = out + g * 8;
    o[0] = work_group_reduce_mul((x & 3) | 1);
    o[1] = work_group_scan_inclusive_and(x);
    o[2] = work_group_scan_exclusive_or(x);
    o[3] = work_group_reduce_xor(x);
    o[4] = work_group_reduce_logical_and(x);
    o[5] = work_group_scan_inclusive_logical_or(x == 7);
    o[6] = work_group_scan_exclusive_logical_xor(x & 1);
    o[7] = (int)work_group_reduce_mul((ulong)(x & 1) + 1);
    fout[g] = work_group_scan_inclusive_mul(1.0f + (float)(x & 1));
}
"#;

#[test]
fn work_group_uniform_arithmetic_folds_match_the_host() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|x| x == "cl_khr_work_group_uniform_arithmetic"), "{ext}");
    let (n, local) = (96usize, 32usize);
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 37 + 5) % 23 - 3).collect();
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let p = build(&env, UNIFORM_ARITHMETIC, std);
        let k = kernel(p, "folds");
        let (bin, bout, bf) =
            (buffer_of(&env, &input), env.buffer(0, n * 32, null_mut()), env.buffer(0, n * 4, null_mut()));
        set_arg(k, 0, &bin);
        set_arg(k, 1, &bout);
        set_arg(k, 2, &bf);
        run(&env, k, &[n], Some(&[local]));
        let out: Vec<i32> = read_as(&env, bout, n * 8);
        let floats: Vec<f32> = read_as(&env, bf, n);
        for g in 0..n {
            let group = &input[g - g % local..][..local];
            let l = g % local;
            let want = [
                group.iter().fold(1i32, |a, &v| a.wrapping_mul((v & 3) | 1)),
                group[..=l].iter().fold(-1i32, |a, &v| a & v),
                group[..l].iter().fold(0, |a, &v| a | v),
                group.iter().fold(0, |a, &v| a ^ v),
                group.iter().all(|&v| v != 0) as i32,
                group[..=l].contains(&7) as i32,
                group[..l].iter().fold(false, |a, &v| a != (v & 1 != 0)) as i32,
                group.iter().fold(1u64, |a, &v| a.wrapping_mul((v & 1) as u64 + 1)) as i32,
            ];
            assert_eq!(&out[g * 8..g * 8 + 8], &want, "{std}: work-item {g}");
            let product = group[..=l].iter().fold(1.0f32, |a, &v| a * (1.0 + (v & 1) as f32));
            assert_eq!(floats[g], product, "{std}: work-item {g}: scan of floats");
        }
        for b in [bin, bout, bf] {
            ok!(cl!(clReleaseMemObject(b)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// The sub-group functions SPIR-V from SYCL's compiler calls beyond the claimed
/// extensions (cl_intel_subgroups' shuffles, ballots, the non-uniform arithmetic and
/// votes, all called by every work-item), declared as the translator names them.
const SYCL_SUB_GROUP_FUNCTIONS: &str = r#"
#define OVL __attribute__((overloadable))
int OVL intel_sub_group_shuffle(int, uint);
float OVL intel_sub_group_shuffle_xor(float, uint);
int OVL intel_sub_group_shuffle_down(int, int, uint);
int OVL intel_sub_group_shuffle_up(int, int, uint);
uint4 OVL sub_group_ballot(int);
int OVL sub_group_inverse_ballot(uint4);
uint OVL sub_group_ballot_bit_count(uint4);
uint OVL sub_group_ballot_inclusive_scan(uint4);
uint OVL sub_group_ballot_find_lsb(uint4);
uint OVL sub_group_ballot_find_msb(uint4);
int OVL sub_group_ballot_bit_extract(uint4, uint);
uint4 OVL get_sub_group_lt_mask(void);
int OVL sub_group_elect(void);
int OVL sub_group_non_uniform_all_equal(int);
int OVL sub_group_non_uniform_reduce_mul(int);
int OVL sub_group_non_uniform_scan_exclusive_max(int);
int OVL sub_group_broadcast_first(int);
long OVL sub_group_reduce_and(long);

kernel void extras(global const int *in, global const uint *arg, global int *out, global float *fout) {
    size_t g = get_global_id(0);
    int x = in[g];
    uint a = arg[g];
    global int *o = out + g * 16;
    o[0] = intel_sub_group_shuffle(x, a);
    o[1] = intel_sub_group_shuffle_down(x, -x, a);
    o[2] = intel_sub_group_shuffle_up(-x, x, a);
    uint4 b = sub_group_ballot(x & 1);
    o[3] = (int)b.x;
    o[4] = sub_group_inverse_ballot(b);
    o[5] = (int)sub_group_ballot_bit_count(b);
    o[6] = (int)sub_group_ballot_inclusive_scan(b);
    o[7] = (int)sub_group_ballot_find_lsb(b) * 100 + (int)sub_group_ballot_find_msb(b);
    o[8] = sub_group_ballot_bit_extract(b, a);
    o[9] = (int)get_sub_group_lt_mask().x;
    o[10] = sub_group_elect();
    o[11] = sub_group_non_uniform_all_equal(x / 100) * 10 + sub_group_non_uniform_all_equal(x);
    o[12] = sub_group_non_uniform_reduce_mul((x & 3) | 1);
    o[13] = sub_group_non_uniform_scan_exclusive_max(x);
    o[14] = sub_group_broadcast_first(x);
    o[15] = (int)sub_group_reduce_and((long)x | 0x100000000l);
    fout[g] = intel_sub_group_shuffle_xor((float)x * 0.5f, a);
}
"#;

#[test]
fn sycl_sub_group_functions_act_on_each_sub_group() {
    let env = Env::new();
    // Groups of 20: sub-groups of 8, 8 and 4.
    let (n, local, sub) = (60usize, 20usize, 8usize);
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 29 + 3) % 41).collect();
    let args: Vec<u32> = (0..n as u32).map(|i| (i * 5 + 1) % 4).collect();
    let p = build(&env, SYCL_SUB_GROUP_FUNCTIONS, "-cl-std=CL3.0");
    let k = kernel(p, "extras");
    let (bin, barg) = (buffer_of(&env, &input), buffer_of(&env, &args));
    let (bout, bf) = (env.buffer(0, n * 64, null_mut()), env.buffer(0, n * 4, null_mut()));
    for (i, b) in [bin, barg, bout, bf].iter().enumerate() {
        set_arg(k, i as cl_uint, b);
    }
    run(&env, k, &[n], Some(&[local]));
    let out: Vec<i32> = read_as(&env, bout, n * 16);
    let floats: Vec<f32> = read_as(&env, bf, n);
    for g in 0..n {
        let l_group = g % local;
        let first = g - l_group % sub;
        let size = sub.min(local - l_group / sub * sub);
        let members = &input[first..first + size];
        let (l, a) = (g - first, args[g] as usize);
        let what = format!("work-item {g}");
        let bits: u32 = members.iter().enumerate().filter(|(_, &v)| v & 1 != 0).map(|(i, _)| 1 << i).sum();
        let o = &out[g * 16..g * 16 + 16];
        if a < size {
            assert_eq!(o[0], members[a], "{what}: intel shuffle");
            assert_eq!(floats[g], members[l ^ a] as f32 * 0.5, "{what}: intel shuffle_xor");
        }
        let down = if l + a < size { members[l + a] } else { -members[l + a - size] };
        assert_eq!(o[1], down, "{what}: intel shuffle_down");
        let up = if a <= l { members[l - a] } else { -members[size + l - a] };
        assert_eq!(o[2], up, "{what}: intel shuffle_up");
        assert_eq!(o[3] as u32, bits, "{what}: ballot");
        assert_eq!(o[4], (bits >> l) as i32 & 1, "{what}: inverse ballot");
        assert_eq!(o[5], bits.count_ones() as i32, "{what}: bit count");
        assert_eq!(o[6], (bits & ((2u32 << l) - 1)).count_ones() as i32, "{what}: inclusive scan");
        if bits != 0 {
            let (lsb, msb) = (bits.trailing_zeros() as i32, 31 - bits.leading_zeros() as i32);
            assert_eq!(o[7], lsb * 100 + msb, "{what}: find lsb, msb");
        }
        assert_eq!(o[8], (bits >> a) as i32 & 1, "{what}: bit extract");
        assert_eq!(o[9] as u32, (1u32 << l) - 1, "{what}: lt mask");
        assert_eq!(o[10], (l == 0) as i32, "{what}: elect");
        let equal = |f: &dyn Fn(i32) -> i32| members.iter().all(|&v| f(v) == f(members[0])) as i32;
        assert_eq!(o[11], equal(&|v| v / 100) * 10 + equal(&|v| v), "{what}: all_equal");
        assert_eq!(o[12], members.iter().fold(1i32, |p, &v| p.wrapping_mul((v & 3) | 1)), "{what}: reduce mul");
        assert_eq!(o[13], members[..l].iter().copied().max().unwrap_or(i32::MIN), "{what}: exclusive max");
        assert_eq!(o[14], members[0], "{what}: broadcast first");
        assert_eq!(o[15], members.iter().fold(-1i32, |p, &v| p & v), "{what}: reduce and on long");
    }
    for b in [bin, barg, bout, bf] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// A group scan as SYCL's libraries write it (dpnp's `custom_inclusive_scan_over_group`):
/// each sub-group scans with shuffles, then the first sub-group alone scans the
/// sub-groups' totals between two work-group barriers, in a function the kernel calls
/// (so the kernel runs as fibers). The first sub-group's shuffles must not let the others
/// past the work-group barrier they wait at.
const SUB_GROUP_ONLY_SCAN: &str = r#"
float scan_in_first_sub_group(float x, local float *part) {
    uint lid = get_sub_group_local_id(), n = get_sub_group_size();
    for (uint step = 1; step < n; step <<= 1) {
        float y = sub_group_shuffle(x, lid - (step > lid ? 0 : step));
        if (step <= lid) x += y;
    }
    part[get_local_id(0)] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint sgs = get_num_sub_groups(), max = get_max_sub_group_size();
    if (get_sub_group_id() == 0) {
        float carry = lid < sgs ? part[lid * max + max - 1] : 0.0f;
        for (uint step = 1; step < n; step <<= 1) {
            float y = sub_group_shuffle(carry, lid - (step > lid ? 0 : step));
            if (step <= lid) carry += y;
        }
        if (lid < sgs) part[lid * max + max - 1] = carry;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint sg = get_sub_group_id();
    return sg == 0 ? x : x + part[(sg - 1) * max + max - 1];
}
kernel void scan(global const float *in, global float *out, local float *part) {
    size_t g = get_global_id(0);
    out[g] = scan_in_first_sub_group(in[g], part);
}
"#;

#[test]
fn one_sub_groups_shuffles_keep_the_others_at_the_group_barrier() {
    let env = Env::new();
    let p = build(&env, SUB_GROUP_ONLY_SCAN, "-cl-std=CL3.0");
    let k = kernel(p, "scan");
    let (n, local) = (256usize, 64usize);
    let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (bin, bout) = (buffer_of(&env, &input), env.buffer(0, n * 4, null_mut()));
    set_arg(k, 0, &bin);
    set_arg(k, 1, &bout);
    ok!(cl!(clSetKernelArg(k, 2, local * 4, null())));
    run(&env, k, &[n], Some(&[local]));
    let out: Vec<f32> = read_as(&env, bout, n);
    for g in 0..n {
        let want: f32 = input[g - g % local..=g].iter().sum();
        assert_eq!(out[g], want, "work-item {g}");
    }
    for b in [bin, bout] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// dpnp's convolution as SYCL writes it: each work-item keeps a window of its sub-group's
/// input and its results in structures, the window slides by shuffles in a loop whose
/// trip count is the maximum sub-group size, and how many results a work-item keeps
/// differs between work-items.
const SLIDING_WINDOW: &str = r#"
typedef struct { uchar tag; float data[5]; } window_t;
typedef struct { float data[4]; } results_t;
kernel SUB_GROUP void slide(global const float *a, global const float *v, global float *out, int n) {
    int lid = (int)get_sub_group_local_id(), sg = (int)get_max_sub_group_size();
    int base = 4 * ((int)get_global_id(0) - lid) + lid;
    int rn = min(4, (n - base + sg - 1) / sg);
    window_t w;
    results_t res;
    w.tag = 1;
    for (int i = 0; i < 5; i++) w.data[i] = base + i * sg < n ? a[base + i * sg] : 0.0f;
    for (int r = 0; r < 4; r++) res.data[r] = 0.0f;
    float taps = v[lid];
    for (int k = 0; k < sg; k++) {
        float x = sub_group_broadcast(taps, k);
        for (int r = 0; r < rn; r++) res.data[r] += w.data[r] * x;
        for (int i = 0; i < 5; i++) {
            float down = sub_group_shuffle_down(w.data[i], 1);
            float up = i < 4 ? sub_group_shuffle_up(w.data[i + 1], sg - 1) : 0.0f;
            w.data[i] = lid < sg - 1 ? down : up;
        }
    }
    for (int r = 0; r < rn; r++) out[base + r * sg] = res.data[r] + w.tag - 1;
}
"#;

/// The loop's trip count is the same in every work-item and the window's structure is
/// widened field by field: the kernel runs as regions (dpnp's ran as fibers, 100 times
/// Intel's time), and its shuffles read the lanes the host reference does. In sub-groups
/// of 8, the SIMD width, each chunk of lanes is a sub-group and runs the kernel's flat
/// copy, without barriers; in sub-groups of 16 the regions run.
#[test]
fn sliding_window_shuffles_in_a_loop_run_as_regions() {
    let env = Env::new();
    for sub in [8usize, 16] {
        let attribute = match sub {
            8 => "-DSUB_GROUP=".to_string(),
            n => format!("-DSUB_GROUP=__attribute__((intel_reqd_sub_group_size({n})))"),
        };
        let p = build(&env, SLIDING_WINDOW, &format!("-cl-std=CL3.0 {attribute}"));
        let k = kernel(p, "slide");
        // Each sub-group computes 4 outputs per work-item, one tap per work-item.
        let (n, local) = (1000usize, 64usize);
        let items = n.div_ceil(4 * sub) * sub;
        let global = items.div_ceil(local) * local;
        let a: Vec<f32> = (0..n).map(|i| (i * 7 % 13) as f32).collect();
        let v: Vec<f32> = (0..sub).map(|k| (k % 5 + 1) as f32).collect();
        let (ba, bv, bout) = (buffer_of(&env, &a), buffer_of(&env, &v), env.buffer(0, n * 4, null_mut()));
        set_arg(k, 0, &ba);
        set_arg(k, 1, &bv);
        set_arg(k, 2, &bout);
        set_arg(k, 3, &(n as i32));
        run(&env, k, &[global], Some(&[local]));
        assert!(!runs_as_fibers(p, "slide"));
        let out: Vec<f32> = read_as(&env, bout, n);
        for (o, got) in out.iter().enumerate() {
            let want: f32 = (0..sub).map(|k| a.get(o + k).copied().unwrap_or(0.0) * v[k]).sum();
            assert_eq!(*got, want, "sub-groups of {sub}: output {o}");
        }
        for b in [ba, bv, bout] {
            ok!(cl!(clReleaseMemObject(b)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// dpctl's elementwise kernels: a sub-group reads a whole block with its collectives
/// where the block is in range, element by element otherwise. The branch is alike within
/// each sub-group only, so the kernel runs as fibers; groups whose sub-groups are the
/// SIMD chunks run its flat copy.
const SUB_GROUP_BLOCKS: &str = r#"
kernel void blocks(global const float *in, global float *out, int n) {
    int lid = (int)get_sub_group_local_id(), size = (int)get_sub_group_size();
    int base = ((int)get_group_id(0) * (int)get_num_sub_groups() + (int)get_sub_group_id()) * 32;
    if (base + 32 <= n) {
        sub_group_barrier(CLK_GLOBAL_MEM_FENCE);
        float first = sub_group_broadcast(in[base + lid], 0);
        for (int j = lid; j < 32; j += size) out[base + j] = in[base + j] * 2.0f + first;
    } else {
        for (int j = base + lid; j < n; j += size) out[j] = in[j] * 2.0f + in[base];
    }
}
"#;

#[test]
fn sub_group_blocks_under_a_branch_alike_per_sub_group_run_flat_or_as_fibers() {
    let env = Env::new();
    let p = build(&env, SUB_GROUP_BLOCKS, "-cl-std=CL3.0");
    let k = kernel(p, "blocks");
    let n = 5000usize;
    let input: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
    // Groups of 64: sub-groups of 8 are the SIMD chunks (flat). Groups of 60: each row
    // ends in a sub-group of 4 (fibers).
    for local in [64usize, 60] {
        let groups = n.div_ceil(local.div_ceil(8) * 32) + 1;
        let (bin, bout) = (buffer_of(&env, &input), env.buffer(0, n * 4, null_mut()));
        set_arg(k, 0, &bin);
        set_arg(k, 1, &bout);
        set_arg(k, 2, &(n as i32));
        run(&env, k, &[groups * local], Some(&[local]));
        let out: Vec<f32> = read_as(&env, bout, n);
        for (i, got) in out.iter().enumerate() {
            // Each sub-group's block of 32 elements adds its first.
            assert_eq!(*got, input[i] * 2.0 + input[i / 32 * 32], "groups of {local}: element {i}");
        }
        for b in [bin, bout] {
            ok!(cl!(clReleaseMemObject(b)));
        }
    }
    assert!(runs_as_fibers(p, "blocks"));
    assert!(has_flat_entry(p, "blocks"));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const FLOAT_ATOMICS: &str = r#"
kernel void float_atomics(global atomic_float *f, global atomic_double *d, global float *per_group) {
    local atomic_float lsum, lmax;
    size_t g = get_global_id(0), l = get_local_id(0);
    if (l == 0) {
        atomic_init(&lsum, 0.0f);
        atomic_init(&lmax, -1.0f);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float x = (float)(g % 13) * 0.25f;
    atomic_fetch_add(&f[0], x);
    atomic_fetch_sub_explicit(&f[1], 1.0f, memory_order_relaxed);
    atomic_fetch_min_explicit((volatile generic atomic_float *)&f[2], x - 1.0f, memory_order_relaxed, memory_scope_device);
    atomic_fetch_max(&f[3], x);
    atomic_fetch_add_explicit(&d[0], (double)g, memory_order_acq_rel, memory_scope_device);
    atomic_fetch_min(&d[1], -(double)g);
    atomic_fetch_add_explicit(&lsum, 1.0f, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_max_explicit(&lmax, (float)l, memory_order_relaxed);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) per_group[get_group_id(0)] = atomic_load(&lsum) * 1000.0f + atomic_load(&lmax);
}
"#;

/// cl_ext_float_atomics: add, sub, min and max on floats and doubles in global, local
/// and generic memory, every work-item of several groups at once (on 2 or more cores,
/// contended); the sums of values exact in binary are exact.
#[test]
fn float_atomics_add_sub_min_and_max_under_contention() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|x| x == "cl_ext_float_atomics"), "{ext}");
    for query in [0x4231, 0x4232] {
        let caps: u64 = device_info(env.device, query);
        assert_eq!(caps, 0x7 | 0x7 << 16, "{query:#x}: load/store, add, min/max in global and local memory");
    }
    let p = build(&env, FLOAT_ATOMICS, "-cl-std=CL3.0");
    let k = kernel(p, "float_atomics");
    let (n, local) = (4096usize, 256usize);
    let floats = [0.0f32, 0.0, 100.0, -1.0];
    let doubles = [0.0f64, 0.0];
    let (bf, bd) = (buffer_of(&env, &floats), buffer_of(&env, &doubles));
    let bg = env.buffer(0, n / local * 4, null_mut());
    set_arg(k, 0, &bf);
    set_arg(k, 1, &bd);
    set_arg(k, 2, &bg);
    run(&env, k, &[n], Some(&[local]));
    let f: Vec<f32> = read_as(&env, bf, 4);
    let d: Vec<f64> = read_as(&env, bd, 2);
    let groups: Vec<f32> = read_as(&env, bg, n / local);
    let sum: f32 = (0..n).map(|g| (g % 13) as f32 * 0.25).sum();
    assert_eq!(f, [sum, -(n as f32), -1.0, 3.0]);
    assert_eq!(d, [(n * (n - 1) / 2) as f64, -((n - 1) as f64)]);
    assert!(groups.iter().all(|&v| v == local as f32 * 1000.0 + (local - 1) as f32), "{groups:?}");
    for b in [bf, bd, bg] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// cl_khr_kernel_clock: every scope reads one clock, so readings in a work-item never
/// go back and a later launch reads later than an earlier one finished.
const CLOCKS: &str = r#"
kernel void clocks(global ulong *out) {
    size_t i = get_global_id(0);
    ulong a = clock_read_device();
    uint2 h = clock_read_hilo_work_group();
    ulong b = clock_read_work_group();
    uint2 s = clock_read_hilo_sub_group();
    ulong c = clock_read_sub_group();
    ulong d = clock_read_device();
    out[6 * i] = a;
    out[6 * i + 1] = ((ulong)h.y << 32) | h.x;
    out[6 * i + 2] = b;
    out[6 * i + 3] = ((ulong)s.y << 32) | s.x;
    out[6 * i + 4] = c;
    out[6 * i + 5] = d;
}
"#;

#[test]
fn kernel_clock_scopes_read_one_monotonic_clock() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|e| e == "cl_khr_kernel_clock"), "{ext}");
    let caps: cl_device_kernel_clock_capabilities_khr =
        device_info(env.device, CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR);
    assert_eq!(
        caps,
        CL_DEVICE_KERNEL_CLOCK_SCOPE_DEVICE_KHR
            | CL_DEVICE_KERNEL_CLOCK_SCOPE_WORK_GROUP_KHR
            | CL_DEVICE_KERNEL_CLOCK_SCOPE_SUB_GROUP_KHR
    );
    let n = 256;
    let mut finished = 0u64;
    for options in ["-cl-std=CL3.0", "-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let p = build(&env, CLOCKS, options);
        let k = kernel(p, "clocks");
        let out = env.buffer(0, n * 6 * 8, null_mut());
        set_arg(k, 0, &out);
        run(&env, k, &[n], Some(&[64]));
        let t: Vec<u64> = read_as(&env, out, n * 6);
        for (i, r) in t.chunks(6).enumerate() {
            assert!(r.windows(2).all(|w| w[0] <= w[1]), "{options}: work-item {i} read {r:?}");
            assert!(r[0] >= finished, "{options}: work-item {i} read {} before the last launch's {finished}", r[0]);
        }
        finished = t.chunks(6).map(|r| r[5]).max().unwrap();
        ok!(cl!(clReleaseMemObject(out)));
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// cl_intel_subgroups through OpenCL C: shuffles of scalars and vectors (one operand,
/// two, xor) and block reads and writes of buffers, in sub-groups of 8 and of 16.
const INTEL_SUBGROUPS: &str = r#"
#ifndef SIZE
#define SIZE
#endif
SIZE kernel void shuffles(global const float4 *f, global const int *x, global float4 *out4, global int *outi) {
    size_t i = get_global_id(0);
    uint l = get_sub_group_local_id(), n = get_max_sub_group_size();
    float4 v = f[i];
    out4[i * 4] = intel_sub_group_shuffle(v, (l + 3) % n);
    out4[i * 4 + 1] = intel_sub_group_shuffle_xor(v, 5u);
    out4[i * 4 + 2] = intel_sub_group_shuffle_down(v, v * 2.0f, 3u);
    out4[i * 4 + 3] = intel_sub_group_shuffle_up(v * 3.0f, v, 2u);
    int y = x[i];
    outi[i * 4] = intel_sub_group_shuffle(y, n - 1 - l);
    outi[i * 4 + 1] = intel_sub_group_shuffle_xor(y, 1u);
    outi[i * 4 + 2] = intel_sub_group_shuffle_down(y, y + 100, 5u);
    outi[i * 4 + 3] = intel_sub_group_shuffle_up(y - 100, y, 6u);
}
SIZE kernel void blocks(global uint *in, global uint *out) {
    uint n = get_max_sub_group_size();
    uint sg = get_sub_group_id() + get_num_sub_groups() * get_group_id(0);
    global uint *p = in + sg * n * 8;
    uint a = intel_sub_group_block_read(p);
    uint2 b = intel_sub_group_block_read2(p + n);
    uint4 c = intel_sub_group_block_read4(p);
    uint8 d = intel_sub_group_block_read8(p);
    size_t i = get_global_id(0);
    global uint *o = out + i * 15;
    o[0] = a;
    o[1] = b.x; o[2] = b.y;
    o[3] = c.x; o[4] = c.y; o[5] = c.z; o[6] = c.w;
    o[7] = d.s0; o[8] = d.s1; o[9] = d.s2; o[10] = d.s3; o[11] = d.s4; o[12] = d.s5; o[13] = d.s6; o[14] = d.s7;
    global uint *q = out + get_global_size(0) * 15 + sg * n * 8;
    intel_sub_group_block_write8(q, d + 1u);
    intel_sub_group_block_write2(q + n * 2, b + 2u);
    intel_sub_group_block_write(q + n * 7, a + 3u);
}
"#;

#[test]
fn intel_sub_group_shuffles_and_block_reads_and_writes() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|e| e == "cl_intel_subgroups"), "{ext}");
    let (groups, local) = (4usize, 64usize);
    let total = groups * local;
    for (size, options) in
        [(8usize, String::new()), (16, "-DSIZE=__attribute__((intel_reqd_sub_group_size(16)))".into())]
    {
        let p = build(&env, INTEL_SUBGROUPS, &options);
        let at = |i: usize| -> (usize, usize) { (i / size * size, i % size) };

        let k = kernel(p, "shuffles");
        let f: Vec<f32> = (0..total * 4).map(|i| i as f32 * 0.5 - 7.0).collect();
        let x: Vec<i32> = (0..total as i32).map(|i| i * 37 % 101 - 50).collect();
        let (bf, bx) = (buffer_of(&env, &f), buffer_of(&env, &x));
        let (o4, oi) = (env.buffer(0, total * 64, null_mut()), env.buffer(0, total * 16, null_mut()));
        for (i, b) in [bf, bx, o4, oi].iter().enumerate() {
            set_arg(k, i as cl_uint, b);
        }
        run(&env, k, &[total], Some(&[local]));
        let (got4, goti) = (read_as::<f32>(&env, o4, total * 16), read_as::<i32>(&env, oi, total * 4));
        let v = |j: usize| -> [f32; 4] { [f[4 * j], f[4 * j + 1], f[4 * j + 2], f[4 * j + 3]] };
        let scaled = |a: [f32; 4], s: f32| a.map(|c| c * s);
        for i in 0..total {
            let (b, l) = at(i);
            let down = |cur: &dyn Fn(usize) -> [f32; 4], next: &dyn Fn(usize) -> [f32; 4], d: usize| {
                if l + d < size {
                    cur(b + l + d)
                } else {
                    next(b + l + d - size)
                }
            };
            let up = |prev: &dyn Fn(usize) -> [f32; 4], cur: &dyn Fn(usize) -> [f32; 4], d: usize| {
                if d <= l {
                    cur(b + l - d)
                } else {
                    prev(b + size - (d - l))
                }
            };
            let want = [
                v(b + (l + 3) % size),
                v(b + (l ^ 5)),
                down(&v, &|j| scaled(v(j), 2.0), 3),
                up(&|j| scaled(v(j), 3.0), &v, 2),
            ];
            for (s, w) in want.iter().enumerate() {
                assert_eq!(
                    got4[(i * 4 + s) * 4..(i * 4 + s) * 4 + 4],
                    w[..],
                    "sub-groups of {size}: float4 {s} of {i}"
                );
            }
            let xd = if l + 5 < size { x[b + l + 5] } else { x[b + l + 5 - size] + 100 };
            let xu = if 6 <= l { x[b + l - 6] } else { x[b + size - (6 - l)] - 100 };
            let wanti = [x[b + size - 1 - l], x[b + (l ^ 1)], xd, xu];
            assert_eq!(goti[i * 4..i * 4 + 4], wanti, "sub-groups of {size}: int shuffles of {i}");
        }
        for m in [bf, bx, o4, oi] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));

        let k = kernel(p, "blocks");
        let input: Vec<u32> = (0..total as u32 * 8).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let (bin, out) = (buffer_of(&env, &input), env.buffer(0, total * (15 + 8) * 4, null_mut()));
        set_arg(k, 0, &bin);
        set_arg(k, 1, &out);
        run(&env, k, &[total], Some(&[local]));
        let got = read_as::<u32>(&env, out, total * (15 + 8));
        for i in 0..total {
            let (b, l) = at(i);
            let p = |k: usize| input[b * 8 + l + k * size];
            let mut want = vec![p(0), p(1), p(2)];
            want.extend((0..4).map(p));
            want.extend((0..8).map(p));
            assert_eq!(got[i * 15..i * 15 + 15], want[..], "sub-groups of {size}: block reads of {i}");
        }
        let written = &got[total * 15..];
        for (j, &w) in written.iter().enumerate() {
            let (sg, k) = (j / (size * 8), j % (size * 8) / size);
            let want = match k {
                2 | 3 => input[j - 2 * size + size] + 2,
                7 => input[j - 7 * size] + 3,
                _ => input[j] + 1,
            };
            assert_eq!(w, want, "sub-groups of {size}: block writes, sub-group {sg} row {k}");
        }
        for m in [bin, out] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

const NON_UNIFORM: &str = "kernel void nu(global const int *in, global int *out, uint mask) {
    const size_t n = get_global_size(0), g = get_global_id(0);
    uint l = get_sub_group_local_id();
    out[6 * n + g] = get_sub_group_size();
    for (int f = 0; f < 6; f++) out[f * n + g] = -1;
    if ((1u << l) & mask) {
        out[g] = sub_group_non_uniform_reduce_add(in[g]);
        out[n + g] = sub_group_non_uniform_scan_inclusive_add(in[g]);
        out[2 * n + g] = sub_group_elect();
        out[3 * n + g] = sub_group_non_uniform_all(in[g] > 0);
        out[4 * n + g] = (int)sub_group_ballot(in[g] > 1).x;
        out[5 * n + g] = sub_group_broadcast_first((int)l);
    }
}
kernel void halves(global const int *in, global int *out) {
    size_t g = get_global_id(0);
    if (get_sub_group_local_id() < get_sub_group_size() / 2)
        out[g] = sub_group_broadcast_first(in[g]);
    else
        out[g] = sub_group_non_uniform_reduce_add(in[g]);
}";

#[test]
fn non_uniform_sub_group_functions_see_the_work_items_in_the_call() {
    let env = Env::new();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, n, v, r)));
    for e in ["cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_vote", "cl_khr_subgroup_non_uniform_arithmetic"] {
        assert!(extensions.split(' ').any(|x| x == e), "{e}: {extensions}");
    }
    let p = build(&env, NON_UNIFORM, "-cl-std=CL3.0");
    let k = kernel(p, "nu");
    const N: usize = 256;
    let input: Vec<i32> = (0..N as i32).map(|g| g % 5).collect();
    let in_buf = buffer_of(&env, &input);
    let out = buffer_of(&env, &vec![0i32; 7 * N]);
    for mask in [0xffff_ffffu32, 0x0000_f0f0, 0x5555_aaaa, 0x8000_0001, 0] {
        set_arg(k, 0, &in_buf);
        set_arg(k, 1, &out);
        set_arg(k, 2, &mask);
        run(&env, k, &[N], Some(&[64]));
        let got: Vec<i32> = read_as(&env, out, 7 * N);
        let size = got[6 * N] as usize;
        assert!(got[6 * N..].iter().all(|&s| s as usize == size), "one sub-group size");
        for first in (0..N).step_by(size) {
            let lanes: Vec<usize> = (0..size).filter(|&l| mask & (1 << l) != 0).collect();
            let sum: i32 = lanes.iter().map(|&l| input[first + l]).sum();
            for l in 0..size {
                let g = first + l;
                let field = |f: usize| got[f * N + g];
                if !lanes.contains(&l) {
                    assert!((0..6).all(|f| field(f) == -1), "work-item {g} is not in the call (mask {mask:#x})");
                    continue;
                }
                let scan: i32 = lanes.iter().filter(|&&m| m <= l).map(|&m| input[first + m]).sum();
                let ballot = lanes.iter().filter(|&&m| input[first + m] > 1).fold(0u32, |b, &m| b | 1 << m);
                let all = lanes.iter().all(|&m| input[first + m] > 0);
                let want = [sum, scan, (l == lanes[0]) as i32, all as i32, ballot as i32, lanes[0] as i32];
                let have: Vec<i32> = (0..6).map(field).collect();
                assert_eq!(have, want, "work-item {g}, lane {l}, mask {mask:#x}");
            }
        }
    }
    // Each branch's call sees its own half, though the two halves' calls are under way
    // at once.
    let halves = kernel(p, "halves");
    set_arg(halves, 0, &in_buf);
    set_arg(halves, 1, &out);
    run(&env, halves, &[N], Some(&[64]));
    let got: Vec<i32> = read_as(&env, out, N);
    let size = read_as::<i32>(&env, out, 7 * N)[6 * N] as usize;
    for (g, &have) in got.iter().enumerate() {
        let (first, l) = (g - g % size, g % size);
        let want = match l < size / 2 {
            true => input[first],
            false => input[first + size / 2..first + size].iter().sum(),
        };
        assert_eq!(have, want, "work-item {g}");
    }
    ok!(cl!(clReleaseKernel(halves)));
    ok!(cl!(clReleaseKernel(k)));
    for m in [in_buf, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}
