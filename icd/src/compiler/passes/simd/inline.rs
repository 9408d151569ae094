//! The program's own functions inlined into a kernel before its SIMD copy is made: a
//! call runs the callee's code in the kernel's lanes instead of once per work-item.
//! Clang's unoptimised code calls every function (even `inline` ones); the item loop's
//! LLVM inlines them later, too late for this pass.
//!
//! The callee's values and blocks get a prefix of their own, its parameters become the
//! call's arguments, its allocas move to the kernel's entry, and each `return` stores
//! its value and branches to the rest of the calling block.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use super::super::ir_text::{callee_names, def_of, label_of, matching_paren, split_top};
use super::{code, ir_type};

/// Inlined calls at most: OpenCL C has no recursion, so only absurd programs (or a
/// recursive one, which the compiler refuses later anyway) reach it.
const MOST: usize = 256;

/// A function of the program: its `define` line and body lines.
pub(crate) struct Callee<'a> {
    pub(crate) define: &'a str,
    pub(crate) body: &'a [String],
}

/// `body` (the kernel's lines between `define` and `}`) with every call of a function
/// in `program` replaced by its code.
/// `types` names the module's types (`%name = type ...`), which keep their names.
pub(crate) fn inline_calls<'p>(
    define: &str,
    body: &[String],
    program: &dyn Fn(&str) -> Option<Callee<'p>>,
    types: &HashSet<&str>,
) -> Result<Vec<String>, String> {
    let mut lines = body.to_vec();
    for made in 1..=MOST {
        let call = |l: &String| {
            let c = code(l).trim_start();
            let r = def_of(c).map_or(c, |(_, r)| r).trim_start();
            (r.starts_with("call ") || r.starts_with("tail call "))
                && callee_names(c).first().is_some_and(|(n, _)| program(n).is_some())
        };
        let Some(at) = lines.iter().position(call) else { return Ok(forward_private_addresses(lines)) };
        let (name, _) = callee_names(code(&lines[at])).into_iter().next().ok_or("unreadable call")?;
        let callee = program(&name).ok_or("unreadable call")?;
        lines = inline_one(define, &lines, at, &callee, &format!("inl{made}"), types)?;
    }
    Err("too many calls to inline".into())
}

/// The lines with the call at line `at` replaced by `callee`'s code, its names
/// prefixed by `prefix`.
fn inline_one(
    define: &str,
    lines: &[String],
    at: usize,
    callee: &Callee<'_>,
    prefix: &str,
    types: &HashSet<&str>,
) -> Result<Vec<String>, String> {
    let call = code(&lines[at]).trim_start().to_string();
    let (result, rhs) = match def_of(&call) {
        Some((d, r)) => (Some(d.to_string()), r.to_string()),
        None => (None, call.clone()),
    };
    let (_, paren) = callee_names(&rhs).into_iter().next().ok_or("unreadable call")?;
    let close = matching_paren(&rhs, paren).ok_or("unreadable call")?;
    let args: Vec<String> = split_top(&rhs[paren + 1..close])
        .iter()
        .map(|a| a.trim().rsplit(' ').next().unwrap_or("").to_string())
        .collect();
    let ret = {
        let mut head = rhs.trim_start().trim_start_matches("tail ").trim_start_matches("call ");
        while let Some(rest) = ["spir_func ", "noundef ", "fastcc ", "zeroext ", "signext ", "nonnull "]
            .iter()
            .find_map(|k| head.strip_prefix(k))
        {
            head = rest;
        }
        match head.starts_with("void ") {
            true => "void".to_string(),
            false => ir_type::parse(head).ok_or("unreadable call")?.0.to_string(),
        }
    };
    // The callee's parameters, by name, as the call's arguments.
    let open = callee.define.find('(').ok_or("unreadable function")?;
    let pclose = matching_paren(callee.define, open).ok_or("unreadable function")?;
    let params: Vec<String> = split_top(&callee.define[open + 1..pclose])
        .iter()
        .map(|p| p.trim().rsplit(' ').next().unwrap_or("").to_string())
        .collect();
    // Values a token names (not constant expressions, whose last word is not them).
    let simple = |v: &str| !v.is_empty() && v.chars().all(|c| c.is_alphanumeric() || "%@._$-+".contains(c));
    if params.len() != args.len() || params.iter().any(|p| !p.starts_with('%')) || !args.iter().all(|a| simple(a)) {
        return Err("a call whose arguments this pass cannot read".into());
    }
    let substitute: HashMap<&str, &str> = params.iter().map(|p| &p[1..]).zip(args.iter().map(String::as_str)).collect();
    // The callee's entry block, unnamed there, is named here.
    let callee_entry = super::linear::entry_number(callee.define);
    let rename = |text: &str| -> String {
        map_locals(text, types, |name| match substitute.get(name) {
            Some(arg) => arg.to_string(),
            None if name == callee_entry => format!("%{prefix}.entry"),
            None => format!("%{prefix}.{name}"),
        })
    };
    // The kernel's entry, where allocas go (after its label, if named), and the block
    // the call is in.
    let entry_at = usize::from(lines.first().is_some_and(|l| label_of(l).is_some()));
    let block_label = lines[..at]
        .iter()
        .rev()
        .find_map(|l| label_of(l))
        .map_or_else(|| super::linear::entry_number(define), str::to_string);
    let mut allocas = Vec::new();
    let mut inlined = vec![format!("  br label %{prefix}.entry"), format!("{prefix}.entry:")];
    let cont = format!("{prefix}.cont");
    if ret != "void" {
        allocas.push(format!("  %{prefix}.ret = alloca {ret}, align 16"));
    }
    for line in callee.body {
        let c = code(line);
        if let Some(l) = label_of(line) {
            inlined.push(format!("{prefix}.{l}:"));
            continue;
        }
        let t = c.trim_start();
        if t.is_empty() || t.starts_with(';') || t.contains("@llvm.dbg.") {
            continue;
        }
        if def_of(c).is_some_and(|(_, r)| r.trim_start().starts_with("alloca ")) {
            allocas.push(rename(c));
            continue;
        }
        match t.strip_prefix("ret ") {
            Some("void") => inlined.push(format!("  br label %{cont}")),
            Some(value) => {
                inlined.push(format!("  store {}, ptr %{prefix}.ret, align 16", rename(value)));
                inlined.push(format!("  br label %{cont}"));
            }
            None if t == "ret" => inlined.push(format!("  br label %{cont}")),
            None => inlined.push(rename(c)),
        }
    }
    inlined.push(format!("{cont}:"));
    if let Some(d) = &result {
        inlined.push(format!("  {d} = load {ret}, ptr %{prefix}.ret, align 16"));
    }
    // Phis after the call's block name its last part now.
    let block_end = lines[at..].iter().position(|l| {
        let t = code(l).trim_start();
        ["br ", "switch ", "ret", "unreachable"].iter().any(|k| t.starts_with(k))
    });
    let block_end = at + block_end.ok_or("a block without an end")?;
    let succs: Vec<String> =
        super::super::ir_text::labels_in(code(&lines[block_end])).into_iter().map(str::to_string).collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + inlined.len() + allocas.len());
    // Successors before the call too: a loop's header, whose phi names the latch the
    // call was in (a phi naming the old block would never take that way in).
    let mut current = String::new();
    let mut inlined = Some(inlined);
    for (i, line) in lines.iter().enumerate() {
        if i == entry_at {
            out.extend(allocas.iter().cloned());
        }
        if i == at {
            out.extend(inlined.take().unwrap_or_default());
            continue;
        }
        if let Some(l) = label_of(line) {
            current = l.to_string();
        }
        let t = code(line).trim_start();
        if succs.contains(&current) && def_of(t).is_some_and(|(_, r)| r.trim_start().starts_with("phi ")) {
            out.push(line.replace(&format!(", %{block_label} ]"), &format!(", %{cont} ]")));
        } else {
            out.push(line.clone());
        }
    }
    Ok(out)
}

/// `text` with each `%name` replaced by `f(name)` (types such as `%struct.S`, and those
/// `types` names, kept).
fn map_locals(text: &str, types: &HashSet<&str>, f: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let n = after.find(|c: char| !(c.is_alphanumeric() || "._$-".contains(c))).unwrap_or(after.len());
        let name = &after[..n];
        let named_type = types.contains(name) || ["struct.", "union.", "opencl."].iter().any(|p| name.starts_with(p));
        if n == 0 || named_type {
            out.push('%');
            out.push_str(name);
        } else {
            let _ = write!(out, "{}", f(name));
        }
        rest = &after[n..];
    }
    out + rest
}

/// The variables holding the address of one of the kernel's own variables, stored once
/// and only read (an inlined function's pointer parameter, kept in a variable as clang's
/// unoptimised code keeps every parameter): each read becomes that address, so the
/// pass sees the variable itself.
fn forward_private_addresses(lines: Vec<String>) -> Vec<String> {
    let allocas: HashMap<&str, bool> = lines
        .iter()
        .filter_map(|l| def_of(code(l)).filter(|(_, r)| r.trim_start().starts_with("alloca ")))
        .map(|(d, r)| (d, r.trim_start().starts_with("alloca ptr,")))
        .collect();
    // Each pointer variable's stores, and whether anything but loads and stores of
    // pointers (and lifetimes) mentions it.
    let mut stored: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut other: HashSet<&str> = HashSet::new();
    for l in &lines {
        let c = code(l).trim_start();
        let (store, load) = (pointer_store(c), pointer_load(c));
        if let Some((value, ptr)) = store {
            stored.entry(ptr).or_default().push(value);
        }
        for v in super::super::ir_text::locals_in(c) {
            let expected = store.is_some_and(|(_, ptr)| ptr == v)
                || load.is_some_and(|(d, ptr)| ptr == v || d == v)
                || def_of(c).is_some_and(|(d, _)| d == v)
                || c.contains("@llvm.lifetime.");
            if !expected {
                other.insert(v);
            }
        }
    }
    let forwarded: HashMap<&str, &str> = stored
        .iter()
        .filter(|(p, _)| allocas.get(*p) == Some(&true) && !other.contains(*p))
        .filter_map(|(p, values)| match values[..] {
            [x] if allocas.contains_key(x) => Some((*p, x)),
            _ => None,
        })
        .collect();
    if forwarded.is_empty() {
        return lines;
    }
    let mut loaded: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(lines.len());
    for l in &lines {
        let c = code(l).trim_start();
        if pointer_store(c).is_some_and(|(_, ptr)| forwarded.contains_key(ptr)) {
            continue;
        }
        if let Some((d, ptr)) = pointer_load(c).filter(|(_, ptr)| forwarded.contains_key(ptr)) {
            loaded.insert(d.to_string(), forwarded[ptr].to_string());
            continue;
        }
        let mut line = l.clone();
        for (v, x) in &loaded {
            if line.contains(v.as_str()) {
                line = super::super::ir_text::replace_value(&line, v, x);
            }
        }
        out.push(line);
    }
    out
}

/// `store ptr value, ptr ptr` -> (value, ptr).
fn pointer_store(c: &str) -> Option<(&str, &str)> {
    let parts = split_top(c.strip_prefix("store ptr ")?);
    Some((parts.first()?.trim(), parts.get(1)?.trim().strip_prefix("ptr ")?.trim()))
}

/// `%d = load ptr, ptr ptr` -> (%d, ptr).
fn pointer_load(c: &str) -> Option<(&str, &str)> {
    let (d, rhs) = def_of(c)?;
    let parts = split_top(rhs.trim_start().strip_prefix("load ptr, ")?);
    Some((d, parts.first()?.trim().strip_prefix("ptr ")?.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_in_a_loops_latch_renames_the_headers_phi() {
        // SYCL's contiguous kernels: a stride loop whose body calls the functor, the
        // header's phi naming the latch, which comes after it.
        let define = "define internal spir_func void @k(ptr %0, i64 %1, ptr %ctx) {";
        let body: Vec<String> = "  br label %3
3:
  %4 = phi i64 [ 0, %2 ], [ %7, %5 ]
  %c = icmp ult i64 %4, %1
  br i1 %c, label %5, label %8
5:
  %6 = call spir_func i64 @f(i64 %4)
  %7 = add i64 %4, %6
  br label %3
8:
  ret void"
            .lines()
            .map(str::to_string)
            .collect();
        let f_body: Vec<String> = ["  %2 = add i64 %0, 1", "  ret i64 %2"].map(str::to_string).to_vec();
        let f = Callee { define: "define internal spir_func i64 @f(i64 %0) {", body: &f_body };
        let out = inline_calls(define, &body, &|n| (n == "f").then_some(Callee { ..f }), &HashSet::new()).unwrap();
        let text = out.join("\n");
        assert!(text.contains("%4 = phi i64 [ 0, %2 ], [ %7, %inl1.cont ]"), "{text}");
        assert!(text.contains("inl1.cont:\n  %6 = load i64, ptr %inl1.ret"), "{text}");
    }
}
