//! How many compute workers are running work-groups. The pool counts; the copy engine
//! reads the count to decide whether a core is free to run a copy in the background
//! (with every worker busy, a copy runs where it is issued).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Compute workers in the pool (set once when it starts).
static WORKERS: AtomicUsize = AtomicUsize::new(0);
/// Workers running groups now.
static BUSY: AtomicUsize = AtomicUsize::new(0);

pub fn set_workers(n: usize) {
    WORKERS.store(n, Ordering::Relaxed);
}

/// A worker starts running groups.
pub fn enter() {
    BUSY.fetch_add(1, Ordering::Relaxed);
}

/// A worker has no group left to run.
pub fn leave() {
    BUSY.fetch_sub(1, Ordering::Relaxed);
}

/// Whether some compute worker has no group to run, so that a core is free for other
/// work (background copies). Before the pool starts every core is free.
pub fn has_idle_worker() -> bool {
    BUSY.load(Ordering::Relaxed) < WORKERS.load(Ordering::Relaxed).max(1)
}

/// Whether more threads run groups than the pool has workers: the thread that issued a
/// launch works beside every worker, so two of them share a core.
pub fn oversubscribed() -> bool {
    BUSY.load(Ordering::Relaxed) > WORKERS.load(Ordering::Relaxed).max(1)
}
