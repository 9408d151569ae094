//! The on-disk program cache: kernel libraries keyed by everything that affects them,
//! so a program built before (by any process) loads in milliseconds.
//!
//! Entries are written to a temporary name and renamed into place, so concurrent
//! processes never see half-written files; the description (`.meta`) is renamed last
//! and marks the entry complete.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

/// Where the cache should be: `$FERROCL_CACHE_DIR`, else `$XDG_CACHE_HOME/ferrocl`,
/// else `~/.cache/ferrocl`. Read at every use: an application may change them.
fn configured() -> PathBuf {
    if let Some(d) = std::env::var_os("FERROCL_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("ferrocl");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join(".cache/ferrocl");
    }
    private()
}

/// Directories found writable, and those given up on (read-only, not creatable, full).
static WRITABLE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static UNUSABLE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The cache directory: the configured one where it can be written (checked once per
/// path), else a private one under the temporary directory, so that a read-only,
/// missing or full cache never fails a build.
pub(crate) fn dir() -> PathBuf {
    let d = configured();
    if UNUSABLE.lock().contains(&d) {
        return private();
    }
    if WRITABLE.lock().contains(&d) {
        return d;
    }
    if writable_now(&d) {
        WRITABLE.lock().push(d.clone());
        d
    } else {
        UNUSABLE.lock().push(d);
        private()
    }
}

/// Whether a file can be created in `d` now (creating `d` if needed).
pub(crate) fn writable_now(d: &Path) -> bool {
    let probe = d.join(format!(".probe-{}", std::process::id()));
    let ok = std::fs::create_dir_all(d).is_ok() && std::fs::write(&probe, b"ferrocl").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Stops using `d` for this process (a build failed there and it cannot be written).
pub(crate) fn give_up_on(d: &Path) {
    WRITABLE.lock().retain(|w| w != d);
    UNUSABLE.lock().push(d.to_path_buf());
}

/// This user's own directory under the temporary directory: `ferrocl-cache-<uid>`
/// when it is ours and private, else one for this process alone.
fn private() -> PathBuf {
    static PRIVATE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PRIVATE
        .get_or_init(|| {
            use std::os::unix::fs::{DirBuilderExt, MetadataExt};
            // SAFETY: getuid has no preconditions.
            let uid = unsafe { libc::getuid() };
            let tmp = std::env::temp_dir();
            let shared = tmp.join(format!("ferrocl-cache-{uid}"));
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&shared);
            // Someone else's directory, or one others may write, must not hold code we run.
            let ours =
                std::fs::symlink_metadata(&shared).is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
            if ours && writable_now(&shared) {
                return shared;
            }
            let own = tmp.join(format!("ferrocl-cache-{uid}-{}", std::process::id()));
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&own);
            own
        })
        .clone()
}

/// A 128-bit key over `parts` (two SipHash passes with distinct prefixes; the std
/// hasher uses fixed keys, so keys are stable across processes).
pub(crate) fn key(parts: &[&[u8]]) -> String {
    let half = |salt: u8| {
        let mut h = std::hash::DefaultHasher::new();
        salt.hash(&mut h);
        for p in parts {
            p.hash(&mut h);
        }
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

/// Writes `bytes` to `path` atomically (temporary file in the same directory, rename).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{:?}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Programs kept in the cache at most, in bytes: `FERROCL_CACHE_MAX_MB`, else 256 MiB.
/// (A run of the Khronos CTS alone builds some 20,000 programs, ~700 MB.)
pub(crate) fn limit() -> u64 {
    std::env::var("FERROCL_CACHE_MAX_MB").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(256) << 20
}

/// Marks a program entry used, so trimming keeps it longer (its description's mtime, or
/// for a program unpacked from a binary its `.so`'s, is its last use).
pub(crate) fn touch(meta: &Path) {
    if let Ok(f) = std::fs::File::options().write(true).open(meta) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Marks a library set used by the modification time of its lock file (created if
/// missing).
pub(crate) fn mark_library_used(lock: &Path) {
    if let Ok(f) = std::fs::File::options().write(true).create(true).truncate(false).open(lock) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Library sets (the bitcode libraries of one clang, CPU and driver build, marked used by
/// their lock file) unused this long are removed: a set is only rebuilt when the driver
/// or clang changes, so older ones belong to versions no longer installed.
const LIBRARY_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);

/// Scratch directories (`work-<pid>-<n>`) older than this belong to no build any more.
const SCRATCH_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// After a program was added: at most once every few minutes (a scan reads every
/// entry's size), removes the least recently used programs while they take more than
/// `limit`, down to three quarters of it, library sets unused for `LIBRARY_MAX_AGE`, and
/// scratch directories older than `SCRATCH_MAX_AGE`. A program is a `<key>.meta` with
/// its `.so` or `.ll` and `.log` (the description goes first, so a reader never finds
/// half an entry), a `bin-<key>.so` unpacked from a binary, or a `unit-<key>.so`, one
/// kernel's code generated at its first launch. Anything else in the directory
/// (locks of live sets) is left alone.
pub(crate) fn trim(dir: &Path, limit: u64) {
    let stamp = dir.join("trim.stamp");
    let recent = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e < std::time::Duration::from_secs(300)));
    if recent || write_atomic(&stamp, b"").is_err() {
        return;
    }
    // Off the build's path: the scan stats every file (~50 ms at 19,000 files here, and
    // a cold directory costs more), which the build that happened to add a program
    // should not wait for. A trim cut short by the process's exit leaves whole entries or
    // orphans without a description, which the next one counts as least recently used.
    let owned = dir.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("ferrocl-cache-trim".into())
        .spawn(move || trim_now(&owned, limit, LIBRARY_MAX_AGE));
    if spawned.is_err() {
        trim_now(dir, limit, LIBRARY_MAX_AGE);
    }
}

/// What a cache file name says it belongs to.
#[derive(Debug, PartialEq)]
enum Owner<'a> {
    /// A program entry, by the names of its files without extension; `true` for the
    /// file whose modification time is the entry's last use.
    Program(&'a str, bool),
    /// A library set, by key; `true` for its lock file (its last use).
    Library(&'a str, bool),
}

fn is_key(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn owner(name: &str) -> Option<Owner<'_>> {
    let (stem, ext) = name.rsplit_once('.')?;
    match ext {
        "so" | "meta" | "log" | "ll" if is_key(stem) => Some(Owner::Program(stem, ext == "meta")),
        "so" if stem.strip_prefix("bin-").or_else(|| stem.strip_prefix("unit-")).is_some_and(is_key) => {
            Some(Owner::Program(stem, true))
        }
        "bc" | "symbols" | "lock" => {
            let (part, key) = stem.rsplit_once('-')?;
            (is_key(key) && !part.is_empty()).then_some(Owner::Library(key, part == "libclc" && ext == "lock"))
        }
        _ => None,
    }
}

fn trim_now(dir: &Path, limit: u64, library_age: std::time::Duration) {
    use std::collections::HashMap;
    use std::time::SystemTime;
    let Ok(files) = std::fs::read_dir(dir) else { return };
    // Program -> (last use, bytes); library set -> (lock's time, newest file's, files).
    let mut programs: HashMap<String, (SystemTime, u64)> = HashMap::new();
    type Set = (Option<SystemTime>, SystemTime, Vec<std::ffi::OsString>);
    let mut libraries: HashMap<String, Set> = HashMap::new();
    for f in files.flatten() {
        let name = f.file_name();
        // A build's scratch directory left by a process that ended mid-build (its
        // application exited during a second build in the background, or crashed): no
        // build takes a day.
        if name.to_str().is_some_and(|n| n.starts_with("work-")) {
            let modified = f.metadata().and_then(|m| m.modified());
            if modified.is_ok_and(|t| t.elapsed().is_ok_and(|age| age > SCRATCH_MAX_AGE)) {
                let _ = std::fs::remove_dir_all(f.path());
            }
            continue;
        }
        let Some(owned) = name.to_str().and_then(owner) else { continue };
        let Ok(m) = f.metadata() else { continue };
        let modified = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        match owned {
            Owner::Program(stem, marks) => {
                let e = programs.entry(stem.to_string()).or_insert((SystemTime::UNIX_EPOCH, 0));
                e.1 += m.len();
                if marks {
                    e.0 = modified;
                }
            }
            Owner::Library(key, marks) => {
                let e = libraries.entry(key.to_string()).or_insert((None, SystemTime::UNIX_EPOCH, Vec::new()));
                e.2.push(name.clone());
                e.1 = e.1.max(modified);
                if marks {
                    e.0 = Some(modified);
                }
            }
        }
    }
    // A set without its lock counts from its newest file.
    for (lock, newest, names) in libraries.values() {
        if lock.unwrap_or(*newest).elapsed().is_ok_and(|age| age > library_age) {
            names.iter().for_each(|n| drop(std::fs::remove_file(dir.join(n))));
        }
    }
    let mut total: u64 = programs.values().map(|e| e.1).sum();
    if total <= limit {
        return;
    }
    let mut by_age: Vec<_> = programs.into_iter().collect();
    by_age.sort_by_key(|(_, (used, _))| *used);
    for (stem, (_, bytes)) in by_age {
        if total <= limit / 4 * 3 {
            break;
        }
        // The description first: without it the rest is no entry to a reader.
        for ext in ["meta", "so", "log"] {
            let _ = std::fs::remove_file(dir.join(format!("{stem}.{ext}")));
        }
        total -= bytes;
    }
}

/// An exclusive advisory lock on a file, released when dropped (or when the process
/// dies, which flock guarantees, so a crashed build never blocks others).
pub(crate) struct Lock(Option<std::fs::File>);

impl Lock {
    pub(crate) fn acquire(path: &Path) -> Lock {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).ok();
        if let Some(f) = &file {
            // SAFETY: flock on a file descriptor we own.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
        }
        Lock(file)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        if let Some(f) = &self.0 {
            // SAFETY: as above.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_UN) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, by: std::time::Duration) {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(std::time::SystemTime::now() - by).unwrap();
    }

    #[test]
    fn trimming_removes_the_least_recently_used_programs_first() {
        let dir = std::env::temp_dir().join(format!("ferrocl-trim-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let minutes = |m: u64| std::time::Duration::from_secs(60 * m);
        // Ten programs of 1 KiB each, program i last used i minutes ago; the odd ones
        // were unpacked from binaries (a lone `bin-<key>.so`).
        let keys: Vec<String> = (0..10u8).map(|i| key(&[&[i]])).collect();
        let marker = |i: usize| match i % 2 {
            0 => dir.join(format!("{}.meta", keys[i])),
            _ => dir.join(format!("bin-{}.so", keys[i])),
        };
        for (i, k) in keys.iter().enumerate() {
            if i % 2 == 0 {
                std::fs::write(dir.join(format!("{k}.so")), vec![0u8; 1000]).unwrap();
                std::fs::write(dir.join(format!("{k}.log")), b"").unwrap();
                std::fs::write(dir.join(format!("{k}.meta")), vec![b'm'; 24]).unwrap();
            } else {
                std::fs::write(marker(i), vec![0u8; 1024]).unwrap();
            }
            age(&marker(i), minutes(i as u64));
        }
        // Touching the oldest makes it the newest.
        touch(&marker(9));
        // A library set in use, and one whose lock says it was last used long ago.
        let (live, stale) = (key(&[b"live"]), key(&[b"stale"]));
        for k in [&live, &stale] {
            for f in [format!("math.cl-{k}.bc"), format!("math.cl-{k}.symbols"), format!("workitem.c-{k}.bc")] {
                std::fs::write(dir.join(f), vec![0u8; 100_000]).unwrap();
            }
            mark_library_used(&dir.join(format!("libclc-{k}.lock")));
        }
        age(&dir.join(format!("libclc-{stale}.lock")), minutes(60));
        // Scratch of a build running now, and of one whose process ended two days ago.
        for (n, ago) in [("work-1-0", minutes(1)), ("work-2-0", minutes(2 * 24 * 60))] {
            std::fs::create_dir_all(dir.join(n).join("sub")).unwrap();
            std::fs::write(dir.join(n).join("program.o"), b"o").unwrap();
            std::fs::File::open(dir.join(n)).unwrap().set_modified(std::time::SystemTime::now() - ago).unwrap();
        }
        trim_now(&dir, 8 * 1024, minutes(30));
        assert!(dir.join("work-1-0").exists() && !dir.join("work-2-0").exists());
        let kept: Vec<bool> = (0..10).map(|i| marker(i).exists()).collect();
        // Down to 3/4 of 8 KiB: the 6 most recently used of 1024 bytes each.
        assert_eq!(kept, [true, true, true, true, true, false, false, false, false, true]);
        for (k, &kept) in keys.iter().zip(&kept).step_by(2) {
            assert_eq!(dir.join(format!("{k}.so")).exists(), kept);
            assert_eq!(dir.join(format!("{k}.log")).exists(), kept);
        }
        for (k, kept) in [(&live, true), (&stale, false)] {
            for f in [format!("math.cl-{k}.bc"), format!("workitem.c-{k}.bc"), format!("libclc-{k}.lock")] {
                assert_eq!(dir.join(&f).exists(), kept, "{f}");
            }
        }
        // Under the limit, no program goes.
        trim_now(&dir, 1 << 20, minutes(30));
        assert_eq!((0..10).filter(|&i| marker(i).exists()).count(), 6);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cache_file_names_name_their_owner() {
        let k = "0123456789abcdef0123456789abcdef";
        assert_eq!(owner(&format!("{k}.meta")), Some(Owner::Program(k, true)));
        assert_eq!(owner(&format!("{k}.so")), Some(Owner::Program(k, false)));
        assert_eq!(owner(&format!("bin-{k}.so")), Some(Owner::Program(&format!("bin-{k}"), true)));
        assert_eq!(owner(&format!("math.cl-{k}.bc")), Some(Owner::Library(k, false)));
        assert_eq!(owner(&format!("libclc-{k}.lock")), Some(Owner::Library(k, true)));
        for other in ["trim.stamp", "link-template-input.o", &format!("link-{k}.args"), "work-1-0", "x-12.bc"] {
            assert_eq!(owner(other), None, "{other}");
        }
    }

    #[test]
    fn keys_are_stable_and_distinct() {
        assert_eq!(key(&[b"a", b"b"]), key(&[b"a", b"b"]));
        assert_ne!(key(&[b"ab"]), key(&[b"a", b"b"]));
        assert_eq!(key(&[b"x"]).len(), 32);
    }
}
