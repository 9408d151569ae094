//! Regions most work-items pass through without doing anything: a region that starts
//! with `if (get_local_id(0) < k)`, `k` the same in every work-item (a tree reduction's
//! `if (l < k) s[l] += s[l + k]`, a group's `if (l == 0)` write of its result). A
//! work-item with `get_local_id(0) >= k` only takes the other way, and where that way
//! stores nothing a later region reads from it, skipping the work-item changes nothing.
//! The region's item loop then stops at `k` in x: the reduction's eight passes over 256
//! work-items (32 chunks of 8 lanes each, most of them testing their mask and leaving)
//! become 16, 8, 4, 2, 1, 1, 1, 1 chunks.
//!
//! Work-item 0 always runs, so the values kept once per group (the loop's `k /= 2`,
//! written by every work-item that runs the region) are written, and the region the
//! item loop reports is the one all work-items reach.

use std::collections::HashMap;

use super::context::{self, Answer};
use super::ir_text::{callees_in, def_of, split_top, Alloca, Piece};

/// Where a region's item loop may stop in x: at `bound` (work-items `0..bound` run),
/// plus one where the test is `<=` or `==`, at least 1.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cap {
    pub(crate) bound: Bound,
    /// The test is `lid <= bound` or `lid == bound`: one work-item more.
    pub(crate) inclusive: bool,
    /// The bound is compared as a signed number (a negative one lets only work-item 0 run).
    pub(crate) signed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Bound {
    Constant(i64),
    /// A variable kept once per group: its bits, at `offset` in the half of the uniform
    /// block regions read.
    Uniform {
        offset: u64,
        bits: u32,
    },
}

/// What the analysis needs of the kernel made resumable.
pub(super) struct Kernel<'a> {
    pub(super) pieces: &'a [Piece],
    pub(super) succs: &'a [Vec<usize>],
    pub(super) allocas: &'a [Alloca],
    /// Allocas whose lines recompute them after each barrier (`Remat::lines`).
    pub(super) recomputed: &'a [Option<Vec<String>>],
    /// Allocas kept per work-item across barriers (a store to one must not be skipped).
    pub(super) per_item: &'a [bool],
    /// Offsets of the variables kept once per group.
    pub(super) uniform_at: &'a HashMap<&'a str, u64>,
}

/// For each region (started at piece `starts[n]`), the cap of its item loop, if any.
pub(super) fn item_caps(k: &Kernel, starts: &[usize]) -> Vec<Option<Cap>> {
    starts.iter().enumerate().map(|(n, &s)| if n == 0 { None } else { cap_of(k, s) }).collect()
}

fn cap_of(k: &Kernel, start: usize) -> Option<Cap> {
    let index: HashMap<&str, usize> = k.pieces.iter().enumerate().map(|(i, p)| (p.label.as_str(), i)).collect();
    let work = |p: usize| -> Vec<&String> { k.pieces[p].lines.iter().filter(|l| !l.trim().is_empty()).collect() };
    // The test may come after blocks that only lead to it (`br label`).
    let mut piece = start;
    let mut lines = work(piece);
    for _ in 0..k.pieces.len() {
        let (last, before) = lines.split_last()?;
        let Some(next) = last.trim_start().strip_prefix("br label %") else { break };
        if !before.iter().all(|l| quiet_line(k, l, false)) {
            return None;
        }
        piece = *index.get(next.trim())?;
        lines = work(piece);
    }
    let (last, before) = lines.split_last()?;
    // Only loads, compares and casts before the test: nothing a skipped work-item misses.
    let defs: HashMap<&str, &str> = before.iter().filter_map(|l| def_of(l)).collect();
    if !before.iter().all(|l| quiet_line(k, l, false)) {
        return None;
    }
    let rest = last.trim_start().strip_prefix("br i1 ")?;
    let parts = split_top(rest);
    let (c, yes, no) = (parts.first()?.trim(), parts.get(1)?.trim(), parts.get(2)?.trim());
    let (_, no) = (yes.strip_prefix("label %")?, no.strip_prefix("label %")?);
    let (pred, a, b) = compare(defs.get(c)?)?;
    // `lid < b`, or `b > lid` written the other way round.
    let (pred, bound) = match (is_lid_x(k, &defs, a), is_lid_x(k, &defs, b)) {
        (true, false) => (pred, b),
        (false, true) => (swapped(pred)?, a),
        _ => return None,
    };
    let (inclusive, signed) = match pred {
        "ult" => (false, false),
        "slt" => (false, true),
        "ule" | "eq" => (true, false),
        "sle" => (true, true),
        _ => return None,
    };
    let bound = match bound.parse::<i64>() {
        Ok(v) => Bound::Constant(v),
        Err(_) => uniform_bound(k, &defs, bound)?,
    };
    // `lid == b` for b > 0 leaves work-items below b on the other way: they still run.
    if pred == "eq" && !matches!(bound, Bound::Constant(_)) {
        return None;
    }
    skip_way_is_quiet(k, *index.get(no)?).then_some(Cap { bound, inclusive, signed })
}

/// `icmp PRED TYPE A, B` as (PRED, A, B).
fn compare(rhs: &str) -> Option<(&str, &str, &str)> {
    let rest = rhs.strip_prefix("icmp ")?;
    let (pred, rest) = rest.split_once(' ')?;
    let (_, operands) = rest.split_once(' ')?;
    let (a, b) = operands.split_once(',')?;
    Some((pred, a.trim(), b.trim()))
}

/// The predicate with its operands swapped: `b > a` is `a < b`.
fn swapped(pred: &str) -> Option<&'static str> {
    Some(match pred {
        "ugt" => "ult",
        "sgt" => "slt",
        "uge" => "ule",
        "sge" => "sle",
        "eq" => "eq",
        _ => return None,
    })
}

/// Whether `value` is `get_local_id(0)`: the query itself, a load of a variable the
/// region recomputes from it, or either converted to another integer width.
fn is_lid_x(k: &Kernel, defs: &HashMap<&str, &str>, value: &str) -> bool {
    let Some(rhs) = defs.get(value) else { return false };
    if let Some(from) = ["trunc ", "zext ", "sext "].iter().find_map(|c| rhs.strip_prefix(c)) {
        return from.split_whitespace().nth(1).is_some_and(|v| is_lid_x(k, defs, v));
    }
    if let Some(var) = loaded_variable(rhs) {
        let Some(a) = k.allocas.iter().position(|a| a.0 == var) else { return false };
        return k.recomputed[a].as_deref().is_some_and(|lines| recomputes_lid_x(lines, var));
    }
    is_lid_x_query(rhs)
}

fn is_lid_x_query(rhs: &str) -> bool {
    rhs.contains(&format!("@{}(i32 noundef 0,", context::symbol("get_local_id")))
        || rhs.contains(&format!("@{}(i32 0,", context::symbol("get_local_id")))
}

/// Lines that store `get_local_id(0)` (converted or not) to `var` and do nothing else.
fn recomputes_lid_x(lines: &[String], var: &str) -> bool {
    let mut lid: Option<&str> = None;
    for l in lines {
        let t = l.trim_start();
        if let Some(store) = t.strip_prefix("store ") {
            let parts = split_top(store);
            let value = parts.first().and_then(|p| p.split_whitespace().nth(1));
            let to = parts.get(1).and_then(|p| p.trim().strip_prefix("ptr ")).map(str::trim);
            return lid.is_some() && value == lid && to == Some(var);
        }
        let Some((d, rhs)) = def_of(t) else { return false };
        let cast = ["trunc ", "zext ", "sext "].iter().find_map(|c| rhs.strip_prefix(c));
        let ok = match cast {
            Some(from) => lid.is_some() && from.split_whitespace().nth(1) == lid,
            None => lid.is_none() && is_lid_x_query(rhs),
        };
        if !ok {
            return false;
        }
        lid = Some(d);
    }
    false
}

/// The variable a `load TYPE, ptr %var, ...` reads.
fn loaded_variable(rhs: &str) -> Option<&str> {
    let rest = rhs.strip_prefix("load ")?;
    if rest.starts_with("volatile") || rest.starts_with("atomic") {
        return None;
    }
    split_top(rest).get(1)?.trim().strip_prefix("ptr ").map(str::trim)
}

/// A load of a variable kept once per group, of an integer type.
fn uniform_bound(k: &Kernel, defs: &HashMap<&str, &str>, value: &str) -> Option<Bound> {
    let rhs = defs.get(value)?;
    let var = loaded_variable(rhs)?;
    let ty = rhs.strip_prefix("load ")?.split(',').next()?.trim();
    let bits = ty.strip_prefix('i')?.parse::<u32>().ok().filter(|b| matches!(b, 8 | 16 | 32 | 64))?;
    Some(Bound::Uniform { offset: *k.uniform_at.get(var)?, bits })
}

/// Whether a line does nothing a skipped work-item would leave undone: no store but to
/// a variable no later region reads per work-item (where `stores` allows those), no
/// call but a work-item query or a lifetime marker, no atomic. (What would have trapped
/// in the skipped work-item may: the kernel was wrong there.)
fn quiet_line(k: &Kernel, line: &str, stores: bool) -> bool {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with(';') || t.starts_with("br ") || t.starts_with("ret ") {
        return true;
    }
    if let Some(rest) = t.strip_prefix("store ") {
        let to = split_top(rest).get(1).and_then(|p| p.trim().strip_prefix("ptr ")).map(str::trim);
        let variable = to.and_then(|v| k.allocas.iter().position(|a| a.0 == v));
        return stores && !t.contains("volatile") && variable.is_some_and(|a| !k.per_item[a]);
    }
    let calls = callees_in(t);
    if !calls.is_empty() {
        return calls.iter().all(|c| {
            c.starts_with("llvm.lifetime.")
                || matches!(context::answer(c), Some(Answer::Range | Answer::Group | Answer::GlobalItem | Answer::Item))
        });
    }
    let Some((_, rhs)) = def_of(t) else { return false };
    let op = rhs.split_whitespace().next().unwrap_or("");
    !matches!(op, "atomicrmw" | "cmpxchg" | "fence" | "va_arg" | "invoke" | "landingpad") && !rhs.contains(" atomic ")
}

/// Whether every piece a work-item reaches from `from` before its next barrier is quiet
/// (`quiet_line`, stores to per-group or region-local variables allowed).
fn skip_way_is_quiet(k: &Kernel, from: usize) -> bool {
    let mut seen = vec![false; k.pieces.len()];
    let mut todo = vec![from];
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if !k.pieces[i].lines.iter().all(|l| quiet_line(k, l, true)) {
            return false;
        }
        todo.extend(&k.succs[i]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::ir_type::TypeTable;
    use super::super::regions::{make_resumable, tests::sync};
    use super::*;

    const DEFINE: &str =
        "define dso_local spir_kernel void @k(ptr addrspace(1) noundef %0, i32 noundef %1, ptr %__ferrocl_ctx) #0 {";

    /// A tree reduction's shape: `for (k = 128; k > 0; k /= 2) { barrier(); if (l < k)
    /// s[l] = 1; JOIN } if (l == 0) out[0] = m;`, with `join` at JOIN; `m`, a
    /// work-item's own variable kept across the barriers, starts as 2.
    fn reduction(join: &str) -> Vec<Option<Cap>> {
        let body = format!(
            "  %3 = alloca i64, align 8
  %4 = alloca i64, align 8
  %40 = alloca float, align 4
  %41 = call i64 @_Z13get_global_idj(i32 0, ptr %__ferrocl_ctx)
  %42 = uitofp i64 %41 to float
  store float %42, ptr %40, align 4
  %5 = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  store i64 %5, ptr %3, align 8
  store i64 128, ptr %4, align 8
  br label %6
6:
  %7 = load i64, ptr %4, align 8
  %8 = icmp ugt i64 %7, 0
  br i1 %8, label %9, label %20
9:
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %10 = load i64, ptr %3, align 8
  %11 = load i64, ptr %4, align 8
  %12 = icmp ult i64 %10, %11
  br i1 %12, label %13, label %16
13:
  %14 = getelementptr inbounds float, ptr addrspace(3) @s, i64 %10
  store float 1.0, ptr addrspace(3) %14, align 4
  br label %16
16:
{join}
  %17 = load i64, ptr %4, align 8
  %18 = lshr i64 %17, 1
  store i64 %18, ptr %4, align 8
  br label %6
20:
  %21 = load i64, ptr %3, align 8
  %22 = icmp eq i64 %21, 0
  br i1 %22, label %23, label %24
23:
  %43 = load float, ptr %40, align 4
  store float %43, ptr addrspace(1) %0, align 4
  br label %24
24:
  ret void"
        );
        let body: Vec<String> = body.lines().map(str::to_string).collect();
        make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap().caps
    }

    const BELOW_K: Cap = Cap { bound: Bound::Uniform { offset: 0, bits: 64 }, inclusive: false, signed: false };
    const ITEM_0: Cap = Cap { bound: Bound::Constant(0), inclusive: true, signed: false };

    #[test]
    fn regions_behind_a_local_id_test_stop_at_its_bound() {
        let caps = reduction("");
        // `l < k`: work-items 0..k, k read where the group keeps it; `l == 0`: one.
        assert!(caps.contains(&Some(BELOW_K)), "{caps:?}");
        assert!(caps.contains(&Some(ITEM_0)), "{caps:?}");
        // The kernel's first region and the loop's test run for every work-item.
        assert_eq!(caps[0], None);
    }

    #[test]
    fn a_region_whose_other_way_writes_memory_runs_every_work_item() {
        let caps = reduction("  store float 3.0, ptr addrspace(1) %0, align 4");
        assert!(!caps.contains(&Some(BELOW_K)), "{caps:?}");
        assert!(caps.contains(&Some(ITEM_0)), "{caps:?}");
    }

    #[test]
    fn a_region_whose_other_way_changes_a_work_item_s_variable_runs_every_work_item() {
        // m += 1 on the way past.
        let caps = reduction(
            "  %30 = load float, ptr %40, align 4\n  %31 = fadd float %30, 1.0\n  store float %31, ptr %40, align 4",
        );
        assert!(!caps.contains(&Some(BELOW_K)), "{caps:?}");
    }

    #[test]
    fn only_tests_of_the_local_id_in_x_against_one_value_cap() {
        let defs: HashMap<&str, &str> = [
            ("%a", "call i64 @_Z12get_local_idj(i32 0, ptr %ctx)"),
            ("%b", "call i64 @_Z12get_local_idj(i32 1, ptr %ctx)"),
            ("%c", "trunc i64 %a to i32"),
        ]
        .into_iter()
        .collect();
        let k = Kernel {
            pieces: &[],
            succs: &[],
            allocas: &[],
            recomputed: &[],
            per_item: &[],
            uniform_at: &HashMap::new(),
        };
        assert!(is_lid_x(&k, &defs, "%a") && is_lid_x(&k, &defs, "%c"));
        assert!(!is_lid_x(&k, &defs, "%b"));
        assert_eq!(swapped("ugt"), Some("ult"));
        assert_eq!(swapped("ne"), None);
        assert_eq!(compare("icmp ult i64 %a, %k"), Some(("ult", "%a", "%k")));
    }
}
