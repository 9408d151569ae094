//! The on-disk program cache: kernel libraries keyed by everything that affects them,
//! so a program built before (by any process) loads in milliseconds.
//!
//! Entries are written to a temporary name and renamed into place, so concurrent
//! processes never see half-written files; the description (`.meta`) is renamed last
//! and marks the entry complete.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The cache directory: `$FERROCL_CACHE_DIR`, else `$XDG_CACHE_HOME/ferrocl`, else
/// `~/.cache/ferrocl`.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FERROCL_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("ferrocl");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join(".cache/ferrocl");
    }
    // SAFETY: getuid has no preconditions.
    std::env::temp_dir().join(format!("ferrocl-cache-{}", unsafe { libc::getuid() }))
}

/// A 128-bit key over `parts` (two SipHash passes with distinct prefixes; the std
/// hasher uses fixed keys, so keys are stable across processes).
pub fn key(parts: &[&[u8]]) -> String {
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
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

/// An exclusive advisory lock on a file, released when dropped (or when the process
/// dies, which flock guarantees, so a crashed build never blocks others).
pub struct Lock(Option<std::fs::File>);

impl Lock {
    pub fn acquire(path: &Path) -> Lock {
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

    #[test]
    fn keys_are_stable_and_distinct() {
        assert_eq!(key(&[b"a", b"b"]), key(&[b"a", b"b"]));
        assert_ne!(key(&[b"ab"]), key(&[b"a", b"b"]));
        assert_eq!(key(&[b"x"]).len(), 32);
    }
}
