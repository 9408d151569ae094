//! One work-group's async copies: every work-item calls each copy with the same
//! arguments; the first to arrive issues it and all get the same event. Work-items
//! reach copies (and fences) in the same order, so a per-work-item count of the copy
//! operations it has passed names the operation it is at.
//!
//! Events are small integers (1, 2, ...) valid within the group; anything else a kernel
//! passes (the Khronos CTS fence tests pass an uninitialised `event_t`) is an event the
//! group never created, treated as complete and never dereferenced.

use std::sync::Arc;

use ferrocl_kernel_abi::{AsyncCopy, CopyLog, Group, HINT_STREAM};

use super::helpers::{self, CopyQueue, Flight};
use super::shape;
use super::validate::{Mode, Validator, MODE};
use crate::exec::fault::{self, DriverSection};

enum Op {
    /// `held`: validation's delay mode keeps the copy (simplified) until something
    /// waits for it; `flight`: copy workers move its parts (`helpers`); every other
    /// copy has run when it was issued.
    Copy {
        event: usize,
        held: Option<AsyncCopy>,
        flight: Option<Flight>,
        copy: AsyncCopy,
    },
    Fence,
}

/// A worker's async-copy state for the group it runs. Kernel code sees `log` (the
/// group's `copies` points at this struct, whose first field it is).
#[repr(C)]
pub(crate) struct GroupCopies {
    log: CopyLog,
    /// Copy operations (copies and fences) each work-item has passed.
    reached: Vec<u32>,
    ops: Vec<Op>,
    /// The event of each operation (0 for fences), for `log`.
    op_events: Vec<usize>,
    /// Events handed out so far (events are 1..=events).
    events: usize,
    /// Events waited for and complete, to hand out again: waiting releases an event,
    /// and small numbers keep waits on the kernel-side fast path (events 1 to 64).
    free: Vec<usize>,
    /// The operations joined in each event (index: event), so completing an event does
    /// not scan every copy the group has made.
    event_ops: Vec<Vec<usize>>,
    /// Kernels run as barrier regions wait at the end of the region (`settle`): the
    /// events past 64 their work-items waited for in it (the others are bits in `log`).
    pending: Vec<usize>,
    defer: bool,
    /// The launch streams through more memory than the cache holds (`HINT_STREAM`).
    stream: bool,
    /// Set in validation mode.
    check: Option<Box<Validator>>,
    /// A held copy faulted (an address the kernel passed is not mapped).
    failed: bool,
    /// The launch's copy workers, for a kernel whose copies the driver moves.
    queue: Option<Arc<CopyQueue>>,
    /// A copy or fence reached the driver in this group: `begin` and `finish` have
    /// state to reset (most kernels make none, and a group of 64 work-items of a
    /// streaming kernel is over in ~100 ns, as long as resetting everything took).
    dirty: bool,
}

impl Default for GroupCopies {
    fn default() -> GroupCopies {
        GroupCopies {
            log: CopyLog {
                reached: std::ptr::null_mut(),
                items: 0,
                events: std::ptr::null(),
                ops: 0,
                issued: 0,
                waited: 0,
                defer: 0,
                slow: 0,
                settle: 0,
                pending: 0,
                deferred: Default::default(),
            },
            reached: Vec::new(),
            ops: Vec::new(),
            op_events: Vec::new(),
            events: 0,
            free: Vec::new(),
            event_ops: Vec::new(),
            pending: Vec::new(),
            defer: false,
            stream: false,
            check: None,
            failed: false,
            queue: None,
            dirty: false,
        }
    }
}

impl GroupCopies {
    /// Prepares for a group of `items` work-items; `regions`: the kernel runs as barrier
    /// regions (waits settle at the region's end); `stream`: the launch's buffers exceed
    /// the cache; `queue`: the launch's copy workers.
    pub(crate) fn begin(&mut self, items: usize, regions: bool, stream: bool, queue: Option<&Arc<CopyQueue>>) {
        // Imports the last group deferred and never waited for: nothing can read them.
        self.log.pending = 0;
        if self.queue.as_ref().map(Arc::as_ptr) != queue.map(Arc::as_ptr) {
            self.queue = queue.cloned();
        }
        // Only the driver's copies and fences (`arrive`) and the kernel-side fast
        // paths after them (which need an operation in the log) count in `reached`:
        // after a group that made none, the state is as this group needs it.
        if !self.dirty && self.reached.len() == items && self.defer == regions && self.stream == stream {
            return;
        }
        if self.dirty || self.reached.len() != items {
            self.reached.clear();
            self.reached.resize(items, 0);
        }
        self.dirty = false;
        self.defer = regions;
        self.stream = stream;
        self.sync_log();
    }

    /// Points `log` at the current state (after anything that may move the vectors).
    fn sync_log(&mut self) {
        self.log.reached = self.reached.as_mut_ptr();
        self.log.items = self.reached.len();
        self.log.events = self.op_events.as_ptr();
        self.log.ops = self.op_events.len();
        self.log.issued = self.events;
        self.log.defer = self.defer as u32;
        self.log.slow = (*MODE != Mode::Off) as u32;
        self.log.settle = self.needs_settle() as usize;
    }

    /// Whether the end of a region that waited for nothing still has work for `settle`:
    /// events past 64 waited for, or operations to forget. Kernel code skips the call
    /// otherwise.
    fn needs_settle(&self) -> bool {
        !self.pending.is_empty() || (self.ops.len() >= FORGET_AT && self.check.is_none())
    }

    /// The validator for this group, in validation mode.
    pub(crate) fn validator(&mut self) -> Option<&mut Validator> {
        if *MODE == Mode::Off {
            return None;
        }
        Some(self.check.get_or_insert_with(Default::default))
    }

    /// The group has ended: completes whatever it left in flight (a group must not end
    /// with copies still writing its local memory) and forgets its events. `false`
    /// when one of its copies faulted.
    pub(crate) fn finish(&mut self) -> bool {
        if !self.dirty && self.check.is_none() {
            return true;
        }
        let mut ok = true;
        if let Some(v) = self.check.as_mut().filter(|_| *MODE != Mode::Off) {
            v.finish(&self.reached, self.ops.len(), &(1..=self.events).collect::<Vec<_>>());
        }
        for op in &mut self.ops {
            Self::release(op, &mut self.failed, self.queue.as_deref());
        }
        ok &= !std::mem::take(&mut self.failed);
        self.ops.clear();
        self.op_events.clear();
        self.events = 0;
        self.free.clear();
        self.event_ops.iter_mut().for_each(Vec::clear);
        self.pending.clear();
        self.log.waited = 0;
        self.sync_log();
        ok
    }

    /// The operation index work-item `item` is at, and whether it is the first there.
    fn arrive(&mut self, item: usize) -> (usize, bool) {
        self.dirty = true;
        let Some(r) = self.reached.get_mut(item) else { return (usize::MAX, false) };
        let k = *r as usize;
        *r += 1;
        (k, k == self.ops.len())
    }

    fn copy(&mut self, item: usize, c: &AsyncCopy, event: usize) -> usize {
        let (k, first) = self.arrive(item);
        if !first {
            return match self.ops.get(k) {
                Some(Op::Copy { event, copy, .. }) => {
                    if copy != c {
                        if let Some(v) = self.check.as_mut() {
                            v.divergent(item, k);
                        }
                    }
                    *event
                }
                _ => {
                    if let Some(v) = self.check.as_mut() {
                        v.divergent(item, k);
                    }
                    0
                }
            };
        }
        let event = if (1..=self.events).contains(&event) {
            event
        } else if let Some(e) = self.free.pop() {
            self.event_ops[e].clear();
            e
        } else {
            self.events += 1;
            self.events
        };
        if self.event_ops.len() <= event {
            self.event_ops.resize_with(event + 1, Vec::new);
        }
        self.event_ops[event].push(self.ops.len());
        let issued = shape::simplified(&AsyncCopy { hints: if self.stream { HINT_STREAM } else { 0 }, ..*c });
        // In validation mode an invalid copy is reported and skipped: its event completes
        // at once. Every other copy moves now: on copy workers where the cost model
        // sends it (`helpers::parts_for`), else on the group's own core.
        let mut flight = None;
        let held = match self.check.as_mut().map(|v| v.issued(item, c)) {
            Some(false) => None,
            Some(true) if *MODE == Mode::Delay => Some(issued),
            _ => {
                flight = self.queue.as_ref().and_then(|q| q.issue(&issued, helpers::parts_for(&issued, q.spare())));
                if flight.is_none() {
                    // The kernel's addresses: a fault here is the kernel's, even though
                    // the copy service (a driver section) runs it.
                    // SAFETY: the kernel's copy; its group is running, so its memory is live.
                    DriverSection::kernel(|| unsafe { shape::run(&issued) });
                }
                None
            }
        };
        self.ops.push(Op::Copy { event, held, flight, copy: *c });
        self.op_events.push(event);
        self.sync_log();
        event
    }

    fn complete_event(&mut self, event: usize) {
        for i in 0..self.event_ops.get(event).map_or(0, Vec::len) {
            let k = self.event_ops[event][i];
            Self::release(&mut self.ops[k], &mut self.failed, self.queue.as_deref());
        }
    }

    /// Runs a copy validation's delay mode held back, or waits for the parts copy
    /// workers move, if `op` is one. A fault (a wild address from the kernel) fails the
    /// group's command instead of the process.
    fn release(op: &mut Op, failed: &mut bool, queue: Option<&CopyQueue>) {
        if let Op::Copy { held, flight, .. } = op {
            if let Some(c) = held.take() {
                // SAFETY: the kernel's copy, checked by the validator; its group is running.
                *failed |= fault::guarded(|| unsafe { shape::run(&c) }).is_err();
            }
            if let (Some(f), Some(q)) = (flight.take(), queue) {
                *failed |= !f.wait(q);
            }
        }
    }

    fn wait(&mut self, item: usize, events: &[usize]) {
        if let Some(v) = self.check.as_mut() {
            for &e in events {
                if (1..=self.events).contains(&e) {
                    v.waited(item, e);
                } else {
                    v.unknown_event(item, e);
                }
            }
        }
        let known = 1..=self.events;
        for &e in events.iter().filter(|&&e| known.contains(&e)) {
            if self.defer {
                if e <= 64 {
                    self.log.waited |= 1 << (e - 1);
                } else if !self.pending.contains(&e) {
                    self.pending.push(e);
                    self.log.settle = 1;
                }
            } else {
                self.complete_event(e);
            }
        }
    }

    fn fence(&mut self, item: usize) {
        let (_, first) = self.arrive(item);
        if first {
            // Copies before the fence complete before any after it starts.
            for op in &mut self.ops {
                Self::release(op, &mut self.failed, self.queue.as_deref());
            }
            self.ops.push(Op::Fence);
            self.op_events.push(0);
            self.sync_log();
        }
    }

    /// The end of a region: completes the events waited for in it, which every
    /// work-item has now passed, so they are released for reuse. (Outside regions,
    /// events are not reused: a work-item may still be about to wait for one.)
    fn settle(&mut self) {
        let mut bits = std::mem::take(&mut self.log.waited);
        // Taken and put back so that its allocation is reused group after group.
        let mut pending = std::mem::take(&mut self.pending);
        let from_bits = std::iter::from_fn(|| {
            (bits != 0).then(|| {
                let e = bits.trailing_zeros() as usize + 1;
                bits &= bits - 1;
                e
            })
        });
        for e in from_bits.chain(pending.drain(..)) {
            self.complete_event(e);
            // Released events keep their (completed) operations: a kernel waiting again
            // on a released event (an error) waits for nothing, or for its new copy.
            if self.check.is_none() && !self.free.contains(&e) {
                self.free.push(e);
            }
        }
        self.pending = pending;
        self.forget_passed();
        self.log.settle = self.needs_settle() as usize;
    }

    /// Drops the operations at the front that every work-item has passed and that are
    /// done, renumbering the rest. A group streaming thousands of tiles kept every copy
    /// it made, and each new one landed on memory the cache no longer held (perf, a tile
    /// streamed in and out on 2 cores: the push of the op was a tenth of the kernel's
    /// time, now 2-4%). Operations are named by their index in `ops` (the work-items'
    /// `reached` counts, `log.events`, `event_ops`); an event whose operations were all
    /// dropped is complete.
    fn forget_passed(&mut self) {
        if self.ops.len() < FORGET_AT || self.check.is_some() {
            return;
        }
        let passed = self.reached.iter().copied().min().unwrap_or(0) as usize;
        let done = self.ops[..passed.min(self.ops.len())]
            .iter()
            .take_while(|op| match op {
                Op::Copy { held, flight, .. } => held.is_none() && flight.is_none(),
                Op::Fence => true,
            })
            .count();
        if done == 0 {
            return;
        }
        self.ops.drain(..done);
        self.op_events.drain(..done);

        for r in &mut self.reached {
            *r -= done as u32;
        }
        for list in &mut self.event_ops {
            list.retain(|&k| k >= done);
            list.iter_mut().for_each(|k| *k -= done);
        }
        self.sync_log();
    }
}

/// Operations a group keeps before `forget_passed` looks for ones to drop: enough that
/// renumbering is rare next to the copies.
const FORGET_AT: usize = 8;

/// The group's copy state, if the driver gave it one.
///
/// # Safety
/// `group` is the group of the calling work-item, whose `copies` is null or points at
/// the running worker's state, used by this thread only while the group runs.
unsafe fn state<'a>(group: *const Group) -> Option<&'a mut GroupCopies> {
    // SAFETY: the caller's contract.
    unsafe { group.as_ref().and_then(|g| (g.copies as *mut GroupCopies).as_mut()) }
}

/// # Safety
/// Called by kernel code with its own group (and, for `copy`, a shape it built; for
/// `wait`, its array of `count` events).
pub(crate) unsafe extern "C" fn copy(group: *const Group, item: usize, c: *const AsyncCopy, event: usize) -> usize {
    // SAFETY: kernel code passes its group and a shape on its stack (read here, where a
    // wild pointer is the kernel's fault, not inside the driver section).
    let (st, c) = unsafe { (state(group), *c) };
    match st {
        Some(st) => {
            let _driver = DriverSection::enter();
            st.copy(item, &c, event)
        }
        None => {
            // SAFETY: the kernel's copy, while its group runs.
            unsafe { shape::run(&c) };
            1
        }
    }
}

/// # Safety
/// Called by kernel code with its own group (and, for `copy`, a shape it built; for
/// `wait`, its array of `count` events).
pub(crate) unsafe extern "C" fn wait(group: *const Group, item: usize, count: u32, events: *const usize) {
    // SAFETY: as for `copy`; `events` is the kernel's array of `count` events.
    if let Some(st) = unsafe { state(group) } {
        if !events.is_null() {
            // The kernel's array is read outside the driver section (a wild pointer is the
            // kernel's fault), a few events at a time.
            let mut buf = [0usize; 16];
            for start in (0..count as usize).step_by(buf.len()) {
                let n = buf.len().min(count as usize - start);
                for (i, b) in buf[..n].iter_mut().enumerate() {
                    // SAFETY: inside the kernel's array of `count` events.
                    *b = unsafe { events.add(start + i).read() };
                }
                let _driver = DriverSection::enter();
                st.wait(item, &buf[..n]);
            }
        }
    }
}

/// # Safety
/// Called by kernel code with its own group (and, for `copy`, a shape it built; for
/// `wait`, its array of `count` events).
pub(crate) unsafe extern "C" fn fence(group: *const Group, item: usize, _flags: u32) {
    // SAFETY: as for `copy`.
    if let Some(st) = unsafe { state(group) } {
        let _driver = DriverSection::enter();
        st.fence(item);
    }
}

/// # Safety
/// Called by kernel code with its own group (and, for `copy`, a shape it built; for
/// `wait`, its array of `count` events).
pub(crate) unsafe extern "C" fn settle(group: *const Group) {
    // SAFETY: as for `copy`.
    if let Some(st) = unsafe { state(group) } {
        let _driver = DriverSection::enter();
        st.settle();
    }
}
