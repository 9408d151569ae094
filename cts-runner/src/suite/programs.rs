//! The programs suite: program objects through their whole life. Binaries of each type
//! (executable, compiled object, library) saved and loaded again, then run; damaged
//! binaries refused without harm; separate compilation and linking, including a link
//! that fails; the error codes of compile and link options; an empty program.

use std::ffi::CString;
use std::ptr::{null, null_mut};

use crate::cl;
use crate::cl::*;
use crate::session::{check, Session};
use crate::suite::{Case, Verdict};

const SCALE: &str =
    "kernel void scale(global int *x, int k) { size_t i = get_global_id(0); x[i] = x[i] * k + (int)i; }\n";

/// A program object released when dropped.
struct Prog(cl_program);

impl Drop for Prog {
    fn drop(&mut self) {
        if !self.0.is_null() {
            cl!(clReleaseProgram(self.0));
        }
    }
}

fn from_source(s: &Session, src: &str) -> Result<Prog, String> {
    let c = CString::new(src).unwrap_or_default();
    let ptr = c.as_ptr();
    let mut e = 0;
    let p = cl!(clCreateProgramWithSource(s.context, 1, &ptr as *const _ as *mut _, null(), &mut e));
    check(e, "clCreateProgramWithSource")?;
    Ok(Prog(p))
}

fn compile(s: &Session, p: &Prog, options: &str) -> cl_int {
    let o = CString::new(options).unwrap_or_default();
    cl!(clCompileProgram(p.0, 1, &s.device, o.as_ptr(), 0, null(), null_mut(), None, null_mut()))
}

/// `clLinkProgram`: the program it returned (maybe NULL) and the error code.
fn link(s: &Session, inputs: &[&Prog], options: &str) -> (Prog, cl_int) {
    let o = CString::new(options).unwrap_or_default();
    let handles: Vec<cl_program> = inputs.iter().map(|p| p.0).collect();
    let mut e = 0;
    let p = cl!(clLinkProgram(
        s.context,
        1,
        &s.device,
        o.as_ptr(),
        handles.len() as cl_uint,
        handles.as_ptr(),
        None,
        null_mut(),
        &mut e
    ));
    (Prog(p), e)
}

fn binary_type(s: &Session, p: &Prog) -> cl_program_binary_type {
    let mut t: cl_program_binary_type = 0;
    cl!(clGetProgramBuildInfo(
        p.0,
        s.device,
        CL_PROGRAM_BINARY_TYPE,
        std::mem::size_of_val(&t),
        (&mut t as *mut cl_program_binary_type).cast(),
        null_mut()
    ));
    t
}

fn build_log(s: &Session, p: &Prog) -> String {
    let mut len = 0;
    cl!(clGetProgramBuildInfo(p.0, s.device, CL_PROGRAM_BUILD_LOG, 0, null_mut(), &mut len));
    let mut log = vec![0u8; len.max(1)];
    cl!(clGetProgramBuildInfo(p.0, s.device, CL_PROGRAM_BUILD_LOG, len, log.as_mut_ptr().cast(), null_mut()));
    String::from_utf8_lossy(&log[..len.saturating_sub(1)]).into_owned()
}

fn binary_of(p: &Prog) -> Result<Vec<u8>, String> {
    let mut size = 0usize;
    check(
        cl!(clGetProgramInfo(p.0, CL_PROGRAM_BINARY_SIZES, 8, (&mut size as *mut usize).cast(), null_mut())),
        "CL_PROGRAM_BINARY_SIZES",
    )?;
    if size == 0 {
        return Err("the program reports an empty binary".into());
    }
    let mut bin = vec![0u8; size];
    let mut ptr = bin.as_mut_ptr();
    check(
        cl!(clGetProgramInfo(p.0, CL_PROGRAM_BINARIES, 8, (&mut ptr as *mut *mut u8).cast(), null_mut())),
        "CL_PROGRAM_BINARIES",
    )?;
    Ok(bin)
}

/// `clCreateProgramWithBinary`: the program (maybe NULL), the error code and the
/// binary status.
fn from_binary(s: &Session, bin: &[u8]) -> (Prog, cl_int, cl_int) {
    let (len, mut ptr, mut status, mut e) = (bin.len(), bin.as_ptr(), 0, 0);
    let p = cl!(clCreateProgramWithBinary(s.context, 1, &s.device, &len, &mut ptr, &mut status, &mut e));
    (Prog(p), e, status)
}

/// Runs `scale` from `p` (built) and checks it.
fn run_scale(s: &Session, p: &Prog) -> Result<Verdict, String> {
    let n = 1000;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7 - 300).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let k = s.kernel(p.0, "scale")?;
    let m = s.buffer_of(&bytes)?;
    let result = (|| {
        check(cl!(clSetKernelArg(k, 0, 8, (&m as *const cl_mem).cast())), "clSetKernelArg")?;
        check(cl!(clSetKernelArg(k, 1, 4, (&3i32 as *const i32).cast())), "clSetKernelArg")?;
        s.run(k, &[n], None)?;
        s.read(m, n * 4)
    })();
    cl!(clReleaseMemObject(m));
    cl!(clReleaseKernel(k));
    let got: Vec<i32> = result?.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
    let want: Vec<i32> = input.iter().enumerate().map(|(i, v)| v * 3 + i as i32).collect();
    Ok(if got == want { Verdict::Passed } else { Verdict::Failed("scale computed wrong values".into()) })
}

/// Binaries come back as what they were and run.
fn round_trip(s: &Session, kind: cl_program_binary_type) -> Result<Verdict, String> {
    let src = from_source(s, SCALE)?;
    let original = match kind {
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE => {
            check(cl!(clBuildProgram(src.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram")?;
            src
        }
        _ => {
            check(compile(s, &src, ""), "clCompileProgram")?;
            if kind == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT {
                src
            } else {
                let (lib, e) = link(s, &[&src], "-create-library");
                check(e, "clLinkProgram -create-library")?;
                lib
            }
        }
    };
    if binary_type(s, &original) != kind {
        return Ok(Verdict::Failed(format!(
            "binary type {} before saving, expected {kind}",
            binary_type(s, &original)
        )));
    }
    let (loaded, e, status) = from_binary(s, &binary_of(&original)?);
    check(e, "clCreateProgramWithBinary")?;
    check(status, "binary status")?;
    if binary_type(s, &loaded) != kind {
        return Ok(Verdict::Failed(format!("binary type {} after loading, expected {kind}", binary_type(s, &loaded))));
    }
    let runnable = match kind {
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE => {
            check(cl!(clBuildProgram(loaded.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram")?;
            loaded
        }
        _ => {
            let (exe, e) = link(s, &[&loaded], "");
            check(e, "clLinkProgram")?;
            exe
        }
    };
    run_scale(s, &runnable)
}

/// Damaged binaries: every truncation point in the header and many in the code,
/// flipped bytes and random mutations, each refused with CL_INVALID_BINARY (in this
/// process: a crash would end the suite).
fn damaged(s: &Session) -> Result<Verdict, String> {
    let src = from_source(s, SCALE)?;
    check(cl!(clBuildProgram(src.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram")?;
    let good = binary_of(&src)?;
    let mut variants: Vec<(String, Vec<u8>)> = Vec::new();
    for n in (1..good.len()).filter(|&n| n < 512 || n % 97 == 0) {
        variants.push((format!("truncated to {n} bytes"), good[..n].to_vec()));
    }
    for i in (0..good.len()).step_by(131) {
        let mut d = good.clone();
        d[i] ^= 0x5a;
        variants.push((format!("byte {i} flipped"), d));
    }
    variants.push(("another vendor's bytes".into(), b"\x7fELF\x02\x01\x01 not ours".to_vec()));
    // And a fuzz loop: 400 binaries with 1-8 random bytes changed, some also cut short
    // (a fixed-seed generator, so a failure repeats).
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..400 {
        let mut d = good.clone();
        for _ in 0..1 + next() % 8 {
            let at = (next() % d.len() as u64) as usize;
            d[at] = next() as u8;
        }
        if round % 3 == 0 {
            d.truncate(1 + (next() % d.len() as u64) as usize);
        }
        if d != good {
            variants.push((format!("fuzz round {round}"), d));
        }
    }
    for (what, bin) in variants {
        let (p, e, status) = from_binary(s, &bin);
        if e == CL_SUCCESS {
            // A flip inside the kernel descriptions may leave a readable binary; it must
            // still not be mistaken for the original.
            let still_right = bin.len() == good.len()
                && check(cl!(clBuildProgram(p.0, 1, &s.device, null(), None, null_mut())), "").is_ok()
                && run_scale(s, &p).map(|v| v == Verdict::Passed).unwrap_or(false);
            if still_right {
                continue;
            }
            return Ok(Verdict::Failed(format!("{what}: accepted")));
        }
        if e != CL_INVALID_BINARY || status != CL_INVALID_BINARY {
            return Ok(Verdict::Failed(format!("{what}: {e} (status {status}), expected CL_INVALID_BINARY")));
        }
    }
    Ok(Verdict::Passed)
}

/// A link that fails (a kernel calls a function no input defines) returns a program
/// whose log says why, with CL_LINK_PROGRAM_FAILURE.
fn link_failure(s: &Session) -> Result<Verdict, String> {
    let src = from_source(s, "int nowhere(int);\nkernel void k(global int *x) { x[0] = nowhere(x[1]); }\n")?;
    check(compile(s, &src, ""), "clCompileProgram")?;
    let (p, e) = link(s, &[&src], "");
    if e != CL_LINK_PROGRAM_FAILURE {
        return Ok(Verdict::Failed(format!("clLinkProgram: {e}, expected CL_LINK_PROGRAM_FAILURE")));
    }
    if p.0.is_null() {
        return Ok(Verdict::Failed("no program returned with CL_LINK_PROGRAM_FAILURE".into()));
    }
    let log = build_log(s, &p);
    Ok(if log.contains("nowhere") {
        Verdict::Passed
    } else {
        Verdict::Failed(format!("the log does not say why: {log}"))
    })
}

/// Invalid options give each entry point its own code.
fn option_codes(s: &Session) -> Result<Verdict, String> {
    let src = from_source(s, SCALE)?;
    let e = compile(s, &src, "-cl-no-such-option");
    if e != CL_INVALID_COMPILER_OPTIONS {
        return Ok(Verdict::Failed(format!(
            "clCompileProgram with a bad option: {e}, expected CL_INVALID_COMPILER_OPTIONS"
        )));
    }
    let broken = from_source(s, "kernel void k(global int *x) { x[0] = undeclared; }\n")?;
    let e = compile(s, &broken, "");
    if e != CL_COMPILE_PROGRAM_FAILURE {
        return Ok(Verdict::Failed(format!(
            "clCompileProgram of a broken kernel: {e}, expected CL_COMPILE_PROGRAM_FAILURE"
        )));
    }
    check(compile(s, &src, ""), "clCompileProgram")?;
    let (p, e) = link(s, &[&src], "-cl-no-such-option");
    if e != CL_INVALID_LINKER_OPTIONS || !p.0.is_null() {
        return Ok(Verdict::Failed(format!(
            "clLinkProgram with a bad option: {e}, expected CL_INVALID_LINKER_OPTIONS"
        )));
    }
    Ok(Verdict::Passed)
}

/// A program built from an empty string has no kernels (it is not an error).
fn empty_program(s: &Session) -> Result<Verdict, String> {
    let p = from_source(s, "")?;
    check(cl!(clBuildProgram(p.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram of an empty program")?;
    let mut n = usize::MAX;
    check(
        cl!(clGetProgramInfo(p.0, CL_PROGRAM_NUM_KERNELS, 8, (&mut n as *mut usize).cast(), null_mut())),
        "CL_PROGRAM_NUM_KERNELS",
    )?;
    Ok(if n == 0 { Verdict::Passed } else { Verdict::Failed(format!("{n} kernels in an empty program")) })
}

/// Whether the session's platform is FerroCL (the cache cases set its variables).
fn is_ferrocl(s: &Session) -> bool {
    let mut platform: cl_platform_id = null_mut();
    cl!(clGetDeviceInfo(s.device, CL_DEVICE_PLATFORM, 8, (&mut platform as *mut cl_platform_id).cast(), null_mut()));
    let mut name = vec![0u8; 256];
    cl!(clGetPlatformInfo(platform, CL_PLATFORM_NAME, 256, name.as_mut_ptr().cast(), null_mut()));
    String::from_utf8_lossy(&name).starts_with("FerroCL")
}

/// Runs `cts-runner build ARGS FILE` (FILE holding SCALE) in a child process with
/// `env`: whether it built, and its output. The child inherits the loader's settings.
fn child_build(
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Result<(bool, String), String> {
    child_build_of(dir, SCALE, args, env)
}

/// `child_build` of `source`.
fn child_build_of(
    dir: &std::path::Path,
    source: &str,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Result<(bool, String), String> {
    let file = dir.join("program.cl");
    std::fs::write(&file, source).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("build").args(args).arg(&file);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Ok((out.status.success() && text.contains("CL_SUCCESS"), text))
}

/// The program cache in other processes: compile + link of the same source hits the
/// cache from a new process (the entries do not grow), builds go on after the process
/// moves its cache directory, and a cache directory that cannot be created or written
/// still builds (in a private one under `TMPDIR`).
fn cache_cases(s: &Session) -> Result<Verdict, String> {
    if !is_ferrocl(s) {
        return Ok(Verdict::Skipped("sets FerroCL's cache variables".into()));
    }
    let root = std::env::temp_dir().join(format!("ferrocl-suite-cache-{}", std::process::id()));
    // The directory FerroCL falls back to under TMPDIR=root, so the library compiled for
    // the first part serves the second.
    // SAFETY: getuid has no preconditions.
    let cache = root.join(format!("ferrocl-cache-{}", unsafe { libc::getuid() }));
    let result = (|| {
        let entries = || {
            std::fs::read_dir(&cache)
                .map(|d| d.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "meta")).count())
                .unwrap_or(0)
        };
        let env = [("FERROCL_CACHE_DIR", cache.as_os_str())];
        std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
        let (ok, out) = child_build(&root, &["--separate"], &env)?;
        if !ok {
            return Ok(Verdict::Failed(format!("compile + link in a new cache: {out}")));
        }
        let first = entries();
        let (ok, out) = child_build(&root, &["--separate"], &env)?;
        if !ok || entries() != first {
            return Ok(Verdict::Failed(format!(
                "compile + link again: {} cache entries, {first} before; {out}",
                entries()
            )));
        }
        // The cache moved mid-process (after a build that linked), compile + link and
        // builds in the new place.
        let moved = root.join("moved");
        let (ok, out) =
            child_build(&root, &["--separate", "--then-cache", &moved.display().to_string(), "--cold", "2"], &env)?;
        let moved_entries = std::fs::read_dir(&moved).map(|d| d.count()).unwrap_or(0);
        if !ok || moved_entries == 0 {
            return Ok(Verdict::Failed(format!("builds after the cache directory moved: {out}")));
        }
        for unusable in ["/proc/self/ferrocl-no-cache-here", &format!("{}/program.cl/sub", root.display())] {
            let env = [("FERROCL_CACHE_DIR", std::ffi::OsStr::new(unusable)), ("TMPDIR", root.as_os_str())];
            let (ok, out) = child_build(&root, &[], &env)?;
            if !ok {
                return Ok(Verdict::Failed(format!("with the cache in {unusable}: {out}")));
            }
        }
        Ok(Verdict::Passed)
    })();
    let _ = std::fs::remove_dir_all(&root);
    result
}

/// A program whose kernels the application released may be built again at once, even
/// while a launch of the old kernel still runs (and finishes with the old code).
fn rebuild_while_running(s: &Session) -> Result<Verdict, String> {
    let src = "kernel void spin(global int *x, int n) {\n\
               int acc = 0; for (int i = 0; i < n; i++) acc += i ^ (int)get_global_id(0);\n\
               x[get_global_id(0)] = acc + VALUE; }\n";
    let p = from_source(s, src)?;
    let build = |v: i32| {
        let o = CString::new(format!("-DVALUE={v}")).unwrap_or_default();
        cl!(clBuildProgram(p.0, 1, &s.device, o.as_ptr(), None, null_mut()))
    };
    check(build(1), "clBuildProgram -DVALUE=1")?;
    let (n, spins) = (64usize, 200_000i32);
    let m = s.buffer_of(&vec![0u8; n * 4])?;
    let want = |value: i32| -> Vec<i32> {
        (0..n as i32).map(|g| (0..spins).fold(0i32, |a, i| a.wrapping_add(i ^ g)).wrapping_add(value)).collect()
    };
    let result = (|| {
        for value in [1, 2] {
            let k = s.kernel(p.0, "spin")?;
            crate::session::arg(k, 0, &m)?;
            crate::session::arg(k, 1, &spins)?;
            let global = [n];
            check(
                cl!(clEnqueueNDRangeKernel(s.queue(), k, 1, null(), global.as_ptr(), null(), 0, null(), null_mut())),
                "clEnqueueNDRangeKernel",
            )?;
            cl!(clReleaseKernel(k));
            if value == 1 {
                let e = build(2);
                if e != CL_SUCCESS {
                    return Ok(Verdict::Failed(format!("rebuilding after the kernel's release: {e}")));
                }
            }
            check(cl!(clFinish(s.queue())), "clFinish")?;
            let got: Vec<i32> =
                s.read(m, n * 4)?.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
            if got != want(value) {
                return Ok(Verdict::Failed(format!("the launch built with VALUE={value} computed other values")));
            }
        }
        Ok(Verdict::Passed)
    })();
    cl!(clReleaseMemObject(m));
    result
}

/// `CL_KERNEL_ATTRIBUTES` gives back the source's kernel attributes.
fn kernel_attributes(s: &Session) -> Result<Verdict, String> {
    let src = "__attribute__((vec_type_hint(ushort8))) __attribute__((work_group_size_hint(8, 4, 2)))\n\
               __attribute__((reqd_work_group_size(4, 2, 1))) kernel void k(global int *x) { }\n\
               kernel void plain(global int *x) { }\n";
    let p = from_source(s, src)?;
    check(cl!(clBuildProgram(p.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram")?;
    for (name, want) in [
        ("k", &["vec_type_hint(ushort8)", "work_group_size_hint(8,4,2)", "reqd_work_group_size(4,2,1)"][..]),
        ("plain", &[][..]),
    ] {
        let k = s.kernel(p.0, name)?;
        let mut text = vec![0u8; 512];
        let mut len = 0;
        cl!(clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, text.len(), text.as_mut_ptr().cast(), &mut len));
        cl!(clReleaseKernel(k));
        let got: String = String::from_utf8_lossy(&text[..len.saturating_sub(1)]).replace(' ', "");
        let missing: Vec<&&str> = want.iter().filter(|w| !got.contains(*w)).collect();
        if !missing.is_empty() || (want.is_empty() && !got.is_empty()) {
            return Ok(Verdict::Failed(format!("kernel {name}: '{got}', expected {want:?}")));
        }
    }
    Ok(Verdict::Passed)
}

/// A binary records the CPU's instruction-set extensions: one made for a CPU with an
/// extension this one lacks is refused; one made for a CPU with fewer runs. (FerroCL's
/// container: the record is its `isa` line.) An older container version is refused.
fn other_cpu(s: &Session) -> Result<Verdict, String> {
    if !is_ferrocl(s) {
        return Ok(Verdict::Skipped("edits FerroCL's binary container".into()));
    }
    let src = from_source(s, SCALE)?;
    check(cl!(clBuildProgram(src.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram")?;
    let good = binary_of(&src)?;
    let text = String::from_utf8_lossy(&good[..good.len().min(4096)]).into_owned();
    let Some(line) = text.lines().find(|l| l.starts_with("isa")) else {
        return Ok(Verdict::Failed("no isa line in the binary".into()));
    };
    let edited = |new: &str| {
        let at = good.windows(line.len()).position(|w| w == line.as_bytes()).unwrap_or(0);
        [&good[..at], new.as_bytes(), &good[at + line.len()..]].concat()
    };
    let (_, e, _) = from_binary(s, &edited(&format!("{line} amx_tile avx512_fp16 no_such_extension")));
    if e != CL_INVALID_BINARY {
        return Ok(Verdict::Failed(format!("a binary needing extensions this CPU lacks: {e}")));
    }
    let (fewer, e, _) = from_binary(s, &edited("isa sse sse2"));
    check(e, "clCreateProgramWithBinary of a binary for a CPU with fewer extensions")?;
    check(cl!(clBuildProgram(fewer.0, 1, &s.device, null(), None, null_mut())), "clBuildProgram")?;
    if run_scale(s, &fewer)? != Verdict::Passed {
        return Ok(Verdict::Failed("the binary for a CPU with fewer extensions computed wrong values".into()));
    }
    let (_, e, _) = from_binary(s, b"FERROCL-BINARY-1\nkernel\tk\n--\n\x7fELF");
    Ok(if e == CL_INVALID_BINARY { Verdict::Passed } else { Verdict::Failed(format!("version 1 container: {e}")) })
}

/// A compile that takes longer than `FERROCL_BUILD_TIMEOUT` is stopped and the build
/// fails saying so, on a clang server and with clang spawned per run.
fn build_timeout(s: &Session) -> Result<Verdict, String> {
    if !is_ferrocl(s) {
        return Ok(Verdict::Skipped("sets FerroCL's variables".into()));
    }
    // A hundred thousand statements: far more than a second to compile.
    let slow = "#define S acc = sin(acc * x[3]) + cos(acc);\n#define A(s) s s s s s s s s s s\n\
                kernel void k(global float *x) { float acc = x[0]; A(A(A(A(A(S))))) x[1] = acc; }\n";
    let root = std::env::temp_dir().join(format!("ferrocl-suite-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let result = (|| {
        for server in ["1", "0"] {
            let env = [
                ("FERROCL_BUILD_TIMEOUT", std::ffi::OsStr::new("1")),
                ("FERROCL_CLANG_SERVER", std::ffi::OsStr::new(server)),
            ];
            let t = std::time::Instant::now();
            let (ok, out) = child_build_of(&root, slow, &[], &env)?;
            let took = t.elapsed().as_secs_f64();
            if ok || !out.contains("FERROCL_BUILD_TIMEOUT") || took > 30.0 {
                return Ok(Verdict::Failed(format!("servers {server}: built {ok} in {took:.1} s: {out}")));
            }
        }
        Ok(Verdict::Passed)
    })();
    let _ = std::fs::remove_dir_all(&root);
    result
}

type Check = fn(&Session) -> Result<Verdict, String>;

pub fn cases<'a>() -> Vec<Case<'a>> {
    let list: [(&str, Check); 12] = [
        ("build/timeout/stopped_with_a_log", build_timeout),
        ("kernel/attributes/as_written", kernel_attributes),
        ("source/rebuild/after_kernel_release_while_launch_runs", rebuild_while_running),
        ("cache/other_processes/hits_and_unusable_directories", cache_cases),
        ("binary/round_trip/executable", |s| round_trip(s, CL_PROGRAM_BINARY_TYPE_EXECUTABLE)),
        ("binary/round_trip/compiled_object", |s| round_trip(s, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT)),
        ("binary/round_trip/library", |s| round_trip(s, CL_PROGRAM_BINARY_TYPE_LIBRARY)),
        ("binary/damaged/refused", damaged),
        ("link/failure/returns_program_with_log", link_failure),
        ("options/invalid/codes_per_entry_point", option_codes),
        ("source/empty/builds_without_kernels", empty_program),
        ("binary/other_cpu/more_refused_fewer_run", other_cpu),
    ];
    list.into_iter()
        .map(|(name, f)| Case {
            name: format!("programs/{name}"),
            run: Box::new(move |s: &Session| f(s).unwrap_or_else(Verdict::Failed)),
        })
        .collect()
}
