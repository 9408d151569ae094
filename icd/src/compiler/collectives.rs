//! Work-group and sub-group collectives become barriers around small library helpers
//! (builtins/clc/collectives.c), on clang's unoptimised IR before the rest of the
//! rewrite: `%r = call i32 @_Z21work_group_reduce_addi(i32 %x)` becomes
//!
//! ```text
//! call void @__ferrocl_wg_put_i(i32 %x)        ; the work-item's operand to its slot
//! call void @_Z7barrierj(i32 1)
//! call void @__ferrocl_wg_reduce_add_i()       ; work-item 0 computes every result
//! call void @_Z7barrierj(i32 1)
//! %r = call i32 @__ferrocl_wg_get_i(i32 0)     ; 0: the group's result, 1: its own
//! ```
//!
//! so a kernel calling collectives in its own body runs as barrier regions (a loop per
//! region, like any kernel with barriers) instead of fibers: a work-group sum over 16M
//! floats took 3.4 s as fibers. The helpers and the barriers then take the work-item
//! context like the queries do. A sub-group is the whole work-group, so sub-group
//! collectives are the same (their broadcast takes a linear id).

use std::collections::BTreeSet;

use super::ir_text::{callee_names, matching_paren, opencl_name, split_top};

/// The IR type of a collective's operand, from its mangled type code.
fn ir_type(code: &str) -> Option<&'static str> {
    Some(match code {
        "i" | "j" => "i32",
        "l" | "m" => "i64",
        "f" => "float",
        "d" => "double",
        "Dh" => "half",
        "c" | "h" => "i8",
        "s" | "t" => "i16",
        _ => return None,
    })
}

/// The helper that puts a work-item's operand: the sub-group one is the same under a
/// name of its own, so the kernel is still seen to use sub-group functions (their
/// groups are limited to `MAX_SUB_GROUP_SIZE`) once its calls are expanded.
pub fn put(code: &str, sub_group: bool) -> String {
    format!("@__ferrocl_{}_put_{code}", if sub_group { "sg" } else { "wg" })
}

/// The prefix of the sub-group helpers' names.
pub const SUB_GROUP_HELPERS: &str = "__ferrocl_sg_";

/// The helpers' declarations a module needs (the context parameter is appended later).
fn declarations(code: &str, op: &str, ty: &str, sub_group: bool) -> [String; 3] {
    [
        format!("declare void {}({ty})", put(code, sub_group)),
        format!("declare void @__ferrocl_wg_{op}_{code}()"),
        format!("declare {ty} @__ferrocl_wg_get_{code}(i32)"),
    ]
}

/// Whether an OpenCL C function is a collective this pass expands.
pub fn is_collective(opencl_name: &str) -> bool {
    let op = opencl_name.strip_prefix("work_group_").or_else(|| opencl_name.strip_prefix("sub_group_"));
    op.is_some_and(|o| matches!(o, "all" | "any" | "broadcast") || o.starts_with("reduce_") || o.starts_with("scan_"))
        || opencl_name.strip_prefix("sub_group_").is_some_and(|o| EXCHANGES.contains(&o))
}

/// Sub-group functions that give each work-item another's operand
/// (cl_khr_subgroup_shuffle, _shuffle_relative, _rotate): the operands are put, and
/// each work-item reads the one it names between the two barriers, with its integer
/// arguments (an index, a mask, a delta, a cluster size).
const EXCHANGES: &[&str] = &["shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "rotate", "clustered_rotate"];

/// Expands one call line, or returns None when it calls no collective.
fn expand(line: &str, declared: &mut BTreeSet<String>) -> Option<Result<Vec<String>, String>> {
    let (name, open) = callee_names(line).into_iter().find(|(n, _)| opencl_name(n).is_some_and(is_collective))?;
    let fail = || Err(format!("cannot expand the collective call '{}'", line.trim()));
    let full = opencl_name(&name).unwrap_or_default();
    let sub_group = full.starts_with("sub_group_");
    let Some(op) = full.strip_prefix("work_group_").or_else(|| full.strip_prefix("sub_group_")) else {
        return Some(fail());
    };
    // The parameter codes after the name: the operand's type, then size_t ids (broadcast).
    let params = &name[name.find(op).map_or(name.len(), |at| at + op.len())..];
    let code = if params.starts_with("Dh") { "Dh" } else { params.get(..1).unwrap_or("") };
    let (Some(ty), Some(close)) = (ir_type(code), matching_paren(line, open)) else { return Some(fail()) };
    let args: Vec<&str> =
        split_top(&line[open + 1..close]).into_iter().map(|a| a.rsplit(' ').next().unwrap_or("")).collect();
    let Some((lhs, _)) = line.split_once(" = ") else { return Some(fail()) };
    let dbg = line.find(", !dbg ").map_or("", |at| &line[at..]);
    if sub_group && EXCHANGES.contains(&op) {
        let expected = if op == "clustered_rotate" { 3 } else { 2 };
        if args.len() != expected {
            return Some(fail());
        }
        let ints: Vec<String> = args[1..].iter().map(|a| format!("i32 {a}")).collect();
        let helper = format!("@__ferrocl_sg_{op}_{code}");
        declared.insert(format!("declare void {}({ty})", put(code, true)));
        declared.insert(format!("declare {ty} {helper}({})", vec!["i32"; ints.len()].join(", ")));
        return Some(Ok(vec![
            format!("  call void {}({ty} {}){dbg}", put(code, true), args[0]),
            format!("  call void @_Z7barrierj(i32 1){dbg}"),
            format!("{lhs} = call {ty} {helper}({}){dbg}", ints.join(", ")),
            format!("  call void @_Z7barrierj(i32 1){dbg}"),
        ]));
    }
    // all/any take and give an int (code i) whatever it is called with.
    let (op, mine) = match op {
        "all" | "any" | "broadcast" => (op, 0),
        o if o.starts_with("reduce_") => (o, 0),
        o if o.starts_with("scan_") => (o, 1),
        _ => return Some(fail()),
    };
    if args.is_empty() || (op == "broadcast" && !(2..=4).contains(&args.len())) {
        return Some(fail());
    }
    let mut out = vec![format!("  call void {}({ty} {}){dbg}", put(code, sub_group), args[0])];
    if op == "broadcast" && sub_group {
        // sub_group_broadcast(x, uint sub_group_local_id).
        out.push(format!("  call void @__ferrocl_wg_source_linear(i32 {}){dbg}", args[1]));
        declared.insert("declare void @__ferrocl_wg_source_linear(i32)".into());
    } else if op == "broadcast" {
        let id = |i: usize| args.get(i).copied().unwrap_or("0");
        out.push(format!("  call void @__ferrocl_wg_source(i64 {}, i64 {}, i64 {}){dbg}", id(1), id(2), id(3)));
        declared.insert("declare void @__ferrocl_wg_source(i64, i64, i64)".into());
    }
    out.push(format!("  call void @_Z7barrierj(i32 1){dbg}"));
    out.push(format!("  call void @__ferrocl_wg_{op}_{code}(){dbg}"));
    out.push(format!("  call void @_Z7barrierj(i32 1){dbg}"));
    out.push(format!("{lhs} = call {ty} @__ferrocl_wg_get_{code}(i32 {mine}){dbg}"));
    declared.extend(declarations(code, op, ty, sub_group));
    Some(Ok(out))
}

/// Expands every collective call of the module; the text is unchanged without any.
pub fn expand_all(text: &str) -> Result<String, String> {
    if !text.contains("@_Z") || !(text.contains("work_group_") || text.contains("sub_group_")) {
        return Ok(text.to_string());
    }
    let mut declared = BTreeSet::new();
    let mut out = String::with_capacity(text.len() + 1024);
    for line in text.lines() {
        match (line.contains("call ") && !line.starts_with("declare ")).then(|| expand(line, &mut declared)).flatten() {
            Some(lines) => lines?.iter().for_each(|l| {
                out.push_str(l);
                out.push('\n');
            }),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if !declared.is_empty() && !out.contains("declare void @_Z7barrierj(") {
        declared.insert("declare void @_Z7barrierj(i32)".into());
    }
    for d in declared {
        out.push_str(&d);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_become_put_barrier_compute_barrier_get() {
        let ir = "define void @k(i32 %x, i64 %a) {\n  %1 = call i32 @_Z21work_group_reduce_addi(i32 noundef %x) #3, !dbg !7\n  \
                  %2 = call half @_Z29work_group_scan_exclusive_maxDh(half noundef %h)\n  \
                  %3 = call double @_Z20work_group_broadcastdmm(double %d, i64 %a, i64 7)\n  ret void\n}\n\
                  declare i32 @_Z21work_group_reduce_addi(i32 noundef)\n";
        let out = expand_all(ir).unwrap();
        assert!(
            out.contains(
                "  call void @__ferrocl_wg_put_i(i32 %x), !dbg !7\n  call void @_Z7barrierj(i32 1), !dbg !7\n  \
             call void @__ferrocl_wg_reduce_add_i(), !dbg !7\n  call void @_Z7barrierj(i32 1), !dbg !7\n  \
             %1 = call i32 @__ferrocl_wg_get_i(i32 0), !dbg !7\n"
            ),
            "{out}"
        );
        assert!(out.contains("call void @__ferrocl_wg_scan_exclusive_max_Dh()\n"), "{out}");
        assert!(out.contains("%2 = call half @__ferrocl_wg_get_Dh(i32 1)\n"), "{out}");
        assert!(out.contains("call void @__ferrocl_wg_source(i64 %a, i64 7, i64 0)\n"), "{out}");
        assert!(out.contains("%3 = call double @__ferrocl_wg_get_d(i32 0)\n"), "{out}");
        for d in ["@__ferrocl_wg_put_d(double)", "@__ferrocl_wg_broadcast_d()", "@_Z7barrierj(i32)"] {
            assert!(out.contains(&format!("declare void {d}")), "{d} undeclared:\n{out}");
        }
        assert!(out.contains("declare half @__ferrocl_wg_get_Dh(i32)"), "{out}");
        // The original declaration stays (unused).
        assert!(out.contains("declare i32 @_Z21work_group_reduce_addi(i32 noundef)"));
        let sub = "  %4 = call i32 @_Z19sub_group_broadcastij(i32 %x, i32 3)\n";
        let out = expand_all(sub).unwrap();
        assert!(out.contains("call void @__ferrocl_wg_source_linear(i32 3)\n"), "{out}");
        assert!(out.contains("call void @__ferrocl_sg_put_i(i32 %x)\n"), "sub-group use stays visible: {out}");
        let rotate = "  %5 = call signext i8 @_Z26sub_group_clustered_rotatecij(i8 noundef signext %c, i32 %d, i32 8)\n";
        let out = expand_all(rotate).unwrap();
        assert!(
            out.contains(
                "  call void @__ferrocl_sg_put_c(i8 %c)\n  call void @_Z7barrierj(i32 1)\n  \
                 %5 = call i8 @__ferrocl_sg_clustered_rotate_c(i32 %d, i32 8)\n  call void @_Z7barrierj(i32 1)\n"
            ),
            "{out}"
        );
        assert!(out.contains("declare i8 @__ferrocl_sg_clustered_rotate_c(i32, i32)"), "{out}");
        assert!(is_collective("sub_group_shuffle_xor") && !is_collective("work_group_shuffle"));
        assert!(is_collective("sub_group_scan_inclusive_min") && !is_collective("sub_group_barrier"));
        assert!(!is_collective("work_group_barrier") && !is_collective("sub_group_ballot"));
        let plain = "define void @k() {\n  call void @_Z18work_group_barrierj(i32 1)\n  ret void\n}\n";
        assert_eq!(expand_all(plain).unwrap(), plain);
    }
}
