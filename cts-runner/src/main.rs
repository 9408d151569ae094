//! cts-runner: `platforms` lists what the ICD loader offers; `build FILE` builds an
//! OpenCL C file on the first platform and prints the status, build log and time.
//! `--ferrocl-build` points the loader at this build tree's FerroCL alone.

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
    if args.first().map(String::as_str) == Some("build") {
        std::process::exit(build_file(&args[1..]));
    }
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

/// `build [--options OPTS] FILE`: builds the file for the first platform's device.
fn build_file(args: &[String]) -> i32 {
    let mut options = String::new();
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--options" => options = it.next().cloned().unwrap_or_default(),
            "--ferrocl-build" => {}
            f => file = Some(f.to_string()),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: cts-runner build [--options OPTS] FILE");
        return 2;
    };
    let source = match std::fs::read_to_string(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cts-runner: {file}: {e}");
            return 2;
        }
    };
    let mut platform = null_mut();
    let mut device = null_mut();
    let mut e = 0;
    cl!(clGetPlatformIDs(1, &mut platform, null_mut()));
    cl!(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, null_mut()));
    let context = cl!(clCreateContext(std::ptr::null(), 1, &device, None, null_mut(), &mut e));
    let src = std::ffi::CString::new(source).unwrap_or_default();
    let ptr = src.as_ptr();
    let program = cl!(clCreateProgramWithSource(context, 1, &ptr as *const _ as *mut _, std::ptr::null(), &mut e));
    let opts = std::ffi::CString::new(options).unwrap_or_default();
    let start = std::time::Instant::now();
    let code = cl!(clBuildProgram(program, 1, &device, opts.as_ptr(), None, null_mut()));
    let took = start.elapsed();
    let mut log = vec![0u8; 1 << 16];
    let mut len = 0;
    cl!(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log.len(), log.as_mut_ptr().cast(), &mut len));
    log.truncate(len.saturating_sub(1));
    let name = if code == CL_SUCCESS { "CL_SUCCESS".to_string() } else { code.to_string() };
    println!("build: {name} in {:.2} ms", took.as_secs_f64() * 1e3);
    print!("{}", String::from_utf8_lossy(&log));
    if code == CL_SUCCESS {
        0
    } else {
        1
    }
}
