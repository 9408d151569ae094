//! Sampler objects: how a kernel's `read_image*` calls address and filter an image.
//! Kernels receive a sampler as the OpenCL C `CLK_*` bits (builtins/clc/image.cl), the
//! same value a kernel-scope `sampler_t` constant has.

use std::sync::Arc;

use opencl_sys::*;

use super::context::Context;
use super::object::{cl_object, Base};

#[repr(C)]
pub(crate) struct Sampler {
    pub(crate) base: Base,
    pub(crate) context: Arc<Context>,
    pub(crate) normalized: bool,
    pub(crate) addressing: cl_addressing_mode,
    pub(crate) filter: cl_filter_mode,
    /// `CL_SAMPLER_PROPERTIES` as given (empty for `clCreateSampler`).
    pub(crate) properties: Vec<cl_sampler_properties>,
}

cl_object!(Sampler, CL_INVALID_SAMPLER);

/// OpenCL C's `CLK_*` sampler bits for a sampler, `None` for modes that do not exist.
pub(crate) fn kernel_bits(normalized: bool, addressing: cl_addressing_mode, filter: cl_filter_mode) -> Option<u32> {
    // CLK_ADDRESS_NONE .. CLK_ADDRESS_MIRRORED_REPEAT are 0, 2, 4, 6, 8 in the order of
    // the CL_ADDRESS_* values.
    let address = match addressing {
        CL_ADDRESS_NONE..=CL_ADDRESS_MIRRORED_REPEAT => (addressing - CL_ADDRESS_NONE) * 2,
        _ => return None,
    };
    let filter = match filter {
        CL_FILTER_NEAREST => 0x10,
        CL_FILTER_LINEAR => 0x20,
        _ => return None,
    };
    Some(u32::from(normalized) | address | filter)
}

impl Sampler {
    pub(crate) fn bits(&self) -> u32 {
        kernel_bits(self.normalized, self.addressing, self.filter).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_match_opencl_c() {
        // CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR
        assert_eq!(kernel_bits(true, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR), Some(1 | 6 | 0x20));
        assert_eq!(kernel_bits(false, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST), Some(2 | 0x10));
        assert_eq!(kernel_bits(false, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST), Some(4 | 0x10));
        assert_eq!(kernel_bits(false, 0, CL_FILTER_NEAREST), None);
        assert_eq!(kernel_bits(false, CL_ADDRESS_NONE, 7), None);
    }
}
