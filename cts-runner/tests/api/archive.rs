//! A missing or foreign builtins archive: building a kernel fails with
//! CL_BUILD_PROGRAM_FAILURE and a build log that says what is wrong, in a child process
//! pointed at the bad archive with `FERROCL_BUILTINS`.

use std::process::Command;

use crate::common::*;

/// Child: builds a kernel never built before and prints the status and the log.
#[test]
#[ignore]
fn child_builds_a_new_kernel() {
    let env = Env::new();
    let source = format!("kernel void k(global int *a) {{ a[0] = {}; }}", std::process::id());
    let p = program(&env, &source);
    let code = cl!(clBuildProgram(p, 1, &env.device, null(), None, null_mut()));
    println!("status {code}\nlog {}", build_log(&env, p));
}

fn child_with_archive(archive: &std::path::Path) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "archive::child_builds_a_new_kernel", "--nocapture"])
        .env("FERROCL_BUILTINS", archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "the child crashed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn missing_or_foreign_builtins_archives_fail_the_build_with_a_clear_log() {
    let out = child_with_archive(std::path::Path::new("/nonexistent/libferrocl_builtins.a"));
    assert!(out.contains(&format!("status {CL_BUILD_PROGRAM_FAILURE}")), "{out}");
    assert!(out.contains("FERROCL_BUILTINS=/nonexistent/libferrocl_builtins.a does not exist"), "{out}");

    let foreign = std::env::temp_dir().join(format!("ferrocl-foreign-{}.a", std::process::id()));
    std::fs::write(&foreign, b"!<arch>\nnot the builtins of this version\n").unwrap();
    let out = child_with_archive(&foreign);
    let _ = std::fs::remove_file(&foreign);
    assert!(out.contains(&format!("status {CL_BUILD_PROGRAM_FAILURE}")), "{out}");
    assert!(out.contains("is not from this FerroCL version (it lacks FERROCL_BUILTINS_ABI_"), "{out}");
}
