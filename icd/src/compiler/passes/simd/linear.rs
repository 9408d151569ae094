//! A kernel that branches on varying values, run in lanes: its blocks one after another
//! in text order, each under a mask of the lanes that reached it, as whole-function
//! vectorisers do (Karrenberg and Hack, CGO 2011).
//!
//! - A block's branch adds lanes to its targets' masks instead of jumping: a target
//!   later in the text runs when the walk reaches it; a loop header is jumped back to
//!   from the end of the loop's range while any lane is headed for it (`Cfg`).
//! - A block starts by taking its mask (and clearing it, for the next iteration of a
//!   loop around it), then runs one of two versions of its code: every lane's (plain
//!   loads and stores) or some lanes' (masked loads and stores, selects into variables),
//!   or neither when no lane reached it. Blocks every lane reaches or none (outside the
//!   regions of varying branches) have only the first.
//! - A phi becomes a variable that each way into its block sets for the lanes taking it.
//! - Lanes that return are done; the walk returns at the end.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use super::super::ir_text::label_of;
use super::{all_lanes, ir_type, WIDTH};
use super::{
    code, components, def_of, def_type, opcode, operands, phi_incoming, split_top, typed, widened, IrType, Writer,
};

/// The longest block `speculable` runs for every lane: about the two sides of an
/// if/else that computes a polynomial; a longer one is worth skipping when no lane
/// reached it.
const SPECULATED_LINES: usize = 32;

/// The type a block's mask is kept in between blocks: bits, or a vector of lanes.
fn mask_type(bits: bool) -> String {
    match bits {
        true => format!("i{WIDTH}"),
        false => format!("<{WIDTH} x i1>"),
    }
}

/// A phi's stand-in: a variable each way into the phi's block sets.
struct Slot {
    name: String,
    /// The phi's type, widened where it varies.
    ty: IrType,
    wide: Option<IrType>,
    /// (value, predecessor label) pairs.
    incoming: Vec<(String, String)>,
}

impl Writer<'_> {
    /// The body as blocks run in text order under masks (the module's comment).
    pub(super) fn linear(&mut self, lines: &[&str], define: &str) -> Result<(), String> {
        let a = self.a;
        let cfg = a.cfg.as_ref().ok_or("control flow this pass cannot order")?;
        let blocks = &a.blocks;
        let entry = entry_number(define);
        let label = |b: usize| match b == 0 && blocks[0].label.is_empty() {
            true => entry.clone(),
            false => blocks[b].label.clone(),
        };
        // A named entry block (a resumable kernel's) keeps its label first.
        let entry_lines = match blocks.first() {
            Some(first) if !first.label.is_empty() => {
                let _ = writeln!(self.out, "{}:", first.label);
                first.start + 1..first.end
            }
            // Named too: optimised code's phis name the entry (`write_copy_named`).
            Some(first) => {
                let _ = writeln!(self.out, "{entry}:");
                first.start..first.end
            }
            None => return Err("an empty kernel".into()),
        };
        let mut slots: HashMap<usize, Vec<Slot>> = HashMap::new();
        let mut defined_in: HashMap<String, usize> = HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            let Some((d, rhs)) = def_of(code(line)) else { continue };
            let b = a.block_of[i];
            match opcode(rhs) {
                ("phi", rest) => {
                    let (ty, _) = ir_type::parse(rest).ok_or("unreadable phi")?;
                    let wide = match self.varies(d) {
                        true => Some(widened(&ty).ok_or("unsupported phi")?),
                        false => None,
                    };
                    let name = format!("%simd.phi.{}", d.trim_start_matches('%'));
                    slots.entry(b).or_default().push(Slot { name, ty, wide, incoming: phi_incoming(rest)? });
                }
                _ => {
                    defined_in.insert(d.to_string(), b);
                }
            }
        }
        // A block's versions define its values under other names: a value used in
        // another block gets a phi where they join (undefined where no lane ran it).
        let index: HashMap<String, usize> = (0..blocks.len()).map(|b| (label(b), b)).collect();
        let mut escaping: HashMap<usize, Vec<(String, IrType)>> = HashMap::new();
        let mut seen: HashSet<String> = HashSet::new();
        for (i, line) in lines.iter().enumerate() {
            let c = code(line);
            let uses: Vec<(String, usize)> = match def_of(c).map(|(_, rhs)| opcode(rhs)) {
                Some(("phi", rest)) => {
                    phi_incoming(rest)?.into_iter().filter_map(|(v, l)| index.get(&l).map(|&b| (v, b))).collect()
                }
                _ => operands(c).into_iter().map(|v| (v, a.block_of[i])).collect(),
            };
            for (v, user) in uses {
                let Some(&b) = defined_in.get(&v).filter(|&&b| b != 0 && b != user) else { continue };
                if seen.insert(v.clone()) {
                    let def = lines[blocks[b].start..=blocks[b].end]
                        .iter()
                        .find_map(|l| def_of(code(l)).filter(|(d, _)| *d == v))
                        .map(|(_, rhs)| rhs)
                        .ok_or("a value without its definition")?;
                    let ty = def_type(def).ok_or_else(|| format!("a value used outside its block: {v}"))?;
                    let ty = match self.varies(&v) {
                        true => widened(&ty).ok_or("unsupported value")?,
                        false => ty,
                    };
                    escaping.entry(b).or_default().push((v, ty));
                }
            }
        }
        // What the function returns (a resumable kernel: the barrier its lanes reached,
        // the same in all), kept until the walk's end.
        let returns = define.split('@').next().and_then(|head| head.split_whitespace().last()).unwrap_or("void");
        if returns != "void" {
            let _ = writeln!(self.out, "  %simd.ret = alloca {returns}, align 8");
            let _ = writeln!(self.out, "  store {returns} zeroinitializer, ptr %simd.ret, align 8");
        }
        // The mask of a block in a loop, or that a loop branches to, is kept as bits
        // in an integer, which `movmsk` makes of a compare's lanes, and tested and
        // combined as one: kept as `<8 x i1>` across blocks it is 16-bit words on AVX2,
        // packed and shifted again at each test (one core: escape-time 4.79-4.83 ->
        // 4.34-4.41 ms, block-stride 1.52-1.64 -> 1.34-1.53). Elsewhere it stays a
        // vector: an if/else's selects then take the compare as it is, where bits
        // would be spread back into a vector (if/else 0.86-0.94 -> 0.96-0.99 ms).
        // Blocks a loop branches to count as in it: a loop's exit gains lanes each time
        // round.
        let mut bits: Vec<bool> = (0..blocks.len()).map(|b| cfg.in_a_loop(b)).collect();
        for b in (0..blocks.len()).filter(|&b| cfg.in_a_loop(b)) {
            let term = code(lines[blocks[b].end]);
            for target in term.split("label %").skip(1) {
                let name = &target[..name_len(target)];
                if let Some(&t) = index.get(name) {
                    bits[t] = true;
                }
            }
        }
        for (b, block) in blocks.iter().enumerate().skip(1) {
            let ty = mask_type(bits[b]);
            let _ = writeln!(self.out, "  %simd.m.{} = alloca {ty}, align 1", block.label);
            let _ = writeln!(self.out, "  store {ty} zeroinitializer, ptr %simd.m.{}, align 1", block.label);
        }
        for slot in slots.values().flatten() {
            let ty = slot.wide.as_ref().unwrap_or(&slot.ty);
            let _ = writeln!(self.out, "  {} = alloca {ty}, align 64", slot.name);
        }
        for (at, &b) in cfg.order.iter().enumerate() {
            let block = &blocks[b];
            let next = match cfg.order.get(at + 1) {
                Some(&n) => format!("%{}", blocks[n].label),
                None => "%simd.exit".to_string(),
            };
            if b == 0 {
                for line in &lines[entry_lines.clone()] {
                    self.line(line)?;
                }
                self.branch((0, &label(0)), lines[block.end], None, &slots, &index, &bits)?;
                let _ = writeln!(self.out, "  br label {next}");
                continue;
            }
            let l = &block.label;
            let _ = writeln!(self.out, "{l}:");
            let m = format!("%simd.m.{l}.in");
            let ty = mask_type(bits[b]);
            match bits[b] {
                true => {
                    let _ = writeln!(self.out, "  {m}.bits = load {ty}, ptr %simd.m.{l}, align 1");
                    let _ = writeln!(self.out, "  {m} = bitcast {ty} {m}.bits to <{WIDTH} x i1>");
                }
                false => {
                    let _ = writeln!(self.out, "  {m} = load {ty}, ptr %simd.m.{l}, align 1");
                }
            }
            if cfg.in_a_loop(b) {
                let _ = writeln!(self.out, "  store {ty} zeroinitializer, ptr %simd.m.{l}, align 1");
            }
            let mut body = Vec::new();
            for line in &lines[block.start + 1..block.end] {
                match def_of(code(line)).map(|(d, rhs)| (d, opcode(rhs).0)) {
                    Some((d, "phi")) => {
                        let name = format!("%simd.phi.{}", &d[1..]);
                        let slot = slots[&b].iter().find(|s| s.name == name);
                        let slot = slot.ok_or("a phi without its variable")?;
                        let ty = slot.wide.as_ref().unwrap_or(&slot.ty);
                        let _ = writeln!(self.out, "  {d} = load {ty}, ptr {}, align 64", slot.name);
                    }
                    _ => body.push(*line),
                }
            }
            let partial = a.partial[b];
            // A short block that only computes runs for every lane, its results kept
            // for those that reached it: no test of the mask, no branch, so the item
            // loop around an if/else stays straight-line code LLVM can unroll. Not in a
            // loop, whose blocks all lanes mostly run: there the test picks the version
            // without selects (the escape-time loop took 6.5 ms speculated, 4.8 tested).
            // Only a block that ends in a branch: a `ret` of a value stores what the
            // function returns (a region's next barrier), which a block no lane reached
            // must leave alone.
            let branches = code(lines[block.end]).trim_start().starts_with("br ");
            let speculate = partial && branches && !cfg.in_a_loop(b) && self.speculable(&body);
            let any = format!("%simd.{l}.any");
            if speculate {
                let _ = writeln!(self.out, "  br label %simd.{l}.some");
            } else {
                self.any(&any, &m, bits[b]);
            }
            let go = match partial {
                true => format!("simd.{l}.go"),
                false => format!("simd.{l}.all"),
            };
            if !speculate {
                let _ = writeln!(self.out, "  br i1 {any}, label %{go}, label %simd.{l}.next");
            }
            if partial && !speculate {
                let all = format!("%simd.{l}.full");
                let _ = writeln!(self.out, "{go}:");
                match bits[b] {
                    true => {
                        let _ = writeln!(self.out, "  {all} = icmp eq i{WIDTH} {m}.bits, -1");
                    }
                    false => {
                        let _ = writeln!(
                            self.out,
                            "  {all} = call i1 @llvm.vector.reduce.and.v{WIDTH}i1(<{WIDTH} x i1> {m})"
                        );
                        self.declarations
                            .push(format!("declare i1 @llvm.vector.reduce.and.v{WIDTH}i1(<{WIDTH} x i1>)"));
                    }
                }
                let _ = writeln!(self.out, "  br i1 {all}, label %simd.{l}.all, label %simd.{l}.some");
            }
            let defs: HashSet<String> =
                body.iter().filter_map(|x| def_of(code(x)).map(|(d, _)| d.to_string())).collect();
            let versions: &[(&str, Option<&str>)] = match (partial, speculate) {
                (true, true) => &[("some", Some(m.as_str()))],
                (true, false) => &[("all", None), ("some", Some(m.as_str()))],
                (false, _) => &[("all", None)],
            };
            for &(version, lanes) in versions {
                let outer = std::mem::take(&mut self.out);
                self.lanes = lanes.map(str::to_string);
                let _ = writeln!(self.out, "simd.{l}.{version}:");
                for line in &body {
                    self.line(line)?;
                }
                self.branch((b, l), lines[block.end], lanes, &slots, &index, &bits)?;
                self.lanes = None;
                let _ = writeln!(self.out, "  br label %simd.{l}.next");
                let text = std::mem::replace(&mut self.out, outer);
                self.out.push_str(&rename(&text, &defs, &version[..1]));
            }
            let _ = writeln!(self.out, "simd.{l}.next:");
            for (v, ty) in escaping.get(&b).into_iter().flatten() {
                let mut incoming = match speculate {
                    true => Vec::new(),
                    false => vec![format!("[ poison, %{l} ]")],
                };
                for &(version, _) in versions {
                    let renamed = rename(v, &defs, &version[..1]);
                    incoming.push(format!("[ {renamed}, %simd.{l}.{version} ]"));
                }
                let _ = writeln!(self.out, "  {v} = phi {ty} {}", incoming.join(", "));
            }
            for (k, &h) in cfg.ends[b].iter().enumerate() {
                let (mh, again) = (format!("%simd.{l}.loop{k}"), format!("%simd.{l}.again{k}"));
                let ty = mask_type(bits[h]);
                let _ = writeln!(self.out, "  {mh} = load {ty}, ptr %simd.m.{}, align 1", blocks[h].label);
                match bits[h] {
                    true => {
                        let _ = writeln!(self.out, "  {again} = icmp ne {ty} {mh}, 0");
                    }
                    false => self.any(&again, &mh, false),
                }
                let _ = writeln!(self.out, "  br i1 {again}, label %{}, label %simd.{l}.after{k}", blocks[h].label);
                let _ = writeln!(self.out, "simd.{l}.after{k}:");
            }
            let _ = writeln!(self.out, "  br label {next}");
        }
        match returns {
            "void" => {
                let _ = writeln!(self.out, "simd.exit:\n  ret void");
            }
            t => {
                let _ = writeln!(
                    self.out,
                    "simd.exit:\n  %simd.result = load {t}, ptr %simd.ret, align 8\n  ret {t} %simd.result"
                );
            }
        }
        Ok(())
    }

    /// Block `from`'s terminator as masks: each target gains the lanes that go there (of
    /// `mask`, every lane where `None`), and its phis' variables their values for them.
    fn branch(
        &mut self,
        (block, from): (usize, &str),
        term: &str,
        mask: Option<&str>,
        slots: &HashMap<usize, Vec<Slot>>,
        index: &HashMap<String, usize>,
        bits: &[bool],
    ) -> Result<(), String> {
        let t = code(term).trim_start();
        let m = mask.map_or_else(all_lanes, str::to_string);
        // The block's mask as bits too, where it has them: every lane, or a loop's.
        let m_bits = match mask {
            None => Some("-1".to_string()),
            Some(m) if bits[block] => Some(format!("{m}.bits")),
            Some(_) => None,
        };
        // (target, its lanes as a vector, and as bits where made so).
        let mut edges: Vec<(String, String, Option<String>)> = Vec::new();
        if let Some(target) = t.strip_prefix("br label %") {
            edges.push((target.trim().to_string(), m.clone(), m_bits.clone()));
        } else if let Some(rest) = t.strip_prefix("br i1 ") {
            let parts = split_top(rest);
            let c = parts.first().ok_or("unreadable branch")?.trim();
            let target = |p: Option<&&str>| p.and_then(|p| p.trim().strip_prefix("label %")).map(str::to_string);
            let (yes, no) = (target(parts.get(1)), target(parts.get(2)));
            let (yes, no) = (yes.ok_or("unreadable branch")?, no.ok_or("unreadable branch")?);
            // A branch every lane takes alike passes the mask to one side whole (a splat
            // of its condition bitcast to bits cost five instructions a block on AVX2).
            let shared = !self.varies(c);
            let c = match shared {
                true => c.to_string(),
                false => self.lanes_of(c, &IrType::Int(1))?,
            };
            let (on, off) = (self.name("%on"), self.name("%off"));
            let v = format!("<{WIDTH} x i1>");
            let (on_rhs, off_rhs) = match shared {
                true => (
                    format!("select i1 {c}, {v} {m}, {v} zeroinitializer"),
                    format!("select i1 {c}, {v} zeroinitializer, {v} {m}"),
                ),
                false => (format!("and {v} {m}, {c}"), format!("xor {v} {on}, {m}")),
            };
            let _ = writeln!(self.out, "  {on} = {on_rhs}\n  {off} = {off_rhs}");
            let (on_bits, off_bits) = match &m_bits {
                Some(mb) => {
                    let (ob, fb) = (self.name("%on.bits"), self.name("%off.bits"));
                    let i = format!("i{WIDTH}");
                    let (ob_rhs, fb_rhs) = match shared {
                        true => (format!("select i1 {c}, {i} {mb}, {i} 0"), format!("select i1 {c}, {i} 0, {i} {mb}")),
                        false => {
                            let cb = self.name("%taken");
                            let _ = writeln!(self.out, "  {cb} = bitcast {v} {c} to {i}");
                            (format!("and {i} {mb}, {cb}"), format!("xor {i} {ob}, {mb}"))
                        }
                    };
                    let _ = writeln!(self.out, "  {ob} = {ob_rhs}\n  {fb} = {fb_rhs}");
                    (Some(ob), Some(fb))
                }
                None => (None, None),
            };
            edges.push((yes, on, on_bits));
            edges.push((no, off, off_bits));
        } else if let Some(rest) = t.strip_prefix("switch ") {
            let (head, cases) = rest.split_once('[').ok_or("unreadable switch")?;
            let parts = split_top(head);
            let (ty, v) = typed(parts.first().ok_or("unreadable switch")?).ok_or("unreadable switch")?;
            let default = parts.get(1).and_then(|p| p.trim().strip_prefix("label %")).ok_or("unreadable switch")?;
            let words: Vec<&str> = cases.trim_end().trim_end_matches(']').split_whitespace().collect();
            let mut left = m.clone();
            for case in words.chunks(4) {
                let [_, k, _, target] = case else { return Err("unreadable switch".into()) };
                let k = k.trim_end_matches(',');
                let target = target.trim_start_matches('%').to_string();
                let wide = widened(&ty).ok_or("unsupported switch")?;
                let (value, k) = (self.operand(&ty, &v)?, self.operand(&ty, k)?);
                let (eq, on, rest) = (self.name("%case"), self.name("%on"), self.name("%left"));
                let _ = writeln!(self.out, "  {eq} = icmp eq {wide} {value}, {k}");
                let _ = writeln!(self.out, "  {on} = and <{WIDTH} x i1> {left}, {eq}");
                let _ = writeln!(self.out, "  {rest} = xor <{WIDTH} x i1> {left}, {on}");
                edges.push((target, on, None));
                left = rest;
            }
            edges.push((default.trim().to_string(), left, None));
        } else if let Some(value) = t.strip_prefix("ret ").filter(|v| *v != "void") {
            let (ty, v) = typed(value).ok_or("unreadable return")?;
            if self.varies(&v) {
                return Err("lanes returning different values".into());
            }
            let _ = writeln!(self.out, "  store {ty} {v}, ptr %simd.ret, align 8");
        } else if !(t.starts_with("ret") || t.starts_with("unreachable")) {
            return Err(format!("terminator {t}"));
        }
        for (target, lanes, lanes_bits) in edges {
            let b = *index.get(&target).ok_or("a branch to an unknown block")?;
            let (old, new) = (self.name("%was"), self.name("%now"));
            let ty = mask_type(bits[b]);
            let added = match (bits[b], lanes_bits) {
                (true, Some(lb)) => lb,
                (true, None) => {
                    let lb = self.name("%taken");
                    let _ = writeln!(self.out, "  {lb} = bitcast <{WIDTH} x i1> {lanes} to {ty}");
                    lb
                }
                (false, _) => lanes.clone(),
            };
            let _ = writeln!(self.out, "  {old} = load {ty}, ptr %simd.m.{target}, align 1");
            let _ = writeln!(self.out, "  {new} = or {ty} {old}, {added}");
            let _ = writeln!(self.out, "  store {ty} {new}, ptr %simd.m.{target}, align 1");
            for slot in slots.get(&b).into_iter().flatten() {
                for (v, _) in slot.incoming.iter().filter(|(_, p)| p == from) {
                    self.set_slot(slot, v, &lanes)?;
                }
            }
        }
        Ok(())
    }

    /// `out` = whether any lane of vector mask `m` is set.
    fn any(&mut self, out: &str, m: &str, bits: bool) {
        match bits {
            true => {
                let _ = writeln!(self.out, "  {out} = icmp ne i{WIDTH} {m}.bits, 0");
            }
            false => {
                let _ = writeln!(self.out, "  {out} = call i1 @llvm.vector.reduce.or.v{WIDTH}i1(<{WIDTH} x i1> {m})");
                self.declarations.push(format!("declare i1 @llvm.vector.reduce.or.v{WIDTH}i1(<{WIDTH} x i1>)"));
            }
        }
    }

    /// `value` into a phi's variable for the lanes in `lanes`.
    fn set_slot(&mut self, slot: &Slot, value: &str, lanes: &str) -> Result<(), String> {
        let (old, new) = (self.name("%old"), self.name("%set"));
        match &slot.wide {
            Some(wide) => {
                let v = self.operand(&slot.ty, value)?;
                let n = components(&slot.ty).0;
                let spread = self.spread_mask(lanes, n, false);
                let _ = writeln!(self.out, "  {old} = load {wide}, ptr {}, align 64", slot.name);
                let _ = writeln!(self.out, "  {new} = select <{} x i1> {spread}, {wide} {v}, {wide} {old}", n * WIDTH);
                let _ = writeln!(self.out, "  store {wide} {new}, ptr {}, align 64", slot.name);
            }
            None => {
                // A shared phi: the lanes here all take this way or none does.
                let ty = &slot.ty;
                let any = self.name("%taken");
                self.any(&any, lanes, false);
                let _ = writeln!(self.out, "  {old} = load {ty}, ptr {}, align 64", slot.name);
                let _ = writeln!(self.out, "  {new} = select i1 {any}, {ty} {value}, {ty} {old}");
                let _ = writeln!(self.out, "  store {ty} {new}, ptr {}, align 64", slot.name);
            }
        }
        Ok(())
    }

    /// Whether a block's code (phis and terminator left out) may run for lanes that did
    /// not reach it: at most `SPECULATED_LINES` lines of arithmetic, compares, casts,
    /// selects and address computations, reads and writes of the kernel's own variables
    /// (writes are merged by mask), and LLVM's intrinsics that only compute. Memory
    /// other than the variables may fault or be seen, a division may trap, and a call
    /// may do anything.
    fn speculable(&self, body: &[&str]) -> bool {
        let variable = |p: &str| self.a.allocas.contains_key(p.trim());
        let pure_intrinsic = |t: &str| {
            t.split('@').nth(1).is_some_and(|callee| {
                callee.starts_with("llvm.")
                    && !["llvm.memcpy", "llvm.memmove", "llvm.memset", "llvm.masked.", "llvm.experimental."]
                        .iter()
                        .any(|p| callee.starts_with(p))
            })
        };
        let work: Vec<&str> =
            body.iter().map(|l| code(l).trim_start()).filter(|t| !t.is_empty() && !t.starts_with(';')).collect();
        work.len() <= SPECULATED_LINES
            && work.iter().all(|t| {
                if let Some(rest) = t.strip_prefix("store ") {
                    let parts = split_top(rest);
                    return !t.contains("volatile")
                        && parts.get(1).and_then(|p| p.trim().strip_prefix("ptr ")).is_some_and(variable);
                }
                if t.starts_with("call ") || t.starts_with("tail call ") {
                    return pure_intrinsic(t);
                }
                let Some((_, rhs)) = def_of(t) else { return false };
                match opcode(rhs) {
                    ("load", rest) => {
                        let parts = split_top(rest);
                        !rest.contains("volatile")
                            && !rest.contains("atomic")
                            && parts.get(1).and_then(|p| p.trim().strip_prefix("ptr ")).is_some_and(variable)
                    }
                    ("call" | "tail" | "musttail" | "notail", _) => pure_intrinsic(rhs),
                    (op, _) => !matches!(
                        op,
                        "udiv"
                            | "sdiv"
                            | "urem"
                            | "srem"
                            | "alloca"
                            | "atomicrmw"
                            | "cmpxchg"
                            | "fence"
                            | "va_arg"
                            | "landingpad"
                            | "invoke"
                    ),
                }
            })
    }

    /// An `i1` operand as a lane mask: varying values as they are, shared ones
    /// broadcast.
    fn lanes_of(&mut self, value: &str, ty: &IrType) -> Result<String, String> {
        self.operand(ty, value)
    }
}

/// The number LLVM gives the entry block: the one after the numbered parameters.
pub(super) fn entry_number(define: &str) -> String {
    let head = define.split_once('{').map_or(define, |(h, _)| h);
    let numbered = head.split('%').skip(1).filter_map(|t| {
        let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
        let after = t[digits.len()..].chars().next();
        (!digits.is_empty() && !after.is_some_and(|c| c.is_alphanumeric() || "._$-".contains(c)))
            .then(|| digits.parse::<u64>().ok())
            .flatten()
    });
    numbered.max().map_or(0, |n| n + 1).to_string()
}

/// A `%` name's characters after the `%`.
fn name_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_alphanumeric() || "._$-".contains(c))).unwrap_or(s.len())
}

/// `text` with each value in `defs` (`%7`, `%x`) renamed for a block's version:
/// `%v7.a`, `%x.a` (a name may not start with a digit).
fn rename(text: &str, defs: &HashSet<String>, version: &str) -> String {
    map_names(text, |name| {
        defs.contains(&format!("%{name}")).then(|| match name.starts_with(|c: char| c.is_ascii_digit()) {
            true => format!("v{name}.{version}"),
            false => format!("{name}.{version}"),
        })
    })
}

/// The copy with numbered values and blocks named (`%7` -> `%v7`, `7:` -> `v7:`): its
/// blocks' versions leave gaps in the numbering, which LLVM does not accept.
pub(super) fn renumber(text: &str) -> String {
    let numbered = |name: &str| name.chars().all(|c| c.is_ascii_digit()).then(|| format!("v{name}"));
    text.lines()
        .map(|line| {
            let line = map_names(line, numbered);
            match label_of(&line) {
                Some(l) if l.chars().all(|c| c.is_ascii_digit()) => format!("v{line}"),
                _ => line,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `text` with each `%name` for which `f` gives a new name renamed.
pub(super) fn map_names(text: &str, f: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..=at]);
        let after = &rest[at + 1..];
        let n = name_len(after);
        match f(&after[..n]) {
            Some(new) if n > 0 => out.push_str(&new),
            _ => out.push_str(&after[..n]),
        }
        rest = &after[n..];
    }
    out + rest
}
