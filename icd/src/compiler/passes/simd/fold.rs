//! A group's stride loop folded into the lanes of its first chunk.
//!
//! `for (i = get_local_id(0); i < n; i += get_local_size(0))` (and the grid-stride form,
//! `i = get_global_id(0)`, `i += get_global_size(0)`) run by chunks of `WIDTH`
//! work-items walks memory in the chunks' order: each chunk runs its whole loop, its
//! lanes' accesses a stride of the group size apart, before the next chunk starts on
//! the elements in between. The work-items' iterations are independent (no barrier
//! orders them), so the lanes of the first chunk may run them all, chunk after chunk in
//! each step of the loop, which walks the elements in order:
//!
//! ```text
//! for (b = i of work-item 0; b < n; b += S)  // shared: the lanes branch alike
//!     for (c = 0; c < nx; c += WIDTH)         // the row's chunks, in memory order
//!         if (lid + c < nx && b + c + lid < n) body(b + c + lid)   // work-item lid + c
//! ```
//!
//! The launcher then runs only the first chunk of each row (`launcher`, `Entry::fold`).
//! Each work-item still takes its own steps in its own order; only how the work-items'
//! steps interleave changes, which OpenCL leaves open between barriers. Every other
//! work-item's value is work-item 0's plus its id, and the test is monotonic, so when
//! work-item 0's value fails it every other's does.
//!
//! Folded only where that is all the kernel does per work-item (anything else would
//! run for `WIDTH` work-items instead of all of them): one loop the lanes leave apart,
//! entered and left once, inside any loops the lanes run alike; its variable starts at
//! the lane plus a shared value (made of ids, sizes and constants where the test is
//! unsigned, so no lane's start wraps), steps by a group or range size, a product of
//! them, a variable holding one, or a positive constant, and is compared `<`/`<=` with
//! a shared bound; a body that reads no per-lane id, no private variable it does not
//! set in the same step, and makes no work-group or atomic call or printf; code outside
//! the loop that stores nothing but private variables, calls nothing but queries and
//! LLVM's computing intrinsics, and branches alike in every lane. A `while` loop whose
//! body ends by stepping its variable gets that step cut into a latch of its own first
//! (`split_steps`).
//!
//! A whole chunk whose last element passes the loop's test runs a second copy of the
//! body that no lane skips (no masks); the last chunk of a step runs the masked one.
//!
//! On the 2-core Zen 1 machine, one core (`shp`, the bench's kernels and launches, best
//! of 40, `FERROCL_FOLD=0` / default, ms): block-stride 1.45-1.47 / 0.77-0.80 (the
//! straight-line kernel over the same data 0.67-0.73), grid-stride 2.79-2.80 / 0.87-0.94,
//! tiles from global 3.23-3.24 / 2.65-2.69. Folded with one masked body for every
//! chunk, block-stride took 1.06-1.27: the masks, not the order, were most of the cost.

use std::collections::{HashMap, HashSet};

use super::super::context::{self, Answer};
use super::super::ir_text::{callee_names, def_of, label_of, labels_in, opencl_name, split_top};
use super::cfg::Cfg;
use super::{code, copy_operands, group_function, opcode, operands, query, Analysis, CHUNKS, WIDTH};
use crate::compiler::passes::launcher::CTX;

/// A region of a resumable kernel (`regions`): its number, and the first block of each
/// region by number (the targets of the switch on `%__fcl_resume`).
#[derive(Clone, Copy)]
pub(super) struct Region<'r> {
    pub(super) number: usize,
    pub(super) entries: &'r [String],
}

/// `lines` (a kernel body as the copy reads it) with its stride loop folded, or why not;
/// in a resumable kernel, the loop of one `region`, which the launcher then runs for
/// the first chunk of a row alone (`launcher::Entry::fold`).
pub(super) fn fold(lines: &[&str], a: &Analysis, region: Option<Region<'_>>) -> Result<Vec<String>, String> {
    // A folded loop runs other work-items' steps in the first chunk's lanes, whose
    // sub-group answers are the first chunk's.
    let sub_group_query = |c: &str| callee_names(c).iter().any(|(n, _)| context::answer(n) == Some(Answer::SubGroup));
    if lines.iter().any(|l| sub_group_query(code(l))) {
        return Err("sub-group queries".into());
    }
    let cfg = a.cfg.as_ref().ok_or("irreducible control flow")?;
    let n = a.blocks.len();
    let block = |b: usize| &lines[a.blocks[b].start..=a.blocks[b].end];
    let terminator = |b: usize| code(lines[a.blocks[b].end]).trim_start();
    // A branch the lanes take together (a uniform loop around the stride loop).
    let together = |b: usize| operands(terminator(b)).iter().all(|v| !a.varies(v));
    let (scope, prefix) = match region {
        None => (vec![true; n], "fold".to_string()),
        Some(r) => (region_blocks(cfg, a, r)?, format!("fold{}", r.number)),
    };
    let (h, inside) = the_loop(cfg, &|b| !together(b), &scope)?;

    // Entered and left once: from the header, its true way in.
    let header_end = terminator(h);
    let targets = labels_in(header_end);
    let (into, out) = match (header_end.strip_prefix("br i1 "), targets.as_slice()) {
        (Some(_), [t, f]) => (*t, *f),
        _ => return Err("a loop whose header does not test".into()),
    };
    let index = |label: &str| a.blocks.iter().position(|b| b.label == label);
    let (into_b, out_b) = (index(into).ok_or("unknown block")?, index(out).ok_or("unknown block")?);
    if !inside[into_b] || inside[out_b] {
        return Err("a loop left when its test holds".into());
    }
    // clang's cleanup blocks branch to an `unreachable` block where no way leads.
    let dead = |b: usize| terminator(b).starts_with("unreachable") && a.blocks[b].start + 1 >= a.blocks[b].end;
    for b in (0..n).filter(|&b| inside[b]) {
        if cfg.succs[b].iter().any(|&s| !inside[s] && !dead(s)) && b != h {
            return Err("a loop left from its body".into());
        }
        if terminator(b).starts_with("ret") || terminator(b).starts_with("unreachable") {
            return Err("a return inside the loop".into());
        }
    }
    if (0..n).filter(|&b| !inside[b] && cfg.succs[b].contains(&h)).count() != 1 {
        return Err("a loop entered from several blocks".into());
    }
    let latches: Vec<usize> = (0..n).filter(|&b| inside[b] && cfg.succs[b].contains(&h)).collect();
    let &[latch] = latches.as_slice() else { return Err("a loop with several ways back".into()) };
    if cfg.succs[latch].len() != 1 || latch == h {
        return Err("a loop whose last block tests".into());
    }
    // The header and the latch get new neighbours: no phi may name them.
    let named = [&a.blocks[h].label, &a.blocks[latch].label].map(|l| format!("%{l} ]"));
    if lines.iter().any(|l| {
        def_of(code(l)).is_some_and(|(_, r)| opcode(r).0 == "phi") && named.iter().any(|x| l.contains(x.as_str()))
    }) {
        return Err("a phi of the loop's header or latch".into());
    }

    // Outside the loop: one way through, nothing stored but private variables, no
    // calls but queries and intrinsics.
    for b in (0..n).filter(|&b| scope[b] && !inside[b]) {
        if !together(b) {
            return Err("a branch on a lane's value outside the loop".into());
        }
        for line in block(b) {
            let c = code(line).trim_start();
            if let Some(ptr) = stored_to(c) {
                if !a.private.contains_key(&ptr) {
                    return Err("a store outside the loop".into());
                }
            }
            if !callee_names(c).is_empty() && !harmless_call(c) && !slot_copy(c, lines, a, &scope) {
                return Err("a call outside the loop".into());
            }
        }
    }

    // The test: `i < bound` (or `bound > i`) with a shared bound.
    let defs: HashMap<&str, &str> = lines.iter().filter_map(|l| def_of(code(l))).collect();
    let cond = header_end.strip_prefix("br i1 ").and_then(|r| r.split(',').next()).unwrap_or("").trim();
    let test = defs.get(cond).copied().ok_or("a loop test that is not a comparison")?;
    let (op, rest) = opcode(test);
    if op != "icmp" {
        return Err("a loop test that is not a comparison".into());
    }
    let (pred, rest) = rest.split_once(' ').ok_or("unreadable comparison")?;
    let sides: Vec<String> = split_top(rest).iter().map(|p| p.rsplit(' ').next().unwrap_or("").to_string()).collect();
    let [left, right] = sides.as_slice() else { return Err("unreadable comparison".into()) };
    let variable = |v: &str| loaded_variable(v, &defs);
    let (var, bound) = match (variable(left), variable(right)) {
        (Some(v), _) if matches!(pred, "slt" | "ult" | "sle" | "ule") => (v, right),
        (_, Some(v)) if matches!(pred, "sgt" | "ugt" | "sge" | "uge") => (v, left),
        _ => return Err("a loop test that is not the variable below a bound".into()),
    };
    if a.varies(bound) {
        return Err("a loop bound that differs between lanes".into());
    }
    if !a.consecutive.contains(&var) {
        return Err("a loop variable that is not the lane plus a shared value".into());
    }
    let Some(ty) = a.allocas.get(&var).map(|t| t.to_string()) else { return Err("unknown loop variable".into()) };
    for line in block(h) {
        let c = code(line).trim_start();
        if stored_to(c).is_some() || (!callee_names(c).is_empty() && !matches!(query(c), Ok(Some(false)))) {
            return Err("a loop test with effects".into());
        }
    }

    // The step: the variable plus a size, once, at the end of the loop.
    let stores: Vec<usize> = (0..lines.len())
        .filter(|&i| inside[a.block_of[i]] && stored_to(code(lines[i]).trim_start()).as_deref() == Some(var.as_str()))
        .collect();
    let &[step] = stores.as_slice() else { return Err("a loop variable set more than once in the loop".into()) };
    if a.block_of[step] != latch {
        return Err("a loop variable set in the body".into());
    }
    let stored = split_top(code(lines[step]).trim_start().strip_prefix("store ").unwrap_or(""))
        .first()
        .and_then(|p| p.rsplit(' ').next())
        .unwrap_or("")
        .to_string();
    let mut stores: HashMap<String, Vec<String>> = HashMap::new();
    for line in lines {
        let c = code(line).trim_start();
        if let (Some(ptr), Some(rest)) = (stored_to(c), c.strip_prefix("store ")) {
            let value = split_top(rest).first().and_then(|p| p.rsplit(' ').next()).unwrap_or("").to_string();
            stores.entry(ptr).or_default().push(value);
        }
    }
    if !steps_forward(&stored, &var, &defs, &stores) {
        return Err("a loop variable that does not step forward by a size".into());
    }
    // An unsigned test orders the lanes' values only where none wraps: `(uint)(lid - 2)`
    // is past any bound in lanes 0 and 1 and below it in the others. Each value the
    // variable starts from must be a sum of ids, sizes and constants.
    if pred.starts_with('u') {
        let starts: Vec<&String> =
            stores.get(&var).map(|v| v.iter().filter(|x| **x != stored).collect()).unwrap_or_default();
        if starts.is_empty() || !starts.iter().all(|x| never_negative(x, &defs, &stores, 0)) {
            return Err("an unsigned loop test of a variable that may start below zero".into());
        }
    }
    // The latch only steps: it runs once a step, for the first work-item's value
    // (`split_steps` cuts a `while` loop's step from the end of its body).
    for line in block(latch) {
        if label_of(line).is_some() {
            continue;
        }
        let c = code(line).trim_start();
        if !steps_only(c)
            || stored_to(c).is_some_and(|p| p != var)
            || loaded_from(c).is_some_and(|p| p != var && a.varies(&p))
        {
            return Err("a loop whose last block does more than step".into());
        }
    }

    // The body: no lane ids, nothing carried from one step to the next.
    // The blocks after the loop.
    let mut after = vec![false; n];
    let mut work = vec![out_b];
    while let Some(b) = work.pop() {
        if !after[b] && !inside[b] {
            after[b] = true;
            work.extend(cfg.succs[b].iter().copied());
        }
    }
    // Variables of one step: declared in the loop, or clang's temporaries (no lifetime
    // anywhere: `cleanup.dest.slot`) used in the loop alone.
    let mut in_loop_lifetime: HashSet<String> =
        (0..lines.len()).filter(|&i| inside[a.block_of[i]]).filter_map(|i| lifetime_start(code(lines[i]))).collect();
    let with_lifetime: HashSet<String> = lines.iter().filter_map(|l| lifetime_start(code(l))).collect();
    // Blocks outside the loop from which it is entered again (in a loop around it).
    let mut again = vec![false; n];
    let mut work: Vec<usize> = (0..n).filter(|&b| !inside[b] && cfg.succs[b].contains(&h)).collect();
    while let Some(b) = work.pop() {
        if !again[b] && !inside[b] {
            again[b] = true;
            work.extend((0..n).filter(|&p| cfg.succs[p].contains(&b)));
        }
    }
    // Read outside the loop, or set where a step may follow (a store after the loop
    // that reaches no step carries nothing into one).
    let used_outside: HashSet<String> = (0..lines.len())
        .filter(|&i| !inside[a.block_of[i]])
        .filter(|&i| again[a.block_of[i]] || stored_to(code(lines[i]).trim_start()).is_none())
        .flat_map(|i| operands(code(lines[i])))
        .filter_map(|v| a.private.get(&v).cloned())
        .collect();
    in_loop_lifetime.extend(
        a.allocas.keys().filter(|r| !with_lifetime.contains(*r) && !used_outside.contains(*r) && **r != var).cloned(),
    );
    let defined_inside: HashSet<&str> = (0..lines.len())
        .filter(|&i| inside[a.block_of[i]])
        .filter_map(|i| def_of(code(lines[i])).map(|d| d.0))
        .collect();
    for i in (0..lines.len()).filter(|&i| inside[a.block_of[i]]) {
        let c = code(lines[i]).trim_start();
        if !callee_names(c).is_empty() {
            if matches!(query(c), Ok(Some(true)) | Err(_)) {
                return Err("a lane's id read in the loop".into());
            }
            if forbidden_in_body(c) {
                return Err("a work-group, atomic or printf call in the loop".into());
            }
        }
        let rhs = def_of(c).map_or(c, |(_, r)| r.trim_start());
        if ["atomicrmw", "cmpxchg", "fence"].iter().any(|k| rhs.starts_with(k)) || c.starts_with("fence") {
            return Err("an atomic access in the loop".into());
        }
        if c.starts_with("store volatile") || c.contains("load volatile") || c.contains("store atomic") {
            return Err("a volatile access in the loop".into());
        }
        let root = |p: &str| a.private.get(p).cloned();
        if let Some(r) = stored_to(c).and_then(|p| root(&p)) {
            if r != var && !in_loop_lifetime.contains(&r) {
                return Err("a private variable carried between steps".into());
            }
        }
        if let Some(r) = loaded_from(c).and_then(|p| root(&p)) {
            if r != var && !in_loop_lifetime.contains(&r) && a.varies(&r) {
                return Err("a private variable set before the loop read in it".into());
            }
        }
        for v in operands(c) {
            if !defined_inside.contains(v.as_str()) && a.varies(&v) && !a.private.contains_key(&v) {
                return Err("a value from before the loop read in it".into());
            }
        }
    }
    // After the loop: the variable and the body's variables unread.
    for b in (0..n).filter(|&b| after[b]) {
        for line in block(b) {
            let c = code(line).trim_start();
            if let Some(r) = loaded_from(c).and_then(|p| a.private.get(&p).cloned()) {
                if r == var || in_loop_lifetime.contains(&r) {
                    return Err("the loop's variables read after it".into());
                }
            }
        }
    }
    let found = Found { inside, h, latch, into, var: &var, ty: &ty, prefix: &prefix, locals: &in_loop_lifetime };
    Ok(rewrite(lines, a, &found))
}

/// The loop to fold: the outermost whose test differs between lanes (`varying`, of a
/// header block); every other loop holds it (and runs alike in every lane, which the
/// branches outside it say) or lies inside it.
fn the_loop<'c>(
    cfg: &'c Cfg,
    varying: &dyn Fn(usize) -> bool,
    scope: &[bool],
) -> Result<(usize, &'c Vec<bool>), String> {
    let loops: Vec<(usize, &Vec<bool>)> = cfg.loops().iter().filter(|(h, _)| scope[*h]).map(|(h, b)| (*h, b)).collect();
    // Outermost first.
    let &(h, body) = loops.iter().find(|(h, _)| varying(*h)).ok_or("no loop the lanes leave apart")?;
    for &(g, other) in &loops {
        if g != h && !other[h] && !body[g] {
            return Err("several loops".into());
        }
    }
    Ok((h, body))
}

/// The blocks region `r` runs: those its first block reaches (up to its `ret`s), and the
/// function's entry block; `Err` where another region reaches one of them (regions
/// that share code cannot fold it for one of them alone).
fn region_blocks(cfg: &Cfg, a: &Analysis, r: Region<'_>) -> Result<Vec<bool>, String> {
    let reach = |label: &str| -> Result<Vec<bool>, String> {
        let start = a.blocks.iter().position(|b| b.label == label).ok_or("unknown region")?;
        let mut seen = vec![false; a.blocks.len()];
        let mut work = vec![start];
        while let Some(b) = work.pop() {
            if !seen[b] {
                seen[b] = true;
                work.extend(cfg.succs[b].iter().copied());
            }
        }
        Ok(seen)
    };
    let mut mine = reach(r.entries.get(r.number).ok_or("unknown region")?)?;
    for (other, label) in r.entries.iter().enumerate().filter(|&(o, _)| o != r.number) {
        if reach(label)?.iter().zip(&mine).any(|(x, y)| *x && *y) {
            return Err(format!("a region sharing code with region {other}"));
        }
    }
    mine[0] = true;
    Ok(mine)
}

/// A copy between a private variable and its slot (`regions::slot_addresses`) where a
/// region resumes or ends, which folding keeps: from the uniform block or the
/// work-item's frame into the variable (the analysis counts the frame's as varying),
/// and from the variable into the uniform block (a value every work-item shares) or
/// back into its frame slot where the region sets it no other way (unchanged, so
/// work-items the fold leaves out keep theirs).
fn slot_copy(c: &str, lines: &[&str], a: &Analysis, scope: &[bool]) -> bool {
    let Some((to, from)) = copy_operands(c) else { return false };
    let private = |v: &str| a.allocas.contains_key(v);
    let slot = |v: &str, kinds: &[&str]| kinds.iter().any(|k| v.starts_with(&format!("%__fcl_{k}.")));
    if private(&to) && slot(&from, &["u", "f"]) {
        return true;
    }
    if private(&from) && slot(&to, &["w"]) {
        return true;
    }
    if !(private(&from) && slot(&to, &["f"])) {
        return false;
    }
    // Set in the region only by the copy from the same slot.
    (0..lines.len()).filter(|&i| scope[a.block_of[i]]).all(|i| {
        let l = code(lines[i]).trim_start();
        let stored = stored_to(l).and_then(|p| a.private.get(&p).cloned());
        let copied = copy_operands(l).and_then(|(t, f)| a.private.get(&t).map(|root| (root.clone(), f)));
        stored.as_deref() != Some(from.as_str()) && copied.map_or(true, |(root, f)| root != from || f == to)
    })
}

/// The loop `fold` folds: its blocks, header and latch, the header's way into the
/// body, the variable and its type.
#[derive(Clone, Copy)]
struct Found<'a> {
    inside: &'a [bool],
    h: usize,
    latch: usize,
    into: &'a str,
    var: &'a str,
    ty: &'a str,
    /// The names the fold adds begin with it: `fold`, or `fold{n}` in region `n`.
    prefix: &'a str,
    /// The body's own private variables (set and read in one step).
    locals: &'a HashSet<String>,
}

/// The folded text. The loop runs on the first work-item's value of the variable
/// (`%fold.b`, shared: every other work-item's is that plus its id, so when it fails the
/// test they all do); in each step a loop over the row's chunks (`%fold.c`, shared too)
/// gives each lane its work-item's element (`%fold.j`), which the body reads instead of
/// the variable, under the header's test of that element and a test that the work-item
/// is in the row. The body's ways to the latch go through the chunk loop's step.
fn rewrite(lines: &[&str], a: &Analysis, l: &Found<'_>) -> Vec<String> {
    let Found { inside, h, latch, into, var, ty, prefix: p, .. } = *l;
    let latch_label = &a.blocks[latch].label;
    let header = &a.blocks[h];
    let var_ptr = format!("ptr {var},");
    let var_store = format!("ptr {var}, align");
    // Each step moves a part of the imports the kernel's async copies left to move while
    // it computes (`COPY_STEP`).
    let imports = lines.iter().any(|l| {
        callee_names(code(l)).iter().any(|(c, _)| opencl_name(c).is_some_and(|n| n.starts_with("async_work_group")))
    });
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 40);
    // The variables go at the top of the entry block, after its label if it has one.
    let labelled = lines.first().is_some_and(|l| label_of(l).is_some());
    out.extend(lines.iter().take(usize::from(labelled)).map(|l| l.to_string()));
    for v in ["b", "c", "j", "l"] {
        out.push(format!("  %{p}.{v} = alloca {ty}, align 8"));
    }
    let many = interleaved(lines, a, l);
    if let Some(m) = &many {
        out.extend(m.allocas.iter().cloned());
    }
    // The lane's id, the chunk's first and the row's size as `ty`.
    let narrow = |out: &mut Vec<String>, d: &str, v: &str| match ty {
        "i64" => out.push(format!("  {d} = add i64 {v}, 0")),
        _ => out.push(format!("  {d} = trunc i64 {v} to {ty}")),
    };
    // The chunk loop's step past `n` work-items, a block of its own named `label`.
    let step = |out: &mut Vec<String>, label: &str, n: u64| {
        out.push(format!("{p}.{label}:"));
        out.push(format!("  %{p}.{label}.was = load {ty}, ptr %{p}.c, align 8"));
        out.push(format!("  %{p}.{label}.then = add {ty} %{p}.{label}.was, {n}"));
        out.push(format!("  store {ty} %{p}.{label}.then, ptr %{p}.c, align 8"));
        out.push(format!("  br label %{p}.head"));
    };
    let preheader = (0..a.blocks.len())
        .find(|&b| !inside[b] && a.cfg.as_ref().is_some_and(|cfg| cfg.succs[b].contains(&h)))
        .unwrap_or(0);
    for (i, line) in lines.iter().enumerate().skip(usize::from(labelled)) {
        let b = a.block_of[i];
        let c = code(line);
        if b == preheader && i == a.blocks[b].end {
            out.push(format!("  %{p}.i0 = load {ty}, ptr {var}, align 4"));
            out.push(format!("  %{p}.b0 = call {ty} @{FIRST_LANE}({ty} %{p}.i0)"));
            out.push(format!("  store {ty} %{p}.b0, ptr %{p}.b, align 8"));
            out.push(line.to_string());
            continue;
        }
        if b == latch && i == a.blocks[latch].start {
            step(&mut out, "next", WIDTH);
        }
        if b == h && i < header.end {
            out.push(c.replace(&var_ptr, &format!("ptr %{p}.b,")));
            continue;
        }
        if b == latch {
            // The step, of the first work-item's value.
            out.push(c.replace(&var_ptr, &format!("ptr %{p}.b,")).replace(&var_store, &format!("ptr %{p}.b, align")));
            continue;
        }
        if i == header.end {
            out.push(c.replacen(&format!("label %{into},"), &format!("label %{p}.init,"), 1));
            out.push(format!("{p}.init:"));
            out.push(format!("  store {ty} 0, ptr %{p}.c, align 8"));
            if imports {
                out.push(format!("  call void @{COPY_STEP}(ptr {CTX})"));
            }
            out.push(format!("  br label %{p}.head"));
            out.push(format!("{p}.head:"));
            out.push(format!("  %{p}.k = load {ty}, ptr %{p}.c, align 8"));
            out.push(format!("  %{p}.nx64 = call i64 @_Z14get_local_sizej(i32 noundef 0, ptr {CTX})"));
            narrow(&mut out, &format!("%{p}.nx"), &format!("%{p}.nx64"));
            out.push(format!("  %{p}.more = icmp ult {ty} %{p}.k, %{p}.nx"));
            out.push(format!("  br i1 %{p}.more, label %{p}.body, label %{latch_label}"));
            // The header's test of a value in memory, its values renamed `prefix`.
            let defined: HashSet<&str> =
                lines[header.start..header.end].iter().filter_map(|l| def_of(code(l)).map(|d| d.0)).collect();
            let test_of = |out: &mut Vec<String>, ptr: &str, prefix: &str| {
                let renamed = |text: &str| {
                    super::linear::map_names(text, |n| {
                        defined.contains(format!("%{n}").as_str()).then(|| format!("{prefix}{n}"))
                    })
                };
                for l in &lines[header.start..header.end] {
                    if label_of(l).is_none() {
                        out.push(renamed(code(l)).replace(&var_ptr, &format!("ptr {ptr},")));
                    }
                }
                let cond = c.trim_start().strip_prefix("br i1 ").and_then(|r| r.split(',').next()).unwrap_or("");
                renamed(cond.trim())
            };
            // A whole chunk in the row whose last element passes the test (so every
            // lane's does, the test being monotonic) runs the body's second copy,
            // which no lane skips: no masks.
            out.push(format!("{p}.body:"));
            out.push(format!("  %{p}.first = load {ty}, ptr %{p}.b, align 8"));
            out.push(format!("  %{p}.chunk = add {ty} %{p}.first, %{p}.k"));
            out.push(format!("  %{p}.lid64 = call i64 @_Z12get_local_idj(i32 noundef 0, ptr {CTX})"));
            narrow(&mut out, &format!("%{p}.lid"), &format!("%{p}.lid64"));
            out.push(format!("  %{p}.elem = add {ty} %{p}.chunk, %{p}.lid"));
            out.push(format!("  store {ty} %{p}.elem, ptr %{p}.j, align 8"));
            // `CHUNKS` whole chunks that pass the test run interleaved (`interleaved`).
            if let Some(m) = &many {
                let span = CHUNKS * WIDTH;
                out.push(format!("  %{p}.ends = add {ty} %{p}.k, {span}"));
                out.push(format!("  %{p}.wholes = icmp ule {ty} %{p}.ends, %{p}.nx"));
                out.push(format!("  %{p}.lasts = add {ty} %{p}.chunk, {}", span - 1));
                out.push(format!("  store {ty} %{p}.lasts, ptr %{p}.l, align 8"));
                let last = test_of(&mut out, &format!("%{p}.l"), &format!("{p}.v."));
                out.push(format!("  %{p}.all = and i1 %{p}.wholes, {last}"));
                out.push(format!("  br i1 %{p}.all, label %{p}.many, label %{p}.one"));
                out.push(format!("{p}.many:"));
                for c in 1..CHUNKS {
                    out.push(format!("  %{p}.elem{c} = add {ty} %{p}.elem, {}", c * WIDTH));
                    out.push(format!("  store {ty} %{p}.elem{c}, ptr %{p}.j{c}, align 8"));
                }
                out.extend(m.lines.iter().cloned());
                out.push(format!("  br label %{p}.nexts"));
                step(&mut out, "nexts", span);
                out.push(format!("{p}.one:"));
            }
            out.push(format!("  %{p}.end = add {ty} %{p}.k, {WIDTH}"));
            out.push(format!("  %{p}.whole = icmp ule {ty} %{p}.end, %{p}.nx"));
            out.push(format!("  %{p}.last = add {ty} %{p}.chunk, {}", WIDTH - 1));
            out.push(format!("  store {ty} %{p}.last, ptr %{p}.l, align 8"));
            let last = test_of(&mut out, &format!("%{p}.l"), &format!("{p}.u."));
            out.push(format!("  %{p}.fast = and i1 %{p}.whole, {last}"));
            let first_body = a.blocks.iter().enumerate().find(|(b, _)| inside[*b] && *b != h && *b != latch);
            match first_body {
                Some(_) => out.push(format!("  br i1 %{p}.fast, label %{p}.fast.{into}, label %{p}.slow")),
                None => out.push(format!("  br label %{p}.slow")),
            }
            out.push(format!("{p}.slow:"));
            out.push(format!("  %{p}.item = add {ty} %{p}.lid, %{p}.k"));
            out.push(format!("  %{p}.in = icmp ult {ty} %{p}.item, %{p}.nx"));
            let cond = test_of(&mut out, &format!("%{p}.j"), &format!("{p}.t."));
            out.push(format!("  %{p}.go = and i1 %{p}.in, {cond}"));
            out.push(format!("  br i1 %{p}.go, label %{into}, label %{p}.next"));
            out.extend(fast_copy(lines, a, l));
            continue;
        }
        if inside[b] {
            let t = c.trim_start();
            if loaded_from(t).as_deref() == Some(var) {
                out.push(c.replace(&var_ptr, &format!("ptr %{p}.j,")));
                continue;
            }
            if i == a.blocks[b].end && labels_in(t).contains(&latch_label.as_str()) {
                out.push(c.replace(&format!("label %{latch_label}"), &format!("label %{p}.next")));
                continue;
            }
        }
        out.push(line.to_string());
    }
    out
}

/// The body's blocks again, for whole chunks (`rewrite`): labels and values renamed
/// `fold.fast.`, the variable read as the chunk's element, the latch reached through the
/// chunk loop's step.
fn fast_copy(lines: &[&str], a: &Analysis, l: &Found<'_>) -> Vec<String> {
    let Found { inside, h, latch, var, prefix: p, .. } = *l;
    let body: Vec<usize> = (0..a.blocks.len()).filter(|&b| inside[b] && b != h && b != latch).collect();
    let mut names: HashSet<String> = body.iter().map(|&b| format!("%{}", a.blocks[b].label)).collect();
    for &b in &body {
        for l in &lines[a.blocks[b].start..=a.blocks[b].end] {
            if let Some((d, _)) = def_of(code(l)) {
                names.insert(d.to_string());
            }
        }
    }
    let latch_label = format!("label %{}", a.blocks[latch].label);
    let var_ptr = format!("ptr {var},");
    let mut out = Vec::new();
    for &b in &body {
        for l in &lines[a.blocks[b].start..=a.blocks[b].end] {
            if let Some(label) = label_of(l) {
                out.push(format!("{p}.fast.{label}:"));
                continue;
            }
            let renamed = super::linear::map_names(code(l), |n| {
                names.contains(format!("%{n}").as_str()).then(|| format!("{p}.fast.{n}"))
            });
            out.push(
                renamed.replace(&var_ptr, &format!("ptr %{p}.j,")).replace(&latch_label, &format!("label %{p}.next")),
            );
        }
    }
    out
}

/// The longest one-block body (in lines of unoptimised IR) whose `CHUNKS` copies
/// `interleaved` makes: a longer one costs more to compile than it pays, and keeps
/// more values live than the registers hold. The bench's tile loop's body is 140.
const INTERLEAVED_LINES: usize = 512;

/// `CHUNKS` whole chunks the folded loop runs at once where its body is one block
/// (`super::CHUNKS` says why): their copies of the body interleaved line by line
/// (`rewrite`), and the private variables
/// the copies after the first need: each copy's values renamed `{prefix}.m{c}.`, its
/// element the chunk's `%{prefix}.j{c}`, the body's own variables its own. Different
/// work-items' steps in any order are what the lanes of one chunk already do (no
/// barrier orders them); each work-item's stay in its order. `None` where the body
/// has several blocks.
fn interleaved(lines: &[&str], a: &Analysis, l: &Found<'_>) -> Option<Interleaved> {
    let Found { inside, h, latch, into, var, ty, prefix: p, locals } = *l;
    if super::chunks() == 1 {
        return None;
    }
    let body: Vec<usize> = (0..a.blocks.len()).filter(|&b| inside[b] && b != h && b != latch).collect();
    let &[b] = body.as_slice() else { return None };
    if a.blocks[b].label != into || a.cfg.as_ref()?.succs[b] != [latch] {
        return None;
    }
    let block = &lines[a.blocks[b].start + 1..a.blocks[b].end];
    if block.len() > INTERLEAVED_LINES {
        return None;
    }
    let defined: HashSet<&str> = block.iter().filter_map(|l| def_of(code(l)).map(|d| d.0)).collect();
    let used: HashSet<String> = block.iter().flat_map(|l| operands(code(l))).collect();
    let locals: Vec<&String> = locals.iter().filter(|v| used.contains(*v)).collect();
    let mut allocas = Vec::new();
    for c in 1..CHUNKS {
        allocas.push(format!("  %{p}.j{c} = alloca {ty}, align 8"));
        for v in &locals {
            let line = lines.iter().find(|l| def_of(code(l)).is_some_and(|(d, _)| d == v.as_str()))?;
            allocas.push(code(line).replacen(v.as_str(), &format!("%{p}.m{c}.{}", &v[1..]), 1));
        }
    }
    let var_ptr = format!("ptr {var},");
    let copies: Vec<Vec<String>> = (0..CHUNKS)
        .map(|c| {
            let element = match c {
                0 => format!("ptr %{p}.j,"),
                _ => format!("ptr %{p}.j{c},"),
            };
            block
                .iter()
                .map(|l| {
                    let renamed = super::linear::map_names(code(l), |n| {
                        let name = format!("%{n}");
                        let own = defined.contains(name.as_str()) || (c > 0 && locals.contains(&&name));
                        own.then(|| format!("{p}.m{c}.{n}"))
                    });
                    renamed.replace(&var_ptr, &element)
                })
                .collect()
        })
        .collect();
    let lines = (0..block.len()).flat_map(|i| copies.iter().map(move |copy| copy[i].clone())).collect();
    Some(Interleaved { allocas, lines })
}

/// `interleaved`'s copies and the variables they add.
struct Interleaved {
    allocas: Vec<String>,
    lines: Vec<String>,
}

/// The first lane's value of its argument, shared by the lanes: the copy takes lane 0
/// of the vector (`Writer::call`).
pub(super) const FIRST_LANE: &str = "__ferrocl_fold_first";

/// Moves a step of the group's deferred imports (builtins/clc/workitem.c): called once
/// per step of a folded loop of a kernel that makes async copies, so that an import of
/// the next tile overlaps the computation on this one. Once for all lanes (`Writer::call`).
pub(super) const COPY_STEP: &str = "__ferrocl_copy_step";

/// A line a loop's step may hold: loads, casts, integer adds and multiplies, calls of
/// queries, stores, the branch back.
fn steps_only(c: &str) -> bool {
    let (_, rhs) = def_of(c).unwrap_or(("", c));
    matches!(opcode(rhs).0, "load" | "sext" | "zext" | "trunc" | "add" | "mul")
        || c.starts_with("store ")
        || c.starts_with("br label ")
        || (opcode(rhs).0 == "call" && harmless_call(c) && !c.contains("@llvm."))
}

/// `lines` with each block that ends a loop (branching back to a block above it) cut
/// in two where its last lines only step variables: a `while` loop whose body steps its
/// variable at its end gets a latch of its own, as a `for` loop has.
pub(super) fn split_steps(lines: Vec<String>) -> Vec<String> {
    let allocas: HashSet<String> = lines
        .iter()
        .filter_map(|l| {
            def_of(code(l)).filter(|(_, r)| r.trim_start().starts_with("alloca ")).map(|(d, _)| d.to_string())
        })
        .collect();
    let step = |c: &str| steps_only(c) && stored_to(c).map_or(true, |p| allocas.contains(&p));
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 8);
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if let Some(l) = label_of(line) {
            seen.insert(l.to_string());
            start = out.len();
        }
        let c = code(line).trim_start();
        let back = c.strip_prefix("br label %").map(str::trim).is_some_and(|t| seen.contains(t));
        if back {
            // The step: the block's last lines, from its last store back, that only step.
            let body_from = start + usize::from(label_of(&out[start..].first().cloned().unwrap_or_default()).is_some());
            let mut cut = out.len();
            while cut > body_from && step(code(&out[cut - 1]).trim_start()) {
                cut -= 1;
            }
            let has_store = out[cut..].iter().any(|l| code(l).trim_start().starts_with("store "));
            if cut > body_from && has_store {
                let label = format!("fold.step.{i}");
                out.insert(cut, format!("{label}:"));
                out.insert(cut, format!("  br label %{label}"));
            }
        }
        out.push(line.clone());
    }
    out
}

/// The pointer a store writes (`None` for other instructions).
fn stored_to(c: &str) -> Option<String> {
    let rest = c.strip_prefix("store ")?;
    let rest = rest.strip_prefix("volatile ").unwrap_or(rest);
    split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).map(str::to_string)
}

/// The pointer a load reads.
fn loaded_from(c: &str) -> Option<String> {
    let (_, rhs) = def_of(c)?;
    let ("load", rest) = opcode(rhs) else { return None };
    split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).map(str::to_string)
}

/// The variable `llvm.lifetime.start` starts, for variables declared in the loop.
fn lifetime_start(c: &str) -> Option<String> {
    if !c.contains("@llvm.lifetime.start") {
        return None;
    }
    let arg = c.rsplit("ptr ").next()?;
    Some(arg.split(')').next()?.trim().to_string())
}

/// `v` is a load of a variable, or a cast of one: the variable.
fn loaded_variable(v: &str, defs: &HashMap<&str, &str>) -> Option<String> {
    let rhs = defs.get(v)?;
    match opcode(rhs) {
        ("load", rest) => split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).map(str::to_string),
        ("sext" | "zext" | "trunc", rest) => {
            let from = rest.split(" to ").next()?.rsplit(' ').next()?;
            loaded_variable(from, defs)
        }
        _ => None,
    }
}

/// `v` is the variable `var` plus a size (a group or range size, a number of groups,
/// products of them, a positive constant), through casts.
fn steps_forward(v: &str, var: &str, defs: &HashMap<&str, &str>, stores: &HashMap<String, Vec<String>>) -> bool {
    let Some(rhs) = defs.get(v) else { return false };
    match opcode(rhs) {
        ("sext" | "zext" | "trunc", rest) => rest
            .split(" to ")
            .next()
            .and_then(|r| r.rsplit(' ').next())
            .is_some_and(|f| steps_forward(f, var, defs, stores)),
        ("add", rest) => {
            let parts: Vec<String> = split_top(skip_wraps(rest))
                .iter()
                .enumerate()
                .map(|(i, p)| match i {
                    0 => p.rsplit(' ').next().unwrap_or("").to_string(),
                    _ => p.trim().to_string(),
                })
                .collect();
            let [x, y] = parts.as_slice() else { return false };
            let is_var = |s: &str| loaded_variable(s, defs).as_deref() == Some(var);
            (is_var(x) && is_size(y, defs, stores, 0)) || (is_var(y) && is_size(x, defs, stores, 0))
        }
        _ => false,
    }
}

fn skip_wraps(mut rest: &str) -> &str {
    while let Some(r) = rest.strip_prefix("nsw ").or_else(|| rest.strip_prefix("nuw ")) {
        rest = r;
    }
    rest
}

/// A value that is at least 1 in any launch: a size query, a positive constant, their
/// products, through casts and variables that only ever hold such a value
/// (`int stride = get_global_size(0);`).
fn is_size(v: &str, defs: &HashMap<&str, &str>, stores: &HashMap<String, Vec<String>>, depth: u32) -> bool {
    if let Ok(k) = v.parse::<i64>() {
        return k > 0;
    }
    let Some(rhs) = defs.get(v) else { return false };
    let size = |x: &str| depth < 8 && is_size(x, defs, stores, depth + 1);
    match opcode(rhs) {
        ("sext" | "zext" | "trunc", rest) => {
            rest.split(" to ").next().and_then(|r| r.rsplit(' ').next()).is_some_and(size)
        }
        ("mul", rest) => {
            let parts = split_top(skip_wraps(rest));
            let value = |i: usize| parts.get(i).map(|p| p.rsplit(' ').next().unwrap_or("").to_string());
            matches!((value(0), value(1)), (Some(x), Some(y)) if size(&x) && size(&y))
        }
        ("load", rest) => {
            let ptr = split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("").to_string();
            stores.get(&ptr).is_some_and(|values| !values.is_empty() && values.iter().all(|x| size(x)))
        }
        ("call", _) => callee_names(rhs).first().and_then(|(c, _)| opencl_name(c)).is_some_and(|n| {
            matches!(n, "get_local_size" | "get_global_size" | "get_num_groups" | "get_enqueued_local_size")
        }),
        _ => false,
    }
}

/// A value no lane can hold below zero: work-item ids and sizes, non-negative
/// constants, their sums and products, through widening and variables only ever set so.
fn never_negative(v: &str, defs: &HashMap<&str, &str>, stores: &HashMap<String, Vec<String>>, depth: u32) -> bool {
    if let Ok(k) = v.parse::<i64>() {
        return k >= 0;
    }
    let Some(rhs) = defs.get(v) else { return false };
    let ok = |x: &str| depth < 8 && never_negative(x, defs, stores, depth + 1);
    let both = |rest: &str| {
        let parts = split_top(skip_wraps(rest));
        let value = |i: usize| parts.get(i).map(|p| p.rsplit(' ').next().unwrap_or("").to_string());
        matches!((value(0), value(1)), (Some(x), Some(y)) if ok(&x) && ok(&y))
    };
    match opcode(rhs) {
        ("zext", _) => true,
        ("sext" | "trunc", rest) => rest.split(" to ").next().and_then(|r| r.rsplit(' ').next()).is_some_and(ok),
        ("add" | "mul", rest) => both(rest),
        ("load", rest) => {
            let ptr = split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("").to_string();
            stores.get(&ptr).is_some_and(|values| !values.is_empty() && values.iter().all(|x| ok(x)))
        }
        ("call", _) => matches!(query(rhs), Ok(Some(_))),
        _ => false,
    }
}

/// Calls code outside the loop may make: queries, lifetimes, LLVM's intrinsics that
/// only compute.
fn harmless_call(c: &str) -> bool {
    let Some((callee, _)) = callee_names(c).into_iter().next() else { return true };
    matches!(query(c), Ok(Some(_)))
        || callee.starts_with("llvm.lifetime.")
        || callee.starts_with("llvm.dbg.")
        || (callee.starts_with("llvm.") && !callee.starts_with("llvm.mem"))
}

/// Calls whose effect counts work-items or orders them: the loop folds none.
pub(super) fn forbidden_in_body(c: &str) -> bool {
    callee_names(c).iter().any(|(callee, _)| {
        let name = opencl_name(callee).unwrap_or(callee);
        group_function(callee)
            || name == "printf"
            || callee.contains("printf")
            || name.starts_with("atom")
            || name.starts_with("work_group_")
            || name.starts_with("sub_group_")
            || name.contains("barrier")
    })
}

#[cfg(test)]
mod tests {
    use super::super::vectorize;

    /// clang's unoptimised IR of the block-stride loop, `out[base + i] = x * x + 1` for
    /// `i = get_local_id(0); i < tile; i += get_local_size(0)`, after the context
    /// rewrite; `{BODY}` and `{AFTER}` mark where the tests add lines.
    const BLOCK: &str = "define internal spir_func void @k(ptr addrspace(1) noundef align 4 %0, ptr addrspace(1) noundef align 4 %1, i32 noundef %2, ptr %__ferrocl_ctx) #0 {
  %4 = alloca ptr addrspace(1), align 8
  %5 = alloca ptr addrspace(1), align 8
  %6 = alloca i32, align 4
  %7 = alloca i64, align 8
  %8 = alloca i32, align 4
  %9 = alloca float, align 4
  %acc = alloca float, align 4
  store ptr addrspace(1) %0, ptr %4, align 8
  store ptr addrspace(1) %1, ptr %5, align 8
  store i32 %2, ptr %6, align 4
  store float 0.0, ptr %acc, align 4
  %10 = call i64 @_Z12get_group_idj(i32 noundef 0, ptr %__ferrocl_ctx) #6
  %11 = load i32, ptr %6, align 4
  %12 = sext i32 %11 to i64
  %13 = mul i64 %10, %12
  store i64 %13, ptr %7, align 8
  %14 = call i64 @_Z12get_local_idj(i32 noundef 0, ptr %__ferrocl_ctx) #6
  %15 = trunc i64 %14 to i32
  store i32 %15, ptr %8, align 4
  br label %16

16:
  %17 = load i32, ptr %8, align 4
  %18 = load i32, ptr %6, align 4
  %19 = icmp slt i32 %17, %18
  br i1 %19, label %21, label %20

20:
{AFTER}  br label %40

21:
  call void @llvm.lifetime.start.p0(i64 4, ptr %9) #5
  %22 = load ptr addrspace(1), ptr %4, align 8
  %23 = load i64, ptr %7, align 8
  %24 = load i32, ptr %8, align 4
  %25 = sext i32 %24 to i64
  %26 = add i64 %23, %25
  %27 = getelementptr inbounds float, ptr addrspace(1) %22, i64 %26
  %28 = load float, ptr addrspace(1) %27, align 4
  store float %28, ptr %9, align 4
  %29 = load float, ptr %9, align 4
  %30 = fmul float %29, %29
{BODY}  %31 = fadd float %30, 1.0
  %32 = load ptr addrspace(1), ptr %5, align 8
  %33 = getelementptr inbounds float, ptr addrspace(1) %32, i64 %26
  store float %31, ptr addrspace(1) %33, align 4
  call void @llvm.lifetime.end.p0(i64 4, ptr %9) #5
  br label %34

34:
  %35 = call i64 @_Z14get_local_sizej(i32 noundef 0, ptr %__ferrocl_ctx) #6
  %36 = load i32, ptr %8, align 4
  %37 = sext i32 %36 to i64
  %38 = add i64 %37, %35
  %39 = trunc i64 %38 to i32
  store i32 %39, ptr %8, align 4
{STEP}  br label %16

40:
  ret void
}";

    fn copy_of(body: &str, after: &str) -> Result<super::super::Simd, String> {
        copy_with(body, after, "")
    }

    fn copy_with(body: &str, after: &str, step: &str) -> Result<super::super::Simd, String> {
        let text = BLOCK.replace("{BODY}", body).replace("{AFTER}", after).replace("{STEP}", step);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let end = lines.iter().rposition(|l| l.starts_with('}')).unwrap();
        vectorize(&lines[0], &lines[1..end], "k")
    }

    #[test]
    fn a_block_stride_loop_runs_the_rows_chunks_in_each_step() {
        let copy = copy_of("", "").unwrap();
        assert_eq!(copy.folded, [0], "{}", copy.text);
        // The loop tests the first work-item's element, a shared value; the body reads
        // the lanes' elements of each chunk as one vector.
        assert!(copy.text.contains("extractelement <8 x i32>"), "{}", copy.text);
        assert!(copy.text.contains("load <8 x float>, ptr addrspace(1)"), "{}", copy.text);
        assert!(!copy.text.contains("@llvm.masked.gather"), "{}", copy.text);
        assert!(copy.declarations.iter().any(|d| d.contains("@_Z12get_local_idj(")));
    }

    #[test]
    fn a_one_block_body_runs_several_chunks_interleaved() {
        let copy = copy_of("", "").unwrap();
        assert!(copy.text.contains("fold.many:"), "{}", copy.text);
        // Each chunk's load, then each chunk's multiply: the chains side by side.
        let many = &copy.text[copy.text.find("simd.fold.many.all:").unwrap()..];
        let many = &many[..many.find("simd.fold.many.next:").unwrap()];
        let ops: Vec<&str> = many
            .lines()
            .filter_map(|l| l.split(" = ").nth(1))
            .filter_map(|r| r.split(' ').next())
            .filter(|op| matches!(*op, "load" | "fmul"))
            .collect();
        let loads = ops.iter().position(|op| *op == "fmul").unwrap();
        assert!(loads >= super::CHUNKS as usize, "{ops:?}\n{many}");
        assert_eq!(ops.iter().filter(|op| **op == "fmul").count(), super::CHUNKS as usize, "{many}");
        // The body's own variable (`%9`, `x`) is each chunk's own.
        assert!(copy.text.contains("%fold.m1.9 = alloca <8 x float>"), "{}", copy.text);
    }

    #[test]
    fn a_value_carried_between_steps_or_read_after_the_loop_is_not_folded() {
        // `acc += x` carries a value from one step to the next.
        let carried = "  %a0 = load float, ptr %acc, align 4\n  %a1 = fadd float %a0, %30\n  store float %a1, ptr %acc, align 4\n";
        assert!(copy_of(carried, "").unwrap().folded.is_empty());
        // The variable read after the loop: its last value is each work-item's own.
        let after = "  %v = load i32, ptr %8, align 4\n";
        assert!(copy_of("", after).unwrap().folded.is_empty());
        // A store to global memory after the loop would run for a chunk, not the row.
        let store = "  %p = load ptr addrspace(1), ptr %5, align 8\n  store float 0.0, ptr addrspace(1) %p, align 4\n";
        assert!(copy_of("", store).unwrap().folded.is_empty());
    }

    #[test]
    fn an_unsigned_test_of_a_variable_that_may_start_below_zero_is_not_folded() {
        let unsigned = |init: &str| {
            let text = BLOCK
                .replace("{BODY}", "")
                .replace("{AFTER}", "")
                .replace("{STEP}", "")
                .replace("icmp slt i32 %17, %18", "icmp ult i32 %17, %18")
                .replace("  %15 = trunc i64 %14 to i32\n", init);
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let end = lines.iter().rposition(|l| l.starts_with('}')).unwrap();
            !vectorize(&lines[0], &lines[1..end], "k").unwrap().folded.is_empty()
        };
        assert!(unsigned("  %15 = trunc i64 %14 to i32\n"));
        // `(uint)(lid - 2)`: lanes 0 and 1 start past any bound, the others below it.
        assert!(!unsigned("  %15a = trunc i64 %14 to i32\n  %15 = sub i32 %15a, 2\n"));
        // Plus a kernel argument, which may be negative.
        assert!(!unsigned("  %15a = trunc i64 %14 to i32\n  %15 = add i32 %15a, %2\n"));
    }

    #[test]
    fn a_step_that_stores_to_memory_is_not_folded() {
        // Run once a step for the first work-item, it would store once, not per item.
        let store = "  %p = load ptr addrspace(1), ptr %5, align 8\n  store float 0.0, ptr addrspace(1) %p, align 4\n";
        assert!(copy_with("", "", store).unwrap().folded.is_empty());
    }

    #[test]
    fn a_while_loops_step_is_cut_from_its_body() {
        let lines: Vec<String> = [
            "  %1 = alloca i32, align 4",
            "  br label %2",
            "2:",
            "  %3 = load i32, ptr %1, align 4",
            "  %4 = icmp slt i32 %3, 9",
            "  br i1 %4, label %5, label %10",
            "5:",
            "  %6 = load ptr addrspace(1), ptr %0, align 8",
            "  store i32 1, ptr addrspace(1) %6, align 4",
            "  %7 = load i32, ptr %1, align 4",
            "  %8 = add i32 %7, 4",
            "  store i32 %8, ptr %1, align 4",
            "  br label %2",
            "10:",
            "  ret void",
        ]
        .map(str::to_string)
        .to_vec();
        let split = super::split_steps(lines);
        let at = split.iter().position(|l| l.starts_with("fold.step.")).expect("a step block");
        // After the store to memory, before the step's loads.
        assert_eq!(split[at - 1], "  br label %fold.step.12");
        assert_eq!(split[at - 2], "  store i32 1, ptr addrspace(1) %6, align 4");
        assert_eq!(split[at + 1], "  %7 = load i32, ptr %1, align 4");
    }

    #[test]
    fn a_body_that_reads_a_lane_id_is_not_folded() {
        let id = "  %g = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %__ferrocl_ctx) #6\n  %gf = uitofp i64 %g to float\n  %h = fadd float %gf, %30\n";
        assert!(copy_of(id, "").unwrap().folded.is_empty());
        // Ids in y are the row's own: folded.
        let y = "  %g = call i64 @_Z12get_local_idj(i32 noundef 1, ptr %__ferrocl_ctx) #6\n  %gf = uitofp i64 %g to float\n  %h = fadd float %gf, %30\n";
        assert!(!copy_of(y, "").unwrap().folded.is_empty());
    }
}
