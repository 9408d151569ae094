//! Sub-devices (`clCreateSubDevices`): each partition scheme, its errors, the queries a
//! sub-device answers, and kernels run on queues of sub-devices in one context with
//! their parent.

use std::ptr::{null, null_mut};

use opencl_sys::*;

use crate::common::*;

/// Partitions `device` by `props`: the sub-devices, or the error.
fn partition(device: cl_device_id, props: &[cl_device_partition_property]) -> Result<Vec<cl_device_id>, cl_int> {
    let mut n = 0;
    let e = cl!(clCreateSubDevices(device, props.as_ptr(), 0, null_mut(), &mut n));
    if e != CL_SUCCESS {
        return Err(e);
    }
    let mut subs = vec![null_mut(); n as usize];
    let mut m = 0;
    ok!(cl!(clCreateSubDevices(device, props.as_ptr(), n, subs.as_mut_ptr(), &mut m)));
    assert_eq!(m, n, "the count agrees with the first call");
    Ok(subs)
}

fn units(d: cl_device_id) -> cl_uint {
    device_info(d, CL_DEVICE_MAX_COMPUTE_UNITS)
}

fn partition_type(d: cl_device_id) -> Vec<cl_device_partition_property> {
    let bytes = info_bytes(|s, v, r| cl!(clGetDeviceInfo(d, CL_DEVICE_PARTITION_TYPE, s, v, r)));
    bytes.chunks(8).map(|c| isize::from_ne_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn partitions_split_the_compute_units_and_report_how() {
    let (_, root) = platform_device();
    let cu = units(root);
    let max_subs: cl_uint = device_info(root, CL_DEVICE_PARTITION_MAX_SUB_DEVICES);
    assert_eq!(max_subs, cu);
    let props = info_bytes(|s, v, r| cl!(clGetDeviceInfo(root, CL_DEVICE_PARTITION_PROPERTIES, s, v, r)));
    let props: Vec<isize> = props.chunks(8).map(|c| isize::from_ne_bytes(c.try_into().unwrap())).collect();
    assert!(partition_type(root).is_empty(), "the root device was not partitioned");
    let parent: cl_device_id = device_info(root, CL_DEVICE_PARENT_DEVICE);
    assert!(parent.is_null());
    if cu < 2 {
        assert_eq!(props, [0], "a device of one compute unit cannot be partitioned");
        return;
    }
    assert!(props.contains(&CL_DEVICE_PARTITION_EQUALLY) && props.contains(&CL_DEVICE_PARTITION_BY_COUNTS));

    // Equally: as many as fit, the rest left out.
    let subs = partition(root, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
    assert_eq!(subs.len(), cu as usize);
    for &s in &subs {
        assert_eq!(units(s), 1);
        assert_eq!(device_info::<cl_device_id>(s, CL_DEVICE_PARENT_DEVICE), root);
        assert_eq!(partition_type(s), [CL_DEVICE_PARTITION_EQUALLY, 1, 0]);
        assert_eq!(device_info::<cl_uint>(s, CL_DEVICE_REFERENCE_COUNT), 1);
        // One compute unit: nothing to partition further (one sub-device of all its
        // units is no partition, as the CTS's negative_create_sub_devices has it).
        assert_eq!(partition(s, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]), Err(CL_DEVICE_PARTITION_FAILED));
        assert_eq!(partition(s, &[CL_DEVICE_PARTITION_EQUALLY, 2, 0]), Err(CL_INVALID_DEVICE_PARTITION_COUNT));
        ok!(cl!(clRetainDevice(s)));
        assert_eq!(device_info::<cl_uint>(s, CL_DEVICE_REFERENCE_COUNT), 2);
        ok!(cl!(clReleaseDevice(s)));
        ok!(cl!(clReleaseDevice(s)));
        // Released: the handle is gone.
        assert_eq!(cl!(clRetainDevice(s)), CL_INVALID_DEVICE);
    }

    // By counts, and the sub-device of a sub-device.
    let subs = partition(
        root,
        &[CL_DEVICE_PARTITION_BY_COUNTS, 1, cu as isize - 1, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0],
    )
    .unwrap();
    assert_eq!(subs.iter().map(|&s| units(s)).collect::<Vec<_>>(), [1, cu - 1]);
    assert_eq!(
        partition_type(subs[1]),
        [CL_DEVICE_PARTITION_BY_COUNTS, 1, cu as isize - 1, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0]
    );
    if cu > 2 {
        let inner = partition(subs[1], &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
        assert_eq!(inner.len(), cu as usize - 1);
        assert_eq!(device_info::<cl_device_id>(inner[0], CL_DEVICE_PARENT_DEVICE), subs[1]);
        inner.iter().for_each(|&s| ok!(cl!(clReleaseDevice(s))));
    }
    subs.iter().for_each(|&s| ok!(cl!(clReleaseDevice(s))));
    // Counts ended by one 0, as Intel's SYCL runtime writes them (the list's end is 0).
    let subs = partition(root, &[CL_DEVICE_PARTITION_BY_COUNTS, 1, 1, 0]).unwrap();
    assert_eq!(subs.iter().map(|&s| units(s)).collect::<Vec<_>>(), [1, 1]);
    subs.iter().for_each(|&s| ok!(cl!(clReleaseDevice(s))));

    // The spec's errors.
    let list_end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    let cases: Vec<(Vec<isize>, cl_int)> = vec![
        (vec![CL_DEVICE_PARTITION_EQUALLY, 0, 0], CL_INVALID_VALUE),
        (vec![CL_DEVICE_PARTITION_EQUALLY, cu as isize + 1, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (vec![CL_DEVICE_PARTITION_EQUALLY, cu as isize, 0], CL_DEVICE_PARTITION_FAILED),
        (vec![CL_DEVICE_PARTITION_BY_COUNTS, cu as isize, 1, list_end, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (vec![CL_DEVICE_PARTITION_BY_COUNTS, -1, list_end, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (vec![CL_DEVICE_PARTITION_BY_COUNTS, list_end, 0], CL_INVALID_VALUE),
        (vec![CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0x7fff, 0], CL_INVALID_VALUE),
        (vec![0x4242, 1, 0], CL_INVALID_VALUE),
    ];
    for (props, want) in cases {
        assert_eq!(partition(root, &props).map(|v| v.len()), Err(want), "{props:?}");
    }
    assert_eq!(cl!(clCreateSubDevices(root, null(), 0, null_mut(), null_mut())), CL_INVALID_VALUE);
    assert_eq!(
        cl!(clCreateSubDevices(null_mut(), [CL_DEVICE_PARTITION_EQUALLY, 1, 0].as_ptr(), 0, null_mut(), null_mut())),
        CL_INVALID_DEVICE
    );
    // Room for fewer sub-devices than the scheme makes.
    let mut one = [null_mut(); 1];
    let e =
        cl!(clCreateSubDevices(root, [CL_DEVICE_PARTITION_EQUALLY, 1, 0].as_ptr(), 1, one.as_mut_ptr(), null_mut()));
    assert_eq!(e, CL_INVALID_VALUE);

    // By affinity domain, where the host describes its caches: the next partitionable
    // domain splits the device, and says which it was.
    let domains: cl_device_affinity_domain = device_info(root, CL_DEVICE_PARTITION_AFFINITY_DOMAIN);
    if domains != 0 {
        assert!(domains & CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE != 0);
        let next = CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE as isize;
        match partition(root, &[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, next, 0]) {
            Ok(subs) => {
                assert!(subs.len() > 1);
                assert_eq!(subs.iter().map(|&s| units(s)).sum::<cl_uint>(), cu, "every unit in one domain");
                let t = partition_type(subs[0]);
                assert_eq!(t[0], CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
                assert!(t[1] != next && domains & t[1] as u64 != 0, "the domain chosen: {t:?}");
                subs.iter().for_each(|&s| ok!(cl!(clReleaseDevice(s))));
            }
            Err(e) => panic!("next partitionable, offered, failed: {e}"),
        }
        // Every domain offered splits the device (the CTS's migration tests partition
        // by each); one not offered is "not supported by the device".
        for bit in 0..5 {
            let domain = 1u64 << bit;
            let got = partition(root, &[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, domain as isize, 0]);
            match domains & domain != 0 {
                true => {
                    let subs = got.unwrap_or_else(|e| panic!("domain {domain:#x} offered, failed: {e}"));
                    assert!(subs.len() > 1, "domain {domain:#x}");
                    subs.iter().for_each(|&s| ok!(cl!(clReleaseDevice(s))));
                }
                false => assert_eq!(got.err(), Some(CL_INVALID_VALUE), "domain {domain:#x} not offered"),
            }
        }
    }
}

#[test]
fn kernels_run_on_sub_devices_and_their_parent_in_one_context() {
    let (_, root) = platform_device();
    if units(root) < 2 {
        return;
    }
    let subs = partition(root, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
    let mut devices = subs.clone();
    devices.push(root);
    let mut e = 0;
    let context = cl!(clCreateContext(null(), devices.len() as cl_uint, devices.as_ptr(), None, null_mut(), &mut e));
    ok!(e);
    let src = std::ffi::CString::new(
        "kernel void scale(global int *a, int k) { size_t i = get_global_id(0); a[i] = a[i] * k + (int)get_num_groups(0); }",
    )
    .unwrap();
    let ptr = src.as_ptr();
    let p = cl!(clCreateProgramWithSource(context, 1, &ptr as *const _ as *mut _, null(), &mut e));
    ok!(e);
    ok!(cl!(clBuildProgram(p, 0, null(), null(), None, null_mut())));
    let name = std::ffi::CString::new("scale").unwrap();
    let k = cl!(clCreateKernel(p, name.as_ptr(), &mut e));
    ok!(e);
    let n = 4096usize;
    let queues: Vec<cl_command_queue> = devices
        .iter()
        .map(|&d| {
            let q = cl!(clCreateCommandQueue(context, d, 0, &mut e));
            ok!(e);
            let got: cl_device_id = info(|s, v, r| cl!(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, s, v, r)));
            assert_eq!(got, d);
            q
        })
        .collect();
    // Every queue runs its own launch on its own buffer, all at once.
    let inputs: Vec<Vec<i32>> = (0..queues.len()).map(|q| (0..n as i32).map(|i| i + q as i32).collect()).collect();
    let buffers: Vec<cl_mem> = inputs
        .iter()
        .map(|data| {
            let b = cl!(clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, data.as_ptr() as *mut _, &mut e));
            ok!(e);
            b
        })
        .collect();
    for (q, (&queue, b)) in queues.iter().zip(&buffers).enumerate() {
        ok!(cl!(clSetKernelArg(k, 0, 8, (b as *const cl_mem).cast())));
        ok!(cl!(clSetKernelArg(k, 1, 4, (&(q as i32 + 2) as *const i32).cast())));
        ok!(cl!(clEnqueueNDRangeKernel(queue, k, 1, null(), &n, &64, 0, null(), null_mut())));
    }
    for (q, (&queue, b)) in queues.iter().zip(&buffers).enumerate() {
        let mut out = vec![0i32; n];
        ok!(cl!(clEnqueueReadBuffer(queue, *b, CL_TRUE, 0, n * 4, out.as_mut_ptr().cast(), 0, null(), null_mut())));
        let want: Vec<i32> = inputs[q].iter().map(|&x| x * (q as i32 + 2) + (n / 64) as i32).collect();
        assert_eq!(out, want, "queue {q}");
    }
    for b in buffers {
        ok!(cl!(clReleaseMemObject(b)));
    }
    for q in queues {
        ok!(cl!(clReleaseCommandQueue(q)));
    }
    let status: cl_build_status =
        info(|s, v, r| cl!(clGetProgramBuildInfo(p, subs[0], CL_PROGRAM_BUILD_STATUS, s, v, r)));
    assert_eq!(status, CL_BUILD_SUCCESS);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
    ok!(cl!(clReleaseContext(context)));
    subs.iter().for_each(|&s| ok!(cl!(clReleaseDevice(s))));
}
