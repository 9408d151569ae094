//! The back end: rewritten IR -> object (clang -O2, the library pieces the module needs
//! linked in as bitcode so they inline) -> shared object (the system linker, against the
//! builtins archive, exporting only the launchers).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::tools::{self, clang::Clang};
use super::{cache, library, options, os, target_flags, Target};

/// Bytes of IR text past which a module is compiled without instruction scheduling.
const HUGE_MODULE: usize = 2 << 20;

/// Rewritten IR -> object -> shared object. Returns the library file (in the cache
/// directory, ready to be renamed into place) and the log. `second`: a second build of
/// a kernel, for a loop of one group size (`Unit::fixed`), which nothing waits for.
pub(super) fn build(
    clang: &Clang,
    target: &Target,
    opts: &options::BuildOptions,
    module: &str,
    second: bool,
    archive: &Path,
    dir: &Path,
) -> Result<(PathBuf, String), String> {
    let (opt_ll, lib, map) = (dir.join("program.ferrocl.ll"), dir.join("program.so"), dir.join("exports.map"));
    std::fs::write(&opt_ll, module).map_err(|e| e.to_string())?;
    if tools::clang::verifying() {
        tools::clang::verify(clang, &opt_ll)?;
    }
    let parts = library::parts(clang, target, &cache::dir(), dir)?;
    let needed = library::needed_parts(parts, module)?;

    // IR -> object in one clang run (cc1 runs in its process), with the needed library
    // parts linked in as bitcode so builtins inline into the kernels and the group loop
    // is optimised together with the kernel body; then the object -> shared object by
    // the linker (see `link`). The version script exports only the entry points (else
    // printf and friends would bind to libc's and library symbols would leak).
    std::fs::write(
        &map,
        "{ global: __ferrocl_launch_*; __ferrocl_item_*; __ferrocl_flat_*; __ferrocl_static_local_query; local: *; };\n",
    )
    .map_err(|e| e.to_string())?;
    let undefined = |error: &str| {
        explain_undefined(module, parts, archive, &|f| {
            error.contains(&format!("{f}'")) || error.contains(&format!(": {f}\n"))
        })
    };
    let obj = dir.join("program.o");
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend([os(if opts.opt_disable { "-O0" } else { "-O2" }), os("-c"), opt_ll.as_os_str()]);
    // The item loops' unroll-and-jam (`launcher::item_loop_metadata`); where LLVM cannot
    // do it (no single inner loop, a call inside), its "not unroll-and-jammed" warning
    // would fill the build log.
    args.extend(["-mllvm", "-enable-unroll-and-jam", "-Wno-pass-failed"].map(os));
    // A second build (loops for one group size) runs in the background, where its time
    // costs no launch: there LLVM also unswitches loops on conditions that do not change
    // in them, such as a barrier kernel's loop counter held once per group, which is
    // tested per work-item in the item loop (SGEMM in groups of 16x16 on the 2-core
    // machine: medians 41.6 -> 47.6 GFLOP/s). For first builds it cost too much time:
    // the bench's main program 174 -> 253 ms cold.
    if second {
        args.extend(["-mllvm", "-enable-nontrivial-unswitch"].map(os));
    }
    // LLVM's instruction schedulers take time quadratic in a block's length: the
    // straight-line kernels of hash tools (thousands of unrolled rounds, a block of
    // 100,000 instructions) spent most of their build there. A ~10 MB module of 6,000
    // rounds (`cts-runner bench --only builds`): ~285 s -> 39 s of clang; out-of-order
    // cores reorder such code themselves.
    if module.len() > HUGE_MODULE {
        args.extend(["-mllvm", "-disable-post-ra", "-mllvm", "-enable-misched=false"].map(os));
    }
    for p in &needed {
        args.extend([os("-Xclang"), os("-mlink-builtin-bitcode"), os("-Xclang"), p.bitcode.as_os_str()]);
    }
    args.extend([os("-Wno-override-module"), os("-o"), obj.as_os_str()]);
    let mut log = tools::clang::run(clang, &args)?;
    let through_clang = || {
        let script = format!("-Wl,--version-script={}", map.display());
        let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
        args.extend([os("-shared"), obj.as_os_str(), os("-o"), lib.as_os_str(), archive.as_os_str(), os(&script)]);
        args.extend(["-Wl,--no-undefined", "-Wl,--gc-sections", "-lm", "-lpthread", "-ldl"].map(os));
        tools::clang::run(clang, &args).map_err(|e| format!("{e}{}", undefined(&e)))
    };
    log += &match tools::link::link(clang, &cache::dir(), &obj, archive, &map, &lib) {
        Some(Ok(linked)) => linked,
        // A failure may come from a stale command line (the system's C library or
        // linker changed since it was cached): clang's own link decides.
        Some(Err(_)) => {
            let linked = through_clang()?;
            tools::link::forget(clang, &cache::dir());
            linked
        }
        None => through_clang()?,
    };
    let keep = dir.with_extension("so");
    std::fs::rename(&lib, &keep).map_err(|e| e.to_string())?;
    Ok((keep, log))
}

/// What a link of the module would find missing, said as a failed link says it
/// (`explain_undefined`): a build that defers code generation (`Code::Deferred`) fails
/// here, where a build making code would have failed at its link. A function of the
/// program the C or maths library defines links there, as kernels' code does.
pub(super) fn unresolved(
    clang: &Clang,
    target: &Target,
    module: &str,
    archive: &Path,
    dir: &Path,
) -> Result<(), String> {
    let parts = library::parts(clang, target, &cache::dir(), dir)?;
    let (builtins, functions) = library::undefined(module, parts, archive);
    let missing: Vec<&String> = functions.iter().filter(|f| !in_system_libraries(f)).collect();
    if builtins.is_empty() && missing.is_empty() {
        return Ok(());
    }
    let mut log: String = missing.iter().map(|f| format!("error: undefined reference to '{f}'\n")).collect();
    log += &builtins.iter().map(|f| format!("error: undefined reference to '{f}'\n")).collect::<String>();
    Err(log + &explain_undefined(module, parts, archive, &|f| missing.iter().any(|m| *m == f)))
}

/// Whether the C or maths library, which kernels' shared objects link against, defines
/// a function.
fn in_system_libraries(name: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(name) else { return false };
    ["libc.so.6", "libm.so.6"].iter().any(|lib| {
        // SAFETY: dlopen of a system library already loaded into every process (or
        // loadable), looked up by a NUL-terminated name; the handle is released.
        unsafe {
            let lib = std::ffi::CString::new(*lib).unwrap_or_default();
            let h = libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            let h = if h.is_null() { libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY) } else { h };
            if h.is_null() {
                return false;
            }
            let found = !libc::dlsym(h, c.as_ptr()).is_null();
            libc::dlclose(h);
            found
        }
    })
}

/// On a failed link: what each undefined name is. The OpenCL builtins the program calls
/// that neither the library nor the archive defines go by their mangled names (tools
/// such as `cts-runner coverage` read these lines); the program's own functions declared
/// without a body by theirs, those `named` (in the linker's error).
fn explain_undefined(module: &str, parts: &[library::Part], archive: &Path, named: &dyn Fn(&str) -> bool) -> String {
    let (builtins, functions) = library::undefined(module, parts, archive);
    let mut out = String::new();
    for f in functions.iter().filter(|f| named(f)) {
        out += &format!("'{f}' is declared in the program but defined nowhere (a prototype without a body)\n");
    }
    if !builtins.is_empty() {
        out += "(an undefined mangled name is an OpenCL builtin FerroCL does not implement yet, or an \
                overloadable function of the program declared without a body)\n";
    }
    out + &builtins.iter().map(|n| format!("missing builtin: {n}\n")).collect::<String>()
}
