//! Unified shared memory (`cl_intel_unified_shared_memory`) through the loader's
//! extension-function lookup: allocations of each kind and their errors, the queries
//! for pointers anywhere in (and outside) allocations, frees, every USM command against
//! host references and in queue order, kernels reading and writing USM of each kind
//! (through pointers into the middle of allocations, and indirectly through a struct),
//! and commands given wild pointers failing alone.

use crate::common::*;

/// The extension's entry points, looked up as a SYCL runtime does.
struct Usm {
    host: unsafe extern "C" fn(cl_context, *const cl_mem_properties_intel, usize, cl_uint, *mut cl_int) -> *mut c_void,
    device: unsafe extern "C" fn(
        cl_context,
        cl_device_id,
        *const cl_mem_properties_intel,
        usize,
        cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    shared: unsafe extern "C" fn(
        cl_context,
        cl_device_id,
        *const cl_mem_properties_intel,
        usize,
        cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    free: unsafe extern "C" fn(cl_context, *mut c_void) -> cl_int,
    blocking_free: unsafe extern "C" fn(cl_context, *mut c_void) -> cl_int,
    info: unsafe extern "C" fn(cl_context, *const c_void, cl_mem_info_intel, usize, *mut c_void, *mut usize) -> cl_int,
    set_arg: unsafe extern "C" fn(cl_kernel, cl_uint, *const c_void) -> cl_int,
    fill: unsafe extern "C" fn(
        cl_command_queue,
        *mut c_void,
        *const c_void,
        usize,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    memcpy: unsafe extern "C" fn(
        cl_command_queue,
        cl_bool,
        *mut c_void,
        *const c_void,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    migrate: unsafe extern "C" fn(
        cl_command_queue,
        *const c_void,
        usize,
        cl_mem_migration_flags,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    advise: unsafe extern "C" fn(
        cl_command_queue,
        *const c_void,
        usize,
        cl_mem_advice_intel,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
}

impl Usm {
    fn get() -> Usm {
        let (platform, _) = platform_device();
        /// The entry point `name` as the function pointer type `F`.
        ///
        /// # Safety
        /// `F` is a function pointer type with the entry point's C signature.
        unsafe fn find<F: Copy>(platform: cl_platform_id, name: &std::ffi::CStr) -> F {
            let f = cl!(clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr()));
            assert!(!f.is_null(), "{name:?} is not found");
            assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
            // SAFETY: a function pointer of the size of a pointer, as the caller says.
            unsafe { std::mem::transmute_copy(&f) }
        }
        // SAFETY: each address is the driver's entry point of that name, whose C
        // signature the field's type spells.
        unsafe {
            Usm {
                host: find(platform, c"clHostMemAllocINTEL"),
                device: find(platform, c"clDeviceMemAllocINTEL"),
                shared: find(platform, c"clSharedMemAllocINTEL"),
                free: find(platform, c"clMemFreeINTEL"),
                blocking_free: find(platform, c"clMemBlockingFreeINTEL"),
                info: find(platform, c"clGetMemAllocInfoINTEL"),
                set_arg: find(platform, c"clSetKernelArgMemPointerINTEL"),
                fill: find(platform, c"clEnqueueMemFillINTEL"),
                memcpy: find(platform, c"clEnqueueMemcpyINTEL"),
                migrate: find(platform, c"clEnqueueMigrateMemINTEL"),
                advise: find(platform, c"clEnqueueMemAdviseINTEL"),
            }
        }
    }

    /// An allocation of `kind` (0 host, 1 device, 2 shared with the device, 3 shared
    /// with none), with `props` and `align`; the pointer and the error code.
    fn alloc_with(
        &self,
        env: &Env,
        kind: usize,
        props: &[cl_mem_properties_intel],
        size: usize,
        align: cl_uint,
    ) -> (*mut u8, cl_int) {
        let props = if props.is_empty() { null() } else { props.as_ptr() };
        let mut e = 0;
        // SAFETY: the driver's entry points, with a zero-terminated property list.
        let p = unsafe {
            match kind {
                0 => (self.host)(env.context, props, size, align, &mut e),
                1 => (self.device)(env.context, env.device, props, size, align, &mut e),
                2 => (self.shared)(env.context, env.device, props, size, align, &mut e),
                _ => (self.shared)(env.context, null_mut(), props, size, align, &mut e),
            }
        };
        assert_eq!(p.is_null(), e != CL_SUCCESS, "a null pointer is a failure, and only then");
        (p.cast(), e)
    }

    fn alloc(&self, env: &Env, kind: usize, size: usize) -> *mut u8 {
        let (p, e) = self.alloc_with(env, kind, &[], size, 0);
        ok!(e);
        p
    }

    fn query<T: Copy + Default>(&self, env: &Env, ptr: *const u8, param: cl_mem_info_intel) -> T {
        let mut v = T::default();
        let mut ret = 0;
        // SAFETY: `v` is a `T`, as large as the query's result type.
        ok!(unsafe {
            (self.info)(env.context, ptr.cast(), param, size_of::<T>(), (&mut v as *mut T).cast(), &mut ret)
        });
        assert_eq!(ret, size_of::<T>());
        v
    }

    fn free(&self, env: &Env, p: *mut u8) -> cl_int {
        // SAFETY: the driver's entry point; any pointer may be given.
        unsafe { (self.free)(env.context, p.cast()) }
    }
}

const KINDS: [cl_unified_shared_memory_type_intel; 4] =
    [CL_MEM_TYPE_HOST_INTEL, CL_MEM_TYPE_DEVICE_INTEL, CL_MEM_TYPE_SHARED_INTEL, CL_MEM_TYPE_SHARED_INTEL];

#[test]
fn allocations_their_queries_frees_and_errors() {
    let env = Env::new();
    let usm = Usm::get();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_intel_unified_shared_memory"), "{extensions}");
    for q in [
        CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL,
    ] {
        let caps: cl_bitfield = device_info(env.device, q);
        assert_eq!(caps & 0xf, 0xf, "every kind is host memory: access, atomics, concurrently ({q:#x})");
    }
    let wc = [CL_MEM_ALLOC_FLAGS_INTEL, CL_MEM_ALLOC_WRITE_COMBINED_INTEL, 0];
    for (kind, &code) in KINDS.iter().enumerate() {
        let (p, e) = usm.alloc_with(&env, kind, &wc, 1000, 0);
        ok!(e);
        assert_eq!(p as usize % 128, 0, "aligned to the largest type");
        // SAFETY: 1000 bytes of host-accessible memory (every kind is, on this device).
        let bytes = unsafe { std::slice::from_raw_parts_mut(p, 1000) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes.fill(9);
        let device = if kind == 1 || kind == 2 { env.device } else { null_mut() };
        for at in [p, p.wrapping_add(1), p.wrapping_add(999)] {
            assert_eq!(usm.query::<cl_uint>(&env, at, CL_MEM_ALLOC_TYPE_INTEL), code);
            assert_eq!(usm.query::<usize>(&env, at, CL_MEM_ALLOC_BASE_PTR_INTEL), p as usize);
            assert_eq!(usm.query::<usize>(&env, at, CL_MEM_ALLOC_SIZE_INTEL), 1000);
            assert_eq!(usm.query::<cl_device_id>(&env, at, CL_MEM_ALLOC_DEVICE_INTEL), device);
            let flags = usm.query::<cl_mem_alloc_flags_intel>(&env, at, CL_MEM_ALLOC_FLAGS_INTEL as cl_mem_info_intel);
            assert_eq!(flags, CL_MEM_ALLOC_WRITE_COMBINED_INTEL);
        }
        // Just past the end, and host memory the driver never gave: unknown.
        let own = [0u8; 4];
        for at in [p.wrapping_add(1000), own.as_ptr(), null()] {
            assert_eq!(usm.query::<cl_uint>(&env, at, CL_MEM_ALLOC_TYPE_INTEL), CL_MEM_TYPE_UNKNOWN_INTEL);
            assert_eq!(usm.query::<usize>(&env, at, CL_MEM_ALLOC_BASE_PTR_INTEL), 0);
            assert_eq!(usm.query::<usize>(&env, at, CL_MEM_ALLOC_SIZE_INTEL), 0);
            assert_eq!(usm.query::<cl_device_id>(&env, at, CL_MEM_ALLOC_DEVICE_INTEL), null_mut());
        }
        // Only the start frees it, once.
        err!(CL_INVALID_VALUE, usm.free(&env, p.wrapping_add(8)));
        ok!(usm.free(&env, p));
        err!(CL_INVALID_VALUE, usm.free(&env, p));
        assert_eq!(usm.query::<cl_uint>(&env, p, CL_MEM_ALLOC_TYPE_INTEL), CL_MEM_TYPE_UNKNOWN_INTEL);
    }
    ok!(usm.free(&env, null_mut()));
    let mut own = [0u8; 16];
    err!(CL_INVALID_VALUE, usm.free(&env, own.as_mut_ptr()));
    // SAFETY: the driver's entry points with invalid handles, which they must reject.
    unsafe {
        err!(CL_INVALID_CONTEXT, (usm.free)(null_mut(), null_mut()));
        err!(CL_INVALID_CONTEXT, (usm.blocking_free)(env.queue.cast(), null_mut()));
        let mut e = 0;
        assert!((usm.host)(null_mut(), null(), 64, 0, &mut e).is_null());
        err!(CL_INVALID_CONTEXT, e);
        assert!((usm.device)(env.context, null_mut(), null(), 64, 0, &mut e).is_null());
        err!(CL_INVALID_DEVICE, e);
        assert!((usm.shared)(env.context, env.context.cast(), null(), 64, 0, &mut e).is_null());
        err!(CL_INVALID_DEVICE, e);
        let mut v = 0u32;
        let mut info = |c, param, size| (usm.info)(c, null(), param, size, (&mut v as *mut u32).cast(), null_mut());
        err!(CL_INVALID_CONTEXT, info(null_mut(), CL_MEM_ALLOC_TYPE_INTEL, 4));
        err!(CL_INVALID_VALUE, info(env.context, 0x1234, 4));
        err!(CL_INVALID_VALUE, info(env.context, CL_MEM_ALLOC_TYPE_INTEL, 2));
    }
    // Alignments, sizes and properties.
    let max: cl_ulong = device_info(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    let flags = |f| [CL_MEM_ALLOC_FLAGS_INTEL, f, 0];
    let (dev, host) = (CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL, CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL);
    for kind in 0..4 {
        for align in [1, 8, 64, 128] {
            let (p, e) = usm.alloc_with(&env, kind, &[], 100, align);
            ok!(e);
            assert_eq!(p as usize % align as usize, 0);
            ok!(usm.free(&env, p));
        }
        for (props, size, align, code) in [
            (&[][..], 100, 3, CL_INVALID_VALUE),
            (&[], 100, 256, CL_INVALID_VALUE),
            (&[], 0, 0, CL_INVALID_BUFFER_SIZE),
            (&[], max as usize + 1, 0, CL_INVALID_BUFFER_SIZE),
            (&[0x1234, 0, 0], 100, 0, CL_INVALID_PROPERTY),
            (&flags(1 << 10), 100, 0, CL_INVALID_PROPERTY),
            (&flags(dev | host), 100, 0, CL_INVALID_PROPERTY),
            (&[CL_MEM_ALLOC_FLAGS_INTEL, 0, CL_MEM_ALLOC_FLAGS_INTEL, 0, 0], 100, 0, CL_INVALID_PROPERTY),
        ] {
            let (p, e) = usm.alloc_with(&env, kind, props, size, align);
            assert!(p.is_null());
            assert_eq!(e, code, "kind {kind}, {props:?}, size {size}, alignment {align}");
        }
        // Placement hints are for shared allocations alone.
        for hint in [dev, host] {
            let (p, e) = usm.alloc_with(&env, kind, &flags(hint), 100, 0);
            if kind >= 2 {
                ok!(e);
                let f = usm.query::<cl_mem_alloc_flags_intel>(&env, p, CL_MEM_ALLOC_FLAGS_INTEL as cl_mem_info_intel);
                assert_eq!(f, hint);
                ok!(usm.free(&env, p));
            } else {
                err!(CL_INVALID_PROPERTY, e);
            }
        }
    }
    // Allocations the application never freed go with the context.
    for kind in 0..4 {
        usm.alloc(&env, kind, 4096);
    }
}

const KERNELS: &str = r#"
typedef struct { global int *data; int n; } view;

kernel void add(global int *a, global const int *b, int k) {
    size_t i = get_global_id(0);
    a[i] += b[i] * k;
}

/* Reaches memory through a pointer stored in USM, not passed as an argument. */
kernel void indirect(global const view *v, global int *sum) {
    int s = 0;
    for (int i = 0; i < v->n; i++) { s += v->data[i]; v->data[i] = -v->data[i]; }
    *sum = s;
}
"#;

/// The kernels' `view`.
#[repr(C)]
struct View {
    data: *mut i32,
    n: i32,
}

#[test]
fn commands_and_kernels_move_usm_of_every_kind() {
    let env = Env::new();
    let usm = Usm::get();
    let n = 4096;
    let ptrs: Vec<*mut u8> = (0..4).map(|kind| usm.alloc(&env, kind, n)).collect();
    // Fills of every pattern size, into the middle of each allocation.
    for (k, &p) in ptrs.iter().enumerate() {
        for size in [1usize, 2, 4, 8, 16, 32, 64, 128] {
            let pat = pattern(size, (k * 16 + size) as u8);
            let (at, len) = (p.wrapping_add(256), 1024);
            // SAFETY: the driver's entry point; `at..at+len` lies inside the allocation.
            ok!(unsafe { (usm.fill)(env.queue, at.cast(), pat.as_ptr().cast(), size, len, 0, null(), null_mut()) });
            ok!(cl!(clFinish(env.queue)));
            // SAFETY: n bytes of host-accessible USM, no command running.
            let all = unsafe { std::slice::from_raw_parts(p, n) };
            assert!(all[256..1280].chunks(size).all(|c| c == pat.as_slice()), "kind {k}, pattern {size}");
        }
        // SAFETY: as above.
        unsafe {
            let f = |dst: *mut u8, pat: *const c_void, size, len| {
                (usm.fill)(env.queue, dst.cast(), pat, size, len, 0, null(), null_mut())
            };
            let pat = [0u8; 256];
            err!(CL_INVALID_VALUE, f(null_mut(), pat.as_ptr().cast(), 4, 16));
            err!(CL_INVALID_VALUE, f(p.wrapping_add(2), pat.as_ptr().cast(), 4, 16));
            err!(CL_INVALID_VALUE, f(p, null(), 4, 16));
            err!(CL_INVALID_VALUE, f(p, pat.as_ptr().cast(), 3, 12));
            err!(CL_INVALID_VALUE, f(p, pat.as_ptr().cast(), 256, 256));
            err!(CL_INVALID_VALUE, f(p, pat.as_ptr().cast(), 4, 10));
            err!(
                CL_INVALID_COMMAND_QUEUE,
                (usm.fill)(null_mut(), p.cast(), pat.as_ptr().cast(), 4, 4, 0, null(), null_mut())
            );
        }
    }
    // Copies between every pair of kinds and plain host memory, blocking or by event.
    let mut host = pattern(n, 77);
    for (i, &from) in ptrs.iter().enumerate() {
        for (j, &to) in ptrs.iter().enumerate().filter(|&(j, _)| j != i) {
            let src = pattern(n, (i * 4 + j) as u8);
            let mut ev = null_mut();
            // SAFETY: n bytes at each pointer; the host buffers outlive the commands.
            unsafe {
                ok!((usm.memcpy)(env.queue, CL_TRUE, from.cast(), src.as_ptr().cast(), n, 0, null(), null_mut()));
                ok!((usm.memcpy)(
                    env.queue,
                    CL_FALSE,
                    to.wrapping_add(100).cast(),
                    from.cast(),
                    n - 100,
                    0,
                    null(),
                    &mut ev
                ));
                ok!((usm.memcpy)(env.queue, CL_TRUE, host.as_mut_ptr().cast(), to.cast(), n, 1, &ev, null_mut()));
            }
            assert_eq!(event_info::<cl_command_type>(ev, CL_EVENT_COMMAND_TYPE), CL_COMMAND_MEMCPY_INTEL);
            ok!(cl!(clReleaseEvent(ev)));
            assert_eq!(&host[100..], &src[..n - 100], "kind {i} to kind {j}");
        }
    }
    // SAFETY: the driver's entry points, with pointers it must reject.
    unsafe {
        let p = ptrs[0].cast::<c_void>();
        err!(CL_INVALID_VALUE, (usm.memcpy)(env.queue, CL_TRUE, null_mut(), p, 8, 0, null(), null_mut()));
        err!(CL_INVALID_VALUE, (usm.memcpy)(env.queue, CL_TRUE, p, null(), 8, 0, null(), null_mut()));
        err!(CL_MEM_COPY_OVERLAP, (usm.memcpy)(env.queue, CL_TRUE, p.byte_add(4), p, 8, 0, null(), null_mut()));
        err!(CL_INVALID_EVENT_WAIT_LIST, (usm.memcpy)(env.queue, CL_TRUE, ptrs[1].cast(), p, 8, 1, null(), null_mut()));
        err!(CL_INVALID_VALUE, (usm.migrate)(env.queue, p, 8, 1 << 7, 0, null(), null_mut()));
        err!(CL_INVALID_COMMAND_QUEUE, (usm.advise)(null_mut(), p, 8, 0, 0, null(), null_mut()));
    }
    // Migrations and advice take their place in the queue: a copy behind them waits for
    // the user event they wait for.
    let mut e = 0;
    let gate = cl!(clCreateUserEvent(env.context, &mut e));
    ok!(e);
    let (mut m, mut a, mut c) = (null_mut(), null_mut(), null_mut());
    let value = [5u8; 64];
    // SAFETY: 64 bytes of USM and of `value`, which outlives the commands.
    unsafe {
        ok!((usm.migrate)(env.queue, ptrs[2].cast(), n, 0, 1, &gate, &mut m));
        ok!((usm.advise)(env.queue, ptrs[2].cast(), n, 0, 0, null(), &mut a));
        ok!((usm.memcpy)(env.queue, CL_FALSE, ptrs[2].cast(), value.as_ptr().cast(), 64, 0, null(), &mut c));
    }
    ok!(cl!(clFlush(env.queue)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(event_info::<cl_int>(c, CL_EVENT_COMMAND_EXECUTION_STATUS) >= CL_SUBMITTED as cl_int, "held back");
    // SAFETY: the copy cannot run before the gate opens.
    assert_ne!(unsafe { std::slice::from_raw_parts(ptrs[2], 64) }, &value);
    ok!(cl!(clSetUserEventStatus(gate, CL_COMPLETE)));
    ok!(cl!(clWaitForEvents(1, &c)));
    // SAFETY: the copy has completed.
    assert_eq!(unsafe { std::slice::from_raw_parts(ptrs[2], 64) }, &value);
    assert_eq!(event_info::<cl_command_type>(m, CL_EVENT_COMMAND_TYPE), CL_COMMAND_MIGRATEMEM_INTEL);
    assert_eq!(event_info::<cl_command_type>(a, CL_EVENT_COMMAND_TYPE), CL_COMMAND_MEMADVISE_INTEL);
    for ev in [gate, m, a, c] {
        ok!(cl!(clReleaseEvent(ev)));
    }
    // Kernels: pointers into the middle of allocations of each kind, as arguments.
    let p = build(&env, KERNELS, "");
    let k = kernel(p, "add");
    let ints = n / 4;
    for (i, &a) in ptrs.iter().enumerate() {
        let b = ptrs[(i + 1) % 4];
        // SAFETY: `ints` ints at each pointer, no command running.
        let (xa, xb) = unsafe {
            (
                std::slice::from_raw_parts_mut(a.cast::<i32>(), ints),
                std::slice::from_raw_parts_mut(b.cast::<i32>(), ints),
            )
        };
        xa.iter_mut().enumerate().for_each(|(j, v)| *v = j as i32);
        xb.iter_mut().enumerate().for_each(|(j, v)| *v = 1000 - j as i32);
        // SAFETY: the driver's entry point, with pointers into the allocations.
        unsafe {
            ok!((usm.set_arg)(k, 0, a.wrapping_add(64 * 4).cast()));
            ok!((usm.set_arg)(k, 1, b.wrapping_add(32 * 4).cast()));
        }
        set_arg(k, 2, &3i32);
        run(&env, k, &[512], None);
        for (j, &v) in xa.iter().enumerate() {
            let want = if (64..576).contains(&j) { j as i32 + 3 * (1000 - (j as i32 - 32)) } else { j as i32 };
            assert_eq!(v, want, "kind {i}, element {j}");
        }
    }
    // SAFETY: the driver's entry point, with arguments it must reject.
    unsafe {
        err!(CL_INVALID_ARG_INDEX, (usm.set_arg)(k, 3, ptrs[0].cast()));
        err!(CL_INVALID_ARG_VALUE, (usm.set_arg)(k, 2, ptrs[0].cast()));
        err!(CL_INVALID_KERNEL, (usm.set_arg)(null_mut(), 0, ptrs[0].cast()));
    }
    // Indirect access: a struct in shared USM points into device USM.
    let k2 = kernel(p, "indirect");
    let data = ptrs[1].cast::<i32>();
    // SAFETY: 64 ints of device USM, and a view in shared USM (4096 bytes each).
    unsafe {
        (0..64).for_each(|i| *data.add(i) = i as i32);
        ptrs[2].cast::<View>().write(View { data: data.add(8), n: 40 });
    }
    let on: cl_bool = CL_TRUE;
    for param in [
        CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL,
    ] {
        ok!(cl!(clSetKernelExecInfo(k2, param, size_of::<cl_bool>(), (&on as *const cl_bool).cast())));
        err!(CL_INVALID_VALUE, cl!(clSetKernelExecInfo(k2, param, 2, (&on as *const cl_bool).cast())));
    }
    let list = [data as *const c_void];
    ok!(cl!(clSetKernelExecInfo(k2, CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL, 8, list.as_ptr().cast())));
    err!(CL_INVALID_VALUE, cl!(clSetKernelExecInfo(k2, CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL, 5, list.as_ptr().cast())));
    // SAFETY: the driver's entry point; the sum lands in host USM.
    unsafe {
        ok!((usm.set_arg)(k2, 0, ptrs[2].cast()));
        ok!((usm.set_arg)(k2, 1, ptrs[0].wrapping_add(12).cast()));
    }
    run(&env, k2, &[1], None);
    // SAFETY: the kernel has finished.
    unsafe {
        assert_eq!(*ptrs[0].add(12).cast::<i32>(), (8..48).sum::<i32>());
        assert!((0..64).all(|i| *data.add(i) == if (8..48).contains(&i) { -(i as i32) } else { i as i32 }));
    }
    // A wild pointer fails its command alone.
    let mut ev = null_mut();
    let wild = 0x10 as *const c_void;
    // SAFETY: the driver's entry point; the command must not read the wild address
    // unguarded.
    ok!(unsafe { (usm.memcpy)(env.queue, CL_FALSE, ptrs[0].cast(), wild, 64, 0, null(), &mut ev) });
    err!(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, cl!(clWaitForEvents(1, &ev)));
    assert!(event_info::<cl_int>(ev, CL_EVENT_COMMAND_EXECUTION_STATUS) < 0);
    ok!(cl!(clReleaseEvent(ev)));
    // A blocking free waits for the commands before it: here a copy into the allocation
    // held back by a user event another thread completes.
    let gate = cl!(clCreateUserEvent(env.context, &mut e));
    let mut late = null_mut();
    // SAFETY: 64 bytes at each end, `value` outliving the command.
    ok!(unsafe { (usm.memcpy)(env.queue, CL_FALSE, ptrs[3].cast(), value.as_ptr().cast(), 64, 1, &gate, &mut late) });
    ok!(cl!(clFlush(env.queue)));
    let gate_handle = gate as usize;
    let opener = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        ok!(cl!(clSetUserEventStatus(gate_handle as cl_event, CL_COMPLETE)));
    });
    // SAFETY: the driver's entry point, freeing the allocation the copy writes.
    ok!(unsafe { (usm.blocking_free)(env.context, ptrs[3].cast()) });
    assert_eq!(event_info::<cl_int>(late, CL_EVENT_COMMAND_EXECUTION_STATUS), CL_COMPLETE as cl_int);
    opener.join().unwrap();
    for ev in [gate, late] {
        ok!(cl!(clReleaseEvent(ev)));
    }
    for &q in &ptrs[..3] {
        ok!(usm.free(&env, q));
    }
    for k in [k, k2] {
        ok!(cl!(clReleaseKernel(k)));
    }
    ok!(cl!(clReleaseProgram(p)));
}
