//! `cl_khr_command_buffer` through the loader's extension-function lookup: a recorded
//! sequence (fill, kernel, copy, SVM copy) replayed several times against host
//! references, in queue order with ordinary commands; arguments captured when recorded;
//! the queries; and the errors of recording and enqueueing.

use crate::common::*;

/// The extension's entry points (the harness's table) and calls the tests make often.
type Cb = CommandBuffers;

fn cb() -> Cb {
    // SAFETY: the loader's platform handle.
    unsafe { CommandBuffers::of(platform_device().0) }.expect("the driver offers cl_khr_command_buffer's entry points")
}

trait Calls {
    fn create(&self, env: &Env) -> *mut c_void;
    fn enqueue(&self, b: *mut c_void, event: *mut cl_event) -> cl_int;
    fn kernel(&self, b: *mut c_void, k: cl_kernel, n: usize, waits: &[cl_uint], point: *mut cl_uint) -> cl_int;
}

impl Calls for Cb {
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
    let cb = cb();
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
        ok!((cb.svm_copy.expect("clCommandSVMMemcpyKHR"))(
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
    let cb = cb();
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
        // A queue not the buffer's (with multi_device, a command may name one of the
        // buffer's), a sync point that names no command, a list without a count, a
        // mutable handle, an unknown property.
        let (other, e2) = with_err(|e| cl!(clCreateCommandQueue(env.context, env.device, 0, e)));
        ok!(e2);
        err!(CL_INVALID_COMMAND_QUEUE, (cb.barrier)(b, other, null(), 0, null(), null_mut(), null_mut()));
        ok!(cl!(clReleaseCommandQueue(other)));
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

/// `cl_khr_command_buffer_mutable_dispatch`'s entry points.
struct Mutable {
    update: unsafe extern "C" fn(*mut c_void, cl_uint, *const cl_uint, *const *const c_void) -> cl_int,
    info: unsafe extern "C" fn(*mut c_void, cl_uint, usize, *mut c_void, *mut usize) -> cl_int,
}

impl Mutable {
    fn get() -> Mutable {
        let (platform, _) = platform_device();
        let find = |name: &std::ffi::CStr| {
            let f = cl!(clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr()));
            assert!(!f.is_null(), "{name:?} is not found");
            f
        };
        // SAFETY: each address is the driver's entry point of that name, whose C
        // signature the field's type spells.
        unsafe {
            Mutable {
                update: as_fn(find(c"clUpdateMutableCommandsKHR")),
                info: as_fn(find(c"clGetMutableCommandInfoKHR")),
            }
        }
    }

    /// Applies one dispatch config.
    fn update(&self, b: *mut c_void, config: &cl_mutable_dispatch_config_khr) -> cl_int {
        let (kind, ptr) =
            (CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR, (config as *const cl_mutable_dispatch_config_khr).cast());
        // SAFETY: one config of the one type.
        unsafe { (self.update)(b, 1, &kind, &ptr) }
    }
}

/// A config for `command` changing nothing yet.
fn config(command: *mut c_void) -> cl_mutable_dispatch_config_khr {
    cl_mutable_dispatch_config_khr {
        command,
        num_args: 0,
        num_svm_args: 0,
        num_exec_infos: 0,
        work_dim: 0,
        arg_list: null(),
        arg_svm_list: null(),
        exec_info_list: null(),
        global_work_offset: null(),
        global_work_size: null(),
        local_work_size: null(),
    }
}

#[test]
fn a_mutable_kernel_command_takes_new_arguments_and_sizes_between_replays() {
    let env = Env::new();
    let (cb, m) = (cb(), Mutable::get());
    let fields: cl_bitfield = device_info(env.device, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR);
    assert_eq!(fields & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR);
    const N: usize = 256;
    let p = build(&env, KERNEL, "");
    let k = kernel(p, "axpb");
    let x = buffer_of(&env, &(0..N).map(|i| i as f32).collect::<Vec<_>>());
    let (y1, y2) = (env.buffer(CL_MEM_READ_WRITE, N * 4, null_mut()), env.buffer(CL_MEM_READ_WRITE, N * 4, null_mut()));
    // Only x is set: the command is recorded with its other arguments deferred.
    set_arg(k, 0, &x);
    let props = [CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_MUTABLE_KHR, 0];
    let mut e = 0;
    let q = env.queue;
    // SAFETY: the driver's entry points with valid objects.
    unsafe {
        let b = (cb.create)(1, &q, props.as_ptr(), &mut e);
        ok!(e);
        let mut command = null_mut();
        let global = N / 2;
        let code =
            (cb.ndrange)(b, null_mut(), null(), k, 1, null(), &global, null(), 0, null(), null_mut(), &mut command);
        ok!(code);
        assert!(!command.is_null());
        ok!((cb.finalize)(b));
        let state: cl_uint = info(|n, v, r| (cb.info)(b, CL_COMMAND_BUFFER_STATE_KHR, n, v, r));
        assert_eq!(state, CL_COMMAND_BUFFER_STATE_FINALIZED_KHR, "arguments are missing");
        err!(CL_INVALID_OPERATION, cb.enqueue(b, null_mut()));

        // y1 = 2x + 1 over the first half.
        let (a, c) = (2.0f32, 1.0f32);
        let args = [
            cl_mutable_dispatch_arg_khr { arg_index: 1, arg_size: 8, arg_value: (&y1 as *const cl_mem).cast() },
            cl_mutable_dispatch_arg_khr { arg_index: 2, arg_size: 4, arg_value: (&a as *const f32).cast() },
            cl_mutable_dispatch_arg_khr { arg_index: 3, arg_size: 4, arg_value: (&c as *const f32).cast() },
        ];
        let mut set = config(command);
        set.num_args = 3;
        set.arg_list = args.as_ptr();
        ok!(m.update(b, &set));
        let state: cl_uint = info(|n, v, r| (cb.info)(b, CL_COMMAND_BUFFER_STATE_KHR, n, v, r));
        assert_eq!(state, CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
        ok!(cl!(clEnqueueFillBuffer(q, y1, (&0f32 as *const f32).cast(), 4, 0, N * 4, 0, null(), null_mut())));
        ok!(cb.enqueue(b, null_mut()));
        // Then y2 = 2x + 1 over all of it, from an offset of 0 and the whole size: the
        // update reaches later replays only.
        let whole = N;
        let retarget =
            [cl_mutable_dispatch_arg_khr { arg_index: 1, arg_size: 8, arg_value: (&y2 as *const cl_mem).cast() }];
        let mut grow = config(command);
        grow.num_args = 1;
        grow.arg_list = retarget.as_ptr();
        grow.work_dim = 1;
        grow.global_work_size = &whole;
        ok!(m.update(b, &grow));
        ok!(cb.enqueue(b, null_mut()));
        ok!(cl!(clFinish(q)));
        let first: Vec<f32> = read_as(&env, y1, N);
        let second: Vec<f32> = read_as(&env, y2, N);
        for i in 0..N {
            let want1 = if i < N / 2 { 2.0 * i as f32 + 1.0 } else { 0.0 };
            assert_eq!(first[i], want1, "y1[{i}]");
            assert_eq!(second[i], 2.0 * i as f32 + 1.0, "y2[{i}]");
        }
        let size: usize = info(|n, v, r| (m.info)(command, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR, n, v, r));
        assert_eq!(size, N);
        let kind: cl_command_type = info(|n, v, r| (m.info)(command, CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR, n, v, r));
        assert_eq!(kind, CL_COMMAND_NDRANGE_KERNEL);
        let owner: *mut c_void = info(|n, v, r| (m.info)(command, CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR, n, v, r));
        assert_eq!(owner, b);
        // The application's kernel kept its own arguments.
        let mut arg_count = 0u32;
        ok!(cl!(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, 4, (&mut arg_count as *mut u32).cast(), null_mut())));
        assert_eq!(arg_count, 4);

        // Errors: another dimension count, a bad handle, an argument of the wrong
        // size (nothing of a failed update is kept), a list without a count.
        let mut bad = config(command);
        bad.work_dim = 2;
        err!(CL_INVALID_OPERATION, m.update(b, &bad));
        err!(CL_INVALID_MUTABLE_COMMAND_KHR, m.update(b, &config(0x99usize as *mut c_void)));
        let wrong = [
            cl_mutable_dispatch_arg_khr { arg_index: 1, arg_size: 8, arg_value: (&y1 as *const cl_mem).cast() },
            cl_mutable_dispatch_arg_khr { arg_index: 2, arg_size: 8, arg_value: (&a as *const f32).cast() },
        ];
        let mut half_bad = config(command);
        half_bad.num_args = 2;
        half_bad.arg_list = wrong.as_ptr();
        err!(CL_INVALID_ARG_SIZE, m.update(b, &half_bad));
        let mut no_count = config(command);
        no_count.arg_list = wrong.as_ptr();
        err!(CL_INVALID_VALUE, m.update(b, &no_count));
        err!(CL_INVALID_VALUE, (m.update)(b, 1, null(), null()));
        err!(
            CL_INVALID_MUTABLE_COMMAND_KHR,
            (m.info)(null_mut(), CL_MUTABLE_DISPATCH_KERNEL_KHR, 0, null_mut(), null_mut())
        );
        ok!(cl!(clEnqueueFillBuffer(q, y2, (&0f32 as *const f32).cast(), 4, 0, N * 4, 0, null(), null_mut())));
        ok!(cb.enqueue(b, null_mut()));
        ok!(cl!(clFinish(q)));
        let again: Vec<f32> = read_as(&env, y2, N);
        assert!((0..N).all(|i| again[i] == 2.0 * i as f32 + 1.0), "the failed update changed the command");

        // A command recorded only for fixed sizes refuses a new size; an immutable
        // command buffer refuses updates.
        let b2 = (cb.create)(1, &q, props.as_ptr(), &mut e);
        ok!(e);
        set_arg(k, 1, &y1);
        set_arg(k, 2, &a);
        set_arg(k, 3, &c);
        let only_args = [CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, 0];
        let mut fixed = null_mut();
        let code = (cb.ndrange)(
            b2,
            null_mut(),
            only_args.as_ptr(),
            k,
            1,
            null(),
            &whole,
            null(),
            0,
            null(),
            null_mut(),
            &mut fixed,
        );
        ok!(code);
        ok!((cb.finalize)(b2));
        let mut resize = config(fixed);
        resize.global_work_size = &global;
        err!(CL_INVALID_OPERATION, m.update(b2, &resize));
        let b3 = cb.create(&env);
        let mut plain = null_mut();
        ok!((cb.ndrange)(b3, null_mut(), null(), k, 1, null(), &whole, null(), 0, null(), null_mut(), &mut plain));
        ok!((cb.finalize)(b3));
        err!(CL_INVALID_OPERATION, m.update(b3, &config(plain)));
        for buffer in [b, b2, b3] {
            ok!((cb.release)(buffer));
        }
        // The handles end with their command buffer.
        err!(
            CL_INVALID_MUTABLE_COMMAND_KHR,
            (m.info)(command, CL_MUTABLE_DISPATCH_KERNEL_KHR, 0, null_mut(), null_mut())
        );
    }
    for mem in [x, y1, y2] {
        ok!(cl!(clReleaseMemObject(mem)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// A recorded kernel that enqueues kernels (`CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR`):
/// each replay runs the children of its own copy of the launch, before the replay
/// completes.
#[test]
fn recorded_kernels_enqueue_children_at_every_replay() {
    let env = Env::new();
    let cb = cb();
    let caps: cl_bitfield = device_info(env.device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR);
    let device_side = CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR;
    assert_eq!(caps & device_side, device_side);
    let def = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, None);
    let src = "kernel void twice(global int *out) {
                   size_t i = get_global_id(0);
                   enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(2),
                                  ^{ atomic_add(&out[i], (int)get_global_id(0) + 1); });
               }";
    let prog = build(&env, src, "-cl-std=CL2.0");
    let k = kernel(prog, "twice");
    let out = buffer_of(&env, &[0i32; 8]);
    set_arg(k, 0, &out);
    let b = cb.create(&env);
    ok!(cb.kernel(b, k, 8, &[], null_mut()));
    // SAFETY: a command buffer just recorded.
    unsafe { ok!((cb.finalize)(b)) };
    for _ in 0..3 {
        ok!(cb.enqueue(b, null_mut()));
    }
    ok!(cl!(clFinish(env.queue)));
    // Each replay's children add 1 + 2 to every slot.
    assert_eq!(read_as::<i32>(&env, out, 8), [9; 8]);
    // SAFETY: the buffer made above, released once.
    unsafe { ok!((cb.release)(b)) };
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(prog)));
    ok!(cl!(clReleaseCommandQueue(def)));
}

/// `cl_khr_command_buffer_multi_device`: commands recorded to queues of two
/// sub-devices (and to two queues of one device), replayed in their sync-point order;
/// the queries; the errors of recording without naming a queue; remapping (explicit and
/// automatic) with the kernel command's handle carried over.
#[test]
fn commands_recorded_to_queues_of_several_devices_replay_and_remap() {
    let root = platform_device().1;
    let cb = cb();
    let remap = cb.remap.expect("clRemapCommandBufferKHR");
    let extensions = info_string(|n, v, r| cl!(clGetDeviceInfo(root, CL_DEVICE_EXTENSIONS, n, v, r)));
    assert!(extensions.split(' ').any(|e| e == "cl_khr_command_buffer_multi_device"), "{extensions}");
    let platform = platform_device().0;
    let caps: cl_bitfield =
        info(|n, v, r| cl!(clGetPlatformInfo(platform, CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR, n, v, r)));
    let all = CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR
        | CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR
        | CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR;
    assert_eq!(caps, all);
    let device_caps: cl_bitfield = device_info(root, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR);
    assert_ne!(device_caps & CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR, 0);

    // Two sub-devices of one compute unit each, in one context.
    let mut subs = [null_mut(); 2];
    let props = [CL_DEVICE_PARTITION_EQUALLY, 1, 0];
    ok!(cl!(clCreateSubDevices(root, props.as_ptr(), 2, subs.as_mut_ptr(), null_mut())));
    let (context, e) = with_err(|e| cl!(clCreateContext(null(), 2, subs.as_ptr(), None, null_mut(), e)));
    ok!(e);
    let queue_on = |d: cl_device_id| {
        let (q, e) = with_err(|e| cl!(clCreateCommandQueue(context, d, 0, e)));
        ok!(e);
        q
    };
    let queues = [queue_on(subs[0]), queue_on(subs[1])];
    let env = Env { device: subs[0], context, queue: queues[0] };
    let n = 1024usize;
    let x = buffer_of(&env, &(0..n).map(|i| i as f32).collect::<Vec<f32>>());
    let y = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let out = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let src = std::ffi::CString::new(KERNEL).unwrap();
    let ptr = src.as_ptr();
    let (prog, e) = with_err(|e| cl!(clCreateProgramWithSource(context, 1, &ptr as *const _ as *mut _, null(), e)));
    ok!(e);
    ok!(cl!(clBuildProgram(prog, 2, subs.as_ptr(), null(), None, null_mut())));
    let k = kernel(prog, "axpb");
    set_arg(k, 0, &x);
    set_arg(k, 1, &y);
    set_arg(k, 2, &2.0f32);
    set_arg(k, 3, &1.0f32);

    let mut e = 0;
    // SAFETY: the driver's entry points, with the lists and handles made here.
    unsafe {
        let b = (cb.create)(2, queues.as_ptr(), null(), &mut e);
        ok!(e);
        let n_queues: cl_uint = info(|s, v, r| (cb.info)(b, CL_COMMAND_BUFFER_NUM_QUEUES_KHR, s, v, r));
        assert_eq!(n_queues, 2);
        let listed = info_bytes(|s, v, r| (cb.info)(b, CL_COMMAND_BUFFER_QUEUES_KHR, s, v, r));
        assert_eq!(listed.len(), 2 * size_of::<cl_command_queue>());
        // With two queues, every command names one of them.
        let zero = 0f32;
        let fill = |q: cl_command_queue, point: *mut cl_uint| {
            (cb.fill)(b, q, null(), y, (&zero as *const f32).cast(), 4, 0, n * 4, 0, null(), point, null_mut())
        };
        err!(CL_INVALID_COMMAND_QUEUE, fill(null_mut(), null_mut()));
        let (foreign, e2) = with_err(|e| cl!(clCreateCommandQueue(context, subs[0], 0, e)));
        ok!(e2);
        err!(CL_INVALID_COMMAND_QUEUE, fill(foreign, null_mut()));
        let mut filled = 0;
        ok!(fill(queues[0], &mut filled));
        let mut ran = 0;
        let mut handle = null_mut();
        ok!((cb.ndrange)(b, queues[1], null(), k, 1, null(), &n, null(), 1, &filled, &mut ran, &mut handle));
        ok!((cb.copy)(b, queues[0], null(), y, out, 0, 0, n * 4, 1, &ran, null_mut(), null_mut()));
        ok!((cb.finalize)(b));
        ok!((cb.enqueue)(0, null_mut(), b, 0, null(), null_mut()));
        ok!(cl!(clFinish(queues[0])));
        ok!(cl!(clFinish(queues[1])));
        let want: Vec<f32> = (0..n).map(|i| 2.0 * i as f32 + 1.0).collect();
        assert_eq!(read_as::<f32>(&env, out, n), want);

        // Explicit remapping swaps the queues; automatic onto one queue puts every
        // command there. Each copy runs alone.
        for (automatic, list) in [(CL_FALSE, vec![queues[1], queues[0]]), (CL_TRUE, vec![queues[1]])] {
            let mut copied = null_mut();
            let r = remap(b, automatic, list.len() as cl_uint, list.as_ptr(), 1, &handle, &mut copied, &mut e);
            ok!(e);
            assert!(!copied.is_null() && copied != handle);
            let state: cl_command_buffer_state_khr = info(|s, v, p| (cb.info)(r, CL_COMMAND_BUFFER_STATE_KHR, s, v, p));
            assert_eq!(state, CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
            ok!(cl!(clEnqueueFillBuffer(
                queues[0],
                out,
                (&zero as *const f32).cast(),
                4,
                0,
                n * 4,
                0,
                null(),
                null_mut()
            )));
            ok!(cl!(clFinish(queues[0])));
            ok!((cb.enqueue)(0, null_mut(), r, 0, null(), null_mut()));
            ok!(cl!(clFinish(list[0])));
            assert_eq!(read_as::<f32>(&env, out, n), want, "remapped, automatic {automatic}");
            ok!((cb.release)(r));
        }
        // Explicit remapping takes as many queues as the buffer has.
        let r = remap(b, CL_FALSE, 1, queues.as_ptr(), 0, null(), null_mut(), &mut e);
        assert!(r.is_null());
        err!(CL_INVALID_VALUE, e);
        // Handles of another command buffer are refused.
        let bogus = b;
        let mut slot = null_mut();
        let r = remap(b, CL_TRUE, 1, queues.as_ptr(), 1, &bogus, &mut slot, &mut e);
        assert!(r.is_null());
        err!(CL_INVALID_VALUE, e);
        // Device-side sync between two devices is not offered.
        let flags = [CL_COMMAND_BUFFER_FLAGS_KHR as cl_properties, CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR, 0];
        let refused = (cb.create)(2, queues.as_ptr(), flags.as_ptr(), &mut e);
        assert!(refused.is_null());
        err!(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR, e);
        let none = (cb.create)(0, queues.as_ptr(), null(), &mut e);
        assert!(none.is_null());
        err!(CL_INVALID_VALUE, e);
        // Two queues of one device are fine, device-side sync included.
        let same = [queues[0], foreign];
        let twice = (cb.create)(2, same.as_ptr(), flags.as_ptr(), &mut e);
        ok!(e);
        ok!((cb.release)(twice));
        ok!((cb.release)(b));
        ok!(cl!(clReleaseCommandQueue(foreign)));
    }
    for m in [x, y, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(prog)));
    // The first queue and the context go with `env`.
    drop(env);
    ok!(cl!(clReleaseCommandQueue(queues[1])));
    for d in subs {
        ok!(cl!(clReleaseDevice(d)));
    }
}
