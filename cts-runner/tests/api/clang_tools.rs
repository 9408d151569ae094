//! Unlucky clangs, in child processes pointed at a fake one with `FERROCL_CLANG`: a
//! clang that exits at once, one that hangs, and a wrapper script (ccache's, a
//! distribution's). The host process must live, give up within the build time limit,
//! and build through a wrapper.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;

/// Child: builds `FERROCL_TEST_BUILDS` (default 1) kernels never built before on each
/// of `FERROCL_TEST_THREADS` (default 1) threads, and prints each status and log.
#[test]
#[ignore]
fn child_builds_new_kernels() {
    let var = |name: &str| std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(1);
    let (count, threads): (usize, usize) = (var("FERROCL_TEST_BUILDS"), var("FERROCL_TEST_THREADS"));
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || builds(count, t * count));
        }
    });
}

fn builds(count: usize, first: usize) {
    let env = Env::new();
    for i in first..first + count {
        let source = format!("kernel void k(global int *a) {{ a[0] = {} + {i}; }}", std::process::id());
        let p = program(&env, &source);
        let code = cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut()));
        println!("status {code}\nlog {}", build_log(&env, p));
        if code == CL_SUCCESS {
            let k = kernel(p, "k");
            let buf = buffer_of(&env, &[0i32]);
            set_arg(k, 0, &buf);
            run(&env, k, &[1], None);
            println!("result {}", read_as::<i32>(&env, buf, 1)[0] - std::process::id() as i32);
            ok!(cl!(clReleaseKernel(k)));
            ok!(cl!(clReleaseMemObject(buf)));
        }
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// A fake clang: a shell script in a directory of its own (its cache too).
fn fake_clang(name: &str, script: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("ferrocl-fake-clang-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cache")).unwrap();
    let path = dir.join("clang");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (path, dir)
}

fn real_clang() -> PathBuf {
    cts_runner::coverage::find_clang().expect("clang is not installed: the README's setup installs clang-19")
}

/// Runs the child with `clang` as FerroCL's clang; its output and how long it took.
fn child_with_clang(clang: &Path, dir: &Path, builds: [usize; 2], timeout: Option<u64>) -> (String, Duration) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", "clang_tools::child_builds_new_kernels", "--nocapture"])
        .env("FERROCL_CLANG", clang)
        // The verifier is looked for beside clang, which a fake has not.
        .env_remove("FERROCL_VERIFY")
        .env("FERROCL_CACHE_DIR", dir.join("cache"))
        .env("FERROCL_TEST_BUILDS", builds[0].to_string())
        .env("FERROCL_TEST_THREADS", builds[1].to_string());
    if let Some(t) = timeout {
        cmd.env("FERROCL_BUILD_TIMEOUT", t.to_string());
    }
    let start = Instant::now();
    let out = cmd.output().unwrap();
    let took = start.elapsed();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the child died ({:?}): {text}{}", out.status, String::from_utf8_lossy(&out.stderr));
    (text, took)
}

/// A clang that closes its stdin and fails at once (a static program, to be gone as
/// early as can be): 200 builds on 4 threads fail, and the host lives (the shim was
/// compiled from clang's stdin, and writing to a clang gone raised SIGPIPE in it).
#[test]
fn a_clang_that_exits_at_once_fails_builds_without_killing_the_host() {
    let (clang, dir) = fake_clang("exits", "");
    let src = dir.join("exits.c");
    std::fs::write(&src, "#include <unistd.h>\nint main(void) { close(0); _exit(1); }\n").unwrap();
    let built = Command::new(real_clang()).args(["-O2", "-static", "-o"]).arg(&clang).arg(&src).status().unwrap();
    assert!(built.success(), "the fake clang builds");
    let (out, _) = child_with_clang(&clang, &dir, [50, 4], None);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.matches(&format!("status {CL_BUILD_PROGRAM_FAILURE}")).count(), 200, "{out}");
}

/// A clang that hangs: the build gives up at FERROCL_BUILD_TIMEOUT, for every run of
/// clang the build makes (the shim's compile had no limit).
#[test]
fn a_hanging_clang_is_stopped_at_the_build_time_limit() {
    let (clang, dir) = fake_clang("hangs", "exec sleep 60");
    let (out, took) = child_with_clang(&clang, &dir, [1, 1], Some(2));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.contains(&format!("status {CL_BUILD_PROGRAM_FAILURE}")), "{out}");
    assert!(out.contains("FERROCL_BUILD_TIMEOUT"), "the log says why: {out}");
    assert!(took < Duration::from_secs(30), "the build waited {took:?} for a clang limited to 2 s");
}

/// A wrapper script in front of clang builds and runs kernels (the fork server's shim,
/// preloaded into the shell, answered every request with the shell's errors).
#[test]
fn a_wrapper_script_around_clang_builds() {
    let (clang, dir) = fake_clang("wrapper", &format!("exec '{}' \"$@\"", real_clang().display()));
    let (out, _) = child_with_clang(&clang, &dir, [2, 1], None);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.matches(&format!("status {CL_SUCCESS}\n")).count(), 2, "{out}");
    assert_eq!(out.matches("result 0\n").count() + out.matches("result 1\n").count(), 2, "{out}");
}
