//! Handles the driver did not hand out, or that belong to another object family, are
//! refused with the family's error code: the driver checks before it dereferences.

use crate::common::*;

/// A forged object that starts like a real one (the dispatch table, and the cl_khr_icd
/// 2.0 loader data a Khronos loader reads next), so the loader routes the call to
/// FerroCL, but that FerroCL never created.
#[repr(C)]
struct Forged {
    header: [*const c_void; 2],
    junk: [usize; 16],
}

fn forge(real: *mut c_void) -> Box<Forged> {
    // SAFETY: every FerroCL handle starts with these two pointers.
    let header = unsafe { *(real as *const [*const c_void; 2]) };
    Box::new(Forged { header, junk: [0xdeadbeef; 16] })
}

#[test]
fn forged_and_foreign_handles_are_refused() {
    let env = Env::new();
    let m = env.buffer(0, 64, null_mut());
    let f = forge(env.context);
    let fake = &*f as *const Forged as *mut c_void;
    let mut v = [0u8; 64];
    let vp = v.as_mut_ptr().cast::<c_void>();
    err!(CL_INVALID_CONTEXT, cl!(clGetContextInfo(fake, CL_CONTEXT_NUM_DEVICES, 64, vp, null_mut())));
    err!(CL_INVALID_CONTEXT, cl!(clRetainContext(fake)));
    err!(CL_INVALID_CONTEXT, cl!(clReleaseContext(fake)));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clGetCommandQueueInfo(fake, CL_QUEUE_CONTEXT, 64, vp, null_mut())));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFinish(fake)));
    err!(CL_INVALID_MEM_OBJECT, cl!(clGetMemObjectInfo(fake, CL_MEM_SIZE, 64, vp, null_mut())));
    err!(CL_INVALID_MEM_OBJECT, cl!(clReleaseMemObject(fake)));
    err!(CL_INVALID_EVENT, cl!(clReleaseEvent(fake)));
    err!(CL_INVALID_DEVICE, cl!(clGetDeviceInfo(fake, CL_DEVICE_NAME, 64, vp, null_mut())));
    err!(CL_INVALID_PROGRAM, cl!(clReleaseProgram(fake)));
    err!(CL_INVALID_KERNEL, cl!(clReleaseKernel(fake)));
    err!(CL_INVALID_SAMPLER, cl!(clReleaseSampler(fake)));
    // Real handles of the wrong family.
    err!(CL_INVALID_CONTEXT, cl!(clRetainContext(m)));
    err!(CL_INVALID_MEM_OBJECT, cl!(clRetainMemObject(env.queue)));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clRetainCommandQueue(env.context)));
    err!(CL_INVALID_EVENT, cl!(clRetainEvent(m)));
    // The forged object was never written to.
    assert!(f.junk.iter().all(|&w| w == 0xdeadbeef));
    ok!(cl!(clReleaseMemObject(m)));
}

/// A released handle must be refused by the driver. A loader reads the handle's
/// dispatch word to route the call (freed memory, which valgrind rightly flags), so this
/// calls the driver's own dispatch table, taken from a live object, directly.
#[test]
fn released_handles_become_invalid() {
    let env = Env::new();
    let m = env.buffer(0, 64, null_mut());
    let live = env.buffer(0, 64, null_mut());
    // SAFETY: a live FerroCL handle starts with its dispatch table pointer.
    let table = unsafe { &**(live as *const *const opencl_sys::cl_icd::cl_icd_dispatch) };
    ok!(cl!(clReleaseMemObject(m)));
    let mut size = 0usize;
    let sp = (&mut size as *mut usize).cast();
    let info = table.clGetMemObjectInfo.unwrap();
    let release = table.clReleaseMemObject.unwrap();
    err!(CL_INVALID_MEM_OBJECT, unsafe { info(m, CL_MEM_SIZE, 8, sp, null_mut()) });
    err!(CL_INVALID_MEM_OBJECT, unsafe { release(m) });
    ok!(unsafe { info(live, CL_MEM_SIZE, 8, sp, null_mut()) });
    assert_eq!(size, 64);
    ok!(cl!(clReleaseMemObject(live)));
}
