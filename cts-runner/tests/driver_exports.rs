//! The driver's own symbol surface, checked on the shared object itself (not through a
//! loader, whose policies differ: Khronos's hides clIcdGetPlatformIDsKHR from apps).

use std::ffi::{c_char, c_void};
use std::process::Command;

use cts_runner::icd_env;

fn driver() -> std::path::PathBuf {
    icd_env::build_tree_driver().expect("libferrocl.so is not built: run 'cargo build --workspace'")
}

#[test]
fn exports_exactly_the_three_icd_symbols() {
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(driver()).output().expect("nm (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut functions: Vec<&str> = text
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("T"))
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    functions.sort();
    assert_eq!(functions, ["clGetExtensionFunctionAddress", "clGetPlatformInfo", "clIcdGetPlatformIDsKHR"]);
}

#[test]
fn extension_lookup_offers_the_icd_entry_points() {
    type Lookup = unsafe extern "C" fn(*const c_char) -> *mut c_void;
    // SAFETY: the driver has no initialisers with preconditions.
    let lib = unsafe { libloading::Library::new(driver()) }.unwrap();
    let lookup = unsafe { lib.get::<Lookup>(b"clGetExtensionFunctionAddress\0") }.unwrap();
    for name in
        [c"clIcdGetPlatformIDsKHR", c"clIcdGetFunctionAddressForPlatformKHR", c"clIcdSetPlatformDispatchDataKHR"]
    {
        assert!(!unsafe { lookup(name.as_ptr()) }.is_null(), "{name:?}");
    }
    assert!(unsafe { lookup(c"clNoSuchFunction".as_ptr()) }.is_null());
    assert!(unsafe { lookup(std::ptr::null()) }.is_null());
}
