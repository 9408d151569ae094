//! The control flow of a kernel as the SIMD copy sees it: basic blocks in text order,
//! the loops as ranges of that order, and the blocks that only some lanes may reach
//! (the regions of divergent branches), found with post-dominators.
//!
//! Clang writes a function's blocks in source order: every edge goes forward except a
//! loop's way back to its header, and a loop's blocks lie between its header and its
//! last way back. Run in that order with a mask of lanes per block, forward edges need
//! nothing more, and a loop is a way back from the end of its range while any lane is
//! headed for its header (`linear`).

use std::collections::HashMap;

use super::super::ir_text::{label_of, labels_in};
use super::code;

/// A basic block: its label (`""` for the entry), its lines `start..=end` (the last its
/// terminator), and its successors.
#[derive(Debug)]
pub(super) struct Block {
    pub(super) label: String,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) succs: Vec<String>,
}

/// The blocks of a function body, in text order.
pub(super) fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut label = String::new();
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if let Some(l) = label_of(line) {
            label = l.to_string();
            start = i;
            continue;
        }
        let t = code(line).trim_start();
        let terminator = ["br ", "switch ", "ret ", "unreachable"].iter().any(|k| t.starts_with(k)) || t == "ret";
        if terminator {
            let mut succs: Vec<String> = Vec::new();
            for s in labels_in(t) {
                if !succs.iter().any(|x| x == s) {
                    succs.push(s.to_string());
                }
            }
            out.push(Block { label: std::mem::take(&mut label), start, end: i, succs });
            start = i + 1;
        }
    }
    out
}

/// The control flow graph over `blocks`, by index.
pub(super) struct Cfg {
    pub(super) succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    /// Each loop header's range end: the last block (in text order) that branches back
    /// to it.
    pub(super) range_end: HashMap<usize, usize>,
    /// For each block, the headers whose ranges end there, innermost first.
    pub(super) ends: Vec<Vec<usize>>,
    /// Each block's nearest post-dominator (`None`: the function's exit).
    ipdom: Vec<Option<usize>>,
}

impl Cfg {
    /// `Err` where the blocks are not in an order `linear` can run: a branch into the
    /// middle of a loop's range from outside it, or loop ranges that overlap without
    /// one holding the other.
    pub(super) fn of(blocks: &[Block]) -> Result<Cfg, String> {
        let n = blocks.len();
        let index: HashMap<&str, usize> = blocks.iter().enumerate().map(|(i, b)| (b.label.as_str(), i)).collect();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (i, b) in blocks.iter().enumerate() {
            for s in &b.succs {
                let &j = index.get(s.as_str()).ok_or("a branch to an unknown block")?;
                succs[i].push(j);
                preds[j].push(i);
            }
        }
        let mut range_end: HashMap<usize, usize> = HashMap::new();
        for (i, ss) in succs.iter().enumerate() {
            for &s in ss {
                if s <= i {
                    let e = range_end.entry(s).or_insert(i);
                    *e = (*e).max(i);
                }
            }
        }
        for (&h, &e) in &range_end {
            for (i, ss) in succs.iter().enumerate() {
                if (i < h || i > e) && ss.iter().any(|&s| s > h && s <= e) {
                    return Err("a branch into the middle of a loop".into());
                }
            }
            for (&h2, &e2) in &range_end {
                if h < h2 && h2 <= e && e2 > e {
                    return Err("loops that overlap".into());
                }
            }
        }
        let mut ends = vec![Vec::new(); n];
        let mut headers: Vec<(usize, usize)> = range_end.iter().map(|(&h, &e)| (h, e)).collect();
        // Innermost first: of two ranges ending at one block, the later header.
        headers.sort_by_key(|&(h, e)| (e, std::cmp::Reverse(h)));
        for (h, e) in headers {
            ends[e].push(h);
        }
        let ipdom = post_dominators(&succs);
        Ok(Cfg { succs, preds, range_end, ends, ipdom })
    }

    /// The blocks only some lanes may reach when block `p` branches on a varying
    /// value: those reachable from its successors before they meet again (its nearest
    /// post-dominator), `p` itself included where a loop leads back to it.
    pub(super) fn region(&self, p: usize) -> Vec<bool> {
        let join = self.ipdom[p];
        let mut inside = vec![false; self.succs.len()];
        let mut work: Vec<usize> = self.succs[p].clone();
        while let Some(b) = work.pop() {
            if Some(b) == join || inside[b] {
                continue;
            }
            inside[b] = true;
            work.extend(self.succs[b].iter().copied());
        }
        inside
    }

    /// The blocks of the loop headed by `h`: those that reach a way back to it without
    /// passing through it. (Its range may hold others: clang puts a loop's exit block
    /// for cleanups just after the header.)
    pub(super) fn natural_loop(&self, h: usize) -> Vec<bool> {
        let mut inside = vec![false; self.succs.len()];
        inside[h] = true;
        let mut work: Vec<usize> = self.preds[h].iter().copied().filter(|&p| p >= h).collect();
        while let Some(b) = work.pop() {
            if !inside[b] {
                inside[b] = true;
                work.extend(self.preds[b].iter().copied());
            }
        }
        inside
    }

    /// The innermost loop range holding block `b`, as (header, end).
    pub(super) fn innermost_range(&self, b: usize) -> Option<(usize, usize)> {
        self.range_end.iter().filter(|(&h, &e)| h <= b && b <= e).map(|(&h, &e)| (h, e)).min_by_key(|&(h, e)| e - h)
    }
}

/// Each block's nearest post-dominator, by the iterative data-flow over sets (blocks
/// are few): pdom(b) = {b} + the intersection of its successors' sets, the exits'
/// sets being themselves. The nearest strict post-dominator is the one with the most
/// post-dominators of its own.
fn post_dominators(succs: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = succs.len();
    let words = n.div_ceil(64);
    let full = {
        let mut f = vec![u64::MAX; words];
        if n % 64 != 0 {
            f[words - 1] = (1u64 << (n % 64)) - 1;
        }
        f
    };
    let mut pdom: Vec<Vec<u64>> =
        (0..n).map(|b| if succs[b].is_empty() { single(b, words) } else { full.clone() }).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            if succs[b].is_empty() {
                continue;
            }
            let mut set = full.clone();
            for &s in &succs[b] {
                for (w, x) in set.iter_mut().zip(&pdom[s]) {
                    *w &= x;
                }
            }
            set[b / 64] |= 1 << (b % 64);
            if set != pdom[b] {
                pdom[b] = set;
                changed = true;
            }
        }
    }
    let count = |s: &Vec<u64>| s.iter().map(|w| w.count_ones()).sum::<u32>();
    (0..n)
        .map(|b| (0..n).filter(|&d| d != b && pdom[b][d / 64] & (1 << (d % 64)) != 0).max_by_key(|&d| count(&pdom[d])))
        .collect()
}

fn single(b: usize, words: usize) -> Vec<u64> {
    let mut s = vec![0; words];
    s[b / 64] |= 1 << (b % 64);
    s
}
