//! Splitting a kernel library part into chunks of a few dozen functions.
//!
//! clang's `-mlink-builtin-bitcode` materialises every function of a linked bitcode
//! file (it sets the target's attributes on each), so linking a part costs time in
//! proportion to its size, not to what the kernel uses: a kernel calling one
//! conversion spent ~85 ms loading the 1.4 MB conversions part, ~0 with that function
//! alone. So big parts are cut, when the library is compiled, into chunks that
//! `llvm-extract --recursive` makes self-contained (each carries the part's functions
//! its own call), and a kernel links only the chunks defining what it calls.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::compiler::passes::ir_text;

/// About this many lines of IR per chunk: ~20-30 KB of bitcode, ~5-8 ms to link.
const CHUNK_LINES: usize = 2000;
/// And at most this many listed functions (a bound on llvm-extract's command line).
const CHUNK_FUNCTIONS: usize = 256;

/// One function defined in a module's text.
struct Function {
    name: String,
    internal: bool,
    lines: usize,
    /// Functions it calls (defined in the module or not).
    calls: Vec<String>,
}

/// The functions a module's text defines, and the functions it declares.
fn functions(ll: &str) -> (Vec<Function>, HashSet<String>) {
    let (mut out, mut declared) = (Vec::new(), HashSet::new());
    let mut current: Option<Function> = None;
    for line in ll.lines() {
        if let Some(f) = current.as_mut() {
            f.lines += 1;
            if line.starts_with('}') {
                out.extend(current.take());
            } else {
                f.calls.extend(ir_text::callees_in(line));
            }
        } else if line.starts_with("define ") {
            if let Some((name, _)) = ir_text::callee_names(line).into_iter().next() {
                let head = &line[..line.find('@').unwrap_or(0)];
                let internal = head.contains(" internal ") || head.contains(" private ");
                current = Some(Function { name, internal, lines: 1, calls: Vec::new() });
            }
        } else if line.starts_with("declare ") {
            declared.extend(ir_text::callee_names(line).into_iter().next().map(|(n, _)| n));
        }
    }
    (out, declared)
}

/// A chunk to extract: the functions it lists (defines for others to link), and the
/// functions outside the part that it and what it carries call.
pub(crate) struct Chunk {
    pub(crate) listed: Vec<String>,
    pub(crate) calls: HashSet<String>,
}

/// Cuts a part (its IR text) into chunks in file order: neighbouring functions come
/// from one generator macro and call the same helpers. Internal functions are never
/// listed; they travel with their callers.
pub(crate) fn plan(ll: &str) -> Vec<Chunk> {
    let (funcs, declared) = functions(ll);
    let by_name: HashMap<&str, &Function> = funcs.iter().map(|f| (f.name.as_str(), f)).collect();
    // What a set of functions reaches inside the part, and what it calls outside.
    let outside_calls = |roots: &[String]| {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut todo: Vec<&str> = roots.iter().map(String::as_str).collect();
        let mut calls = HashSet::new();
        while let Some(n) = todo.pop() {
            if !seen.insert(n) {
                continue;
            }
            for c in by_name.get(n).map(|f| f.calls.as_slice()).unwrap_or_default() {
                if by_name.contains_key(c.as_str()) {
                    todo.push(c);
                } else if declared.contains(c) {
                    calls.insert(c.clone());
                }
            }
        }
        calls
    };
    let mut chunks = Vec::new();
    let (mut listed, mut lines) = (Vec::new(), 0);
    for f in funcs.iter().filter(|f| !f.internal) {
        listed.push(f.name.clone());
        lines += f.lines;
        if lines >= CHUNK_LINES || listed.len() >= CHUNK_FUNCTIONS {
            let calls = outside_calls(&listed);
            chunks.push(Chunk { listed: std::mem::take(&mut listed), calls });
            lines = 0;
        }
    }
    if !listed.is_empty() {
        let calls = outside_calls(&listed);
        chunks.push(Chunk { listed, calls });
    }
    chunks
}

/// `llvm-extract` of the LLVM `clang` comes from (Debian: /usr/lib/llvm-N/bin), if any.
pub(crate) fn extractor(clang: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(clang).ok()?;
    Some(real.with_file_name("llvm-extract")).filter(|p| p.is_file())
}

/// Writes the chunk's bitcode (its listed functions and what they call in `part`),
/// under the build time limit like every tool.
pub(crate) fn extract(tool: &Path, part: &Path, chunk: &Chunk, out: &Path) -> Result<(), String> {
    let mut cmd = Command::new(tool);
    cmd.arg("--recursive").args(chunk.listed.iter().map(|n| format!("--func={n}"))).arg(part).arg("-o").arg(out);
    let done = super::output(&mut cmd)?;
    match done.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&done.stderr).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_list_external_functions_and_carry_outside_calls() {
        let mut ll = String::from("declare float @_Z3sinf(float)\n");
        ll += "define internal float @helper(float %x) {\n  %r = call float @_Z3sinf(float %x)\n  ret float %r\n}\n";
        for i in 0..3000 {
            ll +=
                &format!("define float @f{i}(float %x) {{\n  %r = call float @helper(float %x)\n  ret float %r\n}}\n");
        }
        let chunks = plan(&ll);
        assert!(chunks.len() > 1, "3000 functions make several chunks");
        assert!(chunks.iter().all(|c| !c.listed.iter().any(|n| n == "helper")), "internal helpers are not listed");
        assert_eq!(chunks.iter().map(|c| c.listed.len()).sum::<usize>(), 3000);
        assert!(chunks.iter().all(|c| c.calls.contains("_Z3sinf")), "calls through an internal helper count");
    }
}
