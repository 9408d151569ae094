//! Kernels compiled for another CPU (`FERROCL_TARGET_CPU`), in child processes: the
//! program binary names that CPU's instruction sets and holds its instructions (half
//! arithmetic in AVX512-FP16 for `sapphirerapids`), and a CPU without them refuses to
//! run the code (CL_INVALID_PROGRAM_EXECUTABLE, with the reason in the build log)
//! rather than dying of SIGILL; one with them computes what native code computes.

use std::process::Command;

use crate::common::*;

/// Half builtins that AVX512-FP16 computes in one instruction each.
const HALF: &str = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global half16 *a, global const half16 *b) {
    size_t i = get_global_id(0);
    half16 x = a[i], y = b[i];
    a[i] = mad(x, y, y) + fma(x, y, x) + sqrt(fabs(x)) + fmax(x, y) + fmin(x, y) + floor(x) + ceil(y)
        + rint(x) + round(y) + trunc(x) + copysign(x, y) + x * y - x;
}";

const N: usize = 64;

/// Child: builds HALF, saves its binary's payload (the shared object) to the path in
/// `CROSS_CPU_PAYLOAD`, prints the binary's `isa` line and the launch's status, and
/// the results where the launch ran.
#[test]
#[ignore]
fn child_builds_and_runs_half() {
    let env = Env::new();
    let p = build(&env, HALF, "");
    let size: usize = info(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, s, v, r)));
    let mut bin = vec![0u8; size];
    let mut ptrs = [bin.as_mut_ptr()];
    ok!(cl!(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 8, ptrs.as_mut_ptr().cast(), null_mut())));
    let text = String::from_utf8_lossy(&bin);
    println!("{}", text.lines().find(|l| l.starts_with("isa ")).unwrap_or("no isa line"));
    let end = bin.windows(4).position(|w| w == b"\n--\n").expect("no payload");
    std::fs::write(std::env::var("CROSS_CPU_PAYLOAD").unwrap(), &bin[end + 4..]).unwrap();

    // Halves from -8 to 8 and back, none zero.
    let a: Vec<u16> = (0..N * 16).map(|i| 0x3000 + (i as u16 % 97) * 64 + ((i as u16 & 1) << 15)).collect();
    let b: Vec<u16> = (0..N * 16).map(|i| 0x3400 + (i as u16 % 89) * 64 + ((i as u16 & 2) << 14)).collect();
    let (ba, bb) = (buffer_of(&env, &a), buffer_of(&env, &b));
    let k = kernel(p, "k");
    set_arg(k, 0, &ba);
    set_arg(k, 1, &bb);
    let global = [N];
    let e = cl!(clEnqueueNDRangeKernel(env.queue, k, 1, null(), global.as_ptr(), null(), 0, null(), null_mut()));
    println!("launch {e}");
    if e == CL_SUCCESS {
        ok!(cl!(clFinish(env.queue)));
        println!("results {:?}", read_as::<u16>(&env, ba, N * 16));
    } else {
        println!("log {}", build_log(&env, p).replace('\n', " "));
    }
}

fn child(cpu: Option<&str>, payload: &std::path::Path) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", "cross_cpu::child_builds_and_runs_half", "--nocapture"])
        .env("CROSS_CPU_PAYLOAD", payload);
    match cpu {
        Some(cpu) => cmd.env("FERROCL_TARGET_CPU", cpu),
        None => cmd.env_remove("FERROCL_TARGET_CPU"),
    };
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "the child failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn line<'a>(out: &'a str, tag: &str) -> &'a str {
    out.lines().find_map(|l| l.strip_prefix(tag)).unwrap_or_else(|| panic!("no '{tag}' line in:\n{out}"))
}

#[test]
fn code_for_another_cpu_is_its_code_and_runs_only_where_that_cpu_is() {
    let dir = std::env::temp_dir().join(format!("ferrocl-cross-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cross_so, native_so) = (dir.join("cross.so"), dir.join("native.so"));
    let cross = child(Some("sapphirerapids -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"), &cross_so);
    let native = child(None, &native_so);

    let isa: Vec<&str> = line(&cross, "isa ").split_whitespace().collect();
    assert!(isa.contains(&"avx512_fp16") && isa.contains(&"avx512bw"), "{isa:?}");
    assert!(!isa.contains(&"amx_tile"), "-mno-amx-tile was dropped: {isa:?}");
    let disassembly = |so: &std::path::Path| {
        let out = Command::new("objdump").arg("-d").arg(so).output().expect("objdump (binutils) is not installed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // mad and fma are one vfmadd...ph each; sqrt a vsqrtph.
    let code = disassembly(&cross_so);
    assert!(code.contains("vsqrtph") && code.lines().any(|l| l.contains("vfmadd") && l.contains("ph ")), "{code}");
    let host_fp16 = std::fs::read_to_string("/proc/cpuinfo").unwrap().contains(" avx512_fp16");
    assert_eq!(disassembly(&native_so).contains("vsqrtph"), host_fp16);

    // The same halves either way, where this CPU runs both.
    match host_fp16 {
        true => {
            assert_eq!(line(&cross, "launch "), "0", "{cross}");
            assert_eq!(line(&cross, "results "), line(&native, "results "));
        }
        false => {
            assert_eq!(line(&cross, "launch "), CL_INVALID_PROGRAM_EXECUTABLE.to_string(), "{cross}");
            assert!(
                line(&cross, "log ").contains("FERROCL_TARGET_CPU=sapphirerapids") && cross.contains("avx512_fp16")
            );
        }
    }
    assert_eq!(line(&native, "launch "), "0", "{native}");
    let _ = std::fs::remove_dir_all(&dir);
}
