//! Work-items in SIMD lanes: a copy of a kernel that runs `WIDTH` consecutive
//! work-items in x at once, each value they differ in (a *varying* value) held as a
//! vector with a lane per work-item, each value they share kept scalar. The item loop
//! calls the copy for whole chunks of `WIDTH` work-items and the kernel itself for the
//! rest (`launcher`).
//!
//! LLVM vectorises the item loop only where the kernel inlined into it is straight-line
//! code (or if-converts): a loop a work-item runs itself makes the item loop an outer
//! loop, which LLVM leaves scalar. Here the lanes run the kernel's own loops together,
//! as Intel's CPU runtime and whole-function vectorisers (Karrenberg and Hack, CGO 2011;
//! Codeplay's vecz) do.
//!
//! This works on clang's unoptimised IR, where every C variable is an alloca and SSA
//! values live within an expression: a varying variable becomes an alloca of a vector
//! (`float` -> `<8 x float>`, `float4` -> `<32 x float>` with each component's lanes
//! together, `float[4]` -> `[4 x <8 x float>]`), and LLVM promotes them to registers
//! afterwards. Memory a lane reaches through a pointer is read and written as one
//! vector where the lanes' addresses are consecutive (`in[get_global_id(0)]`), by gather
//! and scatter otherwise, and once where all lanes use one address (broadcast data).
//!
//! Refused, leaving the kernel to the item loop as before: branches on varying values
//! (the lanes would part ways), calls of the program's own functions and of builtins
//! that are not element by element, barriers, sub-groups, images, private memory whose
//! address leaves its variable, and anything this reading of the IR does not know.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

mod cfg;
mod flatten;
mod fold;
mod inline;
mod linear;
mod wide;

use super::context::{self, Answer};
use super::ir_text::{
    callee_names, def_of, def_type, label_of, labels_in, locals_in, matching_paren, opcode, opencl_name, skip_flags,
    split_top,
};
use super::ir_type::{self, IrType};
use cfg::{Block, Cfg};
use ferrocl_kernel_abi::mangle::{self, Ty};
pub(crate) use inline::{inline_calls, Callee};

/// Work-items a call of the copy runs: a 256-bit register of 32-bit lanes.
pub(crate) const WIDTH: u64 = 8;

/// Chunks run at once where a copy can (the whole chunks of a folded loop's one-block
/// body, `fold`; every chunk of a kernel whose lanes branch alike, `wide`): their
/// copies interleaved line by line, `CHUNKS` independent chains of arithmetic where
/// there was one. A chain of dependent multiply-adds is bound by its latency (5 cycles
/// each on Zen 1; the tile loop's degree-20 polynomial is 24 of them per chunk), and
/// Zen 1's scheduler overlaps little of the next chunk's when the chunks' copies run
/// one after another. Four, not two or eight (one core, `shp`, ms): tiles from global
/// 2.65 with one chunk at a time, 2.48 with two, 1.89 with four, 1.90 with eight;
/// double-buffered 3.1 / 3.0 / 2.40 / 2.80, where eight ran out of registers.
pub(crate) const CHUNKS: u64 = 4;

/// Bytes of the widest vector a builtin of the library takes by value (wider ones go
/// through memory on this target's calling convention).
const CALL_BYTES: u64 = 32;
/// Bytes of the narrowest vector a builtin of the library takes as itself: clang passes
/// narrower ones as integers or doubles on this target.
const MIN_CALL_BYTES: u64 = 16;

/// Whether kernels get SIMD copies: `FERROCL_SIMD=0` turns them off, for A/B runs.
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("FERROCL_SIMD").map_or(true, |v| v != "0"))
}

/// `FERROCL_SIMD=unmasked`: kernels that branch on varying values get no SIMD copy
/// (for A/B runs; masked, `cts-runner bench --only shapes` ran the grid-stride shape
/// 8x, escape-time 3x and block-stride 1.5-2.6x faster on the 2-core Zen 1 machine).
fn masked_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("FERROCL_SIMD").map_or(true, |v| v != "unmasked"))
}

/// What the cache key says of the SIMD copies: code made without them, without masked
/// control flow, without folded loops or one chunk a call, is other code.
pub(crate) fn cache_key() -> String {
    let copies = match (enabled(), masked_enabled()) {
        (false, _) => "|scalar",
        (true, false) => "|unmasked",
        (true, true) => "",
    };
    let fold = if folding_enabled() { "" } else { "|unfolded" };
    let chunks = if chunks() == CHUNKS { String::new() } else { format!("|chunks{}", chunks()) };
    format!("{copies}{fold}{chunks}")
}

/// `FERROCL_CHUNKS=1`: one chunk a call everywhere, no copies interleaving several
/// (`wide`, the folded loops' whole chunks; for A/B runs).
fn chunks() -> u64 {
    static N: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::env::var("FERROCL_CHUNKS").map_or(CHUNKS, |v| if v == "1" { 1 } else { CHUNKS }))
}

/// `FERROCL_SIMD=why`: each kernel with barriers that runs its work-items as fibers
/// (no barrier regions, so no SIMD copy) says why on stderr.
pub(crate) fn explain_fibers(kernel: &str, why: &str) {
    if std::env::var("FERROCL_SIMD").is_ok_and(|v| v == "why") {
        eprintln!("FerroCL: kernel {kernel} runs as fibers: {why}");
    }
}

/// `FERROCL_SIMD=why`: each kernel that gets no SIMD copy says why on stderr.
pub(crate) fn explain(kernel: &str, why: &str) {
    if std::env::var("FERROCL_SIMD").is_ok_and(|v| v == "why") {
        eprintln!("FerroCL: kernel {kernel} has no SIMD copy: {why}");
    }
}

/// `FERROCL_SIMD=why`: each kernel whose copy does not fold its loop says why.
fn explain_fold(kernel: &str, why: &str) {
    if std::env::var("FERROCL_SIMD").is_ok_and(|v| v == "why") {
        eprintln!("FerroCL: kernel {kernel} runs its chunks one after another: {why}");
    }
}

/// The copy: its definition and the declarations it needs.
#[derive(Debug)]
pub(crate) struct Simd {
    pub(crate) text: String,
    /// `declare` lines of the intrinsics and builtins the copy calls.
    pub(crate) declarations: Vec<String>,
    /// The regions (0 for a kernel without barriers) whose copy runs the whole row's
    /// stride loop in the first chunk's lanes (`fold`): the launcher runs no other
    /// chunk there.
    pub(crate) folded: Vec<usize>,
    /// Where not 0, `text` also defines `{name}.simd{wide}`, the copy for that many
    /// chunks a call (`wide`).
    pub(crate) wide: u64,
}

/// The SIMD copy of kernel `name` (`define` + `body`, its lines between `define` and
/// `}`, after the context rewrite), named `{name}.simd`; `Err` says why not.
pub(crate) fn vectorize(define: &str, body: &[String], name: &str) -> Result<Simd, String> {
    let copy = vectorize_with(define, body, name, masked_enabled());
    // `FERROCL_SIMD_DUMP=DIR`: each kernel's IR as this pass reads it and its copy, for
    // reading what the pass did with a kernel.
    if let Ok(dir) = std::env::var("FERROCL_SIMD_DUMP") {
        let dir = std::path::Path::new(&dir);
        let _ = std::fs::write(dir.join(format!("{name}.in.ll")), format!("{define}\n{}\n", body.join("\n")));
        let out = match &copy {
            Ok(simd) => simd.text.clone(),
            Err(why) => format!("; refused: {why}\n"),
        };
        let _ = std::fs::write(dir.join(format!("{name}.simd.ll")), out);
    }
    copy
}

/// `vectorize`, with kernels that branch on varying values run masked or refused.
fn vectorize_with(define: &str, body: &[String], name: &str, masked: bool) -> Result<Simd, String> {
    let joined = join_switches(body);
    let lines = flatten::flatten(joined.clone());
    let lines: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
    let analysis = Analysis::of(&lines)?;
    if analysis.linear && !masked {
        return Err("a branch on a varying value".into());
    }
    if analysis.linear && folding_enabled() {
        // Folded before flattening, which merges the loop's step into its body.
        let (folded, regions) = fold_loops(fold::split_steps(joined.clone()), name);
        if !regions.is_empty() {
            let folded = flatten::flatten(folded);
            let folded: Vec<&str> = folded.iter().map(|l| l.as_str()).collect();
            match Analysis::of(&folded).and_then(|a| write_copy(define, name, &folded, &a)) {
                Ok(mut copy) => {
                    copy.folded = regions;
                    copy.declarations.extend(FOLD_QUERIES.iter().map(|d| d.to_string()));
                    return Ok(copy);
                }
                Err(why) => explain_fold(name, &format!("its folded loop has no copy: {why}")),
            }
        }
    }
    let mut copy = write_copy(define, name, &lines, &analysis)?;
    // Several chunks a call where every branch is the lanes' together, or is once its
    // if/else sides run for every lane (`wide`); not in kernels run as regions, whose
    // item loops end each chunk at a barrier.
    // Not where lanes reach their own elements of a private array: the chunks' text
    // copies take every access through a variable as the lanes' one vector.
    if !analysis.lane_pointers.is_empty() {
        explain_wide(name, "lanes' own elements of a private array");
    } else if !define.contains("%__fcl_resume") && chunks() > 1 {
        let straight = match analysis.linear {
            false => Ok(lines.iter().map(|l| l.to_string()).collect()),
            true => {
                let converted = flatten::flatten(wide::if_convert(joined));
                let refs: Vec<&str> = converted.iter().map(|l| l.as_str()).collect();
                match Analysis::of(&refs) {
                    Ok(a) if !a.linear => Ok(converted),
                    _ => Err("a branch on a varying value".to_string()),
                }
            }
        };
        let wide = match straight {
            Ok(straight) => {
                let lines: Vec<&str> = straight.iter().map(|l| l.as_str()).collect();
                let chunks = wide::chunks(&lines);
                wide::interleave(&lines, chunks)
                    .and_then(|wide| {
                        let wide: Vec<&str> = wide.iter().map(|l| l.as_str()).collect();
                        let a = Analysis::of(&wide)?;
                        write_copy_named(define, name, &format!("simd{chunks}"), &wide, &a)
                    })
                    .map(|w| (w, chunks))
            }
            // Lanes that part run masked: the masked copy's chunks side by side.
            Err(_) => {
                let chunks = wide::chunks(&lines);
                wide::interleave_masked(&copy.text, name, chunks)
                    .map(|text| (Simd { text, declarations: Vec::new(), folded: Vec::new(), wide: 0 }, chunks))
            }
        };
        match wide {
            Ok((w, chunks)) => {
                copy.text.push_str(&w.text);
                copy.declarations.extend(w.declarations);
                copy.declarations.sort();
                copy.declarations.dedup();
                copy.wide = chunks;
            }
            Err(why) => explain_wide(name, &why),
        }
    }
    Ok(copy)
}

/// `FERROCL_SIMD=why`: each kernel whose copy runs one chunk a call says why.
fn explain_wide(kernel: &str, why: &str) {
    if std::env::var("FERROCL_SIMD").is_ok_and(|v| v == "why") {
        eprintln!("FerroCL: kernel {kernel} runs one chunk a call: {why}");
    }
}

/// `lines` with the stride loops `fold` folds: the kernel's, or one in each region of a
/// resumable kernel; and the regions folded (`[0]` for a kernel without regions).
fn fold_loops(mut lines: Vec<String>, name: &str) -> (Vec<String>, Vec<usize>) {
    let entries = region_entries(&lines);
    let mut folded = Vec::new();
    let regions: Vec<Option<usize>> = match entries.is_empty() {
        true => vec![None],
        false => (0..entries.len()).map(Some).collect(),
    };
    for number in regions {
        let region = number.map(|number| fold::Region { number, entries: &entries });
        let raw: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
        match Analysis::of(&raw).and_then(|a| fold::fold(&raw, &a, region)) {
            Ok(f) => {
                lines = f;
                folded.push(number.unwrap_or(0));
            }
            Err(why) => match number {
                Some(n) => explain_fold(name, &format!("(region {n}) {why}")),
                None => explain_fold(name, &why),
            },
        }
    }
    (lines, folded)
}

/// The first block of each region of a resumable kernel, by number: the targets of its
/// entry's switch on the region to resume (`regions`); empty for other kernels.
fn region_entries(lines: &[String]) -> Vec<String> {
    let Some(switch) = lines.iter().map(|l| code(l).trim_start()).find(|l| l.starts_with("switch i32 %__fcl_resume,"))
    else {
        return Vec::new();
    };
    let targets = labels_in(switch);
    let Some((default, cases)) = targets.split_first() else { return Vec::new() };
    // Cases `i32 1, label %__fcl_r1 ...` in order: region n is the n-th.
    let numbers: Vec<usize> =
        switch.split("i32 ").skip(2).filter_map(|c| c.split(',').next().and_then(|n| n.trim().parse().ok())).collect();
    if numbers.len() != cases.len() || numbers.iter().enumerate().any(|(i, &n)| n != i + 1) {
        return Vec::new();
    }
    std::iter::once(default).chain(cases).map(|l| l.to_string()).collect()
}

/// The queries a folded loop's chunk test calls (`fold`).
const FOLD_QUERIES: &[&str] = &[
    "declare i64 @_Z12get_local_idj(i32 noundef, ptr)",
    "declare i64 @_Z14get_local_sizej(i32 noundef, ptr)",
    "declare void @__ferrocl_copy_step(ptr)",
];

/// `FERROCL_FOLD=0`: no stride loop folded into the first chunk's lanes (for A/B runs).
fn folding_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("FERROCL_FOLD").map_or(true, |v| v != "0"))
}

/// The copy of a body, with its analysis.
fn write_copy(define: &str, name: &str, lines: &[&str], analysis: &Analysis) -> Result<Simd, String> {
    write_copy_named(define, name, "simd", lines, analysis)
}

/// `write_copy`, the copy named `{name}.{suffix}`.
fn write_copy_named(
    define: &str,
    name: &str,
    suffix: &str,
    lines: &[&str],
    analysis: &Analysis,
) -> Result<Simd, String> {
    let mut w = Writer {
        a: analysis,
        out: String::new(),
        declarations: Vec::new(),
        fresh: 0,
        consecutive_geps: HashMap::new(),
        gep_types: HashMap::new(),
        lanes: None,
        made: HashSet::new(),
        dummy: false,
    };
    let head = simd_define(define, name, suffix)?;
    let _ = writeln!(w.out, "{head}");
    match analysis.linear {
        false => {
            // The entry block named: optimised code's phis name it by its implicit
            // number, which the renumbering below makes a name like any other.
            if !lines.first().is_some_and(|l| label_of(l).is_some()) {
                let _ = writeln!(w.out, "{}:", linear::entry_number(define));
            }
            for line in lines {
                w.line(line)?;
            }
        }
        true => w.linear(lines, define)?,
    }
    w.out.push_str("}\n");
    if w.dummy {
        // After the entry block's label (the line after the head).
        let at = w.out.find(":\n").ok_or("a copy without an entry block")? + 2;
        w.out.insert_str(at, "  %simd.dummy = alloca [16 x i8], align 16\n");
    }
    // Named throughout: lines the inlining left out leave gaps in the numbering.
    let text = linear::renumber(&std::mem::take(&mut w.out));
    let mut declarations = w.declarations;
    declarations.sort();
    declarations.dedup();
    Ok(Simd { text, declarations, folded: Vec::new(), wide: 0 })
}

/// The body with each `switch` on one line (clang writes its cases one a line).
fn join_switches(body: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in body {
        if open {
            let last = out.last_mut().expect("a switch line");
            last.push(' ');
            last.push_str(line.trim());
            open = !line.trim_start().starts_with(']');
            continue;
        }
        open = code(line).trim_start().starts_with("switch ") && line.trim_end().ends_with('[');
        out.push(line.clone());
    }
    out
}

/// `define ... @name(...)` as `define internal spir_func ... @name.simd(...)`, without
/// debug info (a subprogram belongs to one function).
fn simd_define(define: &str, name: &str, suffix: &str) -> Result<String, String> {
    let at = define.find(&format!("@{name}(")).ok_or("malformed kernel")?;
    let mut head = format!("{}@{name}.{suffix}{}", &define[..at], &define[at + name.len() + 1..]);
    if let Some(dbg) = head.find(" !dbg ") {
        let end = head[dbg + 6..].find([' ', '{']).map_or(head.len(), |e| dbg + 6 + e);
        head.replace_range(dbg..end, "");
    }
    Ok(head)
}

/// What each value is across the lanes.
struct Analysis {
    /// SSA values and allocas (their contents) that differ between lanes.
    varying: HashSet<String>,
    /// Varying integers that are some shared value plus the lane number
    /// (`get_global_id(0)`, `i + 1` of such an `i`), and allocas only ever holding such.
    consecutive: HashSet<String>,
    /// Allocas, by name, with their types.
    allocas: HashMap<String, IrType>,
    /// Pointers into an alloca (the alloca itself, element addresses), with the alloca.
    private: HashMap<String, String>,
    /// Allocas that hold addresses into one alloca (reg2mem's slots), with that alloca.
    slots: HashMap<String, String>,
    /// Allocas whose address is used as a value: they must stay shared.
    plain: HashSet<String>,
    /// Addresses of each lane's element of a private array indexed by a varying value.
    lane_pointers: HashSet<String>,
    /// Casts of an alloca's address: the whole variable, as the alloca itself is.
    at_start: HashSet<String>,
    /// Allocas kept lane by lane (`Analysis::punned`): each lane's copy whole, the
    /// alloca's value the vector of the lanes' addresses, memory like any other.
    apart: HashSet<String>,
    /// The kernel branches on a varying value: the copy runs its blocks in text order,
    /// each under a mask of the lanes in it (`linear`).
    linear: bool,
    blocks: Vec<Block>,
    /// The control flow (`None` where the blocks' order is not one `linear` can run;
    /// then `linear` is refused).
    cfg: Option<Cfg>,
    /// Each line's block.
    block_of: Vec<usize>,
    /// Blocks only some lanes may reach: the regions of branches on varying values.
    partial: Vec<bool>,
}

/// A branch on a varying value, and the blocks only some lanes then reach.
struct Divergence {
    block: usize,
    region: Vec<bool>,
    /// For a loop's exit test, the loop's blocks: the lanes still in the loop take the
    /// same steps, so a variable they all step stays one value plus the lane there.
    exit_of: Option<Vec<bool>>,
}

/// The instruction's opcode word (`add`, `load`, `call`...) and the text after it.
/// The instruction part of a line: without trailing metadata attachments (`, !dbg !7`).
fn code(line: &str) -> &str {
    match line.find(", !") {
        Some(at) if !line[..at].contains('"') => &line[..at],
        _ => line,
    }
}

/// Local values an instruction reads (not types, labels, or the value it defines).
fn operands(line: &str) -> Vec<String> {
    let line = code(line);
    let rhs = def_of(line).map_or(line, |(_, r)| r);
    locals_in(rhs)
        .into_iter()
        .filter(|v| !rhs.contains(&format!("label {v}")) && !rhs.contains(&format!("{v} = type")))
        .filter(|v| !v.starts_with("%struct.") && !v.starts_with("%union.") && !v.starts_with("%opencl."))
        .map(str::to_string)
        .collect()
}

/// A phi's incoming pairs: (value, predecessor label without `%`).
fn phi_incoming(rest: &str) -> Result<Vec<(String, String)>, String> {
    let (_, rest) = ir_type::parse(rest).ok_or("unreadable phi")?;
    let mut out = Vec::new();
    for pair in split_top(rest) {
        let inner = pair.trim().strip_prefix('[').and_then(|p| p.strip_suffix(']')).ok_or("unreadable phi")?;
        let (v, label) = inner.split_once(',').ok_or("unreadable phi")?;
        out.push((v.trim().to_string(), label.trim().trim_start_matches('%').to_string()));
    }
    Ok(out)
}

/// Whether a callee is a work-group function every work-item calls with the same
/// arguments, and whose bookkeeping counts the calls per work-item (async copies and
/// waits, `builtins/src/async_copies.rs`): the copy calls it once per lane.
/// A helper of the expanded work-group and sub-group collectives (`collectives`).
fn collective_helper(callee: &str) -> bool {
    super::collectives::HELPERS.iter().any(|p| callee.starts_with(p))
}

fn group_function(callee: &str) -> bool {
    opencl_name(callee).is_some_and(|n| n.starts_with("async_work_group_") || n == "wait_group_events")
}

/// A `llvm.memcpy` call's destination and source (the regions' copies of variables the
/// work-items share to and from the group's uniform block).
fn copy_operands(line: &str) -> Option<(String, String)> {
    let (callee, paren) = callee_names(line).into_iter().next()?;
    if !callee.starts_with("llvm.memcpy.") {
        return None;
    }
    let close = matching_paren(line, paren)?;
    let args = split_top(&line[paren + 1..close]);
    let value = |i: usize| args.get(i).and_then(|a| a.rsplit(' ').next()).map(str::to_string);
    Some((value(0)?, value(1)?))
}

/// Sub-group queries whose answer every lane of a copy shares.
const SHARED_SUB_GROUP_QUERIES: &[&str] = &[
    "get_sub_group_size",
    "get_max_sub_group_size",
    "get_num_sub_groups",
    "get_enqueued_num_sub_groups",
    "get_sub_group_id",
];

/// Whether a copy's lanes can stand for whole sub-groups or parts of one: each chunk
/// of `WIDTH` work-items in x starts at a multiple of `WIDTH` in its row, so it lies
/// within one sub-group of a size that is a multiple of the width.
pub(crate) fn sub_groups_fit(sub_group_size: usize) -> bool {
    sub_group_size as u64 % WIDTH == 0
}

/// The per-lane query a call makes: `Some(true)` for one whose answer is the lane's own
/// (ids in x, linear ids), `Some(false)` for one the lanes share; `None`: no query.
fn query(line: &str) -> Result<Option<bool>, String> {
    let Some((callee, paren)) = callee_names(line).into_iter().next() else { return Ok(None) };
    // The work-items in the group, for a resumable kernel's frames.
    if callee == "__ferrocl_group_items" {
        return Ok(Some(false));
    }
    let Some(answer) = context::answer(&callee) else { return Ok(None) };
    match answer {
        // The copy's lanes are one sub-group, or part of one, where the kernel's size is
        // a multiple of the width (`sub_groups_fit`): the local id is the lane's own,
        // the rest the same in every lane.
        Answer::SubGroup => match opencl_name(&callee) {
            Some("get_sub_group_local_id") => Ok(Some(true)),
            Some(n) if SHARED_SUB_GROUP_QUERIES.contains(&n) => Ok(Some(false)),
            _ => Err(format!("sub-group function {callee}")),
        },
        Answer::Range | Answer::Group => Ok(Some(false)),
        Answer::GlobalItem | Answer::Item => {
            let close = matching_paren(line, paren).ok_or("malformed call")?;
            let args = split_top(&line[paren + 1..close]);
            // The linear ids take only the context; the others a dimension first.
            if args.len() == 1 {
                return Ok(Some(true));
            }
            match args[0].rsplit(' ').next() {
                Some("0") => Ok(Some(true)),
                Some("1" | "2") => Ok(Some(false)),
                _ => Err(format!("{callee} of a dimension not known at compile time")),
            }
        }
    }
}

impl Analysis {
    /// The analysis, with varying variables read or written as elements they do not
    /// hold (`punned`) kept lane by lane.
    fn of(lines: &[&str]) -> Result<Analysis, String> {
        let a = Analysis::with_lanes_apart(lines, &HashSet::new())?;
        match a.punned(lines) {
            punned if punned.is_empty() => Ok(a),
            punned => Analysis::with_lanes_apart(lines, &punned),
        }
    }

    /// Varying variables read or written as elements they do not hold (SYCL's
    /// `vec<bool, 4>` written as one `i32` and read by bytes): in the widened layout a
    /// lane's bytes of the `i32` are not where its `i8`s are.
    fn punned(&self, lines: &[&str]) -> HashSet<String> {
        let mut out = HashSet::new();
        for line in lines {
            let c = code(line).trim_start();
            let access = match c.strip_prefix("store ") {
                Some(rest) => {
                    let parts = split_top(rest);
                    parts.first().and_then(|v| typed(v)).map(|(t, _)| t).zip(parts.get(1).and_then(|p| typed(p)))
                }
                None => match def_of(c).map(|(_, rhs)| opcode(rhs)) {
                    Some(("load", rest)) => {
                        let parts = split_top(rest);
                        parts
                            .first()
                            .and_then(|t| ir_type::parse(t))
                            .map(|(t, _)| t)
                            .zip(parts.get(1).and_then(|p| typed(p)))
                    }
                    _ => None,
                },
            };
            let Some((t, (_, p))) = access else { continue };
            let Some(root) = self.private.get(&p).filter(|r| self.varying.contains(*r)) else { continue };
            let held = self.allocas.get(root).is_some_and(|ty| {
                let elements = element_types(ty);
                *ty == t || element_types(&t).iter().all(|e| elements.contains(e))
            });
            if !held {
                out.insert(root.clone());
            }
        }
        out
    }

    /// The analysis, with the allocas `apart` kept lane by lane: each lane's copy
    /// whole, its address a lane of a vector of addresses, read and written as memory.
    fn with_lanes_apart(lines: &[&str], apart: &HashSet<String>) -> Result<Analysis, String> {
        let blocks = cfg::blocks(lines);
        let mut block_of = vec![0; lines.len()];
        for (b, block) in blocks.iter().enumerate() {
            block_of[block.start..=block.end].iter_mut().for_each(|x| *x = b);
        }
        let cfg = Cfg::of(&blocks);
        let mut a = Analysis {
            varying: HashSet::new(),
            consecutive: HashSet::new(),
            allocas: HashMap::new(),
            private: HashMap::new(),
            slots: HashMap::new(),
            plain: HashSet::new(),
            lane_pointers: HashSet::new(),
            at_start: HashSet::new(),
            apart: apart.clone(),
            linear: false,
            partial: vec![false; blocks.len()],
            blocks,
            cfg: None,
            block_of,
        };
        for line in lines {
            if let Some((d, rhs)) = def_of(code(line)) {
                if let ("alloca", rest) = opcode(rhs) {
                    let (ty, _) = ir_type::parse(rest).ok_or("unreadable alloca")?;
                    if widened(&ty).is_none() {
                        return Err(format!("private variable of type {ty}"));
                    }
                    a.allocas.insert(d.to_string(), ty);
                    match apart.contains(d) {
                        true => a.vary(d),
                        false => {
                            a.private.insert(d.to_string(), d.to_string());
                        }
                    }
                }
            }
        }
        // Varying values: from the per-lane queries, through operands, variables and
        // memory; variables stored where only some lanes are, and phis where lanes may
        // arrive by different ways, to a fixed point.
        let mut divergent: Vec<Divergence>;
        loop {
            let before = (a.varying.len(), a.private.len());
            for line in lines {
                a.visit(code(line))?;
            }
            divergent = Vec::new();
            for (b, block) in a.blocks.iter().enumerate() {
                let t = code(lines[block.end]).trim_start();
                if (t.starts_with("br i1 ") || t.starts_with("switch ")) && operands(t).iter().any(|v| a.varies(v)) {
                    let cfg = cfg.as_ref().map_err(Clone::clone)?;
                    let region = cfg.region(b);
                    let exit_of = cfg
                        .innermost_loop(b)
                        .filter(|inside| {
                            cfg.succs[b].iter().any(|&s| inside[s]) && !cfg.succs[b].iter().all(|&s| inside[s])
                        })
                        .cloned();
                    divergent.push(Divergence { block: b, region, exit_of });
                }
            }
            a.partial = vec![false; a.blocks.len()];
            for d in &divergent {
                a.partial.iter_mut().zip(&d.region).for_each(|(p, r)| *p |= r);
            }
            let sources: HashSet<usize> = divergent.iter().map(|d| d.block).collect();
            for (i, line) in lines.iter().enumerate() {
                let c = code(line).trim_start();
                let stored = match c.strip_prefix("store ") {
                    Some(rest) => split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).map(str::to_string),
                    None => copy_operands(c).map(|(to, _)| to),
                };
                if let (true, Some(ptr)) = (a.partial[a.block_of[i]], stored) {
                    if let Some(root) = a.private.get(&ptr).cloned() {
                        a.vary(&root);
                    }
                }
                if let Some((d, rhs)) = def_of(c) {
                    if let ("phi", rest) = opcode(rhs) {
                        let label_index = |l: &str| a.blocks.iter().position(|b| b.label == l);
                        let apart = phi_incoming(rest)?
                            .iter()
                            .filter_map(|(_, l)| label_index(l).or(Some(0).filter(|_| l.parse::<u64>().is_ok())))
                            .any(|p| a.partial[p] || sources.contains(&p));
                        if apart {
                            a.vary(d);
                        }
                    }
                }
            }
            if (a.varying.len(), a.private.len()) == before {
                break;
            }
        }
        if a.plain.iter().any(|root| a.varying.contains(root)) {
            return Err("the address of a private variable is used as a value".into());
        }
        a.find_at_start(lines);
        a.linear = !divergent.is_empty();
        a.cfg = cfg.ok();
        a.find_consecutive(lines, &divergent);
        for line in lines {
            let c = code(line).trim_start();
            if c.starts_with("indirectbr") || c.starts_with("invoke ") {
                return Err("indirect control flow".into());
            }
        }
        Ok(a)
    }

    fn vary(&mut self, v: &str) {
        self.varying.insert(v.to_string());
    }

    /// One step of the analysis over one instruction.
    fn visit(&mut self, line: &str) -> Result<(), String> {
        let ops = operands(line);
        let any_varying = ops.iter().any(|v| self.varying.contains(v));
        let Some((d, rhs)) = def_of(line) else {
            // Stores (and calls without a result).
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix("store ") {
                let parts = split_top(rest.strip_prefix("volatile ").unwrap_or(rest));
                let value = parts.first().and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                let ptr = parts.get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                if let Some(root) = self.private.get(value).cloned() {
                    // Into a variable holding only addresses of one variable (reg2mem's
                    // slot for a pointer that crossed blocks): its loads point there too.
                    let slot = matches!(self.allocas.get(ptr), Some(IrType::Ptr(_)))
                        && self.private.get(ptr).is_some_and(|r| r == ptr);
                    match self.slots.get(ptr) {
                        _ if !slot || self.varying.contains(ptr) => {
                            return Err("the address of a private variable is stored".into())
                        }
                        Some(r) if *r != root => return Err("the addresses of two private variables are stored".into()),
                        _ => {
                            self.slots.insert(ptr.to_string(), root);
                        }
                    }
                    return Ok(());
                }
                if let Some(root) = self.private.get(ptr).cloned() {
                    if self.varying.contains(value) {
                        self.vary(&root);
                    }
                }
            }
            if let Some((to, from)) = copy_operands(t) {
                let from_varies = match self.private.get(&from) {
                    Some(root) => self.varying.contains(root),
                    None => self.varying.contains(&from),
                };
                if let (Some(root), true) = (self.private.get(&to).cloned(), from_varies) {
                    self.vary(&root);
                }
            }
            return Ok(());
        };
        match opcode(rhs) {
            ("alloca", _) => {}
            ("load", rest) => {
                let ptr = split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("").to_string();
                if let Some(root) = self.slots.get(&ptr).cloned() {
                    self.private.insert(d.to_string(), root);
                    return Ok(());
                }
                let varies = match self.private.get(&ptr) {
                    Some(root) => self.varying.contains(root),
                    None => self.varying.contains(&ptr),
                };
                if varies {
                    self.vary(d);
                }
            }
            ("getelementptr", rest) => {
                let parts = split_top(rest.strip_prefix("inbounds ").unwrap_or(rest));
                let base = parts.get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                if self.lane_pointers.contains(base) {
                    return Err("an address into a lane's element of a private array".into());
                }
                if let Some(root) = self.private.get(base).cloned() {
                    // The variable's contents may vary; its address does not.
                    let index_varies =
                        parts.iter().skip(2).filter_map(|p| p.rsplit(' ').next()).any(|v| self.varying.contains(v));
                    if index_varies || self.lane_pointers.contains(d) {
                        // Each lane's own element: a vector of addresses into the widened
                        // variable, read and written by gathers and scatters (an earlier
                        // pass may have taken it for an address of the variable's).
                        self.vary(&root);
                        self.vary(d);
                        self.lane_pointers.insert(d.to_string());
                        self.private.remove(d);
                        return Ok(());
                    }
                    self.private.insert(d.to_string(), root);
                } else if any_varying {
                    self.vary(d);
                }
            }
            ("call", _) if line.contains(&format!("@{}(", fold::FIRST_LANE)) => {}
            // Each work-item's own turn at the memory.
            ("atomicrmw", _) => self.vary(d),
            ("call", _) if callee_names(line).first().is_some_and(|(c, _)| atomic_builtin(c)) => {
                if ops.iter().any(|v| self.private.contains_key(v)) {
                    return Err("the address of a private variable is passed to an atomic function".into());
                }
                self.vary(d)
            }
            // Each work-item's own operand slot or result (a scan, `get(mine)`).
            ("call", _) if callee_names(line).first().is_some_and(|(c, _)| collective_helper(c)) => self.vary(d),
            ("call", _) => match query(line)? {
                Some(true) => self.vary(d),
                Some(false) => {}
                None => {
                    let copy = line.contains("@llvm.memcpy.");
                    let group = callee_names(line).first().is_some_and(|(c, _)| group_function(c));
                    if ops.iter().any(|v| self.private.contains_key(v))
                        && !line.contains("@llvm.lifetime.")
                        && !copy
                        && !group
                    {
                        let callee = callee_names(line).first().map(|(c, _)| c.clone()).unwrap_or_default();
                        return Err(format!("the address of a private variable is passed to {callee}"));
                    }
                    if any_varying {
                        self.vary(d);
                    }
                }
            },
            ("addrspacecast" | "bitcast", _) if ops.len() == 1 && self.private.contains_key(&ops[0]) => {
                let root = self.private[&ops[0]].clone();
                self.private.insert(d.to_string(), root);
            }
            _ if ops.iter().any(|v| self.lane_pointers.contains(v)) => {
                return Err("an address into a lane's element of a private array used as a value".into());
            }
            _ => {
                // An address chosen among others (`c ? p : &zero`, SYCL's loads with a
                // default) is plain memory where its variable is one for every lane.
                for v in ops.iter().filter_map(|v| self.private.get(v)) {
                    if self.varying.contains(v) {
                        return Err("the address of a private variable is used as a value".into());
                    }
                    self.plain.insert(v.clone());
                }
                if any_varying {
                    self.vary(d);
                }
            }
        }
        Ok(())
    }

    /// Which addresses into a variable are its start: casts of it, element addresses
    /// of index 0 all the way (a structure's first field), and loads from reg2mem slots
    /// that are only ever given such addresses (SYCL copies a constant into its
    /// functor's first field through one). Optimistically every address into a
    /// variable, then dropping those one of whose sources is not, until nothing changes.
    fn find_at_start(&mut self, lines: &[&str]) {
        let mut start: HashSet<String> = self.private.keys().cloned().collect();
        // An address's source: the address it is computed from, or for a slot's load
        // the slot; a slot's sources are the addresses stored into it.
        let mut sources: HashMap<String, Vec<String>> = HashMap::new();
        for line in lines {
            let c = code(line).trim_start();
            if let Some(rest) = c.strip_prefix("store ") {
                let parts = split_top(rest.strip_prefix("volatile ").unwrap_or(rest));
                let value = parts.first().and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                let ptr = parts.get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                if self.slots.contains_key(ptr) {
                    sources.entry(ptr.to_string()).or_default().push(value.to_string());
                }
                continue;
            }
            let Some((d, rhs)) = def_of(c) else { continue };
            if !self.private.contains_key(d) || self.private[d] == d {
                continue;
            }
            let from = match opcode(rhs) {
                ("addrspacecast" | "bitcast", _) => operands(c).into_iter().next(),
                ("load", rest) => split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).map(str::to_string),
                ("getelementptr", rest) => {
                    let parts = split_top(rest.strip_prefix("inbounds ").unwrap_or(rest));
                    let zeros = parts.iter().skip(2).all(|p| matches!(p.rsplit(' ').next(), Some("0")));
                    parts.get(1).and_then(|p| p.rsplit(' ').next()).filter(|_| zeros).map(str::to_string)
                }
                _ => None,
            };
            match from {
                Some(from) => {
                    sources.insert(d.to_string(), vec![from]);
                }
                None => {
                    start.remove(d);
                }
            }
        }
        loop {
            let before = start.len();
            let lost: Vec<String> = start
                .iter()
                .filter(|v| sources.get(*v).is_some_and(|from| from.iter().any(|f| !start.contains(f))))
                .cloned()
                .collect();
            lost.iter().for_each(|v| {
                start.remove(v);
            });
            if start.len() == before {
                break;
            }
        }
        // The variables themselves (slots included) are whole by being roots.
        self.at_start = start.into_iter().filter(|v| self.private.get(v).is_some_and(|r| r != v)).collect();
    }

    /// Which varying integers are a shared value plus the lane number: optimistically
    /// every integer variable whose stores could be, then dropping those with a store
    /// of anything else, until nothing changes.
    ///
    /// A variable stored where only some lanes are holds other steps in other lanes,
    /// except inside a loop the lanes leave at different iterations: the lanes still in
    /// it have taken the same steps, so its loads there count, and only there.
    fn find_consecutive(&mut self, lines: &[&str], divergent: &[Divergence]) {
        let mut variables: HashSet<String> = self
            .allocas
            .iter()
            .filter(|(n, t)| matches!(t, IrType::Int(_)) && self.varying.contains(*n))
            .map(|(n, _)| n.clone())
            .collect();
        // Where each variable's loads count (blocks; all by default).
        let mut within: HashMap<String, Vec<bool>> = HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = code(line).trim_start().strip_prefix("store ") else { continue };
            let ptr = split_top(rest).get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("").to_string();
            if !variables.contains(&ptr) {
                continue;
            }
            let b = self.block_of[i];
            for d in divergent.iter().filter(|d| d.region[b]) {
                match d.exit_of.as_ref().filter(|inside| inside[b]) {
                    Some(inside) => {
                        let r = within.entry(ptr.clone()).or_insert_with(|| vec![true; inside.len()]);
                        r.iter_mut().zip(inside).for_each(|(r, i)| *r &= i);
                    }
                    None => {
                        variables.remove(&ptr);
                    }
                }
            }
        }
        loop {
            let values = self.consecutive_values(lines, &variables, &within);
            let before = variables.len();
            for line in lines {
                let c = code(line).trim_start();
                if let Some(rest) = c.strip_prefix("store ") {
                    let parts = split_top(rest);
                    let value = parts.first().and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                    let ptr = parts.get(1).and_then(|p| p.rsplit(' ').next()).unwrap_or("");
                    if variables.contains(ptr) && !values.contains(value) {
                        variables.remove(ptr);
                    }
                }
            }
            if variables.len() == before {
                self.consecutive = values;
                self.consecutive.extend(variables);
                return;
            }
        }
    }

    fn consecutive_values(
        &self,
        lines: &[&str],
        variables: &HashSet<String>,
        within: &HashMap<String, Vec<bool>>,
    ) -> HashSet<String> {
        let mut values = HashSet::new();
        for (i, line) in lines.iter().enumerate() {
            let c = code(line);
            let Some((d, rhs)) = def_of(c) else { continue };
            let ops = operands(c);
            let lane = |v: &String| values.contains(v);
            let shared = |v: &String| !self.varying.contains(v);
            let counts = |v: &String| within.get(v).map_or(true, |inside| inside[self.block_of[i]]);
            let is = match opcode(rhs) {
                ("call", _) => matches!(query(c), Ok(Some(true))),
                ("load", _) => ops.len() == 1 && variables.contains(&ops[0]) && counts(&ops[0]),
                ("sext" | "zext" | "trunc", _) => ops.len() == 1 && lane(&ops[0]),
                // An add of a shared value (or constant) and one lane value; the lane
                // value first where a constant or shared value is subtracted.
                ("add", _) => ops.iter().filter(|v| lane(v)).count() == 1 && ops.iter().all(|v| lane(v) || shared(v)),
                // `operands` names values only: `sub 1023, %lid` reads as `sub %lid`,
                // and a lane counted down is no consecutive run (every lane past the
                // first loaded the wrong elements), so the text's first operand decides.
                ("sub", _) => {
                    let first = rhs.split_once(',').and_then(|(a, _)| a.trim().rsplit(' ').next());
                    first.is_some_and(|f| values.contains(f)) && ops.iter().skip(1).all(shared)
                }
                _ => false,
            };
            if is {
                values.insert(d.to_string());
            }
        }
        values
    }

    fn varies(&self, v: &str) -> bool {
        self.varying.contains(v)
    }
}

/// A varying value's type: a lane per work-item, a vector's components each with its
/// lanes together, an array's elements each widened.
fn widened(t: &IrType) -> Option<IrType> {
    Some(match t {
        IrType::Int(_) | IrType::Half | IrType::Float | IrType::Double | IrType::Ptr(_) => {
            IrType::Vector(WIDTH, Box::new(t.clone()))
        }
        IrType::Vector(n, e) if !matches!(**e, IrType::Vector(..)) => IrType::Vector(n * WIDTH, e.clone()),
        IrType::Array(n, e) => IrType::Array(*n, Box::new(widened(e)?)),
        // A structure of widened fields (`{ i32, [4 x float] }` -> `{ <8 x i32>, [4 x
        // <8 x float>] }`, as SYCL keeps a work-item's registers), where its size grows by
        // the width as a scalar's does: an address computed in bytes then still names
        // the same field.
        IrType::Struct(fields, packed) => {
            let wide = IrType::Struct(fields.iter().map(widened).collect::<Option<_>>()?, *packed);
            let none = HashMap::new();
            let (size, wide_size) = (t.layout(&none)?.0, wide.layout(&none)?.0);
            return (wide_size == size * WIDTH).then_some(wide);
        }
        _ => return None,
    })
}

/// The scalar types an aggregate's fields are made of (a vector's elements, an array's
/// element once).
fn element_types(t: &IrType) -> Vec<IrType> {
    match t {
        IrType::Struct(fields, _) => fields.iter().flat_map(element_types).collect(),
        IrType::Array(_, e) => element_types(e),
        other => vec![components(other).1],
    }
}

/// The scalar and vector fields of an aggregate, each with its path of indices (`,
/// i32 1, i64 0`); at most 64 of them.
fn aggregate_leaves(t: &IrType, path: &mut Vec<String>, out: &mut Vec<(String, IrType)>) -> Result<(), String> {
    match t {
        IrType::Struct(fields, _) => {
            for (i, f) in fields.iter().enumerate() {
                path.push(format!(", i32 {i}"));
                aggregate_leaves(f, path, out)?;
                path.pop();
            }
        }
        IrType::Array(n, e) => {
            for i in 0..*n {
                path.push(format!(", i64 {i}"));
                aggregate_leaves(e, path, out)?;
                path.pop();
            }
        }
        leaf => out.push((path.concat(), leaf.clone())),
    }
    match out.len() {
        0..=64 => Ok(()),
        _ => Err("a copy into a large varying aggregate".into()),
    }
}

/// Components of a vector type (1 for a scalar) and their element type.
fn components(t: &IrType) -> (u64, IrType) {
    match t {
        IrType::Vector(n, e) => (*n, (**e).clone()),
        other => (1, other.clone()),
    }
}

/// `value` of scalar or vector type `t` as a constant of the widened type, or `None`
/// where it is not a constant.
fn widened_constant(t: &IrType, value: &str) -> Option<String> {
    let value = value.trim();
    match value {
        "zeroinitializer" => return Some("zeroinitializer".into()),
        "undef" | "poison" => return Some("poison".into()),
        _ => {}
    }
    let (n, e) = components(t);
    let elements: Vec<String> = match t {
        IrType::Vector(..) => {
            let inner = value.strip_prefix('<')?.strip_suffix('>')?;
            split_top(inner).into_iter().map(|p| p.trim().to_string()).collect()
        }
        _ => {
            if value.starts_with('%') {
                return None;
            }
            vec![format!("{e} {value}")]
        }
    };
    if elements.len() as u64 != n {
        return None;
    }
    let lanes: Vec<&str> = elements.iter().flat_map(|c| std::iter::repeat(c.as_str()).take(WIDTH as usize)).collect();
    Some(format!("<{}>", lanes.join(", ")))
}

/// Splits `ty value` (an operand as LLVM writes it) into its type and value.
fn typed(operand: &str) -> Option<(IrType, String)> {
    let (t, rest) = ir_type::parse(operand)?;
    let mut rest = rest.trim();
    // Parameter attributes on call arguments.
    for attr in ["noundef ", "signext ", "zeroext ", "inreg ", "nonnull "] {
        rest = rest.strip_prefix(attr).unwrap_or(rest).trim_start();
    }
    Some((t, rest.to_string()))
}

struct Writer<'a> {
    a: &'a Analysis,
    out: String,
    declarations: Vec<String>,
    fresh: u32,
    /// Varying pointers whose lanes point at consecutive elements: the element type,
    /// and the pointer's `getelementptr` less its last index with that index's lanes
    /// (`Writer::lane0` makes the first lane's pointer from them).
    consecutive_geps: HashMap<String, (IrType, String, String)>,
    /// Varying pointers' widened types.
    gep_types: HashMap<String, IrType>,
    /// In a block's version for some of the lanes (`linear`), the mask of those lanes.
    lanes: Option<String>,
    /// Varying values this writer made (copies of variables through registers).
    made: HashSet<String>,
    /// Some lanes' atomics point the lanes not in the block at `%simd.dummy`, a
    /// variable of the entry block.
    dummy: bool,
}

impl Writer<'_> {
    fn varies(&self, v: &str) -> bool {
        self.a.varies(v) || self.made.contains(v)
    }

    /// A new local name, after `base` (a numbered value takes no suffix).
    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("%simd.{}.{}", base.trim_start_matches('%'), self.fresh)
    }

    /// `value` of type `t` as a widened operand: varying values as they are, constants
    /// as widened constants, shared values broadcast here.
    fn operand(&mut self, t: &IrType, value: &str) -> Result<String, String> {
        if self.varies(value) {
            return Ok(value.to_string());
        }
        if let Some(c) = widened_constant(t, value) {
            return Ok(c);
        }
        let wide = widened(t).ok_or("an operand of an unsupported type")?;
        let (n, _) = components(t);
        let out = self.name(value);
        match t {
            IrType::Vector(..) => {
                let mask: Vec<String> = (0..n).flat_map(|c| (0..WIDTH).map(move |_| format!("i32 {c}"))).collect();
                let _ = writeln!(
                    self.out,
                    "  {out} = shufflevector {t} {value}, {t} poison, <{} x i32> <{}>",
                    n * WIDTH,
                    mask.join(", ")
                );
            }
            _ => {
                let one = self.name(value);
                let _ = writeln!(self.out, "  {one} = insertelement {wide} poison, {t} {value}, i64 0");
                let _ = writeln!(
                    self.out,
                    "  {out} = shufflevector {wide} {one}, {wide} poison, <{WIDTH} x i32> zeroinitializer"
                );
            }
        }
        Ok(out)
    }

    /// `mask` for a value of `n` components, each component's lanes together.
    fn spread_mask(&mut self, mask: &str, n: u64, lane_major: bool) -> String {
        if n == 1 {
            return mask.to_string();
        }
        let picks: Vec<String> = match lane_major {
            true => (0..WIDTH).flat_map(|k| (0..n).map(move |_| format!("i32 {k}"))).collect(),
            false => (0..n).flat_map(|_| (0..WIDTH).map(|k| format!("i32 {k}"))).collect(),
        };
        let out = self.name("%masks");
        let _ = writeln!(
            self.out,
            "  {out} = shufflevector <{WIDTH} x i1> {mask}, <{WIDTH} x i1> poison, <{} x i32> <{}>",
            n * WIDTH,
            picks.join(", ")
        );
        out
    }

    /// `ty value` widened (for argument lists).
    fn typed_operand(&mut self, operand: &str) -> Result<String, String> {
        let (t, v) = typed(operand).ok_or("an unreadable operand")?;
        let wide = widened(&t).ok_or("an operand of an unsupported type")?;
        let v = self.operand(&t, &v)?;
        Ok(format!("{wide} {v}"))
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        let c = code(line);
        let t = c.trim_start();
        if label_of(line).is_some() || t.is_empty() || t.starts_with(';') {
            let _ = writeln!(self.out, "{line}");
            return Ok(());
        }
        if t.contains("@llvm.dbg.") {
            return Ok(());
        }
        if let Some(rest) = t.strip_prefix("store ") {
            return self.store(rest);
        }
        let Some((d, rhs)) = def_of(c) else {
            // Terminators (on shared values, `Analysis::of` checked) and calls without
            // a result.
            if t.starts_with("call ") || t.starts_with("tail call ") {
                return self.call(None, t);
            }
            let _ = writeln!(self.out, "{c}");
            return Ok(());
        };
        let (op, rest) = opcode(rhs);
        match op {
            "alloca" if self.a.apart.contains(d) => {
                let ty = &self.a.allocas[d];
                let (lanes, steps) = (self.name(d), (0..WIDTH).map(|k| format!("i64 {k}")).collect::<Vec<_>>());
                let _ = writeln!(self.out, "  {lanes} = alloca [{WIDTH} x {ty}], align 16");
                let _ = writeln!(
                    self.out,
                    "  {d} = getelementptr inbounds [{WIDTH} x {ty}], ptr {lanes}, i64 0, <{WIDTH} x i64> <{}>",
                    steps.join(", ")
                );
                Ok(())
            }
            "alloca" => {
                let ty = &self.a.allocas[d];
                match self.varies(d) {
                    true => {
                        let wide = widened(ty).ok_or("unsupported private variable")?;
                        let _ = writeln!(self.out, "  {d} = alloca {wide}, align 64");
                    }
                    false => {
                        let _ = writeln!(self.out, "{c}");
                    }
                }
                Ok(())
            }
            "load" => self.load(d, rest, c),
            "getelementptr" => self.gep(d, rest, c),
            "call" => self.call(Some(d), t),
            "atomicrmw" => self.atomicrmw(d, rest),
            "cmpxchg" | "va_arg" | "landingpad" => Err(format!("instruction {op}")),
            _ if !self.varies(d) => {
                let _ = writeln!(self.out, "{c}");
                Ok(())
            }
            "extractelement" => {
                let parts = split_top(rest);
                let (vt, v) = typed(parts[0]).ok_or("unreadable extractelement")?;
                let index: u64 = parts[1].rsplit(' ').next().and_then(|i| i.parse().ok()).ok_or("a varying index")?;
                // Component `index`'s lanes, together in the widened vector.
                let mask: Vec<String> = (0..WIDTH).map(|k| format!("i32 {}", index * WIDTH + k)).collect();
                let wide = widened(&vt).ok_or("unsupported vector")?;
                let v = self.operand(&vt, &v)?;
                let _ = writeln!(
                    self.out,
                    "  {d} = shufflevector {wide} {v}, {wide} poison, <{WIDTH} x i32> <{}>",
                    mask.join(", ")
                );
                Ok(())
            }
            "insertelement" => {
                let parts = split_top(rest);
                let (vt, v) = typed(parts[0]).ok_or("unreadable insertelement")?;
                let (st, s) = typed(parts[1]).ok_or("unreadable insertelement")?;
                let index: u64 = parts[2].rsplit(' ').next().and_then(|i| i.parse().ok()).ok_or("a varying index")?;
                let (n, _) = components(&vt);
                let wide = widened(&vt).ok_or("unsupported vector")?;
                let lane_ty = widened(&st).ok_or("unsupported element")?;
                let v = self.operand(&vt, &v)?;
                let s = self.operand(&st, &s)?;
                // The scalar's lanes, padded to the vector's width, then merged in.
                let padded = self.name(d);
                let pad: Vec<String> = (0..n * WIDTH)
                    .map(|i| match i < WIDTH {
                        true => format!("i32 {i}"),
                        false => "i32 poison".into(),
                    })
                    .collect();
                let _ = writeln!(
                    self.out,
                    "  {padded} = shufflevector {lane_ty} {s}, {lane_ty} poison, <{} x i32> <{}>",
                    n * WIDTH,
                    pad.join(", ")
                );
                let mask: Vec<String> = (0..n * WIDTH)
                    .map(|i| match i / WIDTH == index {
                        true => format!("i32 {}", n * WIDTH + i % WIDTH),
                        false => format!("i32 {i}"),
                    })
                    .collect();
                let _ = writeln!(
                    self.out,
                    "  {d} = shufflevector {wide} {v}, {wide} {padded}, <{} x i32> <{}>",
                    n * WIDTH,
                    mask.join(", ")
                );
                Ok(())
            }
            "shufflevector" => {
                let parts = split_top(rest);
                let (at, av) = typed(parts[0]).ok_or("unreadable shufflevector")?;
                let (_, bv) = typed(parts[1]).ok_or("unreadable shufflevector")?;
                let (mt, mv) = typed(parts[2]).ok_or("unreadable shufflevector")?;
                let (m, _) = components(&mt);
                let picks: Vec<Option<u64>> = match mv.trim() {
                    "zeroinitializer" => vec![Some(0); m as usize],
                    other => {
                        let inner =
                            other.strip_prefix('<').and_then(|s| s.strip_suffix('>')).ok_or("a mask not constant")?;
                        split_top(inner).iter().map(|p| p.rsplit(' ').next().and_then(|x| x.parse().ok())).collect()
                    }
                };
                let wide = widened(&at).ok_or("unsupported vector")?;
                let a = self.operand(&at, &av)?;
                let b = self.operand(&at, &bv)?;
                let mask: Vec<String> = picks
                    .iter()
                    .flat_map(|p| {
                        (0..WIDTH).map(move |k| match p {
                            Some(c) => format!("i32 {}", c * WIDTH + k),
                            None => "i32 poison".into(),
                        })
                    })
                    .collect();
                let _ = writeln!(
                    self.out,
                    "  {d} = shufflevector {wide} {a}, {wide} {b}, <{} x i32> <{}>",
                    m * WIDTH,
                    mask.join(", ")
                );
                Ok(())
            }
            "phi" => {
                let (t, rest) = ir_type::parse(rest).ok_or("unreadable phi")?;
                let wide = widened(&t).ok_or("unsupported phi")?;
                let mut incoming = Vec::new();
                for pair in split_top(rest) {
                    let inner =
                        pair.trim().strip_prefix('[').and_then(|p| p.strip_suffix(']')).ok_or("unreadable phi")?;
                    let (v, label) = inner.split_once(',').ok_or("unreadable phi")?;
                    let v = v.trim();
                    let v = match (self.varies(v), widened_constant(&t, v)) {
                        (true, _) => v.to_string(),
                        (false, Some(c)) => c,
                        (false, None) => return Err("a shared value into a varying phi".into()),
                    };
                    incoming.push(format!("[ {v}, {} ]", label.trim()));
                }
                let _ = writeln!(self.out, "  {d} = phi {wide} {}", incoming.join(", "));
                Ok(())
            }
            "select" => {
                let rest = skip_flags(rest);
                let parts = split_top(rest);
                let (ct, cv) = typed(parts[0]).ok_or("unreadable select")?;
                let cond = match self.varies(&cv) {
                    true => format!("{} {cv}", widened(&ct).ok_or("unsupported select")?),
                    false => format!("{ct} {cv}"),
                };
                let a = self.typed_operand(parts[1])?;
                let b = self.typed_operand(parts[2])?;
                let _ = writeln!(self.out, "  {d} = select {cond}, {a}, {b}");
                Ok(())
            }
            "icmp" | "fcmp" => {
                let rest = skip_flags(rest);
                let (pred, rest) = rest.split_once(' ').ok_or("unreadable compare")?;
                let parts = split_top(rest);
                let (t, a) = typed(parts[0]).ok_or("unreadable compare")?;
                let wide = widened(&t).ok_or("unsupported compare")?;
                let a = self.operand(&t, &a)?;
                let b = self.operand(&t, parts[1].trim())?;
                let _ = writeln!(self.out, "  {d} = {op} {pred} {wide} {a}, {b}");
                Ok(())
            }
            "trunc" | "zext" | "sext" | "fptrunc" | "fpext" | "sitofp" | "uitofp" | "fptosi" | "fptoui" | "bitcast"
            | "ptrtoint" | "inttoptr" | "addrspacecast" => {
                let rest = skip_flags(rest);
                let (from, to) = rest.rsplit_once(" to ").ok_or("unreadable cast")?;
                let (t, v) = typed(from).ok_or("unreadable cast")?;
                let (tt, _) = ir_type::parse(to).ok_or("unreadable cast")?;
                if op == "bitcast" && components(&t).0 != components(&tt).0 {
                    return self.regrouping_bitcast(d, &t, &v, &tt);
                }
                let (wide, wide_to) = (widened(&t).ok_or("unsupported cast")?, widened(&tt).ok_or("unsupported cast")?);
                let v = self.operand(&t, &v)?;
                let _ = writeln!(self.out, "  {d} = {op} {wide} {v} to {wide_to}");
                Ok(())
            }
            "fneg" | "freeze" => {
                let rest = skip_flags(rest);
                let (t, v) = typed(rest).ok_or("unreadable operand")?;
                let wide = widened(&t).ok_or("unsupported type")?;
                let v = self.operand(&t, &v)?;
                let _ = writeln!(self.out, "  {d} = {op} {wide} {v}");
                Ok(())
            }
            "add" | "sub" | "mul" | "udiv" | "sdiv" | "urem" | "srem" | "shl" | "lshr" | "ashr" | "and" | "or"
            | "xor" | "fadd" | "fsub" | "fmul" | "fdiv" | "frem" => {
                let flags_end = rest.len() - skip_flags(rest).len();
                let (flags, rest) = rest.split_at(flags_end);
                let parts = split_top(rest);
                let (t, a) = typed(parts[0]).ok_or("unreadable operand")?;
                let wide = widened(&t).ok_or("unsupported type")?;
                let a = self.operand(&t, &a)?;
                let b = self.operand(&t, parts[1].trim())?;
                let _ = writeln!(self.out, "  {d} = {op} {flags}{wide} {a}, {b}");
                Ok(())
            }
            other => Err(format!("instruction {other}")),
        }
    }

    fn load(&mut self, d: &str, rest: &str, c: &str) -> Result<(), String> {
        if rest.starts_with("volatile ") || rest.starts_with("atomic ") {
            return match self.varies(d) {
                true => Err("a volatile or atomic load".into()),
                false => {
                    let _ = writeln!(self.out, "{c}");
                    Ok(())
                }
            };
        }
        let parts = split_top(rest);
        let (t, _) = ir_type::parse(parts[0]).ok_or("unreadable load")?;
        let (pt, p) = typed(parts[1]).ok_or("unreadable load")?;
        let align = parts.get(2).map(|a| a.trim()).unwrap_or("align 1");
        if let Some(root) = self.a.private.get(&p).filter(|root| self.varies(root)) {
            self.same_elements(root, &t)?;
            let wide = widened(&t).ok_or("unsupported load")?;
            let _ = writeln!(self.out, "  {d} = load {wide}, {pt} {p}, align 4");
            return Ok(());
        }
        if !self.varies(&p) {
            let _ = writeln!(self.out, "{c}");
            return Ok(());
        }
        let wide = widened(&t).ok_or("unsupported load")?;
        let mask = self.lanes.clone();
        match self.lane0(&p, &t, mask.as_deref())? {
            Some(first) => {
                let (n, e) = components(&t);
                let stride = memory_stride(&t, &e)?;
                let mem = IrType::Vector(stride * WIDTH, Box::new(e.clone()));
                // Inside a loop of varying length, only the lanes in it read memory.
                let read = |w: &mut Self, into: &str, ty: &IrType| -> Result<(), String> {
                    match &mask {
                        None => {
                            let _ = writeln!(w.out, "  {into} = load {ty}, {pt} {first}, {align}");
                        }
                        Some(m) => {
                            // Only the lanes in the block read memory.
                            let lanes = w.spread_mask(m, stride, true);
                            let IrType::Ptr(space) = pt else { return Err("a load through a non-pointer".into()) };
                            let name = format!("llvm.masked.load.{}.p{space}", suffix(ty)?);
                            let align_n = align.trim_start_matches("align ").trim();
                            let _ = writeln!(
                                w.out,
                                "  {into} = call {ty} @{name}({pt} {first}, i32 {align_n}, <{} x i1> {lanes}, {ty} poison)",
                                stride * WIDTH
                            );
                            w.declarations.push(format!(
                                "declare {ty} @{name}({pt}, i32 immarg, <{} x i1>, {ty})",
                                stride * WIDTH
                            ));
                        }
                    }
                    Ok(())
                };
                if n == 1 {
                    read(self, d, &wide)?;
                } else {
                    // Lanes' vectors one after another in memory: load them all, then
                    // put each component's lanes together.
                    let all = self.name(d);
                    read(self, &all, &mem)?;
                    let mask: Vec<String> =
                        (0..n).flat_map(|c| (0..WIDTH).map(move |k| format!("i32 {}", k * stride + c))).collect();
                    let _ = writeln!(
                        self.out,
                        "  {d} = shufflevector {mem} {all}, {mem} poison, <{} x i32> <{}>",
                        n * WIDTH,
                        mask.join(", ")
                    );
                }
            }
            None if components(&t).0 > 1 => {
                // A vector at each lane's address: a gather a component, the lanes of
                // each component together as the widened vector keeps them.
                let (n, e) = components(&t);
                let wide_e = widened(&e).ok_or("unsupported load")?;
                let mut parts = Vec::new();
                for c in 0..n {
                    let (at, one) = (self.name("%at"), self.name(d));
                    let ptrs = widened(&pt).ok_or("unsupported pointer")?;
                    let _ = writeln!(self.out, "  {at} = getelementptr inbounds {e}, {ptrs} {p}, i64 {c}");
                    self.load_lanes(&one, &e, &pt, &at, "align 1", mask.clone())?;
                    parts.push(one);
                }
                self.concat(d, &wide_e, &parts)?;
            }
            None => self.load_lanes(d, &t, &pt, &p, align, mask)?,
        }
        Ok(())
    }

    fn store(&mut self, rest: &str) -> Result<(), String> {
        if rest.starts_with("atomic ") {
            return Err("an atomic store".into());
        }
        if let Some(plain) = rest.strip_prefix("volatile ") {
            // Once, as the scalar code would (if any lane is here); lanes' own volatile
            // values would need a store per lane in order.
            let parts = split_top(plain);
            let (_, v) = typed(parts[0]).ok_or("unreadable store")?;
            let (_, p) = typed(parts[1]).ok_or("unreadable store")?;
            if self.varies(&v) || self.varies(&p) || self.a.private.contains_key(&p) {
                return Err("a volatile store of lanes' own values".into());
            }
            let _ = writeln!(self.out, "  store {}", code(rest));
            return Ok(());
        }
        let parts = split_top(rest);
        let (t, v) = typed(parts[0]).ok_or("unreadable store")?;
        let (pt, p) = typed(parts[1]).ok_or("unreadable store")?;
        let align = parts.get(2).map(|a| a.trim()).unwrap_or("align 1");
        let mask = self.lanes.clone();
        if let Some(root) = self.a.private.get(&p).filter(|root| self.varies(root)).cloned() {
            self.same_elements(&root, &t)?;
            let wide = widened(&t).ok_or("unsupported store")?;
            let mut v = self.operand(&t, &v)?;
            if let Some(m) = &mask {
                // Lanes not in the block keep their value.
                let lanes = self.spread_mask(m, components(&t).0, false);
                let (old, new) = (self.name("%old"), self.name("%kept"));
                let _ = writeln!(self.out, "  {old} = load {wide}, {pt} {p}, align 4");
                let _ = writeln!(
                    self.out,
                    "  {new} = select <{} x i1> {lanes}, {wide} {v}, {wide} {old}",
                    components(&t).0 * WIDTH
                );
                v = new;
            }
            let _ = writeln!(self.out, "  store {wide} {v}, {pt} {p}, align 4");
            return Ok(());
        }
        if self.a.slots.contains_key(&p) {
            // A variable's address (the same in every lane) into its slot.
            let _ = writeln!(self.out, "  store {}", code(rest));
            return Ok(());
        }
        if !self.varies(&p) {
            if self.varies(&v) {
                // Lanes' values to one address: the last lane's stays, as when the
                // work-items run one after another (a group leader's result).
                if components(&t).0 != 1 {
                    return Err("lanes storing vectors to one address".into());
                }
                let wide = widened(&t).ok_or("unsupported store")?;
                let last = match &mask {
                    None => format!("{}", WIDTH - 1),
                    Some(m) => {
                        let (bits, zeros, at) = (self.name("%bits"), self.name("%zeros"), self.name("%last"));
                        let _ = writeln!(self.out, "  {bits} = bitcast <{WIDTH} x i1> {m} to i{WIDTH}");
                        let _ = writeln!(
                            self.out,
                            "  {zeros} = call i{WIDTH} @llvm.ctlz.i{WIDTH}(i{WIDTH} {bits}, i1 true)"
                        );
                        let _ = writeln!(self.out, "  {at} = sub i{WIDTH} {}, {zeros}", WIDTH - 1);
                        self.declarations.push(format!("declare i{WIDTH} @llvm.ctlz.i{WIDTH}(i{WIDTH}, i1 immarg)"));
                        at
                    }
                };
                let one = self.name(&v);
                let _ = writeln!(
                    self.out,
                    "  {one} = extractelement {wide} {v}, i{} {last}",
                    if mask.is_some() { WIDTH } else { 64 }
                );
                let _ = writeln!(self.out, "  store {t} {one}, {pt} {p}, {align}");
                return Ok(());
            }
            // A shared value to a shared address: once, if any lane is here.
            let _ = writeln!(self.out, "  store {}", code(rest));
            return Ok(());
        }
        let wide = widened(&t).ok_or("unsupported store")?;
        let v = self.operand(&t, &v)?;
        match self.lane0(&p, &t, mask.as_deref())? {
            Some(first) => {
                let (n, e) = components(&t);
                let write = |w: &mut Self, value: &str| -> Result<(), String> {
                    match &mask {
                        None => {
                            let _ = writeln!(w.out, "  store {wide} {value}, {pt} {first}, {align}");
                        }
                        Some(m) => {
                            let lanes = w.spread_mask(m, n, true);
                            let IrType::Ptr(space) = pt else { return Err("a store through a non-pointer".into()) };
                            let name = format!("llvm.masked.store.{}.p{space}", suffix(&wide)?);
                            let align_n = align.trim_start_matches("align ").trim();
                            let _ = writeln!(
                                w.out,
                                "  call void @{name}({wide} {value}, {pt} {first}, i32 {align_n}, <{} x i1> {lanes})",
                                n * WIDTH
                            );
                            w.declarations
                                .push(format!("declare void @{name}({wide}, {pt}, i32 immarg, <{} x i1>)", n * WIDTH));
                        }
                    }
                    Ok(())
                };
                if n == 1 {
                    write(self, &v)?;
                } else {
                    let stride = memory_stride(&t, &e)?;
                    if stride != n {
                        return Err("a store of three-component vectors".into());
                    }
                    let all = self.name("%st");
                    let mask: Vec<String> =
                        (0..WIDTH).flat_map(|k| (0..n).map(move |c| format!("i32 {}", c * WIDTH + k))).collect();
                    let _ = writeln!(
                        self.out,
                        "  {all} = shufflevector {wide} {v}, {wide} poison, <{} x i32> <{}>",
                        n * WIDTH,
                        mask.join(", ")
                    );
                    write(self, &all)?;
                }
            }
            None if components(&t).0 > 1 => {
                // A gather's opposite: a scatter a component.
                let (n, e) = components(&t);
                let ptrs = widened(&pt).ok_or("unsupported pointer")?;
                for c in 0..n {
                    let (at, one) = (self.name("%at"), self.name("%part"));
                    let picks: Vec<String> = (0..WIDTH).map(|k| format!("i32 {}", c * WIDTH + k)).collect();
                    let _ = writeln!(
                        self.out,
                        "  {one} = shufflevector {wide} {v}, {wide} poison, <{WIDTH} x i32> <{}>",
                        picks.join(", ")
                    );
                    let _ = writeln!(self.out, "  {at} = getelementptr inbounds {e}, {ptrs} {p}, i64 {c}");
                    self.store_lanes(&one, &e, &pt, &at, "align 1", mask.clone())?;
                }
            }
            None => self.store_lanes(&v, &t, &pt, &p, align, mask)?,
        }
        Ok(())
    }

    /// A bitcast between vectors of different lengths (clang passes a `float2` as a
    /// `double`): the widened value's components are each lane's together only after a
    /// shuffle, so lanes are put side by side, cast, and taken apart again.
    fn regrouping_bitcast(&mut self, d: &str, t: &IrType, v: &str, to: &IrType) -> Result<(), String> {
        let ((n, e), (m, f)) = (components(t), components(to));
        let bytes = |x: &IrType| x.layout(&HashMap::new()).map(|(s, _)| s);
        if n == 3 || m == 3 || bytes(t).is_none() || bytes(t) != bytes(to) {
            return Err("a bitcast between vectors of different lengths".into());
        }
        let wide = widened(t).ok_or("unsupported cast")?;
        let v = self.operand(t, v)?;
        // Component-major (c * WIDTH + lane) to lane-major (lane * count + c), and back.
        let order = |count: u64, to_lanes: bool| -> String {
            let picks: Vec<String> = (0..count * WIDTH)
                .map(|i| match to_lanes {
                    true => format!("i32 {}", (i % count) * WIDTH + i / count),
                    false => format!("i32 {}", (i % WIDTH) * count + i / WIDTH),
                })
                .collect();
            picks.join(", ")
        };
        let lanes = match n {
            1 => v,
            _ => {
                let x = self.name(d);
                let _ = writeln!(
                    self.out,
                    "  {x} = shufflevector {wide} {v}, {wide} poison, <{} x i32> <{}>",
                    n * WIDTH,
                    order(n, true)
                );
                x
            }
        };
        let lane_major = format!("<{} x {f}>", m * WIDTH);
        let cast = if m == 1 { d.to_string() } else { self.name(d) };
        let _ = writeln!(self.out, "  {cast} = bitcast <{} x {e}> {lanes} to {lane_major}", n * WIDTH);
        if m > 1 {
            let _ = writeln!(
                self.out,
                "  {d} = shufflevector {lane_major} {cast}, {lane_major} poison, <{} x i32> <{}>",
                m * WIDTH,
                order(m, false)
            );
        }
        Ok(())
    }

    /// A gather of scalars of type `t` through the lanes' pointers `p` into `d`.
    fn load_lanes(
        &mut self,
        d: &str,
        t: &IrType,
        pt: &IrType,
        p: &str,
        align: &str,
        mask: Option<String>,
    ) -> Result<(), String> {
        let (name, ptrs, ones, align_n) = scattered("gather", t, pt, align)?;
        let wide = widened(t).ok_or("unsupported load")?;
        let lanes = mask.unwrap_or(ones);
        let _ = writeln!(
            self.out,
            "  {d} = call {wide} @{name}({ptrs} {p}, i32 {align_n}, <{WIDTH} x i1> {lanes}, {wide} poison)"
        );
        self.declarations.push(format!("declare {wide} @{name}({ptrs}, i32 immarg, <{WIDTH} x i1>, {wide})"));
        Ok(())
    }

    /// A scatter of the widened scalars `v` of type `t` through the lanes' pointers `p`.
    fn store_lanes(
        &mut self,
        v: &str,
        t: &IrType,
        pt: &IrType,
        p: &str,
        align: &str,
        mask: Option<String>,
    ) -> Result<(), String> {
        let (name, ptrs, ones, align_n) = scattered("scatter", t, pt, align)?;
        let wide = widened(t).ok_or("unsupported store")?;
        let lanes = mask.unwrap_or(ones);
        let _ =
            writeln!(self.out, "  call void @{name}({wide} {v}, {ptrs} {p}, i32 {align_n}, <{WIDTH} x i1> {lanes})");
        self.declarations.push(format!("declare void @{name}({wide}, {ptrs}, i32 immarg, <{WIDTH} x i1>)"));
        Ok(())
    }

    /// `parts` (vectors of type `part`, each the lanes of one component) one after
    /// another as `d`.
    fn concat(&mut self, d: &str, part: &IrType, parts: &[String]) -> Result<(), String> {
        let IrType::Vector(lanes, e) = part else { return Err("a concatenation of scalars".into()) };
        let lanes = *lanes;
        if parts.len() < 2 {
            return Err("a concatenation of one part".into());
        }
        let mut joined = parts[0].clone();
        let mut len = lanes;
        for (i, next) in parts.iter().enumerate().skip(1) {
            let total = len + lanes;
            // Both operands of a shuffle have one type: each grown to the total first.
            let grow = |w: &mut Self, v: &str, from: u64| -> String {
                let out = w.name(d);
                let picks: Vec<String> = (0..total).map(|k| format!("i32 {}", k.min(from - 1))).collect();
                let _ = writeln!(
                    w.out,
                    "  {out} = shufflevector <{from} x {e}> {v}, <{from} x {e}> poison, <{total} x i32> <{}>",
                    picks.join(", ")
                );
                out
            };
            let (a, b) = (grow(self, &joined, len), grow(self, next, lanes));
            let out = if i + 1 == parts.len() { d.to_string() } else { self.name(d) };
            let picks: Vec<String> =
                (0..total).map(|k| format!("i32 {}", if k < len { k } else { total + k - len })).collect();
            let _ = writeln!(
                self.out,
                "  {out} = shufflevector <{total} x {e}> {a}, <{total} x {e}> {b}, <{total} x i32> <{}>",
                picks.join(", ")
            );
            joined = out;
            len = total;
        }
        Ok(())
    }

    /// For a varying pointer to values of type `t` whose lanes point at consecutive
    /// elements (`getelementptr t, base, i` with a shared base and `i` a shared value
    /// plus the lane), lane 0's pointer, extracted here; `None` otherwise.
    ///
    /// Inside a loop of varying length a lane out of the loop may hold an older index:
    /// there the first lane still in it gives the address, less its lane number (the
    /// lanes in the loop have all taken the same steps, so theirs stay consecutive).
    fn lane0(&mut self, p: &str, t: &IrType, mask: Option<&str>) -> Result<Option<String>, String> {
        let Some((elem, head, last)) = self.consecutive_geps.get(p).cloned() else { return Ok(None) };
        // The lanes' elements one after another: the pointer steps by the value's size
        // (a frame slot's `[n x i8]` holds a value of n bytes).
        let size = |t: &IrType| t.layout(&HashMap::new()).map(|(s, _)| s);
        if &elem != t && (size(&elem).is_none() || size(&elem) != size(t)) {
            return Ok(None);
        }
        let first = self.name(p);
        let ptrs = self.gep_types.get(p).cloned().ok_or("unknown pointer")?;
        let IrType::Vector(_, pointer) = &ptrs else { return Err("unknown pointer".into()) };
        match mask {
            None => {
                // A scalar address of the first lane's index, not lane 0 of the vector
                // of addresses: LLVM does not take a lane of an array's `getelementptr`
                // (two indices) apart, and computed the address in vector registers, a
                // chain of five more instructions before each load of a local array.
                let (wide, index) = last.rsplit_once(' ').ok_or("unreadable index")?;
                let IrType::Vector(_, it) = ir_type::parse(wide).ok_or("unreadable index")?.0 else {
                    return Err("unreadable index".into());
                };
                let i = self.name("%first.i");
                let _ = writeln!(self.out, "  {i} = extractelement {wide} {index}, i64 0");
                let _ = writeln!(self.out, "  {first} = {head}{it} {i}");
            }
            Some(m) => {
                // Each lane's pointer less its lane number of elements is the same in
                // every lane still in the loop: OR together over those lanes (no
                // extract by a variable lane, which went through memory).
                let (back, bits, kept, base) =
                    (self.name("%back"), self.name("%bits"), self.name("%kept"), self.name("%base"));
                let steps: Vec<String> = (0..WIDTH).map(|k| format!("i64 -{k}")).collect();
                let _ = writeln!(
                    self.out,
                    "  {back} = getelementptr {t}, {ptrs} {p}, <{WIDTH} x i64> <{}>",
                    steps.join(", ")
                );
                let _ = writeln!(self.out, "  {bits} = ptrtoint {ptrs} {back} to <{WIDTH} x i64>");
                let _ = writeln!(
                    self.out,
                    "  {kept} = select <{WIDTH} x i1> {m}, <{WIDTH} x i64> {bits}, <{WIDTH} x i64> zeroinitializer"
                );
                let _ = writeln!(
                    self.out,
                    "  {base} = call i64 @llvm.vector.reduce.or.v{WIDTH}i64(<{WIDTH} x i64> {kept})"
                );
                self.declarations.push(format!("declare i64 @llvm.vector.reduce.or.v{WIDTH}i64(<{WIDTH} x i64>)"));
                let _ = writeln!(self.out, "  {first} = inttoptr i64 {base} to {pointer}");
            }
        }
        Ok(Some(first))
    }

    fn gep(&mut self, d: &str, rest: &str, c: &str) -> Result<(), String> {
        let inbounds = rest.starts_with("inbounds ");
        let body = rest.strip_prefix("inbounds ").unwrap_or(rest);
        let parts = split_top(body);
        let (src, _) = ir_type::parse(parts[0]).ok_or("unreadable getelementptr")?;
        let (bt, base) = typed(parts[1]).ok_or("unreadable getelementptr")?;
        let kw = if inbounds { "getelementptr inbounds" } else { "getelementptr" };
        if let Some(root) = self.a.private.get(&base) {
            if !self.varies(root) {
                let _ = writeln!(self.out, "{c}");
                return Ok(());
            }
            // Into a widened variable: the same path through the widened type; an index
            // into a vector names its component's first lane.
            let mut indices = Vec::new();
            let mut at = src.clone();
            let lanes = self.a.lane_pointers.contains(d);
            for (i, part) in parts[2..].iter().enumerate() {
                let (it, iv) = typed(part).ok_or("unreadable index")?;
                if i == 0 {
                    indices.push(format!("{it} {iv}"));
                    continue;
                }
                match at.clone() {
                    IrType::Array(_, e) if lanes => {
                        let wide = widened(&it).ok_or("unreadable index")?;
                        indices.push(format!("{wide} {}", self.operand(&it, &iv)?));
                        at = *e;
                    }
                    IrType::Array(_, e) => {
                        indices.push(format!("{it} {iv}"));
                        at = *e;
                    }
                    IrType::Vector(..) => {
                        let n: u64 = iv.parse().map_err(|_| "a varying vector index")?;
                        indices.push(format!("{it} {}", n * WIDTH));
                        at = IrType::Int(0);
                    }
                    IrType::Struct(fields, _) => {
                        let n: usize = iv.parse().map_err(|_| "unreadable field index")?;
                        indices.push(format!("{it} {iv}"));
                        at = fields.get(n).cloned().ok_or("a field index past the structure")?;
                    }
                    _ => return Err("an index into a private structure".into()),
                }
            }
            let wide = widened(&src).ok_or("unsupported private variable")?;
            if lanes {
                // The lane's own of the element's lanes.
                if matches!(at, IrType::Vector(..) | IrType::Array(..) | IrType::Struct(..)) {
                    return Err("a lane's element of a private array of aggregates".into());
                }
                let steps: Vec<String> = (0..WIDTH).map(|k| format!("i32 {k}")).collect();
                indices.push(format!("<{WIDTH} x i32> <{}>", steps.join(", ")));
                self.gep_types.insert(d.to_string(), IrType::Vector(WIDTH, Box::new(IrType::Ptr(0))));
            }
            let _ = writeln!(self.out, "  {d} = {kw} {wide}, {bt} {base}, {}", indices.join(", "));
            return Ok(());
        }
        if !self.varies(d) {
            let _ = writeln!(self.out, "{c}");
            return Ok(());
        }
        let base_text = match self.varies(&base) {
            true => format!("{} {base}", widened(&bt).ok_or("unsupported pointer")?),
            false => format!("{bt} {base}"),
        };
        let mut indices = Vec::new();
        for part in &parts[2..] {
            indices.push(self.typed_operand(part)?);
        }
        let _ = writeln!(self.out, "  {d} = {kw} {src}, {base_text}, {}", indices.join(", "));
        let last = indices.last().cloned().unwrap_or_default();
        let wide_ptr = widened(&bt).ok_or("unsupported pointer")?;
        self.gep_types.insert(d.to_string(), wide_ptr);
        // `gep T, base, i` and `gep [n x T], base, 0, i` (an array in local or global
        // memory) with a shared base and i a shared value plus the lane step by T.
        let elem = match (parts.len(), &src) {
            (3, _) => Some(src.clone()),
            (4, IrType::Array(_, e)) if typed(parts[2]).is_some_and(|(_, v)| v == "0") => Some((**e).clone()),
            _ => None,
        };
        if let (Some(elem), false) = (elem, self.varies(&base)) {
            if let Some((_, iv)) = parts.last().and_then(|p| typed(p)) {
                if self.a.consecutive.contains(&iv) {
                    let uniform: String = parts[2..parts.len() - 1].iter().map(|p| format!("{}, ", p.trim())).collect();
                    let head = format!("{kw} {src}, {bt} {base}, {uniform}");
                    self.consecutive_geps.insert(d.to_string(), (elem, head, last));
                }
            }
        }
        Ok(())
    }

    fn call(&mut self, d: Option<&str>, t: &str) -> Result<(), String> {
        let c = code(t);
        let (callee, paren) = callee_names(c).into_iter().next().ok_or("an indirect call")?;
        let close = matching_paren(c, paren).ok_or("malformed call")?;
        let args = split_top(&c[paren + 1..close]);
        if let Some(lanes) = query(c)? {
            let Some(d) = d else { return Ok(()) };
            if !lanes {
                let _ = writeln!(self.out, "{c}");
                return Ok(());
            }
            let shared = self.name(d);
            let _ = writeln!(self.out, "  {}", c.trim_start().replacen(d, &shared, 1));
            // The ids answer size_t, the sub-group local id uint.
            let bits = if opencl_name(&callee) == Some("get_sub_group_local_id") { 32 } else { 64 };
            let wide = format!("<{WIDTH} x i{bits}>");
            let splat = self.operand(&IrType::Int(bits), &shared)?;
            let steps: Vec<String> = (0..WIDTH).map(|k| format!("i{bits} {k}")).collect();
            let _ = writeln!(self.out, "  {d} = add {wide} {splat}, <{}>", steps.join(", "));
            return Ok(());
        }
        if callee == fold::FIRST_LANE {
            let (d, (t, v)) = d.zip(args.first().and_then(|a| typed(a))).ok_or("malformed call")?;
            let _ = match self.varies(&v) {
                true => {
                    writeln!(self.out, "  {d} = extractelement {} {v}, i64 0", widened(&t).ok_or("a lane of what")?)
                }
                false => writeln!(self.out, "  {d} = add {t} {v}, 0"),
            };
            return Ok(());
        }
        if callee == fold::COPY_STEP {
            let _ = writeln!(self.out, "{c}");
            return Ok(());
        }
        if group_function(&callee) {
            return self.group_call(d, c, &callee, &args);
        }
        let address = context::by_symbol(&callee).is_some_and(|b| b.role == context::Role::Address);
        let varying_args = args.iter().any(|a| typed(a).is_some_and(|(_, v)| self.varies(&v)));
        if collective_helper(&callee) || address && varying_args {
            return self.lane_calls(d, c, &callee, &args);
        }
        if opencl_name(&callee) == Some("prefetch") && d.is_none() {
            // A hint with no effect on results: once for shared arguments, else left out.
            if !args.iter().any(|a| typed(a).is_some_and(|(_, v)| self.varies(&v))) {
                let _ = writeln!(self.out, "{c}");
            }
            return Ok(());
        }
        if let Some((to, from)) = copy_operands(c) {
            let varies = |p: &str| self.a.private.get(p).map_or(self.varies(p), |root| self.varies(root));
            if !varies(&to) && !varies(&from) && !args.iter().any(|a| typed(a).is_some_and(|(_, v)| self.varies(&v))) {
                // A copy of a shared variable: once, for every lane.
                let _ = writeln!(self.out, "{c}");
                return Ok(());
            }
            let memory = |p: &str| !self.a.private.contains_key(p) && !self.a.lane_pointers.contains(p);
            if memory(&to) && memory(&from) {
                // Between memory at addresses that differ by lane (into a region's frame
                // slot, SYCL's functor built there): each lane's own copy.
                return self.lane_copies(&callee, &args);
            }
            // A whole varying variable to or from memory (a region's frame slot): a
            // load and a store of its type.
            let whole = |p: &str| {
                let root = self.a.private.get(p).filter(|r| *r == p || self.a.at_start.contains(p))?;
                self.a.allocas.get(root)
            };
            let ty = whole(&to).or_else(|| whole(&from)).cloned().ok_or("a copy of part of a varying variable")?;
            if matches!(ty, IrType::Struct(..) | IrType::Array(..)) && !varies(&from) {
                // Shared memory into every lane of a varying aggregate (SYCL's zeroed
                // `vec` from a constant): each field loaded once and broadcast.
                let mut leaves = Vec::new();
                aggregate_leaves(&ty, &mut Vec::new(), &mut leaves)?;
                let wide_ty = widened(&ty).ok_or("unsupported private variable")?;
                for (path, leaf) in leaves {
                    let (src, value, dst) = (self.name("%leaf.src"), self.name("%leaf"), self.name("%leaf.dst"));
                    let _ = writeln!(self.out, "  {src} = getelementptr inbounds {ty}, ptr {from}, i64 0{path}");
                    let _ = writeln!(self.out, "  {value} = load {leaf}, ptr {src}, align 1");
                    let wide = self.operand(&leaf, &value)?;
                    let wide_leaf = widened(&leaf).ok_or("unsupported private variable")?;
                    let _ = writeln!(self.out, "  {dst} = getelementptr inbounds {wide_ty}, ptr {to}, i64 0{path}");
                    let _ = writeln!(self.out, "  store {wide_leaf} {wide}, ptr {dst}, align 4");
                }
                return Ok(());
            }
            let bytes = ty.layout(&HashMap::new()).map(|(s, _)| s);
            let n = args.get(2).and_then(|a| a.rsplit(' ').next()).and_then(|n| n.parse::<u64>().ok());
            if bytes.is_none() || bytes != n {
                return Err("a copy of part of a varying variable".into());
            }
            let into = whole(&to).is_some();
            let (variable, memory, operand) = match into {
                true => (to.clone(), from.clone(), args.get(1)),
                false => (from.clone(), to.clone(), args.first()),
            };
            if matches!(ty, IrType::Struct(..) | IrType::Array(..)) && self.varies(&memory) {
                // Memory at each lane's own address (not another variable).
                let pointer = operand.and_then(|a| typed(a)).map(|(t, _)| t).ok_or("unreadable copy")?;
                return self.leaf_copies(&ty, &variable, &memory, &pointer, into);
            }
            let value = self.name("%copy");
            self.made.insert(value.clone());
            self.line(&format!("  {value} = load {ty}, ptr {from}, align 4"))?;
            return self.line(&format!("  store {ty} {value}, ptr {to}, align 4"));
        }
        if callee == "llvm.assume" {
            // A hint: kept where it holds for every lane alike, else left out.
            if !args.iter().any(|a| typed(a).is_some_and(|(_, v)| self.varies(&v))) {
                let _ = writeln!(self.out, "{c}");
            }
            return Ok(());
        }
        if callee.starts_with("llvm.lifetime.") {
            let ptr = args.get(1).and_then(|a| a.rsplit(' ').next()).unwrap_or("");
            match self.a.private.get(ptr).is_some_and(|root| self.varies(root)) {
                true => {
                    let _ = writeln!(self.out, "  call void @{callee}(i64 -1, ptr {ptr})");
                }
                // A hint: left out for lanes' own addresses (a variable kept lane by lane).
                false if self.varies(ptr) => {}
                false => {
                    let _ = writeln!(self.out, "{c}");
                }
            }
            return Ok(());
        }
        if atomic_builtin(&callee) {
            let params: Vec<(IrType, String)> =
                args.iter().map(|a| typed(a).ok_or("unreadable argument")).collect::<Result<_, _>>()?;
            let ret = match d {
                Some(_) => {
                    let at = c.find("call ").ok_or("malformed call")? + 5;
                    let (ret, _) = ir_type::parse(skip_flags(&c[at..]).trim_start_matches("spir_func "))
                        .ok_or("unreadable call")?;
                    Some(ret)
                }
                None => None,
            };
            let ret_text = ret.as_ref().map_or("void".to_string(), |t| t.to_string());
            return self.lane_atomics(d, ret.as_ref(), &params, |ops| {
                format!("call {ret_text} @{callee}({})", ops.join(", "))
            });
        }
        let varying = args.iter().any(|a| typed(a).is_some_and(|(_, v)| self.varies(&v)));
        if !varying && !d.is_some_and(|d| self.varies(d)) {
            // The same call in every lane: once, if it has no effect but its result.
            if callee.starts_with("llvm.") && elementwise_intrinsic(&callee).is_some()
                || pure_builtin(&callee).is_some()
                || relational(&callee).is_some()
                || super::division::is_helper(&callee)
                || address
            {
                let _ = writeln!(self.out, "{c}");
                return Ok(());
            }
            return Err(format!("a call of {callee}"));
        }
        let Some(d) = d else { return Err(format!("a call of {callee} for its effects")) };
        let ret_start = c.find("call ").ok_or("malformed call")? + 5;
        let (ret, _) =
            ir_type::parse(skip_flags(&c[ret_start..]).trim_start_matches("spir_func ")).ok_or("unreadable call")?;
        let wide_ret = widened(&ret).ok_or("unsupported result")?;
        if let Some(test) = relational(&callee) {
            return self.relational(d, test, &args, &wide_ret);
        }
        if super::division::is_helper(&callee) {
            // The helper's shift for a power of two is the scalar code's: in lanes, the
            // division itself (its divisor already made safe, in every lane).
            let op = if callee.starts_with("__ferrocl_udiv_") { "udiv" } else { "urem" };
            let [(at, a), (_, b)] =
                [0, 1].map(|i| args.get(i).and_then(|a| typed(a)).unwrap_or((ret.clone(), "".into())));
            let (a, b) = (self.operand(&at, &a)?, self.operand(&at, &b)?);
            let _ = writeln!(self.out, "  {d} = {op} {wide_ret} {a}, {b}");
            return Ok(());
        }
        if callee.starts_with("llvm.") {
            let immargs = elementwise_intrinsic(&callee).ok_or_else(|| format!("intrinsic {callee}"))?;
            let (base, _) = callee.rsplit_once('.').ok_or("unreadable intrinsic")?;
            let name = format!("{base}.{}", suffix(&wide_ret)?);
            let mut new_args = Vec::new();
            let mut params = Vec::new();
            for (i, a) in args.iter().enumerate() {
                let (at, av) = typed(a).ok_or("unreadable argument")?;
                if immargs.contains(&i) {
                    new_args.push(format!("{at} {av}"));
                    params.push(at.to_string());
                } else {
                    let wt = widened(&at).ok_or("unsupported argument")?;
                    let v = self.operand(&at, &av)?;
                    new_args.push(format!("{wt} {v}"));
                    params.push(wt.to_string());
                }
            }
            let _ = writeln!(self.out, "  {d} = call {wide_ret} @{name}({})", new_args.join(", "));
            self.declarations.push(format!("declare {wide_ret} @{name}({})", params.join(", ")));
            return Ok(());
        }
        self.builtin(d, &callee, &args, &ret)
    }

    /// A work-group function (`group_function`) called with the same arguments in every
    /// lane: once per lane, the context stepped to each lane's work-item and back. Its
    /// result (an event) is the same in all.
    fn group_call(&mut self, d: Option<&str>, c: &str, callee: &str, args: &[&str]) -> Result<(), String> {
        let varying = |w: &Self, v: &str| w.a.private.get(v).map_or(w.varies(v), |root| w.varies(root));
        if args.iter().any(|a| typed(a).is_some_and(|(_, v)| varying(self, &v))) || d.is_some_and(|d| self.varies(d)) {
            return Err(format!("{callee} on values that differ between work-items"));
        }
        if self.lanes.is_some() {
            return Err(format!("{callee} where only some work-items may be"));
        }
        let ctx = args.last().and_then(|a| typed(a)).map(|(_, v)| v).ok_or("a work-group function without context")?;
        let call = c.trim_start();
        let call = d.map_or(call, |d| call.strip_prefix(&format!("{d} = ")).unwrap_or(call));
        for lane in 0..WIDTH {
            if lane > 0 {
                let _ = writeln!(self.out, "  call void @__ferrocl_ctx_lane(ptr {ctx}, i64 1)");
            }
            match d {
                Some(d) if lane + 1 == WIDTH => {
                    let _ = writeln!(self.out, "  {d} = {call}");
                }
                Some(d) => {
                    let r = self.name(d);
                    let _ = writeln!(self.out, "  {r} = {call}");
                }
                None => {
                    let _ = writeln!(self.out, "  {call}");
                }
            }
        }
        let _ = writeln!(self.out, "  call void @__ferrocl_ctx_lane(ptr {ctx}, i64 -{})", WIDTH - 1);
        self.declarations.push("declare void @__ferrocl_ctx_lane(ptr, i64)".into());
        Ok(())
    }

    /// Refuses a widened variable read or written as elements it does not hold (an
    /// `i32` stored over a `vec<bool, 4>` read back byte by byte): its lanes lie element
    /// by element, so the bytes of one lane's `i32` are not where its `i8`s are.
    fn same_elements(&self, root: &str, t: &IrType) -> Result<(), String> {
        let held = self.a.allocas.get(root).is_some_and(|ty| {
            let elements = element_types(ty);
            ty == t || element_types(t).iter().all(|e| elements.contains(e))
        });
        match held {
            true => Ok(()),
            false => Err(format!("a private variable read or written as {t}")),
        }
    }

    /// A collective's helper (`collectives`), or an address-space test of lanes' own
    /// pointers (`to_global`): called for each lane in turn, the context stepped to the
    /// lane's work-item, with the lane's arguments, its result put in the lane. They put or read the work-items' slots between the barriers of the
    /// collective, which the regions transform made region boundaries, so a region's
    /// chunk of lanes passes each of them as its work-items would one by one.
    fn lane_calls(&mut self, d: Option<&str>, c: &str, callee: &str, args: &[&str]) -> Result<(), String> {
        if self.lanes.is_some() {
            return Err(format!("{callee} where only some work-items may be"));
        }
        let ctx = args.last().and_then(|a| typed(a)).map(|(_, v)| v).ok_or("a collective without context")?;
        let ret = match d {
            Some(_) => {
                let at = c.find("call ").ok_or("malformed call")? + 5;
                let (ret, _) = ir_type::parse(skip_flags(&c[at..])).ok_or("unreadable call")?;
                Some(ret)
            }
            None => None,
        };
        if let Some(IrType::Vector(..)) = ret {
            return Err(format!("{callee} of vectors"));
        }
        let mut result = "poison".to_string();
        for lane in 0..WIDTH {
            if lane > 0 {
                let _ = writeln!(self.out, "  call void @__ferrocl_ctx_lane(ptr {ctx}, i64 1)");
            }
            let mut lane_args = Vec::new();
            for a in args {
                let (t, v) = typed(a).ok_or("unreadable argument")?;
                if !self.varies(&v) {
                    lane_args.push(format!("{t} {v}"));
                    continue;
                }
                if matches!(t, IrType::Vector(..)) {
                    return Err(format!("{callee} of vectors"));
                }
                let wide = widened(&t).ok_or("an argument of an unsupported type")?;
                let one = self.name(&v);
                let _ = writeln!(self.out, "  {one} = extractelement {wide} {v}, i64 {lane}");
                lane_args.push(format!("{t} {one}"));
            }
            let call = format!(
                "call {} @{callee}({})",
                ret.as_ref().map_or("void".into(), |t| t.to_string()),
                lane_args.join(", ")
            );
            match (d, &ret) {
                (Some(d), Some(t)) => {
                    let one = self.name(d);
                    let _ = writeln!(self.out, "  {one} = {call}");
                    let wide = widened(t).ok_or("a result of an unsupported type")?;
                    let next = if lane + 1 == WIDTH { d.to_string() } else { self.name(d) };
                    let _ = writeln!(self.out, "  {next} = insertelement {wide} {result}, {t} {one}, i64 {lane}");
                    result = next;
                }
                _ => {
                    let _ = writeln!(self.out, "  {call}");
                }
            }
        }
        let _ = writeln!(self.out, "  call void @__ferrocl_ctx_lane(ptr {ctx}, i64 -{})", WIDTH - 1);
        self.declarations.push("declare void @__ferrocl_ctx_lane(ptr, i64)".into());
        Ok(())
    }

    /// A varying aggregate variable copied from or to memory at each lane's own address
    /// (a region's frame slot): a gather or scatter of each scalar it is made of.
    fn leaf_copies(
        &mut self,
        ty: &IrType,
        variable: &str,
        memory: &str,
        pointer: &IrType,
        into: bool,
    ) -> Result<(), String> {
        let mut leaves = Vec::new();
        aggregate_leaves(ty, &mut Vec::new(), &mut leaves)?;
        let wide_ty = widened(ty).ok_or("unsupported private variable")?;
        for (path, leaf) in leaves {
            let (kind, at, var) =
                (if into { "gather" } else { "scatter" }, self.name("%leaf.at"), self.name("%leaf.var"));
            let (_, ptrs, ones, _) = scattered(kind, &leaf, pointer, "align 1")?;
            let mask = self.lanes.clone().unwrap_or(ones);
            let wide_leaf = widened(&leaf).ok_or("unsupported private variable")?;
            let _ = writeln!(self.out, "  {at} = getelementptr inbounds {ty}, {ptrs} {memory}, i64 0{path}");
            let _ = writeln!(self.out, "  {var} = getelementptr inbounds {wide_ty}, ptr {variable}, i64 0{path}");
            let value = self.name("%leaf");
            match into {
                true => {
                    self.load_lanes(&value, &leaf, pointer, &at, "align 1", Some(mask.clone()))?;
                    let mut kept = value;
                    if self.lanes.is_some() {
                        let (old, new) = (self.name("%old"), self.name("%kept"));
                        let _ = writeln!(self.out, "  {old} = load {wide_leaf}, ptr {var}, align 4");
                        let _ = writeln!(
                            self.out,
                            "  {new} = select <{WIDTH} x i1> {mask}, {wide_leaf} {kept}, {wide_leaf} {old}"
                        );
                        kept = new;
                    }
                    let _ = writeln!(self.out, "  store {wide_leaf} {kept}, ptr {var}, align 4");
                }
                false => {
                    let _ = writeln!(self.out, "  {value} = load {wide_leaf}, ptr {var}, align 4");
                    self.store_lanes(&value, &leaf, pointer, &at, "align 1", Some(mask.clone()))?;
                }
            }
        }
        Ok(())
    }

    /// `atomicrmw`: the lanes' operations one after another, as the work-items' would be.
    fn atomicrmw(&mut self, d: &str, rest: &str) -> Result<(), String> {
        let (volatile, rest) = match rest.strip_prefix("volatile ") {
            Some(r) => ("volatile ", r),
            None => ("", rest),
        };
        let (op, rest) = rest.split_once(' ').ok_or("unreadable atomicrmw")?;
        let parts = split_top(rest);
        let [pointer, value, align] = parts[..] else { return Err("unreadable atomicrmw".into()) };
        let pointer = typed(pointer).ok_or("unreadable atomicrmw")?;
        let (t, after) = ir_type::parse(value).ok_or("unreadable atomicrmw")?;
        let (v, ordering) = after.trim().split_once(' ').ok_or("unreadable atomicrmw")?;
        let (ordering, align) = (ordering.to_string(), align.trim().to_string());
        let operands = [pointer, (t.clone(), v.to_string())];
        self.lane_atomics(Some(d), Some(&t), &operands, |ops| {
            format!("atomicrmw {volatile}{op} {}, {} {ordering}, {align}", ops[0], ops[1])
        })
    }

    /// An atomic operation (`op` writes it from its operands) once a lane in lane
    /// order, its results put together. A lane not in the block points at a variable
    /// of the copy's own, so that no branch splits the block.
    fn lane_atomics(
        &mut self,
        d: Option<&str>,
        ret: Option<&IrType>,
        operands: &[(IrType, String)],
        op: impl Fn(&[String]) -> String,
    ) -> Result<(), String> {
        if operands.iter().any(|(t, _)| matches!(t, IrType::Vector(..))) {
            return Err("an atomic operation on vectors".into());
        }
        if operands.iter().any(|(_, v)| self.a.private.contains_key(v) || self.a.lane_pointers.contains(v)) {
            return Err("an atomic operation on a private variable".into());
        }
        let mut result = "poison".to_string();
        for lane in 0..WIDTH {
            let bit = match self.lanes.clone() {
                Some(m) => {
                    let bit = self.name("%in");
                    let _ = writeln!(self.out, "  {bit} = extractelement <{WIDTH} x i1> {m}, i64 {lane}");
                    Some(bit)
                }
                None => None,
            };
            let mut ops = Vec::new();
            for (t, v) in operands {
                let mut one = v.clone();
                if self.varies(v) {
                    let wide = widened(t).ok_or("an operand of an unsupported type")?;
                    one = self.name(v);
                    let _ = writeln!(self.out, "  {one} = extractelement {wide} {v}, i64 {lane}");
                }
                if let (IrType::Ptr(space), Some(bit)) = (t, &bit) {
                    let dummy = match space {
                        0 => "%simd.dummy".to_string(),
                        _ => {
                            let cast = self.name("%dummy");
                            let _ = writeln!(self.out, "  {cast} = addrspacecast ptr %simd.dummy to {t}");
                            cast
                        }
                    };
                    let kept = self.name("%at");
                    let _ = writeln!(self.out, "  {kept} = select i1 {bit}, {t} {one}, {t} {dummy}");
                    one = kept;
                    self.dummy = true;
                }
                ops.push(format!("{t} {one}"));
            }
            match (d, ret) {
                (Some(d), Some(t)) => {
                    let one = self.name(d);
                    let _ = writeln!(self.out, "  {one} = {}", op(&ops));
                    let wide = widened(t).ok_or("a result of an unsupported type")?;
                    let next = if lane + 1 == WIDTH { d.to_string() } else { self.name(d) };
                    let _ = writeln!(self.out, "  {next} = insertelement {wide} {result}, {t} {one}, i64 {lane}");
                    result = next;
                }
                _ => {
                    let _ = writeln!(self.out, "  {}", op(&ops));
                }
            }
        }
        Ok(())
    }

    /// A scalar relational builtin (`isnan(x)`, `isless(x, y)`) on varying operands,
    /// written out: its vector overload answers -1 where the scalar one answers 1.
    fn relational(&mut self, d: &str, test: Relational, args: &[&str], wide_ret: &IrType) -> Result<(), String> {
        let params: Vec<(IrType, String)> =
            args.iter().map(|a| typed(a).ok_or("unreadable argument")).collect::<Result<_, _>>()?;
        let t = &params.first().ok_or("a relational builtin without operands")?.0;
        let wide = widened(t).ok_or("an operand of an unsupported type")?;
        let ops: Vec<String> = params.iter().map(|(t, v)| self.operand(t, v)).collect::<Result<_, _>>()?;
        let bit = self.name("%test");
        let abs = |w: &mut Self| -> Result<String, String> {
            let (a, name) = (w.name("%abs"), format!("llvm.fabs.{}", suffix(&wide)?));
            let _ = writeln!(w.out, "  {a} = call {wide} @{name}({wide} {})", ops[0]);
            w.declarations.push(format!("declare {wide} @{name}({wide})"));
            Ok(a)
        };
        match test {
            Relational::Compare(pred) if ops.len() == 2 => {
                let _ = writeln!(self.out, "  {bit} = fcmp {pred} {wide} {}, {}", ops[0], ops[1]);
            }
            Relational::Compare(pred) if ops.len() == 1 => {
                let _ = writeln!(self.out, "  {bit} = fcmp {pred} {wide} {0}, {0}", ops[0]);
            }
            Relational::Infinite(pred) => {
                let a = abs(self)?;
                // LLVM writes a half's infinity in its own bits, a float's as a double's.
                let inf = if matches!(t, IrType::Half) { "0xH7C00" } else { "0x7FF0000000000000" };
                let inf = widened_constant(t, inf).ok_or("unsupported operand")?;
                let _ = writeln!(self.out, "  {bit} = fcmp {pred} {wide} {a}, {inf}");
            }
            Relational::SignBit => {
                let bits = match t {
                    IrType::Half => 16,
                    IrType::Float => 32,
                    _ => 64,
                };
                let (i, ty) = (self.name("%bits"), format!("<{WIDTH} x i{bits}>"));
                let _ = writeln!(self.out, "  {i} = bitcast {wide} {} to {ty}", ops[0]);
                let _ = writeln!(self.out, "  {bit} = icmp slt {ty} {i}, zeroinitializer");
            }
            Relational::Compare(_) => return Err("a relational builtin of this arity".into()),
        }
        let _ = writeln!(self.out, "  {d} = zext <{WIDTH} x i1> {bit} to {wide_ret}");
        Ok(())
    }

    /// A memory copy whose addresses or length differ by lane: one copy a lane, of no
    /// bytes for the lanes not in the block (no branch, so the block stays one).
    fn lane_copies(&mut self, callee: &str, args: &[&str]) -> Result<(), String> {
        // The value is the last word (after `align 8` and other attributes).
        let params: Vec<(IrType, String)> = args
            .iter()
            .map(|a| {
                typed(a).zip(a.rsplit(' ').next()).map(|((t, _), v)| (t, v.to_string())).ok_or("unreadable argument")
            })
            .collect::<Result<_, _>>()?;
        for lane in 0..WIDTH {
            let mut lane_args = Vec::new();
            for (i, (t, v)) in params.iter().enumerate() {
                let mut one = v.clone();
                if self.varies(v) {
                    let wide = widened(t).ok_or("an argument of an unsupported type")?;
                    one = self.name(v);
                    let _ = writeln!(self.out, "  {one} = extractelement {wide} {v}, i64 {lane}");
                }
                if let (2, Some(m)) = (i, self.lanes.clone()) {
                    let (bit, n) = (self.name("%in"), self.name("%len"));
                    let _ = writeln!(self.out, "  {bit} = extractelement <{WIDTH} x i1> {m}, i64 {lane}");
                    let _ = writeln!(self.out, "  {n} = select i1 {bit}, {t} {one}, {t} 0");
                    one = n;
                }
                lane_args.push(format!("{t} {one}"));
            }
            let _ = writeln!(self.out, "  call void @{callee}({})", lane_args.join(", "));
        }
        Ok(())
    }

    /// A call of an element-by-element builtin of the library on varying arguments: the
    /// overload on vectors as wide as the library takes by value, once per chunk of
    /// lanes, the chunks' results put together.
    fn builtin(&mut self, d: &str, callee: &str, args: &[&str], ret: &IrType) -> Result<(), String> {
        let name = pure_builtin(callee).ok_or_else(|| format!("a call of {callee}"))?;
        let params: Vec<(IrType, String)> =
            args.iter().map(|a| typed(a).ok_or("unreadable argument")).collect::<Result<_, _>>()?;
        let codes = scalar_codes(callee, name).ok_or_else(|| format!("builtin {callee} on these types"))?;
        if codes.len() != params.len() || params.iter().any(|(t, _)| matches!(t, IrType::Vector(..) | IrType::Ptr(_))) {
            return Err(format!("builtin {callee} on these types"));
        }
        let bytes = params
            .iter()
            .chain(std::iter::once(&(ret.clone(), String::new())))
            .filter_map(|(t, _)| t.layout(&HashMap::new()))
            .map(|(s, _)| s)
            .max()
            .unwrap_or(4);
        let lanes = (CALL_BYTES / bytes).clamp(1, WIDTH);
        let chunks = WIDTH / lanes;
        // The overload called: at least 16 bytes wide. Narrower vectors are not passed as
        // themselves on this target (clang coerces a `char8` to a double), and a call
        // with the vector type was undefined behaviour, which LLVM turned into an
        // endless loop (dpnp's `abs` of int8 hung) or dropped stores.
        let call_lanes = lanes.max(MIN_CALL_BYTES.div_ceil(bytes));
        let wide: Vec<String> = params.iter().map(|(t, v)| self.operand(t, v)).collect::<Result<_, _>>()?;
        let chunk_ty = |t: &IrType| IrType::Vector(lanes, Box::new(t.clone()));
        let call_ty = |t: &IrType| IrType::Vector(call_lanes, Box::new(t.clone()));
        let elements: Vec<Ty> = codes.iter().map(|c| Ty::Builtin(c.as_str())).collect();
        let vectors: Vec<Ty> = elements.iter().map(|e| Ty::Vector(call_lanes as u32, e)).collect();
        let mangled = mangle::function(name, &vectors);
        let mut parts = Vec::new();
        for ch in 0..chunks {
            let mut call_args = Vec::new();
            for ((t, _), w) in params.iter().zip(&wide) {
                let wt = widened(t).ok_or("unsupported argument")?;
                let ct = chunk_ty(t);
                let mut piece = if chunks == 1 {
                    w.clone()
                } else {
                    let p = self.name(d);
                    let mask: Vec<String> = (0..lanes).map(|k| format!("i32 {}", ch * lanes + k)).collect();
                    let _ = writeln!(
                        self.out,
                        "  {p} = shufflevector {wt} {w}, {wt} poison, <{lanes} x i32> <{}>",
                        mask.join(", ")
                    );
                    p
                };
                if call_lanes > lanes {
                    // Padded with zeros (defined values: the parameters are noundef).
                    let p = self.name(d);
                    let mask: Vec<String> = (0..call_lanes).map(|k| format!("i32 {}", k.min(lanes))).collect();
                    let _ = writeln!(
                        self.out,
                        "  {p} = shufflevector {ct} {piece}, {ct} zeroinitializer, <{call_lanes} x i32> <{}>",
                        mask.join(", ")
                    );
                    piece = p;
                }
                call_args.push(format!("{} noundef {piece}", call_ty(t)));
            }
            let r = if chunks == 1 && call_lanes == lanes { d.to_string() } else { self.name(d) };
            let rt = call_ty(ret);
            let _ = writeln!(self.out, "  {r} = call spir_func {rt} @{mangled}({})", call_args.join(", "));
            let param_tys: Vec<String> = params.iter().map(|(t, _)| call_ty(t).to_string()).collect();
            self.declarations.push(format!("declare spir_func {rt} @{mangled}({})", param_tys.join(", ")));
            if call_lanes > lanes {
                // The lanes asked for, out of the padded result.
                let j = if chunks == 1 { d.to_string() } else { self.name(d) };
                let mask: Vec<String> = (0..lanes).map(|k| format!("i32 {k}")).collect();
                let _ = writeln!(
                    self.out,
                    "  {j} = shufflevector {rt} {r}, {rt} poison, <{lanes} x i32> <{}>",
                    mask.join(", ")
                );
                parts.push(j);
            } else {
                parts.push(r);
            }
        }
        // Halves, then quarters, joined pairwise.
        while parts.len() > 1 {
            let width = WIDTH / parts.len() as u64;
            let t = IrType::Vector(width, Box::new(ret.clone()));
            let mut joined = Vec::new();
            for pair in parts.chunks(2) {
                let j = if parts.len() == 2 { d.to_string() } else { self.name(d) };
                let mask: Vec<String> = (0..2 * width).map(|i| format!("i32 {i}")).collect();
                let _ = writeln!(
                    self.out,
                    "  {j} = shufflevector {t} {}, {t} {}, <{} x i32> <{}>",
                    pair[0],
                    pair[1],
                    2 * width,
                    mask.join(", ")
                );
                joined.push(j);
            }
            parts = joined;
        }
        Ok(())
    }
}

/// A mask of every lane.
fn all_lanes() -> String {
    format!("<{}>", vec!["i1 true"; WIDTH as usize].join(", "))
}

/// Elements from one lane's vector to the next in memory (4 for a `float3`, as for a
/// `float4`).
fn memory_stride(t: &IrType, element: &IrType) -> Result<u64, String> {
    let size = |x: &IrType| x.layout(&HashMap::new()).map(|(s, _)| s).ok_or("a value of unknown size");
    Ok(size(t)? / size(element)?)
}

/// For a gather or scatter of scalars of type `t` through pointers of type `pointer`:
/// the intrinsic's name, the pointers' widened type, an all-lanes mask and the alignment.
fn scattered(
    kind: &str,
    t: &IrType,
    pointer: &IrType,
    align: &str,
) -> Result<(String, IrType, String, String), String> {
    if components(t).0 != 1 {
        return Err(format!("a {kind} of vectors"));
    }
    let IrType::Ptr(space) = pointer else { return Err("memory through a non-pointer".into()) };
    let name = format!("llvm.masked.{kind}.v{WIDTH}{}.v{WIDTH}p{space}", suffix(t)?);
    let ptrs = widened(pointer).ok_or("unsupported pointer")?;
    Ok((name, ptrs, all_lanes(), align.trim_start_matches("align ").trim().to_string()))
}

/// An overloaded intrinsic's name suffix for a type (`f32`, `v8f32`, `v8i32`).
fn suffix(t: &IrType) -> Result<String, String> {
    Ok(match t {
        IrType::Int(bits) => format!("i{bits}"),
        IrType::Half => "f16".into(),
        IrType::Float => "f32".into(),
        IrType::Double => "f64".into(),
        IrType::Ptr(space) => format!("p{space}"),
        IrType::Vector(n, e) => format!("v{n}{}", suffix(e)?),
        other => return Err(format!("no intrinsic suffix for {other}")),
    })
}

/// For an LLVM intrinsic that works element by element on its one overloaded type,
/// the positions of its arguments that must stay constants (`immarg`).
fn elementwise_intrinsic(callee: &str) -> Option<Vec<usize>> {
    let (base, last) = callee.rsplit_once('.')?;
    if !last.starts_with(['f', 'i', 'v']) || !last[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    const PLAIN: &[&str] = &[
        "fmuladd",
        "fma",
        "fabs",
        "sqrt",
        "floor",
        "ceil",
        "trunc",
        "rint",
        "nearbyint",
        "round",
        "roundeven",
        "copysign",
        "minnum",
        "maxnum",
        "minimum",
        "maximum",
        "exp",
        "exp2",
        "log",
        "log2",
        "log10",
        "sin",
        "cos",
        "pow",
        "ctpop",
        "bitreverse",
        "bswap",
        "smax",
        "smin",
        "umax",
        "umin",
        "fshl",
        "fshr",
        "sadd.sat",
        "uadd.sat",
        "ssub.sat",
        "usub.sat",
    ];
    let name = base.strip_prefix("llvm.")?;
    if PLAIN.contains(&name) {
        return Some(Vec::new());
    }
    matches!(name, "abs" | "ctlz" | "cttz").then(|| vec![1])
}

/// The OpenCL name of a library builtin that works element by element with no effect
/// but its result, its vector overloads computing each lane as the scalar one does.
/// Not the relational functions (a vector's true is -1, a scalar's 1), nor `select`.
pub(crate) fn pure_builtin(callee: &str) -> Option<&str> {
    const ELEMENTWISE: &[&str] = &[
        "acos",
        "acosh",
        "acospi",
        "asin",
        "asinh",
        "asinpi",
        "atan",
        "atan2",
        "atanh",
        "atanpi",
        "atan2pi",
        "cbrt",
        "ceil",
        "copysign",
        "cos",
        "cosh",
        "cospi",
        "erfc",
        "erf",
        "exp",
        "exp2",
        "exp10",
        "expm1",
        "fabs",
        "fdim",
        "floor",
        "fma",
        "fmax",
        "fmin",
        "fmod",
        "hypot",
        "ilogb",
        "ldexp",
        "lgamma",
        "log",
        "log2",
        "log10",
        "log1p",
        "logb",
        "mad",
        "maxmag",
        "minmag",
        "nextafter",
        "pow",
        "pown",
        "powr",
        "remainder",
        "rint",
        "rootn",
        "round",
        "rsqrt",
        "sin",
        "sinh",
        "sinpi",
        "sqrt",
        "tan",
        "tanh",
        "tanpi",
        "tgamma",
        "trunc",
        "recip",
        "divide",
        "clamp",
        "degrees",
        "max",
        "min",
        "mix",
        "radians",
        "step",
        "smoothstep",
        "sign",
        "abs",
        "abs_diff",
        "add_sat",
        "hadd",
        "rhadd",
        "clz",
        "ctz",
        "mad_hi",
        "mad_sat",
        "mul_hi",
        "rotate",
        "sub_sat",
        "popcount",
        "mad24",
        "mul24",
    ];
    let name = mangle::opencl_name(callee)?;
    let base = name.strip_prefix("native_").or_else(|| name.strip_prefix("half_")).unwrap_or(name);
    ELEMENTWISE.contains(&base).then_some(name)
}

/// The library's atomic functions (OpenCL C's `atomic_*` and `atom_*`, the
/// floating-point helpers): run a lane at a time, whatever their operands.
fn atomic_builtin(callee: &str) -> bool {
    mangle::opencl_name(callee)
        .is_some_and(|n| n.starts_with("atomic_") || n.starts_with("atom_") || n.starts_with("__ferrocl_fp_fetch_"))
}

/// How a relational builtin tests its floating-point operands.
#[derive(Clone, Copy)]
enum Relational {
    /// `fcmp` of the operands (one operand: with itself).
    Compare(&'static str),
    /// `fcmp` of the magnitude with infinity.
    Infinite(&'static str),
    SignBit,
}

/// A scalar relational builtin of floating-point operands (`_Z5isnand`), and its test.
fn relational(callee: &str) -> Option<Relational> {
    let name = mangle::opencl_name(callee)?;
    let test = match name {
        "isnan" | "isunordered" => Relational::Compare("uno"),
        "isordered" => Relational::Compare("ord"),
        "isequal" => Relational::Compare("oeq"),
        "isnotequal" => Relational::Compare("une"),
        "isgreater" => Relational::Compare("ogt"),
        "isgreaterequal" => Relational::Compare("oge"),
        "isless" => Relational::Compare("olt"),
        "islessequal" => Relational::Compare("ole"),
        "islessgreater" => Relational::Compare("one"),
        "isinf" => Relational::Infinite("oeq"),
        "isfinite" => Relational::Infinite("one"),
        "signbit" => Relational::SignBit,
        _ => return None,
    };
    let codes = scalar_codes(callee, name)?;
    let arity = if matches!(name, "isnan" | "isinf" | "isfinite" | "signbit") { 1 } else { 2 };
    (codes.len() == arity && codes.iter().all(|c| matches!(c.as_str(), "f" | "d" | "Dh"))).then_some(test)
}

/// The builtin type codes of a mangled builtin's parameters (`_Z4fminff` -> `f`, `f`),
/// where every parameter is a scalar of a builtin type.
fn scalar_codes(callee: &str, name: &str) -> Option<Vec<String>> {
    let mut rest = callee.strip_prefix(&format!("_Z{}{name}", name.len()))?;
    let mut codes = Vec::new();
    while !rest.is_empty() {
        let n = if rest.starts_with("Dh") { 2 } else { 1 };
        let code = &rest[..n];
        if !matches!(code, "f" | "d" | "Dh" | "c" | "a" | "h" | "s" | "t" | "i" | "j" | "l" | "m") {
            return None;
        }
        codes.push(code.to_string());
        rest = &rest[n..];
    }
    Some(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clang's unoptimised IR of `acc = acc * x + coef[j]` over `j < n`, `x = in[i]`,
    /// `out[i] = acc`, `i = get_global_id(0)`, after the context rewrite.
    const UNIFORM_LOOP: &str = "define internal spir_func void @k(ptr noundef align 4 %0, ptr noundef align 4 %1, ptr noundef align 4 %2, i32 noundef %3, ptr %ctx) #0 {
  %5 = alloca ptr, align 8
  %6 = alloca ptr, align 8
  %7 = alloca ptr, align 8
  %8 = alloca i32, align 4
  %9 = alloca i64, align 8
  %10 = alloca float, align 4
  %11 = alloca float, align 4
  %12 = alloca i32, align 4
  store ptr %0, ptr %5, align 8, !tbaa !10
  store ptr %1, ptr %6, align 8, !tbaa !10
  store ptr %2, ptr %7, align 8, !tbaa !10
  store i32 %3, ptr %8, align 4, !tbaa !14
  call void @llvm.lifetime.start.p0(i64 8, ptr %9) #4
  %13 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  store i64 %13, ptr %9, align 8, !tbaa !16
  %14 = load ptr, ptr %5, align 8, !tbaa !10
  %15 = load i64, ptr %9, align 8, !tbaa !16
  %16 = getelementptr inbounds float, ptr %14, i64 %15
  %17 = load float, ptr %16, align 4, !tbaa !18
  store float %17, ptr %10, align 4, !tbaa !18
  store float 0.000000e+00, ptr %11, align 4, !tbaa !18
  store i32 0, ptr %12, align 4, !tbaa !14
  br label %18

18:
  %19 = load i32, ptr %12, align 4, !tbaa !14
  %20 = load i32, ptr %8, align 4, !tbaa !14
  %21 = icmp slt i32 %19, %20
  br i1 %21, label %23, label %22

22:
  br label %35

23:
  %24 = load float, ptr %11, align 4, !tbaa !18
  %25 = load float, ptr %10, align 4, !tbaa !18
  %26 = load ptr, ptr %7, align 8, !tbaa !10
  %27 = load i32, ptr %12, align 4, !tbaa !14
  %28 = sext i32 %27 to i64
  %29 = getelementptr inbounds float, ptr %26, i64 %28
  %30 = load float, ptr %29, align 4, !tbaa !18
  %31 = call float @llvm.fmuladd.f32(float %24, float %25, float %30)
  store float %31, ptr %11, align 4, !tbaa !18
  %33 = load i32, ptr %12, align 4, !tbaa !14
  %34 = add nsw i32 %33, 1
  store i32 %34, ptr %12, align 4, !tbaa !14
  br label %18

35:
  %36 = load float, ptr %11, align 4, !tbaa !18
  %37 = load ptr, ptr %6, align 8, !tbaa !10
  %38 = load i64, ptr %9, align 8, !tbaa !16
  %39 = getelementptr inbounds float, ptr %37, i64 %38
  store float %36, ptr %39, align 4, !tbaa !18
  ret void";

    fn split(text: &str) -> (String, Vec<String>) {
        let mut lines = text.lines().map(str::to_string);
        let define = lines.next().unwrap();
        (define, lines.collect())
    }

    #[test]
    fn a_uniform_loop_runs_in_lanes() {
        let (define, body) = split(UNIFORM_LOOP);
        let simd = vectorize(&define, &body, "k").unwrap();
        let t = &simd.text;
        assert!(t.starts_with("define internal spir_func void @k.simd(ptr noundef"), "{t}");
        // The id and the variables holding per-lane values are vectors ...
        assert!(t.contains("%v9 = alloca <8 x i64>") && t.contains("%v11 = alloca <8 x float>"), "{t}");
        assert!(t.contains("%v13 = add <8 x i64> %simd."), "{t}");
        // ... the loop counter and its bound are not, and the loop branches as before.
        assert!(t.contains("%v12 = alloca i32, align 4") && t.contains("br i1 %v21, label %v23, label %v22"), "{t}");
        // in[i] is one vector load from lane 0's address; coef[j] one scalar load for all.
        assert!(t.contains("%v17 = load <8 x float>, ptr %simd.16."), "{t}");
        assert!(t.contains("%v30 = load float, ptr %v29, align 4"), "{t}");
        assert!(
            t.contains(
                "%v31 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %v24, <8 x float> %v25, <8 x float> %simd.30."
            ),
            "{t}"
        );
        assert!(t.contains("store <8 x float> %v36, ptr %simd.39."), "{t}");
        assert_eq!(
            simd.declarations,
            ["declare <8 x float> @llvm.fmuladd.v8f32(<8 x float>, <8 x float>, <8 x float>)"]
        );
    }

    #[test]
    fn lanes_that_part_ways_run_masked() {
        let (define, body) = split(UNIFORM_LOOP);
        // The loop bound from the lane's own id: the lanes leave at different
        // iterations.
        let body: Vec<String> = body
            .iter()
            .map(|l| l.replace("%20 = load i32, ptr %8, align 4, !tbaa !14", "%20 = trunc i64 %13 to i32"))
            .collect();
        let why = vectorize_with(&define, &body, "k", false).unwrap_err();
        assert_eq!(why, "a branch on a varying value");
        let t = vectorize_with(&define, &body, "k", true).unwrap().text;
        // Masked: each block takes the lanes that reached it (clearing them for the
        // next time round; a loop's blocks keep them as bits), and runs for all lanes
        // or for some.
        let head = "v23:\n  %simd.m.23.in.bits = load i8, ptr %simd.m.23, align 1\n  \
                    %simd.m.23.in = bitcast i8 %simd.m.23.in.bits to <8 x i1>\n  store i8 zeroinitializer";
        assert!(t.contains(head), "{t}");
        assert!(t.contains("%simd.23.full = icmp eq i8 %simd.m.23.in.bits, -1"), "{t}");
        assert!(t.contains("br i1 %simd.23.full, label %simd.23.all, label %simd.23.some"), "{t}");
        // The loop's test adds lanes to the body's mask and the exit's, as bits.
        assert!(t.contains("%simd.on.bits.") && t.contains("store i8 %simd.now."), "{t}");
        // The loop goes round while any lane is headed for its header ...
        assert!(t.contains("br i1 %simd.23.again0, label %v18, label %simd.23.after0"), "{t}");
        // ... and where only some are in it, the others keep their sums.
        assert!(t.contains("select <8 x i1> %simd.m.23.in, <8 x float> %v31.s, <8 x float> %simd.old."), "{t}");
    }

    #[test]
    fn optimised_code_whose_phis_name_the_entry_block() {
        // SYCL's SPIR-V is optimised: a loop's phi comes from the implicit entry (%2).
        let (define, body) = split(
            "define internal spir_func void @k(ptr noundef align 4 %0, i32 noundef %1, ptr %ctx) #0 {
  %3 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %4 = getelementptr inbounds float, ptr %0, i64 %3
  br label %5

5:
  %6 = phi i32 [ 0, %2 ], [ %8, %5 ]
  %7 = phi float [ 0.000000e+00, %2 ], [ %9, %5 ]
  %8 = add nuw nsw i32 %6, 1
  %9 = fadd float %7, 1.000000e+00
  %10 = icmp slt i32 %8, %1
  br i1 %10, label %5, label %11

11:
  store float %9, ptr %4, align 4
  ret void
}",
        );
        for masked in [false, true] {
            let t = vectorize_with(&define, &body, "k", masked).unwrap().text;
            assert!(t.contains("\nv2:\n"), "the entry is named: {t}");
            assert!(t.contains("[ 0, %v2 ]"), "{t}");
        }
    }

    #[test]
    fn private_structures_widen_field_by_field_and_collectives_run_lane_by_lane() {
        // SYCL keeps a work-item's registers in a structure: `s.data[1] = x`, then the
        // sub-group's put of `s.data[1]` and its read of lane 0.
        let (define, body) = split(
            "define internal spir_func void @k(ptr noundef align 4 %0, ptr %ctx) #0 {
  %3 = alloca { i8, [2 x float] }, align 4
  %4 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %5 = getelementptr inbounds float, ptr %0, i64 %4
  %6 = load float, ptr %5, align 4
  %7 = getelementptr inbounds { i8, [2 x float] }, ptr %3, i64 0, i32 1, i64 1
  store float %6, ptr %7, align 4
  %8 = load float, ptr %7, align 4
  call void @__ferrocl_sg_put_f(float %8, ptr %ctx)
  %9 = call float @__ferrocl_sg_broadcast_f(i32 0, ptr %ctx)
  store float %9, ptr %5, align 4
  ret void
}",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        // The copy for one chunk (a copy for several follows).
        let t = &t[..t.find("\n}\n").unwrap()];
        assert!(t.contains("alloca { <8 x i8>, [2 x <8 x float>] }"), "{t}");
        assert!(
            t.contains("getelementptr inbounds { <8 x i8>, [2 x <8 x float>] }, ptr %v3, i64 0, i32 1, i64 1"),
            "{t}"
        );
        assert_eq!(t.matches("call void @__ferrocl_sg_put_f(float %simd.").count(), WIDTH as usize, "{t}");
        // The result differs per work-item in general (a scan): each lane's own.
        assert_eq!(t.matches("@__ferrocl_sg_broadcast_f(i32 0, ptr %ctx)").count(), WIDTH as usize, "{t}");
        assert!(t.contains("call void @__ferrocl_ctx_lane(ptr %ctx, i64 -7)"), "{t}");
    }

    #[test]
    fn a_private_array_indexed_by_lane_is_gathered_and_scattered() {
        // float a[4]; a[i & 3] = in[i]; out[i] = a[(i + 1) & 3], with the array's address
        // kept in a reg2mem slot on the way.
        let (define, body) = split(
            "define internal spir_func void @k(ptr noundef align 4 %0, ptr %ctx) #0 {
  %3 = alloca [4 x float], align 4
  %s = alloca ptr, align 8
  store ptr %3, ptr %s, align 8
  %4 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %5 = getelementptr inbounds float, ptr %0, i64 %4
  %6 = load float, ptr %5, align 4
  %7 = and i64 %4, 3
  %r = load ptr, ptr %s, align 8
  %8 = getelementptr inbounds [4 x float], ptr %r, i64 0, i64 %7
  store float %6, ptr %8, align 4
  %9 = add i64 %4, 1
  %10 = and i64 %9, 3
  %11 = getelementptr inbounds [4 x float], ptr %3, i64 0, i64 %10
  %12 = load float, ptr %11, align 4
  store float %12, ptr %5, align 4
  ret void
}",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        let lanes = "<8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>";
        assert!(
            t.contains(&format!("getelementptr inbounds [4 x <8 x float>], ptr %r, i64 0, <8 x i64> %v7, {lanes}")),
            "{t}"
        );
        assert!(t.contains("store ptr %v3, ptr %s"), "the slot keeps the variable's address: {t}");
        assert!(t.contains("@llvm.masked.scatter") && t.contains("@llvm.masked.gather"), "{t}");
    }

    #[test]
    fn a_variable_read_as_other_elements_is_kept_lane_by_lane_and_shared_aggregates_broadcast() {
        // SYCL's `vec<bool, 4>`: an i32 stored over four bytes read back one by one.
        let text = "define internal spir_func void @k(ptr noundef align 4 %0, ptr %ctx) #0 {
  %3 = alloca [4 x i8], align 4
  %4 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %5 = trunc i64 %4 to i32
  STORE
  %6 = getelementptr inbounds i8, ptr %3, i64 1
  %7 = load i8, ptr %6, align 1
  %8 = getelementptr inbounds i8, ptr %0, i64 %4
  store i8 %7, ptr %8, align 1
  ret void
}";
        let (define, body) = split(&text.replace("STORE", "store i32 %5, ptr %3, align 4"));
        let t = vectorize(&define, &body, "k").unwrap().text;
        let t = &t[..t.find("\n}\n").unwrap()];
        // Each lane's four bytes together: the i32 scattered to the lanes' copies, a
        // byte of each gathered back.
        assert!(t.contains("= alloca [8 x [4 x i8]], align 16"), "{t}");
        assert!(t.contains("getelementptr inbounds [8 x [4 x i8]], ptr"), "{t}");
        assert!(t.contains("@llvm.masked.scatter.v8i32.v8p0(<8 x i32>"), "{t}");
        assert!(t.contains("call <8 x i8> @llvm.masked.gather.v8i8.v8p0("), "{t}");
        // A zeroed aggregate from a constant (SYCL's `vec` initialiser): each byte broadcast.
        let copy = "call void @llvm.memcpy.p0.p0.i64(ptr align 4 %3, ptr align 4 @zero, i64 4, i1 false)
  %s = getelementptr inbounds i8, ptr %3, i64 2
  %t = trunc i32 %5 to i8
  store i8 %t, ptr %s, align 1";
        let (define, body) = split(&text.replace("STORE", copy));
        let t = vectorize(&define, &body, "k").unwrap().text;
        let t = &t[..t.find("\n}\n").unwrap()];
        assert_eq!(t.matches("getelementptr inbounds [4 x i8], ptr @zero, i64 0, i64").count(), 4, "{t}");
        assert!(t.contains("store <8 x i8> "), "{t}");
    }

    #[test]
    fn a_short_side_of_an_if_that_only_computes_runs_for_every_lane() {
        // y = in[i]; if (y > 0.5f) y = y * y; else y = *out; out[i] = y;
        let (define, body) = split(
            "define internal spir_func void @k(ptr noundef align 4 %0, ptr noundef align 4 %1, ptr %ctx) #0 {
  %3 = alloca float, align 4
  %4 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %5 = getelementptr inbounds float, ptr %0, i64 %4
  %6 = load float, ptr %5, align 4
  store float %6, ptr %3, align 4
  %7 = fcmp ogt float %6, 5.000000e-01
  br i1 %7, label %8, label %11

8:
  %9 = load float, ptr %3, align 4
  %10 = fmul float %9, %9
  store float %10, ptr %3, align 4
  br label %13

11:
  %12 = load float, ptr %1, align 4
  store float %12, ptr %3, align 4
  br label %13

13:
  %14 = load float, ptr %3, align 4
  %15 = getelementptr inbounds float, ptr %1, i64 %4
  store float %14, ptr %15, align 4
  ret void",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        // The square runs unconditionally, kept for the lanes that took it ...
        assert!(t.contains("br label %simd.8.some") && !t.contains("%simd.8.any"), "{t}");
        assert!(t.contains("select <8 x i1> %simd.m.8.in, <8 x float> %v10.s"), "{t}");
        // ... the read of memory only where a lane took its side.
        assert!(t.contains("br i1 %simd.11.any, label %simd.11.go, label %simd.11.next"), "{t}");
    }

    #[test]
    fn a_return_no_lane_reached_is_not_run() {
        // A region function: lanes with i > n stop at barrier 1; the others may store,
        // then end the kernel (0). The walk passes the `ret i32 0` block with no lane in
        // it when they all went to the barrier, and must not return 0 then.
        let (define, body) = split(
            "define internal spir_func i32 @k(ptr noundef align 4 %0, i32 noundef %1, ptr %ctx) #0 {
  %3 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %4 = trunc i64 %3 to i32
  %5 = icmp sgt i32 %4, %1
  br i1 %5, label %6, label %7

6:
  ret i32 1

7:
  %8 = icmp eq i32 %4, 0
  br i1 %8, label %9, label %10

9:
  store i32 5, ptr %0, align 4
  br label %10

10:
  ret i32 0",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        assert!(t.contains("br i1 %simd.10.any, label %simd.10.go, label %simd.10.next"), "{t}");
        assert!(!t.contains("br label %simd.10.some"), "{t}");
    }

    #[test]
    fn scattered_addresses_are_gathered() {
        let (define, body) = split(UNIFORM_LOOP);
        // in[2 * i]: the lanes' addresses are 8 bytes apart.
        let body: Vec<String> = body
            .iter()
            .map(|l| {
                l.replace(
                    "%16 = getelementptr inbounds float, ptr %14, i64 %15",
                    "%16 = getelementptr inbounds [2 x float], ptr %14, i64 %15, i64 0",
                )
            })
            .collect();
        let t = vectorize(&define, &body, "k").unwrap().text;
        assert!(t.contains("%v17 = call <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr> %v16, i32 4"), "{t}");
    }

    #[test]
    fn builtins_run_on_vectors_the_library_takes_by_value() {
        assert_eq!(pure_builtin("_Z5rsqrtf"), Some("rsqrt"));
        assert_eq!(pure_builtin("_Z11native_sqrtf"), Some("native_sqrt"));
        assert_eq!(pure_builtin("_Z5isnanf"), None);
        assert_eq!(scalar_codes("_Z4fminff", "fmin"), Some(vec!["f".to_string(), "f".to_string()]));
        assert_eq!(scalar_codes("_Z4fminDv4_fS_", "fmin"), None);
        let codes = ["f".to_string(), "f".to_string()];
        let elements: Vec<Ty> = codes.iter().map(|c| Ty::Builtin(c.as_str())).collect();
        let vectors: Vec<Ty> = elements.iter().map(|e| Ty::Vector(8, e)).collect();
        assert_eq!(mangle::function("fmin", &vectors), "_Z4fminDv8_fS_");
        assert_eq!(
            widened_constant(&IrType::Vector(2, Box::new(IrType::Float)), "<float 1.0, float 2.0>").unwrap(),
            format!("<{}, {}>", ["float 1.0"; 8].join(", "), ["float 2.0"; 8].join(", "))
        );
    }

    #[test]
    fn atomics_run_lane_by_lane_and_lanes_not_in_the_block_point_at_a_variable_of_the_copy() {
        // if (!isnan(x)) { atomic_inc(&local_bins[(long)x]); atomic_inc(&count) }
        let (define, body) = split(
            "define internal spir_func void @k(ptr addrspace(1) noundef align 4 %0, ptr addrspace(3) noundef align 4 %1, ptr addrspace(1) noundef align 4 %2, ptr %ctx) #0 {
  %4 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %5 = getelementptr inbounds float, ptr addrspace(1) %0, i64 %4
  %6 = load float, ptr addrspace(1) %5, align 4
  %7 = call i32 @_Z5isnanf(float noundef %6) #5
  %8 = icmp eq i32 %7, 0
  br i1 %8, label %9, label %14
9:
  %10 = fptosi float %6 to i64
  %11 = getelementptr inbounds i32, ptr addrspace(3) %1, i64 %10
  %12 = atomicrmw add ptr addrspace(3) %11, i32 1 syncscope(\"workgroup\") monotonic, align 4
  %13 = call spir_func i32 @_Z10atomic_incPU3AS1Vi(ptr addrspace(1) noundef %2) #5
  br label %14
14:
  ret void
}",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        assert!(t.contains("fcmp uno <8 x float>"), "isnan in lanes: {t}");
        // Both versions of the block (every lane's, some lanes'), a lane at a time.
        assert_eq!(t.matches("atomicrmw add ptr addrspace(3)").count(), 2 * WIDTH as usize, "{t}");
        assert_eq!(t.matches("call i32 @_Z10atomic_incPU3AS1Vi(ptr addrspace(1) ").count(), 2 * WIDTH as usize, "{t}");
        assert!(t.contains("syncscope(\"workgroup\") monotonic, align 4"), "{t}");
        assert!(t.contains("%simd.dummy = alloca [16 x i8], align 16"), "{t}");
        assert!(t.contains("addrspacecast ptr %simd.dummy to ptr addrspace(3)"), "{t}");
        assert!(t.contains("insertelement <8 x i32>"), "the lanes' results put together: {t}");
    }

    #[test]
    fn lanes_storing_to_one_address_leave_the_last_lanes_value() {
        let (define, body) = split(
            "define internal spir_func void @k(ptr addrspace(1) noundef align 4 %0, ptr %ctx) #0 {
  %3 = call i64 @_Z12get_local_idj(i32 noundef 0, ptr %ctx) #5
  %4 = trunc i64 %3 to i32
  store i32 %4, ptr addrspace(1) %0, align 4
  %5 = icmp ult i64 %3, 3
  br i1 %5, label %6, label %8
6:
  %7 = getelementptr inbounds i32, ptr addrspace(1) %0, i64 1
  store i32 %4, ptr addrspace(1) %7, align 4
  br label %8
8:
  ret void
}",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        assert!(t.contains(", i64 7\n  store i32 "), "every lane: the last one's: {t}");
        assert!(t.contains("@llvm.ctlz.i8("), "some lanes: the last of them: {t}");
    }

    #[test]
    fn copies_at_lanes_own_addresses_run_per_lane_or_per_field() {
        // A structure copied from each lane's element into a variable whose first
        // field's address a reg2mem slot holds, and an element copied from a shared
        // one: SYCL's functor built in a region's frame slot.
        let (define, body) = split(
            "define internal spir_func void @k(ptr addrspace(1) noundef align 8 %0, ptr addrspace(1) noundef align 8 %1, ptr %ctx) #0 {
  %3 = alloca { [2 x i64] }, align 8
  %s = alloca ptr, align 8
  %4 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %5 = getelementptr inbounds { [2 x i64] }, ptr addrspace(1) %0, i64 %4
  %6 = getelementptr inbounds { [2 x i64] }, ptr %3, i64 0, i32 0
  store ptr %6, ptr %s, align 8
  %7 = load ptr, ptr %s, align 8
  call void @llvm.memcpy.p0.p1.i64(ptr align 8 %7, ptr addrspace(1) align 8 %5, i64 16, i1 false)
  %8 = getelementptr inbounds { [2 x i64] }, ptr %3, i64 0, i32 0, i64 1
  %9 = load i64, ptr %8, align 8
  %10 = getelementptr inbounds i64, ptr addrspace(1) %1, i64 %4
  store i64 %9, ptr addrspace(1) %10, align 8
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 8 %5, ptr addrspace(1) align 8 %1, i64 16, i1 false)
  ret void
}",
        );
        let text = vectorize(&define, &body, "k").unwrap().text;
        // The one-chunk copy (others follow for several chunks a call).
        let t = text.split("\n}\n").next().unwrap();
        assert_eq!(t.matches("call <8 x i64> @llvm.masked.gather.v8i64.v8p1(").count(), 2, "a gather a field: {t}");
        assert_eq!(t.matches("call void @llvm.memcpy.p1.p1.i64(").count(), WIDTH as usize, "a copy a lane: {t}");
    }

    #[test]
    fn bitcasts_between_vector_lengths_regroup_the_lanes() {
        // clang passes a uint2 as a double: each lane's two halves side by side.
        let (define, body) = split(
            "define internal spir_func void @k(ptr noundef align 8 %0, ptr %ctx) #0 {
  %3 = call i64 @_Z13get_global_idj(i32 noundef 0, ptr %ctx) #5
  %4 = trunc i64 %3 to i32
  %5 = insertelement <2 x i32> poison, i32 %4, i32 0
  %6 = insertelement <2 x i32> %5, i32 7, i32 1
  %7 = bitcast <2 x i32> %6 to double
  %8 = bitcast double %7 to <2 x i32>
  %9 = getelementptr inbounds <2 x i32>, ptr %0, i64 %3
  store <2 x i32> %8, ptr %9, align 8
  ret void
}",
        );
        let t = vectorize(&define, &body, "k").unwrap().text;
        let t = &t[..t.find("\n}\n").unwrap()];
        let lane_major = "<16 x i32> <i32 0, i32 8, i32 1, i32 9, i32 2, i32 10, i32 3, i32 11, i32 4, i32 12";
        assert!(t.contains(lane_major), "{t}");
        assert!(t.contains(" to <8 x double>"), "{t}");
        let back = "<16 x i32> <i32 0, i32 2, i32 4, i32 6, i32 8, i32 10, i32 12, i32 14, i32 1, i32 3";
        assert!(t.contains(back), "{t}");
    }
}
