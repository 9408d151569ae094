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

/// Programs kept in the cache at most, in bytes: `FERROCL_CACHE_MAX_MB`, else 256 MiB.
/// (A run of the Khronos CTS alone builds some 20,000 programs, ~700 MB.)
pub fn limit() -> u64 {
    std::env::var("FERROCL_CACHE_MAX_MB").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(256) << 20
}

/// Marks a program entry used, so trimming keeps it longer (its description's mtime is
/// its last use).
pub fn touch(meta: &Path) {
    if let Ok(f) = std::fs::File::options().write(true).open(meta) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// After a program was added: at most once every few minutes (a scan reads every
/// entry's size), removes the least recently used programs while they take more than
/// `limit`, down to three quarters of it. An entry is a `<key>.meta` with its `.so` and
/// `.log`; the description goes first, so a reader never finds half an entry. Anything
/// else in the directory (bitcode libraries, locks, scratch) is left alone.
pub fn trim(dir: &Path, limit: u64) {
    let stamp = dir.join("trim.stamp");
    let recent = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e < std::time::Duration::from_secs(300)));
    if recent || write_atomic(&stamp, b"").is_err() {
        return;
    }
    trim_now(dir, limit);
}

fn trim_now(dir: &Path, limit: u64) {
    let Ok(files) = std::fs::read_dir(dir) else { return };
    // key -> (last use, bytes)
    let mut entries: std::collections::HashMap<String, (std::time::SystemTime, u64)> = Default::default();
    for f in files.flatten() {
        let name = f.file_name();
        let Some((key, ext)) = name.to_str().and_then(|n| n.split_once('.')) else { continue };
        if key.len() != 32 || !key.bytes().all(|b| b.is_ascii_hexdigit()) || !["so", "meta", "log"].contains(&ext) {
            continue;
        }
        let Ok(m) = f.metadata() else { continue };
        let e = entries.entry(key.to_string()).or_insert((std::time::SystemTime::UNIX_EPOCH, 0));
        e.1 += m.len();
        if ext == "meta" {
            e.0 = m.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        }
    }
    let mut total: u64 = entries.values().map(|e| e.1).sum();
    if total <= limit {
        return;
    }
    let mut by_age: Vec<_> = entries.into_iter().collect();
    by_age.sort_by_key(|(_, (used, _))| *used);
    for (key, (_, bytes)) in by_age {
        if total <= limit / 4 * 3 {
            break;
        }
        for ext in ["meta", "so", "log"] {
            let _ = std::fs::remove_file(dir.join(format!("{key}.{ext}")));
        }
        total -= bytes;
    }
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
    fn trimming_removes_the_least_recently_used_programs_first() {
        let dir = std::env::temp_dir().join(format!("ferrocl-trim-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let now = std::time::SystemTime::now();
        // Ten programs of 1 KiB each, program i last used i minutes ago.
        let keys: Vec<String> = (0..10u8).map(|i| key(&[&[i]])).collect();
        for (i, k) in keys.iter().enumerate() {
            std::fs::write(dir.join(format!("{k}.so")), vec![0u8; 1000]).unwrap();
            std::fs::write(dir.join(format!("{k}.log")), b"").unwrap();
            std::fs::write(dir.join(format!("{k}.meta")), vec![b'm'; 24]).unwrap();
            let f = std::fs::File::options().write(true).open(dir.join(format!("{k}.meta"))).unwrap();
            f.set_modified(now - std::time::Duration::from_secs(60 * i as u64)).unwrap();
        }
        std::fs::write(dir.join("math.cl-0123.bc"), vec![0u8; 100_000]).unwrap();
        // Touching the oldest makes it the newest.
        touch(&dir.join(format!("{}.meta", keys[9])));
        trim_now(&dir, 8 * 1024);
        let kept: Vec<bool> = keys.iter().map(|k| dir.join(format!("{k}.meta")).exists()).collect();
        // Down to 3/4 of 8 KiB: the 6 most recently used of 1024 bytes each.
        assert_eq!(kept, [true, true, true, true, true, false, false, false, false, true]);
        for (k, &kept) in keys.iter().zip(&kept) {
            assert_eq!(dir.join(format!("{k}.so")).exists(), kept);
            assert_eq!(dir.join(format!("{k}.log")).exists(), kept);
        }
        assert!(dir.join("math.cl-0123.bc").exists(), "only program entries are trimmed");
        // Under the limit, nothing goes.
        trim_now(&dir, 1 << 20);
        assert_eq!(keys.iter().filter(|k| dir.join(format!("{k}.meta")).exists()).count(), 6);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keys_are_stable_and_distinct() {
        assert_eq!(key(&[b"a", b"b"]), key(&[b"a", b"b"]));
        assert_ne!(key(&[b"ab"]), key(&[b"a", b"b"]));
        assert_eq!(key(&[b"x"]).len(), 32);
    }
}
