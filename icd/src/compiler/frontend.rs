//! The front end: OpenCL C -> LLVM IR by clang, unoptimised (the optimiser runs once, in
//! the back end), with exactly the target's extensions and features; and the merge of
//! compiled modules for `clLinkProgram`.

use std::ffi::OsStr;
use std::path::Path;

use super::tools::{self, clang::Clang};
use super::{library, options, os, target_flags, Target};

/// `-cl-ext=-all,+<each extension and OpenCL C feature the target has>`, and before
/// OpenCL C 3.0 the extensions enabled there alone.
fn extension_flag(target: &Target, clang_options: &[String]) -> String {
    let before_3 = !clang_options.iter().any(|o| o == "-cl-std=CL3.0");
    let older = target.pre_3_extensions.iter().filter(|_| before_3);
    let on: String = target.extensions.iter().chain(&target.features).chain(older).map(|n| format!(",+{n}")).collect();
    format!("-cl-ext=-all{on}")
}

/// `-D<name>=1` for the macros clang leaves undefined: each OpenCL C feature the device
/// claims, in OpenCL C 3.0 (clang defines the macros of some from `-cl-ext`, but not
/// those its header alone uses: the device and all-devices scopes, the work-group
/// collectives), and `SPIR_ONLY_MACROS` in every version. Defining one again with the
/// same value is harmless.
fn feature_macros(target: &Target, clang_options: &[String]) -> Vec<String> {
    let cl3 = clang_options.iter().any(|o| o == "-cl-std=CL3.0");
    let features = target.features.iter().copied().filter(|_| cl3);
    SPIR_ONLY_MACROS.iter().copied().chain(features).map(|n| format!("-D{n}=1")).collect()
}

/// Macros of claimed extensions (and their features) that clang's header defines for
/// SPIR targets only (opencl-c-base.h): without them x86 kernels lack the builtins
/// they guard. Defined in every OpenCL C version, as the extensions ask.
pub(crate) const SPIR_ONLY_MACROS: &[&str] = &[
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_intel_required_subgroup_size",
    "cl_intel_subgroups",
    "cl_khr_kernel_clock",
    "__opencl_c_kernel_clock_scope_device",
    "__opencl_c_kernel_clock_scope_work_group",
    "__opencl_c_kernel_clock_scope_sub_group",
];

/// OpenCL C -> IR. Unoptimised (the optimiser runs once, in the back end), with OpenCL
/// address spaces kept distinct so `__local` data can be told apart.
pub(super) fn opencl_c(
    clang: &Clang,
    target: &Target,
    opts: &options::BuildOptions,
    source: &str,
    headers: &[(String, String)],
    dir: &Path,
) -> Result<(String, String), String> {
    let inc = dir.join("include");
    std::fs::create_dir_all(&inc).map_err(|e| e.to_string())?;
    for (name, text) in headers {
        let p = inc.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&p, text).map_err(|e| e.to_string())?;
    }
    let (cl, ll, ext) = (dir.join("program.cl"), dir.join("program.ll"), dir.join("ferrocl-extensions.h"));
    std::fs::write(&cl, source).map_err(|e| e.to_string())?;
    std::fs::write(&ext, library::EXTENSIONS_HEADER).map_err(|e| e.to_string())?;
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend(["-x", "cl", "-emit-llvm", "-S", "-O2"].map(os));
    args.extend(["-Xclang", "-disable-llvm-passes", "-Xclang", "-ffake-address-space-map"].map(os));
    args.extend(["-Xclang", "-fdeclare-opencl-builtins", "-Xclang", "-finclude-default-header", "-Wno-psabi"].map(os));
    // No reciprocal estimates (see launcher::ENTRY_ATTRIBUTES).
    args.push(os("-mrecip=none"));
    // Frames over a page touch each page in turn, so a kernel that overflows its stack
    // hits the guard page (and faults, which exec::fault catches) rather than jumping
    // past it into other memory.
    args.push(os("-fstack-clash-protection"));
    // The device's OpenCL version (clang defines it only for SPIR targets), and
    // "__IMAGE_SUPPORT__ ... defined as the integer constant 1 if images are supported"
    // (clang never defines it).
    args.extend(["-D__OPENCL_VERSION__=300", "-D__IMAGE_SUPPORT__=1"].map(os));
    args.extend([os("-include"), ext.as_os_str()]);
    // Only what the device claims: x86 clang enables vendor extensions by default.
    let ext = extension_flag(target, &opts.clang);
    args.extend([os("-Xclang"), os(&ext)]);
    args.extend(opts.clang.iter().map(|s| os(s)));
    let features = feature_macros(target, &opts.clang);
    args.extend(features.iter().map(|s| os(s)));
    let inc_flag = format!("-I{}", inc.display());
    args.extend([os(&inc_flag), cl.as_os_str(), os("-o"), ll.as_os_str()]);
    let log = tools::clang::run(clang, &args)?;
    let text = std::fs::read_to_string(&ll).map_err(|e| e.to_string())?;
    Ok((without_scratch(text, dir), log))
}

/// The module with the scratch directory's path (the module name, debug info's
/// directories) replaced by a fixed name: the path holds the process id and a counter,
/// and a compiled module is part of `clLinkProgram`'s cache key, which must not change
/// from run to run.
pub(super) fn without_scratch(text: String, dir: &Path) -> String {
    match dir.to_str() {
        Some(d) if !d.is_empty() => text.replace(d, "ferrocl-program"),
        _ => text,
    }
}

/// Merges IR modules into one (clang links the others in as bitcode).
pub(super) fn merge(clang: &Clang, modules: &[String], dir: &Path) -> Result<String, String> {
    let (first, rest) = modules.split_first().ok_or("no input programs")?;
    let main = dir.join("link-0.ll");
    std::fs::write(&main, first).map_err(|e| e.to_string())?;
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend([os("-O0"), os("-S"), os("-emit-llvm"), main.as_os_str()]);
    let mut bitcode = Vec::new();
    for (i, m) in rest.iter().enumerate() {
        let (ll, bc) = (dir.join(format!("link-{}.ll", i + 1)), dir.join(format!("link-{}.bc", i + 1)));
        std::fs::write(&ll, m).map_err(|e| e.to_string())?;
        tools::clang::run(clang, &[os("-c"), os("-emit-llvm"), ll.as_os_str(), os("-o"), bc.as_os_str()])?;
        bitcode.push(bc);
    }
    for bc in &bitcode {
        args.extend([os("-Xclang"), os("-mlink-bitcode-file"), os("-Xclang"), bc.as_os_str()]);
    }
    let out = dir.join("linked.ll");
    args.extend([os("-Wno-override-module"), os("-o"), out.as_os_str()]);
    tools::clang::run(clang, &args)?;
    std::fs::read_to_string(&out).map(|t| without_scratch(t, dir)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_macros_are_defined_by_version() {
        let target = Target {
            extensions: vec!["cl_khr_integer_dot_product"],
            pre_3_extensions: vec!["cl_khr_subgroups"],
            features: vec!["__opencl_c_generic_address_space"],
            cpu: "test".into(),
        };
        assert!(extension_flag(&target, &["-cl-std=CL2.0".into()]).ends_with(",+cl_khr_subgroups"));
        assert!(!extension_flag(&target, &["-cl-std=CL3.0".into()]).contains("cl_khr_subgroups"));
        let cl12 = feature_macros(&target, &["-cl-std=CL1.2".into()]);
        assert!(cl12.contains(&"-Dcl_khr_integer_dot_product=1".to_string()));
        assert!(!cl12.iter().any(|m| m.contains("generic_address_space")), "3.0 features stay in 3.0");
        let cl3 = feature_macros(&target, &["-cl-std=CL3.0".into()]);
        assert!(cl3.iter().any(|m| m.contains("generic_address_space")));
    }
}
