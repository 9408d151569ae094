//! The kernel compiler, one step a module, in the order a build runs them:
//!
//! 1. `frontend`: OpenCL C -> LLVM IR (clang), or `spirv`: a SPIR-V module -> the same IR;
//! 2. `passes`: the IR rewrite (work-item context, barrier regions, launchers);
//! 3. `backend`: rewritten IR -> object, with the pieces of the kernel-side `library` it
//!    needs linked in as bitcode -> shared object linked with the builtins archive.
//!
//! A build (`build`, `link`) runs the first two and checks what a link would find
//! missing; the third runs per kernel and shape of launch at the kernel's first launch
//! (`generate`, a `Unit`), or for every kernel at once (`generate_whole`, `Code::Whole`)
//! where a binary is asked for or the program's kernels share program-scope variables.
//!
//! `tools` runs the external programs (clang on fork servers, the linker) under time
//! limits; `cache` keeps results on disk, keyed by everything that shapes them. The
//! caller describes what to compile for (`Target`): the compiler knows no device.

mod backend;
pub(crate) mod cache;
mod frontend;
pub(crate) mod kernel_info;
mod library;
pub(crate) mod meta;
pub(crate) mod options;
pub(crate) mod passes;
pub(crate) mod spirv;
mod tools;

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

#[cfg(test)]
pub(crate) use frontend::SPIR_ONLY_MACROS;
use tools::{clang, fork_server, locate};

/// What kernels are compiled for, as the device describes it: the compiler enables
/// exactly these extensions and OpenCL C features (x86 clang enables vendor extensions
/// otherwise), and the CPU's identity keys the cache (`-march=native`).
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The device's extensions, by name.
    pub(crate) extensions: Vec<&'static str>,
    /// Extensions the compiler enables in OpenCL C before 3.0 without the device
    /// claiming them (`core::device::PRE_3_EXTENSIONS` says why).
    pub(crate) pre_3_extensions: Vec<&'static str>,
    /// The OpenCL C features the device claims, by name.
    pub(crate) features: Vec<&'static str>,
    /// Names the CPU (model and instruction-set flags).
    pub(crate) cpu: String,
}

/// Whether a compiler is there (`CL_DEVICE_COMPILER_AVAILABLE`).
pub(crate) fn available() -> bool {
    clang::find().is_some()
}

/// Bumped whenever the pipeline's output for the same input changes.
const PIPELINE: &str = "ferrocl-pipeline-3";

/// A built program: its kernels and where their code is.
#[derive(Clone, Debug)]
pub(crate) struct Library {
    pub(crate) code: Code,
    pub(crate) kernels: Vec<kernel_info::Kernel>,
    /// Bytes of program-scope `__global` variables (each program object gets its own).
    pub(crate) global_variable_size: u64,
}

/// Where a program's code is.
#[derive(Clone, Debug)]
pub(crate) enum Code {
    /// One shared object with every kernel's entry points, for launches of any shape:
    /// programs from binaries, and those with program-scope variables, which all their
    /// kernels share.
    Whole(PathBuf),
    /// Generated per kernel and shape of launch, at the kernel's first launch of that
    /// shape (`generate`), from the program's IR: a build compiles the program to IR and
    /// checks it, and code for kernels never launched is never made. PoCL defers the
    /// same way; the 56-kernel image program of `cts-runner bench --only builds` took
    /// 24 s to build here with every kernel's code made at once, and 68 ms on PoCL.
    Deferred(Deferred),
}

/// A program's IR, kept for `generate`.
#[derive(Clone, Debug)]
pub(crate) struct Deferred {
    /// The program's cache key: units' keys extend it.
    key: String,
    options: String,
    /// The IR file in the cache, mapped: trimming the cache may unlink it while the
    /// program lives, and its kernels' code must still be made. A mapping, not an open
    /// file: an application may keep more programs than it may open files.
    ir: std::sync::Arc<memmap2::Mmap>,
}

impl Deferred {
    fn new(key: &str, options: &str, ir: &Path) -> std::io::Result<Deferred> {
        let file = std::fs::File::open(ir)?;
        // SAFETY: cache files are written whole and renamed into place, never changed
        // afterwards (a newer entry is a new file renamed over the name); an unlinked
        // file keeps its pages while mapped.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(Deferred { key: key.to_string(), options: options.to_string(), ir: std::sync::Arc::new(map) })
    }

    /// Whether the program is small enough for one unit to hold all its kernels without
    /// images (`Unit::kernel`): a unit costs ~60 ms of clang and linker on top of its
    /// kernels' own code, and the bench's 16 small kernels (36 KB of IR), each launched
    /// once, took 1,297 ms in 16 units, 387 in one.
    pub(crate) fn small(&self) -> bool {
        self.ir.len() as u64 <= SMALL_PROGRAM_IR
    }
}

/// Bytes of IR up to which a program is `Deferred::small`.
const SMALL_PROGRAM_IR: u64 = 64 << 10;

pub(crate) use passes::Unit;

#[derive(Debug)]
pub(crate) enum BuildError {
    /// No clang: `CL_COMPILER_NOT_AVAILABLE`; the log says what to install.
    NoCompiler(String),
    /// `CL_INVALID_BUILD_OPTIONS`.
    InvalidOptions(String),
    /// `CL_BUILD_PROGRAM_FAILURE` with the log (clang's diagnostics).
    Failed(String),
}

pub(crate) struct Built {
    pub(crate) library: Library,
    pub(crate) log: String,
}

fn target_flags() -> &'static [&'static str] {
    static FLAGS: OnceLock<Vec<&'static str>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        let mut flags = vec!["-target", "x86_64-unknown-linux-gnu", "-fPIC"];
        match cross_cpu() {
            Some(cpu) => {
                let mut words = cpu.split_whitespace();
                let march: &'static str = String::leak(format!("-march={}", words.next().unwrap_or("native")));
                flags.push(march);
                flags.extend(words);
            }
            None => flags.push("-march=native"),
        }
        flags
    })
}

/// `FERROCL_TARGET_CPU=<clang -march name> [-m<feature> | -mno-<feature>]...`
/// (`sapphirerapids`, `sapphirerapids -mno-amx-tile`): kernels are compiled for that
/// CPU rather than this one, so that program binaries made here run on a machine
/// without a compiler with that CPU's instructions (`cts-runner bench
/// --save-binaries`): the 16-core host has AVX512-FP16, which native half arithmetic
/// needs and this 2-core machine lacks; the features drop what a virtual machine's CPU
/// may not offer. `None`: this CPU (`-march=native`).
pub(crate) fn cross_cpu() -> Option<&'static str> {
    static CPU: OnceLock<Option<String>> = OnceLock::new();
    CPU.get_or_init(|| {
        let v = std::env::var("FERROCL_TARGET_CPU").ok()?;
        let plain = |w: &str| w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        let mut words = v.split_whitespace();
        let cpu = words.next().filter(|c| plain(c) && !c.starts_with('-') && *c != "native")?;
        let mut features = Vec::new();
        for w in words {
            if !plain(w) || !w.starts_with("-m") {
                return None;
            }
            features.push(w);
        }
        Some(std::iter::once(cpu).chain(features).collect::<Vec<_>>().join(" "))
    })
    .as_deref()
}

/// The macros clang predefines for `cross_cpu` (`__AVX512FP16__`, ...), which say the
/// instruction-set extensions its code may use; `None` without a cross CPU, `Some(Err)`
/// where clang cannot tell (no clang, or a CPU name it does not know).
pub(crate) fn cross_cpu_macros() -> Option<&'static Result<Vec<String>, String>> {
    static MACROS: OnceLock<Option<Result<Vec<String>, String>>> = OnceLock::new();
    MACROS
        .get_or_init(|| {
            cross_cpu()?;
            let clang = match clang::find() {
                Some(c) => c,
                None => return Some(Err("no clang to ask what FERROCL_TARGET_CPU has".into())),
            };
            let mut cmd = std::process::Command::new(&clang.path);
            cmd.args(target_flags()).args(["-dM", "-E", "-x", "c", "/dev/null"]);
            let out = match tools::output(&mut cmd) {
                Ok(out) if out.status.success() => out,
                Ok(out) => return Some(Err(String::from_utf8_lossy(&out.stderr).into_owned())),
                Err(e) => return Some(Err(e)),
            };
            let text = String::from_utf8_lossy(&out.stdout);
            let names = text.lines().filter_map(|l| l.strip_prefix("#define ")?.split(' ').next()).map(String::from);
            Some(Ok(names.collect()))
        })
        .as_ref()
}

fn archive_identity(p: &Path) -> String {
    let m = std::fs::metadata(p).ok();
    let mtime = m.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    format!("{}|{:?}|{:?}", p.display(), m.map(|m| m.len()), mtime)
}

/// A scratch directory inside the cache (same filesystem, so results can be renamed
/// into place), removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(cache: &Path) -> Result<Scratch, String> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = cache.join(format!("work-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&p).map_err(|e| format!("cannot create {}: {e}\n", p.display()))?;
        Ok(Scratch(p))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // FERROCL_KEEP_TEMPS=1 keeps the intermediate files (source, IR before and after
        // the rewrite, object) for looking into a build.
        if std::env::var_os("FERROCL_KEEP_TEMPS").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// The cache entry for a key: the program's code (a shared object, or its IR), its
/// description and its build log.
struct Entry {
    key: String,
    so: PathBuf,
    ir: PathBuf,
    meta: PathBuf,
    log: PathBuf,
}

impl Entry {
    fn new(key: &str) -> Entry {
        let c = cache::dir();
        Entry {
            key: key.to_string(),
            so: c.join(format!("{key}.so")),
            ir: c.join(format!("{key}.ll")),
            meta: c.join(format!("{key}.meta")),
            log: c.join(format!("{key}.log")),
        }
    }

    fn load(&self, options: &str) -> Option<Built> {
        let (kernels, global_variable_size) = meta::from_text(&std::fs::read_to_string(&self.meta).ok()?)?;
        let code = match Deferred::new(&self.key, options, &self.ir) {
            Ok(ir) => Code::Deferred(ir),
            Err(_) if self.so.is_file() => Code::Whole(self.so.clone()),
            Err(_) => return None,
        };
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        cache::touch(&self.meta);
        Some(Built { library: Library { code, kernels, global_variable_size }, log })
    }

    /// Moves a freshly built program into place, a shared object or IR (`Code`); the
    /// description is written last.
    fn store(
        &self,
        code: Stored,
        rewritten: passes::Rewritten,
        log: String,
        options: &str,
    ) -> Result<Built, BuildError> {
        let (kernels, globals) = (rewritten.kernels, rewritten.global_variable_size);
        let failed = |e: std::io::Error| {
            BuildError::Failed(format!("cannot write the program cache in {}: {e}\n", cache::dir().display()))
        };
        match code {
            Stored::Whole(file) => std::fs::rename(file, &self.so),
            Stored::Ir(text) => cache::write_atomic(&self.ir, text.as_bytes()),
        }
        .and_then(|_| cache::write_atomic(&self.log, log.as_bytes()))
        .and_then(|_| cache::write_atomic(&self.meta, meta::to_text(&kernels, globals).as_bytes()))
        .map_err(failed)?;
        cache::trim(&cache::dir(), cache::limit());
        let code = match code {
            Stored::Whole(_) => Code::Whole(self.so.clone()),
            Stored::Ir(_) => Code::Deferred(Deferred::new(&self.key, options, &self.ir).map_err(failed)?),
        };
        Ok(Built { library: Library { code, kernels, global_variable_size: globals }, log })
    }
}

/// What a build leaves in the cache.
enum Stored<'a> {
    Whole(&'a Path),
    Ir(&'a str),
}

/// What every cache key includes besides the program itself: the tools, the CPU, and
/// this driver's own binary (a rebuilt or upgraded driver may compile differently, so
/// it never reuses an older driver's kernels).
/// A build made with `FERROCL_VERIFY` set is a different entry: it proves its IR was
/// verified, and a cached unverified build must not stand in for it; so is one made
/// with other SIMD copies (`FERROCL_SIMD`).
fn environment(clang: &clang::Clang, target: &Target, archive: &Path) -> String {
    let verify = if clang::verifying() { "|verified" } else { "" };
    let simd = passes::simd_cache_key();
    format!(
        "{PIPELINE}|{}|{}|{}|{}{verify}{simd}",
        clang.identity,
        target.cpu,
        archive_identity(archive),
        driver_identity()
    )
}

fn driver_identity() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| locate::driver_file().map(|p| archive_identity(&p)).unwrap_or_default())
}

fn tools() -> Result<(&'static clang::Clang, PathBuf), BuildError> {
    let clang = clang::find().ok_or_else(|| BuildError::NoCompiler(clang::MISSING.into()))?;
    let archive = locate::builtins_archive().map_err(BuildError::Failed)?;
    Ok((clang, archive))
}

/// Prepares for a build soon (`clCreateProgramWithSource`): starts a clang server.
pub(crate) fn warm_up() {
    if let Some(clang) = clang::find() {
        fork_server::warm_up(fork_server::Tool { path: &clang.path, identity: &clang.identity });
    }
}

/// What a program is made from.
pub(crate) enum Input<'a> {
    /// OpenCL C, with the headers `clCompileProgram` names.
    Source { text: &'a str, headers: &'a [(String, String)] },
    /// A SPIR-V module and the specialization constants set on it.
    Il { module: &'a [u8], spec: &'a [spirv::SpecValue] },
}

impl Input<'_> {
    /// The program's part of a cache key (besides environment and options).
    /// The input's parts of a cache key; borrowed where big (a source, a module).
    fn key_parts(&self) -> Vec<Cow<'_, [u8]>> {
        match self {
            Input::Source { text, headers } => std::iter::once(Cow::Borrowed(text.as_bytes()))
                .chain(headers.iter().flat_map(|(n, t)| [Cow::Borrowed(n.as_bytes()), Cow::Borrowed(t.as_bytes())]))
                .collect(),
            Input::Il { module, spec } => {
                let translator = spirv::find().map(|t| t.identity.as_str()).unwrap_or("");
                let mut parts =
                    vec![Cow::Borrowed(&b"spir-v"[..]), Cow::Borrowed(translator.as_bytes()), Cow::Borrowed(*module)];
                for (id, v) in spec.iter() {
                    parts.extend([Cow::Owned(id.to_le_bytes().to_vec()), Cow::Borrowed(v.as_slice())]);
                }
                parts
            }
        }
    }

    /// The front end: the program as IR text, and its log.
    fn front(
        &self,
        clang: &clang::Clang,
        target: &Target,
        opts: &options::BuildOptions,
        dir: &Path,
    ) -> Result<(String, String), String> {
        match self {
            Input::Source { text, headers } => frontend::opencl_c(clang, target, opts, text, headers, dir),
            Input::Il { module, spec } => spirv::to_module(clang, target, module, spec, dir),
        }
    }
}

/// Builds (or loads from the cache) a program: its IR, checked, and its kernels'
/// descriptions; code comes per kernel at first launch (`generate`), or at once for a
/// program with program-scope variables.
pub(crate) fn build(target: &Target, input: &Input, options: &str) -> Result<Built, BuildError> {
    in_usable_cache(|| build_here(target, input, options))
}

/// The code of one kernel for one shape of launch (`Unit`), from a program built
/// `Deferred`: a shared object exporting that kernel's entry points, from the cache or
/// made now. `background`: at the lowest priority, for a second build nothing waits for
/// (`tools::in_background`).
pub(crate) fn generate(
    target: &Target,
    program: &Deferred,
    unit: &Unit,
    background: bool,
) -> Result<PathBuf, BuildError> {
    let step = || in_usable_cache(|| generate_here(target, program, Some(unit)));
    match background {
        true => tools::in_background(step),
        false => step(),
    }
}

/// Code for every kernel of a `Deferred` program for launches of any shape, in one
/// shared object (`Code::Whole`): what a program binary holds.
pub(crate) fn generate_whole(target: &Target, program: &Deferred) -> Result<PathBuf, BuildError> {
    in_usable_cache(|| generate_here(target, program, None))
}

fn read_ir(program: &Deferred) -> Result<&str, BuildError> {
    std::str::from_utf8(&program.ir[..]).map_err(|_| BuildError::Failed("the program's IR is damaged\n".into()))
}

/// The cache key of a unit's code (`None`: the whole program's).
fn unit_key(program: &Deferred, unit: Option<&Unit>) -> String {
    let Some(unit) = unit else { return cache::key(&[program.key.as_bytes(), b"whole"]) };
    let fixed = unit.fixed.map(|[x, y, z]| format!("{x},{y},{z}")).unwrap_or_default();
    let images: String = match &unit.images {
        Some(keys) => keys.iter().map(|k| format!("{k},")).collect(),
        None => "any".into(),
    };
    let kernel = unit.kernel.as_deref().unwrap_or("");
    cache::key(&[program.key.as_bytes(), kernel.as_bytes(), fixed.as_bytes(), images.as_bytes()])
}

/// A unit's code (`None`: the whole program's), from the cache or made now.
fn generate_here(target: &Target, program: &Deferred, unit: Option<&Unit>) -> Result<PathBuf, BuildError> {
    let so = cache::dir().join(format!("unit-{}.so", unit_key(program, unit)));
    if so.is_file() {
        cache::touch(&so);
        return Ok(so);
    }
    let (clang, archive) = tools()?;
    let opts = options::parse(&program.options).map_err(BuildError::InvalidOptions)?;
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    let ir = read_ir(program)?;
    let rewritten = passes::rewrite_for(ir, unit).map_err(BuildError::Failed)?;
    let second = unit.is_some_and(|u| u.fixed.is_some());
    let file = match backend::build(clang, target, &opts, &rewritten.module, second, &archive, &scratch.0) {
        Ok((file, _)) => file,
        // Code the SIMD copies broke: again without them (FERROCL_SIMD=why says so).
        Err(why) if passes::has_simd_copies(&rewritten.module) => {
            passes::simd_failed(&why);
            let rewritten = passes::rewrite_without_simd(ir, unit).map_err(BuildError::Failed)?;
            backend::build(clang, target, &opts, &rewritten.module, second, &archive, &scratch.0)
                .map_err(BuildError::Failed)?
                .0
        }
        Err(why) => return Err(BuildError::Failed(why)),
    };
    std::fs::rename(&file, &so).map_err(|e| BuildError::Failed(e.to_string()))?;
    Ok(so)
}

/// Runs `step` in the cache directory; when it fails and that directory cannot be
/// written any more (the disk filled, it became read-only), again in a private one.
fn in_usable_cache<T>(step: impl Fn() -> Result<T, BuildError>) -> Result<T, BuildError> {
    let dir = cache::dir();
    match step() {
        Err(BuildError::Failed(_)) if !cache::writable_now(&dir) => {
            cache::give_up_on(&dir);
            step()
        }
        r => r,
    }
}

fn build_here(target: &Target, input: &Input, options: &str) -> Result<Built, BuildError> {
    let opts = options::parse(options).map_err(BuildError::InvalidOptions)?;
    let (clang, archive) = tools()?;
    let env = environment(clang, target, &archive);
    let libs = library::libraries_text();
    let program = input.key_parts();
    let mut parts: Vec<&[u8]> = vec![env.as_bytes(), libs.as_bytes()];
    // The source before the options, as keys have been since the first version.
    parts.extend(program.iter().take(1).map(|p| &**p));
    parts.push(options.as_bytes());
    parts.extend(program.iter().skip(1).map(|p| &**p));
    let entry = Entry::new(&cache::key(&parts));
    if let Some(built) = entry.load(options) {
        return Ok(built);
    }
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    let (ir_text, mut log) = input.front(clang, target, &opts, &scratch.0).map_err(BuildError::Failed)?;
    let (stored, rewritten) = checked(clang, target, &opts, &ir_text, &archive, &scratch.0, &mut log)?;
    entry.store(stored.as_stored(&ir_text), rewritten, log, options)
}

/// A program's code as a build leaves it, before it goes into the cache.
enum Checked {
    Whole(PathBuf),
    Ir,
}

impl Checked {
    fn as_stored<'a>(&'a self, ir: &'a str) -> Stored<'a> {
        match self {
            Checked::Whole(p) => Stored::Whole(p),
            Checked::Ir => Stored::Ir(ir),
        }
    }
}

/// The rewrite of a program's IR, and what a link would find missing, as a build
/// failure (`backend::unresolved`); then code for every kernel where the program has
/// program-scope variables (its kernels share them: one shared object), else none yet.
fn checked(
    clang: &clang::Clang,
    target: &Target,
    opts: &options::BuildOptions,
    ir_text: &str,
    archive: &Path,
    scratch: &Path,
    log: &mut String,
) -> Result<(Checked, passes::Rewritten), BuildError> {
    let rewritten = passes::rewrite_for(ir_text, None).map_err(BuildError::Failed)?;
    if rewritten.global_variable_size > 0 {
        let (rewritten, (file, more)) =
            match backend::build(clang, target, opts, &rewritten.module, false, archive, scratch) {
                Ok(built) => (rewritten, built),
                // As `generate_here`: again without SIMD copies.
                Err(why) if passes::has_simd_copies(&rewritten.module) => {
                    passes::simd_failed(&why);
                    let rewritten = passes::rewrite_without_simd(ir_text, None).map_err(BuildError::Failed)?;
                    let built = backend::build(clang, target, opts, &rewritten.module, false, archive, scratch)
                        .map_err(BuildError::Failed)?;
                    (rewritten, built)
                }
                Err(why) => return Err(BuildError::Failed(why)),
            };
        *log += &more;
        return Ok((Checked::Whole(file), rewritten));
    }
    backend::unresolved(clang, target, &rewritten.module, archive, scratch).map_err(BuildError::Failed)?;
    Ok((Checked::Ir, rewritten))
}

/// The builtins that read the work-item context (`passes::context`) the kernel-side
/// library lacks, for this target: none, or a kernel calling one fails to link.
#[cfg(test)]
pub(crate) fn context_builtins_missing_from_library(target: &Target) -> Result<Vec<String>, BuildError> {
    let (clang, _) = tools()?;
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    let parts = library::parts(clang, target, &cache::dir(), &scratch.0).map_err(BuildError::Failed)?;
    Ok(passes::context::symbols().filter(|s| !parts.iter().any(|p| p.defines(s))).map(str::to_string).collect())
}

/// `clCompileProgram`: the program to LLVM IR (text), with the front end's diagnostics.
pub(crate) fn compile(target: &Target, input: &Input, options: &str) -> Result<(String, String), BuildError> {
    in_usable_cache(|| compile_here(target, input, options))
}

fn compile_here(target: &Target, input: &Input, options: &str) -> Result<(String, String), BuildError> {
    let opts = options::parse(options).map_err(BuildError::InvalidOptions)?;
    let (clang, _) = tools()?;
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    input.front(clang, target, &opts, &scratch.0).map_err(BuildError::Failed)
}

/// `clLinkProgram`: merges compiled modules; with `-create-library` returns the merged
/// IR, otherwise builds (or loads from the cache) the executable.
pub(crate) fn link(target: &Target, modules: &[String], options: &str) -> Result<Linked, BuildError> {
    in_usable_cache(|| link_here(target, modules, options))
}

fn link_here(target: &Target, modules: &[String], options: &str) -> Result<Linked, BuildError> {
    let opts = options::parse(options).map_err(BuildError::InvalidOptions)?;
    let (clang, archive) = tools()?;
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    let merged = frontend::merge(clang, modules, &scratch.0).map_err(BuildError::Failed)?;
    if opts.create_library {
        return Ok(Linked::Library(merged));
    }
    let (env, libs) = (environment(clang, target, &archive), library::libraries_text());
    let entry = Entry::new(&cache::key(&[env.as_bytes(), libs.as_bytes(), merged.as_bytes(), options.as_bytes()]));
    if let Some(built) = entry.load(options) {
        return Ok(Linked::Executable(built));
    }
    let mut log = String::new();
    let (stored, rewritten) = checked(clang, target, &opts, &merged, &archive, &scratch.0, &mut log)?;
    entry.store(stored.as_stored(&merged), rewritten, log, options).map(Linked::Executable)
}

pub(crate) enum Linked {
    Executable(Built),
    Library(String),
}
