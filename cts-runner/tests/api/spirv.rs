//! SPIR-V programs through the loader: the device's IL queries, kernels compiled
//! offline (clang-15 -> llvm-spirv-15, in the test) giving the same results as from
//! source (vectors whose x86-64 ABI differs from SPIR's, barriers, `__local` memory,
//! async copies, C11 atomics, collectives, images), specialization constants,
//! compile and link of IL programs, and every error.

use std::path::PathBuf;
use std::process::Command;

use crate::common::*;

const OFFLINE_CLANG: &str = "clang-15";
const OFFLINE_TRANSLATOR: &str = "llvm-spirv-15";

fn scratch() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("ferrocl-spirv-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tool(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {:?} ({e}): the tests need clang-15, llvm-spirv-15 and spirv-tools", cmd.get_program())
    });
    assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// OpenCL C compiled offline to SPIR-V, as an application's build step would.
fn spirv_of(source: &str, std: &str) -> Vec<u8> {
    spirv_with(source, std, "", "")
}

/// `spirv_of` with more OpenCL C extensions and features (`,+name` each) and SPIR-V
/// extensions for the translator (`+name,+name`).
fn spirv_with(source: &str, std: &str, cl_ext: &str, spirv_ext: &str) -> Vec<u8> {
    let d = scratch();
    let (cl, bc, spv) = (d.join("k.cl"), d.join("k.bc"), d.join("k.spv"));
    std::fs::write(&cl, source).unwrap();
    tool(
        Command::new(OFFLINE_CLANG)
            .args([
                "-x",
                "cl",
                &format!("-cl-std={std}"),
                "-target",
                "spir64-unknown-unknown",
                "-O2",
                "-c",
                "-emit-llvm",
            ])
            .args(["-Xclang", "-finclude-default-header", "-Xclang", "-no-opaque-pointers"])
            .args([
                "-Xclang",
                &format!("-cl-ext=+cl_khr_fp16,+cl_khr_fp64,+__opencl_c_images,+__opencl_c_read_write_images{cl_ext}"),
            ])
            .arg(&cl)
            .arg("-o")
            .arg(&bc),
    );
    let mut translate = Command::new(OFFLINE_TRANSLATOR);
    if !spirv_ext.is_empty() {
        translate.arg(format!("--spirv-ext={spirv_ext}"));
    }
    tool(translate.arg(&bc).arg("-o").arg(&spv));
    let bytes = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    bytes
}

/// SPIR-V assembly (for what OpenCL C cannot say, such as specialization constants).
fn assemble(text: &str) -> Vec<u8> {
    let d = scratch();
    let (asm, spv) = (d.join("k.spvasm"), d.join("k.spv"));
    std::fs::write(&asm, text).unwrap();
    tool(Command::new("spirv-as").args(["--target-env", "opencl2.1"]).arg(&asm).arg("-o").arg(&spv));
    let bytes = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    bytes
}

fn il_program(env: &Env, il: &[u8]) -> cl_program {
    let (p, e) = with_err(|e| cl!(clCreateProgramWithIL(env.context, il.as_ptr().cast(), il.len(), e)));
    ok!(e);
    p
}

fn build_il(env: &Env, il: &[u8]) -> cl_program {
    let p = il_program(env, il);
    let e = cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut()));
    assert_eq!(e, CL_SUCCESS, "IL build failed:\n{}", build_log(env, p));
    p
}

/// A kernel argument for `launch`.
enum Arg {
    In(Vec<u8>),
    Out(usize),
    Local(usize),
    Value(Vec<u8>),
}

/// Runs kernel `name` of `p` and returns the contents of every buffer argument after.
fn launch(env: &Env, p: cl_program, name: &str, args: &[Arg], global: usize, local: usize) -> Vec<Vec<u8>> {
    let k = kernel(p, name);
    let mut buffers = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let i = i as cl_uint;
        match a {
            Arg::In(bytes) => buffers.push((i, env.buffer_with(bytes), bytes.len())),
            Arg::Out(n) => buffers.push((i, env.buffer_with(&vec![0u8; *n]), *n)),
            Arg::Local(n) => ok!(cl!(clSetKernelArg(k, i, *n, null()))),
            Arg::Value(v) => ok!(cl!(clSetKernelArg(k, i, v.len(), v.as_ptr().cast()))),
        }
    }
    for (i, m, _) in &buffers {
        set_arg(k, *i, m);
    }
    run(env, k, &[global], Some(&[local]));
    let out = buffers.iter().map(|&(_, m, n)| env.read(m, n)).collect();
    for (_, m, _) in buffers {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    out
}

fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain numbers, read as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }.to_vec()
}

fn floats(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect()
}

const KERNELS: &str = r#"
// Vector types the x86-64 C ABI passes differently from SPIR: float2 and int2 as a
// double, uchar2 as an i16, float16 in memory without AVX-512; pointer outputs.
kernel void vectors(global const float2 *a, global const uchar2 *b, global const int2 *c,
                    global const float16 *d, global float2 *oa, global uchar2 *ob, global int2 *oc,
                    global float16 *od, global float *of) {
    size_t i = get_global_id(0);
    float2 whole;
    oa[i] = cos(a[i]) + fract(a[i] * 3.5f, &whole) + whole;
    ob[i] = abs_diff(b[i], b[i].yx) + rotate(b[i], (uchar2)(3, 5));
    oc[i] = clamp(c[i], -5, 5) + mad24(c[i], c[i].yx, (int2)(1, 2));
    od[i] = fma(d[i], d[i], (float16)(1.0f)) + sin(d[i]);
    float p;
    of[i] = fract(a[i].x * 3.7f, &p) + p + convert_float(convert_char_sat_rte(a[i].y * 100.0f))
          + dot(a[i], a[i]) + length(convert_float3(c[i].xyx));
}

// Barriers with __local memory, and a barrier in a called function (inlined): regions both.
void sync_and_add(local float *s, size_t l, size_t n) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < n) s[l] += s[l + n];
}
kernel void reduce(global const float *in, global float *out, local float *scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    for (size_t s = n / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s) scratch[l] += scratch[l + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) out[get_group_id(0)] = scratch[0];
}
kernel void reduce_called(global const float *in, global float *out, local float *scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    for (size_t s = n / 2; s > 0; s >>= 1) sync_and_add(scratch, l, s);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) out[get_group_id(0)] = scratch[0];
}

// A loop whose counter crosses its barriers in a register in the optimised module.
kernel void staged(global const float *in, global float *out, local float *buf, int tiles) {
    size_t base = get_group_id(0) * tiles * 64, l = get_local_id(0);
    for (int t = 0; t < tiles; t++) {
        buf[l] = in[base + t * 64 + l];
        barrier(CLK_LOCAL_MEM_FENCE);
        out[base + t * 64 + l] = buf[63 - l] * 2.0f + t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Async copies (plain and strided) into __local tiles.
kernel void tiles(global const float *in, global float *out, global float *strided, local float *tile) {
    size_t n = get_local_size(0), g = get_group_id(0), l = get_local_id(0);
    event_t e = async_work_group_copy(tile, in + g * n, n, 0);
    wait_group_events(1, &e);
    out[get_global_id(0)] = tile[n - 1 - l] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_strided_copy(strided + g, tile, n, get_num_groups(0), 0);
    wait_group_events(1, &e);
}

// C11 atomics, work-group collectives and the generic address space.
kernel void atomics(global atomic_int *counter, global int *sums, global const int *in) {
    size_t i = get_global_id(0);
    atomic_fetch_add_explicit(counter, in[i], memory_order_relaxed, memory_scope_device);
    int s = work_group_reduce_add(in[i]);
    int scan = work_group_scan_inclusive_max(in[i]);
    generic int *g = sums + i;
    *g = s * 1000 + scan;
}
"#;

#[test]
fn device_reports_spirv() {
    let (platform, device) = platform_device();
    let il = info_string(|s, v, r| cl!(clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, s, v, r)));
    assert!(il.split(' ').any(|v| v == "SPIR-V_1.0"), "CL_DEVICE_IL_VERSION: {il}");
    let with_version = info_bytes(|s, v, r| cl!(clGetDeviceInfo(device, CL_DEVICE_ILS_WITH_VERSION, s, v, r)));
    let n = with_version.len() / std::mem::size_of::<cl_name_version>();
    assert_eq!(n, il.split(' ').count(), "one record per version");
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|e| e == "cl_khr_il_program"), "{ext}");
    let name = std::ffi::CString::new("clCreateProgramWithILKHR").unwrap();
    assert!(!cl!(clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr())).is_null());
    // cl_khr_spirv_queries: what the Khronos CTS requires of this device's features.
    assert!(ext.split(' ').any(|e| e == "cl_khr_spirv_queries"), "{ext}");
    let names = |param| -> Vec<String> {
        let bytes = info_bytes(|s, v, r| cl!(clGetDeviceInfo(device, param, s, v, r)));
        bytes
            .chunks(8)
            .map(|p| {
                let ptr = usize::from_ne_bytes(p.try_into().unwrap()) as *const std::ffi::c_char;
                // SAFETY: the driver returns pointers to NUL-terminated static strings.
                unsafe { std::ffi::CStr::from_ptr(ptr) }.to_str().unwrap().to_string()
            })
            .collect()
    };
    assert_eq!(names(CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR), ["OpenCL.std"]);
    let spv = names(CL_DEVICE_SPIRV_EXTENSIONS_KHR);
    for (cl, spv_name) in [
        ("cl_khr_spirv_linkonce_odr", "SPV_KHR_linkonce_odr"),
        ("cl_khr_spirv_no_integer_wrap_decoration", "SPV_KHR_no_integer_wrap_decoration"),
        ("cl_khr_expect_assume", "SPV_KHR_expect_assume"),
        ("cl_khr_integer_dot_product", "SPV_KHR_integer_dot_product"),
        ("cl_khr_subgroup_rotate", "SPV_KHR_subgroup_rotate"),
    ] {
        assert_eq!(ext.split(' ').any(|e| e == cl), spv.iter().any(|s| s == spv_name), "{cl} / {spv_name}: {spv:?}");
    }
    let caps = info_bytes(|s, v, r| cl!(clGetDeviceInfo(device, CL_DEVICE_SPIRV_CAPABILITIES_KHR, s, v, r)));
    let caps: Vec<u32> = caps.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
    // Addresses, Linkage, Kernel, Vector16, Float16Buffer, Int64, Int16, Int8, the image
    // set, Groups, GenericPointer, SubgroupDispatch, Float16, Float64, Int64Atomics.
    for c in [4, 5, 6, 7, 8, 11, 22, 39, 13, 14, 20, 43, 44, 46, 47, 18, 38, 58, 9, 10, 12] {
        assert!(caps.contains(&c), "capability {c} missing: {caps:?}");
    }
}

#[test]
fn kernels_give_the_same_results_as_from_source() {
    let env = Env::new();
    let from_source = build(&env, KERNELS, "-cl-std=CL2.0");
    let from_il = build_il(&env, &spirv_of(KERNELS, "CL2.0"));
    let n = 256usize;
    let f: Vec<f32> = (0..n * 16).map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.173).collect();
    let ints: Vec<i32> = (0..n * 2).map(|i| (i as i32 * 7919) % 23 - 11).collect();
    let b: Vec<u8> = pattern(n * 2, 9);
    let vectors = [
        Arg::In(bytes_of(&f[..n * 2])),
        Arg::In(b.clone()),
        Arg::In(bytes_of(&ints)),
        Arg::In(bytes_of(&f)),
        Arg::Out(n * 8),
        Arg::Out(n * 2),
        Arg::Out(n * 8),
        Arg::Out(n * 64),
        Arg::Out(n * 4),
    ];
    let expected = launch(&env, from_source, "vectors", &vectors, n, 64);
    assert_eq!(launch(&env, from_il, "vectors", &vectors, n, 64), expected, "vectors");
    // A spot check against the host: abs_diff + rotate on uchar2.
    let ob = &expected[5];
    for i in 0..n {
        let (x, y) = (b[2 * i], b[2 * i + 1]);
        assert_eq!(ob[2 * i], x.abs_diff(y).wrapping_add(x.rotate_left(3)), "item {i}");
    }

    for name in ["reduce", "reduce_called"] {
        let args = [Arg::In(bytes_of(&f[..n])), Arg::Out(4 * 4), Arg::Local(64 * 4)];
        let got = launch(&env, from_il, name, &args, n, 64);
        assert_eq!(got, launch(&env, from_source, name, &args, n, 64), "{name}");
        let sums = floats(&got[1]);
        for (g, s) in sums.iter().enumerate() {
            let host: f32 = f[g * 64..g * 64 + 64].iter().sum();
            assert!((s - host).abs() <= 1e-3 * host.abs().max(1.0), "{name} group {g}: {s} vs {host}");
        }
    }
    // The optimised module keeps the loop's counter in a register across the barriers,
    // and the block ending in one is a phi's way in: demoted to a stack variable (the
    // block split after the barrier, the phi naming its last piece), the kernel runs as
    // barrier regions, not fibers.
    let tiles = 4usize;
    let args = [
        Arg::In(bytes_of(&f[..4 * tiles * 64])),
        Arg::Out(4 * tiles * 64 * 4),
        Arg::Local(64 * 4),
        Arg::Value((tiles as i32).to_ne_bytes().to_vec()),
    ];
    for p in [from_source, from_il] {
        let out = floats(&launch(&env, p, "staged", &args, 4 * 64, 64)[1]);
        for (i, v) in out.iter().enumerate() {
            let (g, t, l) = (i / (tiles * 64), i / 64 % tiles, i % 64);
            let want = f[g * tiles * 64 + t * 64 + 63 - l] * 2.0 + t as f32;
            assert_eq!(*v, want, "staged {i} ({})", if p == from_il { "SPIR-V" } else { "source" });
        }
    }
    assert!(!runs_as_fibers(from_il, "staged"), "staged from SPIR-V runs as fibers");
    // The called function is inlined, and the optimised module's arguments it reads
    // after its barrier (`l`, `n`) become variables: regions, not fibers.
    assert!(!runs_as_fibers(from_il, "reduce_called"), "reduce_called from SPIR-V runs as fibers");

    let args = [Arg::In(bytes_of(&f[..n])), Arg::Out(n * 4), Arg::Out(n * 4), Arg::Local(64 * 4)];
    let got = launch(&env, from_il, "tiles", &args, n, 64);
    assert_eq!(got, launch(&env, from_source, "tiles", &args, n, 64), "tiles");
    let (out, strided) = (floats(&got[1]), floats(&got[2]));
    for i in 0..n {
        let (g, l) = (i / 64, i % 64);
        assert_eq!(out[i], f[g * 64 + 63 - l] * 2.0);
        assert_eq!(strided[l * 4 + g], f[i], "strided copy of item {i}");
    }

    let args = [Arg::In(vec![0; 4]), Arg::Out(n * 4), Arg::In(bytes_of(&ints[..n]))];
    let got = launch(&env, from_il, "atomics", &args, n, 32);
    assert_eq!(got, launch(&env, from_source, "atomics", &args, n, 32), "atomics");
    let total: i32 = ints[..n].iter().sum();
    assert_eq!(i32::from_ne_bytes(got[0][..4].try_into().unwrap()), total);
    for releasing in [from_source, from_il] {
        ok!(cl!(clReleaseProgram(releasing)));
    }
}

const IMAGES: &str = r#"
kernel void scale(read_only image2d_t src, sampler_t s, write_only image2d_t dst, global int4 *sizes) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 c = read_imagef(src, s, p) * 2.0f + read_imagef(src, s, (float2)(p.x + 0.5f, p.y + 0.5f));
    write_imagef(dst, p, c);
    if (p.x == 0 && p.y == 0) *sizes = (int4)(get_image_width(src), get_image_height(dst), get_image_channel_order(src), 0);
}
"#;

#[test]
fn images_and_samplers_work_from_spirv() {
    let env = Env::new();
    let (w, h) = (16usize, 8usize);
    let pixels: Vec<f32> = (0..w * h * 4).map(|i| (i % 97) as f32 * 0.25).collect();
    let format = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_FLOAT };
    // SAFETY: an all-zero descriptor is valid before its fields are set.
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    let make = |flags, host: *mut c_void| {
        let (m, e) = with_err(|e| cl!(clCreateImage(env.context, flags, &format, &desc, host, e)));
        ok!(e);
        m
    };
    let src = make(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pixels.as_ptr() as *mut c_void);
    let (sampler, e) =
        with_err(|e| cl!(clCreateSampler(env.context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, e)));
    ok!(e);
    let results: Vec<(Vec<f32>, Vec<u8>)> = [build(&env, IMAGES, ""), build_il(&env, &spirv_of(IMAGES, "CL1.2"))]
        .into_iter()
        .map(|p| {
            let dst = make(CL_MEM_WRITE_ONLY, null_mut());
            let sizes = env.buffer_with(&[0u8; 16]);
            let k = kernel(p, "scale");
            set_arg(k, 0, &src);
            set_arg(k, 1, &sampler);
            set_arg(k, 2, &dst);
            set_arg(k, 3, &sizes);
            run(&env, k, &[w, h], None);
            let mut out = vec![0f32; w * h * 4];
            let (origin, region) = ([0usize; 3], [w, h, 1]);
            ok!(cl!(clEnqueueReadImage(
                env.queue,
                dst,
                CL_TRUE,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            )));
            let s = env.read(sizes, 16);
            for m in [dst, sizes] {
                ok!(cl!(clReleaseMemObject(m)));
            }
            ok!(cl!(clReleaseKernel(k)));
            ok!(cl!(clReleaseProgram(p)));
            (out, s)
        })
        .collect();
    assert_eq!(results[0], results[1], "the same from source and from SPIR-V");
    let (out, sizes) = &results[1];
    assert_eq!(out.iter().zip(&pixels).filter(|(o, p)| **o != **p * 3.0).count(), 0, "3x every texel");
    let sizes: Vec<i32> = sizes.chunks_exact(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(sizes[..3], [w as i32, h as i32, CL_RGBA as i32]);
    ok!(cl!(clReleaseSampler(sampler)));
    ok!(cl!(clReleaseMemObject(src)));
}

/// A kernel storing specialization constants 1 (float, 1.5), 2 (uchar, 7) and 3 (bool,
/// true): a[0] = c1, b[0] = c2 + (c3 ? 1 : 0).
const SPEC_CONSTANTS: &str = include_str!("spec_constants.spvasm");

#[test]
fn specialization_constants() {
    let env = Env::new();
    let il = assemble(SPEC_CONSTANTS);
    let p = il_program(&env, &il);
    let run_k = |p: cl_program| {
        let e = cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut()));
        assert_eq!(e, CL_SUCCESS, "{}", build_log(&env, p));
        let out = launch(&env, p, "k", &[Arg::Out(4), Arg::Out(4)], 1, 1);
        (f32::from_ne_bytes(out[0][..4].try_into().unwrap()), u32::from_ne_bytes(out[1][..4].try_into().unwrap()))
    };
    assert_eq!(run_k(p), (1.5, 8), "the module's defaults");
    let set = |id: cl_uint, v: &[u8]| cl!(clSetProgramSpecializationConstant(p, id, v.len(), v.as_ptr().cast()));
    ok!(set(1, &(-3.25f32).to_ne_bytes()));
    ok!(set(2, &[200]));
    ok!(set(3, &[0]));
    assert_eq!(run_k(p), (-3.25, 200));
    ok!(set(3, &[1]));
    ok!(set(2, &[255]));
    assert_eq!(run_k(p), (-3.25, 256), "later values replace earlier ones; unset ones keep theirs");
    err!(CL_INVALID_SPEC_ID, set(9, &[0; 4]));
    err!(CL_INVALID_VALUE, set(1, &[0; 2]));
    err!(CL_INVALID_VALUE, set(3, &[0; 4]));
    err!(CL_INVALID_VALUE, cl!(clSetProgramSpecializationConstant(p, 1, 4, null())));
    let source = program(&env, "kernel void k(global int *a) { *a = 1; }");
    err!(CL_INVALID_PROGRAM, cl!(clSetProgramSpecializationConstant(source, 1, 4, [0u8; 4].as_ptr().cast())));
    err!(CL_INVALID_PROGRAM, cl!(clSetProgramSpecializationConstant(null_mut(), 1, 4, [0u8; 4].as_ptr().cast())));
    for q in [p, source] {
        ok!(cl!(clReleaseProgram(q)));
    }
}

#[test]
fn structs_passed_by_value_reach_the_kernel() {
    // SYCL passes functors' captures this way: a struct argument (`ByVal`) holding
    // counts, offsets and a pointer to more data.
    let env = Env::new();
    let il = spirv_of(
        "typedef struct { uint nd; ulong off_a; ulong off_b; ulong shape; } indexer;
         kernel void k(global const char *a, global char *b, indexer ix) {
             size_t i = get_global_id(0);
             long extent = 1;
             for (uint d = 0; d < ix.nd; d++) extent *= ((global const long *)ix.shape)[d];
             b[ix.off_b + i] = a[ix.off_a + i] + (char)extent;
         }",
        "CL1.2",
    );
    let p = build_il(&env, &il);
    let shape: [i64; 3] = [2, 3, 4];
    let shape_buf = env.buffer_with(&bytes_of(&shape));
    let a: Vec<u8> = (0..64).collect();
    let k = kernel(p, "k");
    let (ma, mb) = (env.buffer_with(&a), env.buffer_with(&[0u8; 64]));
    set_arg(k, 0, &ma);
    set_arg(k, 1, &mb);
    // The struct as the host lays it out: uint, padding, two ulongs, a pointer.
    let mut bytes = [0u8; 32];
    bytes[0..4].copy_from_slice(&3u32.to_ne_bytes());
    bytes[8..16].copy_from_slice(&8u64.to_ne_bytes());
    bytes[16..24].copy_from_slice(&4u64.to_ne_bytes());
    // The buffer's address, as a blocking map gives it (device memory is host memory).
    let mut e = 0;
    let ptr = cl!(clEnqueueMapBuffer(env.queue, shape_buf, CL_TRUE, CL_MAP_READ, 0, 24, 0, null(), null_mut(), &mut e));
    ok!(e);
    let shape_ptr = ptr as u64;
    ok!(cl!(clEnqueueUnmapMemObject(env.queue, shape_buf, ptr, 0, null(), null_mut())));
    bytes[24..32].copy_from_slice(&shape_ptr.to_ne_bytes());
    ok!(cl!(clSetKernelArg(k, 2, 32, bytes.as_ptr().cast())));
    run(&env, k, &[32], None);
    let b = env.read(mb, 64);
    for i in 0..32 {
        assert_eq!(b[4 + i], a[8 + i].wrapping_add(24), "element {i}");
    }
    for m in [ma, mb, shape_buf] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn sycl_modules_with_alias_scopes_build_and_run() {
    let env = Env::new();
    let p = build_il(&env, &assemble(include_str!("memory_aliasing.spvasm")));
    let input: Vec<f32> = (0..64).map(|i| i as f32 - 7.5).collect();
    let out = launch(&env, p, "scale", &[Arg::In(bytes_of(&input)), Arg::Out(64 * 4)], 64, 16);
    assert_eq!(floats(&out[1]), input.iter().map(|x| 2.0 * x).collect::<Vec<_>>());
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn sycl_sub_group_sizes_reach_the_kernel() {
    let env = Env::new();
    let p = build_il(&env, &assemble(include_str!("sub_group_size.spvasm")));
    // Groups of 40: sub-groups of 16, 16 and 8.
    let out = launch(&env, p, "sg16", &[Arg::Out(80 * 4)], 80, 40);
    let got: Vec<u32> = out[0].chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
    for (i, &v) in got.iter().enumerate() {
        let l = i % 40;
        let first = i - l % 16;
        let size = 16.min(40 - l / 16 * 16);
        let sum: usize = (first..first + size).sum();
        assert_eq!(v as usize, l % 16 + 100 * size + 10000 * sum, "work-item {i}");
    }
    let k = kernel(p, "sg16");
    let mut asked = 0usize;
    ok!(cl!(clGetKernelSubGroupInfo(
        k,
        env.device,
        CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL,
        0,
        null(),
        8,
        (&mut asked as *mut usize).cast(),
        null_mut()
    )));
    assert_eq!(asked, 16);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// SYCL's sub-group loads, stores and shuffles (SPV_INTEL_subgroups' block reads and
/// writes, `OpSubgroupShuffleINTEL`): the translator makes them cl_intel_subgroups
/// calls, which the driver defines.
#[test]
fn sycl_sub_group_block_loads_stores_and_shuffles() {
    let env = Env::new();
    let p = build_il(&env, &assemble(include_str!("sub_group_blocks.spvasm")));
    let n = 256usize;
    let input: Vec<u32> = (0..2 * n as u32).map(|i| i.wrapping_mul(2_246_822_519) >> 5).collect();
    let out = launch(&env, p, "blocks", &[Arg::In(bytes_of(&input)), Arg::Out(8 * n)], n, 64);
    let got: Vec<u32> = out[1].chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
    for (j, &v) in got.iter().enumerate() {
        let (base, k) = (j / 16 * 16, j % 16);
        let want = if k < 8 { input[j] } else { input[j].wrapping_add(input[base + 3]) };
        assert_eq!(v, want, "value {j}");
    }
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn il_programs_and_their_errors() {
    let env = Env::new();
    let il = spirv_of("kernel void k(global int *a) { a[get_global_id(0)] += 5; }", "CL1.2");
    let p = il_program(&env, &il);
    let got = info_bytes(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_IL, s, v, r)));
    assert_eq!(got, il, "CL_PROGRAM_IL is the module as given");
    let source = info_string(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_SOURCE, s, v, r)));
    assert_eq!(source, "");
    let text = program(&env, "kernel void k(global int *a) { *a = 1; }");
    assert!(info_bytes(|s, v, r| cl!(clGetProgramInfo(text, CL_PROGRAM_IL, s, v, r))).is_empty());

    let create =
        |bytes: &[u8], len: usize| with_err(|e| cl!(clCreateProgramWithIL(env.context, bytes.as_ptr().cast(), len, e)));
    err!(CL_INVALID_VALUE, create(&il, 0).1);
    err!(CL_INVALID_VALUE, with_err(|e| cl!(clCreateProgramWithIL(env.context, null(), 16, e))).1);
    err!(CL_INVALID_CONTEXT, with_err(|e| cl!(clCreateProgramWithIL(null_mut(), il.as_ptr().cast(), il.len(), e))).1);
    err!(CL_INVALID_VALUE, create(b"kernel void k() {}", 18).1);
    err!(CL_INVALID_VALUE, create(&il, il.len() - 2).1);
    err!(CL_INVALID_VALUE, create(&il, 16).1);
    let mut past_end = il.clone();
    past_end.extend_from_slice(&((5u32 << 16) | 71).to_le_bytes());
    err!(CL_INVALID_VALUE, create(&past_end, past_end.len()).1);
    // Malformed modules (section 2.4's layout, ids against the bound), each built by the
    // translator before, or crashing it, are refused at once.
    let words: Vec<u32> = il.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let as_bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let with_bound = |bound: u32| {
        let mut w = words.clone();
        w[3] = bound;
        as_bytes(&w)
    };
    let mut nops = words.clone();
    nops.extend(std::iter::repeat(1u32 << 16).take(16 << 20)); // OpNop after the last function
    for (what, bad) in [
        ("the header alone", as_bytes(&words[..5])),
        ("a bound of 2", with_bound(2)),
        ("ids at the bound", with_bound(words[3] - 1)),
        ("a bound of 0xffffffff", with_bound(u32::MAX)),
        ("16 M OpNops after the functions", as_bytes(&nops)),
    ] {
        assert_eq!(create(&bad, bad.len()).1, CL_INVALID_VALUE, "{what}");
    }
    // Well-formed words the translator cannot use: the build fails and says why.
    let end = words.iter().rposition(|&w| w == (1 << 16) | 56).expect("an OpFunctionEnd");
    let mut broken = words.clone();
    broken.splice(end..end, [(2u32 << 16) | 0x7ff0, 5]); // no such opcode, in the function
    let broken = as_bytes(&broken);
    let (b, e) = create(&broken, broken.len());
    ok!(e);
    err!(CL_BUILD_PROGRAM_FAILURE, cl!(clBuildProgram(b, 1, &env.device, null(), None, null_mut())));
    let log = build_log(&env, b);
    assert!(log.contains("SPIR-V") && log.contains("Not implemented"), "the log says why: {log}");
    assert!(!log.contains("Stack dump"), "without the translator's crash report: {log}");
    let status: cl_build_status =
        info(|s, v, r| cl!(clGetProgramBuildInfo(b, env.device, CL_PROGRAM_BUILD_STATUS, s, v, r)));
    assert_eq!(status, CL_BUILD_ERROR);

    // The module builds and runs, twice (the second build is a cache hit).
    for _ in 0..2 {
        let e = cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut()));
        assert_eq!(e, CL_SUCCESS, "{}", build_log(&env, p));
        let out = launch(&env, p, "k", &[Arg::In(bytes_of(&[1i32, 2, 3, 4]))], 4, 4);
        assert_eq!(out[0], bytes_of(&[6i32, 7, 8, 9]));
    }
    for q in [p, text, b] {
        ok!(cl!(clReleaseProgram(q)));
    }
}

#[test]
fn il_programs_compile_and_link() {
    let env = Env::new();
    let caller = spirv_of(
        "float scale(float v);\nkernel void k(global float *x, float by) { size_t i = get_global_id(0); x[i] = scale(x[i]) * by; }",
        "CL1.2",
    );
    let callee = spirv_of("float scale(float v) { return v * 3.0f + 1.0f; }", "CL1.2");
    let compile = |p: cl_program| {
        let e = cl!(clCompileProgram(p, 1, &env.device, null(), 0, null(), null_mut(), None, null_mut()));
        assert_eq!(e, CL_SUCCESS, "{}", build_log(&env, p));
        let t: cl_program_binary_type =
            info(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BINARY_TYPE, s, v, r)));
        assert_eq!(t, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        p
    };
    // Two IL objects, and an IL object with an OpenCL C one.
    let c_callee = program(&env, "float scale(float v) { return v * 3.0f + 1.0f; }");
    for (a, b) in [(il_program(&env, &caller), il_program(&env, &callee)), (il_program(&env, &caller), c_callee)] {
        let inputs = [compile(a), compile(b)];
        let (linked, e) = with_err(|e| {
            cl!(clLinkProgram(env.context, 1, &env.device, null(), 2, inputs.as_ptr(), None, null_mut(), e))
        });
        assert_eq!(e, CL_SUCCESS, "{}", build_log(&env, linked));
        let out = launch(
            &env,
            linked,
            "k",
            &[Arg::In(bytes_of(&[1f32, 2.0])), Arg::Value(2f32.to_ne_bytes().to_vec())],
            2,
            1,
        );
        assert_eq!(floats(&out[0]), [8.0, 14.0]);
        for q in [a, b, linked] {
            ok!(cl!(clReleaseProgram(q)));
        }
    }
    // Overloadable user functions have mangled names like builtins': the 30 imports
    // are not builtins (their wrappers fail to compile, in rounds past clang's error
    // limit) and link to the other module's definitions.
    let decls: String = (0..30).map(|i| format!("__attribute__((overloadable)) float f{i}(float v);\n")).collect();
    let defs: String =
        (0..30).map(|i| format!("__attribute__((overloadable)) float f{i}(float v) {{ return v + {i}; }}\n")).collect();
    let calls: String = (0..30).map(|i| format!(" + f{i}(x[0])")).collect();
    let importer = spirv_of(&format!("{decls}kernel void k(global float *x) {{ x[0] = 0{calls}; }}"), "CL1.2");
    let inputs = [compile(il_program(&env, &importer)), compile(il_program(&env, &spirv_of(&defs, "CL1.2")))];
    let (linked, e) =
        with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 2, inputs.as_ptr(), None, null_mut(), e)));
    assert_eq!(e, CL_SUCCESS, "{}", build_log(&env, linked));
    let out = launch(&env, linked, "k", &[Arg::In(bytes_of(&[1f32]))], 1, 1);
    assert_eq!(floats(&out[0]), [30.0 + (0..30).sum::<i32>() as f32]);
    for q in inputs.into_iter().chain([linked]) {
        ok!(cl!(clReleaseProgram(q)));
    }
    // An import nothing exports fails to link, with a log.
    let lone = compile(il_program(&env, &caller));
    let (linked, e) =
        with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 1, &lone, None, null_mut(), e)));
    err!(CL_LINK_PROGRAM_FAILURE, e);
    assert!(build_log(&env, linked).contains("scale"), "{}", build_log(&env, linked));
    for q in [lone, linked] {
        ok!(cl!(clReleaseProgram(q)));
    }
}

/// The translator is what makes the device read SPIR-V: a process that cannot find it
/// (`FERROCL_LLVM_SPIRV` naming nothing) is refused IL programs; with it, the same
/// module builds.
#[test]
fn without_the_translator_the_device_takes_no_il() {
    let _ = platform_device();
    let file = std::env::temp_dir().join(format!("ferrocl-il-probe-{}.spv", std::process::id()));
    std::fs::write(&file, spirv_of("kernel void k(global int *a) { *a = 1; }", "CL1.2")).unwrap();
    let build = |extra: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cts-runner"));
        cmd.arg("build").arg(&file);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    let with = build(&[]);
    assert!(with.contains("build: CL_SUCCESS"), "{with}");
    let without = build(&[("FERROCL_LLVM_SPIRV", "/nonexistent/llvm-spirv")]);
    assert!(without.contains(&format!("build: {CL_INVALID_OPERATION}")), "CL_INVALID_OPERATION expected: {without}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn pipes_in_spirv_modules_carry_packets() {
    let env = Env::new();
    let src = "kernel void produce(global const int *src, write_only pipe int out) {
                   reserve_id_t r = work_group_reserve_write_pipe(out, get_local_size(0));
                   if (is_valid_reserve_id(r)) {
                       write_pipe(out, r, get_local_id(0), &src[get_global_id(0)]);
                       work_group_commit_write_pipe(out, r);
                   }
               }
               kernel void consume(read_only pipe int in, global int *dst, global int *count) {
                   int v;
                   if (read_pipe(in, &v) == 0) dst[atomic_inc(count)] = v;
               }";
    let p = build_il(&env, &spirv_of(src, "CL2.0"));
    const N: usize = 512;
    let data: Vec<i32> = (0..N as i32).map(|i| 3 * i + 1).collect();
    let (pipe, e) = with_err(|e| cl!(clCreatePipe(env.context, 0, 4, N as cl_uint, null(), e)));
    ok!(e);
    let (src_buf, dst, count) =
        (env.buffer_with(&bytes_of(&data)), env.buffer_with(&[0; N * 4]), env.buffer_with(&[0; 4]));
    let (produce, consume) = (kernel(p, "produce"), kernel(p, "consume"));
    set_arg(produce, 0, &src_buf);
    set_arg(produce, 1, &pipe);
    set_arg(consume, 0, &pipe);
    set_arg(consume, 1, &dst);
    set_arg(consume, 2, &count);
    run(&env, produce, &[N], Some(&[64]));
    run(&env, consume, &[N], Some(&[64]));
    assert_eq!(read_as::<i32>(&env, count, 1), [N as i32]);
    let mut got: Vec<i32> = read_as(&env, dst, N);
    got.sort_unstable();
    assert_eq!(got, data);
    for k in [produce, consume] {
        ok!(cl!(clReleaseKernel(k)));
    }
    for m in [pipe, src_buf, dst, count] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn shader_clock_reads_cl_khr_kernel_clocks_at_each_scope() {
    let env = Env::new();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_khr_kernel_clock"));
    let p = build_il(&env, &assemble(include_str!("shader_clock.spvasm")));
    let before = std::time::Instant::now();
    let out = launch(&env, p, "clocks", &[Arg::Out(3 * 8), Arg::Out(8)], 1, 1);
    let clocks: Vec<u64> = out[0].chunks(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap())).collect();
    let hilo = u64::from(u32::from_ne_bytes(out[1][..4].try_into().unwrap()))
        | u64::from(u32::from_ne_bytes(out[1][4..].try_into().unwrap())) << 32;
    // One monotonic clock in nanoseconds at every scope, read in order.
    assert!(clocks.iter().all(|&c| c > 0), "{clocks:?}");
    assert!(clocks.windows(2).all(|w| w[0] <= w[1]) && clocks[2] <= hilo, "{clocks:?} then {hilo}");
    assert!(hilo - clocks[0] < before.elapsed().as_nanos() as u64 + 1_000_000, "{clocks:?} {hilo}");
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn float_atomics_in_spirv_modules_add_and_order_under_contention() {
    let env = Env::new();
    let src = "kernel void fatomics(global atomic_float *f, global atomic_double *d) {
                   float g = (float)get_global_id(0);
                   atomic_fetch_add_explicit(&f[0], 1.0f, memory_order_relaxed, memory_scope_device);
                   atomic_fetch_max_explicit(&f[1], g, memory_order_relaxed, memory_scope_device);
                   atomic_fetch_min_explicit(&f[2], -g, memory_order_relaxed, memory_scope_device);
                   atomic_fetch_add_explicit(&d[0], 0.5, memory_order_relaxed, memory_scope_device);
                   atomic_fetch_max_explicit(&d[1], (double)g, memory_order_relaxed, memory_scope_device);
                   atomic_fetch_min_explicit(&d[2], -(double)g, memory_order_relaxed, memory_scope_device);
               }";
    let features = ",+__opencl_c_fp64,+__opencl_c_generic_address_space,+__opencl_c_atomic_order_seq_cst,\
                    +__opencl_c_atomic_scope_device,+__opencl_c_int64,+cl_ext_float_atomics,\
                    +__opencl_c_ext_fp32_global_atomic_add,+__opencl_c_ext_fp32_global_atomic_min_max,\
                    +__opencl_c_ext_fp64_global_atomic_add,+__opencl_c_ext_fp64_global_atomic_min_max";
    let il =
        spirv_with(src, "CL3.0", features, "+SPV_EXT_shader_atomic_float_add,+SPV_EXT_shader_atomic_float_min_max");
    let p = build_il(&env, &il);
    const N: usize = 4096;
    let out = launch(&env, p, "fatomics", &[Arg::Out(3 * 4), Arg::Out(3 * 8)], N, 64);
    assert_eq!(floats(&out[0]), [N as f32, (N - 1) as f32, -((N - 1) as f32)]);
    let doubles: Vec<f64> = out[1].chunks(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(doubles, [N as f64 / 2.0, (N - 1) as f64, -((N - 1) as f64)]);
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn uniform_group_instructions_fold_the_work_group() {
    let env = Env::new();
    let p = build_il(&env, &assemble(include_str!("uniform_group.spvasm")));
    // Groups of 8: the product of 1, 2, 3, 1, 2, 3, 1, 2 and the or of 7 down to 0.
    let out = launch(&env, p, "products", &[Arg::Out(32 * 4)], 32, 8);
    let got: Vec<u32> = out[0].chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, [72 + 7; 32]);
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn a_failed_device_assert_fails_the_launch_and_not_the_process() {
    let env = Env::new();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_intel_devicelib_assert"), "{extensions}");
    // What SYCL's assert calls, with the strings in global memory (generic pointers).
    let src = "void __devicelib_assert_fail(const char *expr, const char *file, int line, const char *func,
                                            ulong g0, ulong g1, ulong g2, ulong l0, ulong l1, ulong l2);
               kernel void checked(global const char *text, global int *out, int bad) {
                   size_t i = get_global_id(0);
                   if (i == bad)
                       __devicelib_assert_fail(text, text + 16, 42, text + 32, i, 0, 0, get_local_id(0), 0, 0);
                   out[i] = 1;
               }";
    let p = build_il(&env, &spirv_of(src, "CL2.0"));
    let mut text = vec![0u8; 48];
    text[..9].copy_from_slice(b"x == y\0\0\0");
    text[16..23].copy_from_slice(b"file.c\0");
    text[32..39].copy_from_slice(b"kernel\0");
    let (text_buf, out) = (env.buffer_with(&text), env.buffer_with(&[0; 64 * 4]));
    let k = kernel(p, "checked");
    set_arg(k, 0, &text_buf);
    set_arg(k, 1, &out);
    // No work-item fails: the launch completes.
    set_arg(k, 2, &-1i32);
    assert_eq!(run_status(&env, k, 64, 16), CL_COMPLETE);
    // Work-item 37 fails its assert: the launch fails, the process and the queue go on.
    set_arg(k, 2, &37i32);
    assert_eq!(run_status(&env, k, 64, 16), CL_OUT_OF_RESOURCES);
    set_arg(k, 2, &-1i32);
    assert_eq!(run_status(&env, k, 64, 16), CL_COMPLETE);
    ok!(cl!(clReleaseKernel(k)));
    for m in [text_buf, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

/// Device-side enqueue in a SPIR-V module (DeviceEnqueue: `OpEnqueueKernel`, the
/// block's kernel an entry point, markers, user events, a `__local` parameter).
#[test]
fn device_side_enqueue_in_spirv_modules_runs_children() {
    let env = Env::new();
    let def = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, None);
    let src = "kernel void enq(global int *out) {
                   size_t tid = get_global_id(0);
                   clk_event_t user = create_user_event(), ev, mk;
                   int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4, 2), 1, &user, &ev,
                       ^(local void *p) { local int *l = (local int *)p;
                                          l[get_local_id(0)] = (int)get_global_id(0);
                                          barrier(CLK_LOCAL_MEM_FENCE);
                                          if (get_local_id(0) == 0) atomic_add(&out[tid], l[0] + l[1] + 1000); }, 8u);
                   r |= enqueue_marker(get_default_queue(), 1, &ev, &mk);
                   out[tid + 8] = r;
                   set_user_event_status(user, CL_COMPLETE);
                   release_event(user); release_event(ev); release_event(mk);
               }";
    let p = build_il(&env, &spirv_with(src, "CL2.0", "", ""));
    let out = launch(&env, p, "enq", &[Arg::Out(16 * 4)], 8, 8);
    let got: Vec<i32> = out[0].chunks(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect();
    // Two groups of two: 0 + 1 + 1000 and 2 + 3 + 1000.
    assert_eq!(&got[..8], &[2006; 8]);
    assert_eq!(&got[8..], &[0; 8]);
    ok!(cl!(clReleaseProgram(p)));
    ok!(cl!(clReleaseCommandQueue(def)));
}

/// A SPIR-V 1.6 module (lowered to 1.4 for the translator): `UniformId` decorations,
/// `OpBitcast` of a pointer to an integer and to a vector of integers (1.5).
const SPIRV_1_6: &str = "
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability UniformDecoration
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %kernel \"newer\" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorateId %value UniformId %scope_device
               OpDecorate %newvalue Uniform
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %uint2 = OpTypeVector %uint 2
    %v3ulong = OpTypeVector %ulong 3
    %ptr_gid = OpTypePointer Input %v3ulong
%scope_device = OpConstant %uint 1
     %uint_1 = OpConstant %uint 1
    %uint_42 = OpConstant %uint 42
       %void = OpTypeVoid
  %gptr_uint = OpTypePointer CrossWorkgroup %uint
 %gptr_ulong = OpTypePointer CrossWorkgroup %ulong
 %gptr_uint2 = OpTypePointer CrossWorkgroup %uint2
   %pptr_int = OpTypePointer Function %uint
        %sig = OpTypeFunction %void %gptr_uint %uint %gptr_ulong %gptr_uint2
        %gid = OpVariable %ptr_gid Input
     %kernel = OpFunction %void None %sig
       %base = OpFunctionParameter %gptr_uint
      %value = OpFunctionParameter %uint
   %as_ulong = OpFunctionParameter %gptr_ulong
   %as_uint2 = OpFunctionParameter %gptr_uint2
      %entry = OpLabel
     %pvalue = OpVariable %pptr_int Function %uint_42
      %gidv3 = OpLoad %v3ulong %gid Aligned 32
       %gid0 = OpCompositeExtract %ulong %gidv3 0
        %ptr = OpInBoundsPtrAccessChain %gptr_uint %base %gid0
   %newvalue = OpIAdd %uint %value %uint_1
               OpStore %ptr %newvalue Aligned 4
          %a = OpBitcast %ulong %pvalue
          %b = OpBitcast %uint2 %pvalue
       %pa = OpInBoundsPtrAccessChain %gptr_ulong %as_ulong %gid0
       %pb = OpInBoundsPtrAccessChain %gptr_uint2 %as_uint2 %gid0
               OpStore %pa %a
               OpStore %pb %b
               OpReturn
               OpFunctionEnd
";

#[test]
fn spirv_1_5_and_1_6_modules_run_as_1_4_ones() {
    let env = Env::new();
    let il = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_IL_VERSION, n, v, r)));
    assert!(il.split(' ').any(|v| v == "SPIR-V_1.6") && il.split(' ').any(|v| v == "SPIR-V_1.5"), "{il}");
    let d = scratch();
    let (asm, spv) = (d.join("k.spvasm"), d.join("k.spv"));
    std::fs::write(&asm, SPIRV_1_6).unwrap();
    tool(Command::new("spirv-as").args(["--target-env", "spv1.6"]).arg(&asm).arg("-o").arg(&spv));
    let bytes = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), 0x0001_0600);
    let p = build_il(&env, &bytes);
    let n = 16;
    let value = 41u32.to_ne_bytes().to_vec();
    let out = launch(&env, p, "newer", &[Arg::Out(n * 4), Arg::Value(value), Arg::Out(n * 8), Arg::Out(n * 8)], n, 4);
    assert!(out[0].chunks(4).all(|c| u32::from_ne_bytes(c.try_into().unwrap()) == 42));
    // The address, as a ulong and as a uint2 (the same bytes), non-zero.
    assert_eq!(out[1], out[2]);
    assert!(out[1].chunks(8).all(|c| u64::from_ne_bytes(c.try_into().unwrap()) != 0));
    ok!(cl!(clReleaseProgram(p)));
}
