//! A built program's code, loaded into the process: one shared object with every
//! kernel (`compiler::Code::Whole`), or one per kernel and shape of launch, made at the
//! kernel's first launch of that shape (`Code::Deferred`, `compiler::generate`), and the
//! second builds with a loop for one group size that long-running kernels earn.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use ferrocl_kernel_abi::{FlatFn, ItemFn, LaunchFn};
use parking_lot::Mutex;

use super::binary;
use crate::compiler::{self, cache, kernel_info, meta, Code, Unit};
use crate::exec::copies::validate::StaticLocalFn;

/// A shared object of kernel code loaded into the process, with its entry points.
pub(crate) struct KernelLibrary {
    entries: HashMap<String, (LaunchFn, Option<ItemFn>, Option<FlatFn>)>,
    /// `__ferrocl_static_local_query`, for validation mode.
    static_local: Option<StaticLocalFn>,
    _lib: libloading::Library,
}

impl KernelLibrary {
    /// Loads `path` and resolves the entry points of `kernels`. `private`: the library
    /// has program-scope variables; dlopen returns the same instance for the same path,
    /// so programs built from the same source would share them: each program loads a
    /// private copy (unlinked once loaded).
    fn load(path: &Path, kernels: &[&kernel_info::Kernel], private: bool) -> Result<Arc<KernelLibrary>, String> {
        runs_here()?;
        let copy = if private {
            static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = cache::dir().join(format!("instance-{}-{n}.so", std::process::id()));
            std::fs::copy(path, &p).map_err(|e| format!("cannot copy {}: {e}\n", path.display()))?;
            Some(p)
        } else {
            None
        };
        // SAFETY: a library produced by our pipeline: no initialisers beyond libc's.
        let lib = unsafe { libloading::Library::new(copy.as_deref().unwrap_or(path)) };
        if let Some(p) = &copy {
            let _ = std::fs::remove_file(p);
        }
        let lib = lib.map_err(|e| format!("cannot load kernel library {}: {e}\n", path.display()))?;
        let mut entries = HashMap::new();
        for k in kernels {
            // SAFETY: the pipeline exports these symbols with exactly these types.
            let entry = unsafe {
                let launch = lib.get::<LaunchFn>(format!("__ferrocl_launch_{}\0", k.name).as_bytes());
                // Only kernels that run as fibers have a per-work-item entry point.
                let item = match k.fibers {
                    true => Some(
                        *lib.get::<ItemFn>(format!("__ferrocl_item_{}\0", k.name).as_bytes())
                            .map_err(|e| e.to_string())?,
                    ),
                    false => None,
                };
                // Kernels run as fibers may have a flat copy for groups in sub-groups of
                // the SIMD width.
                let flat = match k.fibers {
                    true => lib.get::<FlatFn>(format!("__ferrocl_flat_{}\0", k.name).as_bytes()).ok().map(|f| *f),
                    false => None,
                };
                (*launch.map_err(|e| e.to_string())?, item, flat)
            };
            entries.insert(k.name.clone(), entry);
        }
        // SAFETY: the pipeline exports this symbol with this type.
        let static_local = unsafe { lib.get::<StaticLocalFn>(b"__ferrocl_static_local_query\0") }.ok().map(|f| *f);
        Ok(Arc::new(KernelLibrary { entries, static_local, _lib: lib }))
    }

    pub(crate) fn static_local_query(&self) -> Option<StaticLocalFn> {
        self.static_local
    }
}

/// A kernel's entry points for launches of one shape, and the library holding them.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) launch: LaunchFn,
    pub(crate) item: Option<ItemFn>,
    pub(crate) flat: Option<FlatFn>,
    pub(crate) library: Arc<KernelLibrary>,
}

type Loaded = Result<Arc<KernelLibrary>, String>;

/// How many combinations of image formats a kernel gets code made for before it gets
/// code for any format, whose reads jump on the format per texel.
const FORMAT_UNITS: usize = 3;

/// A built program's code.
pub(crate) struct Executable {
    pub(crate) info: compiler::Library,
    /// Every kernel's code in one library: loaded at the build for `Code::Whole`; made
    /// for a deferred program when its binary is asked for.
    whole: OnceLock<Loaded>,
    /// Deferred code, per unit; a cell is filled once, by the first launch needing it
    /// (launches of other units do not wait for it).
    units: Mutex<HashMap<Unit, Arc<OnceLock<Loaded>>>>,
    /// Second builds with a loop for one group size, per kernel (`fixed_launch`).
    fixed: Mutex<HashMap<String, Fixed>>,
    /// The program has kernels clang made for blocks, which its kernels may enqueue
    /// (`super::device_enqueue`): decided once, not at every launch.
    pub(crate) has_blocks: bool,
}

/// Where a kernel's second build, with a loop for one group size, stands.
enum Fixed {
    /// The kernel has run this long (estimated) in groups of `size` with images of
    /// `images` since the last change of either.
    Watching {
        size: [usize; 3],
        images: Vec<u32>,
        spent_ns: u64,
    },
    Building,
    Ready(Vec<u32>, Entry),
    /// The build failed: the kernel keeps its first code.
    Failed,
}

/// How long (ms) a kernel must have run in groups of one size before it is built again
/// with a loop for that size, where `FERROCL_SIZE_BUILD_MS` asks for second builds
/// without a number: about what the build costs (the bench's SGEMM on the 2-core
/// machine, 92-94 ms cold). `FERROCL_SIZE_BUILD_MS=N` builds after N ms (0: at the first
/// launch).
const FIXED_AFTER_MS: u64 = 100;

/// The time in ns after which a kernel gets its second build, as the environment sets
/// it; `None`: no second builds, the default. With SIMD copies the second build's code
/// ran slower than the first: the bench's stencil 5.2-5.3 -> 11.0 ms, block-stride
/// 0.57-0.63 -> 0.86 ms, while the barrier-tiled SGEMM it was made for gained nothing
/// (2-core machine, bench, two runs each: 18.0-20.0 GFLOP/s with, 21.6-22.3 without).
fn fixed_after_ns() -> Option<u64> {
    static AFTER: OnceLock<Option<u64>> = OnceLock::new();
    *AFTER.get_or_init(|| {
        let ms = match std::env::var("FERROCL_SIZE_BUILD_MS") {
            Ok(v) if v == "off" => return None,
            Ok(v) => v.parse().unwrap_or(FIXED_AFTER_MS),
            Err(_) => return None,
        };
        Some(ms.saturating_mul(1_000_000))
    })
}

/// What this driver's programs are compiled for: the one device's target.
pub(crate) fn target() -> &'static compiler::Target {
    &super::device::Device::get().compile_target
}

fn build_log(e: compiler::BuildError) -> String {
    match e {
        compiler::BuildError::NoCompiler(l) | compiler::BuildError::InvalidOptions(l) => l,
        compiler::BuildError::Failed(l) => l,
    }
}

impl Executable {
    /// A built program's code; whole code is loaded now, so that a library that does
    /// not load fails the build.
    pub(crate) fn new(info: compiler::Library) -> Result<Arc<Executable>, String> {
        let has_blocks = info.kernels.iter().any(|k| crate::compiler::kernel_info::is_block_kernel(&k.name));
        let exe = Executable {
            info,
            whole: OnceLock::new(),
            units: Mutex::new(HashMap::new()),
            fixed: Mutex::new(HashMap::new()),
            has_blocks,
        };
        // Code for another CPU (`FERROCL_TARGET_CPU`) is loaded at a launch, which
        // fails where this CPU cannot run it; the build itself is for its binary.
        if matches!(exe.info.code, Code::Whole(_)) && compiler::cross_cpu().is_none() {
            exe.whole()?;
        }
        Ok(Arc::new(exe))
    }

    fn whole(&self) -> Loaded {
        self.whole
            .get_or_init(|| {
                let path = match &self.info.code {
                    Code::Whole(p) => p.clone(),
                    Code::Deferred(d) => compiler::generate_whole(target(), d).map_err(build_log)?,
                };
                let kernels: Vec<&kernel_info::Kernel> = self.info.kernels.iter().collect();
                KernelLibrary::load(&path, &kernels, self.info.global_variable_size > 0)
            })
            .clone()
    }

    /// The entry points of `unit`'s kernel for launches of its shape: from the program's
    /// one library, or the unit's, made now if no launch has made it yet (`background`:
    /// at the lowest priority).
    fn entry(&self, name: &str, unit: &Unit, background: bool) -> Result<Entry, String> {
        let library = match &self.info.code {
            Code::Whole(_) => self.whole()?,
            Code::Deferred(d) => {
                let cell = self.units.lock().entry(unit.clone()).or_default().clone();
                cell.get_or_init(|| {
                    let path = compiler::generate(target(), d, unit, background).map_err(build_log)?;
                    let imageless =
                        |k: &kernel_info::Kernel| !k.args.iter().any(|a| a.kind == kernel_info::ArgKind::Image);
                    let kernels: Vec<&kernel_info::Kernel> = match &unit.kernel {
                        Some(n) => self.info.kernels.iter().filter(|k| k.name == *n).collect(),
                        None => self.info.kernels.iter().filter(|k| imageless(k)).collect(),
                    };
                    KernelLibrary::load(&path, &kernels, false)
                })
                .clone()?
            }
        };
        let &(launch, item, flat) =
            library.entries.get(name).ok_or_else(|| format!("no entry point for kernel {name}\n"))?;
        Ok(Entry { launch, item, flat, library })
    }

    /// The entry points of kernel `name` for launches with images of these formats
    /// (kernel-abi `image_key`, in argument order): code made for them, or once the
    /// kernel has code for `FORMAT_UNITS` other formats, code for any (a conformance
    /// test runs one kernel over every format).
    pub(crate) fn entry_for(&self, name: &str, images: &[u32]) -> Result<Entry, String> {
        if images.is_empty() && matches!(&self.info.code, Code::Deferred(d) if d.small()) {
            return self.entry(name, &Unit { kernel: None, fixed: None, images: Some(Vec::new()) }, false);
        }
        let made = |u: &Unit| u.kernel.as_deref() == Some(name) && u.fixed.is_none() && u.images.is_some();
        let formats = match images.is_empty() || self.units.lock().keys().filter(|u| made(u)).count() < FORMAT_UNITS {
            true => Some(images.to_vec()),
            false => None,
        };
        self.entry(name, &Unit { kernel: Some(name.to_string()), fixed: None, images: formats }, false)
    }

    /// `CL_PROGRAM_BINARIES`: the kernel descriptions and the code of every kernel for
    /// any launch (`binary`); made now for a deferred program.
    pub(crate) fn binary(&self) -> Result<Vec<u8>, String> {
        let path = match &self.info.code {
            Code::Whole(p) => p.clone(),
            Code::Deferred(d) => compiler::generate_whole(target(), d).map_err(build_log)?,
        };
        let meta = meta::to_text(&self.info.kernels, self.info.global_variable_size);
        let so = std::fs::read(&path).map_err(|e| format!("{}: {e}\n", path.display()))?;
        Ok(binary::pack(binary::Kind::Executable, &code_isa()?, &meta, &so))
    }

    /// The entry points of kernel `name` from a second build that gives it a loop for
    /// groups of one size with the size a constant (`Unit::fixed`), once that build is
    /// ready; `None` until then. A launch in groups of `local` estimated to take
    /// `estimate_ns` counts towards starting the build in the background: once the
    /// kernel has run `FIXED_AFTER_MS` in groups of one size and images of one format
    /// each. The second build runs every size (groups of other sizes take the general
    /// loop). PoCL builds each kernel for each launch size, before the launch; here a
    /// build the kernel does not pay back is not made, and launches do not wait for one.
    /// Only deferred code is built again: a program from a binary may have no compiler
    /// to build it, and one with program-scope variables would get a second copy of
    /// them.
    pub(crate) fn fixed_launch(
        self: &Arc<Self>,
        name: &str,
        images: &[u32],
        local: [usize; 3],
        estimate_ns: u64,
    ) -> Option<Entry> {
        let after_ns = fixed_after_ns()?;
        if !matches!(self.info.code, Code::Deferred(_)) {
            return None;
        }
        let mut fixed = self.fixed.lock();
        // Not `entry`: its key would be a new String at every launch.
        if !fixed.contains_key(name) {
            fixed.insert(name.to_string(), Fixed::Watching { size: local, images: images.to_vec(), spent_ns: 0 });
        }
        let state = fixed.get_mut(name)?;
        match state {
            Fixed::Ready(formats, entry) => return (formats.as_slice() == images).then(|| entry.clone()),
            Fixed::Building | Fixed::Failed => return None,
            Fixed::Watching { size, images: seen, spent_ns } if *size != local || seen.as_slice() != images => {
                (*size, *seen, *spent_ns) = (local, images.to_vec(), estimate_ns);
                return None;
            }
            Fixed::Watching { spent_ns, .. } => {
                *spent_ns = spent_ns.saturating_add(estimate_ns);
                if *spent_ns < after_ns {
                    return None;
                }
            }
        }
        *state = Fixed::Building;
        drop(fixed);
        let exe = self.clone();
        let (kernel, unit) = (
            name.to_string(),
            Unit { kernel: Some(name.to_string()), fixed: Some(local), images: Some(images.to_vec()) },
        );
        let spawned = std::thread::Builder::new().name("ferrocl-size-build".into()).spawn(move || {
            let state = match exe.entry(&kernel, &unit, true) {
                Ok(entry) => Fixed::Ready(unit.images.unwrap_or_default(), entry),
                Err(_) => Fixed::Failed,
            };
            exe.fixed.lock().insert(kernel, state);
        });
        if spawned.is_err() {
            self.fixed.lock().insert(name.to_string(), Fixed::Failed);
        }
        None
    }
}

/// The instruction-set flags compiled code may use: this CPU's, or those of the CPU
/// that `FERROCL_TARGET_CPU` names (`compiler::cross_cpu`).
pub(crate) fn code_isa() -> Result<Vec<&'static str>, String> {
    match compiler::cross_cpu_macros() {
        None => Ok(binary::isa_of(&super::device::Device::get().host.cpu_flags)),
        Some(Ok(macros)) => Ok(binary::isa_of_macros(macros)),
        Some(Err(e)) => Err(format!("FERROCL_TARGET_CPU={}: {e}\n", compiler::cross_cpu().unwrap_or_default())),
    }
}

/// `Err` where code compiled for `FERROCL_TARGET_CPU` needs an extension this CPU
/// lacks (it would die of SIGILL): such code is for program binaries only.
fn runs_here() -> Result<(), String> {
    if compiler::cross_cpu().is_none() {
        return Ok(());
    }
    let host = binary::isa_of(&super::device::Device::get().host.cpu_flags);
    let missing: Vec<&str> = code_isa()?.into_iter().filter(|f| !host.contains(f)).collect();
    match missing.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "kernels are compiled for FERROCL_TARGET_CPU={}, whose {} this CPU lacks: they can be saved as \
             program binaries, not run here\n",
            compiler::cross_cpu().unwrap_or_default(),
            missing.join(", ")
        )),
    }
}
