//! One worker per usable core, pinned, each with its own local-memory arena and fiber
//! stacks. A job is a number of work-groups handed out in chunks from an atomic
//! counter, so fast workers take more.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::fibers::Fibers;
use super::occupancy;
use crate::core::device::Device;

/// What a worker owns across the groups it runs.
pub struct Worker {
    /// `__local` kernel arguments of the running group (static `__local` variables
    /// are thread-local to the worker instead).
    pub arena: Vec<super::Aligned>,
    /// A private copy of the argument block, for kernels whose `__local` arguments
    /// point into this worker's arena.
    pub args: Vec<super::Aligned>,
    /// Frame memory of kernels run as barrier regions (grown as launches need).
    pub frames: Vec<super::Aligned>,
    pub fibers: Fibers,
    pub copies: super::copies::group::GroupCopies,
    /// Memory of the work-group collective functions (`Group::scratch`).
    pub scratch: Vec<super::Aligned>,
}

impl Worker {
    fn new() -> Worker {
        let local = Device::get().limits.local_mem_size as usize;
        Worker {
            arena: super::aligned_zeroed(local),
            args: Vec::new(),
            frames: Vec::new(),
            fibers: Fibers::default(),
            copies: Default::default(),
            scratch: super::aligned_zeroed(ferrocl_kernel_abi::COLLECTIVE_SCRATCH),
        }
    }
}

thread_local! {
    /// Worker state for threads outside the pool that run a group themselves.
    static CALLER: std::cell::RefCell<Option<Worker>> = const { std::cell::RefCell::new(None) };
}

/// Runs a range of groups; returns how many failed (a kernel fault).
type GroupFn = dyn Fn(&mut Worker, std::ops::Range<usize>) -> usize + Send + Sync;

pub struct Job {
    next: AtomicUsize,
    total: usize,
    chunk: usize,
    done: AtomicUsize,
    failed: AtomicBool,
    run: Box<GroupFn>,
    finished: Mutex<bool>,
    wake: Condvar,
}

struct Shared {
    jobs: Mutex<VecDeque<Arc<Job>>>,
    work: Condvar,
}

pub struct Pool {
    shared: Arc<Shared>,
    pub workers: usize,
}

static POOL: LazyLock<Pool> = LazyLock::new(Pool::start);

impl Pool {
    pub fn get() -> &'static Pool {
        &POOL
    }

    fn start() -> Pool {
        let usable = Device::get().host.cores as usize;
        let shared = Arc::new(Shared { jobs: Mutex::new(VecDeque::new()), work: Condvar::new() });
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        // Only the workers that started count: a launch left to the workers alone must
        // not wait for threads the system refused to create.
        let workers = (0..usable)
            .filter(|&i| {
                let shared = shared.clone();
                let core = cores.get(i % cores.len().max(1)).copied();
                std::thread::Builder::new()
                    .name(format!("ferrocl-worker-{i}"))
                    .spawn(move || {
                        if let Some(c) = core {
                            core_affinity::set_for_current(c);
                        }
                        worker_loop(&shared, &mut Worker::new());
                    })
                    .is_ok()
            })
            .count();
        occupancy::set_workers(workers);
        Pool { shared, workers }
    }

    /// Runs `run(worker, group)` for every group in `0..total` and returns when all
    /// have finished; `false` if any failed or panicked (a driver bug, reported as an
    /// error).
    pub fn run(&self, total: usize, group_ns: &AtomicU64, run: Box<GroupFn>) -> bool {
        if total == 0 {
            return true;
        }
        // One group: waking a worker and waiting for it costs more than the group.
        if total == 1 {
            return CALLER.with(|w| {
                let mut w = w.borrow_mut();
                let w = w.get_or_insert_with(Worker::new);
                catch_unwind(AssertUnwindSafe(|| run(w, 0..1))).is_ok_and(|failed| failed == 0)
            });
        }
        // Enough chunks per worker to balance uneven groups, few enough that the
        // counter is not contended.
        let chunk = (total / (self.workers.max(1) * 8)).clamp(1, 64);
        let job = Arc::new(Job {
            next: AtomicUsize::new(0),
            total,
            chunk,
            done: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            run,
            finished: Mutex::new(false),
            wake: Condvar::new(),
        });
        self.shared.jobs.lock().push_back(job.clone());
        // The issuing thread works on the groups at once. Helpers come one at a time:
        // one woken, and each helper that finds more than its own chunk left wakes the
        // next, so no thread pays for waking every worker (with 16 workers that was most
        // of a small launch). A launch the kernel's recent groups say will take less than
        // a wake-up wakes nobody, unless it runs past that.
        let estimate = group_ns.load(Ordering::Relaxed).saturating_mul(total as u64);
        let solo = estimate != 0 && estimate < SOLO_NS;
        // A long launch wakes every helper at once: on cores shared with other
        // processes each woken helper waits for the scheduler before it can wake the
        // next, and a chain of 16 such waits outlasted the launch (saxpy beside 16 busy
        // processes on the 16-core host: 25 GB/s, PoCL 55). Against such a launch the
        // wake-ups' system calls are nothing.
        let all = estimate >= WAKE_ALL_NS;
        // Such a launch with few groups (up to two per worker), each a large part of the
        // launch, runs on the workers alone. The issuing thread is not pinned: a group it
        // took shared a core with a pinned worker's group until the scheduler moved it,
        // and the launch waited for that group (16 groups on the 16-core host, six runs
        // on two instances: the bench's double-buffered / synchronous ratios moved
        // 0.86-1.45, left to the workers 0.91-1.07). With more groups it works while the
        // workers wake up, as before (left to the workers, the whole bench's figures
        // moved within the host's noise).
        let to_workers = all && self.workers > 0 && total <= 2 * self.workers;
        let start = Instant::now();
        let at = solo.then(|| start + Duration::from_nanos(SOLO_NS));
        let (ran, waking) = if to_workers {
            self.shared.work.notify_all();
            (0, start.elapsed())
        } else {
            CALLER.with(|w| {
                let mut w = w.borrow_mut();
                work_on(&job, w.get_or_insert_with(Worker::new), Some(Wake { at, all, shared: &self.shared }))
            })
        };
        if ran > 0 {
            // A moving average of what the issuing thread saw, less the wake-up's system
            // call: counted in, it kept launches that woke helpers above the solo limit
            // (16 groups of 64 back to back: 190,000-280,000 launches/s in the runs that
            // fell into it, 590,000-900,000 in the others).
            let spent = start.elapsed().saturating_sub(waking);
            note_group_ns(group_ns, (spent.as_nanos() as u64 / ran as u64).max(1));
        }
        if job.done.load(Ordering::Acquire) < total {
            // Helpers finish their last chunks: a short spin saves a sleep and a wake-up
            // for them; the condition variable covers long groups (and a busy machine).
            let until = Instant::now() + Duration::from_micros(20);
            while job.done.load(Ordering::Acquire) < total && Instant::now() < until {
                std::hint::spin_loop();
            }
            let mut finished = job.finished.lock();
            while !*finished {
                job.wake.wait(&mut finished);
            }
        }
        if to_workers {
            // The estimate follows the launch's time, as if each worker had run an equal
            // share, so that a kernel whose groups got shorter is worked on by the
            // issuing thread again.
            let busy = self.workers.min(total) as u128;
            note_group_ns(group_ns, ((start.elapsed().as_nanos() * busy / total as u128) as u64).max(1));
        }
        // Workers drop exhausted jobs only when they look for the next one; remove it
        // now so the launch (and the buffers it keeps alive) goes away with this call.
        self.shared.jobs.lock().retain(|j| !Arc::ptr_eq(j, &job));
        !job.failed.load(Ordering::Acquire)
    }
}

/// Folds one launch's time per group into the kernel's moving average (the first sets it).
fn note_group_ns(group_ns: &AtomicU64, per_group: u64) {
    let old = group_ns.load(Ordering::Relaxed);
    group_ns.store(if old == 0 { per_group } else { (old * 3 + per_group) / 4 }, Ordering::Relaxed);
}

/// A launch whose groups together cost less than this runs on the issuing thread
/// alone: waking a sleeping worker takes about as long.
const SOLO_NS: u64 = 8_000;
/// A launch its kernel's recent groups say will take this long wakes all helpers at once.
const WAKE_ALL_NS: u64 = 100_000;

/// When the issuing thread wakes helpers: `at` (at once without a deadline), and `all`
/// of them or the first of a chain.
#[derive(Clone, Copy)]
struct Wake<'a> {
    at: Option<Instant>,
    all: bool,
    shared: &'a Shared,
}

/// Runs chunks of `job` until none is left; returns how many groups this thread ran,
/// and the time waking a helper took.
/// With `wake`, the issuing thread wakes the first helper (or all of them) when the time
/// comes and chunks are still left.
fn work_on(job: &Job, w: &mut Worker, mut wake: Option<Wake>) -> (usize, Duration) {
    occupancy::enter();
    let mut ran = 0;
    // A solo launch reads the clock after 1, 4, 16, 64, ... chunks: reading it before
    // each chunk was a tenth of back-to-back small launches (clock_gettime in a VM), and
    // this way a wake-up is late by at most three times the time already spent.
    let mut check_at = if wake.as_ref().is_some_and(|w| w.at.is_some()) { 1 } else { 0 };
    let mut chunks = 0usize;
    let mut waking = Duration::ZERO;
    let issuer = wake.is_some();
    loop {
        // The issuing thread works until every worker has joined in, then leaves the
        // rest to them: beside all of them it shares some worker's core, and the two
        // take turns in scheduler slices that can hold a chunk, and the launch, up for
        // milliseconds.
        if issuer && ran > 0 && occupancy::oversubscribed() {
            break;
        }
        if let Some(Wake { at, all, shared }) = wake {
            if chunks == check_at {
                check_at = (check_at * 4).max(1);
                if !at.is_some_and(|at| Instant::now() < at) && job.next.load(Ordering::Relaxed) < job.total {
                    let t = Instant::now();
                    if all {
                        shared.work.notify_all();
                    } else {
                        shared.work.notify_one();
                    }
                    waking = t.elapsed();
                    wake = None;
                }
            }
        }
        chunks += 1;
        let start = job.next.fetch_add(job.chunk, Ordering::Relaxed);
        if start >= job.total {
            break;
        }
        ran += job.chunk.min(job.total - start);
        let end = (start + job.chunk).min(job.total);
        // Every group runs, even after one failed.
        let failures = catch_unwind(AssertUnwindSafe(|| (job.run)(w, start..end)));
        if !matches!(failures, Ok(0)) {
            job.failed.store(true, Ordering::Release);
        }
        if job.done.fetch_add(end - start, Ordering::AcqRel) + (end - start) == job.total {
            *job.finished.lock() = true;
            job.wake.notify_all();
        }
    }
    occupancy::leave();
    (ran, waking)
}

fn worker_loop(shared: &Shared, w: &mut Worker) {
    loop {
        let job = {
            let mut jobs = shared.jobs.lock();
            loop {
                match jobs.front() {
                    Some(j) if j.next.load(Ordering::Relaxed) < j.total => break j.clone(),
                    Some(_) => {
                        jobs.pop_front();
                    }
                    None => shared.work.wait(&mut jobs),
                }
            }
        };
        // More than one chunk left: the next helper is worth waking.
        if job.next.load(Ordering::Relaxed) + job.chunk < job.total {
            shared.work.notify_one();
        }
        work_on(&job, w, None);
    }
}
