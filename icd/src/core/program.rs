//! Programs: their source or binary, the build state, and the loaded kernel library.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ferrocl_kernel_abi::{ItemFn, LaunchFn};
use opencl_sys::*;
use parking_lot::Mutex;

use super::context::Context;
use super::object::{Base, ClObject, Kind};
use crate::compiler::{self, cache, meta, BuildError};

/// A kernel library loaded into the process, with its entry points resolved.
pub struct KernelLibrary {
    pub info: compiler::Library,
    entries: HashMap<String, (LaunchFn, Option<ItemFn>)>,
    _lib: libloading::Library,
}

impl KernelLibrary {
    pub fn load(info: compiler::Library) -> Result<Arc<KernelLibrary>, String> {
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
        Ok(Arc::new(KernelLibrary { info, entries, _lib: lib }))
    }

    pub fn entry(&self, name: &str) -> Option<(LaunchFn, Option<ItemFn>)> {
        self.entries.get(name).copied()
    }

    pub fn kernel(&self, name: &str) -> Option<&compiler::kernel_info::Kernel> {
        self.info.kernels.iter().find(|k| k.name == name)
    }

    /// `CL_PROGRAM_BINARIES`: our container of the kernel descriptions and the library.
    pub fn binary(&self) -> Vec<u8> {
        let mut out = format!(
            "{BINARY_MAGIC}\n{}{BINARY_END}\n",
            meta::to_text(&self.info.kernels, self.info.global_variable_size)
        )
        .into_bytes();
        out.extend(std::fs::read(&self.info.path).unwrap_or_default());
        out
    }
}

const BINARY_MAGIC: &str = "FERROCL-BINARY-1";
const BINARY_END: &str = "--";

/// Unpacks a program binary into the cache; `None` if it is not one of ours.
pub fn library_from_binary(bytes: &[u8]) -> Option<compiler::Library> {
    let text_end = bytes.windows(BINARY_END.len() + 2).position(|w| w == format!("\n{BINARY_END}\n").as_bytes())?;
    let head = std::str::from_utf8(&bytes[..text_end + 1]).ok()?;
    let meta_text = head.strip_prefix(BINARY_MAGIC)?.strip_prefix('\n')?;
    let (kernels, global_variable_size) = meta::from_text(meta_text)?;
    let so = &bytes[text_end + BINARY_END.len() + 2..];
    if !so.starts_with(b"\x7fELF") {
        return None;
    }
    let path = cache::dir().join(format!("bin-{}.so", cache::key(&[bytes])));
    if path.is_file() {
        cache::touch(&path);
    } else {
        cache::write_atomic(&path, so).ok()?;
    }
    Some(compiler::Library { path, kernels, global_variable_size })
}

pub struct BuildState {
    pub status: cl_build_status,
    pub options: String,
    pub log: String,
    pub binary_type: cl_program_binary_type,
    pub library: Option<Arc<KernelLibrary>>,
    /// The module of a compiled object or library (`clCompileProgram`, `-create-library`).
    pub ir: Option<String>,
}

#[repr(C)]
pub struct Program {
    pub base: Base,
    pub context: Arc<Context>,
    pub source: String,
    /// Set for programs created from a binary, until built.
    pub pending_binary: Option<compiler::Library>,
    pub build: Mutex<BuildState>,
    /// Kernel objects alive: "CL_INVALID_OPERATION if there are kernel objects attached
    /// to program" when building again.
    pub kernels: AtomicUsize,
}

impl ClObject for Program {
    const KIND: Kind = Kind::Program;
    const INVALID: cl_int = CL_INVALID_PROGRAM;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Program {
    fn new(context: Arc<Context>, source: String, pending_binary: Option<compiler::Library>) -> Arc<Program> {
        Arc::new(Program {
            base: Base::new(),
            context,
            source,
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

    pub fn from_source(context: Arc<Context>, source: String) -> Arc<Program> {
        Program::new(context, source, None)
    }

    pub fn from_binary(context: Arc<Context>, library: compiler::Library) -> Arc<Program> {
        let p = Program::new(context, String::new(), Some(library));
        p.build.lock().binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
        p
    }

    pub fn library(&self) -> Option<Arc<KernelLibrary>> {
        self.build.lock().library.clone()
    }

    /// Builds the program (or loads its binary) and records the outcome.
    pub fn build(&self, options: &str) -> Result<(), cl_int> {
        let result = match &self.pending_binary {
            Some(lib) => Ok((lib.clone(), String::new())),
            None => compiler::build(&self.source, options, &[]).map(|b| (b.library, b.log)),
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

    /// Records a successful build step.
    fn succeed(
        &self,
        binary_type: cl_program_binary_type,
        log: String,
        library: Option<Arc<KernelLibrary>>,
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
    pub fn fail(&self, e: BuildError) -> cl_int {
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
    pub fn compile(&self, options: &str, headers: &[(String, String)]) -> Result<(), cl_int> {
        self.build.lock().options = options.to_string();
        match compiler::compile(&self.source, options, headers) {
            Ok((ir, log)) => {
                self.succeed(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, log, None, Some(ir));
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// A program made by `clLinkProgram`.
    pub fn from_link(
        context: Arc<Context>,
        options: &str,
        inputs: &[Arc<Program>],
    ) -> (Arc<Program>, Result<(), cl_int>) {
        let p = Program::new(context, String::new(), None);
        p.build.lock().options = options.to_string();
        let modules: Vec<String> = inputs.iter().filter_map(|i| i.build.lock().ir.clone()).collect();
        let result = match compiler::link(&modules, options) {
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

    pub fn kernel_attached(&self) {
        self.kernels.fetch_add(1, Ordering::AcqRel);
    }

    pub fn kernel_detached(&self) {
        self.kernels.fetch_sub(1, Ordering::AcqRel);
    }
}
