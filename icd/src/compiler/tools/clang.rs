//! Finding and running the external clang that compiles kernels.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub(crate) struct Clang {
    pub(crate) path: PathBuf,
    /// Path, size and modification time of the binary: part of every cache key, and
    /// known from a `stat` alone, so a warm build never has to start clang.
    pub(crate) identity: String,
}

/// The message a build log carries when no clang can be found.
pub(crate) const MISSING: &str = "FerroCL needs clang to compile OpenCL C, and none was found.\n\
Install one (Debian 12: 'apt-get install clang-19'; clang 18 and 19 work),\n\
or point FERROCL_CLANG at a clang binary.\n";

/// A tool's real path, size and modification time, from a `stat` alone; `None` when it
/// is not a file.
pub(crate) fn identity(path: &Path) -> Option<String> {
    let real = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mtime = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("{}|{}|{}", real.display(), meta.len(), mtime.as_nanos()))
}

fn probe(path: PathBuf) -> Option<Clang> {
    // An unversioned `clang` on PATH may be any version: asked once, in that case only
    // (FERROCL_CLANG is taken as given).
    if std::env::var_os("FERROCL_CLANG").is_none() && path.file_name().is_some_and(|n| n == "clang") {
        let out = super::output(Command::new(&path).arg("--version")).ok()?;
        if !major_version(&String::from_utf8_lossy(&out.stdout)).is_some_and(|v| v >= OLDEST) {
            return None;
        }
    }
    Some(Clang { identity: identity(&path)?, path })
}

/// The oldest clang that builds kernels (see `find`).
const OLDEST: u32 = 18;

/// The major version in `clang --version`'s output ("Debian clang version 19.1.7 ...").
fn major_version(text: &str) -> Option<u32> {
    let rest = &text[text.find("clang version ")? + "clang version ".len()..];
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// `FERROCL_CLANG`, else the newest `clang-N` on PATH (19 down to 18), else `clang`.
/// Older ones cannot build kernels: the generated launchers use LLVM 18's `zext nneg`,
/// and the library element-wise builtins clang 16 lacks (`rint`; clang 15 also `round`,
/// `sqrt`, `fma`, `copysign`). With clang 15 and 16 every build failed, and these were
/// picked when no newer one was installed. Tested: 19.
pub(crate) fn find() -> Option<&'static Clang> {
    static FOUND: OnceLock<Option<Clang>> = OnceLock::new();
    FOUND.get_or_init(|| super::find("FERROCL_CLANG", "clang", OLDEST..=19, probe)).as_ref()
}

/// Runs clang (on a fork server where one works); `Err` carries its diagnostics.
pub(crate) fn run(clang: &Clang, args: &[&std::ffi::OsStr]) -> Result<String, String> {
    // A background build's clang runs at the lowest priority, which a server's child
    // would not.
    let served = (!super::background())
        .then(|| {
            super::fork_server::run(&super::fork_server::Tool { path: &clang.path, identity: &clang.identity }, args)
        })
        .flatten();
    if let Some(ran) = served {
        return if ran.success { Ok(ran.output) } else { Err(ran.output) };
    }
    let out = super::output(Command::new(&clang.path).args(args))?;
    let diagnostics = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(diagnostics)
    } else {
        Err(diagnostics)
    }
}

/// `FERROCL_VERIFY=1`: every module the rewrite writes goes through LLVM's verifier
/// before it is compiled (the tests set it). Off by default: clang's release builds
/// skip the verifier, and running `opt` costs a process per build.
pub(crate) fn verifying() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FERROCL_VERIFY").is_some_and(|v| v != "0" && !v.is_empty()))
}

/// A tool of the same LLVM as clang (`opt`): Debian's clang-N is a link into
/// /usr/lib/llvm-N/bin, beside that LLVM's tools (package llvm-N).
pub(crate) fn sibling(clang: &Clang, name: &str) -> Option<std::path::PathBuf> {
    let tool = std::fs::canonicalize(&clang.path).ok()?.with_file_name(name);
    tool.is_file().then_some(tool)
}

/// Runs LLVM's verifier (`opt -passes=verify`, from the same LLVM as clang) over `ll`;
/// `Err` carries what it found.
pub(crate) fn verify(clang: &Clang, ll: &Path) -> Result<(), String> {
    let opt = sibling(clang, "opt").unwrap_or_else(|| clang.path.with_file_name("opt"));
    if !opt.is_file() {
        return Err(format!(
            "FERROCL_VERIFY is set but LLVM's verifier is missing: no {} (Debian: apt-get install llvm-N for clang-N)\n",
            opt.display()
        ));
    }
    let out = Command::new(&opt)
        .args(["-passes=verify", "-disable-output"])
        .arg(ll)
        .output()
        .map_err(|e| format!("cannot run {}: {e}\n", opt.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "FerroCL's rewritten IR ({}) fails LLVM's verifier:\n{}",
            ll.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_major_version() {
        assert_eq!(major_version("Debian clang version 19.1.7 (3~deb12u1)\nTarget: x86_64"), Some(19));
        assert_eq!(major_version("Ubuntu clang version 16.0.6 (15)"), Some(16));
        assert_eq!(major_version("clang version 18.1.8"), Some(18));
        assert_eq!(major_version("gcc (Debian 12.2.0-14) 12.2.0"), None);
    }
}
