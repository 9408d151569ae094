//! Command queues: both creation calls, properties, queries and bad input.

use crate::common::*;

fn queue_info<T: Copy>(q: cl_command_queue, p: cl_command_queue_info) -> T {
    info(|s, v, r| cl!(clGetCommandQueueInfo(q, p, s, v, r)))
}

#[test]
fn create_and_query() {
    let env = Env::with_queue(CL_QUEUE_PROFILING_ENABLE);
    assert_eq!(queue_info::<cl_context>(env.queue, CL_QUEUE_CONTEXT), env.context);
    assert_eq!(queue_info::<cl_device_id>(env.queue, CL_QUEUE_DEVICE), env.device);
    assert_eq!(queue_info::<cl_command_queue_properties>(env.queue, CL_QUEUE_PROPERTIES), CL_QUEUE_PROFILING_ENABLE);
    assert_eq!(queue_info::<cl_uint>(env.queue, CL_QUEUE_REFERENCE_COUNT), 1);
    assert!(info_bytes(|s, v, r| cl!(clGetCommandQueueInfo(env.queue, CL_QUEUE_PROPERTIES_ARRAY, s, v, r))).is_empty());
    assert!(queue_info::<cl_command_queue>(env.queue, CL_QUEUE_DEVICE_DEFAULT).is_null());
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clGetCommandQueueInfo(env.queue, CL_QUEUE_SIZE, 0, null_mut(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clGetCommandQueueInfo(env.queue, 0xdead, 0, null_mut(), null_mut())));
    ok!(cl!(clRetainCommandQueue(env.queue)));
    assert_eq!(queue_info::<cl_uint>(env.queue, CL_QUEUE_REFERENCE_COUNT), 2);
    ok!(cl!(clReleaseCommandQueue(env.queue)));
    ok!(cl!(clFlush(env.queue)));
    ok!(cl!(clFinish(env.queue)));
}

#[test]
fn create_with_properties() {
    let env = Env::new();
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE,
        0,
    ];
    let (q, e) = with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, props.as_ptr(), e)));
    ok!(e);
    let arr = info_bytes(|s, v, r| cl!(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, s, v, r)));
    assert_eq!(arr, props.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>());
    assert_eq!(
        queue_info::<cl_command_queue_properties>(q, CL_QUEUE_PROPERTIES),
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE
    );
    ok!(cl!(clReleaseCommandQueue(q)));
    let (q, e) = with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, null(), e)));
    ok!(e);
    ok!(cl!(clReleaseCommandQueue(q)));
}

#[test]
fn bad_queue_arguments() {
    let env = Env::new();
    let bad = |props: cl_command_queue_properties| {
        let (q, e) = with_err(|e| cl!(clCreateCommandQueue(env.context, env.device, props, e)));
        assert!(q.is_null());
        e
    };
    err!(CL_INVALID_VALUE, bad(1 << 20));
    // Invalid combinations (not merely unsupported ones): an on-device queue must be
    // out of order; the default on-device queue must be an on-device queue.
    err!(CL_INVALID_VALUE, bad(CL_QUEUE_ON_DEVICE));
    err!(CL_INVALID_VALUE, bad(CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE));
    let with = |props: &[cl_queue_properties]| {
        with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, props.as_ptr(), e))).1
    };
    err!(CL_INVALID_VALUE, with(&[0x7777, 0, 0]));
    // A size belongs to on-device queues only, and at most the device's largest.
    err!(CL_INVALID_VALUE, with(&[CL_QUEUE_SIZE as cl_queue_properties, 16, 0]));
    let on_device = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    let most: cl_uint = device_info(env.device, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    err!(
        CL_INVALID_VALUE,
        with(&[
            CL_QUEUE_PROPERTIES as cl_queue_properties,
            on_device,
            CL_QUEUE_SIZE as cl_queue_properties,
            most as cl_queue_properties + 1,
            0
        ])
    );
    let (_, e) = with_err(|e| cl!(clCreateCommandQueue(env.context, env.context as cl_device_id, 0, e)));
    err!(CL_INVALID_DEVICE, e);
    let (_, e) = with_err(|e| cl!(clCreateCommandQueue(env.queue as cl_context, env.device, 0, e)));
    err!(CL_INVALID_CONTEXT, e);
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFinish(env.context as cl_command_queue)));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clSetDefaultDeviceCommandQueue(env.context, env.device, null_mut())));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFlush(env.context as cl_command_queue)));
}

fn threads_of_this_process() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
}

/// Child: 4,000 queues, each with a kernel waiting for one user event, and a queue whose
/// kernel must run meanwhile; prints the process's threads before and while they wait.
#[test]
#[ignore]
fn child_makes_four_thousand_queues() {
    let env = Env::new();
    let p = build(&env, "kernel void inc(global int *a) { atomic_inc(a); }", "");
    let k = kernel(p, "inc");
    let buf = buffer_of(&env, &[0i32]);
    set_arg(k, 0, &buf);
    run(&env, k, &[1], None);
    let before = threads_of_this_process();
    let (gate, e) = with_err(|e| cl!(clCreateUserEvent(env.context, e)));
    ok!(e);
    let mut queues = Vec::new();
    for _ in 0..4000 {
        let (q, e) = with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, null(), e)));
        ok!(e);
        let one = [1usize];
        ok!(cl!(clEnqueueNDRangeKernel(q, k, 1, null(), one.as_ptr(), null(), 1, &gate, null_mut())));
        ok!(cl!(clFlush(q)));
        queues.push(q);
    }
    // Another queue's kernel runs while those wait.
    let (free, e) = with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, null(), e)));
    ok!(e);
    let one = [1usize];
    let mut done = null_mut();
    ok!(cl!(clEnqueueNDRangeKernel(free, k, 1, null(), one.as_ptr(), null(), 0, null(), &mut done)));
    ok!(cl!(clWaitForEvents(1, &done)));
    std::thread::sleep(std::time::Duration::from_millis(200));
    println!("threads {before} {}", threads_of_this_process());
    ok!(cl!(clSetUserEventStatus(gate, CL_COMPLETE)));
    for q in queues.iter().chain([&free]) {
        ok!(cl!(clFinish(*q)));
        ok!(cl!(clReleaseCommandQueue(*q)));
    }
    println!("count {}", read_as::<i32>(&env, buf, 1)[0]);
    for e in [done, gate] {
        ok!(cl!(clReleaseEvent(e)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseMemObject(buf)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Queues share a bounded set of threads, and a queue waiting for an event holds none:
/// 4,000 queues whose commands wait add at most twice the cores (at least 4) threads
/// (each added one: 4,001 threads), and all run once the event completes.
#[test]
fn four_thousand_queues_share_a_few_threads() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "queues::child_makes_four_thousand_queues", "--nocapture"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed ({:?}): {text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text.lines().find_map(|l| l.strip_prefix("threads ")).expect("the child counts its threads");
    let (before, during) =
        line.split_once(' ').map(|(a, b)| (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap())).unwrap();
    let bound = (std::thread::available_parallelism().unwrap().get() * 2).max(4);
    assert!(during <= before + bound, "{during} threads with 4,000 queues waiting, {before} before (bound {bound})");
    assert!(text.contains("count 4002\n"), "every kernel ran: {text}");
}

/// Application threads launching small kernels of several groups at once, each on its
/// own queue, all finish with every launch counted. Their issuing threads run groups
/// beside each other; one that left its groups to workers it had not woken waited for
/// ever (8 threads on the 2-core machine: 2 of 6 three-second runs hung).
#[test]
fn threads_launching_small_kernels_at_once_all_finish() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 400;
    const BATCH: usize = 20;
    let env = Env::new();
    let p = build(&env, "kernel void k(global int *x) { x[get_global_id(0)] += 1; }", "");
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    for _ in 0..THREADS {
        // A thread that panics drops its sender unsent: `recv_timeout` then says so.
        let (context, device, p) = (env.context as usize, env.device as usize, p as usize);
        let done = done_tx.clone();
        std::thread::spawn(move || {
            let mut e = 0;
            let q = cl!(clCreateCommandQueue(context as cl_context, device as cl_device_id, 0, &mut e));
            ok!(e);
            let k = kernel(p as cl_program, "k");
            let zeros = vec![0i32; 64];
            let m = cl!(clCreateBuffer(
                context as cl_context,
                CL_MEM_COPY_HOST_PTR,
                64 * 4,
                zeros.as_ptr() as *mut c_void,
                &mut e
            ));
            ok!(e);
            set_arg(k, 0, &m);
            let (global, local) = (64usize, 8usize);
            for _ in 0..ROUNDS {
                for _ in 0..BATCH {
                    ok!(cl!(clEnqueueNDRangeKernel(q, k, 1, null(), &global, &local, 0, null(), null_mut())));
                }
                ok!(cl!(clFinish(q)));
            }
            let mut out = vec![0i32; 64];
            ok!(cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 64 * 4, out.as_mut_ptr().cast(), 0, null(), null_mut())));
            ok!(cl!(clReleaseMemObject(m)));
            ok!(cl!(clReleaseKernel(k)));
            ok!(cl!(clReleaseCommandQueue(q)));
            let _ = done.send(out);
        });
    }
    drop(done_tx);
    for t in 0..THREADS {
        let out = done_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{t} of {THREADS} threads finished ({e}): a launch hung or failed"));
        assert!(out.iter().all(|&x| x == (ROUNDS * BATCH) as i32), "every launch ran once: {out:?}");
    }
    ok!(cl!(clReleaseProgram(p)));
}

/// Groups of one work-item that each spin a while and record how many ran at once.
/// Indexed by group: a kernel of global ids alone may run neighbouring groups of one
/// work-item in the lanes of one core, which would count as groups at once.
const OVERLAP: &str = r#"
kernel void overlap(global volatile int *now, global int *most, global int *out) {
    int n = atomic_inc(now) + 1;
    atomic_max(most, n);
    int x = 0;
    for (int i = 0; i < 400000 && *now < 1000; i++) x += i;
    atomic_dec(now);
    out[get_group_id(0)] = x + 1;
}
"#;

/// The most groups of `OVERLAP` that ran at once on `env`'s queue, over 32 groups.
fn most_at_once(env: &Env) -> i32 {
    let p = build(env, OVERLAP, "");
    let k = kernel(p, "overlap");
    let (now, most, out) = (buffer_of(env, &[0i32]), buffer_of(env, &[0i32]), env.buffer(0, 32 * 4, null_mut()));
    set_arg(k, 0, &now);
    set_arg(k, 1, &most);
    set_arg(k, 2, &out);
    run(env, k, &[32], Some(&[1]));
    let sums: Vec<i32> = read_as(env, out, 32);
    assert!(sums.iter().all(|&s| s == sums[0] && s != 0), "{sums:?}");
    let m = read_as::<i32>(env, most, 1)[0];
    for b in [now, most, out] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
    m
}

#[test]
fn priority_and_throttle_hints() {
    let mut env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    for name in ["cl_khr_priority_hints", "cl_khr_throttle_hints", "cl_khr_create_command_queue"] {
        assert!(ext.split(' ').any(|e| e == name), "{name} in {ext}");
    }
    let create = |props: &[cl_queue_properties]| {
        with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, props.as_ptr(), e)))
    };
    let (priority, throttle) =
        (CL_QUEUE_PRIORITY_KHR as cl_queue_properties, CL_QUEUE_THROTTLE_KHR as cl_queue_properties);
    // Exactly one of high, medium and low.
    for bad in [0, 3, 1 << 3] {
        for name in [priority, throttle] {
            let (q, e) = create(&[name, bad, 0]);
            assert!(q.is_null());
            err!(CL_INVALID_VALUE, e);
        }
    }
    // "CL_INVALID_QUEUE_PROPERTIES" for a hint on an on-device queue.
    let on_device = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    let (q, e) = create(&[CL_QUEUE_PROPERTIES as cl_queue_properties, on_device, priority, 1, 0]);
    assert!(q.is_null());
    err!(CL_INVALID_QUEUE_PROPERTIES, e);

    // A high-priority queue runs kernels like any; its properties read back.
    let props = [priority, CL_QUEUE_PRIORITY_HIGH_KHR as cl_queue_properties, 0];
    let (q, e) = create(&props);
    ok!(e);
    let arr = info_bytes(|s, v, r| cl!(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, s, v, r)));
    assert_eq!(arr, props.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>());
    ok!(cl!(clReleaseCommandQueue(env.queue)));
    env.queue = q;
    most_at_once(&env);

    // A low-throttle queue's launches take half the cores.
    let (q, e) = create(&[throttle, CL_QUEUE_THROTTLE_LOW_KHR as cl_queue_properties, 0]);
    ok!(e);
    ok!(cl!(clReleaseCommandQueue(env.queue)));
    env.queue = q;
    let units: cl_uint = device_info(env.device, CL_DEVICE_MAX_COMPUTE_UNITS);
    let most = most_at_once(&env);
    assert!(most >= 1 && most as cl_uint <= units.div_ceil(2), "{most} groups at once of {units} cores");

    // cl_khr_create_command_queue's entry point is the core one.
    let (platform, _) = platform_device();
    let f = cl!(clGetExtensionFunctionAddressForPlatform(platform, c"clCreateCommandQueueWithPropertiesKHR".as_ptr()));
    assert!(!f.is_null());
    type Create =
        unsafe extern "C" fn(cl_context, cl_device_id, *const cl_queue_properties, *mut cl_int) -> cl_command_queue;
    // SAFETY: the extension's signature, from the platform that gave it.
    let f = unsafe { std::mem::transmute::<*mut c_void, Create>(f) };
    let mut e = 0;
    // SAFETY: valid handles and a zero-terminated (empty) property list.
    let q = unsafe { f(env.context, env.device, [0].as_ptr(), &mut e) };
    ok!(e);
    ok!(cl!(clReleaseCommandQueue(q)));
}
