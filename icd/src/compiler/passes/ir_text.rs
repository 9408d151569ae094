//! Reading clang's textual LLVM IR, line by line: the lexical pieces the rewrite
//! passes (`passes`, `regions`, `uniform`, `launcher`) share. Nothing here changes IR.

use super::ir_type::{self, IrType};

/// Every `@name(` in a line, with the byte index of its `(`.
pub(crate) fn callee_names(line: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find('@') {
        let start = from + at + 1;
        let (name, rest) = ir_type::ident(&line[start..]);
        let paren = line.len() - rest.len();
        if rest.starts_with('(') && !name.is_empty() {
            out.push((name.to_string(), paren));
        }
        from = start.max(paren);
    }
    out
}

/// `line` with every mention of the value `name` (`%3`, `%x`) replaced: occurrences not
/// followed by another character of a name.
pub(crate) fn replace_value(line: &str, name: &str, with: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(name) {
        let after = &rest[at + name.len()..];
        let whole = !after.starts_with(|c: char| c.is_alphanumeric() || "._$-".contains(c));
        out.push_str(&rest[..at]);
        out.push_str(if whole { with } else { name });
        rest = after;
    }
    out + rest
}

/// Every `@name` a line refers to (or defines), called or not.
pub(crate) fn global_names(line: &str) -> impl Iterator<Item = &str> {
    line.match_indices('@').map(|(at, _)| ir_type::ident(&line[at + 1..]).0).filter(|n| !n.is_empty())
}

/// The module without the functions (and declarations) that nothing kept refers to:
/// kept are the functions `root` names, and whatever a kept function or any line other
/// than a function's (a global's initialiser, an alias, metadata) names, transitively.
/// A unit of one kernel (`Unit`) is then compiled without the other kernels' code, and
/// the library parts it links are those its own calls need.
pub(crate) fn reachable_only(module: &str, root: &dyn Fn(&str) -> bool) -> String {
    use std::collections::{HashMap, HashSet};
    let lines: Vec<&str> = module.lines().collect();
    // Functions as (name, first line, last line); declarations are one line.
    let mut functions: HashMap<String, (usize, usize)> = HashMap::new();
    let mut in_function = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("define ") || l.starts_with("declare ") {
            let name = callee_names(l).into_iter().next().map(|(n, _)| n);
            let start = i;
            if l.starts_with("define ") && l.trim_end().ends_with('{') {
                while i < lines.len() && lines[i] != "}" {
                    i += 1;
                }
            }
            let end = i.min(lines.len() - 1);
            in_function[start..=end].iter_mut().for_each(|f| *f = true);
            if let Some(n) = name {
                functions.insert(n, (start, end));
            }
        }
        i += 1;
    }
    let mut kept: HashSet<&str> = HashSet::new();
    let mut work: Vec<&str> = functions.keys().map(String::as_str).filter(|n| root(n)).collect();
    work.extend(lines.iter().zip(&in_function).filter(|(_, f)| !**f).flat_map(|(l, _)| global_names(l)));
    while let Some(n) = work.pop() {
        let Some((name, &(start, end))) = functions.get_key_value(n) else { continue };
        if kept.insert(name.as_str()) {
            work.extend(lines[start..=end].iter().flat_map(|l| global_names(l)));
        }
    }
    let dropped: Vec<(usize, usize)> =
        functions.iter().filter(|(n, _)| !kept.contains(n.as_str())).map(|(_, &range)| range).collect();
    let mut keep = vec![true; lines.len()];
    for (start, end) in dropped {
        keep[start..=end].iter_mut().for_each(|k| *k = false);
    }
    let mut out = String::with_capacity(module.len());
    for (l, _) in lines.iter().zip(&keep).filter(|(_, k)| **k) {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The module with each quoted `%` name (`%"class.sycl::_V1::range"`, `%"agg.tmp"`: the
/// SPIR-V translator keeps SYCL's names, which need quotes) renamed `%__fq<n>`: the
/// passes read names as plain identifiers (the regions transform refused kernels with
/// quoted ones, which then ran as fibers). One name per distinct quoted name across the
/// module serves both the module's types and each function's values; a type's name is
/// `%struct.__fq<n>`, so the passes that rename values (inlining) know it for a type.
/// String literals (`c"50%"`, metadata's `!"..."`) and quoted `@` names are left as
/// they are.
pub(crate) fn unquote_local_names(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("%\"") {
        return text.into();
    }
    let types: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|l| {
            let name = l.strip_prefix('%').filter(|n| n.starts_with('"'))?;
            let end = name[1..].find('"')? + 1;
            name[end + 1..].starts_with(" = type ").then_some(&name[..=end])
        })
        .collect();
    let mut names: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let (mut at, mut copied) = (0, 0);
    while let Some(q) = text[at..].find('"').map(|q| at + q) {
        // A quoted name or literal runs to the next quote: raw quotes are escaped in both.
        let Some(end) = text[q + 1..].find('"').map(|e| q + 1 + e) else { break };
        if q > 0 && bytes[q - 1] == b'%' {
            let next = names.len();
            let n = *names.entry(&text[q..=end]).or_insert(next);
            out.push_str(&text[copied..q - 1]);
            let kind = if types.contains(&text[q..=end]) { "struct." } else { "" };
            out.push_str(&format!("%{kind}__fq{n}"));
            copied = end + 1;
        }
        at = end + 1;
    }
    out.push_str(&text[copied..]);
    out.into()
}

/// `lines` with each named struct type written as its body (`%struct.S` -> `{ i32,
/// [4 x float] }`), for a pass that reads a type from its text alone. Types and values
/// have names of their own, so only names the table holds are replaced; an opaque type
/// stays named.
pub(crate) fn literal_types(lines: &[String], types: &ir_type::TypeTable) -> Vec<String> {
    let literal: std::collections::HashMap<&str, String> =
        types.iter().filter_map(|(n, t)| Some((n.as_str(), t.resolved(types)?.to_string()))).collect();
    lines
        .iter()
        .map(|line| {
            if !line.contains('%') || literal.is_empty() {
                return line.clone();
            }
            let mut out = String::with_capacity(line.len());
            let mut rest = line.as_str();
            while let Some(at) = rest.find('%') {
                out.push_str(&rest[..at]);
                let (name, after) = ir_type::ident(&rest[at + 1..]);
                match literal.get(name).filter(|_| !rest[at + 1..].starts_with('"')) {
                    Some(body) => out.push_str(body),
                    None => out.push_str(&rest[at..at + 1 + name.len()]),
                }
                rest = after;
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// Index of the `)` matching the `(` at `open`.
pub(crate) fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits a parameter or argument list at top-level commas.
pub(crate) fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '{' | '[' | '<' => depth += 1,
            ')' | '}' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

/// A parameter of a kernel's `define` line.
#[derive(Debug)]
pub(crate) struct Param {
    pub(crate) ty: IrType,
    pub(crate) byval: Option<IrType>,
    pub(crate) align: Option<u64>,
    /// Attributes that must be repeated at the call site (ABI-relevant).
    pub(crate) call_attrs: String,
}

pub(crate) fn parse_param(p: &str) -> Option<Param> {
    let (ty, rest) = ir_type::parse(p)?;
    let mut byval = None;
    let mut align = None;
    let mut call_attrs = String::new();
    let mut rest = rest.trim_start();
    while !rest.is_empty() && !rest.starts_with('%') {
        if let Some(inner) = rest.strip_prefix("byval(") {
            let (t, after) = ir_type::parse(inner)?;
            let after = after.trim_start().strip_prefix(')')?;
            call_attrs.push_str(&format!("byval({}) ", &inner[..inner.len() - after.len() - 1]));
            byval = Some(t);
            rest = after.trim_start();
            continue;
        }
        let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
        let mut tok = &rest[..end];
        // Attributes with arguments, e.g. dereferenceable(16) or initializes((0, 4)).
        if let Some(open) = tok.find('(') {
            let close = matching_paren(rest, open)?;
            tok = &rest[..close + 1];
        }
        match tok {
            "align" => {
                let after = rest[end..].trim_start();
                let n_end = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
                align = after[..n_end].parse().ok();
                rest = after[n_end..].trim_start();
                continue;
            }
            "signext" | "zeroext" | "inreg" => call_attrs.push_str(&format!("{tok} ")),
            _ => {}
        }
        rest = rest[tok.len()..].trim_start();
    }
    Some(Param { ty, byval, align, call_attrs })
}

/// The textual type of parameter `i` (as written, e.g. `ptr addrspace(1)`).
pub(crate) fn type_text(params: &str, i: usize) -> Result<String, String> {
    let p = split_top(params).into_iter().nth(i).ok_or("parameter count")?;
    let (_, rest) = ir_type::parse(p).ok_or("parameter type")?;
    Ok(p[..p.len() - rest.len()].trim().to_string())
}

/// The label a line defines (`name:` at the start, optionally followed by a comment).
pub(crate) fn label_of(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', ';', '}']) {
        return None;
    }
    let colon = line.find(':')?;
    let name = &line[..colon];
    (!name.is_empty() && !name.contains(' ')).then_some(name)
}

/// `%name = rhs` -> (`%name`, `rhs`).
pub(crate) fn def_of(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    if !t.starts_with('%') {
        return None;
    }
    let (name, rest) = t.split_once(" = ")?;
    (!name.contains(' ')).then_some((name, rest))
}

/// Every `%name` a line mentions (including types such as `%struct.S`).
pub(crate) fn locals_in(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let code = match line.find(';') {
        Some(at) if !line.contains('"') => &line[..at],
        _ => line,
    };
    let mut from = 0;
    while let Some(at) = code[from..].find('%') {
        let start = from + at;
        let (name, _) = ir_type::ident(&code[start + 1..]);
        if !name.is_empty() {
            out.push(&code[start..start + 1 + name.len()]);
        }
        from = start + 1 + name.len();
    }
    out
}

/// Labels a terminator branches to (`label %x`).
pub(crate) fn labels_in(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find("label %") {
        let start = from + at + "label %".len();
        let (name, _) = ir_type::ident(&line[start..]);
        out.push(name);
        from = start + name.len();
    }
    out
}

pub(crate) fn callees_in(line: &str) -> Vec<String> {
    if !line.contains("call ") {
        return Vec::new();
    }
    callee_names(line).into_iter().map(|(n, _)| n).collect()
}

/// An alloca: name, type as written, size, alignment.
pub(crate) type Alloca = (String, String, u64, u64);

pub(crate) struct Piece {
    pub(crate) label: String,
    pub(crate) lines: Vec<String>,
    /// The barrier number this piece ends at (it then ends with `ret i32 n`).
    pub(crate) barrier: Option<u32>,
    /// That barrier is a sub-group's (`sub_group_barrier`, or one of the pair a
    /// sub-group function becomes): only the work-items of one sub-group need reach it.
    pub(crate) sub_group: bool,
}

/// Instructions without side effects or traps, whose result depends only on operands.
pub(crate) const PURE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "shl",
    "lshr",
    "ashr",
    "and",
    "or",
    "xor",
    "trunc",
    "zext",
    "sext",
    "fptrunc",
    "fpext",
    "sitofp",
    "uitofp",
    "fptosi",
    "fptoui",
    "bitcast",
    "ptrtoint",
    "inttoptr",
    "addrspacecast",
    "getelementptr",
    "icmp",
    "fcmp",
    "select",
    "fadd",
    "fsub",
    "fmul",
    "fdiv",
    "fneg",
    "extractelement",
    "insertelement",
    "shufflevector",
    "freeze",
];

/// The source name of an Itanium-mangled free function (`_Z4nameargs` -> `name`).
pub(crate) use ferrocl_kernel_abi::mangle::opencl_name;

/// An instruction's opcode (after `tail`/`notail`) and the rest of it.
pub(crate) fn opcode(rhs: &str) -> (&str, &str) {
    let rhs = rhs.trim_start();
    let rhs = rhs.strip_prefix("tail ").or_else(|| rhs.strip_prefix("notail ")).unwrap_or(rhs);
    rhs.split_once(' ').unwrap_or((rhs, ""))
}

/// The type of the value an instruction (`rhs`, after `%d = `) defines, for the
/// instructions clang's unoptimised code has and `insertvalue`; `None` for others.
pub(crate) fn def_type(rhs: &str) -> Option<IrType> {
    let (op, rest) = opcode(rhs);
    let rest = skip_flags(rest);
    let first = || ir_type::parse(rest).map(|(t, _)| t);
    match op {
        "add" | "sub" | "mul" | "udiv" | "sdiv" | "urem" | "srem" | "shl" | "lshr" | "ashr" | "and" | "or" | "xor"
        | "fadd" | "fsub" | "fmul" | "fdiv" | "frem" | "fneg" | "freeze" | "load" | "phi" => first(),
        "icmp" | "fcmp" => {
            let (_, rest) = rest.split_once(' ')?;
            match ir_type::parse(rest)?.0 {
                IrType::Vector(n, _) => Some(IrType::Vector(n, Box::new(IrType::Int(1)))),
                _ => Some(IrType::Int(1)),
            }
        }
        "alloca" | "getelementptr" => Some(IrType::Ptr(0)).filter(|_| !rest.contains("addrspace")).or_else(|| {
            // The address space of the pointer operand (a getelementptr's second part).
            let base =
                split_top(rest.strip_prefix("inbounds ").unwrap_or(rest)).get(1).map(|p| p.trim().to_string())?;
            ir_type::parse(&base).map(|(t, _)| t)
        }),
        "select" => split_top(rest).get(1).and_then(|p| ir_type::parse(p.trim())).map(|(t, _)| t),
        "extractelement" => match first()? {
            IrType::Vector(_, e) => Some(*e),
            _ => None,
        },
        "insertelement" | "insertvalue" => first(),
        "shufflevector" => {
            let parts = split_top(rest);
            let (IrType::Vector(_, e), IrType::Vector(m, _)) =
                (ir_type::parse(parts.first()?.trim())?.0, ir_type::parse(parts.get(2)?.trim())?.0)
            else {
                return None;
            };
            Some(IrType::Vector(m, e))
        }
        "trunc" | "zext" | "sext" | "fptrunc" | "fpext" | "sitofp" | "uitofp" | "fptosi" | "fptoui" | "bitcast"
        | "ptrtoint" | "inttoptr" | "addrspacecast" => ir_type::parse(rest.rsplit_once(" to ")?.1).map(|(t, _)| t),
        "call" => {
            let mut head = rest;
            while let Some(r) = ["spir_func ", "noundef ", "fastcc ", "zeroext ", "signext ", "nonnull "]
                .iter()
                .find_map(|k| head.strip_prefix(k))
            {
                head = r;
            }
            ir_type::parse(head).map(|(t, _)| t)
        }
        _ => None,
    }
}

/// Words before an instruction's type: wrapping and exactness flags, fast-math flags,
/// the calling convention and return attributes of a call.
pub(crate) fn skip_flags(mut s: &str) -> &str {
    const FLAGS: &[&str] = &[
        "nsw",
        "nuw",
        "exact",
        "disjoint",
        "nneg",
        "samesign",
        "fast",
        "nnan",
        "ninf",
        "nsz",
        "arcp",
        "contract",
        "afn",
        "reassoc",
        "spir_func",
        "noundef",
        "zeroext",
        "signext",
        "inreg",
    ];
    loop {
        s = s.trim_start();
        match FLAGS.iter().find(|f| s.strip_prefix(**f).is_some_and(|r| r.starts_with(' '))) {
            Some(f) => s = &s[f.len()..],
            None => return s,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn quoted_names_are_renamed_and_literals_kept() {
        let ir = "%\"class.sycl::range\" = type { [1 x i64] }\n\
                  @s = constant [4 x i8] c\"50%\\00\"\n\
                  define void @k(ptr %\"agg.tmp\") {\n  %\"x y\" = load %\"class.sycl::range\", ptr %\"agg.tmp\", !dbg !1\n  \
                  call void @\"quoted global\"(ptr %\"agg.tmp\")\n  ret void\n}\n!1 = !{!\"a %\"}\n";
        let out = unquote_local_names(ir);
        assert!(out.starts_with("%struct.__fq0 = type { [1 x i64] }\n"), "{out}");
        assert!(out.contains("c\"50%\\00\"\n"), "a literal ending in % stays: {out}");
        assert!(out.contains("define void @k(ptr %__fq1) {\n  %__fq2 = load %struct.__fq0, ptr %__fq1,"), "{out}");
        assert!(out.contains("call void @\"quoted global\"(ptr %__fq1)"), "{out}");
        assert!(out.contains("!{!\"a %\"}"), "{out}");
        assert_eq!(unquote_local_names("define void @k() {\n  ret void\n}\n"), "define void @k() {\n  ret void\n}\n");
    }

    use super::{reachable_only, replace_value, unquote_local_names};

    /// Uses of a value are replaced, names that only start like it are not.
    #[test]
    fn replace_value_matches_whole_names() {
        assert_eq!(
            replace_value("store ptr %1, ptr %10, align 8 ; %1.x", "%1", "%k"),
            "store ptr %k, ptr %10, align 8 ; %1.x"
        );
    }

    /// Functions only a dropped entry point reaches go, with their declarations; what
    /// a kept function or a global's initialiser names stays, however it is named.
    #[test]
    fn reachable_only_keeps_what_the_roots_and_globals_name() {
        let module = "@table = internal constant [1 x ptr] [ptr @\"by table\"]
define void @__ferrocl_launch_a() {
  call void @shared()
  ret void
}
define void @__ferrocl_launch_b() {
  call void @only_b()
  call void @_Z3sinf(float 1.0)
  ret void
}
define internal void @shared() {
  ret void
}
define internal void @only_b() {
  ret void
}
define internal void @\"by table\"() {
  ret void
}
declare void @_Z3sinf(float)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
";
        let kept = reachable_only(module, &|n| n == "__ferrocl_launch_a");
        for gone in ["@__ferrocl_launch_b(", "@only_b(", "@_Z3sinf("] {
            assert!(!kept.contains(gone), "{gone} kept:\n{kept}");
        }
        for stays in ["@__ferrocl_launch_a(", "@shared(", "@\"by table\"(", "@table = "] {
            assert!(kept.contains(stays), "{stays} dropped:\n{kept}");
        }
    }
}
