//! Copy jobs and the background copy workers.
//!
//! A job is cut into chunks of a few KiB; background workers and the work-group code
//! that needs it done (a wait, a fence, the end of the group) claim chunks until none
//! is left, then wait for the ones others hold. A copy worker runs at idle priority
//! and may be stopped half-way for long; chunks bound what it can hold up to one.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use ferrocl_kernel_abi::AsyncCopy;
use parking_lot::{Condvar, Mutex};

use super::shape::{self, Chunks};
use crate::exec::fault::DriverSection;

/// Copies up to this size run when issued: the bookkeeping of a deferred copy costs
/// about as much as moving this many bytes from cache.
pub const INLINE_BYTES: usize = 256;
/// Copies from this size on are offered to the background workers; smaller ones are
/// cheaper to run at the wait than to hand over.
pub const BACKGROUND_BYTES: usize = 4 << 10;
/// Jobs waiting for a background worker; beyond this the waiters run them.
const QUEUE_LIMIT: usize = 256;
/// How long an idle background worker keeps looking for jobs before it sleeps: waking
/// a sleeping thread costs more than most copies.
const SPIN: Duration = Duration::from_micros(200);

pub struct Job {
    copy: AsyncCopy,
    chunks: Chunks,
    /// The next chunk to claim; chunks claimed by whoever increments past them.
    next: AtomicUsize,
    /// Chunks finished.
    done: AtomicUsize,
    /// A chunk faulted (an address the kernel passed is not mapped).
    failed: AtomicBool,
    /// When it was offered to the copy workers (ns since `EPOCH`; 0: not offered).
    offered_at: AtomicU64,
}

// SAFETY: the shape's addresses stay valid until the job is done: the issuing group
// completes every job before it ends (and the launch keeps the buffers alive).
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

impl Job {
    fn new(copy: &AsyncCopy) -> Arc<Job> {
        Arc::new(Job {
            copy: *copy,
            chunks: Chunks::of(copy),
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            offered_at: AtomicU64::new(0),
        })
    }

    /// Runs chunks until none is left to claim.
    fn help(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.chunks.count {
                return;
            }
            // A fault (a wild address from the kernel) fails the copy, and with it the
            // group's command, instead of killing the process; the chunk counts as done
            // so that nobody waits for it for ever.
            // SAFETY: see the `Send` impl; each chunk is claimed once.
            if crate::exec::fault::guarded(|| unsafe { self.chunks.run(&self.copy, i) }).is_err() {
                self.failed.store(true, Ordering::Release);
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Returns once the copy is done, running every chunk nobody has claimed.
    pub fn complete(&self) {
        self.help();
        let mut spins = 0u32;
        while !self.is_done() {
            spins += 1;
            if spins < 2000 {
                std::hint::spin_loop();
            } else {
                // A copy worker (at idle priority) holds a chunk and has no core: other
                // processes keep the machine busy. Copies run where they are issued for
                // a while (`issue`), and this one's core goes to the worker meanwhile.
                starved();
                std::thread::sleep(Duration::from_micros(10));
            }
        }
    }

    /// A chunk of the copy faulted.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire) >= self.chunks.count
    }

    fn started(&self) -> bool {
        self.next.load(Ordering::Relaxed) > 0
    }
}

struct Engine {
    queue: Mutex<VecDeque<Arc<Job>>>,
    work: Condvar,
    /// Jobs in `queue`, readable without the lock by spinning workers.
    queued: AtomicUsize,
    /// Workers looking for jobs without sleeping.
    awake: AtomicUsize,
    /// A sleeping worker was woken and has not run yet: at idle priority it may not get
    /// a core for a long time, and waking it again would only cost another syscall.
    waking: AtomicBool,
    workers: usize,
}

static ENGINE: LazyLock<Engine> = LazyLock::new(|| {
    let workers = crate::core::device::Device::get().host.cores as usize;
    for i in 0..workers {
        let _ = std::thread::Builder::new().name(format!("ferrocl-copy-{i}")).spawn(worker);
    }
    Engine {
        queue: Mutex::new(VecDeque::new()),
        work: Condvar::new(),
        queued: AtomicUsize::new(0),
        awake: AtomicUsize::new(0),
        waking: AtomicBool::new(false),
        workers,
    }
});

/// When copy workers last held up a waiting group (ns since `EPOCH`): the machine is
/// busy with other processes, and an idle-priority worker gets no core.
static STARVED_AT: AtomicU64 = AtomicU64::new(0);
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
/// How long after that copies are not offered to the workers. Measured on the 16-core
/// host with 16 busy processes beside the bench: async copies fell to 4.8 GB/s (47.6
/// without them) while groups waited for chunks that idle-priority workers held. With
/// 100 ms, the bench's async figures under that load were 17 or 53-58 GB/s from run to
/// run: every window that ran out let a worker be caught holding a chunk again.
const STARVED_FOR: Duration = Duration::from_secs(2);
/// A job that waited this long for a copy worker to take it: the workers get no core
/// (a worker looking for jobs spins, and one asleep wakes in tens of microseconds).
const PICKUP_LIMIT: Duration = Duration::from_micros(200);

fn starved() {
    STARVED_AT.store(now_ns(), Ordering::Relaxed);
}

fn now_ns() -> u64 {
    EPOCH.elapsed().as_nanos().max(1) as u64
}

fn recently_starved() -> bool {
    let at = STARVED_AT.load(Ordering::Relaxed);
    at != 0 && now_ns().saturating_sub(at) < STARVED_FOR.as_nanos() as u64
}

/// Starts a copy: runs it now (returning `None`) when it is small or when no core is
/// free to run it meanwhile, else returns the job, offered to the background workers
/// when it is big enough.
pub fn issue(copy: &AsyncCopy) -> Option<Arc<Job>> {
    let copy = &shape::simplified(copy);
    let bytes = shape::bytes(copy);
    // With every compute worker busy, nothing can run the copy while the group
    // computes: deferring it to the wait only adds the job's bookkeeping (measured:
    // copy-bound benchmark 13-16.5 GB/s deferred, 17-19.5 run at issue), and offering
    // it to an idle-priority worker that gets no core cost another 15%.
    let free_core = || crate::exec::occupancy::has_idle_worker() && !recently_starved();
    // A copy into local memory runs on the group's own core too, even with cores free:
    // the group reads what it copied, and reading lines another core wrote costs it as
    // much as fetching them from memory itself (tools/copy-pipeline.c, one consumer
    // streaming 16 KiB tiles: 8.0 GB/s copying them itself, 6.0-6.3 when a helper
    // copied them, 8.6-8.8 with four helpers, on the 16-core host; 14.3 and 7.1 on
    // the 2-core machine). Copies out of local memory still go to the workers: nothing
    // in the group reads their destination.
    if bytes <= INLINE_BYTES || copy.to_local != 0 || !free_core() {
        // The kernel's addresses: a fault here is the kernel's, even though the copy
        // service (a driver section) runs it.
        // SAFETY: the kernel's copy; the issuing group is running, so its memory is live.
        DriverSection::kernel(|| unsafe { shape::run(copy) });
        return None;
    }
    let job = Job::new(copy);
    if bytes >= BACKGROUND_BYTES {
        offer(&job);
    }
    Some(job)
}

/// A job that runs only when something waits for it (validation's delay mode).
pub fn deferred(copy: &AsyncCopy) -> Arc<Job> {
    Job::new(&shape::simplified(copy))
}

fn offer(job: &Arc<Job>) {
    let e = &*ENGINE;
    if e.workers == 0 {
        return;
    }
    let mut q = e.queue.lock();
    // Jobs their waiters already ran are only dropped here or by a worker.
    while q.front().is_some_and(|j| j.started()) {
        q.pop_front();
    }
    e.queued.store(q.len(), Ordering::Release);
    if q.len() >= QUEUE_LIMIT {
        return;
    }
    job.offered_at.store(now_ns(), Ordering::Relaxed);
    q.push_back(job.clone());
    e.queued.store(q.len(), Ordering::Release);
    drop(q);
    if e.awake.load(Ordering::Acquire) == 0 && !e.waking.swap(true, Ordering::AcqRel) {
        e.work.notify_one();
    }
}

fn worker() {
    // Idle priority: a copy worker only gets a core that no compute worker (or anything
    // else) wants, which is the only way a thread adds copy bandwidth without taking it
    // from the group that waits for the copy.
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscall on the calling thread with a valid parameter block.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
    let e = &*ENGINE;
    loop {
        e.awake.fetch_add(1, Ordering::AcqRel);
        e.waking.store(false, Ordering::Release);
        let mut since = Instant::now();
        loop {
            let job = match e.queued.load(Ordering::Acquire) {
                0 => None,
                _ => {
                    let mut q = e.queue.lock();
                    let j = q.pop_front();
                    e.queued.store(q.len(), Ordering::Release);
                    j
                }
            };
            match job {
                Some(j) => {
                    // Taken late: other processes hold the cores. A worker that then
                    // loses its core half-way through a chunk holds up the group
                    // waiting for it, so copies stay with the groups for a while.
                    let offered = j.offered_at.load(Ordering::Relaxed);
                    if offered != 0 && now_ns().saturating_sub(offered) > PICKUP_LIMIT.as_nanos() as u64 {
                        starved();
                    }
                    j.help();
                    since = Instant::now();
                }
                None if since.elapsed() < SPIN => std::hint::spin_loop(),
                None => break,
            }
        }
        let mut q = e.queue.lock();
        e.awake.fetch_sub(1, Ordering::AcqRel);
        if q.is_empty() {
            e.work.wait(&mut q);
        }
    }
}
