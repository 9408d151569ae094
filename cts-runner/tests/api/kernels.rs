//! Kernels through the loader with the real clang: results compared with host
//! references, barrier-heavy kernels, local memory isolation, ranges with offsets,
//! argument kinds, queries and bad input.

use crate::common::*;

const SOURCES: &str = r#"
typedef struct { float scale; int add; char tag; float4 v; } Params;

kernel void ids(global uint *out, uint dims) {
    size_t g = get_global_linear_id() - 0;
    size_t flat = 0, stride = 1;
    for (uint d = 0; d < dims; d++) { flat += (get_global_id(d) - get_global_offset(d)) * stride; stride *= get_global_size(d); }
    global uint *o = out + flat * 12;
    for (uint d = 0; d < 3; d++) {
        o[d] = get_global_id(d); o[3 + d] = get_local_id(d); o[6 + d] = get_group_id(d); o[9 + d] = get_num_groups(d);
    }
}

// Asks only global ids and sizes: the driver may run several of its groups as one.
kernel void global_only(global uint *out, global uint *runs) {
    size_t flat = get_global_linear_id();
    out[flat * 4] = get_global_id(0); out[flat * 4 + 1] = get_global_id(1); out[flat * 4 + 2] = get_global_id(2);
    out[flat * 4 + 3] = get_work_dim() * 1000000 + get_global_size(0) * 1000 + get_global_offset(0);
    atomic_inc(&runs[flat]);
}

// Reads its group's ids and sizes, and shares nothing with the group: the driver may run
// several of its groups in one call, looping over them.
kernel void group_ids(global uint *out, global uint *runs) {
    size_t flat = get_global_linear_id();
    global uint *o = out + flat * 8;
    o[0] = get_group_id(0); o[1] = get_group_id(1) * 1000 + get_group_id(2);
    o[2] = get_local_id(0); o[3] = get_local_id(1) * 1000 + get_local_id(2);
    o[4] = get_local_size(0); o[5] = get_local_size(1) * 1000 + get_local_size(2);
    o[6] = get_local_linear_id();
    o[7] = get_enqueued_local_size(0) * 100000 + get_num_groups(0);
    atomic_inc(&runs[flat]);
}

kernel void matmul(global const float *a, global const float *b, global float *c, int n) {
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

kernel void reduce(global const int *in, global int *out, local int *scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = scratch[0];
}

// Regions behind tests of the local id in x, which the item loop stops at: a signed
// bound that shrinks below zero, in two-dimensional groups, then `l == 2`.
kernel void below_k(global int *out, int k) {
    local int s[4][16];
    int l = get_local_id(0), y = get_local_id(1);
    s[y][l] = 0;
    for (int r = 1; r <= 4; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < k) s[y][l] += r;
        k = k - 3;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 2) s[y][0] += 100 * (y + 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = s[y][l];
}

// Halving sums in a loop of barriers over a bound each pass shrinks, then one
// work-item's write at the end: a region ends at the barrier or at the kernel's end.
kernel void halving_sum(global const int *in, int n, global int *partial, global int *total) {
    int l = get_local_id(0), size = get_local_size(0), i;
    partial[l] = 0;
    for (i = l; i < n; i += size) partial[l] += in[i];
    for (i = hadd(size, 1); size > 1; i = hadd(i, 1)) {
        barrier(CLK_GLOBAL_MEM_FENCE);
        if (l + i < size) partial[l] += partial[l + i];
        size = i;
    }
    if (l == 0) *total = partial[0];
}

kernel void isolation(global int *errors, local int *arg_mem) {
    local int var_mem[64];
    int g = get_group_id(0), l = get_local_id(0);
    for (int round = 0; round < 8; round++) {
        var_mem[l] = g * 1000 + round; arg_mem[l] = -(g * 1000 + round);
        barrier(CLK_LOCAL_MEM_FENCE);
        int bad = 0;
        for (int i = 0; i < get_local_size(0); i++)
            bad += (var_mem[i] != g * 1000 + round) + (arg_mem[i] != -(g * 1000 + round));
        barrier(CLK_LOCAL_MEM_FENCE);
        if (bad) atomic_add(&errors[g], bad);
    }
}

kernel void nested(global int *out) {
    local int counter[1];
    int l = get_local_id(0);
    if (l == 0) counter[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 4; i++) {
        if (i % 2 == 0) {
            for (int j = 0; j < 2; j++) {
                if (l == 0) counter[0] += 1;
                work_group_barrier(CLK_LOCAL_MEM_FENCE);
            }
        } else {
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    out[get_global_id(0)] = counter[0];
}

kernel void args(global float *out, Params p, int3 v3, char c, ulong big, global int *maybe_null) {
    out[0] = p.scale; out[1] = p.add; out[2] = p.tag; out[3] = p.v.w;
    out[4] = v3.z; out[5] = c; out[6] = (float)(big >> 40); out[7] = maybe_null == 0;
}

constant int table[4] = { 10, 20, 30, 40 };
kernel void lookup(global int *out) { out[get_global_id(0)] = table[get_global_id(0) % 4]; }

kernel void sizes(global uint *out) {
    size_t i = get_global_id(0);
    out[i * 2] = get_local_size(0); out[i * 2 + 1] = get_enqueued_local_size(0);
}

kernel void wide(local double16 *scratch, double16 v, global double16 *out) {
    size_t l = get_local_id(0);
    scratch[l] = v + (double16)(l);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[get_local_size(0) - 1 - l];
}

__attribute__((reqd_work_group_size(8, 1, 1)))
kernel void fixed(global int *out) { out[get_global_id(0)] = get_local_size(0); }

// Rotates each group's global ids by one through local memory. With the attribute its
// groups of the declared size run a loop where the size is a constant, a partial last
// group the general one; without it, launched long enough in groups of one size, it
// gets a second build with a loop for that size.
#define ROTATE(name, attribute) attribute kernel void name(global uint *out) { \
    local uint t[64]; \
    uint l = get_local_id(0), n = get_local_size(0); \
    t[l] = get_global_id(0); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    out[get_global_id(0)] = t[(l + 1) % n] * 100 + n; \
}
ROTATE(rotate, )
ROTATE(fixed_rotate, __attribute__((reqd_work_group_size(16, 1, 1))))
"#;

fn programs(env: &Env) -> cl_program {
    build(env, SOURCES, "-cl-std=CL3.0 -cl-kernel-arg-info")
}

#[test]
fn ids_in_three_dimensions_with_offsets() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "ids");
    let (global, local, offset) = ([8usize, 6, 4], [4usize, 3, 2], [5usize, 7, 9]);
    let n: usize = global.iter().product();
    let out = env.buffer(0, n * 12 * 4, null_mut());
    set_arg(k, 0, &out);
    set_arg(k, 1, &3u32);
    ok!(cl!(clEnqueueNDRangeKernel(
        env.queue,
        k,
        3,
        offset.as_ptr(),
        global.as_ptr(),
        local.as_ptr(),
        0,
        null(),
        null_mut()
    )));
    let got: Vec<u32> = read_as(&env, out, n * 12);
    for z in 0..global[2] {
        for y in 0..global[1] {
            for x in 0..global[0] {
                let idx = [x, y, z];
                let flat = (z * global[1] + y) * global[0] + x;
                let o = &got[flat * 12..flat * 12 + 12];
                for d in 0..3 {
                    assert_eq!(o[d] as usize, idx[d] + offset[d], "global id");
                    assert_eq!(o[3 + d] as usize, idx[d] % local[d], "local id");
                    assert_eq!(o[6 + d] as usize, idx[d] / local[d], "group id");
                    assert_eq!(o[9 + d] as usize, global[d] / local[d], "num groups");
                }
            }
        }
    }
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// The ranges the merging tests run: partial last groups, offsets, one to three
/// dimensions, groups of 1 and of 2048.
const MERGE_CASES: [(&[usize], &[usize], &[usize]); 5] = [
    (&[100_000], &[64], &[3]),
    (&[4099], &[1], &[0]),
    (&[37, 5, 3], &[4, 2, 2], &[3, 1, 2]),
    (&[301, 7], &[16, 3], &[0, 5]),
    (&[8193, 2], &[2048, 1], &[1, 1]),
];

/// Runs kernel `name` (arguments: `per` uints of output a work-item, a run counter) over
/// `MERGE_CASES`, and checks that every work-item ran once and wrote
/// `want(global, local, offset, index)`.
fn each_work_item_once(name: &str, per: usize, want: impl Fn(&[usize], &[usize], &[usize], [usize; 3]) -> Vec<usize>) {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, name);
    for (global, local, offset) in MERGE_CASES {
        let dims = global.len();
        let n: usize = global.iter().product();
        let out = env.buffer(0, n * per * 4, null_mut());
        let runs = buffer_of(&env, &vec![0u32; n]);
        set_arg(k, 0, &out);
        set_arg(k, 1, &runs);
        ok!(cl!(clEnqueueNDRangeKernel(
            env.queue,
            k,
            dims as cl_uint,
            offset.as_ptr(),
            global.as_ptr(),
            local.as_ptr(),
            0,
            null(),
            null_mut()
        )));
        let got: Vec<u32> = read_as(&env, out, n * per);
        let ran: Vec<u32> = read_as(&env, runs, n);
        let size = |d: usize| global.get(d).copied().unwrap_or(1);
        for flat in 0..n {
            let idx = [flat % size(0), flat / size(0) % size(1), flat / (size(0) * size(1))];
            let o: Vec<usize> = got[flat * per..(flat + 1) * per].iter().map(|&v| v as usize).collect();
            assert_eq!(
                o,
                want(global, local, offset, idx),
                "{name}, {global:?} in groups of {local:?}: work-item {idx:?}"
            );
            assert_eq!(
                ran[flat], 1,
                "{name}, {global:?} in groups of {local:?}: work-item {idx:?} ran {} times",
                ran[flat]
            );
        }
        for m in [out, runs] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Kernels that cannot tell their groups apart run consecutive groups of a row as one:
/// every work-item still runs once, with its ids.
#[test]
fn group_blind_kernels_run_every_work_item_once() {
    each_work_item_once("global_only", 4, |global, _, offset, idx| {
        let at = |d: usize| offset.get(d).copied().unwrap_or(0);
        vec![idx[0] + at(0), idx[1] + at(1), idx[2] + at(2), global.len() * 1_000_000 + global[0] * 1000 + at(0)]
    });
}

/// Kernels that read group ids but share nothing run consecutive groups of a row in one
/// call: every work-item still runs once, and sees its own group's ids and sizes (the
/// last group of a row partial).
#[test]
fn group_id_kernels_see_their_own_group() {
    each_work_item_once("group_ids", 8, |global, local, _, idx| {
        let size = |d: usize| global.get(d).copied().unwrap_or(1);
        let wide = |d: usize| local.get(d).copied().unwrap_or(1);
        let group = [0, 1, 2].map(|d| idx[d] / wide(d));
        let lid = [0, 1, 2].map(|d| idx[d] % wide(d));
        let lsz = [0, 1, 2].map(|d| wide(d).min(size(d) - group[d] * wide(d)));
        vec![
            group[0],
            group[1] * 1000 + group[2],
            lid[0],
            lid[1] * 1000 + lid[2],
            lsz[0],
            lsz[1] * 1000 + lsz[2],
            (lid[2] * lsz[1] + lid[1]) * lsz[0] + lid[0],
            wide(0) * 100_000 + size(0).div_ceil(wide(0)),
        ]
    });
}

/// Runs `rotate` or `fixed_rotate` over 100 work-items in groups of 16 (the last one
/// partial) and checks every result.
fn check_rotate(env: &Env, k: cl_kernel) {
    let n = 100usize;
    let out = env.buffer(0, n * 4, null_mut());
    set_arg(k, 0, &out);
    run(env, k, &[n], Some(&[16]));
    let got: Vec<u32> = read_as(env, out, n);
    for (g, &v) in got.iter().enumerate() {
        let (first, size) = (g / 16 * 16, 16.min(n - g / 16 * 16));
        let want = (first + (g - first + 1) % size) * 100 + size;
        assert_eq!(v as usize, want, "work-item {g}");
    }
    ok!(cl!(clReleaseMemObject(out)));
}

/// A kernel declaring `reqd_work_group_size` sees the right size in full groups and in
/// a partial last one.
#[test]
fn required_group_size_kernels_in_full_and_partial_groups() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "fixed_rotate");
    check_rotate(&env, k);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// A kernel with barriers that has run long enough in groups of one size gets a second
/// build of its program with a loop for that size, made in the background
/// (`FERROCL_SIZE_BUILD_MS`, 0 here: at the first launch); launches before and after it
/// give the same results, in full groups and in a partial last one. In a child process,
/// for its environment and a cache directory of its own.
#[test]
fn a_second_build_for_the_group_size_gives_the_same_results() {
    let _ = platform_device();
    let dir = std::env::temp_dir().join(format!("ferrocl-size-build-{}", std::process::id()));
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["kernels::second_build_child", "--exact", "--ignored", "--nocapture"])
        .env("FERROCL_SIZE_BUILD_MS", "0")
        .env("FERROCL_CACHE_DIR", &dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}

#[test]
#[ignore = "run by a_second_build_for_the_group_size_gives_the_same_results, in its environment"]
fn second_build_child() {
    let dir = std::path::PathBuf::from(std::env::var_os("FERROCL_CACHE_DIR").expect("a cache directory"));
    let libraries = || {
        std::fs::read_dir(&dir)
            .map_or(0, |d| d.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "so")).count())
    };
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "rotate");
    let first = libraries();
    assert!(first >= 1, "the program's library is in the cache");
    // The first launch starts the second build.
    check_rotate(&env, k);
    let start = std::time::Instant::now();
    while libraries() == first {
        // At nice 19 beside the other tests the build may take a while.
        assert!(start.elapsed().as_secs() < 300, "no second build");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Loaded by the build's thread after it is stored: give it a moment.
    std::thread::sleep(std::time::Duration::from_millis(200));
    for _ in 0..3 {
        check_rotate(&env, k);
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn tiled_matmul_matches_host() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "matmul");
    let n = 64usize;
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let (ba, bb, bc) = (buffer_of(&env, &a), buffer_of(&env, &b), env.buffer(0, n * n * 4, null_mut()));
    set_arg(k, 0, &ba);
    set_arg(k, 1, &bb);
    set_arg(k, 2, &bc);
    set_arg(k, 3, &(n as i32));
    run(&env, k, &[n, n], Some(&[16, 16]));
    let c: Vec<f32> = read_as(&env, bc, n * n);
    for r in 0..n {
        for col in 0..n {
            let want: f32 = (0..n).map(|i| a[r * n + i] * b[i * n + col]).sum();
            assert_eq!(c[r * n + col], want, "c[{r}][{col}]");
        }
    }
    for m in [ba, bb, bc] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn reduction_with_barriers_in_a_loop() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "reduce");
    for group in [1usize, 2, 64, 256, 1024] {
        let n = group * 16;
        let data: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 50).collect();
        let (bi, bo) = (buffer_of(&env, &data), env.buffer(0, 16 * 4, null_mut()));
        set_arg(k, 0, &bi);
        set_arg(k, 1, &bo);
        ok!(cl!(clSetKernelArg(k, 2, group * 4, null())));
        run(&env, k, &[n], Some(&[group]));
        let got: Vec<i32> = read_as(&env, bo, 16);
        for (g, &v) in got.iter().enumerate() {
            assert_eq!(v, data[g * group..(g + 1) * group].iter().sum::<i32>(), "group size {group}, group {g}");
        }
        for m in [bi, bo] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn work_items_past_a_local_id_test_keep_their_values() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "below_k");
    let (w, h) = (32usize, 8usize);
    let out = env.buffer(0, w * h * 4, null_mut());
    set_arg(k, 0, &out);
    for k0 in [7i32, 16, 40, 0, -5] {
        set_arg(k, 1, &k0);
        run(&env, k, &[w, h], Some(&[16, 4]));
        let got: Vec<i32> = read_as(&env, out, w * h);
        for (i, &v) in got.iter().enumerate() {
            let (l, y) = ((i % w % 16) as i32, (i / w % 4) as i32);
            let mut want: i32 = (1..=4).filter(|r| l < k0 - 3 * (r - 1)).sum();
            if l == 0 {
                want += 100 * (y + 1);
            }
            assert_eq!(v, want, "k = {k0}, work-item ({}, {})", i % w, i / w);
        }
    }
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn a_loop_of_barriers_that_shrinks_its_bound_sums_every_element() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "halving_sum");
    let n = 1000usize;
    let data: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 1009 - 500).collect();
    let input = buffer_of(&env, &data);
    let (partial, total) = (env.buffer(0, 4096 * 4, null_mut()), env.buffer(0, 4, null_mut()));
    set_arg(k, 0, &input);
    set_arg(k, 1, &(n as i32));
    set_arg(k, 2, &partial);
    set_arg(k, 3, &total);
    // 256 first: the first launch's group size gets code of its own, where the SIMD
    // copy once ran the kernel's last block for lanes that had stopped at the barrier.
    for size in [256usize, 64, 1024, 4096, 100, 8, 3, 1] {
        run(&env, k, &[size], Some(&[size]));
        let got: Vec<i32> = read_as(&env, total, 1);
        assert_eq!(got[0], data.iter().sum::<i32>(), "group of {size}");
    }
    for m in [input, partial, total] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn local_memory_is_private_to_each_group() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "isolation");
    let groups = 256;
    let errors = buffer_of(&env, &vec![0i32; groups]);
    set_arg(k, 0, &errors);
    ok!(cl!(clSetKernelArg(k, 1, 64 * 4, null())));
    run(&env, k, &[groups * 64], Some(&[64]));
    let got: Vec<i32> = read_as(&env, errors, groups);
    assert!(got.iter().all(|&e| e == 0), "groups saw each other's local memory: {got:?}");
    ok!(cl!(clReleaseMemObject(errors)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn barriers_in_nested_control_flow() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "nested");
    let out = env.buffer(0, 256 * 4, null_mut());
    set_arg(k, 0, &out);
    run(&env, k, &[256], Some(&[32]));
    let got: Vec<i32> = read_as(&env, out, 256);
    assert!(got.iter().all(|&v| v == 4), "{got:?}");
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Params {
    scale: f32,
    add: i32,
    tag: i8,
    _pad: [u8; 7],
    v: [f32; 4],
}

#[test]
fn struct_vector_and_scalar_arguments() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "args");
    let out = env.buffer(0, 8 * 4, null_mut());
    set_arg(k, 0, &out);
    let params = Params { scale: 2.5, add: -7, tag: 9, _pad: [0; 7], v: [1.0, 2.0, 3.0, 4.5] };
    set_arg(k, 1, &params);
    set_arg(k, 2, &[1i32, 2, 3, 0]);
    set_arg(k, 3, &(-3i8));
    set_arg(k, 4, &(5u64 << 40));
    ok!(cl!(clSetKernelArg(k, 5, 8, null())));
    run(&env, k, &[1], None);
    let got: Vec<f32> = read_as(&env, out, 8);
    assert_eq!(got, vec![2.5, -7.0, 9.0, 4.5, 3.0, -3.0, 5.0, 1.0]);
    // Wrong sizes and indices.
    err!(CL_INVALID_ARG_SIZE, cl!(clSetKernelArg(k, 1, 8, (&params as *const Params).cast())));
    err!(CL_INVALID_ARG_SIZE, cl!(clSetKernelArg(k, 0, 4, (&out as *const cl_mem).cast())));
    err!(CL_INVALID_ARG_INDEX, cl!(clSetKernelArg(k, 6, 4, (&0i32 as *const i32).cast())));
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArg(k, 2, 16, null())));
    let not_mem = env.queue;
    err!(CL_INVALID_MEM_OBJECT, cl!(clSetKernelArg(k, 0, 8, (&not_mem as *const cl_command_queue).cast())));
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn program_scope_constants_and_tasks() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "lookup");
    let out = env.buffer(0, 8 * 4, null_mut());
    set_arg(k, 0, &out);
    run(&env, k, &[8], None);
    assert_eq!(read_as::<i32>(&env, out, 8), vec![10, 20, 30, 40, 10, 20, 30, 40]);
    let zeros = [0i32; 8];
    ok!(cl!(clEnqueueWriteBuffer(env.queue, out, CL_TRUE, 0, 32, zeros.as_ptr().cast(), 0, null(), null_mut())));
    let mut ev = null_mut();
    ok!(cl!(clEnqueueTask(env.queue, k, 0, null(), &mut ev)));
    ok!(cl!(clWaitForEvents(1, &ev)));
    assert_eq!(event_info::<cl_command_type>(ev, CL_EVENT_COMMAND_TYPE), CL_COMMAND_TASK);
    assert_eq!(read_as::<i32>(&env, out, 8), vec![10, 0, 0, 0, 0, 0, 0, 0]);
    ok!(cl!(clReleaseEvent(ev)));
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn non_uniform_groups_and_required_sizes() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "sizes");
    let out = env.buffer(0, 1000 * 8, null_mut());
    set_arg(k, 0, &out);
    run(&env, k, &[1000], Some(&[64]));
    let got: Vec<u32> = read_as(&env, out, 2000);
    for i in 0..1000 {
        assert_eq!(got[i * 2 + 1], 64, "enqueued local size");
        assert_eq!(got[i * 2], if i >= 960 { 40 } else { 64 }, "local size of item {i}");
    }
    let f = kernel(p, "fixed");
    set_arg(f, 0, &out);
    run(&env, f, &[64], None);
    assert!(read_as::<i32>(&env, out, 64).iter().all(|&v| v == 8));
    let (g, l) = ([64usize], [16usize]);
    err!(
        CL_INVALID_WORK_GROUP_SIZE,
        cl!(clEnqueueNDRangeKernel(env.queue, f, 1, null(), g.as_ptr(), l.as_ptr(), 0, null(), null_mut()))
    );
    let wg: [usize; 3] =
        info(|s, v, r| cl!(clGetKernelWorkGroupInfo(f, env.device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, s, v, r)));
    assert_eq!(wg, [8, 1, 1]);
    for o in [k, f] {
        ok!(cl!(clReleaseKernel(o)));
    }
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn kernel_queries() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "reduce");
    assert_eq!(info_string(|s, v, r| cl!(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, s, v, r))), "reduce");
    assert_eq!(info::<cl_uint>(|s, v, r| cl!(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, s, v, r))), 3);
    assert_eq!(info::<cl_program>(|s, v, r| cl!(clGetKernelInfo(k, CL_KERNEL_PROGRAM, s, v, r))), p);
    assert_eq!(info::<cl_context>(|s, v, r| cl!(clGetKernelInfo(k, CL_KERNEL_CONTEXT, s, v, r))), env.context);
    let arg = |i, q| info_bytes(|s, v, r| cl!(clGetKernelArgInfo(k, i, q, s, v, r)));
    assert_eq!(arg(0, CL_KERNEL_ARG_ADDRESS_QUALIFIER), CL_KERNEL_ARG_ADDRESS_GLOBAL.to_ne_bytes());
    assert_eq!(arg(2, CL_KERNEL_ARG_ADDRESS_QUALIFIER), CL_KERNEL_ARG_ADDRESS_LOCAL.to_ne_bytes());
    assert_eq!(arg(0, CL_KERNEL_ARG_TYPE_QUALIFIER), (CL_KERNEL_ARG_TYPE_CONST as cl_bitfield).to_ne_bytes());
    assert_eq!(info_string(|s, v, r| cl!(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_NAME, s, v, r))), "int*");
    assert_eq!(info_string(|s, v, r| cl!(clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_NAME, s, v, r))), "scratch");
    err!(CL_INVALID_ARG_INDEX, cl!(clGetKernelArgInfo(k, 3, CL_KERNEL_ARG_NAME, 0, null_mut(), null_mut())));
    let wg: usize = info(|s, v, r| cl!(clGetKernelWorkGroupInfo(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, s, v, r)));
    assert_eq!(wg, device_info::<usize>(env.device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
    ok!(cl!(clSetKernelArg(k, 2, 1000, null())));
    let lm: cl_ulong = info(|s, v, r| cl!(clGetKernelWorkGroupInfo(k, null_mut(), CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)));
    assert!(lm >= 1000);
    let iso = kernel(p, "isolation");
    let lm: cl_ulong =
        info(|s, v, r| cl!(clGetKernelWorkGroupInfo(iso, env.device, CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)));
    assert_eq!(lm, 256, "the kernel's own __local array");
    err!(
        CL_INVALID_VALUE,
        cl!(clGetKernelWorkGroupInfo(k, env.device, CL_KERNEL_GLOBAL_WORK_SIZE, 0, null_mut(), null_mut()))
    );
    // Clones copy the arguments set so far and run independently.
    let (c, e) = with_err(|e| cl!(clCloneKernel(k, e)));
    ok!(e);
    assert_eq!(info_string(|s, v, r| cl!(clGetKernelInfo(c, CL_KERNEL_FUNCTION_NAME, s, v, r))), "reduce");
    ok!(cl!(clRetainKernel(c)));
    assert_eq!(info::<cl_uint>(|s, v, r| cl!(clGetKernelInfo(c, CL_KERNEL_REFERENCE_COUNT, s, v, r))), 2);
    for o in [c, c, k, iso] {
        ok!(cl!(clReleaseKernel(o)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn bad_launches() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "reduce");
    let g = [1024usize, 1, 1];
    let enqueue = |dims: cl_uint, global: *const usize, local: *const usize| {
        cl!(clEnqueueNDRangeKernel(env.queue, k, dims, null(), global, local, 0, null(), null_mut()))
    };
    err!(CL_INVALID_KERNEL_ARGS, enqueue(1, g.as_ptr(), null()));
    let buf = env.buffer(0, 4096 * 4, null_mut());
    set_arg(k, 0, &buf);
    set_arg(k, 1, &buf);
    ok!(cl!(clSetKernelArg(k, 2, 4096, null())));
    err!(CL_INVALID_WORK_DIMENSION, enqueue(0, g.as_ptr(), null()));
    err!(CL_INVALID_WORK_DIMENSION, enqueue(4, g.as_ptr(), null()));
    // OpenCL 2.1 and later: a NULL global size is a command that does nothing (the
    // CTS's test_api zero_sized_enqueue); the error for it is deprecated.
    ok!(enqueue(1, null(), null()));
    ok!(enqueue(3, null(), null()));
    let max: usize = device_info(env.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    let too_big = [max * 2, 1, 1];
    err!(CL_INVALID_WORK_ITEM_SIZE, enqueue(1, too_big.as_ptr(), too_big.as_ptr()));
    // A huge group is its own error, not the overflow of the range it would cut.
    let huge = [usize::MAX / 2, 4, 1];
    err!(CL_INVALID_WORK_ITEM_SIZE, enqueue(2, huge.as_ptr(), huge.as_ptr()));
    err!(CL_INVALID_WORK_ITEM_SIZE, enqueue(3, huge.as_ptr(), huge.as_ptr()));
    err!(CL_INVALID_WORK_ITEM_SIZE, enqueue(1, g.as_ptr(), huge.as_ptr()));
    // A range whose work-items outnumber size_t.
    err!(CL_INVALID_GLOBAL_WORK_SIZE, enqueue(2, huge.as_ptr(), null()));
    // Each dimension within its limit, the product over the group limit.
    let square = [64usize, max / 32, 1];
    err!(CL_INVALID_WORK_GROUP_SIZE, enqueue(2, square.as_ptr(), square.as_ptr()));
    let zero = [0usize; 3];
    err!(CL_INVALID_WORK_GROUP_SIZE, enqueue(1, g.as_ptr(), zero.as_ptr()));
    let offset = [usize::MAX, 0, 0];
    err!(
        CL_INVALID_GLOBAL_OFFSET,
        cl!(clEnqueueNDRangeKernel(env.queue, k, 1, offset.as_ptr(), g.as_ptr(), null(), 0, null(), null_mut()))
    );
    // Too much __local memory for the device.
    let local: cl_ulong = device_info(env.device, CL_DEVICE_LOCAL_MEM_SIZE);
    ok!(cl!(clSetKernelArg(k, 2, local as usize + 1, null())));
    err!(CL_OUT_OF_RESOURCES, enqueue(1, g.as_ptr(), null()));
    err!(
        CL_INVALID_KERNEL,
        cl!(clEnqueueNDRangeKernel(
            env.queue,
            env.queue as cl_kernel,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut()
        ))
    );
    // Non-uniform groups need OpenCL C 2.0 or later.
    let reduce_only =
        &SOURCES[SOURCES.find("kernel void reduce").unwrap()..SOURCES.find("kernel void isolation").unwrap()];
    let old = build(&env, reduce_only, "-cl-std=CL1.2");
    let k12 = kernel(old, "reduce");
    set_arg(k12, 0, &buf);
    set_arg(k12, 1, &buf);
    ok!(cl!(clSetKernelArg(k12, 2, 4096, null())));
    let (g1000, l64) = ([1000usize], [64usize]);
    err!(
        CL_INVALID_WORK_GROUP_SIZE,
        cl!(clEnqueueNDRangeKernel(env.queue, k12, 1, null(), g1000.as_ptr(), l64.as_ptr(), 0, null(), null_mut()))
    );
    // A zero global size is a no-op.
    ok!(cl!(clSetKernelArg(k, 2, 4096, null())));
    ok!(enqueue(1, zero.as_ptr(), null()));
    ok!(cl!(clFinish(env.queue)));
    ok!(cl!(clReleaseMemObject(buf)));
    for o in [k, k12] {
        ok!(cl!(clReleaseKernel(o)));
    }
    for q in [p, old] {
        ok!(cl!(clReleaseProgram(q)));
    }
}

/// 128-byte vectors by value and in __local memory: clang uses aligned vector moves,
/// so argument blocks and local arenas must be 128-byte aligned (the CTS crashed here).
#[test]
fn widest_vectors_by_value_and_in_local_memory() {
    let env = Env::new();
    let p = programs(&env);
    let k = kernel(p, "wide");
    let n = 64;
    let out = env.buffer(0, n * 128, null_mut());
    let v: [f64; 16] = std::array::from_fn(|i| i as f64 * 0.5);
    ok!(cl!(clSetKernelArg(k, 0, 16 * 128, null())));
    set_arg(k, 1, &v);
    set_arg(k, 2, &out);
    run(&env, k, &[n], Some(&[16]));
    let got: Vec<f64> = read_as(&env, out, n * 16);
    for g in 0..n {
        let l = 15 - g % 16;
        for c in 0..16 {
            assert_eq!(got[g * 16 + c], v[c] + l as f64, "item {g} component {c}");
        }
    }
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// The same kernel four ways: barriers in its body (run as barrier regions, its private
/// array and a conditionally set variable kept in frame memory), barriers inside a
/// called function (inlined, so regions too), a kernel another kernel calls (run as
/// fibers), and the first built without optimisation.
const PRIVATE_STATE: &str = r#"
void sync_in_helper(void) { barrier(CLK_LOCAL_MEM_FENCE); }

#define BODY(SYNC) \
    local int ring[64]; \
    int l = get_local_linear_id(); \
    int n = get_local_size(0) * get_local_size(1) * get_local_size(2); \
    int priv[5]; \
    int cond_set = -1; \
    for (int i = 0; i < 5; i++) priv[i] = l * 10 + i; \
    if (l % 3 == 0) cond_set = l; \
    for (int r = 0; r < 3; r++) { \
        ring[l] = priv[r] + r; \
        SYNC; \
        priv[r + 2] += ring[(l + 1) % n]; \
        SYNC; \
    } \
    out[get_global_linear_id()] = priv[0] + priv[1] + priv[2] + priv[3] + priv[4] + cond_set;

kernel void in_body(global int *out) { BODY(barrier(CLK_LOCAL_MEM_FENCE)) }
/* Only d is live after the barrier; recomputing it reads x and y. */
kernel void chained(global int *out, int a, int b) {
    int x = a, y = b;
    int d = x - y;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = d;
}
kernel void in_helper(global int *out) { BODY(sync_in_helper()) }
kernel void called(global int *out) { BODY(barrier(CLK_LOCAL_MEM_FENCE)) }
kernel void calls(global int *out) { called(out); }
"#;

fn private_state_reference(items: usize) -> Vec<i32> {
    let mut priv_: Vec<[i32; 5]> = (0..items as i32).map(|l| [0, 1, 2, 3, 4].map(|i| l * 10 + i)).collect();
    for r in 0..3 {
        let ring: Vec<i32> = priv_.iter().map(|p| p[r] + r as i32).collect();
        for (l, p) in priv_.iter_mut().enumerate() {
            p[r + 2] += ring[(l + 1) % items];
        }
    }
    priv_.iter().enumerate().map(|(l, p)| p.iter().sum::<i32>() + if l % 3 == 0 { l as i32 } else { -1 }).collect()
}

#[test]
fn private_state_survives_barriers_in_three_dimensions() {
    let env = Env::new();
    let (global, local) = ([8usize, 4, 4], [4usize, 2, 2]);
    let group = private_state_reference(16);
    for (options, name) in [
        ("-cl-std=CL3.0", "in_body"),
        ("-cl-std=CL3.0", "in_helper"),
        ("-cl-std=CL3.0", "called"),
        ("-cl-std=CL3.0 -cl-opt-disable", "in_body"),
    ] {
        let p = build(&env, PRIVATE_STATE, options);
        let k = kernel(p, name);
        let out = env.buffer(0, 128 * 4, null_mut());
        set_arg(k, 0, &out);
        run(&env, k, &global, Some(&local));
        let got: Vec<i32> = read_as(&env, out, 128);
        for (g, &v) in got.iter().enumerate() {
            let id = [g % 8, (g / 8) % 4, g / 32];
            let lid = (id[2] % 2 * 2 + id[1] % 2) * 4 + id[0] % 4;
            assert_eq!(v, group[lid], "{name} {options}: global id {id:?}");
        }
        assert_eq!(runs_as_fibers(p, name), name == "called", "{name} {options}");
        ok!(cl!(clReleaseMemObject(out)));
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

#[test]
fn values_recomputed_after_a_barrier_from_other_recomputed_values() {
    let env = Env::new();
    let p = build(&env, PRIVATE_STATE, "-cl-std=CL3.0");
    let k = kernel(p, "chained");
    let out = env.buffer(0, 64 * 4, null_mut());
    set_arg(k, 0, &out);
    set_arg(k, 1, &50i32);
    set_arg(k, 2, &8i32);
    run(&env, k, &[64], Some(&[16]));
    let got: Vec<i32> = read_as(&env, out, 64);
    assert!(got.iter().all(|&v| v == 42), "{got:?}");
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const GROUP_VARIABLES: &str = r#"
/* i, step and total are the same in every work-item: held once per group. */
kernel void counters(global int *out, int count) {
    local int ring[64];
    int l = get_local_id(0), n = get_local_size(0);
    int acc = 0, step = get_group_id(0) + 1, total = 0;
    for (int i = 0; i < count; i += step) {
        ring[l] = i * (l + 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += ring[(l + 1) % n];
        total += i;
        if (total > 100) total -= 7;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc * 1000 + total;
}
/* v is set alike everywhere, but p holds each work-item's own v's address. */
kernel void addressed(global int *out) {
    int v = 5;
    int *p = &v;
    barrier(CLK_LOCAL_MEM_FENCE);
    *p += get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = v;
}
"#;

/// Runs GROUP_VARIABLES' kernel `name` over 256 work-items in groups of 64, with `count`
/// as its second argument where given; returns `out`.
fn group_variables(name: &str, count: Option<i32>) -> Vec<i32> {
    let env = Env::new();
    let p = build(&env, GROUP_VARIABLES, "-cl-std=CL3.0");
    let out = env.buffer(0, 256 * 4, null_mut());
    let k = kernel(p, name);
    set_arg(k, 0, &out);
    if let Some(count) = count {
        set_arg(k, 1, &count);
    }
    run(&env, k, &[256], Some(&[64]));
    let got = read_as(&env, out, 256);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseProgram(p)));
    got
}

#[test]
fn variables_alike_in_every_work_item_held_once_per_group() {
    let count = 40;
    for (g, v) in group_variables("counters", Some(count)).into_iter().enumerate() {
        let (group, l) = (g / 64, g % 64);
        let (mut acc, mut total, mut i) = (0, 0, 0);
        while i < count {
            acc += i * ((l + 1) % 64 + 1) as i32;
            total += i;
            if total > 100 {
                total -= 7;
            }
            i += group as i32 + 1;
        }
        assert_eq!(v, acc * 1000 + total, "counters, work-item {g}");
    }
}

/// The region before the first barrier stores the same value and an address: it must
/// run for every work-item, each storing its own variable's address (it had run for the
/// first alone, and every work-item then wrote that one's `v`).
#[test]
fn a_variable_holding_an_address_is_each_work_item_own() {
    let want: Vec<i32> = (0..256).map(|g| 5 + g % 64).collect();
    assert_eq!(group_variables("addressed", None), want);
}

/// Groups run in batches under one fault guard: a fault in one group fails the command
/// and ends that group alone, every other group of the batch (before and after it) and
/// of the launch still runs. With and without barriers (regions and plain item loops).
#[test]
fn a_fault_in_one_group_fails_the_command_and_every_other_group_runs() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void wild(global uint *out, uint bad) {
            if (get_group_id(0) == bad) *(volatile global uint *)(ulong)16 = 1;
            out[get_global_id(0)] = get_global_id(0) + 1;
        }
        kernel void wild_barrier(global uint *out, uint bad) {
            local uint seen[16];
            seen[get_local_id(0)] = get_global_id(0) + 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (get_group_id(0) == bad && get_local_id(0) == 7) *(volatile global uint *)(ulong)16 = 1;
            out[get_global_id(0)] = seen[get_local_id(0)];
        }"#,
        "",
    );
    // 4096 groups: the pool hands them out in ranges of 64.
    let (groups, local) = (4096usize, 16usize);
    for name in ["wild", "wild_barrier"] {
        for bad in [0u32, 70, 4095] {
            let k = kernel(p, name);
            let out = buffer_of(&env, &vec![0u32; groups * local]);
            set_arg(k, 0, &out);
            set_arg(k, 1, &bad);
            let status = run_status(&env, k, groups * local, local);
            assert_eq!(status, CL_OUT_OF_RESOURCES, "{name}, group {bad} faults");
            let got = read_as::<u32>(&env, out, groups * local);
            for (i, &v) in got.iter().enumerate() {
                if i / local != bad as usize {
                    assert_eq!(v, i as u32 + 1, "{name}: work-item {i} (group {bad} faulted)");
                }
            }
            ok!(cl!(clReleaseMemObject(out)));
            ok!(cl!(clReleaseKernel(k)));
        }
    }
}

/// Host reference of `chains` for the work-item at (x, y, z).
fn chain_reference(x: u32, y: u32, z: u32, m: u32, steps: u32) -> [u32; 5] {
    let mut a = [x, y, z, x ^ (y << 3)];
    let mut s = x.wrapping_mul(31).wrapping_add(z);
    for i in 0..steps {
        for v in &mut a {
            *v = (*v & 0xff_ffff).wrapping_mul(m).wrapping_add(i);
            *v ^= *v >> 7;
        }
        s = s.wrapping_mul(3).wrapping_add(i) ^ (s >> 11);
    }
    [a[0], a[1], a[2], a[3], s]
}

/// A kernel whose work-items each run a chain of arithmetic in a counted loop touching
/// no memory: the kind LLVM unrolls and jams across work-items (`launcher::jam_pays`),
/// four at a time with a remainder. Every work-item of groups 1 to 7 wide along x
/// (remainders of 1, 2 and 3 among them), in one, two and three dimensions, against the
/// host.
#[test]
fn work_items_jammed_four_at_a_time_keep_their_own_results() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void chains(global uint *out, uint m) {
            uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
            uint4 a = (uint4)(x, y, z, x ^ (y << 3));
            uint s = x * 31 + z;
            for (uint i = 0; i < 301; i++) {
                a = mad24(a & 0xffffff, (uint4)(m), (uint4)(i));
                a ^= a >> 7;
                s = (s * 3 + i) ^ (s >> 11);
            }
            size_t at = 5 * ((z * get_global_size(1) + y) * get_global_size(0) + x);
            vstore4(a, 0, out + at);
            out[at + 4] = s;
        }"#,
        "",
    );
    let k = kernel(p, "chains");
    let m = 0x9e37u32;
    set_arg(k, 1, &m);
    let shapes: [(&[usize], &[usize]); 5] =
        [(&[35], &[7]), (&[30], &[5]), (&[36, 4], &[6, 2]), (&[21, 3, 2], &[3, 3, 2]), (&[64, 2, 3], &[1, 1, 1])];
    for (global, local) in shapes {
        let size = [global[0], global.get(1).copied().unwrap_or(1), global.get(2).copied().unwrap_or(1)];
        let n: usize = size.iter().product();
        let out = env.buffer(0, n * 5 * 4, null_mut());
        set_arg(k, 0, &out);
        run(&env, k, global, Some(local));
        let got: Vec<u32> = read_as(&env, out, n * 5);
        for z in 0..size[2] {
            for y in 0..size[1] {
                for x in 0..size[0] {
                    let at = 5 * ((z * size[1] + y) * size[0] + x);
                    let want = chain_reference(x as u32, y as u32, z as u32, m, 301);
                    assert_eq!(got[at..at + 5], want, "({x}, {y}, {z}) of {global:?} in groups of {local:?}");
                }
            }
        }
        ok!(cl!(clReleaseMemObject(out)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// A kernel whose work-items each run a loop of the same length, with float4 swizzles,
/// builtins, consecutive, scattered and broadcast loads: run in SIMD lanes (whole
/// chunks of 8 work-items, the rest one by one), every work-item computes what the host
/// computes, in groups that leave a remainder and in 2D.
#[test]
fn work_items_in_simd_lanes_compute_what_each_computes_alone() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void lanes(global const float4 *p, global const float *in, constant float *coef,
                          global float4 *out, global int *iout, int n) {
            size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
            float4 a = p[i];
            float x = in[i], y = in[2 * i];
            float acc = 0.0f;
            int s = 0;
            for (int j = 0; j < n; j++) {
                float c = coef[j];
                acc = acc * x + c + fmin(y, c);
                a.yzwx = a * 0.5f + (float4)(c, acc, x, y);
                s += (int)get_global_id(0) * j;
            }
            out[i] = (float4)(sqrt(fabs(acc) + 1.0f), a.x + a.y, a.z, a.w);
            iout[i] = s + (int)get_local_id(0);
        }"#,
        "",
    );
    let k = kernel(p, "lanes");
    let n = 5i32;
    let max = 256;
    let pv: Vec<f32> = (0..max * 4).map(|i| (i % 37) as f32 * 0.25 - 3.0).collect();
    let inv: Vec<f32> = (0..max * 2).map(|i| (i % 11) as f32 * 0.125 - 0.5).collect();
    let coef: Vec<f32> = (0..n).map(|j| 0.5 - j as f32 * 0.2).collect();
    let (bp, bin, bc) = (buffer_of(&env, &pv), buffer_of(&env, &inv), buffer_of(&env, &coef));
    let out = env.buffer(0, max * 16, null_mut());
    let iout = env.buffer(0, max * 4, null_mut());
    for (i, m) in [bp, bin, bc, out, iout].iter().enumerate() {
        set_arg(k, i as u32, m);
    }
    set_arg(k, 5, &n);
    let shapes: [(&[usize], &[usize]); 4] = [(&[64], &[64]), (&[61], &[61]), (&[60], &[20]), (&[19, 3], &[19, 1])];
    for (global, local) in shapes {
        run(&env, k, global, Some(local));
        let got: Vec<f32> = read_as(&env, out, max * 4);
        let igot: Vec<i32> = read_as(&env, iout, max);
        let (w, h) = (global[0], global.get(1).copied().unwrap_or(1));
        for gy in 0..h {
            for gx in 0..w {
                let i = gy * w + gx;
                let mut a = [pv[4 * i], pv[4 * i + 1], pv[4 * i + 2], pv[4 * i + 3]];
                let (x, y) = (inv[i], inv[2 * i]);
                let (mut acc, mut s) = (0f32, 0i32);
                for (j, &c) in coef.iter().enumerate() {
                    acc = acc * x + c + y.min(c);
                    let r = [a[0] * 0.5 + c, a[1] * 0.5 + acc, a[2] * 0.5 + x, a[3] * 0.5 + y];
                    a = [r[3], r[0], r[1], r[2]];
                    s += gx as i32 * j as i32;
                }
                let want = [(acc.abs() + 1.0).sqrt(), a[0] + a[1], a[2], a[3]];
                for c in 0..4 {
                    let g = got[4 * i + c];
                    assert!(
                        (g - want[c]).abs() <= 1e-4 * want[c].abs().max(1.0),
                        "{global:?}/{local:?} item {i}.{c}: {g} != {}",
                        want[c]
                    );
                }
                assert_eq!(igot[i], s + (gx % local[0]) as i32, "{global:?}/{local:?} item {i}");
            }
        }
    }
}

/// Indices counted down from the work-item's id (`n - 1 - gid`, `63 - lid` in local
/// memory, a subtraction whose lane value comes second) are no consecutive run of
/// addresses: the SIMD copy loaded the first lane's element and the 7 after it.
#[test]
fn indices_counted_down_read_each_work_items_own_element() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void down(global const float *in, global float *out, int n) {
            size_t g = get_global_id(0);
            out[g] = in[n - 1 - g] * 2.0f;
        }
        kernel void mirror(global const float *in, global float *out, local float *buf) {
            size_t l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);
            buf[l] = in[g];
            barrier(CLK_LOCAL_MEM_FENCE);
            out[g] = buf[n - 1 - l] + buf[63 - l];
        }"#,
        "",
    );
    let n = 1024usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 + 1.0).collect();
    let bin = buffer_of(&env, &input);
    let out = env.buffer(0, n * 4, null_mut());
    let k = kernel(p, "down");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    set_arg(k, 2, &(n as i32));
    run(&env, k, &[n], Some(&[64]));
    let got: Vec<f32> = read_as(&env, out, n);
    for i in 0..n {
        assert_eq!(got[i], input[n - 1 - i] * 2.0, "down {i}");
    }
    let k = kernel(p, "mirror");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    ok!(cl!(clSetKernelArg(k, 2, 64 * 4, null())));
    run(&env, k, &[n], Some(&[64]));
    let got: Vec<f32> = read_as(&env, out, n);
    for i in 0..n {
        let mirrored = input[i / 64 * 64 + 63 - i % 64];
        assert_eq!(got[i], mirrored * 2.0, "mirror {i}");
    }
}

/// Work-items that part ways: an early return, a loop whose lanes leave at different
/// iterations by its test, a `break` and a `continue`, nested loops of varying length, a
/// `switch`, `&&`, `||`, `?:` and an if/else chain on each item's data, then block- and
/// grid-stride loops. Run in SIMD lanes under masks, every work-item computes what the
/// host computes, in groups that leave a remainder.
#[test]
fn work_items_that_part_ways_compute_what_each_computes_alone() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void paths(global const int *in, global int *out, int n) {
            int i = get_global_id(0);
            if (i >= n) return;
            int x = in[i];
            int it = 0, z = x;
            while (it < 40 && z * z < 5000) {
                z = z * 3 / 2 + 1;
                it++;
                if (z < -300) break;
                if ((it & 3) == 1) continue;
                z -= 2;
            }
            int acc = 0;
            for (int k = 0; k < i % 7; k++) {
                for (int j = k; j < i % 5 + k; j++) acc += j;
                acc = acc > 10 ? acc - 3 : acc + x;
            }
            int s;
            switch (i % 4) { case 0: s = 10; break; case 1: s = 20; break; case 3: s = -5; break; default: s = it; }
            if (x > 3 || it > 5) s += 100;
            float f = (float)x;
            if (x & 1) f = sqrt(fabs(f) + 1.0f);
            else if (x % 3 == 0) f = f * 0.5f;
            out[4 * i] = z; out[4 * i + 1] = acc; out[4 * i + 2] = s; out[4 * i + 3] = (int)(f * 1000.0f);
        }
        float scale(float x, float s) { return x * s + 1.0f; }
        int steps(float x) { int n = 0; while (x > 1.0f && n < 20) { x = x * 0.5f; n++; } return n; }
        void put(global int *out, int i, int v) { if (v > 2) out[i] = v; else out[i] = -v; }
        void order(int *lo, int *hi) { if (*lo > *hi) { int t = *lo; *lo = *hi; *hi = t; } }
        kernel void calls(global const int *in, global int *out) {
            int i = get_global_id(0);
            int a = in[i], b = in[(i * 7) % 64];
            order(&a, &b);
            put(out, 3 * i, steps(scale((float)a, 0.5f) + 3.0f));
            out[3 * i + 1] = a;
            out[3 * i + 2] = b;
        }
        kernel void part(global const int *in, global int *out, int n) {
            int i = get_global_id(0);
            if (i >= n) return;
            int x = in[i], it = 0, z = x;
            while (it < 40 && z * z < 5000) {
                z = z * 3 / 2 + 1;
                it++;
                if (z < -300) break;
            }
            out[2 * i] = z;
            out[2 * i + 1] = it;
        }
        kernel void strides(global const int *in, global int *out, int tile, int m) {
            size_t base = get_group_id(0) * tile;
            for (int j = get_local_id(0); j < tile; j += get_local_size(0)) out[base + j] = in[base + j] * 3 + j;
            for (int j = get_global_id(0); j < m; j += get_global_size(0)) out[2 * m + j] = in[j] - j;
        }"#,
        "",
    );
    let max = 512usize;
    let input: Vec<i32> = (0..max).map(|i| (i as i32 * 37 % 41) - 20).collect();
    let bin = buffer_of(&env, &input);
    let out = env.buffer(0, max * 16, null_mut());
    let k = kernel(p, "paths");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    for (global, local, n) in [(64, 16, 64), (61, 61, 55), (200, 40, 190), (67, 67, 67), (256, 128, 234)] {
        set_arg(k, 2, &(n as i32));
        run(&env, k, &[global], Some(&[local]));
        let got: Vec<i32> = read_as(&env, out, n * 4);
        for i in 0..n {
            let x = input[i];
            let (mut it, mut z) = (0, x);
            while it < 40 && z * z < 5000 {
                z = z * 3 / 2 + 1;
                it += 1;
                if z < -300 {
                    break;
                }
                if it & 3 == 1 {
                    continue;
                }
                z -= 2;
            }
            let mut acc = 0i32;
            for k in 0..(i as i32 % 7) {
                for j in k..(i as i32 % 5 + k) {
                    acc += j;
                }
                acc = if acc > 10 { acc - 3 } else { acc + x };
            }
            let mut s = match i % 4 {
                0 => 10,
                1 => 20,
                3 => -5,
                _ => it,
            };
            if x > 3 || it > 5 {
                s += 100;
            }
            let f = match (x & 1, x % 3) {
                (1, _) => ((x as f32).abs() + 1.0).sqrt(),
                (_, 0) => x as f32 * 0.5,
                _ => x as f32,
            };
            let want = [z, acc, s, (f * 1000.0) as i32];
            assert_eq!(got[4 * i..4 * i + 3], want[..3], "item {i} of {n} ({global} in groups of {local})");
            assert!((got[4 * i + 3] - want[3]).abs() <= 1, "item {i}: {} != {}", got[4 * i + 3], want[3]);
        }
    }
    // The same loop and early return in a kernel short enough to run four chunks a
    // call (`wide::interleave_masked`), in groups where the return leaves a whole chunk
    // and part of another without lanes.
    let k = kernel(p, "part");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    for (global, local, n) in [(256, 128, 234), (64, 64, 64), (96, 32, 90), (61, 61, 50)] {
        set_arg(k, 2, &(n as i32));
        run(&env, k, &[global], Some(&[local]));
        let got: Vec<i32> = read_as(&env, out, 2 * n);
        for i in 0..n {
            let (mut it, mut z) = (0, input[i]);
            while it < 40 && z * z < 5000 {
                z = z * 3 / 2 + 1;
                it += 1;
                if z < -300 {
                    break;
                }
            }
            assert_eq!(got[2 * i..2 * i + 2], [z, it], "item {i} of {n} ({global} in groups of {local})");
        }
    }
    // Functions of the program, with loops, branches and pointers to the caller's
    // variables, called from lanes.
    let k = kernel(p, "calls");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    for (global, local) in [(64, 16), (61, 61)] {
        run(&env, k, &[global], Some(&[local]));
        let got: Vec<i32> = read_as(&env, out, 3 * global);
        for i in 0..global {
            let (a, b) = (input[i], input[i * 7 % 64]);
            let (a, b) = (a.min(b), a.max(b));
            let (mut x, mut n) = (a as f32 * 0.5 + 1.0 + 3.0, 0);
            while x > 1.0 && n < 20 {
                x *= 0.5;
                n += 1;
            }
            let want = [if n > 2 { n } else { -n }, a, b];
            assert_eq!(got[3 * i..3 * i + 3], want, "calls: item {i} of {global}");
        }
    }
    let k = kernel(p, "strides");
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    for (global, local, tile, m) in [(64, 16, 30, 100), (60, 20, 45, 150), (24, 24, 100, 101)] {
        set_arg(k, 2, &(tile as i32));
        set_arg(k, 3, &(m as i32));
        run(&env, k, &[global], Some(&[local]));
        let got: Vec<i32> = read_as(&env, out, 3 * m);
        for g in 0..global / local {
            for j in 0..tile {
                let at = g * tile + j;
                assert_eq!(got[at], input[at] * 3 + j as i32, "block stride: {at} of tile {tile}");
            }
        }
        for j in 0..m {
            assert_eq!(got[2 * m + j], input[j] - j as i32, "grid stride: {j} of {m}");
        }
    }
}

/// Every kernel shape of `cts-runner bench --only shapes` (loops of varying length,
/// escape-time, barriers in loops, async copies, tiles by hand) computes on 8-lane
/// registers in its launcher: float arithmetic on ymm (or zmm) registers, and no zmm
/// where clang's tuning for the CPU keeps to 256 bits. Fails with `FERROCL_SIMD=0`
/// for all but the straight-line and if/else shapes.
#[test]
fn every_kernel_shape_runs_on_vector_registers() {
    let env = Env::new();
    let p = build(&env, cts_runner::bench::shapes::SOURCE, "");
    let wide_registers = cpu_prefers_512_bit_registers();
    let shapes = [
        "straight",
        "uniform_loop",
        "block_stride",
        "grid_stride",
        "if_else",
        "escape",
        "nbody",
        "stencil",
        "local_reduce",
        "tiles_direct",
        "tiles_async",
        "tiles_hand",
    ];
    for name in shapes {
        let code = launcher_code(p, name);
        assert!(!code.is_empty(), "no launcher for {name}");
        let vector = |l: &&str| {
            let op = l.split('\t').nth(2).unwrap_or("");
            ["vfmadd", "vfnmadd", "vfmsub", "vmulps", "vaddps"].iter().any(|o| op.starts_with(o))
                && (l.contains("ymm") || l.contains("zmm"))
        };
        assert!(code.lines().any(|l| vector(&l)), "no 8- or 16-lane float arithmetic in {name}'s launcher:\n{code}");
        if !wide_registers {
            let zmm: Vec<&str> = code.lines().filter(|l| l.contains("zmm")).take(4).collect();
            assert!(
                zmm.is_empty(),
                "{name}'s launcher uses 512-bit registers, which this CPU's tuning avoids: {zmm:?}"
            );
        }
    }
    ok!(cl!(clReleaseProgram(p)));
}

/// A kernel that indexes by sub-group queries alone, as SYCL's contiguous elementwise
/// kernels do (dpnp's: sub-group id, local id, sizes), runs on vector registers in
/// sub-groups of 8, and gives each work-item its own sub-group's answers, the partial
/// sub-group at a row's end included (the launcher's remainder, run scalar).
#[test]
fn sub_group_queries_run_in_simd_lanes() {
    let env = Env::new();
    let source = r#"
        #define BODY { \
            uint sg = get_max_sub_group_size(); \
            size_t base = 4 * (get_group_id(0) * get_local_size(0) + get_sub_group_id() * sg); \
            for (uint it = 0; it < 4; it++) { \
                size_t i = base + it * sg + get_sub_group_local_id(); \
                if (i < n) out[i] = in[i] * 2.0f + (float)get_sub_group_size(); \
            } \
            rec[get_global_id(0)] = get_sub_group_id() * 1000 + get_sub_group_size() * 100 \
                + get_sub_group_local_id() * 10 + get_num_sub_groups(); }
        kernel void contig(global const float *in, global float *out, uint n, global uint *rec) BODY
        /* Straight-line, as the CTS's work-item test: several chunks a call, each the
           next sub-group. */
        kernel void records(global uint *rec) {
            rec[get_global_id(0)] = get_sub_group_id() * 1000 + get_sub_group_size() * 100
                + get_sub_group_local_id() * 10 + get_num_sub_groups();
        }
        __attribute__((intel_reqd_sub_group_size(4)))
        kernel void contig4(global const float *in, global float *out, uint n, global uint *rec) BODY"#;
    let p = build(&env, source, "-cl-std=CL3.0");
    let code = launcher_code(p, "contig");
    let vector = |l: &&str| {
        let op = l.split('\t').nth(2).unwrap_or("");
        ["vfmadd", "vmulps", "vaddps"].iter().any(|o| op.starts_with(o)) && (l.contains("ymm") || l.contains("zmm"))
    };
    assert!(code.lines().any(|l| vector(&l)), "no 8-lane float arithmetic in the launcher:\n{code}");
    for (name, s) in [("contig", 8usize), ("contig4", 4)] {
        // Groups of 24 (whole sub-groups: the kernel's indexing assumes them), then of
        // 20 (8, 8 and a partial 4 in sub-groups of 8), where only the records count.
        for local in [24usize, 20] {
            let groups = 3usize;
            let n = groups * local * 4;
            let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
            let k = kernel(p, name);
            let (bin, bout) = (buffer_of(&env, &input), env.buffer(0, n * 4, null_mut()));
            let brec = env.buffer(0, groups * local * 4, null_mut());
            set_arg(k, 0, &bin);
            set_arg(k, 1, &bout);
            set_arg(k, 2, &(n as u32));
            set_arg(k, 3, &brec);
            run(&env, k, &[groups * local], Some(&[local]));
            let out: Vec<f32> = read_as(&env, bout, n);
            let rec: Vec<u32> = read_as(&env, brec, groups * local);
            for g in 0..groups {
                for l in 0..local {
                    let (first, lid) = (l / s * s, l % s);
                    let size = s.min(local - first);
                    let what = format!("{name}, groups of {local}: group {g}, work-item {l}");
                    let want = (first / s) * 1000 + size * 100 + lid * 10 + local.div_ceil(s);
                    assert_eq!(rec[g * local + l] as usize, want, "{what}");
                    if local % s == 0 {
                        let base = 4 * (g * local + first);
                        for it in 0..4 {
                            let i = base + it * s + lid;
                            assert_eq!(out[i], input[i] * 2.0 + size as f32, "{what}, step {it}");
                        }
                    }
                }
            }
            for b in [bin, bout, brec] {
                ok!(cl!(clReleaseMemObject(b)));
            }
            ok!(cl!(clReleaseKernel(k)));
        }
    }
    // The CTS's shape: groups of 200 (25 sub-groups), 1150 work-items (a last group of
    // 150: 18 sub-groups and one of 6).
    let k = kernel(p, "records");
    let (n, local) = (1150usize, 200usize);
    let brec = env.buffer(0, n * 4, null_mut());
    set_arg(k, 0, &brec);
    run(&env, k, &[n], Some(&[local]));
    let rec: Vec<u32> = read_as(&env, brec, n);
    for (g, &r) in rec.iter().enumerate() {
        let (l, size_of_group) = (g % local, local.min(n - g / local * local));
        let size = 8.min(size_of_group - l / 8 * 8);
        let want = (l / 8) * 1000 + size * 100 + (l % 8) * 10 + size_of_group.div_ceil(8);
        assert_eq!(r as usize, want, "records: work-item {g}");
    }
    ok!(cl!(clReleaseMemObject(brec)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Whether clang, tuning for this CPU, puts a plain float loop on 512-bit registers:
/// on Intel's server cores it does not (a 512-bit instruction in flight halves the
/// vector ports), and the launchers must not either.
fn cpu_prefers_512_bit_registers() -> bool {
    let clang =
        cts_runner::coverage::find_clang().expect("clang is not installed: the README's setup installs clang-19");
    let dir = std::env::temp_dir().join(format!("ferrocl-width-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("w.c");
    std::fs::write(
        &src,
        "void f(float *restrict a, const float *restrict b) { for (int i = 0; i < 4096; i++) a[i] += b[i]; }\n",
    )
    .unwrap();
    let out =
        std::process::Command::new(clang).args(["-O2", "-march=native", "-S", "-o", "-"]).arg(&src).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "clang: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).contains("zmm")
}

/// The structural side of the SIMD copies: a loop of shared length per work-item (n-body
/// and a filter of fixed taps) compiles to vector FMAs on 8 lanes in the launcher, where
/// the work-item loop alone left it scalar. Read from the program binary's code.
#[test]
fn loops_of_shared_length_run_on_vector_registers() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void taps(global const float *in, global float *out, constant float *coef, int n) {
            size_t i = get_global_id(0);
            float x = in[i], acc = 0.0f;
            for (int j = 0; j < n; j++) acc = acc * x + coef[j];
            out[i] = acc;
        }"#,
        "",
    );
    let launcher = launcher_code(p, "taps");
    assert!(
        launcher.lines().any(|l| l.contains("vfmadd") && l.contains("ps") && (l.contains("ymm") || l.contains("zmm"))),
        "no 8- or 16-lane FMA in the launcher:\n{launcher}"
    );
}

/// Stride loops the SIMD copy folds into its first chunk's lanes (`simd::fold`), and
/// near relatives it must not fold, each checked against the host for group sizes that
/// are and are not multiples of the copy's width.
const STRIDE_LOOPS: &str = r#"
kernel void block(global const float *in, global float *out, int tile, float scale) {
    size_t base = get_group_id(0) * tile;
    float s = scale * 2.0f;
    for (int i = get_local_id(0); i < tile; i += get_local_size(0)) {
        float x = in[base + i];
        if (x < 0.25f) continue;
        out[base + i] = x * x * s + (x > 0.75f ? 1.0f : -1.0f);
    }
}
kernel void grid(global const float *in, global float *out, ulong n) {
    for (size_t i = get_global_id(0); n > i; i += get_global_size(0))
        out[i] = sqrt(in[i]) + 1.0f;
}
kernel void rows(global int *out, int w) {
    int row = get_global_id(1) * w * get_num_groups(0) + get_group_id(0) * w;
    for (int i = get_local_id(0); i <= w - 1; i += get_local_size(0))
        out[row + i] = i * 3 + get_local_id(1);
}
kernel void strided(global int *out, int n) {
    int stride = get_local_size(0) * get_num_groups(0);
    for (int i = get_global_id(0); i < n; i += stride) out[i] = i * 5 + 1;
}
kernel void collatz(global const uint *in, global uint *steps, uint n) {
    for (uint p = get_global_id(0); p < n; p += get_global_size(0)) {
        uint x = in[p], k = 0;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x / 2;
            k++;
        }
        steps[p] = k;
    }
}
kernel void carried(global const float *in, global float *out, int n) {
    float acc = 0.0f;
    for (int i = get_local_id(0); i < n; i += get_local_size(0)) acc += in[i];
    out[get_global_id(0)] = acc;
}
kernel void stepped_in_body(global const float *in, global float *out, int n) {
    int i = get_global_id(0);
    while (i < n) {
        out[i] = in[i] * 3.0f;
        i += get_global_size(0);
    }
}
"#;

/// Stride loops between barriers, which the SIMD copy folds region by region
/// (`simd::fold`, `launcher::Entry::fold`): tiles copied by hand (a body with variables
/// of its own, which interleaved chunks each need their own of) and double-buffered by
/// async copies, each read back reversed so a tile is only right after its barrier; a
/// work-item's own value kept across the barriers around a folded loop; and one read
/// inside the loop, which must not fold (each element takes its own work-item's).
const REGION_LOOPS: &str = r#"
kernel void hand(global const float *in, global float *out, int tile, int tiles) {
    local float buf[1024];
    size_t base = get_group_id(0) * (size_t)tile * tiles;
    for (int t = 0; t < tiles; t++) {
        for (int i = get_local_id(0); i < tile; i += get_local_size(0)) buf[i] = in[base + t * tile + i];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = get_local_id(0); i < tile; i += get_local_size(0)) {
            float x = buf[tile - 1 - i];
            float twice = x * 2.0f, square = x * x;
            out[base + t * tile + i] = twice + 1.0f + (square - x * x);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
kernel void double_buffered(global const float *in, global float *out, int tile, int tiles) {
    local float buf[2][1024];
    size_t base = get_group_id(0) * (size_t)tile * tiles;
    event_t e = async_work_group_copy(buf[0], in + base, tile, 0);
    for (int t = 0; t < tiles; t++) {
        event_t next = 0;
        if (t + 1 < tiles) next = async_work_group_copy(buf[(t + 1) & 1], in + base + (t + 1) * tile, tile, 0);
        wait_group_events(1, &e);
        for (int i = get_local_id(0); i < tile; i += get_local_size(0))
            out[base + t * tile + i] = buf[t & 1][tile - 1 - i] * 2.0f + 1.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        e = next;
    }
}
kernel void kept(global const float *in, global float *out, global float *own, int tile) {
    local float buf[1024];
    size_t base = get_group_id(0) * (size_t)tile;
    float mine = in[get_global_id(0)] + 1.0f;
    for (int i = get_local_id(0); i < tile; i += get_local_size(0)) buf[i] = in[base + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_local_id(0); i < tile; i += get_local_size(0)) out[base + i] = buf[tile - 1 - i] * 2.0f + 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    own[get_global_id(0)] = mine;
}
kernel void read_in_loop(global const float *in, global float *out, int tile) {
    local float buf[1024];
    size_t base = get_group_id(0) * (size_t)tile;
    float mine = in[get_global_id(0)];
    for (int i = get_local_id(0); i < tile; i += get_local_size(0)) buf[i] = in[base + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_local_id(0); i < tile; i += get_local_size(0)) out[base + i] = buf[tile - 1 - i] + mine;
}
"#;

#[test]
fn stride_loops_between_barriers_see_whole_tiles_and_keep_each_work_items_values() {
    let env = Env::new();
    let p = build(&env, REGION_LOOPS, "");
    let n = 1 << 14;
    let data = floats_of(n);
    let input = buffer_of(&env, &data);
    let out = env.buffer(0, n * 4, null_mut());
    let own = env.buffer(0, n * 4, null_mut());
    let reversed = |tile: usize, i: usize| data[i / tile * tile + tile - 1 - i % tile];
    let check = |what: &str, got: &[f32], want: &dyn Fn(usize) -> f32| {
        for (i, &g) in got.iter().enumerate() {
            let w = want(i);
            assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{what}: element {i}: {g} against {w}");
        }
    };
    for (local, tile, tiles) in
        [(64usize, 1024usize, 4usize), (8, 512, 3), (12, 1000, 2), (3, 7, 5), (100, 333, 1), (1, 16, 2)]
    {
        let groups = n / (tile * tiles);
        let covered = groups * tile * tiles;
        for name in ["hand", "double_buffered"] {
            let k = kernel(p, name);
            ok!(cl!(clEnqueueFillBuffer(
                env.queue,
                out,
                (&-7f32 as *const f32).cast(),
                4,
                0,
                n * 4,
                0,
                null(),
                null_mut()
            )));
            set_arg(k, 0, &input);
            set_arg(k, 1, &out);
            set_arg(k, 2, &(tile as i32));
            set_arg(k, 3, &(tiles as i32));
            run(&env, k, &[groups * local], Some(&[local]));
            let got: Vec<f32> = read_as(&env, out, n);
            let what = format!("{name}, groups of {local}, {tiles} tiles of {tile}");
            check(&what, &got, &|i| if i < covered { reversed(tile, i) * 2.0 + 1.0 } else { -7.0 });
            ok!(cl!(clReleaseKernel(k)));
        }
        let groups = n / tile;
        let k = kernel(p, "kept");
        set_arg(k, 0, &input);
        set_arg(k, 1, &out);
        set_arg(k, 2, &own);
        set_arg(k, 3, &(tile as i32));
        run(&env, k, &[groups * local], Some(&[local]));
        let got: Vec<f32> = read_as(&env, out, groups * tile);
        let what = format!("kept, groups of {local}, tiles of {tile}");
        check(&what, &got, &|i| reversed(tile, i) * 2.0 + 1.0);
        let got: Vec<f32> = read_as(&env, own, groups * local);
        check(&format!("{what}, own values"), &got, &|i| data[i] + 1.0);
        ok!(cl!(clReleaseKernel(k)));
        let k = kernel(p, "read_in_loop");
        set_arg(k, 0, &input);
        set_arg(k, 1, &out);
        set_arg(k, 2, &(tile as i32));
        run(&env, k, &[groups * local], Some(&[local]));
        let got: Vec<f32> = read_as(&env, out, groups * tile);
        let what = format!("read_in_loop, groups of {local}, tiles of {tile}");
        check(&what, &got, &|i| reversed(tile, i) + data[i / tile * local + i % tile % local]);
        ok!(cl!(clReleaseKernel(k)));
    }
    for m in [input, out, own] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

/// Kernels whose lanes branch alike, which get a copy running several chunks a call
/// (`simd::wide`): work-item ids in x, y and linear, a private array, a uniform loop
/// carrying a chain, and one that divides (fewer chunks a call).
const WIDE: &str = r#"
kernel void ids(global int *out) {
    size_t l = get_local_id(0), g = get_global_id(0), lin = get_local_linear_id();
    size_t at = get_global_linear_id();
    int own[3];
    own[0] = (int)l; own[1] = (int)g; own[2] = (int)lin;
    out[at * 4] = own[0];
    out[at * 4 + 1] = own[1];
    out[at * 4 + 2] = own[2] + (int)get_local_id(1) * 1000;
    out[at * 4 + 3] = (int)get_global_id(1);
}
kernel void chain(global const float *in, global float *out, int steps) {
    size_t i = get_global_id(0);
    float x = in[i], acc = 0.0f;
    for (int k = 0; k < steps; k++) acc = acc * x + (float)k * 0.125f;
    out[i] = acc;
}
kernel void divides(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    out[i] = in[i] / (1.0f + (float)get_local_id(0));
}
kernel void sides(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    float x = in[i], y = 1.0f, z;
    if (x > 0.5f) y = x * 3.0f;
    if (x < 0.25f) { z = x + 1.0f; y += z; } else { z = x * x; if (x > 0.9f) z = -z; }
    float t = x > 0.7f ? y * z : y - z;
    out[i] = t + (i & 1 ? 0.5f : 0.0f);
}
kernel void guarded(global const float *in, global float *out, uint n) {
    size_t i = get_global_id(0);
    float x = 0.0f;
    if (i + 1 < n) x = in[i + 1];
    out[i] = x;
}
"#;

#[test]
fn kernels_run_several_chunks_a_call_keep_each_work_items_ids_and_values() {
    let env = Env::new();
    let p = build(&env, WIDE, "-cl-std=CL3.0");
    let k = kernel(p, "ids");
    for (global, local) in [
        ([256usize, 2usize], [64usize, 2usize]),
        ([120, 3], [40, 1]),
        ([96, 2], [48, 2]),
        ([36, 1], [12, 1]),
        ([7, 1], [7, 1]),
    ] {
        let n = global[0] * global[1];
        let out = env.buffer(0, n * 16, null_mut());
        set_arg(k, 0, &out);
        run(&env, k, &global, Some(&local));
        let got: Vec<i32> = read_as(&env, out, n * 4);
        for at in 0..n {
            let (gx, gy) = (at % global[0], at / global[0]);
            let (lx, ly) = (gx % local[0], gy % local[1]);
            let want = [lx as i32, gx as i32, (ly * local[0] + lx) as i32 + ly as i32 * 1000, gy as i32];
            assert_eq!(got[at * 4..at * 4 + 4], want, "work-item ({gx}, {gy}), groups of {local:?}");
        }
        ok!(cl!(clReleaseMemObject(out)));
    }
    ok!(cl!(clReleaseKernel(k)));
    let n = 4096;
    let data = floats_of(n);
    let input = buffer_of(&env, &data);
    let out = env.buffer(0, n * 4, null_mut());
    let k = kernel(p, "chain");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    set_arg(k, 2, &17i32);
    for local in [64usize, 40, 32, 8, 5] {
        run(&env, k, &[n / local * local], Some(&[local]));
        let got: Vec<f32> = read_as(&env, out, n / local * local);
        for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
            let want = (0..17).fold(0.0f32, |acc, k| acc.mul_add(x, k as f32 * 0.125));
            assert!(
                (g - want).abs() <= 1e-5 * want.abs().max(1.0),
                "element {i}: {g} against {want}, groups of {local}"
            );
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    let k = kernel(p, "divides");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    run(&env, k, &[n], Some(&[64]));
    let got: Vec<f32> = read_as(&env, out, n);
    for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
        assert_eq!(g, x / (1.0 + (i % 64) as f32), "element {i}");
    }
    ok!(cl!(clReleaseKernel(k)));
    // If/else sides that only compute run for every lane in the copy for several chunks.
    let k = kernel(p, "sides");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    run(&env, k, &[n], Some(&[64]));
    let got: Vec<f32> = read_as(&env, out, n);
    for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
        let mut y = if x > 0.5 { x * 3.0 } else { 1.0 };
        let z = if x < 0.25 {
            y += x + 1.0;
            x + 1.0
        } else if x > 0.9 {
            -(x * x)
        } else {
            x * x
        };
        let want = if x > 0.7 { y * z } else { y - z } + if i & 1 == 1 { 0.5 } else { 0.0 };
        assert!((g - want).abs() <= 1e-5 * want.abs().max(1.0), "element {i}: {g} against {want}");
    }
    ok!(cl!(clReleaseKernel(k)));
    // A side that reads memory only where its guard holds stays a branch: no read past
    // the buffer's end (the last work-item's `i + 1`).
    let k = kernel(p, "guarded");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    set_arg(k, 2, &(n as u32));
    run(&env, k, &[n], Some(&[64]));
    let got: Vec<f32> = read_as(&env, out, n);
    for (i, &g) in got.iter().enumerate() {
        assert_eq!(g, if i + 1 < n { data[i + 1] } else { 0.0 }, "element {i}");
    }
    for m in [input, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

fn floats_of(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect()
}

#[test]
fn block_and_grid_stride_loops_cover_every_element_once() {
    let env = Env::new();
    let p = build(&env, STRIDE_LOOPS, "");
    let n = 1 << 14;
    let data = floats_of(n);
    let input = buffer_of(&env, &data);
    let out = env.buffer(0, n * 4, null_mut());
    let k = kernel(p, "block");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    set_arg(k, 3, &1.5f32);
    for (local, tile) in
        [(64usize, 1024usize), (8, 1024), (12, 1000), (100, 333), (256, 4096), (3, 7), (1, 16), (64, 5)]
    {
        let groups = n / tile.max(1);
        let fill = vec![-7.0f32; n];
        ok!(cl!(clEnqueueWriteBuffer(env.queue, out, CL_TRUE, 0, n * 4, fill.as_ptr().cast(), 0, null(), null_mut())));
        set_arg(k, 2, &(tile as i32));
        run(&env, k, &[groups * local], Some(&[local]));
        let got: Vec<f32> = read_as(&env, out, n);
        for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
            let want = match (i < groups * tile, x < 0.25) {
                (true, false) => x * x * 3.0 + if x > 0.75 { 1.0 } else { -1.0 },
                _ => -7.0,
            };
            assert!(
                (g - want).abs() <= 1e-6 * want.abs().max(1.0),
                "element {i}: {g} against {want}, groups of {local}, tiles of {tile}"
            );
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    let k = kernel(p, "grid");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    for (global, local, count) in [(4096usize, 64usize, n), (640, 64, n - 3), (100, 10, 9999), (24, 24, 1), (64, 16, 0)]
    {
        ok!(cl!(clEnqueueFillBuffer(env.queue, out, (&0f32 as *const f32).cast(), 4, 0, n * 4, 0, null(), null_mut())));
        set_arg(k, 2, &(count as u64));
        run(&env, k, &[global], Some(&[local]));
        let got: Vec<f32> = read_as(&env, out, n);
        for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
            let want = if i < count { x.sqrt() + 1.0 } else { 0.0 };
            assert!(
                (g - want).abs() <= 1e-6 * want.abs().max(1.0),
                "element {i}: {g} against {want}, {global} work-items in groups of {local}, {count} elements"
            );
        }
    }
    ok!(cl!(clReleaseMemObject(input)));
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn stride_loops_in_rows_and_with_carried_values_keep_each_work_items_results() {
    let env = Env::new();
    let p = build(&env, STRIDE_LOOPS, "");
    // Two-dimensional groups: each row of work-items covers its own row of `w`.
    let k = kernel(p, "rows");
    for (w, local) in [(50usize, [16usize, 3usize]), (7, [9, 2]), (64, [64, 1])] {
        let (groups, h) = (3usize, local[1] * 2);
        let n = w * groups * h;
        let out = env.buffer(0, n * 4, null_mut());
        set_arg(k, 0, &out);
        set_arg(k, 1, &(w as i32));
        run(&env, k, &[groups * local[0], h], Some(&local));
        let got: Vec<i32> = read_as(&env, out, n);
        for (j, &g) in got.iter().enumerate() {
            let (i, y) = ((j % w) as i32, (j / (w * groups)) % local[1]);
            assert_eq!(g, i * 3 + y as i32, "element {j}, rows of {w}, groups of {local:?}");
        }
        ok!(cl!(clReleaseMemObject(out)));
    }
    ok!(cl!(clReleaseKernel(k)));
    let n = 1000usize;
    let data = floats_of(n);
    let input = buffer_of(&env, &data);
    let out = env.buffer(0, n * 4, null_mut());
    // Each work-item's own sum of its elements: not folded, each its own value.
    let k = kernel(p, "carried");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    set_arg(k, 2, &(n as i32));
    run(&env, k, &[64], Some(&[64]));
    let got: Vec<f32> = read_as(&env, out, 64);
    for (l, &g) in got.iter().enumerate() {
        let want: f32 = data.iter().skip(l).step_by(64).sum();
        assert!((g - want).abs() <= 1e-3 * want.abs().max(1.0), "work-item {l}: {g} against {want}");
    }
    ok!(cl!(clReleaseKernel(k)));
    // The step in a variable of its own (CUDA's `blockDim.x * gridDim.x`).
    let k = kernel(p, "strided");
    let ints = env.buffer(0, n * 4, null_mut());
    set_arg(k, 0, &ints);
    set_arg(k, 1, &(n as i32 - 5));
    run(&env, k, &[72], Some(&[36]));
    let got: Vec<i32> = read_as(&env, ints, n - 5);
    for (i, &g) in got.iter().enumerate() {
        assert_eq!(g, i as i32 * 5 + 1, "element {i}");
    }
    ok!(cl!(clReleaseMemObject(ints)));
    ok!(cl!(clReleaseKernel(k)));
    // A loop of its own length per element inside the folded loop.
    let k = kernel(p, "collatz");
    let starts: Vec<u32> = (1..=n as u32).collect();
    let from = buffer_of(&env, &starts);
    let steps = env.buffer(0, n * 4, null_mut());
    set_arg(k, 0, &from);
    set_arg(k, 1, &steps);
    set_arg(k, 2, &(n as u32 - 1));
    run(&env, k, &[48], Some(&[24]));
    let got: Vec<u32> = read_as(&env, steps, n - 1);
    for (i, &g) in got.iter().enumerate() {
        let (mut x, mut want) = (i as u64 + 1, 0);
        while x != 1 {
            x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
            want += 1;
        }
        assert_eq!(g, want, "steps from {}", i + 1);
    }
    for m in [from, steps] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    let k = kernel(p, "stepped_in_body");
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    set_arg(k, 2, &(n as i32));
    run(&env, k, &[96], Some(&[32]));
    let got: Vec<f32> = read_as(&env, out, n);
    for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
        assert_eq!(g, x * 3.0, "element {i}");
    }
    ok!(cl!(clReleaseMemObject(input)));
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// `clGetKernelSuggestedLocalWorkSizeKHR` through the loader's extension lookup.
type Suggest =
    unsafe extern "C" fn(cl_command_queue, cl_kernel, cl_uint, *const usize, *const usize, *mut usize) -> cl_int;

#[test]
fn suggested_local_sizes_are_the_ones_launches_get() {
    let env = Env::new();
    let (platform, _) = platform_device();
    let f = cl!(clGetExtensionFunctionAddressForPlatform(platform, c"clGetKernelSuggestedLocalWorkSizeKHR".as_ptr()));
    assert!(!f.is_null());
    // SAFETY: the driver's entry point of that name, whose C signature `Suggest` spells.
    let suggest: Suggest = unsafe { std::mem::transmute::<*mut c_void, Suggest>(f) };
    let p = build(
        &env,
        "kernel void sizes(global uint *out) {
             if (get_global_id(0) == 0 && get_global_id(1) == 0)
                 for (uint d = 0; d < 3; d++) out[d] = get_local_size(d);
         }
         kernel void other(global uint *out, local float *tmp) {
             tmp[get_local_id(0)] = 1.0f;
             barrier(CLK_LOCAL_MEM_FENCE);
             if (get_global_id(0) == 0) out[0] = get_local_size(0);
         }",
        "",
    );
    let out = env.buffer(CL_MEM_READ_WRITE, 12, null_mut());
    let mut local = [0usize; 3];
    let k = kernel(p, "sizes");
    let call = |q, k, dims, global: *const usize, local: *mut usize| {
        // SAFETY: the driver's entry point; the arrays hold `dims` sizes or are null.
        unsafe { suggest(q, k, dims, null(), global, local) }
    };
    let g = [96usize, 1, 1];
    // Arguments unset, bad handles, another context's queue, bad sizes.
    err!(CL_INVALID_KERNEL_ARGS, call(env.queue, k, 1, g.as_ptr(), local.as_mut_ptr()));
    set_arg(k, 0, &out);
    err!(CL_INVALID_COMMAND_QUEUE, call(env.context.cast(), k, 1, g.as_ptr(), local.as_mut_ptr()));
    err!(CL_INVALID_KERNEL, call(env.queue, env.context.cast(), 1, g.as_ptr(), local.as_mut_ptr()));
    let other = Env::new();
    err!(CL_INVALID_CONTEXT, call(other.queue, k, 1, g.as_ptr(), local.as_mut_ptr()));
    err!(CL_INVALID_WORK_DIMENSION, call(env.queue, k, 0, g.as_ptr(), local.as_mut_ptr()));
    err!(CL_INVALID_WORK_DIMENSION, call(env.queue, k, 4, g.as_ptr(), local.as_mut_ptr()));
    err!(CL_INVALID_GLOBAL_WORK_SIZE, call(env.queue, k, 1, null(), local.as_mut_ptr()));
    err!(CL_INVALID_GLOBAL_WORK_SIZE, call(env.queue, k, 1, [0usize].as_ptr(), local.as_mut_ptr()));
    err!(CL_INVALID_VALUE, call(env.queue, k, 1, g.as_ptr(), null_mut()));
    let huge = [usize::MAX];
    // SAFETY: as `call`, with an offset that overflows.
    err!(CL_INVALID_GLOBAL_OFFSET, unsafe { suggest(env.queue, k, 1, huge.as_ptr(), g.as_ptr(), local.as_mut_ptr()) });
    // Every suggestion is what a launch without a local size gets, in 1 and 2 dimensions
    // and for a kernel with barriers.
    let k2 = kernel(p, "other");
    set_arg(k2, 0, &out);
    ok!(cl!(clSetKernelArg(k2, 1, 4096 * 4, null())));
    for (kern, dims) in [(k, 1), (k, 2), (k2, 1)] {
        for n in (1..4096).step_by(97).chain([4096, 1 << 20]) {
            let global = [n, if dims == 2 { 3 + n % 5 } else { 1 }, 1];
            local = [0; 3];
            ok!(call(env.queue, kern, dims, global.as_ptr(), local.as_mut_ptr()));
            run(&env, kern, &global[..dims as usize], None);
            let got: Vec<u32> = read_as(&env, out, if kern == k { 3 } else { 1 });
            for d in 0..got.len().min(dims as usize) {
                assert_eq!(got[d] as usize, local[d], "global {global:?}, dimension {d}");
            }
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseKernel(k2)));
    ok!(cl!(clReleaseProgram(p)));
    ok!(cl!(clReleaseMemObject(out)));
}

#[test]
fn byte_builtins_vectorized_give_each_lane_its_value() {
    // The work-item vectorizer calls a builtin's vector overload for 8 lanes: for bytes
    // that is 8 bytes, which the library does not take as a vector; called so, the
    // launch hung or dropped its stores (dpnp's `abs` of int8).
    let env = Env::new();
    let ops = [
        "abs(x)",
        "abs_diff(x, y)",
        "add_sat(x, y)",
        "max(x, y)",
        "popcount(x)",
        "clz(x)",
        "hadd(x, y)",
        "mul_hi(x, y)",
    ];
    let source: String = ops
        .iter()
        .enumerate()
        .map(|(k, op)| {
            format!(
                "kernel void k{k}(global const char *a, global const char *b, global uchar *out) {{
                     size_t i = get_global_id(0);
                     char x = a[i], y = b[i];
                     out[i] = {op};
                 }}\n"
            )
        })
        .collect();
    let p = build(&env, &source, "");
    let n = 4096;
    let a: Vec<i8> = (0..n).map(|i| (i * 37 % 256) as u8 as i8).collect();
    let b: Vec<i8> = (0..n).map(|i| (i * 91 % 256 + 3) as u8 as i8).collect();
    let (ma, mb) = (buffer_of(&env, &a), buffer_of(&env, &b));
    let out = env.buffer(CL_MEM_READ_WRITE, n, null_mut());
    let reference = |k: usize, x: i8, y: i8| -> u8 {
        match k {
            0 => x.unsigned_abs(),
            1 => (x as i16 - y as i16).unsigned_abs() as u8,
            2 => x.saturating_add(y) as u8,
            3 => x.max(y) as u8,
            4 => x.count_ones() as u8,
            5 => x.leading_zeros() as u8,
            6 => ((x as i16 + y as i16) >> 1) as u8,
            _ => ((x as i16 * y as i16) >> 8) as u8,
        }
    };
    for (k, op) in ops.iter().enumerate() {
        let kern = kernel(p, &format!("k{k}"));
        set_arg(kern, 0, &ma);
        set_arg(kern, 1, &mb);
        set_arg(kern, 2, &out);
        // No local size: the driver's groups are as wide as the vectorizer likes.
        run(&env, kern, &[n], None);
        let got = env.read(out, n);
        for i in 0..n {
            assert_eq!(got[i], reference(k, a[i], b[i]), "{op}, work-item {i}: a {}, b {}", a[i], b[i]);
        }
        ok!(cl!(clReleaseKernel(kern)));
    }
    for m in [ma, mb, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

const ATOMIC_HISTOGRAM: &str = r#"
kernel void histogram(global const float *x, int n, global int *bins, global float *sum, local int *lbins) {
    int lid = get_local_id(0), nb = 16;
    for (int i = lid; i < nb; i += get_local_size(0)) lbins[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        float v = x[i];
        if (!isnan(v) && isless(v, 1.0f) && !signbit(v)) {
            atomic_inc(&lbins[(int)(v * nb)]);
            atomic_fetch_add_explicit((volatile global atomic_float *)sum, v, memory_order_relaxed);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < nb; i += get_local_size(0)) atomic_add(&bins[i], lbins[i]);
}
"#;

/// Atomic operations and relational tests under branches the lanes take apart: the
/// kernel runs in lanes (float compares on 8-lane registers in its launcher), each
/// lane's atomic operation its own, lanes not in the branch none; the counts and the
/// sum (of values exact in binary) match the host's.
#[test]
fn atomics_under_branches_run_in_simd_lanes_one_lane_at_a_time() {
    let env = Env::new();
    let p = build(&env, ATOMIC_HISTOGRAM, "-cl-std=CL3.0");
    let k = kernel(p, "histogram");
    let n = 10_000usize;
    let x: Vec<f32> = (0..n)
        .map(|i| match i % 7 {
            0 => f32::NAN,
            1 => -((i % 5) as f32) / 8.0,
            2 => 1.0 + (i % 3) as f32,
            _ => ((i * 37) % 64) as f32 / 64.0,
        })
        .collect();
    let (bx, bins, sum) = (buffer_of(&env, &x), buffer_of(&env, &[0i32; 16]), buffer_of(&env, &[0f32]));
    set_arg(k, 0, &bx);
    set_arg(k, 1, &(n as i32));
    set_arg(k, 2, &bins);
    set_arg(k, 3, &sum);
    ok!(cl!(clSetKernelArg(k, 4, 16 * 4, null())));
    run(&env, k, &[512], Some(&[128]));
    let mut want = [0i32; 16];
    let mut want_sum = 0f64;
    for &v in x.iter().filter(|v| (0.0..1.0).contains(*v) && v.is_sign_positive()) {
        want[(v * 16.0) as usize] += 1;
        want_sum += v as f64;
    }
    assert_eq!(read_as::<i32>(&env, bins, 16), want);
    assert_eq!(read_as::<f32>(&env, sum, 1)[0] as f64, want_sum);
    let code = launcher_code(p, "histogram");
    assert!(
        code.lines().any(|l| l.split('\t').nth(2).is_some_and(|op| op.starts_with("vcmp")) && l.contains("ymm")),
        "no 8-lane float compare in the launcher:\n{code}"
    );
    for b in [bx, bins, sum] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const LEADER: &str = r#"
kernel void leader(global const long *counts, global long *out, local long *cache, int n) {
    uint lid = get_local_id(0);
    for (uint i = lid; i < n; i += get_local_size(0)) cache[i] = counts[i];
    if (lid == 0) {
        long s = 0;
        for (int d = 0; d < n; ++d) s += cache[d];
        out[get_group_id(0)] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 1) out[get_num_groups(0) + get_group_id(0)] = cache[n - 1];
}
"#;

/// A group's leader reads what the work-items of its sub-group stored with no barrier
/// between (dpnp's histogram reads its edge counts so): a SIMD device runs them in
/// lockstep, and so do the lanes of a chunk here, the groups' first chunk included,
/// which runs as a whole chunk though only its first `n` work-items store. Each
/// launch's groups get fresh local memory's worth of stale values (the last launch's)
/// only where this fails.
#[test]
fn a_leader_reads_what_its_chunks_work_items_stored_without_a_barrier() {
    let env = Env::new();
    let p = build(&env, LEADER, "");
    let k = kernel(p, "leader");
    for (n, local) in [(3i32, 256usize), (8, 64), (2, 8)] {
        for round in 0..3 {
            // Different counts each launch, so stale local memory cannot pass.
            let counts: Vec<i64> = (0..8).map(|i| (i + 1) * (round + 1) * 10 + n as i64).collect();
            let (bc, out) = (buffer_of(&env, &counts), buffer_of(&env, &[0i64; 8]));
            set_arg(k, 0, &bc);
            set_arg(k, 1, &out);
            ok!(cl!(clSetKernelArg(k, 2, 8 * 8, null())));
            set_arg(k, 3, &n);
            run(&env, k, &[4 * local], Some(&[local]));
            let got = read_as::<i64>(&env, out, 8);
            let want: i64 = counts[..n as usize].iter().sum();
            assert_eq!(got[..4], [want; 4], "n {n}, groups of {local}, launch {round}");
            assert_eq!(got[4..], [counts[n as usize - 1]; 4], "n {n}, groups of {local}, launch {round}");
            ok!(cl!(clReleaseMemObject(bc)));
            ok!(cl!(clReleaseMemObject(out)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const PUNNED: &str = r#"
kernel void pun(global const int *in, global uchar *out, global int *back) {
    size_t i = get_global_id(0);
    union { int word; uchar4 bytes; } u;
    u.word = in[i] * 3 + (int)i;
    uchar4 b = u.bytes;
    out[4 * i] = b.w;
    out[4 * i + 1] = b.z;
    out[4 * i + 2] = b.y;
    out[4 * i + 3] = b.x;
    u.bytes = b + (uchar4)(1, 2, 3, 4);
    back[i] = u.word;
}
"#;

/// A private variable written as one type and read as another (SYCL's `vec<bool, 4>`
/// written as an `int` and read by bytes) is kept lane by lane in the SIMD copy: each
/// lane's bytes are its own, whatever type reads them.
#[test]
fn a_private_variable_read_as_other_types_keeps_each_work_items_bytes() {
    let env = Env::new();
    let p = build(&env, PUNNED, "");
    let k = kernel(p, "pun");
    let n = 1000usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(0x01f3_7a95) ^ (i << 7)).collect();
    let (bin, out, back) =
        (buffer_of(&env, &input), env.buffer(0, 4 * n, null_mut()), env.buffer(0, 4 * n, null_mut()));
    set_arg(k, 0, &bin);
    set_arg(k, 1, &out);
    set_arg(k, 2, &back);
    run(&env, k, &[n], Some(&[40]));
    let (bytes, words) = (read_as::<u8>(&env, out, 4 * n), read_as::<i32>(&env, back, n));
    for i in 0..n {
        let w = input[i].wrapping_mul(3).wrapping_add(i as i32).to_le_bytes();
        assert_eq!(bytes[4 * i..4 * i + 4], [w[3], w[2], w[1], w[0]], "work-item {i}");
        let b: Vec<u8> = w.iter().zip(1u8..).map(|(x, d)| x.wrapping_add(d)).collect();
        assert_eq!(words[i], i32::from_le_bytes([b[0], b[1], b[2], b[3]]), "work-item {i}");
    }
    for b in [bin, out, back] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const RELATIONALS: &str = r#"
#define TESTS(T, x, y, o) \
    o[0] = isnan(x); o[1] = isinf(x); o[2] = isfinite(x); o[3] = signbit(x); \
    o[4] = isequal(x, y); o[5] = isnotequal(x, y); o[6] = isgreater(x, y); \
    o[7] = isgreaterequal(x, y); o[8] = isless(x, y); o[9] = islessequal(x, y); \
    o[10] = islessgreater(x, y); o[11] = isordered(x, y); o[12] = isunordered(x, y);
kernel void floats(global const float *a, global const float *b, global int *out) {
    size_t i = get_global_id(0);
    float x = a[i], y = b[i];
    global int *o = out + 13 * i;
    TESTS(float, x, y, o)
}
kernel void doubles(global const double *a, global const double *b, global int *out) {
    size_t i = get_global_id(0);
    double x = a[i], y = b[i];
    global int *o = out + 13 * i;
    TESTS(double, x, y, o)
}
"#;

/// The scalar relational builtins in SIMD lanes (written out as compares there) answer
/// 1 or 0 as the scalar functions do, for NaNs, infinities, signed zeros and
/// subnormals, in floats and doubles.
#[test]
fn scalar_relational_builtins_in_lanes_answer_one_or_zero() {
    let env = Env::new();
    let p = build(&env, RELATIONALS, "");
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0, -2.5, 1e-310, 3.0, f64::MAX];
    let pairs: Vec<(f64, f64)> = specials.iter().flat_map(|&x| specials.iter().map(move |&y| (x, y))).collect();
    let n = pairs.len();
    let want = |x: f64, y: f64| -> Vec<i32> {
        let b = |c: bool| c as i32;
        vec![
            b(x.is_nan()),
            b(x.is_infinite()),
            b(x.is_finite()),
            b(x.is_sign_negative()),
            b(x == y),
            b(x != y),
            b(x > y),
            b(x >= y),
            b(x < y),
            b(x <= y),
            // (not `x != y`, which NaNs pass)
            b(x.partial_cmp(&y).is_some_and(|o| o != std::cmp::Ordering::Equal)),
            b(!x.is_nan() && !y.is_nan()),
            b(x.is_nan() || y.is_nan()),
        ]
    };
    for name in ["floats", "doubles"] {
        let k = kernel(p, name);
        let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
        let (ba, bb) = match name {
            "floats" => {
                let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
                (buffer_of(&env, &f(&a)), buffer_of(&env, &f(&b)))
            }
            _ => (buffer_of(&env, &a), buffer_of(&env, &b)),
        };
        let out = env.buffer(0, n * 13 * 4, null_mut());
        set_arg(k, 0, &ba);
        set_arg(k, 1, &bb);
        set_arg(k, 2, &out);
        run(&env, k, &[n], Some(&[20]));
        let got = read_as::<i32>(&env, out, n * 13);
        for (i, &(x, y)) in pairs.iter().enumerate() {
            let (x, y) = match name {
                "floats" => (x as f32 as f64, y as f32 as f64),
                _ => (x, y),
            };
            assert_eq!(got[13 * i..13 * i + 13], want(x, y)[..], "{name}: {x:e}, {y:e}");
        }
        let code = launcher_code(p, name);
        assert!(code.lines().any(|l| l.contains("vcmp") && l.contains("ymm")), "no 8-lane compares in {name}");
        for m in [ba, bb, out] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));
    }
    ok!(cl!(clReleaseProgram(p)));
}
