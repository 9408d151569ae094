//! The back end: rewritten IR -> object (clang -O2, the library pieces the module needs
//! linked in as bitcode so they inline) -> shared object (the system linker, against the
//! builtins archive, exporting only the launchers).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::tools::{self, clang::Clang};
use super::{cache, library, options, os, passes, target_flags, Target};

/// Rewritten IR -> object -> shared object. Returns the library file (in the cache
/// directory, ready to be renamed into place), its kernels and the log.
pub(super) fn build(
    clang: &Clang,
    target: &Target,
    opts: &options::BuildOptions,
    ir_text: &str,
    fixed: &[(String, [usize; 3])],
    archive: &Path,
    dir: &Path,
) -> Result<(PathBuf, passes::Rewritten, String), String> {
    let (opt_ll, lib, map) = (dir.join("program.ferrocl.ll"), dir.join("program.so"), dir.join("exports.map"));
    let rewritten = passes::rewrite_fixed(ir_text, fixed)?;
    std::fs::write(&opt_ll, &rewritten.module).map_err(|e| e.to_string())?;
    if tools::clang::verifying() {
        tools::clang::verify(clang, &opt_ll)?;
    }
    let parts = library::parts(clang, target, &cache::dir(), dir)?;
    let needed = library::needed_parts(parts, &rewritten.module)?;

    // IR -> object in one clang run (cc1 runs in its process), with the needed library
    // parts linked in as bitcode so builtins inline into the kernels and the group loop
    // is optimised together with the kernel body; then the object -> shared object by
    // the linker (see `link`). The version script exports only the entry points (else
    // printf and friends would bind to libc's and library symbols would leak).
    std::fs::write(
        &map,
        "{ global: __ferrocl_launch_*; __ferrocl_item_*; __ferrocl_static_local_query; local: *; };\n",
    )
    .map_err(|e| e.to_string())?;
    // On a failed link only: say what each undefined name is. The OpenCL builtins the
    // program calls that neither the library nor the archive defines go by their
    // mangled names (tools such as `cts-runner coverage` read these lines); the
    // program's own functions declared without a body by theirs.
    let undefined = |error: &str| {
        let (builtins, functions) = library::undefined(&rewritten.module, parts, archive);
        let mut out = String::new();
        for f in functions.iter().filter(|f| error.contains(&format!("{f}'")) || error.contains(&format!(": {f}\n"))) {
            out += &format!("'{f}' is declared in the program but defined nowhere (a prototype without a body)\n");
        }
        if !builtins.is_empty() {
            out += "(an undefined mangled name is an OpenCL builtin FerroCL does not implement yet, or an \
                    overloadable function of the program declared without a body)\n";
        }
        out + &builtins.iter().map(|n| format!("missing builtin: {n}\n")).collect::<String>()
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
    if !fixed.is_empty() {
        args.extend(["-mllvm", "-enable-nontrivial-unswitch"].map(os));
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
    Ok((keep, rewritten, log))
}
