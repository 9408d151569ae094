//! Buffers: every creation flag, sub-buffers, queries, destructor callbacks, bad input.

use std::sync::Mutex;

use crate::common::*;

#[test]
fn host_pointer_flags() {
    let env = Env::new();
    // USE_HOST_PTR: the application's memory is the buffer.
    let mut host = pattern(256, 1);
    let m = env.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 256, host.as_mut_ptr().cast());
    assert_eq!(mem_info::<*mut c_void>(m, CL_MEM_HOST_PTR), host.as_mut_ptr().cast());
    let new = pattern(16, 9);
    ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_TRUE, 8, 16, new.as_ptr().cast(), 0, null(), null_mut())));
    assert_eq!(&host[8..24], &new[..]);
    ok!(cl!(clReleaseMemObject(m)));

    // COPY_HOST_PTR: a copy; later changes to the host memory do not show.
    let mut src = pattern(100, 3);
    let m = env.buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 100, src.as_mut_ptr().cast());
    let want = src.clone();
    src.fill(0);
    assert_eq!(env.read(m, 100), want);
    assert!(mem_info::<*mut c_void>(m, CL_MEM_HOST_PTR).is_null());
    ok!(cl!(clReleaseMemObject(m)));

    // ALLOC_HOST_PTR with and without COPY_HOST_PTR; a plain buffer starts zeroed.
    let m = env.buffer(CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, 100, want.as_ptr() as *mut c_void);
    assert_eq!(env.read(m, 100), want);
    ok!(cl!(clReleaseMemObject(m)));
    let m = env.buffer(CL_MEM_ALLOC_HOST_PTR, 64, null_mut());
    assert_eq!(env.read(m, 64), vec![0; 64]);
    ok!(cl!(clReleaseMemObject(m)));
}

/// Buffers from 2 MiB on are mapped on huge pages rather than taken from the heap:
/// the same contract (zeroed, copied, sub-buffers, mapping), sizes off the page size.
#[test]
fn large_buffers() {
    let env = Env::new();
    for size in [2 << 20, (5 << 20) + 12345] {
        let m = env.buffer(0, size, null_mut());
        assert!(env.read(m, size).iter().all(|&b| b == 0), "a new buffer reads as zeros");
        let data = pattern(size, 7);
        ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_TRUE, 0, size, data.as_ptr().cast(), 0, null(), null_mut())));
        assert!(env.read(m, size) == data);
        // The last bytes, through a sub-buffer and a map.
        let origin = (size - 4096) / 1024 * 1024;
        let (sub, e) = sub_buffer(m, CL_MEM_READ_WRITE, origin, size - origin);
        ok!(e);
        assert!(env.read(sub, size - origin) == data[origin..]);
        let mut err = 0;
        let p =
            cl!(clEnqueueMapBuffer(env.queue, m, CL_TRUE, CL_MAP_READ, size - 1, 1, 0, null(), null_mut(), &mut err));
        ok!(err);
        assert_eq!(unsafe { *(p as *const u8) }, data[size - 1]);
        ok!(cl!(clEnqueueUnmapMemObject(env.queue, m, p, 0, null(), null_mut())));
        ok!(cl!(clFinish(env.queue)));
        ok!(cl!(clReleaseMemObject(sub)));
        ok!(cl!(clReleaseMemObject(m)));
    }
    // COPY_HOST_PTR of a large region.
    let mut src = pattern(3 << 20, 5);
    let m = env.buffer(CL_MEM_COPY_HOST_PTR, src.len(), src.as_mut_ptr().cast());
    assert!(env.read(m, src.len()) == src);
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn queries() {
    let env = Env::new();
    let m = env.buffer(0, 1000, null_mut());
    assert_eq!(mem_info::<cl_mem_object_type>(m, CL_MEM_TYPE), CL_MEM_OBJECT_BUFFER);
    // "If flags is 0, the default is used which is CL_MEM_READ_WRITE."
    assert_eq!(mem_info::<cl_mem_flags>(m, CL_MEM_FLAGS), CL_MEM_READ_WRITE);
    assert_eq!(mem_info::<usize>(m, CL_MEM_SIZE), 1000);
    assert_eq!(mem_info::<cl_context>(m, CL_MEM_CONTEXT), env.context);
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 0);
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_REFERENCE_COUNT), 1);
    assert!(mem_info::<cl_mem>(m, CL_MEM_ASSOCIATED_MEMOBJECT).is_null());
    assert_eq!(mem_info::<usize>(m, CL_MEM_OFFSET), 0);
    assert_eq!(mem_info::<cl_bool>(m, CL_MEM_USES_SVM_POINTER), CL_FALSE);
    assert!(info_bytes(|s, v, r| cl!(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, s, v, r))).is_empty());
    ok!(cl!(clRetainMemObject(m)));
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_REFERENCE_COUNT), 2);
    ok!(cl!(clReleaseMemObject(m)));
    err!(CL_INVALID_VALUE, cl!(clGetMemObjectInfo(m, 0xdead, 0, null_mut(), null_mut())));
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn with_properties() {
    let env = Env::new();
    let empty: [cl_mem_properties; 1] = [0];
    let (m, e) = with_err(|e| cl!(clCreateBufferWithProperties(env.context, empty.as_ptr(), 0, 64, null_mut(), e)));
    ok!(e);
    assert_eq!(info_bytes(|s, v, r| cl!(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, s, v, r))), vec![0u8; 8]);
    ok!(cl!(clReleaseMemObject(m)));
    let bad: [cl_mem_properties; 3] = [0x7777, 1, 0];
    let (m, e) = with_err(|e| cl!(clCreateBufferWithProperties(env.context, bad.as_ptr(), 0, 64, null_mut(), e)));
    assert!(m.is_null());
    err!(CL_INVALID_PROPERTY, e);
}

#[test]
fn bad_buffer_arguments() {
    let env = Env::new();
    let mut host = [0u8; 16];
    let h = host.as_mut_ptr().cast::<c_void>();
    let create = |flags, size, ptr| {
        let (m, e) = with_err(|e| cl!(clCreateBuffer(env.context, flags, size, ptr, e)));
        assert!(m.is_null());
        e
    };
    err!(CL_INVALID_BUFFER_SIZE, create(0, 0, null_mut()));
    let max: cl_ulong = device_info(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    err!(CL_INVALID_BUFFER_SIZE, create(0, max as usize + 1, null_mut()));
    err!(CL_INVALID_BUFFER_SIZE, create(0, usize::MAX, null_mut()));
    err!(CL_INVALID_HOST_PTR, create(CL_MEM_USE_HOST_PTR, 16, null_mut()));
    err!(CL_INVALID_HOST_PTR, create(CL_MEM_COPY_HOST_PTR, 16, null_mut()));
    err!(CL_INVALID_HOST_PTR, create(CL_MEM_READ_WRITE, 16, h));
    err!(CL_INVALID_VALUE, create(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 16, null_mut()));
    err!(CL_INVALID_VALUE, create(CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 16, null_mut()));
    err!(CL_INVALID_VALUE, create(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 16, h));
    err!(CL_INVALID_VALUE, create(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 16, h));
    err!(CL_INVALID_VALUE, create(1 << 40, 16, null_mut()));
    let (_, e) = with_err(|e| cl!(clCreateBuffer(env.queue as cl_context, 0, 16, null_mut(), e)));
    err!(CL_INVALID_CONTEXT, e);
}

fn sub_buffer(parent: cl_mem, flags: cl_mem_flags, origin: usize, size: usize) -> (cl_mem, cl_int) {
    let region = cl_buffer_region { origin, size };
    with_err(|e| {
        cl!(clCreateSubBuffer(
            parent,
            flags,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            e
        ))
    })
}

#[test]
fn sub_buffers_alias_their_parent() {
    let env = Env::new();
    let align = device_info::<cl_uint>(env.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) as usize / 8;
    let mut host = pattern(4 * align, 5);
    let parent = env.buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host.len(), host.as_mut_ptr().cast());
    let (sub, e) = sub_buffer(parent, 0, align, 2 * align);
    ok!(e);
    assert_eq!(mem_info::<cl_mem>(sub, CL_MEM_ASSOCIATED_MEMOBJECT), parent);
    assert_eq!(mem_info::<usize>(sub, CL_MEM_OFFSET), align);
    assert_eq!(mem_info::<usize>(sub, CL_MEM_SIZE), 2 * align);
    // Flags not given are inherited.
    assert_eq!(mem_info::<cl_mem_flags>(sub, CL_MEM_FLAGS), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR);
    assert_eq!(mem_info::<*mut u8>(sub, CL_MEM_HOST_PTR), unsafe { host.as_mut_ptr().add(align) });
    assert_eq!(env.read(sub, 2 * align), host[align..3 * align].to_vec());
    let ones = vec![1u8; 8];
    ok!(cl!(clEnqueueWriteBuffer(env.queue, sub, CL_TRUE, 0, 8, ones.as_ptr().cast(), 0, null(), null_mut())));
    assert_eq!(&env.read(parent, host.len())[align..align + 8], &ones[..]);
    // A read-only sub-buffer of a read-write parent.
    let (ro, e) = sub_buffer(parent, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 0, align);
    ok!(e);
    assert_eq!(
        mem_info::<cl_mem_flags>(ro, CL_MEM_FLAGS),
        CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_USE_HOST_PTR
    );
    // The sub-buffer keeps its parent alive past the parent's last release.
    ok!(cl!(clReleaseMemObject(parent)));
    assert_eq!(env.read(sub, 8), ones);
    for m in [sub, ro] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

#[test]
fn bad_sub_buffers() {
    let env = Env::new();
    let align = device_info::<cl_uint>(env.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) as usize / 8;
    let parent = env.buffer(CL_MEM_WRITE_ONLY | CL_MEM_HOST_READ_ONLY, 4 * align, null_mut());
    err!(CL_MISALIGNED_SUB_BUFFER_OFFSET, sub_buffer(parent, 0, 1, 8).1);
    err!(CL_INVALID_VALUE, sub_buffer(parent, 0, 0, 4 * align + 1).1);
    err!(CL_INVALID_VALUE, sub_buffer(parent, 0, usize::MAX - 3, 8).1);
    err!(CL_INVALID_BUFFER_SIZE, sub_buffer(parent, 0, 0, 0).1);
    err!(CL_INVALID_VALUE, sub_buffer(parent, CL_MEM_READ_WRITE, 0, 8).1);
    err!(CL_INVALID_VALUE, sub_buffer(parent, CL_MEM_READ_ONLY, 0, 8).1);
    err!(CL_INVALID_VALUE, sub_buffer(parent, CL_MEM_HOST_WRITE_ONLY, 0, 8).1);
    err!(CL_INVALID_VALUE, sub_buffer(parent, CL_MEM_COPY_HOST_PTR, 0, 8).1);
    let region = cl_buffer_region { origin: 0, size: 8 };
    let p = (&region as *const cl_buffer_region).cast();
    err!(CL_INVALID_VALUE, with_err(|e| cl!(clCreateSubBuffer(parent, 0, 0x7777, p, e))).1);
    err!(CL_INVALID_VALUE, with_err(|e| cl!(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, null(), e))).1);
    let (sub, e) = sub_buffer(parent, 0, 0, align);
    ok!(e);
    err!(CL_INVALID_MEM_OBJECT, sub_buffer(sub, 0, 0, 8).1);
    for m in [sub, parent] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

static DESTROYED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn destroyed(_m: cl_mem, user_data: *mut c_void) {
    DESTROYED.lock().unwrap().push(user_data as usize);
}

#[test]
fn destructor_callbacks() {
    let env = Env::new();
    let m = env.buffer(0, 64, null_mut());
    ok!(cl!(clSetMemObjectDestructorCallback(m, Some(destroyed), 10 as *mut c_void)));
    ok!(cl!(clSetMemObjectDestructorCallback(m, Some(destroyed), 20 as *mut c_void)));
    err!(CL_INVALID_VALUE, cl!(clSetMemObjectDestructorCallback(m, None, null_mut())));
    ok!(cl!(clRetainMemObject(m)));
    ok!(cl!(clReleaseMemObject(m)));
    assert!(DESTROYED.lock().unwrap().is_empty());
    ok!(cl!(clReleaseMemObject(m)));
    assert_eq!(*DESTROYED.lock().unwrap(), vec![20, 10]);
}

/// cl_ext_immutable_memory_objects: contents given at creation, never changed after.
#[test]
fn immutable_memory_objects() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.split(' ').any(|e| e == "cl_ext_immutable_memory_objects"), "{ext}");
    let mut data = pattern(256, 5);
    let create = |flags: cl_mem_flags, host: *mut c_void| {
        with_err(|e| cl!(clCreateBuffer(env.context, CL_MEM_IMMUTABLE_EXT | flags, 256, host, e)))
    };
    // Contents must come with it, and no flag may ask to write it.
    for flags in [0, CL_MEM_ALLOC_HOST_PTR] {
        let (m, e) = create(flags, null_mut());
        assert!(m.is_null());
        err!(CL_INVALID_VALUE, e);
    }
    for flags in [CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_HOST_WRITE_ONLY] {
        let (m, e) = create(flags | CL_MEM_COPY_HOST_PTR, data.as_mut_ptr().cast());
        assert!(m.is_null());
        err!(CL_INVALID_VALUE, e);
    }
    let (m, e) = create(CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, data.as_mut_ptr().cast());
    ok!(e);
    let flags: cl_mem_flags = mem_info(m, CL_MEM_FLAGS);
    assert_ne!(flags & CL_MEM_IMMUTABLE_EXT, 0);
    assert_eq!(env.read(m, 256), data);

    // Every command that would write it fails; reads and copies from it do not.
    let q = env.queue;
    let other = env.buffer_with(&[7u8; 256]);
    let pat = [1u8; 4];
    let origin = [0usize; 3];
    let region = [16usize, 1, 1];
    err!(
        CL_INVALID_OPERATION,
        cl!(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 4, pat.as_ptr().cast(), 0, null(), null_mut()))
    );
    err!(
        CL_INVALID_OPERATION,
        cl!(clEnqueueWriteBufferRect(
            q,
            m,
            CL_TRUE,
            origin.as_ptr(),
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            0,
            0,
            pat.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ))
    );
    err!(CL_INVALID_OPERATION, cl!(clEnqueueFillBuffer(q, m, pat.as_ptr().cast(), 4, 0, 16, 0, null(), null_mut())));
    err!(CL_INVALID_OPERATION, cl!(clEnqueueCopyBuffer(q, other, m, 0, 0, 16, 0, null(), null_mut())));
    err!(
        CL_INVALID_OPERATION,
        cl!(clEnqueueCopyBufferRect(
            q,
            other,
            m,
            origin.as_ptr(),
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            0,
            0,
            0,
            null(),
            null_mut()
        ))
    );
    for map_flags in [CL_MAP_WRITE, CL_MAP_READ | CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION] {
        let (p, e) = with_err(|e| cl!(clEnqueueMapBuffer(q, m, CL_TRUE, map_flags, 0, 16, 0, null(), null_mut(), e)));
        assert!(p.is_null());
        err!(CL_INVALID_OPERATION, e);
    }
    let (p, e) = with_err(|e| cl!(clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, 16, 0, null(), null_mut(), e)));
    ok!(e);
    // SAFETY: a blocking map of 16 readable bytes.
    assert_eq!(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), 16) }, &data[..16]);
    ok!(cl!(clEnqueueUnmapMemObject(q, m, p, 0, null(), null_mut())));
    ok!(cl!(clEnqueueCopyBuffer(q, m, other, 0, 0, 256, 0, null(), null_mut())));
    assert_eq!(env.read(other, 256), data);

    // Sub-buffers are immutable too, and may not ask to be written; a mutable buffer's
    // part cannot be made immutable.
    let (s, e) = sub_buffer(m, 0, 0, 128);
    ok!(e);
    let flags: cl_mem_flags = mem_info(s, CL_MEM_FLAGS);
    assert_ne!(flags & CL_MEM_IMMUTABLE_EXT, 0);
    err!(CL_INVALID_OPERATION, cl!(clEnqueueFillBuffer(q, s, pat.as_ptr().cast(), 4, 0, 16, 0, null(), null_mut())));
    for flags in [CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_HOST_WRITE_ONLY] {
        let (b, e) = sub_buffer(m, flags, 0, 128);
        assert!(b.is_null());
        err!(CL_INVALID_VALUE, e);
    }
    let (b, e) = sub_buffer(other, CL_MEM_IMMUTABLE_EXT, 0, 128);
    assert!(b.is_null());
    err!(CL_INVALID_VALUE, e);

    // Kernels read it through const and constant pointers only.
    let p = build(
        &env,
        "kernel void sum(global const uchar *a, constant uchar *b, global uchar *out) {
             size_t i = get_global_id(0);
             out[i] = a[i] + b[i];
         }",
        "",
    );
    let k = kernel(p, "sum");
    set_arg(k, 0, &m);
    set_arg(k, 1, &m);
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArg(k, 2, std::mem::size_of::<cl_mem>(), (&m as *const cl_mem).cast())));
    set_arg(k, 2, &other);
    run(&env, k, &[256], None);
    let want: Vec<u8> = data.iter().map(|v| v.wrapping_add(*v)).collect();
    assert_eq!(env.read(other, 256), want);
    // Its contents never changed.
    assert_eq!(env.read(m, 256), data);

    for b in [s, other, m] {
        ok!(cl!(clReleaseMemObject(b)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}
