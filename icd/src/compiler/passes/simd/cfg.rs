//! The control flow of a kernel as the SIMD copy sees it: basic blocks in text order,
//! the loops as ranges of that order, and the blocks that only some lanes may reach
//! (the regions of divergent branches), found with post-dominators.
//!
//! `linear` walks the blocks in an order where every edge goes forward except a loop's
//! ways back to its header, and each loop's blocks lie together: run in that order with
//! a mask of lanes per block, forward edges need nothing more, and a loop is a jump back
//! from its last block while any lane is headed for its header. The order is a
//! topological one, loop by loop (clang's source order where it can).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use super::super::flow;
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

/// The control flow graph over `blocks`, by index, with the order `linear` walks them.
pub(super) struct Cfg {
    pub(super) succs: Vec<Vec<usize>>,
    /// The blocks in walk order: every edge forward but a loop's ways back to its
    /// header, each loop's blocks together, header first.
    pub(super) order: Vec<usize>,
    /// Loops by header, with their blocks.
    loops: Vec<(usize, Vec<bool>)>,
    /// For each block, the headers of loops whose last block (in walk order) it is,
    /// innermost first.
    pub(super) ends: Vec<Vec<usize>>,
    /// Each block's nearest post-dominator (`None`: the function's exit).
    ipdom: Vec<Option<usize>>,
}

impl Cfg {
    /// `Err` where the control flow is irreducible (a loop entered other than by its
    /// header).
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
        // Ways back: edges to a block on the depth-first path from the entry.
        let mut back: Vec<(usize, usize)> = Vec::new();
        let mut state = vec![0u8; n]; // 0 unseen, 1 on the path, 2 done
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        state[0] = 1;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            match succs[b].get(*next) {
                Some(&s) => {
                    *next += 1;
                    match state[s] {
                        0 => {
                            state[s] = 1;
                            stack.push((s, 0));
                        }
                        1 => back.push((b, s)),
                        _ => {}
                    }
                }
                None => {
                    state[b] = 2;
                    stack.pop();
                }
            }
        }
        // Natural loops: the blocks that reach a way back without passing its header;
        // reaching the entry so means a second way in.
        let mut loops: Vec<(usize, Vec<bool>)> = Vec::new();
        for &(latch, h) in &back {
            let at = match loops.iter().position(|(x, _)| *x == h) {
                Some(at) => at,
                None => {
                    let mut body = vec![false; n];
                    body[h] = true;
                    loops.push((h, body));
                    loops.len() - 1
                }
            };
            let body = &mut loops[at].1;
            let mut work = vec![latch];
            while let Some(b) = work.pop() {
                if !body[b] {
                    if b == 0 {
                        return Err("a loop entered other than by its header".into());
                    }
                    body[b] = true;
                    work.extend(preds[b].iter().copied());
                }
            }
        }
        // Outermost first, so a block's loop is the last (innermost) that holds it.
        loops.sort_by_key(|(_, body)| std::cmp::Reverse(body.iter().filter(|&&x| x).count()));
        let back: HashSet<(usize, usize)> = back.into_iter().collect();
        let all = vec![true; n];
        let order = walk_order(&succs, &back, &loops, &all, None)?;
        let position: HashMap<usize, usize> = order.iter().enumerate().map(|(p, &b)| (b, p)).collect();
        let mut ends = vec![Vec::new(); n];
        // Innermost first: loops are sorted outermost first.
        for (h, body) in loops.iter().rev() {
            let last = (0..n).filter(|&b| body[b]).max_by_key(|b| position.get(b)).unwrap_or(*h);
            ends[last].push(*h);
        }
        let ipdom = flow::post_dominators(&succs);
        Ok(Cfg { succs, order, loops, ends, ipdom })
    }

    /// The blocks only some lanes may reach when block `p` branches on a varying
    /// value: those reachable from its successors before they meet again (its nearest
    /// post-dominator), `p` itself included where a loop leads back to it.
    pub(super) fn region(&self, p: usize) -> Vec<bool> {
        flow::divergent_region(&self.succs, &self.ipdom, p)
    }

    /// The blocks of the innermost loop holding block `b`.
    pub(super) fn innermost_loop(&self, b: usize) -> Option<&Vec<bool>> {
        self.loops.iter().rev().find(|(_, body)| body[b]).map(|(_, body)| body)
    }

    /// The loops, outermost first: each header with its blocks.
    pub(super) fn loops(&self) -> &[(usize, Vec<bool>)] {
        &self.loops
    }

    /// Whether block `b` is in a loop.
    pub(super) fn in_a_loop(&self, b: usize) -> bool {
        self.innermost_loop(b).is_some()
    }
}

/// The blocks of `set` (a loop's, with its header `header`, or the function's) in walk
/// order: a topological order of its edges less the ways back to its header, each loop
/// inside taken as one block and put in order the same way; ties go to text order, so
/// clang's source order stays where it can.
fn walk_order(
    succs: &[Vec<usize>],
    back: &HashSet<(usize, usize)>,
    loops: &[(usize, Vec<bool>)],
    set: &[bool],
    header: Option<usize>,
) -> Result<Vec<usize>, String> {
    let n = succs.len();
    // Each block of the set as its outermost loop inside the set (by header), or itself.
    let inner: Vec<&(usize, Vec<bool>)> = loops
        .iter()
        .filter(|(h, body)| Some(*h) != header && set[*h] && body.iter().zip(set).all(|(b, s)| !b || *s))
        .collect();
    let rep: Vec<usize> = (0..n).map(|b| inner.iter().find(|(_, body)| body[b]).map_or(b, |(h, _)| *h)).collect();
    let mut indegree = vec![0usize; n];
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    for u in (0..n).filter(|&u| set[u]) {
        for &v in &succs[u] {
            if !set[v] || Some(v) == header && back.contains(&(u, v)) || rep[u] == rep[v] {
                continue;
            }
            edges[rep[u]].push(rep[v]);
            indegree[rep[v]] += 1;
        }
    }
    let nodes: Vec<usize> = (0..n).filter(|&b| set[b] && rep[b] == b).collect();
    let mut ready: BinaryHeap<Reverse<usize>> =
        nodes.iter().filter(|&&b| indegree[b] == 0).map(|&b| Reverse(b)).collect();
    let mut out = Vec::new();
    let mut placed = 0;
    while let Some(Reverse(b)) = ready.pop() {
        placed += 1;
        match inner.iter().find(|(h, _)| *h == b) {
            Some((h, body)) => out.extend(walk_order(succs, back, loops, body, Some(*h))?),
            None => out.push(b),
        }
        for &v in &edges[b] {
            indegree[v] -= 1;
            if indegree[v] == 0 {
                ready.push(Reverse(v));
            }
        }
    }
    if placed != nodes.len() {
        return Err("control flow with no order to walk".into());
    }
    Ok(out)
}
