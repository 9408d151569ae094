//! Shared virtual memory through the loader: allocation and its errors, every SVM
//! command against host references, SVM pointers as kernel arguments (into the middle of
//! allocations and into plain host memory), a kernel walking a linked list the host
//! built, and host and kernel atomics on the same memory while the kernel runs.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::common::*;

fn alloc(env: &Env, flags: cl_svm_mem_flags, size: usize) -> *mut u8 {
    let p = cl!(clSVMAlloc(env.context, flags, size, 0));
    assert!(!p.is_null(), "clSVMAlloc({flags:#x}, {size})");
    p.cast()
}

#[test]
fn allocations_and_their_errors() {
    let env = Env::new();
    for flags in [0, CL_MEM_READ_ONLY, CL_MEM_SVM_FINE_GRAIN_BUFFER, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS]
    {
        let p = alloc(&env, flags, 1000);
        assert_eq!(p as usize % 128, 0, "aligned to the largest type");
        // SAFETY: 1000 bytes the driver allocated, zeroed.
        let bytes = unsafe { std::slice::from_raw_parts_mut(p, 1000) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes.fill(7);
        cl!(clSVMFree(env.context, p.cast()));
    }
    let aligned = cl!(clSVMAlloc(env.context, 0, 64, 4096));
    assert_eq!(aligned as usize % 4096, 0);
    cl!(clSVMFree(env.context, aligned));
    let max: cl_ulong = device_info(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    for (flags, size, align) in [
        (0, 0usize, 0u32),
        (0, max as usize + 1, 0),
        (0, 64, 3),
        (0, 64, 1 << 30),
        (CL_MEM_SVM_ATOMICS, 64, 0),
        (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, 0),
        (CL_MEM_USE_HOST_PTR, 64, 0),
    ] {
        assert!(cl!(clSVMAlloc(env.context, flags, size, align)).is_null(), "{flags:#x} {size} {align}");
    }
    assert!(cl!(clSVMAlloc(null_mut(), 0, 64, 0)).is_null());
    // Freeing NULL, or a pointer the driver never returned, does nothing.
    cl!(clSVMFree(env.context, null_mut()));
    let mut own = [0u8; 16];
    cl!(clSVMFree(env.context, own.as_mut_ptr().cast()));
    // A buffer on SVM memory says so.
    let p = alloc(&env, 0, 256);
    let m = env.buffer(CL_MEM_USE_HOST_PTR, 128, p.wrapping_add(64).cast());
    assert_eq!(mem_info::<cl_bool>(m, CL_MEM_USES_SVM_POINTER), CL_TRUE);
    ok!(cl!(clReleaseMemObject(m)));
    let (over, e) =
        with_err(|e| cl!(clCreateBuffer(env.context, CL_MEM_USE_HOST_PTR, 256, p.wrapping_add(64).cast(), e)));
    assert!(over.is_null());
    err!(CL_INVALID_BUFFER_SIZE, e);
    cl!(clSVMFree(env.context, p.cast()));
}

static FREED: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn free_callback(_q: cl_command_queue, n: cl_uint, ptrs: *mut *mut c_void, user: *mut c_void) {
    let context = user as cl_context;
    for i in 0..n as usize {
        cl!(clSVMFree(context, *ptrs.add(i)));
    }
    FREED.fetch_add(n, Ordering::SeqCst);
}

#[test]
fn commands_move_and_order_svm_memory() {
    let env = Env::new();
    let n = 4096;
    let (a, b) = (alloc(&env, 0, n), alloc(&env, CL_MEM_SVM_FINE_GRAIN_BUFFER, n));
    let data = pattern(n, 3);
    // Host memory to SVM, SVM to SVM, with a map around the host's reads.
    ok!(cl!(clEnqueueSVMMemcpy(env.queue, CL_TRUE, a.cast(), data.as_ptr().cast(), n, 0, null(), null_mut())));
    ok!(cl!(clEnqueueSVMMemcpy(env.queue, CL_FALSE, b.cast(), a.cast(), n - 10, 0, null(), null_mut())));
    ok!(cl!(clEnqueueSVMMap(env.queue, CL_TRUE, CL_MAP_READ, b.cast(), n, 0, null(), null_mut())));
    // SAFETY: n bytes each, mapped for reading.
    let (sa, sb) = unsafe { (std::slice::from_raw_parts(a, n), std::slice::from_raw_parts(b, n)) };
    assert_eq!(sa, &data[..]);
    assert_eq!(sb[..n - 10], data[..n - 10]);
    assert!(sb[n - 10..].iter().all(|&x| x == 0));
    ok!(cl!(clEnqueueSVMUnmap(env.queue, b.cast(), 0, null(), null_mut())));
    // Fill with an 8-byte pattern from an inner, aligned address.
    let pat = 0x0102_0304_0506_0708u64.to_ne_bytes();
    ok!(cl!(clEnqueueSVMMemFill(
        env.queue,
        a.wrapping_add(64).cast(),
        pat.as_ptr().cast(),
        8,
        128,
        0,
        null(),
        null_mut()
    )));
    ok!(cl!(clFinish(env.queue)));
    let mut want = data.clone();
    want[64..192].chunks_mut(8).for_each(|c| c.copy_from_slice(&pat));
    // SAFETY: as above; the queue is idle.
    assert_eq!(unsafe { std::slice::from_raw_parts(a, n) }, &want[..]);
    // Errors.
    let x: *mut c_void = a.cast();
    err!(CL_INVALID_VALUE, cl!(clEnqueueSVMMemcpy(env.queue, CL_TRUE, null_mut(), x, 4, 0, null(), null_mut())));
    err!(
        CL_MEM_COPY_OVERLAP,
        cl!(clEnqueueSVMMemcpy(env.queue, CL_TRUE, a.wrapping_add(4).cast(), x, 8, 0, null(), null_mut()))
    );
    for (ptr, size, psize) in
        [(x, 128, 3usize), (x, 100, 8), (a.wrapping_add(4).cast(), 64, 8), (null_mut(), 64, 8), (x, 64, 256)]
    {
        err!(
            CL_INVALID_VALUE,
            cl!(clEnqueueSVMMemFill(env.queue, ptr, pat.as_ptr().cast(), psize, size, 0, null(), null_mut()))
        );
    }
    err!(CL_INVALID_VALUE, cl!(clEnqueueSVMMap(env.queue, CL_TRUE, CL_MAP_READ, x, 0, 0, null(), null_mut())));
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueSVMMap(
            env.queue,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION,
            x,
            8,
            0,
            null(),
            null_mut()
        ))
    );
    err!(CL_INVALID_VALUE, cl!(clEnqueueSVMUnmap(env.queue, null_mut(), 0, null(), null_mut())));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clEnqueueSVMUnmap(null_mut(), x, 0, null(), null_mut())));
    // Migration: whole allocations, ranges inside them, and ranges that leave them.
    let mut ptrs: [*const c_void; 2] = [a.cast(), b.wrapping_add(16).cast()];
    let sizes = [0usize, 64];
    ok!(cl!(clEnqueueSVMMigrateMem(env.queue, 2, ptrs.as_mut_ptr(), sizes.as_ptr(), 0, 0, null(), null_mut())));
    let too_far = [0usize, n];
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueSVMMigrateMem(env.queue, 2, ptrs.as_mut_ptr(), too_far.as_ptr(), 0, 0, null(), null_mut()))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueSVMMigrateMem(env.queue, 0, ptrs.as_mut_ptr(), null(), 0, 0, null(), null_mut()))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueSVMMigrateMem(env.queue, 2, ptrs.as_mut_ptr(), null(), 1 << 9, 0, null(), null_mut()))
    );
    // Freeing: through the application's callback, then by the driver.
    let mut list: [*mut c_void; 1] = [a.cast()];
    ok!(cl!(clEnqueueSVMFree(
        env.queue,
        1,
        list.as_mut_ptr(),
        Some(free_callback),
        env.context.cast(),
        0,
        null(),
        null_mut()
    )));
    list[0] = b.cast();
    let mut ev = null_mut();
    ok!(cl!(clEnqueueSVMFree(env.queue, 1, list.as_mut_ptr(), None, null_mut(), 0, null(), &mut ev)));
    ok!(cl!(clWaitForEvents(1, &ev)));
    assert_eq!(event_info::<cl_command_type>(ev, CL_EVENT_COMMAND_TYPE), CL_COMMAND_SVM_FREE);
    assert_eq!(FREED.load(Ordering::SeqCst), 1);
    ok!(cl!(clReleaseEvent(ev)));
    err!(CL_INVALID_VALUE, cl!(clEnqueueSVMFree(env.queue, 1, null_mut(), None, null_mut(), 0, null(), null_mut())));
}

const KERNELS: &str = r#"
typedef struct node { global struct node *next; int value; } node;
kernel void walk(global node *head, global int *out) {
    int sum = 0, count = 0;
    for (global node *n = head; n; n = n->next) { sum += n->value; count++; }
    out[0] = sum;
    out[1] = count;
}
kernel void scale(global float *x, float a) { x[get_global_id(0)] *= a; }
// Waits for the host's flag (with a bound, so a broken driver fails instead of hanging),
// then adds to the shared counter.
kernel void handshake(global atomic_int *flag, global atomic_int *counter) {
    if (get_global_id(0) == 0) {
        int spins = 0;
        while (atomic_load_explicit(flag, memory_order_acquire, memory_scope_all_svm_devices) == 0 && spins < 200000000)
            spins++;
        atomic_store_explicit(flag, 2, memory_order_release, memory_scope_all_svm_devices);
    }
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed, memory_scope_all_svm_devices);
}
"#;

#[repr(C)]
struct Node {
    next: *mut Node,
    value: i32,
}

#[test]
fn kernels_use_svm_and_system_pointers() {
    let env = Env::new();
    let p = build(&env, KERNELS, "-cl-std=CL3.0");
    // A list the host built with Box (fine-grain system SVM: any host memory).
    let mut head: *mut Node = null_mut();
    for v in 1..=100 {
        head = Box::into_raw(Box::new(Node { next: head, value: v }));
    }
    let out = alloc(&env, CL_MEM_SVM_FINE_GRAIN_BUFFER, 8);
    let k = kernel(p, "walk");
    ok!(cl!(clSetKernelArgSVMPointer(k, 0, head.cast())));
    ok!(cl!(clSetKernelArgSVMPointer(k, 1, out.cast())));
    let fine: cl_bool = CL_TRUE;
    ok!(cl!(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, 4, (&fine as *const cl_bool).cast())));
    let ptrs = [head as *const c_void];
    ok!(cl!(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, ptrs.as_ptr().cast())));
    run(&env, k, &[1], None);
    // SAFETY: 8 bytes of fine-grain SVM, the kernel done.
    assert_eq!(unsafe { *out.cast::<[i32; 2]>() }, [5050, 100]);
    while !head.is_null() {
        // SAFETY: nodes made by Box::into_raw above.
        head = unsafe { Box::from_raw(head) }.next;
    }
    // Pointers into the middle of an allocation.
    let n = 256;
    let x = alloc(&env, 0, n * 4).cast::<f32>();
    // SAFETY: n floats.
    let xs = unsafe { std::slice::from_raw_parts_mut(x, n) };
    xs.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    let k2 = kernel(p, "scale");
    ok!(cl!(clSetKernelArgSVMPointer(k2, 0, x.wrapping_add(100).cast())));
    set_arg(k2, 1, &2.0f32);
    run(&env, k2, &[50], None);
    assert!(xs.iter().enumerate().all(|(i, &v)| v == if (100..150).contains(&i) { 2.0 * i as f32 } else { i as f32 }));
    // Errors: an index past the arguments, a value argument, a bad exec-info.
    err!(CL_INVALID_ARG_INDEX, cl!(clSetKernelArgSVMPointer(k2, 5, x.cast())));
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArgSVMPointer(k2, 1, x.cast())));
    err!(CL_INVALID_VALUE, cl!(clSetKernelExecInfo(k2, CL_KERNEL_EXEC_INFO_SVM_PTRS, 3, ptrs.as_ptr().cast())));
    err!(CL_INVALID_VALUE, cl!(clSetKernelExecInfo(k2, 0x1234, 8, ptrs.as_ptr().cast())));
    err!(CL_INVALID_VALUE, cl!(clSetKernelExecInfo(k2, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, 4, null())));
    err!(CL_INVALID_VALUE, cl!(clSetKernelExecInfo(k2, CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, null())));
    ok!(cl!(clSetKernelExecInfo(k2, CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, null())));
    // Host and kernel atomics on fine-grain memory while the kernel runs: the kernel waits
    // for the host's store, the host for the kernel's.
    let shared = alloc(&env, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, 8).cast::<AtomicU32>();
    // SAFETY: two atomics in SVM memory that outlives the kernel.
    let (flag, counter) = unsafe { (&*shared, &*shared.add(1)) };
    let k3 = kernel(p, "handshake");
    ok!(cl!(clSetKernelArgSVMPointer(k3, 0, shared.cast())));
    ok!(cl!(clSetKernelArgSVMPointer(k3, 1, shared.wrapping_add(1).cast())));
    let global = [64usize];
    let mut ev = null_mut();
    ok!(cl!(clEnqueueNDRangeKernel(env.queue, k3, 1, null(), global.as_ptr(), null(), 0, null(), &mut ev)));
    ok!(cl!(clFlush(env.queue)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    flag.store(1, Ordering::Release);
    let start = std::time::Instant::now();
    while flag.load(Ordering::Acquire) != 2 && start.elapsed().as_secs() < 30 {
        std::hint::spin_loop();
    }
    assert_eq!(flag.load(Ordering::Acquire), 2, "the kernel saw the host's store and answered");
    ok!(cl!(clWaitForEvents(1, &ev)));
    assert_eq!(counter.load(Ordering::Acquire), 64);
    ok!(cl!(clReleaseEvent(ev)));
    for k in [k, k2, k3] {
        ok!(cl!(clReleaseKernel(k)));
    }
    for ptr in [out, x.cast(), shared.cast()] {
        cl!(clSVMFree(env.context, ptr.cast()));
    }
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn svm_commands_on_wild_pointers_fail_alone() {
    // Fine-grain system SVM takes any address, so a copy or fill may be given one that
    // is not mapped: the command fails, the process goes on.
    let env = Env::new();
    let p = alloc(&env, 0, 64);
    let wild = 0x10 as *mut c_void;
    let pattern = [1u8; 4];
    let (mut copy, mut fill) = (null_mut(), null_mut());
    ok!(cl!(clEnqueueSVMMemcpy(env.queue, CL_FALSE, p.cast(), wild, 64, 0, null(), &mut copy)));
    ok!(cl!(clEnqueueSVMMemFill(env.queue, wild, pattern.as_ptr().cast(), 4, 64, 0, null(), &mut fill)));
    for ev in [copy, fill] {
        err!(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, cl!(clWaitForEvents(1, &ev)));
        assert!(event_info::<cl_int>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS) < 0);
        ok!(cl!(clReleaseEvent(ev)));
    }
    // The queue goes on.
    ok!(cl!(clEnqueueSVMMemFill(env.queue, p.cast(), pattern.as_ptr().cast(), 4, 64, 0, null(), null_mut())));
    ok!(cl!(clFinish(env.queue)));
    // SAFETY: 64 bytes of SVM, the fill done.
    assert!(unsafe { std::slice::from_raw_parts(p, 64) }.iter().all(|&b| b == 1));
    cl!(clSVMFree(env.context, p.cast()));
}
