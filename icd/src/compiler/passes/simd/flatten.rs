//! Short-circuit conditions (`a && b`, `a || b`, `c ? x : y` of plain values) made
//! straight-line before the SIMD copy: clang writes each as a block computing the
//! second operand and a phi where the ways meet, which the masked walk (`linear`) would
//! run as three blocks with masks; computing the operand always and selecting is cheaper,
//! where the block can do no harm run by a lane that would not have: no stores, no calls
//! but pure ones, loads only of the kernel's own variables.

use super::super::ir_text::{def_of, label_of, labels_in};
use super::{code, opcode, phi_incoming, pure_builtin, split_top};

/// `lines` (a kernel body) with each such block merged into the block branching to it.
pub(super) fn flatten(mut lines: Vec<String>) -> Vec<String> {
    // One at a time: each changes the blocks.
    while let Some(next) = flatten_one(&lines) {
        lines = next;
    }
    lines
}

/// A block's label (`None` for the entry) and its lines `start..=end`.
struct Span {
    label: Option<String>,
    start: usize,
    end: usize,
}

fn spans(lines: &[String]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut label = None;
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if let Some(l) = label_of(line) {
            label = Some(l.to_string());
            start = i;
            continue;
        }
        let t = code(line).trim_start();
        if ["br ", "switch ", "ret", "unreachable"].iter().any(|k| t.starts_with(k)) {
            out.push(Span { label: label.take(), start, end: i });
            start = i + 1;
        }
    }
    out
}

fn flatten_one(lines: &[String]) -> Option<Vec<String>> {
    let spans = spans(lines);
    if let Some(merged) = merge_one(lines, &spans) {
        return Some(merged);
    }
    let allocas: Vec<&str> = lines
        .iter()
        .filter_map(|l| def_of(code(l)).filter(|(_, r)| r.trim_start().starts_with("alloca ")).map(|(d, _)| d))
        .collect();
    let harmless = |l: &str| -> bool {
        let c = code(l).trim_start();
        if c.is_empty() || c.starts_with("call void @llvm.dbg.") {
            return true;
        }
        let Some((_, rhs)) = def_of(c) else { return false };
        match opcode(rhs) {
            ("load", rest) => {
                let ptr = split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                !rest.starts_with("volatile") && allocas.contains(&ptr)
            }
            ("call", _) => super::callee_names(c).first().is_some_and(|(n, _)| {
                n.starts_with("llvm.fmuladd.") || n.starts_with("llvm.fabs.") || pure_builtin(n).is_some()
            }),
            ("store" | "alloca" | "atomicrmw" | "cmpxchg" | "phi" | "udiv" | "sdiv" | "urem" | "srem", _) => false,
            _ => true,
        }
    };
    for (bi, b) in spans.iter().enumerate() {
        let Some(b_label) = &b.label else { continue };
        // B: every line harmless, ends `br label %J`.
        let term = code(&lines[b.end]).trim_start();
        let Some(j_label) = term.strip_prefix("br label %").map(str::trim) else { continue };
        if !lines[b.start + 1..b.end].iter().all(|l| harmless(l)) {
            continue;
        }
        // A: the one block branching to B, on a condition, its other way J.
        let preds: Vec<usize> =
            (0..spans.len()).filter(|&a| labels_in(code(&lines[spans[a].end])).contains(&b_label.as_str())).collect();
        let [a] = preds[..] else { continue };
        if a == bi {
            continue;
        }
        let a_term = code(&lines[spans[a].end]).trim_start();
        let Some(rest) = a_term.strip_prefix("br i1 ") else { continue };
        let parts = split_top(rest);
        let (Some(cond), Some(t1), Some(t2)) = (parts.first(), parts.get(1), parts.get(2)) else { continue };
        let target = |p: &str| p.trim().strip_prefix("label %").map(str::to_string);
        let (Some(t1), Some(t2)) = (target(t1), target(t2)) else { continue };
        let b_on_true = match (t1 == *b_label, t2 == *b_label) {
            (true, false) if t2 == j_label => true,
            (false, true) if t1 == j_label => false,
            _ => continue,
        };
        let a_name = match &spans[a].label {
            Some(l) => l.clone(),
            None => continue,
        };
        // J: reached from A and B only, its phis taking one value from each.
        let Some(j) = spans.iter().position(|s| s.label.as_deref() == Some(j_label)) else { continue };
        let j_preds = (0..spans.len()).filter(|&p| labels_in(code(&lines[spans[p].end])).contains(&j_label)).count();
        if j_preds != 2 {
            continue;
        }
        let mut selects = Vec::new();
        let mut ok = true;
        for l in &lines[spans[j].start + 1..spans[j].end] {
            let c = code(l).trim_start();
            let Some((d, rhs)) = def_of(c) else { break };
            let ("phi", prest) = opcode(rhs) else { break };
            let Some((ty, _)) = super::ir_type::parse(prest) else {
                ok = false;
                break;
            };
            let Ok(incoming) = phi_incoming(prest) else {
                ok = false;
                break;
            };
            let from = |label: &str| incoming.iter().find(|(_, p)| p == label).map(|(v, _)| v.clone());
            let (Some(va), Some(vb)) = (from(&a_name), from(b_label)) else {
                ok = false;
                break;
            };
            let (yes, no) = if b_on_true { (vb, va) } else { (va, vb) };
            selects.push((d.to_string(), format!("  {d} = select i1 {}, {ty} {yes}, {ty} {no}", cond.trim())));
        }
        if !ok {
            continue;
        }
        // A's lines, B's, then on to J; J's phis as selects.
        let mut out = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            if i == spans[a].end {
                out.extend(lines[b.start + 1..b.end].iter().cloned());
                out.push(format!("  br label %{j_label}"));
                continue;
            }
            if (b.start..=b.end).contains(&i) {
                continue;
            }
            if let Some((_, s)) = def_of(code(line)).and_then(|(d, _)| selects.iter().find(|(n, _)| n == d)) {
                out.push(s.clone());
                continue;
            }
            out.push(line.clone());
        }
        return Some(out);
    }
    None
}

/// A block that only branches on to a block reached from it alone (as flattening
/// leaves them) merged with it: one block less to walk under masks.
fn merge_one(lines: &[String], spans: &[Span]) -> Option<Vec<String>> {
    for a in spans {
        let term = code(&lines[a.end]).trim_start();
        let Some(j_label) = term.strip_prefix("br label %").map(str::trim) else { continue };
        let Some(j) = spans.iter().find(|s| s.label.as_deref() == Some(j_label)) else { continue };
        let preds = spans.iter().filter(|p| labels_in(code(&lines[p.end])).contains(&j_label)).count();
        let a_label = match &a.label {
            Some(l) => l.as_str(),
            None => continue,
        };
        let phi = |l: &String| def_of(code(l)).is_some_and(|(_, r)| opcode(r).0 == "phi");
        if preds != 1 || j.start == a.start || lines[j.start + 1..=j.end].iter().any(phi) {
            continue;
        }
        // J's successors' phis name A now.
        let succs: Vec<&str> = labels_in(code(&lines[j.end]));
        let mut out = Vec::with_capacity(lines.len());
        let mut current: Option<&str> = None;
        for (i, line) in lines.iter().enumerate() {
            if i == a.end {
                out.extend(lines[j.start + 1..=j.end].iter().cloned());
                continue;
            }
            if (j.start..=j.end).contains(&i) {
                continue;
            }
            if let Some(l) = label_of(line) {
                current = Some(l);
            }
            if current.is_some_and(|c| succs.contains(&c)) && phi(line) {
                out.push(line.replace(&format!(", %{j_label} ]"), &format!(", %{a_label} ]")));
                continue;
            }
            out.push(line.clone());
        }
        return Some(out);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_circuit_of_plain_values_becomes_a_select_and_one_block() {
        // while (it < max && z * z < 4.0f): the second test only reads variables.
        let body: Vec<String> = "  %1 = alloca i32, align 4
  %2 = alloca float, align 4
  br label %3

3:
  %4 = load i32, ptr %1, align 4
  %5 = icmp slt i32 %4, 10
  br i1 %5, label %6, label %9

6:
  %7 = load float, ptr %2, align 4
  %8 = fcmp olt float %7, 4.000000e+00
  br label %9

9:
  %10 = phi i1 [ false, %3 ], [ %8, %6 ]
  br i1 %10, label %11, label %12

11:
  br label %3

12:
  ret void"
            .lines()
            .map(str::to_string)
            .collect();
        let out = flatten(body.clone()).join("\n");
        assert!(out.contains("%10 = select i1 %5, i1 %8, i1 false"), "{out}");
        // The test's three blocks are one: no branch on %5 is left.
        assert!(!out.contains("label %6") && !out.contains("\n9:") && !out.contains("br i1 %5"), "{out}");
        assert!(out.contains("%8 = fcmp olt float %7, 4.000000e+00\n  %10 = select"), "{out}");
        // A load through a pointer that is not the kernel's own variable stays behind its test.
        let guarded: Vec<String> = body.iter().map(|l| l.replace("load float, ptr %2", "load float, ptr %0")).collect();
        assert_eq!(flatten(guarded.clone()), guarded);
    }
}
