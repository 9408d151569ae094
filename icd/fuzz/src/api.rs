//! The API-sequence target's interpreter. An input is a list of calls on the handles
//! earlier calls made, on handles of the wrong family, on released ones, on null and on
//! garbage, with sizes, offsets, flags, properties and wait lists the fuzzer picks.
//!
//! What the harness keeps valid is what the OpenCL contract leaves to the application,
//! because breaking it is the application's undefined behaviour, not the driver's bug:
//! host pointers are null or to harness memory at least as large as the size passed
//! with them, property lists are terminated, kernels get bounds they can trust, host
//! memory outlives the commands that use it, and nothing blocks on a user event that
//! nobody will ever set. Everything else is the fuzzer's.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::Arbitrary;
use opencl_sys::*;

use crate::{cl, driver, fixture, Param, KERNELS};

/// The largest host allocation an operation makes, and so the largest buffer inputs
/// create: larger valid sizes would spend the run in memset, not in the driver.
const HOST_CAP: usize = 4 << 20;
/// The most work-items a launch may run, unless its sizes must be refused anyway.
const WORK_CAP: usize = 1 << 16;
/// Calls per input: longer inputs find little more and slow every run.
pub const MAX_OPS: usize = 48;

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Context,
    Queue,
    Mem,
    Kernel,
    Event,
    Program,
    Device,
    Platform,
}

const TABLES: usize = 6;

/// A handle an operation passes.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Ref {
    /// One of the family's handles made so far (released ones included).
    Live(u8),
    /// A handle of another family.
    Other(Family, u8),
    /// An address that was never a handle.
    Garbage(u64),
    Null,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Size {
    Zero,
    Small(u8),
    Elems(u16),
    Pages(u8),
    Raw(u64),
    /// Just above the device's allocation limit.
    AboveAlloc(u8),
    Max(u8),
    /// A power of two (mod 64): row pitches of 2^62 and the like.
    Power(u8),
}

impl Size {
    pub fn get(self) -> usize {
        match self {
            Size::Zero => 0,
            Size::Small(n) => n as usize,
            Size::Elems(n) => n as usize * 4,
            Size::Pages(n) => n as usize * 4096,
            Size::Raw(n) => n as usize,
            Size::AboveAlloc(n) => driver().max_alloc.wrapping_add(n as usize),
            Size::Max(n) => usize::MAX - n as usize,
            Size::Power(n) => 1usize << (n % 64),
        }
    }
}

/// Flags of any bitfield: a mix of the named ones, or raw bits.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Flags {
    Named(u16),
    Raw(u64),
}

impl Flags {
    fn get(self, named: &[u64]) -> u64 {
        match self {
            Flags::Named(bits) => {
                named.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).fold(0, |acc, (_, f)| acc | f)
            }
            Flags::Raw(bits) => bits,
        }
    }
}

const MEM_FLAGS: &[u64] = &[
    CL_MEM_READ_WRITE,
    CL_MEM_WRITE_ONLY,
    CL_MEM_READ_ONLY,
    CL_MEM_USE_HOST_PTR,
    CL_MEM_ALLOC_HOST_PTR,
    CL_MEM_COPY_HOST_PTR,
    CL_MEM_HOST_WRITE_ONLY,
    CL_MEM_HOST_READ_ONLY,
    CL_MEM_HOST_NO_ACCESS,
];
const MAP_FLAGS: &[u64] = &[CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION];
const QUEUE_FLAGS: &[u64] = &[
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
    CL_QUEUE_PROFILING_ENABLE,
    CL_QUEUE_ON_DEVICE,
    CL_QUEUE_ON_DEVICE_DEFAULT,
];
const MIGRATE_FLAGS: &[u64] = &[CL_MIGRATE_MEM_OBJECT_HOST, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED];

/// One entry of a zero-terminated property list.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Prop {
    /// A name of the list's kind with a value.
    Named(u8, u64),
    /// The kind's name whose value is a handle.
    Handle(Ref),
    Raw(u64, u64),
}

fn prop_list(props: &[Prop], names: &[u64], handle_name: u64, family: Family, s: &Session) -> Vec<u64> {
    let mut list = Vec::new();
    for p in props.iter().take(6) {
        let (name, value) = match *p {
            Prop::Named(i, v) => (names[i as usize % names.len()], v),
            Prop::Handle(r) => (handle_name, s.handle(family, r) as u64),
            Prop::Raw(n, v) => (n, v),
        };
        // A zero name would end the list early; the rest of it is what the input meant.
        if name != 0 {
            list.extend([name, value]);
        }
    }
    list.push(0);
    list
}

/// A wait list: events, or a count with a null list.
#[derive(Arbitrary, Debug, Clone)]
pub struct Wait {
    events: Vec<Ref>,
    null_list: bool,
}

/// What `clSetKernelArg` is given.
#[derive(Arbitrary, Debug, Clone)]
pub enum Arg {
    Mem(Ref),
    NullMem,
    Local(Size),
    Bytes(Vec<u8>),
    NullValue(Size),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum RectOp {
    Read,
    Write,
    Copy,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum ImageOp {
    Read,
    Write,
    Copy,
    Fill,
    ToBuffer,
    FromBuffer,
    Map(Flags),
    Info(u8),
}

/// Channel orders and types: the spec's (valid or not together) and one that is neither.
const ORDERS: &[u32] = &[
    CL_R,
    CL_A,
    CL_RG,
    CL_RA,
    CL_RGB,
    CL_RGBA,
    CL_BGRA,
    CL_ARGB,
    CL_INTENSITY,
    CL_LUMINANCE,
    CL_DEPTH,
    CL_sRGBA,
    CL_ABGR,
    0x1234,
];
const CHANNEL_TYPES: &[u32] = &[
    CL_SNORM_INT8,
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_UNORM_SHORT_565,
    CL_UNORM_INT_101010,
    CL_SIGNED_INT32,
    CL_UNSIGNED_INT8,
    CL_HALF_FLOAT,
    CL_FLOAT,
    0x1234,
];
const IMAGE_TYPES: &[u32] = &[
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
    CL_MEM_OBJECT_BUFFER,
];
/// The largest texel: host memory for image data is sized as if every texel were this.
const MAX_TEXEL: usize = 16;

/// An upper bound of the host bytes an image of `size` (width, height, depth, layers)
/// with these pitches spans (0: tight), or None when it is not small.
fn image_host_bytes(size: [usize; 4], row: usize, slice: usize) -> Option<usize> {
    let row = row.max(size[0].checked_mul(MAX_TEXEL)?);
    let rows = size[1].max(1).checked_mul(size[2].max(1))?.checked_mul(size[3].max(1))?;
    let slice = slice.max(row.checked_mul(size[1].max(1))?);
    let bytes = slice.checked_mul(rows)?.checked_add(row)?;
    (bytes <= HOST_CAP).then_some(bytes)
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    CreateContext {
        props: Vec<Prop>,
        devices: Vec<Ref>,
        of_type: Option<u64>,
    },
    CreateQueue {
        context: Ref,
        device: Ref,
        props: Vec<Prop>,
        legacy: Option<Flags>,
    },
    /// `clSetDefaultDeviceCommandQueue` (device queues come from `CreateQueue`).
    SetDefaultDeviceQueue {
        context: Ref,
        device: Ref,
        queue: Ref,
    },
    CreateBuffer {
        context: Ref,
        flags: Flags,
        size: Size,
        host: bool,
        props: Option<Vec<Prop>>,
    },
    CreateSubBuffer {
        mem: Ref,
        flags: Flags,
        create_type: Option<u32>,
        origin: Size,
        size: Size,
    },
    CreateUserEvent {
        context: Ref,
    },
    SetUserEventStatus {
        event: Ref,
        status: i32,
    },
    CreateKernel {
        program: Ref,
        name: u8,
    },
    CreateKernels {
        program: Ref,
        room: u8,
    },
    CloneKernel {
        kernel: Ref,
    },
    SetArg {
        kernel: Ref,
        index: u8,
        arg: Arg,
    },
    Launch {
        queue: Ref,
        kernel: Ref,
        dim: u8,
        offset: Option<[Size; 3]>,
        global: [Size; 3],
        local: Option<[Size; 3]>,
        wait: Wait,
        event: bool,
    },
    /// `clEnqueueReadBuffer`, or with `write` `clEnqueueWriteBuffer`.
    Transfer {
        write: bool,
        queue: Ref,
        mem: Ref,
        blocking: bool,
        offset: Size,
        size: Size,
        wait: Wait,
        event: bool,
    },
    Fill {
        queue: Ref,
        mem: Ref,
        pattern: u8,
        offset: Size,
        size: Size,
        wait: Wait,
        event: bool,
    },
    Copy {
        queue: Ref,
        src: Ref,
        dst: Ref,
        src_offset: Size,
        dst_offset: Size,
        size: Size,
        wait: Wait,
        event: bool,
    },
    Rect {
        queue: Ref,
        a: Ref,
        b: Ref,
        op: RectOp,
        blocking: bool,
        origins: [[Size; 3]; 2],
        region: [Size; 3],
        pitches: [Size; 4],
        wait: Wait,
        event: bool,
    },
    Map {
        queue: Ref,
        mem: Ref,
        blocking: bool,
        flags: Flags,
        offset: Size,
        size: Size,
        wait: Wait,
        event: bool,
    },
    Unmap {
        queue: Ref,
        mem: Ref,
        which: Option<u8>,
        wait: Wait,
        event: bool,
    },
    Marker {
        queue: Ref,
        barrier: bool,
        wait: Wait,
        event: bool,
    },
    Migrate {
        queue: Ref,
        mems: Vec<Ref>,
        flags: Flags,
        wait: Wait,
        event: bool,
    },
    EventCallback {
        event: Ref,
        kind: i32,
    },
    MemCallback {
        mem: Ref,
    },
    Info {
        family: Family,
        object: Ref,
        param: u32,
        named: bool,
        size: u16,
        null_value: bool,
    },
    KernelInfo {
        kernel: Ref,
        device: Ref,
        index: u8,
        param: u32,
        which: u8,
        size: u16,
    },
    Binaries {
        program: Ref,
    },
    Retain {
        family: Family,
        object: Ref,
    },
    Release {
        family: Family,
        object: Ref,
    },
    Flush {
        queue: Ref,
    },
    Finish {
        queue: Ref,
    },
    WaitFor {
        wait: Wait,
    },
    Svm {
        context: Ref,
        flags: Flags,
        size: Size,
        alignment: u32,
    },
    /// `clCreatePipe`: the pipe joins the memory objects, so later calls pass it where
    /// buffers and images go (and kernels' pipe arguments take buffers).
    CreatePipe {
        context: Ref,
        flags: Flags,
        packet_size: u32,
        max_packets: u32,
        props: bool,
    },
    Sampler {
        context: Ref,
        props: Vec<Prop>,
    },
    /// `clCreateImage` from nothing, host memory, or another memory object.
    CreateImage {
        context: Ref,
        flags: Flags,
        format: (u8, u8),
        image_type: u8,
        size: [Size; 4],
        pitches: [Size; 2],
        host: bool,
        source: Option<Ref>,
    },
    /// An image command on an image (or whatever `image` names).
    Image {
        queue: Ref,
        image: Ref,
        other: Ref,
        op: ImageOp,
        blocking: bool,
        origins: [[Size; 3]; 2],
        region: [Size; 3],
        pitches: [Size; 2],
        wait: Wait,
        event: bool,
    },
    Source {
        context: Ref,
        strings: Vec<Vec<u8>>,
        lengths: bool,
    },
    /// `clBuildProgram` with options from a list or of a length (up to 4 MiB past
    /// the driver's limit on option strings).
    Build {
        program: Ref,
        options: BuildOptions,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum BuildOptions {
    Listed(u8),
    Long(Size),
}

/// Options a build may be given: valid, malformed and unknown ones.
const BUILD_OPTIONS: &[&str] =
    &["", "-cl-opt-disable", "-cl-std=CL3.0", "-cl-std=CL9.9", "-D", "-I /nonexistent", "-cl-fast-relaxed-math", "-x"];

/// A handle the session made or uses, and the references the harness holds on it.
#[derive(Clone, Copy)]
struct Entry {
    handle: *mut c_void,
    refs: u32,
}

/// What the harness knows of a kernel's arguments, to set its bounds before a launch.
#[derive(Clone, Default)]
struct Args {
    kernel: usize,
    bytes: [Option<usize>; 8],
}

pub struct Session {
    tables: [Vec<Entry>; TABLES],
    /// Bytes of every buffer and sub-buffer made, by handle.
    sizes: HashMap<usize, usize>,
    /// Kernels the harness made, by handle, with what it set.
    args: HashMap<usize, Args>,
    /// User events, each with the harness's own extra reference, and whether set.
    user_events: Vec<(cl_event, bool)>,
    /// Queues, each with the harness's own extra reference, finished at the end.
    queues: Vec<cl_command_queue>,
    /// Host memory commands may still use: dropped after every queue finished.
    host: Vec<Vec<u8>>,
    /// Pointers mapping calls returned, with their buffer.
    maps: Vec<(cl_mem, *mut c_void)>,
    /// The buffer new harness kernels start with.
    default_mem: cl_mem,
}

const DEFAULT_BYTES: usize = 4096;

/// Counts callback calls, so they do something observable.
static CALLBACKS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn event_callback(_: cl_event, _: cl_int, _: *mut c_void) {
    CALLBACKS.fetch_add(1, Ordering::Relaxed);
}

unsafe extern "C" fn mem_callback(_: cl_mem, _: *mut c_void) {
    CALLBACKS.fetch_add(1, Ordering::Relaxed);
}

fn table_of(family: Family) -> Option<usize> {
    match family {
        Family::Context => Some(0),
        Family::Queue => Some(1),
        Family::Mem => Some(2),
        Family::Kernel => Some(3),
        Family::Event => Some(4),
        Family::Program => Some(5),
        Family::Device | Family::Platform => None,
    }
}

/// The first parameter name of each family's `clGet*Info`, and how many follow it.
fn info_range(family: Family) -> (u32, u32) {
    match family {
        Family::Context => (CL_CONTEXT_REFERENCE_COUNT, 6),
        Family::Queue => (CL_QUEUE_CONTEXT, 10),
        Family::Mem => (CL_MEM_TYPE, 12),
        Family::Kernel => (CL_KERNEL_FUNCTION_NAME, 6),
        Family::Event => (CL_EVENT_COMMAND_QUEUE, 5),
        Family::Program => (CL_PROGRAM_REFERENCE_COUNT, 11),
        Family::Device => (CL_DEVICE_TYPE, 0x80),
        Family::Platform => (CL_PLATFORM_PROFILE, 10),
    }
}

/// Extent in bytes of a rectangle at `origin` with `region` and pitches (0: tight),
/// as the spec defines it; None where it does not fit in `usize` or a size is zero.
fn rect_extent(origin: [usize; 3], region: [usize; 3], row: usize, slice: usize) -> Option<usize> {
    if region.contains(&0) {
        return None;
    }
    let row = if row == 0 { region[0] } else { row };
    let slice = if slice == 0 { region[1].checked_mul(row)? } else { slice };
    let start = origin[2].checked_mul(slice)?.checked_add(origin[1].checked_mul(row)?)?.checked_add(origin[0])?;
    let last = (region[2] - 1).checked_mul(slice)?.checked_add((region[1] - 1).checked_mul(row)?)?;
    start.checked_add(last)?.checked_add(region[0])
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Session {
        let f = fixture();
        let mut tables: [Vec<Entry>; TABLES] = Default::default();
        // The fixture's objects, which the harness holds no references on.
        tables[0].push(Entry { handle: f.context, refs: 0 });
        tables[1].push(Entry { handle: f.queue, refs: 0 });
        tables[5].push(Entry { handle: f.program, refs: 0 });
        let mut s = Session {
            tables,
            sizes: HashMap::new(),
            args: HashMap::new(),
            user_events: Vec::new(),
            queues: Vec::new(),
            host: Vec::new(),
            maps: Vec::new(),
            default_mem: null_mut(),
        };
        // A buffer every new harness kernel gets for its global arguments, so launches
        // run kernels from the first inputs on; the input may release it like any other.
        let mut err = 0;
        let mem = cl!(clCreateBuffer(f.context, CL_MEM_READ_WRITE, DEFAULT_BYTES, null_mut(), &mut err));
        s.sizes.insert(mem as usize, DEFAULT_BYTES);
        s.add(Family::Mem, mem);
        s.default_mem = mem;
        s
    }

    fn handle(&self, family: Family, r: Ref) -> *mut c_void {
        let d = driver();
        let pick = |family: Family, i: u8| match (family, table_of(family)) {
            (Family::Device, _) => d.device,
            (Family::Platform, _) => d.platform,
            (_, Some(t)) => {
                let table = &self.tables[t];
                if table.is_empty() {
                    null_mut()
                } else {
                    table[i as usize % table.len()].handle
                }
            }
            (_, None) => unreachable!(),
        };
        match r {
            Ref::Live(i) => pick(family, i),
            Ref::Other(other, i) => pick(other, i),
            Ref::Garbage(bits) => bits as usize as *mut c_void,
            Ref::Null => null_mut(),
        }
    }

    fn add(&mut self, family: Family, handle: *mut c_void) {
        if !handle.is_null() {
            self.tables[table_of(family).unwrap()].push(Entry { handle, refs: 1 });
        }
    }

    /// A blocking call, and a wait for events, is safe only while no command can be
    /// waiting on a user event nobody has set.
    fn may_block(&self) -> bool {
        self.user_events.iter().all(|&(_, set)| set)
    }

    /// Keeps `bytes` of host memory alive to the end of the input, and returns it.
    fn host_memory(&mut self, bytes: usize) -> *mut c_void {
        self.host.push(vec![0x5a; bytes.max(1)]);
        self.host.last_mut().unwrap().as_mut_ptr() as *mut c_void
    }

    /// The wait list's events, kept in `storage` for the call.
    fn wait_list(&self, w: &Wait, storage: &mut Vec<cl_event>) -> (cl_uint, *const cl_event) {
        storage.clear();
        storage.extend(w.events.iter().take(4).map(|&r| self.handle(Family::Event, r)));
        if w.null_list {
            return (storage.len().max(1) as cl_uint, null());
        }
        (storage.len() as cl_uint, if storage.is_empty() { null() } else { storage.as_ptr() })
    }

    /// Records an event a call returned.
    fn took_event(&mut self, event: cl_event) {
        self.add(Family::Event, event);
    }

    pub fn run(&mut self, ops: &[Op]) {
        for op in ops.iter().take(MAX_OPS) {
            self.apply(op);
        }
        self.finish();
    }

    fn apply(&mut self, op: &Op) {
        let mut err: cl_int = 0;
        let mut events = Vec::new();
        let mut event: cl_event = null_mut();
        let want = |e: bool, event: &mut cl_event| if e { event as *mut cl_event } else { null_mut() };
        match op {
            Op::CreateContext { props, devices, of_type } => {
                let list = prop_list(
                    props,
                    &[CL_CONTEXT_PLATFORM as u64, CL_CONTEXT_INTEROP_USER_SYNC as u64],
                    CL_CONTEXT_PLATFORM as u64,
                    Family::Platform,
                    self,
                );
                let list = list.iter().map(|&v| v as cl_context_properties).collect::<Vec<_>>();
                let ctx = if let Some(t) = of_type {
                    cl!(clCreateContextFromType(list.as_ptr(), *t, None, null_mut(), &mut err))
                } else {
                    let devs = devices.iter().take(3).map(|&r| self.handle(Family::Device, r)).collect::<Vec<_>>();
                    let ptr = if devs.is_empty() { null() } else { devs.as_ptr() };
                    cl!(clCreateContext(list.as_ptr(), devs.len() as cl_uint, ptr, None, null_mut(), &mut err))
                };
                self.add(Family::Context, ctx);
            }
            Op::CreateQueue { context, device, props, legacy } => {
                let ctx = self.handle(Family::Context, *context);
                let dev = self.handle(Family::Device, *device);
                let q = if let Some(flags) = legacy {
                    #[allow(deprecated)]
                    let q = cl!(clCreateCommandQueue(ctx, dev, flags.get(QUEUE_FLAGS), &mut err));
                    q
                } else {
                    let list = prop_list(
                        props,
                        &[CL_QUEUE_PROPERTIES as u64, CL_QUEUE_SIZE as u64],
                        CL_QUEUE_PROPERTIES as u64,
                        Family::Context,
                        self,
                    );
                    cl!(clCreateCommandQueueWithProperties(ctx, dev, list.as_ptr(), &mut err))
                };
                if !q.is_null() {
                    cl!(clRetainCommandQueue(q));
                    self.queues.push(q);
                }
                self.add(Family::Queue, q);
            }
            Op::CreateBuffer { context, flags, size, host, props } => {
                let size = size.get();
                let flags = flags.get(MEM_FLAGS);
                // Valid sizes beyond the cap only cost time; above the device limit
                // they must be refused, so those stay.
                if size > HOST_CAP && size <= driver().max_alloc {
                    return;
                }
                let ptr = if *host && size <= HOST_CAP { self.host_memory(size) } else { null_mut() };
                let ctx = self.handle(Family::Context, *context);
                let mem = if let Some(props) = props {
                    let list = prop_list(props, &[0x10000], 0x10000, Family::Context, self);
                    cl!(clCreateBufferWithProperties(ctx, list.as_ptr(), flags, size, ptr, &mut err))
                } else {
                    cl!(clCreateBuffer(ctx, flags, size, ptr, &mut err))
                };
                if !mem.is_null() {
                    self.sizes.insert(mem as usize, size);
                }
                self.add(Family::Mem, mem);
            }
            Op::CreateSubBuffer { mem, flags, create_type, origin, size } => {
                let region = [origin.get(), size.get()];
                let kind = create_type.unwrap_or(CL_BUFFER_CREATE_TYPE_REGION);
                let parent = self.handle(Family::Mem, *mem);
                let sub = cl!(clCreateSubBuffer(
                    parent,
                    flags.get(MEM_FLAGS),
                    kind,
                    region.as_ptr() as *const c_void,
                    &mut err
                ));
                if !sub.is_null() {
                    self.sizes.insert(sub as usize, region[1]);
                }
                self.add(Family::Mem, sub);
            }
            Op::CreateUserEvent { context } => {
                let ev = cl!(clCreateUserEvent(self.handle(Family::Context, *context), &mut err));
                if !ev.is_null() {
                    cl!(clRetainEvent(ev));
                    self.user_events.push((ev, false));
                }
                self.add(Family::Event, ev);
            }
            Op::SetUserEventStatus { event, status } => {
                let ev = self.handle(Family::Event, *event);
                if cl!(clSetUserEventStatus(ev, *status)) == CL_SUCCESS {
                    if let Some(e) = self.user_events.iter_mut().find(|e| e.0 == ev) {
                        e.1 = true;
                    }
                }
            }
            Op::CreateKernel { program, name } => {
                let names = ["nope", "", "fill\0x"];
                let i = *name as usize % (KERNELS.len() + names.len());
                let name = KERNELS.get(i).map(|k| k.0).unwrap_or_else(|| names[i - KERNELS.len()]);
                let c = std::ffi::CString::new(name.split('\0').next().unwrap()).unwrap();
                let k = cl!(clCreateKernel(self.handle(Family::Program, *program), c.as_ptr(), &mut err));
                self.made_kernel(k);
            }
            Op::CreateKernels { program, room } => {
                let mut ks = vec![null_mut(); *room as usize % 10];
                let ptr = if ks.is_empty() { null_mut() } else { ks.as_mut_ptr() };
                let mut n = 0;
                if cl!(clCreateKernelsInProgram(
                    self.handle(Family::Program, *program),
                    ks.len() as cl_uint,
                    ptr,
                    &mut n
                )) == CL_SUCCESS
                {
                    for k in ks {
                        self.made_kernel(k);
                    }
                }
            }
            Op::CloneKernel { kernel } => {
                let src = self.handle(Family::Kernel, *kernel);
                let k = cl!(clCloneKernel(src, &mut err));
                if !k.is_null() {
                    let args = self.args.get(&(src as usize)).cloned().unwrap_or_default();
                    self.args.insert(k as usize, args);
                }
                self.add(Family::Kernel, k);
            }
            Op::SetArg { kernel, index, arg } => {
                let k = self.handle(Family::Kernel, *kernel);
                let index = *index as cl_uint % 10;
                // A handle argument is passed by address: this holds it for the call.
                let mut mem: cl_mem = null_mut();
                let (size, value, bytes): (usize, *const c_void, Option<usize>) = match arg {
                    Arg::Mem(r) => {
                        mem = self.handle(Family::Mem, *r);
                        (8, &mem as *const cl_mem as *const c_void, self.sizes.get(&(mem as usize)).copied())
                    }
                    Arg::NullMem => (8, &mem as *const cl_mem as *const c_void, Some(0)),
                    Arg::Local(size) => (size.get(), null(), Some(size.get())),
                    Arg::Bytes(v) => (v.len(), v.as_ptr() as *const c_void, None),
                    Arg::NullValue(size) => (size.get(), null(), None),
                };
                if cl!(clSetKernelArg(k, index, size, value)) == CL_SUCCESS {
                    if let Some(args) = self.args.get_mut(&(k as usize)) {
                        if let Some(slot) = args.bytes.get_mut(index as usize) {
                            *slot = bytes;
                        }
                    }
                }
            }
            Op::Launch { queue, kernel, dim, offset, global, local, wait, event: e } => {
                let dim = *dim as usize % 5;
                let global = global.map(Size::get);
                let offset = offset.map(|o| o.map(Size::get));
                let local = local.map(|l| l.map(Size::get));
                let used = dim.clamp(1, 3);
                let items = global[..used].iter().try_fold(1usize, |acc, &g| acc.checked_mul(g));
                let wraps = offset.is_some_and(|o| (0..used).any(|i| o[i].checked_add(global[i]).is_none()));
                if items.is_some_and(|n| n > WORK_CAP) && !wraps && (1..=3).contains(&dim) {
                    return;
                }
                let k = self.handle(Family::Kernel, *kernel);
                self.set_bounds(k);
                let (n, list) = self.wait_list(wait, &mut events);
                let q = self.handle(Family::Queue, *queue);
                cl!(clEnqueueNDRangeKernel(
                    q,
                    k,
                    dim as cl_uint,
                    offset.as_ref().map_or(null(), |o| o.as_ptr()),
                    global.as_ptr(),
                    local.as_ref().map_or(null(), |l| l.as_ptr()),
                    n,
                    list,
                    want(*e, &mut event)
                ));
                self.took_event(event);
            }
            Op::Transfer { write, queue, mem, blocking, offset, size, wait, event: e } => {
                let size = size.get();
                // Past the cap no buffer can hold `size`, so the call must fail before
                // it touches the one byte given.
                let ptr = self.host_memory(if size <= HOST_CAP { size } else { 1 });
                let blocking = (*blocking && self.may_block()) as cl_bool;
                let (n, list) = self.wait_list(wait, &mut events);
                let (q, m) = (self.handle(Family::Queue, *queue), self.handle(Family::Mem, *mem));
                if *write {
                    cl!(clEnqueueWriteBuffer(q, m, blocking, offset.get(), size, ptr, n, list, want(*e, &mut event)));
                } else {
                    cl!(clEnqueueReadBuffer(q, m, blocking, offset.get(), size, ptr, n, list, want(*e, &mut event)));
                }
                self.took_event(event);
            }
            Op::Fill { queue, mem, pattern, offset, size, wait, event: e } => {
                let pattern = (0..*pattern).collect::<Vec<u8>>();
                let ptr = if pattern.is_empty() { null() } else { pattern.as_ptr() as *const c_void };
                let (n, list) = self.wait_list(wait, &mut events);
                let (q, m) = (self.handle(Family::Queue, *queue), self.handle(Family::Mem, *mem));
                cl!(clEnqueueFillBuffer(
                    q,
                    m,
                    ptr,
                    pattern.len(),
                    offset.get(),
                    size.get(),
                    n,
                    list,
                    want(*e, &mut event)
                ));
                self.took_event(event);
            }
            Op::Copy { queue, src, dst, src_offset, dst_offset, size, wait, event: e } => {
                let (n, list) = self.wait_list(wait, &mut events);
                let q = self.handle(Family::Queue, *queue);
                let (s, d) = (self.handle(Family::Mem, *src), self.handle(Family::Mem, *dst));
                let (so, dof, size) = (src_offset.get(), dst_offset.get(), size.get());
                cl!(clEnqueueCopyBuffer(q, s, d, so, dof, size, n, list, want(*e, &mut event)));
                self.took_event(event);
            }
            Op::Rect { queue, a, b, op: rect, blocking, origins, region, pitches, wait, event: e } => {
                let [o0, o1] = origins.map(|o| o.map(Size::get));
                let region = region.map(Size::get);
                let [p0, p1, p2, p3] = pitches.map(Size::get);
                let q = self.handle(Family::Queue, *queue);
                let (ma, mb) = (self.handle(Family::Mem, *a), self.handle(Family::Mem, *b));
                let blocking = (*blocking && self.may_block()) as cl_bool;
                let ev = want(*e, &mut event);
                match rect {
                    RectOp::Copy => {
                        let (n, list) = self.wait_list(wait, &mut events);
                        let (o0, o1, r) = (o0.as_ptr(), o1.as_ptr(), region.as_ptr());
                        cl!(clEnqueueCopyBufferRect(q, ma, mb, o0, o1, r, p0, p1, p2, p3, n, list, ev));
                    }
                    RectOp::Read | RectOp::Write => {
                        // The host side is the application's to size; the buffer side is
                        // the driver's to check.
                        let host = match rect_extent(o1, region, p2, p3) {
                            Some(bytes) if bytes <= HOST_CAP => self.host_memory(bytes),
                            Some(_) => return,
                            None => self.host_memory(1),
                        };
                        let (n, list) = self.wait_list(wait, &mut events);
                        let (o0, o1, r) = (o0.as_ptr(), o1.as_ptr(), region.as_ptr());
                        if matches!(rect, RectOp::Read) {
                            cl!(clEnqueueReadBufferRect(q, ma, blocking, o0, o1, r, p0, p1, p2, p3, host, n, list, ev));
                        } else {
                            cl!(clEnqueueWriteBufferRect(
                                q, ma, blocking, o0, o1, r, p0, p1, p2, p3, host, n, list, ev
                            ));
                        }
                    }
                }
                self.took_event(event);
            }
            Op::Map { queue, mem, blocking, flags, offset, size, wait, event: e } => {
                let blocking = (*blocking && self.may_block()) as cl_bool;
                let (n, list) = self.wait_list(wait, &mut events);
                let (q, m) = (self.handle(Family::Queue, *queue), self.handle(Family::Mem, *mem));
                let ptr = cl!(clEnqueueMapBuffer(
                    q,
                    m,
                    blocking,
                    flags.get(MAP_FLAGS),
                    offset.get(),
                    size.get(),
                    n,
                    list,
                    want(*e, &mut event),
                    &mut err
                ));
                if !ptr.is_null() {
                    self.maps.push((m, ptr));
                }
                self.took_event(event);
            }
            Op::Unmap { queue, mem, which, wait, event: e } => {
                let m = self.handle(Family::Mem, *mem);
                let ptr = match which {
                    Some(i) if !self.maps.is_empty() => self.maps[*i as usize % self.maps.len()].1,
                    _ => 0x1000 as *mut c_void,
                };
                let (n, list) = self.wait_list(wait, &mut events);
                let q = self.handle(Family::Queue, *queue);
                if cl!(clEnqueueUnmapMemObject(q, m, ptr, n, list, want(*e, &mut event))) == CL_SUCCESS {
                    if let Some(at) = self.maps.iter().position(|&(mm, p)| mm == m && p == ptr) {
                        self.maps.remove(at);
                    }
                }
                self.took_event(event);
            }
            Op::Marker { queue, barrier, wait, event: e } => {
                let (n, list) = self.wait_list(wait, &mut events);
                let q = self.handle(Family::Queue, *queue);
                if *barrier {
                    cl!(clEnqueueBarrierWithWaitList(q, n, list, want(*e, &mut event)));
                } else {
                    cl!(clEnqueueMarkerWithWaitList(q, n, list, want(*e, &mut event)));
                }
                self.took_event(event);
            }
            Op::Migrate { queue, mems, flags, wait, event: e } => {
                let mems = mems.iter().take(4).map(|&r| self.handle(Family::Mem, r)).collect::<Vec<_>>();
                let (n, list) = self.wait_list(wait, &mut events);
                let q = self.handle(Family::Queue, *queue);
                let ptr = if mems.is_empty() { null() } else { mems.as_ptr() };
                let f = flags.get(MIGRATE_FLAGS);
                cl!(clEnqueueMigrateMemObjects(q, mems.len() as cl_uint, ptr, f, n, list, want(*e, &mut event)));
                self.took_event(event);
            }
            Op::EventCallback { event, kind } => {
                cl!(clSetEventCallback(self.handle(Family::Event, *event), *kind, Some(event_callback), null_mut()));
            }
            Op::MemCallback { mem } => {
                cl!(clSetMemObjectDestructorCallback(self.handle(Family::Mem, *mem), Some(mem_callback), null_mut()));
            }
            Op::Info { family, object, param, named, size, null_value } => {
                let (first, span) = info_range(*family);
                let param = if *named { first + param % span.max(1) } else { *param };
                let h = self.handle(*family, *object);
                // Zeroed, so a pointer-valued parameter (CL_PROGRAM_BINARIES) reads nulls.
                let mut value = vec![0u8; *size as usize];
                let ptr = if *null_value { null_mut() } else { value.as_mut_ptr() as *mut c_void };
                let (len, mut ret) = (value.len(), 0usize);
                match family {
                    Family::Context => cl!(clGetContextInfo(h, param, len, ptr, &mut ret)),
                    Family::Queue => cl!(clGetCommandQueueInfo(h, param, len, ptr, &mut ret)),
                    Family::Mem => cl!(clGetMemObjectInfo(h, param, len, ptr, &mut ret)),
                    Family::Kernel => cl!(clGetKernelInfo(h, param, len, ptr, &mut ret)),
                    Family::Event => cl!(clGetEventInfo(h, param, len, ptr, &mut ret)),
                    Family::Program => cl!(clGetProgramInfo(h, param, len, ptr, &mut ret)),
                    Family::Device => cl!(clGetDeviceInfo(h, param, len, ptr, &mut ret)),
                    Family::Platform => cl!(clGetPlatformInfo(h, param, len, ptr, &mut ret)),
                };
            }
            Op::KernelInfo { kernel, device, index, param, which, size } => {
                let k = self.handle(Family::Kernel, *kernel);
                let dev = self.handle(Family::Device, *device);
                let mut value = vec![0u8; *size as usize];
                let (len, ptr, mut ret) = (value.len(), value.as_mut_ptr() as *mut c_void, 0usize);
                match which % 4 {
                    0 => cl!(clGetKernelArgInfo(
                        k,
                        *index as cl_uint,
                        CL_KERNEL_ARG_ADDRESS_QUALIFIER + param % 6,
                        len,
                        ptr,
                        &mut ret
                    )),
                    1 => {
                        cl!(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE + param % 8, len, ptr, &mut ret))
                    }
                    2 => cl!(clGetProgramBuildInfo(
                        self.handle(Family::Program, Ref::Live(*index)),
                        dev,
                        CL_PROGRAM_BUILD_STATUS + param % 6,
                        len,
                        ptr,
                        &mut ret
                    )),
                    _ => {
                        let input = [*index as usize; 3];
                        cl!(clGetKernelSubGroupInfo(
                            k,
                            dev,
                            0x2033 + param % 8,
                            8 * (*index as usize % 4),
                            input.as_ptr() as *const c_void,
                            len,
                            ptr,
                            &mut ret
                        ))
                    }
                };
            }
            Op::Binaries { program } => {
                let p = self.handle(Family::Program, *program);
                let mut sizes = [0usize; 1];
                if cl!(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, 8, sizes.as_mut_ptr() as *mut c_void, null_mut()))
                    == CL_SUCCESS
                {
                    let mut bytes = vec![0u8; sizes[0].min(64 << 20)];
                    if bytes.len() == sizes[0] {
                        let ptrs = [bytes.as_mut_ptr()];
                        cl!(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 8, ptrs.as_ptr() as *mut c_void, null_mut()));
                    }
                }
            }
            Op::Retain { family, object } | Op::Release { family, object } => {
                let h = self.handle(*family, *object);
                let retain = matches!(op, Op::Retain { .. });
                let entry = table_of(*family).and_then(|t| self.tables[t].iter_mut().find(|e| e.handle == h));
                // The fixture's objects must live for the next input, and a queue or a
                // user event released past its references would take host memory or a
                // blocking wait with it: those stay within the harness's count.
                let guarded = matches!(family, Family::Queue | Family::Event | Family::Context | Family::Program);
                if !retain && guarded && entry.as_ref().is_some_and(|e| e.refs == 0) {
                    return;
                }
                let status = match (family, retain) {
                    (Family::Context, true) => cl!(clRetainContext(h)),
                    (Family::Context, false) => cl!(clReleaseContext(h)),
                    (Family::Queue, true) => cl!(clRetainCommandQueue(h)),
                    (Family::Queue, false) => cl!(clReleaseCommandQueue(h)),
                    (Family::Mem, true) => cl!(clRetainMemObject(h)),
                    (Family::Mem, false) => cl!(clReleaseMemObject(h)),
                    (Family::Kernel, true) => cl!(clRetainKernel(h)),
                    (Family::Kernel, false) => cl!(clReleaseKernel(h)),
                    (Family::Event, true) => cl!(clRetainEvent(h)),
                    (Family::Event, false) => cl!(clReleaseEvent(h)),
                    (Family::Program, true) => cl!(clRetainProgram(h)),
                    (Family::Program, false) => cl!(clReleaseProgram(h)),
                    (Family::Device, true) => cl!(clRetainDevice(h)),
                    (Family::Device, false) => cl!(clReleaseDevice(h)),
                    (Family::Platform, _) => return,
                };
                if status == CL_SUCCESS {
                    if let Some(e) = entry {
                        if retain {
                            e.refs += 1;
                        } else {
                            e.refs = e.refs.saturating_sub(1);
                        }
                    }
                }
            }
            Op::Flush { queue } => {
                cl!(clFlush(self.handle(Family::Queue, *queue)));
            }
            Op::SetDefaultDeviceQueue { context, device, queue } => {
                let (ctx, dev) = (self.handle(Family::Context, *context), self.handle(Family::Device, *device));
                cl!(clSetDefaultDeviceCommandQueue(ctx, dev, self.handle(Family::Queue, *queue)));
            }
            Op::Finish { queue } => {
                if self.may_block() {
                    cl!(clFinish(self.handle(Family::Queue, *queue)));
                }
            }
            Op::WaitFor { wait } => {
                if self.may_block() {
                    let (n, list) = self.wait_list(wait, &mut events);
                    cl!(clWaitForEvents(n, list));
                }
            }
            Op::Svm { context, flags, size, alignment } => {
                let ctx = self.handle(Family::Context, *context);
                let p = cl!(clSVMAlloc(ctx, flags.get(MEM_FLAGS), size.get(), *alignment));
                if !p.is_null() {
                    cl!(clSVMFree(ctx, p));
                }
            }
            Op::CreatePipe { context, flags, packet_size, max_packets, props } => {
                // Large valid rings only cost time in memset.
                if u64::from(*packet_size) * u64::from(*max_packets) > HOST_CAP as u64 {
                    return;
                }
                let list: [cl_pipe_properties; 3] = [0x1234, 1, 0];
                let props = if *props { list.as_ptr() } else { null() };
                let ctx = self.handle(Family::Context, *context);
                let flags = flags.get(MEM_FLAGS);
                let pipe = cl!(clCreatePipe(ctx, flags, *packet_size, *max_packets, props, &mut err));
                self.add(Family::Mem, pipe);
            }
            Op::Sampler { context, props } => {
                let list = prop_list(props, &[CL_SAMPLER_NORMALIZED_COORDS as u64], 0, Family::Context, self);
                let s =
                    cl!(clCreateSamplerWithProperties(self.handle(Family::Context, *context), list.as_ptr(), &mut err));
                if !s.is_null() {
                    cl!(clReleaseSampler(s));
                }
            }
            Op::CreateImage { context, flags, format, image_type, size, pitches, host, source } => {
                let order = ORDERS[format.0 as usize % ORDERS.len()];
                let ty = CHANNEL_TYPES[format.1 as usize % CHANNEL_TYPES.len()];
                let f = cl_image_format { image_channel_order: order, image_channel_data_type: ty };
                let size = size.map(Size::get);
                let [row, slice] = pitches.map(Size::get);
                // SAFETY: a plain C struct; zero is "no buffer".
                let mut d: cl_image_desc = unsafe { std::mem::zeroed() };
                d.image_type = IMAGE_TYPES[*image_type as usize % IMAGE_TYPES.len()];
                (d.image_width, d.image_height, d.image_depth, d.image_array_size) =
                    (size[0], size[1], size[2], size[3]);
                (d.image_row_pitch, d.image_slice_pitch) = (row, slice);
                d.buffer = source.map_or(null_mut(), |r| self.handle(Family::Mem, r));
                // Host memory must hold what the description says: the application's part.
                let ptr = match (host, image_host_bytes(size, row, slice)) {
                    (false, _) => null_mut(),
                    (true, Some(bytes)) => self.host_memory(bytes),
                    (true, None) => return,
                };
                let ctx = self.handle(Family::Context, *context);
                let m = cl!(clCreateImage(ctx, flags.get(MEM_FLAGS), &f, &d, ptr, &mut err));
                self.add(Family::Mem, m);
            }
            Op::Image { queue, image, other, op: image_op, blocking, origins, region, pitches, wait, event: e } => {
                let [o0, o1] = origins.map(|o| o.map(Size::get));
                let region = region.map(Size::get);
                let [row, slice] = pitches.map(Size::get);
                let q = self.handle(Family::Queue, *queue);
                let (img, other) = (self.handle(Family::Mem, *image), self.handle(Family::Mem, *other));
                let blocking = (*blocking && self.may_block()) as cl_bool;
                let ev = want(*e, &mut event);
                let (o0, o1, r) = (o0.as_ptr(), o1.as_ptr(), region.as_ptr());
                match image_op {
                    ImageOp::Read | ImageOp::Write => {
                        let Some(bytes) = image_host_bytes([region[0], region[1], region[2], 1], row, slice) else {
                            return;
                        };
                        let host = self.host_memory(bytes);
                        let (n, list) = self.wait_list(wait, &mut events);
                        if matches!(image_op, ImageOp::Read) {
                            cl!(clEnqueueReadImage(q, img, blocking, o0, r, row, slice, host, n, list, ev));
                        } else {
                            cl!(clEnqueueWriteImage(q, img, blocking, o0, r, row, slice, host, n, list, ev));
                        }
                    }
                    ImageOp::Copy => {
                        let (n, list) = self.wait_list(wait, &mut events);
                        cl!(clEnqueueCopyImage(q, img, other, o0, o1, r, n, list, ev));
                    }
                    ImageOp::Fill => {
                        let color = [0x3f80_0000u32, 7, 0xffff_ffff, 0];
                        let (n, list) = self.wait_list(wait, &mut events);
                        cl!(clEnqueueFillImage(q, img, color.as_ptr().cast(), o0, r, n, list, ev));
                    }
                    ImageOp::ToBuffer | ImageOp::FromBuffer => {
                        let (n, list) = self.wait_list(wait, &mut events);
                        let offset = row;
                        if matches!(image_op, ImageOp::ToBuffer) {
                            cl!(clEnqueueCopyImageToBuffer(q, img, other, o0, r, offset, n, list, ev));
                        } else {
                            cl!(clEnqueueCopyBufferToImage(q, other, img, offset, o0, r, n, list, ev));
                        }
                    }
                    ImageOp::Map(flags) => {
                        let (n, list) = self.wait_list(wait, &mut events);
                        let (mut rp, mut sp) = (0usize, 0usize);
                        let sp_ptr = if slice % 2 == 0 { &mut sp as *mut usize } else { null_mut() };
                        let ptr = cl!(clEnqueueMapImage(
                            q,
                            img,
                            blocking,
                            flags.get(MAP_FLAGS),
                            o0,
                            r,
                            &mut rp,
                            sp_ptr,
                            n,
                            list,
                            ev,
                            &mut err
                        ));
                        if !ptr.is_null() {
                            self.maps.push((img, ptr));
                        }
                    }
                    ImageOp::Info(param) => {
                        let mut out = [0u8; 64];
                        let p = CL_IMAGE_FORMAT + *param as u32 % 12;
                        cl!(clGetImageInfo(img, p, out.len(), out.as_mut_ptr().cast(), null_mut()));
                    }
                }
                self.took_event(event);
            }
            Op::Source { context, strings, lengths } => {
                let strings = strings
                    .iter()
                    .take(4)
                    .map(|s| s.iter().map(|&b| b.max(1)).chain([0]).collect::<Vec<u8>>())
                    .collect::<Vec<_>>();
                let ptrs = strings.iter().map(|s| s.as_ptr() as *const c_char).collect::<Vec<_>>();
                let lens = strings.iter().map(|s| s.len() - 1).collect::<Vec<_>>();
                let ctx = self.handle(Family::Context, *context);
                let ps = if ptrs.is_empty() { null_mut() } else { ptrs.as_ptr() as *mut *const c_char };
                let ls = if *lengths { lens.as_ptr() } else { null() };
                let p = cl!(clCreateProgramWithSource(ctx, ptrs.len() as cl_uint, ps, ls, &mut err));
                self.add(Family::Program, p);
            }
            Op::Build { program, options } => {
                let text = match options {
                    BuildOptions::Listed(i) => BUILD_OPTIONS[*i as usize % BUILD_OPTIONS.len()].to_string(),
                    BuildOptions::Long(size) => "-DX ".repeat(size.get().min(4 << 20) / 4),
                };
                let text = CString::new(text).unwrap_or_default();
                // Not the shared program: a failed build there would change what later
                // inputs find.
                let p = self.handle(Family::Program, *program);
                if p != fixture().program {
                    let d = driver().device;
                    cl!(clBuildProgram(p, 1, &d, text.as_ptr(), None, null_mut()));
                }
            }
        }
    }

    fn made_kernel(&mut self, k: cl_kernel) {
        if k.is_null() {
            return;
        }
        let mut name = [0u8; 64];
        cl!(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 64, name.as_mut_ptr() as *mut c_void, null_mut()));
        let name =
            std::ffi::CStr::from_bytes_until_nul(&name).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
        if let Some(kernel) = KERNELS.iter().position(|k| k.0 == name) {
            // Every argument set to something valid, so a launch runs unless the input
            // changes that.
            let mut args = Args { kernel, ..Args::default() };
            for (i, p) in KERNELS[kernel].1.iter().enumerate() {
                let zeros = [0u8; 16];
                let (size, value, bytes) = match *p {
                    Param::Global(_) => (8, &self.default_mem as *const cl_mem as *const c_void, DEFAULT_BYTES),
                    Param::Local(_) => (256, null(), 256),
                    Param::Value(n) => (n, zeros.as_ptr() as *const c_void, 0),
                    Param::N | Param::NL => (4, zeros.as_ptr() as *const c_void, 0),
                };
                cl!(clSetKernelArg(k, i as cl_uint, size, value));
                args.bytes[i] = Some(bytes);
            }
            self.args.insert(k as usize, args);
        }
        self.add(Family::Kernel, k);
    }

    /// Sets a harness kernel's `n` and `nl` from what is known of its other arguments,
    /// so whatever the input set, the kernel stays inside its buffers.
    fn set_bounds(&self, k: cl_kernel) {
        let Some(args) = self.args.get(&(k as usize)) else { return };
        let params = KERNELS[args.kernel].1;
        let mut n = u32::MAX as usize;
        let mut nl = 0usize;
        for (i, p) in params.iter().enumerate() {
            match *p {
                Param::Global(elem) => n = n.min(args.bytes[i].unwrap_or(0) / elem),
                Param::Local(elem) => nl = args.bytes[i].unwrap_or(0) / elem,
                _ => {}
            }
        }
        for (i, p) in params.iter().enumerate() {
            let v = match p {
                Param::N => n as u32,
                Param::NL => nl.min(u32::MAX as usize) as u32,
                _ => continue,
            };
            cl!(clSetKernelArg(k, i as cl_uint, 4, &v as *const u32 as *const c_void));
        }
    }

    /// Ends the input: sets every user event, waits for every queue, and gives back
    /// every reference the harness holds, so what stays allocated is the driver's leak.
    fn finish(&mut self) {
        for &(ev, set) in &self.user_events {
            if !set {
                cl!(clSetUserEventStatus(ev, CL_COMPLETE));
            }
        }
        for &(ev, _) in &self.user_events {
            cl!(clReleaseEvent(ev));
        }
        for &q in &self.queues {
            cl!(clFinish(q));
        }
        // The fixture queue too: inputs enqueue on it.
        cl!(clFinish(fixture().queue));
        for table in self.tables.iter().rev() {
            for e in table {
                for _ in 0..e.refs {
                    release_any(e.handle);
                }
            }
        }
        for &q in &self.queues {
            cl!(clReleaseCommandQueue(q));
        }
        self.host.clear();
    }
}

/// Releases a handle of whichever family it belongs to (the tables know; this is for
/// the end, where order matters less than completeness).
fn release_any(h: *mut c_void) {
    // Exactly one of these accepts the handle; the others answer with an error code.
    if cl!(clReleaseEvent(h)) == CL_SUCCESS
        || cl!(clReleaseKernel(h)) == CL_SUCCESS
        || cl!(clReleaseMemObject(h)) == CL_SUCCESS
        || cl!(clReleaseProgram(h)) == CL_SUCCESS
        || cl!(clReleaseCommandQueue(h)) == CL_SUCCESS
    {
        return;
    }
    cl!(clReleaseContext(h));
}
