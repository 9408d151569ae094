//! How many compute workers are running work-groups. The pool counts, and reads the
//! count to tell when the thread that issued a launch would share a core with a worker.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Compute workers in the pool (set once when it starts).
static WORKERS: AtomicUsize = AtomicUsize::new(0);
/// Workers running groups now.
static BUSY: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn set_workers(n: usize) {
    WORKERS.store(n, Ordering::Relaxed);
}

/// A worker starts running groups.
pub(crate) fn enter() {
    BUSY.fetch_add(1, Ordering::Relaxed);
}

/// A worker has no group left to run.
pub(crate) fn leave() {
    BUSY.fetch_sub(1, Ordering::Relaxed);
}

/// Whether more threads run groups than the pool has workers: the thread that issued a
/// launch works beside every worker, so two of them share a core.
pub(crate) fn oversubscribed() -> bool {
    BUSY.load(Ordering::Relaxed) > WORKERS.load(Ordering::Relaxed).max(1)
}
