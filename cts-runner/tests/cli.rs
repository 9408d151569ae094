//! The `cts-runner` command as users run it: the suites against the build tree's
//! FerroCL with their reports, a failing case failing the run, and clear errors.

use std::process::{Command, Output};

fn cts_runner(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cts-runner")).args(args).output().expect("cts-runner runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// `khronos --whole` runs a suite binary once, without test names (a stand-in script
/// here: the CTS is not part of the project), and judges it like a test.
#[test]
fn khronos_runs_a_whole_suite_in_one_process() {
    let dir = std::env::temp_dir().join(format!("ferrocl-whole-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let suite = dir.join("test_fake");
    // Lists one name it does not accept; run without names it tests everything.
    std::fs::write(
        &suite,
        "#!/bin/sh\nif [ \"$1\" = --list ]; then echo fake; exit 0; fi\n\
         [ $# -eq 1 ] && [ \"$1\" = -w ] || { echo \"ERROR: arguments: $*\"; exit 1; }\necho 'PASSED test.'\n",
    )
    .unwrap();
    std::fs::set_permissions(&suite, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = cts_runner(&["khronos", "--ferrocl-build", "--whole", suite.to_str().unwrap(), "--cts-arg", "-w"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("test_fake/all") && t.contains("1 passed, 0 skipped, 0 failed"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn suite_passes_and_writes_junit_and_json() {
    let dir = std::env::temp_dir().join(format!("ferrocl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (junit, json) = (dir.join("s.xml"), dir.join("s.json"));
    let o = cts_runner(&[
        "suite",
        "--ferrocl-build",
        "--filter",
        "async/2D/*",
        "--filter",
        "async/fence/*",
        "--junit",
        junit.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("total                                                  38        0        0"), "{t}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite name=\"FerroCL\" tests=\"38\" failures=\"0\" skipped=\"0\""), "{xml}");
    assert!(xml.contains("<testcase classname=\"async/2D/global_to_local\" name=\"elem47\""), "{xml}");
    let js = std::fs::read_to_string(&json).unwrap();
    assert!(
        js.contains("{\"name\": \"async/fence/import_after_export_aliased_local/n2048\", \"result\": \"passed\""),
        "{js}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_case_is_reported_and_fails_the_run() {
    let o = cts_runner(&["suite", "--ferrocl-build", "--filter", "selftest/*", "--selftest-failure"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("FAILED selftest/wrong_result/kernel: expected 2 in every element"), "{t}");
}

#[test]
fn clear_errors_for_what_is_missing() {
    let o = cts_runner(&["khronos", "--ferrocl-build", "--test-basic", "/nonexistent/test_basic"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("is not a file: build the Khronos CTS"), "{}", text(&o));
    let o = cts_runner(&["suite", "--ferrocl-build", "--platform", "NoSuchPlatform"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no OpenCL platform named 'NoSuchPlatform' (found: FerroCL)"), "{}", text(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .args(["suite", "--ferrocl-build"])
        .env("CTS_RUNNER_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1")
        .output()
        .expect("cts-runner runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains(
            "no OpenCL ICD loader (libOpenCL.so.1) found: install it with 'apt-get install ocl-icd-libopencl1'"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn the_whole_suite_passes() {
    let o = cts_runner(&["suite", "--ferrocl-build"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("kernels/barrier/reduce                                  5        0        0"), "{t}");
    assert!(t.contains("total                                                1481        0        0"), "{t}");
}

#[test]
fn the_suite_runs_against_pocl_when_it_is_installed() {
    let registered = std::fs::read_dir("/etc/OpenCL/vendors")
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().contains("pocl")))
        .unwrap_or(false);
    if !registered {
        eprintln!("PoCL is not installed (apt-get install pocl-opencl-icd): nothing to compare");
        return;
    }
    let o = cts_runner(&[
        "suite",
        "--platform",
        "Portable",
        "--filter",
        "async/*/int/*",
        "--filter",
        "async/2D/*/elem4",
        "--filter",
        "kernels/barrier/*",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // 10 plain and strided groups x 2 sizes and 9 barrier cases pass; PoCL lacks the 2D extension.
    assert!(t.contains("total                                                  29        2        0"), "{t}");
    assert!(t.contains("skipped async/2D/global_to_local/elem4: the device lacks cl_khr_extended_async_copies"), "{t}");
}

#[test]
fn help_describes_every_command_without_running_it() {
    let o = cts_runner(&["--help"]);
    assert!(o.status.success());
    let t = text(&o);
    for c in ["platforms", "suite", "khronos", "bench", "build"] {
        assert!(t.contains(&format!("  {c} ")), "{t}");
    }
    for (args, want) in [
        (&["suite", "--help"][..], "usage: cts-runner suite"),
        (&["--ferrocl-build", "suite", "-h"][..], "usage: cts-runner suite"),
        (&["khronos", "--help"][..], "usage: cts-runner khronos (--suite PATH | --test-basic PATH | --whole PATH)..."),
        (&["bench", "--help"][..], "usage: cts-runner bench"),
        (&["help", "build"][..], "usage: cts-runner build"),
    ] {
        let o = cts_runner(args);
        assert!(o.status.success(), "{args:?}");
        let t = text(&o);
        assert!(t.starts_with(want), "{args:?}: {t}");
        // Printing usage runs nothing: no suite table, no platform list.
        assert!(!t.contains("total") && !t.contains("FerroCL\n"), "{args:?}: {t}");
    }
    let o = cts_runner(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown command 'frobnicate'"));
}

#[test]
fn ferrocl_build_is_accepted_before_or_after_the_command() {
    for args in [
        &["--ferrocl-build", "suite", "--filter", "async/fence/*"][..],
        &["suite", "--filter", "async/fence/*", "--ferrocl-build"],
    ] {
        let o = cts_runner(args);
        let t = text(&o);
        assert!(o.status.success(), "{args:?}: {t}");
        assert!(t.contains("async/fence"), "{args:?}: {t}");
    }
    let o = cts_runner(&["--ferrocl-build"]);
    assert!(o.status.success() && text(&o).trim() == "FerroCL", "{}", text(&o));
}

/// `bench --save-binaries` on a machine with clang, then `--binaries` where no compiler
/// can be found: the second run builds nothing, and measures. A platform without saved
/// binaries builds for itself where it can.
#[test]
fn bench_runs_from_saved_binaries_without_a_compiler() {
    let dir = std::env::temp_dir().join(format!("ferrocl-bins-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let save = cts_runner(&["bench", "--ferrocl-build", "--platform", "FerroCL", "--async-only", "--save-binaries", d]);
    assert!(save.status.success(), "{}", text(&save));
    let saved = std::fs::read_dir(&dir).unwrap().count();
    assert!(saved >= 2, "{saved} binaries saved");
    let load = Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .args(["bench", "--ferrocl-build", "--platform", "FerroCL", "--async-only", "--binaries", d])
        .env("FERROCL_CLANG", "/nonexistent/clang")
        .env("PATH", "/nonexistent")
        .output()
        .expect("cts-runner runs");
    let t = text(&load);
    assert!(load.status.success(), "{t}");
    assert!(t.lines().any(|l| l.starts_with("async copy global->local->global") && !l.ends_with('-')), "{t}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), saved, "loading writes nothing");
    // Without the binaries and without a compiler the run cannot build, and says so.
    let _ = std::fs::remove_dir_all(&dir);
    let missing = Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .args(["bench", "--ferrocl-build", "--platform", "FerroCL", "--async-only", "--binaries", d])
        .env("FERROCL_CLANG", "/nonexistent/clang")
        .env("PATH", "/nonexistent")
        .output()
        .expect("cts-runner runs");
    let t = text(&missing);
    assert!(t.contains("no saved binary") && t.contains("building from source instead failed"), "{t}");
    // With a compiler, a platform whose binaries were not saved (another vendor on the
    // measuring host) builds its own programs.
    let own = cts_runner(&["bench", "--ferrocl-build", "--platform", "FerroCL", "--async-only", "--binaries", d]);
    let t = text(&own);
    assert!(own.status.success(), "{t}");
    assert!(t.lines().any(|l| l.starts_with("async copy global->local->global") && !l.ends_with('-')), "{t}");
}
