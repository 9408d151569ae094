//! `stress`: many application threads using one context at once, as a server or a
//! pipeline does. Each thread loops over a verified chain of commands (write, kernel,
//! copy, fill, read, sometimes a map and a user-event gate), on a queue shared by all
//! threads or on its own in-order or out-of-order queue, with an event callback on
//! every launch; an optional thread launches faulting kernels meanwhile. The report
//! counts commands, wrong results, errors and callbacks, and the process's memory
//! before and after.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cl;
use crate::cl::*;
use crate::session::{arg, check, Session};

const SOURCE: &str = "kernel void add(global int *x, int v) { x[get_global_id(0)] += v; }\n\
    kernel void wild(global int *x) { if (get_global_id(0) == 3) *(volatile global int *)(ulong)16 = 1;\n\
    x[get_global_id(0)] = 1; }\n";

#[derive(Default)]
struct Counts {
    commands: AtomicU64,
    chains: AtomicU64,
    wrong: AtomicU64,
    errors: AtomicU64,
    callbacks: AtomicU64,
    launches: AtomicU64,
    faults_reported: AtomicU64,
    faults_missed: AtomicU64,
}

/// What a run found.
pub struct Report {
    pub threads: usize,
    pub seconds: f64,
    pub commands: u64,
    pub chains: u64,
    pub wrong: u64,
    pub errors: u64,
    pub launches: u64,
    pub callbacks: u64,
    pub faults_reported: u64,
    pub faults_missed: u64,
    pub rss_before_mib: f64,
    pub rss_after_mib: f64,
    pub first_error: Option<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.wrong == 0 && self.errors == 0 && self.callbacks == self.launches && self.faults_missed == 0
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        writeln!(f, "threads                 {}", self.threads)?;
        writeln!(f, "seconds                 {:.1}", self.seconds)?;
        writeln!(f, "commands                {} ({:.0}/s)", self.commands, self.commands as f64 / self.seconds)?;
        writeln!(f, "verified chains         {}", self.chains)?;
        writeln!(f, "wrong results           {}", self.wrong)?;
        writeln!(f, "errors                  {}", self.errors)?;
        writeln!(f, "launch callbacks        {} of {}", self.callbacks, self.launches)?;
        writeln!(
            f,
            "faulting launches       {} failed as they must, {} did not",
            self.faults_reported, self.faults_missed
        )?;
        write!(
            f,
            "resident memory         {:.0} MiB before, {:.0} MiB after",
            self.rss_before_mib, self.rss_after_mib
        )?;
        if let Some(e) = &self.first_error {
            write!(f, "\nfirst error             {e}")?;
        }
        Ok(())
    }
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

/// Handles shared between the threads (OpenCL objects may be used from any thread).
#[derive(Clone, Copy)]
struct Shared {
    context: usize,
    device: usize,
    queue: usize,
    program: usize,
}

unsafe extern "C" fn counted(_: cl_event, _: cl_int, data: *mut c_void) {
    // SAFETY: `data` is the run's `Counts`, which outlives every command (threads finish
    // their queues before the run returns).
    unsafe { (*(data as *const Counts)).callbacks.fetch_add(1, Ordering::Relaxed) };
}

/// A small xorshift: each thread's choices differ and a run can be repeated.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Runs `threads` threads for `seconds`, plus a faulting thread when `faults`.
pub fn run(s: &Session, threads: usize, seconds: f64, faults: bool) -> Result<Report, String> {
    let program = s.build(SOURCE)?;
    let shared = Shared {
        context: s.context as usize,
        device: s.device as usize,
        queue: s.queue() as usize,
        program: program as usize,
    };
    let counts = Arc::new(Counts::default());
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let rss_before_mib = rss_mib();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let mut handles = Vec::new();
    for t in 0..threads {
        let (counts, first_error) = (counts.clone(), first_error.clone());
        handles.push(std::thread::spawn(move || {
            if let Err(e) = worker(shared, t as u64, deadline, &counts) {
                counts.errors.fetch_add(1, Ordering::Relaxed);
                first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            }
        }));
    }
    if faults {
        let (counts, first_error) = (counts.clone(), first_error.clone());
        handles.push(std::thread::spawn(move || {
            if let Err(e) = faulter(shared, deadline, &counts) {
                counts.errors.fetch_add(1, Ordering::Relaxed);
                first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            }
        }));
    }
    for h in handles {
        h.join().map_err(|_| "a stress thread panicked".to_string())?;
    }
    check(cl!(clFinish(s.queue())), "clFinish")?;
    cl!(clReleaseProgram(program));
    let seconds = start.elapsed().as_secs_f64();
    let c = &counts;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let first_error = first_error.lock().unwrap_or_else(|p| p.into_inner()).take();
    Ok(Report {
        threads,
        seconds,
        commands: load(&c.commands),
        chains: load(&c.chains),
        wrong: load(&c.wrong),
        errors: load(&c.errors),
        launches: load(&c.launches),
        callbacks: load(&c.callbacks),
        faults_reported: load(&c.faults_reported),
        faults_missed: load(&c.faults_missed),
        rss_before_mib,
        rss_after_mib: rss_mib(),
        first_error,
    })
}

/// Releases the events of one chain when it goes out of scope, whatever happened.
struct Events(Vec<cl_event>);
impl Events {
    fn slot(&mut self) -> *mut cl_event {
        self.0.push(null_mut());
        self.0.last_mut().unwrap()
    }
    fn last(&self) -> cl_event {
        *self.0.last().unwrap()
    }
}
impl Drop for Events {
    fn drop(&mut self) {
        for &e in self.0.iter().filter(|e| !e.is_null()) {
            cl!(clReleaseEvent(e));
        }
    }
}

fn worker(sh: Shared, t: u64, deadline: Instant, counts: &Counts) -> Result<(), String> {
    let (context, device) = (sh.context as cl_context, sh.device as cl_device_id);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut e = 0;
    let props = if t % 3 == 1 { CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE } else { 0 } | CL_QUEUE_PROFILING_ENABLE;
    #[allow(deprecated)]
    let own = cl!(clCreateCommandQueue(context, device, props, &mut e));
    check(e, "clCreateCommandQueue")?;
    let name = c"add";
    let k = cl!(clCreateKernel(sh.program as cl_program, name.as_ptr(), &mut e));
    check(e, "clCreateKernel")?;
    let data = counts as *const Counts as *mut c_void;
    let result = (|| {
        while Instant::now() < deadline {
            let n = 1 + (rng.next() % 4096) as usize;
            let q = if t % 3 == 0 { sh.queue as cl_command_queue } else { own };
            let v = (rng.next() % 1000) as i32;
            let flags = CL_MEM_READ_WRITE | if rng.next() % 2 == 0 { CL_MEM_ALLOC_HOST_PTR } else { 0 };
            let a = cl!(clCreateBuffer(context, flags, n * 4, null_mut(), &mut e));
            check(e, "clCreateBuffer")?;
            let b = cl!(clCreateBuffer(context, CL_MEM_READ_WRITE, n * 4, null_mut(), &mut e));
            check(e, "clCreateBuffer")?;
            let chain = chain(&Link { q, k, context, data, counts }, (a, b), n, v, &mut rng);
            cl!(clReleaseMemObject(a));
            cl!(clReleaseMemObject(b));
            chain?;
        }
        Ok(())
    })();
    check(cl!(clFinish(own)), "clFinish")?;
    cl!(clReleaseKernel(k));
    cl!(clReleaseCommandQueue(own));
    result
}

/// What every chain of one thread uses.
struct Link<'a> {
    q: cl_command_queue,
    k: cl_kernel,
    context: cl_context,
    /// The callback's data: `counts`.
    data: *mut c_void,
    counts: &'a Counts,
}

/// One verified chain on buffers `a` and `b` of `n` ints: write, (gate), kernel, copy,
/// fill, read, (map).
fn chain(l: &Link, (a, b): (cl_mem, cl_mem), n: usize, v: i32, rng: &mut Rng) -> Result<(), String> {
    let host: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(v | 1)).collect();
    let r = chain_on(l, (a, b), &host, v, rng);
    if r.is_err() {
        // A non-blocking write may still read `host`.
        cl!(clFinish(l.q));
    }
    r
}

fn chain_on(l: &Link, (a, b): (cl_mem, cl_mem), host: &[i32], v: i32, rng: &mut Rng) -> Result<(), String> {
    let Link { q, k, context, data, counts } = *l;
    let n = host.len();
    let mut ev = Events(Vec::new());
    let count = |c: u64| counts.commands.fetch_add(c, Ordering::Relaxed);
    check(
        cl!(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, n * 4, host.as_ptr().cast(), 0, null(), ev.slot())),
        "clEnqueueWriteBuffer",
    )?;
    let mut wait = vec![ev.last()];
    let mut e = 0;
    let gate = if rng.next() % 4 == 0 {
        let u = cl!(clCreateUserEvent(context, &mut e));
        check(e, "clCreateUserEvent")?;
        ev.0.push(u);
        wait.push(u);
        Some(u)
    } else {
        None
    };
    arg(k, 0, &a)?;
    arg(k, 1, &v)?;
    let global = [n];
    check(
        cl!(clEnqueueNDRangeKernel(
            q,
            k,
            1,
            null(),
            global.as_ptr(),
            null(),
            wait.len() as cl_uint,
            wait.as_ptr(),
            ev.slot()
        )),
        "clEnqueueNDRangeKernel",
    )?;
    counts.launches.fetch_add(1, Ordering::Relaxed);
    check(cl!(clSetEventCallback(ev.last(), CL_COMPLETE, Some(counted), data)), "clSetEventCallback")?;
    if let Some(u) = gate {
        check(cl!(clSetUserEventStatus(u, CL_COMPLETE)), "clSetUserEventStatus")?;
    }
    let launched = ev.last();
    check(cl!(clEnqueueCopyBuffer(q, a, b, 0, 0, n * 4, 1, &launched, ev.slot())), "clEnqueueCopyBuffer")?;
    let pattern = 7i32;
    let filled = n.min(16);
    let copied = ev.last();
    check(
        cl!(clEnqueueFillBuffer(q, b, (&pattern as *const i32).cast(), 4, 0, filled * 4, 1, &copied, ev.slot())),
        "clEnqueueFillBuffer",
    )?;
    let mut out = vec![0i32; n];
    let fill_done = ev.last();
    check(
        cl!(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * 4, out.as_mut_ptr().cast(), 1, &fill_done, ev.slot())),
        "clEnqueueReadBuffer",
    )?;
    count(5);
    let want = |i: usize| if i < filled { pattern } else { host[i].wrapping_add(v) };
    if out.iter().enumerate().any(|(i, &x)| x != want(i)) {
        counts.wrong.fetch_add(1, Ordering::Relaxed);
    }
    if rng.next() % 8 == 0 {
        let p = cl!(clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, null(), null_mut(), &mut e));
        check(e, "clEnqueueMapBuffer")?;
        // SAFETY: a blocking map of n ints returned `p`, valid until the unmap below.
        let first = unsafe { *(p as *const i32) };
        if first != host[0].wrapping_add(v) {
            counts.wrong.fetch_add(1, Ordering::Relaxed);
        }
        check(cl!(clEnqueueUnmapMemObject(q, a, p, 0, null(), null_mut())), "clEnqueueUnmapMemObject")?;
        count(2);
    }
    // The launch's callback may still be on its way: the chain's events wait for it.
    check(cl!(clWaitForEvents(1, &launched)), "clWaitForEvents")?;
    counts.chains.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Launches a kernel that faults, every 100 ms: each launch must fail, and the other
/// threads' chains must not notice.
fn faulter(sh: Shared, deadline: Instant, counts: &Counts) -> Result<(), String> {
    let (context, device) = (sh.context as cl_context, sh.device as cl_device_id);
    let mut e = 0;
    #[allow(deprecated)]
    let q = cl!(clCreateCommandQueue(context, device, 0, &mut e));
    check(e, "clCreateCommandQueue")?;
    let name = c"wild";
    let k = cl!(clCreateKernel(sh.program as cl_program, name.as_ptr(), &mut e));
    check(e, "clCreateKernel")?;
    let m = cl!(clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * 4, null_mut(), &mut e));
    check(e, "clCreateBuffer")?;
    let result = (|| {
        arg(k, 0, &m)?;
        while Instant::now() < deadline {
            let global = [64usize];
            let mut ev = null_mut();
            check(
                cl!(clEnqueueNDRangeKernel(q, k, 1, null(), global.as_ptr(), null(), 0, null(), &mut ev)),
                "clEnqueueNDRangeKernel",
            )?;
            cl!(clWaitForEvents(1, &ev));
            let mut status: cl_int = 0;
            cl!(clGetEventInfo(
                ev,
                CL_EVENT_COMMAND_EXECUTION_STATUS,
                4,
                (&mut status as *mut cl_int).cast(),
                null_mut()
            ));
            cl!(clReleaseEvent(ev));
            let which = if status < 0 { &counts.faults_reported } else { &counts.faults_missed };
            which.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    })();
    cl!(clReleaseMemObject(m));
    cl!(clReleaseKernel(k));
    cl!(clReleaseCommandQueue(q));
    result
}
