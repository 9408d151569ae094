//! Running clang through fork servers: clang processes that have loaded and
//! initialised LLVM once and fork a child per request (`fork_server.c`, loaded into
//! clang with `LD_PRELOAD`).
//!
//! A clang process spends ~25 ms starting (mapping, relocating and constructing
//! libLLVM and libclang-cpp) before it compiles anything, and a build runs clang
//! twice. A request to a server costs a fork (~3 ms). The servers are separate
//! processes, so no LLVM enters the host process; the shim is compiled by the same
//! clang on first use and kept in the cache. Where anything about this fails, the
//! caller runs clang itself, as before. `FERROCL_CLANG_SERVER=0` turns servers off.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::compiler::cache;

/// The clang a server runs: its path, and its identity (part of the shim's cache key).
pub(crate) struct Tool<'a> {
    pub(crate) path: &'a Path,
    pub(crate) identity: &'a str,
}

const SHIM: &str = include_str!("fork_server.c");

/// The variable that makes the shim serve (set only in a server's environment).
const SERVE: &str = "FERROCL_CLANG_SERVE";

/// What a run produced: whether clang succeeded, and its stdout and stderr.
pub(crate) struct Ran {
    pub(crate) success: bool,
    pub(crate) output: String,
}

struct Server {
    child: Child,
    socket: UnixStream,
    /// The process that started it: a forked copy of the host must not share it.
    owner: u32,
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.owner == std::process::id() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Idle servers of the clang that `find` chose (one clang per process).
static IDLE: Mutex<Vec<Server>> = Mutex::new(Vec::new());
/// Set when a fresh server failed: then every run spawns clang.
static BROKEN: AtomicBool = AtomicBool::new(false);

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FERROCL_CLANG_SERVER").map_or(true, |v| v != "0"))
        && !BROKEN.load(Ordering::Relaxed)
}

/// The shim library for `clang`, compiled into the cache on first use.
fn shim(clang: &Tool) -> Option<PathBuf> {
    // In the cache directory of the moment (the application may move it, or remove the
    // old one); compiled again where missing, once per directory.
    let dir = cache::dir();
    let key = cache::key(&[SHIM.as_bytes(), clang.identity.as_bytes()]);
    let lib = dir.join(format!("clang-server-{key}.so"));
    if lib.is_file() {
        return Some(lib);
    }
    std::fs::create_dir_all(&dir).ok()?;
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".clang-server-{key}.{}-{n}", std::process::id()));
    let (src, so) = (tmp.with_extension("c"), tmp.with_extension("so"));
    // From a file, not clang's stdin: a clang that exits without reading it would raise
    // SIGPIPE in the host, which a library cannot ignore for the application. Under the
    // build time limit, like every tool run.
    let built = std::fs::write(&src, SHIM).is_ok()
        && super::output(
            Command::new(clang.path).args(["-x", "c", "-O2", "-shared", "-fPIC", "-o"]).arg(&so).arg(&src).arg("-ldl"),
        )
        .is_ok_and(|out| out.status.success());
    let placed = built && std::fs::rename(&so, &lib).is_ok();
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&so);
    placed.then_some(lib)
}

fn start(clang: &Tool) -> Option<Server> {
    let shim = shim(clang)?;
    let (ours, theirs) = UnixStream::pair().ok()?;
    let fd = theirs.as_raw_fd();
    let preload = match std::env::var_os("LD_PRELOAD") {
        Some(p) if !p.is_empty() => {
            let mut v = shim.as_os_str().to_owned();
            v.push(":");
            v.push(p);
            v
        }
        _ => shim.as_os_str().to_owned(),
    };
    let mut cmd = Command::new(clang.path);
    cmd.env("LD_PRELOAD", preload).env(SERVE, "1").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: runs in the forked child before exec and calls only async-signal-safe
    // functions. The socket is moved above 9 first, so that making it fds 3 and 4 (the
    // shim's) cannot close it when it already is one of them; dup2's copies do not
    // close on exec.
    unsafe {
        cmd.pre_exec(move || {
            let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
            if high < 0 || libc::dup2(high, 3) < 0 || libc::dup2(high, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().ok()?;
    drop(theirs);
    let mut server = Server { child, socket: ours, owner: std::process::id() };
    // The server must be clang: a wrapper script (ccache's, a distribution's) runs the
    // shell with the shim preloaded, and that shell would answer every request with
    // its own errors. Such a clang is run directly, as with servers off. (`-###`: clang
    // says its version on stderr, unbuffered; `--version` writes to a stdout buffer the
    // shim's `_exit` never flushes.)
    let version = request(&mut server, clang, &[OsStr::new("-###")]);
    if !version.is_ok_and(|v| v.success && v.output.contains("clang version")) {
        BROKEN.store(true, Ordering::Relaxed);
        return None;
    }
    Some(server)
}

/// Sends all of `bytes` without raising SIGPIPE in the host when the server is gone.
fn send_all(s: &UnixStream, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: a valid socket and a buffer of the given length.
        let n = unsafe { libc::send(s.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

fn read_i32(s: &mut UnixStream) -> std::io::Result<i32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(i32::from_ne_bytes(b))
}

/// One request: `Err` means the server is unusable (the caller drops it).
fn request(server: &mut Server, clang: &Tool, args: &[&OsStr]) -> std::io::Result<Ran> {
    let cwd = std::env::current_dir()?;
    let mut words: Vec<&[u8]> = vec![cwd.as_os_str().as_bytes(), clang.path.as_os_str().as_bytes()];
    words.extend(args.iter().map(|a| a.as_bytes()));
    if words.iter().any(|w| w.contains(&0)) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in an argument"));
    }
    let mut message = Vec::new();
    for w in &words {
        message.extend_from_slice(w);
        message.push(0);
    }
    let len = u32::try_from(message.len()).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    message.splice(0..0, len.to_ne_bytes());
    send_all(&server.socket, &message)?;
    let pid = read_i32(&mut server.socket)?;
    if pid <= 0 {
        return Err(std::io::Error::other("the server could not fork"));
    }
    // A clang that hangs must not hang the application's clBuildProgram for ever.
    let limit = super::limit();
    server.socket.set_read_timeout(Some(limit))?;
    let (status, stopped) = match read_i32(&mut server.socket) {
        Ok(s) => (s, false),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            // SAFETY: kill has no memory preconditions; the pid is the server's child,
            // which the server has not reaped (it reports the status first).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            server.socket.set_read_timeout(None)?;
            (read_i32(&mut server.socket)?, true)
        }
        Err(e) => return Err(e),
    };
    server.socket.set_read_timeout(None)?;
    let status = std::process::ExitStatus::from_raw(status);
    let size = read_i32(&mut server.socket)? as u32 as usize;
    let mut text = vec![0u8; size];
    server.socket.read_exact(&mut text)?;
    let mut output = String::from_utf8_lossy(&text).into_owned();
    if stopped {
        output += &format!("clang {}", super::stopped(limit));
    } else if let Some(sig) = status.signal() {
        output += &format!("clang was killed by signal {sig}\n");
    }
    Ok(Ran { success: status.success(), output })
}

/// Starts a server in the background, so that the first build of the process does not
/// wait for clang to start (applications create a program before they build it).
pub(crate) fn warm_up(clang: Tool<'static>) {
    if !enabled() || !IDLE.lock().is_empty() {
        return;
    }
    std::thread::spawn(move || {
        if let Some(server) = start(&clang) {
            IDLE.lock().push(server);
        }
    });
}

/// Runs clang with `args` on a server; `None` when no server can run it (then the
/// caller spawns clang itself).
pub(crate) fn run(clang: &Tool, args: &[&OsStr]) -> Option<Ran> {
    if !enabled() {
        return None;
    }
    let me = std::process::id();
    let reused = {
        let mut idle = IDLE.lock();
        // Servers inherited from the process this one was forked from are not ours.
        idle.retain(|s| s.owner == me);
        idle.pop()
    };
    let fresh = reused.is_none();
    let mut server = reused.or_else(|| start(clang))?;
    match request(&mut server, clang, args) {
        Ok(ran) => {
            IDLE.lock().push(server);
            Some(ran)
        }
        Err(_) => {
            // A reused server may have died (killed from outside); a fresh one that
            // fails means servers do not work with this clang.
            if fresh {
                BROKEN.store(true, Ordering::Relaxed);
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system's clang serves: the check that a server is clang passes for clang
    /// (when it failed, every build ran clang directly, ~25 ms slower a run), and a
    /// served run gives clang's own answer.
    #[test]
    fn clang_serves() {
        let clang = crate::compiler::tools::clang::find().expect("clang is installed (tools/setup)");
        let tool = Tool { path: &clang.path, identity: &clang.identity };
        let ran = run(&tool, &[OsStr::new("-###")]).expect("a server runs clang");
        assert!(ran.success && ran.output.contains("clang version"), "{}", ran.output);
        assert!(!BROKEN.load(Ordering::Relaxed));
        let failed = run(&tool, &[OsStr::new("-x"), OsStr::new("c"), OsStr::new("/nonexistent.c")]).expect("served");
        assert!(!failed.success && failed.output.contains("nonexistent"), "{}", failed.output);
    }
}
