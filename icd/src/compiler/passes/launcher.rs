//! The entry points the runtime calls for each kernel, appended to the rewritten module
//! as IR so they are optimised together with the kernel:
//!
//! - `__ferrocl_body_<k>` unpacks the argument block and calls the kernel;
//! - `__ferrocl_items_<k>` loops over the work-items of a group, calling the body;
//! - `__ferrocl_launch_<k>` runs a whole group: one item loop, or for a kernel made
//!   resumable (`regions`) one item loop per barrier region, following the barrier
//!   numbers the regions return;
//! - `__ferrocl_first_<k>` runs a region for the group's first work-item only, for
//!   regions every work-item would run alike (`uniform`); the launcher then hands the
//!   others its results;
//! - `__ferrocl_item_<k>` runs one work-item, for kernels that run as fibers.
//!
//! The item loop is IR rather than C with a function pointer so that the body call is
//! direct: the inliner then sees the whole loop when it inlines `__ferrocl_items_<k>`,
//! and its `noalias` frame parameter covers every iteration (a C loop calling through a
//! pointer only got per-iteration scopes, and the vectoriser then could not separate
//! frame memory from `__local` arrays). The induction variables are 32-bit, as OpenCL C
//! code stores ids in `int`: a 64-bit one truncated and sign-extended back is not an
//! affine index to the vectoriser.

use std::fmt::Write;

/// Attributes of the entry points, into which the kernel is inlined: code generation
/// follows the containing function's. No reciprocal estimates, even for divisions
/// -cl-fast-relaxed-math marks approximate: x86's vrcp14ps and one Newton step left
/// them 3 ulp off, and the relaxed limit is 2.5.
const ENTRY_ATTRIBUTES: &str = "\"reciprocal-estimates\"=\"none\" \"min-legal-vector-width\"=\"0\"";

/// Attributes of the generated helpers inlined into the entry points. A function
/// without `min-legal-vector-width` lets x86 use 512-bit registers whatever the CPU's
/// tuning prefers, and inlining one drops the attribute from its caller: the SIMD
/// copies' `<8 x i64>` index vectors then became zmm instructions in the item loop,
/// and on Intel's server cores a 512-bit instruction in flight halves the vector
/// ports (a tile loop reading `__local` memory 2.1 ms, with 256-bit code 0.6).
const HELPER_ATTRIBUTES: &str = "\"min-legal-vector-width\"=\"0\"";

use super::ir_text::{matching_paren, parse_param, replace_value, split_top, type_text, Param};
use super::ir_type::TypeTable;
use super::item_caps::{Bound, Cap};
use super::regions::FRAME_ALIGN;
use crate::compiler::kernel_info::{GroupUse, Kernel};

/// The hidden trailing parameter through which functions that call work-item queries
/// receive the work-item context.
pub(crate) const CTX: &str = "%__ferrocl_ctx";

/// Helpers from builtins/clc/workitem.c the entry points call.
pub(crate) const DECLARATIONS: &str = "declare void @__ferrocl_ctx_init(ptr, ptr)
declare i32 @__ferrocl_ctx_bound(ptr, i32)
declare void @__ferrocl_ctx_set(ptr, i64, i64, i64)
declare i32 @__ferrocl_ctx_row(ptr)
declare void @__ferrocl_ctx_row_group(ptr, i32)
declare i32 @__ferrocl_group_sized(ptr, i64, i64, i64)
declare void @__ferrocl_ctx_fix(ptr, i64, i64, i64)
declare void @__ferrocl_ctx_alone(ptr)
declare ptr @__ferrocl_group_frames(ptr)
declare i64 @__ferrocl_group_items(ptr)
declare void @__ferrocl_run_item(ptr, ptr, ptr, ptr)
declare void @__ferrocl_group_settle(ptr)
declare i1 @__ferrocl_group_may_share(ptr)
declare void @__ferrocl_group_share(ptr, ptr, i64, i64)
declare void @__ferrocl_group_catch_up(ptr)
declare void @__ferrocl_copy_share(ptr, i1, i64)
declare i1 @__ferrocl_ctx_in_sub_groups(ptr, i64)
";

/// Intrinsics the entry points of kernels using images call, declared by the caller of
/// `append` unless the kernel's module declares them already.
pub(crate) const INTRINSICS: &[(&str, &str)] = &[
    ("llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1 immarg)"),
    ("llvm.memcpy.p0.p1.i64", "declare void @llvm.memcpy.p0.p1.i64(ptr, ptr addrspace(1), i64, i1 immarg)"),
];

/// How a kernel's entry points call it.
pub(crate) struct Entry {
    /// The number of the metadata node that asks LLVM to unroll and jam the item loop's
    /// x loop (`item_loop_metadata`), for kernels where that pays (`jam_pays`).
    pub(crate) jam: Option<u32>,
    /// The kernel takes the work-item context (it calls work-item queries).
    pub(crate) ctx: bool,
    /// Set for kernels made resumable: their number of barriers.
    pub(crate) barriers: Option<u32>,
    /// For kernels made resumable, per region: whether one work-item can run it for
    /// all, and which frame slots (offset, size) it then shares (`Resumable::invariant`).
    pub(crate) invariant: Vec<Option<Vec<(u64, u64)>>>,
    /// For kernels made resumable, per region: where its item loop may stop in x
    /// (`Resumable::caps`).
    pub(crate) caps: Vec<Option<Cap>>,
    /// For kernels made resumable, per region: whether it computes
    /// (`Resumable::computes`), so that its item loop moves the group's deferred imports
    /// a share at a time.
    pub(crate) computes: Vec<bool>,
    /// For kernels made resumable: the bytes of each half of the group's block of
    /// uniform variables (`Resumable::uniform`).
    pub(crate) uniform: u64,
    /// The kernel calls async-copy builtins: its regions settle the group's waits when
    /// they end, and work-items skipped by a region run once catch up on its copies.
    pub(crate) tracks: bool,
    /// A group size to give a loop of its own, with the size a constant: the kernel's
    /// `reqd_work_group_size`, or the size the driver saw it launched with.
    pub(crate) fixed: Option<[usize; 3]>,
    /// The format of each image argument, for code made for one launch (`Unit`): the
    /// item loop then has them all as constants; `None`: code for any format.
    pub(crate) images: Option<Vec<u32>>,
    /// The kernel has a copy for `simd::WIDTH` work-items at once (`{name}.simd`): the
    /// x loop runs it for whole chunks and the kernel for the rest.
    pub(crate) simd: bool,
    /// The regions (0 for a kernel without barriers) where the SIMD copy runs the row's
    /// stride loop for every work-item of the row (`simd::fold`): their x loop runs the
    /// first chunk alone where the row has one.
    pub(crate) fold: Vec<usize>,
    /// Where not 0, the kernel (one without barriers) also has a copy for that many
    /// chunks a call (`{name}.simd{wide}`, `simd::wide`): the x loop runs it while
    /// they fit.
    pub(crate) wide: u64,
    /// A kernel made resumable whose only barriers are sub-group ones also has a SIMD
    /// copy of itself without them (`{name}.flat`), which a group whose sub-groups are
    /// the copy's chunks runs instead of the regions (`append_flat`).
    pub(crate) flat: bool,
}

pub(crate) fn append(out: &mut String, define: &str, k: &Kernel, e: &Entry, types: &TypeTable) -> Result<(), String> {
    let body_call = append_body(out, define, k, e, types)?;
    append_loops(out, k, e, &body_call);
    match &e.images {
        Some(keys) => append_items_for(out, k, keys)?,
        None => append_items(out, k),
    }
    let shared = e.invariant.iter().any(Option::is_some);
    if shared {
        append_first(out, k, &body_call);
    }
    if e.flat {
        append_flat(out, k);
    }
    append_launch(out, k, e, shared);
    if k.fibers {
        append_item_entry(out, k);
    }
    Ok(())
}

/// The body: unpacks the argument block and calls the kernel. Returns the call of it the
/// loops make (`%r` is the region the work-item stopped at; 0 for kernels that do not
/// resume).
fn append_body(out: &mut String, define: &str, k: &Kernel, e: &Entry, types: &TypeTable) -> Result<String, String> {
    let name = &k.name;
    let open = define.find(&format!("@{name}(")).ok_or("malformed kernel")? + name.len() + 1;
    let close = matching_paren(define, open).ok_or("malformed kernel")?;
    let params: Vec<Param> =
        split_top(&define[open + 1..close]).into_iter().filter(|p| !p.ends_with(CTX)).filter_map(parse_param).collect();

    let resumable = e.barriers.is_some();
    let (ret, extra) = if resumable { ("i32", ", ptr %frames, ptr %uniform, i32 %resume") } else { ("void", "") };
    // `%args` is not `noalias` here: the body is inlined once per work-item, and each
    // inlined `noalias` parameter leaves a scope declaration in the x loop, which keeps
    // LLVM from unrolling and jamming it. The loop function's `noalias` covers it.
    let _ = writeln!(
        out,
        "\ndefine internal {ret} @__ferrocl_body_{name}(ptr nocapture readonly %args, ptr %ctx{extra}) \
         alwaysinline {HELPER_ATTRIBUTES} {{"
    );
    let mut args = Vec::new();
    for (i, (p, a)) in params.iter().zip(&k.args).enumerate() {
        let _ = writeln!(out, "  %p{i} = getelementptr inbounds i8, ptr %args, i64 {}", a.offset);
        let ty = type_text(&define[open + 1..close], i)?;
        if p.byval.is_some() {
            args.push(format!("{ty} {}%p{i}", p.call_attrs));
        } else {
            let align = p.ty.layout(types).map_or(1, |(_, a)| a);
            let _ = writeln!(out, "  %a{i} = load {ty}, ptr %p{i}, align {align}");
            args.push(format!("{ty} {}%a{i}", p.call_attrs));
        }
    }
    if e.ctx {
        args.push("ptr %ctx".into());
    }
    let args = args.join(", ");
    if resumable {
        // Inlined once per region with the region's number constant, so each copy keeps
        // only that region's code.
        let _ = writeln!(
            out,
            "  %r = call spir_func i32 @{name}({args}, ptr %frames, ptr %uniform, i32 %resume) alwaysinline\n  ret i32 %r\n}}"
        );
    } else {
        // Inlined even where the loop has copies per image format (`append_items`): with
        // several callers LLVM's heuristics left the kernel a call, and the copies'
        // constant format could not reach its reads.
        let inline = if image_key_at(k).is_some() { " alwaysinline" } else { "" };
        let _ = writeln!(out, "  call spir_func void @{name}({args}){inline}\n  ret void\n}}");
    }
    if e.simd {
        // The same unpacking for the SIMD copy (of the kernel, or of its regions).
        let unpack = out[out.rfind("\ndefine internal ").unwrap_or(out.len())..].to_string();
        let copy = unpack
            .replacen(&format!("@__ferrocl_body_{name}("), &format!("@__ferrocl_bodyv_{name}("), 1)
            .replacen(&format!("@{name}({args}"), &format!("@{name}.simd({args}"), 1);
        out.push_str(&copy);
        if e.wide > 0 && !resumable {
            let wide = unpack
                .replacen(&format!("@__ferrocl_body_{name}("), &format!("@__ferrocl_bodyw_{name}("), 1)
                .replacen(&format!("@{name}({args}"), &format!("@{name}.simd{}({args}", e.wide), 1);
            out.push_str(&wide);
        }
    }

    if e.flat {
        // The same unpacking for the flat copy, which runs to the kernel's end.
        let body = out.rfind(&format!(" @__ferrocl_body_{name}(")).unwrap_or(out.len());
        let at = out[..body].rfind('\n').unwrap_or(body);
        let unpack = &out[at..];
        let unpack = &unpack[..unpack.find("\n}").unwrap_or(unpack.len())];
        let loads: String = unpack
            .lines()
            .filter(|l| l.starts_with("  %p") || l.starts_with("  %a"))
            .map(|l| format!("{l}\n"))
            .collect();
        let _ = writeln!(
            out,
            "\ndefine internal void @__ferrocl_bodyf_{name}(ptr nocapture readonly %args, ptr %ctx) alwaysinline \
             {HELPER_ATTRIBUTES} {{\n{loads}  call spir_func void @{name}.flat({args})\n  ret void\n}}"
        );
    }

    Ok(if resumable {
        format!("%r = call i32 @__ferrocl_body_{name}(ptr %args, ptr %c, ptr %frames, ptr %uniform, i32 %resume)")
    } else {
        format!("call void @__ferrocl_body_{name}(ptr %args, ptr %c)\n  %r = add i32 0, 0")
    })
}

/// The loop over the group's work-items, x fastest, and its copy for one group size.
fn append_loops(out: &mut String, k: &Kernel, e: &Entry, body_call: &str) {
    let name = &k.name;
    let resumable = e.barriers.is_some();
    let jam = e.jam.map(|id| format!(", !llvm.loop !{id}")).unwrap_or_default();
    // A kernel that reads group ids but shares nothing between its work-items
    // (`GroupUse::Ids`) loops over the groups of a row the call runs (`Group::row`)
    // around the item loop; the context is made each group in turn.
    let rows = k.group_use == GroupUse::Ids && !resumable && !k.fibers;
    let (start, first, after, end) = if rows {
        (
            "  %ng = call i32 @__ferrocl_ctx_row(ptr %c)
  br label %g
g:
  %gi = phi i32 [ 0, %entry ], [ %gn, %gnext ]
  call void @__ferrocl_ctx_row_group(ptr %c, i32 %gi)",
            "g",
            "gnext",
            "gnext:
  %gn = add nuw i32 %gi, 1
  %gd = icmp eq i32 %gn, %ng
  br i1 %gd, label %none, label %g",
        )
    } else {
        ("", "entry", "done", "done:\n  ret i32 %r")
    };
    let empty = if rows { "gnext" } else { "none" };
    // A kernel that declares `reqd_work_group_size` (or that the driver saw launched
    // with one size, `Entry::fixed`) gets a second copy of the loop for groups of exactly
    // that size (all but partial groups at the range's edges), with the size a constant:
    // item loops of known length, and `%` or `/` by the local size shifts and masks. Not
    // for kernels looping over rows, whose groups change size within a call, and not for
    // fibers and images, whose loops are copied already.
    let fixed = e.fixed.filter(|_| !rows && !k.fibers && image_key_at(k).is_none());
    let variants = match fixed {
        Some([x, y, z]) => vec![
            (format!("__ferrocl_loopa_{name}"), String::new(), "noinline optsize minsize"),
            (
                format!("__ferrocl_loopf_{name}"),
                format!("\n  call void @__ferrocl_ctx_fix(ptr %c, i64 {x}, i64 {y}, i64 {z})"),
                "alwaysinline",
            ),
        ],
        None => vec![(format!("__ferrocl_loop_{name}"), String::new(), "alwaysinline")],
    };
    // With a SIMD copy, a resumable kernel's region (the same in every work-item) is
    // kept in `%rslot` by whichever call ran last.
    let (vector_call, rest_call) = match resumable {
        true => (
            format!(
                "%rv = call i32 @__ferrocl_bodyv_{name}(ptr %args, ptr %c, ptr %frames, ptr %uniform, i32 %resume)
  store i32 %rv, ptr %rslot"
            ),
            format!("{}\n  store i32 %rs, ptr %rslot", body_call.replacen("%r = ", "%rs = ", 1)),
        ),
        false => (
            format!("call void @__ferrocl_bodyv_{name}(ptr %args, ptr %c)"),
            body_call.replace("%r = add i32 0, 0", "%rs = add i32 0, 0"),
        ),
    };
    let (rslot, end) = match (e.simd && resumable, end) {
        (true, _) => (
            "\n  %rslot = alloca i32, align 4\n  store i32 0, ptr %rslot",
            "done:\n  %r = load i32, ptr %rslot\n  ret i32 %r",
        ),
        (false, end) => ("", end),
    };
    // Regions that compute move a share of the group's deferred imports after each
    // chunk of work-items (`Resumable::computes`, builtins/clc/workitem.c); folded
    // regions move them in their own steps.
    let folded = if e.simd { e.fold.as_slice() } else { &[] };
    let steps: Vec<usize> = match resumable && e.tracks {
        true => (0..e.computes.len()).filter(|&n| e.computes[n] && !folded.contains(&n)).collect(),
        false => Vec::new(),
    };
    let share = |items: u64| match steps.is_empty() {
        true => String::new(),
        false => format!("\n  call void @__ferrocl_copy_share(ptr %c, i1 %steps, i64 {items})"),
    };
    let share_one = share(1);
    let x_loop = match e.simd {
        false => format!(
            "x:
  %xi = phi i32 [ 0, %y ], [ %xn, %x ]
  %x64 = zext nneg i32 %xi to i64
  call void @__ferrocl_ctx_set(ptr %c, i64 %x64, i64 %y64, i64 %z64)
  {body_call}{share_one}
  %xn = add nuw nsw i32 %xi, 1
  %xd = icmp eq i32 %xn, %nx
  br i1 %xd, label %ynext, label %x{jam}"
        ),
        // `Entry::wide` chunks a call while they fit (a kernel with a copy for them),
        // whole chunks of `simd::WIDTH` work-items through the SIMD copy, then the rest
        // one by one.
        true => {
            let (from_wide, wide) = match e.wide {
                0 => ("", String::new()),
                _ if resumable => ("", String::new()),
                n => (
                    ", [ %xm, %xmv ]",
                    format!(
                        "  %xm = add nuw i32 %xi, {m}
  %xmfits = icmp ule i32 %xm, %nx
  br i1 %xmfits, label %xmv, label %xone
xmv:
  %xm64 = zext nneg i32 %xi to i64
  call void @__ferrocl_ctx_set(ptr %c, i64 %xm64, i64 %y64, i64 %z64)
  call void @__ferrocl_bodyw_{name}(ptr %args, ptr %c)
  br label %x
xone:
",
                        m = super::simd::WIDTH * n
                    ),
                ),
            };
            format!(
                "x:
  %xi = phi i32 [ 0, %y ], [ %xw, %xv ]{from_wide}{region}
{wide}  %xw = add nuw i32 %xi, {w}
  %xfits = icmp ule i32 %xw, %nx
  br i1 %xfits, label %xv, label %xrest
xv:
  %xv64 = zext nneg i32 %xi to i64
  call void @__ferrocl_ctx_set(ptr %c, i64 %xv64, i64 %y64, i64 %z64)
  {vector_call}{share_chunk}
  br label %x
xrest:
  %xnone = icmp eq i32 %xi, %nx
  br i1 %xnone, label %ynext, label %xs
xs:
  %xsi = phi i32 [ %xi, %xrest ], [ %xn, %xs ]
  %x64 = zext nneg i32 %xsi to i64
  call void @__ferrocl_ctx_set(ptr %c, i64 %x64, i64 %y64, i64 %z64)
  {rest_call}{share_one}
  %xn = add nuw nsw i32 %xsi, 1
  %xd = icmp eq i32 %xn, %nx
  br i1 %xd, label %ynext, label %xs",
                w = super::simd::WIDTH,
                share_chunk = share(super::simd::WIDTH),
                // A kernel that does not resume ends at region 0.
                region = if resumable { "" } else { "\n  %r = add i32 0, 0" },
            )
        }
    };
    // Regions most work-items skip stop their item loop early (`item_caps`); not where
    // the kernel makes async copies, whose work-items each count the copies they pass.
    let folds = folded;
    let caps: Vec<Option<Cap>> =
        e.caps.iter().enumerate().map(|(n, c)| c.clone().filter(|_| !folds.contains(&n))).collect();
    let capped = resumable && !e.tracks && caps.iter().any(Option::is_some);
    let mut nx = "%nx.all = call i32 @__ferrocl_ctx_bound(ptr %c, i32 0)".to_string();
    let mut last = "%nx.all";
    if capped {
        append_caps(out, name, &caps);
        let _ = write!(nx, "\n  %nx.cap = call i32 @__ferrocl_cap_{name}(ptr %uniform, i32 %resume)");
        let mut cap = "%nx.cap";
        if e.simd {
            // Whole chunks up to the cap: the work-items it keeps run in lanes together
            // as those of other chunks do (and as a SIMD device runs a sub-group), not
            // one by one: dpnp's histogram reads counts its leader's neighbours stored
            // without a barrier between.
            let _ = write!(
                nx,
                "\n  %nx.capl = icmp ult i32 %nx.cap, %nx.all
  %nx.capn = select i1 %nx.capl, i32 %nx.cap, i32 %nx.all
  %nx.capw = add nuw i32 %nx.capn, {m}
  %nx.capr = and i32 %nx.capw, -{w}",
                w = super::simd::WIDTH,
                m = super::simd::WIDTH - 1
            );
            cap = "%nx.capr";
        }
        let _ = write!(
            nx,
            "\n  %nx.capped = icmp ult i32 {cap}, %nx.all
  %nx.c = select i1 %nx.capped, i32 {cap}, i32 %nx.all"
        );
        last = "%nx.c";
    }
    // Folded regions (region 0 of a kernel that does not resume) run the first chunk
    // alone where the row has one. A folded region makes no async copy (`simd::fold`),
    // so the work-items it leaves out pass none.
    match folds {
        [] => {
            let _ = write!(nx, "\n  %nx = add i32 {last}, 0");
        }
        _ => {
            let mut any = "false".to_string();
            for r in folds {
                let _ = write!(nx, "\n  %nx.is{r} = icmp eq i32 %resume, {r}\n  %nx.or{r} = or i1 {any}, %nx.is{r}");
                any = format!("%nx.or{r}");
            }
            let _ = write!(
                nx,
                "\n  %nx.one = icmp ult i32 {last}, {w}
  %nx.w = select i1 %nx.one, i32 {last}, i32 {w}
  %nx = select i1 {any}, i32 %nx.w, i32 {last}",
                w = super::simd::WIDTH
            );
        }
    }
    if !steps.is_empty() {
        let mut any = "false".to_string();
        for r in &steps {
            let _ =
                write!(nx, "\n  %steps.is{r} = icmp eq i32 %resume, {r}\n  %steps.or{r} = or i1 {any}, %steps.is{r}");
            any = format!("%steps.or{r}");
        }
        let _ = write!(nx, "\n  %steps = or i1 {any}, false");
    }
    let nest = loop_nest(first, empty, &x_loop, after);
    for (function, fix, inline) in &variants {
        let _ = writeln!(
            out,
            "define internal i32 @{function}(ptr %group, ptr noalias nocapture readonly %args, \
         ptr noalias %frames, ptr noalias %uniform, i32 %resume) {inline} {HELPER_ATTRIBUTES} {{
entry:
  %c = alloca [32 x i64], align 16{rslot}
  call void @__ferrocl_ctx_init(ptr %c, ptr %group){fix}{start}
  {nx}
{nest}
{end}
none:
  ret i32 0
}}"
        );
    }
    if let Some([x, y, z]) = fixed {
        let _ = writeln!(
            out,
            "define internal i32 @__ferrocl_loop_{name}(ptr %group, ptr noalias nocapture readonly %args, \
             ptr noalias %frames, ptr noalias %uniform, i32 %resume) alwaysinline {HELPER_ATTRIBUTES} {{
  %sized = call i32 @__ferrocl_group_sized(ptr %group, i64 {x}, i64 {y}, i64 {z})
  %fixed = icmp ne i32 %sized, 0
  br i1 %fixed, label %f, label %a
f:
  %rf = call i32 @__ferrocl_loopf_{name}(ptr %group, ptr %args, ptr %frames, ptr %uniform, i32 %resume)
  ret i32 %rf
a:
  %ra = call i32 @__ferrocl_loopa_{name}(ptr %group, ptr %args, ptr %frames, ptr %uniform, i32 %resume)
  ret i32 %ra
}}"
        );
    }
}

/// `__ferrocl_cap_{name}(uniform, region)`: the number of work-items in x the region's
/// item loop runs, at least 1 (work-item 0 always runs; see `item_caps`), or all of
/// them (`u32::MAX`) for regions without a cap.
fn append_caps(out: &mut String, name: &str, caps: &[Option<Cap>]) {
    let _ = writeln!(
        out,
        "define internal i32 @__ferrocl_cap_{name}(ptr %uniform, i32 %resume) alwaysinline {HELPER_ATTRIBUTES} {{
entry:"
    );
    let cases: String =
        caps.iter().enumerate().filter(|(_, c)| c.is_some()).map(|(n, _)| format!(" i32 {n}, label %c{n}")).collect();
    let _ = writeln!(
        out,
        "  switch i32 %resume, label %all [{cases} ]
all:
  ret i32 -1"
    );
    // Work-items 0..=MOST at most: a bound beyond any group size.
    const MOST: i64 = i32::MAX as i64;
    for (n, cap) in caps.iter().enumerate() {
        let Some(cap) = cap else { continue };
        let _ = writeln!(out, "c{n}:");
        let extra = i64::from(cap.inclusive);
        match cap.bound {
            Bound::Constant(v) => {
                let v = if cap.signed { v.max(0) } else { v };
                // Unsigned: a negative constant is a large bound.
                let items = if v < 0 { MOST } else { v.saturating_add(extra).clamp(1, MOST) };
                let _ = writeln!(out, "  ret i32 {items}");
            }
            Bound::Uniform { offset, bits } => {
                let ty = format!("i{bits}");
                let (widen, below) = match cap.signed {
                    true => ("sext", "slt"),
                    false => ("zext", "ult"),
                };
                let _ = writeln!(
                    out,
                    "  %p{n} = getelementptr inbounds i8, ptr %uniform, i64 {offset}
  %v{n} = load {ty}, ptr %p{n}, align 1
  %w{n} = {widen} {ty} %v{n} to i128
  %e{n} = add i128 %w{n}, {extra}
  %lo{n} = icmp {below} i128 %e{n}, 1
  %hi{n} = icmp sgt i128 %e{n}, {MOST}
  %a{n} = select i1 %lo{n}, i128 1, i128 %e{n}
  %b{n} = select i1 %hi{n}, i128 {MOST}, i128 %a{n}
  %t{n} = trunc i128 %b{n} to i32
  ret i32 %t{n}"
                );
            }
        }
    }
    let _ = writeln!(out, "}}");
}

/// The body run for the first work-item alone, for regions whose effects are the same
/// in every work-item (`Entry::invariant`).
fn append_first(out: &mut String, k: &Kernel, body_call: &str) {
    let name = &k.name;
    let _ = writeln!(
        out,
        "define internal i32 @__ferrocl_first_{name}(ptr %group, ptr noalias nocapture readonly %args, \
         ptr noalias %frames, ptr noalias %uniform, i32 %resume) alwaysinline {HELPER_ATTRIBUTES} {{
  %c = alloca [32 x i64], align 16
  call void @__ferrocl_ctx_init(ptr %c, ptr %group)
  call void @__ferrocl_ctx_set(ptr %c, i64 0, i64 0, i64 0)
  call void @__ferrocl_ctx_alone(ptr %c)
  {body_call}
  ret i32 %r
}}"
    );
}

/// The launcher the driver calls for a group: the item loop, or for kernels run as
/// regions one item loop per region, dispatched on the region each pass ended at.
fn append_launch(out: &mut String, k: &Kernel, e: &Entry, shared: bool) {
    let name = &k.name;
    let _ = writeln!(
        out,
        "define void @__ferrocl_launch_{name}(ptr %group, ptr noalias nocapture readonly %args) {ENTRY_ATTRIBUTES} {{"
    );
    match e.barriers {
        Some(barriers) => {
            let cases: String = (1..=barriers).map(|n| format!(" i32 {n}, label %r{n}")).collect();
            if e.flat {
                let _ = writeln!(
                    out,
                    "  %flat = call i1 @__ferrocl_flat_{name}(ptr %group, ptr %args)\n  \
                     br i1 %flat, label %done, label %regions\nregions:"
                );
            }
            let _ = writeln!(out, "  %frames = call ptr @__ferrocl_group_frames(ptr %group)");
            // The group's uniform variables: a block on this stack, whose halves the
            // regions read and write. What a region wrote becomes what the next reads.
            let half = e.uniform;
            let _ = writeln!(out, "  %uniform = alloca [{} x i8], align {FRAME_ALIGN}", (2 * half).max(1));
            let pass = |n: u32| {
                if half == 0 {
                    return String::new();
                }
                // The second half is aligned as far as its offset is.
                let written = FRAME_ALIGN.min(1 << half.trailing_zeros());
                format!(
                    "\n  %written{n} = getelementptr inbounds i8, ptr %uniform, i64 {half}\n  \
                     call void @llvm.memcpy.p0.p0.i64(ptr align {FRAME_ALIGN} %uniform, ptr align {written} \
                     %written{n}, i64 {half}, i1 false)"
                )
            };
            if shared {
                // Off in validation mode, which must see every work-item's copies.
                let _ = writeln!(out, "  %share = call i1 @__ferrocl_group_may_share(ptr %group)");
            }
            let _ = writeln!(out, "  br label %r0");
            // Waits for async copies take effect at the end of the region.
            let settle = if e.tracks { "\n  call void @__ferrocl_group_settle(ptr %group)" } else { "" };
            for n in 0..=barriers {
                let pass = pass(n);
                let all = format!(
                    "call i32 @__ferrocl_items_{name}(ptr %group, ptr %args, ptr %frames, ptr %uniform, i32 {n})"
                );
                match e.invariant.get(n as usize).and_then(Option::as_ref) {
                    Some(slots) => {
                        let mut share: String = slots
                            .iter()
                            .map(|(offset, size)| {
                                format!(
                                    "\n  call void @__ferrocl_group_share(ptr %group, ptr %frames, i64 {offset}, \
                                     i64 {size})"
                                )
                            })
                            .collect();
                        if e.tracks {
                            share.push_str("\n  call void @__ferrocl_group_catch_up(ptr %group)");
                        }
                        let _ = writeln!(
                            out,
                            "r{n}:\n  br i1 %share, label %r{n}.one, label %r{n}.all
r{n}.one:
  %next{n}.one = call i32 @__ferrocl_first_{name}(ptr %group, ptr %args, ptr %frames, ptr %uniform, i32 {n}){share}
  br label %r{n}.end
r{n}.all:
  %next{n}.all = {all}
  br label %r{n}.end
r{n}.end:
  %next{n} = phi i32 [ %next{n}.one, %r{n}.one ], [ %next{n}.all, %r{n}.all ]{settle}{pass}
  switch i32 %next{n}, label %done [{cases} ]"
                        );
                    }
                    None => {
                        let _ = writeln!(
                            out,
                            "r{n}:\n  %next{n} = {all}{settle}{pass}\n  switch i32 %next{n}, label %done [{cases} ]"
                        );
                    }
                }
            }
            let _ = writeln!(out, "done:\n  ret void\n}}");
        }
        None => {
            let _ = writeln!(
                out,
                "  %r = call i32 @__ferrocl_items_{name}(ptr %group, ptr %args, ptr null, ptr null, i32 0)\n  ret void\n}}"
            );
        }
    }
}

/// The flat copy's loop over the group's chunks, where the group's sub-groups are its
/// chunks (`Entry::flat`); false, having run nothing, where they are not. An entry point
/// (`FlatFn`) for kernels run as fibers, which the driver tries first.
fn append_flat(out: &mut String, k: &Kernel) {
    let name = &k.name;
    let x_loop = format!(
        "x:
  %xi = phi i32 [ 0, %y ], [ %xn, %x ]
  %x64 = zext nneg i32 %xi to i64
  call void @__ferrocl_ctx_set(ptr %c, i64 %x64, i64 %y64, i64 %z64)
  call void @__ferrocl_bodyf_{name}(ptr %args, ptr %c)
  %xn = add nuw i32 %xi, {w}
  %xd = icmp uge i32 %xn, %nx
  br i1 %xd, label %ynext, label %x",
        w = super::simd::WIDTH
    );
    let nest = loop_nest("start", "yes", &x_loop, "yes");
    let _ = writeln!(
        out,
        "define i1 @__ferrocl_flat_{name}(ptr %group, ptr noalias nocapture readonly %args) \
         {ENTRY_ATTRIBUTES} {{
entry:
  %c = alloca [32 x i64], align 16
  call void @__ferrocl_ctx_init(ptr %c, ptr %group)
  %fits = call i1 @__ferrocl_ctx_in_sub_groups(ptr %c, i64 {w})
  br i1 %fits, label %start, label %no
no:
  ret i1 false
start:
  %nx = call i32 @__ferrocl_ctx_bound(ptr %c, i32 0)
{nest}
yes:
  ret i1 true
}}",
        w = super::simd::WIDTH
    );
}

/// The loops over a group's rows (z, y) around `x_loop`, which ends each row at
/// `ynext`: from block `first`, with `%c` the context and `%nx` the row's length; an
/// empty group goes to `empty`, the last row to `after`.
fn loop_nest(first: &str, empty: &str, x_loop: &str, after: &str) -> String {
    format!(
        "  %ny = call i32 @__ferrocl_ctx_bound(ptr %c, i32 1)
  %nz = call i32 @__ferrocl_ctx_bound(ptr %c, i32 2)
  %ex = icmp eq i32 %nx, 0
  %ey = icmp eq i32 %ny, 0
  %ez = icmp eq i32 %nz, 0
  %exy = or i1 %ex, %ey
  %empty = or i1 %exy, %ez
  br i1 %empty, label %{empty}, label %z
z:
  %zi = phi i32 [ 0, %{first} ], [ %zn, %znext ]
  %z64 = zext nneg i32 %zi to i64
  br label %y
y:
  %yi = phi i32 [ 0, %z ], [ %yn, %ynext ]
  %y64 = zext nneg i32 %yi to i64
  br label %x
{x_loop}
ynext:
  %yn = add nuw nsw i32 %yi, 1
  %yd = icmp eq i32 %yn, %ny
  br i1 %yd, label %znext, label %y
znext:
  %zn = add nuw nsw i32 %zi, 1
  %zd = icmp eq i32 %zn, %nz
  br i1 %zd, label %{after}, label %z"
    )
}

/// The per-work-item entry point, for kernels run as fibers only.
fn append_item_entry(out: &mut String, k: &Kernel) {
    let name = &k.name;
    let _ = writeln!(
        out,
        "define void @__ferrocl_item_{name}(ptr %group, ptr noalias nocapture readonly %args, ptr %lid) \
         {ENTRY_ATTRIBUTES} {{\n  \
             call void @__ferrocl_run_item(ptr %group, ptr %args, ptr %lid, ptr @__ferrocl_body_{name})\n  \
             ret void\n}}"
    );
}

/// Work-items the x loop's unroll-and-jam interleaves.
pub(crate) const JAM: u32 = 4;

/// The most bytes of private variables a loop `jam_pays` lets LLVM jam may carry from
/// one iteration to the next, four work-items' copies of which stay in registers: the
/// bench's `mad(float16)` loop carries 68 (`a` and `i`), clpeak's `float16` loop 132 (`x`,
/// `y` and `i`), whose four copies fill the 16 vector registers (its `mad`s update them
/// in place). clpeak-like kernels on the 2-core machine, GFLOP/s, before / jammed: float
/// 3.1 / 12.0, float4 13.2 / 44.9-47.7, float16 55.5 / 173 (PoCL 2.0, 8.4, 33.5).
const JAM_STATE: u64 = 136;

/// The longest loop, in lines of clang's unoptimised code, `jam_pays` lets LLVM jam, four
/// copies of which are code to compile: clpeak's loops of 16 `mad`s are 241.
const JAM_LINES: usize = 1024;

/// The metadata nodes `!id` and `!id + 1` the x loops of the item loops share: unroll
/// and jam by `JAM`, which LLVM does where the body has one inner loop and it proves the
/// iterations independent. A kernel whose work-items each run a dependent chain in a
/// loop (`a = mad(a, b, c)` 256 times) is latency-bound as one work-item after another:
/// the item loop is the outer loop of the nest, which LLVM does not vectorise, and
/// nothing else lets the chains of several work-items overlap. Jammed, four chains are
/// in flight (`cts-runner bench` on the 2-core machine: mad(float16) 22-25 -> 60-83 G
/// ops/s, mad24(int16) 21-24 -> 51-65; 8 work-items ran out of registers, 48-50). The
/// back end runs with `-enable-unroll-and-jam`, which adds the pass; it only jams loops
/// that ask (`llvm.loop.unroll_and_jam.*`), so the program's own loops are left alone.
pub(crate) fn item_loop_metadata(id: u32) -> String {
    format!(
        "!{id} = distinct !{{!{id}, !{}}}\n!{} = !{{!\"llvm.loop.unroll_and_jam.count\", i32 {JAM}}}\n",
        id + 1,
        id + 1
    )
}

/// Whether unrolling and jamming the item loop can pay for a kernel, from its
/// unoptimised body: it has loops, each counted to a constant, carrying few private
/// bytes (`JAM_STATE`), of bounded length (`JAM_LINES`), and touching no memory but the
/// work-item's own scalars and vectors (no `__global`/`__local`/`__constant`/generic
/// pointer, no array on the stack, no call to a function of the program). LLVM jams
/// only where it proves the work-items' iterations independent, which it cannot where
/// buffers may alias (a dot product's loads and its store of the result); where it does
/// not jam, the request still keeps it from unrolling the inner loop (a 256-step dot
/// product: 150 -> 213 ms); and it jams a requested count whatever the loop's size,
/// four copies of whose state must fit in registers. What remains is arithmetic in a
/// loop, a chain per work-item: the peak throughput kernels of `cts-runner bench` and of
/// tools such as clpeak.
///
/// Never where the kernel is inlined into the loop by force (resumable kernels, image
/// loops): LLVM does not fully unroll a loop whose parent asks for unroll-and-jam, and
/// there the kernel's own small loops meet the x loop before they are unrolled (`sgemm`'s
/// 16-step k loop: the x loop then stayed scalar, 11 -> 3 GFLOP/s). A kernel called
/// normally is simplified, its small loops unrolled, before it is inlined.
pub(crate) fn jam_pays(k: &Kernel, body: &[String], defined: &dyn Fn(&str) -> bool, types: &TypeTable) -> bool {
    use super::ir_text::{callee_names, label_of, labels_in};
    if k.regions || image_key_at(k).is_some() {
        return false;
    }
    let at: std::collections::HashMap<&str, usize> =
        body.iter().enumerate().filter_map(|(i, l)| label_of(l).map(|name| (name, i))).collect();
    let mut loops = 0;
    for (i, line) in body.iter().enumerate() {
        if line.contains(" alloca [") || line.contains(" alloca %") {
            return false;
        }
        if !line.trim_start().starts_with("br ") {
            continue;
        }
        for head in labels_in(line).into_iter().filter_map(|l| at.get(l).copied().filter(|&h| h <= i)) {
            loops += 1;
            let touches =
                |l: &String| l.contains("addrspace(") || callee_names(l).iter().any(|(name, _)| defined(name));
            let lines = &body[head..=i];
            if lines.len() > JAM_LINES || lines.iter().any(touches) || !counted(lines) {
                return false;
            }
            if carried_bytes(lines, types).map_or(true, |bytes| bytes > JAM_STATE) {
                return false;
            }
        }
    }
    loops > 0
}

/// Bytes of the variables a loop of clang's unoptimised code carries from one iteration
/// to the next, once LLVM keeps variables in registers: those it reads before it writes
/// them (`load <type>, ptr %v` first, `store ..., ptr %v` later). Copies it writes and
/// then reads, such as a call's by-value arguments, live within an iteration.
fn carried_bytes(lines: &[String], types: &TypeTable) -> Option<u64> {
    // Per variable: its size where a load came first, None where a store did.
    let mut first: std::collections::HashMap<&str, Option<u64>> = std::collections::HashMap::new();
    let mut stored = std::collections::HashSet::new();
    for l in lines {
        let l = l.trim_start();
        let (load, rest) = match (l.split_once(" = load "), l.strip_prefix("store ")) {
            (Some((_, rest)), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            _ => continue,
        };
        let (ty, after) = super::ir_type::parse(rest)?;
        let variable = after.rsplit_once("ptr ")?.1.split(',').next()?.trim();
        if load {
            first.entry(variable).or_insert(Some(ty.layout(types)?.0));
        } else {
            first.entry(variable).or_insert(None);
            stored.insert(variable);
        }
    }
    Some(first.iter().filter(|(v, _)| stored.contains(*v)).filter_map(|(_, size)| *size).sum())
}

/// Whether a loop of clang's unoptimised code (its lines from the header to the back
/// edge) ends on a comparison with a constant, as `for (int i = 0; i < 256; i++)` does.
/// A loop whose count is known only at run time gets a test before it, whether it runs
/// at all, and LLVM does not jam a loop nest with that test between the loops.
fn counted(lines: &[String]) -> bool {
    let Some(end) = lines.iter().position(|l| l.trim_start().starts_with("br ")) else { return false };
    lines[..end].iter().rev().find(|l| l.contains(" = icmp ")).and_then(|l| l.rsplit(", ").next()).is_some_and(|last| {
        let last = last.trim();
        last.parse::<i64>().is_ok() || last.parse::<u64>().is_ok()
    })
}

/// Offset in the argument block of the image a kernel's loop is specialised for: its
/// first image read (or written, if it reads none).
fn image_key_at(k: &Kernel) -> Option<usize> {
    let images: Vec<&crate::compiler::kernel_info::Arg> =
        k.args.iter().filter(|a| a.kind == crate::compiler::kernel_info::ArgKind::Image).collect();
    images.iter().find(|a| a.access != "write_only").or(images.first()).map(|a| a.offset)
}

/// `__ferrocl_items_<k>`: the work-item loop. For a kernel using images, one copy of it
/// per common format of its first image read (kernel-abi `SPECIALISED_IMAGE_FORMATS`)
/// and one for the rest, chosen by the format's key. A copy runs the kernel on its own
/// copy of the argument block whose image points to a copy of the descriptor with the
/// key stored as a constant: LLVM turns both copies into registers, so the image
/// builtins' switch on the key folds away and the descriptor's fields stay in
/// registers (a 5x5 blur over RGBA8 read through a sampler: 87 -> 36 ms, the same blur
/// over a buffer 31 ms).
fn append_items(out: &mut String, k: &Kernel) {
    let name = &k.name;
    let head = format!(
        "define internal i32 @__ferrocl_items_{name}(ptr %group, ptr noalias nocapture readonly %args, \
         ptr noalias %frames, ptr noalias %uniform, i32 %resume) alwaysinline {HELPER_ATTRIBUTES} {{"
    );
    let call = |label: &str, args: &str| {
        format!(
            "  %r.{label} = call i32 @__ferrocl_loop_{name}(ptr %group, ptr {args}, ptr %frames, ptr %uniform, \
             i32 %resume)\n  \
             ret i32 %r.{label}\n"
        )
    };
    let Some(offset) = image_key_at(k) else {
        let _ = writeln!(out, "{head}\n{}}}", call("all", "%args"));
        return;
    };
    let (size, image) = (k.args_size.max(8), ferrocl_kernel_abi::IMAGE_SIZE);
    let key_offset = ferrocl_kernel_abi::IMAGE_KEY_OFFSET;
    let formats = ferrocl_kernel_abi::SPECIALISED_IMAGE_FORMATS;
    let keys: Vec<u32> = formats.iter().map(|&(order, ty)| ferrocl_kernel_abi::image_key(order, ty)).collect();
    let cases: String = keys.iter().enumerate().map(|(i, key)| format!(" i32 {key}, label %f{i}")).collect();
    // Static allocas, in the entry block, so that they become registers once inlined.
    let allocas: String = (0..keys.len())
        .map(|i| {
            format!("  %args.{i} = alloca [{size} x i8], align 16\n  %desc.{i} = alloca [{image} x i8], align 8\n")
        })
        .collect();
    let copies: String = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            format!(
                "f{i}:
  call void @llvm.memcpy.p0.p0.i64(ptr %args.{i}, ptr %args, i64 {size}, i1 false)
  call void @llvm.memcpy.p0.p1.i64(ptr %desc.{i}, ptr addrspace(1) %image, i64 {image}, i1 false)
  %key.at.{i} = getelementptr inbounds i8, ptr %desc.{i}, i64 {key_offset}
  store i32 {key}, ptr %key.at.{i}, align 4
  %desc.g.{i} = addrspacecast ptr %desc.{i} to ptr addrspace(1)
  %slot.{i} = getelementptr inbounds i8, ptr %args.{i}, i64 {offset}
  store ptr addrspace(1) %desc.g.{i}, ptr %slot.{i}, align 8
{}",
                call(&format!("f{i}"), &format!("%args.{i}"))
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "{head}
{allocas}  %image.at = getelementptr inbounds i8, ptr %args, i64 {offset}
  %image = load ptr addrspace(1), ptr %image.at, align 8
  %key.at = getelementptr inbounds i8, ptr addrspace(1) %image, i64 {key_offset}
  %key = load i32, ptr addrspace(1) %key.at, align 4
  switch i32 %key, label %other [{cases} ]
{copies}other:
{}}}",
        call("other", "%args"),
    );
}

/// Gives a kernel run without barriers its images with their formats as constants, for
/// code made for one launch (`Unit::images`): at the kernel's entry each image's
/// descriptor is copied with its format key stored as a constant, and the kernel uses
/// the copies. In the kernel rather than its item loop (`append_items_for`), so that the
/// keys are constants when the kernel itself is simplified, right after the image
/// builtins are inlined into it: the conformance test's kernel of 127 image reads built
/// in 2.3 s instead of 5.4. Returns whether it did: a parameter it cannot name leaves
/// the kernel to `append_items_for`.
pub(crate) fn key_images_in_kernel(define: &str, body: &mut [String], k: &Kernel, keys: &[u32]) -> bool {
    let name = &k.name;
    let Some(open) = define.find(&format!("@{name}(")).map(|i| i + name.len() + 1) else { return false };
    let Some(close) = matching_paren(define, open) else { return false };
    let params: Vec<&str> = split_top(&define[open + 1..close]);
    let images: Vec<&str> = k
        .args
        .iter()
        .enumerate()
        .filter(|(_, a)| a.kind == crate::compiler::kernel_info::ArgKind::Image)
        .filter_map(|(i, _)| params.get(i).and_then(|p| p.rsplit(' ').next()).filter(|n| n.starts_with('%')))
        .collect();
    if images.len() != keys.len() || !define.trim_end().ends_with('{') || body.is_empty() {
        return false;
    }
    let (image, key_offset) = (ferrocl_kernel_abi::IMAGE_SIZE, ferrocl_kernel_abi::IMAGE_KEY_OFFSET);
    let mut entry = String::new();
    for i in 0..images.len() {
        let _ = writeln!(entry, "  %__ferrocl_desc.{i} = alloca [{image} x i8], align 8");
    }
    for (i, (param, key)) in images.iter().zip(keys).enumerate() {
        let _ = write!(
            entry,
            "  call void @llvm.memcpy.p0.p1.i64(ptr %__ferrocl_desc.{i}, ptr addrspace(1) {param}, i64 {image}, i1 false)
  %__ferrocl_key.{i} = getelementptr inbounds i8, ptr %__ferrocl_desc.{i}, i64 {key_offset}
  store i32 {key}, ptr %__ferrocl_key.{i}, align 4
  %__ferrocl_image.{i} = addrspacecast ptr %__ferrocl_desc.{i} to ptr addrspace(1)
"
        );
    }
    // Every use of an image parameter becomes a use of its copy.
    for line in body.iter_mut() {
        for (i, param) in images.iter().enumerate() {
            if line.contains(param) {
                *line = replace_value(line, param, &format!("%__ferrocl_image.{i}"));
            }
        }
    }
    // The entry block's first line: its label, if it has one, stays first.
    let at = usize::from(body[0].trim_end().ends_with(':') && !body[0].starts_with(' '));
    body[at] = format!("{entry}{}", body[at]);
    true
}

/// `__ferrocl_items_<k>` for one launch's image formats: the loop runs on a copy of the
/// argument block whose every image points to a copy of its descriptor with the format
/// key a constant, so each image builtin keeps only its format's case. The driver calls
/// it only for launches with exactly these formats (`core::program::Code`).
fn append_items_for(out: &mut String, k: &Kernel, keys: &[u32]) -> Result<(), String> {
    let name = &k.name;
    // No keys: the kernel has no images, or takes their formats itself
    // (`key_images_in_kernel`).
    let images: Vec<usize> = match keys.is_empty() {
        true => Vec::new(),
        false => {
            k.args.iter().filter(|a| a.kind == crate::compiler::kernel_info::ArgKind::Image).map(|a| a.offset).collect()
        }
    };
    if images.len() != keys.len() {
        return Err(format!("kernel {name} has {} image arguments, not {}\n", images.len(), keys.len()));
    }
    let (size, image, key_offset) =
        (k.args_size.max(8), ferrocl_kernel_abi::IMAGE_SIZE, ferrocl_kernel_abi::IMAGE_KEY_OFFSET);
    let _ = writeln!(
        out,
        "define internal i32 @__ferrocl_items_{name}(ptr %group, ptr noalias nocapture readonly %args, \
         ptr noalias %frames, ptr noalias %uniform, i32 %resume) alwaysinline {HELPER_ATTRIBUTES} {{"
    );
    if !images.is_empty() {
        // Static allocas, in the entry block, so that they become registers once inlined.
        let _ = writeln!(out, "  %args.c = alloca [{size} x i8], align 16");
        for i in 0..images.len() {
            let _ = writeln!(out, "  %desc.{i} = alloca [{image} x i8], align 8");
        }
        let _ = writeln!(out, "  call void @llvm.memcpy.p0.p0.i64(ptr %args.c, ptr %args, i64 {size}, i1 false)");
    }
    for (i, (offset, key)) in images.iter().zip(keys).enumerate() {
        let _ = writeln!(
            out,
            "  %slot.{i} = getelementptr inbounds i8, ptr %args, i64 {offset}
  %image.{i} = load ptr addrspace(1), ptr %slot.{i}, align 8
  call void @llvm.memcpy.p0.p1.i64(ptr %desc.{i}, ptr addrspace(1) %image.{i}, i64 {image}, i1 false)
  %key.at.{i} = getelementptr inbounds i8, ptr %desc.{i}, i64 {key_offset}
  store i32 {key}, ptr %key.at.{i}, align 4
  %desc.g.{i} = addrspacecast ptr %desc.{i} to ptr addrspace(1)
  %to.{i} = getelementptr inbounds i8, ptr %args.c, i64 {offset}
  store ptr addrspace(1) %desc.g.{i}, ptr %to.{i}, align 8"
        );
    }
    let args = if images.is_empty() { "%args" } else { "%args.c" };
    let _ = writeln!(
        out,
        "  %r = call i32 @__ferrocl_loop_{name}(ptr %group, ptr {args}, ptr %frames, ptr %uniform, i32 %resume)
  ret i32 %r
}}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{jam_pays, key_images_in_kernel};
    use crate::compiler::kernel_info::Kernel;
    use crate::compiler::passes::ir_type::TypeTable;

    fn kernel(regions: bool) -> Kernel {
        Kernel {
            name: "k".into(),
            args: Vec::new(),
            args_size: 0,
            static_local_size: 0,
            fibers: false,
            frame_size: 0,
            regions,
            reqd_work_group_size: None,
            sub_groups: false,
            reqd_sub_group_size: None,
            prints: false,
            driver_copies: false,
            group_use: Default::default(),
            attributes: String::new(),
        }
    }

    fn body(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    /// clang's unoptimised loop: a chain on a private value, then a store of the result.
    const CHAIN: &str = "  %5 = alloca <16 x i32>, align 64
  %8 = alloca i32, align 4
  store i32 0, ptr %8, align 4
  br label %19

19:                                               ; preds = %28, %2
  %20 = load i32, ptr %8, align 4
  %21 = icmp slt i32 %20, 256
  br i1 %21, label %23, label %22

22:
  br label %31

23:
  %24 = load <16 x i32>, ptr %5, align 64
  %27 = call <16 x i32> @_Z5mad24Dv16_iS_S_(ptr byval(<16 x i32>) align 64 %5)
  store <16 x i32> %27, ptr %5, align 64
  br label %28

28:
  br label %19

31:
  %33 = load ptr addrspace(1), ptr %3, align 8
  store <16 x i32> %32, ptr addrspace(1) %33, align 64
  ret void";

    #[test]
    fn only_loops_of_private_arithmetic_are_jammed() {
        let none = |_: &str| false;
        let (t, plain) = (TypeTable::new(), kernel(false));
        let jam = |text: &str, defined: &dyn Fn(&str) -> bool| jam_pays(&plain, &body(text), defined, &t);
        assert!(jam(CHAIN, &none));
        // A kernel run as barrier regions is inlined into its loops by force.
        assert!(!jam_pays(&kernel(true), &body(CHAIN), &none, &t));
        // No loop: nothing to jam.
        assert!(!jam("  %1 = add i32 0, 0\n  ret void", &none));
        // A load from a buffer inside the loop.
        assert!(!jam(
            &CHAIN.replace("  %24 = load <16 x i32>, ptr %5", "  %24 = load <16 x i32>, ptr addrspace(1) %5"),
            &none
        ));
        // An array on the stack: every work-item's iterations would share it.
        assert!(!jam(&CHAIN.replace("alloca i32, align 4", "alloca [4 x i32], align 4"), &none));
        // A count known only at run time.
        assert!(!jam(&CHAIN.replace("icmp slt i32 %20, 256", "icmp slt i32 %20, %9"), &none));
        // More state than four copies of fit in registers: a long16 carried besides.
        let (store, load) =
            ("  store <16 x i32> %27, ptr %5, align 64\n", "  %24 = load <16 x i32>, ptr %5, align 64\n");
        let second = CHAIN
            .replace(load, &format!("{load}  %25 = load <16 x i64>, ptr %6, align 128\n"))
            .replace(store, &format!("{store}  store <16 x i64> %25, ptr %6, align 128\n"));
        assert!(!jam(&second, &none));
        // A copy written, then read, within an iteration (a by-value argument) is not.
        let copy = CHAIN.replace(
            load,
            &format!("{load}  store <16 x i32> %24, ptr %6, align 64\n  %25 = load <16 x i32>, ptr %6, align 64\n"),
        );
        assert!(jam(&copy, &none));
        // A loop too long to compile four times.
        let long = "  %x = xor i32 0, 0\n".repeat(1100) + "  br label %28\n";
        assert!(!jam(&CHAIN.replace("  br label %28\n", &long), &none));
        // A call to a function of the program, which may touch memory.
        assert!(!jam(CHAIN, &|n: &str| n == "_Z5mad24Dv16_iS_S_"));
    }

    /// A kernel's image parameters become copies of their descriptors with constant
    /// format keys, made first in the entry block.
    #[test]
    fn images_get_their_formats_at_the_kernel_entry() {
        use crate::compiler::kernel_info::{Arg, ArgKind};
        let arg = |kind| Arg {
            kind,
            offset: 0,
            size: 8,
            addr_space: 1,
            access: String::new(),
            type_name: String::new(),
            type_qual: String::new(),
            name: None,
        };
        let mut k = kernel(false);
        k.args = vec![arg(ArgKind::Buffer), arg(ArgKind::Image), arg(ArgKind::Image)];
        let define =
            "define internal spir_func void @k(ptr addrspace(1) %0, ptr addrspace(1) %1, ptr addrspace(1) %2) {";
        let mut lines = body(
            "  %4 = alloca ptr addrspace(1), align 8\n  store ptr addrspace(1) %1, ptr %4, align 8\n  \
                              %5 = call <4 x float> @read(ptr addrspace(1) %2)\n  ret void",
        );
        assert!(key_images_in_kernel(define, &mut lines, &k, &[453, 64]));
        let text = lines.join("\n");
        assert!(text.starts_with("  %__ferrocl_desc.0 = alloca [64 x i8]"), "{text}");
        assert!(
            text.contains("store i32 453, ptr %__ferrocl_key.0") && text.contains("store i32 64, ptr %__ferrocl_key.1")
        );
        assert!(text.contains("store ptr addrspace(1) %__ferrocl_image.0, ptr %4"), "{text}");
        assert!(text.contains("@read(ptr addrspace(1) %__ferrocl_image.1)"), "{text}");
        assert!(!key_images_in_kernel(define, &mut lines, &k, &[453]), "a key per image");
    }
}
