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
/// name less `sub_group_`, the non-uniform functions as the uniform ones (the helpers
/// fold over the work-items that reached the call, collectives.c's `ACTIVE`, which is
/// all of them for a uniform function), and cl_intel_subgroups' shuffles
/// (`intel_sub_group_shuffle`) as the khr ones, but for the two-operand
/// `intel_shuffle_up` and `_down`.
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
    let folds = matches!(o, "all" | "any" | "broadcast" | "broadcast_first" | "all_equal" | "ballot" | "elect")
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
/// `sites` numbers the module's sub-group calls.
fn expand(line: &str, declared: &mut BTreeSet<String>, sites: &mut u32) -> Option<Result<Vec<String>, String>> {
    let (name, open) = callee_names(line).into_iter().find(|(n, _)| opencl_name(n).is_some_and(is_collective))?;
    let fail = || Err(format!("cannot expand the collective call '{}'", line.trim()));
    let full = opencl_name(&name).unwrap_or_default();
    let Some((sub_group, op)) =
        full.strip_prefix("work_group_").map(|o| (false, o)).or_else(|| sub_group_op(full).map(|o| (true, o)))
    else {
        return Some(fail());
    };
    // The SPIR-V translator names SPV_KHR_uniform_group_instructions' bitwise folds
    // `reduce_bitwise_or` and so on; OpenCL C names them `reduce_or`.
    let unified = op.replacen("bitwise_", "", 1);
    let op = unified.as_str();
    // The parameter codes after the name: the operand's type, then size_t ids (broadcast).
    let params = &name[name.find(full).map_or(name.len(), |at| at + full.len())..];
    let vector_exchange =
        matches!(op, "broadcast" | "shuffle" | "shuffle_xor" | "intel_shuffle_up" | "intel_shuffle_down");
    if sub_group && vector_exchange && params.starts_with("Dv") {
        return Some(exchange_vector(line, &name, op, open, params, declared).map_or_else(fail, Ok));
    }
    // `sub_group_elect()` puts a 1 of its own: the work-items in the call are marked.
    let elect = sub_group && op == "elect";
    let code = if params.starts_with("Dh") {
        "Dh"
    } else if elect {
        "i"
    } else {
        params.get(..1).unwrap_or("")
    };
    let (Some(ty), Some(close)) = (ir_type(code), matching_paren(line, open)) else { return Some(fail()) };
    let mut args: Vec<&str> =
        split_top(&line[open + 1..close]).into_iter().map(|a| a.rsplit(' ').next().unwrap_or("")).collect();
    if elect {
        args = vec!["1"];
    }
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
            "elect" => (1, 1),
            o if o.starts_with("reduce_") || o.starts_with("scan_") => (1, 1),
            _ => return Some(fail()),
        };
        if args.len() != expected {
            return Some(fail());
        }
        let ints: Vec<String> = args[operands..].iter().map(|a| format!("i32 {a}")).collect();
        let (helper_op, ret) = match op {
            "ballot" => ("ballot", "<4 x i32>"),
            "elect" => ("elect", "i32"),
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
        // Each work-item entering the call marks itself with the call's number (1 to
        // 255), so that the helpers fold over the work-items of this call alone, not
        // those of another call the sub-group's other branch makes meanwhile.
        *sites += 1;
        declared.insert("declare void @__ferrocl_sg_enter(i32)".into());
        let mut out = vec![
            format!("  call void @__ferrocl_sg_enter(i32 {}){dbg}", (*sites - 1) % 255 + 1),
            format!("  call void {}({ty} {first}){dbg}", put(code, true)),
        ];
        if let Some(v) = second {
            declared.insert(format!("declare void @__ferrocl_sg_put2_{code}({ty})"));
            out.push(format!("  call void @__ferrocl_sg_put2_{code}({ty} {v}){dbg}"));
        }
        // After the second barrier each work-item unmarks itself (collectives.c's
        // `ACTIVE`).
        declared.insert("declare void @__ferrocl_sg_done()".into());
        out.extend([
            format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"),
            format!("{lhs} = call {ret} {helper}({}){dbg}", ints.join(", ")),
            format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"),
            format!("  call void @__ferrocl_sg_done(){dbg}"),
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

/// A sub-group exchange of a vector, lane by lane between one pair of barriers:
/// `sub_group_broadcast` (cl_khr_subgroup_extended_types) and cl_intel_subgroups'
/// shuffles. Each work-item puts its operand's lanes into planes of the lane memory
/// (a two-operand shuffle's second operand into the planes after them), and reads the
/// work-item's the exchange names back (`collectives.c`'s `__ferrocl_sg_lane_*`). The
/// vector reaches the call as clang's x86-64 ABI passes it (a vector, a `byval` pointer
/// past 64 bytes, or an integer or double for the small ones, `char3` as `i32`), and
/// the result leaves it likewise; lanes are taken from and put into a vector of the
/// argument's size.
fn exchange_vector(
    line: &str,
    name: &str,
    op: &str,
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
    let operands = if op.starts_with("intel_shuffle_") { 2 } else { 1 };
    if args.len() != operands + 1 {
        return None;
    }
    let int = args[operands].rsplit(' ').next()?;
    let (lhs, call) = line.split_once(" = ")?;
    let dbg = line.find(", !dbg ").map_or("", |at| &line[at..]);
    let ret = call.trim_start().strip_prefix("call ")?.split(&format!(" @{name}(")).next()?;
    let ret = ret.trim_start_matches("noundef ").trim_start_matches("signext ").trim_start_matches("zeroext ");
    let id = lhs.trim().trim_start_matches('%');
    let tmp = |what: &str| format!("%__fcl.bc.{id}.{what}");
    let mut out = Vec::new();
    // Each operand as a vector of its lanes (vec3 arrives as 4), put into its planes:
    // the current operand first (up's second argument, the others' first).
    let order: Vec<usize> = if op == "intel_shuffle_up" { vec![1, 0] } else { (0..operands).collect() };
    let mut whole = String::new();
    for (plane, &a) in order.iter().enumerate() {
        let value = args[a];
        let v = value.rsplit(' ').next()?;
        // The first operand's names `v`, `e<lane>`; the second's `w`, `f<lane>`.
        let (vn, en) = if plane == 0 { ("v", "e") } else { ("w", "f") };
        let name_v = tmp(vn);
        let (text, width, vector) = if let Some(inner) = value.split("byval(").nth(1) {
            let (t, rest) = ir_type::parse(inner)?;
            let text = inner[..inner.len() - rest.len()].to_string();
            let IrType::Vector(n, _) = t else { return None };
            out.push(format!("{name_v} = load {text}, ptr {v}{dbg}"));
            (text, n, name_v)
        } else {
            let (t, rest) = ir_type::parse(value)?;
            let text = value[..value.len() - rest.len()].trim().to_string();
            match t {
                // Passed as it is (vec3 included, as `<3 x T>`).
                IrType::Vector(n, e) if *e == elem => (text, n, v.to_string()),
                _ => {
                    let width = t.layout(&Default::default())?.0 * 8 / elem_bits;
                    let w = format!("<{width} x {ty}>");
                    out.push(format!("{name_v} = bitcast {text} {v} to {w}{dbg}"));
                    (w, width, name_v)
                }
            }
        };
        if width < lanes {
            return None;
        }
        whole = text;
        for i in 0..lanes {
            let e = tmp(&format!("{en}{i}"));
            out.push(format!("{e} = extractelement {whole} {vector}, i32 {i}{dbg}"));
            out.push(format!(
                "  call void @__ferrocl_sg_put_lane_{code}({ty} {e}, i32 {}){dbg}",
                plane as u64 * lanes + i
            ));
        }
    }
    out.push(format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"));
    // The lane each reads: broadcast and shuffle name a work-item, xor a mask; up and
    // down a delta, with the planes of the second operand `lanes` further on.
    let (helper, extra) = match op {
        "broadcast" | "shuffle" => ("get_lane", String::new()),
        "shuffle_xor" => ("lane_xor", String::new()),
        "intel_shuffle_down" => ("lane_down", format!(", i32 {lanes}")),
        "intel_shuffle_up" => ("lane_up", format!(", i32 {lanes}")),
        _ => return None,
    };
    let mut built = "poison".to_string();
    for i in 0..lanes {
        let g = tmp(&format!("g{i}"));
        out.push(format!("{g} = call {ty} @__ferrocl_sg_{helper}_{code}(i32 {i}{extra}, i32 {int}){dbg}"));
        let next = tmp(&format!("r{i}"));
        out.push(format!("{next} = insertelement {whole} {built}, {ty} {g}, i32 {i}{dbg}"));
        built = next;
    }
    out.push(format!("{lhs} = bitcast {whole} {built} to {ret}{dbg}"));
    out.push(format!("  call void {SUB_GROUP_BARRIER}(i32 1){dbg}"));
    declared.insert(format!("declare void @__ferrocl_sg_put_lane_{code}({ty}, i32)"));
    let ints = if extra.is_empty() { "i32, i32" } else { "i32, i32, i32" };
    declared.insert(format!("declare {ty} @__ferrocl_sg_{helper}_{code}({ints})"));
    Some(out)
}

/// cl_intel_subgroups' block reads and writes: the sub-group's work-items read or write
/// consecutive 32-bit values, work-item `i` value `k` at `i + k * sub-group size` (of a
/// buffer), or at byte `x + 4 i` of row `y + k` (of an image, through `image.cl`'s
/// `__ferrocl_block_dword` and `__ferrocl_block_put`, which check the bounds). Written
/// out with the sub-group queries, so the SIMD copies see consecutive accesses.
fn block_io(line: &str, declared: &mut BTreeSet<String>, writes: &mut usize) -> Option<Result<Vec<String>, String>> {
    let (name, open) = callee_names(line).into_iter().find(|(n, _)| {
        opencl_name(n).is_some_and(|o| {
            o.starts_with("intel_sub_group_block_read") || o.starts_with("intel_sub_group_block_write")
        })
    })?;
    let fail = || Err(format!("cannot expand the block access '{}'", line.trim()));
    let full = opencl_name(&name).unwrap_or_default();
    let (write, count) = match full.strip_prefix("intel_sub_group_block_read") {
        Some(n) => (false, n),
        None => (true, full.strip_prefix("intel_sub_group_block_write").unwrap_or("")),
    };
    let n: u32 = match count {
        "" => 1,
        "2" | "4" | "8" => count.parse().unwrap_or(1),
        _ => return Some(fail()),
    };
    let params = &name[name.find(full).map_or(name.len(), |at| at + full.len())..];
    let image = params.contains("ocl_image2d");
    let Some(close) = matching_paren(line, open) else { return Some(fail()) };
    let args = split_top(&line[open + 1..close]);
    let value = |a: &str| a.rsplit(' ').next().unwrap_or("").to_string();
    let dbg = line.find(", !dbg ").map_or("", |at| &line[at..]);
    let lhs = line.split_once(" = ").map(|(l, _)| l.trim().to_string());
    let id = match &lhs {
        Some(l) => l.trim_start_matches('%').to_string(),
        None => {
            *writes += 1;
            format!("w{writes}")
        }
    };
    let tmp = |what: &str| format!("%__fcl.bk.{id}.{what}");
    let vector = format!("<{n} x i32>");
    let mut out = vec![
        format!("{} = call i32 @_Z22get_sub_group_local_idv(){dbg}", tmp("lid")),
        format!("{} = call i32 @_Z18get_sub_group_sizev(){dbg}", tmp("n")),
    ];
    // The coordinates of an image's block: x in bytes, moved by 4 a work-item.
    let (base, x, y) = match image {
        true => {
            let (Some(img), Some(coord)) = (args.first(), args.get(1)) else { return Some(fail()) };
            let Some(ty) = type_text(coord) else { return Some(fail()) };
            out.push(format!("{} = bitcast {ty} {} to <2 x i32>{dbg}", tmp("c"), value(coord)));
            out.push(format!("{} = extractelement <2 x i32> {}, i32 0{dbg}", tmp("cx"), tmp("c")));
            out.push(format!("{} = extractelement <2 x i32> {}, i32 1{dbg}", tmp("y"), tmp("c")));
            out.push(format!("{} = shl i32 {}, 2{dbg}", tmp("dx"), tmp("lid")));
            out.push(format!("{} = add i32 {}, {}{dbg}", tmp("x"), tmp("cx"), tmp("dx")));
            (value(img), tmp("x"), tmp("y"))
        }
        false => (value(args.first()?), String::new(), String::new()),
    };
    // Work-item i's k-th value: its index (buffer) or row (image).
    let place = |out: &mut Vec<String>, k: u32| -> String {
        match image {
            true if k == 0 => y.clone(),
            true => {
                out.push(format!("{} = add i32 {y}, {k}{dbg}", tmp(&format!("y{k}"))));
                tmp(&format!("y{k}"))
            }
            false => {
                out.push(format!("{} = mul i32 {}, {k}{dbg}", tmp(&format!("o{k}")), tmp("n")));
                out.push(format!("{} = add i32 {}, {}{dbg}", tmp(&format!("i{k}")), tmp("lid"), tmp(&format!("o{k}"))));
                out.push(format!("{} = zext i32 {} to i64{dbg}", tmp(&format!("w{k}")), tmp(&format!("i{k}"))));
                out.push(format!(
                    "{} = getelementptr inbounds i32, ptr addrspace(1) {base}, i64 {}{dbg}",
                    tmp(&format!("p{k}")),
                    tmp(&format!("w{k}"))
                ));
                tmp(&format!("p{k}"))
            }
        }
    };
    if write {
        let Some(data) = args.get(if image { 2 } else { 1 }) else { return Some(fail()) };
        let v = value(data);
        let whole = match (n, data.split("byval(").nth(1)) {
            (1, _) => v,
            (_, Some(_)) => {
                out.push(format!("{} = load {vector}, ptr {v}{dbg}", tmp("d")));
                tmp("d")
            }
            (_, None) => {
                let Some(ty) = type_text(data) else { return Some(fail()) };
                out.push(format!("{} = bitcast {ty} {v} to {vector}{dbg}", tmp("d")));
                tmp("d")
            }
        };
        for k in 0..n {
            let at = place(&mut out, k);
            let one = match n {
                1 => whole.clone(),
                _ => {
                    out.push(format!("{} = extractelement {vector} {whole}, i32 {k}{dbg}", tmp(&format!("e{k}"))));
                    tmp(&format!("e{k}"))
                }
            };
            match image {
                true => out.push(format!(
                    "  call void @__ferrocl_block_put(ptr addrspace(1) {base}, i32 {x}, i32 {at}, i32 {one}){dbg}"
                )),
                false => out.push(format!("  store i32 {one}, ptr addrspace(1) {at}, align 4{dbg}")),
            }
        }
        if image {
            declared.insert("declare void @__ferrocl_block_put(ptr addrspace(1), i32, i32, i32)".into());
        }
        return Some(Ok(indented(out)));
    }
    let Some(lhs) = lhs else { return Some(fail()) };
    let Some(ret) = line.split_once(" = call ").and_then(|(_, r)| r.split(&format!(" @{name}(")).next()) else {
        return Some(fail());
    };
    let ret = ret.trim_start_matches("noundef ").trim();
    let mut built = "poison".to_string();
    for k in 0..n {
        let at = place(&mut out, k);
        let one = if n == 1 { lhs.clone() } else { tmp(&format!("r{k}")) };
        match image {
            true => out.push(format!(
                "{one} = call i32 @__ferrocl_block_dword(ptr addrspace(1) {base}, i32 {x}, i32 {at}){dbg}"
            )),
            false => out.push(format!("{one} = load i32, ptr addrspace(1) {at}, align 4{dbg}")),
        }
        if n > 1 {
            let next = tmp(&format!("b{k}"));
            out.push(format!("{next} = insertelement {vector} {built}, i32 {one}, i32 {k}{dbg}"));
            built = next;
        }
    }
    if n > 1 {
        out.push(format!("{lhs} = bitcast {vector} {built} to {ret}{dbg}"));
    }
    if image {
        declared.insert("declare i32 @__ferrocl_block_dword(ptr addrspace(1), i32, i32)".into());
    }
    Some(Ok(indented(out)))
}

/// An argument's type as written (`<8 x i32>` of `<8 x i32> noundef %x`).
fn type_text(argument: &str) -> Option<&str> {
    let (_, rest) = super::ir_type::parse(argument)?;
    Some(argument[..argument.len() - rest.len()].trim())
}

/// Instructions as the module writes them (a line starting `%0 =` would read as a type).
fn indented(lines: Vec<String>) -> Vec<String> {
    lines.into_iter().map(|l| if l.starts_with(' ') { l } else { format!("  {l}") }).collect()
}

/// The pipe functions of a work-group or sub-group (OpenCL C 6.13.16.3), which clang
/// calls `__work_group_reserve_read_pipe`, `__sub_group_commit_write_pipe` and so on.
fn is_group_pipe(name: &str) -> bool {
    let rest = name.strip_prefix("__work_group_").or_else(|| name.strip_prefix("__sub_group_"));
    rest.is_some_and(|r| {
        matches!(r, "reserve_read_pipe" | "reserve_write_pipe" | "commit_read_pipe" | "commit_write_pipe")
    })
}

/// A work-group or sub-group pipe reservation or commit, which every work-item of the
/// group reaches, as calls this pass expands further (builtins/clc/pipes.c): the
/// leader (local id 0) reserves and a sum gives every work-item its id; a commit waits
/// for the group at a barrier (every packet is read or written) and the leader commits.
/// `n` numbers the values it defines.
fn group_pipe(line: &str, declared: &mut BTreeSet<String>, n: &mut usize) -> Option<Result<Vec<String>, String>> {
    let (name, open) = callee_names(line).into_iter().find(|(n, _)| is_group_pipe(n))?;
    let fail = || Err(format!("cannot expand the pipe call '{}'", line.trim()));
    let Some(close) = matching_paren(line, open) else { return Some(fail()) };
    let args = split_top(&line[open + 1..close]);
    if args.len() != 4 {
        return Some(fail());
    }
    let (sub, reading) = (name.starts_with("__sub_group_"), name.contains("_read_"));
    let dbg = line.find(", !dbg ").map_or("", |at| &line[at..]);
    *n += 1;
    let v = format!("%ferrocl.pipe.{n}");
    let mut out = Vec::new();
    let commit = name.contains("_commit_");
    if commit {
        let barrier = if sub { SUB_GROUP_BARRIER } else { "@_Z7barrierj" };
        out.push(format!("  call void {barrier}(i32 3){dbg}"));
    }
    out.push(match sub {
        true => format!("  {v}.id = call i32 @_Z22get_sub_group_local_idv(){dbg}"),
        false => format!("  {v}.id = call i64 @_Z19get_local_linear_idv(){dbg}"),
    });
    out.push(format!("  {v}.leads = icmp eq {} {v}.id, 0", if sub { "i32" } else { "i64" }));
    let (pipe, second, reading) = (args[0], args[1], i32::from(reading));
    if commit {
        declared.insert("declare void @__ferrocl_pipe_commit(ptr addrspace(1), ptr, i1, i32)".into());
        out.push(format!("  call void @__ferrocl_pipe_commit({pipe}, {second}, i1 {v}.leads, i32 {reading}){dbg}"));
        return Some(Ok(out));
    }
    let Some((lhs, _)) = line.split_once(" = ") else { return Some(fail()) };
    declared.insert("declare i64 @__ferrocl_pipe_reserve(ptr addrspace(1), i32, i1, i32)".into());
    let sum = if sub { "@_Z20sub_group_reduce_addm" } else { "@_Z21work_group_reduce_addm" };
    out.extend([
        format!("  {v}.mine = call i64 @__ferrocl_pipe_reserve({pipe}, {second}, i1 {v}.leads, i32 {reading}){dbg}"),
        format!("  {v}.all = call i64 {sum}(i64 {v}.mine){dbg}"),
        format!("{lhs} = inttoptr i64 {v}.all to ptr"),
    ]);
    Some(Ok(out))
}

/// Expands every collective call of the module; the text is unchanged without any.
pub(crate) fn expand_all(text: &str) -> Result<String, String> {
    let pipes = text.contains("_group_reserve_");
    if !pipes && (!text.contains("@_Z") || !(text.contains("work_group_") || text.contains("sub_group_"))) {
        // (cl_intel_subgroups' functions are `intel_sub_group_*`.)
        return Ok(text.to_string());
    }
    let mut declared = BTreeSet::new();
    let (mut writes, mut pipe_values, mut sites) = (0, 0, 0);
    let mut out = String::with_capacity(text.len() + 1024);
    let mut emit = |line: &str, declared: &mut BTreeSet<String>| -> Result<(), String> {
        let call = line.contains("call ") && !line.starts_with("declare ");
        let expanded = block_io(line, declared, &mut writes).or_else(|| expand(line, declared, &mut sites));
        match call.then_some(expanded).flatten() {
            Some(lines) => lines?.iter().for_each(|l| {
                out.push_str(l);
                out.push('\n');
            }),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
        Ok(())
    };
    for line in text.lines() {
        if line.starts_with("declare ") && callee_names(line).iter().any(|(n, _)| is_group_pipe(n)) {
            continue;
        }
        match (pipes && line.contains("call ")).then(|| group_pipe(line, &mut declared, &mut pipe_values)).flatten() {
            Some(lines) => lines?.iter().try_for_each(|l| emit(l, &mut declared))?,
            None => emit(line, &mut declared)?,
        }
    }
    if !declared.is_empty() && !out.contains("declare void @_Z7barrierj(") {
        declared.insert("declare void @_Z7barrierj(i32)".into());
    }
    for (call, declaration) in [
        (format!("call void {SUB_GROUP_BARRIER}("), format!("declare void {SUB_GROUP_BARRIER}(i32)")),
        ("call i32 @_Z22get_sub_group_local_idv(".into(), "declare i32 @_Z22get_sub_group_local_idv()".into()),
        ("call i32 @_Z18get_sub_group_sizev(".into(), "declare i32 @_Z18get_sub_group_sizev()".into()),
        ("call i64 @_Z19get_local_linear_idv(".into(), "declare i64 @_Z19get_local_linear_idv()".into()),
    ] {
        let name = &declaration[declaration.find('@').unwrap_or(0)..declaration.find('(').unwrap_or(0) + 1];
        if out.contains(&call) && !out.lines().any(|l| l.starts_with("declare ") && l.contains(name)) {
            declared.insert(declaration);
        }
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
    fn group_pipe_reservations_become_a_leaders_reservation_summed_and_commits_a_barrier() {
        let ir = "define void @k(ptr addrspace(1) %p, i32 %n) {\n  \
                  %r = call ptr @__work_group_reserve_read_pipe(ptr addrspace(1) %p, i32 %n, i32 4, i32 4)\n  \
                  call void @__sub_group_commit_write_pipe(ptr addrspace(1) %p, ptr %r, i32 4, i32 4)\n  ret void\n}\n\
                  declare ptr @__work_group_reserve_read_pipe(ptr addrspace(1), i32, i32, i32)\n";
        let out = expand_all(ir).unwrap();
        assert!(out.contains("call i64 @_Z19get_local_linear_idv()"), "{out}");
        assert!(out.contains("@__ferrocl_pipe_reserve(ptr addrspace(1) %p, i32 %n, i1 %ferrocl.pipe.1.leads, i32 1)"));
        // The sum is expanded like any reduction.
        assert!(out.contains("@__ferrocl_wg_reduce_add_m()"), "{out}");
        assert!(out.contains("%r = inttoptr i64 %ferrocl.pipe.1.all to ptr"));
        let barrier = out.find("call void @_Z17sub_group_barrierj(i32 3)").unwrap();
        let commit =
            out.find("call void @__ferrocl_pipe_commit(ptr addrspace(1) %p, ptr %r, i1 %ferrocl.pipe.2.leads, i32 0)");
        assert!(commit.is_some_and(|c| c > barrier), "{out}");
        assert!(!out.contains("declare ptr @__work_group_reserve_read_pipe"));
    }

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

    #[test]
    fn intel_shuffles_of_vectors_go_lane_by_lane_through_planes() {
        // float2 arrives as a double; down's second operand takes the planes after the
        // first's; up's current operand is its second argument.
        let down = "  %3 = call double @_Z28intel_sub_group_shuffle_downDv2_fS_j(double %a, double %b, i32 %d)\n";
        let out = expand_all(down).unwrap();
        assert!(out.contains("%__fcl.bc.3.v = bitcast double %a to <2 x float>\n"), "{out}");
        assert!(out.contains("call void @__ferrocl_sg_put_lane_f(float %__fcl.bc.3.f1, i32 3)\n"), "{out}");
        assert!(out.contains("%__fcl.bc.3.g1 = call float @__ferrocl_sg_lane_down_f(i32 1, i32 2, i32 %d)\n"), "{out}");
        assert!(out.contains("%3 = bitcast <2 x float> %__fcl.bc.3.r1 to double\n"), "{out}");
        assert!(out.contains("declare float @__ferrocl_sg_lane_down_f(i32, i32, i32)"), "{out}");
        let up = "  %4 = call <4 x i32> @_Z26intel_sub_group_shuffle_upDv4_iS_j(<4 x i32> %p, <4 x i32> %c, i32 2)\n";
        let out = expand_all(up).unwrap();
        assert!(out.contains("%__fcl.bc.4.e0 = extractelement <4 x i32> %c, i32 0\n"), "current first: {out}");
        assert!(out.contains("%__fcl.bc.4.f0 = extractelement <4 x i32> %p, i32 0\n"), "{out}");
        let xor = "  %5 = call <4 x float> @_Z27intel_sub_group_shuffle_xorDv4_fj(<4 x float> %x, i32 5)\n";
        assert!(expand_all(xor).unwrap().contains("call float @__ferrocl_sg_lane_xor_f(i32 3, i32 5)\n"));
    }

    #[test]
    fn block_reads_and_writes_become_the_sub_groups_consecutive_accesses() {
        let read = "  %6 = call double @_Z27intel_sub_group_block_read2PU3AS1Kj(ptr addrspace(1) noundef %p)\n";
        let out = expand_all(read).unwrap();
        for line in [
            "  %__fcl.bk.6.lid = call i32 @_Z22get_sub_group_local_idv()\n",
            "  %__fcl.bk.6.o1 = mul i32 %__fcl.bk.6.n, 1\n",
            "  %__fcl.bk.6.i1 = add i32 %__fcl.bk.6.lid, %__fcl.bk.6.o1\n",
            "  %__fcl.bk.6.r1 = load i32, ptr addrspace(1) %__fcl.bk.6.p1, align 4\n",
            "  %6 = bitcast <2 x i32> %__fcl.bk.6.b1 to double\n",
            "declare i32 @_Z18get_sub_group_sizev()\n",
        ] {
            assert!(out.contains(line), "{line}in:\n{out}");
        }
        let write =
            "  call void @_Z28intel_sub_group_block_write4PU3AS1jDv4_j(ptr addrspace(1) %q, <4 x i32> noundef %v)\n\
                     call void @_Z27intel_sub_group_block_writePU3AS1jj(ptr addrspace(1) %q, i32 %s)\n";
        let out = expand_all(write).unwrap();
        assert!(out.contains("  %__fcl.bk.w1.e3 = extractelement <4 x i32> %__fcl.bk.w1.d, i32 3\n"), "{out}");
        assert!(out.contains("  store i32 %s, ptr addrspace(1) %__fcl.bk.w2.p0, align 4\n"), "two writes apart: {out}");
        let image =
            "  %7 = call i32 @_Z26intel_sub_group_block_read14ocl_image2d_roDv2_i(ptr addrspace(1) %im, double %c)\n";
        let out = expand_all(image).unwrap();
        assert!(out.contains("  %__fcl.bk.7.dx = shl i32 %__fcl.bk.7.lid, 2\n"), "{out}");
        assert!(
            out.contains(
                "  %7 = call i32 @__ferrocl_block_dword(ptr addrspace(1) %im, i32 %__fcl.bk.7.x, i32 %__fcl.bk.7.y)\n"
            ),
            "{out}"
        );
    }
}
