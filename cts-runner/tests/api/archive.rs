//! The builtins archive: it exports the async-copy family under the names clang gives
//! calls to it; and a missing or foreign archive fails a build with
//! CL_BUILD_PROGRAM_FAILURE and a build log that says what is wrong, in a child process
//! pointed at the bad archive with `FERROCL_BUILTINS`.

use std::collections::BTreeSet;
use std::path::Path;
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

fn clang() -> std::path::PathBuf {
    cts_runner::coverage::find_clang().expect("clang is not installed: the README's setup installs clang-19")
}

/// The names of the async-copy family a kernel calling every overload references, as
/// clang mangles them for `-cl-std`.
fn names_clang_emits(std: &str) -> BTreeSet<String> {
    let mut src = String::from("kernel void k(global uchar *g, local uchar *l) {\n  event_t e = 0;\n");
    for t in ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half"] {
        for w in ["", "2", "3", "4", "8", "16"] {
            let (gp, lp) = (format!("(global {t}{w} *)g"), format!("(local {t}{w} *)l"));
            src += &format!(
                "  e = async_work_group_copy({lp}, {gp}, 1, e);\n  e = async_work_group_copy({gp}, {lp}, 1, e);\n  \
                 e = async_work_group_strided_copy({lp}, {gp}, 1, 2, e);\n  \
                 e = async_work_group_strided_copy({gp}, {lp}, 1, 2, e);\n  prefetch({gp}, 1);\n"
            );
        }
    }
    src += "  e = async_work_group_copy_2D2D(l, 0, g, 0, 1, 1, 1, 1, 1, e);\n  \
            e = async_work_group_copy_2D2D(g, 0, l, 0, 1, 1, 1, 1, 1, e);\n  \
            e = async_work_group_copy_3D3D(l, 0, g, 0, 1, 1, 1, 1, 1, 1, 1, 1, e);\n  \
            e = async_work_group_copy_3D3D(g, 0, l, 0, 1, 1, 1, 1, 1, 1, 1, 1, e);\n  \
            async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE);\n  wait_group_events(1, &e);\n}\n";
    let dir = std::env::temp_dir().join(format!("ferrocl-mangling-{}-{std}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cl, ll) = (dir.join("all.cl"), dir.join("all.ll"));
    std::fs::write(&cl, src).unwrap();
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("../builtins/clc/ferrocl-extensions.h");
    let out = Command::new(clang())
        .args(["-x", "cl", &format!("-cl-std={std}"), "-target", "x86_64-unknown-linux-gnu", "-emit-llvm", "-S"])
        .args(["-Xclang", "-fdeclare-opencl-builtins", "-Xclang", "-finclude-default-header"])
        .args(["-Xclang", "-cl-ext=-all,+cl_khr_fp64,+__opencl_c_fp64,+cl_khr_fp16", "-include"])
        .arg(&header)
        .arg(&cl)
        .arg("-o")
        .arg(&ll)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&ll).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text.lines()
        .filter_map(|l| l.strip_prefix("declare "))
        .filter_map(|l| Some(l[l.find('@')? + 1..l.find('(')?].to_string()))
        .filter(|n| !n.starts_with("llvm."))
        .collect()
}

/// The archive's exported functions, from its symbol table.
fn archive_exports(archive: &Path) -> BTreeSet<String> {
    let out = Command::new("nm").args(["--defined-only", "-g"]).arg(archive).output().expect("nm (binutils) runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(" T ").map(|(_, n)| n.to_string()))
        .collect()
}

#[test]
fn the_archive_exports_every_async_copy_builtin_under_the_name_clang_calls() {
    let driver = cts_runner::icd_env::build_tree_driver().expect("libferrocl.so is built");
    // Next to the driver, or a level up from target/<profile>/deps.
    let archive = driver
        .ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("libferrocl_builtins.a"))
        .find(|a| a.is_file())
        .expect("libferrocl_builtins.a is built next to the driver");
    let exports = archive_exports(&archive);
    let family = |n: &&String| {
        ["async_work_group", "wait_group_events", "8prefetch"].iter().any(|f| n.contains(f)) && n.starts_with("_Z")
    };
    let exported: BTreeSet<String> = exports.iter().filter(family).cloned().collect();
    let mut called = BTreeSet::new();
    for std in ["CL1.2", "CL2.0", "CL3.0"] {
        let names = names_clang_emits(std);
        // 11 types x 6 widths x (2 copies + 2 strided + prefetch), 2D and 3D both ways,
        // the fence and the wait.
        assert_eq!(names.len(), 11 * 6 * 5 + 4 + 2, "{std}: {names:#?}");
        let missing: Vec<&String> = names.difference(&exported).collect();
        assert!(missing.is_empty(), "{std}: clang calls names the archive does not export: {missing:#?}");
        called.extend(names);
    }
    // What the archive has beyond clang 19's names: the event list of wait_group_events
    // in the private address space, as older clangs declare it for OpenCL C 1.2.
    let extra: Vec<&String> = exported.difference(&called).collect();
    assert_eq!(extra, ["_Z17wait_group_eventsiP9ocl_event", "_Z17wait_group_eventsiPU9CLprivate9ocl_event"]);
}
