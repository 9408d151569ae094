//! One worker per usable core, pinned, each with its own local-memory arena and fiber
//! stacks. A job is a number of work-groups handed out in chunks from an atomic
//! counter, so fast workers take more.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::copies::helpers::{self, CopyQueue};
use super::fibers::Fibers;
use super::occupancy;
use super::spin::Spinner;

/// What a worker owns across the groups it runs.
pub(crate) struct Worker {
    /// `__local` kernel arguments of the running group (static `__local` variables
    /// are thread-local to the worker instead).
    pub(crate) arena: Vec<super::Aligned>,
    /// A private copy of the argument block, for kernels whose `__local` arguments
    /// point into this worker's arena.
    pub(crate) args: Vec<super::Aligned>,
    /// Frame memory of kernels run as barrier regions (grown as launches need).
    pub(crate) frames: Vec<super::Aligned>,
    pub(crate) fibers: Fibers,
    pub(crate) copies: super::copies::group::GroupCopies,
    /// Memory of the work-group collective functions (`Group::scratch`).
    pub(crate) scratch: Vec<super::Aligned>,
    /// Spins for the next launch before sleeping (in pools of `SPIN_MIN_WORKERS` or more).
    idle: Option<Spinner>,
    /// The pool's number for this worker (`Workers` name them); `None` for a thread
    /// outside the pool.
    index: Option<usize>,
}

/// The pool's workers a launch may run on: those of a sub-device (`clCreateSubDevices`),
/// by the pool's numbers, each pinned to its own core.
pub(crate) type Workers = Arc<[usize]>;

/// What the pool is made of, as the device describes it (`configure`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolConfig {
    /// Workers to start, one per usable core.
    pub(crate) cores: usize,
    /// Bytes of each worker's `__local` arena (the device's local memory).
    pub(crate) local_mem: usize,
}

static CONFIG: OnceLock<PoolConfig> = OnceLock::new();

/// Sets what the pool starts with; the first call counts. The device calls it when it
/// is made, before any launch can reach the pool.
pub(crate) fn configure(config: PoolConfig) {
    let _ = CONFIG.set(config);
}

fn config() -> PoolConfig {
    *CONFIG.get().expect("the device configures the pool before its first launch")
}

impl Worker {
    fn new() -> Worker {
        let PoolConfig { cores, local_mem: local } = config();
        Worker {
            arena: super::aligned_zeroed(local),
            args: Vec::new(),
            frames: Vec::new(),
            fibers: Fibers::default(),
            copies: Default::default(),
            scratch: super::aligned_zeroed(ferrocl_kernel_abi::COLLECTIVE_SCRATCH),
            idle: (cores >= SPIN_MIN_WORKERS).then(|| Spinner::new(BACK_OFF)),
            index: None,
        }
    }

    /// Unmarks every work-item as in a sub-group call (`COLLECTIVE_MARKS`).
    pub(crate) fn clear_collective_marks(&mut self) {
        use ferrocl_kernel_abi::{COLLECTIVE_MARKS, COLLECTIVE_SCRATCH};
        // SAFETY: the scratch holds COLLECTIVE_SCRATCH bytes, the marks its last ones.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(self.scratch.as_mut_ptr().cast::<u8>(), COLLECTIVE_SCRATCH) };
        bytes[COLLECTIVE_MARKS..].fill(0);
    }
}

thread_local! {
    /// Worker state for threads outside the pool that run a group themselves.
    static CALLER: std::cell::RefCell<Option<Worker>> = const { std::cell::RefCell::new(None) };
}

/// Runs a range of groups; returns how many failed (a kernel fault).
type GroupFn = dyn Fn(&mut Worker, std::ops::Range<usize>) -> usize + Send + Sync;

pub(crate) struct Job {
    next: AtomicUsize,
    total: usize,
    chunk: usize,
    done: AtomicUsize,
    failed: AtomicBool,
    /// Time the threads spent running groups, summed (kept for launches left to the
    /// workers, whose estimate cannot come from the issuing thread).
    ran_ns: Option<AtomicU64>,
    run: Box<GroupFn>,
    /// The launch's copy workers: workers that find no group left stay with the job to
    /// move its groups' copies until its last group ends.
    copies: Option<Arc<CopyQueue>>,
    /// The workers that may run it (`None`: any thread).
    only: Option<Workers>,
    finished: Mutex<bool>,
    wake: Condvar,
}

impl Job {
    /// Whether the worker of this number (`None`: a thread outside the pool) may take
    /// part.
    fn admits(&self, worker: Option<usize>) -> bool {
        self.only.as_ref().map_or(true, |only| worker.is_some_and(|i| only.contains(&i)))
    }

    /// Groups are left to hand out, or the job wants copy workers until its groups end.
    fn open(&self) -> bool {
        self.next.load(Ordering::Relaxed) < self.total
            || self.copies.as_ref().is_some_and(|q| self.done.load(Ordering::Acquire) < self.total && q.wants_workers())
    }
}

struct Shared {
    jobs: Mutex<VecDeque<Arc<Job>>>,
    work: Condvar,
}

pub(crate) struct Pool {
    shared: Arc<Shared>,
    pub(crate) workers: usize,
}

static POOL: LazyLock<Pool> = LazyLock::new(Pool::start);

/// Bumped each time an issuing thread calls for helpers, after the job is queued:
/// workers spinning between launches watch it instead of sleeping on `Shared::work`.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Calls for helpers: one (the start of a chain) or all of them.
fn call_helpers(shared: &Shared, all: bool) {
    CALLS.fetch_add(1, Ordering::Release);
    if all {
        shared.work.notify_all();
    } else {
        shared.work.notify_one();
    }
}

impl Pool {
    pub(crate) fn get() -> &'static Pool {
        &POOL
    }

    fn start() -> Pool {
        let usable = config().cores;
        let shared = Arc::new(Shared { jobs: Mutex::new(VecDeque::new()), work: Condvar::new() });
        // Only the workers that started count: a launch left to the workers alone must
        // not wait for threads the system refused to create.
        let workers = (0..usable)
            .filter(|&i| {
                let shared = shared.clone();
                let core = cpu_of_worker(i).map(|id| core_affinity::CoreId { id });
                std::thread::Builder::new()
                    .name(format!("ferrocl-worker-{i}"))
                    .spawn(move || {
                        if let Some(c) = core {
                            core_affinity::set_for_current(c);
                        }
                        let mut w = Worker::new();
                        w.index = Some(i);
                        worker_loop(&shared, &mut w);
                    })
                    .is_ok()
            })
            .count();
        occupancy::set_workers(workers);
        Pool { shared, workers }
    }

    /// Runs `run(worker, group)` for every group in `0..total` and returns when all
    /// have finished; `false` if any failed or panicked (a driver bug, reported as an
    /// error). `merged` groups at a time run as one (`Launch::merge`).
    /// `only`: the workers of the sub-device the launch runs on; its groups run on them
    /// alone, never on the issuing thread.
    pub(crate) fn run(
        &self,
        total: usize,
        merged: usize,
        group_ns: &AtomicU64,
        copies: Option<Arc<CopyQueue>>,
        only: Option<Workers>,
        run: Box<GroupFn>,
    ) -> bool {
        if total == 0 {
            return true;
        }
        // The workers this launch has: the sub-device's, or all.
        let workers = only.as_ref().map_or(self.workers, |o| o.len());
        let restricted = only.is_some();
        let estimate = group_ns.load(Ordering::Relaxed).saturating_mul(total as u64);
        let offered = copies.is_some();
        // One group, or at most a quarter as many as workers, with copy workers: the
        // groups run on pinned workers, and idle workers are called to move their
        // copies when the first is queued (`copies::helpers`). Not with more: copy
        // workers joining in the last wave of a full launch gained nothing (16-core
        // host, 16 and 64 groups gathering: 0.79-1.14x), and with half as many groups
        // as workers a gather of floats 16 apart ran 0.56-0.77x (`bench --only
        // workers`). Nor in a launch its kernel's recent groups say is short (or that
        // has not run yet): leaving the issuing thread and waking a worker would cost
        // more than helpers could save (unless the workers are forced, for the tests).
        let copies = copies.filter(|_| {
            total < workers
                && (total == 1 || 4 * total <= workers)
                && (estimate >= COPY_WORKERS_NS || helpers::forced())
        });
        // One group runs on the issuing thread: waking a worker and waiting for it costs
        // more than the group. So does one with copy workers whose kernel's last such
        // launch gave them nothing: on a pinned worker its group ran slower than on the
        // issuing thread (2-core machine, a gather of floats 4 apart, which the model
        // keeps on the group's core, 1 group: best of six 2.64 ms against 2.56). Its
        // copies go to a queue no worker joins (the group moves what it queues), so that
        // the next launch knows whether to go to the workers. The issuing thread does
        // not call workers: one pinned to its core took it from the group (the same
        // machine, floats 16 apart: 6.2-6.5 ms against 3.9-4.3 on the workers).
        if total == 1 && !restricted && !copies.as_ref().is_some_and(|q| q.gave_lately()) {
            if let Some(q) = &copies {
                q.offer(1, workers - 1, None);
            }
            return CALLER.with(|w| {
                let mut w = w.borrow_mut();
                let w = w.get_or_insert_with(Worker::new);
                // A kernel that could have copy workers learns how long its groups take.
                let start = offered.then(Instant::now);
                let ok = catch_unwind(AssertUnwindSafe(|| run(w, 0..1))).is_ok_and(|failed| failed == 0);
                if let Some(start) = start {
                    note_group_ns(group_ns, (start.elapsed().as_nanos() as u64).max(1));
                }
                if let Some(q) = &copies {
                    q.settle();
                }
                ok
            });
        }
        if let Some(q) = &copies {
            let shared = self.shared.clone();
            let recruit: helpers::Recruit = Box::new(move || {
                // Under the lock, so that a worker between finding no job and sleeping
                // cannot miss the call.
                drop(shared.jobs.lock());
                call_helpers(&shared, false);
            });
            q.offer(total, workers - total, Some(recruit));
        }
        let idle_cores = copies.is_some();
        // Enough chunks per worker to balance uneven groups, few enough that the
        // counter is not contended: at most 64 calls of the launcher, whose groups may
        // be merged ones (saxpy over 64 MiB in groups of 64, merged by 64, on the 2-core
        // machine, chunks of 64 / 4,096 groups, three rounds, medians: 42.4 / 52.4, 38.1
        // / 64.7, 39.2 / 39.7 GB/s).
        // Whole calls: a chunk of 100 groups merged by 64 ran as calls of 64 and 36.
        let merged = merge_width(merged, total, workers);
        let chunk = (total / (workers.max(1) * 8)).clamp(1, 64 * merged).next_multiple_of(merged);
        // The issuing thread works on the groups at once. Helpers come one at a time:
        // one woken, and each helper that finds more than its own chunk left wakes the
        // next, so no thread pays for waking every worker (with 16 workers that was most
        // of a small launch). A launch the kernel's recent groups say will take less than
        // a wake-up wakes nobody, unless it runs past that.
        let solo = estimate != 0 && estimate < SOLO_NS;
        // A long launch wakes every helper at once: on cores shared with other
        // processes each woken helper waits for the scheduler before it can wake the
        // next, and a chain of 16 such waits outlasted the launch (saxpy beside 16 busy
        // processes on the 16-core host: 25 GB/s, PoCL 55). Against such a launch the
        // wake-ups' system calls are nothing.
        // A launch leaving cores to copy workers goes to the workers (below), its few
        // groups woken one by one, and its copies call more when they are queued.
        let all = estimate >= WAKE_ALL_NS || idle_cores;
        // Such a launch with few groups (up to two per worker), each a large part of the
        // launch, runs on the workers alone. The issuing thread is not pinned: a group it
        // took shared a core with a pinned worker's group until the scheduler moved it,
        // and the launch waited for that group (16 groups on the 16-core host, six runs
        // on two instances: the bench's double-buffered / synchronous ratios moved
        // 0.86-1.45, left to the workers 0.91-1.07). So does one that keeps each of
        // four or more workers busy for `ALONE_NS`: there the issuing thread adds little
        // and its collisions cost much (16-core host, workers spinning between launches,
        // saxpy over 64 MiB launch after launch, medians of three runs each: idle
        // 363-395 -> 376-406 GB/s, beside 16 busy processes 30-44 -> 82-97; whole bench,
        // two runs each: SGEMM 91-93 -> 110-112 GFLOP/s, async round trip 148-160 ->
        // 199-221 GB/s). With two workers the issuing thread is a third of the launch's
        // threads while they wake up: left out, the 2-core machine's region kernels lost
        // 10-17% (session 23).
        // So does a launch leaving cores to copy workers: the issuing thread would take
        // a core one of them could use (and is not one of them).
        // A sub-device's launch runs on its workers alone: they are its cores.
        let to_workers = restricted
            || (all
                && workers > 0
                && (total <= 2 * workers
                    || (workers >= ALONE_MIN_WORKERS && estimate / workers as u64 >= ALONE_NS)
                    || idle_cores));
        let job = Arc::new(Job {
            next: AtomicUsize::new(0),
            total,
            chunk,
            done: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            ran_ns: to_workers.then(|| AtomicU64::new(0)),
            run,
            copies,
            only,
            finished: Mutex::new(false),
            wake: Condvar::new(),
        });
        self.shared.jobs.lock().push_back(job.clone());
        let start = Instant::now();
        let at = solo.then(|| start + Duration::from_nanos(SOLO_NS));
        let (ran, waking) = if to_workers {
            // Only some workers may take a restricted job: all are called, since the one
            // a single call wakes might not be one of them.
            call_helpers(&self.shared, !idle_cores || restricted);
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
        if let Some(ran_ns) = &job.ran_ns {
            // The estimate follows the groups' own time on the workers, so that a kernel
            // whose groups got shorter is worked on by the issuing thread again. The
            // launch's time would not do: beside busy processes it is mostly the wait for
            // the last woken worker to get a core, and an estimate fed with it kept a
            // kernel of 16 tiny groups on the workers for good (16-core host, beside 16
            // busy processes: 1,000-8,000 launches/s back to back).
            note_group_ns(group_ns, (ran_ns.load(Ordering::Acquire) / total as u64).max(1));
        }
        if let Some(q) = &job.copies {
            q.settle();
        }
        // Workers drop exhausted jobs only when they look for the next one; remove it
        // now so the launch (and the buffers it keeps alive) goes away with this call.
        self.shared.jobs.lock().retain(|j| !Arc::ptr_eq(j, &job));
        !job.failed.load(Ordering::Acquire)
    }
}

/// The CPU worker `i` is pinned to (the CPUs this process may use, in turn).
pub(crate) fn cpu_of_worker(i: usize) -> Option<usize> {
    static CPUS: LazyLock<Vec<usize>> =
        LazyLock::new(|| core_affinity::get_core_ids().unwrap_or_default().iter().map(|c| c.id).collect());
    (!CPUS.is_empty()).then(|| CPUS[i % CPUS.len()])
}

/// Folds one launch's time per group into the kernel's moving average (the first sets it).
fn note_group_ns(group_ns: &AtomicU64, per_group: u64) {
    let old = group_ns.load(Ordering::Relaxed);
    group_ns.store(next_estimate(old, per_group), Ordering::Relaxed);
}

/// The moving average after one more launch. One launch moves it up at most fourfold: a
/// thread that lost its core for a time slice in the middle of a launch of tiny groups
/// measured milliseconds a group, and a single such launch made the next ones wake
/// every worker.
fn next_estimate(old: u64, per_group: u64) -> u64 {
    if old == 0 {
        per_group
    } else {
        (old * 3 + per_group.min(old.saturating_mul(4))) / 4
    }
}

/// A launch whose groups together cost less than this runs on the issuing thread
/// alone: waking a sleeping worker takes about as long.
const SOLO_NS: u64 = 8_000;
/// A launch its kernel's recent groups say will take this long wakes all helpers at once.
const WAKE_ALL_NS: u64 = 100_000;
/// Launches shorter than this (by the same estimate) move their copies on the groups'
/// cores: a launch with copy workers goes to the pool's workers, and waking one and
/// waiting for it takes 10-60 us on the 2-core machine, whose workers sleep between
/// launches.
const COPY_WORKERS_NS: u64 = 500_000;
/// A launch that keeps every worker busy this long runs on the workers alone, when the
/// pool has at least `ALONE_MIN_WORKERS` of them (`Pool::run` says why).
const ALONE_NS: u64 = 300_000;
const ALONE_MIN_WORKERS: usize = 4;

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
    let mut let_in = false;
    loop {
        // The issuing thread works until every worker has joined in, then leaves the
        // rest to them: beside all of them it shares some worker's core, and the two
        // take turns in scheduler slices that can hold a chunk, and the launch, up for
        // milliseconds.
        if issuer && ran > 0 {
            // Only once helpers were called: the groups left must have someone to run
            // them. Other launches' issuing threads count as busy too, so with a few
            // application threads launching at once the count said "oversubscribed"
            // while every worker slept, and each issuer, still inside its solo window,
            // left its groups to helpers it had not called (8 threads launching
            // 8-group kernels on the 2-core machine hung in 2 of 6 runs).
            if wake.is_none() && occupancy::oversubscribed() {
                break;
            }
            // A long launch woke every helper and some have not joined: one may be
            // pinned to the core this thread runs on, and wait there for its time slice
            // while this thread holds the core, and the launch then runs on one thread
            // fewer. Between chunks, holding none, it lets that worker in. Saxpy over
            // 64 MiB on the 2-core machine, launch by launch, three rounds of medians:
            // 50.2, 48.7, 51.1 GB/s without, 71.8, 68.8, 68.8 with (PoCL about 70); perf
            // had put 47% of the samples on the queue's thread and 37% on the workers.
            // Not for short launches: there the yields were most of the time (16 groups
            // of 64, each waited for: 2.1 -> 8.0 us). Nor after a yield that kept the
            // core away for a time slice with helpers still missing: whoever took it
            // (another process, or a worker while another has yet to come), more
            // yields would only wait for more slices, and this thread is what runs
            // the launch meanwhile.
            if let_in {
                let_in = !super::spin::yield_core();
            }
        }
        if let Some(Wake { at, all, shared }) = wake {
            if chunks == check_at {
                check_at = (check_at * 4).max(1);
                if !at.is_some_and(|at| Instant::now() < at) && job.next.load(Ordering::Relaxed) < job.total {
                    let t = Instant::now();
                    call_helpers(shared, all);
                    waking = t.elapsed();
                    let_in = all;
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
        let began = job.ran_ns.is_some().then(Instant::now);
        let failures = catch_unwind(AssertUnwindSafe(|| (job.run)(w, start..end)));
        if let (Some(ran_ns), Some(began)) = (&job.ran_ns, began) {
            ran_ns.fetch_add(began.elapsed().as_nanos() as u64, Ordering::AcqRel);
        }
        if !matches!(failures, Ok(0)) {
            job.failed.store(true, Ordering::Release);
        }
        if job.done.fetch_add(end - start, Ordering::AcqRel) + (end - start) == job.total {
            *job.finished.lock() = true;
            job.wake.notify_all();
            if let Some(q) = &job.copies {
                q.wake_all();
            }
        }
    }
    occupancy::leave();
    (ran, waking)
}

fn worker_loop(shared: &Shared, w: &mut Worker) {
    loop {
        let job = next_job(shared, w);
        // More than one chunk left: the next helper is worth waking.
        if job.next.load(Ordering::Relaxed) + job.chunk < job.total {
            // A restricted job's next helper may be any of the sleepers.
            if job.only.is_some() {
                shared.work.notify_all();
            } else {
                shared.work.notify_one();
            }
        }
        let (ran, _) = work_on(&job, w, None);
        // A worker that ran groups stays to move copies until the launch ends; one
        // called to them stays while they want it.
        if let Some(q) = job.copies.as_ref().filter(|q| ran > 0 || q.wants_workers()) {
            let elsewhere = || {
                shared.jobs.try_lock().is_some_and(|jobs| {
                    jobs.iter().any(|j| !Arc::ptr_eq(j, &job) && j.next.load(Ordering::Relaxed) < j.total)
                })
            };
            q.help(w.index.unwrap_or(0), &|| job.done.load(Ordering::Acquire) >= job.total, &elsewhere);
        }
    }
}

/// The oldest job with groups left to hand out that worker `w` may take (exhausted ones
/// are dropped).
fn open_job(jobs: &mut VecDeque<Arc<Job>>, worker: Option<usize>) -> Option<Arc<Job>> {
    jobs.retain(|j| j.open());
    jobs.iter().find(|j| j.admits(worker)).cloned()
}

/// Waits for a job: first spinning on `CALLS` for `IDLE_SPIN` (if this worker spins and
/// its core was not found shared lately), then asleep on the condition variable.
fn next_job(shared: &Shared, w: &mut Worker) -> Arc<Job> {
    let index = w.index;
    let mut jobs = shared.jobs.lock();
    if let Some(idle) = w.idle.as_mut().filter(|s| s.may_spin()) {
        if let Some(j) = open_job(&mut jobs, index) {
            return j;
        }
        // Calls made before this point left their jobs in the queue, seen above; a job
        // queued after it comes with a call, which the spin sees.
        let seen = CALLS.load(Ordering::Acquire);
        drop(jobs);
        idle.spin(IDLE_SPIN, || CALLS.load(Ordering::Acquire) != seen);
        jobs = shared.jobs.lock();
    }
    loop {
        if let Some(j) = open_job(&mut jobs, index) {
            return j;
        }
        shared.work.wait(&mut jobs);
    }
}

/// How long a worker with nothing to do spins before it sleeps. A program's next launch
/// usually follows within microseconds, and a sleeping worker costs it a wake-up, and on
/// a VM its core's return to speed: on the 16-core host, saxpy over 64 MiB launch after
/// launch, medians of three runs, 257-263 GB/s with workers that slept at once, 363-395
/// spinning 1 ms (session 23, another instance: 350-370 spinning 200 us).
const IDLE_SPIN: Duration = Duration::from_millis(1);
/// Workers spin only in pools this large. With two, a spinning worker always shares a
/// core with the application's thread, and beside two busy processes the 2-core
/// machine's bench lost with spinning workers: in-cache gather 14.5-17.3 GB/s in six
/// runs against 15.8-21.4 (medians 16.0 and 19.0), barrier cost 1.04 ns in two
/// against 0.53; idle, they gained nothing there.
const SPIN_MIN_WORKERS: usize = 4;
/// After a spin found the core shared, a worker sleeps at once for this long. Beside
/// busy processes, workers that spun joined every launch at once and lost their cores
/// holding chunks (session 23: the in-cache gather beside 16 busy processes fell from
/// 25-35 to 10-16 GB/s).
const BACK_OFF: Duration = Duration::from_secs(1);

/// Groups a call of the launcher runs (`Launch::merge`), no more than leaves two calls
/// per worker: the 64 groups of a grid-stride loop (`cts-runner bench --only shapes`),
/// merged by 64, were one call on one core, 0.08 G elements/s on 2 cores and on 16
/// (PoCL 0.23 and 1.27).
fn merge_width(merged: usize, total: usize, workers: usize) -> usize {
    merged.max(1).min((total / (workers.max(1) * 2)).max(1))
}

#[cfg(test)]
mod tests {
    use super::merge_width;

    #[test]
    fn an_issuer_that_called_no_helper_runs_every_group_itself() {
        use super::*;
        configure(PoolConfig { cores: 2, local_mem: 1024 });
        occupancy::set_workers(2);
        // Two other launches' issuing threads are running groups: the count says
        // oversubscribed, while the pool's workers sleep.
        occupancy::enter();
        occupancy::enter();
        let shared = Shared { jobs: Mutex::new(VecDeque::new()), work: Condvar::new() };
        let job = Job {
            next: AtomicUsize::new(0),
            total: 8,
            chunk: 2,
            done: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            ran_ns: None,
            run: Box::new(|_, _| 0),
            copies: None,
            only: None,
            finished: Mutex::new(false),
            wake: Condvar::new(),
        };
        // A solo launch: helpers are due only after an hour.
        let wake = Wake { at: Some(Instant::now() + Duration::from_secs(3600)), all: false, shared: &shared };
        let calls = CALLS.load(Ordering::Acquire);
        let (ran, _) = work_on(&job, &mut Worker::new(), Some(wake));
        occupancy::leave();
        occupancy::leave();
        assert_eq!(CALLS.load(Ordering::Acquire), calls, "no helper was called");
        assert_eq!((ran, job.done.load(Ordering::Acquire)), (8, 8), "so nobody else would have run the rest");
        assert!(*job.finished.lock());
    }

    #[test]
    fn merged_calls_leave_every_worker_some() {
        // saxpy over 64 MiB in groups of 64: merged by 64, as before.
        assert_eq!(merge_width(64, 262_144, 16), 64);
        // 64 groups: two calls per worker on 16 workers, 16 per call on 2.
        assert_eq!(merge_width(64, 64, 16), 2);
        assert_eq!(merge_width(64, 64, 2), 16);
        // Fewer groups than workers, no workers, no merging asked: a group a call.
        assert_eq!(merge_width(64, 8, 16), 1);
        assert_eq!(merge_width(64, 8, 0), 4);
        assert_eq!(merge_width(1, 1000, 2), 1);
    }

    use super::next_estimate;

    #[test]
    fn the_first_launch_sets_the_estimate() {
        assert_eq!(next_estimate(0, 5_000), 5_000);
    }

    #[test]
    fn one_preempted_launch_moves_the_estimate_at_most_fourfold() {
        // 100 ns groups, then one launch whose thread lost its core for 4 ms.
        let after = next_estimate(100, 4_000_000 / 16);
        assert_eq!(after, (300 + 400) / 4);
        // Fast launches bring it back.
        let mut e = after;
        for _ in 0..8 {
            e = next_estimate(e, 100);
        }
        assert!(e < 120, "{e}");
    }

    #[test]
    fn a_kernel_that_got_heavier_is_followed() {
        let mut e = 100;
        let mut launches = 0;
        while e < 90_000 {
            e = next_estimate(e, 100_000);
            launches += 1;
        }
        assert!(launches <= 40, "{launches}");
    }
}
