//! The kernel compiler: OpenCL C -> LLVM IR (clang) -> rewritten IR (`ir`) -> object
//! (clang, with the work-item library linked in as bitcode) -> shared object linked
//! with the builtins archive. Results are cached on disk (`cache`).

pub mod cache;
mod chunks;
pub mod clang;
mod collectives;
mod division;
mod fork_server;
pub mod ir;
pub mod ir_text;
pub mod ir_type;
pub mod kernel_info;
pub mod launcher;
mod link;
pub mod locate;
pub mod meta;
pub mod options;
pub mod regions;
pub mod spirv;
mod tls;
mod tool;
mod uniform;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::core::device::Device;

/// Kernel-side libraries compiled (per clang and CPU, into the cache) to bitcode and
/// linked into every kernel module, so they inline: (file name, source, language
/// arguments). The OpenCL C ones use the kernels' address-space mangling and OpenCL's
/// default header (which declares what they define).
macro_rules! opencl_library {
    ($std:literal) => {
        opencl_library!($std, "+cl_khr_fp64,+cl_khr_fp16,+cl_khr_byte_addressable_store")
    };
    ($std:literal, $($extensions:literal),+) => {
        &[
            "-x",
            "cl",
            $std,
            "-Xclang",
            "-ffake-address-space-map",
            "-Xclang",
            "-finclude-default-header",
            "-Xclang",
            concat!("-cl-ext=-all,", $($extensions),+),
            "-Wno-psabi",
        ]
    };
}
/// OpenCL C 3.0 parts: where clang declares the functions of the features they define.
macro_rules! opencl_library_3 {
    ($features:literal) => {
        opencl_library!(
            "-cl-std=CL3.0",
            "+cl_khr_fp64,+__opencl_c_fp64,+__opencl_c_int64,+cl_khr_fp16,+__opencl_c_generic_address_space,",
            $features
        )
    };
}
const OPENCL_LIBRARY: &[&str] = opencl_library!("-cl-std=CL1.2");
/// For the forms with generic pointers, which clang declares only from OpenCL C 2.0.
const OPENCL_LIBRARY_GENERIC: &[&str] = opencl_library!("-cl-std=CL2.0");

/// In link order: a part comes before the parts it calls (checked when linking), so
/// one "link only what is needed" pass per part resolves everything.
const BITCODE_LIBRARIES: &[(&str, &str, &[&str])] = &[
    (
        "image.cl",
        include_str!("../../../builtins/clc/image.cl"),
        opencl_library_3!(
            "+__opencl_c_images,+__opencl_c_read_write_images,+__opencl_c_3d_image_writes,+cl_khr_3d_image_writes,\
             +cl_khr_depth_images"
        ),
    ),
    ("generic.cl", include_str!("../../../builtins/clc/generic.cl"), OPENCL_LIBRARY_GENERIC),
    ("convert.cl", include_str!("../../../builtins/clc/convert.cl"), OPENCL_LIBRARY),
    ("vload.cl", include_str!("../../../builtins/clc/vload.cl"), OPENCL_LIBRARY),
    ("misc.cl", include_str!("../../../builtins/clc/misc.cl"), OPENCL_LIBRARY),
    ("geometric.cl", include_str!("../../../builtins/clc/geometric.cl"), OPENCL_LIBRARY),
    ("relational.cl", include_str!("../../../builtins/clc/relational.cl"), OPENCL_LIBRARY),
    ("common.cl", include_str!("../../../builtins/clc/common.cl"), OPENCL_LIBRARY),
    ("integer.cl", include_str!("../../../builtins/clc/integer.cl"), OPENCL_LIBRARY),
    ("math.cl", include_str!("../../../builtins/clc/math.cl"), OPENCL_LIBRARY),
    (
        "atomics.cl",
        include_str!("../../../builtins/clc/atomics.cl"),
        &["-x", "cl", "-cl-std=CL1.2", "-Xclang", "-ffake-address-space-map"],
    ),
    (
        "atomics_c11.cl",
        include_str!("../../../builtins/clc/atomics_c11.cl"),
        // With 64-bit atomics and every order and scope, as the device claims.
        opencl_library_3!(
            "+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics,+__opencl_c_atomic_order_acq_rel,\
             +__opencl_c_atomic_order_seq_cst,+__opencl_c_atomic_scope_device,+__opencl_c_atomic_scope_all_devices"
        ),
    ),
    ("collectives.c", include_str!("../../../builtins/clc/collectives.c"), &["-x", "c"]),
    ("workitem.c", include_str!("../../../builtins/clc/workitem.c"), &["-x", "c"]),
    ("printf.c", include_str!("../../../builtins/clc/printf.c"), &["-x", "c"]),
];

/// The headers library parts include: the macros the OpenCL C parts share, and the
/// structures the C parts share with the driver.
const LIBRARY_HEADERS: &[(&str, &str)] = &[
    ("clc.h", include_str!("../../../builtins/clc/clc.h")),
    ("workitem.h", include_str!("../../../builtins/clc/workitem.h")),
];

/// Declarations of our extensions' builtins (clang has none), included into kernels.
const EXTENSIONS_HEADER: &str = include_str!("../../../builtins/clc/ferrocl-extensions.h");

/// All library sources and flags, for cache keys.
fn libraries_text() -> String {
    // Sources and the flags each part is compiled with.
    BITCODE_LIBRARIES
        .iter()
        .flat_map(|(_, src, flags)| std::iter::once(*src).chain(flags.iter().copied()))
        .chain(LIBRARY_HEADERS.iter().map(|(_, src)| *src))
        .chain([EXTENSIONS_HEADER])
        .collect()
}

/// Bumped whenever the pipeline's output for the same input changes.
const PIPELINE: &str = "ferrocl-pipeline-2";

/// A built kernel library and what it contains.
#[derive(Clone, Debug)]
pub struct Library {
    pub path: PathBuf,
    pub kernels: Vec<kernel_info::Kernel>,
    /// Bytes of program-scope `__global` variables (each program object gets its own).
    pub global_variable_size: u64,
}

#[derive(Debug)]
pub enum BuildError {
    /// No clang: `CL_COMPILER_NOT_AVAILABLE`; the log says what to install.
    NoCompiler(String),
    /// `CL_INVALID_BUILD_OPTIONS`.
    InvalidOptions(String),
    /// `CL_BUILD_PROGRAM_FAILURE` with the log (clang's diagnostics).
    Failed(String),
}

pub struct Built {
    pub library: Library,
    pub log: String,
}

fn target_flags() -> [&'static str; 4] {
    ["-target", "x86_64-unknown-linux-gnu", "-march=native", "-fPIC"]
}

/// What identifies the CPU kernels are compiled for (`-march=native`).
fn cpu_identity() -> String {
    let h = &Device::get().host;
    format!("{}|{}", h.cpu_name, h.cpu_flags)
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

/// `-cl-ext=-all,+<each extension and OpenCL C feature the device reports>`.
fn extension_flag() -> String {
    use crate::core::device::{EXTENSIONS, OPENCL_C_FEATURES};
    let on: String = EXTENSIONS.iter().chain(OPENCL_C_FEATURES).map(|(n, _)| format!(",+{n}")).collect();
    format!("-cl-ext=-all{on}")
}

/// `-D<name>=1` for the macros clang leaves undefined: each OpenCL C feature the device
/// claims, in OpenCL C 3.0 (clang defines the macros of some from `-cl-ext`, but not
/// those its header alone uses: the device and all-devices scopes, the work-group
/// collectives), and `SPIR_ONLY_MACROS` in every version. Defining one again with the
/// same value is harmless.
fn feature_macros(clang_options: &[String]) -> Vec<String> {
    let cl3 = clang_options.iter().any(|o| o == "-cl-std=CL3.0");
    let features = crate::core::device::OPENCL_C_FEATURES.iter().map(|(n, _)| *n).filter(|_| cl3);
    SPIR_ONLY_MACROS.iter().copied().chain(features).map(|n| format!("-D{n}=1")).collect()
}

/// Macros of claimed extensions (and their features) that clang's header defines for
/// SPIR targets only (opencl-c-base.h): without them x86 kernels lack the builtins
/// they guard. Defined in every OpenCL C version, as the extensions ask.
const SPIR_ONLY_MACROS: &[&str] = &[
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_clustered_reduce",
];

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// One linkable piece of the library (a part, or a chunk of one): its bitcode and the
/// functions it defines and calls.
struct Part {
    bitcode: PathBuf,
    defines: HashSet<String>,
    calls: HashSet<String>,
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
fn library_parts(clang: &clang::Clang, cache: &Path, scratch: &Path) -> Result<&'static [Part], String> {
    let key = cache::key(&[
        PIPELINE.as_bytes(),
        clang.identity.as_bytes(),
        libraries_text().as_bytes(),
        cpu_identity().as_bytes(),
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
        for (name, text) in LIBRARY_HEADERS {
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
    clang: &clang::Clang,
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
    clang::run(clang, &args).map_err(|e| format!("FerroCL could not compile its {name} library:\n{e}"))?;
    let text = std::fs::read_to_string(&ll).map_err(|e| e.to_string())?;
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend([os("-c"), os("-emit-llvm"), ll.as_os_str(), os("-o"), tmp.as_os_str()]);
    clang::run(clang, &args).map_err(|e| format!("FerroCL could not compile its {name} library:\n{e}"))?;
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
        if let Some((n, _)) = ir_text::callee_names(line).into_iter().next() {
            index += &format!("{tag} {n}\n");
        }
    }
    index
}

/// The index of a part cut into chunks (`name.N-key.bc` beside it); `None` when it is
/// one chunk anyway, or extraction is impossible.
fn chunked_index(clang: &clang::Clang, bc: &Path, text: &str, name: &str) -> Option<String> {
    let plan = chunks::plan(text);
    let tool = chunks::extractor(&clang.path).filter(|_| plan.len() > 1)?;
    let key = bc.file_stem()?.to_str()?.rsplit_once('-')?.1;
    let mut index = String::new();
    for (i, chunk) in plan.iter().enumerate() {
        let file = bc.with_file_name(format!("{name}.{i}-{key}.bc"));
        chunks::extract(&tool, bc, chunk, &file).ok()?;
        index += &format!("C {}\n", file.display());
        index.extend(chunk.listed.iter().map(|n| format!("D {n}\n")));
        index.extend(chunk.calls.iter().map(|n| format!("U {n}\n")));
    }
    Some(index)
}

/// The `_Z` (OpenCL builtin) functions a module declares that no library part and not
/// the archive define, sorted.
fn missing_builtins(module: &str, parts: &[Part], archive: &Path) -> Vec<String> {
    let archive = locate::archive_symbols(archive);
    // Only what is used: clang's declarations of the queries the rewrite replaced stay.
    let used: HashSet<String> = module
        .lines()
        .filter(|l| !l.starts_with("declare ") && !l.starts_with("define "))
        .flat_map(|l| ir_text::callee_names(l).into_iter().map(|(n, _)| n))
        .collect();
    let mut missing: Vec<String> = used
        .into_iter()
        .filter(|n| n.starts_with("_Z") && !archive.contains(n) && !parts.iter().any(|p| p.defines.contains(n)))
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

/// The parts a module needs, in link order: those defining a function it declares,
/// and, transitively, what those parts call.
fn needed_parts<'a>(parts: &'a [Part], module: &str) -> Result<Vec<&'a Part>, String> {
    let mut wanted: HashSet<String> = module
        .lines()
        .filter(|l| l.starts_with("declare "))
        .filter_map(|l| ir_text::callee_names(l).into_iter().next().map(|(n, _)| n))
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

/// The cache entry for a key: the library, its description and its build log.
struct Entry {
    so: PathBuf,
    meta: PathBuf,
    log: PathBuf,
}

impl Entry {
    fn new(key: &str) -> Entry {
        let c = cache::dir();
        Entry {
            so: c.join(format!("{key}.so")),
            meta: c.join(format!("{key}.meta")),
            log: c.join(format!("{key}.log")),
        }
    }

    fn load(&self) -> Option<Built> {
        let (kernels, global_variable_size) = meta::from_text(&std::fs::read_to_string(&self.meta).ok()?)?;
        if !self.so.is_file() {
            return None;
        }
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        cache::touch(&self.meta);
        Some(Built { library: Library { path: self.so.clone(), kernels, global_variable_size }, log })
    }

    /// Moves a freshly built library into place; the description is written last.
    fn store(
        &self,
        file: &Path,
        kernels: Vec<kernel_info::Kernel>,
        globals: u64,
        log: String,
    ) -> Result<Built, BuildError> {
        std::fs::rename(file, &self.so)
            .and_then(|_| cache::write_atomic(&self.log, log.as_bytes()))
            .and_then(|_| cache::write_atomic(&self.meta, meta::to_text(&kernels, globals).as_bytes()))
            .map_err(|e| {
                BuildError::Failed(format!("cannot write the program cache in {}: {e}\n", cache::dir().display()))
            })?;
        cache::trim(&cache::dir(), cache::limit());
        Ok(Built { library: Library { path: self.so.clone(), kernels, global_variable_size: globals }, log })
    }
}

/// What every cache key includes besides the program itself: the tools, the CPU, and
/// this driver's own binary (a rebuilt or upgraded driver may compile differently, so
/// it never reuses an older driver's kernels).
/// A build made with `FERROCL_VERIFY` set is a different entry: it proves its IR was
/// verified, and a cached unverified build must not stand in for it.
fn environment(clang: &clang::Clang, archive: &Path) -> String {
    let verify = if clang::verifying() { "|verified" } else { "" };
    format!(
        "{PIPELINE}|{}|{}|{}|{}{verify}",
        clang.identity,
        cpu_identity(),
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
pub fn warm_up() {
    if let Some(clang) = clang::find() {
        fork_server::warm_up(fork_server::Tool { path: &clang.path, identity: &clang.identity });
    }
}

/// What a program is made from.
pub enum Input<'a> {
    /// OpenCL C, with the headers `clCompileProgram` names.
    Source { text: &'a str, headers: &'a [(String, String)] },
    /// A SPIR-V module and the specialization constants set on it.
    Il { module: &'a [u8], spec: &'a [spirv::SpecValue] },
}

impl Input<'_> {
    /// The program's part of a cache key (besides environment and options).
    fn key_parts(&self) -> Vec<Vec<u8>> {
        match self {
            Input::Source { text, headers } => std::iter::once(text.as_bytes().to_vec())
                .chain(headers.iter().flat_map(|(n, t)| [n.as_bytes().to_vec(), t.as_bytes().to_vec()]))
                .collect(),
            Input::Il { module, spec } => {
                let translator = spirv::find().map(|t| t.identity.as_str()).unwrap_or("");
                let mut parts = vec![b"spir-v".to_vec(), translator.as_bytes().to_vec(), module.to_vec()];
                for (id, v) in spec.iter() {
                    parts.extend([id.to_le_bytes().to_vec(), v.clone()]);
                }
                parts
            }
        }
    }

    /// The front end: the program as IR text, and its log.
    fn front(
        &self,
        clang: &clang::Clang,
        opts: &options::BuildOptions,
        dir: &Path,
    ) -> Result<(String, String), String> {
        match self {
            Input::Source { text, headers } => frontend(clang, opts, text, headers, dir),
            Input::Il { module, spec } => spirv::to_module(clang, module, spec, dir),
        }
    }
}

/// Builds (or loads from the cache) the kernel library for a program.
pub fn build(input: &Input, options: &str) -> Result<Built, BuildError> {
    in_usable_cache(|| build_here(input, options, &[]))
}

/// `build`, with a loop for groups of the size given to each kernel named in `fixed`
/// (`ir::rewrite_fixed`): a second library for a program whose kernel the driver has
/// seen launched with one group size (`core::program`).
/// It runs at the lowest priority (`tool::in_background`), on a thread of its own:
/// nothing waits for it.
pub fn build_fixed(input: &Input, options: &str, fixed: &[(String, [usize; 3])]) -> Result<Built, BuildError> {
    tool::in_background(|| in_usable_cache(|| build_here(input, options, fixed)))
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

fn build_here(input: &Input, options: &str, fixed: &[(String, [usize; 3])]) -> Result<Built, BuildError> {
    let opts = options::parse(options).map_err(BuildError::InvalidOptions)?;
    let (clang, archive) = tools()?;
    let env = environment(clang, &archive);
    let libs = libraries_text();
    let program = input.key_parts();
    let mut parts: Vec<&[u8]> = vec![env.as_bytes(), libs.as_bytes()];
    // The source before the options, as keys have been since the first version.
    parts.extend(program.iter().take(1).map(Vec::as_slice));
    parts.push(options.as_bytes());
    parts.extend(program.iter().skip(1).map(Vec::as_slice));
    // Absent for plain builds, so their keys stay as they were.
    let sizes: String = fixed.iter().map(|(k, [x, y, z])| format!("fixed {k} {x},{y},{z}\n")).collect();
    if !sizes.is_empty() {
        parts.push(sizes.as_bytes());
    }
    let entry = Entry::new(&cache::key(&parts));
    if let Some(built) = entry.load() {
        return Ok(built);
    }
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    let (ir_text, mut log) = input.front(clang, &opts, &scratch.0).map_err(BuildError::Failed)?;
    let (file, rewritten, more) =
        backend(clang, &opts, &ir_text, fixed, &archive, &scratch.0).map_err(BuildError::Failed)?;
    log += &more;
    entry.store(&file, rewritten.kernels, rewritten.global_variable_size, log)
}

/// `clCompileProgram`: the program to LLVM IR (text), with the front end's diagnostics.
pub fn compile(input: &Input, options: &str) -> Result<(String, String), BuildError> {
    in_usable_cache(|| compile_here(input, options))
}

fn compile_here(input: &Input, options: &str) -> Result<(String, String), BuildError> {
    let opts = options::parse(options).map_err(BuildError::InvalidOptions)?;
    let (clang, _) = tools()?;
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    input.front(clang, &opts, &scratch.0).map_err(BuildError::Failed)
}

/// `clLinkProgram`: merges compiled modules; with `-create-library` returns the merged
/// IR, otherwise builds (or loads from the cache) the executable.
pub fn link(modules: &[String], options: &str) -> Result<Linked, BuildError> {
    in_usable_cache(|| link_here(modules, options))
}

fn link_here(modules: &[String], options: &str) -> Result<Linked, BuildError> {
    let opts = options::parse(options).map_err(BuildError::InvalidOptions)?;
    let (clang, archive) = tools()?;
    let scratch = Scratch::new(&cache::dir()).map_err(BuildError::Failed)?;
    let merged = merge(clang, modules, &scratch.0).map_err(BuildError::Failed)?;
    if opts.create_library {
        return Ok(Linked::Library(merged));
    }
    let (env, libs) = (environment(clang, &archive), libraries_text());
    let entry = Entry::new(&cache::key(&[env.as_bytes(), libs.as_bytes(), merged.as_bytes(), options.as_bytes()]));
    if let Some(built) = entry.load() {
        return Ok(Linked::Executable(built));
    }
    let (file, rewritten, log) =
        backend(clang, &opts, &merged, &[], &archive, &scratch.0).map_err(BuildError::Failed)?;
    entry.store(&file, rewritten.kernels, rewritten.global_variable_size, log).map(Linked::Executable)
}

pub enum Linked {
    Executable(Built),
    Library(String),
}

/// OpenCL C -> IR. Unoptimised (the optimiser runs once, in the back end), with OpenCL
/// address spaces kept distinct so `__local` data can be told apart.
fn frontend(
    clang: &clang::Clang,
    opts: &options::BuildOptions,
    source: &str,
    headers: &[(String, String)],
    dir: &Path,
) -> Result<(String, String), String> {
    let inc = dir.join("include");
    std::fs::create_dir_all(&inc).map_err(|e| e.to_string())?;
    for (name, text) in headers {
        let p = inc.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&p, text).map_err(|e| e.to_string())?;
    }
    let (cl, ll, ext) = (dir.join("program.cl"), dir.join("program.ll"), dir.join("ferrocl-extensions.h"));
    std::fs::write(&cl, source).map_err(|e| e.to_string())?;
    std::fs::write(&ext, EXTENSIONS_HEADER).map_err(|e| e.to_string())?;
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend(["-x", "cl", "-emit-llvm", "-S", "-O2"].map(os));
    args.extend(["-Xclang", "-disable-llvm-passes", "-Xclang", "-ffake-address-space-map"].map(os));
    args.extend(["-Xclang", "-fdeclare-opencl-builtins", "-Xclang", "-finclude-default-header", "-Wno-psabi"].map(os));
    // No reciprocal estimates (see launcher::ENTRY_ATTRIBUTES).
    args.push(os("-mrecip=none"));
    // Frames over a page touch each page in turn, so a kernel that overflows its stack
    // hits the guard page (and faults, which exec::fault catches) rather than jumping
    // past it into other memory.
    args.push(os("-fstack-clash-protection"));
    // The device's OpenCL version (clang defines it only for SPIR targets), and
    // "__IMAGE_SUPPORT__ ... defined as the integer constant 1 if images are supported"
    // (clang never defines it).
    args.extend(["-D__OPENCL_VERSION__=300", "-D__IMAGE_SUPPORT__=1"].map(os));
    args.extend([os("-include"), ext.as_os_str()]);
    // Only what the device claims: x86 clang enables vendor extensions by default.
    let ext = extension_flag();
    args.extend([os("-Xclang"), os(&ext)]);
    args.extend(opts.clang.iter().map(|s| os(s)));
    let features = feature_macros(&opts.clang);
    args.extend(features.iter().map(|s| os(s)));
    let inc_flag = format!("-I{}", inc.display());
    args.extend([os(&inc_flag), cl.as_os_str(), os("-o"), ll.as_os_str()]);
    let log = clang::run(clang, &args)?;
    let text = std::fs::read_to_string(&ll).map_err(|e| e.to_string())?;
    Ok((without_scratch(text, dir), log))
}

/// The module with the scratch directory's path (the module name, debug info's
/// directories) replaced by a fixed name: the path holds the process id and a counter,
/// and a compiled module is part of `clLinkProgram`'s cache key, which must not change
/// from run to run.
fn without_scratch(text: String, dir: &Path) -> String {
    match dir.to_str() {
        Some(d) if !d.is_empty() => text.replace(d, "ferrocl-program"),
        _ => text,
    }
}

/// Merges IR modules into one (clang links the others in as bitcode).
fn merge(clang: &clang::Clang, modules: &[String], dir: &Path) -> Result<String, String> {
    let (first, rest) = modules.split_first().ok_or("no input programs")?;
    let main = dir.join("link-0.ll");
    std::fs::write(&main, first).map_err(|e| e.to_string())?;
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend([os("-O0"), os("-S"), os("-emit-llvm"), main.as_os_str()]);
    let mut bitcode = Vec::new();
    for (i, m) in rest.iter().enumerate() {
        let (ll, bc) = (dir.join(format!("link-{}.ll", i + 1)), dir.join(format!("link-{}.bc", i + 1)));
        std::fs::write(&ll, m).map_err(|e| e.to_string())?;
        clang::run(clang, &[os("-c"), os("-emit-llvm"), ll.as_os_str(), os("-o"), bc.as_os_str()])?;
        bitcode.push(bc);
    }
    for bc in &bitcode {
        args.extend([os("-Xclang"), os("-mlink-bitcode-file"), os("-Xclang"), bc.as_os_str()]);
    }
    let out = dir.join("linked.ll");
    args.extend([os("-Wno-override-module"), os("-o"), out.as_os_str()]);
    clang::run(clang, &args)?;
    std::fs::read_to_string(&out).map(|t| without_scratch(t, dir)).map_err(|e| e.to_string())
}

/// Rewritten IR -> object -> shared object. Returns the library file (in the cache
/// directory, ready to be renamed into place), its kernels and the log.
fn backend(
    clang: &clang::Clang,
    opts: &options::BuildOptions,
    ir_text: &str,
    fixed: &[(String, [usize; 3])],
    archive: &Path,
    dir: &Path,
) -> Result<(PathBuf, ir::Rewritten, String), String> {
    let (opt_ll, lib, map) = (dir.join("program.ferrocl.ll"), dir.join("program.so"), dir.join("exports.map"));
    let rewritten = ir::rewrite_fixed(ir_text, fixed)?;
    std::fs::write(&opt_ll, &rewritten.module).map_err(|e| e.to_string())?;
    if clang::verifying() {
        clang::verify(clang, &opt_ll)?;
    }
    let parts = library_parts(clang, &cache::dir(), dir)?;
    let needed = needed_parts(parts, &rewritten.module)?;

    // IR -> object in one clang run (cc1 runs in its process), with the needed library
    // parts linked in as bitcode so builtins inline into the kernels and the group loop
    // is optimised together with the kernel body; then the object -> shared object by
    // the linker (see `link`). The version script exports only the entry points (else
    // printf and friends would bind to libc's and library symbols would leak).
    std::fs::write(
        &map,
        "{ global: __ferrocl_launch_*; __ferrocl_item_*; __ferrocl_static_local_query; local: *; };\n",
    )
    .map_err(|e| e.to_string())?;
    // On a failed link only: name the OpenCL builtins the program calls that neither the
    // library nor the archive defines, by their mangled names (tools such as
    // `cts-runner coverage` read these lines).
    let undefined = || {
        let missing = missing_builtins(&rewritten.module, parts, archive);
        let list: String = missing.iter().map(|n| format!("missing builtin: {n}\n")).collect();
        format!("(an undefined reference names an OpenCL builtin FerroCL does not implement yet)\n{list}")
    };
    let obj = dir.join("program.o");
    let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
    args.extend([os(if opts.opt_disable { "-O0" } else { "-O2" }), os("-c"), opt_ll.as_os_str()]);
    // The item loops' unroll-and-jam (`launcher::item_loop_metadata`); where LLVM cannot
    // do it (no single inner loop, a call inside), its "not unroll-and-jammed" warning
    // would fill the build log.
    args.extend(["-mllvm", "-enable-unroll-and-jam", "-Wno-pass-failed"].map(os));
    // A second build (loops for one group size) runs in the background, where its time
    // costs no launch: there LLVM also unswitches loops on conditions that do not change
    // in them, such as a barrier kernel's loop counter held once per group, which is
    // tested per work-item in the item loop (SGEMM in groups of 16x16 on the 2-core
    // machine: medians 41.6 -> 47.6 GFLOP/s). For first builds it cost too much time:
    // the bench's main program 174 -> 253 ms cold.
    if !fixed.is_empty() {
        args.extend(["-mllvm", "-enable-nontrivial-unswitch"].map(os));
    }
    for p in &needed {
        args.extend([os("-Xclang"), os("-mlink-builtin-bitcode"), os("-Xclang"), p.bitcode.as_os_str()]);
    }
    args.extend([os("-Wno-override-module"), os("-o"), obj.as_os_str()]);
    let mut log = clang::run(clang, &args)?;
    let through_clang = || {
        let script = format!("-Wl,--version-script={}", map.display());
        let mut args: Vec<&OsStr> = target_flags().iter().map(|s| os(s)).collect();
        args.extend([os("-shared"), obj.as_os_str(), os("-o"), lib.as_os_str(), archive.as_os_str(), os(&script)]);
        args.extend(["-Wl,--no-undefined", "-Wl,--gc-sections", "-lm", "-lpthread", "-ldl"].map(os));
        clang::run(clang, &args).map_err(|e| format!("{e}{}", undefined()))
    };
    log += &match link::link(clang, &cache::dir(), &obj, archive, &map, &lib) {
        Some(Ok(linked)) => linked,
        // A failure may come from a stale command line (the system's C library or
        // linker changed since it was cached): clang's own link decides.
        Some(Err(_)) => {
            let linked = through_clang()?;
            link::forget(clang, &cache::dir());
            linked
        }
        None => through_clang()?,
    };
    let keep = dir.with_extension("so");
    std::fs::rename(&lib, &keep).map_err(|e| e.to_string())?;
    Ok((keep, rewritten, log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrocl_kernel_abi::{Group, LaunchFn};

    /// The whole pipeline with the real clang: build, load, run one group directly.
    #[test]
    fn saxpy_builds_loads_and_runs() {
        if clang::find().is_none() {
            panic!("{}", clang::MISSING);
        }
        let src = "kernel void saxpy(global float *y, global const float *x, float a) {\n\
                   size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }";
        let built = build(&Input::Source { text: src, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(built.library.kernels[0].name, "saxpy");
        // SAFETY: a library we just built, exporting the launcher with the LaunchFn ABI.
        unsafe {
            let lib = libloading::Library::new(&built.library.path).unwrap();
            let launch = *lib.get::<LaunchFn>(b"__ferrocl_launch_saxpy\0").unwrap();
            let (mut y, x) = (vec![1.0f32; 64], (0..64).map(|i| i as f32).collect::<Vec<f32>>());
            let mut args = [0u8; 32];
            args[0..8].copy_from_slice(&(y.as_mut_ptr() as usize).to_ne_bytes());
            args[8..16].copy_from_slice(&(x.as_ptr() as usize).to_ne_bytes());
            args[16..20].copy_from_slice(&2.0f32.to_ne_bytes());
            let g = Group {
                group_id: [1, 0, 0],
                local_size: [32, 1, 1],
                enqueued_local_size: [32, 1, 1],
                global_size: [64, 1, 1],
                num_groups: [2, 1, 1],
                work_dim: 1,
                ..Default::default()
            };
            launch(&g, args.as_ptr());
            assert!(y[..32].iter().all(|&v| v == 1.0), "group 0 was not run");
            assert!((32..64).all(|i| y[i] == 2.0 * i as f32 + 1.0));
        }
        let again = build(&Input::Source { text: src, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(again.library.path, built.library.path, "the second build is a cache hit");
    }
}

#[cfg(test)]
mod macro_tests {
    use super::*;
    use crate::core::device::{EXTENSIONS, OPENCL_C_FEATURES};

    #[test]
    fn macros_defined_by_hand_are_of_what_the_device_claims() {
        for m in SPIR_ONLY_MACROS {
            assert!(EXTENSIONS.iter().chain(OPENCL_C_FEATURES).any(|(n, _)| n == m), "{m} is not claimed");
        }
        let cl12 = feature_macros(&["-cl-std=CL1.2".into()]);
        assert!(cl12.contains(&"-Dcl_khr_integer_dot_product=1".to_string()));
        assert!(!cl12.iter().any(|m| m.contains("generic_address_space")), "3.0 features stay in 3.0");
        assert!(feature_macros(&["-cl-std=CL3.0".into()]).iter().any(|m| m.contains("generic_address_space")));
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn compiled_and_linked_modules_do_not_depend_on_the_scratch_directory() {
        let compiled = |name: &str| {
            let src = format!("kernel void {name}(global float *x) {{ x[get_global_id(0)] = 1.0f; }}\n");
            compile(&Input::Source { text: &src, headers: &[] }, "-g").unwrap_or_else(|e| panic!("{e:?}")).0
        };
        let (a, b) = (compiled("a"), compiled("b"));
        assert_eq!(a, compiled("a"), "a compiled module is the same whatever scratch directory made it");
        let linked = || match link(&[a.clone(), b.clone()], "-create-library") {
            Ok(Linked::Library(ir)) => ir,
            Ok(_) => panic!("not a library"),
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(linked(), linked(), "so is a linked one (clLinkProgram's cache key)");
    }

    #[test]
    fn link_keeps_every_module_kernels() {
        let compiled =
            |text: &str| compile(&Input::Source { text, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}")).0;
        let a = compiled("float scale(float v);\nkernel void a(global float *x) { x[0] = scale(1.0f); }\n");
        let b =
            compiled("float scale(float v) { return v * 3; }\nkernel void lib_kernel(global int *a) { a[0] = 7; }\n");
        let Linked::Executable(built) = link(&[a, b], "").unwrap_or_else(|e| panic!("{e:?}")) else {
            panic!("library")
        };
        let mut names: Vec<_> = built.library.kernels.iter().map(|k| k.name.clone()).collect();
        names.sort();
        assert_eq!(names, ["a", "lib_kernel"]);
    }
}
