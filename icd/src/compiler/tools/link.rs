//! Linking a kernel object into a shared object by running the system linker directly,
//! with the command line clang's driver would use.
//!
//! A clang process costs ~26 ms of start-up (loading and relocating libLLVM), and a
//! `clang -shared` build from IR costs two of them besides the linker (the driver runs
//! cc1 in a process of its own when it also links). So the back end compiles with
//! `clang -c` (cc1 runs in the driver's process) and links here. The linker's command
//! line is asked of clang once (`-###`) and kept in the cache directory, keyed by
//! clang's identity.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use super::clang;
use crate::compiler::cache;

/// Placeholders in the cache directory: clang wants the input to exist.
const INPUT: &str = "link-template-input.o";
const OUTPUT: &str = "link-template-output.so";
/// What the plan keeps in their place: it outlives the cache directory it was asked in
/// (an application may change `XDG_CACHE_HOME` between builds).
const INPUT_TOKEN: &str = "<ferrocl-link-input>";
const OUTPUT_TOKEN: &str = "<ferrocl-link-output>";

/// The linker's arguments for `clang -shared INPUT -o OUTPUT` and the libraries kernels
/// use (with `INPUT_TOKEN` and `OUTPUT_TOKEN` in place of those), or `None` when
/// clang's plan cannot be read (then the caller links through clang).
fn template(clang: &clang::Clang, cache: &Path) -> Option<Vec<String>> {
    static TEMPLATE: OnceLock<Option<Vec<String>>> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let file = template_file(clang, cache);
            let (input, output) = (cache.join(INPUT), cache.join(OUTPUT));
            let cached: Option<Vec<String>> =
                std::fs::read_to_string(&file).ok().map(|text| text.lines().map(str::to_string).collect());
            // A damaged file (empty, or without the placeholders) is asked for again.
            if let Some(args) = cached.filter(|a| is_plan(a, Path::new(INPUT_TOKEN), Path::new(OUTPUT_TOKEN))) {
                return Some(args);
            }
            std::fs::write(&input, b"").ok()?;
            // gold where clang can use it: it links a kernel in ~7 ms, GNU ld in ~15-22.
            let args = [Some("-fuse-ld=gold"), None].into_iter().find_map(|linker| {
                let out = Command::new(&clang.path)
                    .args(["-###", "-target", "x86_64-unknown-linux-gnu", "-shared"])
                    .args(linker)
                    .args([input.as_os_str(), OsStr::new("-o"), output.as_os_str()])
                    .args(["-lm", "-lpthread", "-ldl"])
                    .output()
                    .ok()?;
                let plan = parse_plan(&String::from_utf8_lossy(&out.stderr), &input, &output)?;
                // clang plans a linker it cannot find too; it must exist.
                Path::new(&plan[0]).is_file().then_some(plan)
            })?;
            let args: Vec<String> = args
                .into_iter()
                .map(|a| match Path::new(&a) {
                    p if p == input => INPUT_TOKEN.to_string(),
                    p if p == output => OUTPUT_TOKEN.to_string(),
                    _ => a,
                })
                .collect();
            let _ = cache::write_atomic(&file, args.join("\n").as_bytes());
            Some(args)
        })
        .clone()
}

fn template_file(clang: &clang::Clang, cache: &Path) -> std::path::PathBuf {
    cache.join(format!("link-{}.args", cache::key(&[clang.identity.as_bytes(), b"gold first, tokens"])))
}

/// Drops the cached command line (it failed where clang's own link worked); the next
/// process asks clang again.
pub(crate) fn forget(clang: &clang::Clang, cache: &Path) {
    let _ = std::fs::remove_file(template_file(clang, cache));
}

/// The job of a `clang -###` plan that writes `output` from `input`: the linker.
fn parse_plan(plan: &str, input: &Path, output: &Path) -> Option<Vec<String>> {
    plan.lines().map(quoted_words).find(|w| is_plan(w, input, output))
}

/// A linker command line that reads `input` and writes `output`.
fn is_plan(args: &[String], input: &Path, output: &Path) -> bool {
    args.len() > 2
        && args[1..].iter().any(|a| Path::new(a) == input)
        && args.windows(2).any(|p| p[0] == "-o" && Path::new(&p[1]) == output)
}

/// ` "a" "b c" "d\"e"` -> [a, b c, d"e]; empty unless the line is only quoted words.
fn quoted_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.trim().chars();
    loop {
        match chars.next() {
            None => return words,
            Some(' ') => continue,
            Some('"') => {}
            Some(_) => return Vec::new(),
        }
        let mut w = String::new();
        loop {
            match chars.next() {
                None => return Vec::new(),
                Some('"') => break,
                Some('\\') => w.extend(chars.next()),
                Some(c) => w.push(c),
            }
        }
        words.push(w);
    }
}

/// Links `object` with `archive` into `lib`, exporting what `version_script` says.
/// `None`: the linker's command line is unknown (the caller links through clang).
pub(crate) fn link(
    clang: &clang::Clang,
    cache: &Path,
    object: &Path,
    archive: &Path,
    version_script: &Path,
    lib: &Path,
) -> Option<Result<String, String>> {
    let template = template(clang, cache)?;
    let mut args: Vec<&OsStr> = Vec::with_capacity(template.len() + 6);
    let script = format!("--version-script={}", version_script.display());
    for a in &template[1..] {
        if a == INPUT_TOKEN {
            // The archive right after the object: its members need the C libraries.
            args.extend([object.as_os_str(), archive.as_os_str(), OsStr::new(&script)]);
        } else if a == OUTPUT_TOKEN {
            args.push(lib.as_os_str());
        } else {
            args.push(OsStr::new(a));
        }
    }
    args.extend(["--no-undefined", "--gc-sections"].map(OsStr::new));
    let out = match super::output(Command::new(&template[0]).args(&args)) {
        Ok(out) => out,
        Err(e) => return Some(Err(e)),
    };
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(if out.status.success() { Ok(log) } else { Err(log) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan is asked once per process, in whatever cache directory is current; a
    /// later build in another directory (the first one gone) must still link.
    #[test]
    fn linking_survives_a_change_of_cache_directory() {
        let clang = clang::find().unwrap_or_else(|| panic!("{}", clang::MISSING));
        let root = std::env::temp_dir().join(format!("ferrocl-link-test-{}", std::process::id()));
        let (first, second) = (root.join("first"), root.join("second"));
        for d in [&first, &second] {
            std::fs::create_dir_all(d).unwrap();
        }
        let (src, obj, archive, map) =
            (root.join("k.c"), root.join("k.o"), root.join("empty.a"), root.join("exports.map"));
        std::fs::write(&src, "int __ferrocl_launch_k(void) { return 7; }\n").unwrap();
        std::fs::write(&archive, "!<arch>\n").unwrap();
        std::fs::write(&map, "{ global: __ferrocl_launch_*; local: *; };\n").unwrap();
        let ok = Command::new(&clang.path).args(["-c", "-fPIC"]).arg(&src).arg("-o").arg(&obj).status().unwrap();
        assert!(ok.success());
        for (dir, lib) in [(&first, root.join("one.so")), (&second, root.join("two.so"))] {
            if let Some(Err(e)) = link(clang, dir, &obj, &archive, &map, &lib) {
                panic!("linking in {}: {e}", dir.display());
            }
            std::fs::remove_dir_all(dir).unwrap();
        }
        let two = std::fs::read(root.join("two.so")).unwrap_or_default();
        assert!(two.starts_with(b"\x7fELF") && two.len() > 1000, "the second link wrote a shared object");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_linker_job_is_found_in_a_plan() {
        let (i, o) = (Path::new("/c/in.o"), Path::new("/c/out.so"));
        let plan = "clang version 19.1.7\nTarget: x86_64-unknown-linux-gnu\n \"/usr/bin/clang-19\" \"-cc1\" \"x\"\n \
             \"/usr/bin/ld\" \"-shared\" \"-o\" \"/c/out.so\" \"/lib/crti.o\" \"/c/in.o\" \"-lm\" \"a \\\"q\\\" b\"\n";
        let job = parse_plan(plan, i, o).unwrap();
        assert_eq!(job[0], "/usr/bin/ld");
        assert_eq!(job[3], "/c/out.so");
        assert_eq!(job.last().unwrap(), "a \"q\" b");
        assert!(parse_plan("Target: x86_64\n \"/usr/bin/ld\" \"-o\" \"other\"\n", i, o).is_none());
        assert!(quoted_words("Thread model: posix").is_empty());
        assert!(!is_plan(&[], i, o), "an empty (damaged) cached command is not a plan");
    }
}
