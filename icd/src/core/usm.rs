//! Unified shared memory (`cl_intel_unified_shared_memory`), the allocations SYCL
//! runtimes make. On a CPU host, device and shared allocations are all host memory
//! (`svm::Allocations`), so every kind is accessible everywhere, concurrently and
//! atomically; what the extension needs exactly is the bookkeeping: each allocation's
//! kind, device, flags, base and size for any pointer into it, and frees that know
//! what they free.

use opencl_sys::*;

/// The kind of a USM allocation (`CL_MEM_ALLOC_TYPE_INTEL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Host,
    Device,
    Shared,
}

impl Kind {
    /// The `cl_unified_shared_memory_type_intel` value.
    pub(crate) fn code(self) -> cl_unified_shared_memory_type_intel {
        match self {
            Kind::Host => CL_MEM_TYPE_HOST_INTEL,
            Kind::Device => CL_MEM_TYPE_DEVICE_INTEL,
            Kind::Shared => CL_MEM_TYPE_SHARED_INTEL,
        }
    }
}

/// What the context records of one allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Usm {
    pub(crate) kind: Kind,
    /// Made for the device (device allocations, shared ones given a device); the
    /// context has one device, so this is all `CL_MEM_ALLOC_DEVICE_INTEL` needs.
    pub(crate) with_device: bool,
    pub(crate) flags: cl_mem_alloc_flags_intel,
}

/// Every allocation flag the extension defines.
pub(crate) const ALLOC_FLAGS: cl_mem_alloc_flags_intel = CL_MEM_ALLOC_WRITE_COMBINED_INTEL
    | CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL
    | CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL;

/// The capabilities of every kind (`CL_DEVICE_*_MEM_CAPABILITIES_INTEL`): the host's
/// own memory, reached by the same loads, stores and atomics from kernels and host.
pub(crate) const CAPABILITIES: cl_device_unified_shared_memory_capabilities_intel =
    CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL
        | CL_UNIFIED_SHARED_MEMORY_ATOMIC_ACCESS_INTEL
        | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ACCESS_INTEL
        | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ATOMIC_ACCESS_INTEL;

/// The largest alignment an allocation may ask for, and the one it gets when it asks
/// for none: "the size of the largest data type supported" (long16, 128 bytes).
pub(crate) const MAX_ALIGNMENT: usize = 128;

/// Checks a property list's pairs (`CL_MEM_ALLOC_FLAGS_INTEL` once, with defined flags;
/// the placement flags only for shared allocations, and not both) and returns the
/// flags; `Err(CL_INVALID_PROPERTY)` otherwise.
pub(crate) fn alloc_flags(pairs: &[(u64, u64)], kind: Kind) -> Result<cl_mem_alloc_flags_intel, cl_int> {
    let mut flags = None;
    for &(name, value) in pairs {
        if name != CL_MEM_ALLOC_FLAGS_INTEL || flags.is_some() || value & !ALLOC_FLAGS != 0 {
            return Err(CL_INVALID_PROPERTY);
        }
        flags = Some(value);
    }
    let flags = flags.unwrap_or(0);
    let placement = flags & (CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL | CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL);
    let valid_placement = match kind {
        Kind::Shared => placement.count_ones() < 2,
        Kind::Host | Kind::Device => placement == 0,
    };
    if !valid_placement {
        return Err(CL_INVALID_PROPERTY);
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_allow_each_flag_where_the_extension_does() {
        let wc = CL_MEM_ALLOC_WRITE_COMBINED_INTEL;
        let (dev, host) = (CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL, CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL);
        let f = CL_MEM_ALLOC_FLAGS_INTEL;
        assert_eq!(alloc_flags(&[], Kind::Host), Ok(0));
        assert_eq!(alloc_flags(&[(f, wc)], Kind::Device), Ok(wc));
        assert_eq!(alloc_flags(&[(f, dev)], Kind::Shared), Ok(dev));
        assert_eq!(alloc_flags(&[(f, dev)], Kind::Host), Err(CL_INVALID_PROPERTY));
        assert_eq!(alloc_flags(&[(f, host)], Kind::Device), Err(CL_INVALID_PROPERTY));
        assert_eq!(alloc_flags(&[(f, dev | host)], Kind::Shared), Err(CL_INVALID_PROPERTY));
        assert_eq!(alloc_flags(&[(f, 1 << 9)], Kind::Shared), Err(CL_INVALID_PROPERTY));
        assert_eq!(alloc_flags(&[(f, 0), (f, 0)], Kind::Shared), Err(CL_INVALID_PROPERTY));
        assert_eq!(alloc_flags(&[(0x1234, 0)], Kind::Shared), Err(CL_INVALID_PROPERTY));
    }
}
