//! Async-copy validation mode (`FERROCL_VALIDATE`): kernels that misuse copies run in a
//! child process with the variable set, and their reports are checked. The children
//! are ignored tests of this binary, run only by the parents.

use std::process::Command;

use crate::common::*;

const MISUSE: &str = r#"
kernel void divergent(global const int *in, local int *tile) {
    event_t e = async_work_group_copy(tile, in + get_local_id(0), 16, 0);
    wait_group_events(1, &e);
}
kernel void zero_stride(global const int *in, local int *tile) {
    event_t e = async_work_group_strided_copy(tile, in, 16, 0, 0);
    wait_group_events(1, &e);
}
kernel void out_of_range(global const int *in, local int *tile) {
    event_t e = async_work_group_copy(tile, in + 60, 16, 0);
    wait_group_events(1, &e);
}
kernel void unwaited(global const int *in, local int *tile) {
    async_work_group_copy(tile, in, 16, 0);
}
kernel void garbage_event(global const int *in, local int *tile) {
    event_t e = async_work_group_copy(tile, in, 16, 0);
    event_t junk[2];
    junk[0] = e;
    // A value no copy returned (left uninitialised, the stack may hold an event of an
    // earlier kernel at that place, which is valid).
    *(private ulong *)&junk[1] = 0x5eedf00dul;
    wait_group_events(2, junk);
}
kernel void partial(global const int *in, local int *tile) {
    event_t e = 0;
    if (get_local_id(0) < 4) e = async_work_group_copy(tile, in, 16, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
}
kernel void overlapping(global const int *in, local int *tile) {
    event_t e = async_work_group_copy_2D2D(tile, 0, in, 0, 4, 8, 4, 8, 4, 0);
    wait_group_events(1, &e);
}
kernel void skipped(global const int *in, global int *out, local int *tile) {
    size_t l = get_local_id(0);
    tile[l] = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(tile, in + 60, 16, 0);
    wait_group_events(1, &e);
    out[l] = tile[l];
}
kernel void early_read(global const int *in, global int *out, local int *tile) {
    size_t l = get_local_id(0);
    tile[l] = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(tile, in, get_local_size(0), 0);
    out[l] = tile[l];
    wait_group_events(1, &e);
}
"#;

/// A kernel's own `__local` array, copied into within its bounds and past its end.
const STATIC_LOCAL: &str = r#"
kernel void static_tile(global const int *in, global int *out, int offset) {
    local int tile[16];
    event_t e = async_work_group_copy(tile + offset, in, 16, 0);
    wait_group_events(1, &e);
    out[get_local_id(0)] = tile[get_local_id(0)];
}
"#;

const KERNELS: [&str; 7] =
    ["divergent", "zero_stride", "out_of_range", "unwaited", "garbage_event", "partial", "overlapping"];

/// Child: runs every misusing kernel once (one group of 16 work-items, 64 ints of input).
#[test]
#[ignore]
fn child_runs_misusing_kernels() {
    let env = Env::new();
    let p = build(&env, MISUSE, "-cl-std=CL3.0");
    let input = buffer_of(&env, &(0..64).collect::<Vec<i32>>());
    for name in KERNELS {
        let k = kernel(p, name);
        set_arg(k, 0, &input);
        ok!(cl!(clSetKernelArg(k, 1, 64 * 4, null())));
        run(&env, k, &[16], Some(&[16]));
        ok!(cl!(clReleaseKernel(k)));
    }
    // Within the kernel's own array, then past its end (one report, the copy skipped).
    let sp = build(&env, STATIC_LOCAL, "");
    let k = kernel(sp, "static_tile");
    let out = env.buffer(0, 16 * 4, null_mut());
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    for offset in [0i32, 8] {
        set_arg(k, 2, &offset);
        run(&env, k, &[16], Some(&[16]));
    }
    // The early reader and the skipped copy print what they read, for the parent to
    // compare.
    for name in ["early_read", "skipped"] {
        let k = kernel(p, name);
        let out = env.buffer(0, 16 * 4, null_mut());
        set_arg(k, 0, &input);
        set_arg(k, 1, &out);
        ok!(cl!(clSetKernelArg(k, 2, 16 * 4, null())));
        run(&env, k, &[16], Some(&[16]));
        println!("{name} {:?}", read_as::<i32>(&env, out, 16));
    }
}

fn child(mode: &str) -> (String, String) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--ignored", "--exact", "validation::child_runs_misusing_kernels", "--nocapture", "--test-threads=1"])
        .env("FERROCL_VALIDATE", mode)
        .output()
        .unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn validation_reports_each_misuse_with_kernel_group_and_work_item() {
    let (_, err) = child("1");
    for (kernel, expected) in [
        ("divergent", "work-group divergence detected (async copy 0 called with different arguments)"),
        ("zero_stride", "async copy with a stride of zero"),
        ("out_of_range", "async copy accesses global memory outside any buffer argument"),
        ("unwaited", "work-item finished without waiting for events (event 1)"),
        ("garbage_event", "invalid wait event"),
        ("partial", "only 4 out of 16 work-items executed async copy 0"),
        ("overlapping", "async copy destination lines or planes overlap"),
    ] {
        let line = err.lines().find(|l| l.contains(&format!("kernel {kernel},")) && l.contains(expected));
        assert!(line.is_some(), "no report for {kernel} ('{expected}') in:\n{err}");
    }
    assert!(err.contains("FerroCL validation: kernel divergent, work-group (0,0,0), work-item (1,0,0): "), "{err}");
    assert!(!err.contains("kernel early_read"), "a correct copy was reported:\n{err}");
}

#[test]
fn validation_checks_copies_into_the_kernels_own_local_arrays() {
    let (_, err) = child("1");
    let reports: Vec<&str> = err.lines().filter(|l| l.contains("kernel static_tile,")).collect();
    assert_eq!(reports.len(), 1, "one report (the copy past the array's end) expected:\n{err}");
    assert!(reports[0].contains("local memory outside"), "{err}");
}

#[test]
fn validation_skips_the_copies_it_reports() {
    let (out, err) = child("1");
    assert!(err.contains("kernel skipped,"), "the out-of-range copy was not reported:\n{err}");
    assert!(out.contains(&format!("skipped {:?}", [-1; 16])), "the out-of-range copy was performed:\n{out}");
}

#[test]
fn delay_mode_exposes_a_kernel_that_reads_before_waiting() {
    let (out, _) = child("delay");
    assert!(out.contains(&format!("early_read {:?}", [-1; 16])), "the early read saw the copy:\n{out}");
}

#[test]
fn without_validation_nothing_is_reported() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--ignored", "--exact", "validation::child_runs_misusing_kernels", "--nocapture"])
        .env_remove("FERROCL_VALIDATE")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("FerroCL validation"));
}
