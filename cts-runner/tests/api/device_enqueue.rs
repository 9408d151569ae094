//! OpenCL C 2.0's device-side enqueue: device queues (`CL_QUEUE_ON_DEVICE`, the default
//! one, `clSetDefaultDeviceCommandQueue`) with their errors, and kernels enqueueing
//! kernels: blocks with captures and `__local` parameters, nested enqueues, events,
//! markers and user events, profiling capture and the `get_kernel_*` queries, against
//! host references; failures kernel code can cause (a bad range, queue or wait list,
//! garbage events, a user event never set) answered without harm to the process.

use crate::common::*;

fn queue_info<T: Copy>(q: cl_command_queue, p: cl_command_queue_info) -> T {
    info(|n, v, r| cl!(clGetCommandQueueInfo(q, p, n, v, r)))
}

#[test]
fn device_queues_are_made_queried_and_replaced_with_the_specs_errors() {
    let env = Env::new();
    let caps: cl_bitfield = device_info(env.device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
    assert_eq!(caps, CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT);
    let features = info_bytes(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_FEATURES, n, v, r)));
    assert!(String::from_utf8_lossy(&features).contains("__opencl_c_device_enqueue"));
    let version = info_string(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_VERSION, n, v, r)));
    assert!(version.starts_with("OpenCL C 2.0 "), "{version}");
    let preferred: cl_uint = device_info(env.device, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE);
    let most: cl_uint = device_info(env.device, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    assert!(preferred > 0 && preferred <= most);

    // No default device queue yet.
    let none: cl_command_queue = queue_info(env.queue, CL_QUEUE_DEVICE_DEFAULT);
    assert!(none.is_null());
    let q = device_queue(&env, 0, None);
    let size: cl_uint = queue_info(q, CL_QUEUE_SIZE);
    assert_eq!(size, preferred);
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clGetCommandQueueInfo(env.queue, CL_QUEUE_SIZE, 4, null_mut(), null_mut())));
    let def = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, Some(4096));
    // "will return the default device queue that has already been created and
    // increment its reference count by 1".
    let again = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, None);
    assert_eq!(again, def);
    let refs: cl_uint = queue_info(def, CL_QUEUE_REFERENCE_COUNT);
    assert_eq!(refs, 2);
    ok!(cl!(clReleaseCommandQueue(again)));
    let now: cl_command_queue = queue_info(env.queue, CL_QUEUE_DEVICE_DEFAULT);
    assert_eq!(now, def);

    // Only kernels enqueue to a device queue.
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFinish(q)));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFlush(q)));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clEnqueueMarkerWithWaitList(q, 0, null(), null_mut())));
    let b = env.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let fill = cl!(clEnqueueFillBuffer(q, b, [0u8].as_ptr().cast(), 1, 0, 64, 0, null(), null_mut()));
    err!(CL_INVALID_COMMAND_QUEUE, fill);

    // Replacing the default: a device queue of the context and device only.
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clSetDefaultDeviceCommandQueue(env.context, env.device, env.queue)));
    err!(CL_INVALID_CONTEXT, cl!(clSetDefaultDeviceCommandQueue(null_mut(), env.device, q)));
    err!(CL_INVALID_DEVICE, cl!(clSetDefaultDeviceCommandQueue(env.context, null_mut(), q)));
    ok!(cl!(clSetDefaultDeviceCommandQueue(env.context, env.device, q)));
    let now: cl_command_queue = queue_info(env.queue, CL_QUEUE_DEVICE_DEFAULT);
    assert_eq!(now, q);

    // A queue_t argument takes a device queue alone.
    let prog = build(&env, "kernel void k(queue_t q, global int *out) { out[0] = 1; }", "-cl-std=CL2.0");
    let k = kernel(prog, "k");
    let host = env.queue;
    err!(
        CL_INVALID_DEVICE_QUEUE,
        cl!(clSetKernelArg(k, 0, size_of::<cl_command_queue>(), (&host as *const cl_command_queue).cast()))
    );
    let junk = b as cl_command_queue;
    err!(
        CL_INVALID_DEVICE_QUEUE,
        cl!(clSetKernelArg(k, 0, size_of::<cl_command_queue>(), (&junk as *const cl_command_queue).cast()))
    );
    set_arg(k, 0, &q);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(prog)));
    ok!(cl!(clReleaseMemObject(b)));
    for queue in [q, def] {
        ok!(cl!(clReleaseCommandQueue(queue)));
    }
}

/// Each work-item enqueues a child over 4 work-items that adds its captured values into
/// the parent's slot; the child enqueues a grandchild (a block with a `__local`
/// parameter and a barrier) that waits for the child's marker; the queries'
/// answers go to `info`.
const TREE: &str = r#"
void grandchild(global int *out, size_t slot, local int *tmp) {
    tmp[get_local_id(0)] = (int)get_global_id(0) + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        int sum = 0;
        for (size_t i = 0; i < get_local_size(0); i++) sum += tmp[i];
        atomic_add(&out[slot], sum * 1000);
    }
}

void child(global int *out, size_t slot, int scale) {
    atomic_add(&out[slot], scale * (int)get_global_id(0));
    if (get_global_id(0) == 0) {
        clk_event_t done, mark;
        queue_t q = get_default_queue();
        // The grandchild waits for a marker behind this child's own group: it runs after.
        int r = enqueue_marker(q, 0, 0, &mark);
        if (r != CLK_INVALID_EVENT_WAIT_LIST) atomic_add(&out[slot], 1 << 30);
        clk_event_t user = create_user_event();
        r = enqueue_marker(q, 1, &user, &mark);
        if (r != CLK_SUCCESS) atomic_add(&out[slot], 1 << 29);
        r = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(8, 4), 1, &mark, &done,
                           ^(local void *tmp) { grandchild(out, slot, (local int *)tmp); }, 4u * 4);
        if (r != CLK_SUCCESS) atomic_add(&out[slot], 1 << 28);
        set_user_event_status(user, CL_COMPLETE);
        release_event(user);
        release_event(mark);
        release_event(done);
    }
}

kernel void parent(global int *out, global uint *info) {
    size_t slot = get_global_id(0);
    int scale = (int)slot + 1;
    out[slot] = 0;
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(4),
                           ^{ child(out, slot, scale); });
    if (r != CLK_SUCCESS) out[slot] = r;
    if (slot == 0) {
        void (^b)(void) = ^{ child(out, slot, scale); };
        info[0] = get_kernel_work_group_size(b);
        info[1] = get_kernel_preferred_work_group_size_multiple(b);
        info[2] = get_kernel_max_sub_group_size_for_ndrange(ndrange_1D(64, 4), b);
        info[3] = get_kernel_sub_group_count_for_ndrange(ndrange_1D(64, 32), b);
    }
}
"#;

#[test]
fn kernels_enqueue_trees_of_kernels_markers_and_events() {
    let env = Env::new();
    let def = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, None);
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let prog = build(&env, TREE, std);
        // The blocks' kernels are the driver's: the program names its own kernel only.
        let names = info_string(|n, v, r| cl!(clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, n, v, r)));
        assert_eq!(names, "parent");
        let k = kernel(prog, "parent");
        let n = 16;
        let out = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let info_buf = env.buffer(CL_MEM_READ_WRITE, 16, null_mut());
        set_arg(k, 0, &out);
        set_arg(k, 1, &info_buf);
        assert_eq!(run_status(&env, k, n, 4), CL_COMPLETE, "{std}");
        let got: Vec<i32> = read_as(&env, out, n);
        // Child: scale * (0 + 1 + 2 + 3); grandchild: two groups of four, the sums of
        // 1..=4 and 5..=8, times 1000.
        let want: Vec<i32> = (0..n as i32).map(|s| (s + 1) * 6 + (10 + 26) * 1000).collect();
        assert_eq!(got, want, "{std}");
        let q: Vec<u32> = read_as(&env, info_buf, 4);
        let wg: usize = device_info(env.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        assert_eq!(q[0] as usize, wg);
        assert!(q[1] >= 1);
        assert_eq!(&q[2..], &[4, 4], "sub-groups of 8: 4 work-items, and 32 in four");
        for m in [out, info_buf] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(prog)));
    }
    ok!(cl!(clReleaseCommandQueue(def)));
}

/// `enqueue_kernel`'s results for what kernel code gets wrong, events it never made,
/// a child waiting for a user event nobody sets (the host command fails; it does not
/// hang) and a child that faults, then a good launch on the same queue.
const MISTAKES: &str = r#"
kernel void mistakes(global int *out, queue_t other) {
    queue_t q = get_default_queue();
    out[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(0), ^{ out[9] = 1; });
    queue_t none = CLK_NULL_QUEUE;
    out[1] = enqueue_kernel(none, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^{ out[9] = 1; });
    // An event nobody made, and one released.
    ulong bits = 0x12345;
    clk_event_t junk = *(clk_event_t *)&bits;
    clk_event_t gone = create_user_event();
    release_event(gone);
    out[7] = is_valid_event(gone);
    clk_event_t e;
    out[2] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &junk, &e, ^{ out[9] = 1; });
    out[3] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^(local void *p) { out[9] = 1; }, 0u);
    out[4] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(8, 3000000), ^{ out[9] = 1; });
    out[5] = is_valid_event(junk) || enqueue_marker(q, 1, &gone, &e) != CLK_INVALID_EVENT_WAIT_LIST;
    release_event(junk);
    retain_event(junk);
    set_user_event_status(junk, CL_COMPLETE);
    // A queue of its own, sized for two commands: the third finds it full.
    int r[3];
    for (int i = 0; i < 3; i++) r[i] = enqueue_kernel(other, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1), ^{ atomic_inc(&out[8]); });
    out[6] = r[0] == CLK_SUCCESS && r[1] == CLK_SUCCESS && r[2] == CLK_DEVICE_QUEUE_FULL;
    // A wait list longer than any that can exist.
    out[10] = enqueue_marker(q, 0xffffffffu, &e, &e);
}

kernel void faulty(global int *out) {
    out[0] = 3;
    enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                   ^{ *(volatile global int *)0 = 1; });
}

kernel void stuck(global int *out) {
    clk_event_t never = create_user_event();
    clk_event_t e;
    out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &never, &e,
                            ^{ out[1] = 1; });
}
"#;

#[test]
fn mistakes_in_kernel_code_get_clk_errors_and_a_stuck_tree_fails_its_command() {
    let env = Env::new();
    let def = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, None);
    let small = device_queue(&env, 0, Some(32));
    let prog = build(&env, MISTAKES, "-cl-std=CL2.0");
    let k = kernel(prog, "mistakes");
    let out = buffer_of(&env, &[0i32; 11]);
    set_arg(k, 0, &out);
    set_arg(k, 1, &small);
    assert_eq!(run_status(&env, k, 1, 1), CL_COMPLETE);
    let got: Vec<i32> = read_as(&env, out, 11);
    const INVALID_NDRANGE: i32 = -160;
    const INVALID_QUEUE: i32 = -102;
    const INVALID_EVENT_WAIT_LIST: i32 = -57;
    const INVALID_ARG_SIZE: i32 = -51;
    assert_eq!(
        &got[..6],
        &[INVALID_NDRANGE, INVALID_QUEUE, INVALID_EVENT_WAIT_LIST, INVALID_ARG_SIZE, INVALID_NDRANGE, 0]
    );
    assert_eq!((got[6], got[7]), (1, 0), "the third command finds a two-command queue full");
    assert_eq!((got[8], got[9]), (2, 0), "the two accepted commands ran, no refused one did");
    assert_eq!(got[10], INVALID_EVENT_WAIT_LIST);

    let stuck = kernel(prog, "stuck");
    let out2 = buffer_of(&env, &[7i32; 2]);
    set_arg(stuck, 0, &out2);
    assert!(run_status(&env, stuck, 1, 1) < 0, "a tree that cannot finish fails its command");
    let got: Vec<i32> = read_as(&env, out2, 2);
    assert_eq!(got, [0, 7], "enqueued, never run");
    // A child that faults fails its host command, not the process.
    let faulty = kernel(prog, "faulty");
    set_arg(faulty, 0, &out2);
    assert!(run_status(&env, faulty, 1, 1) < 0, "a faulting child fails the command");
    ok!(cl!(clReleaseKernel(faulty)));
    // The queue goes on.
    assert_eq!(run_status(&env, k, 1, 1), CL_COMPLETE);
    for m in [out, out2] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    for kk in [k, stuck] {
        ok!(cl!(clReleaseKernel(kk)));
    }
    ok!(cl!(clReleaseProgram(prog)));
    for q in [small, def] {
        ok!(cl!(clReleaseCommandQueue(q)));
    }
}

/// `capture_event_profiling_info`: the child's execution time and the time with its own
/// children, written when it completes.
#[test]
fn profiling_info_is_captured_when_a_child_completes() {
    let env = Env::new();
    let def = device_queue(&env, CL_QUEUE_ON_DEVICE_DEFAULT, None);
    let source = r#"
        void spin(global ulong *t) { ulong x = 1; for (int i = 0; i < 200000; i++) x = x * 3 + i; t[3] = x; }
        kernel void timed(global ulong *times) {
            clk_event_t e;
            int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1), 0, 0, &e,
                                   ^{ spin(times); enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL,
                                                                  ndrange_1D(1), ^{ spin(times); }); });
            capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, times);
            release_event(e);
            times[2] = r;
        }"#;
    let prog = build(&env, source, "-cl-std=CL2.0");
    let k = kernel(prog, "timed");
    let times = buffer_of(&env, &[0u64; 4]);
    set_arg(k, 0, &times);
    assert_eq!(run_status(&env, k, 1, 1), CL_COMPLETE);
    let t: Vec<u64> = read_as(&env, times, 3);
    assert_eq!(t[2], 0);
    assert!(t[0] > 0 && t[1] > t[0], "execution {} ns, with the child {} ns", t[0], t[1]);
    ok!(cl!(clReleaseMemObject(times)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(prog)));
    ok!(cl!(clReleaseCommandQueue(def)));
}
