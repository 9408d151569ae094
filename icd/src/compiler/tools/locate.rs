//! Finding the files that ship with the driver, relative to the driver itself, so the
//! same binary works from the build tree and when installed.

use std::collections::HashSet;
use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// The directory holding the loaded `libferrocl.so` (or the executable, for tests that
/// link the driver's code directly).
pub(crate) fn driver_dir() -> Option<PathBuf> {
    driver_file()?.parent().map(|p| p.to_path_buf())
}

/// The loaded `libferrocl.so` itself (or the executable that links the driver's code).
pub(crate) fn driver_file() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    let ok = unsafe { libc::dladdr(driver_dir as *const libc::c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path.
    let path = PathBuf::from(unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned());
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

const ARCHIVE: &str = "libferrocl_builtins.a";

/// The builtins archive: `$FERROCL_BUILTINS`, else next to the driver (build tree),
/// else in the driver's private `ferrocl/` directory (installed package).
pub(crate) fn builtins_archive() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("FERROCL_BUILTINS") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            return Err(format!("FERROCL_BUILTINS={} does not exist\n", p.display()));
        }
        check_abi(&p)?;
        return Ok(p);
    }
    let dir = driver_dir().ok_or("cannot tell where the FerroCL driver was loaded from\n")?;
    let candidates = [dir.join(ARCHIVE), dir.join("ferrocl").join(ARCHIVE), dir.join("..").join(ARCHIVE)];
    let found = candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "FerroCL's builtins archive ({ARCHIVE}) is missing; looked in:\n{}\nReinstall FerroCL, or build the whole workspace ('cargo build --workspace').\n",
            candidates.iter().map(|p| format!("  {}\n", p.display())).collect::<String>()
        )
    })?;
    check_abi(&found)?;
    Ok(found)
}

/// The symbol index of an `ar` archive (its first member, `/` or `/SYM64/`): reading
/// only it, not the whole 20 MiB archive, keeps a cold build's first step short.
fn symbol_table(archive: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(archive).ok()?;
    let mut head = [0u8; 8 + 60];
    f.read_exact(&mut head).ok()?;
    let (magic, header) = head.split_at(8);
    if magic != b"!<arch>\n" || !(header.starts_with(b"/ ") || header.starts_with(b"/SYM64/")) {
        return None;
    }
    let size: u64 = std::str::from_utf8(&header[48..58]).ok()?.trim().parse().ok()?;
    let mut table = Vec::new();
    f.take(size).read_to_end(&mut table).ok()?;
    Some(table)
}

/// The names an `ar` archive's symbol index defines (GNU `/`: a 32-bit big-endian count
/// and offsets, `/SYM64/`: 64-bit ones, then the NUL-terminated names).
pub(crate) fn archive_symbols(archive: &Path) -> std::sync::Arc<HashSet<String>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Read = HashMap<(PathBuf, Option<std::time::SystemTime>), Arc<HashSet<String>>>;
    // Every build asks (`backend::unresolved`): read once per archive and modification time.
    static READ: Mutex<Option<Read>> = Mutex::new(None);
    let key = (archive.to_path_buf(), std::fs::metadata(archive).and_then(|m| m.modified()).ok());
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    read.get_or_insert_with(HashMap::new).entry(key).or_insert_with(|| Arc::new(read_archive_symbols(archive))).clone()
}

fn read_archive_symbols(archive: &Path) -> HashSet<String> {
    let Some(table) = symbol_table(archive) else { return HashSet::new() };
    let wide = std::fs::File::open(archive)
        .ok()
        .and_then(|mut f| {
            use std::io::Read;
            let mut head = [0u8; 15];
            f.read_exact(&mut head).ok()?;
            Some(head[8..].starts_with(b"/SYM64/"))
        })
        .unwrap_or(false);
    let word = if wide { 8 } else { 4 };
    let Some(count) = table.get(..word).map(|b| b.iter().fold(0usize, |n, &x| n << 8 | x as usize)) else {
        return HashSet::new();
    };
    let names = count.checked_add(1).and_then(|n| n.checked_mul(word)).and_then(|at| table.get(at..)).unwrap_or(&[]);
    names.split(|&b| b == 0).filter(|n| !n.is_empty()).map(|n| String::from_utf8_lossy(n).into_owned()).collect()
}

/// Refuses an archive from another FerroCL version: kernels linked with it would call
/// builtins with a different contract. Checked once per archive and modification time.
fn check_abi(archive: &Path) -> Result<(), String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Seen = HashMap<(PathBuf, Option<std::time::SystemTime>), bool>;
    static CHECKED: Mutex<Option<Seen>> = Mutex::new(None);
    let key = (archive.to_path_buf(), std::fs::metadata(archive).and_then(|m| m.modified()).ok());
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    let ok = *checked.get_or_insert_with(HashMap::new).entry(key).or_insert_with(|| {
        let symbol = ferrocl_kernel_abi::BUILTINS_ABI_SYMBOL.as_bytes();
        symbol_table(archive).is_some_and(|table| table.windows(symbol.len()).any(|w| w == symbol))
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "FerroCL's builtins archive {} is not from this FerroCL version (it lacks {}): \
             reinstall FerroCL, or rebuild the whole workspace\n",
            archive.display(),
            ferrocl_kernel_abi::BUILTINS_ABI_SYMBOL
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An archive whose symbol index holds `symbols`, followed by a member mentioning
    /// the ABI symbol (which must not count: only the index is read).
    fn archive(name: &str, symbols: &str) -> PathBuf {
        let header = |name: &str, size: usize| format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644);
        let member = format!("text {}", ferrocl_kernel_abi::BUILTINS_ABI_SYMBOL);
        let text = format!("!<arch>\n{}{symbols}{}{member}", header("/", symbols.len()), header("a.o/", member.len()));
        let path = std::env::temp_dir().join(format!("ferrocl-abi-test-{}-{name}.a", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn abi_symbol_is_looked_up_in_the_index_only() {
        let with = archive("with", &format!("\0\0\0\x01\0\0\0\x44{}\0", ferrocl_kernel_abi::BUILTINS_ABI_SYMBOL));
        assert!(check_abi(&with).is_ok());
        let without = archive("without", "\0\0\0\x01\0\0\0\x44FERROCL_BUILTINS_ABI_0\0");
        let e = check_abi(&without).unwrap_err();
        assert!(e.contains("is not from this FerroCL version"), "{e}");
        let not_archive = std::env::temp_dir().join(format!("ferrocl-abi-test-{}.txt", std::process::id()));
        std::fs::write(&not_archive, ferrocl_kernel_abi::BUILTINS_ABI_SYMBOL).unwrap();
        assert!(check_abi(&not_archive).is_err());
        for p in [with, without, not_archive] {
            let _ = std::fs::remove_file(p);
        }
    }
}
