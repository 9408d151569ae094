//! Running an external tool (clang, the linker) under the build time limit: a tool
//! that hangs must not hang the application's `clBuildProgram`.

pub(super) mod chunks;
pub(crate) mod clang;
pub(super) mod fork_server;
pub(super) mod link;
pub(crate) mod locate;

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// A tool: `$env` if set (whether or not it exists: the user's choice stands), else the
/// newest `name-N` on PATH for N in `versions`, else `name`; the first for which
/// `accept` gives a value.
pub(crate) fn find<T>(
    env: &str,
    name: &str,
    versions: std::ops::RangeInclusive<u32>,
    accept: impl Fn(std::path::PathBuf) -> Option<T>,
) -> Option<T> {
    if let Some(p) = std::env::var_os(env) {
        return accept(p.into());
    }
    let on_path = |n: &str| {
        std::env::var_os("PATH")?.to_str()?.split(':').map(|d| std::path::Path::new(d).join(n)).find(|p| p.is_file())
    };
    versions.rev().map(|v| format!("{name}-{v}")).chain([name.to_string()]).filter_map(|n| on_path(&n)).find_map(accept)
}

/// How long one tool run may take: `FERROCL_BUILD_TIMEOUT` seconds, else 600 (large
/// kernels take a minute).
pub(crate) fn limit() -> Duration {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    let s = *LIMIT.get_or_init(|| {
        std::env::var("FERROCL_BUILD_TIMEOUT").ok().and_then(|v| v.parse().ok()).filter(|&s| s > 0).unwrap_or(600)
    });
    Duration::from_secs(s)
}

/// The message added to a tool's output when it was stopped.
pub(crate) fn stopped(limit: Duration) -> String {
    format!("did not finish within {} s and was stopped (FERROCL_BUILD_TIMEOUT sets the limit)\n", limit.as_secs())
}

thread_local! {
    /// Set on a thread building in the background (`in_background`).
    static BACKGROUND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `build` with this thread and the tools it runs at the lowest priority (nice 19),
/// and with clang spawned rather than on a fork server, whose processes run at the
/// application's priority: a build nobody waits for (`core::program`'s second builds)
/// must not take cores from the application's kernels. On the 2-core machine a second
/// build at normal priority, racing the bench's timed launches, took SGEMM's figure from
/// 33 to 18 GFLOP/s in one run. Nice 19 rather than `SCHED_IDLE`, which on a machine
/// kept busy would never let the build finish. Call it on a thread of its own: the
/// thread keeps the priority.
pub(crate) fn in_background<T>(build: impl FnOnce() -> T) -> T {
    idle_priority();
    BACKGROUND.with(|b| b.set(true));
    let r = build();
    BACKGROUND.with(|b| b.set(false));
    r
}

/// Whether this thread builds in the background.
pub(crate) fn background() -> bool {
    BACKGROUND.with(|b| b.get())
}

/// Gives the calling thread (or, in a child before `exec`, the process) nice 19.
fn idle_priority() {
    // SAFETY: a system call on the calling thread (Linux keeps nice values per thread);
    // async-signal safe, so it may run between fork and exec.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
}

/// `cmd.output()`, killed at `limit()`: `Err` when it cannot start, or says it was
/// stopped (then the output so far is in the message).
pub(crate) fn output(cmd: &mut Command) -> Result<Output, String> {
    if background() {
        use std::os::unix::process::CommandExt;
        // SAFETY: the hook only makes an async-signal-safe system call.
        unsafe {
            cmd.pre_exec(|| {
                idle_priority();
                Ok(())
            })
        };
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}\n", cmd.get_program()))?;
    let pid = child.id() as libc::pid_t;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let (tx, rx) = std::sync::mpsc::channel();
    // Waits (and reads the pipes, so a chatty tool cannot block on them) off this thread.
    std::thread::spawn(move || {
        let read = |p: &mut Option<std::process::ChildStdout>| {
            let mut v = Vec::new();
            if let Some(p) = p {
                let _ = p.read_to_end(&mut v);
            }
            v
        };
        let errs = std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_end(&mut v);
            }
            v
        });
        let stdout = read(&mut out);
        let stderr = errs.join().unwrap_or_default();
        let _ = tx.send(child.wait().map(|status| Output { status, stdout, stderr }));
    });
    let limit = limit();
    match rx.recv_timeout(limit) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; the child is not reaped until the
            // waiting thread's wait returns, so the pid is still this child's.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let so_far = rx.recv().ok().and_then(Result::ok).map(|o| String::from_utf8_lossy(&o.stderr).into_owned());
            Err(format!("{}{:?} {}", so_far.unwrap_or_default(), cmd.get_program(), stopped(limit)))
        }
    }
}
