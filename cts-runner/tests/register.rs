//! The registration step of `tools/run-main` on a machine that has the ICD loader but no
//! OpenCL vendor yet (no `/etc/OpenCL/vendors`: ocl-icd does not create it), tried
//! against an empty temporary root; the loader then finds FerroCL through what it wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use cts_runner::icd_env;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/register-icd")
}

#[test]
fn registration_creates_the_vendors_directory_in_an_empty_root() {
    let driver = icd_env::build_tree_driver().expect("libferrocl.so is not built: run 'cargo build --workspace'");
    let root = std::env::temp_dir().join(format!("ferrocl-fresh-root-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();

    let out = Command::new("bash").arg(script()).arg(&driver).arg(&root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let vendors = root.join("etc/OpenCL/vendors");
    let icd = std::fs::read_to_string(vendors.join("ferrocl.icd")).unwrap();
    assert_eq!(icd.trim(), driver.canonicalize().unwrap().to_str().unwrap());

    // The loader, given only that directory, lists the FerroCL platform.
    let list = Command::new("clinfo").arg("-l").env("OCL_ICD_VENDORS", &vendors).output().expect("clinfo runs");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success() && text.contains("FerroCL"), "{text}");

    // Registering again replaces the entry rather than failing or appending.
    let again = Command::new("bash").arg(script()).arg(&driver).arg(&root).output().unwrap();
    assert!(again.status.success());
    assert_eq!(std::fs::read_to_string(vendors.join("ferrocl.icd")).unwrap(), icd);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn registration_refuses_a_library_that_does_not_exist() {
    let root = std::env::temp_dir().join(format!("ferrocl-fresh-root-missing-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let out = Command::new("bash").arg(script()).arg("/nonexistent/libferrocl.so").arg(&root).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/libferrocl.so is not a file"));
    assert!(!root.join("etc").exists(), "nothing is written for a missing library");
    let _ = std::fs::remove_dir_all(&root);
}
