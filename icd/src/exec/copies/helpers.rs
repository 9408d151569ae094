//! Copy workers: pool workers a launch leaves idle move parts of its groups' copies.
//!
//! A launch of a kernel whose copies the driver moves (`Kernel::driver_copies`) gets a
//! `CopyQueue` (unless `FERROCL_COPY_WORKERS=0`: `FORCED`). With one group, or at most
//! a quarter as many groups as workers, and long enough to pay for waking workers, its
//! groups run on pool workers; the first copy queued calls idle workers (`offer`), who
//! stay with the launch as copy workers until its last group ends (`help`), as does a
//! worker whose group has ended. A copy that `parts_for` gives them goes into a slot of
//! the queue, cut into parts by planes, lines or elements, and is left in flight: the
//! group computes on while idle cores move it. Its event names the slot (`Flight`).
//! Parts are taken by index with one compare-and-swap, nothing locked or allocated, and
//! the group's wait takes the parts no worker has taken, so a copy never waits for a
//! worker that is not there, then waits for the parts others took (`Flight::wait`).
//! A part that faults (an address the kernel passed is not mapped) marks its copy
//! failed, which fails the group's command as a fault in the group would.
//!
//! Where it pays (DESIGN.md "Async copies"): copies bound by latency rather than by the
//! group's own ingest (gathers of short rows, strided elements) while other cores are
//! idle. Contiguous imports never come here:
//! kernel code moves them beside its computation (`builtins/clc/workitem.c`).

use std::cell::UnsafeCell;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use ferrocl_kernel_abi::AsyncCopy;
use parking_lot::{Condvar, Mutex};

use super::shape;
use crate::exec::fault;

/// One copy in flight: where it sits in its launch's queue (`CopyQueue::issue`).
pub(crate) struct Flight {
    slot: u32,
    /// Never 0 (`Option<Flight>` is 8 bytes, as the `Arc` it replaced).
    generation: NonZeroU32,
}

impl Flight {
    /// Waits until every part has moved, moving the parts no worker has taken; `false`
    /// if one faulted. The parts it moves run guarded, as the group's own copies do.
    pub(crate) fn wait(&self, queue: &CopyQueue) -> bool {
        let slot = &queue.slots[self.slot as usize];
        while let Some(part) = queue.claim(self.slot as usize, self.generation.get()) {
            queue.run_part(slot, part);
        }
        // Every part is taken: the rest are moving on workers that are running them.
        let mut idle = Idle::default();
        while slot.left.load(Ordering::Acquire) > 0 {
            idle.pause();
        }
        let ok = !slot.failed.load(Ordering::Acquire);
        queue.used.fetch_and(!(1u64 << self.slot), Ordering::AcqRel);
        ok
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

/// A value alone in its pair of cache lines: the queue's words are written by one
/// thread while a dozen others spin reading another (each write to a shared line cost
/// the issuing group ~0.2 us; an issue touching six of them took 1-2 us, 16-core host).
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A copy in flight, cut into `parts` parts taken by index.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    /// The copy's generation (high 32 bits) and the parts taken so far (low 32): a part
    /// is taken by one compare-and-swap, which fails for a copy the slot no longer holds.
    state: AtomicU64,
    parts: AtomicUsize,
    /// Parts not yet moved.
    left: AtomicUsize,
    /// A part faulted.
    failed: AtomicBool,
    /// Written by the issuing group before the slot is published, read by whoever
    /// takes a part while the copy is in flight.
    copy: UnsafeCell<AsyncCopy>,
}

// SAFETY: `copy` is written only while the slot is unpublished (its bit in `used` held
// by the issuing group, and no part of it can be taken: `state`'s generation is new),
// and read only by a thread that has taken a part of it, which the group's wait
// outlasts.
unsafe impl Sync for Slot {}

/// Copies a launch can have in flight at once (a bit each in `CopyQueue::used`).
const SLOTS: usize = 64;

/// Calls one pool worker to a launch's copies (`CopyQueue::offer`).
pub(crate) type Recruit = Box<dyn Fn() + Send + Sync>;

/// A launch's copies in flight, and the copy workers with it.
pub(crate) struct CopyQueue {
    slots: Box<[Slot]>,
    /// Slots holding a copy with parts left to take: what spinning workers read.
    active: Padded<AtomicU64>,
    /// Slots holding a copy not yet waited for.
    used: Padded<AtomicU64>,
    /// Copy workers with the launch now.
    workers: Padded<AtomicUsize>,
    /// Copy workers asleep (`help`), and where they sleep.
    sleepers: Padded<AtomicUsize>,
    /// Cores the launch leaves idle (`offer`): the most copy workers it may have; and
    /// its groups, who share them.
    spare: AtomicUsize,
    groups: AtomicUsize,
    /// Copy workers the queued copies want (the most parts of one, less the group's).
    want: AtomicUsize,
    /// Pool workers called so far, and how (`offer`).
    recruited: AtomicUsize,
    recruit: OnceLock<Recruit>,
    /// A copy was queued in this launch.
    gave: AtomicBool,
    /// The kernel's: its last launch with a queue gave the workers copies (`settle`).
    lately: Arc<AtomicBool>,
    sleep: Mutex<()>,
    wake: Condvar,
}

impl CopyQueue {
    /// A queue for one launch of a kernel, whose last launches `lately` describes.
    pub(crate) fn new(lately: Arc<AtomicBool>) -> CopyQueue {
        CopyQueue {
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
            active: Padded::default(),
            used: Padded::default(),
            workers: Padded::default(),
            sleepers: Padded::default(),
            spare: AtomicUsize::new(0),
            groups: AtomicUsize::new(1),
            want: AtomicUsize::new(0),
            recruited: AtomicUsize::new(0),
            recruit: OnceLock::new(),
            gave: AtomicBool::new(false),
            lately,
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// An empty queue for another launch of the same kernel.
    pub(crate) fn fresh(&self) -> CopyQueue {
        CopyQueue::new(self.lately.clone())
    }

    /// The pool runs the launch's `groups` groups with `spare` cores idle, and `recruit`
    /// calls a worker. Workers are called only when a copy is queued: a launch whose
    /// copies the model keeps on the groups' cores costs nothing more than one without
    /// a queue.
    pub(crate) fn offer(&self, groups: usize, spare: usize, recruit: Option<Recruit>) {
        self.spare.store(spare, Ordering::Relaxed);
        self.groups.store(groups.max(1), Ordering::Relaxed);
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

    /// Idle cores one group's copies may have: the launch's, shared by its groups.
    pub(crate) fn spare(&self) -> usize {
        self.spare.load(Ordering::Relaxed) / self.groups.load(Ordering::Relaxed)
    }

    /// Fewer workers are with the launch than its queued copies wanted: a pool worker
    /// looking for work should join. (Whether parts are left does not count: a worker
    /// called for one copy that came after the group had moved it itself stays for
    /// the next, as it is not called again.)
    pub(crate) fn wants_workers(&self) -> bool {
        self.workers() < self.want.load(Ordering::Acquire)
    }

    /// Gives `copy` to the copy workers in `parts` parts (`parts_for`), or `None` where
    /// it does not split or the launch has `SLOTS` copies in flight; the caller then
    /// moves it itself.
    pub(crate) fn issue(&self, copy: &AsyncCopy, parts: usize) -> Option<Flight> {
        // No empty parts: 4 parts of 5 lines would be 2 + 2 + 1 + 0.
        let count = pieces(copy);
        let parts = count.div_ceil(count.div_ceil(parts.clamp(1, count.max(1))));
        if parts < 2 {
            return None;
        }
        let mut used = self.used.load(Ordering::Relaxed);
        let slot = loop {
            let free = (!used).trailing_zeros() as usize;
            if free >= SLOTS {
                return None;
            }
            match self.used.compare_exchange_weak(used, used | 1 << free, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => break free,
                Err(now) => used = now,
            }
        };
        let s = &self.slots[slot];
        // Its last copy was waited for: every part taken and moved, nobody reads it.
        let last = (s.state.load(Ordering::Acquire) >> 32) as u32;
        let generation = NonZeroU32::new(last.wrapping_add(1)).unwrap_or(NonZeroU32::MIN);
        // SAFETY: the slot is this thread's (its `used` bit) and unpublished.
        unsafe { *s.copy.get() = *copy };
        s.parts.store(parts, Ordering::Relaxed);
        s.left.store(parts, Ordering::Relaxed);
        s.failed.store(false, Ordering::Relaxed);
        s.state.store(u64::from(generation.get()) << 32, Ordering::Release);
        self.active.fetch_or(1 << slot, Ordering::AcqRel);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.sleep.lock();
            self.wake.notify_all();
        }
        if !self.gave.load(Ordering::Relaxed) {
            self.gave.store(true, Ordering::Relaxed);
        }
        // Each pool worker is called once at most: one that came stays until the
        // launch ends (`help`), asleep on this queue when there is nothing to move.
        let want = ((parts - 1) * self.groups.load(Ordering::Relaxed)).min(self.spare.load(Ordering::Relaxed));
        if self.want.load(Ordering::Relaxed) < want {
            self.want.fetch_max(want, Ordering::AcqRel);
        }
        if let Some(recruit) = self.recruit.get() {
            while self.recruited.load(Ordering::Relaxed) < want
                && self
                    .recruited
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| (r < want).then_some(r + 1))
                    .is_ok()
            {
                recruit();
            }
        }
        Some(Flight { slot: slot as u32, generation })
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

    /// Takes the next part of the copy of `generation` in `slot`, if one is left.
    fn claim(&self, slot: usize, generation: u32) -> Option<usize> {
        let s = &self.slots[slot];
        let mut state = s.state.load(Ordering::Acquire);
        loop {
            let taken = (state & u32::MAX as u64) as usize;
            let parts = s.parts.load(Ordering::Relaxed);
            if (state >> 32) as u32 != generation || taken >= parts {
                return None;
            }
            match s.state.compare_exchange_weak(state, state + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if taken + 1 == parts {
                        // The last part: spinning workers need not look here again.
                        self.active.fetch_and(!(1 << slot), Ordering::AcqRel);
                    }
                    return Some(taken);
                }
                Err(now) => state = now,
            }
        }
    }

    /// Moves part `part` of the copy in `s`, which this thread has taken.
    fn run_part(&self, s: &Slot, part: usize) {
        // SAFETY: the copy stays in the slot until its group's wait, which waits for
        // this part (`left`).
        let copy = unsafe { *s.copy.get() };
        let piece = nth_part(&copy, s.parts.load(Ordering::Relaxed), part);
        // SAFETY: a part of a copy a running group issued (its memory stays live: the
        // group waits for every part before it ends); a wild address faults into the
        // guard.
        if fault::guarded(|| unsafe { shape::run(&piece) }).is_err() {
            s.failed.store(true, Ordering::Release);
        } else if piece.to_local != 0 {
            // The group reads its import next: from the shared cache, not by snooping
            // this core's (16-core host, 1-4 groups, 4 parts, balanced compute: floats
            // 4 apart 1.09-1.55x the inline engine without, 1.46-1.81x with; 2D rows
            // of 64 bytes 1.13-1.68x and 1.56-1.83x).
            shape::demote_destination(&piece);
        }
        s.left.fetch_sub(1, Ordering::AcqRel);
    }

    /// Moves one part of any copy in flight, starting the search at slot `from`.
    fn run_one(&self, from: usize) -> bool {
        let active = self.active.load(Ordering::Acquire);
        if active == 0 {
            return false;
        }
        // Workers start at different slots, so that with several copies in flight they
        // do not all contend for the same one.
        let rotated = active.rotate_right((from % SLOTS) as u32);
        let mut bits = rotated;
        while bits != 0 {
            let slot = (bits.trailing_zeros() as usize + from) % SLOTS;
            bits &= bits - 1;
            let generation = (self.slots[slot].state.load(Ordering::Acquire) >> 32) as u32;
            if let Some(part) = self.claim(slot, generation) {
                self.run_part(&self.slots[slot], part);
                return true;
            }
        }
        false
    }

    /// Runs as copy worker `me` until `done` says the launch's groups have all ended,
    /// or, asked now and then while there is nothing to move, `elsewhere` says the
    /// worker is wanted for another launch's groups.
    pub(crate) fn help(&self, me: usize, done: &dyn Fn() -> bool, elsewhere: &dyn Fn() -> bool) {
        self.workers.fetch_add(1, Ordering::AcqRel);
        let mut idle = Idle::default();
        while !done() {
            if self.run_one(me) {
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
                    if self.active.load(Ordering::SeqCst) == 0 && !done() {
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

/// Rows at least this long (a cache line) stay on the group's own core, which
/// prefetches rows ahead (`shape::run`): 2D tiles of 64-byte rows 1 KiB apart ran
/// 0.82-1.23x with 1-4 groups and 3 workers forced (16-core host, `bench --only workers
/// --copy 2D --workers 3`), plain threads 0.66-1.22x (`docs/measurements/dma-sweep.c`):
/// what the workers save, the group's reads of the lines they wrote cost again.
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

/// The cost model: gathers and scatters of rows shorter than a cache line (strided
/// elements, 2D and 3D tiles of short rows), of 4 KiB or more, shared with the workers
/// the launch leaves each group, up to `MOST_WORKERS`. Contiguous copies (one row after
/// `shape::simplified`) and longer rows stay with the group. 16-core host, 1-4 groups,
/// four parts, compute none / balanced: floats 16 apart 1.7-2.4x / 1.4-2.2x the inline
/// engine, 4 apart 1.1-1.3x / 1.1-1.3x (`bench --only workers`).
fn model(copy: &AsyncCopy, workers: usize) -> usize {
    let bytes = shape::bytes(copy);
    let row = copy.per_line.saturating_mul(copy.elem);
    let gather = copy.lines > 1 || copy.planes > 1;
    if workers == 0 || bytes < LEAST_BYTES || row >= SHORT_ROW || !gather {
        return 0;
    }
    (workers.min(MOST_WORKERS) + 1).min(bytes / PART_BYTES)
}

/// The most workers one copy is shared with: more parts cost more handing over than
/// they save (16-core host, gathers of floats 16 apart, compute none and balanced: one
/// group 2.5-2.6x the inline engine with 7 workers, 2.1-2.3x with 3; two groups 1.6-2.1x
/// and 2.1-2.4x).
const MOST_WORKERS: usize = 3;

/// The units `copy` cuts into: its planes, or the lines of its one plane, or the
/// elements of its one line; and their count and strides.
fn units(copy: &AsyncCopy) -> (usize, usize, usize) {
    if copy.planes > 1 {
        (copy.planes, copy.src_plane, copy.dst_plane)
    } else if copy.lines > 1 {
        (copy.lines, copy.src_line, copy.dst_line)
    } else {
        (copy.per_line, 1, 1)
    }
}

/// The most parts `copy` cuts into.
fn pieces(copy: &AsyncCopy) -> usize {
    units(copy).0
}

/// Part `k` of `copy` cut into `parts` parts of whole planes, or of whole lines of a
/// single plane, or of elements of a single line (`parts` at most `pieces(copy)`; a
/// part past the end is empty).
fn nth_part(copy: &AsyncCopy, parts: usize, k: usize) -> AsyncCopy {
    let (count, stride_src, stride_dst) = units(copy);
    let each = count.div_ceil(parts.max(1));
    let start = (k * each).min(count);
    let n = each.min(count - start);
    let mut c = *copy;
    c.src = copy.src.wrapping_add(start.wrapping_mul(stride_src).wrapping_mul(copy.elem));
    c.dst = copy.dst.wrapping_add(start.wrapping_mul(stride_dst).wrapping_mul(copy.elem));
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
                let parts = parts.min(pieces(&c));
                let mut all: Vec<_> = (0..parts).map(|k| nth_part(&c, parts, k)).flat_map(|p| pairs(&p)).collect();
                all.sort();
                let mut want = pairs(&c);
                want.sort();
                assert_eq!(all, want, "{c:?} in {parts}");
            }
        }
        assert_eq!(pieces(&copy(1, 1, 1)), 1);
    }

    #[test]
    fn the_model_leaves_long_rows_and_small_copies_to_the_group() {
        // Gathers of 4 KiB, floats 3 or 16 apart, 3 workers: four parts; 15 workers:
        // still four.
        assert_eq!(model(&copy(1, 1024, 1), 3), 4);
        let mut far = copy(1, 1024, 1);
        far.src_line = 16;
        assert_eq!(model(&far, 3), 4);
        far.lines = 4096;
        assert_eq!(model(&far, 15), MOST_WORKERS + 1);
        // 2D rows of 8 bytes: parts; of 64: the group's.
        assert_eq!(model(&copy(2, 2048, 1), 3), 4);
        assert_eq!(model(&copy(16, 256, 1), 3), 0);
        // No worker, small copy, contiguous.
        assert_eq!(model(&far, 0), 0);
        assert_eq!(model(&copy(1, 512, 1), 3), 0);
        assert_eq!(model(&copy(4096, 1, 1), 3), 0);
    }
}
