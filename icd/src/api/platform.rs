//! Platform entry points.

use std::ffi::c_void;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle};
use super::util::{status, write_opt, CLResult, Info};
use crate::core::platform::{self, Platform};

/// # Safety
/// `platforms` is null or has room for `num_entries` handles; `num_platforms` is null or
/// writable.
pub(super) unsafe fn get_platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    status(|| {
        // "CL_INVALID_VALUE if num_entries is equal to zero and platforms is not NULL or
        // if both num_platforms and platforms are NULL."
        if (num_entries == 0 && !platforms.is_null()) || (num_platforms.is_null() && platforms.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        if !platforms.is_null() {
            // SAFETY: platforms has room for num_entries >= 1 handles.
            unsafe { platforms.write(icd::handle_of(Platform::get())) };
        }
        write_opt(num_platforms, 1);
        Ok(())
    })
}

fn platform_info(param: cl_platform_info) -> CLResult<Info> {
    match param {
        CL_PLATFORM_PROFILE => Info::of(platform::PROFILE),
        CL_PLATFORM_VERSION => Info::of(&Platform::version()),
        CL_PLATFORM_NUMERIC_VERSION => Info::of(&platform::NUMERIC_VERSION),
        CL_PLATFORM_NAME => Info::of(platform::NAME),
        CL_PLATFORM_VENDOR => Info::of(platform::VENDOR),
        CL_PLATFORM_EXTENSIONS => Info::of(&platform::extension_string(platform::EXTENSIONS)),
        CL_PLATFORM_EXTENSIONS_WITH_VERSION => Info::of(&platform::name_versions(platform::EXTENSIONS)),
        CL_PLATFORM_HOST_TIMER_RESOLUTION => Info::of(&1u64),
        CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR => Info::of(&super::command_buffer::PLATFORM_CAPABILITIES),
        CL_PLATFORM_ICD_SUFFIX_KHR => Info::of(platform::ICD_SUFFIX),
        _ => Err(CL_INVALID_VALUE),
    }
}

/// The dispatch-table entry. It must not be the exported symbol itself: the loader
/// defines `clGetPlatformInfo` too, and the dynamic linker binds our own references to
/// an exported name to the loader's definition (symbol interposition), which would make
/// the table call the loader, which calls the table, forever.
#[cl_entry_point]
fn get_platform_info(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    // "platform ... can be NULL. If platform is NULL, the behavior is
    // implementation-defined": we answer for the only platform.
    if !platform.is_null() {
        from_handle::<Platform>(platform)?;
    }
    platform_info(param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

/// Exported by symbol as the ICD contract requires: loaders call it to check the
/// platform before they trust its dispatch table.
///
/// # Safety
/// Pointers follow the OpenCL contract for `clGetPlatformInfo`.
#[no_mangle]
pub unsafe extern "C" fn clGetPlatformInfo(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    get_platform_info(platform, param_name, param_value_size, param_value, param_value_size_ret)
}
