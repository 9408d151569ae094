//! Contexts: creation paths, properties, reference counts, callbacks, bad input.

use std::sync::Mutex;

use crate::common::*;

fn context_info<T: Copy>(c: cl_context, p: cl_context_info) -> T {
    info(|s, v, r| cl!(clGetContextInfo(c, p, s, v, r)))
}

#[test]
fn create_with_properties_and_query() {
    let (p, d) = platform_device();
    let props = [CL_CONTEXT_PLATFORM, p as cl_context_properties, 0];
    let (c, e) = with_err(|e| cl!(clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), e)));
    ok!(e);
    assert_eq!(context_info::<cl_uint>(c, CL_CONTEXT_NUM_DEVICES), 1);
    assert_eq!(context_info::<cl_device_id>(c, CL_CONTEXT_DEVICES), d);
    let got = info_bytes(|s, v, r| cl!(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, s, v, r)));
    let want: Vec<u8> = props.iter().flat_map(|v| v.to_ne_bytes()).collect();
    assert_eq!(got, want, "CL_CONTEXT_PROPERTIES returns the list as given");
    assert_eq!(context_info::<cl_uint>(c, CL_CONTEXT_REFERENCE_COUNT), 1);
    ok!(cl!(clRetainContext(c)));
    assert_eq!(context_info::<cl_uint>(c, CL_CONTEXT_REFERENCE_COUNT), 2);
    ok!(cl!(clReleaseContext(c)));
    assert_eq!(context_info::<cl_uint>(c, CL_CONTEXT_REFERENCE_COUNT), 1);
    err!(CL_INVALID_VALUE, cl!(clGetContextInfo(c, 0xdead, 0, null_mut(), null_mut())));
    ok!(cl!(clReleaseContext(c)));

    // Without properties, the query answers with size 0.
    let (c, e) = with_err(|e| cl!(clCreateContext(null(), 1, &d, None, null_mut(), e)));
    ok!(e);
    assert!(info_bytes(|s, v, r| cl!(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, s, v, r))).is_empty());
    ok!(cl!(clReleaseContext(c)));
}

#[test]
fn create_from_type() {
    let (p, d) = platform_device();
    let props = [CL_CONTEXT_PLATFORM, p as cl_context_properties, 0];
    for t in [CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_DEFAULT, CL_DEVICE_TYPE_ALL] {
        let (c, e) = with_err(|e| cl!(clCreateContextFromType(props.as_ptr(), t, None, null_mut(), e)));
        ok!(e);
        assert_eq!(context_info::<cl_device_id>(c, CL_CONTEXT_DEVICES), d);
        ok!(cl!(clReleaseContext(c)));
    }
    for t in [CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR] {
        let (c, e) = with_err(|e| cl!(clCreateContextFromType(props.as_ptr(), t, None, null_mut(), e)));
        assert!(c.is_null());
        err!(CL_DEVICE_NOT_FOUND, e);
    }
    let (_, e) = with_err(|e| cl!(clCreateContextFromType(props.as_ptr(), 1 << 30, None, null_mut(), e)));
    err!(CL_INVALID_DEVICE_TYPE, e);
}

#[test]
fn bad_context_arguments() {
    let (p, d) = platform_device();
    let create = |props: &[cl_context_properties], n: cl_uint, devs: *const cl_device_id, ud: *mut c_void| {
        let props_ptr = if props.is_empty() { null() } else { props.as_ptr() };
        let (c, e) = with_err(|e| cl!(clCreateContext(props_ptr, n, devs, None, ud, e)));
        assert!(c.is_null());
        e
    };
    err!(CL_INVALID_VALUE, create(&[], 0, &d, null_mut()));
    err!(CL_INVALID_VALUE, create(&[], 1, null(), null_mut()));
    let mut x = 0u8;
    err!(CL_INVALID_VALUE, create(&[], 1, &d, (&mut x as *mut u8).cast()));
    err!(CL_INVALID_PROPERTY, create(&[0x7777, 1, 0], 1, &d, null_mut()));
    let pp = p as cl_context_properties;
    err!(CL_INVALID_PROPERTY, create(&[CL_CONTEXT_PLATFORM, pp, CL_CONTEXT_PLATFORM, pp, 0], 1, &d, null_mut()));
    err!(CL_INVALID_PROPERTY, create(&[CL_CONTEXT_INTEROP_USER_SYNC, 7, 0], 1, &d, null_mut()));
    ok!(create_and_release(&[CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE as cl_context_properties, 0], d));
    // A device handle that is not a device (a context) is rejected.
    let env = Env::new();
    let wrong = env.context as cl_device_id;
    err!(CL_INVALID_DEVICE, create(&[], 1, &wrong, null_mut()));
}

fn create_and_release(props: &[cl_context_properties], d: cl_device_id) -> cl_int {
    let (c, e) = with_err(|e| cl!(clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), e)));
    if e == CL_SUCCESS {
        ok!(cl!(clReleaseContext(c)));
    }
    e
}

static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn record(_c: cl_context, user_data: *mut c_void) {
    ORDER.lock().unwrap().push(user_data as usize);
}

#[test]
fn destructor_callbacks_run_in_reverse_order_at_last_release() {
    let (_, d) = platform_device();
    let (c, e) = with_err(|e| cl!(clCreateContext(null(), 1, &d, None, null_mut(), e)));
    ok!(e);
    ok!(cl!(clSetContextDestructorCallback(c, Some(record), 1 as *mut c_void)));
    ok!(cl!(clSetContextDestructorCallback(c, Some(record), 2 as *mut c_void)));
    err!(CL_INVALID_VALUE, cl!(clSetContextDestructorCallback(c, None, null_mut())));
    // A queue keeps the context alive after the application's last release.
    let (q, e) = with_err(|e| cl!(clCreateCommandQueue(c, d, 0, e)));
    ok!(e);
    ok!(cl!(clReleaseContext(c)));
    assert!(ORDER.lock().unwrap().is_empty());
    ok!(cl!(clReleaseCommandQueue(q)));
    // The queue thread may drop the last reference a moment later.
    for _ in 0..1000 {
        if ORDER.lock().unwrap().len() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(*ORDER.lock().unwrap(), vec![2, 1]);
}
