//! Bridging a translated SPIR-V module's builtin calls to this target's builtins.
//!
//! The translator declares each OpenCL builtin the SPIR way: SPIR mangling
//! (`PU3AS1f`) and the plain IR types (`<2 x float>`). Clang compiles OpenCL C for
//! x86-64 with other manglings (`PU8CLglobalf`) and the C ABI's lowering: a `float2` is
//! passed as a `double`, a `uchar2` as an `i16`, 512-bit vectors in memory without
//! AVX-512. Rather than re-implementing either rule, every builtin the module declares
//! is called once from generated OpenCL C (`source`), whose parameters are pointers (the
//! same on both sides), and clang resolves the overload, mangles and lowers it:
//! - where clang's declaration has exactly the module's types (queries, barriers, async
//!   copies, most math), the module's calls are renamed to it and its wrapper is
//!   dropped, so the rewrite still sees barriers and queries in the kernel's body;
//! - elsewhere the declaration becomes an always-inline definition that stores the
//!   arguments, calls the wrapper, and loads the result; at -O2 nothing of it remains.

use std::collections::HashSet;
use std::fmt::Write;

use super::mangle::{self, Param};
use crate::compiler::passes::ir_text::{callee_names, matching_paren, split_top};
use crate::compiler::passes::ir_type;

/// A builtin the module declares.
#[derive(Debug)]
pub(crate) struct Declared {
    pub(crate) name: String,
    /// IR return type, as written (`void` included).
    ret: String,
    /// IR parameter types, as written.
    params: Vec<String>,
    opencl: (String, Vec<Param>),
}

/// The first line of the generated source's wrappers: wrapper `i` is on line
/// `FIRST_LINE + i`, so clang's diagnostics name the wrappers that do not compile.
pub(crate) const FIRST_LINE: usize = 3;

/// The wrapper's name for declaration `i`.
fn wrapper(i: usize) -> String {
    format!("__ferrocl_spirv_{i}")
}

/// The `_Z` functions the module declares whose names read as OpenCL builtins.
pub(crate) fn declared(module: &str) -> Vec<Declared> {
    module.lines().filter(|l| l.starts_with("declare ")).filter_map(declaration).collect()
}

fn declaration(line: &str) -> Option<Declared> {
    let (name, open) = callee_names(line).into_iter().next()?;
    let opencl = mangle::demangle(&name)?;
    let close = matching_paren(line, open)?;
    let params: Vec<String> = split_top(&line[open + 1..close])
        .into_iter()
        .map(|p| {
            let (_, rest) = ir_type::parse(p)?;
            Some(p[..p.len() - rest.len()].trim().to_string())
        })
        .collect::<Option<_>>()?;
    if params.len() != opencl.1.len() {
        return None;
    }
    let head = &line[..line.find(&format!("@{name}("))?];
    Some(Declared { ret: return_type(head)?, params, opencl, name })
}

/// The return type in `declare <attributes> <type> `: the last words that read as one.
fn return_type(head: &str) -> Option<String> {
    let head = head.trim_end();
    if head.ends_with(" void") {
        return Some("void".into());
    }
    let starts = head.match_indices(' ').map(|(i, _)| i + 1);
    starts
        .filter_map(|s| {
            let (_, rest) = ir_type::parse(&head[s..])?;
            rest.trim().is_empty().then(|| head[s..].trim().to_string())
        })
        .next()
}

/// The OpenCL C wrappers of `decls` (all, but those in `skip`).
pub(crate) fn source(decls: &[Declared], skip: &HashSet<usize>) -> String {
    let mut s =
        String::from("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    debug_assert_eq!(s.lines().count() + 1, FIRST_LINE);
    for (i, d) in decls.iter().enumerate() {
        if skip.contains(&i) {
            s.push('\n');
            continue;
        }
        let (fname, params) = &d.opencl;
        let formals: String = params
            .iter()
            .enumerate()
            .map(|(k, p)| if p.by_pointer { format!(", {} __private *a{k}", p.c) } else { format!(", {} a{k}", p.c) })
            .collect();
        let args: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(k, p)| if p.by_pointer { format!("*a{k}") } else { format!("a{k}") })
            .collect();
        let call = format!("{fname}({})", args.join(", "));
        let body =
            if d.ret == "void" { format!("{call};") } else { format!("*(__typeof__({call}) __private *)r = {call};") };
        let _ =
            writeln!(s, "__attribute__((always_inline)) void {}(void __private *r{formals}) {{ {body} }}", wrapper(i));
    }
    s
}

/// Which wrappers a clang error names (`<file>:<line>:<col>: error`).
pub(crate) fn failing(decls: &[Declared], diagnostics: &str) -> HashSet<usize> {
    diagnostics
        .lines()
        .filter(|l| l.contains(": error"))
        .filter_map(|l| {
            let mut it = l.split(':');
            it.next()?;
            let line: usize = it.next()?.trim().parse().ok()?;
            line.checked_sub(FIRST_LINE).filter(|&i| i < decls.len())
        })
        .collect()
}

/// The function a wrapper's body calls, and that function's declaration in `ir`.
fn callee_of(ir: &str, i: usize) -> Option<(String, String, Vec<String>)> {
    let head = format!("@{}(", wrapper(i));
    let lines: Vec<&str> = ir.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("define ") && l.contains(&head))?;
    let body = lines[start + 1..].iter().take_while(|l| !l.starts_with('}'));
    let calls: Vec<String> = body
        .filter(|l| l.contains("call "))
        .flat_map(|l| callee_names(l).into_iter().map(|(n, _)| n))
        .filter(|n| !n.starts_with("llvm."))
        .collect();
    let [callee] = calls.as_slice() else { return None };
    let decl = ir.lines().find(|l| l.starts_with("declare ") && l.contains(&format!("@{callee}(")))?;
    let d = declaration_types(decl, callee)?;
    Some((callee.clone(), d.0, d.1))
}

fn declaration_types(line: &str, name: &str) -> Option<(String, Vec<String>)> {
    let open = line.find(&format!("@{name}("))? + name.len() + 1;
    let close = matching_paren(line, open)?;
    let params = split_top(&line[open + 1..close])
        .into_iter()
        .map(|p| {
            let (_, rest) = ir_type::parse(p)?;
            Some(p[..p.len() - rest.len()].trim().to_string())
        })
        .collect::<Option<Vec<_>>>()?;
    Some((return_type(&line[..open - name.len() - 1])?, params))
}

/// The parameter types of wrapper `i`'s definition in `ir`.
fn wrapper_params(ir: &str, i: usize) -> Option<Vec<String>> {
    let name = wrapper(i);
    let line = ir.lines().find(|l| l.starts_with("define ") && l.contains(&format!("@{name}(")))?;
    let open = line.find(&format!("@{name}("))? + name.len() + 1;
    let close = matching_paren(line, open)?;
    split_top(&line[open + 1..close])
        .into_iter()
        .map(|p| {
            let (_, rest) = ir_type::parse(p)?;
            Some(p[..p.len() - rest.len()].trim().to_string())
        })
        .collect()
}

/// Replaces `@from` (a whole name) by `@to` throughout `text`.
fn rename(text: &str, from: &str, to: &str) -> String {
    let needle = format!("@{from}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&needle) {
        let after = &rest[at + needle.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(|c: char| c.is_alphanumeric() || "._$-".contains(c)) {
            out.push_str(&needle);
        } else {
            out.push('@');
            out.push_str(to);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Applies the bridge: returns the module with its builtin calls renamed or routed
/// through wrappers, and the wrappers' module with the unused wrappers removed.
/// `compiled` lists the declarations whose wrappers compiled.
pub(crate) fn apply(
    module: &str,
    decls: &[Declared],
    wrappers_ir: &str,
    compiled: &HashSet<usize>,
) -> (String, String) {
    let mut module = module.to_string();
    let mut unused: HashSet<usize> = HashSet::new();
    let mut extra = String::new();
    let mut declared_now: HashSet<String> = decls.iter().map(|d| d.name.clone()).collect();
    for (i, d) in decls.iter().enumerate() {
        if !compiled.contains(&i) {
            continue;
        }
        let Some((callee, ret, params)) = callee_of(wrappers_ir, i) else { continue };
        let old_line = module.lines().find(|l| l.starts_with("declare ") && l.contains(&format!("@{}(", d.name)));
        let Some(old_line) = old_line.map(str::to_string) else { continue };
        if ret == d.ret && params == d.params {
            unused.insert(i);
            if callee == d.name {
                continue;
            }
            // Two SPIR names may stand for one target function: declare it once.
            let replacement =
                if declared_now.insert(callee.clone()) { rename(&old_line, &d.name, &callee) } else { String::new() };
            module = module.replacen(&old_line, &replacement, 1);
            module = rename(&module, &d.name, &callee);
            continue;
        }
        let Some(wparams) = wrapper_params(wrappers_ir, i) else { continue };
        let mut body = String::new();
        let mut args = vec![if d.ret == "void" { "ptr null".to_string() } else { "ptr %r".to_string() }];
        if d.ret != "void" {
            let _ = writeln!(body, "  %r = alloca {}, align 64", d.ret);
        }
        for (k, (p, ty)) in d.opencl.1.iter().zip(&d.params).enumerate() {
            if p.by_pointer {
                let _ = writeln!(body, "  %p{k} = alloca {ty}, align 64\n  store {ty} %a{k}, ptr %p{k}, align 64");
                args.push(format!("ptr %p{k}"));
            } else {
                args.push(format!("{} %a{k}", wparams.get(k + 1).map(String::as_str).unwrap_or(ty)));
            }
        }
        let _ = writeln!(body, "  call void @{}({})", wrapper(i), args.join(", "));
        let _ = if d.ret == "void" {
            writeln!(body, "  ret void")
        } else {
            writeln!(body, "  %v = load {}, ptr %r, align 64\n  ret {} %v", d.ret, d.ret)
        };
        let formals: Vec<String> = d.params.iter().enumerate().map(|(k, t)| format!("{t} %a{k}")).collect();
        let def =
            format!("define internal {} @{}({}) alwaysinline {{\nentry:\n{body}}}", d.ret, d.name, formals.join(", "));
        module = module.replacen(&old_line, &def, 1);
        let _ = writeln!(extra, "declare void @{}({})", wrapper(i), wparams.join(", "));
    }
    module.push('\n');
    module.push_str(&extra);
    (module, without_functions(wrappers_ir, &unused))
}

/// `ir` without the definitions of the listed wrappers.
fn without_functions(ir: &str, drop: &HashSet<usize>) -> String {
    let heads: Vec<String> = drop.iter().map(|&i| format!("@{}(", wrapper(i))).collect();
    let mut out = String::with_capacity(ir.len());
    let mut skipping = false;
    for line in ir.lines() {
        if line.starts_with("define ") && heads.iter().any(|h| line.contains(h.as_str())) {
            skipping = true;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
        if skipping && line.starts_with('}') {
            skipping = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_read() {
        let m = "declare spir_func <2 x float> @_Z3cosDv2_f(<2 x float>) #2\n\
                 declare spir_func void @_Z7barrierj(i32) #4\n\
                 declare spir_func i32 @printf(ptr addrspace(2), ...) #3\n\
                 declare spir_func noundef zeroext i8 @_Z3absc(i8 signext) #3\n";
        let d = declared(m);
        assert_eq!(d.len(), 3);
        assert_eq!((d[0].ret.as_str(), d[0].params.as_slice()), ("<2 x float>", &["<2 x float>".to_string()][..]));
        assert_eq!(d[1].ret, "void");
        assert_eq!(d[2].ret, "i8");
        let src = source(&d, &HashSet::from([1]));
        let lines: Vec<&str> = src.lines().collect();
        assert!(lines[FIRST_LINE - 1].contains("__ferrocl_spirv_0(void __private *r, float2 __private *a0)"));
        assert!(lines[FIRST_LINE - 1].contains("= cos(*a0);"), "{}", lines[FIRST_LINE - 1]);
        assert_eq!(lines[FIRST_LINE], "", "skipped wrappers keep their lines");
        let diag = format!("/tmp/x/spirv.cl:{}:5: error: no matching function", FIRST_LINE + 2);
        assert_eq!(failing(&d, &diag), HashSet::from([2]));
    }

    #[test]
    fn renaming_touches_whole_names_only() {
        assert_eq!(rename("call @f(i32 1) @f.x @fa(", "f", "g"), "call @g(i32 1) @f.x @fa(");
    }
}
