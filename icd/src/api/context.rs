//! Context entry points.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::device::matches_type;
use super::icd::{self, from_handle, from_handles, into_handle, retain_release};
use super::util::{properties, property_array, CLResult, Info};
use crate::core::context::{Context, ContextDestructor, ContextNotify};
use crate::core::device::Device;
use crate::core::platform::Platform;

/// Checks a context property list and returns it as given, for `CL_CONTEXT_PROPERTIES`.
fn context_properties(list: *const cl_context_properties) -> CLResult<Vec<cl_context_properties>> {
    let pairs = properties(list)?;
    for &(name, value) in &pairs {
        match name {
            // "CL_INVALID_PLATFORM if ... platform value specified in properties is not
            // a valid platform."
            CL_CONTEXT_PLATFORM => {
                from_handle::<Platform>(value as *mut c_void).map_err(|_| CL_INVALID_PLATFORM)?;
            }
            CL_CONTEXT_INTEROP_USER_SYNC => {
                if value as cl_uint != CL_TRUE && value as cl_uint != CL_FALSE {
                    return Err(CL_INVALID_PROPERTY);
                }
            }
            // "CL_INVALID_PROPERTY if context property name in properties is not a
            // supported property name."
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    Ok(property_array(&pairs, !list.is_null()))
}

type Notify = Option<unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void)>;

/// "CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL."
fn notify(pfn_notify: Notify, user_data: *mut c_void) -> CLResult<Option<(ContextNotify, usize)>> {
    match pfn_notify {
        None if !user_data.is_null() => Err(CL_INVALID_VALUE),
        f => Ok(f.map(|f| (f, user_data as usize))),
    }
}

#[cl_entry_point]
fn clCreateContext(
    properties: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Notify,
    user_data: *mut c_void,
) -> CLResult<cl_context> {
    let props = context_properties(properties)?;
    // "CL_INVALID_VALUE if devices is NULL ... if num_devices is equal to zero."
    if devices.is_null() || num_devices == 0 {
        return Err(CL_INVALID_VALUE);
    }
    let notify = notify(pfn_notify, user_data)?;
    // "CL_INVALID_DEVICE if any device in devices is not a valid device."
    let mut devs = from_handles::<Device>(devices, num_devices as usize)?;
    devs.dedup_by(|a, b| Arc::ptr_eq(a, b));
    Ok(into_handle(Context::new(devs, props, notify)))
}

#[cl_entry_point]
fn clCreateContextFromType(
    properties: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Notify,
    user_data: *mut c_void,
) -> CLResult<cl_context> {
    let props = context_properties(properties)?;
    let notify = notify(pfn_notify, user_data)?;
    // "CL_DEVICE_NOT_FOUND if no devices that match device_type and property values
    // specified in properties are currently available."
    if !matches_type(device_type)? {
        return Err(CL_DEVICE_NOT_FOUND);
    }
    Ok(into_handle(Context::new(vec![Device::get().clone()], props, notify)))
}

retain_release!(Context, cl_context, clRetainContext, clReleaseContext);

fn context_info(c: &Context, param: cl_context_info) -> CLResult<Info> {
    match param {
        CL_CONTEXT_REFERENCE_COUNT => Info::of(&c.base.ref_count()),
        CL_CONTEXT_NUM_DEVICES => Info::of(&(c.devices.len() as cl_uint)),
        CL_CONTEXT_DEVICES => Info::of(&c.devices.iter().map(icd::handle_of).collect::<Vec<_>>()),
        CL_CONTEXT_PROPERTIES => Info::of(&c.properties),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetContextInfo(
    context: cl_context,
    param_name: cl_context_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let c = from_handle::<Context>(context)?;
    context_info(&c, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clSetContextDestructorCallback(
    context: cl_context,
    pfn_notify: Option<ContextDestructor>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_VALUE if pfn_notify is NULL."
    let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
    c.add_destructor(f, user_data as usize);
    Ok(())
}
