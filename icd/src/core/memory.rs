//! Buffers, sub-buffers and images. Device memory is host memory: a buffer is an
//! aligned allocation (or the application's pointer under `CL_MEM_USE_HOST_PTR`), and
//! mapping returns a pointer straight into it. An image is the same with a layout
//! (`core::image`) and the descriptor kernels read it through.

use std::alloc::{self, Layout as AllocLayout};
use std::ffi::c_void;
use std::sync::Arc;

use opencl_sys::*;
use parking_lot::Mutex;

use super::context::Context;
use super::image::Layout;
use super::object::CLResult;
use super::object::{cl_object, Base};

pub(crate) type MemDestructor = unsafe extern "C" fn(cl_mem, *mut c_void);

/// Access flags: at most one of each group may be given.
pub(crate) const DEVICE_ACCESS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
pub(crate) const HOST_ACCESS: cl_mem_flags = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
pub(crate) const HOST_PTR_FLAGS: cl_mem_flags = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
/// `CL_MEM_KERNEL_READ_AND_WRITE`: images only, alongside the access flags.
pub(crate) const KERNEL_ACCESS: cl_mem_flags = CL_MEM_KERNEL_READ_AND_WRITE;
/// `cl_ext_immutable_memory_objects`: nothing may change the object's contents after
/// its creation (`api::transfer::writable`).
pub(crate) const IMMUTABLE: cl_mem_flags = CL_MEM_IMMUTABLE_EXT;
pub(crate) const BUFFER_FLAGS: cl_mem_flags = DEVICE_ACCESS | HOST_ACCESS | HOST_PTR_FLAGS | IMMUTABLE;

/// The bytes behind a root buffer.
struct Storage {
    ptr: *mut u8,
    owner: Owner,
}

enum Owner {
    /// The application's `USE_HOST_PTR` memory.
    Application,
    Heap(AllocLayout),
    /// A mapping of this many bytes (`huge_pages`).
    Mapped(usize),
}

impl Storage {
    /// The application's block under `CL_MEM_USE_HOST_PTR`, else `size` zeroed bytes
    /// aligned to `align` (not yet filled from a host pointer).
    fn new(flags: cl_mem_flags, size: usize, host_ptr: *mut c_void, align: usize) -> CLResult<Storage> {
        if flags & CL_MEM_USE_HOST_PTR != 0 {
            return Ok(Storage { ptr: host_ptr.cast(), owner: Owner::Application });
        }
        let layout = AllocLayout::from_size_align(size, align).map_err(|_| CL_INVALID_BUFFER_SIZE)?;
        // Zeroed: no buffer ever exposes another object's old bytes (a mapping is
        // zero-filled by the kernel as it is touched).
        let (ptr, owner) = match (size >= HUGE_PAGE && align <= HUGE_PAGE).then(|| huge_pages(size)).flatten() {
            Some((ptr, len)) => (ptr, Owner::Mapped(len)),
            // SAFETY: size is non-zero (checked by the API layer).
            None => (unsafe { alloc::alloc_zeroed(layout) }, Owner::Heap(layout)),
        };
        if ptr.is_null() {
            return Err(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        }
        Ok(Storage { ptr, owner })
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        match self.owner {
            Owner::Application => {}
            // SAFETY: allocated with exactly this layout in `Mem::new_buffer`.
            Owner::Heap(layout) => unsafe { alloc::dealloc(self.ptr, layout) },
            // SAFETY: mapped with exactly this length by `huge_pages`.
            Owner::Mapped(len) => unsafe {
                libc::munmap(self.ptr.cast(), len);
            },
        }
    }
}

/// Size of a transparent huge page on x86_64.
const HUGE_PAGE: usize = 2 << 20;

/// Zeroed memory on transparent huge pages for buffers of `size` >= 2 MiB: streaming
/// kernels and copies whose rows lie pages apart (2D tiles) otherwise miss the TLB
/// every few KiB, and page walks are dearest in virtual machines. Debian leaves huge
/// pages to `madvise`; the mapping is aligned so that whole huge pages fit. `None`
/// when the mapping fails (the caller falls back to the heap).
fn huge_pages(size: usize) -> Option<(*mut u8, usize)> {
    let len = size.checked_next_multiple_of(HUGE_PAGE)?;
    let span = len.checked_add(HUGE_PAGE)?;
    // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
    unsafe {
        // No MAP_NORESERVE: the kernel's overcommit check should refuse what the heap
        // would refuse, rather than a kernel being killed when it touches the pages.
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        let p = libc::mmap(std::ptr::null_mut(), span, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0);
        if p == libc::MAP_FAILED {
            return None;
        }
        // Trim to a huge-page-aligned `len`.
        let start = (p as usize).next_multiple_of(HUGE_PAGE);
        let head = start - p as usize;
        if head > 0 {
            libc::munmap(p, head);
        }
        if span - head > len {
            libc::munmap((start + len) as *mut c_void, span - head - len);
        }
        // Only a hint: without it (or with huge pages off) the mapping works the same.
        libc::madvise(start as *mut c_void, len, libc::MADV_HUGEPAGE);
        Some((start as *mut u8, len))
    }
}

#[repr(C)]
pub(crate) struct Mem {
    pub(crate) base: Base,
    pub(crate) context: Arc<Context>,
    pub(crate) flags: cl_mem_flags,
    pub(crate) size: usize,
    /// `CL_MEM_HOST_PTR`: the application's pointer (offset into it for sub-buffers).
    pub(crate) host_ptr: *mut c_void,
    /// The parent of a sub-buffer, and the sub-buffer's origin in it.
    pub(crate) parent: Option<Arc<Mem>>,
    pub(crate) offset: usize,
    pub(crate) properties: Vec<cl_mem_properties>,
    /// Held for its `Drop`: frees the allocation after the destructor callbacks ran.
    _storage: Option<Storage>,
    data: *mut u8,
    /// Set for images.
    pub(crate) image: Option<ImageData>,
    /// Set for pipes.
    pub(crate) pipe: Option<PipeData>,
    /// Pointers handed out by map commands and not yet unmapped (a multiset).
    maps: Mutex<Vec<usize>>,
    destructors: Mutex<Vec<(MemDestructor, usize)>>,
}

/// What a pipe adds to a memory object: its packets' size and count, and the property
/// list as given (`CL_PIPE_PROPERTIES`). Its memory is a kernel-abi `PipeHeader` and the
/// ring after it, which only kernels touch (builtins/clc/pipes.c).
pub(crate) struct PipeData {
    pub(crate) packet_size: u32,
    pub(crate) max_packets: u32,
    pub(crate) properties: Vec<cl_pipe_properties>,
}

/// What an image adds to a memory object.
pub(crate) struct ImageData {
    pub(crate) layout: Layout,
    /// What an image argument of a kernel points to: lives as long as the object, which
    /// every launch using it holds.
    pub(crate) kernel: ferrocl_kernel_abi::Image,
}

// SAFETY: the raw pointers refer to memory owned by this object (or by the application
// for USE_HOST_PTR, which must keep it valid); OpenCL leaves synchronising access to
// buffer contents to the application, through events.
unsafe impl Send for Mem {}
unsafe impl Sync for Mem {}

cl_object!(Mem, CL_INVALID_MEM_OBJECT);

impl Mem {
    /// A new buffer. Flags and sizes have been validated by the API layer.
    pub(crate) fn new_buffer(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut c_void,
        properties: Vec<cl_mem_properties>,
        align: usize,
    ) -> CLResult<Arc<Mem>> {
        let flags = if flags & DEVICE_ACCESS == 0 { flags | CL_MEM_READ_WRITE } else { flags };
        let storage = Storage::new(flags, size, host_ptr, align)?;
        if flags & CL_MEM_COPY_HOST_PTR != 0 {
            // SAFETY: the application guarantees host_ptr holds `size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(host_ptr.cast::<u8>(), storage.ptr, size) };
        }
        let host_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 { host_ptr } else { std::ptr::null_mut() };
        Ok(Mem::assemble(context, flags, size, host_ptr, properties, Some(storage), None, None))
    }

    /// A new image laid out as `layout`. Its memory is `parent`'s (an image made from a
    /// buffer or another image), the application's (`CL_MEM_USE_HOST_PTR`, in which case
    /// `layout` has the host's pitches), or its own, filled from `host_ptr` laid out as
    /// `host` under `CL_MEM_COPY_HOST_PTR`. Validated by the API layer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_image(
        context: Arc<Context>,
        flags: cl_mem_flags,
        layout: Layout,
        host: Layout,
        host_ptr: *mut c_void,
        parent: Option<Arc<Mem>>,
        properties: Vec<cl_mem_properties>,
        align: usize,
    ) -> CLResult<Arc<Mem>> {
        let size = layout.bytes().ok_or(CL_INVALID_IMAGE_SIZE)?;
        let storage = match &parent {
            Some(_) => None,
            None => Some(Storage::new(flags, size, host_ptr, align)?),
        };
        if let (Some(s), true) = (&storage, flags & CL_MEM_COPY_HOST_PTR != 0) {
            let [w, h, d] = layout.extent();
            // SAFETY: the application's block holds the image with its pitches (`host`);
            // the allocation holds it packed (`layout`).
            unsafe {
                super::region::copy_rect(
                    host_ptr.cast(),
                    &host.rect([0; 3]),
                    s.ptr,
                    &layout.rect([0; 3]),
                    [w * layout.elem, h, d],
                )
            };
        }
        let host_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 { host_ptr } else { std::ptr::null_mut() };
        let data = parent.as_ref().map_or_else(|| storage.as_ref().map_or(std::ptr::null_mut(), |s| s.ptr), |p| p.data);
        let (row, slice) = layout.strides();
        let extent = layout.extent();
        let kernel = ferrocl_kernel_abi::Image {
            data: data.cast(),
            row_pitch: row as u64,
            slice_pitch: slice as u64,
            size: extent.map(|e| e as i32),
            layers: layout.array_size as i32,
            order: layout.format.image_channel_order,
            channel_type: layout.format.image_channel_data_type,
            elem: layout.elem as u32,
            channels: super::image::stored_channels(&layout.format) as u32,
            key: ferrocl_kernel_abi::image_key(
                layout.format.image_channel_order,
                layout.format.image_channel_data_type,
            ),
            _pad: 0,
        };
        let image = Some(ImageData { layout, kernel });
        Ok(Mem::assemble(context, flags, size, host_ptr, properties, storage, parent, image))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut c_void,
        properties: Vec<cl_mem_properties>,
        storage: Option<Storage>,
        parent: Option<Arc<Mem>>,
        image: Option<ImageData>,
    ) -> Arc<Mem> {
        let data = match (&storage, &parent) {
            (Some(s), _) => s.ptr,
            (None, Some(p)) => p.data,
            (None, None) => std::ptr::null_mut(),
        };
        Arc::new(Mem {
            base: Base::new(),
            context,
            flags,
            size,
            host_ptr,
            parent,
            offset: 0,
            properties,
            data,
            _storage: storage,
            image,
            pipe: None,
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// A new pipe of `max_packets` packets of `packet_size` bytes (validated by the API
    /// layer), empty.
    pub(crate) fn new_pipe(
        context: Arc<Context>,
        flags: cl_mem_flags,
        packet_size: u32,
        max_packets: u32,
        properties: Vec<cl_pipe_properties>,
    ) -> CLResult<Arc<Mem>> {
        use ferrocl_kernel_abi::{PipeHeader, PIPE_PACKETS};
        let ring = (packet_size as usize).checked_mul(max_packets as usize);
        let size = ring.and_then(|r| r.checked_add(PIPE_PACKETS)).ok_or(CL_INVALID_PIPE_SIZE)?;
        let storage = Storage::new(flags, size, std::ptr::null_mut(), 128)?;
        let header = PipeHeader { packet_size, max_packets, ..Default::default() };
        // SAFETY: the allocation is at least PIPE_PACKETS bytes, 128-aligned.
        unsafe { storage.ptr.cast::<PipeHeader>().write(header) };
        let mut m = Mem::assemble(context, flags, size, std::ptr::null_mut(), Vec::new(), Some(storage), None, None);
        let pipe = Some(PipeData { packet_size, max_packets, properties });
        Arc::get_mut(&mut m).expect("a new object has one owner").pipe = pipe;
        Ok(m)
    }

    /// A buffer (or sub-buffer): neither an image nor a pipe.
    pub(crate) fn is_buffer(&self) -> bool {
        self.image.is_none() && self.pipe.is_none()
    }

    /// A sub-buffer of `parent` (a root buffer) over `[origin, origin + size)`.
    pub(crate) fn new_sub_buffer(parent: &Arc<Mem>, flags: cl_mem_flags, origin: usize, size: usize) -> Arc<Mem> {
        let host_ptr = if parent.host_ptr.is_null() {
            std::ptr::null_mut()
        } else {
            // SAFETY: origin < parent size, so this stays inside the application's block.
            unsafe { parent.host_ptr.cast::<u8>().add(origin).cast() }
        };
        Arc::new(Mem {
            base: Base::new(),
            context: parent.context.clone(),
            flags,
            size,
            host_ptr,
            parent: Some(parent.clone()),
            offset: origin,
            properties: Vec::new(),
            _storage: None,
            // SAFETY: origin + size <= parent.size (checked by the API layer).
            data: unsafe { parent.data.add(origin) },
            image: None,
            pipe: None,
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// The first byte of this object's contents.
    pub(crate) fn data(&self) -> *mut u8 {
        self.data
    }

    /// The root buffer and this object's offset in it, for overlap checks across
    /// sub-buffers of one parent.
    pub(crate) fn root(&self) -> (*const Mem, usize) {
        match &self.parent {
            Some(p) => (Arc::as_ptr(p), self.offset),
            None => (self as *const Mem, 0),
        }
    }

    pub(crate) fn add_destructor(&self, f: MemDestructor, user_data: usize) {
        self.destructors.lock().push((f, user_data));
    }

    pub(crate) fn map_count(&self) -> u32 {
        self.maps.lock().len() as u32
    }

    pub(crate) fn add_map(&self, ptr: *mut u8) {
        self.maps.lock().push(ptr as usize);
    }

    /// Forgets one mapping of `ptr`; false if `ptr` is not mapped from this object.
    pub(crate) fn remove_map(&self, ptr: *mut c_void) -> bool {
        let mut maps = self.maps.lock();
        match maps.iter().position(|&p| p == ptr as usize) {
            Some(i) => {
                maps.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // "The registered user callback functions are called in the reverse order in
        // which they were registered ... and then the memory object's resources are
        // freed": `storage` is dropped after this body.
        let handle = self as *mut Mem as cl_mem;
        for (f, user_data) in self.destructors.get_mut().drain(..).rev() {
            // SAFETY: the application registered `f` for exactly this call.
            unsafe { f(handle, user_data as *mut c_void) };
        }
    }
}
