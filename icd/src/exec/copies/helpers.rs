//! Copy workers: pool workers a launch leaves idle move parts of its groups' copies.
//!
//! A launch of a kernel whose copies the driver moves (`Kernel::driver_copies`) gets a
//! `CopyQueue` (unless `FERROCL_COPY_WORKERS=0`: `FORCED`). With one group, or at most
//! a quarter as many groups as workers, and long enough to pay for waking workers, its
//! groups run on pool workers; the first copy queued calls idle workers (`offer`), who
//! stay with the launch as copy workers until its last group ends (`help`), taking parts
//! from the queue, as does a worker whose group has ended. A copy that `parts_for` gives them is split by planes,
//! lines or elements, queued, and left in flight: the group computes on while idle
//! cores move it. Its wait takes parts from the queue too, so a
//! copy never waits for a worker that is not there, and then waits for the parts others
//! took (`Flight::wait`). A part that faults (an address the kernel passed is not
//! mapped) marks its copy failed, which fails the group's command as a fault in the
//! group would.
//!
//! Where it pays (DESIGN.md "Async copies"): copies bound by latency rather than by the
//! group's own ingest (gathers of short rows, strided elements) while other cores are
//! idle. Contiguous imports never come here:
//! kernel code moves them beside its computation (`builtins/clc/workitem.c`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use ferrocl_kernel_abi::AsyncCopy;
use parking_lot::{Condvar, Mutex};

use super::shape;
use crate::exec::fault;

/// One copy's parts in flight.
#[derive(Default)]
pub(crate) struct Flight {
    /// Parts not yet moved.
    left: AtomicUsize,
    /// A part faulted.
    failed: AtomicBool,
}

impl Flight {
    /// Waits until every part has moved, moving queued parts meanwhile; `false` if one
    /// faulted. The group's own parts (and others') it takes run guarded, as its own
    /// copies do.
    pub(crate) fn wait(&self, queue: &CopyQueue) -> bool {
        let mut idle = Idle::default();
        while self.left.load(Ordering::Acquire) > 0 {
            if queue.run_one() {
                idle = Idle::default();
            } else {
                idle.pause();
            }
        }
        !self.failed.load(Ordering::Acquire)
    }
}

/// Spinning with nothing to do: a pause, and now and then the core to the scheduler, so
/// that on a machine busier than the launch thinks (other processes, more threads than
/// cores) a spinning worker does not hold up the thread it waits for.
#[derive(Default)]
struct Idle(u32);

impl Idle {
    /// Pauses; `true` where it yielded.
    fn pause(&mut self) -> bool {
        self.0 += 1;
        if self.0 % YIELD_EVERY == 0 {
            std::thread::yield_now();
            return true;
        }
        std::hint::spin_loop();
        false
    }
}

struct Part {
    copy: AsyncCopy,
    flight: Arc<Flight>,
}

/// Calls one pool worker to a launch's copies (`CopyQueue::offer`).
pub(crate) type Recruit = Box<dyn Fn() + Send + Sync>;

/// A launch's parts of copies to move, and the copy workers with it.
#[derive(Default)]
pub(crate) struct CopyQueue {
    parts: Mutex<VecDeque<Part>>,
    /// Parts queued and not taken (read without the lock).
    queued: AtomicUsize,
    /// Copy workers with the launch now.
    workers: AtomicUsize,
    /// Cores the launch leaves idle (`offer`): the most copy workers it may have.
    spare: AtomicUsize,
    /// Copy workers the queued copies want (the most parts of one, less the group's).
    want: AtomicUsize,
    /// Pool workers called so far, and how (`offer`).
    recruited: AtomicUsize,
    recruit: OnceLock<Recruit>,
    /// A copy was queued in this launch.
    gave: AtomicBool,
    /// The kernel's: its last launch with a queue gave the workers copies (`settle`).
    lately: Arc<AtomicBool>,
    /// Copy workers asleep (`help`), and where they sleep.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
}

impl CopyQueue {
    /// A queue for one launch of a kernel, whose last launches `lately` describes.
    pub(crate) fn new(lately: Arc<AtomicBool>) -> CopyQueue {
        CopyQueue { lately, ..Default::default() }
    }

    /// An empty queue for another launch of the same kernel.
    pub(crate) fn fresh(&self) -> CopyQueue {
        CopyQueue::new(self.lately.clone())
    }

    /// The pool runs the launch with `spare` cores idle, and `recruit` calls a worker.
    /// Workers are called only when a copy is queued: a launch whose copies the model
    /// keeps on the groups' cores costs nothing more than one without a queue.
    pub(crate) fn offer(&self, spare: usize, recruit: Option<Recruit>) {
        self.spare.store(spare, Ordering::Relaxed);
        if let Some(r) = recruit {
            let _ = self.recruit.set(r);
        }
    }

    /// The kernel's last launch with a queue gave the workers copies.
    pub(crate) fn gave_lately(&self) -> bool {
        self.lately.load(Ordering::Relaxed)
    }

    /// The launch has ended: the kernel's next launch knows whether this one gave the
    /// workers copies.
    pub(crate) fn settle(&self) {
        self.lately.store(self.gave.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Idle cores the launch's copies may have.
    pub(crate) fn spare(&self) -> usize {
        self.spare.load(Ordering::Relaxed)
    }

    /// Fewer workers are with the launch than its queued copies wanted: a pool worker
    /// looking for work should join. (Whether parts are left does not count: a worker
    /// called for one copy that came after the group had moved it itself stays for
    /// the next, as it is not called again.)
    pub(crate) fn wants_workers(&self) -> bool {
        self.workers() < self.want.load(Ordering::Acquire)
    }

    /// Gives `copy` to the copy workers in `parts` parts (`parts_for`), or `None` where
    /// it does not split; the caller then moves it itself.
    pub(crate) fn issue(&self, copy: &AsyncCopy, parts: usize) -> Option<Arc<Flight>> {
        let pieces = split(copy, parts);
        if pieces.len() < 2 {
            return None;
        }
        let pieces_len = pieces.len();
        let flight = Arc::new(Flight { left: AtomicUsize::new(pieces_len), failed: AtomicBool::new(false) });
        let mut q = self.parts.lock();
        q.extend(pieces.into_iter().map(|copy| Part { copy, flight: flight.clone() }));
        self.queued.store(q.len(), Ordering::SeqCst);
        drop(q);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.sleep.lock();
            self.wake.notify_all();
        }
        // Each pool worker is called once at most: one that came stays until the
        // launch ends (`help`), asleep on this queue when there is nothing to move.
        self.gave.store(true, Ordering::Relaxed);
        let want = (pieces_len - 1).min(self.spare());
        self.want.fetch_max(want, Ordering::AcqRel);
        if let Some(recruit) = self.recruit.get() {
            while self
                .recruited
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| (r < want).then_some(r + 1))
                .is_ok()
            {
                recruit();
            }
        }
        Some(flight)
    }

    /// Wakes the workers asleep in `help` (the launch's groups have ended).
    pub(crate) fn wake_all(&self) {
        let _g = self.sleep.lock();
        self.wake.notify_all();
    }

    /// How many copy workers are with the launch now.
    fn workers(&self) -> usize {
        self.workers.load(Ordering::Relaxed)
    }

    /// Moves one queued part, if there is one.
    fn run_one(&self) -> bool {
        if self.queued.load(Ordering::Acquire) == 0 {
            return false;
        }
        // Never waits for the lock: a dozen idle workers parked on it, and each unlock
        // then woke one with a system call (16-core host, a one-group launch gathering
        // 16 KiB tiles: 50 us a tile, against 6 for the group alone).
        let part = {
            let Some(mut q) = self.parts.try_lock() else { return false };
            let p = q.pop_front();
            self.queued.store(q.len(), Ordering::Release);
            p
        };
        let Some(Part { copy, flight }) = part else { return false };
        // SAFETY: a part of a copy a running group issued (its memory stays live: the
        // group waits for every part before it ends); a wild address faults into the
        // guard.
        if fault::guarded(|| unsafe { shape::run(&copy) }).is_err() {
            flight.failed.store(true, Ordering::Release);
        }
        flight.left.fetch_sub(1, Ordering::AcqRel);
        true
    }

    /// Runs as a copy worker until `done` says the launch's groups have all ended, or,
    /// asked now and then while there is nothing to move, `elsewhere` says the worker is
    /// wanted for another launch's groups.
    pub(crate) fn help(&self, done: &dyn Fn() -> bool, elsewhere: &dyn Fn() -> bool) {
        self.workers.fetch_add(1, Ordering::AcqRel);
        let mut idle = Idle::default();
        while !done() {
            if self.run_one() {
                idle = Idle::default();
            } else if idle.pause() {
                if elsewhere() {
                    break;
                }
                if idle.0 >= SLEEP_AFTER {
                    // Nothing for a while: asleep until a copy is queued or the launch
                    // ends. Spinning cores cost the working ones their clock (16-core
                    // host, a one-group launch whose copies the model left inline took
                    // 1.5x as long beside 15 spinning workers).
                    let mut g = self.sleep.lock();
                    self.sleepers.fetch_add(1, Ordering::SeqCst);
                    if self.queued.load(Ordering::SeqCst) == 0 && !done() {
                        self.wake.wait_for(&mut g, std::time::Duration::from_millis(1));
                    }
                    self.sleepers.fetch_sub(1, Ordering::SeqCst);
                    idle = Idle::default();
                }
            }
        }
        self.workers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `FERROCL_COPY_WORKERS`: `0`, no copy workers (every copy moves where it is issued);
/// `N`, every copy the driver moves goes to up to `N` workers, for A/B runs and the
/// tests. Unset (or `model`): the cost model (`model`) decides, which the bench's
/// under-subscribed sweep (`bench --only workers`) found at or above the inline engine
/// at every point (DESIGN.md "Async copies").
pub(crate) static FORCED: LazyLock<Option<usize>> =
    LazyLock::new(|| std::env::var("FERROCL_COPY_WORKERS").ok().and_then(|v| v.trim().parse().ok()));

/// Whether a launch of a kernel making driver copies gets a queue.
pub(crate) fn enabled() -> bool {
    *FORCED != Some(0)
}

/// Whether every copy goes to workers (`FERROCL_COPY_WORKERS=N`, N > 0).
pub(crate) fn forced() -> bool {
    FORCED.is_some_and(|n| n > 0)
}

/// Empty spins between yields (`Idle`), and before a copy worker sleeps (about 20 us of
/// pauses).
const YIELD_EVERY: u32 = 256;
const SLEEP_AFTER: u32 = 4 * YIELD_EVERY;

/// Rows at least this long (a cache line) move best on the group's own core, which
/// prefetches rows ahead (`shape::run`): 2D tiles of 64-byte rows 1 KiB apart ran
/// 0.63-1.20x with 1-4 groups and workers forced (16-core host, `bench --only workers
/// --copy 2D --workers 3`); plain threads gain such rows 1.0-1.7x at most
/// (`docs/measurements/dma-rows.c`): the rows cost the same however many cores fetch
/// them.
const SHORT_ROW: usize = 64;
/// Smaller copies cost less than queueing them.
const LEAST_BYTES: usize = 4096;
/// The least a part moves.
const PART_BYTES: usize = 1024;

/// How many parts `copy` goes to the copy workers in (0: the group moves it), with
/// `workers` cores the launch leaves idle.
pub(crate) fn parts_for(copy: &AsyncCopy, workers: usize) -> usize {
    match *FORCED {
        Some(0) => 0,
        // Forced: two parts at least, so that even a small copy takes the workers' path.
        Some(n) => (n + 1).min(shape::bytes(copy) / PART_BYTES).max(2),
        None => model(copy, workers),
    }
}

/// The cost model: gathers and scatters of short rows each in lines of their own on the
/// global side (latency-bound: a line fetched for each row), of 4 KiB or more, shared
/// with the workers with the launch now, up to `MOST_WORKERS`. Rows closer together
/// share lines, and the group moves them at its own bandwidth: 16-core host, a gather
/// of floats 4 apart, one to eight groups, no work, 0.41-0.63x with workers (16 apart:
/// 1.13-1.55x, double-buffered 1.52-2.39x).
fn model(copy: &AsyncCopy, workers: usize) -> usize {
    let bytes = shape::bytes(copy);
    let row = copy.per_line.saturating_mul(copy.elem);
    let pitch = match copy.to_local {
        0 => copy.dst_line,
        _ => copy.src_line,
    }
    .saturating_mul(copy.elem);
    if workers == 0 || bytes < LEAST_BYTES || row >= SHORT_ROW || pitch < 64 {
        return 0;
    }
    (workers.min(MOST_WORKERS) + 1).min(bytes / PART_BYTES)
}

/// The most workers one copy is shared with: more parts cost more handing over than
/// they save (16-core host, a double-buffered gather of 16 KiB, 1-4 groups: 1.3-2.3x
/// the inline engine with 1 or 3 workers, 0.8-2.1x with 7, 0.4-1.1x with 15).
const MOST_WORKERS: usize = 3;

/// `copy` cut into at most `parts` copies of whole planes, or of whole lines of a
/// single plane, or of elements of a single line (empty where it cannot be cut).
pub(crate) fn split(copy: &AsyncCopy, parts: usize) -> Vec<AsyncCopy> {
    let (count, stride_src, stride_dst, unit) = if copy.planes > 1 {
        (copy.planes, copy.src_plane, copy.dst_plane, copy.elem)
    } else if copy.lines > 1 {
        (copy.lines, copy.src_line, copy.dst_line, copy.elem)
    } else {
        (copy.per_line, 1, 1, copy.elem)
    };
    let parts = parts.min(count);
    if parts < 2 {
        return Vec::new();
    }
    let each = count.div_ceil(parts);
    (0..count)
        .step_by(each)
        .map(|start| {
            let n = each.min(count - start);
            let mut c = *copy;
            c.src = copy.src.wrapping_add(start.wrapping_mul(stride_src).wrapping_mul(unit));
            c.dst = copy.dst.wrapping_add(start.wrapping_mul(stride_dst).wrapping_mul(unit));
            if copy.planes > 1 {
                c.planes = n;
            } else if copy.lines > 1 {
                c.lines = n;
            } else {
                // Elements of one line.
                c.per_line = n;
                (c.src_line, c.dst_line) = (n, n);
            }
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(per_line: usize, lines: usize, planes: usize) -> AsyncCopy {
        AsyncCopy {
            dst: 1 << 20,
            src: 1 << 24,
            elem: 4,
            per_line,
            lines,
            planes,
            src_line: per_line * 3,
            src_plane: per_line * 3 * lines * 2,
            dst_line: per_line,
            dst_plane: per_line * lines,
            to_local: 1,
            hints: 0,
        }
    }

    /// Every (source, destination) byte pair of a shape, for comparing splits.
    fn pairs(c: &AsyncCopy) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for p in 0..c.planes {
            for l in 0..c.lines {
                for e in 0..c.per_line * c.elem {
                    let s = c.src + (p * c.src_plane + l * c.src_line) * c.elem + e;
                    let d = c.dst + (p * c.dst_plane + l * c.dst_line) * c.elem + e;
                    out.push((s, d));
                }
            }
        }
        out
    }

    #[test]
    fn parts_cover_the_copy_once() {
        for c in [copy(1, 1000, 1), copy(16, 7, 1), copy(8, 4, 5), copy(3000, 1, 1)] {
            for parts in [2, 3, 7, 16] {
                let pieces = split(&c, parts);
                assert!(pieces.len() >= 2 && pieces.len() <= parts, "{parts} parts: {}", pieces.len());
                let mut all: Vec<_> = pieces.iter().flat_map(pairs).collect();
                all.sort();
                let mut want = pairs(&c);
                want.sort();
                assert_eq!(all, want, "{c:?} in {parts}");
            }
        }
        assert!(split(&copy(1, 1, 1), 4).is_empty());
    }

    #[test]
    fn the_model_leaves_long_rows_and_small_copies_to_the_group() {
        // Gather of 4 KiB, rows 12 bytes apart: the group's. 16 floats apart, 3 workers:
        // four parts; 15 workers: still four.
        assert_eq!(model(&copy(1, 1024, 1), 3), 0);
        let mut far = copy(1, 1024, 1);
        far.src_line = 16;
        assert_eq!(model(&far, 3), 4);
        far.lines = 4096;
        assert_eq!(model(&far, 15), MOST_WORKERS + 1);
        // No worker, small copy, long rows.
        assert_eq!(model(&far, 0), 0);
        assert_eq!(model(&copy(1, 512, 1), 3), 0);
        assert_eq!(model(&copy(16, 64, 1), 3), 0);
    }
}
