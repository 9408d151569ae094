//! Programs: their source or binary, and the build state with the built code
//! (`executable`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use opencl_sys::*;
use parking_lot::Mutex;

use super::binary;
use super::context::Context;
use super::executable::{code_isa, target, Executable};
use super::object::{cl_object, Base};
use crate::compiler::{self, cache, meta, BuildError};

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
            Ok(FromBinary::Executable(compiler::Library {
                code: compiler::Code::Whole(path),
                kernels,
                global_variable_size,
            }))
        }
    }
}

pub(crate) struct BuildState {
    pub(crate) status: cl_build_status,
    pub(crate) options: String,
    pub(crate) log: String,
    pub(crate) binary_type: cl_program_binary_type,
    pub(crate) library: Option<Arc<Executable>>,
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
        if let Some(exe) = &st.library {
            // A binary that cannot be made is no binary (size 0): the kernels' code for
            // it failed to build, which the build log says.
            return exe.binary().unwrap_or_default();
        }
        let kind = match st.binary_type {
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT => binary::Kind::CompiledObject,
            CL_PROGRAM_BINARY_TYPE_LIBRARY => binary::Kind::Library,
            _ => return Vec::new(),
        };
        let isa = code_isa().unwrap_or_default();
        st.ir.as_ref().map(|ir| binary::pack(kind, &isa, "", ir.as_bytes())).unwrap_or_default()
    }

    pub(crate) fn library(&self) -> Option<Arc<Executable>> {
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
        let loaded = result.and_then(|(lib, log)| Executable::new(lib).map(|l| (l, log)).map_err(BuildError::Failed));
        match loaded {
            Ok((lib, log)) => {
                self.succeed(CL_PROGRAM_BINARY_TYPE_EXECUTABLE, log, Some(lib), None);
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Records a successful build step.
    fn succeed(
        &self,
        binary_type: cl_program_binary_type,
        log: String,
        library: Option<Arc<Executable>>,
        ir: Option<String>,
    ) {
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
            Ok(compiler::Linked::Executable(built)) => match Executable::new(built.library) {
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

#[cfg(test)]
mod tests {
    use super::target;
    use crate::compiler::{build, generate, Code, Input, Unit};
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

    /// The compiler's whole pipeline with the real clang, for this device: build (no code
    /// yet), code for one kernel (its entry points alone), load, run one group directly.
    #[test]
    fn saxpy_builds_loads_and_runs() {
        assert!(crate::compiler::available(), "these tests need clang: run tools/setup");
        let src = "kernel void saxpy(global float *y, global const float *x, float a) {\n\
                   size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n\
                   kernel void other(global float *y) { y[get_global_id(0)] = 0.0f; }";
        let built = build(target(), &Input::Source { text: src, headers: &[] }, "").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(built.library.kernels[0].name, "saxpy");
        let Code::Deferred(program) = &built.library.code else { panic!("code made at the build") };
        let unit = Unit { kernel: Some("saxpy".into()), fixed: None, images: Some(Vec::new()) };
        let path = generate(target(), program, &unit, false).unwrap_or_else(|e| panic!("{e:?}"));
        // SAFETY: a library we just built, exporting the launcher with the LaunchFn ABI.
        unsafe {
            let lib = libloading::Library::new(&path).unwrap();
            assert!(lib.get::<LaunchFn>(b"__ferrocl_launch_other\0").is_err(), "the unit has another kernel's code");
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
        let Code::Deferred(program) = &again.library.code else { panic!("code made at the build") };
        let path_again = generate(target(), program, &unit, false).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(path_again, path, "the second build and its kernel's code are cache hits");
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
