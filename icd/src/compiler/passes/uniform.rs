//! Work-item-invariant barrier regions. A region whose every effect is the same for all
//! work-items of a group (the typical tile load: an async copy with arguments computed
//! from group ids and kernel arguments, then `wait_group_events`) needs to run for one
//! work-item only. Running it for every work-item costs each of them a pass over the
//! copy's fast path (a few ns per work-item and region, a quarter of a 16 KiB round
//! trip's time at 64 work-items); run once, the launcher then gives the others what
//! that one work-item left behind: its frame slots, and its count of copies passed.
//!
//! The analysis works on clang's unoptimised IR, where each C variable is an alloca
//! and SSA values live within an expression. A value varies between work-items if it
//! comes from a work-item id query, from a call the analysis does not know, from a
//! variable that varies, or from a load of memory that may differ (private memory
//! through a pointer, memory the region itself writes, a volatile or atomic load). A variable varies if any store
//! to it stores a varying value, the address of a variable (each work-item's own),
//! through a varying address, or under a branch on a varying condition (the work-items
//! would then disagree on whether it was stored), or if its address escapes. A region
//! is invariant when, along every path in it, no branch, store, or copy argument
//! varies, it writes no memory but its variables, and it calls nothing but group
//! queries, async copies, fences, prefetches and waits. Variables that do not vary are
//! what `regions` keeps once per group.

use std::collections::{HashMap, HashSet};

use super::context::{self, Answer};
use super::ir_text::{callees_in, def_of, locals_in, matching_paren, opencl_name, split_top, Alloca, Piece, PURE};

const WAIT: &str = "wait_group_events";

#[derive(Clone, Copy, PartialEq, Debug)]
enum Callee {
    /// Same result for every work-item given the same arguments.
    Group,
    /// Allowed, result varies.
    Item,
    Wait,
    /// Copies between variables.
    Memcpy,
    /// Anything else: the region runs for every work-item.
    Unknown,
}

fn classify(name: &str) -> Callee {
    let answer = context::answer(name);
    // Of the sub-group queries, these answer alike in every sub-group of a group (only
    // the last sub-group may be smaller, which `get_sub_group_size` tells).
    let group_wide = matches!(
        opencl_name(name),
        Some("get_max_sub_group_size" | "get_num_sub_groups" | "get_enqueued_num_sub_groups")
    );
    // Values of their arguments alone (`sub_sat`, the division helpers).
    let pure = super::simd::pure_builtin(name).is_some() || super::division::is_helper(name);
    if group_wide || pure || matches!(answer, Some(Answer::Range | Answer::Group)) {
        Callee::Group
    } else if matches!(answer, Some(Answer::GlobalItem | Answer::Item)) {
        Callee::Item
    } else if name.starts_with("llvm.memcpy.") {
        Callee::Memcpy
    } else {
        match opencl_name(name) {
            Some(WAIT) => Callee::Wait,
            // Group-wide builtins that behave the same called once with the arguments
            // every work-item would pass.
            Some(n) if ferrocl_kernel_abi::async_builtin(n).is_some_and(|b| b.once_per_group) => Callee::Group,
            _ => Callee::Unknown,
        }
    }
}

/// Address spaces other than global (1), constant (2) and local (3) may hold private
/// variables, which differ per work-item.
fn may_be_private(ptr_operand: &str) -> bool {
    !["ptr addrspace(1)", "ptr addrspace(2)", "ptr addrspace(3)"].iter().any(|p| ptr_operand.starts_with(p))
}

/// One instruction, as the analysis sees it.
enum Inst<'a> {
    Load {
        ptr: &'a str,
    },
    Store {
        value: &'a str,
        ptr: &'a str,
    },
    Call(Callee),
    Phi,
    Pure,
    Branch,
    /// `ret`, `unreachable`, `alloca`, labels and comments.
    Inert,
    /// Atomics, fences, anything not listed: not invariant.
    Other,
}

fn parse(line: &str) -> Inst<'_> {
    let t = line.trim_start();
    let rhs = def_of(line).map_or(t, |(_, rhs)| rhs);
    let rhs = rhs.trim_start_matches("tail ").trim_start_matches("notail ");
    let op = rhs.split_whitespace().next().unwrap_or("");
    match op {
        // An alloca's address is the same name for every work-item; what it holds is
        // tracked per variable.
        "" | "ret" | "unreachable" | "alloca" => Inst::Inert,
        _ if op.starts_with(';') => Inst::Inert,
        "br" | "switch" => Inst::Branch,
        "phi" => Inst::Phi,
        // A volatile or atomic load may see another group's or the host's writes land
        // between one work-item's load and the next one's.
        "load" => match split_top(&rhs[4..])[..] {
            [ty, ptr, ..] if !ty.starts_with("volatile ") && !ty.starts_with("atomic ") => Inst::Load { ptr },
            _ => Inst::Other,
        },
        "store" => match split_top(&rhs[5..])[..] {
            [value, ptr, ..] if !value.starts_with("volatile ") && !value.starts_with("atomic ") => {
                Inst::Store { value, ptr }
            }
            _ => Inst::Other,
        },
        "call" => {
            let callees = callees_in(rhs);
            match callees.first() {
                // A vector passed `byval` is read from memory the analysis does not follow.
                Some(c) if callees.len() == 1 && rhs.contains("byval(") => match classify(c) {
                    Callee::Group => Inst::Call(Callee::Unknown),
                    callee => Inst::Call(callee),
                },
                Some(c) if callees.len() == 1 => Inst::Call(classify(c)),
                _ => Inst::Other,
            }
        }
        // Running these once traps exactly when every work-item would.
        "extractvalue" | "insertvalue" | "sdiv" | "udiv" | "srem" | "urem" | "frem" => Inst::Pure,
        _ if PURE.contains(&op) => Inst::Pure,
        _ => Inst::Other,
    }
}

/// For regions `0..starts.len()` (region `n` starts at piece `starts[n]`): `Some` with
/// the framed variables it stores (whose slots the launcher copies from the work-item
/// that ran it to the others) when it can run for one work-item, else `None`.
pub(super) fn invariant_regions(
    define: &str,
    pieces: &[Piece],
    succs: &[Vec<usize>],
    allocas: &[Alloca],
    derived: &HashMap<String, Vec<usize>>,
    framed: &[bool],
    starts: &[usize],
) -> Uniformity {
    let (members, reach) = region_members(pieces, succs, starts);
    let opaque = opaque_regions(pieces, derived, &members, starts.len());
    let ipdom = super::flow::post_dominators(succs);
    let arguments = read_only_arguments(define, pieces);
    let facts = Facts {
        pieces,
        succs,
        ipdom: &ipdom,
        allocas,
        derived,
        arguments: &arguments,
        members: &members,
        opaque: &opaque,
    };
    let (values, vars, branchy) = facts.varying(starts.len());
    let varies = |l: &str| mentions_varying(&values, def_of(l).map(|(d, _)| d), l);
    let varying_branch =
        pieces.iter().map(|p| p.lines.iter().any(|l| matches!(parse(l), Inst::Branch) && varies(l))).collect();
    let regions = (0..starts.len())
        .map(|n| {
            if opaque[n] || branchy[n] {
                return None;
            }
            facts.stores_alike(&reach[n], framed, &vars, &varies)
        })
        .collect();
    Uniformity { regions, varying_branch, reach, varying: vars }
}

/// The pieces of each region: reached from its start without crossing a barrier (a
/// barrier piece has no successors). Returns the regions each piece belongs to, and for
/// each region which pieces it reaches.
fn region_members(pieces: &[Piece], succs: &[Vec<usize>], starts: &[usize]) -> (Vec<Vec<usize>>, Vec<Vec<bool>>) {
    let mut members = vec![Vec::new(); pieces.len()];
    let mut reach = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let mut seen = vec![false; pieces.len()];
        let mut todo = vec![start];
        while let Some(i) = todo.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            members[i].push(n);
            todo.extend(&succs[i]);
        }
        reach.push(seen);
    }
    (members, reach)
}

/// The variables whose addresses an operand may hold.
fn pointees(derived: &HashMap<String, Vec<usize>>, operand: &str) -> Vec<usize> {
    let mut out: Vec<usize> = locals_in(operand).iter().filter_map(|n| derived.get(*n)).flatten().copied().collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A store that only writes variables: through a private pointer (a generic one
/// derived from a variable's address may have been selected against a global one).
fn to_variable(derived: &HashMap<String, Vec<usize>>, ptr: &str) -> bool {
    !ptr.starts_with("ptr addrspace(") && !pointees(derived, ptr).is_empty()
}

/// The kernel's `byval` arguments (SYCL passes a kernel's captures so), and pointers
/// derived from them, where the kernel never writes them nor lets their address go:
/// every work-item reads the same values there. Empty otherwise.
fn read_only_arguments(define: &str, pieces: &[Piece]) -> HashSet<String> {
    let Some(open) = define.find("@").and_then(|at| define[at..].find('(').map(|p| at + p)) else {
        return HashSet::new();
    };
    let Some(close) = matching_paren(define, open) else { return HashSet::new() };
    let mut names: HashSet<String> = split_top(&define[open + 1..close])
        .into_iter()
        .filter(|p| p.contains("byval("))
        .filter_map(|p| p.split_whitespace().last().filter(|n| n.starts_with('%')).map(String::from))
        .collect();
    // Twice: a value may be used above its definition (phis of loops).
    for _ in 0..2 {
        for l in pieces.iter().flat_map(|p| &p.lines) {
            let Some((name, rhs)) = def_of(l) else { continue };
            let op = rhs.split_whitespace().next().unwrap_or("");
            let derives = matches!(op, "getelementptr" | "bitcast" | "addrspacecast" | "select" | "phi");
            if derives && locals_in(rhs).iter().any(|n| names.contains(*n)) {
                names.insert(name.to_string());
            }
        }
    }
    let mentions = |s: &str| locals_in(s).iter().any(|n| names.contains(*n));
    let writes = pieces.iter().flat_map(|p| &p.lines).any(|l| {
        let rhs = def_of(l).map_or(l.trim_start(), |(_, rhs)| rhs);
        let op = rhs.split_whitespace().next().unwrap_or("");
        match op {
            "getelementptr" | "bitcast" | "addrspacecast" | "select" | "phi" | "load" | "icmp" => false,
            // Only a copy out of the argument reads it.
            "call" | "tail" if callees_in(rhs).iter().any(|c| c.starts_with("llvm.memcpy.")) => {
                call_args(l).first().is_some_and(|dst| mentions(dst))
            }
            _ => mentions(l),
        }
    });
    if writes {
        HashSet::new()
    } else {
        names
    }
}

/// Regions that write memory other than their variables, or do anything unknown.
fn opaque_regions(
    pieces: &[Piece],
    derived: &HashMap<String, Vec<usize>>,
    members: &[Vec<usize>],
    regions: usize,
) -> Vec<bool> {
    let mut opaque = vec![false; regions];
    for (i, p) in pieces.iter().enumerate() {
        for l in &p.lines {
            let unknown = match parse(l) {
                Inst::Store { ptr, .. } => !to_variable(derived, ptr),
                // A memcpy is a store too (clang copies structs with it).
                Inst::Call(Callee::Memcpy) => !to_variable(derived, call_args(l).first().copied().unwrap_or("")),
                Inst::Call(Callee::Unknown) | Inst::Other => true,
                _ => false,
            };
            if unknown {
                members[i].iter().for_each(|&n| opaque[n] = true);
            }
        }
    }
    opaque
}

/// What the passes over the kernel's pieces share.
struct Facts<'a> {
    pieces: &'a [Piece],
    succs: &'a [Vec<usize>],
    /// Each piece's nearest post-dominator in the piece graph (cut at barriers).
    ipdom: &'a [Option<usize>],
    allocas: &'a [Alloca],
    derived: &'a HashMap<String, Vec<usize>>,
    /// Pointers into the kernel's `byval` arguments, which it never writes.
    arguments: &'a HashSet<String>,
    members: &'a [Vec<usize>],
    opaque: &'a [bool],
}

impl<'a> Facts<'a> {
    fn pointees(&self, operand: &str) -> Vec<usize> {
        pointees(self.derived, operand)
    }

    /// Whether what a load or memcpy at piece `i` reads from `ptr` may differ between
    /// work-items, given the varying variables.
    fn read_varies(&self, ptr: &str, i: usize, vars: &[bool]) -> bool {
        let from = self.pointees(ptr);
        if locals_in(ptr).iter().any(|n| self.arguments.contains(*n)) {
            false
        } else if from.is_empty() {
            may_be_private(ptr) || self.members[i].iter().any(|&n| self.opaque[n])
        } else {
            from.iter().any(|&a| vars[a])
        }
    }

    /// Varying values, variables and regions (a region with a varying branch), to a
    /// fixed point: each only ever grows.
    fn varying(&self, regions: usize) -> (HashSet<&'a str>, Vec<bool>, Vec<bool>) {
        let (pieces, members) = (self.pieces, self.members);
        let pointees = |operand: &str| self.pointees(operand);
        let read_varies = |ptr: &str, i: usize, vars: &[bool]| self.read_varies(ptr, i, vars);
        let mut values: HashSet<&str> = HashSet::new();
        let mut vars = vec![false; self.allocas.len()];
        let mut branchy = vec![false; regions];
        // Pieces only some work-items reach: the regions of varying branches up to
        // where their paths meet again (a store there is some work-items' only), and the
        // pieces varying branches end (a phi there takes values by different ways).
        let mut diverged = vec![false; pieces.len()];
        let mut splits = vec![false; pieces.len()];
        let mut preds = vec![Vec::new(); pieces.len()];
        for (i, ss) in self.succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(i);
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for (i, p) in pieces.iter().enumerate() {
                let joins = preds[i].iter().any(|&q| diverged[q] || splits[q]);
                let diverged_here = diverged[i];
                for l in &p.lines {
                    let own = def_of(l).map(|(d, _)| d);
                    let varies = |s: &str| mentions_varying(&values, own, s);
                    let inst = parse(l);
                    let result_varies = match inst {
                        Inst::Load { ptr } => varies(ptr) || read_varies(ptr, i, &vars),
                        Inst::Call(Callee::Group | Callee::Wait | Callee::Memcpy) | Inst::Pure => varies(l),
                        Inst::Phi => diverged_here || joins || varies(l),
                        Inst::Inert => false,
                        _ => true,
                    };
                    // Variables this instruction makes vary, and whether it is a varying branch.
                    let (tainted, varying_branch) = match inst {
                        Inst::Store { value, ptr } => {
                            // An address stored may be written through anywhere.
                            let mut t = pointees(value);
                            // And the variable it is stored in varies: each work-item's
                            // variables are its own, at addresses of their own once framed.
                            if !t.is_empty() || diverged_here || varies(value) || varies(ptr) {
                                t.extend(pointees(ptr));
                            }
                            (t, false)
                        }
                        Inst::Call(Callee::Memcpy) => {
                            let args = call_args(l);
                            let (dst, src) = (args.first().copied().unwrap_or(""), args.get(1).copied().unwrap_or(""));
                            let from_varying = read_varies(src, i, &vars);
                            (if diverged_here || varies(l) || from_varying { pointees(dst) } else { Vec::new() }, false)
                        }
                        Inst::Call(Callee::Wait) => (Vec::new(), false),
                        // Other calls given a variable's address may write it.
                        Inst::Call(_) | Inst::Other => (pointees(l), false),
                        Inst::Branch => (Vec::new(), varies(l)),
                        _ => (Vec::new(), false),
                    };
                    if let Some(d) = own.filter(|_| result_varies) {
                        changed |= values.insert(d);
                    }
                    for a in tainted {
                        changed |= !std::mem::replace(&mut vars[a], true);
                    }
                    if varying_branch {
                        for &n in &members[i] {
                            changed |= !std::mem::replace(&mut branchy[n], true);
                        }
                        if !std::mem::replace(&mut splits[i], true) {
                            changed = true;
                            let region = super::flow::divergent_region(self.succs, self.ipdom, i);
                            diverged.iter_mut().zip(region).for_each(|(d, r)| *d |= r);
                        }
                    }
                }
            }
        }
        (values, vars, branchy)
    }

    /// The framed variables a region (the pieces it reaches) stores, when it can run for
    /// one work-item and hand its slots to the others; `None` when it cannot.
    fn stores_alike(
        &self,
        reach: &[bool],
        framed: &[bool],
        vars: &[bool],
        varies: &dyn Fn(&str) -> bool,
    ) -> Option<Vec<usize>> {
        let (pieces, allocas) = (self.pieces, self.allocas);
        let pointees = |operand: &str| self.pointees(operand);
        let read_varies = |ptr: &str, i: usize, vars: &[bool]| self.read_varies(ptr, i, vars);
        let mut stored = Vec::new();
        for (i, p) in pieces.iter().enumerate().filter(|&(i, _)| reach[i]) {
            for l in &p.lines {
                let (targets, whole) = match parse(l) {
                    Inst::Store { value, ptr } => {
                        let root = ptr.strip_prefix("ptr ").map(str::trim);
                        let t = pointees(ptr);
                        // Variables outside frames (recomputed after each barrier, or
                        // used within one region) may take the first work-item's
                        // values: where those flow into an effect, the effect varies.
                        // A variable's address is each work-item's own.
                        let address = !pointees(value).is_empty();
                        if (address || varies(value) || varies(ptr)) && t.iter().any(|&a| framed[a]) {
                            return None;
                        }
                        let whole = t.len() == 1
                            && root == Some(allocas[t[0]].0.as_str())
                            && value.starts_with(&format!("{} ", allocas[t[0]].1));
                        (t, whole)
                    }
                    Inst::Call(Callee::Memcpy) => {
                        let args = call_args(l);
                        let t = pointees(args.first().copied().unwrap_or(""));
                        let from_varying = read_varies(args.get(1).copied().unwrap_or(""), i, vars);
                        if (varies(l) || from_varying) && t.iter().any(|&a| framed[a]) {
                            return None;
                        }
                        let size = args.get(2).and_then(|s| s.strip_prefix("i64 ")).and_then(|s| s.parse().ok());
                        let root = args.first().and_then(|a| a.split_whitespace().last());
                        let whole =
                            t.len() == 1 && root == Some(allocas[t[0]].0.as_str()) && size == Some(allocas[t[0]].2);
                        (t, whole)
                    }
                    Inst::Call(Callee::Group) => {
                        if varies(l) || !pointees(l).is_empty() {
                            return None;
                        }
                        continue;
                    }
                    Inst::Call(Callee::Wait) => {
                        if varies(l) || pointees(l).iter().any(|&a| vars[a]) {
                            return None;
                        }
                        continue;
                    }
                    _ => continue,
                };
                for a in targets.into_iter().filter(|&a| framed[a]) {
                    // Copying the slot whole would overwrite the parts this store
                    // leaves, which may differ between work-items.
                    if !whole && vars[a] {
                        return None;
                    }
                    stored.push(a);
                }
            }
        }
        stored.sort_unstable();
        stored.dedup();
        Some(stored)
    }
}

/// What `invariant_regions` found.
pub(super) struct Uniformity {
    /// For each region: `Some` with the framed variables it stores when it can run for
    /// one work-item.
    pub(crate) regions: Vec<Option<Vec<usize>>>,
    /// For each piece: it ends in a branch whose condition may differ between
    /// work-items.
    pub(crate) varying_branch: Vec<bool>,
    /// For each region, the pieces reached from its start without crossing a barrier.
    pub(crate) reach: Vec<Vec<bool>>,
    /// For each variable: it may hold different values in different work-items. One
    /// that does not is the same for all of them wherever a barrier is passed.
    pub(crate) varying: Vec<bool>,
}

/// Whether `text` uses a varying value other than `own` (the value its line defines).
fn mentions_varying(values: &HashSet<&str>, own: Option<&str>, text: &str) -> bool {
    locals_in(text).iter().any(|n| Some(*n) != own && values.contains(n))
}

/// The arguments of the call on `line`, as written (`ptr align 4 %x`, `i64 8`).
fn call_args(line: &str) -> Vec<&str> {
    let Some(open) = line.find("@").and_then(|at| line[at..].find('(').map(|p| at + p)) else { return Vec::new() };
    let Some(close) = matching_paren(line, open) else { return Vec::new() };
    split_top(&line[open + 1..close])
}

#[cfg(test)]
mod tests {
    use super::super::ir_type::TypeTable;
    use super::super::regions::make_resumable;
    use super::super::regions::tests::sync;
    use super::*;

    fn invariant(define: &str, body: &str) -> Vec<Option<Vec<(u64, u64)>>> {
        let body: Vec<String> = body.lines().map(str::to_string).collect();
        make_resumable(define, &body, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap().invariant
    }

    const DEFINE: &str = "define spir_kernel void @roundtrip(ptr addrspace(1) noundef align 16 %0, ptr addrspace(1) noundef align 16 %1, ptr addrspace(3) noundef align 16 %2, i32 noundef %3, ptr %__ferrocl_ctx) #0 {";

    /// clang's output for a 16 KiB round trip through local memory.
    const ROUNDTRIP: &str = "  %5 = alloca ptr addrspace(1), align 8
  %6 = alloca ptr addrspace(1), align 8
  %7 = alloca ptr addrspace(3), align 8
  %8 = alloca i32, align 4
  %9 = alloca i64, align 8
  %10 = alloca ptr, align 8
  store ptr addrspace(1) %0, ptr %5, align 8, !tbaa !10
  store ptr addrspace(1) %1, ptr %6, align 8, !tbaa !10
  store ptr addrspace(3) %2, ptr %7, align 8, !tbaa !10
  store i32 %3, ptr %8, align 4, !tbaa !14
  call void @llvm.lifetime.start.p0(i64 8, ptr %9) #5
  %11 = call i64 @_Z12get_group_idj(i32 noundef 0, ptr %__ferrocl_ctx) #6
  %12 = load i32, ptr %8, align 4, !tbaa !14
  %13 = sext i32 %12 to i64
  %14 = mul i64 %11, %13
  store i64 %14, ptr %9, align 8, !tbaa !16
  call void @llvm.lifetime.start.p0(i64 8, ptr %10) #5
  %15 = load ptr addrspace(3), ptr %7, align 8, !tbaa !10
  %16 = load ptr addrspace(1), ptr %5, align 8, !tbaa !10
  %17 = load i64, ptr %9, align 8, !tbaa !16
  %18 = getelementptr inbounds <4 x float>, ptr addrspace(1) %16, i64 %17
  %19 = load i32, ptr %8, align 4, !tbaa !14
  %20 = sext i32 %19 to i64
  %21 = call ptr @_Z21async_work_group_copyPU7CLlocalDv4_fPU8CLglobalKS_m9ocl_event(ptr addrspace(3) noundef %15, ptr addrspace(1) noundef %18, i64 noundef %20, ptr null) #7
  store ptr %21, ptr %10, align 8, !tbaa !18
  %22 = addrspacecast ptr %10 to ptr addrspace(4)
  call void @_Z17wait_group_eventsiPU9CLgeneric9ocl_event(i32 noundef 1, ptr addrspace(4) noundef %22) #7
  %23 = load ptr addrspace(1), ptr %6, align 8, !tbaa !10
  %24 = load i64, ptr %9, align 8, !tbaa !16
  %25 = getelementptr inbounds <4 x float>, ptr addrspace(1) %23, i64 %24
  %26 = load ptr addrspace(3), ptr %7, align 8, !tbaa !10
  %27 = load i32, ptr %8, align 4, !tbaa !14
  %28 = sext i32 %27 to i64
  %29 = call ptr @_Z21async_work_group_copyPU8CLglobalDv4_fPU7CLlocalKS_m9ocl_event(ptr addrspace(1) noundef %25, ptr addrspace(3) noundef %26, i64 noundef %28, ptr null) #7
  store ptr %29, ptr %10, align 8, !tbaa !18
  %30 = addrspacecast ptr %10 to ptr addrspace(4)
  call void @_Z17wait_group_eventsiPU9CLgeneric9ocl_event(i32 noundef 1, ptr addrspace(4) noundef %30) #7
  call void @llvm.lifetime.end.p0(i64 8, ptr %10) #5
  call void @llvm.lifetime.end.p0(i64 8, ptr %9) #5
  ret void";

    #[test]
    fn copies_with_group_arguments_run_once() {
        assert_eq!(invariant(DEFINE, ROUNDTRIP), vec![Some(vec![]), Some(vec![]), Some(vec![])]);
    }

    const COPY_AND_WAIT: &str = "  %__c = call ptr @_Z21async_work_group_copyPU7CLlocalfPU8CLglobalKfm9ocl_event(ptr addrspace(3) %2, ptr addrspace(1) %0, i64 64, ptr null)
  store ptr %__c, ptr %e, align 8
  call void @_Z17wait_group_eventsiPU9CLgeneric9ocl_event(i32 1, ptr %e)";

    /// `x = get_local_id(0)`.
    const X_FROM_LID: &str = "  %l0 = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %t0 = trunc i64 %l0 to i32
  store i32 %t0, ptr %x, align 4";

    fn with_copy(before: &str, after: &str) -> String {
        format!(
            "  %e = alloca ptr, align 8\n  %x = alloca i32, align 4\n{before}\n{COPY_AND_WAIT}\n{after}\n  ret void"
        )
    }

    #[test]
    fn a_uniform_variable_kept_across_the_barrier_needs_no_sharing() {
        // x = in[group]; copy; wait; out[lid] = x
        let body = with_copy(
            "  %g = call i64 @_Z12get_group_idj(i32 0, ptr %__ferrocl_ctx)
  %p = getelementptr inbounds i32, ptr addrspace(1) %0, i64 %g
  %v = load i32, ptr addrspace(1) %p, align 4
  store i32 %v, ptr %x, align 4",
            "  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i64 %l
  %y = load i32, ptr %x, align 4
  store i32 %y, ptr addrspace(1) %q, align 4",
        );
        let r = invariant(DEFINE, &body);
        // x is held once per group (`Resumable::uniform`): nothing to hand the others.
        assert_eq!(r[0], Some(vec![]));
        assert_eq!(r[1], None, "the region after stores to global memory per work-item");
        // x from the local id is each work-item's own: the one that ran the region hands
        // its slot to the others.
        let own = body.replace("@_Z12get_group_idj", "@_Z12get_local_idj");
        assert_eq!(invariant(DEFINE, &own)[0], None, "x varies, so the region runs for every work-item");
    }

    #[test]
    fn a_varying_variable_an_invariant_region_stores_is_shared() {
        // x = lid; copy; wait; x = 7; barrier; out[lid] = x
        let body = with_copy(
            X_FROM_LID,
            "  store i32 7, ptr %x, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i64 %l
  %y = load i32, ptr %x, align 4
  store i32 %y, ptr addrspace(1) %q, align 4",
        );
        let r = invariant(DEFINE, &body);
        assert_eq!(r[0], None);
        assert_eq!(r[1], Some(vec![(0, 4)]), "x's slot is handed to the others");
    }

    #[test]
    fn a_region_storing_a_variable_address_runs_for_every_work_item() {
        // p = &x; copy; wait; *p = lid: each work-item's p points to its own x.
        let body = with_copy(
            "  %p = alloca ptr, align 8\n  store i32 5, ptr %x, align 4\n  store ptr %x, ptr %p, align 8",
            "  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %t = trunc i64 %l to i32
  %a = load ptr, ptr %p, align 8
  store i32 %t, ptr %a, align 4",
        );
        assert_eq!(invariant(DEFINE, &body)[0], None);
    }

    #[test]
    fn a_volatile_load_varies() {
        // x = *(volatile int *)flag; copy; wait; out[lid] = x
        let load = |volatile: &str| {
            with_copy(
                &format!("  %v = load {volatile}i32, ptr addrspace(1) %0, align 4\n  store i32 %v, ptr %x, align 4"),
                "  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i64 %l
  %y = load i32, ptr %x, align 4
  store i32 %y, ptr addrspace(1) %q, align 4",
            )
        };
        assert_eq!(invariant(DEFINE, &load(""))[0], Some(vec![]), "a plain load is the same for every work-item");
        assert_eq!(invariant(DEFINE, &load("volatile "))[0], None);
    }

    /// `if (cond) wait_group_events(...); out[lid] = 1;`
    fn conditional_wait(cond: &str) -> String {
        format!(
            "  %e = alloca ptr, align 8
{cond}
  br i1 %c, label %w, label %j
w:
  call void @_Z17wait_group_eventsiPU9CLgeneric9ocl_event(i32 1, ptr %e)
  br label %j
j:
  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i64 %l
  store i32 1, ptr addrspace(1) %q, align 4
  ret void"
        )
    }

    #[test]
    fn a_wait_under_a_uniform_condition_gets_a_barrier_where_the_paths_join() {
        // Without it, the store after the join runs in the region before the wait
        // (condition false) and in the one after it: both for every work-item.
        // The wait's own region ends there too (it only branches to the join).
        let r = invariant(DEFINE, &conditional_wait("  %c = icmp sgt i32 %3, 0"));
        assert_eq!(r, vec![Some(vec![]), None], "the condition and the wait run once");
    }

    #[test]
    fn joins_that_end_no_region_more_get_no_barrier() {
        // for (i = 0; i < n; i++) { buf = (i & 1) ? a : b; if (i > 0) wait; out[lid] = i; }
        // Every block of the loop's body is reached from the region before the loop and
        // from the one around it; once the loop's head has a barrier, the choice of
        // `buf` joins within one region, and a barrier there would only add regions.
        let body = "  %e = alloca ptr, align 8
  %i = alloca i32, align 4
  %b = alloca ptr addrspace(3), align 8
  store i32 0, ptr %i, align 4
  br label %h
h:
  %iv = load i32, ptr %i, align 4
  %more = icmp slt i32 %iv, %3
  br i1 %more, label %t, label %end
t:
  %it = load i32, ptr %i, align 4
  %o = and i32 %it, 1
  %odd = icmp ne i32 %o, 0
  br i1 %odd, label %a, label %z
a:
  store ptr addrspace(3) %2, ptr %b, align 8
  br label %s
z:
  store ptr addrspace(3) null, ptr %b, align 8
  br label %s
s:
  %is = load i32, ptr %i, align 4
  %c = icmp sgt i32 %is, 0
  br i1 %c, label %w, label %j
w:
  call void @_Z17wait_group_eventsiPU9CLgeneric9ocl_event(i32 1, ptr %e)
  br label %j
j:
  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i64 %l
  %iw = load i32, ptr %i, align 4
  store i32 %iw, ptr addrspace(1) %q, align 4
  %next = add i32 %iw, 1
  store i32 %next, ptr %i, align 4
  br label %h
end:
  ret void";
        let lines: Vec<String> = body.lines().map(str::to_string).collect();
        let r = make_resumable(DEFINE, &lines, &TypeTable::new(), "%__ferrocl_ctx", &sync).unwrap();
        // One region before the loop, run once; each time round one from the loop's
        // head to the join (the test, the choice of `buf`, the wait), run once, and one
        // from the join (the store), for every work-item. Barriers at every block of the
        // body (the first try) made eight.
        assert_eq!(r.barriers, 2, "{}", r.text);
        let at_head = &r.text[r.text.find("\nh:").unwrap()..r.text.find("__fcl_r1:").unwrap()];
        assert!(at_head.ends_with("ret i32 1\n"), "{}", r.text);
        let at_join = &r.text[r.text.find("\nj:").unwrap()..r.text.find("__fcl_r2:").unwrap()];
        assert!(at_join.ends_with("ret i32 2\n"), "{}", r.text);
        assert!(r.text.contains("\na:\n  store") && r.text.contains("\ns:\n  %is = load"), "{}", r.text);
        assert_eq!(r.invariant.len(), 3);
        assert!(r.invariant[0].is_some() && r.invariant[1].is_some() && r.invariant[2].is_none());
    }

    #[test]
    fn a_wait_under_a_varying_condition_gets_no_barrier() {
        let lid = "  %k = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)\n  %c = icmp eq i64 %k, 0";
        assert_eq!(invariant(DEFINE, &conditional_wait(lid)), vec![None, None]);
    }

    #[test]
    fn per_item_values_in_effects_keep_every_work_item() {
        // x = in[lid] (not recomputable), kept across the barrier: its slot differs per
        // work-item.
        let lid = "  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %p = getelementptr inbounds i32, ptr addrspace(1) %0, i64 %l
  %s = load i32, ptr addrspace(1) %p, align 4
  store i32 %s, ptr %x, align 4";
        let use_x = "  %y = load i32, ptr %x, align 4";
        assert_eq!(invariant(DEFINE, &with_copy(lid, use_x))[0], None);
        // A branch on the local id.
        let branch = "  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %c = icmp eq i64 %l, 0
  br i1 %c, label %a, label %b
a:
  br label %b
b:";
        assert_eq!(invariant(DEFINE, &with_copy(branch, ""))[0], None);
        // A store to local memory.
        let local = "  store float 1.0, ptr addrspace(3) %2, align 4";
        assert_eq!(invariant(DEFINE, &with_copy(local, ""))[0], None);
        // A struct copied into local memory (clang's memcpy).
        let memcpy = "  call void @llvm.memcpy.p3.p1.i64(ptr addrspace(3) align 1 %2, ptr addrspace(1) align 1 %0, i64 3, i1 false)";
        assert_eq!(invariant(DEFINE, &with_copy(memcpy, ""))[0], None);
        // A call to anything else.
        let call = "  %m = call i32 @helper(i32 %3, i32 1)";
        assert_eq!(invariant(DEFINE, &with_copy(call, ""))[0], None);
    }

    #[test]
    fn a_work_item_value_used_only_by_itself_does_not_stop_sharing() {
        // lid stored in a variable recomputed after barriers and not used in an effect.
        let body = with_copy(
            X_FROM_LID,
            "  %y = load i32, ptr %x, align 4
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i32 %y
  store i32 1, ptr addrspace(1) %q, align 4",
        );
        assert_eq!(invariant(DEFINE, &body)[0], Some(vec![]));
    }

    #[test]
    fn storing_part_of_a_per_item_variable_keeps_every_work_item() {
        // int a[2]; a[0] = lid; barrier; a[1] = arg; copy; wait; use a.
        let body = "  %e = alloca ptr, align 8
  %a = alloca [2 x i32], align 4
  %l = call i64 @_Z12get_local_idj(i32 0, ptr %__ferrocl_ctx)
  %t = trunc i64 %l to i32
  store i32 %t, ptr %a, align 4
  call void @_Z7barrierj(i32 1, ptr %__ferrocl_ctx)
  %a1 = getelementptr inbounds [2 x i32], ptr %a, i64 0, i64 1
  store i32 %3, ptr %a1, align 4
"
        .to_string()
            + COPY_AND_WAIT
            + "
  %v = load i32, ptr %a, align 4
  %q = getelementptr inbounds i32, ptr addrspace(1) %1, i32 %v
  store i32 1, ptr addrspace(1) %q, align 4
  ret void";
        let r = invariant(DEFINE, &body);
        assert_eq!(r[1], None, "{r:?}");
    }

    #[test]
    fn mangled_names_give_the_opencl_name() {
        assert_eq!(opencl_name("_Z17wait_group_eventsiPU9CLgeneric9ocl_event"), Some("wait_group_events"));
        assert_eq!(opencl_name("_Z26async_work_group_copy_2D2DPU7CLlocalvm"), Some("async_work_group_copy_2D2D"));
        assert_eq!(opencl_name("__to_global"), None);
        assert_eq!(classify("_Z21async_work_group_copyPU3AS3fPU3AS1Kfm9ocl_event"), Callee::Group);
        assert!(classify("helper") == Callee::Unknown);
        // Values of their arguments alone.
        assert!(classify("_Z3maxii") == Callee::Group);
        assert!(classify("__ferrocl_udiv_u64") == Callee::Group);
        assert!(classify("_Z22get_max_sub_group_sizev") == Callee::Group);
        assert!(classify("_Z22get_sub_group_local_idv") != Callee::Group);
    }
}
