//! Buffer entry points: creation, sub-buffers, queries, destructor callbacks.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{self, from_handle, into_handle, retain_release};
use super::util::{properties, property_array, CLResult, Info};
use crate::core::context::Context;
use crate::core::device::Device;
pub(super) use crate::core::memory::DEVICE_ACCESS;
use crate::core::memory::{Mem, MemDestructor, BUFFER_FLAGS, HOST_ACCESS, HOST_PTR_FLAGS, IMMUTABLE, KERNEL_ACCESS};

/// "CL_INVALID_VALUE if values specified in flags are not valid": unknown bits, or more
/// than one flag of a mutually exclusive group.
/// Images may also be `CL_MEM_KERNEL_READ_AND_WRITE`. `CL_MEM_IMMUTABLE_EXT` excludes
/// every way of writing: "CL_INVALID_VALUE if CL_MEM_IMMUTABLE_EXT is set in flags and
/// CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, or CL_MEM_HOST_WRITE_ONLY is set in flags".
pub(super) fn check_flags(flags: cl_mem_flags, image: bool) -> CLResult<()> {
    let at_most_one = |group: cl_mem_flags| (flags & group).count_ones() <= 1;
    let writes = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY | KERNEL_ACCESS;
    if flags & IMMUTABLE != 0 && flags & writes != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let flags = if image { flags & !KERNEL_ACCESS } else { flags };
    let host_ptr_ok = flags & CL_MEM_USE_HOST_PTR == 0 || flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) == 0;
    if flags & !BUFFER_FLAGS != 0 || !at_most_one(DEVICE_ACCESS) || !at_most_one(HOST_ACCESS) || !host_ptr_ok {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

fn create_buffer(
    context: cl_context,
    props_list: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_PROPERTY if a property name in properties is not a supported property
    // name": OpenCL 3.0 defines no buffer properties without extensions.
    let pairs = properties(props_list)?;
    if !pairs.is_empty() {
        return Err(CL_INVALID_PROPERTY);
    }
    check_flags(flags, false)?;
    immutable_has_contents(flags)?;
    // "CL_INVALID_BUFFER_SIZE if size is 0 ... or if size is greater than
    // CL_DEVICE_MAX_MEM_ALLOC_SIZE for all devices in context."
    let max = c.devices.iter().map(|d| d.limits.max_mem_alloc).max().unwrap_or(0);
    if size == 0 || size as u64 > max {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    // "CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
    // CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but
    // CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR are not set in flags."
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if wants_ptr == host_ptr.is_null() {
        return Err(CL_INVALID_HOST_PTR);
    }
    // "CL_INVALID_BUFFER_SIZE if CL_MEM_USE_HOST_PTR is set in flags and host_ptr is a
    // pointer returned by clSVMAlloc and size is greater than the size passed to
    // clSVMAlloc" (from the pointer on, for pointers into an allocation).
    if flags & CL_MEM_USE_HOST_PTR != 0 {
        let svm = c.svm.find(host_ptr as usize);
        if svm.is_some_and(|(start, len, _)| !crate::core::region::fits(host_ptr as usize - start, size, len)) {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
    }
    let align = Device::get().limits.base_addr_align;
    let props = property_array(&pairs, !props_list.is_null());
    Ok(into_handle(Mem::new_buffer(c, flags, size, host_ptr, props, align)?))
}

#[cl_entry_point]
fn clCreateBuffer(context: cl_context, flags: cl_mem_flags, size: usize, host_ptr: *mut c_void) -> CLResult<cl_mem> {
    create_buffer(context, std::ptr::null(), flags, size, host_ptr)
}

#[cl_entry_point]
fn clCreateBufferWithProperties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    create_buffer(context, properties, flags, size, host_ptr)
}

/// "CL_INVALID_VALUE if CL_MEM_IMMUTABLE_EXT is set in flags and none of the following
/// conditions are met: CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR is set in flags"
/// (an immutable object gets its contents at creation or never).
pub(super) fn immutable_has_contents(flags: cl_mem_flags) -> CLResult<()> {
    match flags & IMMUTABLE != 0 && flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) == 0 {
        true => Err(CL_INVALID_VALUE),
        false => Ok(()),
    }
}

/// The flags of a sub-buffer: checked against the parent and completed from it.
pub(super) fn sub_buffer_flags(parent: cl_mem_flags, flags: cl_mem_flags) -> CLResult<cl_mem_flags> {
    check_flags(flags, false)?;
    // "CL_INVALID_VALUE if buffer was created with CL_MEM_WRITE_ONLY and flags specifies
    // CL_MEM_READ_WRITE or CL_MEM_READ_ONLY, or if buffer was created with
    // CL_MEM_READ_ONLY and flags specifies CL_MEM_READ_WRITE or CL_MEM_WRITE_ONLY, or if
    // flags specifies CL_MEM_USE_HOST_PTR or CL_MEM_ALLOC_HOST_PTR or
    // CL_MEM_COPY_HOST_PTR."
    let conflicts = |p: cl_mem_flags, bad: cl_mem_flags| parent & p != 0 && flags & bad != 0;
    // An immutable buffer's parts are immutable: no flag may ask to write them, and a
    // mutable buffer's part cannot be made immutable (its contents would come from a
    // parent that changes).
    if conflicts(CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY)
        || conflicts(CL_MEM_READ_ONLY, CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)
        || conflicts(IMMUTABLE, CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY)
        || (flags & IMMUTABLE != 0 && parent & IMMUTABLE == 0)
        || flags & HOST_PTR_FLAGS != 0
    {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_VALUE if buffer was created with CL_MEM_HOST_WRITE_ONLY and flags
    // specify CL_MEM_HOST_READ_ONLY, or if buffer was created with CL_MEM_HOST_READ_ONLY
    // and flags specify CL_MEM_HOST_WRITE_ONLY, or if buffer was created with
    // CL_MEM_HOST_NO_ACCESS and flags specify CL_MEM_HOST_READ_ONLY or
    // CL_MEM_HOST_WRITE_ONLY."
    if conflicts(CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY)
        || conflicts(CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_WRITE_ONLY)
        || conflicts(CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)
    {
        return Err(CL_INVALID_VALUE);
    }
    // Unspecified access and host-pointer flags "are inherited from the corresponding
    // memory access qualifiers associated with buffer".
    let mut out = flags | (parent & (HOST_PTR_FLAGS | IMMUTABLE));
    if flags & DEVICE_ACCESS == 0 {
        out |= parent & DEVICE_ACCESS;
    }
    if flags & HOST_ACCESS == 0 {
        out |= parent & HOST_ACCESS;
    }
    Ok(out)
}

#[cl_entry_point]
fn clCreateSubBuffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    buffer_create_type: cl_buffer_create_type,
    buffer_create_info: *const c_void,
) -> CLResult<cl_mem> {
    let parent = from_handle::<Mem>(buffer)?;
    // "CL_INVALID_MEM_OBJECT if buffer is not a buffer object or is a sub-buffer
    // object."
    if parent.parent.is_some() || !parent.is_buffer() {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    let flags = sub_buffer_flags(parent.flags, flags)?;
    // "CL_INVALID_VALUE if value specified in buffer_create_type is not valid ... if
    // value(s) specified in buffer_create_info ... is NULL."
    if buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION || buffer_create_info.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: non-null and, for CL_BUFFER_CREATE_TYPE_REGION, a cl_buffer_region.
    let region = unsafe { buffer_create_info.cast::<cl_buffer_region>().read_unaligned() };
    // "CL_INVALID_BUFFER_SIZE if the size field of the cl_buffer_region structure
    // ... is 0."
    if region.size == 0 {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    // "CL_INVALID_VALUE if the region specified ... is out of bounds of buffer."
    if !crate::core::region::fits(region.origin, region.size, parent.size) {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated
    // with buffer for which the origin field ... is aligned to the
    // CL_DEVICE_MEM_BASE_ADDR_ALIGN value."
    if region.origin % Device::get().limits.base_addr_align != 0 {
        return Err(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    }
    Ok(into_handle(Mem::new_sub_buffer(&parent, flags, region.origin, region.size)))
}

retain_release!(Mem, cl_mem, clRetainMemObject, clReleaseMemObject);

fn mem_info(m: &Arc<Mem>, param: cl_mem_info) -> CLResult<Info> {
    match param {
        CL_MEM_TYPE => Info::of(&match (&m.image, &m.pipe) {
            (Some(i), _) => i.layout.image_type,
            (None, Some(_)) => CL_MEM_OBJECT_PIPE,
            (None, None) => CL_MEM_OBJECT_BUFFER,
        }),
        CL_MEM_FLAGS => Info::of(&m.flags),
        CL_MEM_SIZE => Info::of(&m.size),
        CL_MEM_HOST_PTR => Info::of(&m.host_ptr),
        CL_MEM_MAP_COUNT => Info::of(&m.map_count()),
        CL_MEM_REFERENCE_COUNT => Info::of(&m.base.ref_count()),
        CL_MEM_CONTEXT => Info::of(&icd::handle_of(&m.context)),
        CL_MEM_ASSOCIATED_MEMOBJECT => Info::of(&m.parent.as_ref().map_or(null_mut(), icd::handle_of)),
        CL_MEM_OFFSET => Info::of(&m.offset),
        // "CL_TRUE if memobj is a buffer object that was created with CL_MEM_USE_HOST_PTR
        // or is a sub-buffer object of a buffer object that was created with
        // CL_MEM_USE_HOST_PTR and the host_ptr specified when the buffer object was
        // created is a SVM pointer".
        CL_MEM_USES_SVM_POINTER => {
            Info::of(&(!m.host_ptr.is_null() && m.context.svm.find(m.host_ptr as usize).is_some()))
        }
        CL_MEM_PROPERTIES => Info::of(&m.properties),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetMemObjectInfo(
    memobj: cl_mem,
    param_name: cl_mem_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let m = from_handle::<Mem>(memobj)?;
    mem_info(&m, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

#[cl_entry_point]
fn clSetMemObjectDestructorCallback(
    memobj: cl_mem,
    pfn_notify: Option<MemDestructor>,
    user_data: *mut c_void,
) -> CLResult<()> {
    let m = from_handle::<Mem>(memobj)?;
    // "CL_INVALID_VALUE if pfn_notify is NULL."
    let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
    m.add_destructor(f, user_data as usize);
    Ok(())
}

#[cl_entry_point]
fn clCreatePipe(
    context: cl_context,
    flags: cl_mem_flags,
    pipe_packet_size: cl_uint,
    pipe_max_packets: cl_uint,
    properties: *const cl_pipe_properties,
) -> CLResult<cl_mem> {
    let c = from_handle::<Context>(context)?;
    // "CL_INVALID_VALUE if values specified in flags are not as defined above": only
    // CL_MEM_READ_WRITE and CL_MEM_HOST_NO_ACCESS, which 0 means too.
    if flags & !(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS) != 0 {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_VALUE if properties is not NULL": no pipe property is defined (an
    // empty list is NULL's equal).
    // SAFETY: a non-NULL list is zero-terminated by contract.
    if !properties.is_null() && unsafe { properties.read_unaligned() } != 0 {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_PIPE_SIZE if pipe_packet_size is 0 or the pipe_packet_size exceeds
    // CL_DEVICE_PIPE_MAX_PACKET_SIZE value specified in table 4.3 (see
    // clGetDeviceInfo) for all devices in context or if pipe_max_packets is 0." A ring
    // past the largest allocation cannot be made (positions count up to twice it).
    let total = u64::from(pipe_packet_size) * u64::from(pipe_max_packets);
    let fits = total <= crate::core::device::Device::get().limits.max_mem_alloc && pipe_max_packets < 1 << 31;
    if pipe_packet_size == 0 || pipe_packet_size > crate::core::device::pipes::MAX_PACKET_SIZE || !fits {
        return Err(CL_INVALID_PIPE_SIZE);
    }
    if pipe_max_packets == 0 {
        return Err(CL_INVALID_PIPE_SIZE);
    }
    let flags = CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS;
    let given = if properties.is_null() { Vec::new() } else { vec![0] };
    Ok(into_handle(Mem::new_pipe(c, flags, pipe_packet_size, pipe_max_packets, given)?))
}

#[cl_entry_point]
fn clGetPipeInfo(
    pipe: cl_mem,
    param_name: cl_pipe_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let m = from_handle::<Mem>(pipe)?;
    // "CL_INVALID_MEM_OBJECT if pipe is a not a valid pipe object."
    let p = m.pipe.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
    let info = match param_name {
        CL_PIPE_PACKET_SIZE => Info::of(&p.packet_size),
        CL_PIPE_MAX_PACKETS => Info::of(&p.max_packets),
        CL_PIPE_PROPERTIES => Info::of(&p.properties),
        _ => Err(CL_INVALID_VALUE),
    }?;
    info.write(param_value_size, param_value, param_value_size_ret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_groups() {
        assert!(check_flags(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, false).is_ok());
        assert!(check_flags(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, false).is_err());
        assert!(check_flags(CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY, false).is_err());
        assert!(check_flags(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, false).is_err());
        assert!(check_flags(CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, false).is_ok());
        assert!(check_flags(1 << 40, false).is_err());
        assert!(check_flags(CL_MEM_IMMUTABLE_EXT | CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, false).is_ok());
        assert!(check_flags(CL_MEM_IMMUTABLE_EXT | CL_MEM_HOST_WRITE_ONLY, false).is_err());
        assert!(check_flags(CL_MEM_IMMUTABLE_EXT | CL_MEM_KERNEL_READ_AND_WRITE, true).is_err());
        assert!(immutable_has_contents(CL_MEM_IMMUTABLE_EXT | CL_MEM_ALLOC_HOST_PTR).is_err());
        assert!(immutable_has_contents(CL_MEM_IMMUTABLE_EXT | CL_MEM_COPY_HOST_PTR).is_ok());
    }

    #[test]
    fn sub_buffer_inherits() {
        let parent = CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_READ_ONLY;
        assert_eq!(sub_buffer_flags(parent, 0), Ok(parent));
        assert_eq!(sub_buffer_flags(parent, CL_MEM_WRITE_ONLY), Err(CL_INVALID_VALUE));
        assert_eq!(sub_buffer_flags(parent, CL_MEM_HOST_WRITE_ONLY), Err(CL_INVALID_VALUE));
        assert_eq!(sub_buffer_flags(CL_MEM_READ_WRITE, CL_MEM_COPY_HOST_PTR), Err(CL_INVALID_VALUE));
        assert_eq!(
            sub_buffer_flags(CL_MEM_READ_WRITE, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS),
            Ok(CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS)
        );
    }
}
