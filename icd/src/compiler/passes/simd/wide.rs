//! Several chunks per call, for kernels whose lanes all branch alike.
//!
//! A kernel whose work-items each run one long chain of dependent arithmetic (a uniform
//! loop's `acc = acc * x + c[k]`, n-body's sum over every point) is bound by the chain's
//! latency, not by the arithmetic units: one chunk's chain per call leaves the units
//! mostly idle, and Zen 1's scheduler overlaps little of the next call's. Where every
//! branch of the kernel is one the lanes take together, `CHUNKS` chunks can run in one
//! call, their copies of each block interleaved line by line: each block's branch is
//! the same in every chunk (it is the same in every lane), so one terminator serves
//! them all, and the chains run side by side.
//!
//! Copy `c` (0 for the first chunk) is work-items `8c` on of the first chunk's: its ids
//! in x are the first copy's plus `8c`, its private variables are its own (`wide{c}.`
//! names), and everything else is the same code. Work-items' steps in a different order
//! between work-items is what the lanes of one chunk already do; each work-item keeps
//! its own order. Not where the kernel calls anything else that reads the work-item's
//! context (async copies, printf, barriers: work-group functions count work-items).

use std::collections::{HashMap, HashSet};

use super::super::context::{self, Answer};
use super::super::ir_text::{callee_names, def_of, label_of, split_top};
use super::{code, opcode, query, CHUNKS, WIDTH};
use crate::compiler::passes::launcher::CTX;

/// The longest body (lines of unoptimised IR) copied `CHUNKS` times: a longer one
/// costs more to compile than it pays and keeps more values live than registers hold.
const LINES: usize = 400;

/// Chunks a call where the kernel divides or takes a square root: a chain through
/// Zen 1's divider is bound by that unit (a 256-bit `vdivps` or `vsqrtps` every 8-12
/// cycles), not by latency, and more copies only add live values. n-body (`rsqrt` per
/// interaction), one core, ms: 20.2 one chunk a call, 19.6 two, 21.8 four (the uniform
/// 32-step loop: 4.9, 3.5, 2.3).
const DIVIDING: u64 = 2;

/// How many chunks a call `interleave` runs for `lines`: `DIVIDING` where the kernel
/// divides or takes a square root in a loop (or anywhere, in a kernel without loops).
/// Escape-time divides once before its loop: one core, ms, 3.1 one chunk, 2.1 two,
/// 1.9 four (Xeon; Intel's runtime 1.7).
pub(super) fn chunks(lines: &[&str]) -> u64 {
    let divides = |l: &&str| {
        let c = code(l);
        def_of(c).is_some_and(|(_, r)| matches!(opcode(r).0, "fdiv" | "frem"))
            || callee_names(c).iter().any(|(f, _)| ["sqrt", "divide", "recip"].iter().any(|k| f.contains(k)))
    };
    let blocks = super::cfg::blocks(lines);
    let looped: Vec<&str> = match super::cfg::Cfg::of(&blocks) {
        Ok(cfg) if !cfg.loops().is_empty() => blocks
            .iter()
            .enumerate()
            .filter(|&(b, _)| cfg.in_a_loop(b))
            .flat_map(|(_, block)| lines[block.start..=block.end].iter().copied())
            .collect(),
        _ => lines.to_vec(),
    };
    match looped.iter().any(divides) {
        true => DIVIDING,
        false => CHUNKS,
    }
}

/// `lines` (a kernel body whose branches are all on shared values, as the copy reads
/// it) as `chunks` chunks' copies interleaved, or why not.
pub(super) fn interleave(lines: &[&str], chunks: u64) -> Result<Vec<String>, String> {
    if lines.len() > LINES {
        return Err("a long kernel".into());
    }
    copyable(lines)?;
    let defined: HashSet<&str> = lines.iter().filter_map(|l| def_of(code(l)).map(|d| d.0)).collect();
    let mut out = Vec::with_capacity(lines.len() * chunks as usize);
    for line in lines {
        let c = code(line).trim_start();
        let terminator = ["br ", "switch ", "ret", "unreachable"].iter().any(|k| c.starts_with(k));
        if label_of(line).is_some() || terminator || c.is_empty() {
            out.push(line.to_string());
            continue;
        }
        copies(line, chunks, &defined, &mut out);
    }
    Ok(out)
}

/// Checks that `lines` may run as several chunks' copies in one call.
fn copyable(lines: &[&str]) -> Result<(), String> {
    for l in lines {
        let c = code(l);
        if c.contains(&format!("ptr {CTX})")) && !matches!(query(c), Ok(Some(_))) {
            return Err("a call that reads the work-item's context".into());
        }
        if super::fold::forbidden_in_body(c) {
            return Err("a work-group, atomic or printf call".into());
        }
        // Each chunk after the first is the next sub-group (or part of one), whose
        // answers the first chunk's context does not give.
        if callee_names(c).iter().any(|(f, _)| context::answer(f) == Some(Answer::SubGroup)) {
            return Err("sub-group queries".into());
        }
    }
    Ok(())
}

/// `line`'s copy for each chunk onto `out`: the values `defined` in the function are
/// each copy's own, and a lane's own id in x is the first copy's plus the chunks before.
fn copies(line: &str, chunks: u64, defined: &HashSet<&str>, out: &mut Vec<String>) {
    for copy in 0..chunks {
        let renamed = match copy {
            0 => code(line).to_string(),
            _ => super::linear::map_names(code(line), |n| {
                defined.contains(format!("%{n}").as_str()).then(|| format!("wide{copy}.{n}"))
            }),
        };
        match (copy, def_of(&renamed), matches!(query(&renamed), Ok(Some(true)))) {
            (1.., Some((d, rhs)), true) if opcode(rhs).0 == "call" => {
                let ty = rhs.trim_start().strip_prefix("call ").and_then(|r| r.split(' ').next()).unwrap_or("i64");
                out.push(renamed.replacen(&format!("{d} ="), &format!("{d}.q ="), 1));
                out.push(format!("  {d} = add {ty} {d}.q, {}", copy * WIDTH));
            }
            _ => out.push(renamed),
        }
    }
}

/// The most lines of a masked copy (`linear`) `interleave_masked` copies `chunks` times:
/// as `LINES` for a kernel's body, a longer one costs more to compile than it pays.
const MASKED_LINES: usize = 600;

/// A kernel whose lanes part (`linear`'s masked copy, the function `text` named
/// `{name}.simd`) as `{name}.simd{chunks}`: each chunk runs the copy's code under its
/// own masks, and the blocks' tests combine: a block runs where any chunk has a lane
/// in it (`.any`, a loop's `.again`), the version without masks only where every
/// chunk's lanes all are (`.full`). A chunk with no lane in a block runs its masked
/// version, which changes nothing; a block every lane of a chunk reaches together is
/// reached by every chunk at once, since the chunks step through the blocks in
/// lockstep. The escape-time loop, bound by the latency of each step's chain, runs
/// `chunks` chains side by side.
pub(super) fn interleave_masked(text: &str, name: &str, chunks: u64) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some((head, body)) = lines.split_first() else { return Err("an empty copy".into()) };
    if body.len() > MASKED_LINES {
        return Err("a long kernel".into());
    }
    copyable(body)?;
    let defined: HashSet<&str> = body.iter().filter_map(|l| def_of(code(l)).map(|d| d.0)).collect();
    let mut out = vec![head.replacen(&format!("@{name}.simd("), &format!("@{name}.simd{chunks}("), 1)];
    for line in body {
        let c = code(line).trim_start();
        if label_of(line).is_some() || c.is_empty() || c == "}" || c.starts_with("br label ") || c == "ret void" {
            out.push(line.to_string());
            continue;
        }
        if let Some(rest) = c.strip_prefix("br i1 ") {
            let (cond, targets) = rest.split_once(", ").ok_or("unreadable branch")?;
            let join = match cond.strip_prefix("%simd.").and_then(|c| c.rsplit('.').next()) {
                Some("any") => "or",
                Some("full") => "and",
                Some(k) if k.starts_with("again") => "or",
                _ => return Err(format!("a branch on {cond}")),
            };
            let mut all = cond.to_string();
            for copy in 1..chunks {
                let next = format!("{cond}.w{copy}");
                out.push(format!("  {next} = {join} i1 {all}, %wide{copy}.{}", &cond[1..]));
                all = next;
            }
            out.push(format!("  br i1 {all}, {targets}"));
            continue;
        }
        if ["br ", "switch ", "ret", "unreachable"].iter().any(|k| c.starts_with(k)) {
            return Err(format!("terminator {c}"));
        }
        copies(line, chunks, &defined, &mut out);
    }
    Ok(out.join("\n") + "\n")
}

/// The most lines a side of an if/else `if_convert` runs for every lane.
const SIDE_LINES: usize = 32;

/// `lines` with each if/else (or if without else) whose sides only compute turned into
/// straight-line code: both sides run, each store of a side to a private variable keeps
/// the old value where the side was not taken (`select`), and the join's phis become
/// selects. The lanes then branch alike where they parted, and the kernel gets a copy
/// for several chunks (the 8-lane copy runs such sides for every lane already, under
/// masks: `linear`). A side that reads or writes other memory, divides, or calls
/// anything but LLVM's computing intrinsics stays a branch.
pub(super) fn if_convert(mut lines: Vec<String>) -> Vec<String> {
    let allocas: HashSet<String> = lines
        .iter()
        .filter_map(|l| def_of(code(l)).filter(|(_, r)| opcode(r).0 == "alloca").map(|(d, _)| d.to_string()))
        .collect();
    let mut fresh = 0;
    // Each conversion leaves a chain of blocks, which `flatten` joins into one, so the
    // if/else around it can go next.
    while let Some(next) = convert_one(&lines, &allocas, &mut fresh) {
        lines = super::flatten::flatten(next);
    }
    lines
}

/// One if/else of `if_convert`, or `None` where none is left.
fn convert_one(lines: &[String], allocas: &HashSet<String>, fresh: &mut usize) -> Option<Vec<String>> {
    let refs: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
    let blocks = super::cfg::blocks(&refs);
    let index: HashMap<&str, usize> = blocks.iter().enumerate().map(|(i, b)| (b.label.as_str(), i)).collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    for (i, b) in blocks.iter().enumerate() {
        for s in &b.succs {
            preds[*index.get(s.as_str())?].push(i);
        }
    }
    let only = |b: usize, from: &[usize]| {
        let mut p = preds[b].clone();
        p.sort_unstable();
        let mut f = from.to_vec();
        f.sort_unstable();
        p == f
    };
    let speculable = |b: usize| {
        let body = &refs[blocks[b].start + usize::from(label_of(refs[blocks[b].start]).is_some())..blocks[b].end];
        body.len() <= SIDE_LINES && body.iter().all(|l| side_line(code(l).trim_start(), allocas))
    };
    for (bi, b) in blocks.iter().enumerate() {
        let t = code(refs[b.end]).trim_start();
        let Some(rest) = t.strip_prefix("br i1 ") else { continue };
        let cond = rest.split(',').next()?.trim().to_string();
        let [tb, fb] = [&b.succs[0], b.succs.get(1)?].map(|l| index.get(l.as_str()).copied());
        let (tb, fb) = (tb?, fb?);
        let single = |x: usize| blocks[x].succs.len() == 1 && only(x, &[bi]) && speculable(x);
        // The sides in order, each branching on to the join; `j`: the join.
        let (sides, j): (Vec<(usize, bool)>, usize) = match () {
            _ if tb != fb && single(tb) && single(fb) && blocks[tb].succs == blocks[fb].succs => {
                let j = index[blocks[tb].succs[0].as_str()];
                (vec![(tb, true), (fb, false)], j)
            }
            _ if single(tb) && index[blocks[tb].succs[0].as_str()] == fb => (vec![(tb, true)], fb),
            _ if single(fb) && index[blocks[fb].succs[0].as_str()] == tb => (vec![(fb, false)], tb),
            _ => continue,
        };
        let from: Vec<usize> = match sides.as_slice() {
            [(x, _), (y, _)] => vec![*x, *y],
            [(x, _)] => vec![*x, bi],
            _ => continue,
        };
        if j == bi || !only(j, &from) {
            continue;
        }
        let label_of_block = |x: usize| blocks[x].label.clone();
        let mut out: Vec<String> = Vec::with_capacity(lines.len() + 16);
        for (i, line) in lines.iter().enumerate() {
            let in_side = sides.iter().find(|(s, _)| blocks[*s].start <= i && i <= blocks[*s].end);
            if i == b.end {
                out.push(format!("  br label %{}", label_of_block(sides[0].0)));
                continue;
            }
            if let Some(&(s, when)) = in_side {
                if i == blocks[s].end {
                    let next = if s == sides[0].0 && sides.len() == 2 {
                        label_of_block(sides[1].0)
                    } else {
                        label_of_block(j)
                    };
                    out.push(format!("  br label %{next}"));
                    continue;
                }
                let c = code(line).trim_start();
                if let Some(rest) = c.strip_prefix("store ") {
                    let parts = split_top(rest);
                    let (Some(value), Some(ptr)) = (parts.first(), parts.get(1)) else { return None };
                    let (ty, v) = value.trim().rsplit_once(' ')?;
                    let align = parts.get(2).map(|a| format!(", {}", a.trim())).unwrap_or_default();
                    *fresh += 1;
                    let (old, new) = (format!("%spec.{fresh}.old"), format!("%spec.{fresh}.new"));
                    out.push(format!("  {old} = load {ty}, {}{align}", ptr.trim()));
                    let (yes, no) = if when { (v.to_string(), old.clone()) } else { (old.clone(), v.to_string()) };
                    out.push(format!("  {new} = select i1 {cond}, {ty} {yes}, {ty} {no}"));
                    out.push(format!("  store {ty} {new}, {}{align}", ptr.trim()));
                    continue;
                }
                out.push(line.clone());
                continue;
            }
            if blocks[j].start <= i && i < blocks[j].end {
                if let Some((d, rhs)) = def_of(code(line)) {
                    if let ("phi", rest) = opcode(rhs) {
                        let ty = rest.trim().split(" [").next()?;
                        let pairs = super::phi_incoming(rest).ok()?;
                        let from = |x: usize| {
                            pairs.iter().find(|(_, l)| index.get(l.as_str()) == Some(&x)).map(|(v, _)| v.clone())
                        };
                        let (yes, no) = match sides.as_slice() {
                            [(t, _), (f, _)] => (from(*t)?, from(*f)?),
                            [(s, true)] => (from(*s)?, from(bi)?),
                            [(s, _)] => (from(bi)?, from(*s)?),
                            _ => return None,
                        };
                        out.push(format!("  {d} = select i1 {cond}, {ty} {yes}, {ty} {no}"));
                        continue;
                    }
                }
            }
            out.push(line.clone());
        }
        return Some(out);
    }
    None
}

/// A line a side `if_convert` runs for every lane may hold: loads and stores of the
/// kernel's private variables, LLVM's computing intrinsics, arithmetic that cannot trap.
fn side_line(t: &str, allocas: &HashSet<String>) -> bool {
    let private =
        |p: Option<&&str>| p.and_then(|p| p.trim().strip_prefix("ptr ")).is_some_and(|p| allocas.contains(p.trim()));
    if let Some(rest) = t.strip_prefix("store ") {
        // A value that is one token (a name or a number), which `convert_one` selects.
        let parts = split_top(rest);
        let simple = parts.first().and_then(|v| v.trim().rsplit_once(' ')).is_some_and(|(ty, v)| {
            let whole_type = super::super::ir_type::parse(ty.trim()).is_some_and(|(_, rest)| rest.trim().is_empty());
            whole_type && !v.is_empty() && !v.contains(['<', '{', '[', '(', ' '])
        });
        return simple && !t.contains("volatile") && !t.contains("atomic") && private(parts.get(1));
    }
    let pure = |r: &str| {
        callee_names(r).first().is_some_and(|(c, _)| {
            c.starts_with("llvm.")
                && ![
                    "llvm.memcpy",
                    "llvm.memmove",
                    "llvm.memset",
                    "llvm.masked.",
                    "llvm.experimental.",
                    "llvm.lifetime.",
                ]
                .iter()
                .any(|p| c.starts_with(p))
        })
    };
    if t.starts_with("call ") || t.starts_with("tail call ") {
        return pure(t);
    }
    let Some((_, rhs)) = def_of(t) else { return false };
    match opcode(rhs) {
        ("load", rest) => !rest.contains("volatile") && !rest.contains("atomic") && private(split_top(rest).get(1)),
        ("call" | "tail", _) => pure(rhs),
        (op, _) => !matches!(
            op,
            "udiv" | "sdiv" | "urem" | "srem" | "alloca" | "atomicrmw" | "cmpxchg" | "fence" | "phi" | "landingpad"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked copy's shape: a loop header run where any lane is, its version without
    /// masks where all are, the loop's way back while any lane is headed for it.
    const MASKED: &str = "define internal void @k.simd(i32 %n, ptr %__ferrocl_ctx) {
  %simd.m.h = alloca i8, align 1
  %id = call i64 @_Z13get_global_idj(i32 0, ptr %__ferrocl_ctx)
  br label %h
h:
  %simd.m.h.in.bits = load i8, ptr %simd.m.h, align 1
  %simd.h.any = icmp ne i8 %simd.m.h.in.bits, 0
  br i1 %simd.h.any, label %simd.h.go, label %simd.h.next
simd.h.go:
  %simd.h.full = icmp eq i8 %simd.m.h.in.bits, -1
  br i1 %simd.h.full, label %simd.h.all, label %simd.h.next
simd.h.all:
  br label %simd.h.next
simd.h.next:
  %simd.h.loop0 = load i8, ptr %simd.m.h, align 1
  %simd.h.again0 = icmp ne i8 %simd.h.loop0, 0
  br i1 %simd.h.again0, label %h, label %simd.exit
simd.exit:
  ret void
}";

    #[test]
    fn masked_chunks_run_a_block_where_any_chunk_has_lanes() {
        let out = interleave_masked(MASKED, "k", 2).unwrap();
        assert!(out.starts_with("define internal void @k.simd2(i32 %n, ptr %__ferrocl_ctx) {"), "{out}");
        // Each chunk its own masks and ids, the second's 8 lanes on.
        assert!(out.contains("  %wide1.simd.m.h = alloca i8, align 1"), "{out}");
        assert!(out.contains("  %wide1.id = add i64 %wide1.id.q, 8"), "{out}");
        // The tests combine: any chunk's lanes run a block, all chunks' the unmasked one.
        assert!(
            out.contains("  %simd.h.any.w1 = or i1 %simd.h.any, %wide1.simd.h.any\n  br i1 %simd.h.any.w1,"),
            "{out}"
        );
        assert!(out.contains("  %simd.h.full.w1 = and i1 %simd.h.full, %wide1.simd.h.full\n"), "{out}");
        assert!(out.contains("  %simd.h.again0.w1 = or i1 %simd.h.again0, %wide1.simd.h.again0\n"), "{out}");
        assert!(!out.contains("%wide1.n") && !out.contains("%wide1.__ferrocl_ctx"), "parameters are shared: {out}");
    }

    #[test]
    fn masked_chunks_refuse_branches_they_cannot_combine() {
        let other = MASKED
            .replace("br i1 %simd.h.full,", "br i1 %cond,")
            .replace("  %simd.h.full = icmp eq i8 %simd.m.h.in.bits, -1", "  %cond = icmp eq i8 %simd.m.h.in.bits, 3");
        assert!(interleave_masked(&other, "k", 2).unwrap_err().contains("a branch on %cond"));
        let atomic = MASKED.replace(
            "simd.h.all:\n",
            "simd.h.all:\n  %x = call i32 @_Z10atomic_addPU3AS1Vii(ptr addrspace(1) null, i32 1)\n",
        );
        assert!(interleave_masked(&atomic, "k", 2).is_err());
    }
}
