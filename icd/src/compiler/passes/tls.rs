//! Addresses of a kernel's own `__local` variables, taken once per function.
//!
//! The IR rewrite makes each `__local` variable thread-local (a worker runs one group
//! at a time, so a thread's copy is its group's; `passes::thread_local_locals`). An
//! instruction that names such a global directly costs a call of `__tls_get_addr`
//! where it runs: LLVM cannot move the address out of a loop, so the work-item loop
//! called it once per work-item (the bench's tree reduction: 256 calls per group in the
//! region that fills the tree). Taken at the top of each function with
//! `llvm.threadlocal.address`, which reads no memory, the address is a value that
//! inlining brings into the work-item loop and LICM hoists out of it.
//!
//! Only operands are replaced; a constant expression over the global (a `getelementptr`
//! with constant indices, an `addrspacecast`) cannot take an instruction's value and
//! keeps its own access.

use std::fmt::Write;

const INTRINSIC: &str = "llvm.threadlocal.address.p3";

/// `module` with every function's direct uses of the thread-local `__local` variables
/// `locals` replaced by an address taken in its entry block.
pub(crate) fn hoist(module: &str, locals: &[(String, u64)]) -> String {
    let names: Vec<&str> =
        locals.iter().map(|(n, _)| n.as_str()).filter(|n| !n.contains('"') && !n.is_empty()).collect();
    if names.is_empty() {
        return module.to_string();
    }
    let values: Vec<String> = (0..names.len()).map(|i| format!("%__fcl_tls.{i}")).collect();
    let mut out = String::with_capacity(module.len() + 256);
    let mut lines = module.lines();
    let mut any = false;
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if !(line.starts_with("define ") && line.trim_end().ends_with('{')) {
            continue;
        }
        let mut body: Vec<String> = Vec::new();
        for l in lines.by_ref() {
            body.push(l.to_string());
            if l == "}" {
                break;
            }
        }
        let mut used = Vec::new();
        for l in body.iter_mut() {
            for (i, name) in names.iter().enumerate() {
                if replace_operands(l, name, &values[i]) && !used.contains(&i) {
                    used.push(i);
                }
            }
        }
        if !used.is_empty() {
            any = true;
            // The entry block: after its label, if it has one.
            let at = usize::from(body.first().is_some_and(|l| is_label(l)));
            let taken = used.iter().map(|&i| {
                format!("  {} = call ptr addrspace(3) @{INTRINSIC}(ptr addrspace(3) @{})", values[i], names[i])
            });
            body.splice(at..at, taken);
        }
        for l in &body {
            out.push_str(l);
            out.push('\n');
        }
    }
    if any && !module.contains(&format!("declare ptr addrspace(3) @{INTRINSIC}(")) {
        let _ = writeln!(out, "declare ptr addrspace(3) @{INTRINSIC}(ptr addrspace(3))");
    }
    out
}

fn is_label(line: &str) -> bool {
    let t = line.split(';').next().unwrap_or("").trim_end();
    t.ends_with(':') && !t.starts_with(' ')
}

/// Replaces each occurrence of `@name` in `line` that is an instruction's operand (not
/// inside a constant expression) by `value`; whether any was.
fn replace_operands(line: &mut String, name: &str, value: &str) -> bool {
    let token = format!("@{name}");
    let mut replaced = false;
    let mut from = 0;
    while let Some(found) = line[from..].find(&token) {
        let at = from + found;
        let after = at + token.len();
        let whole = line[after..].chars().next().map_or(true, |c| !(c.is_alphanumeric() || "._$-".contains(c)));
        if whole && !in_constant_expression(&line[..at]) {
            line.replace_range(at..after, value);
            replaced = true;
            from = at + value.len();
        } else {
            from = after;
        }
    }
    replaced
}

/// Whether text ending just before an operand leaves it inside a constant expression:
/// its innermost open parenthesis follows a keyword (`getelementptr inbounds (`,
/// `addrspacecast (`), not a callee's name (`@f(`) or a type (`addrspace(`).
fn in_constant_expression(before: &str) -> bool {
    let mut depth = 0usize;
    for (i, c) in before.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' if depth > 0 => depth -= 1,
            '(' => {
                let head = &before[..i];
                let word_start =
                    head.rfind(|c: char| !(c.is_alphanumeric() || "._$-\"".contains(c))).map_or(0, |p| p + 1);
                let is_callee = head[..word_start].ends_with(['@', '%']);
                return !is_callee;
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locals() -> Vec<(String, u64)> {
        vec![("k.sums".into(), 1024), ("k.tile".into(), 64)]
    }

    #[test]
    fn operands_take_the_address_from_the_entry_block() {
        let m = "define void @k(ptr %ctx) {\nentry:\n  %a = load float, ptr addrspace(3) @k.sums, align 4\n  \
                 %p = getelementptr inbounds [256 x float], ptr addrspace(3) @k.sums, i64 0, i64 %i\n  \
                 call void @f(ptr addrspace(3) @k.sums)\n  ret void\n}\n";
        let out = hoist(m, &locals());
        assert!(out.contains(
            "entry:\n  %__fcl_tls.0 = call ptr addrspace(3) @llvm.threadlocal.address.p3(ptr addrspace(3) @k.sums)\n"
        ));
        assert!(out.contains("load float, ptr addrspace(3) %__fcl_tls.0, align 4"));
        assert!(out.contains("getelementptr inbounds [256 x float], ptr addrspace(3) %__fcl_tls.0, i64 0"));
        assert!(out.contains("call void @f(ptr addrspace(3) %__fcl_tls.0)"));
        assert!(out.ends_with("declare ptr addrspace(3) @llvm.threadlocal.address.p3(ptr addrspace(3))\n"));
        assert!(!out.contains("@k.tile"), "an unused local is not taken");
    }

    #[test]
    fn constant_expressions_and_longer_names_stay() {
        let m = "define void @k() {\n  store float 1.0, ptr addrspace(3) getelementptr inbounds (float, ptr \
                 addrspace(3) @k.sums, i64 1), align 4\n  call void @g(ptr addrspace(4) addrspacecast (ptr \
                 addrspace(3) @k.tile to ptr addrspace(4)))\n  store i32 0, ptr addrspace(3) @k.sums2\n  ret void\n}\n";
        assert_eq!(hoist(m, &locals()), m, "nothing to replace: no address taken, no declaration");
    }

    #[test]
    fn an_unlabelled_entry_block_gets_the_address_first() {
        let m = "define void @k(i1 %c) {\n  %x = select i1 %c, ptr addrspace(3) @k.tile, ptr addrspace(3) null\n  \
                 ret void\n}\n";
        let out = hoist(m, &locals());
        let body: Vec<&str> = out.lines().collect();
        assert!(body[1].starts_with("  %__fcl_tls.1 = call"), "{out}");
        assert_eq!(body[2], "  %x = select i1 %c, ptr addrspace(3) %__fcl_tls.1, ptr addrspace(3) null");
    }
}
