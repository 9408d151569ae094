//! Surviving hardware faults in kernel code.
//!
//! A kernel that writes through a wild pointer, overflows its stack or executes a trap
//! raises SIGSEGV, SIGBUS, SIGILL or SIGFPE on the thread running it. Left alone that
//! kills the application. While a FerroCL thread runs kernel code it is *guarded*:
//! `guarded` saves the callee-saved registers and stack pointer of its caller (an
//! assembly trampoline, since Rust cannot call `setjmp`), and the signal handler,
//! finding the faulting thread guarded, edits the interrupted context so that, when
//! the handler returns, execution continues in `ferrocl_fault_resume`, which restores
//! those registers and returns from the trampoline with 1. The launch then fails with
//! an error the application sees on its event, and the process goes on.
//!
//! A fault on a thread that is not guarded goes to the handler that was installed
//! before ours, or to the default action (the process dies as it would have).
//! Guarded threads are found by thread id in a fixed table, because the handler may
//! not allocate (thread-local storage of a loaded library may).

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// What the trampoline saves: rbx, rbp, r12-r15, the caller's stack pointer and the
/// return address; then the signal and address of a fault.
#[repr(C)]
#[derive(Default)]
struct Recovery {
    regs: [u64; 8],
    signal: i32,
    addr: usize,
}

std::arch::global_asm!(
    ".pushsection .text.ferrocl_fault,\"ax\",@progbits",
    ".globl ferrocl_fault_guarded",
    ".hidden ferrocl_fault_guarded",
    ".type ferrocl_fault_guarded,@function",
    // rdi: f, rsi: data, rdx: recovery. Returns 0 after f(data) returned.
    "ferrocl_fault_guarded:",
    "mov [rdx], rbx",
    "mov [rdx + 8], rbp",
    "mov [rdx + 16], r12",
    "mov [rdx + 24], r13",
    "mov [rdx + 32], r14",
    "mov [rdx + 40], r15",
    "lea rax, [rsp + 8]",
    "mov [rdx + 48], rax",
    "mov rax, [rsp]",
    "mov [rdx + 56], rax",
    "sub rsp, 8",
    "mov rax, rdi",
    "mov rdi, rsi",
    "call rax",
    "add rsp, 8",
    "xor eax, eax",
    "ret",
    ".size ferrocl_fault_guarded, . - ferrocl_fault_guarded",
    ".globl ferrocl_fault_resume",
    ".hidden ferrocl_fault_resume",
    ".type ferrocl_fault_resume,@function",
    // rdi: recovery (set by the handler). Returns 1 from ferrocl_fault_guarded.
    "ferrocl_fault_resume:",
    "cld",
    "mov rbx, [rdi]",
    "mov rbp, [rdi + 8]",
    "mov r12, [rdi + 16]",
    "mov r13, [rdi + 24]",
    "mov r14, [rdi + 32]",
    "mov r15, [rdi + 40]",
    "mov rsp, [rdi + 48]",
    "mov eax, 1",
    "jmp qword ptr [rdi + 56]",
    ".size ferrocl_fault_resume, . - ferrocl_fault_resume",
    ".popsection",
);

extern "C" {
    fn ferrocl_fault_guarded(f: extern "C" fn(*mut c_void), data: *mut c_void, rec: *mut Recovery) -> i32;
    fn ferrocl_fault_resume();
}

/// Guarded threads: (thread id, its recovery). Enough for every worker, copy thread
/// and application thread running a group at once; a thread finding no free slot
/// runs unguarded.
const SLOTS: usize = 512;
/// A cache line each: threads write their own slot at every driver section (twice per
/// work-group at least), and two workers' slots in one line kept it moving between their
/// cores (saxpy on the 2-core machine: the section's count took over half of the samples
/// of groups of 64 work-items; with the default group size 31-36 -> 40-41 GB/s apart).
#[repr(align(64))]
struct Slot {
    tid: AtomicI32,
    rec: AtomicPtr<Recovery>,
    /// What the guarded call runs (a launch), for `interrupt`.
    tag: AtomicUsize,
    /// Depth of `DriverSection`s: the thread runs the driver's own code on behalf of a
    /// kernel (an async-copy service, fiber switching), which may hold a lock or be
    /// inside `malloc`. Jumping out of there would leave the lock held for ever.
    driver: AtomicU32,
    /// An interrupt arrived inside a driver section: it is raised again when the
    /// outermost section ends.
    deferred: AtomicBool,
}
static TABLE: [Slot; SLOTS] = [const {
    Slot {
        tid: AtomicI32::new(0),
        rec: AtomicPtr::new(std::ptr::null_mut()),
        tag: AtomicUsize::new(0),
        driver: AtomicU32::new(0),
        deferred: AtomicBool::new(false),
    }
}; SLOTS];

/// The signal `interrupt` sends (a real-time signal: queued, and meaning nothing else
/// to the process). Its handler ignores it on a thread that is not guarded.
fn interrupt_signal() -> i32 {
    libc::SIGRTMIN() + 7
}

/// Ends the guarded calls running `tag` on any thread, as if they had faulted (with
/// `interrupt_signal()`); calls not guarded at this moment are not touched.
pub(crate) fn interrupt(tag: usize) {
    if !install() {
        return;
    }
    // SAFETY: getpid and tgkill have no memory preconditions; a thread that ended since
    // is at worst a failed call (its slot was given back).
    let pid = unsafe { libc::getpid() };
    for s in TABLE.iter().filter(|s| s.tag.load(Ordering::Acquire) == tag && !s.rec.load(Ordering::Acquire).is_null()) {
        let tid = s.tid.load(Ordering::Acquire);
        if tid != 0 {
            // SAFETY: see above.
            unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, interrupt_signal()) };
        }
    }
}

fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions and is async-signal-safe.
    unsafe { libc::gettid() }
}

/// The handlers in place before ours, per signal (read by the handler).
struct Previous(UnsafeCell<[libc::sigaction; 4]>);
// SAFETY: written once, before the handlers that read it are installed.
unsafe impl Sync for Previous {}
static PREVIOUS: Previous = Previous(UnsafeCell::new(unsafe { std::mem::zeroed() }));
const SIGNALS: [i32; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE];

extern "C" fn handler(sig: i32, info: *mut libc::siginfo_t, context: *mut c_void) {
    let tid = gettid();
    let slot = TABLE.iter().find(|s| s.tid.load(Ordering::Acquire) == tid);
    let mut rec = slot.map(|s| s.rec.load(Ordering::Acquire)).filter(|r| !r.is_null());
    if let (Some(s), Some(_)) = (slot, rec) {
        if s.driver.load(Ordering::Relaxed) > 0 {
            if sig == interrupt_signal() {
                // Ended when the driver's code is done (`DriverSection::drop`).
                s.deferred.store(true, Ordering::Relaxed);
                return;
            }
            // The driver's own code faulted: its state (a lock, the allocator) cannot
            // be trusted to go on, so this is a crash like any other.
            const MSG: &[u8] = b"FerroCL: a fault in the driver's own code (called by a kernel); not recoverable\n";
            // SAFETY: write(2) is async-signal-safe; the message is static.
            unsafe { libc::write(2, MSG.as_ptr().cast(), MSG.len()) };
            rec = None;
        }
    }
    if let Some(rec) = rec {
        // SAFETY: the kernel passes a valid siginfo and ucontext; `rec` is the guarded
        // call's recovery on this thread's stack, alive until that call returns, which
        // cannot happen before this handler does.
        unsafe {
            (*rec).signal = sig;
            (*rec).addr = (*info).si_addr() as usize;
            let uc = &mut *(context as *mut libc::ucontext_t);
            uc.uc_mcontext.gregs[libc::REG_RIP as usize] = ferrocl_fault_resume as *const () as usize as i64;
            uc.uc_mcontext.gregs[libc::REG_RDI as usize] = rec as i64;
            uc.uc_mcontext.gregs[libc::REG_RSP as usize] = (*rec).regs[6] as i64;
        }
        return;
    }
    // Not ours: what would have happened without us. An interrupt that arrives after its
    // guarded call ended is dropped.
    let Some(i) = SIGNALS.iter().position(|&s| s == sig) else { return };
    // SAFETY: PREVIOUS was filled before this handler was installed and is never written
    // again; sigaction and the previous handler are what the process had installed.
    unsafe {
        let prev = &(*PREVIOUS.0.get())[i];
        match prev.sa_sigaction {
            libc::SIG_DFL | libc::SIG_IGN => {
                // Back to the default; returning re-runs the faulting instruction, which
                // now ends the process as it would have.
                libc::sigaction(sig, prev, std::ptr::null_mut());
            }
            f if prev.sa_flags & libc::SA_SIGINFO != 0 => {
                let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut c_void) = std::mem::transmute(f);
                f(sig, info, context);
            }
            f => {
                let f: extern "C" fn(i32) = std::mem::transmute(f);
                f(sig);
            }
        }
    }
}

/// Installs the handlers once per process.
fn install() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| {
        if std::env::var_os("FERROCL_CATCH_FAULTS").is_some_and(|v| v == "0") {
            return false;
        }
        // SAFETY: plain sigaction calls; PREVIOUS is written before any handler of ours
        // can run (ours are installed after it is complete).
        unsafe {
            let prev = &mut *PREVIOUS.0.get();
            for (i, &sig) in SIGNALS.iter().enumerate() {
                libc::sigaction(sig, std::ptr::null(), &mut prev[i]);
            }
            for sig in SIGNALS.into_iter().chain([interrupt_signal()]) {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = handler as *const () as usize;
                act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(sig, &act, std::ptr::null_mut());
            }
        }
        true
    })
}

/// Gives this thread an alternate signal stack if it has none, so that a kernel that
/// overflows its stack can still be caught (the handler needs a stack to run on).
/// Called once per thread, when it claims its guard slot; the stack is the claim's, and
/// goes when the thread ends (`Claim::drop`). None when the thread had one already.
fn ensure_alternate_stack() -> Option<Box<[u8]>> {
    const SIZE: usize = 64 << 10;
    // SAFETY: querying and setting this thread's alternate stack, to memory the
    // thread's claim owns until it takes the stack away again.
    unsafe {
        let mut old: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut old) == 0 && old.ss_flags & libc::SS_DISABLE != 0 {
            let mut mem = vec![0u8; SIZE].into_boxed_slice();
            let st = libc::stack_t { ss_sp: mem.as_mut_ptr().cast(), ss_flags: 0, ss_size: SIZE };
            if libc::sigaltstack(&st, std::ptr::null_mut()) == 0 {
                return Some(mem);
            }
        }
    }
    None
}

/// A fault that ended a guarded call.
#[derive(Debug)]
pub(crate) struct Fault {
    pub(crate) signal: i32,
    pub(crate) addr: usize,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.signal == interrupt_signal() {
            return write!(f, "the FERROCL_KERNEL_TIMEOUT watchdog (it ran too long)");
        }
        let name = match self.signal {
            libc::SIGSEGV => "SIGSEGV (invalid memory access)",
            libc::SIGBUS => "SIGBUS (bad memory access)",
            libc::SIGILL => "SIGILL (illegal instruction or trap)",
            libc::SIGFPE => "SIGFPE (arithmetic trap)",
            _ => "a signal",
        };
        write!(f, "{name} at address {:#x}", self.addr)
    }
}

/// This thread's slot in `TABLE`, claimed at its first guarded call and given back
/// when the thread ends; `None` when the table was full.
/// Also owns the alternate signal stack it gave the thread, if it gave one.
struct Claim(Option<&'static Slot>, Option<Box<[u8]>>);

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            slot.rec.store(std::ptr::null_mut(), Ordering::Release);
            slot.tid.store(0, Ordering::Release);
        }
        if self.1.is_some() {
            let off = libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
            // SAFETY: takes this thread's alternate stack away before its memory goes
            // (no guarded code runs during thread-local destruction).
            unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) };
        }
    }
}

thread_local! {
    static CLAIM: Claim = {
        let stack = ensure_alternate_stack();
        let tid = gettid();
        let slot = TABLE.iter().find(|s| s.tid.compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed).is_ok());
        Claim(slot, stack)
    };
}

/// This thread's guard slot (claimed at first use), or `None` when faults are not
/// caught or the table is full.
fn own_slot() -> Option<&'static Slot> {
    if install() {
        CLAIM.with(|c| c.0)
    } else {
        None
    }
}

/// The driver's own code running inside a guarded call on a kernel's behalf (the
/// async-copy services, fiber switching): from `enter` until the value is dropped, a
/// fault is not the kernel's (it is not recovered: the process ends as it would without
/// FerroCL), and the watchdog's interrupt waits for the end of the outermost section,
/// so no lock or allocator state is abandoned half-way. Code that reads the kernel's
/// memory (its pointers may be wild) does so before entering.
pub(crate) struct DriverSection(Option<&'static Slot>);

/// The calling thread's guard, looked up once for the sections of many work-groups (the
/// thread-local lookup is a call into the dynamic loader from a shared library).
#[derive(Clone, Copy)]
pub(crate) struct Sections(Option<&'static Slot>);

impl Sections {
    pub(crate) fn here() -> Sections {
        Sections(own_slot())
    }

    /// `DriverSection::enter` on the thread this was looked up on.
    pub(crate) fn enter(self) -> DriverSection {
        if let Some(s) = self.0 {
            // Only this thread writes the count and only its signal handler reads it
            // besides: program order is all that matters, which the compiler fences
            // keep, so plain loads and stores do (a locked add and exchange per section
            // were 60% of a region's end in a kernel streaming small tiles).
            s.driver.store(s.driver.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            compiler_fence(Ordering::SeqCst);
        }
        DriverSection(self.0)
    }
}

impl DriverSection {
    pub(crate) fn enter() -> DriverSection {
        Sections::here().enter()
    }

    /// Runs `f` (kernel code called from a section, such as a fiber's work-item) as the
    /// kernel's again: a fault in it ends the guarded call.
    pub(crate) fn kernel<R>(f: impl FnOnce() -> R) -> R {
        let slot = own_slot();
        let Some(s) = slot else { return f() };
        let outer = s.driver.load(Ordering::Relaxed);
        s.driver.store(0, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        if take_deferred(s) {
            // An interrupt deferred by the section around this call (a fiber starting
            // after a barrier's switch) ends the call now, before the kernel runs on.
            raise_interrupt();
        }
        let r = f();
        compiler_fence(Ordering::SeqCst);
        s.driver.store(outer, Ordering::Relaxed);
        r
    }
}

/// Takes the interrupt the handler deferred, if any. The handler only sets the flag
/// while the count is above zero and this runs once it is zero, so a load and a store
/// cannot lose one.
fn take_deferred(s: &Slot) -> bool {
    let deferred = s.deferred.load(Ordering::Relaxed);
    if deferred {
        s.deferred.store(false, Ordering::Relaxed);
    }
    deferred
}

impl Drop for DriverSection {
    fn drop(&mut self) {
        let Some(s) = self.0 else { return };
        compiler_fence(Ordering::SeqCst);
        let depth = s.driver.load(Ordering::Relaxed) - 1;
        s.driver.store(depth, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        if depth == 0 && take_deferred(s) {
            // The interrupt that arrived meanwhile, now that nothing is held.
            raise_interrupt();
        }
    }
}

/// Sends the interrupt signal to this thread, whose handler ends the guarded call.
fn raise_interrupt() {
    // SAFETY: plain syscalls with no memory arguments.
    unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), gettid(), interrupt_signal()) };
}

/// Runs `f` on this thread, guarded: a hardware fault in it ends it early with `Err`.
/// A panic in `f` is carried through as a panic. Costs a few relaxed atomic loads and stores.
pub(crate) fn guarded<F: FnOnce()>(f: F) -> Result<(), Fault> {
    guarded_as(0, f)
}

/// `guarded`, marked as running `tag` (non-zero): `interrupt(tag)` can end it.
pub(crate) fn guarded_as<F: FnOnce()>(tag: usize, f: F) -> Result<(), Fault> {
    let slot = own_slot();
    // No slot (table full, or faults not caught): run as is.
    let Some(slot) = slot else {
        f();
        return Ok(());
    };
    // Guards nest: the innermost catches (a copy chunk run by a group waiting for it must
    // be counted done even when it faults), and the outer one applies again after.
    let outer = slot.rec.load(Ordering::Acquire);
    let outer_tag = slot.tag.load(Ordering::Relaxed);
    if tag != 0 {
        slot.tag.store(tag, Ordering::Relaxed);
    }
    // The call is the kernel's (or a copy's) until it enters a driver section.
    let outer_driver = slot.driver.swap(0, Ordering::Relaxed);
    let mut rec = Recovery::default();
    slot.rec.store(&mut rec, Ordering::Release);
    struct Call<F> {
        f: Option<F>,
        panic: Option<Box<dyn std::any::Any + Send>>,
    }
    extern "C" fn call<F: FnOnce()>(data: *mut c_void) {
        // SAFETY: `data` is the `Call<F>` below, alive for this call.
        let c = unsafe { &mut *(data as *mut Call<F>) };
        if let Some(f) = c.f.take() {
            // A panic must not unwind through the trampoline (it has no unwind tables).
            c.panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).err();
        }
    }
    let mut c = Call { f: Some(f), panic: None };
    // SAFETY: the trampoline calls `call::<F>` with `c`, and `rec` outlives the call.
    let faulted = unsafe { ferrocl_fault_guarded(call::<F>, (&mut c as *mut Call<F>).cast(), &mut rec) } != 0;
    slot.rec.store(outer, Ordering::Release);
    slot.tag.store(outer_tag, Ordering::Relaxed);
    // After a fault the sections it jumped out of never ended: this restores the count.
    slot.driver.store(outer_driver, Ordering::Relaxed);
    slot.deferred.store(false, Ordering::Relaxed);
    if let Some(p) = c.panic {
        std::panic::resume_unwind(p);
    }
    if faulted {
        // The closure was abandoned mid-way: whatever it owned is leaked, not dropped.
        Err(Fault { signal: rec.signal, addr: rec.addr })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_in_a_guarded_call_returns_and_the_thread_goes_on() {
        let r = guarded(|| {
            // SAFETY: deliberately invalid, to fault; the guard catches it.
            unsafe { std::ptr::write_volatile(16 as *mut u32, 1) };
        });
        let f = r.expect_err("the write faults");
        assert_eq!((f.signal, f.addr), (libc::SIGSEGV, 16));
        let mut x = 0;
        assert!(guarded(|| x += 1).is_ok());
        assert_eq!(x, 1, "a guarded call runs normally afterwards");
        let nested = guarded(|| {
            let inner = guarded(|| {
                // SAFETY: deliberately invalid; the inner guard catches it.
                unsafe { std::ptr::write_volatile(32 as *mut u32, 1) };
            });
            assert_eq!(inner.expect_err("inner fault").addr, 32, "the innermost guard catches");
            // SAFETY: deliberately invalid; the outer guard applies again.
            unsafe { std::ptr::write_volatile(48 as *mut u32, 1) };
        });
        assert_eq!(nested.expect_err("outer fault").addr, 48);
        let trap = guarded(|| {
            // SAFETY: ud2 raises SIGILL, which the guard catches.
            unsafe { std::arch::asm!("ud2") };
        });
        assert_eq!(trap.expect_err("ud2 traps").signal, libc::SIGILL);
    }

    #[test]
    fn an_interrupt_ends_a_guarded_loop() {
        static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let t = std::thread::spawn(|| {
            guarded_as(77, || {
                while !STOP.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        interrupt(77);
        let r = t.join().unwrap();
        STOP.store(true, Ordering::Relaxed);
        assert_eq!(r.expect_err("interrupted").signal, interrupt_signal());
        interrupt(77); // nothing runs it now: ignored
    }

    #[test]
    fn an_interrupt_waits_for_the_driver_section_to_end() {
        let mut finished_section = false;
        let r = guarded_as(78, || {
            let section = DriverSection::enter();
            // Delivered to this thread before the call returns, inside the section.
            interrupt(78);
            finished_section = true;
            drop(section);
            unreachable!("the deferred interrupt ends the call when the section ends");
        });
        assert!(finished_section, "the section ran to its end");
        assert_eq!(r.expect_err("interrupted").signal, interrupt_signal());
        // The count was restored: a later guarded call is the kernel's again.
        let r = guarded(|| {
            // SAFETY: deliberately invalid, to fault; the guard catches it.
            unsafe { std::ptr::write_volatile(16 as *mut u32, 1) };
        });
        assert_eq!(r.expect_err("caught").signal, libc::SIGSEGV);
    }

    #[test]
    fn a_deferred_interrupt_ends_the_call_before_kernel_code_inside_the_section_runs() {
        let mut kernel_ran = false;
        let r = guarded_as(79, || {
            let _section = DriverSection::enter();
            interrupt(79);
            // A fiber starting inside the section: the interrupt ends the call first.
            DriverSection::kernel(|| kernel_ran = true);
        });
        assert!(!kernel_ran);
        assert_eq!(r.expect_err("interrupted").signal, interrupt_signal());
    }

    #[test]
    fn kernel_code_inside_a_section_is_guarded_and_driver_code_is_not() {
        let r = guarded(|| {
            let _section = DriverSection::enter();
            DriverSection::kernel(|| {
                // SAFETY: deliberately invalid, to fault; the guard catches it.
                unsafe { std::ptr::write_volatile(16 as *mut u32, 1) };
            });
        });
        assert_eq!(r.expect_err("caught").signal, libc::SIGSEGV);
        // A fault in the driver's own code ends the process as it would without us:
        // shown in a child, which must die of the signal.
        // SAFETY: the child only runs the guarded call and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let _ = guarded(|| {
                let _section = DriverSection::enter();
                // SAFETY: deliberately invalid, to fault inside the section.
                unsafe { std::ptr::write_volatile(16 as *mut u32, 1) };
            });
            // SAFETY: leaving the child without running the parent's exit handlers.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSEGV, "status {status:#x}");
    }

    #[test]
    fn panics_pass_through() {
        let r = std::panic::catch_unwind(|| guarded(|| panic!("inside")));
        assert!(r.is_err());
    }
}
