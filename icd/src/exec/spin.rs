//! Spinning waits that give the core away to anyone who wants it, and stop spinning
//! where the core turns out to be shared. A thread about to sleep often has its next
//! piece of work within microseconds (the next launch, the next command), and a sleeping
//! thread costs the one that wakes it a system call and, on a VM, its core's return to
//! speed; but beside busy processes a spinning thread that yields waits a whole time
//! slice for its core back, and one that does not yield holds a core they need.

use std::time::{Duration, Instant};

/// A yield that kept the core away this long found it shared: another thread ran a time
/// slice. A yield to one of the program's own threads that only enqueues a command and
/// waits comes back within microseconds.
const SHARED_GAP: Duration = Duration::from_micros(200);

/// One thread's spinning state.
pub(crate) struct Spinner {
    /// After a spin found the core shared, the thread sleeps at once for this long.
    back_off: Duration,
    shared_until: Option<Instant>,
}

impl Spinner {
    pub(crate) const fn new(back_off: Duration) -> Spinner {
        Spinner { back_off, shared_until: None }
    }

    /// Whether this thread may spin now (not while a recent spin found its core shared).
    pub(crate) fn may_spin(&self) -> bool {
        self.shared_until.map_or(true, |t| Instant::now() >= t)
    }

    /// Spins, yielding the core at every turn, until `ready()` holds (returns true),
    /// `limit` has passed, or a yield found the core shared (both false).
    pub(crate) fn spin(&mut self, limit: Duration, ready: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        loop {
            if ready() {
                return true;
            }
            if yield_core() {
                self.shared_until = Some(Instant::now() + self.back_off);
                return ready();
            }
            if start.elapsed() >= limit {
                return ready();
            }
        }
    }
}

/// Yields the core once; true when the yield found it shared (kept it away for more
/// than `SHARED_GAP`).
pub(crate) fn yield_core() -> bool {
    let before = Instant::now();
    std::thread::yield_now();
    before.elapsed() > SHARED_GAP
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_spin_returns_once_its_condition_holds() {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(2));
                flag.store(true, Ordering::Release);
            })
        };
        let mut s = Spinner::new(Duration::from_secs(1));
        // A generous limit: a machine busy with other tests may take the core away.
        let ready = (0..100).any(|_| s.spin(Duration::from_millis(100), || flag.load(Ordering::Acquire)));
        setter.join().unwrap();
        assert!(ready);
    }

    #[test]
    fn a_spin_ends_when_its_time_is_up() {
        let mut s = Spinner::new(Duration::from_secs(1));
        let start = Instant::now();
        assert!(!s.spin(Duration::from_millis(3), || false));
        // Either the limit passed or the core turned out to be shared (sooner).
        assert!(start.elapsed() >= Duration::from_millis(3) || !s.may_spin());
    }

    /// A thread that never sleeps on the spinner's own core: each yield hands it a time
    /// slice, so the spinner must find the core shared and stop spinning.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_core_shared_with_a_busy_thread_stops_the_spinning() {
        // SAFETY: plain calls on this thread with valid, zero-initialised CPU sets.
        let (cpu, old) = unsafe {
            let mut old: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old);
            (libc::sched_getcpu().max(0) as usize, old)
        };
        let pin = move || {
            // SAFETY: as above; `cpu` came from sched_getcpu.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
        };
        pin();
        let stop = Arc::new(AtomicBool::new(false));
        let busy = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                pin();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let back_off = Duration::from_secs(60);
        let mut s = Spinner::new(back_off);
        let ready = s.spin(Duration::from_secs(5), || false);
        stop.store(true, Ordering::Relaxed);
        // SAFETY: restores this thread's own affinity, read above.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old) };
        busy.join().unwrap();
        assert!(!ready);
        assert!(!s.may_spin(), "a spin beside a busy thread on one core did not back off");
    }
}
