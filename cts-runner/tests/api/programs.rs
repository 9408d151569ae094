//! Programs through the loader with the real clang: builds, logs, options, binaries,
//! compile + link, and the program cache across processes.

use crate::common::*;

const SAXPY: &str = "kernel void saxpy(global float *y, global const float *x, float a) {\n\
                     size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n";

#[test]
fn build_and_query() {
    let env = Env::new();
    assert_eq!(device_info::<cl_bool>(env.device, CL_DEVICE_COMPILER_AVAILABLE), CL_TRUE);
    let p = build(&env, &format!("{SAXPY}kernel void other(global int *a) {{ a[0] = 1; }}"), "-cl-std=CL3.0 -D X=1");
    let names = info_string(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, s, v, r)));
    let mut names: Vec<&str> = names.split(';').collect();
    names.sort();
    assert_eq!(names, ["other", "saxpy"]);
    assert_eq!(info::<usize>(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, s, v, r))), 2);
    let status: cl_build_status =
        info(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_STATUS, s, v, r)));
    assert_eq!(status, CL_BUILD_SUCCESS);
    let opts = info_string(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_OPTIONS, s, v, r)));
    assert_eq!(opts, "-cl-std=CL3.0 -D X=1");
    let bt: cl_program_binary_type =
        info(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BINARY_TYPE, s, v, r)));
    assert_eq!(bt, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    let mut n = 0;
    ok!(cl!(clCreateKernelsInProgram(p, 0, null_mut(), &mut n)));
    assert_eq!(n, 2);
    let mut ks = [null_mut(); 2];
    ok!(cl!(clCreateKernelsInProgram(p, 2, ks.as_mut_ptr(), null_mut())));
    // Rebuilding with kernels attached is refused.
    err!(CL_INVALID_OPERATION, cl!(clBuildProgram(p, 0, null(), null(), None, null_mut())));
    for k in ks {
        ok!(cl!(clReleaseKernel(k)));
    }
    ok!(cl!(clBuildProgram(p, 0, null(), null(), None, null_mut())));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn compile_errors_fill_the_log() {
    let env = Env::new();
    let p = program(&env, "kernel void broken(global int *a) { a[0] = undefined_name; }");
    err!(CL_BUILD_PROGRAM_FAILURE, cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut())));
    let log = build_log(&env, p);
    assert!(log.contains("undefined_name") && log.contains("error"), "{log}");
    let status: cl_build_status =
        info(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_STATUS, s, v, r)));
    assert_eq!(status, CL_BUILD_ERROR);
    let (k, e) = with_err(|e| cl!(clCreateKernel(p, c"broken".as_ptr(), e)));
    assert!(k.is_null());
    err!(CL_INVALID_PROGRAM_EXECUTABLE, e);
    // -Werror turns a warning into a failure.
    let w = program(&env, "kernel void w(global int *a) { int x = 1.5; a[0] = x; }");
    ok!(cl!(clBuildProgram(w, 1, &env.device, null(), None, null_mut())));
    assert!(build_log(&env, w).contains("warning"), "warnings reach the log of a successful build");
    err!(CL_BUILD_PROGRAM_FAILURE, cl!(clBuildProgram(w, 1, &env.device, c"-Werror".as_ptr(), None, null_mut())));
    ok!(cl!(clReleaseProgram(w)));
    ok!(cl!(clReleaseProgram(p)));
}

/// A function declared but defined nowhere fails at the link: the log names it as the
/// program's own, not as a builtin FerroCL lacks.
#[test]
fn link_errors_fill_the_log() {
    let env = Env::new();
    let p = program(&env, "void nowhere_defined(global int *a);\nkernel void k(global int *a) { nowhere_defined(a); }");
    err!(CL_BUILD_PROGRAM_FAILURE, cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut())));
    let log = build_log(&env, p);
    assert!(log.contains("nowhere_defined") && log.contains("undefined"), "{log}");
    assert!(log.contains("'nowhere_defined' is declared in the program but defined nowhere"), "{log}");
    assert!(!log.contains("does not implement"), "not a builtin: {log}");
    ok!(cl!(clReleaseProgram(p)));
    // The next build links as usual.
    let q = program(&env, "kernel void fine(global int *a) { a[0] = 1; }");
    ok!(cl!(clBuildProgram(q, 1, &env.device, null(), None, null_mut())));
    ok!(cl!(clReleaseProgram(q)));
}

/// The colour conversion a vision library's kernels share, as a C99 `inline` function
/// (neither `static` nor `extern`), called twice.
const C99_INLINE: &str = "inline void f(const float *s, float *d)
{ for (int i = 0; i < 3; i++) { float x = s[i];
    x = x > 0.04045f ? pow((x + 0.055f) / 1.055f, 2.4f) : x / 12.92f;
    x = x > 0.008856f ? cbrt(x) : 7.787f * x + 0.137931f;
    x = x * 116.f - 16.f; d[i] = sqrt(fabs(x)) + exp(x / 100.f) + log1p(fabs(x)); } }
__kernel void k(__global float *out)
{ float s[3] = {out[0], out[1], out[2]}, d[3]; f(s, d); f(d, s);
  out[0] = s[0]; out[1] = s[1]; out[2] = s[2]; }
";

fn c99_inline_host(s: [f64; 3]) -> [f64; 3] {
    s.map(|x| {
        let x = if x > 0.04045 { ((x + 0.055) / 1.055).powf(2.4) } else { x / 12.92 };
        let x = if x > 0.008856 { x.cbrt() } else { 7.787 * x + 0.137931 };
        let x = x * 116.0 - 16.0;
        x.abs().sqrt() + (x / 100.0).exp() + x.abs().ln_1p()
    })
}

/// C99 `inline` functions that clang does not inline are the program's own (PoCL and C
/// compilers in GNU mode agree), in every OpenCL C version, beside `static inline` and
/// `extern inline` ones; a header of inline functions in two linked modules links.
#[test]
fn c99_inline_functions_build_and_run() {
    let env = Env::new();
    for std in ["-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let p = build(&env, C99_INLINE, std);
        let input = [0.2f32, 0.5, 0.9];
        let buf = buffer_of(&env, &input);
        let k = kernel(p, "k");
        set_arg(k, 0, &buf);
        run(&env, k, &[1], None);
        let got = read_as::<f32>(&env, buf, 3);
        let want = c99_inline_host(c99_inline_host(input.map(f64::from)));
        for (g, w) in got.iter().zip(want) {
            assert!((f64::from(*g) - w).abs() <= 1e-4 * w.abs().max(1.0), "{std}: {got:?} vs {want:?}");
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseMemObject(buf)));
        ok!(cl!(clReleaseProgram(p)));
    }
    let kinds = "inline int g(int x) { return x + 1; }\nextern inline int h(int x) { return x * 2; }\n\
                 static inline int s(int x) { return x * 3; }\n\
                 kernel void k(global int *o) { o[0] = g(o[0]) + h(o[1]) + s(o[2]); }\n";
    let p = build(&env, kinds, "-cl-opt-disable");
    let buf = buffer_of(&env, &[1i32, 2, 3]);
    let k = kernel(p, "k");
    set_arg(k, 0, &buf);
    run(&env, k, &[1], None);
    assert_eq!(read_as::<i32>(&env, buf, 1)[0], 2 + 4 + 9);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseMemObject(buf)));
    ok!(cl!(clReleaseProgram(p)));
    // Each module has only the inline definition; neither gives an external one.
    let header = program(&env, "inline float twice(float v) { return v + v; }\n");
    let one = program(&env, "#include \"twice.h\"\nkernel void a(global float *x) { x[0] = twice(x[0]); }\n");
    let two = program(&env, "#include \"twice.h\"\nkernel void b(global float *x) { x[1] = twice(x[1]); }\n");
    let names = [c"twice.h".as_ptr()];
    for p in [one, two] {
        let opts = c"-cl-opt-disable";
        ok!(cl!(clCompileProgram(
            p,
            1,
            &env.device,
            opts.as_ptr(),
            1,
            &header,
            names.as_ptr() as *mut _,
            None,
            null_mut()
        )));
    }
    let inputs = [one, two];
    let (linked, e) =
        with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 2, inputs.as_ptr(), None, null_mut(), e)));
    ok!(e);
    let buf = buffer_of(&env, &[1.5f32, 2.5]);
    for name in ["a", "b"] {
        let k = kernel(linked, name);
        set_arg(k, 0, &buf);
        run(&env, k, &[1], None);
        ok!(cl!(clReleaseKernel(k)));
    }
    assert_eq!(read_as::<f32>(&env, buf, 2), [3.0, 5.0]);
    ok!(cl!(clReleaseMemObject(buf)));
    for p in [linked, one, two, header] {
        ok!(cl!(clReleaseProgram(p)));
    }
}

#[test]
fn bad_build_options_and_names() {
    let env = Env::new();
    let p = program(&env, SAXPY);
    err!(
        CL_INVALID_BUILD_OPTIONS,
        cl!(clBuildProgram(p, 1, &env.device, c"-fno-such-option".as_ptr(), None, null_mut()))
    );
    err!(CL_INVALID_BUILD_OPTIONS, cl!(clBuildProgram(p, 1, &env.device, c"-cl-std=CL7.0".as_ptr(), None, null_mut())));
    err!(CL_INVALID_VALUE, cl!(clBuildProgram(p, 1, null(), null(), None, null_mut())));
    let mut x = 0u8;
    err!(CL_INVALID_VALUE, cl!(clBuildProgram(p, 0, null(), null(), None, (&mut x as *mut u8).cast())));
    let wrong = env.context as cl_device_id;
    err!(CL_INVALID_DEVICE, cl!(clBuildProgram(p, 1, &wrong, null(), None, null_mut())));
    ok!(cl!(clBuildProgram(p, 1, &env.device, c"-cl-mad-enable -cl-fast-relaxed-math -w".as_ptr(), None, null_mut())));
    let (k, e) = with_err(|e| cl!(clCreateKernel(p, c"no_such_kernel".as_ptr(), e)));
    assert!(k.is_null());
    err!(CL_INVALID_KERNEL_NAME, e);
    let (_, e) = with_err(|e| cl!(clCreateKernel(p, null(), e)));
    err!(CL_INVALID_VALUE, e);
    // Specialization constants are for programs made from SPIR-V (tests/api/spirv.rs).
    let v = 1u32;
    err!(CL_INVALID_PROGRAM, cl!(clSetProgramSpecializationConstant(p, 0, 4, (&v as *const u32).cast())));
    err!(CL_INVALID_PROGRAM, cl!(clSetProgramSpecializationConstant(env.context as cl_program, 0, 4, null())));
    ok!(cl!(clReleaseProgram(p)));
}

static NOTIFIED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

unsafe extern "C" fn built(_p: cl_program, user_data: *mut c_void) {
    NOTIFIED.fetch_add(user_data as usize, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn build_callback_runs() {
    let env = Env::new();
    let p = program(&env, SAXPY);
    ok!(cl!(clBuildProgram(p, 1, &env.device, null(), Some(built), 5 as *mut c_void)));
    assert_eq!(NOTIFIED.load(std::sync::atomic::Ordering::SeqCst), 5);
    ok!(cl!(clReleaseProgram(p)));
}

/// Runs saxpy from `p` on 1024 elements and checks the result.
fn check_saxpy(env: &Env, p: cl_program) {
    let k = kernel(p, "saxpy");
    let x: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let (by, bx) = (buffer_of(env, &vec![1.0f32; 1024]), buffer_of(env, &x));
    set_arg(k, 0, &by);
    set_arg(k, 1, &bx);
    set_arg(k, 2, &3.0f32);
    run(env, k, &[1024], None);
    let y: Vec<f32> = read_as(env, by, 1024);
    assert!(y.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32 + 1.0));
    ok!(cl!(clReleaseKernel(k)));
    for m in [by, bx] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

#[test]
fn binaries_round_trip() {
    let env = Env::new();
    let p = build(&env, SAXPY, "");
    let size: usize = info(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, s, v, r)));
    assert!(size > 1000);
    let mut bin = vec![0u8; size];
    let mut ptrs = [bin.as_mut_ptr()];
    ok!(cl!(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 8, ptrs.as_mut_ptr().cast(), null_mut())));
    let (lens, bins) = ([size], [bin.as_ptr()]);
    let mut st = 1;
    let (p2, e) = with_err(|e| {
        cl!(clCreateProgramWithBinary(env.context, 1, &env.device, lens.as_ptr(), bins.as_ptr() as *mut _, &mut st, e))
    });
    ok!(e);
    ok!(st);
    ok!(cl!(clBuildProgram(p2, 1, &env.device, null(), None, null_mut())));
    check_saxpy(&env, p2);
    // Garbage is refused.
    let junk = [7u8; 64];
    let (jl, jb) = ([64usize], [junk.as_ptr()]);
    let (none, e) = with_err(|e| {
        cl!(clCreateProgramWithBinary(env.context, 1, &env.device, jl.as_ptr(), jb.as_ptr() as *mut _, &mut st, e))
    });
    assert!(none.is_null());
    err!(CL_INVALID_BINARY, e);
    err!(CL_INVALID_BINARY, st);
    for q in [p, p2] {
        ok!(cl!(clReleaseProgram(q)));
    }
}

#[test]
fn compile_and_link_with_embedded_header() {
    let env = Env::new();
    let header = program(&env, "#define SCALE 3.0f\nfloat scale(float v);\n");
    // The second module also has a kernel of its own, which must survive the link.
    let lib_src = program(
        &env,
        "#include \"my/scale.h\"\nfloat scale(float v) { return v * SCALE; }\nkernel void lib_kernel(global int *a) { a[0] = 7; }\n",
    );
    let main_src = program(
        &env,
        "#include \"my/scale.h\"\nkernel void saxpy(global float *y, global const float *x, float a) {\n\
         size_t i = get_global_id(0); y[i] = scale(x[i]) * a / SCALE + y[i]; }\n",
    );
    let names = [c"my/scale.h".as_ptr()];
    for p in [lib_src, main_src] {
        ok!(cl!(clCompileProgram(p, 1, &env.device, null(), 1, &header, names.as_ptr() as *mut _, None, null_mut())));
        let bt: cl_program_binary_type =
            info(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BINARY_TYPE, s, v, r)));
        assert_eq!(bt, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    }
    let inputs = [main_src, lib_src];
    let (linked, e) =
        with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 2, inputs.as_ptr(), None, null_mut(), e)));
    ok!(e);
    check_saxpy(&env, linked);
    let k = kernel(linked, "lib_kernel");
    ok!(cl!(clReleaseKernel(k)));
    // A library first, then an executable from it.
    let (lib, e) = with_err(|e| {
        cl!(clLinkProgram(env.context, 1, &env.device, c"-create-library".as_ptr(), 1, &lib_src, None, null_mut(), e))
    });
    ok!(e);
    let bt: cl_program_binary_type =
        info(|s, v, r| cl!(clGetProgramBuildInfo(lib, env.device, CL_PROGRAM_BINARY_TYPE, s, v, r)));
    assert_eq!(bt, CL_PROGRAM_BINARY_TYPE_LIBRARY);
    let inputs = [main_src, lib];
    let (exe, e) =
        with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 2, inputs.as_ptr(), None, null_mut(), e)));
    ok!(e);
    check_saxpy(&env, exe);
    // Linking something that was never compiled is refused.
    let raw = program(&env, SAXPY);
    let (_, e) = with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 1, &raw, None, null_mut(), e)));
    err!(CL_INVALID_OPERATION, e);
    // A missing function fails the link with its log.
    let (_, e) =
        with_err(|e| cl!(clLinkProgram(env.context, 1, &env.device, null(), 1, &main_src, None, null_mut(), e)));
    err!(CL_LINK_PROGRAM_FAILURE, e);
    for p in [header, lib_src, main_src, linked, lib, exe, raw] {
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// Every file in a directory with its modification time, but for program descriptions
/// (`.meta`), whose time is their last use (the cache trims the least recently used).
fn snapshot(dir: &std::path::Path) -> Vec<(String, Option<std::time::SystemTime>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let time = (!name.ends_with(".meta")).then(|| e.metadata().unwrap().modified().unwrap());
            (name, time)
        })
        .collect();
    v.sort();
    v
}

/// A program another process built before is a cache hit: the second process writes
/// nothing to the cache but its last use. A missing clang is reported as such, with
/// what to install.
#[test]
fn warm_build_in_another_process_hits_the_cache() {
    let _ = platform_device();
    let dir = std::env::temp_dir().join(format!("ferrocl-cache-probe-{}", std::process::id()));
    let file = dir.with_extension("cl");
    std::fs::write(&file, SAXPY).unwrap();
    let runner = env!("CARGO_BIN_EXE_cts-runner");
    let build = |extra: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(runner);
        cmd.args(["build", "--options", "-cl-std=CL1.2"]).arg(&file).env("FERROCL_CACHE_DIR", &dir);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let cold = build(&[]);
    assert!(cold.contains("build: CL_SUCCESS"), "{cold}");
    let before = snapshot(&dir);
    let warm = build(&[]);
    assert!(warm.contains("build: CL_SUCCESS"), "{warm}");
    assert_eq!(snapshot(&dir), before, "a warm build writes nothing");
    let missing = build(&[("FERROCL_CLANG", "/nonexistent/clang")]);
    assert!(missing.contains("build: -3"), "CL_COMPILER_NOT_AVAILABLE expected: {missing}");
    assert!(missing.contains("apt-get install clang"), "{missing}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&file);
}

/// Program-scope __global variables keep their values across launches, and each
/// program object has its own, even when built from the same source.
#[test]
fn program_scope_global_variables() {
    let env = Env::new();
    let src = "global int counter = 5;\nglobal float table[16];\n\
               kernel void bump(global int *out) { counter += 1; table[3] = 2.5f; out[0] = counter; }\n";
    let (p1, p2) = (build(&env, src, "-cl-std=CL3.0"), build(&env, src, "-cl-std=CL3.0"));
    let size: usize = info(|s, v, r| {
        cl!(clGetProgramBuildInfo(p1, env.device, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, s, v, r))
    });
    assert_eq!(size, 4 + 16 * 4);
    let out = env.buffer(0, 4, null_mut());
    let run_once = |p: cl_program| {
        let k = kernel(p, "bump");
        set_arg(k, 0, &out);
        run(&env, k, &[1], None);
        ok!(cl!(clReleaseKernel(k)));
        read_as::<i32>(&env, out, 1)[0]
    };
    assert_eq!(run_once(p1), 6);
    assert_eq!(run_once(p1), 7, "the value persists across launches");
    assert_eq!(run_once(p2), 6, "another program object has its own variables");
    ok!(cl!(clReleaseMemObject(out)));
    for p in [p1, p2] {
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// `-g` is a legal build option: kernels with debug information build and run, the
/// barrier-region kernel (rewritten into a resumable function) included, and a kernel
/// calling another kernel.
#[test]
fn debug_information_builds_and_runs() {
    let env = Env::new();
    let source = "kernel void rev(global int *a, local int *t) {
        int l = get_local_id(0), n = get_local_size(0);
        t[l] = a[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[get_global_id(0)] = t[n - 1 - l] + 1;
    }
    kernel void twice(global int *a, local int *t) { rev(a, t); }";
    for options in ["-g", "-g -cl-std=CL3.0", "-g -cl-opt-disable"] {
        let p = build(&env, source, options);
        for (name, add) in [("rev", 1), ("twice", 1)] {
            let input: Vec<i32> = (0..256).collect();
            let m = buffer_of(&env, &input);
            let k = kernel(p, name);
            set_arg(k, 0, &m);
            ok!(cl!(clSetKernelArg(k, 1, 64 * 4, null())));
            run(&env, k, &[256], Some(&[64]));
            let out: Vec<i32> = read_as(&env, m, 256);
            let want: Vec<i32> = (0..256).map(|i| (i / 64 * 64 + 63 - i % 64) + add).collect();
            assert_eq!(out, want, "{name} built with '{options}'");
            ok!(cl!(clReleaseKernel(k)));
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseProgram(p)));
    }
}
