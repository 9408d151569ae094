//! OpenCL 2.0 pipes: `clCreatePipe` and `clGetPipeInfo` with their errors, pipes as
//! kernel arguments (and not as buffers), and kernels moving packets through them:
//! plain reads and writes, a full pipe refusing writes, reservations by work-item, by
//! work-group and by sub-group, and the queries, against host references.

use crate::common::*;

fn pipe(env: &Env, packet: cl_uint, count: cl_uint) -> cl_mem {
    let (p, e) = with_err(|e| cl!(clCreatePipe(env.context, 0, packet, count, null(), e)));
    ok!(e);
    p
}

#[test]
fn pipes_are_created_and_queried_with_the_specs_errors() {
    let env = Env::new();
    let support: cl_bool = device_info(env.device, CL_DEVICE_PIPE_SUPPORT);
    assert_eq!(support, CL_TRUE);
    let most: cl_uint = device_info(env.device, CL_DEVICE_PIPE_MAX_PACKET_SIZE);
    assert!(most >= 1024);
    let features = info_bytes(|n, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_OPENCL_C_FEATURES, n, v, r)));
    assert!(String::from_utf8_lossy(&features).contains("__opencl_c_pipes"));

    for (flags, packet, count, code) in [
        (0, 0, 16, CL_INVALID_PIPE_SIZE),
        (0, 4, 0, CL_INVALID_PIPE_SIZE),
        (0, most + 1, 16, CL_INVALID_PIPE_SIZE),
        (CL_MEM_READ_ONLY, 4, 16, CL_INVALID_VALUE),
        (CL_MEM_COPY_HOST_PTR, 4, 16, CL_INVALID_VALUE),
    ] {
        let (p, e) = with_err(|e| cl!(clCreatePipe(env.context, flags, packet, count, null(), e)));
        assert!(p.is_null());
        assert_eq!(e, code, "flags {flags:#x}, {count} packets of {packet} bytes");
    }
    let props: [cl_pipe_properties; 3] = [0x1234, 1, 0];
    let (_, e) = with_err(|e| cl!(clCreatePipe(env.context, 0, 4, 16, props.as_ptr(), e)));
    err!(CL_INVALID_VALUE, e);
    let (_, e) = with_err(|e| cl!(clCreatePipe(null_mut(), 0, 4, 16, null(), e)));
    err!(CL_INVALID_CONTEXT, e);

    let p = pipe(&env, 12, 100);
    let packet: cl_uint = info(|n, v, r| cl!(clGetPipeInfo(p, CL_PIPE_PACKET_SIZE, n, v, r)));
    let count: cl_uint = info(|n, v, r| cl!(clGetPipeInfo(p, CL_PIPE_MAX_PACKETS, n, v, r)));
    assert_eq!((packet, count), (12, 100));
    let kind: cl_mem_object_type = mem_info(p, CL_MEM_TYPE);
    assert_eq!(kind, CL_MEM_OBJECT_PIPE);
    err!(CL_INVALID_VALUE, cl!(clGetPipeInfo(p, 0x7777, 0, null_mut(), null_mut())));
    let b = env.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    err!(CL_INVALID_MEM_OBJECT, cl!(clGetPipeInfo(b, CL_PIPE_PACKET_SIZE, 0, null_mut(), null_mut())));
    // A pipe is no buffer: the host cannot read it, nor make sub-buffers or images of it.
    let mut out = [0u8; 16];
    let read = cl!(clEnqueueReadBuffer(env.queue, p, CL_TRUE, 0, 16, out.as_mut_ptr().cast(), 0, null(), null_mut()));
    err!(CL_INVALID_MEM_OBJECT, read);
    let region = cl_buffer_region { origin: 0, size: 16 };
    let (_, e) = with_err(|e| {
        cl!(clCreateSubBuffer(p, 0, CL_BUFFER_CREATE_TYPE_REGION, (&region as *const cl_buffer_region).cast(), e))
    });
    err!(CL_INVALID_MEM_OBJECT, e);

    let prog = build(&env, "kernel void k(read_only pipe int in, global int *out) { out[0] = 1; }", "-cl-std=CL3.0");
    let k = kernel(prog, "k");
    let qual: cl_bitfield = info(|n, v, r| cl!(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, n, v, r)));
    assert_eq!(qual & CL_KERNEL_ARG_TYPE_PIPE as cl_bitfield, CL_KERNEL_ARG_TYPE_PIPE as cl_bitfield);
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArg(k, 0, size_of::<cl_mem>(), (&b as *const cl_mem).cast())));
    err!(CL_INVALID_MEM_OBJECT, cl!(clSetKernelArg(k, 1, size_of::<cl_mem>(), (&p as *const cl_mem).cast())));
    err!(CL_INVALID_ARG_SIZE, cl!(clSetKernelArg(k, 0, 4, (&p as *const cl_mem).cast())));
    ok!(cl!(clSetKernelArg(k, 0, size_of::<cl_mem>(), (&p as *const cl_mem).cast())));
    for m in [p, b] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(prog)));
}

const KERNELS: &str = r#"
kernel void produce(global const int *src, write_only pipe int out, global int *written) {
    int v = src[get_global_id(0)];
    if (write_pipe(out, &v) == 0) atomic_inc(written);
}
kernel void consume(read_only pipe int in, global int *dst, global int *count) {
    int v;
    if (read_pipe(in, &v) == 0) dst[atomic_inc(count)] = v;
}
kernel void produce_reserved(global const int *src, write_only pipe int out) {
    reserve_id_t r = reserve_write_pipe(out, 2);
    if (is_valid_reserve_id(r)) {
        write_pipe(out, r, 1, &src[2 * get_global_id(0) + 1]);
        write_pipe(out, r, 0, &src[2 * get_global_id(0)]);
        commit_write_pipe(out, r);
    }
}
kernel void produce_group(global const int *src, write_only pipe int out) {
    reserve_id_t r = work_group_reserve_write_pipe(out, get_local_size(0));
    if (is_valid_reserve_id(r)) {
        write_pipe(out, r, get_local_id(0), &src[get_global_id(0)]);
        work_group_commit_write_pipe(out, r);
    }
}
kernel void consume_group(read_only pipe int in, global int *dst) {
    reserve_id_t r = work_group_reserve_read_pipe(in, get_local_size(0));
    if (is_valid_reserve_id(r)) {
        read_pipe(in, r, get_local_id(0), &dst[get_global_id(0)]);
        work_group_commit_read_pipe(in, r);
    }
}
kernel void produce_sub_group(global const int *src, write_only pipe int out) {
    reserve_id_t r = sub_group_reserve_write_pipe(out, get_sub_group_size());
    if (is_valid_reserve_id(r)) {
        write_pipe(out, r, get_sub_group_local_id(), &src[get_global_id(0)]);
        sub_group_commit_write_pipe(out, r);
    }
}
kernel void consume_sub_group(read_only pipe int in, global int *dst) {
    reserve_id_t r = sub_group_reserve_read_pipe(in, get_sub_group_size());
    if (is_valid_reserve_id(r)) {
        read_pipe(in, r, get_sub_group_local_id(), &dst[get_global_id(0)]);
        sub_group_commit_read_pipe(in, r);
    }
}
kernel void counts(read_only pipe int in, global uint *out) {
    out[0] = get_pipe_num_packets(in);
    out[1] = get_pipe_max_packets(in);
}
"#;

fn sorted(mut v: Vec<i32>) -> Vec<i32> {
    v.sort_unstable();
    v
}

/// Sets every argument of `k` from `args` (memory objects).
fn args(k: cl_kernel, mems: &[cl_mem]) {
    for (i, m) in mems.iter().enumerate() {
        set_arg(k, i as cl_uint, m);
    }
}

#[test]
fn kernels_move_packets_through_pipes_alone_and_by_reservation() {
    let env = Env::new();
    let prog = build(&env, KERNELS, "-cl-std=CL3.0");
    const N: usize = 1024;
    let data: Vec<i32> = (0..N as i32).map(|i| i * 7 - 300).collect();
    let src = buffer_of(&env, &data);
    let dst = buffer_of(&env, &[0i32; N]);
    let zero = || buffer_of(&env, &[0i32; 1]);

    // Plain writes then reads, in groups of 64; every packet arrives once.
    let p = pipe(&env, 4, N as cl_uint);
    let (written, count) = (zero(), zero());
    let (produce, consume, counts) = (kernel(prog, "produce"), kernel(prog, "consume"), kernel(prog, "counts"));
    args(produce, &[src, p, written]);
    run(&env, produce, &[N], Some(&[64]));
    let sizes = buffer_of(&env, &[0u32; 2]);
    args(counts, &[p, sizes]);
    run(&env, counts, &[1], None);
    assert_eq!(read_as::<u32>(&env, sizes, 2), [N as u32, N as u32]);
    args(consume, &[p, dst, count]);
    run(&env, consume, &[N], Some(&[64]));
    assert_eq!(read_as::<i32>(&env, count, 1), [N as i32]);
    assert_eq!(sorted(read_as(&env, dst, N)), sorted(data.clone()));
    // Empty now: reads fail and leave the count.
    run(&env, consume, &[N], Some(&[64]));
    assert_eq!(read_as::<i32>(&env, count, 1), [N as i32]);

    // A pipe of 100 packets takes 100 of the 1024 writes.
    let small = pipe(&env, 4, 100);
    let (written, count) = (zero(), zero());
    args(produce, &[src, small, written]);
    run(&env, produce, &[N], Some(&[64]));
    assert_eq!(read_as::<i32>(&env, written, 1), [100]);
    args(consume, &[small, dst, count]);
    run(&env, consume, &[N], Some(&[64]));
    assert_eq!(read_as::<i32>(&env, count, 1), [100]);
    let got = sorted(read_as::<i32>(&env, dst, 100));
    assert!(got.iter().all(|v| data.contains(v)), "{got:?}");

    // Reservations of two packets by each work-item, written out of order; read back
    // by work-group reservations, in order within each pair.
    let q = pipe(&env, 4, N as cl_uint);
    let reserved = kernel(prog, "produce_reserved");
    args(reserved, &[src, q]);
    run(&env, reserved, &[N / 2], Some(&[32]));
    let group_reader = kernel(prog, "consume_group");
    args(group_reader, &[q, dst]);
    run(&env, group_reader, &[N], Some(&[64]));
    let got: Vec<i32> = read_as(&env, dst, N);
    assert_eq!(sorted(got.clone()), sorted(data.clone()));
    for pair in got.chunks(2) {
        assert_eq!(pair[1], pair[0] + 7, "a reservation's packets stay in order: {pair:?}");
    }

    // Work-group and sub-group reservations: each group's or sub-group's packets are
    // consecutive in the pipe, so read back the same way they arrive whole.
    for (writer, reader, local) in
        [("produce_group", "consume_group", 128), ("produce_sub_group", "consume_sub_group", 64)]
    {
        let r = pipe(&env, 4, N as cl_uint);
        let (w, rd) = (kernel(prog, writer), kernel(prog, reader));
        args(w, &[src, r]);
        args(rd, &[r, dst]);
        run(&env, w, &[N], Some(&[local]));
        run(&env, rd, &[N], Some(&[local]));
        let got: Vec<i32> = read_as(&env, dst, N);
        assert_eq!(sorted(got), sorted(data.clone()), "{writer} then {reader}");
        ok!(cl!(clReleaseKernel(w)));
        ok!(cl!(clReleaseKernel(rd)));
        ok!(cl!(clReleaseMemObject(r)));
    }

    for k in [produce, consume, counts, reserved, group_reader] {
        ok!(cl!(clReleaseKernel(k)));
    }
    for m in [src, dst, p, small, q, sizes] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(prog)));
}
