//! The program-binary target's interpreter: binaries the driver made, damaged by the
//! input (bytes flipped, cut, added) or replaced by raw bytes, loaded with
//! `clCreateProgramWithBinary`, then built, compiled or linked with options that mix
//! real ones with the input's own text.

use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use opencl_sys::*;

use crate::{cl, driver, fixture};

#[derive(Arbitrary, Debug)]
pub struct Input {
    /// Which of the reference binaries to start from; none: `raw` alone.
    base: Option<u8>,
    edits: Vec<(u32, u8)>,
    cut: Option<u32>,
    tail: Vec<u8>,
    raw: Vec<u8>,
    options: Vec<Opt>,
    action: Action,
}

#[derive(Arbitrary, Debug)]
pub enum Opt {
    Known(u8),
    Text(String),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Action {
    Build,
    Compile,
    Link,
    LinkWithObject,
    Kernels,
}

/// Options the driver knows, so inputs reach past the first unknown one.
const KNOWN: &[&str] = &[
    "-cl-std=CL1.2",
    "-cl-std=CL2.0",
    "-cl-std=CL3.0",
    "-cl-std=CL9.9",
    "-cl-fast-relaxed-math",
    "-cl-denorms-are-zero",
    "-cl-mad-enable",
    "-cl-opt-disable",
    "-cl-kernel-arg-info",
    "-create-library",
    "-enable-link-options",
    "-w",
    "-Werror",
    "-g",
    "-D",
    "-DX=1",
    "-I",
    "-I/tmp",
    "-x",
    "spir",
    "\"",
    "'",
    "\\",
];

/// Binaries of each kind the driver makes: an executable, a compiled object and a
/// library, from the fixture's source.
fn references() -> &'static [Vec<u8>] {
    static REFS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    REFS.get_or_init(|| {
        let f = fixture();
        let d = driver();
        let mut source = crate::SOURCE.as_ptr() as *const std::ffi::c_char;
        let len = crate::SOURCE.len();
        let mut err = 0;
        let object = cl!(clCreateProgramWithSource(f.context, 1, &mut source, &len, &mut err));
        assert_eq!(
            cl!(clCompileProgram(object, 0, null(), null(), 0, null(), null_mut(), None, null_mut())),
            CL_SUCCESS
        );
        let opts = c"-create-library";
        let library =
            cl!(clLinkProgram(f.context, 1, &d.device, opts.as_ptr(), 1, &object, None, null_mut(), &mut err));
        assert_eq!(err, CL_SUCCESS);
        let binaries = [f.program, object, library].map(binary_of).to_vec();
        cl!(clReleaseProgram(library));
        cl!(clReleaseProgram(object));
        binaries
    })
}

fn binary_of(program: cl_program) -> Vec<u8> {
    let mut size = 0usize;
    cl!(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, 8, &mut size as *mut usize as *mut c_void, null_mut()));
    let mut bytes = vec![0u8; size];
    let ptrs = [bytes.as_mut_ptr()];
    let err = cl!(clGetProgramInfo(program, CL_PROGRAM_BINARIES, 8, ptrs.as_ptr() as *mut c_void, null_mut()));
    assert_eq!(err, CL_SUCCESS);
    bytes
}

impl Input {
    fn bytes(&self) -> Vec<u8> {
        let refs = references();
        let Some(base) = self.base else { return self.raw.clone() };
        let mut bytes = refs[base as usize % refs.len()].clone();
        for &(at, xor) in self.edits.iter().take(8) {
            if !bytes.is_empty() {
                let i = at as usize % bytes.len();
                bytes[i] ^= xor;
            }
        }
        if let Some(cut) = self.cut {
            bytes.truncate(cut as usize % (bytes.len() + 1));
        }
        bytes.extend_from_slice(&self.tail);
        bytes
    }

    fn options(&self) -> CString {
        let words = self.options.iter().take(8).map(|o| match o {
            Opt::Known(i) => KNOWN[*i as usize % KNOWN.len()].to_string(),
            Opt::Text(t) => t.replace('\0', ""),
        });
        CString::new(words.collect::<Vec<_>>().join(" ")).unwrap()
    }

    pub fn run(&self) {
        let d = driver();
        let f = fixture();
        let bytes = self.bytes();
        let options = self.options();
        let (mut ptr, len) = (bytes.as_ptr(), bytes.len());
        let (mut status, mut err) = (0, 0);
        let p = cl!(clCreateProgramWithBinary(f.context, 1, &d.device, &len, &mut ptr, &mut status, &mut err));
        if p.is_null() {
            assert_ne!(err, CL_SUCCESS);
            return;
        }
        let o = options.as_ptr();
        match self.action {
            Action::Build => {
                cl!(clBuildProgram(p, 1, &d.device, o, None, null_mut()));
            }
            Action::Compile => {
                cl!(clCompileProgram(p, 1, &d.device, o, 0, null(), null_mut(), None, null_mut()));
            }
            Action::Link | Action::LinkWithObject => {
                let objects = [p, f.program];
                let n = if matches!(self.action, Action::Link) { 1 } else { 2 };
                let linked =
                    cl!(clLinkProgram(f.context, 1, &d.device, o, n, objects.as_ptr(), None, null_mut(), &mut err));
                if !linked.is_null() {
                    cl!(clReleaseProgram(linked));
                }
            }
            Action::Kernels => crate::create_and_release_kernels(p),
        }
        // Whatever the program became, its binary must still be readable.
        let mut size = 0usize;
        if cl!(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, 8, &mut size as *mut usize as *mut c_void, null_mut()))
            == CL_SUCCESS
        {
            let mut out = vec![0u8; size];
            let ptrs = [out.as_mut_ptr()];
            cl!(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 8, ptrs.as_ptr() as *mut c_void, null_mut()));
        }
        cl!(clReleaseProgram(p));
    }
}
