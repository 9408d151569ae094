//! `cl_khr_command_buffer` through the loader's extension-function lookup: a recorded
//! sequence (fill, kernel, copy, SVM copy) replayed several times against host
//! references, in queue order with ordinary commands; arguments captured when recorded;
//! the queries; and the errors of recording and enqueueing.

use crate::common::*;

/// The extension's entry points, looked up as an application does.
struct Cb {
    create: unsafe extern "C" fn(cl_uint, *const cl_command_queue, *const cl_properties, *mut cl_int) -> *mut c_void,
    release: unsafe extern "C" fn(*mut c_void) -> cl_int,
    retain: unsafe extern "C" fn(*mut c_void) -> cl_int,
    finalize: unsafe extern "C" fn(*mut c_void) -> cl_int,
    enqueue: unsafe extern "C" fn(
        cl_uint,
        *mut cl_command_queue,
        *mut c_void,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    info: unsafe extern "C" fn(*mut c_void, cl_uint, usize, *mut c_void, *mut usize) -> cl_int,
    barrier: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    fill: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_mem,
        *const c_void,
        usize,
        usize,
        usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    copy: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_mem,
        cl_mem,
        usize,
        usize,
        usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    svm_copy: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        *mut c_void,
        *const c_void,
        usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
    ndrange: unsafe extern "C" fn(
        *mut c_void,
        cl_command_queue,
        *const cl_properties,
        cl_kernel,
        cl_uint,
        *const usize,
        *const usize,
        *const usize,
        cl_uint,
        *const cl_uint,
        *mut cl_uint,
        *mut *mut c_void,
    ) -> cl_int,
}

impl Cb {
    fn get() -> Cb {
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
            Cb {
                create: find(platform, c"clCreateCommandBufferKHR"),
                release: find(platform, c"clReleaseCommandBufferKHR"),
                retain: find(platform, c"clRetainCommandBufferKHR"),
                finalize: find(platform, c"clFinalizeCommandBufferKHR"),
                enqueue: find(platform, c"clEnqueueCommandBufferKHR"),
                info: find(platform, c"clGetCommandBufferInfoKHR"),
                barrier: find(platform, c"clCommandBarrierWithWaitListKHR"),
                fill: find(platform, c"clCommandFillBufferKHR"),
                copy: find(platform, c"clCommandCopyBufferKHR"),
                svm_copy: find(platform, c"clCommandSVMMemcpyKHR"),
                ndrange: find(platform, c"clCommandNDRangeKernelKHR"),
            }
        }
    }

    fn create(&self, env: &Env) -> *mut c_void {
        let mut e = 0;
        // SAFETY: the driver's entry point with one queue and no properties.
        let b = unsafe { (self.create)(1, &env.queue, null(), &mut e) };
        ok!(e);
        b
    }

    fn enqueue(&self, b: *mut c_void, event: *mut cl_event) -> cl_int {
        // SAFETY: the recording queue (none given), no wait list.
        unsafe { (self.enqueue)(0, null_mut(), b, 0, null(), event) }
    }

    fn kernel(&self, b: *mut c_void, k: cl_kernel, n: usize, waits: &[cl_uint], point: *mut cl_uint) -> cl_int {
        let list = if waits.is_empty() { null() } else { waits.as_ptr() };
        // SAFETY: a one-dimensional range of `n`; the wait list is `waits`.
        unsafe {
            (self.ndrange)(
                b,
                null_mut(),
                null(),
                k,
                1,
                null(),
                &n,
                null(),
                waits.len() as cl_uint,
                list,
                point,
                null_mut(),
            )
        }
    }
}

const KERNEL: &str = "kernel void axpb(global const float *x, global float *y, float a, float b) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + b;
}";

#[test]
fn a_recorded_sequence_replays_against_host_references_in_queue_order() {
    let env = Env::new();
    let cb = Cb::get();
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_khr_command_buffer"), "{extensions}");
    let caps: cl_bitfield = device_info(env.device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR);
    assert_eq!(caps & CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR, CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR);
    let required: cl_bitfield = device_info(env.device, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR);
    assert_eq!(required, 0);

    const N: usize = 4096;
    let p = build(&env, KERNEL, "");
    let k = kernel(p, "axpb");
    let x = env.buffer(CL_MEM_READ_WRITE, N * 4, null_mut());
    let y = env.buffer(CL_MEM_READ_WRITE, N * 4, null_mut());
    let z = env.buffer(CL_MEM_READ_WRITE, N * 4, null_mut());
    let svm = cl!(clSVMAlloc(env.context, CL_MEM_READ_WRITE, N * 4, 0)).cast::<f32>();
    assert!(!svm.is_null());
    set_arg(k, 0, &x);
    set_arg(k, 1, &y);
    set_arg(k, 2, &2.0f32);
    set_arg(k, 3, &1.0f32);

    let b = cb.create(&env);
    let mut points = [0 as cl_uint; 4];
    // x = 3.0 everywhere; y = 2x + 1; z = y; svm = z's bytes, read from the SVM side.
    let three = 3.0f32;
    // SAFETY: the driver's entry points with valid objects and patterns.
    unsafe {
        let no = null_mut();
        ok!((cb.fill)(
            b,
            null_mut(),
            null(),
            x,
            (&three as *const f32).cast(),
            4,
            0,
            N * 4,
            0,
            null(),
            &mut points[0],
            no
        ));
        let first = [points[0]];
        ok!(cb.kernel(b, k, N, &first, &mut points[1]));
        ok!((cb.copy)(b, null_mut(), null(), y, z, 0, 0, N * 4, 1, &points[1], &mut points[2], no));
        ok!((cb.barrier)(b, null_mut(), null(), 0, null(), &mut points[3], no));
    }
    assert!(points.windows(2).all(|w| w[0] != w[1]), "sync points are distinct: {points:?}");
    // The arguments are captured when recorded: this value reaches only later launches.
    set_arg(k, 2, &100.0f32);
    // Recording is not enqueueing: nothing ran yet, and the command buffer cannot run
    // before it is finalized.
    err!(CL_INVALID_OPERATION, cb.enqueue(b, null_mut()));
    let state: cl_uint = info(|n, v, r| unsafe { (cb.info)(b, CL_COMMAND_BUFFER_STATE_KHR, n, v, r) });
    assert_eq!(state, CL_COMMAND_BUFFER_STATE_RECORDING_KHR);
    // SAFETY: the driver's entry points.
    unsafe { ok!((cb.finalize)(b)) };
    let state: cl_uint = info(|n, v, r| unsafe { (cb.info)(b, CL_COMMAND_BUFFER_STATE_KHR, n, v, r) });
    assert_eq!(state, CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);

    for round in 0..3 {
        // An ordinary command before the replay changes y; the replay overwrites it.
        let junk = vec![0xA5u8; N * 4];
        ok!(cl!(clEnqueueWriteBuffer(env.queue, y, CL_FALSE, 0, N * 4, junk.as_ptr().cast(), 0, null(), null_mut())));
        let mut event = null_mut();
        ok!(cb.enqueue(b, &mut event));
        let kind: cl_command_type = event_info(event, CL_EVENT_COMMAND_TYPE);
        assert_eq!(kind, CL_COMMAND_COMMAND_BUFFER_KHR);
        // An ordinary command after it sees what it wrote.
        let zs: Vec<f32> = read_as(&env, z, N);
        assert!(zs.iter().all(|&v| v == 7.0), "round {round}: z = {:?}", &zs[..4]);
        let status: cl_int = event_info(event, CL_EVENT_COMMAND_EXECUTION_STATUS);
        assert_eq!(status, CL_COMPLETE);
        ok!(cl!(clReleaseEvent(event)));
    }
    // A plain launch sees the new argument.
    run(&env, k, &[N], None);
    let ys: Vec<f32> = read_as(&env, y, N);
    assert!(ys.iter().all(|&v| v == 301.0), "{:?}", &ys[..4]);

    // An SVM copy recorded into a second command buffer, replayed on a substitute
    // queue of the same device and context.
    let b2 = cb.create(&env);
    // SAFETY: the driver's entry points; `svm` holds N floats.
    unsafe {
        ok!((cb.svm_copy)(
            b2,
            null_mut(),
            null(),
            svm.cast(),
            svm.add(N / 2).cast(),
            N * 2,
            0,
            null(),
            null_mut(),
            null_mut()
        ))
    };
    ok!(cl!(clEnqueueSVMMemFill(
        env.queue,
        svm.cast(),
        (&three as *const f32).cast(),
        4,
        N * 2,
        0,
        null(),
        null_mut()
    )));
    let half = 0.5f32;
    let svm_hi = unsafe { svm.add(N / 2) };
    ok!(cl!(clEnqueueSVMMemFill(
        env.queue,
        svm_hi.cast(),
        (&half as *const f32).cast(),
        4,
        N * 2,
        0,
        null(),
        null_mut()
    )));
    // SAFETY: the driver's entry points.
    unsafe { ok!((cb.finalize)(b2)) };
    let mut e = 0;
    let mut other = cl!(clCreateCommandQueue(env.context, env.device, CL_QUEUE_PROFILING_ENABLE, &mut e));
    ok!(e);
    ok!(cl!(clFinish(env.queue)));
    // SAFETY: one substitute queue.
    unsafe { ok!((cb.enqueue)(1, &mut other, b2, 0, null(), null_mut())) };
    ok!(cl!(clFinish(other)));
    // SAFETY: the allocation holds N floats and no command is in flight.
    let values = unsafe { std::slice::from_raw_parts(svm, N) };
    assert!(values.iter().all(|&v| v == 0.5), "{:?}", &values[..4]);

    // SAFETY: the driver's entry points.
    unsafe {
        ok!((cb.retain)(b));
        let refs: cl_uint = info(|n, v, r| (cb.info)(b, CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR, n, v, r));
        assert_eq!(refs, 2);
        ok!((cb.release)(b));
        ok!((cb.release)(b));
        ok!((cb.release)(b2));
    }
    ok!(cl!(clReleaseCommandQueue(other)));
    cl!(clSVMFree(env.context, svm.cast()));
    for m in [x, y, z] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn recording_and_enqueueing_report_the_extensions_errors() {
    let env = Env::new();
    let cb = Cb::get();
    let p = build(&env, KERNEL, "");
    let k = kernel(p, "axpb");
    let x = env.buffer_with(&[0; 64]);
    set_arg(k, 0, &x);
    set_arg(k, 1, &x);
    set_arg(k, 2, &1.0f32);
    set_arg(k, 3, &1.0f32);
    let mut e = 0;
    // SAFETY: the driver's entry points, given bad input on purpose.
    unsafe {
        let q = env.queue;
        let none = (cb.create)(0, &q, null(), &mut e);
        assert!(none.is_null());
        err!(CL_INVALID_VALUE, e);
        (cb.create)(1, null(), null(), &mut e);
        err!(CL_INVALID_VALUE, e);
        let bogus = 0x1234usize as cl_command_queue;
        (cb.create)(1, &bogus, null(), &mut e);
        err!(CL_INVALID_COMMAND_QUEUE, e);
        let props = [CL_COMMAND_BUFFER_FLAGS_KHR, 1 << 40, 0];
        (cb.create)(1, &q, props.as_ptr(), &mut e);
        err!(CL_INVALID_VALUE, e);
        err!(CL_INVALID_COMMAND_BUFFER_KHR, (cb.finalize)(null_mut()));
        err!(CL_INVALID_COMMAND_BUFFER_KHR, (cb.release)(x));

        let props = [CL_COMMAND_BUFFER_FLAGS_KHR, 0, 0];
        let b = (cb.create)(1, &q, props.as_ptr(), &mut e);
        ok!(e);
        let array: [cl_properties; 3] = info(|n, v, r| (cb.info)(b, CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR, n, v, r));
        assert_eq!(array, props);
        let queues: cl_command_queue = info(|n, v, r| (cb.info)(b, CL_COMMAND_BUFFER_QUEUES_KHR, n, v, r));
        assert_eq!(queues, q);
        let context: cl_context = info(|n, v, r| (cb.info)(b, CL_COMMAND_BUFFER_CONTEXT_KHR, n, v, r));
        assert_eq!(context, env.context);
        err!(CL_INVALID_VALUE, (cb.info)(b, 0x7777, 0, null_mut(), null_mut()));

        let mut point = 0;
        // A queue is given (only one is possible), a sync point that names no command,
        // a list without a count, a mutable handle, an unknown property.
        err!(CL_INVALID_COMMAND_QUEUE, (cb.barrier)(b, q, null(), 0, null(), null_mut(), null_mut()));
        err!(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, cb.kernel(b, k, 16, &[1], &mut point));
        err!(
            CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
            (cb.barrier)(b, null_mut(), null(), 0, &point, null_mut(), null_mut())
        );
        let mut handle = null_mut();
        err!(CL_INVALID_VALUE, (cb.barrier)(b, null_mut(), null(), 0, null(), null_mut(), &mut handle));
        let unknown = [0x4242 as cl_properties, 1, 0];
        err!(CL_INVALID_VALUE, (cb.barrier)(b, null_mut(), unknown.as_ptr(), 0, null(), null_mut(), null_mut()));
        // The enqueue's own checks apply: a copy out of bounds, a zero-sized range.
        err!(CL_INVALID_VALUE, (cb.copy)(b, null_mut(), null(), x, x, 0, 32, 64, 0, null(), null_mut(), null_mut()));
        let zero = 0usize;
        let no_dims =
            (cb.ndrange)(b, null_mut(), null(), k, 0, null(), &zero, null(), 0, null(), null_mut(), null_mut());
        err!(CL_INVALID_WORK_DIMENSION, no_dims);

        ok!(cb.kernel(b, k, 16, &[], &mut point));
        ok!(cb.kernel(b, k, 16, &[point], &mut point));
        ok!((cb.finalize)(b));
        err!(CL_INVALID_OPERATION, (cb.finalize)(b));
        err!(CL_INVALID_OPERATION, cb.kernel(b, k, 16, &[], null_mut()));
        // Queue lists: a count without queues, queues without a count, two queues.
        err!(CL_INVALID_VALUE, (cb.enqueue)(1, null_mut(), b, 0, null(), null_mut()));
        let mut two = [q, q];
        err!(CL_INVALID_VALUE, (cb.enqueue)(0, two.as_mut_ptr(), b, 0, null(), null_mut()));
        err!(CL_INVALID_VALUE, (cb.enqueue)(2, two.as_mut_ptr(), b, 0, null(), null_mut()));
        let mut bad = [bogus];
        err!(CL_INVALID_COMMAND_QUEUE, (cb.enqueue)(1, bad.as_mut_ptr(), b, 0, null(), null_mut()));
        // A queue of another context.
        let other = Env::new();
        let mut theirs = [other.queue];
        err!(CL_INVALID_CONTEXT, (cb.enqueue)(1, theirs.as_mut_ptr(), b, 0, null(), null_mut()));
        err!(CL_INVALID_EVENT_WAIT_LIST, (cb.enqueue)(0, null_mut(), b, 1, null(), null_mut()));
        ok!(cb.enqueue(b, null_mut()));
        ok!(cl!(clFinish(q)));
        let ys: Vec<f32> = read_as(&env, x, 16);
        assert!(ys.iter().all(|&v| v == 2.0), "{ys:?}");
        ok!((cb.release)(b));
    }
    ok!(cl!(clReleaseMemObject(x)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}
