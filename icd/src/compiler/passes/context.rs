//! The builtins that read the work-item context, and the one way they get it.
//!
//! Each is defined under the name clang calls it by (its mangled name, or the plain
//! `__to_global` clang calls for `to_global`) with the context, `ptr %__ferrocl_ctx`,
//! as an extra last parameter. The rewrite gives that parameter to every function that
//! reaches one and appends the context to every call and declaration of one
//! (`takes_context`). Where they are defined:
//! - the work-item queries, barriers and address-space tests listed here: C in
//!   `builtins/clc/workitem.c`, named through the header this table generates
//!   (`c_header`: `CONTEXT_FN(size_t, get_global_id, ...)` is `_Z13get_global_idj`);
//! - the async-copy family: the Rust archive, under the names `builtins/build.rs`
//!   generates from kernel-abi's `ASYNC_BUILTINS` (their calls go through inline fast
//!   paths first, `route_fast_paths`);
//! - the helpers the collectives pass generates (`collectives::HELPERS`).
//!
//! kernel-abi's `mangle` writes every mangled name, here and for the archive.
//! The analyses ask this table what a query's answer depends on (`Answer`).

use std::sync::LazyLock;

use ferrocl_kernel_abi::mangle::{self, Ty, GENERIC};
use ferrocl_kernel_abi::{async_builtin, AsyncReach};

use super::collectives;
use super::ir_text::opencl_name;

/// What a query's answer depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The range alone: the same everywhere (`get_work_dim`, global sizes and offset).
    Range,
    /// The work-item's place in the range, not how the range is cut into groups
    /// (`get_global_id`, `get_global_linear_id`).
    GlobalItem,
    /// The group: the same in every work-item of it (group ids, local and enqueued
    /// sizes, the number of groups).
    Group,
    /// The work-item's place in its group (`get_local_id`, `get_local_linear_id`).
    Item,
    /// Sub-group queries.
    SubGroup,
}

impl Answer {
    /// Answers that do not depend on how the range is cut into groups.
    pub(crate) fn group_blind(self) -> bool {
        matches!(self, Answer::Range | Answer::GlobalItem)
    }

    /// Answers the launcher of a kernel running several groups per call sets group by
    /// group (`GroupUse::Ids`).
    pub(crate) fn group_ids(self) -> bool {
        matches!(self, Answer::Group | Answer::Item)
    }
}

/// What a builtin of the table does with the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A work-item query: answers from the context alone, no side effects.
    Query(Answer),
    /// A barrier: reaches the driver through the group in the context.
    Barrier,
    /// Tells where a generic pointer points (`get_fence`, `to_global`, ...).
    Address,
    /// Device-side enqueue and its events (builtins/clc/enqueue.c): reaches the driver.
    Device,
}

/// One builtin of the table.
pub(crate) struct Builtin {
    /// Its name in C (`builtins/clc/workitem.c` defines `ferrocl_<c>`, named by the
    /// generated `FERROCL_NAME_<c>`).
    c: &'static str,
    /// The OpenCL C name.
    opencl: &'static str,
    /// Its parameters as clang mangles them; `None`: clang calls it by `opencl`, plain.
    params: Option<&'static [Ty<'static>]>,
    /// Its IR declaration with the context: return type, then the parameter list.
    signature: &'static str,
    pub(crate) role: Role,
}

const UINT: Ty = Ty::Builtin("j");
const UINT4: Ty = Ty::Vector(4, &UINT);
const SCOPE: Ty = Ty::Named("memory_scope");
const VOID: Ty = Ty::Builtin("v");

const fn query(c: &'static str, params: &'static [Ty<'static>], signature: &'static str, answer: Answer) -> Builtin {
    Builtin { c, opencl: c, params: Some(params), signature, role: Role::Query(answer) }
}

const fn barrier(c: &'static str, opencl: &'static str, params: &'static [Ty<'static>]) -> Builtin {
    let signature = if params.len() == 1 { "void (i32, ptr)" } else { "void (i32, i32, ptr)" };
    Builtin { c, opencl, params: Some(params), signature, role: Role::Barrier }
}

/// A device-side enqueue builtin, called by the symbol clang gives it.
const fn device(c: &'static str, symbol: &'static str, signature: &'static str) -> Builtin {
    Builtin { c, opencl: symbol, params: None, signature, role: Role::Device }
}

/// `size_t f(uint dimension)`.
const BY_DIMENSION: &str = "i64 (i32, ptr)";

// A sub-group is the whole work-group (builtins/clc/workitem.c).
const TABLE: &[Builtin] = &[
    query("get_work_dim", &[], "i32 (ptr)", Answer::Range),
    query("get_global_size", &[UINT], BY_DIMENSION, Answer::Range),
    query("get_global_id", &[UINT], BY_DIMENSION, Answer::GlobalItem),
    query("get_local_size", &[UINT], BY_DIMENSION, Answer::Group),
    query("get_enqueued_local_size", &[UINT], BY_DIMENSION, Answer::Group),
    query("get_local_id", &[UINT], BY_DIMENSION, Answer::Item),
    query("get_num_groups", &[UINT], BY_DIMENSION, Answer::Group),
    query("get_group_id", &[UINT], BY_DIMENSION, Answer::Group),
    query("get_global_offset", &[UINT], BY_DIMENSION, Answer::Range),
    query("get_global_linear_id", &[], "i64 (ptr)", Answer::GlobalItem),
    query("get_local_linear_id", &[], "i64 (ptr)", Answer::Item),
    query("get_sub_group_size", &[], "i32 (ptr)", Answer::SubGroup),
    query("get_max_sub_group_size", &[], "i32 (ptr)", Answer::SubGroup),
    query("get_num_sub_groups", &[], "i32 (ptr)", Answer::SubGroup),
    query("get_enqueued_num_sub_groups", &[], "i32 (ptr)", Answer::SubGroup),
    query("get_sub_group_id", &[], "i32 (ptr)", Answer::SubGroup),
    query("get_sub_group_local_id", &[], "i32 (ptr)", Answer::SubGroup),
    // cl_khr_subgroup_ballot's masks and ballot arithmetic, which SPIR-V from SYCL's
    // compiler calls (GroupNonUniformBallot): answers from the work-item's place in its
    // sub-group and the arguments.
    query("get_sub_group_eq_mask", &[], "<4 x i32> (ptr)", Answer::SubGroup),
    query("get_sub_group_ge_mask", &[], "<4 x i32> (ptr)", Answer::SubGroup),
    query("get_sub_group_gt_mask", &[], "<4 x i32> (ptr)", Answer::SubGroup),
    query("get_sub_group_le_mask", &[], "<4 x i32> (ptr)", Answer::SubGroup),
    query("get_sub_group_lt_mask", &[], "<4 x i32> (ptr)", Answer::SubGroup),
    query("sub_group_inverse_ballot", &[UINT4], "i32 (<4 x i32>, ptr)", Answer::SubGroup),
    query("sub_group_ballot_bit_extract", &[UINT4, UINT], "i32 (<4 x i32>, i32, ptr)", Answer::SubGroup),
    query("sub_group_ballot_bit_count", &[UINT4], "i32 (<4 x i32>, ptr)", Answer::SubGroup),
    query("sub_group_ballot_inclusive_scan", &[UINT4], "i32 (<4 x i32>, ptr)", Answer::SubGroup),
    query("sub_group_ballot_exclusive_scan", &[UINT4], "i32 (<4 x i32>, ptr)", Answer::SubGroup),
    query("sub_group_ballot_find_lsb", &[UINT4], "i32 (<4 x i32>, ptr)", Answer::SubGroup),
    query("sub_group_ballot_find_msb", &[UINT4], "i32 (<4 x i32>, ptr)", Answer::SubGroup),
    // The first work-item of the sub-group (cl_khr_subgroup_non_uniform_vote's; every
    // work-item of it takes part here).
    query("sub_group_elect", &[], "i32 (ptr)", Answer::SubGroup),
    barrier("barrier", "barrier", &[UINT]),
    barrier("work_group_barrier", "work_group_barrier", &[UINT]),
    barrier("work_group_barrier_scope", "work_group_barrier", &[UINT, SCOPE]),
    barrier("sub_group_barrier", "sub_group_barrier", &[UINT]),
    barrier("sub_group_barrier_scope", "sub_group_barrier", &[UINT, SCOPE]),
    Builtin {
        c: "get_fence",
        opencl: "get_fence",
        params: Some(&[Ty::Pointer { space: Some(GENERIC), constant: false, to: &VOID }]),
        signature: "i32 (ptr addrspace(4), ptr)",
        role: Role::Address,
    },
    Builtin {
        c: "get_fence_const",
        opencl: "get_fence",
        params: Some(&[Ty::Pointer { space: Some(GENERIC), constant: true, to: &VOID }]),
        signature: "i32 (ptr addrspace(4), ptr)",
        role: Role::Address,
    },
    Builtin {
        c: "to_global",
        opencl: "__to_global",
        params: None,
        signature: "ptr addrspace(1) (ptr addrspace(4), ptr)",
        role: Role::Address,
    },
    Builtin {
        c: "to_local",
        opencl: "__to_local",
        params: None,
        signature: "ptr addrspace(3) (ptr addrspace(4), ptr)",
        role: Role::Address,
    },
    // OpenCL C 2.0's device-side enqueue: clang's calls for `enqueue_kernel`'s four forms
    // (the kernel argument is the block kernel's name, `passes::block_kernels_by_name`),
    // then the functions of queues and events.
    device("enqueue_kernel_basic", "__enqueue_kernel_basic", "i32 (ptr, i32, ptr, ptr addrspace(4), ptr addrspace(4), ptr)"),
    device(
        "enqueue_kernel_basic_events",
        "__enqueue_kernel_basic_events",
        "i32 (ptr, i32, ptr, i32, ptr addrspace(4), ptr addrspace(4), ptr addrspace(4), ptr addrspace(4), ptr)",
    ),
    device(
        "enqueue_kernel_varargs",
        "__enqueue_kernel_varargs",
        "i32 (ptr, i32, ptr, ptr addrspace(4), ptr addrspace(4), i32, ptr, ptr)",
    ),
    device(
        "enqueue_kernel_events_varargs",
        "__enqueue_kernel_events_varargs",
        "i32 (ptr, i32, ptr, i32, ptr addrspace(4), ptr addrspace(4), ptr addrspace(4), ptr addrspace(4), i32, ptr, ptr)",
    ),
    device(
        "enqueue_marker",
        "_Z14enqueue_marker9ocl_queuejPU9CLgenericK12ocl_clkeventPU9CLgenericS0_",
        "i32 (ptr, i32, ptr addrspace(4), ptr addrspace(4), ptr)",
    ),
    device("kernel_work_group_size", "__get_kernel_work_group_size_impl", "i32 (ptr addrspace(4), ptr addrspace(4), ptr)"),
    device(
        "kernel_preferred_multiple",
        "__get_kernel_preferred_work_group_size_multiple_impl",
        "i32 (ptr addrspace(4), ptr addrspace(4), ptr)",
    ),
    device(
        "kernel_max_sub_group_size",
        "__get_kernel_max_sub_group_size_for_ndrange_impl",
        "i32 (ptr, ptr addrspace(4), ptr addrspace(4), ptr)",
    ),
    device(
        "kernel_sub_group_count",
        "__get_kernel_sub_group_count_for_ndrange_impl",
        "i32 (ptr, ptr addrspace(4), ptr addrspace(4), ptr)",
    ),
    device("get_default_queue", "_Z17get_default_queuev", "ptr (ptr)"),
    device("retain_event", "_Z12retain_event12ocl_clkevent", "void (ptr, ptr)"),
    device("release_event", "_Z13release_event12ocl_clkevent", "void (ptr, ptr)"),
    device("create_user_event", "_Z17create_user_eventv", "ptr (ptr)"),
    device("set_user_event_status", "_Z21set_user_event_status12ocl_clkeventi", "void (ptr, i32, ptr)"),
    device("is_valid_event", "_Z14is_valid_event12ocl_clkevent", "i1 (ptr, ptr)"),
    device(
        "capture_event_profiling_info",
        "_Z28capture_event_profiling_info12ocl_clkeventiPU8CLglobalv",
        "void (ptr, i32, ptr addrspace(1), ptr)",
    ),
    Builtin {
        c: "to_private",
        opencl: "__to_private",
        params: None,
        signature: "ptr (ptr addrspace(4), ptr)",
        role: Role::Address,
    },
];

/// The table with each builtin's symbol, mangled once per process.
static SYMBOLS: LazyLock<Vec<(String, &'static Builtin)>> = LazyLock::new(|| {
    TABLE
        .iter()
        .map(|b| (b.params.map_or_else(|| b.opencl.to_string(), |p| mangle::function(b.opencl, p)), b))
        .collect()
});

/// The builtin of the table clang calls by this symbol.
pub(crate) fn by_symbol(symbol: &str) -> Option<&'static Builtin> {
    SYMBOLS.iter().find(|(s, _)| s == symbol).map(|&(_, b)| b)
}

/// What the answer of the query called by this symbol depends on; `None` for anything
/// else.
pub(crate) fn answer(symbol: &str) -> Option<Answer> {
    match by_symbol(symbol)?.role {
        Role::Query(a) => Some(a),
        _ => None,
    }
}

/// The symbol of the query or barrier of this C name (for calls the rewrite writes).
pub(crate) fn symbol(c: &str) -> &'static str {
    SYMBOLS.iter().find(|(_, b)| b.c == c).map(|(s, _)| s.as_str()).expect("a builtin of the context table")
}

/// Whether a call of this (undefined) symbol gets the context: the table, the archive's
/// async builtins that take it, and the collectives' helpers.
pub(crate) fn takes_context(symbol: &str) -> bool {
    by_symbol(symbol).is_some()
        || collectives::HELPERS.iter().any(|h| symbol.starts_with(h))
        || opencl_name(symbol).and_then(async_builtin).is_some_and(|b| b.reach != AsyncReach::Plain)
}

/// Every symbol of the table.
#[cfg(test)]
pub(crate) fn symbols() -> impl Iterator<Item = &'static str> {
    SYMBOLS.iter().map(|(s, _)| s.as_str())
}

/// Queries that take a dimension and answer a `size_t` (`get_global_id(d)`, ...).
pub(crate) fn by_dimension() -> impl Iterator<Item = &'static str> {
    SYMBOLS.iter().filter(|(_, b)| b.signature == BY_DIMENSION).map(|(s, _)| s.as_str())
}

/// IR declarations of the table's builtins a module calls but does not declare (calls
/// the rewrite wrote: a barrier at a join, the launcher's linear id).
pub(crate) fn missing_declarations(module: &str) -> String {
    let mut out = String::new();
    for (symbol, b) in SYMBOLS.iter() {
        let call = format!("@{symbol}(");
        let declared = module.lines().any(|l| l.starts_with("declare ") && l.contains(&call));
        if module.contains(&call) && !declared {
            let (ret, params) = b.signature.split_once(' ').unwrap_or((b.signature, "()"));
            out.push_str(&format!("declare {ret} {call}{}\n", &params[1..]));
        }
    }
    out
}

/// The C header naming the table's symbols for `builtins/clc/workitem.c`.
pub(crate) fn c_header() -> String {
    let mut out = String::from(
        "/* Generated by the driver (icd/src/compiler/passes/context.rs): the symbols clang calls the\n \
         * builtins that read the work-item context by. */\n",
    );
    for (symbol, b) in SYMBOLS.iter() {
        out.push_str(&format!("#define FERROCL_NAME_{} \"{symbol}\"\n", b.c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_clangs() {
        assert_eq!(symbol("get_global_id"), "_Z13get_global_idj");
        assert_eq!(symbol("work_group_barrier_scope"), "_Z18work_group_barrierj12memory_scope");
        assert_eq!(symbol("get_fence_const"), "_Z9get_fencePU9CLgenericKv");
        assert_eq!(symbol("to_local"), "__to_local");
        assert_eq!(answer("_Z12get_local_idj"), Some(Answer::Item));
        assert_eq!(answer("_Z7barrierj"), None);
        assert!(takes_context("_Z7barrierj") && takes_context("__ferrocl_wg_get_i"));
        assert!(!takes_context("_Z3sinf"));
        assert_eq!(by_dimension().count(), 8);
        // C names are unique: each is one macro of the header.
        let mut names: Vec<&str> = TABLE.iter().map(|b| b.c).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
    }

    #[test]
    fn declarations_fill_in_what_the_rewrite_called() {
        let m = "define void @f(ptr %c) {\n  call void @_Z7barrierj(i32 0, ptr %c)\n  ret void\n}\n";
        assert_eq!(missing_declarations(m), "declare void @_Z7barrierj(i32, ptr)\n");
        let declared = format!("{m}declare void @_Z7barrierj(i32 noundef, ptr)\n");
        assert_eq!(missing_declarations(&declared), "");
    }
}
