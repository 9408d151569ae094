//! Image entry points: creation (from nothing, host memory, a buffer or another image),
//! format and image queries, and the image commands (read, write, copy, fill, copies
//! to and from buffers, map). Texels are laid out by `core::image`; commands move them
//! as byte rectangles with `core::region`.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::{from_handle, into_handle};
use super::memory::{check_flags, sub_buffer_flags};
use super::queue::{begin, submit};
use super::transfer::{check_host_access, map, rect_copy, triple, Ptr};
use super::util::{properties, property_array, write_opt, CLResult, Info, InfoValue};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::image::{self, Color, Desc, Layout, LIMITS};
use crate::core::memory::{Mem, IMMUTABLE, KERNEL_ACCESS};
use crate::core::queue::Queue;
use crate::core::queue::{once, Action};
use crate::core::region::{self, RectSide};

impl InfoValue for cl_image_format {
    fn append_to(&self, out: &mut Vec<u8>) {
        self.image_channel_order.append_to(out);
        self.image_channel_data_type.append_to(out);
    }
}

/// The pairs of channel orders a 2D image made from another image may view each other
/// as (OpenCL 3.0 section 5.3.1: the sRGB and linear forms of one layout, depth and R).
fn compatible_orders(a: cl_channel_order, b: cl_channel_order) -> bool {
    const PAIRS: &[(cl_channel_order, cl_channel_order)] =
        &[(CL_sBGRA, CL_BGRA), (CL_sRGBA, CL_RGBA), (CL_sRGB, CL_RGB), (CL_sRGBx, CL_RGBx), (CL_DEPTH, CL_R)];
    a == b || PAIRS.iter().any(|&(x, y)| (a, b) == (x, y) || (a, b) == (y, x))
}

/// The memory an image is made from (`image_desc->mem_object`), checked for the image
/// type and format, with the flags the image inherits from it.
fn image_source(
    c: &Arc<Context>,
    desc: &Desc,
    format: &cl_image_format,
    flags: cl_mem_flags,
    source: cl_mem,
) -> CLResult<(Arc<Mem>, cl_mem_flags)> {
    // "CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid":
    // only 1D buffer images and 2D images are made from other objects.
    let m = from_handle::<Mem>(source).map_err(|_| CL_INVALID_IMAGE_DESCRIPTOR)?;
    if !Arc::ptr_eq(&m.context, c) || m.pipe.is_some() {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let flags = sub_buffer_flags(m.flags, flags)?;
    match (desc.image_type, &m.image) {
        (CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D, None) => Ok((m, flags)),
        (CL_MEM_OBJECT_IMAGE2D, Some(src)) => {
            let l = &src.layout;
            // A view of the same texels: same size and pitch, a compatible format.
            let same_shape = l.image_type == CL_MEM_OBJECT_IMAGE2D
                && l.width == desc.width
                && l.height == desc.height
                && (desc.row_pitch == 0 || desc.row_pitch == l.row_pitch);
            let same_type = l.format.image_channel_data_type == format.image_channel_data_type;
            if !same_shape || !same_type || !compatible_orders(l.format.image_channel_order, format.image_channel_order)
            {
                return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
            }
            Ok((m, flags))
        }
        _ => Err(CL_INVALID_IMAGE_DESCRIPTOR),
    }
}

fn create_image(
    context: cl_context,
    props_list: *const cl_mem_properties,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: Option<Desc>,
    source: cl_mem,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let c = from_handle::<Context>(context)?;
    // No image properties exist without extensions.
    let pairs = properties(props_list)?;
    if !pairs.is_empty() {
        return Err(CL_INVALID_PROPERTY);
    }
    check_flags(flags, true)?;
    // "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not
    // valid or if image_format is NULL."
    if format.is_null() {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    // SAFETY: non-null, a cl_image_format by contract.
    let format = unsafe { format.read_unaligned() };
    if !image::valid(&format) {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    // "CL_INVALID_IMAGE_DESCRIPTOR if ... image_desc is NULL."
    let desc = desc.ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    image::shape(desc.image_type).ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    // A 1D buffer image needs its buffer; other types but 2D take none.
    let needs_source = desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER;
    if needs_source && source.is_null()
        || !source.is_null() && !needs_source && desc.image_type != CL_MEM_OBJECT_IMAGE2D
    {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let (parent, flags) = if source.is_null() {
        (None, flags)
    } else {
        let (m, flags) = image_source(&c, &desc, &format, flags, source)?;
        (Some(m), flags)
    };
    if parent.is_none() {
        super::memory::immutable_has_contents(flags)?;
    }
    // Without an access flag an image is read-write, an immutable one read-only.
    let access = if flags & IMMUTABLE != 0 { CL_MEM_READ_ONLY } else { CL_MEM_READ_WRITE };
    let flags = if flags & (super::memory::DEVICE_ACCESS | KERNEL_ACCESS) == 0 { flags | access } else { flags };
    // "CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
    // CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but
    // CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR are not set in flags." An image made
    // from another object has no host pointer of its own.
    let wants_ptr = parent.is_none() && flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if wants_ptr == host_ptr.is_null() {
        return Err(CL_INVALID_HOST_PTR);
    }
    // Pitches describe memory the application owns: its pointer or the buffer.
    let given = wants_ptr || parent.as_ref().is_some_and(|p| p.image.is_none());
    let host = image::layout(&desc, &format, given, &LIMITS)?;
    let packed = image::layout(&Desc { row_pitch: 0, slice_pitch: 0, ..desc }, &format, false, &LIMITS)?;
    let layout = match &parent {
        Some(p) => match &p.image {
            // A view keeps the source's pitches.
            Some(src) => Layout { format, ..src.layout },
            None => {
                // "CL_INVALID_IMAGE_SIZE if ... the buffer is smaller than the image";
                // 2D images from buffers need rows aligned to CL_DEVICE_IMAGE_PITCH_ALIGNMENT.
                if host.bytes().map_or(true, |b| b > p.size) {
                    return Err(CL_INVALID_IMAGE_SIZE);
                }
                if host.row_pitch % (image::PITCH_ALIGNMENT as usize * host.elem) != 0 {
                    return Err(CL_INVALID_IMAGE_DESCRIPTOR);
                }
                host
            }
        },
        None if flags & CL_MEM_USE_HOST_PTR != 0 => host,
        None => packed,
    };
    // "CL_IMAGE_FORMAT_NOT_SUPPORTED if there are no devices in context that support
    // image_format."
    if !image::is_supported(desc.image_type, flags, &format) {
        return Err(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    }
    // "CL_INVALID_IMAGE_SIZE if image dimensions specified in image_desc exceed the
    // maximum image dimensions ... for all devices in context" (the bytes included). The
    // application's memory its pitches describe is held to the same bound whether the
    // image uses it or copies it: a copy read a row pitch of 2^62 past its block.
    let max = c.devices.iter().map(|d| d.limits.max_mem_alloc).max().unwrap_or(0);
    let too_big = |l: &Layout| l.bytes().map_or(true, |b| b as u64 > max);
    if too_big(&layout) || wants_ptr && too_big(&host) {
        return Err(CL_INVALID_IMAGE_SIZE);
    }
    let align = Device::get().limits.base_addr_align;
    let props = property_array(&pairs, !props_list.is_null());
    Ok(into_handle(Mem::new_image(c, flags, layout, host, host_ptr, parent, props, align)?))
}

/// `cl_image_desc` without its union, and the memory object the union names.
fn read_desc(desc: *const cl_image_desc) -> Option<(Desc, cl_mem)> {
    if desc.is_null() {
        return None;
    }
    // SAFETY: non-null, a cl_image_desc by contract.
    let d = unsafe { desc.read_unaligned() };
    let out = Desc {
        image_type: d.image_type,
        width: d.image_width,
        height: d.image_height,
        depth: d.image_depth,
        array_size: d.image_array_size,
        row_pitch: d.image_row_pitch,
        slice_pitch: d.image_slice_pitch,
        num_mip_levels: d.num_mip_levels,
        num_samples: d.num_samples,
    };
    Some((out, d.buffer))
}

#[cl_entry_point]
fn clCreateImage(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let (d, source) = read_desc(desc).unzip();
    create_image(context, std::ptr::null(), flags, format, d, source.unwrap_or(null_mut()), host_ptr)
}

#[cl_entry_point]
fn clCreateImageWithProperties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let (d, source) = read_desc(desc).unzip();
    create_image(context, properties, flags, format, d, source.unwrap_or(null_mut()), host_ptr)
}

#[cl_entry_point]
fn clCreateImage2D(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: usize,
    height: usize,
    row_pitch: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let desc = Desc { image_type: CL_MEM_OBJECT_IMAGE2D, width, height, row_pitch, ..Default::default() };
    create_image(context, std::ptr::null(), flags, format, Some(desc), null_mut(), host_ptr)
}

#[cl_entry_point]
fn clCreateImage3D(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: usize,
    height: usize,
    depth: usize,
    row_pitch: usize,
    slice_pitch: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    let desc =
        Desc { image_type: CL_MEM_OBJECT_IMAGE3D, width, height, depth, row_pitch, slice_pitch, ..Default::default() };
    create_image(context, std::ptr::null(), flags, format, Some(desc), null_mut(), host_ptr)
}

#[cl_entry_point]
fn clGetSupportedImageFormats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    num_entries: cl_uint,
    image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> CLResult<()> {
    from_handle::<Context>(context)?;
    // "CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0
    // and image_formats is not NULL."
    check_flags(flags, true)?;
    image::shape(image_type).ok_or(CL_INVALID_VALUE)?;
    if num_entries == 0 && !image_formats.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let list = image::supported(image_type, flags);
    if !image_formats.is_null() {
        for (i, f) in list.iter().take(num_entries as usize).enumerate() {
            // SAFETY: the application's array has room for num_entries formats.
            unsafe { image_formats.add(i).write_unaligned(*f) };
        }
    }
    write_opt(num_image_formats, list.len() as cl_uint);
    Ok(())
}

/// An image argument: a valid memory object that is an image, else
/// `CL_INVALID_MEM_OBJECT`.
pub(super) fn image_of(mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m = from_handle::<Mem>(mem)?;
    if m.image.is_none() {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    Ok(m)
}

fn layout_of(m: &Mem) -> &Layout {
    &m.image.as_ref().expect("checked by image_of").layout
}

fn image_info(m: &Arc<Mem>, param: cl_image_info) -> CLResult<Info> {
    let l = layout_of(m);
    let (dims, _) = image::shape(l.image_type).unwrap_or((1, false));
    match param {
        CL_IMAGE_FORMAT => Info::of(&l.format),
        CL_IMAGE_ELEMENT_SIZE => Info::of(&l.elem),
        CL_IMAGE_ROW_PITCH => Info::of(&l.row_pitch),
        CL_IMAGE_SLICE_PITCH => Info::of(&l.slice_pitch),
        CL_IMAGE_WIDTH => Info::of(&l.width),
        CL_IMAGE_HEIGHT => Info::of(&if dims >= 2 { l.height } else { 0 }),
        CL_IMAGE_DEPTH => Info::of(&if dims == 3 { l.depth } else { 0 }),
        CL_IMAGE_ARRAY_SIZE => Info::of(&l.array_size),
        CL_IMAGE_BUFFER => {
            let buffer =
                m.parent.as_ref().filter(|p| p.image.is_none() && l.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER);
            Info::of(&buffer.map_or(null_mut(), super::icd::handle_of))
        }
        CL_IMAGE_NUM_MIP_LEVELS | CL_IMAGE_NUM_SAMPLES => Info::of(&(0 as cl_uint)),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cl_entry_point]
fn clGetImageInfo(
    image: cl_mem,
    param_name: cl_image_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> CLResult<()> {
    let m = image_of(image)?;
    image_info(&m, param_name)?.write(param_value_size, param_value, param_value_size_ret)
}

/// An image argument of a command on `queue`.
fn image_on(queue: &Queue, mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m = image_of(mem)?;
    // "CL_INVALID_CONTEXT if the context associated with command_queue and image are not
    // the same."
    if !Arc::ptr_eq(&m.context, &queue.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(m)
}

/// Origin and region of an image command, checked against the image: the byte
/// rectangle on the image side and the region in bytes.
///
/// # Safety
/// `origin` and `region` are null or point at three `size_t`s each.
unsafe fn image_region(l: &Layout, origin: *const usize, region: *const usize) -> CLResult<(RectSide, [usize; 3])> {
    let (o, r) = (triple(origin)?, triple(region)?);
    if !l.contains(o, r) {
        return Err(CL_INVALID_VALUE);
    }
    Ok((l.rect(o), [r[0] * l.elem, r[1], r[2]]))
}

/// The host side of a read or write ("CL_INVALID_VALUE if ... row_pitch is not 0 and
/// is less than region[0] * element size"; a slice pitch, for 3D images and arrays,
/// at least row_pitch * height, "must be 0 if image is a 1D or 2D image"). A 1D array's
/// images are a slice pitch apart; a 0 pitch means packed.
fn host_side(l: &Layout, bytes: [usize; 3], row_pitch: usize, slice_pitch: usize) -> CLResult<RectSide> {
    let row = if row_pitch == 0 { bytes[0] } else { row_pitch };
    let array_1d = l.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    let flat = matches!(l.image_type, CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D);
    if row < bytes[0] || flat && slice_pitch != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let rows = if array_1d { 1 } else { bytes[1] };
    let min_slice = row.checked_mul(rows).ok_or(CL_INVALID_VALUE)?;
    let slice = if slice_pitch == 0 { min_slice } else { slice_pitch };
    if slice < min_slice {
        return Err(CL_INVALID_VALUE);
    }
    let side = if array_1d {
        RectSide { origin: [0; 3], row_pitch: slice, slice_pitch: slice }
    } else {
        RectSide { origin: [0; 3], row_pitch: row, slice_pitch: slice }
    };
    side.end(bytes).ok_or(CL_INVALID_VALUE)?;
    Ok(side)
}

/// # Safety
/// `origin` and `region` are null or three `size_t`s long; `ptr` is valid for the region's
/// bytes until the command completes (the application's promise); the wait list is null or
/// `num` handles long; `event` is null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn read_write(
    queue: cl_command_queue,
    image: cl_mem,
    reading: bool,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num, list)?;
    let m = image_on(&q, image)?;
    let l = *layout_of(&m);
    let (side, bytes) = image_region(&l, origin, region)?;
    let host = host_side(&l, bytes, row_pitch, slice_pitch)?;
    if ptr.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    check_host_access(&m, reading)?;
    let (image, host) = ((Ptr(m.data()), side), (Ptr(ptr.cast()), host));
    let cmd = if reading { CL_COMMAND_READ_IMAGE } else { CL_COMMAND_WRITE_IMAGE };
    let (src, dst) = if reading { (image, host) } else { (host, image) };
    // SAFETY: the image side lies inside the image (checked); the host side is the
    // application's.
    let action = unsafe { rect_copy(m, src, dst, bytes) };
    submit(&q, cmd, wait, event, blocking != CL_FALSE, once(action))
}

#[cl_entry_point]
fn clEnqueueReadImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking_read: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    read_write(
        queue,
        image,
        true,
        blocking_read,
        origin,
        region,
        row_pitch,
        slice_pitch,
        ptr,
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueWriteImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking_write: cl_bool,
    origin: *const usize,
    region: *const usize,
    input_row_pitch: usize,
    input_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    read_write(
        queue,
        image,
        false,
        blocking_write,
        origin,
        region,
        input_row_pitch,
        input_slice_pitch,
        ptr.cast_mut(),
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

/// Whether two regions of one image share a texel.
fn regions_overlap(src: [usize; 3], dst: [usize; 3], region: [usize; 3]) -> bool {
    (0..3).all(|d| src[d] < dst[d] + region[d] && dst[d] < src[d] + region[d])
}

#[cl_entry_point]
fn clEnqueueCopyImage(
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let action = copy_image(&q, src_image, dst_image, src_origin, dst_origin, region)?;
    submit(&q, CL_COMMAND_COPY_IMAGE, wait, event, false, once(action))
}

/// `clEnqueueCopyImage`'s checks and body, which `clCommandCopyImageKHR` records.
///
/// # Safety
/// The origins and region are null or three `size_t`s long.
pub(super) unsafe fn copy_image(
    q: &Queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
) -> CLResult<Action> {
    let (src, dst) = (image_on(q, src_image)?, image_on(q, dst_image)?);
    super::transfer::writable(&dst)?;
    let (sl, dl) = (*layout_of(&src), *layout_of(&dst));
    // "CL_IMAGE_FORMAT_MISMATCH if src_image and dst_image do not use the same image
    // format."
    let same = |a: &cl_image_format, b: &cl_image_format| {
        a.image_channel_order == b.image_channel_order && a.image_channel_data_type == b.image_channel_data_type
    };
    if !same(&sl.format, &dl.format) {
        return Err(CL_IMAGE_FORMAT_MISMATCH);
    }
    let (s, bytes) = image_region(&sl, src_origin, region)?;
    let (d, _) = image_region(&dl, dst_origin, region)?;
    // "CL_MEM_COPY_OVERLAP if src_image and dst_image are the same image object and
    // the source and destination regions overlap."
    let (so, dor, r) = (triple(src_origin)?, triple(dst_origin)?, triple(region)?);
    if Arc::ptr_eq(&src, &dst) && regions_overlap(so, dor, r) {
        return Err(CL_MEM_COPY_OVERLAP);
    }
    let (from, to) = ((Ptr(src.data()), s), (Ptr(dst.data()), d));
    // SAFETY: both regions lie inside their images.
    Ok(unsafe { rect_copy((src, dst), from, to, bytes) })
}

#[cl_entry_point]
fn clEnqueueFillImage(
    queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let action = fill_image(&q, image, fill_color, origin, region)?;
    submit(&q, CL_COMMAND_FILL_IMAGE, wait, event, false, once(action))
}

/// `clEnqueueFillImage`'s checks and body, which `clCommandFillImageKHR` records.
///
/// # Safety
/// `fill_color` is null or four 32-bit values; `origin` and `region` are null or three
/// `size_t`s long.
pub(super) unsafe fn fill_image(
    q: &Queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
) -> CLResult<Action> {
    let m = image_on(q, image)?;
    super::transfer::writable(&m)?;
    let l = *layout_of(&m);
    // "CL_INVALID_VALUE if fill_color is NULL."
    if fill_color.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let (side, bytes) = image_region(&l, origin, region)?;
    // SAFETY: fill_color points at four 32-bit values by contract.
    let texel = image::encode(&l.format, unsafe { Color::read(fill_color.cast(), l.format.image_channel_data_type) });
    let data = Ptr(m.data());
    Ok(Box::new(move || {
        let _image = &m;
        for z in 0..bytes[2] {
            for y in 0..bytes[1] {
                // SAFETY: each row of the region lies inside the image (checked).
                unsafe { region::fill(data.get().add(side.row_offset(y, z)), bytes[0], &texel) };
            }
        }
        Ok(())
    }))
}

/// A buffer argument of an image-buffer copy: a buffer, not an image.
fn buffer_of(queue: &Queue, mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m = from_handle::<Mem>(mem)?;
    if !m.is_buffer() {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    if !Arc::ptr_eq(&m.context, &queue.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(m)
}

/// The buffer side of an image-buffer copy: the region packed from `offset`, inside
/// the buffer ("CL_INVALID_VALUE if the region specified by dst_offset and dst_offset
/// + dst_cb refer to a region outside dst_buffer").
fn packed_side(b: &Mem, offset: usize, bytes: [usize; 3]) -> CLResult<RectSide> {
    // Packed: a 1D array's images follow each other like rows.
    let side = RectSide { origin: [offset, 0, 0], row_pitch: bytes[0], slice_pitch: bytes[0] * bytes[1] };
    let end = side.end(bytes).ok_or(CL_INVALID_VALUE)?;
    if end > b.size {
        return Err(CL_INVALID_VALUE);
    }
    Ok(side)
}

/// # Safety
/// `origin` and `region` are null or three `size_t`s long; the wait list is null or `num`
/// handles long; `event` is null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn image_buffer_copy(
    queue: cl_command_queue,
    image: cl_mem,
    buffer: cl_mem,
    to_buffer: bool,
    origin: *const usize,
    region: *const usize,
    offset: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num, list)?;
    let action = image_buffer_command(&q, image, buffer, to_buffer, origin, region, offset)?;
    let cmd = if to_buffer { CL_COMMAND_COPY_IMAGE_TO_BUFFER } else { CL_COMMAND_COPY_BUFFER_TO_IMAGE };
    submit(&q, cmd, wait, event, false, once(action))
}

/// The checks and body of `clEnqueueCopyImageToBuffer` (`to_buffer`) and
/// `clEnqueueCopyBufferToImage`, which their `clCommand*KHR` forms record.
///
/// # Safety
/// `origin` and `region` are null or three `size_t`s long.
pub(super) unsafe fn image_buffer_command(
    q: &Queue,
    image: cl_mem,
    buffer: cl_mem,
    to_buffer: bool,
    origin: *const usize,
    region: *const usize,
    offset: usize,
) -> CLResult<Action> {
    let m = image_on(q, image)?;
    let b = buffer_of(q, buffer)?;
    super::transfer::writable(if to_buffer { &b } else { &m })?;
    let l = *layout_of(&m);
    let (side, bytes) = image_region(&l, origin, region)?;
    let packed = packed_side(&b, offset, bytes)?;
    let (img, buf) = ((Ptr(m.data()), side), (Ptr(b.data()), packed));
    let (src, dst) = if to_buffer { (img, buf) } else { (buf, img) };
    // SAFETY: both sides were checked against their objects.
    Ok(unsafe { rect_copy((m, b), src, dst, bytes) })
}

#[cl_entry_point]
fn clEnqueueCopyImageToBuffer(
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    image_buffer_copy(
        queue,
        src_image,
        dst_buffer,
        true,
        src_origin,
        region,
        dst_offset,
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueCopyBufferToImage(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    image_buffer_copy(
        queue,
        dst_image,
        src_buffer,
        false,
        dst_origin,
        region,
        src_offset,
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueMapImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<*mut c_void> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let m = image_on(&q, image)?;
    let l = *layout_of(&m);
    let (side, _) = image_region(&l, origin, region)?;
    // An immutable image refuses a map for writing before the pitches are looked at
    // (the CTS's negative_enqueue_map_image passes none).
    if map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0 {
        super::transfer::writable(&m)?;
    }
    // "CL_INVALID_VALUE if image_row_pitch is NULL", and "if image is a 3D image, 1D
    // or 2D image array object and image_slice_pitch is NULL".
    let (_, array) = image::shape(l.image_type).unwrap_or((1, false));
    if image_row_pitch.is_null() || (image_slice_pitch.is_null() && (array || l.image_type == CL_MEM_OBJECT_IMAGE3D)) {
        return Err(CL_INVALID_VALUE);
    }
    // The image is host memory: the mapping points into it, with its own pitches.
    // SAFETY: the origin lies inside the image (checked).
    let ptr = unsafe { m.data().add(side.row_offset(0, 0)) };
    write_opt(image_row_pitch, l.row_pitch);
    write_opt(image_slice_pitch, l.slice_pitch);
    map(&q, m, CL_COMMAND_MAP_IMAGE, wait, event, blocking_map != CL_FALSE, map_flags, ptr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_pair_srgb_and_linear() {
        assert!(compatible_orders(CL_sRGBA, CL_RGBA));
        assert!(compatible_orders(CL_R, CL_DEPTH));
        assert!(!compatible_orders(CL_RGBA, CL_BGRA));
    }

    #[test]
    fn overlapping_regions() {
        assert!(regions_overlap([0, 0, 0], [1, 1, 0], [2, 2, 1]));
        assert!(!regions_overlap([0, 0, 0], [2, 0, 0], [2, 2, 1]));
    }
}
