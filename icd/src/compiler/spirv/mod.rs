//! SPIR-V programs: the external LLVM/SPIR-V translator turns a module back into LLVM
//! bitcode (OpenCL C 2.0 builtin names, SPIR types), clang re-targets it to x86-64, and
//! `abi` bridges its builtin calls to this target's library. From there the module is
//! what the OpenCL C front end produces, and the same back end (rewrite, barriers,
//! async copies, launchers) compiles it.

pub(crate) mod abi;
pub(crate) mod legalize;
pub(crate) mod mangle;
pub(crate) mod module;
mod results;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::tools::{self, clang};
use super::{frontend, options, os, Target};

pub(crate) struct Translator {
    pub(crate) path: PathBuf,
    /// Path, size and modification time: part of IL programs' cache keys.
    pub(crate) identity: String,
}

/// Why a device without the translator has no IL (and an IL build fails).
pub(crate) const MISSING: &str = "FerroCL reads SPIR-V with the LLVM/SPIR-V translator, and none was found.\n\
Install it (Debian 12: 'apt-get install llvm-spirv-15'), or point FERROCL_LLVM_SPIRV at an llvm-spirv binary.\n";

/// The LLVM major version in a tool's real path (`/usr/lib/llvm-19/bin/clang`).
fn llvm_major(p: &Path) -> Option<u32> {
    let real = std::fs::canonicalize(p).ok()?;
    let s = real.to_str()?;
    let at = s.find("llvm-")? + 5;
    s[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// `FERROCL_LLVM_SPIRV`, else the newest `llvm-spirv-N` whose bitcode the kernels'
/// clang reads (N not above clang's own version), else `llvm-spirv`.
pub(crate) fn find() -> Option<&'static Translator> {
    static FOUND: OnceLock<Option<Translator>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let probe = |p: PathBuf| Some(Translator { identity: clang::identity(&p)?, path: p });
            let newest = clang::find().and_then(|c| llvm_major(&c.path)).unwrap_or(30);
            tools::find("FERROCL_LLVM_SPIRV", "llvm-spirv", 15..=newest.max(15), probe)
        })
        .as_ref()
}

/// The SPIR-V versions the translator reads (those it lists for `--spirv-max-version`),
/// and 1.5 and 1.6 where it reads 1.4 (`legalize` lowers them), oldest first; empty
/// without a translator.
pub(crate) fn versions() -> &'static [(u8, u8)] {
    static VERSIONS: OnceLock<Vec<(u8, u8)>> = OnceLock::new();
    VERSIONS.get_or_init(|| {
        let Some(t) = find() else { return Vec::new() };
        let Ok(out) = tools::output(Command::new(&t.path).arg("--help")) else { return Vec::new() };
        let help = String::from_utf8_lossy(&out.stdout);
        let mut v: Vec<(u8, u8)> = help
            .lines()
            .filter_map(|l| {
                let (major, minor) = l.trim().strip_prefix("=")?.split_whitespace().next()?.split_once('.')?;
                l.contains("SPIR-V").then_some(())?;
                Some((major.parse().ok()?, minor.parse().ok()?))
            })
            .collect();
        // Modules of 1.5 and 1.6 are lowered to 1.4 (`legalize`).
        if v.contains(&(1, 4)) {
            v.extend([(1, 5), (1, 6)]);
        }
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// A specialization constant's value as the application set it.
pub(crate) type SpecValue = (u32, Vec<u8>);

/// SPIR-V -> IR text like the OpenCL C front end's, with the translator's and clang's
/// diagnostics as the log.
pub(crate) fn to_module(
    clang: &clang::Clang,
    target: &Target,
    il: &[u8],
    spec: &[SpecValue],
    dir: &Path,
) -> Result<(String, String), String> {
    let t = find().ok_or(MISSING)?;
    let m = module::parse(il).map_err(|e| format!("{e}\n"))?;
    let (spv, bc, ll) = (dir.join("program.spv"), dir.join("program.spirv.bc"), dir.join("program.spirv.ll"));
    let words = legalize::legalize(&module::words(il)?);
    std::fs::write(&spv, words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).map_err(|e| e.to_string())?;
    // OpenCL C 2.0 names for the builtins (C11 atomics, generic pointers), which the
    // library defines for every version.
    let mut cmd = Command::new(&t.path);
    cmd.args(["-r", "--spirv-target-env=CL2.0"]);
    let values: Vec<String> = spec
        .iter()
        .filter_map(|(id, v)| m.spec_constants.iter().find(|c| c.id == *id).map(|c| module::spec_const_arg(c, v)))
        .collect();
    if !values.is_empty() {
        cmd.arg(format!("--spec-const={}", values.join(" ")));
    }
    cmd.arg("-o").arg(&bc).arg(&spv);
    let out = tools::output(&mut cmd)?;
    let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
    // A malformed module trips the translator's assertions: its message is the first
    // line; the crash report after it says nothing about the module.
    if let Some(at) = log.find("PLEASE submit a bug report") {
        log.truncate(at);
    }
    if !out.status.success() {
        return Err(format!("the SPIR-V translator ({}) refused the module:\n{log}", t.path.display()));
    }
    let mut args: Vec<&OsStr> = super::target_flags().iter().map(|s| os(s)).collect();
    args.extend(
        ["-S", "-emit-llvm", "-O0", "-Xclang", "-disable-llvm-passes", "-Wno-override-module", "-x", "ir"].map(os),
    );
    args.extend([bc.as_os_str(), os("-o"), ll.as_os_str()]);
    log += &clang::run(clang, &args)?;
    let text = queries_by_index(&prepare(&std::fs::read_to_string(&ll).map_err(|e| e.to_string())?));
    let decls = abi::declared(&text);
    let (wrappers, compiled) = compile_wrappers(clang, target, &decls, dir)?;
    let (text, wrappers) = abi::apply(&text, &decls, &wrappers, &compiled);
    std::fs::write(&ll, &text).map_err(|e| e.to_string())?;
    let merged = frontend::merge(clang, &[wrappers, text], dir)?;
    Ok((demote_across_barriers(clang, merged, dir), log))
}

/// An optimising producer keeps values in registers across barriers; the barrier-region
/// transform (`regions`) carries only stack variables across them, as the OpenCL C front
/// end's unoptimised output has them, and runs other kernels as fibers (~20x the cost
/// per barrier). So the blocks are split after each synchronising call and LLVM's
/// `reg2mem` (in `opt`, beside clang) turns the values that cross blocks into stack
/// variables. Without `opt` the module stays as it is.
fn demote_across_barriers(clang: &clang::Clang, text: String, dir: &Path) -> String {
    use super::passes::ir_text::callee_names;
    let syncs = |l: &str| l.contains("call ") && callee_names(l).iter().any(|(c, _)| super::passes::synchronises(c));
    let Some(opt) = clang::sibling(clang, "opt").filter(|_| text.lines().any(syncs)) else { return text };
    let split = split_after(&text, &syncs);
    let (input, output) = (dir.join("program.split.ll"), dir.join("program.demoted.ll"));
    let demoted = std::fs::write(&input, &split).ok().and_then(|_| {
        let mut cmd = Command::new(&opt);
        cmd.args(["-passes=reg2mem", "-S"]).arg(&input).arg("-o").arg(&output);
        let out = tools::output(&mut cmd).ok()?;
        out.status.success().then(|| std::fs::read_to_string(&output).ok()).flatten()
    });
    // reg2mem leaves a dead marker with a quoted name, which the transform refuses.
    demoted
        .map(|d| d.lines().filter(|l| !l.contains("%\"reg2mem alloca point\"")).map(|l| format!("{l}\n")).collect())
        .unwrap_or(text)
}

/// `text` with each block split after every line `at` picks: a branch to a new block
/// follows it. A phi naming a split block as the way it came names the block's last
/// piece, which now holds the terminator (`opt` refused the module otherwise, and the
/// kernel ran as fibers). A function's first block has no label: it is the number after
/// its numbered parameters.
fn split_after(text: &str, at: &dyn Fn(&str) -> bool) -> String {
    use super::passes::ir_text::{label_of, matching_paren, split_top};
    let mut split: Vec<String> = Vec::with_capacity(text.lines().count());
    // Per function: each split block's last piece, and where its lines start.
    let (mut last, mut start) = (std::collections::HashMap::<String, String>::new(), 0);
    let mut block = String::new();
    let fix = |lines: &mut [String], last: &std::collections::HashMap<String, String>| {
        for l in lines.iter_mut().filter(|l| l.contains(" = phi ")) {
            for (from, to) in last {
                *l = l.replace(&format!(", {from} ]"), &format!(", {to} ]"));
            }
        }
    };
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("define ") {
            fix(&mut split[start..], &last);
            (last, start) = (Default::default(), split.len());
            let params = line.find('(').and_then(|o| matching_paren(line, o).map(|c| &line[o + 1..c])).unwrap_or("");
            let number =
                |v: &str| v.strip_prefix('%').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            let numbered = split_top(params).iter().filter(|p| p.trim().rsplit(' ').next().is_some_and(number)).count();
            block = format!("%{numbered}");
        } else if let Some(l) = label_of(line) {
            block = format!("%{l}");
        }
        split.push(line.to_string());
        if line.starts_with("  ") && at(line) {
            let piece = format!("__fcl_split.{n}");
            split.push(format!("  br label %{piece}\n{piece}:"));
            // A second split in the same block moves its end again.
            last.insert(block.clone(), format!("%{piece}"));
        }
    }
    fix(&mut split[start..], &last);
    split.iter().map(|l| format!("{l}\n")).collect()
}

/// The translated module made ready for this target's pipeline:
/// - no `spir_func` calling convention: the library's functions use C's, and a call
///   whose convention differs from its callee's is undefined (LLVM deletes it);
/// - no `noinline`/`optnone` (an unoptimised producer's, or SPIR-V's DontInline
///   hint): the kernel body is inlined into its work-item loop;
/// - `printf`'s scalar `float` and `half` arguments promoted to `double`, as C's
///   variadic calls pass them (SPIR-V's printf passes them as they are);
/// - `linkonce_odr` definitions made `weak_odr`: the same one-definition merging, but
///   kept when nothing in their own module calls them, for other modules to link.
fn prepare(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut promoted = 0;
    for line in text.lines() {
        let mut l = line.replace(" spir_func ", " ");
        if l.starts_with("attributes #") {
            l = l.replace(" noinline", "").replace(" optnone", "");
        }
        if l.starts_with("define linkonce_odr ") || (l.starts_with('@') && l.contains(" = linkonce_odr ")) {
            l = l.replacen("linkonce_odr ", "weak_odr ", 1);
        }
        if l.contains(" call ") && l.contains("@printf(") {
            l = promote_printf_arguments(&l, &mut out, &mut promoted);
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The call with its `float`/`half` arguments after the format replaced by `double`
/// ones, whose `fpext`s are written to `out` first.
fn promote_printf_arguments(line: &str, out: &mut String, n: &mut usize) -> String {
    use super::passes::ir_text::{matching_paren, split_top};
    let Some(open) = line.find("@printf(").map(|at| at + "@printf".len()) else { return line.to_string() };
    let Some(close) = matching_paren(line, open) else { return line.to_string() };
    let args = split_top(&line[open + 1..close]);
    let mut changed = false;
    let new: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let scalar = ["float ", "half "].iter().find(|t| a.starts_with(*t));
            match scalar {
                Some(t) if i > 0 => {
                    let value = a.rsplit(' ').next().unwrap_or("");
                    let name = format!("%ferrocl.printf.{n}");
                    *n += 1;
                    out.push_str(&format!("  {name} = fpext {}{value} to double\n", t));
                    changed = true;
                    format!("double {name}")
                }
                _ => a.to_string(),
            }
        })
        .collect();
    if !changed {
        return line.to_string();
    }
    format!("{}{}{}", &line[..open + 1], new.join(", "), &line[close..])
}

/// SPIR-V reads work-item values from built-in vector variables; the translator turns
/// such a load into a vector of the three queries (`get_global_size(0)`, `(1)`, `(2)`)
/// and an `extractelement` of the index the kernel used. An index past 2 then reads
/// poison, where OpenCL C (and the CTS in SPIR-V mode) wants the query's own answer
/// (1 for sizes, 0 for ids): the `extractelement` becomes the query with that index.
fn queries_by_index(text: &str) -> String {
    use std::collections::HashMap;
    // Values that are a query's answer, and vectors built only of one query's answers.
    let (mut answers, mut vectors): (HashMap<String, &str>, HashMap<String, &str>) = Default::default();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let Some((name, rhs)) = super::passes::ir_text::def_of(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let rhs = rhs.trim_start_matches("tail ");
        let mut dimensioned = super::passes::context::by_dimension();
        if let Some(q) = dimensioned.find(|q| rhs.starts_with(&format!("call i64 @{q}(i32 "))) {
            answers.insert(name.to_string(), q);
        } else if let Some(rest) = rhs.strip_prefix("insertelement <3 x i64> ") {
            // insertelement <3 x i64> <undef|poison|%v>, i64 %x, i32 k
            let parts: Vec<&str> = rest.split(", ").collect();
            if let [base, elem, _] = parts.as_slice() {
                let q = elem.strip_prefix("i64 ").and_then(|x| answers.get(x)).copied();
                let base_ok = |q: &str| matches!(*base, "undef" | "poison") || vectors.get(*base) == Some(&q);
                if let Some(q) = q.filter(|q| base_ok(q)) {
                    vectors.insert(name.to_string(), q);
                }
            }
        } else if let Some(rest) = rhs.strip_prefix("extractelement <3 x i64> ") {
            if let Some((v, index)) = rest.split_once(", i32 ") {
                if let Some(q) = vectors.get(v) {
                    out.push_str(&format!("  {name} = call i64 @{q}(i32 {index})\n"));
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Compiles the wrappers (see `abi`); a wrapper clang refuses (a name that is no
/// builtin, such as an imported user function) is left out, and its declaration stays
/// for the link to resolve. Returns the IR and the declarations whose wrappers compiled.
fn compile_wrappers(
    clang: &clang::Clang,
    target: &Target,
    decls: &[abi::Declared],
    dir: &Path,
) -> Result<(String, std::collections::HashSet<usize>), String> {
    let all: std::collections::HashSet<usize> = (0..decls.len()).collect();
    let opts = options::parse("-cl-std=CL3.0").map_err(|e| e.to_string())?;
    let mut skip = std::collections::HashSet::new();
    // Each round leaves out the wrappers clang refused; clang stops after 20 errors, so
    // a module importing many functions takes a few rounds. Every round must leave out
    // a new one, so this ends.
    loop {
        match frontend::opencl_c(clang, target, &opts, &abi::source(decls, &skip), &[], dir) {
            Ok((ir, _)) => return Ok((ir, all.difference(&skip).copied().collect())),
            Err(diagnostics) => {
                let failing = abi::failing(decls, &diagnostics);
                if failing.is_empty() || !failing.is_disjoint(&skip) {
                    return Err(format!("FerroCL could not bridge the module's builtins:\n{diagnostics}"));
                }
                skip.extend(failing);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_block_is_named_by_its_last_piece_in_phis() {
        let ir = "define void @k(ptr %0, i32 %1) {\n  call void @b()\n  br label %5\n5:\n  \
                  %6 = phi i32 [ 0, %2 ], [ %8, %7 ]\n  br label %7\n7:\n  call void @b()\n  \
                  %8 = add i32 %6, 1\n  call void @b()\n  br label %5\n}\n";
        let out = split_after(ir, &|l: &str| l.contains("@b()"));
        // The entry block (%2, after two numbered parameters) and block 7 end in their last
        // pieces; each split adds a branch and a label.
        assert!(out.contains("%6 = phi i32 [ 0, %__fcl_split.1 ], [ %8, %__fcl_split.9 ]"), "{out}");
        assert!(out.contains("  call void @b()\n  br label %__fcl_split.7\n__fcl_split.7:\n  %8 = add"), "{out}");
        assert_eq!(out.matches("\n__fcl_split.").count(), 3, "{out}");
    }

    #[test]
    fn vector_reads_of_queries_become_queries() {
        let ir = "  %12 = call i64 @_Z15get_global_sizej(i32 0) #1\n  \
                  %13 = insertelement <3 x i64> undef, i64 %12, i32 0\n  \
                  %14 = call i64 @_Z15get_global_sizej(i32 1) #1\n  \
                  %15 = insertelement <3 x i64> %13, i64 %14, i32 1\n  \
                  %16 = call i64 @_Z15get_global_sizej(i32 2) #1\n  \
                  %17 = insertelement <3 x i64> %15, i64 %16, i32 2\n  \
                  %18 = extractelement <3 x i64> %17, i32 %1\n  \
                  %19 = extractelement <3 x i64> %other, i32 %1\n";
        let out = queries_by_index(ir);
        assert!(out.contains("  %18 = call i64 @_Z15get_global_sizej(i32 %1)\n"), "{out}");
        assert!(out.contains("%19 = extractelement"), "other vectors are left alone");
    }

    #[test]
    fn printf_floats_are_promoted() {
        let mut pre = String::new();
        let mut n = 0;
        let line = "  %5 = call i32 (ptr addrspace(2), ...) @printf(ptr addrspace(2) @.str, float %3, i32 %4, half %h)";
        let out = promote_printf_arguments(line, &mut pre, &mut n);
        assert_eq!(
            pre,
            "  %ferrocl.printf.0 = fpext float %3 to double\n  %ferrocl.printf.1 = fpext half %h to double\n"
        );
        assert!(out
            .ends_with("@printf(ptr addrspace(2) @.str, double %ferrocl.printf.0, i32 %4, double %ferrocl.printf.1)"));
    }
}
