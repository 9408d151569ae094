//! Types shared by the FerroCL driver and the code linked into every kernel.
//!
//! Everything here is `#[repr(C)]`: kernels are separate shared objects built by clang,
//! so these layouts are the contract between the driver and code it did not compile.
//! `builtins/clc/workitem.c` declares the same structures in C; a unit test in the
//! driver checks the offsets agree.

#![no_std]

// The mangler builds strings; the driver and the archive both link the standard library.
extern crate alloc;

pub mod mangle;

use core::ffi::c_void;

/// One work-group as the launcher sees it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub group_id: [usize; 3],
    /// This group's size (smaller than `enqueued_local_size` for the last group of a
    /// non-uniform range).
    pub local_size: [usize; 3],
    pub enqueued_local_size: [usize; 3],
    pub global_offset: [usize; 3],
    pub global_size: [usize; 3],
    pub num_groups: [usize; 3],
    pub work_dim: u32,
    /// For a kernel that reads group ids but shares nothing between work-items: how
    /// many groups of the row in x, from `group_id`, this call runs one after another
    /// (its launcher loops over them); 0 or 1 for one group.
    pub row: u32,
    /// The driver's services for this launch (barriers, ...).
    pub services: *const Services,
    /// Opaque driver state for the services (the executing worker).
    pub runtime: *mut c_void,
    /// Frame memory of a kernel run as barrier regions: the variables its work-items
    /// keep across barriers (128-byte aligned; null for other kernels).
    pub frames: *mut c_void,
    /// The driver's async-copy state of this group (opaque to kernel code).
    pub copies: *mut c_void,
    /// End of the frame memory in use (`frames` + frame size x work-items): a pointer
    /// in `frames..frames_end` is a work-item's private variable (`to_private`).
    pub frames_end: *mut c_void,
    /// The `__local` arguments' memory, `local_begin..local_end` (`to_local`).
    pub local_begin: *mut c_void,
    pub local_end: *mut c_void,
    /// An address above every stack frame of the kernel on the running thread: private
    /// variables lie between the stack pointer and it (fibers have their own, see
    /// `WorkItem::stack_top`).
    pub stack_top: *mut c_void,
    /// Memory of the work-group collective functions: `COLLECTIVE_SCRATCH` bytes,
    /// 16-byte aligned, shared by the group's work-items.
    pub scratch: *mut c_void,
    /// Written by the launcher of a call that runs several groups (`row`): which of
    /// them, from `group_id`, is running. After a fault the driver knows the groups
    /// before it are done and runs those after it anew.
    pub row_at: usize,
    /// The kernel's sub-group size: sub-groups are runs of this many work-items in x
    /// (fewer at the end of a row), one row after another (builtins/clc/workitem.c).
    pub sub_group_size: usize,
}

/// Bytes of `Group::scratch`: two slots of 8 bytes per work-item of the largest group
/// (operands, then results), a broadcast's source, 16 lanes of 8 bytes per work-item
/// for sub-group broadcasts of vectors, then a byte per work-item marking those in the
/// sub-group call in progress (`COLLECTIVE_MARKS`; builtins/clc/collectives.c).
pub const COLLECTIVE_SCRATCH: usize = COLLECTIVE_MARKS + 4096;

/// Where the marks of `COLLECTIVE_SCRATCH` start: the driver clears them after a group
/// that faulted in the middle of a sub-group call.
pub const COLLECTIVE_MARKS: usize = 2 * 8 * 4096 + 64 + 16 * 8 * 4096;

impl Default for Group {
    fn default() -> Group {
        Group {
            group_id: [0; 3],
            local_size: [1; 3],
            enqueued_local_size: [1; 3],
            global_offset: [0; 3],
            global_size: [1; 3],
            num_groups: [1; 3],
            work_dim: 1,
            row: 0,
            services: core::ptr::null(),
            runtime: core::ptr::null_mut(),
            frames: core::ptr::null_mut(),
            copies: core::ptr::null_mut(),
            frames_end: core::ptr::null_mut(),
            local_begin: core::ptr::null_mut(),
            local_end: core::ptr::null_mut(),
            stack_top: core::ptr::null_mut(),
            scratch: core::ptr::null_mut(),
            row_at: 0,
            sub_group_size: 1,
        }
    }
}

/// Entry points the driver offers to kernel code. Kernels reach the driver only
/// through this table: each kernel shared object has its own copy of the builtins'
/// statics, so nothing else is shared.
#[repr(C)]
pub struct Services {
    /// Suspends the calling work-item until every work-item of the group has arrived.
    pub barrier: unsafe extern "C" fn(group: *const Group),
    /// Work-item `item` (linear local id) reached an async copy: the first arrival
    /// issues it, every work-item gets the same event back. `event` is the event
    /// argument (0 for none): the copy joins it.
    pub copy: unsafe extern "C" fn(group: *const Group, item: usize, copy: *const AsyncCopy, event: usize) -> usize,
    /// `wait_group_events` by work-item `item`.
    pub wait: unsafe extern "C" fn(group: *const Group, item: usize, count: u32, events: *const usize),
    /// `async_work_group_copy_fence` by work-item `item`.
    pub fence: unsafe extern "C" fn(group: *const Group, item: usize, flags: u32),
    /// End of a barrier region: the waits of the region take effect (kernels run as
    /// barrier regions wait at the region's end, so all work-items compute meanwhile).
    pub settle: unsafe extern "C" fn(group: *const Group),
    /// Suspends the calling work-item until every work-item of its sub-group has
    /// arrived (at a barrier of its sub-group) or finished.
    pub sub_group_barrier: unsafe extern "C" fn(group: *const Group),
    /// Device-side enqueue: `enqueue_kernel` and `enqueue_marker` (OpenCL C 2.0). Returns
    /// a `CLK_*` code.
    pub enqueue: unsafe extern "C" fn(group: *const Group, request: *const Enqueue) -> i32,
    /// The device-side event functions and `get_default_queue`: `op` is one of
    /// `DeviceOp`'s values.
    pub device: unsafe extern "C" fn(group: *const Group, op: u32, event: usize, value: usize) -> usize,
}

/// OpenCL C's `ndrange_t` as clang lays it out (opencl-c-base.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [usize; 3],
    pub global: [usize; 3],
    /// All 0: the driver picks the work-group size.
    pub local: [usize; 3],
}

/// One `enqueue_kernel` (or, with `kernel` null, `enqueue_marker`) as kernel code hands
/// it to the driver (builtins/clc/enqueue.c).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Enqueue {
    /// The `queue_t`: a device queue's handle.
    pub queue: usize,
    /// `CLK_ENQUEUE_FLAGS_*`.
    pub flags: u32,
    pub num_events: u32,
    pub range: *const NdRange,
    /// The block's kernel, by name (NUL-terminated): the compiler replaces the address
    /// of the kernel clang made for the block with its name.
    pub kernel: *const u8,
    /// The block literal: a 4-byte size first, the block's captures after.
    pub block: *const u8,
    /// Sizes of the block's `__local void *` parameters.
    pub locals: *const usize,
    pub num_locals: u32,
    pub _pad: u32,
    /// The events to wait for, and where the event of this command goes (null: none).
    pub events: *const usize,
    pub event_ret: *mut usize,
}

/// What `Services::device` is asked.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceOp {
    DefaultQueue = 0,
    RetainEvent = 1,
    ReleaseEvent = 2,
    CreateUserEvent = 3,
    /// `value`: the status.
    SetUserEventStatus = 4,
    IsValidEvent = 5,
    /// `value`: where the two 64-bit times go.
    CaptureProfiling = 6,
    /// The `get_kernel_*` queries of a block's kernel: `event` is the kernel's name,
    /// `value` the `ndrange_t` (for the sub-group ones).
    KernelWorkGroupSize = 7,
    KernelPreferredMultiple = 8,
    KernelMaxSubGroupSize = 9,
    KernelSubGroupCount = 10,
}

impl DeviceOp {
    pub const ALL: [DeviceOp; 11] = [
        DeviceOp::DefaultQueue,
        DeviceOp::RetainEvent,
        DeviceOp::ReleaseEvent,
        DeviceOp::CreateUserEvent,
        DeviceOp::SetUserEventStatus,
        DeviceOp::IsValidEvent,
        DeviceOp::CaptureProfiling,
        DeviceOp::KernelWorkGroupSize,
        DeviceOp::KernelPreferredMultiple,
        DeviceOp::KernelMaxSubGroupSize,
        DeviceOp::KernelSubGroupCount,
    ];

    pub fn from_u32(op: u32) -> Option<DeviceOp> {
        DeviceOp::ALL.get(op as usize).copied()
    }
}

/// `enqueue_kernel`'s results (opencl-c-base.h).
pub mod clk {
    pub const SUCCESS: i32 = 0;
    pub const ENQUEUE_FAILURE: i32 = -101;
    pub const INVALID_QUEUE: i32 = -102;
    pub const INVALID_NDRANGE: i32 = -160;
    pub const INVALID_EVENT_WAIT_LIST: i32 = -57;
    pub const DEVICE_QUEUE_FULL: i32 = -161;
    pub const INVALID_ARG_SIZE: i32 = -51;
    pub const EVENT_ALLOCATION_FAILURE: i32 = -100;
    pub const OUT_OF_RESOURCES: i32 = -5;
}

/// One async copy: `planes` x `lines` x `per_line` elements of `elem` bytes, strides in
/// elements. Every builtin maps to this shape: a contiguous copy is one line, a strided
/// one is lines of one element.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AsyncCopy {
    pub dst: usize,
    pub src: usize,
    pub elem: usize,
    pub per_line: usize,
    pub lines: usize,
    pub planes: usize,
    pub src_line: usize,
    pub src_plane: usize,
    pub dst_line: usize,
    pub dst_plane: usize,
    /// 1: global to local, 0: local to global.
    pub to_local: u32,
    /// The driver's hints for moving the bytes (`HINT_*`); kernel code passes 0.
    pub hints: u32,
}

/// `AsyncCopy::hints`: stores to global memory may bypass the cache (the launch's
/// buffers exceed the last-level cache, so nothing will read them back from it soon).
pub const HINT_STREAM: u32 = 1;

/// The part of a group's async-copy state kernel code reads and writes itself, so that
/// the calls every work-item but the first makes (a copy already issued, a wait in a
/// kernel run as regions) cost a few loads instead of a call into the driver.
/// `Group::copies` points at it.
#[repr(C)]
#[derive(Debug)]
pub struct CopyLog {
    /// Copy operations (copies and fences) each work-item has passed, by linear id.
    pub reached: *mut u32,
    pub items: usize,
    /// The event of each operation issued so far (0 for fences).
    pub events: *const usize,
    pub ops: usize,
    /// Events handed out so far: valid events are 1..=issued.
    pub issued: usize,
    /// Kernels run as regions: events 1 to 64 waited for in the current region, as bits
    /// (event 1 is bit 0); the region's end completes them.
    pub waited: u64,
    /// 1: waits are deferred to the end of the region.
    pub defer: u32,
    /// 1: every call goes to the driver (validation mode).
    pub slow: u32,
    /// 1: the region's end must reach the driver's `settle` even with nothing waited for
    /// in it (events past 64 pending, operations to forget); kernel code skips the call
    /// otherwise.
    pub settle: usize,
    /// Imports into local memory moved while the group computes (`Deferred`): how many
    /// of `deferred` are in use, oldest first. Kernel code alone reads and writes them;
    /// the driver empties the list when a group begins.
    pub pending: usize,
    pub deferred: [Deferred; DEFERRED],
}

/// Most imports `CopyLog::deferred` holds at once: a double-buffered kernel has two in
/// flight; a fifth moves the oldest at once.
pub const DEFERRED: usize = 4;

/// A contiguous import into local memory that kernel code moves a step at a time, in
/// the group's compute loops, while it computes on the previous tile (the copy's loads
/// overlap the computation's, as a kernel reading global memory directly does); the wait
/// for its event moves what is left (builtins/clc/workitem.c, `__ferrocl_copy_step`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Deferred {
    pub dst: *mut u8,
    pub src: *const u8,
    pub bytes: usize,
    /// Bytes moved so far.
    pub at: usize,
}

impl Default for Deferred {
    fn default() -> Deferred {
        Deferred { dst: core::ptr::null_mut(), src: core::ptr::null(), bytes: 0, at: 0 }
    }
}

/// One work-item's view, as the launcher keeps it (`ferrocl_ctx` in
/// builtins/clc/workitem.c, which fills it): a private copy of the group geometry and
/// the work-item's ids. The IR rewrite passes it as a hidden last argument to the
/// functions that need it: the work-item queries (inlined C) and the async-copy
/// builtins of the archive (Rust, `builtins/src/async_copies.rs`).
#[repr(C)]
#[derive(Debug)]
pub struct WorkItem {
    pub local_id: [usize; 3],
    pub group_id: [usize; 3],
    pub local_size: [usize; 3],
    pub enqueued_local_size: [usize; 3],
    pub global_offset: [usize; 3],
    pub global_size: [usize; 3],
    pub num_groups: [usize; 3],
    pub work_dim: u32,
    /// Set while the work-item runs a region for the whole group.
    pub alone: u32,
    pub group: *const Group,
    /// The group's `CopyLog` (`Group::copies`), one load closer.
    pub copies: *mut CopyLog,
    /// The linear local id.
    pub item: usize,
    /// An address above the work-item's stack frames (`Group::stack_top`, or the top of
    /// its fiber).
    pub stack_top: *mut c_void,
    /// 1: kernel code answers copies and waits without the driver (`CopyLog::defer` set
    /// and `slow` clear, fixed for the group). Read from the log once per region pass, so
    /// the work-item loop keeps it in a register: a load from the log per work-item
    /// cannot be hoisted past the copy's stores, which may alias it.
    pub in_place: u32,
}

// The same offsets are asserted in builtins/clc/workitem.c.
const _: () = assert!(core::mem::offset_of!(WorkItem, group) == 176);
const _: () = assert!(core::mem::offset_of!(WorkItem, item) == 192);
const _: () = assert!(core::mem::size_of::<CopyLog>() == 200);
const _: () = assert!(core::mem::offset_of!(CopyLog, pending) == 64);
const _: () = assert!(core::mem::offset_of!(WorkItem, stack_top) == 200);
const _: () = assert!(core::mem::offset_of!(WorkItem, in_place) == 208);
const _: () = assert!(core::mem::offset_of!(Group, copies) == 176);
const _: () = assert!(core::mem::offset_of!(Group, scratch) == 216);
const _: () = assert!(core::mem::offset_of!(Group, row_at) == 224);
const _: () = assert!(core::mem::offset_of!(Group, sub_group_size) == 232);
const _: () = assert!(core::mem::size_of::<AsyncCopy>() == 88);
const _: () = assert!(core::mem::offset_of!(Services, settle) == 32);
const _: () = assert!(core::mem::offset_of!(Services, sub_group_barrier) == 40);
const _: () = assert!(core::mem::offset_of!(Services, device) == 56);
const _: () = assert!(core::mem::size_of::<NdRange>() == 80);
const _: () = assert!(core::mem::offset_of!(Enqueue, locals) == 40);
const _: () = assert!(core::mem::size_of::<Enqueue>() == 72);

/// An image as kernel code sees it: what an `image2d_t` (and every other image type)
/// argument points to (`img_t` in builtins/clc/image.cl). Texel (x, y, z) lies at
/// `data + x * elem + y * row_pitch + z * slice_pitch`: a 1D array's layer is y (its
/// row pitch is the layer pitch), a 2D array's is z.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Image {
    pub data: *mut c_void,
    pub row_pitch: u64,
    pub slice_pitch: u64,
    /// Extent in x, y and z as addressed, layers included (1 for unused dimensions).
    pub size: [i32; 3],
    /// Array size (0 for images that are not arrays).
    pub layers: i32,
    /// `CL_R`, `CL_RGBA`, ... and `CL_UNORM_INT8`, ...: the OpenCL C `CLK_*` values are
    /// the same.
    pub order: u32,
    pub channel_type: u32,
    /// Bytes per texel.
    pub elem: u32,
    /// Channels stored per texel (1 for the packed types).
    pub channels: u32,
    /// `image_key(order, channel_type)`: what image reads switch on.
    pub key: u32,
    pub _pad: u32,
}

// The same layout is written out in builtins/clc/image.cl.
const _: () = assert!(core::mem::offset_of!(Image, size) == 24);
const _: () = assert!(core::mem::offset_of!(Image, order) == 40);
const _: () = assert!(core::mem::offset_of!(Image, key) == IMAGE_KEY_OFFSET);
const _: () = assert!(core::mem::size_of::<Image>() == IMAGE_SIZE);

pub const IMAGE_KEY_OFFSET: usize = 56;
pub const IMAGE_SIZE: usize = 64;

/// The start of an OpenCL 2.0 pipe's memory, which a `pipe` kernel argument points to;
/// the packets follow at `PIPE_PACKETS`, `max_packets` slots of `packet_size` bytes
/// (`struct pipe` in builtins/clc/pipes.c). Positions count modulo `2 * max_packets`, so
/// a full ring and an empty one differ: readable packets run from `read_reserved` to
/// `write_committed`, free slots from `write_reserved` to `read_committed` plus the
/// ring. Reservations commit in the order they were made.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PipeHeader {
    pub packet_size: u32,
    pub max_packets: u32,
    /// A spin lock held while a reservation is made.
    pub lock: u32,
    pub read_reserved: u32,
    pub read_committed: u32,
    pub write_reserved: u32,
    pub write_committed: u32,
    pub _pad: u32,
}

// The same layout is written out in builtins/clc/pipes.c.
const _: () = assert!(core::mem::offset_of!(PipeHeader, write_committed) == 24);
const _: () = assert!(core::mem::size_of::<PipeHeader>() <= PIPE_PACKETS);

/// Where a pipe's packets start: a cache line of their own past the header.
pub const PIPE_PACKETS: usize = 128;

/// One dense number per channel type and order (`OKEY` in builtins/clc/image.cl):
/// types count from `CL_SNORM_INT8` (0x10D0), orders from `CL_R` (0x10B0), both far
/// below 32 apart.
pub const fn image_key(order: u32, channel_type: u32) -> u32 {
    channel_type.wrapping_sub(0x10D0).wrapping_mul(32).wrapping_add(order.wrapping_sub(0x10B0))
}

/// Formats for which kernels reading images get their work-item loop compiled apart,
/// the format a constant (the loop then has no per-texel jump): RGBA and BGRA 8-bit
/// UNORM (video frames), R 8-bit UNORM (grey), RGBA and R float. As (order, type).
pub const SPECIALISED_IMAGE_FORMATS: [(u32, u32); 5] =
    [(0x10B5, 0x10D2), (0x10B6, 0x10D2), (0x10B0, 0x10D2), (0x10B5, 0x10DE), (0x10B0, 0x10DE)];

/// The version of the contract between the driver and kernel code (these types, the
/// builtins archive, the helpers compiled into every kernel): program binaries record
/// it, and the driver refuses those of another version.
pub const KERNEL_ABI: u32 = 10;
/// The symbol the builtins archive of this version defines (builtins/src/lib.rs).
pub const BUILTINS_ABI_SYMBOL: &str = "FERROCL_BUILTINS_ABI_10";
const _: () = assert!(suffix_number(BUILTINS_ABI_SYMBOL) == KERNEL_ABI);

/// The decimal number a name ends with (for the check that the archive's symbol and
/// `KERNEL_ABI` say the same version, whatever its number of digits).
const fn suffix_number(name: &str) -> u32 {
    let b = name.as_bytes();
    let (mut i, mut n, mut scale) = (b.len(), 0, 1);
    while i > 0 && b[i - 1].is_ascii_digit() {
        n += (b[i - 1] - b'0') as u32 * scale;
        scale *= 10;
        i -= 1;
    }
    n
}

/// `__ferrocl_launch_<kernel>`: runs every work-item of one group (no barriers).
pub type LaunchFn = unsafe extern "C" fn(group: *const Group, args: *const u8);

/// `__ferrocl_item_<kernel>`: runs one work-item; used by fibers for kernels with
/// barriers.
pub type ItemFn = unsafe extern "C" fn(group: *const Group, args: *const u8, local_id: *const usize);

/// `__ferrocl_flat_<kernel>`: runs one group of a kernel whose only barriers are
/// sub-group ones through its SIMD copy without them, where the group's sub-groups are
/// the copy's chunks; false, having run nothing, where they are not.
pub type FlatFn = unsafe extern "C" fn(group: *const Group, args: *const u8) -> bool;

/// How the driver reaches an async-copy builtin's overloads in the archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncReach {
    /// Called with the work-item context as a hidden last argument, through the inline
    /// fast path `__ferrocl_fast_<kind>_<l|g>` of `builtins/clc/workitem.c`, which calls
    /// the archive only when the driver has work to do. `sizes` is the number of size
    /// arguments after the pointers, `offsets` whether an element offset follows each
    /// pointer.
    FastPath { kind: &'static str, sizes: usize, offsets: bool },
    /// Called with the context as a hidden last argument, straight into the archive
    /// (`wait_group_events` has fast paths of its own, by the list's address space).
    Context,
    /// Called as clang declares it.
    Plain,
}

/// One builtin of the async-copy family the archive exports (`builtins/build.rs`
/// generates every overload and checks its names against this table).
#[derive(Clone, Copy, Debug)]
pub struct AsyncBuiltin {
    /// The OpenCL C name.
    pub name: &'static str,
    pub reach: AsyncReach,
    /// Called by every work-item of a group with the same arguments, it does what one
    /// call does, so a region of such calls may run for one work-item
    /// (`compiler/passes/uniform.rs`). Not the wait, which that analysis treats apart.
    pub once_per_group: bool,
}

/// The async-copy family: the one list of its names, for the archive's generator, the IR
/// rewrite and the uniformity analysis.
pub const ASYNC_BUILTINS: &[AsyncBuiltin] = &[
    AsyncBuiltin {
        name: "async_work_group_copy",
        reach: AsyncReach::FastPath { kind: "copy", sizes: 1, offsets: false },
        once_per_group: true,
    },
    AsyncBuiltin {
        name: "async_work_group_strided_copy",
        reach: AsyncReach::FastPath { kind: "strided", sizes: 2, offsets: false },
        once_per_group: true,
    },
    AsyncBuiltin {
        name: "async_work_group_copy_2D2D",
        reach: AsyncReach::FastPath { kind: "2d", sizes: 5, offsets: true },
        once_per_group: true,
    },
    AsyncBuiltin {
        name: "async_work_group_copy_3D3D",
        reach: AsyncReach::FastPath { kind: "3d", sizes: 8, offsets: true },
        once_per_group: true,
    },
    AsyncBuiltin { name: "async_work_group_copy_fence", reach: AsyncReach::Context, once_per_group: true },
    AsyncBuiltin { name: "wait_group_events", reach: AsyncReach::Context, once_per_group: false },
    AsyncBuiltin { name: "prefetch", reach: AsyncReach::Plain, once_per_group: true },
];

/// The async-copy builtin of an OpenCL C name.
pub fn async_builtin(name: &str) -> Option<&'static AsyncBuiltin> {
    ASYNC_BUILTINS.iter().find(|b| b.name == name)
}
