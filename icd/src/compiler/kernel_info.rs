//! What the driver knows of each kernel after the rewrite: its arguments as the host
//! passes them and how its work-items run. The program cache stores it (`meta`).

/// How the host passes one kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ArgKind {
    /// A `__global` or `__constant` pointer: a buffer (or NULL).
    Buffer,
    /// A `__local` pointer: the host gives a size, the runtime a per-group address.
    Local,
    /// A value of `size` bytes (scalars, vectors, structs by value).
    Value,
    /// An image: the host gives a `cl_mem`, the kernel gets the image's descriptor
    /// (kernel-abi `Image`).
    Image,
    /// A sampler: the host gives a `cl_sampler`, the kernel gets its `CLK_*` bits.
    Sampler,
    /// A pipe: the host gives a pipe's `cl_mem`, the kernel a pointer to its memory
    /// (kernel-abi `PipeHeader`).
    Pipe,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Arg {
    pub(crate) kind: ArgKind,
    /// Offset of the argument in the packed block, and the bytes it occupies there.
    pub(crate) offset: usize,
    pub(crate) size: usize,
    /// SPIR address space from `kernel_arg_addr_space` (0 private, 1 global,
    /// 2 constant, 3 local).
    pub(crate) addr_space: u32,
    pub(crate) access: String,
    pub(crate) type_name: String,
    pub(crate) type_qual: String,
    pub(crate) name: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Kernel {
    pub(crate) name: String,
    pub(crate) args: Vec<Arg>,
    /// Size of the packed argument block.
    pub(crate) args_size: usize,
    /// Bytes of `__local` variables declared in the kernel.
    pub(crate) static_local_size: u64,
    /// Work-items wait for each other (barriers, collectives, in the kernel or the
    /// functions it calls): regions run the kernel where the transform takes it, fibers
    /// where it does not (see `passes::regions`).
    pub(crate) fibers: bool,
    /// Bytes of frame memory each work-item needs for variables live across barriers.
    pub(crate) frame_size: u64,
    /// The kernel was made resumable: it runs as barrier regions.
    pub(crate) regions: bool,
    pub(crate) reqd_work_group_size: Option<[usize; 3]>,
    /// The kernel uses sub-group functions or queries.
    pub(crate) sub_groups: bool,
    /// `intel_reqd_sub_group_size(N)` (cl_intel_required_subgroup_size; SPIR-V's
    /// `SubgroupSize` execution mode).
    pub(crate) reqd_sub_group_size: Option<usize>,
    /// How much of its work-group the kernel sees, which decides how many groups one
    /// call of its launcher may run (`exec::ndrange::merge_for`).
    pub(crate) group_use: GroupUse,
    /// The kernel calls `printf`, which writes to standard output's descriptor past the
    /// host's stdio buffer: the driver flushes that before the kernel runs.
    pub(crate) prints: bool,
    /// The kernel makes async copies the driver moves (strided, 2D and 3D copies, and
    /// exports: every copy but a contiguous import, which kernel code moves itself):
    /// its launches may give them to copy workers on idle cores (`exec::copies::helpers`).
    pub(crate) driver_copies: bool,
    /// `CL_KERNEL_ATTRIBUTES`: the attributes the source gives the kernel, as written
    /// (`vec_type_hint(uint4) reqd_work_group_size(64,1,1)`), space-separated.
    pub(crate) attributes: String,
}

/// The sub-group sizes kernels may ask for (`intel_reqd_sub_group_size`): the
/// collectives run in any, barriers around library helpers (builtins/clc/collectives.c);
/// the same list as Intel's CPU runtime, which SYCL code is written against.
pub(crate) const SUB_GROUP_SIZES: [usize; 5] = [4, 8, 16, 32, 64];
/// A kernel's sub-group size where it asks for none: the work-item vectorizer's width
/// (`passes::simd`), so that a sub-group is the lanes one SIMD step runs.
pub(crate) const SUB_GROUP_SIZE: usize = 8;

/// Whether a kernel is one clang made for a block given to `enqueue_kernel`
/// (`__<function>_block_invoke[_<n>]_kernel`): the driver launches it for kernel code,
/// and the application never sees it (names starting with two underscores are the
/// implementation's).
pub(crate) fn is_block_kernel(name: &str) -> bool {
    name.starts_with("__") && name.ends_with("_kernel") && name.contains("_block_invoke")
}

impl Kernel {
    /// The sub-group size of this kernel's launches.
    pub(crate) fn sub_group_size(&self) -> usize {
        self.reqd_sub_group_size.unwrap_or(SUB_GROUP_SIZE)
    }
}

/// How much of its work-group a kernel sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum GroupUse {
    /// Its work-items share memory or wait for each other (`__local` memory, barriers,
    /// collectives, async copies, sub-group functions), or it asks what only the
    /// group's own state answers: one group a call of its launcher.
    #[default]
    Whole,
    /// It reads local or group ids and sizes, and nothing else of its group: one call
    /// runs consecutive groups of a row in x, its launcher looping over them.
    Ids,
    /// It cannot tell one group from another (it asks only global ids and sizes):
    /// consecutive groups of a row run as one group as many times as wide.
    Blind,
}
