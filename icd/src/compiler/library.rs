//! The kernel-side library (`builtins/clc/`): its parts compiled to bitcode once per
//! clang and CPU (into the cache, cut into chunks where big), an index of what each
//! piece defines and calls, and the pieces a kernel module needs, in link order.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::passes::context;
use super::passes::ir_text::callee_names;
use super::tools::{self, clang::Clang};
use super::{cache, os, target_flags, Target, PIPELINE};

include!("../../../builtins/clc/parts.rs");

/// All library sources and flags, for cache keys.
pub(super) fn libraries_text() -> String {
    // Sources and the flags each part is compiled with.
    BITCODE_LIBRARIES
        .iter()
        .flat_map(|(_, src, flags)| std::iter::once(*src).chain(flags.iter().copied()))
        .chain(LIBRARY_HEADERS.iter().map(|(_, src)| *src))
        .chain([EXTENSIONS_HEADER, &context::c_header()])
        .collect()
}

/// The headers the parts include: the library's own, and the names of the builtins
/// that read the work-item context, generated from the driver's table.
fn headers() -> impl Iterator<Item = (&'static str, String)> {
    LIBRARY_HEADERS.iter().map(|&(name, text)| (name, text.to_string())).chain([("context.h", context::c_header())])
}

/// One linkable piece of the library (a part, or a chunk of one): its bitcode and the
/// functions it defines and calls.
pub(super) struct Part {
    pub(super) bitcode: PathBuf,
    defines: HashSet<String>,
    calls: HashSet<String>,
}

impl Part {
    /// Whether this piece defines the function.
    #[cfg(test)]
    pub(super) fn defines(&self, name: &str) -> bool {
        self.defines.contains(name)
    }
}

/// Reads a part's index (`C file`, then its `D name` and `U name` lines, per piece);
/// `None` when it is missing or names a missing file.
fn read_index(idx: &Path) -> Option<Vec<Part>> {
    let text = std::fs::read_to_string(idx).ok()?;
    let mut pieces: Vec<Part> = Vec::new();
    for line in text.lines() {
        match (line.split_once(' '), pieces.last_mut()) {
            (Some(("C", f)), _) => {
                pieces.push(Part { bitcode: PathBuf::from(f), defines: HashSet::new(), calls: HashSet::new() })
            }
            (Some(("D", n)), Some(p)) => drop(p.defines.insert(n.to_string())),
            (Some(("U", n)), Some(p)) => drop(p.calls.insert(n.to_string())),
            _ => return None,
        }
    }
    (!pieces.is_empty() && pieces.iter().all(|p| p.bitcode.is_file())).then_some(pieces)
}

/// The library parts for this clang and CPU, compiled on first use (in parallel, under
/// a lock so concurrent first builds wait for one; the conversions alone take seconds),
/// as pieces in link order.
pub(super) fn parts(clang: &Clang, target: &Target, cache: &Path, scratch: &Path) -> Result<&'static [Part], String> {
    let key = cache::key(&[
        PIPELINE.as_bytes(),
        clang.identity.as_bytes(),
        libraries_text().as_bytes(),
        target.cpu.as_bytes(),
    ]);
    // Read once per process: a build would otherwise spend ~3 ms reading the indexes.
    static LOADED: parking_lot::Mutex<Vec<(PathBuf, String, &'static [Part])>> = parking_lot::Mutex::new(Vec::new());
    if let Some((.., parts)) = LOADED.lock().iter().find(|(c, k, _)| c == cache && *k == key) {
        return Ok(parts);
    }
    let indexes: Vec<PathBuf> =
        BITCODE_LIBRARIES.iter().map(|(name, ..)| cache.join(format!("{name}-{key}.symbols"))).collect();
    let lock = cache.join(format!("libclc-{key}.lock"));
    cache::mark_library_used(&lock);
    let mut read: Vec<Option<Vec<Part>>> = indexes.iter().map(|i| read_index(i)).collect();
    if read.iter().any(Option::is_none) {
        let _lock = cache::Lock::acquire(&lock);
        for (name, text) in headers() {
            std::fs::write(scratch.join(name), text).map_err(|e| e.to_string())?;
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = BITCODE_LIBRARIES
                .iter()
                .zip(&indexes)
                .filter(|(_, idx)| read_index(idx).is_none())
                .map(|(&(name, source, lang), idx)| {
                    let bc = cache.join(format!("{name}-{key}.bc"));
                    s.spawn(move || compile_library(clang, scratch, &bc, idx, name, source, lang))
                })
                .collect();
            handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|_| Err("library compile panicked".into())))
        })?;
        read = indexes.iter().map(|i| read_index(i)).collect();
    }
    let parts: Vec<Part> = read
        .into_iter()
        .zip(&indexes)
        .map(|(p, i)| p.ok_or_else(|| format!("FerroCL's library index {} is unreadable\n", i.display())))
        .collect::<Result<Vec<Vec<Part>>, String>>()?
        .into_iter()
        .flatten()
        .collect();
    // Kept for the process's life: a few hundred small sets per clang and cache.
    let parts: &'static [Part] = Vec::leak(parts);
    LOADED.lock().push((cache.to_path_buf(), key, parts));
    Ok(parts)
}

/// Compiles one part to IR text (read for its symbols) and then to bitcode, cut into
/// chunks where it is big and `llvm-extract` is there (`chunks`); the index is written
/// last.
fn compile_library(
    clang: &Clang,
    scratch: &Path,
    bc: &Path,
    idx: &Path,
    name: &str,
    source: &str,
    lang: &[&str],
) -> Result<(), String> {
    let src = scratch.join(name);
    std::fs::write(&src, source).map_err(|e| e.to_string())?;
    let (ll, tmp) = (scratch.join(format!("{name}.ll")), scratch.join(format!("{name}.bc")));
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend(lang.iter().map(|s| os(s)));
    args.extend([os("-O2"), os("-emit-llvm"), os("-S"), src.as_os_str(), os("-o"), ll.as_os_str()]);
    tools::clang::run(clang, &args).map_err(|e| format!("FerroCL could not compile its {name} library:\n{e}"))?;
    let text = std::fs::read_to_string(&ll).map_err(|e| e.to_string())?;
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend([os("-c"), os("-emit-llvm"), ll.as_os_str(), os("-o"), tmp.as_os_str()]);
    tools::clang::run(clang, &args).map_err(|e| format!("FerroCL could not compile its {name} library:\n{e}"))?;
    std::fs::rename(&tmp, bc).map_err(|e| e.to_string())?;
    let index = chunked_index(clang, bc, &text, name).unwrap_or_else(|| whole_index(bc, &text));
    cache::write_atomic(idx, index.as_bytes()).map_err(|e| e.to_string())
}

/// The index of a part linked whole: what its text defines and declares.
fn whole_index(bc: &Path, text: &str) -> String {
    let mut index = format!("C {}\n", bc.display());
    for line in text.lines() {
        let tag = if line.starts_with("define ") {
            "D"
        } else if line.starts_with("declare ") {
            "U"
        } else {
            continue;
        };
        if let Some((n, _)) = callee_names(line).into_iter().next() {
            index += &format!("{tag} {n}\n");
        }
    }
    index
}

/// The index of a part cut into chunks (`name.N-key.bc` beside it); `None` when it is
/// one chunk anyway, or extraction is impossible.
fn chunked_index(clang: &Clang, bc: &Path, text: &str, name: &str) -> Option<String> {
    let plan = tools::chunks::plan(text);
    let tool = tools::chunks::extractor(&clang.path).filter(|_| plan.len() > 1)?;
    let key = bc.file_stem()?.to_str()?.rsplit_once('-')?.1;
    let mut index = String::new();
    for (i, chunk) in plan.iter().enumerate() {
        let file = bc.with_file_name(format!("{name}.{i}-{key}.bc"));
        tools::chunks::extract(&tool, bc, chunk, &file).ok()?;
        index += &format!("C {}\n", file.display());
        index.extend(chunk.listed.iter().map(|n| format!("D {n}\n")));
        index.extend(chunk.calls.iter().map(|n| format!("U {n}\n")));
    }
    Some(index)
}

/// The functions a module calls that no library part and not the archive define,
/// sorted: (OpenCL builtins, by their `_Z` names; the program's own functions, declared
/// but defined nowhere). The second list may hold C library functions the system linker
/// resolves: the caller keeps those its error names.
pub(super) fn undefined(module: &str, parts: &[Part], archive: &Path) -> (Vec<String>, Vec<String>) {
    let archive = tools::locate::archive_symbols(archive);
    let defined: HashSet<String> = module
        .lines()
        .filter(|l| l.starts_with("define "))
        .filter_map(|l| callee_names(l).into_iter().next().map(|(n, _)| n))
        .collect();
    let used: HashSet<String> = module
        .lines()
        .filter(|l| !l.starts_with("declare ") && !l.starts_with("define "))
        .flat_map(|l| callee_names(l).into_iter().map(|(n, _)| n))
        .collect();
    let (mut builtins, mut functions): (Vec<String>, Vec<String>) = used
        .into_iter()
        .filter(|n| !n.starts_with("llvm.") && !defined.contains(n))
        .filter(|n| !archive.contains(n) && !parts.iter().any(|p| p.defines.contains(n)))
        .partition(|n| n.starts_with("_Z"));
    builtins.sort();
    functions.sort();
    (builtins, functions)
}

/// The parts a module needs, in link order: those defining a function it declares,
/// and, transitively, what those parts call.
pub(super) fn needed_parts<'a>(parts: &'a [Part], module: &str) -> Result<Vec<&'a Part>, String> {
    let mut wanted: HashSet<String> = module
        .lines()
        .filter(|l| l.starts_with("declare "))
        .filter_map(|l| callee_names(l).into_iter().next().map(|(n, _)| n))
        .collect();
    let mut used = vec![false; parts.len()];
    loop {
        let before = wanted.len();
        for (i, p) in parts.iter().enumerate() {
            if !used[i] && p.defines.iter().any(|d| wanted.contains(d)) {
                used[i] = true;
                wanted.extend(p.calls.iter().cloned());
            }
        }
        if wanted.len() == before {
            break;
        }
    }
    // A part must not call into one linked before it: that reference would stay open.
    for (i, p) in parts.iter().enumerate().filter(|&(i, _)| used[i]) {
        if let Some(c) = p.calls.iter().find(|c| parts[..i].iter().any(|q| q.defines.contains(*c))) {
            return Err(format!(
                "FerroCL bug: library part {} calls {c} from a part linked before it\n",
                p.bitcode.display()
            ));
        }
    }
    Ok(parts.iter().zip(used).filter(|(_, u)| *u).map(|(p, _)| p).collect())
}
