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
    err!(CL_INVALID_QUEUE_PROPERTIES, bad(CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE));
    err!(CL_INVALID_VALUE, bad(1 << 20));
    // Invalid combinations (not merely unsupported ones): an on-device queue must be
    // out of order; the default on-device queue must be an on-device queue.
    err!(CL_INVALID_VALUE, bad(CL_QUEUE_ON_DEVICE));
    err!(CL_INVALID_VALUE, bad(CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE));
    let with = |props: &[cl_queue_properties]| {
        with_err(|e| cl!(clCreateCommandQueueWithProperties(env.context, env.device, props.as_ptr(), e))).1
    };
    err!(CL_INVALID_VALUE, with(&[0x7777, 0, 0]));
    // A size belongs to on-device queues only: invalid without one, unsupported with one.
    err!(CL_INVALID_VALUE, with(&[CL_QUEUE_SIZE as cl_queue_properties, 16, 0]));
    let on_device = CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    err!(
        CL_INVALID_QUEUE_PROPERTIES,
        with(&[CL_QUEUE_PROPERTIES as cl_queue_properties, on_device, CL_QUEUE_SIZE as cl_queue_properties, 16, 0])
    );
    let (_, e) = with_err(|e| cl!(clCreateCommandQueue(env.context, env.context as cl_device_id, 0, e)));
    err!(CL_INVALID_DEVICE, e);
    let (_, e) = with_err(|e| cl!(clCreateCommandQueue(env.queue as cl_context, env.device, 0, e)));
    err!(CL_INVALID_CONTEXT, e);
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFinish(env.context as cl_command_queue)));
    // No on-device queues, so no default one to replace, whatever the queue argument.
    err!(CL_INVALID_OPERATION, cl!(clSetDefaultDeviceCommandQueue(env.context, env.device, null_mut())));
    err!(CL_INVALID_COMMAND_QUEUE, cl!(clFlush(env.context as cl_command_queue)));
}
