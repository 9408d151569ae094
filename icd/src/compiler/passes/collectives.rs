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
//! context like the queries do. Sub-group calls put their operand, and between the
//! barriers each work-item folds or reads its own sub-group's operands:
//!
//! ```text
//! call void @__ferrocl_sg_put_i(i32 %x)
//! call void @_Z7barrierj(i32 1)
//! %r = call i32 @__ferrocl_sg_reduce_add_i()
//! call void @_Z7barrierj(i32 1)
//! ```

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
/// name of its own, so the kernel is still seen to use sub-group functions once its
/// calls are expanded.
pub(crate) fn put(code: &str, sub_group: bool) -> String {
    format!("@__ferrocl_{}_put_{code}", if sub_group { "sg" } else { "wg" })
}

/// `sub_group_barrier(uint)`, around sub-group functions: where only some sub-groups
/// call one, the kernel runs as fibers (`regions`), which need only the sub-group's
/// work-items to reach it.
const SUB_GROUP_BARRIER: &str = "@_Z17sub_group_barrierj";

/// The prefix of the sub-group helpers' names.
pub(crate) const SUB_GROUP_HELPERS: &str = "__ferrocl_sg_";

/// The prefixes of every helper's name: each takes the work-item context
/// (`context::takes_context`), and collectives.c defines them.
pub(crate) const HELPERS: [&str; 2] = ["__ferrocl_wg_", SUB_GROUP_HELPERS];

/// The helpers' declarations a module needs (the context parameter is appended later).
fn declarations(code: &str, op: &str, ty: &str) -> [String; 3] {
    [
        format!("declare void {}({ty})", put(code, false)),
        format!("declare void @__ferrocl_wg_{op}_{code}()"),
        format!("declare {ty} @__ferrocl_wg_get_{code}(i32)"),
    ]
}

/// Whether an OpenCL C function is a collective this pass expands.
pub(crate) fn is_collective(opencl_name: &str) -> bool {
    let folds =
        |o: &str| matches!(o, "all" | "any" | "broadcast") || o.starts_with("reduce_") || o.starts_with("scan_");
    opencl_name.strip_prefix("work_group_").is_some_and(folds) || sub_group_op(opencl_name).is_some()
}

/// The operation a sub-group function performs, as its helpers name it: the function's
/// name less `sub_group_`, the non-uniform functions as the uniform ones (every
/// work-item of the sub-group calls them here: cl_khr_subgroup_non_uniform_arithmetic
/// and _vote are not claimed, but SPIR-V from SYCL's compiler calls them in code all
/// work-items run), and cl_intel_subgroups' shuffles (`intel_sub_group_shuffle`) as
/// the khr ones, but for the two-operand `intel_shuffle_up` and `_down`.
fn sub_group_op(opencl_name: &str) -> Option<&str> {
    if let Some(o) = opencl_name.strip_prefix("intel_sub_group_") {
        return match o {
            "shuffle" | "shuffle_xor" => Some(o),
            "shuffle_up" => Some("intel_shuffle_up"),
            "shuffle_down" => Some("intel_shuffle_down"),
            _ => None,
        };
    }
    let o = opencl_name.strip_prefix("sub_group_")?;
    let o = o.strip_prefix("non_uniform_").unwrap_or(o);
    let folds = matches!(o, "all" | "any" | "broadcast" | "broadcast_first" | "all_equal" | "ballot")
        || o.starts_with("reduce_")
        || o.starts_with("scan_");
    (folds || EXCHANGES.contains(&o) || is_clustered(o)).then_some(o)
}

/// `sub_group_clustered_reduce_<op>` (cl_khr_subgroup_clustered_reduce): expanded as
/// the exchanges are, each work-item folding its cluster's operands in order.
fn is_clustered(op: &str) -> bool {
    op.strip_prefix("clustered_reduce_").is_some_and(|o| {
        matches!(o, "add" | "mul" | "min" | "max" | "and" | "or" | "xor" | "logical_and" | "logical_or" | "logical_xor")
    })
}

/// Sub-group functions that give each work-item another's operand
/// (cl_khr_subgroup_shuffle, _shuffle_relative, _rotate): the operands are put, and
/// each work-item reads the one it names between the two barriers, with its integer
/// arguments (an index, a mask, a delta, a cluster size); the clustered reductions
/// likewise.
const EXCHANGES: &[&str] = &["shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "rotate", "clustered_rotate"];

/// Expands one call line, or returns None when it calls no collective.
fn expand(line: &str, declared: &mut BTreeSet<String>) -> Option<Result<Vec<String>, String>> {
    let (name, open) = callee_names(line).into_iter().find(|(n, _)| opencl_name(n).is_some_and(is_collective))?;
    let fail = || Err(format!("cannot expand the collective call '{}'", line.trim()));
    let full = opencl_name(&name).unwrap_or_default();
    let Some((sub_group, op)) =
        full.strip_prefix("work_group_").map(|o| (false, o)).or_else(|| sub_group_op(full).map(|o| (true, o)))
    else {
        return Some(fail());
    };
    // The parameter codes after the name: the operand's type, then size_t ids (broadcast).
    let params = &name[name.find(full).map_or(name.len(), |at| at + full.len())..];
    if sub_group && op == "broadcast" && params.starts_with("Dv") {
        return Some(broadcast_vector(line, &name, open, params, declared).map_or_else(fail, Ok));
    }
    let code = if params.starts_with("Dh") { "Dh" } else { params.get(..1).unwrap_or("") };
    let (Some(ty), Some(close)) = (ir_type(code), matching_paren(line, open)) else { return Some(fail()) };
    let args: Vec<&str> =
        split_top(&line[open + 1..close]).into_iter().map(|a| a.rsplit(' ').next().unwrap_or("")).collect();
    let Some((lhs, _)) = line.split_once(" = ") else { return Some(fail()) };
    let dbg = line.find(", !dbg ").map_or("", |at| &line[at..]);
    if sub_group {
        // The operands put (the second of cl_intel_subgroups' up and down in a plane of
        // its own), then the integer arguments: an index, a mask, a delta, a cluster
        // size; none for the folds.
        let (operands, expected) = match op {
            "clustered_rotate" => (1, 3),
            "intel_shuffle_up" | "intel_shuffle_down" => (2, 3),
            o if EXCHANGES.contains(&o) || is_clustered(o) || o == "broadcast" => (1, 2),
            "all" | "any" | "all_equal" | "ballot" | "broadcast_first" => (1, 1),
            o if o.starts_with("reduce_") || o.starts_with("scan_") => (1, 1),
            _ => return Some(fail()),
        };
        if args.len() != expected {
            return Some(fail());
        }
        let mut ints: Vec<String> = args[operands..].iter().map(|a| format!("i32 {a}")).collect();
        let (helper_op, ret) = match op {
            // The first work-item's: every work-item of the sub-group is active here.
            "broadcast_first" => {
                ints.push("i32 0".into());
                ("broadcast", ty)
            }
            "ballot" => ("ballot", "<4 x i32>"),
            "all_equal" => ("all_equal", "i32"),
            o => (o, ty),
        };
        let helper = format!("@__ferrocl_sg_{helper_op}_{code}");
        declared.insert(format!("declare void {}({ty})", put(code, true)));
        declared.insert(format!("declare {ret} {helper}({})", vec!["i32"; ints.len()].join(", ")));
        // up(previous, current, delta) and down(current, next, delta): `current` is the
        // operand.
        let (first, second) = if op == "intel_shuffle_up" { (args[1], Some(args[0])) } else { (args[0], None) };
        let second = second.or((op == "intel_shuffle_down").then(|| args[1]));
        let mut out = vec![format!("  call void {}({ty} {first}){dbg}", put(code, true))];
        if let Some(v) = second {
            declared.insert(format!("declare void @__ferrocl_sg_put2_{code}({ty})"));
            out.push(format!("  call void @__ferrocl_sg_put2_{code}({ty} {v}){dbg}"));
        }
        out.extend([
            format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"),
            format!("{lhs} = call {ret} {helper}({}){dbg}", ints.join(", ")),
            format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"),
        ]);
        return Some(Ok(out));
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
    let mut out = vec![format!("  call void {}({ty} {}){dbg}", put(code, false), args[0])];
    if op == "broadcast" {
        let id = |i: usize| args.get(i).copied().unwrap_or("0");
        out.push(format!("  call void @__ferrocl_wg_source(i64 {}, i64 {}, i64 {}){dbg}", id(1), id(2), id(3)));
        declared.insert("declare void @__ferrocl_wg_source(i64, i64, i64)".into());
    }
    out.push(format!("  call void @_Z7barrierj(i32 1){dbg}"));
    out.push(format!("  call void @__ferrocl_wg_{op}_{code}(){dbg}"));
    out.push(format!("  call void @_Z7barrierj(i32 1){dbg}"));
    out.push(format!("{lhs} = call {ty} @__ferrocl_wg_get_{code}(i32 {mine}){dbg}"));
    declared.extend(declarations(code, op, ty));
    Some(Ok(out))
}

/// `sub_group_broadcast` of a vector (cl_khr_subgroup_extended_types), lane by lane
/// between one pair of barriers: each work-item puts its lanes into planes of the
/// operand memory, and reads the source work-item's back. The vector reaches the call
/// as clang's x86-64 ABI passes it (a vector, a `byval` pointer past 64 bytes, or an
/// integer for the small ones, `char3` as `i32`), and the result leaves it likewise;
/// lanes are taken from and put into a vector of the argument's size.
fn broadcast_vector(
    line: &str,
    name: &str,
    open: usize,
    params: &str,
    declared: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    use super::ir_type::{self, IrType};
    let (lanes, rest) = params[2..].split_once('_')?;
    let lanes: u64 = lanes.parse().ok()?;
    let code = if rest.starts_with("Dh") { "Dh" } else { rest.get(..1)? };
    let ty = ir_type(code)?;
    let (elem, _) = ir_type::parse(ty)?;
    let elem_bits = elem.layout(&Default::default())?.0 * 8;
    let args = split_top(&line[open + 1..matching_paren(line, open)?]);
    let [value, index] = args[..] else { return None };
    let index = index.rsplit(' ').next()?;
    let (lhs, call) = line.split_once(" = ")?;
    let dbg = line.find(", !dbg ").map_or("", |at| &line[at..]);
    let ret = call.trim_start().strip_prefix("call ")?.split(&format!(" @{name}(")).next()?;
    let ret = ret.trim_start_matches("noundef ").trim_start_matches("signext ").trim_start_matches("zeroext ");
    let id = lhs.trim().trim_start_matches('%');
    let tmp = |what: &str| format!("%__fcl.bc.{id}.{what}");
    let v = value.rsplit(' ').next()?;
    let mut out = Vec::new();
    // The vector holding the lanes, and how many it has (vec3 arrives as 4).
    let (whole, width) = if let Some(inner) = value.split("byval(").nth(1) {
        let (t, _) = ir_type::parse(inner)?;
        let text = inner[..inner.len() - ir_type::parse(inner)?.1.len()].to_string();
        let IrType::Vector(n, _) = t else { return None };
        out.push(format!("{} = load {text}, ptr {v}{dbg}", tmp("v")));
        (text, n)
    } else {
        let (t, _) = ir_type::parse(value)?;
        let text = value[..value.len() - ir_type::parse(value)?.1.len()].trim().to_string();
        match t {
            // Passed as it is (vec3 included, as `<3 x T>`).
            IrType::Vector(n, e) if *e == elem => (text, n),
            _ => {
                let width = t.layout(&Default::default())?.0 * 8 / elem_bits;
                let whole = format!("<{width} x {ty}>");
                out.push(format!("{} = bitcast {text} {v} to {whole}{dbg}", tmp("v")));
                (whole, width)
            }
        }
    };
    if width < lanes {
        return None;
    }
    let vector = if out.is_empty() { v.to_string() } else { tmp("v") };
    for i in 0..lanes {
        out.push(format!("{} = extractelement {whole} {vector}, i32 {i}{dbg}", tmp(&format!("e{i}"))));
        out.push(format!("  call void @__ferrocl_sg_put_lane_{code}({ty} {}, i32 {i}){dbg}", tmp(&format!("e{i}"))));
    }
    out.push(format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"));
    let mut built = "poison".to_string();
    for i in 0..lanes {
        out.push(format!(
            "{} = call {ty} @__ferrocl_sg_get_lane_{code}(i32 {i}, i32 {index}){dbg}",
            tmp(&format!("g{i}"))
        ));
        let next = tmp(&format!("r{i}"));
        out.push(format!("{next} = insertelement {whole} {built}, {ty} {}, i32 {i}{dbg}", tmp(&format!("g{i}"))));
        built = next;
    }
    out.push(format!("{lhs} = bitcast {whole} {built} to {ret}{dbg}"));
    out.push(format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"));
    declared.insert(format!("declare void @__ferrocl_sg_put_lane_{code}({ty}, i32)"));
    declared.insert(format!("declare {ty} @__ferrocl_sg_get_lane_{code}(i32, i32)"));
    Some(out)
}

/// Expands every collective call of the module; the text is unchanged without any.
pub(crate) fn expand_all(text: &str) -> Result<String, String> {
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
    if out.contains(&format!("call void {SUB_GROUP_BARRIER}("))
        && !out.contains(&format!("declare void {SUB_GROUP_BARRIER}("))
    {
        declared.insert(format!("declare void {SUB_GROUP_BARRIER}(i32)"));
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
        assert!(out.contains("%4 = call i32 @__ferrocl_sg_broadcast_i(i32 3)\n"), "{out}");
        assert!(out.contains("call void @__ferrocl_sg_put_i(i32 %x)\n"), "sub-group use stays visible: {out}");
        let scan = "  %9 = call float @_Z28sub_group_scan_inclusive_addf(float %f)\n";
        let out = expand_all(scan).unwrap();
        assert!(
            out.contains(
                "  call void @__ferrocl_sg_put_f(float %f)\n  call void @_Z17sub_group_barrierj(i32 1)\n  \
                 %9 = call float @__ferrocl_sg_scan_inclusive_add_f()\n  call void @_Z17sub_group_barrierj(i32 1)\n"
            ),
            "{out}"
        );
        assert!(out.contains("declare float @__ferrocl_sg_scan_inclusive_add_f()"), "{out}");
        let rotate =
            "  %5 = call signext i8 @_Z26sub_group_clustered_rotatecij(i8 noundef signext %c, i32 %d, i32 8)\n";
        let out = expand_all(rotate).unwrap();
        assert!(
            out.contains(
                "  call void @__ferrocl_sg_put_c(i8 %c)\n  call void @_Z17sub_group_barrierj(i32 1)\n  \
                 %5 = call i8 @__ferrocl_sg_clustered_rotate_c(i32 %d, i32 8)\n  call void @_Z17sub_group_barrierj(i32 1)\n"
            ),
            "{out}"
        );
        assert!(out.contains("declare i8 @__ferrocl_sg_clustered_rotate_c(i32, i32)"), "{out}");
        assert!(is_collective("sub_group_shuffle_xor") && !is_collective("work_group_shuffle"));
        // Vectors as clang passes them: as they are (vec3 too), through memory, as an
        // integer.
        let direct = "  %6 = call <3 x i32> @_Z19sub_group_broadcastDv3_ij(<3 x i32> noundef %v, i32 noundef 5)\n";
        let out = expand_all(direct).unwrap();
        assert!(out.contains("%__fcl.bc.6.e2 = extractelement <3 x i32> %v, i32 2\n"), "{out}");
        assert!(out.contains("%6 = bitcast <3 x i32> %__fcl.bc.6.r2 to <3 x i32>\n"), "{out}");
        assert!(out.contains("call i32 @__ferrocl_sg_get_lane_i(i32 2, i32 5)\n"), "{out}");
        let byval =
            "  %7 = call <16 x i64> @_Z19sub_group_broadcastDv16_lj(ptr noundef byval(<16 x i64>) align 128 %p, \
                     i32 noundef %i)\n";
        let out = expand_all(byval).unwrap();
        assert!(out.contains("%__fcl.bc.7.v = load <16 x i64>, ptr %p\n"), "{out}");
        assert!(out.contains("%__fcl.bc.7.g15 = call i64 @__ferrocl_sg_get_lane_l(i32 15, i32 %i)\n"), "{out}");
        let coerced = "  %8 = call i32 @_Z19sub_group_broadcastDv3_cj(i32 %w, i32 noundef 0)\n";
        let out = expand_all(coerced).unwrap();
        assert!(out.contains("%__fcl.bc.8.v = bitcast i32 %w to <4 x i8>\n"), "{out}");
        assert!(!out.contains(".e3 ="), "three lanes of four: {out}");
        assert!(out.contains("%8 = bitcast <4 x i8> %__fcl.bc.8.r2 to i32\n"), "{out}");
        assert!(is_collective("sub_group_scan_inclusive_min") && !is_collective("sub_group_barrier"));
        assert!(!is_collective("work_group_barrier") && is_collective("sub_group_ballot"));
        assert!(!is_collective("sub_group_inverse_ballot") && !is_collective("intel_sub_group_block_read"));
        assert_eq!(sub_group_op("sub_group_non_uniform_reduce_mul"), Some("reduce_mul"));
        assert_eq!(sub_group_op("intel_sub_group_shuffle_down"), Some("intel_shuffle_down"));
        let down = "  %10 = call spir_func float @_Z28intel_sub_group_shuffle_downffj(float %a, float %b, i32 %d)\n";
        let out = expand_all(down).unwrap();
        assert!(
            out.contains(
                "  call void @__ferrocl_sg_put_f(float %a)\n  call void @__ferrocl_sg_put2_f(float %b)\n  \
                 call void @_Z17sub_group_barrierj(i32 1)\n  %10 = call float @__ferrocl_sg_intel_shuffle_down_f(i32 %d)\n"
            ),
            "{out}"
        );
        let ballot = "  %11 = call spir_func <4 x i32> @_Z16sub_group_balloti(i32 %p)\n";
        assert!(expand_all(ballot).unwrap().contains("%11 = call <4 x i32> @__ferrocl_sg_ballot_i()\n"));
        let plain = "define void @k() {\n  call void @_Z18work_group_barrierj(i32 1)\n  ret void\n}\n";
        assert_eq!(expand_all(plain).unwrap(), plain);
    }
}
