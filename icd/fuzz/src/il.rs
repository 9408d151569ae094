//! The SPIR-V target's interpreter: modules the offline tools made (a kernel using
//! builtins, compiled by clang-15 and llvm-spirv-15, and one with specialization
//! constants, assembled by spirv-as), damaged word by word, given ids past their bound
//! or another bound, cut or extended, or raw bytes, given to `clCreateProgramWithIL`, with specialization constants of fuzzed ids
//! and sizes, then built, compiled or linked. The driver's own reading of the module
//! (its checks and the rewrite of 1.4 instructions) and its bridge to the builtins see
//! every input; the translator is an external process whose crashes are its own.

use std::ffi::CString;
use std::path::Path;
use std::process::Command;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use opencl_sys::*;

use crate::{cl, driver, fixture};

#[derive(Arbitrary, Debug)]
pub struct Input {
    /// Which reference module to start from; none: `raw` alone.
    base: Option<u8>,
    /// (word index, xor) pairs.
    edits: Vec<(u32, u32)>,
    cut: Option<u32>,
    tail: Vec<u32>,
    /// A new id bound for the header (word 3): 0, 2, 0xffffffff, ...
    bound: Option<u32>,
    /// (word index, k): the word becomes the id `bound + k`, past the module's bound.
    past_bound: Vec<(u32, u8)>,
    raw: Vec<u8>,
    spec: Vec<(u8, Vec<u8>)>,
    options: Option<u8>,
    action: Action,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Action {
    Build,
    Compile,
    LinkWithObject,
    Kernels,
}

const OPTIONS: &[&str] = &["", "-cl-opt-disable", "-cl-fast-relaxed-math", "-create-library", "-cl-std=CL9.9"];

const KERNEL: &str = r#"
kernel void k(global float2 *a, global uchar2 *b, global float16 *c, local float *l, float s) {
    size_t i = get_global_id(0);
    float2 w;
    a[i] = cos(a[i]) + fract(a[i], &w) + w * s;
    b[i] = abs_diff(b[i], b[i].yx);
    c[i] = fma(c[i], c[i], sin(c[i]));
    event_t e = async_work_group_copy(l, (global const float *)a, 8, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    a[i].x += l[get_local_id(0) % 8];
}
"#;

/// The API tests' module with specialization constants.
const SPEC: &str = include_str!("../../../cts-runner/tests/api/spec_constants.spvasm");

fn run_tool(cmd: &mut Command) {
    let out =
        cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e} (the il target needs clang-15, llvm-spirv-15, spirv-as)"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The reference modules, made once per process.
fn references() -> &'static [Vec<u8>] {
    static REFS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    REFS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ferrocl-fuzz-il-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = |n: &str| dir.join(n);
        std::fs::write(p("k.cl"), KERNEL).unwrap();
        std::fs::write(p("s.spvasm"), SPEC).unwrap();
        run_tool(
            Command::new("clang-15")
                .args(["-x", "cl", "-cl-std=CL1.2", "-target", "spir64-unknown-unknown", "-O2", "-c", "-emit-llvm"])
                .args(["-Xclang", "-finclude-default-header", "-Xclang", "-no-opaque-pointers"])
                .arg(p("k.cl"))
                .arg("-o")
                .arg(p("k.bc")),
        );
        run_tool(Command::new("llvm-spirv-15").arg(p("k.bc")).arg("-o").arg(p("k.spv")));
        run_tool(
            Command::new("spirv-as").args(["--target-env", "opencl2.1"]).arg(p("s.spvasm")).arg("-o").arg(p("s.spv")),
        );
        let read = |f: &Path| std::fs::read(f).unwrap();
        let refs = vec![read(&p("k.spv")), read(&p("s.spv"))];
        let _ = std::fs::remove_dir_all(&dir);
        refs
    })
}

impl Input {
    fn bytes(&self) -> Vec<u8> {
        let refs = references();
        let Some(base) = self.base else { return self.raw.clone() };
        let mut words: Vec<u32> = refs[base as usize % refs.len()]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for &(at, xor) in self.edits.iter().take(8) {
            let n = words.len();
            words[at as usize % n] ^= xor;
        }
        let bound = words.get(3).copied().unwrap_or(0);
        for &(at, k) in self.past_bound.iter().take(4) {
            // Past the header: an operand or result id somewhere in the instructions.
            let n = words.len();
            words[5 + at as usize % (n - 5)] = bound.wrapping_add(u32::from(k));
        }
        if let (Some(b), Some(w)) = (self.bound, words.get_mut(3)) {
            *w = b;
        }
        if let Some(cut) = self.cut {
            words.truncate(cut as usize % (words.len() + 1));
        }
        words.extend(self.tail.iter().take(64));
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    pub fn run(&self) {
        let d = driver();
        let f = fixture();
        let bytes = self.bytes();
        let mut err = 0;
        let p = cl!(clCreateProgramWithIL(f.context, bytes.as_ptr().cast(), bytes.len(), &mut err));
        if p.is_null() {
            assert_ne!(err, CL_SUCCESS);
            return;
        }
        for (id, value) in self.spec.iter().take(4) {
            let ptr = if value.is_empty() { null() } else { value.as_ptr().cast() };
            cl!(clSetProgramSpecializationConstant(p, u32::from(*id % 5), value.len(), ptr));
        }
        let options = CString::new(OPTIONS[self.options.unwrap_or(0) as usize % OPTIONS.len()]).unwrap();
        let o = options.as_ptr();
        match self.action {
            Action::Build => {
                cl!(clBuildProgram(p, 1, &d.device, o, None, null_mut()));
            }
            Action::Compile => {
                cl!(clCompileProgram(p, 1, &d.device, o, 0, null(), null_mut(), None, null_mut()));
            }
            Action::LinkWithObject => {
                if cl!(clCompileProgram(p, 1, &d.device, null(), 0, null(), null_mut(), None, null_mut())) == CL_SUCCESS
                {
                    let objects = [p, f.program];
                    let linked =
                        cl!(clLinkProgram(f.context, 1, &d.device, o, 2, objects.as_ptr(), None, null_mut(), &mut err));
                    if !linked.is_null() {
                        cl!(clReleaseProgram(linked));
                    }
                }
            }
            Action::Kernels => {
                if cl!(clBuildProgram(p, 1, &d.device, null(), None, null_mut())) == CL_SUCCESS {
                    crate::create_and_release_kernels(p);
                }
            }
        }
        let mut size = 0usize;
        cl!(clGetProgramInfo(p, CL_PROGRAM_IL, 0, null_mut(), &mut size));
        assert_eq!(size, bytes.len(), "CL_PROGRAM_IL is the module as given");
        cl!(clReleaseProgram(p));
    }
}
