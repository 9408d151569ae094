//! Programs: their source or binary, the build state, and the loaded kernel library.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ferrocl_kernel_abi::{ItemFn, LaunchFn};
use opencl_sys::*;
use parking_lot::Mutex;

use super::binary;
use super::context::Context;
use super::object::{cl_object, Base};
use crate::compiler::{self, cache, meta, BuildError};

/// A kernel library loaded into the process, with its entry points resolved.
pub(crate) struct KernelLibrary {
    pub(crate) info: compiler::Library,
    entries: HashMap<String, (LaunchFn, Option<ItemFn>)>,
    /// `__ferrocl_static_local_query`, for validation mode (libraries of older builds
    /// lack it).
    static_local: Option<crate::exec::copies::validate::StaticLocalFn>,
    _lib: libloading::Library,
}

impl KernelLibrary {
    pub(crate) fn load(info: compiler::Library) -> Result<Arc<KernelLibrary>, String> {
        // dlopen returns the same instance for the same path, so programs built from
        // the same source would share their program-scope variables: each program with
        // such variables loads a private copy (unlinked once loaded).
        let private = if info.global_variable_size > 0 {
            static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let p = cache::dir().join(format!("instance-{}-{n}.so", std::process::id()));
            std::fs::copy(&info.path, &p).map_err(|e| format!("cannot copy {}: {e}\n", info.path.display()))?;
            Some(p)
        } else {
            None
        };
        let path = private.as_ref().unwrap_or(&info.path);
        // SAFETY: a library produced by our pipeline: no initialisers beyond libc's.
        let lib = unsafe { libloading::Library::new(path) };
        if let Some(p) = &private {
            let _ = std::fs::remove_file(p);
        }
        let lib = lib.map_err(|e| format!("cannot load kernel library {}: {e}\n", info.path.display()))?;
        let mut entries = HashMap::new();
        for k in &info.kernels {
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
                (*launch.map_err(|e| e.to_string())?, item)
            };
            entries.insert(k.name.clone(), entry);
        }
        // SAFETY: the pipeline exports this symbol with this type.
        let static_local =
            unsafe { lib.get::<crate::exec::copies::validate::StaticLocalFn>(b"__ferrocl_static_local_query\0") }
                .ok()
                .map(|f| *f);
        Ok(Arc::new(KernelLibrary { info, entries, static_local, _lib: lib }))
    }

    pub(crate) fn static_local_query(&self) -> Option<crate::exec::copies::validate::StaticLocalFn> {
        self.static_local
    }

    pub(crate) fn entry(&self, name: &str) -> Option<(LaunchFn, Option<ItemFn>)> {
        self.entries.get(name).copied()
    }

    pub(crate) fn kernel(&self, name: &str) -> Option<&compiler::kernel_info::Kernel> {
        self.info.kernels.iter().find(|k| k.name == name)
    }

    /// `CL_PROGRAM_BINARIES`: the kernel descriptions and the library (`binary`).
    pub(crate) fn binary(&self) -> Vec<u8> {
        let meta = meta::to_text(&self.info.kernels, self.info.global_variable_size);
        let so = std::fs::read(&self.info.path).unwrap_or_default();
        binary::pack(binary::Kind::Executable, &host_isa(), &meta, &so)
    }
}

fn host_isa() -> Vec<&'static str> {
    binary::isa_of(&super::device::Device::get().host.cpu_flags)
}

/// What a program binary holds, once checked.
pub(crate) enum FromBinary {
    /// An executable, unpacked into the cache.
    Executable(compiler::Library),
    /// A compiled object or a library: its module.
    Module(cl_program_binary_type, String),
}

/// Checks a program binary and unpacks it; `Err` says why it cannot be used.
pub(crate) fn from_binary(bytes: &[u8]) -> Result<FromBinary, String> {
    let unpacked = binary::unpack(bytes, &super::device::Device::get().host.cpu_flags)?;
    let module = || String::from_utf8_lossy(unpacked.payload).into_owned();
    match unpacked.kind {
        binary::Kind::CompiledObject => Ok(FromBinary::Module(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, module())),
        binary::Kind::Library => Ok(FromBinary::Module(CL_PROGRAM_BINARY_TYPE_LIBRARY, module())),
        binary::Kind::Executable => {
            let (kernels, global_variable_size) =
                meta::from_text(unpacked.meta).ok_or("damaged binary: unreadable kernel descriptions")?;
            let path = cache::dir().join(format!("bin-{}.so", cache::key(&[bytes])));
            if path.is_file() {
                cache::touch(&path);
            } else {
                cache::write_atomic(&path, unpacked.payload).map_err(|e| format!("cannot unpack the binary: {e}"))?;
            }
            Ok(FromBinary::Executable(compiler::Library { path, kernels, global_variable_size }))
        }
    }
}

pub(crate) struct BuildState {
    pub(crate) status: cl_build_status,
    pub(crate) options: String,
    pub(crate) log: String,
    pub(crate) binary_type: cl_program_binary_type,
    pub(crate) library: Option<Arc<KernelLibrary>>,
    /// The module of a compiled object or library (`clCompileProgram`, `-create-library`).
    pub(crate) ir: Option<String>,
}

/// How a program object was made: what clBuildProgram and clCompileProgram accept.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Origin {
    Source,
    /// `clCreateProgramWithIL`: a SPIR-V module.
    Il,
    Binary,
    Linked,
}

/// What an IL program holds besides its build state.
pub(crate) struct Il {
    pub(crate) module: Vec<u8>,
    /// The module's specialization constants, read when it was created.
    pub(crate) constants: Vec<compiler::spirv::module::SpecConstant>,
    /// Values set with `clSetProgramSpecializationConstant`, used by the next build.
    pub(crate) values: Mutex<Vec<compiler::spirv::SpecValue>>,
}

#[repr(C)]
pub(crate) struct Program {
    pub(crate) base: Base,
    pub(crate) context: Arc<Context>,
    pub(crate) origin: Origin,
    pub(crate) source: String,
    /// Set for programs created from SPIR-V.
    pub(crate) il: Option<Il>,
    /// Set for programs created from a binary, until built.
    pending_binary: Option<compiler::Library>,
    pub(crate) build: Mutex<BuildState>,
    /// Kernel objects alive: "CL_INVALID_OPERATION if there are kernel objects attached
    /// to program" when building again.
    kernels: AtomicUsize,
    /// Second builds with a loop for one group size, per kernel (`fixed_launch`), and
    /// the number of the build they belong to (a new build drops them).
    fixed: Mutex<(u64, HashMap<String, Fixed>)>,
}

/// Where a kernel's second build, with a loop for one group size, stands.
enum Fixed {
    /// The kernel has run this long (estimated) in groups of `size` since the last
    /// change of size.
    Watching {
        size: [usize; 3],
        spent_ns: u64,
    },
    Building,
    Ready(Arc<KernelLibrary>, LaunchFn),
    /// The build failed: the kernel keeps its first library.
    Failed,
}

/// How long (ms) a kernel must have run in groups of one size before the program is
/// built again with a loop for that size: about what the build costs (the bench's SGEMM
/// on the 2-core machine, 92-94 ms cold). `FERROCL_SIZE_BUILD_MS` sets it (0: at the
/// first launch; `off`: never).
const FIXED_AFTER_MS: u64 = 100;

/// `FIXED_AFTER_MS` in ns, or as the environment sets it; `None`: no second builds.
fn fixed_after_ns() -> Option<u64> {
    static AFTER: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *AFTER.get_or_init(|| {
        let ms = match std::env::var("FERROCL_SIZE_BUILD_MS") {
            Ok(v) if v == "off" => return None,
            Ok(v) => v.parse().unwrap_or(FIXED_AFTER_MS),
            Err(_) => FIXED_AFTER_MS,
        };
        Some(ms.saturating_mul(1_000_000))
    })
}

cl_object!(Program, CL_INVALID_PROGRAM);

impl Program {
    fn new(
        context: Arc<Context>,
        origin: Origin,
        source: String,
        pending_binary: Option<compiler::Library>,
    ) -> Arc<Program> {
        Arc::new(Program {
            base: Base::new(),
            context,
            origin,
            source,
            il: None,
            pending_binary,
            build: Mutex::new(BuildState {
                status: CL_BUILD_NONE,
                options: String::new(),
                log: String::new(),
                binary_type: CL_PROGRAM_BINARY_TYPE_NONE,
                library: None,
                ir: None,
            }),
            kernels: AtomicUsize::new(0),
            fixed: Mutex::new((0, HashMap::new())),
        })
    }

    pub(crate) fn from_source(context: Arc<Context>, source: String) -> Arc<Program> {
        compiler::warm_up();
        Program::new(context, Origin::Source, source, None)
    }

    /// A program from a SPIR-V module; `Err` says why the module is malformed.
    pub(crate) fn from_il(context: Arc<Context>, module: Vec<u8>) -> Result<Arc<Program>, String> {
        let parsed = compiler::spirv::module::parse(&module)?;
        compiler::warm_up();
        let mut p = Program::new(context, Origin::Il, String::new(), None);
        let il = Il { module, constants: parsed.spec_constants, values: Mutex::new(Vec::new()) };
        Arc::get_mut(&mut p).expect("a new program is not shared").il = Some(il);
        Ok(p)
    }

    /// `clSetProgramSpecializationConstant`.
    pub(crate) fn set_spec_constant(&self, id: u32, value: &[u8]) -> Result<(), cl_int> {
        let il = self.il.as_ref().ok_or(CL_INVALID_PROGRAM)?;
        let c = il.constants.iter().find(|c| c.id == id).ok_or(CL_INVALID_SPEC_ID)?;
        if value.len() != c.ty.size() {
            return Err(CL_INVALID_VALUE);
        }
        let mut values = il.values.lock();
        values.retain(|(i, _)| *i != id);
        values.push((id, value.to_vec()));
        values.sort();
        Ok(())
    }

    /// What the compiler builds this program from.
    fn with_input<T>(&self, headers: &[(String, String)], f: impl FnOnce(&compiler::Input) -> T) -> T {
        match &self.il {
            Some(il) => {
                let spec = il.values.lock().clone();
                f(&compiler::Input::Il { module: &il.module, spec: &spec })
            }
            None => f(&compiler::Input::Source { text: &self.source, headers }),
        }
    }

    pub(crate) fn from_binary(context: Arc<Context>, binary: FromBinary) -> Arc<Program> {
        match binary {
            FromBinary::Executable(library) => {
                let p = Program::new(context, Origin::Binary, String::new(), Some(library));
                p.build.lock().binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
                p
            }
            // A compiled object or library can be linked as it is.
            FromBinary::Module(binary_type, ir) => {
                let p = Program::new(context, Origin::Binary, String::new(), None);
                let mut st = p.build.lock();
                st.binary_type = binary_type;
                st.ir = Some(ir);
                drop(st);
                p
            }
        }
    }

    /// `CL_PROGRAM_BINARIES`: the executable, or the compiled object or library, or
    /// nothing.
    pub(crate) fn binary(&self) -> Vec<u8> {
        let st = self.build.lock();
        if let Some(lib) = &st.library {
            return lib.binary();
        }
        let kind = match st.binary_type {
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT => binary::Kind::CompiledObject,
            CL_PROGRAM_BINARY_TYPE_LIBRARY => binary::Kind::Library,
            _ => return Vec::new(),
        };
        st.ir.as_ref().map(|ir| binary::pack(kind, &host_isa(), "", ir.as_bytes())).unwrap_or_default()
    }

    pub(crate) fn library(&self) -> Option<Arc<KernelLibrary>> {
        self.build.lock().library.clone()
    }

    /// Builds the program (or loads its binary) and records the outcome.
    pub(crate) fn build(&self, options: &str) -> Result<(), cl_int> {
        let module = (self.origin == Origin::Binary).then(|| self.build.lock().ir.clone()).flatten();
        let result = match (&self.pending_binary, module) {
            (Some(lib), _) => Ok((lib.clone(), String::new())),
            // A compiled object or library from a binary: linked into an executable.
            (None, Some(ir)) => match compiler::link(target(), &[ir], options) {
                Ok(compiler::Linked::Executable(b)) => Ok((b.library, b.log)),
                Ok(compiler::Linked::Library(_)) => Err(BuildError::InvalidOptions(
                    "-create-library is a clLinkProgram option, not a clBuildProgram one\n".into(),
                )),
                Err(e) => Err(e),
            },
            (None, None) => self.with_input(&[], |i| compiler::build(target(), i, options)).map(|b| (b.library, b.log)),
        };
        self.build.lock().options = options.to_string();
        let loaded =
            result.and_then(|(lib, log)| KernelLibrary::load(lib).map(|l| (l, log)).map_err(BuildError::Failed));
        match loaded {
            Ok((lib, log)) => {
                self.succeed(CL_PROGRAM_BINARY_TYPE_EXECUTABLE, log, Some(lib), None);
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The launcher of kernel `name` from a second build of the program that gives it
    /// a loop for groups of one size with the size a constant (`compiler::build_fixed`),
    /// once that build is ready; `None` until then. A launch in groups of `local`
    /// estimated to take `estimate_ns` counts towards starting the build in the
    /// background: once the kernel has run `FIXED_AFTER_MS` in groups of one size. The
    /// second library runs every size (groups of other sizes take the general loop).
    /// PoCL builds each kernel for each launch size, before the launch; here a build the
    /// kernel does not pay back is not made, and launches do not wait for one.
    pub(crate) fn fixed_launch(
        self: &Arc<Self>,
        name: &str,
        local: [usize; 3],
        estimate_ns: u64,
    ) -> Option<(LaunchFn, Arc<KernelLibrary>)> {
        // A program built from a binary may have no compiler to build it again; one from
        // SPIR-V may have had its specialization constants set since its build (they
        // count from the next build on); one with program-scope variables would get a
        // second copy of them.
        let after_ns = fixed_after_ns()?;
        if self.origin != Origin::Source {
            return None;
        }
        let mut fixed = self.fixed.lock();
        let generation = fixed.0;
        // Not `entry`: its key would be a new String at every launch.
        if !fixed.1.contains_key(name) {
            fixed.1.insert(name.to_string(), Fixed::Watching { size: local, spent_ns: 0 });
        }
        let state = fixed.1.get_mut(name)?;
        match state {
            Fixed::Ready(lib, launch) => return Some((*launch, lib.clone())),
            Fixed::Building | Fixed::Failed => return None,
            Fixed::Watching { size, spent_ns } if *size != local => {
                (*size, *spent_ns) = (local, estimate_ns);
                return None;
            }
            Fixed::Watching { spent_ns, .. } => {
                *spent_ns = spent_ns.saturating_add(estimate_ns);
                if *spent_ns < after_ns {
                    return None;
                }
            }
        }
        let (options, globals) = {
            let st = self.build.lock();
            (st.options.clone(), st.library.as_ref().map_or(1, |l| l.info.global_variable_size))
        };
        if globals > 0 {
            *state = Fixed::Failed;
            return None;
        }
        *state = Fixed::Building;
        drop(fixed);
        let (program, kernel) = (self.clone(), name.to_string());
        let spawned = std::thread::Builder::new().name("ferrocl-size-build".into()).spawn(move || {
            let name = kernel;
            let sizes = [(name.clone(), local)];
            let built = program.with_input(&[], |i| compiler::build_fixed(target(), i, &options, &sizes));
            let library = built.ok().and_then(|b| KernelLibrary::load(b.library).ok());
            let entry = library.and_then(|lib| Some((lib.entry(&name)?.0, lib)));
            let mut fixed = program.fixed.lock();
            if fixed.0 == generation {
                fixed.1.insert(name, entry.map_or(Fixed::Failed, |(launch, lib)| Fixed::Ready(lib, launch)));
            }
        });
        if spawned.is_err() {
            let mut fixed = self.fixed.lock();
            if fixed.0 == generation {
                fixed.1.insert(name.to_string(), Fixed::Failed);
            }
        }
        None
    }

    /// Records a successful build step.
    fn succeed(
        &self,
        binary_type: cl_program_binary_type,
        log: String,
        library: Option<Arc<KernelLibrary>>,
        ir: Option<String>,
    ) {
        {
            // Second builds of the program before this one are stale.
            let mut fixed = self.fixed.lock();
            fixed.0 += 1;
            fixed.1.clear();
        }
        let mut st = self.build.lock();
        st.status = CL_BUILD_SUCCESS;
        st.log = log;
        st.binary_type = binary_type;
        st.library = library;
        st.ir = ir;
    }

    /// Records a failed build step and returns its error code.
    pub(crate) fn fail(&self, e: BuildError) -> cl_int {
        let mut st = self.build.lock();
        st.status = CL_BUILD_ERROR;
        st.library = None;
        let (log, code) = match e {
            BuildError::NoCompiler(l) => (l, CL_COMPILER_NOT_AVAILABLE),
            BuildError::InvalidOptions(l) => (l, CL_INVALID_BUILD_OPTIONS),
            BuildError::Failed(l) => (l, CL_BUILD_PROGRAM_FAILURE),
        };
        st.log = log;
        code
    }

    /// `clCompileProgram`: keeps the module for a later link.
    pub(crate) fn compile(&self, options: &str, headers: &[(String, String)]) -> Result<(), cl_int> {
        self.build.lock().options = options.to_string();
        match self.with_input(headers, |i| compiler::compile(target(), i, options)) {
            Ok((ir, log)) => {
                self.succeed(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, log, None, Some(ir));
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// A program made by `clLinkProgram`.
    pub(crate) fn from_link(
        context: Arc<Context>,
        options: &str,
        inputs: &[Arc<Program>],
    ) -> (Arc<Program>, Result<(), cl_int>) {
        let p = Program::new(context, Origin::Linked, String::new(), None);
        p.build.lock().options = options.to_string();
        let modules: Vec<String> = inputs.iter().filter_map(|i| i.build.lock().ir.clone()).collect();
        let result = match compiler::link(target(), &modules, options) {
            Ok(compiler::Linked::Library(ir)) => {
                p.succeed(CL_PROGRAM_BINARY_TYPE_LIBRARY, String::new(), None, Some(ir));
                Ok(())
            }
            Ok(compiler::Linked::Executable(built)) => match KernelLibrary::load(built.library) {
                Ok(lib) => {
                    p.succeed(CL_PROGRAM_BINARY_TYPE_EXECUTABLE, built.log, Some(lib), None);
                    Ok(())
                }
                Err(e) => Err(p.fail(BuildError::Failed(e))),
            },
            Err(e) => Err(p.fail(e)),
        };
        (p, result)
    }

    pub(crate) fn kernel_attached(&self) {
        self.kernels.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn kernel_detached(&self) {
        self.kernels.fetch_sub(1, Ordering::AcqRel);
    }

    /// Whether kernel objects are attached: "CL_INVALID_OPERATION if there are kernel
    /// objects attached to program" when it is built again.
    pub(crate) fn has_kernels(&self) -> bool {
        self.kernels.load(Ordering::Acquire) > 0
    }
}

/// What this driver's programs are compiled for: the one device's target.
fn target() -> &'static compiler::Target {
    &super::device::Device::get().compile_target
}

#[cfg(test)]
mod tests {
    use super::target;
    use crate::compiler::{build, Input};
    use ferrocl_kernel_abi::{Group, LaunchFn};

    /// Every builtin the rewrite passes the work-item context to, listed in the
    /// compiler's table, is one the kernel-side library defines under that name.
    #[test]
    fn the_library_defines_every_context_builtin() {
        assert!(crate::compiler::available(), "these tests need clang: run tools/setup");
        let missing =
            crate::compiler::context_builtins_missing_from_library(target()).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(missing.is_empty(), "not in the library: {missing:?}");
    }

    /// The compiler's whole pipeline with the real clang, for this device: build, load, run
    /// one group directly.
    #[test]
    fn saxpy_builds_loads_and_runs() {
        assert!(crate::compiler::available(), "these tests need clang: run tools/setup");
        let src = "kernel void saxpy(global float *y, global const float *x, float a) {\n\
                   size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }";
        let built = build(target(), &Input::Source { text: src, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}"));
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
        let again = build(target(), &Input::Source { text: src, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(again.library.path, built.library.path, "the second build is a cache hit");
    }
}

#[cfg(test)]
mod link_tests {
    use super::target;
    use crate::compiler::{compile, link, Input, Linked};

    #[test]
    fn compiled_and_linked_modules_do_not_depend_on_the_scratch_directory() {
        let compiled = |name: &str| {
            let src = format!("kernel void {name}(global float *x) {{ x[get_global_id(0)] = 1.0f; }}\n");
            compile(target(), &Input::Source { text: &src, headers: &[] }, "-g").unwrap_or_else(|e| panic!("{e:?}")).0
        };
        let (a, b) = (compiled("a"), compiled("b"));
        assert_eq!(a, compiled("a"), "a compiled module is the same whatever scratch directory made it");
        let linked = || match link(target(), &[a.clone(), b.clone()], "-create-library") {
            Ok(Linked::Library(ir)) => ir,
            Ok(_) => panic!("not a library"),
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(linked(), linked(), "so is a linked one (clLinkProgram's cache key)");
    }

    #[test]
    fn link_keeps_every_module_kernels() {
        let compiled = |text: &str| {
            compile(target(), &Input::Source { text, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}")).0
        };
        let a = compiled("float scale(float v);\nkernel void a(global float *x) { x[0] = scale(1.0f); }\n");
        let b =
            compiled("float scale(float v) { return v * 3; }\nkernel void lib_kernel(global int *a) { a[0] = 7; }\n");
        let Linked::Executable(built) = link(target(), &[a, b], "").unwrap_or_else(|e| panic!("{e:?}")) else {
            panic!("library")
        };
        let mut names: Vec<_> = built.library.kernels.iter().map(|k| k.name.clone()).collect();
        names.sort();
        assert_eq!(names, ["a", "lib_kernel"]);
    }
}
