//! `cts-runner platforms`: what the ICD loader offers. The conformance suites and the
//! benchmark arrive with the kernel and async-copy work.

use std::ptr::null_mut;

use cts_runner::cl::*;
use cts_runner::{cl, icd_env};

fn platform_name(p: cl_platform_id) -> String {
    let mut buf = vec![0u8; 256];
    let mut len = 0usize;
    cl!(clGetPlatformInfo(p, CL_PLATFORM_NAME, buf.len(), buf.as_mut_ptr().cast(), &mut len));
    buf.truncate(len.saturating_sub(1));
    String::from_utf8_lossy(&buf).into_owned()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--ferrocl-build") {
        match icd_env::build_tree_driver() {
            Some(d) => {
                if let Err(e) = icd_env::use_only(&d) {
                    eprintln!("cts-runner: {e}");
                    std::process::exit(2);
                }
            }
            None => {
                eprintln!("cts-runner: no FerroCL driver in the build tree: run 'cargo build --release' first");
                std::process::exit(2);
            }
        }
    }
    if let Err(e) = cl::api() {
        eprintln!("cts-runner: {e}");
        std::process::exit(2);
    }
    let mut n = 0;
    let code = cl!(clGetPlatformIDs(0, null_mut(), &mut n));
    if code != CL_SUCCESS || n == 0 {
        eprintln!("cts-runner: no OpenCL platform found (install one, e.g. FerroCL's .deb or pocl-opencl-icd)");
        std::process::exit(1);
    }
    let mut ps = vec![null_mut(); n as usize];
    cl!(clGetPlatformIDs(n, ps.as_mut_ptr(), null_mut()));
    for p in ps {
        println!("{}", platform_name(p));
    }
}
