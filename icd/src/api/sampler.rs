//! Sampler entry points: creation, reference counts and queries.

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle, into_handle, retain_release};
use super::util::{properties, property_array, CLResult, Info};
use crate::core::context::Context;
use crate::core::object::Base;
use crate::core::sampler::{kernel_bits, Sampler};

fn create(
    context: cl_context,
    normalized: cl_bool,
    addressing: cl_addressing_mode,
    filter: cl_filter_mode,
    props: Vec<cl_sampler_properties>,
) -> CLResult<cl_sampler> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_VALUE if addressing_mode, filter_mode, normalized_coords or a
    // combination of these arguments are not valid." Repeating addressing needs
    // normalized coordinates.
    let repeats = addressing == CL_ADDRESS_REPEAT || addressing == CL_ADDRESS_MIRRORED_REPEAT;
    if normalized > 1 || kernel_bits(normalized != 0, addressing, filter).is_none() || repeats && normalized == 0 {
        return Err(CL_INVALID_VALUE);
    }
    let s =
        Sampler { base: Base::new(), context: c, normalized: normalized != 0, addressing, filter, properties: props };
    Ok(into_handle(Arc::new(s)))
}

#[cl_entry_point]
fn clCreateSampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
) -> CLResult<cl_sampler> {
    create(context, normalized_coords, addressing_mode, filter_mode, Vec::new())
}

#[cl_entry_point]
fn clCreateSamplerWithProperties(
    context: cl_context,
    sampler_properties: *const cl_sampler_properties,
) -> CLResult<cl_sampler> {
    from_handle::<Context>(context)?;
    // The defaults: "CL_TRUE", "CL_ADDRESS_CLAMP", "CL_FILTER_NEAREST".
    let (mut normalized, mut addressing, mut filter) = (CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
    let pairs = properties(sampler_properties)?;
    for &(name, value) in &pairs {
        // "CL_INVALID_VALUE if the property name in sampler_properties is not a
        // supported property name, if the value specified for a supported property
        // name is not valid".
        let value = cl_uint::try_from(value).map_err(|_| CL_INVALID_VALUE)?;
        match name as cl_uint {
            CL_SAMPLER_NORMALIZED_COORDS => normalized = value,
            CL_SAMPLER_ADDRESSING_MODE => addressing = value,
            CL_SAMPLER_FILTER_MODE => filter = value,
            _ => return Err(CL_INVALID_VALUE),
        }
    }
    let props = property_array(&pairs, !sampler_properties.is_null());
    create(context, normalized, addressing, filter, props)
}

retain_release!(Sampler, cl_sampler, clRetainSampler, clReleaseSampler);

fn sampler_info(s: &Arc<Sampler>, param: cl_sampler_info) -> CLResult<Info> {
    match param {
        CL_SAMPLER_REFERENCE_COUNT => Info::of(&s.base.ref_count()),
        CL_SAMPLER_CONTEXT => Info::of(&icd::handle_of(&s.context)),
        CL_SAMPLER_NORMALIZED_COORDS => Info::of(&s.normalized),
        CL_SAMPLER_ADDRESSING_MODE => Info::of(&s.addressing),
        CL_SAMPLER_FILTER_MODE => Info::of(&s.filter),
        CL_SAMPLER_PROPERTIES => Info::of(&s.properties),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetSamplerInfo(
    sampler: cl_sampler,
    param_name: cl_sampler_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let s = from_handle::<Sampler>(sampler)?;
    sampler_info(&s, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}
