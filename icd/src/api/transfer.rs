//! Commands that move buffer bytes: read, write, copy, fill (and their `_rect` forms),
//! map/unmap and migrate.

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::from_handle;
use super::queue::{begin, submit};
use super::util::{slice, CLResult};
use crate::core::memory::{Mem, IMMUTABLE};
use crate::core::queue::Queue;
use crate::core::queue::{once, Action};
use crate::core::region::{self, fits, overlaps, RectSide};

/// A pointer moved into a command closure. The application keeps host memory alive
/// until the command completes (the spec's contract for non-blocking transfers); buffer
/// memory is kept alive by the `Arc<Mem>` the closure also holds.
#[derive(Clone, Copy)]
pub(super) struct Ptr(pub(super) *mut u8);
// SAFETY: see above; the command thread is the only user while the command runs.
unsafe impl Send for Ptr {}
// SAFETY: a plain address; what may be done through it is the command's contract.
unsafe impl Sync for Ptr {}

impl Ptr {
    /// Closures must capture the whole `Ptr` (a field access would capture the bare,
    /// non-`Send` pointer), hence a method rather than `.0`.
    pub(super) fn get(self) -> *mut u8 {
        self.0
    }
}

/// One side of a rectangle copy: where its memory starts and how the region lies in it.
pub(super) type Side = (Ptr, RectSide);

/// A command copying `region` (bytes, rows, slices) from `src` to `dst`. `keep` holds
/// the memory objects involved while the command exists.
///
/// # Safety
/// Both sides lie inside memory valid whenever the command runs: memory objects the
/// caller bounds-checked (and `keep` holds), or application memory the spec makes the
/// application keep valid until the command completes.
pub(super) unsafe fn rect_copy(keep: impl Send + Sync + 'static, src: Side, dst: Side, region: [usize; 3]) -> Action {
    Box::new(move || {
        let _keep = &keep;
        let ((from, s), (to, d)) = (src, dst);
        // SAFETY: the caller's contract.
        unsafe { region::copy_rect(from.get(), &s, to.get(), &d, region) };
        Ok(())
    })
}

/// A buffer argument of a command on `queue`: an image is `CL_INVALID_MEM_OBJECT`.
pub(super) fn buffer_on(queue: &Queue, mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m = mem_on(queue, mem)?;
    if !m.is_buffer() {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    Ok(m)
}

/// A memory object (buffer or image) of a command on `queue`.
fn mem_on(queue: &Queue, mem: cl_mem) -> CLResult<Arc<Mem>> {
    let m = from_handle::<Mem>(mem)?;
    // "CL_INVALID_CONTEXT if the context associated with command_queue and buffer are
    // not the same."
    if !Arc::ptr_eq(&m.context, &queue.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(m)
}

/// "CL_INVALID_OPERATION if clEnqueueReadBuffer is called on buffer which has been
/// created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS" (and the mirror rule
/// for writes, which an immutable object refuses too).
pub(super) fn check_host_access(m: &Mem, reading: bool) -> CLResult<()> {
    let forbidden = if reading { CL_MEM_HOST_WRITE_ONLY } else { CL_MEM_HOST_READ_ONLY } | CL_MEM_HOST_NO_ACCESS;
    if m.flags & forbidden != 0 {
        return Err(CL_INVALID_OPERATION);
    }
    if reading {
        Ok(())
    } else {
        writable(m)
    }
}

/// `cl_ext_immutable_memory_objects`: "CL_INVALID_OPERATION if [the object written] has
/// been created with CL_MEM_IMMUTABLE_EXT", for every command that writes it (writes,
/// fills, the destination of copies, maps for writing).
pub(super) fn writable(m: &Mem) -> CLResult<()> {
    match m.flags & IMMUTABLE != 0 {
        true => Err(CL_INVALID_OPERATION),
        false => Ok(()),
    }
}

/// Reads a `size_t[3]` argument (`CL_INVALID_VALUE` when null).
///
/// # Safety
/// `p` is null or points at three `size_t`s.
pub(super) unsafe fn triple(p: *const usize) -> CLResult<[usize; 3]> {
    let s = slice(p, 3);
    if s.len() != 3 {
        return Err(CL_INVALID_VALUE);
    }
    Ok([s[0], s[1], s[2]])
}

/// # Safety
/// `ptr` is valid for `size` bytes until the command completes (the application's promise);
/// the wait list is null or `num` handles long; `event` is null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn read_write(
    queue: cl_command_queue,
    buffer: cl_mem,
    reading: bool,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut u8,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num, list)?;
    let m = buffer_on(&q, buffer)?;
    // "CL_INVALID_VALUE if the region being read or written specified by (offset, size)
    // is out of bounds or if ptr is a NULL value" (size 0 is such a region).
    if ptr.is_null() || size == 0 || !fits(offset, size, m.size) {
        return Err(CL_INVALID_VALUE);
    }
    check_host_access(&m, reading)?;
    // SAFETY: offset + size <= m.size.
    let at = Ptr(unsafe { m.data().add(offset) });
    let host = Ptr(ptr);
    let (src, dst, cmd) =
        if reading { (at, host, CL_COMMAND_READ_BUFFER) } else { (host, at, CL_COMMAND_WRITE_BUFFER) };
    submit(
        &q,
        cmd,
        wait,
        event,
        blocking != CL_FALSE,
        Box::new(move || {
            let _buffer = m;
            // SAFETY: both ranges hold `size` bytes (checked above / the caller's contract).
            unsafe { std::ptr::copy(src.get(), dst.get(), size) };
            Ok(())
        }),
    )
}

#[cl_entry_point]
fn clEnqueueReadBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking_read: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    read_write(
        queue,
        buffer,
        true,
        blocking_read,
        offset,
        size,
        ptr.cast(),
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueWriteBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking_write: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    read_write(
        queue,
        buffer,
        false,
        blocking_write,
        offset,
        size,
        ptr as *mut u8,
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueCopyBuffer(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let action = copy_buffer(&q, src_buffer, dst_buffer, src_offset, dst_offset, size)?;
    submit(&q, CL_COMMAND_COPY_BUFFER, wait, event, false, once(action))
}

/// `clEnqueueCopyBuffer`'s checks and body, which `clCommandCopyBufferKHR` records.
pub(super) fn copy_buffer(
    q: &Queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
) -> CLResult<Action> {
    let src = buffer_on(q, src_buffer)?;
    let dst = buffer_on(q, dst_buffer)?;
    writable(&dst)?;
    // "CL_INVALID_VALUE if src_offset, dst_offset, size, src_offset + size or
    // dst_offset + size require accessing elements outside the src_buffer and
    // dst_buffer buffer objects respectively" and "if size is 0".
    if size == 0 || !fits(src_offset, size, src.size) || !fits(dst_offset, size, dst.size) {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or
    // sub-buffer object and the source and destination regions overlap or if
    // src_buffer and dst_buffer are different sub-buffers of the same associated
    // buffer object and they overlap."
    let ((sr, so), (dr, doff)) = (src.root(), dst.root());
    if sr == dr && overlaps(so + src_offset, size, doff + dst_offset, size) {
        return Err(CL_MEM_COPY_OVERLAP);
    }
    // SAFETY: both offsets were bounds-checked above.
    let (from, to) = unsafe { (Ptr(src.data().add(src_offset)), Ptr(dst.data().add(dst_offset))) };
    Ok(Box::new(move || {
        let _buffers = (&src, &dst);
        // SAFETY: in bounds of both buffers, which the closure keeps alive.
        unsafe { std::ptr::copy(from.get(), to.get(), size) };
        Ok(())
    }))
}

#[cl_entry_point]
fn clEnqueueFillBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let action = fill_buffer(&q, buffer, pattern, pattern_size, offset, size)?;
    submit(&q, CL_COMMAND_FILL_BUFFER, wait, event, false, once(action))
}

/// `clEnqueueFillBuffer`'s checks and body, which `clCommandFillBufferKHR` records.
///
/// # Safety
/// `pattern` is null or `pattern_size` bytes long.
pub(super) unsafe fn fill_buffer(
    q: &Queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
) -> CLResult<Action> {
    let m = buffer_on(q, buffer)?;
    writable(&m)?;
    // "CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if pattern_size
    // is not one of { 1, 2, 4, 8, 16, 32, 64, 128 }", "if offset or offset + size
    // require accessing elements outside the buffer buffer object", "if offset and
    // size are not a multiple of pattern_size".
    if pattern.is_null() || !pattern_size.is_power_of_two() || pattern_size > 128 {
        return Err(CL_INVALID_VALUE);
    }
    if offset % pattern_size != 0 || size % pattern_size != 0 || !fits(offset, size, m.size) {
        return Err(CL_INVALID_VALUE);
    }
    // The application may reuse `pattern` as soon as this call returns.
    let pattern = slice(pattern.cast::<u8>(), pattern_size).to_vec();
    // SAFETY: bounds-checked above.
    let at = Ptr(unsafe { m.data().add(offset) });
    Ok(Box::new(move || {
        let _buffer = &m;
        // SAFETY: `size` bytes from `at` lie inside the buffer.
        unsafe { region::fill(at.get(), size, &pattern) };
        Ok(())
    }))
}

/// One side of a `_rect` transfer, checked against `limit` bytes when it is a buffer.
///
/// # Safety
/// `origin` is null or points at three `size_t`s.
unsafe fn rect_side(
    origin: *const usize,
    region: [usize; 3],
    row: usize,
    slice: usize,
    limit: Option<usize>,
) -> CLResult<RectSide> {
    // "CL_INVALID_VALUE if ... buffer_row_pitch is not 0 and is less than region[0]",
    // "... buffer_slice_pitch is not 0 and is less than region[1] * buffer_row_pitch
    // and not a multiple of buffer_row_pitch" (likewise for the host side), and "if the
    // region being read or written ... is out of bounds".
    let side = RectSide::new(triple(origin)?, region, row, slice).ok_or(CL_INVALID_VALUE)?;
    let end = side.end(region).ok_or(CL_INVALID_VALUE)?;
    if limit.is_some_and(|l| end > l) {
        return Err(CL_INVALID_VALUE);
    }
    Ok(side)
}

/// "CL_INVALID_VALUE if any region array element is 0."
///
/// # Safety
/// `region` is null or points at three `size_t`s.
unsafe fn rect_region(region: *const usize) -> CLResult<[usize; 3]> {
    let r = triple(region)?;
    if r.contains(&0) {
        return Err(CL_INVALID_VALUE);
    }
    Ok(r)
}

/// # Safety
/// The origins and region are null or three `size_t`s long; `ptr` is valid for the
/// rectangle's bytes until the command completes (the application's promise); the wait list
/// is null or `num` handles long; `event` is null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn read_write_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    reading: bool,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    pitches: [usize; 4],
    ptr: *mut u8,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num, list)?;
    let m = buffer_on(&q, buffer)?;
    let region = rect_region(region)?;
    let buf = rect_side(buffer_origin, region, pitches[0], pitches[1], Some(m.size))?;
    let host = rect_side(host_origin, region, pitches[2], pitches[3], None)?;
    if ptr.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    check_host_access(&m, reading)?;
    let (buffer, host) = ((Ptr(m.data()), buf), (Ptr(ptr), host));
    let cmd = if reading { CL_COMMAND_READ_BUFFER_RECT } else { CL_COMMAND_WRITE_BUFFER_RECT };
    let (src, dst) = if reading { (buffer, host) } else { (host, buffer) };
    // SAFETY: the buffer side was bounds-checked; the host side is the caller's.
    let action = unsafe { rect_copy(m, src, dst, region) };
    submit(&q, cmd, wait, event, blocking != CL_FALSE, once(action))
}

#[cl_entry_point]
fn clEnqueueReadBufferRect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking_read: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let pitches = [buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch];
    read_write_rect(
        queue,
        buffer,
        true,
        blocking_read,
        buffer_origin,
        host_origin,
        region,
        pitches,
        ptr.cast(),
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueWriteBufferRect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking_write: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let pitches = [buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch];
    read_write_rect(
        queue,
        buffer,
        false,
        blocking_write,
        buffer_origin,
        host_origin,
        region,
        pitches,
        ptr as *mut u8,
        num_events_in_wait_list,
        event_wait_list,
        event,
    )
}

#[cl_entry_point]
fn clEnqueueCopyBufferRect(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let pitches = [src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch];
    let action = copy_buffer_rect(&q, src_buffer, dst_buffer, src_origin, dst_origin, region, pitches)?;
    submit(&q, CL_COMMAND_COPY_BUFFER_RECT, wait, event, false, once(action))
}

/// `clEnqueueCopyBufferRect`'s checks and body, which `clCommandCopyBufferRectKHR`
/// records; `pitches` are the source's row and slice pitches, then the destination's.
///
/// # Safety
/// The origins and region are null or three `size_t`s long.
pub(super) unsafe fn copy_buffer_rect(
    q: &Queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    pitches: [usize; 4],
) -> CLResult<Action> {
    let src = buffer_on(q, src_buffer)?;
    let dst = buffer_on(q, dst_buffer)?;
    writable(&dst)?;
    let region = rect_region(region)?;
    let s = rect_side(src_origin, region, pitches[0], pitches[1], Some(src.size))?;
    let d = rect_side(dst_origin, region, pitches[2], pitches[3], Some(dst.size))?;
    if Arc::ptr_eq(&src, &dst) {
        // "CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object
        // and src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is
        // not equal to dst_row_pitch."
        if s.row_pitch != d.row_pitch || s.slice_pitch != d.slice_pitch {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or
        // sub-buffer object and the source and destination regions overlap."
        if region::rects_overlap(s.origin, d.origin, region, s.row_pitch, s.slice_pitch) {
            return Err(CL_MEM_COPY_OVERLAP);
        }
    }
    let (from, to) = ((Ptr(src.data()), s), (Ptr(dst.data()), d));
    // SAFETY: both sides were bounds-checked against their buffers.
    Ok(unsafe { rect_copy((src, dst), from, to, region) })
}

const MAP_FLAGS: cl_map_flags = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;

#[cl_entry_point]
fn clEnqueueMapBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<*mut c_void> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let m = buffer_on(&q, buffer)?;
    // "CL_INVALID_VALUE if region being mapped given by (offset, size) is out of
    // bounds or if size is 0".
    if size == 0 || !fits(offset, size, m.size) {
        return Err(CL_INVALID_VALUE);
    }
    // The buffer is host memory (for USE_HOST_PTR, the application's own block, as
    // the spec requires), so the mapping is a pointer into it.
    // SAFETY: offset + size <= m.size.
    let ptr = unsafe { m.data().add(offset) };
    map(&q, m, CL_COMMAND_MAP_BUFFER, wait, event, blocking_map != CL_FALSE, map_flags, ptr)
}

/// What every map shares once its region is checked: the flags ("CL_INVALID_VALUE if
/// ... values specified in map_flags are not valid"; CL_MAP_WRITE_INVALIDATE_REGION "is
/// mutually exclusive with CL_MAP_READ or CL_MAP_WRITE"), the host access flags
/// ("CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_WRITE_ONLY or
/// CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set in map_flags or if buffer has been
/// created with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE or
/// CL_MAP_WRITE_INVALIDATE_REGION is set in map_flags"), the mapping recorded for
/// unmap, and the command. `ptr` points into `m`'s memory.
///
/// # Safety
/// `event` is null or writable; `ptr` points into `m` at the mapped region.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn map(
    q: &Arc<Queue>,
    m: Arc<Mem>,
    cmd: cl_command_type,
    wait: Vec<Arc<crate::core::event::Event>>,
    event: *mut cl_event,
    blocking: bool,
    map_flags: cl_map_flags,
    ptr: *mut u8,
) -> CLResult<*mut c_void> {
    let invalidate_conflict =
        map_flags & CL_MAP_WRITE_INVALIDATE_REGION != 0 && map_flags & (CL_MAP_READ | CL_MAP_WRITE) != 0;
    if map_flags & !MAP_FLAGS != 0 || invalidate_conflict {
        return Err(CL_INVALID_VALUE);
    }
    if map_flags & CL_MAP_READ != 0 {
        check_host_access(&m, true)?;
    }
    if map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0 {
        check_host_access(&m, false)?;
    }
    m.add_map(ptr);
    submit(
        q,
        cmd,
        wait,
        event,
        blocking,
        Box::new(move || {
            let _mapped = m;
            Ok(())
        }),
    )?;
    Ok(ptr.cast())
}

#[cl_entry_point]
fn clEnqueueUnmapMemObject(
    queue: cl_command_queue,
    memobj: cl_mem,
    mapped_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    let m = mem_on(&q, memobj)?;
    // "CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by
    // clEnqueueMapBuffer or clEnqueueMapImage for memobj."
    if !m.remove_map(mapped_ptr) {
        return Err(CL_INVALID_VALUE);
    }
    submit(
        &q,
        CL_COMMAND_UNMAP_MEM_OBJECT,
        wait,
        event,
        false,
        Box::new(move || {
            let _buffer = m;
            Ok(())
        }),
    )
}

#[cl_entry_point]
fn clEnqueueMigrateMemObjects(
    queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> CLResult<()> {
    let (q, wait) = begin(queue, num_events_in_wait_list, event_wait_list)?;
    // "CL_INVALID_VALUE if num_mem_objects is zero or if mem_objects is NULL or if
    // flags is not 0 or is not any of the values described in the table above."
    if num_mem_objects == 0 || mem_objects.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    if flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let mems =
        slice(mem_objects, num_mem_objects as usize).iter().map(|&m| mem_on(&q, m)).collect::<CLResult<Vec<_>>>()?;
    // One memory serves host and device: there is nothing to move.
    submit(
        &q,
        CL_COMMAND_MIGRATE_MEM_OBJECTS,
        wait,
        event,
        false,
        Box::new(move || {
            drop(mems);
            Ok(())
        }),
    )
}
