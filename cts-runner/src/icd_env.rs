//! Pointing the ICD loader at FerroCL: from the build tree while developing, or the
//! installed driver.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const DRIVER: &str = "libferrocl.so";

/// The FerroCL driver to use: `$FERROCL_LIB` if set, else the build tree this binary
/// belongs to (`target/<profile>/`, also from `target/<profile>/deps/`), else `None`
/// (the system registration in /etc/OpenCL/vendors then applies).
pub fn build_tree_driver() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FERROCL_LIB") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors().skip(1).take(3).map(|dir| dir.join(DRIVER)).find(|p| p.is_file())
}

/// Writes a vendors directory holding only `ferrocl.icd` for `driver` and points
/// `OCL_ICD_VENDORS` at it, so this process sees FerroCL alone. Must run before the
/// first OpenCL call: the loader reads its configuration once.
pub fn use_only(driver: &Path) -> Result<PathBuf, String> {
    let driver = driver.canonicalize().map_err(|e| format!("FerroCL driver {}: {e}", driver.display()))?;
    let dir = std::env::temp_dir().join(format!("ferrocl-vendors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let icd = dir.join("ferrocl.icd");
    std::fs::write(&icd, format!("{}\n", driver.display())).map_err(|e| format!("{}: {e}", icd.display()))?;
    // SAFETY (of the environment write): done before any thread of ours reads it.
    std::env::set_var("OCL_ICD_VENDORS", &dir);
    // The loader has read the directory by the time the process ends; leave nothing
    // behind in the temporary directory.
    if VENDORS.set(dir.clone()).is_ok() {
        // SAFETY: registers a plain function without arguments.
        unsafe { libc::atexit(remove_vendors) };
    }
    Ok(dir)
}

static VENDORS: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_vendors() {
    if let Some(dir) = VENDORS.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Like [`use_only`], but keeps every other platform registered on the system, so a
/// comparison can see FerroCL from the build tree next to installed drivers.
pub fn use_with_system(driver: &Path) -> Result<PathBuf, String> {
    let dir = use_only(driver)?;
    if let Ok(entries) = std::fs::read_dir("/etc/OpenCL/vendors") {
        for e in entries.flatten() {
            let name = e.file_name();
            if name != "ferrocl.icd" && name.to_string_lossy().ends_with(".icd") {
                let _ = std::fs::copy(e.path(), dir.join(&name));
            }
        }
    }
    Ok(dir)
}
