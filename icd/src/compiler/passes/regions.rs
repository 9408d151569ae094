//! Barrier regions: turns a kernel whose barriers sit directly in its body into a
//! resumable function, so a work-group runs as one plain loop over work-items per
//! barrier-free region instead of one fiber per work-item.
//!
//! The kernel `void K(args)` becomes `i32 K(args, ctx, frames, resume)`: it starts at
//! the code after barrier number `resume` (0: the kernel's entry), runs to the next
//! barrier and returns that barrier's number (0 at the kernel's end). The launcher
//! calls it for every work-item with resume 0, then with the number they returned, and
//! so on: every work-item has reached barrier `n` before any runs the code after it,
//! which is what a barrier means. `wait_group_events` is a wait followed by a barrier.
//!
//! A work-item's private variables that are live across a barrier move from the stack
//! into the work-group's frame memory (`frames`), one array per variable indexed by the
//! work-item's linear local id, so neighbouring work-items' copies are adjacent and the
//! loop over work-items vectorises. Variables not live across any barrier stay allocas.
//!
//! This works on clang's output before optimisation, where every C variable is an
//! alloca and SSA values only live within an expression. A kernel whose SSA values
//! cross a barrier anyway, or whose barriers are inside other functions, is refused
//! (the caller then runs it as fibers).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use super::context;
use super::ir_text::{
    callees_in, def_of, def_type, label_of, labels_in, locals_in, opencl_name, replace_value, split_top, Alloca, Piece,
    PURE,
};
use super::ir_type::{self, TypeTable};
use super::item_caps::{self, Cap};

/// A kernel rewritten into a resumable function.
#[derive(Debug)]
pub(crate) struct Resumable {
    /// The new `define` line, the body and the closing brace.
    pub(crate) text: String,
    /// Bytes of frame memory per work-item.
    pub(crate) frame_size: u64,
    /// Bytes of the group's uniform variables (see `build`): the function takes a block
    /// of twice this, aligned to `FRAME_ALIGN`. A region reads them from the first half
    /// and writes them to the second, so the work-items of one pass over a region all
    /// read what the region before left (each writes the same values); the launcher
    /// copies the second half to the first between regions. A counter held this way is
    /// loop-invariant in the item loop: LLVM keeps it in a register, and where it
    /// unswitches the loop, tests it once per pass (the bench's barrier-cost kernel: its
    /// counter framed per work-item had been a load, compare and branch per work-item).
    pub(crate) uniform: u64,
    /// Number of barriers (resume points 1..=barriers).
    pub(crate) barriers: u32,
    /// For each region (0: from the kernel's entry, n: after barrier n), if it can run
    /// for one work-item (see `uniform`): the frame slots it stores, as (offset, size),
    /// variable `v` of work-item `i` being at `frames + items * offset + i * size`.
    pub(crate) invariant: Vec<Option<Vec<(u64, u64)>>>,
    /// For each region, where its item loop may stop in x (see `item_caps`).
    pub(crate) caps: Vec<Option<Cap>>,
    /// For each region, whether it computes (`computing_regions`): its item loop moves
    /// a share of the group's deferred imports after each chunk of work-items.
    pub(crate) computes: Vec<bool>,
}

/// What a call does to a work-group.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Sync {
    /// Not a synchronising call.
    None,
    /// A barrier: removed, the region ends here.
    Barrier,
    /// Work that every work-item does and then a barrier (`wait_group_events`).
    ThenBarrier,
    /// Synchronises in a way this transform cannot split (collectives, functions that
    /// contain barriers).
    Unsupported,
}

/// The intrinsic that moves shadowed variables between their allocas and frame slots.
pub(crate) const MEMCPY: &str = "llvm.memcpy.p0.p0.i64";

/// Frame-memory alignment the driver guarantees.
pub(crate) const FRAME_ALIGN: u64 = 128;

/// Makes `define` + `body` (a kernel's lines between `define` and `}`) resumable.
/// `sync` classifies a callee name; `ctx` is the name of the context parameter.
pub(crate) fn make_resumable(
    define: &str,
    body: &[String],
    types: &TypeTable,
    ctx: &str,
    sync: &dyn Fn(&str) -> Sync,
) -> Result<Resumable, String> {
    if body.iter().any(|l| l.contains("%\"")) || define.contains("%\"") {
        return Err("quoted local names".into());
    }
    let define = rename_numbered(define);
    let body: Vec<String> = body.iter().map(|l| rename_numbered(l)).collect();
    let first = build(&define, &body, types, ctx, sync)?;
    if first.joins.is_empty() {
        return Ok(first.resumable);
    }
    // A barrier at each join: every work-item reaches it (the branches to it are the
    // same for all), so it only orders what the kernel already allows. Kept where it
    // leaves fewer regions that run for every work-item.
    let cut_at = |joins: &[String]| build(&define, &with_join_barriers(&body, joins, ctx, sync), types, ctx, sync);
    let mut joins = first.joins.clone();
    let mut best = match cut_at(&joins) {
        Ok(second) if second.every_item < first.every_item => second,
        _ => return Ok(first.resumable),
    };
    // Then without each join that does not pay, the last first: a barrier at a loop's
    // head leaves the joins in its body (a `?:` choosing this tile's buffer) reached
    // from one region, and a barrier there only adds a region run once, with its
    // variables framed, each tile (the double-buffered stream: 13 regions, 5 with
    // these pruned). Bounded: each try builds the kernel again.
    for j in (0..joins.len()).rev().take(MAX_PRUNED) {
        let mut fewer = joins.clone();
        fewer.remove(j);
        match cut_at(&fewer) {
            Ok(t) if t.every_item <= best.every_item && t.resumable.barriers < best.resumable.barriers => {
                joins = fewer;
                best = t;
            }
            _ => {}
        }
    }
    Ok(best.resumable)
}

/// The joins `make_resumable` tries removing one by one.
const MAX_PRUNED: usize = 16;

/// `body` with a barrier at the start of each block in `joins`; a wait that only
/// branches to one of them ends its region there instead (the region after it would be
/// empty: the events it noted complete at the join).
fn with_join_barriers(body: &[String], joins: &[String], ctx: &str, sync: &dyn Fn(&str) -> Sync) -> Vec<String> {
    let barrier = format!("  call void @{}(i32 0, ptr {ctx})", context::symbol("barrier"));
    let is_join = |label: &str| joins.iter().any(|j| j == label);
    let mut cut = Vec::with_capacity(body.len() + joins.len());
    for (i, l) in body.iter().enumerate() {
        let waits = callees_in(l).iter().any(|c| sync(c) == Sync::ThenBarrier);
        let to_join = || {
            body[i + 1..]
                .iter()
                .map(|n| n.trim())
                .find(|n| !n.is_empty() && !n.contains("@llvm.lifetime."))
                .and_then(|n| n.strip_prefix("br label %"))
                .is_some_and(|target| is_join(target.split([',', ' ']).next().unwrap_or("")))
        };
        cut.push(if waits && to_join() { format!("{l} {JOINED}") } else { l.clone() });
        if label_of(l).is_some_and(is_join) {
            cut.push(barrier.clone());
        }
    }
    cut
}

/// Marks a wait whose region ends at the join barrier it branches to.
const JOINED: &str = "; ferrocl: ends at the join";

/// A kernel made resumable, with what `make_resumable` decides on.
struct Built {
    resumable: Resumable,
    /// Blocks where paths from several regions meet (see `uniform_joins`).
    joins: Vec<String>,
    /// The code run for every work-item: the lines of the regions that do, each with
    /// `PASS_LINES` more, those a group may run many times (in a loop of regions)
    /// counted `LOOP_WEIGHT` times.
    every_item: usize,
}

/// The kernel as a region function (`Resumable`): the framed variables laid out, the
/// body split at its barriers, with what the uniformity analysis found of each region.
fn build(
    define: &str,
    body: &[String],
    types: &TypeTable,
    ctx: &str,
    sync: &dyn Fn(&str) -> Sync,
) -> Result<Built, String> {
    let body = &demote_across_barriers(define, body, types, sync)?;
    let entry_label = entry_label(define, body);
    let dbg = body
        .iter()
        .find_map(|l| l.find("!dbg !").map(|at| l[at..].split([',', ' ']).take(2).collect::<Vec<_>>().join(" ")));

    let pieces = split(body, &entry_label, sync)?;
    let barriers = pieces.iter().filter(|p| p.barrier.is_some()).count() as u32;
    let (index, succs) = graph(&pieces);
    let resume_of = |n: u32| index[resume_label(n).as_str()];

    let allocas = allocas_of(&pieces, types)?;
    let remat = rematerializable(&pieces, &allocas);
    let derived = derived_from_allocas(&pieces, &allocas);
    let (escaped, live_at_resume) = live_across_barriers(&pieces, &succs, &allocas, &derived, &resume_of);
    let framed: Vec<bool> = (0..allocas.len())
        .map(|a| remat[a].is_none() && (escaped[a] || live_at_resume.iter().any(|live| live[a])))
        .collect();

    check_dominance(&pieces, &succs, &index)?;

    let starts: Vec<usize> = std::iter::once(0).chain((1..=barriers).map(resume_of)).collect();
    let uniformity = super::uniform::invariant_regions(define, &pieces, &succs, &allocas, &derived, &framed, &starts);
    // Each pass over a region takes every work-item to the same barrier, which a
    // sub-group barrier under a branch that differs between work-items breaks: the
    // sub-groups taking the other way never reach it (the CTS's `if (get_sub_group_id()
    // == 0) { ...; sub_group_barrier(...); ... }`). Fibers, which resume each work-item
    // from wherever it stopped, run such kernels.
    if pieces.iter().any(|p| p.sub_group) {
        let ipdom = super::flow::post_dominators(&succs);
        for branch in (0..pieces.len()).filter(|&i| uniformity.varying_branch[i]) {
            let inside = super::flow::divergent_region(&succs, &ipdom, branch);
            if let Some(p) = pieces.iter().enumerate().find(|&(b, p)| p.sub_group && inside[b]).map(|(_, p)| p) {
                return Err(format!(
                    "a sub-group barrier ({}) under a branch that differs between work-items ({})",
                    p.label, pieces[branch].label
                ));
            }
        }
    }
    // A framed variable that every work-item holds alike (a loop counter, a tile's
    // offset) is kept once per group rather than once per work-item (see `Resumable::
    // uniform`). Only one whose address stays in the region: it is read where a region
    // resumes and written where one ends, which a single copy serves.
    let uniform: Vec<bool> = (0..allocas.len()).map(|a| framed[a] && !escaped[a] && !uniformity.varying[a]).collect();

    let Frames { layout, frame_size, uniform_layout, uniform_size } = frames_of(&allocas, &framed, &uniform)?;
    let slots: HashMap<&str, (u64, u64)> =
        layout.iter().map(|(n, offset, slot)| (n.as_str(), (*offset, *slot))).collect();
    let joins = uniform_joins(&pieces, &succs, &starts, &uniformity);
    let in_loop = regions_in_loops(&pieces, &uniformity.reach);
    let computes = computing_regions(&pieces, &succs, &uniformity.reach);
    let every_item = (0..starts.len())
        .filter(|&n| uniformity.regions[n].is_none())
        .map(|n| {
            // Branches and returns left out: a barrier before a kernel's bare `ret` saves
            // nothing.
            let work = |l: &String| {
                let t = l.trim_start();
                !(t.is_empty() || t.starts_with("br ") || t.starts_with("ret ") || t.starts_with(';'))
            };
            let lines: usize = (0..pieces.len())
                .filter(|&p| uniformity.reach[n][p])
                .map(|p| pieces[p].lines.iter().filter(|l| work(l)).count())
                .sum();
            (PASS_LINES + lines) * if in_loop[n] { LOOP_WEIGHT } else { 1 }
        })
        .sum();
    // Uniform variables need no sharing: the work-item that ran the region wrote the
    // group's copy.
    let invariant = uniformity
        .regions
        .into_iter()
        .map(|r| Some(r?.into_iter().filter(|&a| !uniform[a]).map(|a| slots[allocas[a].0.as_str()]).collect()))
        .collect();

    let uniform_at: HashMap<&str, u64> = uniform_layout.iter().map(|(n, offset, _)| (n.as_str(), *offset)).collect();
    let recomputed: Vec<Option<Vec<String>>> = remat.iter().map(|r| r.as_ref().map(|r| r.lines.clone())).collect();
    let per_item: Vec<bool> = (0..allocas.len()).map(|a| framed[a] && !uniform[a]).collect();
    let caps = item_caps::item_caps(
        &item_caps::Kernel {
            pieces: &pieces,
            succs: &succs,
            allocas: &allocas,
            recomputed: &recomputed,
            per_item: &per_item,
            uniform_at: &uniform_at,
        },
        &starts,
    );

    // A framed variable whose address is never stored keeps its alloca within a region:
    // it is loaded from its frame slot where a region resumes and stored back where one
    // ends, so the optimiser keeps it in a register in between (through the slot, every
    // access would be a memory access: LLVM cannot tell the slots of different
    // variables apart, as they are indexed by the work-item). Only a variable whose
    // address may outlive the region needs to live in its slot.
    let shadowed: HashMap<&str, (usize, u64)> = allocas
        .iter()
        .enumerate()
        .filter(|&(i, _)| framed[i] && !escaped[i])
        .map(|(i, a)| (a.0.as_str(), (i, a.2)))
        .collect();
    let framed_names: HashSet<&str> =
        layout.iter().map(|(n, _, _)| n.as_str()).filter(|n| !shadowed.contains_key(n)).collect();
    let uniform_names: HashSet<&str> = uniform_layout.iter().map(|(n, _, _)| n.as_str()).collect();
    // A shadowed variable's slot where a region resumes (`to_slot` false) or ends.
    let slot_of = |name: &str, to_slot: bool| match (uniform_names.contains(name), to_slot) {
        (true, false) => format!("%__fcl_u.{}", &name[1..]),
        (true, true) => format!("%__fcl_w.{}", &name[1..]),
        _ if shadowed.contains_key(name) => format!("%__fcl_f.{}", &name[1..]),
        _ => name.to_string(),
    };
    let align_of: HashMap<&str, u64> = allocas.iter().map(|a| (a.0.as_str(), a.3)).collect();
    // Copies between the allocas of the variables live at resume point `n` and their slots.
    let frame_copies = |out: &mut String, n: usize, to_slot: bool| {
        let mut live: Vec<(&str, u64)> =
            shadowed.iter().filter(|(_, &(i, _))| live_at_resume[n - 1][i]).map(|(&v, &(_, size))| (v, size)).collect();
        live.sort_unstable();
        for (name, size) in live {
            let (slot, align) = (slot_of(name, to_slot), align_of[name]);
            let (dst, src) = if to_slot { (slot.as_str(), name) } else { (name, slot.as_str()) };
            let _ = writeln!(
                out,
                "  call void @{MEMCPY}(ptr align {align} {dst}, ptr align {align} {src}, i64 {size}, i1 false)"
            );
        }
    };

    let mut out = String::new();
    let _ = writeln!(out, "{}", resumable_signature(define, ctx)?);
    let call_dbg = dbg.as_deref().map(|d| format!(", {d}")).unwrap_or_default();
    out.push_str("__fcl_entry:\n");
    for (name, ..) in allocas.iter().filter(|a| !framed_names.contains(a.0.as_str())) {
        let line = pieces[0].lines.iter().find(|l| def_of(l).is_some_and(|(n, _)| n == name)).unwrap();
        let _ = writeln!(out, "{line}");
    }
    if !layout.is_empty() {
        let linear_id = context::symbol("get_local_linear_id");
        let _ = writeln!(out, "  %__fcl_item = call i64 @{linear_id}(ptr {ctx}){call_dbg}");
        let _ = writeln!(out, "  %__fcl_items = call i64 @__ferrocl_group_items(ptr {ctx}){call_dbg}");
    }
    slot_addresses(&mut out, &layout, &uniform_layout, uniform_size, &slot_of);
    let cases: String = (1..=barriers).map(|n| format!(" i32 {n}, label %{}", resume_label(n))).collect();
    let _ = writeln!(out, "  switch i32 %__fcl_resume, label %{entry_label} [{cases} ]");
    for p in &pieces {
        let _ = writeln!(out, "{}:", p.label);
        if let Some(n) = p.label.strip_prefix("__fcl_r").and_then(|n| n.parse::<usize>().ok()) {
            frame_copies(&mut out, n, false);
            // Variables the work-item can recompute are recomputed after each barrier
            // instead of being kept in frame memory (see `rematerializable`).
            for i in remat_order(&remat, &live_at_resume[n - 1]) {
                for l in remat[i].iter().flat_map(|r| &r.lines) {
                    let _ = writeln!(out, "{}", l.replace("%__fcl_m.", &format!("%__fcl_m.{}.{i}.", p.label)));
                }
            }
        }
        for l in &p.lines {
            if def_of(l).is_some_and(|(_, rhs)| rhs.starts_with("alloca ")) {
                continue;
            }
            if l.trim_start() == "ret void" || l.trim_start().starts_with("ret void,") {
                let _ = writeln!(out, "{}", l.replacen("ret void", "ret i32 0", 1));
            } else {
                let _ = writeln!(out, "{l}");
            }
        }
        if let Some(n) = p.barrier {
            frame_copies(&mut out, n as usize, true);
            let _ = writeln!(out, "  ret i32 {n}");
        }
    }
    out.push_str("}\n");
    Ok(Built {
        resumable: Resumable { text: out, frame_size, uniform: uniform_size, barriers, invariant, caps, computes },
        joins,
        every_item,
    })
}

/// The kernel's allocas with their type text, size and alignment; all in the entry
/// piece in clang's output.
fn allocas_of(pieces: &[Piece], types: &TypeTable) -> Result<Vec<Alloca>, String> {
    let mut allocas: Vec<Alloca> = Vec::new();
    for (pi, p) in pieces.iter().enumerate() {
        for (name, rhs) in p.lines.iter().filter_map(|l| def_of(l)) {
            let Some(rest) = rhs.strip_prefix("alloca ") else { continue };
            if pi != 0 {
                return Err("alloca outside the entry block".into());
            }
            let (ty, after) = ir_type::parse(rest).ok_or("alloca type")?;
            let ty_text = rest[..rest.len() - after.len()].trim().to_string();
            let after = after.trim_start();
            let align = match after.strip_prefix(", align ") {
                Some(a) => a.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("").parse().ok(),
                None if after.is_empty() => Some(1),
                None => None,
            }
            .ok_or("alloca with an element count")?;
            let (size, abi) = ty.layout(types).ok_or("alloca of unknown size")?;
            allocas.push((name.to_string(), ty_text, size, abi.max(align)));
        }
    }
    Ok(allocas)
}

/// Where framed variables live: (name, offset, slot size) of those kept per work-item
/// and of those kept once per group, and the bytes of each.
struct Frames {
    layout: Vec<(String, u64, u64)>,
    frame_size: u64,
    uniform_layout: Vec<(String, u64, u64)>,
    /// One half of the uniform block; the second half starts here.
    uniform_size: u64,
}

/// Frame layout: variable v of work-item i at frames + items * offset(v) + i * size(v);
/// uniform variables at their offset in each half of the uniform block.
fn frames_of(allocas: &[Alloca], framed: &[bool], uniform: &[bool]) -> Result<Frames, String> {
    let mut layout = Vec::new();
    let mut frame_size = 0u64;
    let mut uniform_layout = Vec::new();
    let (mut uniform_size, mut uniform_align) = (0u64, 1u64);
    for (i, (name, _, size, align)) in allocas.iter().enumerate() {
        if framed[i] {
            if *align > FRAME_ALIGN {
                return Err("over-aligned private variable".into());
            }
            let slot = size.div_ceil(*align) * align;
            let end = if uniform[i] { &mut uniform_size } else { &mut frame_size };
            *end = end.div_ceil(*align) * align;
            let at = (name.clone(), *end, slot);
            *end += slot;
            if uniform[i] {
                uniform_align = uniform_align.max(*align);
                uniform_layout.push(at)
            } else {
                layout.push(at)
            }
        }
    }
    // The second half (the values regions store) starts aligned for every variable.
    let uniform_size = uniform_size.div_ceil(uniform_align) * uniform_align;
    Ok(Frames { layout, frame_size, uniform_layout, uniform_size })
}

/// The kernel's definition line as a region function: it returns the barrier it stopped
/// at and takes the frames, the uniform block and the region to resume at.
fn resumable_signature(define: &str, ctx: &str) -> Result<String, String> {
    let open = define.find(" void @").ok_or("kernel does not return void")?;
    let mut define = format!("{} i32 @{}", &define[..open], &define[open + " void @".len()..]);
    let close = define.rfind(&format!("ptr {ctx})")).ok_or("kernel without a context parameter")? + ctx.len() + 4;
    // Not `noalias` here: the item loop's frame parameter is, for all iterations; the
    // kernel's would only hold within one.
    define.insert_str(close, ", ptr %__fcl_frames, ptr %__fcl_uniform, i32 %__fcl_resume");
    Ok(define)
}

/// The addresses of the work-item's frame slots and of the uniform variables' two
/// copies, computed once at the function's entry.
fn slot_addresses(
    out: &mut String,
    layout: &[(String, u64, u64)],
    uniform_layout: &[(String, u64, u64)],
    uniform_size: u64,
    slot_of: &dyn Fn(&str, bool) -> String,
) {
    for (name, offset, slot) in layout {
        let n = &name[1..];
        // The variable's array, then the work-item's element of it: an index of the
        // item itself, which the SIMD copy reads as consecutive in its lanes.
        let _ = writeln!(out, "  %__fcl_b.{n} = mul i64 %__fcl_items, {offset}");
        let _ = writeln!(out, "  %__fcl_a.{n} = getelementptr inbounds i8, ptr %__fcl_frames, i64 %__fcl_b.{n}");
        let _ = writeln!(
            out,
            "  {} = getelementptr inbounds [{slot} x i8], ptr %__fcl_a.{n}, i64 %__fcl_item",
            slot_of(name, false)
        );
    }
    for (name, offset, _) in uniform_layout {
        let n = &name[1..];
        let _ = writeln!(out, "  %__fcl_u.{n} = getelementptr inbounds i8, ptr %__fcl_uniform, i64 {offset}");
        let _ = writeln!(
            out,
            "  %__fcl_w.{n} = getelementptr inbounds i8, ptr %__fcl_uniform, i64 {}",
            uniform_size + offset
        );
    }
}

/// How much more the code of a region in a loop of regions counts in
/// `Built::every_item`: passes over every work-item there are paid each time round.
const LOOP_WEIGHT: usize = 16;

/// What a pass over every work-item costs beyond its code, in lines of it (the item
/// loop, each work-item's context): a cut that only moves code into a region of its own
/// must save more than this.
const PASS_LINES: usize = 4;

/// For each region, whether a group can come back to it: the regions it ends at (the
/// barriers its pieces reach) lead back to it.
fn regions_in_loops(pieces: &[Piece], reach: &[Vec<bool>]) -> Vec<bool> {
    let next: Vec<Vec<usize>> = reach
        .iter()
        .map(|r| (0..pieces.len()).filter(|&p| r[p]).filter_map(|p| pieces[p].barrier).map(|b| b as usize).collect())
        .collect();
    (0..reach.len())
        .map(|n| {
            let mut seen = vec![false; reach.len()];
            let mut todo = next[n].clone();
            while let Some(m) = todo.pop() {
                if m == n {
                    return true;
                }
                if m < seen.len() && !std::mem::replace(&mut seen[m], true) {
                    todo.extend(&next[m]);
                }
            }
            false
        })
        .collect()
}

/// Regions whose work-items loop, or run at least `COMPUTING_LINES` lines: where an
/// import the group deferred (builtins/clc/workitem.c, "Deferred imports") can move a
/// step at a time beside the computation. A region that only issues copies and waits
/// (the head of a double-buffered tile loop) would move the import before the tile's
/// computation instead of beside it.
fn computing_regions(pieces: &[Piece], succs: &[Vec<usize>], reach: &[Vec<bool>]) -> Vec<bool> {
    reach
        .iter()
        .map(|inside| {
            let lines: usize = (0..pieces.len())
                .filter(|&p| inside[p])
                .map(|p| pieces[p].lines.iter().filter(|l| def_of(l).is_some()).count())
                .sum();
            lines >= COMPUTING_LINES || has_cycle(succs, inside)
        })
        .collect()
}

/// A region of at least this many defined values computes, loop or not.
const COMPUTING_LINES: usize = 64;

/// Whether the pieces marked `inside` hold a cycle (a depth-first search that meets a
/// piece still on its path).
fn has_cycle(succs: &[Vec<usize>], inside: &[bool]) -> bool {
    // 0: not seen, 1: on the path, 2: done.
    let mut state = vec![0u8; inside.len()];
    for root in (0..inside.len()).filter(|&p| inside[p]) {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some((p, i)) = stack.pop() {
            match succs[p].get(i) {
                Some(&q) => {
                    stack.push((p, i + 1));
                    if q < inside.len() && inside[q] {
                        match state[q] {
                            0 => {
                                state[q] = 1;
                                stack.push((q, 0));
                            }
                            1 => return true,
                            _ => {}
                        }
                    }
                }
                None => state[p] = 2,
            }
        }
    }
    false
}

/// Blocks where paths from several regions meet, each reached from every such region's
/// start through branches that are the same for all work-items: a barrier there is
/// legal, and ends each region before the code the regions share. Double buffering
/// makes them: `if (i > 0) wait_group_events(1, &out); copy(next); compute(...)`
/// runs the copy and the computation in the region before the wait when `i == 0`, so
/// that region runs for every work-item, each passing the wait's bookkeeping on its own
/// (2-core machine: 1.5-1.8 us more per tile than the synchronous twin). The exits of
/// loops of regions are candidates too (see `loop_exit` below).
fn uniform_joins(
    pieces: &[Piece],
    succs: &[Vec<usize>],
    starts: &[usize],
    u: &super::uniform::Uniformity,
) -> Vec<String> {
    let mut preds = vec![Vec::new(); pieces.len()];
    for (i, s) in succs.iter().enumerate() {
        for &j in s {
            preds[j].push(i);
        }
    }
    let ipdom = super::flow::post_dominators(succs);
    // Once per varying branch: the blocks before its paths meet again.
    let divergent: Vec<Vec<bool>> = (0..pieces.len())
        .map(|i| match u.varying_branch[i] {
            true => super::flow::divergent_region(succs, &ipdom, i),
            false => Vec::new(),
        })
        .collect();
    let diverges = |i: usize| &divergent[i];
    let reached_uniformly = |n: usize, b: usize| {
        // The pieces of region n on a path to b.
        let mut seen = vec![false; pieces.len()];
        let mut todo = vec![b];
        while let Some(i) = todo.pop() {
            for &q in &preds[i] {
                if u.reach[n][q] && !std::mem::replace(&mut seen[q], true) {
                    todo.push(q);
                }
            }
        }
        // A branch that differs between work-items is harmless where its paths meet
        // again before `b` (an `if (l < k)` in a loop's body, before its exit).
        !(0..pieces.len()).any(|i| seen[i] && u.varying_branch[i] && diverges(i)[b])
    };
    // A loop's exit: one way of a branch the same for all work-items goes to a barrier
    // (the loop goes round), the other to `b`. A barrier at `b` leaves the region that
    // tests the loop's condition without the code after the loop, so it can run for
    // one work-item each time round (a tree reduction's loop: 8 passes over every
    // work-item fewer).
    let loop_exit = |b: usize| {
        preds[b].iter().any(|&q| {
            !u.varying_branch[q]
                && succs[q].len() == 2
                && succs[q].iter().any(|&o| o != b && pieces[o].barrier.is_some())
        })
    };
    (1..pieces.len())
        .filter(|&b| {
            let p = &pieces[b];
            if p.label.starts_with("__fcl_r") || p.lines.first().is_some_and(|l| l.contains(" phi ")) {
                return false;
            }
            let regions: Vec<usize> = (0..starts.len()).filter(|&n| u.reach[n][b]).collect();
            (regions.len() > 1 || loop_exit(b)) && regions.iter().all(|&n| reached_uniformly(n, b))
        })
        .map(|b| pieces[b].label.clone())
        .collect()
}

fn resume_label(n: u32) -> String {
    format!("__fcl_r{n}")
}

/// `%5` -> `%__v5` and a `5:` label -> `__v5:`, so that instructions can be moved and
/// inserted without renumbering (unnamed values must be numbered in textual order).
fn rename_numbered(line: &str) -> String {
    // Non-ASCII bytes only occur in strings and comments; leave such lines alone.
    if !line.is_ascii() {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let b = line.as_bytes();
    let mut i = 0;
    if b.first().is_some_and(u8::is_ascii_digit) {
        out.push_str("__v");
    }
    while i < b.len() {
        out.push(b[i] as char);
        if b[i] == b'%' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let end = b[i + 1..].iter().position(|c| !c.is_ascii_digit()).map_or(b.len(), |p| i + 1 + p);
            let ident_follows = b.get(end).is_some_and(|&c| c.is_ascii_alphabetic() || b"._$-".contains(&c));
            if !ident_follows {
                out.push_str("__v");
            }
        }
        i += 1;
    }
    out
}

/// Each piece's index by label, and each piece's successors.
fn graph(pieces: &[Piece]) -> (HashMap<&str, usize>, Vec<Vec<usize>>) {
    let index: HashMap<&str, usize> = pieces.iter().enumerate().map(|(i, p)| (p.label.as_str(), i)).collect();
    let succs = pieces
        .iter()
        .map(|p| p.lines.iter().flat_map(|l| labels_in(l)).filter_map(|t| index.get(t).copied()).collect())
        .collect();
    (index, succs)
}

/// The entry block's label: its own, or the number clang's implicit one takes (after
/// the unnamed parameters).
fn entry_label(define: &str, body: &[String]) -> String {
    match body.first().and_then(|l| label_of(l)) {
        Some(l) => l.to_string(),
        None => format!("__v{}", define.matches("%__v").count()),
    }
}

/// The body with each SSA value that lives across a barrier (optimised code, such as
/// the SPIR-V SYCL's compiler emits, keeps values in registers where clang's
/// unoptimised code has variables) moved into a variable of its own: an alloca at the
/// entry, a store after the definition, and a load before each use that the definition
/// no longer dominates once the body is cut at its barriers. The transform then keeps
/// them like any variable (framed, or recomputed). A phi's use loads at the end of the
/// block it comes from.
fn demote_across_barriers(
    define: &str,
    body: &[String],
    types: &TypeTable,
    sync: &dyn Fn(&str) -> Sync,
) -> Result<Vec<String>, String> {
    let entry = entry_label(define, body);
    let (pieces, placed) = split_placed(body, &entry, sync)?;
    let (_, succs) = graph(&pieces);
    let (dom, preds) = dominators(&pieces, &succs);
    let reachable = |i: usize| i != usize::MAX && !preds[i].is_empty() && !dom[i].iter().all(|&w| w == u64::MAX);
    let mut defs: HashMap<&str, (usize, usize)> = HashMap::new();
    for (j, l) in body.iter().enumerate().filter(|&(j, _)| placed[j] != usize::MAX) {
        if let Some((name, _)) = def_of(l).filter(|(_, rhs)| !rhs.starts_with("alloca ")) {
            defs.insert(name, (j, placed[j]));
        }
    }
    // Each block's terminator line (the last instruction placed before the next label;
    // clang leaves a blank line after it).
    let mut terminator: HashMap<String, usize> = HashMap::new();
    let mut block = entry.clone();
    for (j, l) in body.iter().enumerate() {
        let instruction = !l.trim().is_empty() && !l.trim_start().starts_with(';');
        match label_of(l) {
            Some(b) if j > 0 => block = b.to_string(),
            _ if placed[j] != usize::MAX && instruction => {
                terminator.insert(block.clone(), j);
            }
            _ => {}
        }
    }
    let crosses = |name: &str, at: usize| defs.get(name).is_some_and(|&(_, d)| !bit(&dom[at], d));
    // (line, value) for uses in a line; (phi line, pair, value, the incoming block's
    // terminator line) for a phi's.
    let mut uses: Vec<(usize, &str)> = Vec::new();
    let mut phi_uses: Vec<(usize, String, &str, usize)> = Vec::new();
    for (j, l) in body.iter().enumerate().filter(|&(j, _)| reachable(placed[j])) {
        let own = def_of(l).map(|(d, _)| d);
        if def_of(l).is_some_and(|(_, rhs)| rhs.starts_with("phi ")) {
            for (v, b) in phi_pairs(l) {
                let Some(&t) = b.strip_prefix('%').and_then(|b| terminator.get(b)) else { continue };
                if let Some(name) = locals_in(v).into_iter().find(|n| crosses(n, placed[t])) {
                    phi_uses.push((j, format!("[ {v}, {b} ]"), name, t));
                }
            }
            continue;
        }
        for name in locals_in(l).into_iter().filter(|&n| Some(n) != own && crosses(n, placed[j])) {
            uses.push((j, name));
        }
    }
    if uses.is_empty() && phi_uses.is_empty() {
        return Ok(body.to_vec());
    }
    let demoted: HashSet<&str> = uses.iter().map(|u| u.1).chain(phi_uses.iter().map(|u| u.2)).collect();
    let mut slot: HashMap<&str, (String, String)> = HashMap::new();
    let mut allocas = Vec::new();
    for &name in &demoted {
        let rhs = def_of(&body[defs[name].0]).map_or("", |(_, r)| r);
        let ty = def_type(rhs).ok_or_else(|| format!("{name} lives across a barrier"))?;
        let align = ty.layout(types).map_or(16, |(_, a)| a);
        let var = format!("%__dm.{}", &name[1..]);
        allocas.push(format!("  {var} = alloca {ty}, align {align}"));
        slot.insert(name, (var, ty.to_string()));
    }
    allocas.sort();
    let load = |n: usize, name: &str| {
        let (var, ty) = &slot[name];
        let value = format!("%__dl{n}.{}", &name[1..]);
        (format!("  {value} = load {ty}, ptr {var}"), value)
    };
    // A phi's loads, named first: the phi may come before the block it loads in (a
    // loop's back edge).
    let phi_loads: Vec<(String, String)> = phi_uses.iter().enumerate().map(|(n, u)| load(n, u.2)).collect();
    let mut out = Vec::with_capacity(body.len() + 4 * demoted.len());
    let at_entry = usize::from(body.first().is_some_and(|l| label_of(l).is_some()));
    let mut pending_stores: Vec<String> = Vec::new();
    for (j, line) in body.iter().enumerate() {
        if j == at_entry {
            out.extend(allocas.iter().cloned());
        }
        let phi = def_of(line).is_some_and(|(_, rhs)| rhs.starts_with("phi "));
        if !phi && label_of(line).is_none() {
            out.append(&mut pending_stores);
        }
        let mut line = line.clone();
        for (n, (p, pair, name, t)) in phi_uses.iter().enumerate() {
            if *t == j {
                out.push(phi_loads[n].0.clone());
            }
            if *p == j {
                line = line.replace(pair.as_str(), &pair.replace(&format!("{name},"), &format!("{},", phi_loads[n].1)));
            }
        }
        for (n, &(_, name)) in uses.iter().enumerate().filter(|u| u.1 .0 == j) {
            let (text, value) = load(phi_uses.len() + n, name);
            out.push(text);
            line = replace_value(&line, name, &value);
        }
        let defined = def_of(&line).map(|(d, _)| d.to_string());
        out.push(line);
        if let Some(d) = defined.filter(|d| demoted.contains(d.as_str())) {
            let (var, ty) = &slot[d.as_str()];
            let store = format!("  store {ty} {d}, ptr {var}");
            match phi {
                true => pending_stores.push(store),
                false => out.push(store),
            }
        }
    }
    Ok(out)
}

/// Splits the body into basic blocks, and blocks at synchronising calls.
fn split(body: &[String], entry_label: &str, sync: &dyn Fn(&str) -> Sync) -> Result<Vec<Piece>, String> {
    split_placed(body, entry_label, sync).map(|(pieces, _)| pieces)
}

/// `split`, and the piece each body line went to (`usize::MAX` for labels and lines
/// left out).
fn split_placed(
    body: &[String],
    entry_label: &str,
    sync: &dyn Fn(&str) -> Sync,
) -> Result<(Vec<Piece>, Vec<usize>), String> {
    let mut placed = vec![usize::MAX; body.len()];
    let mut pieces = vec![Piece { label: entry_label.to_string(), lines: Vec::new(), barrier: None, sub_group: false }];
    // Original block label -> the piece holding its terminator.
    let mut moved: Vec<(String, String)> = Vec::new();
    let mut block = entry_label.to_string();
    let mut barriers = 0;
    for (i, line) in body.iter().enumerate() {
        if let Some(l) = label_of(line) {
            if i == 0 {
                continue;
            }
            let last = &pieces.last().unwrap().label;
            if *last != block {
                moved.push((block.clone(), last.clone()));
            }
            block = l.to_string();
            pieces.push(Piece { label: block.clone(), lines: Vec::new(), barrier: None, sub_group: false });
            continue;
        }
        if line.contains("@llvm.lifetime.") {
            // Lifetimes would be wrong once a variable outlives the call (frames) or
            // starts in another region; the optimiser does not need them here.
            continue;
        }
        let kind = callees_in(line).iter().map(|c| sync(c)).find(|s| *s != Sync::None).unwrap_or(Sync::None);
        let kind = if kind == Sync::ThenBarrier && line.ends_with(JOINED) { Sync::None } else { kind };
        placed[i] = pieces.len() - 1;
        match kind {
            Sync::None => pieces.last_mut().unwrap().lines.push(line.clone()),
            Sync::Unsupported => return Err(format!("unsupported synchronisation in '{}'", line.trim())),
            Sync::Barrier | Sync::ThenBarrier => {
                let p = pieces.last_mut().unwrap();
                if kind == Sync::ThenBarrier {
                    p.lines.push(line.clone());
                }
                barriers += 1;
                p.barrier = Some(barriers);
                p.sub_group = callees_in(line).iter().any(|c| opencl_name(c) == Some("sub_group_barrier"));
                pieces.push(Piece {
                    label: resume_label(barriers),
                    lines: Vec::new(),
                    barrier: None,
                    sub_group: false,
                });
            }
        }
    }
    let last = &pieces.last().unwrap().label;
    if *last != block {
        moved.push((block, last.clone()));
    }
    // Phis name the block their value comes from: now the piece with the terminator.
    for p in &mut pieces {
        for l in p.lines.iter_mut().filter(|l| l.contains(" phi ")) {
            for (from, to) in &moved {
                *l = l.replace(&format!(", %{from} ]"), &format!(", %{to} ]"));
            }
        }
    }
    Ok((pieces, placed))
}

type Bits = Vec<u64>;

fn bit(b: &Bits, i: usize) -> bool {
    b[i / 64] >> (i % 64) & 1 == 1
}

fn set(b: &mut Bits, i: usize) {
    b[i / 64] |= 1 << (i % 64);
}

/// Values derived from an alloca's address (geps, casts, selects, calls), each with the
/// allocas it may point into; the allocas themselves included.
fn derived_from_allocas(pieces: &[Piece], allocas: &[Alloca]) -> HashMap<String, Vec<usize>> {
    let mut derived: HashMap<String, Vec<usize>> =
        allocas.iter().enumerate().map(|(i, a)| (a.0.clone(), vec![i])).collect();
    // Twice: a value may be used above its definition (phis of loops).
    for _ in 0..2 {
        for l in pieces.iter().flat_map(|p| &p.lines) {
            let Some((name, rhs)) = def_of(l) else { continue };
            if rhs.starts_with("load ") || rhs.starts_with("alloca ") {
                continue;
            }
            let mut from: Vec<usize> =
                locals_in(rhs).iter().filter_map(|n| derived.get(*n)).flatten().copied().collect();
            if !from.is_empty() {
                from.sort_unstable();
                from.dedup();
                derived.insert(name.to_string(), from);
            }
        }
    }
    derived
}

/// Which allocas have their address stored in memory (so they may be used anywhere
/// later), and, for each barrier, which are live at the start of the region after it.
fn live_across_barriers(
    pieces: &[Piece],
    succs: &[Vec<usize>],
    allocas: &[Alloca],
    derived: &HashMap<String, Vec<usize>>,
    resume_of: &dyn Fn(u32) -> usize,
) -> (Vec<bool>, Vec<Vec<bool>>) {
    let words = allocas.len().div_ceil(64).max(1);
    let root: HashMap<&str, usize> = allocas.iter().enumerate().map(|(i, a)| (a.0.as_str(), i)).collect();
    let mut escaped = vec![false; allocas.len()];
    let mut gen = vec![vec![0u64; words]; pieces.len()];
    let mut kill = vec![vec![0u64; words]; pieces.len()];
    for (pi, p) in pieces.iter().enumerate() {
        for l in &p.lines {
            let t = l.trim_start();
            let store = t.strip_prefix("store ").map(|s| split_top(s));
            if let Some(ops) = &store {
                // Storing an address lets it be used anywhere later.
                for n in locals_in(ops.first().map_or("", |s| s)) {
                    for &a in derived.get(n).into_iter().flatten() {
                        escaped[a] = true;
                    }
                }
                if let (Some(val), Some(ptr)) = (ops.first(), ops.get(1)) {
                    if let Some(&a) = ptr.strip_prefix("ptr ").and_then(|n| root.get(n.trim())) {
                        if val.starts_with(&format!("{} ", allocas[a].1)) && !bit(&gen[pi], a) {
                            set(&mut kill[pi], a);
                            continue;
                        }
                    }
                }
            }
            for n in locals_in(t) {
                for &a in derived.get(n).into_iter().flatten() {
                    if def_of(l).is_some_and(|(d, _)| d == n) {
                        continue;
                    }
                    if !bit(&kill[pi], a) {
                        set(&mut gen[pi], a);
                    }
                }
            }
        }
    }
    // Backward liveness; a barrier piece flows into the piece after the barrier.
    let flow: Vec<Vec<usize>> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut s = succs[i].clone();
            if let Some(n) = p.barrier {
                s.push(resume_of(n));
            }
            s
        })
        .collect();
    let mut live_in = vec![vec![0u64; words]; pieces.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..pieces.len()).rev() {
            let mut out = vec![0u64; words];
            for &s in &flow[i] {
                for w in 0..words {
                    out[w] |= live_in[s][w];
                }
            }
            for w in 0..words {
                let v = gen[i][w] | (out[w] & !kill[i][w]);
                if v != live_in[i][w] {
                    live_in[i][w] = v;
                    changed = true;
                }
            }
        }
    }
    let barriers = pieces.iter().filter(|p| p.barrier.is_some()).count() as u32;
    let live = (1..=barriers).map(|n| (0..allocas.len()).map(|a| bit(&live_in[resume_of(n)], a)).collect()).collect();
    (escaped, live)
}

/// Allocas written once with a value computed only from kernel arguments, work-item
/// queries and other such allocas (`int lx = get_local_id(0);`, the argument copies
/// clang makes): each is the same whenever the work-item evaluates it, so rather than
/// keeping it in frame memory (a load the optimiser cannot see through, which stops
/// vectorisation over work-items), it is recomputed at the start of each region.
/// Returns, per alloca, how to recompute it.
fn rematerializable(pieces: &[Piece], allocas: &[Alloca]) -> Vec<Option<Remat>> {
    let lines: Vec<&String> = pieces.iter().flat_map(|p| &p.lines).collect();
    let defs: HashMap<&str, usize> = lines.iter().enumerate().filter_map(|(i, l)| Some((def_of(l)?.0, i))).collect();
    let index: HashMap<&str, usize> = allocas.iter().enumerate().map(|(i, a)| (a.0.as_str(), i)).collect();
    // Where each alloca is mentioned: its only store, and whether anything else than
    // direct loads and that store uses it.
    let mut store: Vec<Option<usize>> = vec![None; allocas.len()];
    let mut ok = vec![true; allocas.len()];
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if def_of(l).is_some_and(|(_, rhs)| rhs.starts_with("alloca ")) {
            continue;
        }
        for n in locals_in(t) {
            let Some(&a) = index.get(n) else { continue };
            let ops = t.strip_prefix("store ").map(split_top);
            let is_ptr_of =
                |ops: &Vec<&str>| ops.get(1).is_some_and(|p| p.strip_prefix("ptr ").map(str::trim) == Some(n));
            match &ops {
                Some(ops) if is_ptr_of(ops) && !locals_in(ops[0]).contains(&n) => {
                    ok[a] &= store[a].is_none();
                    store[a] = Some(i);
                }
                None if def_of(l).is_some_and(|(_, rhs)| {
                    rhs.strip_prefix("load ").and_then(|r| split_top(r).get(1).copied()) == Some(&format!("ptr {n}"))
                }) => {}
                _ => ok[a] = false,
            }
        }
    }
    // Which values can be recomputed, and the definitions they need, in text order.
    struct Scope<'a, 'b> {
        lines: &'b [&'a String],
        defs: &'b HashMap<&'a str, usize>,
        index: &'b HashMap<&'a str, usize>,
        /// Whether an alloca may be read by a chain stored at the given line.
        usable: &'b dyn Fn(usize, usize) -> bool,
        at: usize,
    }
    fn need<'a>(v: &'a str, s: &Scope<'a, '_>, out: &mut Vec<usize>, deps: &mut Vec<usize>) -> bool {
        let Some(&d) = s.defs.get(v) else { return true };
        if out.contains(&d) {
            return true;
        }
        let (_, rhs) = def_of(s.lines[d]).unwrap();
        let rhs = rhs.trim_start_matches("tail ");
        let op = rhs.split_whitespace().next().unwrap_or("");
        let fine = if op == "load" {
            let from =
                split_top(&rhs[5..]).get(1).and_then(|p| p.strip_prefix("ptr ")).and_then(|p| s.index.get(p.trim()));
            deps.extend(from);
            from.is_some_and(|&a| (s.usable)(a, s.at))
        } else if op == "call" {
            callees_in(rhs).first().is_some_and(|c| context::answer(c).is_some())
        } else {
            PURE.contains(&op)
        };
        if !fine {
            return false;
        }
        if op != "load" {
            for n in locals_in(rhs) {
                if n != v && !need(n, s, out, deps) {
                    return false;
                }
            }
        }
        out.push(d);
        true
    }
    let mut chains: Vec<Option<(Vec<usize>, Vec<usize>)>> = vec![None; allocas.len()];
    // Allocas in the order of their stores, so that a chain only reads allocas
    // recomputed before it.
    let mut order: Vec<usize> = (0..allocas.len()).filter(|&a| ok[a] && store[a].is_some()).collect();
    order.sort_by_key(|&a| store[a]);
    for a in order {
        let s = store[a].unwrap();
        let known: Vec<bool> = chains.iter().map(Option::is_some).collect();
        let usable = |b: usize, at: usize| known[b] && store[b].is_some_and(|sb| sb < at);
        let value = split_top(&lines[s].trim_start()["store ".len()..])[0];
        let (mut out, mut deps) = (Vec::new(), Vec::new());
        let scope = Scope { lines: &lines, defs: &defs, index: &index, usable: &usable, at: s };
        if locals_in(value).iter().all(|n| need(n, &scope, &mut out, &mut deps)) {
            out.sort_unstable();
            out.push(s);
            deps.sort_unstable();
            deps.dedup();
            chains[a] = Some((out, deps));
        }
    }
    chains
        .into_iter()
        .map(|c| {
            let (c, deps) = c?;
            let renamed: Vec<&str> = c.iter().filter_map(|&i| def_of(lines[i]).map(|(d, _)| d)).collect();
            let lines = c
                .iter()
                .map(|&i| {
                    let mut l = lines[i].clone();
                    // Longest names first, so %__v1 does not rewrite part of %__v12.
                    let mut names = renamed.clone();
                    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
                    for n in names {
                        l = replace_value(&l, n, &format!("%__fcl_m.{}", &n[1..]));
                    }
                    l
                })
                .collect();
            Some(Remat { store: *c.last()?, lines, deps })
        })
        .collect()
}

/// How to recompute an alloca (see `rematerializable`).
#[derive(Clone, Debug)]
struct Remat {
    /// Position of its store among the body's lines: recomputations run in this order.
    store: usize,
    /// The lines that recompute and store it, defined names prefixed `%__fcl_m.` (the
    /// caller makes them unique per region).
    lines: Vec<String>,
    /// Allocas the lines load: recomputed first wherever this one is.
    deps: Vec<usize>,
}

/// The recomputable allocas to recompute where `live` ones are live: those and what
/// they load, transitively, in the order of their stores.
fn remat_order(remat: &[Option<Remat>], live: &[bool]) -> Vec<usize> {
    let mut want: Vec<usize> = (0..remat.len()).filter(|&a| live[a] && remat[a].is_some()).collect();
    let mut i = 0;
    while i < want.len() {
        for &d in remat[want[i]].iter().flat_map(|r| &r.deps) {
            if remat[d].is_some() && !want.contains(&d) {
                want.push(d);
            }
        }
        i += 1;
    }
    want.sort_by_key(|&a| remat[a].as_ref().map(|r| r.store));
    want
}

/// Refuses the transform when an SSA value would be used where its definition no longer
/// dominates: the value lived across a barrier.
fn check_dominance(pieces: &[Piece], succs: &[Vec<usize>], index: &HashMap<&str, usize>) -> Result<(), String> {
    let (dom, preds) = dominators(pieces, succs);
    let reachable = |i: usize| !preds[i].is_empty() && !dom[i].iter().all(|&w| w == u64::MAX);
    let mut def_piece: HashMap<&str, usize> = HashMap::new();
    for (i, p) in pieces.iter().enumerate() {
        for l in &p.lines {
            if let Some((name, rhs)) = def_of(l) {
                if !rhs.starts_with("alloca ") {
                    def_piece.insert(name, i);
                }
            }
        }
    }
    for (i, p) in pieces.iter().enumerate() {
        if !reachable(i) {
            continue;
        }
        for l in &p.lines {
            let own = def_of(l).map(|(d, _)| d);
            if def_of(l).is_some_and(|(_, rhs)| rhs.starts_with("phi ")) {
                for (v, b) in phi_pairs(l) {
                    let Some(&bi) = b.strip_prefix('%').and_then(|b| index.get(b)) else { continue };
                    for name in locals_in(v) {
                        if def_piece.get(name).is_some_and(|&d| !bit(&dom[bi], d)) {
                            return Err(format!("{name} lives across a barrier"));
                        }
                    }
                }
                continue;
            }
            for name in locals_in(l).into_iter().filter(|&n| Some(n) != own) {
                if def_piece.get(name).is_some_and(|&d| !bit(&dom[i], d)) {
                    return Err(format!("{name} lives across a barrier"));
                }
            }
        }
    }
    Ok(())
}

/// A phi's `[ value, %block ]` pairs.
fn phi_pairs(line: &str) -> Vec<(&str, &str)> {
    line.split('[')
        .skip(1)
        .filter_map(|pair| {
            let ops = split_top(pair.split(']').next().unwrap_or(""));
            Some((ops.first()?.trim(), ops.get(1)?.trim()))
        })
        .collect()
}

/// The dominator sets of the pieces (bit sets; index `pieces.len()` is a new entry
/// branching to the kernel's entry and to every resume point), and each piece's
/// predecessors.
fn dominators(pieces: &[Piece], succs: &[Vec<usize>]) -> (Vec<Bits>, Vec<Vec<usize>>) {
    let n = pieces.len();
    // The new entry (index n) branches to the old entry and to every resume point.
    let mut preds = vec![Vec::new(); n + 1];
    for (i, ss) in succs.iter().enumerate() {
        for &s in ss {
            preds[s].push(i);
        }
    }
    preds[0].push(n);
    for (i, p) in pieces.iter().enumerate() {
        if p.label.starts_with("__fcl_r") {
            preds[i].push(n);
        }
    }
    let words = (n + 1).div_ceil(64);
    let all = vec![u64::MAX; words];
    let mut dom = vec![all.clone(); n + 1];
    dom[n] = vec![0; words];
    set(&mut dom[n], n);
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            let mut d = all.clone();
            for &p in &preds[i] {
                for w in 0..words {
                    d[w] &= dom[p][w];
                }
            }
            if preds[i].is_empty() {
                d = vec![0; words];
            }
            set(&mut d, i);
            if d != dom[i] {
                dom[i] = d;
                changed = true;
            }
        }
    }
    (dom, preds)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// How the compiler classifies calls, for the tests' kernels.
    pub(in super::super) fn sync(name: &str) -> Sync {
        match name {
            "_Z7barrierj" | "_Z17sub_group_barrierj" => Sync::Barrier,
            n if n.starts_with("_Z17wait_group_events") => Sync::ThenBarrier,
            n if n.starts_with("_Z21work_group_") => Sync::Unsupported,
            _ => Sync::None,
        }
    }

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    const DEFINE: &str =
        "define dso_local spir_kernel void @k(ptr addrspace(1) noundef %0, i32 noundef %1, ptr %__ferrocl_ctx) #0 {";

    #[test]
    fn numbered_names_become_named() {
        assert_eq!(rename_numbered("  %5 = add i32 %4, %struct.S"), "  %__v5 = add i32 %__v4, %struct.S");
        assert_eq!(rename_numbered("25:       ; preds = %3"), "__v25:       ; preds = %__v3");
        assert_eq!(rename_numbered("  %5x = add"), "  %5x = add");
    }

    /// A loop around a barrier whose counter starts at `start` (lines storing to %3).
    fn counter_loop(start: &str) -> Vec<String> {
        lines(&format!(
            "  %3 = alloca i32, align 4
  %4 = alloca float, align 4
{start}
  br label %5
5:
  %6 = load i32, ptr %3, align 4
  %7 = icmp slt i32 %6, %1
  br i1 %7, label %8, label %12
8:
  store float 1.0, ptr %4, align 4
  %9 = load float, ptr %4, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %10 = load i32, ptr %3, align 4
  %11 = add i32 %10, 1
  store i32 %11, ptr %3, align 4
  br label %5
12:
  ret void"
        ))
    }

    /// The copies between %__v3's alloca and `slot` where the region ends at the barrier
    /// (to `slot`) and where the one after it resumes (from `from`).
    fn save_and_restore(to: &str, from: &str) -> String {
        let copy = |dst: &str, src: &str| {
            format!("  call void @llvm.memcpy.p0.p0.i64(ptr align 4 {dst}, ptr align 4 {src}, i64 4, i1 false)\n")
        };
        format!("{}  ret i32 1\n__fcl_r1:\n{}  %__v10 = load i32", copy(to, "%__v3"), copy("%__v3", from))
    }

    #[test]
    fn counter_across_barrier_is_kept_once_per_group_and_temporary_stays() {
        let r = make_resumable(
            DEFINE,
            &counter_loop("  store i32 0, ptr %3, align 4"),
            &TypeTable::new(),
            "%__ferrocl_ctx",
            &sync,
        )
        .unwrap();
        assert_eq!(r.barriers, 1);
        // The counter is the same in every work-item: no frame slots, one copy in each
        // half of the uniform block.
        assert_eq!((r.frame_size, r.uniform), (0, 4));
        assert!(r.text.starts_with("define dso_local spir_kernel i32 @k(ptr addrspace(1) noundef %__v0, i32 noundef %__v1, ptr %__ferrocl_ctx, ptr %__fcl_frames, ptr %__fcl_uniform, i32 %__fcl_resume) #0 {"));
        // The counter keeps its alloca within regions, written to the second half at the
        // barrier and read from the first where the region after it resumes.
        assert!(r.text.contains("  %__v3 = alloca i32, align 4"));
        assert!(r.text.contains("  %__fcl_u.__v3 = getelementptr inbounds i8, ptr %__fcl_uniform, i64 0\n"));
        assert!(r.text.contains("  %__fcl_w.__v3 = getelementptr inbounds i8, ptr %__fcl_uniform, i64 4\n"));
        assert!(r.text.contains("  %__v4 = alloca float, align 4"));
        assert!(r.text.contains("switch i32 %__fcl_resume, label %__v2 [ i32 1, label %__fcl_r1 ]"));
        assert!(r.text.contains(&save_and_restore("%__fcl_w.__v3", "%__fcl_u.__v3")), "{}", r.text);
        assert!(r.text.contains("ret i32 0"));
        assert!(!r.text.contains("_Z7barrierj"));
    }

    #[test]
    fn a_loop_of_regions_ends_at_its_exit_so_its_test_runs_for_one_work_item() {
        // for (k = 0; k < n; k++) { barrier(); if (lid == 0) x[0] = 1; }
        // if (lid == 0) x[0] = 2;
        let body = lines(
            "  %3 = alloca i32, align 4
  store i32 0, ptr %3, align 4
  br label %4
4:
  %5 = load i32, ptr %3, align 4
  %6 = icmp slt i32 %5, %1
  br i1 %6, label %7, label %12
7:
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %8 = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %9 = icmp eq i64 %8, 0
  br i1 %9, label %10, label %11
10:
  store float 1.0, ptr addrspace(1) %0, align 4
  br label %11
11:
  %13 = load i32, ptr %3, align 4
  %14 = add i32 %13, 1
  store i32 %14, ptr %3, align 4
  br label %4
12:
  %15 = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %16 = icmp eq i64 %15, 0
  br i1 %16, label %17, label %18
17:
  store float 2.0, ptr addrspace(1) %0, align 4
  br label %18
18:
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        // Barriers: the kernel's, and at the loop's head and exit; the region testing
        // the loop's condition runs for one work-item.
        assert_eq!(r.barriers, 3, "{}", r.text);
        let exit = &r.text[r.text.find("__v12:\n").expect("the exit block")..];
        assert!(exit.lines().nth(1).is_some_and(|l| l.contains("ret i32")), "{}", r.text);
        let test = r.text.find("icmp slt i32").unwrap();
        let region = r.text[..test]
            .rfind("__fcl_r")
            .map_or(0, |at| r.text[at + 7..].split(':').next().unwrap().parse().unwrap());
        assert!(r.invariant[region].is_some(), "region {region} tests the loop: {}", r.text);
    }

    #[test]
    fn counter_from_the_local_id_is_kept_per_work_item() {
        let start = "  %s = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %t = trunc i64 %s to i32
  store i32 %t, ptr %3, align 4";
        let r = make_resumable(DEFINE, &counter_loop(start), &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert_eq!((r.frame_size, r.uniform), (4, 0));
        assert!(r.text.contains("%__fcl_a.__v3 = getelementptr inbounds i8, ptr %__fcl_frames, i64 %__fcl_b.__v3"));
        assert!(r.text.contains("%__fcl_f.__v3 = getelementptr inbounds [4 x i8], ptr %__fcl_a.__v3, i64 %__fcl_item"));
        assert!(r.text.contains(&save_and_restore("%__fcl_f.__v3", "%__fcl_f.__v3")), "{}", r.text);
        assert!(!r.text.contains("%__fcl_u."));
    }

    #[test]
    fn variable_whose_address_is_stored_lives_in_its_slot() {
        // %4 holds the address of %3 across the barrier: %3 must stay at one address.
        let body = lines(
            "  %3 = alloca i32, align 4
  %4 = alloca ptr, align 8
  store ptr %3, ptr %4, align 8
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %5 = load ptr, ptr %4, align 8
  store i32 1, ptr %5, align 4
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert!(
            r.text.contains("  %__v3 = getelementptr inbounds [4 x i8], ptr %__fcl_a.__v3, i64 %__fcl_item"),
            "{}",
            r.text
        );
        assert!(!r.text.contains("%__v3 = alloca"));
    }

    #[test]
    fn values_across_barriers_move_into_variables() {
        // Optimised code (SYCL's SPIR-V) keeps values in registers across barriers.
        let body = lines(
            "  %3 = load i32, ptr addrspace(1) %0, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %4 = add i32 %3, 1
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert!(r.text.contains("store i32 %__v3, ptr %__dm.__v3"), "{}", r.text);
        assert!(r.text.contains("%__v4 = add i32 %__dl0.__v3, 1"), "{}", r.text);
        assert!(r.frame_size + r.uniform >= 4, "{}", r.text);
        // A loop's phi read after the barrier in its body: stored after the phis, and the
        // back edge's value needs no variable (its block is the barrier's region).
        let body = lines(
            "  br label %4
4:
  %5 = phi i32 [ 0, %2 ], [ %6, %4 ]
  %9 = phi i32 [ 1, %2 ], [ %5, %4 ]
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %6 = add i32 %5, %9
  %7 = icmp slt i32 %6, %1
  br i1 %7, label %4, label %8
8:
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        let t = &r.text;
        let phi = t.find("%__v9 = phi").unwrap();
        assert!(t[phi..].trim_start_matches(|c| c != '\n').contains("store i32 %__v5, ptr %__dm.__v5"), "{t}");
        assert!(t.contains("%__v6 = add i32 %__dl"), "{t}");
        assert!(!t.contains("%__dm.__v6"), "{t}");
        // The phi's value from the back edge (%5, read in the barrier's region) loads at
        // the end of that region.
        assert!(t.contains("%__v9 = phi i32 [ 1, %__v2 ], [ %__dl0.__v5, %__fcl_r1 ]"), "{t}");
        // A phi's value from a block clang ends with a blank line: loaded before the
        // block's branch, not after it.
        let body = lines(
            "  br i1 true, label %3, label %5
3:
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %4 = load i32, ptr addrspace(1) %0, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  br label %6

5:
  br label %6

6:
  %7 = phi i32 [ %4, %3 ], [ 0, %5 ]
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert!(r.text.contains("%__dl0.__v4 = load i32, ptr %__dm.__v4\n  br label %__v6"), "{}", r.text);
    }

    #[test]
    fn sub_group_barriers_only_some_sub_groups_reach_are_refused() {
        // `if (get_sub_group_id() == 0) sub_group_barrier(...)`: fibers run it.
        let kernel = |condition: &str| {
            lines(&format!(
                "  {condition}
  %4 = icmp eq i32 %3, 0
  br i1 %4, label %5, label %6
5:
  call void @_Z17sub_group_barrierj(i32 1, ptr %__ferrocl_ctx)
  br label %6
6:
  ret void"
            ))
        };
        let varying = kernel("%3 = call i32 @_Z16get_sub_group_idv(ptr %__ferrocl_ctx)");
        let e = make_resumable(DEFINE, &varying, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap_err();
        assert!(e.contains("under a branch that differs"), "{e}");
        // A branch every work-item takes alike keeps the regions.
        let uniform = kernel("%3 = add i32 %1, 0");
        assert!(make_resumable(DEFINE, &uniform, &TypeTable::new(), "%__ferrocl_ctx", &sync).is_ok());
    }

    #[test]
    fn sub_group_barriers_under_branches_alike_in_every_work_item_keep_the_regions() {
        // dpnp's sliding window: a loop of shuffles whose trip count comes from the
        // maximum sub-group size and a size captured in a `byval` argument, through
        // `sub_sat` and a division helper.
        let define = "define spir_kernel void @k(ptr byval(%struct.S) align 8 %0, ptr %__ferrocl_ctx) #0 {";
        let kernel = |write: &str| {
            lines(&format!(
                "  %2 = getelementptr inbounds %struct.S, ptr %0, i64 0, i32 1
  {write}
  %3 = load i64, ptr %2, align 8
  %4 = call i32 @_Z22get_max_sub_group_sizev(ptr %__ferrocl_ctx)
  %5 = zext i32 %4 to i64
  %6 = call i64 @_Z7sub_satmm(i64 %3, i64 1)
  %7 = call i64 @__ferrocl_udiv_u64(i64 %6, i64 %5)
  br label %8
8:
  %9 = phi i64 [ 0, %1 ], [ %10, %8 ]
  call void @_Z17sub_group_barrierj(i32 1, ptr %__ferrocl_ctx)
  %10 = add i64 %9, 1
  %11 = icmp ult i64 %10, %7
  br i1 %11, label %8, label %12
12:
  ret void"
            ))
        };
        let types = TypeTable::new();
        assert!(make_resumable(define, &kernel(""), &types, "%__ferrocl_ctx", &sync).is_ok());
        // A work-item that writes the argument may read back its own value.
        let written = kernel("store i64 7, ptr %2, align 8");
        let e = make_resumable(define, &written, &types, "%__ferrocl_ctx", &sync).unwrap_err();
        assert!(e.contains("sub-group barrier"), "{e}");
    }

    #[test]
    fn collectives_are_refused_and_waits_are_kept() {
        let body = lines("  %3 = call i32 @_Z21work_group_reduce_addi(i32 %1)\n  ret void");
        assert!(make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).is_err());
        let body = lines("  call void @_Z17wait_group_eventsiP9ocl_event(i32 1, ptr null)\n  ret void");
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert!(r.text.contains("wait_group_events"));
        assert!(r.text.contains("ret i32 1\n__fcl_r1:\n  ret i32 0"));
    }

    #[test]
    fn ids_are_recomputed_after_barriers_instead_of_framed() {
        let body = lines(
            "  %3 = alloca i32, align 4
  %4 = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %5 = trunc i64 %4 to i32
  store i32 %5, ptr %3, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %6 = load i32, ptr %3, align 4
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert_eq!(r.frame_size, 0);
        assert!(
            r.text.contains(
                "__fcl_r1:\n  %__fcl_m.__fcl_r1.0.__v4 = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)\n  \
             %__fcl_m.__fcl_r1.0.__v5 = trunc i64 %__fcl_m.__fcl_r1.0.__v4 to i32\n  \
             store i32 %__fcl_m.__fcl_r1.0.__v5, ptr %__v3, align 4\n  %__v6 = load"
            ),
            "{}",
            r.text
        );
    }

    #[test]
    fn recomputing_a_variable_recomputes_what_it_reads_first() {
        // int x = arg; int d = x - 1; barrier(); use(d): only d is live after the
        // barrier, but recomputing it reads x, which must be stored again before.
        let body = lines(
            "  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  store i32 %1, ptr %3, align 4
  %5 = load i32, ptr %3, align 4
  %6 = sub i32 %5, 1
  store i32 %6, ptr %4, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %7 = load i32, ptr %4, align 4
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert_eq!(r.frame_size, 0);
        let after = &r.text[r.text.find("__fcl_r1:").unwrap()..];
        let (x, d) = (after.find("store i32 %__v1, ptr %__v3").unwrap(), after.find("ptr %__v4").unwrap());
        assert!(x < d, "{after}");
    }

    #[test]
    fn phis_follow_the_split_block() {
        let body = lines(
            "  br label %3
3:
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  br label %4
4:
  %5 = phi i1 [ false, %3 ]
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert!(r.text.contains("phi i1 [ false, %__fcl_r1 ]"), "{}", r.text);
    }

    #[test]
    fn a_region_computes_where_its_work_items_loop() {
        // Region 0 loops (3 -> 4 -> 3) before the barrier; region 1 only returns.
        let body = lines(
            "  br label %3
3:
  %i = phi i32 [ 0, %2 ], [ %n, %4 ]
  br label %4
4:
  %n = add i32 %i, 1
  %d = icmp eq i32 %n, 8
  br i1 %d, label %5, label %3
5:
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  ret void",
        );
        let r = make_resumable(DEFINE, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        assert_eq!(r.computes, vec![true, false]);
        // A cycle only through pieces outside the set is none.
        let succs = vec![vec![1], vec![2], vec![0]];
        assert!(has_cycle(&succs, &[true, true, true]));
        assert!(!has_cycle(&succs, &[true, true, false]));
    }
}
