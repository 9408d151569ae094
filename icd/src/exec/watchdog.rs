//! `FERROCL_KERNEL_TIMEOUT=SECONDS`: launches that run longer are stopped.
//!
//! A thread checks the running launches every few milliseconds; one past its time is
//! marked cancelled (its groups not yet started do not start) and the groups running
//! it are interrupted (`fault::interrupt`), which ends them as a fault would: the
//! command fails with `CL_OUT_OF_RESOURCES` and the process goes on.

use std::sync::{Arc, LazyLock, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// What the watchdog can stop (a launch): it is told to stop, and the guarded calls
/// running it (tagged `tag`) are interrupted.
pub(crate) trait Stoppable: Send + Sync {
    fn tag(&self) -> usize;
    fn stop(&self);
}

/// The limit, if the variable sets one.
fn limit() -> Option<Duration> {
    static LIMIT: LazyLock<Option<Duration>> = LazyLock::new(|| {
        let s: f64 = std::env::var("FERROCL_KERNEL_TIMEOUT").ok()?.trim().parse().ok()?;
        (s.is_finite() && s > 0.0).then(|| Duration::from_secs_f64(s))
    });
    *LIMIT
}

/// Launches running, with their start.
static RUNNING: Mutex<Vec<(Weak<dyn Stoppable>, Instant)>> = Mutex::new(Vec::new());

/// Watches `launch` while the returned value lives (nothing without a limit).
pub(crate) fn watch(launch: Arc<dyn Stoppable>) -> Option<Watched> {
    limit()?;
    static THREAD: LazyLock<()> = LazyLock::new(|| {
        // A thread for the process's life, checking as often as the limit is short.
        let _ = std::thread::Builder::new().name("ferrocl-watchdog".into()).spawn(|| loop {
            let tick = limit().map_or(Duration::from_millis(50), |l| {
                (l / 10).clamp(Duration::from_millis(2), Duration::from_millis(50))
            });
            std::thread::sleep(tick);
            check(limit().unwrap_or(Duration::MAX));
        });
    });
    LazyLock::force(&THREAD);
    let weak = Arc::downgrade(&launch);
    RUNNING.lock().push((weak.clone(), Instant::now()));
    Some(Watched(weak))
}

/// Stops the launches past `limit`.
fn check(limit: Duration) {
    let late: Vec<Arc<dyn Stoppable>> =
        RUNNING.lock().iter().filter(|(_, t)| t.elapsed() > limit).filter_map(|(l, _)| l.upgrade()).collect();
    for l in late {
        l.stop();
        super::fault::interrupt(l.tag());
    }
}

/// A launch being watched; dropping it ends the watch.
pub(crate) struct Watched(Weak<dyn Stoppable>);

impl Drop for Watched {
    fn drop(&mut self) {
        RUNNING.lock().retain(|(l, _)| !l.ptr_eq(&self.0));
    }
}
