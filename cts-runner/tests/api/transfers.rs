//! Every transfer command, checked byte by byte against a host-side reference, and the
//! errors each returns for bad regions, pointers and access flags.

use crate::common::*;

#[test]
fn write_then_read_partial_ranges() {
    let env = Env::new();
    let n = 4096 + 13;
    let m = env.buffer(0, n, null_mut());
    let mut want = vec![0u8; n];
    for (off, len, seed) in [(0, n, 1u8), (7, 100, 2), (n - 5, 5, 3), (1000, 1, 4)] {
        let data = pattern(len, seed);
        ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_TRUE, off, len, data.as_ptr().cast(), 0, null(), null_mut())));
        want[off..off + len].copy_from_slice(&data);
    }
    assert_eq!(env.read(m, n), want);
    let mut part = vec![0u8; 50];
    ok!(cl!(clEnqueueReadBuffer(env.queue, m, CL_TRUE, 3, 50, part.as_mut_ptr().cast(), 0, null(), null_mut())));
    assert_eq!(part, want[3..53]);
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn non_blocking_transfers_complete_in_order() {
    let env = Env::new();
    let m = env.buffer(0, 1 << 20, null_mut());
    // Many writes to the same bytes: the in-order queue leaves the last one.
    let datas: Vec<Vec<u8>> = (0..32).map(|i| pattern(1 << 20, i)).collect();
    for d in &datas {
        ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_FALSE, 0, d.len(), d.as_ptr().cast(), 0, null(), null_mut())));
    }
    let mut out = vec![0u8; 1 << 20];
    let mut ev = null_mut();
    ok!(cl!(clEnqueueReadBuffer(env.queue, m, CL_FALSE, 0, out.len(), out.as_mut_ptr().cast(), 0, null(), &mut ev)));
    ok!(cl!(clWaitForEvents(1, &ev)));
    assert_eq!(out, datas[31]);
    assert_eq!(event_info::<cl_command_type>(ev, CL_EVENT_COMMAND_TYPE), CL_COMMAND_READ_BUFFER);
    ok!(cl!(clReleaseEvent(ev)));
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn copy_buffer_and_overlap() {
    let env = Env::new();
    let src_bytes = pattern(1000, 7);
    let src = env.buffer_with(&src_bytes);
    let dst = env.buffer(0, 1000, null_mut());
    ok!(cl!(clEnqueueCopyBuffer(env.queue, src, dst, 10, 500, 300, 0, null(), null_mut())));
    let got = env.read(dst, 1000);
    assert_eq!(got[500..800], src_bytes[10..310]);
    assert!(got[..500].iter().chain(&got[800..]).all(|&b| b == 0), "bytes outside the copy stay untouched");
    // Within one buffer, disjoint ranges copy and overlapping ones are refused.
    ok!(cl!(clEnqueueCopyBuffer(env.queue, src, src, 0, 600, 100, 0, null(), null_mut())));
    let mut want = src_bytes.clone();
    want.copy_within(0..100, 600);
    assert_eq!(env.read(src, 1000), want);
    err!(CL_MEM_COPY_OVERLAP, cl!(clEnqueueCopyBuffer(env.queue, src, src, 0, 50, 100, 0, null(), null_mut())));
    // Two sub-buffers of one parent that overlap are refused as well.
    let align = device_info::<cl_uint>(env.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) as usize / 8;
    let big = env.buffer(0, 4 * align, null_mut());
    let sub = |origin| {
        let r = cl_buffer_region { origin, size: 2 * align };
        let (m, e) = with_err(|e| {
            cl!(clCreateSubBuffer(big, 0, CL_BUFFER_CREATE_TYPE_REGION, (&r as *const cl_buffer_region).cast(), e))
        });
        ok!(e);
        m
    };
    let (a, b) = (sub(0), sub(align));
    err!(CL_MEM_COPY_OVERLAP, cl!(clEnqueueCopyBuffer(env.queue, a, b, align, 0, align, 0, null(), null_mut())));
    ok!(cl!(clEnqueueCopyBuffer(env.queue, a, b, 0, align, align, 0, null(), null_mut())));
    ok!(cl!(clFinish(env.queue)));
    // Bad ranges.
    err!(CL_INVALID_VALUE, cl!(clEnqueueCopyBuffer(env.queue, src, dst, 0, 0, 0, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueCopyBuffer(env.queue, src, dst, 901, 0, 100, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueCopyBuffer(env.queue, src, dst, 0, usize::MAX, 2, 0, null(), null_mut())));
    for m in [a, b, big, src, dst] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

#[test]
fn fill_every_pattern_size() {
    let env = Env::new();
    let n = 1024;
    let m = env.buffer(0, n, null_mut());
    let mut size = 1;
    while size <= 128 {
        let pat = pattern(size, size as u8);
        let (off, len) = (size * 2, size * 3);
        let zeros = vec![0u8; n];
        ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_TRUE, 0, n, zeros.as_ptr().cast(), 0, null(), null_mut())));
        ok!(cl!(clEnqueueFillBuffer(env.queue, m, pat.as_ptr().cast(), size, off, len, 0, null(), null_mut())));
        let got = env.read(m, n);
        let mut want = zeros.clone();
        for i in 0..len {
            want[off + i] = pat[i % size];
        }
        assert_eq!(got, want, "pattern size {size}");
        size *= 2;
    }
    let p = [0u8; 4];
    err!(CL_INVALID_VALUE, cl!(clEnqueueFillBuffer(env.queue, m, p.as_ptr().cast(), 3, 0, 12, 0, null(), null_mut())));
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueFillBuffer(env.queue, m, p.as_ptr().cast(), 256, 0, 256, 0, null(), null_mut()))
    );
    err!(CL_INVALID_VALUE, cl!(clEnqueueFillBuffer(env.queue, m, p.as_ptr().cast(), 4, 2, 8, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueFillBuffer(env.queue, m, p.as_ptr().cast(), 4, 0, 6, 0, null(), null_mut())));
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueFillBuffer(env.queue, m, p.as_ptr().cast(), 4, 1020, 8, 0, null(), null_mut()))
    );
    err!(CL_INVALID_VALUE, cl!(clEnqueueFillBuffer(env.queue, m, null(), 4, 0, 8, 0, null(), null_mut())));
    ok!(cl!(clReleaseMemObject(m)));
}

/// Byte offsets a rectangle covers, in x-fastest order (the reference for `_rect`).
fn rect_offsets(origin: [usize; 3], region: [usize; 3], row: usize, slice: usize) -> Vec<usize> {
    let row = if row == 0 { region[0] } else { row };
    let slice = if slice == 0 { region[1] * row } else { slice };
    let mut v = Vec::new();
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                v.push((origin[2] + z) * slice + (origin[1] + y) * row + origin[0] + x);
            }
        }
    }
    v
}

#[test]
fn rect_transfers_match_reference() {
    let env = Env::new();
    let (buf_row, buf_slice) = (40, 40 * 12);
    let size = buf_slice * 5;
    let init = pattern(size, 11);
    let m = env.buffer_with(&init);
    let cases = [
        ([3, 2, 1], [0, 0, 0], [17, 5, 3], (0usize, 0usize)),
        ([0, 0, 0], [1, 1, 0], [40, 12, 5], (48, 48 * 14)),
        ([39, 11, 4], [0, 0, 0], [1, 1, 1], (0, 0)),
        ([5, 3, 0], [2, 0, 1], [8, 4, 2], (16, 0)),
    ];
    for (buf_origin, host_origin, region, (host_row, host_slice)) in cases {
        let hrow = if host_row == 0 { region[0] } else { host_row };
        let hslice = if host_slice == 0 { region[1] * hrow } else { host_slice };
        let host_size = (host_origin[2] + region[2]) * hslice + 64;
        let mut host = vec![0xAAu8; host_size];
        ok!(cl!(clEnqueueReadBufferRect(
            env.queue,
            m,
            CL_TRUE,
            buf_origin.as_ptr(),
            host_origin.as_ptr(),
            region.as_ptr(),
            buf_row,
            buf_slice,
            host_row,
            host_slice,
            host.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        )));
        let mut want = vec![0xAAu8; host_size];
        let (b, h) = (
            rect_offsets(buf_origin, region, buf_row, buf_slice),
            rect_offsets(host_origin, region, host_row, host_slice),
        );
        for (&bo, &ho) in b.iter().zip(&h) {
            want[ho] = init[bo];
        }
        assert_eq!(host, want, "read rect {buf_origin:?} {region:?}");

        // Write a new pattern back through the same geometry.
        let src = pattern(host_size, 99);
        ok!(cl!(clEnqueueWriteBufferRect(
            env.queue,
            m,
            CL_TRUE,
            buf_origin.as_ptr(),
            host_origin.as_ptr(),
            region.as_ptr(),
            buf_row,
            buf_slice,
            host_row,
            host_slice,
            src.as_ptr().cast(),
            0,
            null(),
            null_mut()
        )));
        let mut want_buf = init.clone();
        for (&bo, &ho) in b.iter().zip(&h) {
            want_buf[bo] = src[ho];
        }
        assert_eq!(env.read(m, size), want_buf, "write rect {buf_origin:?} {region:?}");
        ok!(cl!(clEnqueueWriteBuffer(env.queue, m, CL_TRUE, 0, size, init.as_ptr().cast(), 0, null(), null_mut())));
    }
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn copy_rect_matches_reference() {
    let env = Env::new();
    let src_bytes = pattern(64 * 64, 21);
    let src = env.buffer_with(&src_bytes);
    let dst = env.buffer(0, 64 * 64, null_mut());
    let (so, dorig, region) = ([3, 4, 1], [1, 0, 2], [10, 6, 3]);
    ok!(cl!(clEnqueueCopyBufferRect(
        env.queue,
        src,
        dst,
        so.as_ptr(),
        dorig.as_ptr(),
        region.as_ptr(),
        32,
        32 * 8,
        16,
        16 * 8,
        0,
        null(),
        null_mut()
    )));
    let mut want = vec![0u8; 64 * 64];
    for (s, d) in rect_offsets(so, region, 32, 256).into_iter().zip(rect_offsets(dorig, region, 16, 128)) {
        want[d] = src_bytes[s];
    }
    assert_eq!(env.read(dst, 64 * 64), want);
    // Same buffer: interleaved columns that do not touch are fine; overlap is refused.
    let o = |a: [usize; 3], b: [usize; 3], r: [usize; 3]| {
        cl!(clEnqueueCopyBufferRect(
            env.queue,
            src,
            src,
            a.as_ptr(),
            b.as_ptr(),
            r.as_ptr(),
            16,
            256,
            16,
            256,
            0,
            null(),
            null_mut()
        ))
    };
    ok!(o([0, 0, 0], [8, 0, 0], [8, 4, 1]));
    err!(CL_MEM_COPY_OVERLAP, o([0, 0, 0], [4, 1, 0], [8, 4, 1]));
    // Same buffer with different pitches is invalid.
    let (a, b, r) = ([0usize; 3], [0usize, 0, 2], [4usize, 4, 1]);
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueCopyBufferRect(
            env.queue,
            src,
            src,
            a.as_ptr(),
            b.as_ptr(),
            r.as_ptr(),
            16,
            256,
            32,
            256,
            0,
            null(),
            null_mut()
        ))
    );
    ok!(cl!(clFinish(env.queue)));
    for m in [src, dst] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

#[test]
fn bad_rect_arguments() {
    let env = Env::new();
    let m = env.buffer(0, 1000, null_mut());
    let mut host = vec![0u8; 4096];
    let hp = host.as_mut_ptr().cast::<c_void>();
    let read = |bo: [usize; 3], r: [usize; 3], br: usize, bs: usize| {
        cl!(clEnqueueReadBufferRect(
            env.queue,
            m,
            CL_TRUE,
            bo.as_ptr(),
            [0usize; 3].as_ptr(),
            r.as_ptr(),
            br,
            bs,
            0,
            0,
            hp,
            0,
            null(),
            null_mut()
        ))
    };
    err!(CL_INVALID_VALUE, read([0; 3], [0, 1, 1], 0, 0));
    err!(CL_INVALID_VALUE, read([0; 3], [10, 10, 1], 5, 0));
    err!(CL_INVALID_VALUE, read([0; 3], [10, 10, 2], 10, 50));
    err!(CL_INVALID_VALUE, read([0; 3], [10, 10, 2], 10, 105));
    err!(CL_INVALID_VALUE, read([0, 0, 9], [10, 10, 2], 10, 100));
    err!(CL_INVALID_VALUE, read([usize::MAX, 0, 0], [10, 1, 1], 0, 0));
    ok!(read([0, 0, 8], [10, 10, 2], 10, 100));
    let r = [1usize, 1, 1];
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueReadBufferRect(
            env.queue,
            m,
            CL_TRUE,
            null(),
            r.as_ptr(),
            r.as_ptr(),
            0,
            0,
            0,
            0,
            hp,
            0,
            null(),
            null_mut()
        ))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueWriteBufferRect(
            env.queue,
            m,
            CL_TRUE,
            r.as_ptr(),
            r.as_ptr(),
            r.as_ptr(),
            0,
            0,
            0,
            0,
            null(),
            0,
            null(),
            null_mut()
        ))
    );
    ok!(cl!(clReleaseMemObject(m)));
}

#[test]
fn map_and_unmap() {
    let env = Env::new();
    let data = pattern(512, 17);
    let m = env.buffer_with(&data);
    let (p, e) = with_err(|e| {
        cl!(clEnqueueMapBuffer(env.queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 16, 100, 0, null(), null_mut(), e))
    });
    ok!(e);
    let mapped = unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), 100) };
    assert_eq!(mapped, &data[16..116]);
    mapped.fill(0x5A);
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 1);
    let mut x = 0u8;
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueUnmapMemObject(env.queue, m, (&mut x as *mut u8).cast(), 0, null(), null_mut()))
    );
    ok!(cl!(clEnqueueUnmapMemObject(env.queue, m, p, 0, null(), null_mut())));
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 0);
    let mut want = data.clone();
    want[16..116].fill(0x5A);
    assert_eq!(env.read(m, 512), want);
    // Unmapping twice is an error.
    err!(CL_INVALID_VALUE, cl!(clEnqueueUnmapMemObject(env.queue, m, p, 0, null(), null_mut())));

    // USE_HOST_PTR maps return the application's own memory.
    let mut host = pattern(64, 2);
    let u = env.buffer(CL_MEM_USE_HOST_PTR, 64, host.as_mut_ptr().cast());
    let (p, e) = with_err(|e| {
        cl!(clEnqueueMapBuffer(env.queue, u, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, 8, 8, 0, null(), null_mut(), e))
    });
    ok!(e);
    assert_eq!(p, unsafe { host.as_mut_ptr().add(8) }.cast());
    ok!(cl!(clEnqueueUnmapMemObject(env.queue, u, p, 0, null(), null_mut())));
    ok!(cl!(clFinish(env.queue)));

    let map = |flags, off, size| {
        with_err(|e| cl!(clEnqueueMapBuffer(env.queue, m, CL_TRUE, flags, off, size, 0, null(), null_mut(), e))).1
    };
    err!(CL_INVALID_VALUE, map(CL_MAP_READ, 0, 0));
    err!(CL_INVALID_VALUE, map(CL_MAP_READ, 500, 13));
    err!(CL_INVALID_VALUE, map(CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 8));
    err!(CL_INVALID_VALUE, map(1 << 10, 0, 8));
    for b in [m, u] {
        ok!(cl!(clReleaseMemObject(b)));
    }
}

#[test]
fn host_access_flags_are_enforced() {
    let env = Env::new();
    let mut b = [0u8; 8];
    let p = b.as_mut_ptr().cast::<c_void>();
    let no = env.buffer(CL_MEM_HOST_NO_ACCESS, 8, null_mut());
    let wo = env.buffer(CL_MEM_HOST_WRITE_ONLY, 8, null_mut());
    let ro = env.buffer(CL_MEM_HOST_READ_ONLY, 8, null_mut());
    let q = env.queue;
    for m in [no, wo] {
        err!(CL_INVALID_OPERATION, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 8, p, 0, null(), null_mut())));
        let (_, e) = with_err(|e| cl!(clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, 8, 0, null(), null_mut(), e)));
        err!(CL_INVALID_OPERATION, e);
    }
    for m in [no, ro] {
        err!(CL_INVALID_OPERATION, cl!(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 8, p, 0, null(), null_mut())));
        let (_, e) = with_err(|e| cl!(clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE, 0, 8, 0, null(), null_mut(), e)));
        err!(CL_INVALID_OPERATION, e);
    }
    ok!(cl!(clEnqueueWriteBuffer(q, wo, CL_TRUE, 0, 8, p, 0, null(), null_mut())));
    ok!(cl!(clEnqueueReadBuffer(q, ro, CL_TRUE, 0, 8, p, 0, null(), null_mut())));
    // Copies and fills are device-side: host access flags do not restrict them.
    ok!(cl!(clEnqueueCopyBuffer(q, no, ro, 0, 0, 8, 0, null(), null_mut())));
    ok!(cl!(clFinish(q)));
    for m in [no, wo, ro] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

#[test]
fn bad_read_write_arguments() {
    let env = Env::new();
    let m = env.buffer(0, 100, null_mut());
    let mut b = [0u8; 200];
    let p = b.as_mut_ptr().cast::<c_void>();
    let q = env.queue;
    err!(CL_INVALID_VALUE, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 101, p, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 1, 100, p, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 0, p, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 10, null_mut(), 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueWriteBuffer(q, m, CL_TRUE, usize::MAX, 2, p, 0, null(), null_mut())));
    err!(
        CL_INVALID_MEM_OBJECT,
        cl!(clEnqueueReadBuffer(q, env.context as cl_mem, CL_TRUE, 0, 1, p, 0, null(), null_mut()))
    );
    err!(
        CL_INVALID_COMMAND_QUEUE,
        cl!(clEnqueueReadBuffer(m as cl_command_queue, m, CL_TRUE, 0, 1, p, 0, null(), null_mut()))
    );
    // A buffer from another context.
    let other = Env::new();
    let m2 = other.buffer(0, 100, null_mut());
    err!(CL_INVALID_CONTEXT, cl!(clEnqueueReadBuffer(q, m2, CL_TRUE, 0, 1, p, 0, null(), null_mut())));
    // Wait lists.
    err!(CL_INVALID_EVENT_WAIT_LIST, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 1, p, 1, null(), null_mut())));
    let ev = null_mut();
    err!(CL_INVALID_EVENT_WAIT_LIST, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 1, p, 0, &ev, null_mut())));
    let not_event = m;
    err!(CL_INVALID_EVENT_WAIT_LIST, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 1, p, 1, &not_event, null_mut())));
    let (foreign, e) = with_err(|e| cl!(clCreateUserEvent(other.context, e)));
    ok!(e);
    err!(CL_INVALID_CONTEXT, cl!(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 1, p, 1, &foreign, null_mut())));
    ok!(cl!(clReleaseEvent(foreign)));
    for b in [m, m2] {
        ok!(cl!(clReleaseMemObject(b)));
    }
}

#[test]
fn migrate() {
    let env = Env::new();
    let data = pattern(64, 4);
    let m = env.buffer_with(&data);
    let mut ev = null_mut();
    ok!(cl!(clEnqueueMigrateMemObjects(env.queue, 1, &m, CL_MIGRATE_MEM_OBJECT_HOST, 0, null(), &mut ev)));
    ok!(cl!(clWaitForEvents(1, &ev)));
    assert_eq!(event_info::<cl_command_type>(ev, CL_EVENT_COMMAND_TYPE), CL_COMMAND_MIGRATE_MEM_OBJECTS);
    assert_eq!(env.read(m, 64), data);
    err!(CL_INVALID_VALUE, cl!(clEnqueueMigrateMemObjects(env.queue, 0, &m, 0, 0, null(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clEnqueueMigrateMemObjects(env.queue, 1, &m, 1 << 5, 0, null(), null_mut())));
    let bad = env.queue as cl_mem;
    err!(CL_INVALID_MEM_OBJECT, cl!(clEnqueueMigrateMemObjects(env.queue, 1, &bad, 0, 0, null(), null_mut())));
    ok!(cl!(clReleaseEvent(ev)));
    ok!(cl!(clReleaseMemObject(m)));
}
