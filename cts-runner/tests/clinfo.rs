//! `clinfo`, an unmodified OpenCL host program, prints the whole FerroCL platform through
//! the system ICD loader without a single error.

use std::process::Command;

use cts_runner::icd_env;

#[test]
fn clinfo_prints_the_platform_without_errors() {
    let driver = icd_env::build_tree_driver().expect("libferrocl.so is not built: run 'cargo build --workspace'");
    let vendors = icd_env::use_only(&driver).unwrap();
    let out = Command::new("clinfo")
        .env("OCL_ICD_VENDORS", &vendors)
        .output()
        .expect("clinfo is not installed: the README's setup installs it (apt-get install clinfo)");
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "clinfo failed: {errors}");
    assert!(text.contains("Number of platforms                               1"), "{text}");
    assert!(text.contains("Platform Name                                   FerroCL"), "{text}");
    assert!(text.contains("Platform Version                                OpenCL 3.0 FerroCL"), "{text}");
    assert!(text.contains("Device Type                                     CPU"), "{text}");
    // clinfo prints a failed query as "<file:line: what : error N>".
    let failed: Vec<&str> =
        text.lines().chain(errors.lines()).filter(|l| l.contains('<') && l.contains("error")).collect();
    assert!(failed.is_empty(), "queries that failed: {failed:#?}");
    assert!(!text.contains("Invalid"), "{text}");
}
