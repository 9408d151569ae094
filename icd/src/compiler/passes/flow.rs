//! Control-flow facts the passes share: post-dominators, and the blocks only some
//! work-items reach after a branch on a value that differs between them.

/// Each block's nearest post-dominator (`None`: the function's exit), by the
/// iterative data-flow over sets (blocks are few): pdom(b) = {b} + the intersection of its successors' sets, the exits'
/// sets being themselves. The nearest strict post-dominator is the one with the most
/// post-dominators of its own.
pub(crate) fn post_dominators(succs: &[Vec<usize>]) -> Vec<Option<usize>> {
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

/// The blocks only some work-items may reach when block `p` branches on a value that
/// differs between them: those reachable from its successors before the paths meet
/// again (its nearest post-dominator), `p` itself included where a loop leads back.
pub(crate) fn divergent_region(succs: &[Vec<usize>], ipdom: &[Option<usize>], p: usize) -> Vec<bool> {
    let join = ipdom[p];
    let mut inside = vec![false; succs.len()];
    let mut work: Vec<usize> = succs[p].clone();
    while let Some(b) = work.pop() {
        if Some(b) == join || inside[b] {
            continue;
        }
        inside[b] = true;
        work.extend(succs[b].iter().copied());
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_if_inside_a_loop_diverges_up_to_its_join() {
        // 0 -> 1 (loop header) -> 2 (if) -> 3 | 4 -> 5 (join, latch) -> 1; 1 -> 6 (exit).
        let succs = vec![vec![1], vec![2, 6], vec![3, 4], vec![5], vec![5], vec![1], vec![]];
        let ipdom = post_dominators(&succs);
        assert_eq!(ipdom, [Some(1), Some(6), Some(5), Some(5), Some(5), Some(1), None]);
        let inside = |r: Vec<bool>| (0..r.len()).filter(|&b| r[b]).collect::<Vec<_>>();
        // The if's region stops at its join: the latch is every work-item's.
        assert_eq!(inside(divergent_region(&succs, &ipdom, 2)), [3, 4]);
        // The loop's exit test: the whole loop, the test itself included.
        assert_eq!(inside(divergent_region(&succs, &ipdom, 1)), [1, 2, 3, 4, 5]);
    }
}
