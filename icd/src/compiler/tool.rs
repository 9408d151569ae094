//! Running an external tool (clang, the linker) under the build time limit: a tool
//! that hangs must not hang the application's `clBuildProgram`.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// A tool: `$env` if set (whether or not it exists: the user's choice stands), else the
/// newest `name-N` on PATH for N in `versions`, else `name`; the first for which
/// `accept` gives a value.
pub fn find<T>(
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
pub fn limit() -> Duration {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    let s = *LIMIT.get_or_init(|| {
        std::env::var("FERROCL_BUILD_TIMEOUT").ok().and_then(|v| v.parse().ok()).filter(|&s| s > 0).unwrap_or(600)
    });
    Duration::from_secs(s)
}

/// The message added to a tool's output when it was stopped.
pub fn stopped(limit: Duration) -> String {
    format!("did not finish within {} s and was stopped (FERROCL_BUILD_TIMEOUT sets the limit)\n", limit.as_secs())
}

/// `cmd.output()`, killed at `limit()`: `Err` when it cannot start, or says it was
/// stopped (then the output so far is in the message).
pub fn output(cmd: &mut Command) -> Result<Output, String> {
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
