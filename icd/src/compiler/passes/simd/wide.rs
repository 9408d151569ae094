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

use std::collections::HashSet;

use super::super::ir_text::{callee_names, def_of, label_of};
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

/// How many chunks a call `interleave` runs for `lines`.
pub(super) fn chunks(lines: &[&str]) -> u64 {
    let divides = lines.iter().any(|l| {
        let c = code(l);
        def_of(c).is_some_and(|(_, r)| matches!(opcode(r).0, "fdiv" | "frem"))
            || callee_names(c).iter().any(|(f, _)| ["sqrt", "divide", "recip"].iter().any(|k| f.contains(k)))
    });
    if divides {
        DIVIDING
    } else {
        CHUNKS
    }
}

/// `lines` (a kernel body whose branches are all on shared values, as the copy reads
/// it) as `chunks` chunks' copies interleaved, or why not.
pub(super) fn interleave(lines: &[&str], chunks: u64) -> Result<Vec<String>, String> {
    if lines.len() > LINES {
        return Err("a long kernel".into());
    }
    let defined: HashSet<&str> = lines.iter().filter_map(|l| def_of(code(l)).map(|d| d.0)).collect();
    for l in lines {
        let c = code(l);
        if c.contains(&format!("ptr {CTX})")) && !matches!(query(c), Ok(Some(_))) {
            return Err("a call that reads the work-item's context".into());
        }
        if super::fold::forbidden_in_body(c) {
            return Err("a work-group, atomic or printf call".into());
        }
    }
    let mut out = Vec::with_capacity(lines.len() * chunks as usize);
    for line in lines {
        let c = code(line).trim_start();
        let terminator = ["br ", "switch ", "ret", "unreachable"].iter().any(|k| c.starts_with(k));
        if label_of(line).is_some() || terminator || c.is_empty() {
            out.push(line.to_string());
            continue;
        }
        for copy in 0..chunks {
            let renamed = match copy {
                0 => code(line).to_string(),
                _ => super::linear::map_names(code(line), |n| {
                    defined.contains(format!("%{n}").as_str()).then(|| format!("wide{copy}.{n}"))
                }),
            };
            // A lane's own id in x: the first copy's plus the chunks before it.
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
    Ok(out)
}
