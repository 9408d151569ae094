//! Programs in this version: created from source and queried; builds report that no
//! compiler is available (the device says so too), with a build log.

use crate::common::*;

#[test]
fn program_from_source_without_compiler() {
    let env = Env::new();
    let parts = [c"kernel void k(global int *a) ".as_ptr(), c"{ a[0] = 1; }".as_ptr()];
    let (p, e) = with_err(|e| cl!(clCreateProgramWithSource(env.context, 2, parts.as_ptr() as *mut _, null(), e)));
    ok!(e);
    let src = info_string(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_SOURCE, s, v, r)));
    assert_eq!(src, "kernel void k(global int *a) { a[0] = 1; }");
    assert_eq!(device_info::<cl_bool>(env.device, CL_DEVICE_COMPILER_AVAILABLE), CL_FALSE);
    err!(
        CL_COMPILER_NOT_AVAILABLE,
        cl!(clBuildProgram(p, 1, &env.device, c"-cl-std=CL3.0".as_ptr(), None, null_mut()))
    );
    let log = info_string(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_LOG, s, v, r)));
    assert!(!log.is_empty());
    let status: cl_build_status =
        info(|s, v, r| cl!(clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_STATUS, s, v, r)));
    assert_eq!(status, CL_BUILD_ERROR);
    err!(CL_INVALID_PROGRAM_EXECUTABLE, cl!(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, null_mut(), null_mut())));
    let (k, e) = with_err(|e| cl!(clCreateKernel(p, c"k".as_ptr(), e)));
    assert!(k.is_null());
    err!(CL_INVALID_PROGRAM_EXECUTABLE, e);
    err!(CL_INVALID_VALUE, cl!(clBuildProgram(p, 1, null(), null(), None, null_mut())));
    ok!(cl!(clReleaseProgram(p)));
    // Lengths: a non-zero length takes exactly that many bytes.
    let text = "kernel void x(){}garbage";
    let ptr = text.as_ptr().cast::<std::ffi::c_char>();
    let len = 17usize;
    let (p, e) = with_err(|e| cl!(clCreateProgramWithSource(env.context, 1, &ptr as *const _ as *mut _, &len, e)));
    ok!(e);
    assert_eq!(info_string(|s, v, r| cl!(clGetProgramInfo(p, CL_PROGRAM_SOURCE, s, v, r))), "kernel void x(){}");
    ok!(cl!(clReleaseProgram(p)));
    let (_, e) = with_err(|e| cl!(clCreateProgramWithSource(env.context, 0, null_mut(), null(), e)));
    err!(CL_INVALID_VALUE, e);
    let nulls = [null::<std::ffi::c_char>()];
    let (_, e) = with_err(|e| cl!(clCreateProgramWithSource(env.context, 1, nulls.as_ptr() as *mut _, null(), e)));
    err!(CL_INVALID_VALUE, e);
}
