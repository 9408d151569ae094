//! The one FerroCL platform.

use std::sync::{Arc, LazyLock};

use opencl_sys::*;

use super::cl_version;
use super::object::{cl_object, Base};

#[repr(C)]
pub(crate) struct Platform {
    pub(crate) base: Base,
}

cl_object!(Platform, CL_INVALID_PLATFORM);

/// The platform lives for the whole process (the C boundary registers its handle once).
static PLATFORM: LazyLock<Arc<Platform>> = LazyLock::new(|| Arc::new(Platform { base: Base::new() }));

pub(crate) const NAME: &str = "FerroCL";
pub(crate) const VENDOR: &str = "The FerroCL project";
pub(crate) const ICD_SUFFIX: &str = "FCL";
pub(crate) const PROFILE: &str = "FULL_PROFILE";
pub(crate) const NUMERIC_VERSION: u32 = cl_version(3, 0, 0);

/// Platform extensions: the ones the platform itself implements (device extensions are
/// listed by the device). cl_khr_icd 2.0.0: loader-managed dispatch (`api::icd`: the
/// tagged table, `clIcdGetFunctionAddressForPlatformKHR`, the dispatch data every new
/// object carries, those of extension functions included); not 2.0.1's unloading.
pub(crate) const EXTENSIONS: &[(&str, u32)] = &[("cl_khr_icd", cl_version(2, 0, 0))];

impl Platform {
    pub(crate) fn get() -> &'static Arc<Platform> {
        &PLATFORM
    }

    pub(crate) fn version() -> String {
        format!("OpenCL 3.0 FerroCL {}", super::DRIVER_VERSION)
    }
}

/// Extension names joined by spaces, as `CL_*_EXTENSIONS` returns them.
pub(crate) fn extension_string(list: &[(&str, u32)]) -> String {
    list.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" ")
}

/// The same list as `cl_name_version` records.
pub(crate) fn name_versions(list: &[(&str, u32)]) -> Vec<cl_name_version> {
    list.iter().map(|&(n, v)| name_version(n, v)).collect()
}

pub(crate) fn name_version(name: &str, version: u32) -> cl_name_version {
    let mut nv = cl_name_version { version, name: [0; CL_NAME_VERSION_MAX_NAME_SIZE] };
    for (d, s) in nv.name.iter_mut().zip(name.bytes().take(CL_NAME_VERSION_MAX_NAME_SIZE - 1)) {
        *d = s as _;
    }
    nv
}
