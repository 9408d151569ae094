//! Rewrites clang's textual LLVM IR of an OpenCL program into a module the CPU runtime
//! can call (the step between "OpenCL C -> IR" and "IR -> object"):
//!
//! - every function that calls a builtin that reads the work-item context (a query, a
//!   barrier, an async copy: `context`) gets a hidden trailing `ptr %__ferrocl_ctx`
//!   parameter, passed down the call graph and on to those builtins;
//! - `__local` variables (`addrspace(3)` globals) become thread-local, so each worker
//!   thread (which runs one work-group at a time) has its own copy, and get `hidden`
//!   linkage so alias analysis cannot assume a barrier leaves them unchanged;
//! - work-group collectives become barriers around library helpers (`collectives`),
//!   and integer divisions cannot trap (`division`);
//! - kernels with barriers in their own body become resumable (`regions`); others
//!   with barriers run as fibers;
//! - each kernel gets entry points that run a group or one work-item (`launcher`),
//!   taking the kernel's arguments from one packed block.
//! - calls of the archive's async-copy builtins go through inline fast paths, and
//!   `printf` becomes the library's OpenCL `printf` (builtins/clc/printf.c).

mod collectives;
pub(crate) mod context;
mod division;
mod flow;
pub(crate) mod ir_text;
pub(crate) mod ir_type;
mod item_caps;
pub(crate) mod launcher;
pub(crate) mod regions;
mod simd;

pub(crate) use simd::cache_key as simd_cache_key;
mod tls;
mod uniform;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use crate::compiler::kernel_info::{self, Arg, ArgKind, GroupUse, Kernel};
use context::{takes_context, Role};
use ferrocl_kernel_abi::{async_builtin, AsyncReach};
use ir_text::{callee_names, callees_in, matching_paren, opencl_name, parse_param, split_top, Param};
use ir_type::{IrType, TypeTable};
use launcher::CTX;
use regions::Sync;

/// Whether a builtin makes the work-items of a group wait for each other: kernels
/// reaching one run their work-items as fibers, unless the region transform splits them.
pub(super) fn synchronises(mangled: &str) -> bool {
    opencl_name(mangled).is_some_and(|n| {
        matches!(n, "barrier" | "work_group_barrier" | "sub_group_barrier" | "wait_group_events")
            || collectives::is_collective(n)
    })
}

/// One function definition: its `define` line and body line range.
struct Function {
    name: String,
    define: usize,
    end: usize,
    kernel: bool,
}

fn functions(lines: &[String]) -> Vec<Function> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with("define ") {
            let name = callee_names(&lines[i]).into_iter().next().map(|(n, _)| n).unwrap_or_default();
            let kernel = lines[i].contains(" spir_kernel ");
            let start = i;
            while i < lines.len() && lines[i] != "}" {
                i += 1;
            }
            out.push(Function { name, define: start, end: i, kernel });
        }
        i += 1;
    }
    out
}

/// Appends an argument (or parameter) before the `)` matching `open`.
fn append_arg(line: &mut String, open: usize, arg: &str) -> Option<()> {
    let close = matching_paren(line, open)?;
    let empty = line[open + 1..close].trim().is_empty();
    line.insert_str(close, &if empty { arg.to_string() } else { format!(", {arg}") });
    Some(())
}

/// `!N = !{...}` metadata nodes, as their raw item lists.
fn metadata(lines: &[String]) -> HashMap<String, Vec<String>> {
    lines
        .iter()
        .filter_map(|l| {
            let (id, rest) = l.split_once(" = ")?;
            if !id.starts_with('!') || id.starts_with("!llvm") {
                return None;
            }
            let body = rest.trim_start_matches("distinct ").strip_prefix("!{")?.strip_suffix('}')?;
            Some((id.to_string(), split_top(body).into_iter().map(str::to_string).collect()))
        })
        .collect()
}

/// Decodes a metadata string item `!"..."` (LLVM escapes bytes as `\HH`).
fn md_string(item: &str) -> String {
    let s = item.trim().trim_start_matches('!').trim_matches('"');
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 2 < b.len() + 1 {
            if let Ok(v) = u8::from_str_radix(s.get(i + 1..i + 3).unwrap_or(""), 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn md_int(item: &str) -> Option<u64> {
    item.split_whitespace().last()?.parse().ok()
}

/// The metadata node a `define` line attaches under `key` (e.g. `!kernel_arg_type`).
fn attached<'a>(define: &str, key: &str, md: &'a HashMap<String, Vec<String>>) -> Option<&'a Vec<String>> {
    let at = define.find(&format!("!{key} "))?;
    let id = define[at + key.len() + 2..].split_whitespace().next()?;
    md.get(id)
}

/// The rewritten module and what the runtime needs to know about its kernels.
pub(crate) struct Rewritten {
    pub(crate) module: String,
    pub(crate) kernels: Vec<Kernel>,
    /// Bytes of program-scope `__global` variables.
    pub(crate) global_variable_size: u64,
}

/// N of a line defining the metadata node `!N`.
fn metadata_number(line: &str) -> Option<u32> {
    line.strip_prefix('!')?.split_once(" = ")?.0.parse().ok()
}

/// Bytes of the program-scope `__global` variables a module defines.
fn global_variables(lines: &[String], types: &TypeTable) -> u64 {
    lines
        .iter()
        .filter(|l| l.starts_with('@') && l.contains(" addrspace(1) global ") && !l.contains(" external "))
        .filter_map(|l| {
            let t = &l[l.find(" addrspace(1) global ")? + " addrspace(1) global ".len()..];
            ir_type::parse(t)?.0.layout(types).map(|(size, _)| size)
        })
        .sum()
}

/// The code of one kernel for one shape of launch: what a build generates on a kernel's
/// first launch (`compiler::generate`), rather than every kernel at build time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Unit {
    /// The kernel; `None`: every kernel of the program without image arguments, in one
    /// unit (for small programs, where a clang run per kernel would cost more than
    /// code for kernels never launched).
    pub(crate) kernel: Option<String>,
    /// A group size to give a loop of its own, with the size a constant, as if the
    /// kernel declared it with `reqd_work_group_size` (`launcher::Entry::fixed`).
    pub(crate) fixed: Option<[usize; 3]>,
    /// The format of each image argument, in order (kernel-abi `image_key`): the
    /// launcher makes them constants, so every image builtin's format switch folds to
    /// the one case (`launcher::append_items_for`); `None`: code for images of any
    /// format (`launcher::append_items`).
    pub(crate) images: Option<Vec<u32>>,
}

#[cfg(test)]
fn rewrite(text: &str) -> Result<Rewritten, String> {
    rewrite_for(text, None)
}

/// A C99 `inline` function (neither `static` nor `extern`) has only an inline
/// definition, which clang emits `available_externally`: a call the optimiser does not
/// inline refers to an external definition the program must give elsewhere, and none
/// does where the program is one source (OpenCL C follows C99 here). The module is the
/// whole program by now (`clLinkProgram` merged an external definition from another
/// module over it), so the definition is kept as the program's own, as PoCL and C
/// compilers in GNU mode do, rather than failing the link.
fn inline_definitions_kept(text: &str) -> std::borrow::Cow<'_, str> {
    const INLINE_ONLY: &str = "define available_externally ";
    if !text.contains(INLINE_ONLY) {
        return text.into();
    }
    let lines: Vec<String> = text
        .lines()
        .map(|l| match l.strip_prefix(INLINE_ONLY) {
            Some(rest) => format!("define internal {rest}"),
            None => l.to_string(),
        })
        .collect();
    (lines.join("\n") + "\n").into()
}

/// The rewrite: for a `unit`, entry points of its kernel alone, made for its launch and
/// with the code no entry point reaches left out (`ir_text::reachable_only`); without
/// one, entry points of every kernel for any launch (`launcher::append_items`).
pub(crate) fn rewrite_for(text: &str, unit: Option<&Unit>) -> Result<Rewritten, String> {
    rewrite_with(text, unit, simd::enabled())
}

/// `rewrite_for` without SIMD copies: the retry of a build whose copies the compiler
/// refused (a gap in this text-level transform should cost speed, not the build).
pub(crate) fn rewrite_without_simd(text: &str, unit: Option<&Unit>) -> Result<Rewritten, String> {
    rewrite_with(text, unit, false)
}

/// Says, with `FERROCL_SIMD=why`, that a build's SIMD copies did not compile.
pub(crate) fn simd_failed(why: &str) {
    simd::explain("(every kernel of this build)", &format!("the copies did not compile: {why}"));
}

/// Whether a rewritten module holds SIMD copies of kernels.
pub(crate) fn has_simd_copies(module: &str) -> bool {
    module.contains(".simd(")
}

/// Prefix of the constant holding a block kernel's name (`block_kernels_by_name`).
const BLOCK_NAME: &str = "__ferrocl_block_name.";

/// clang passes `enqueue_kernel` (and the `get_kernel_*` queries) the address of the
/// kernel it made for the block; the driver launches kernels by name, through their
/// launchers, so the address becomes that of a constant holding the name
/// (builtins/clc/enqueue.c hands it to the driver). The kernel itself is then no longer
/// referred to and becomes an entry point like any other.
fn block_kernels_by_name(text: &str) -> std::borrow::Cow<'_, str> {
    let blocks: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("define ") && l.contains(" spir_kernel "))
        .filter_map(|l| callee_names(l).into_iter().next().map(|(n, _)| n))
        .filter(|n| kernel_info::is_block_kernel(n))
        .collect();
    if blocks.is_empty() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 128 * blocks.len());
    for line in text.lines() {
        let mut line = line.to_string();
        if !line.starts_with("define ") {
            for b in &blocks {
                let at = format!("@{b}");
                let mut from = 0;
                while let Some(i) = line[from..].find(&at).map(|i| i + from) {
                    let end = i + at.len();
                    from = end;
                    if !line[end..].starts_with(|c: char| c.is_ascii_alphanumeric() || "_.$-".contains(c)) {
                        let named = format!("@{BLOCK_NAME}{b}");
                        from = i + named.len();
                        line.replace_range(i..end, &named);
                    }
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    for b in &blocks {
        let _ = writeln!(out, "@{BLOCK_NAME}{b} = private unnamed_addr constant [{} x i8] c\"{b}\\00\"", b.len() + 1);
    }
    out.into()
}

fn rewrite_with(text: &str, unit: Option<&Unit>, simd_copies: bool) -> Result<Rewritten, String> {
    let text = block_kernels_by_name(text);
    let text = ir_text::unquote_local_names(&text);
    let text = division::guard(&collectives::expand_all(&inline_definitions_kept(&text))?);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let types = type_table_of(&lines);
    // Every named type, opaque ones too (the inliner must not rename them).
    let type_names: HashSet<String> = lines
        .iter()
        .filter_map(|l| {
            Some(ir_type::ident(l.strip_prefix('%')?)).filter(|(_, rest)| rest.trim_start().starts_with("= type"))
        })
        .map(|(n, _)| n.to_string())
        .collect();
    let type_names: HashSet<&str> = type_names.iter().map(String::as_str).collect();
    let md = metadata(&lines);
    let locals = thread_local_locals(&mut lines, &types)?;
    let global_variable_size = global_variables(&lines, &types);
    let funcs = functions(&lines);
    let defined: HashSet<&str> = funcs.iter().map(|f| f.name.as_str()).collect();

    let callees = direct_callees(&lines, &funcs);

    // Functions that need the context: callers of the builtins that take it, then their
    // callers.
    let takes_context = |name: &str| !defined.contains(name) && takes_context(name);
    let needs = needing_context(&funcs, &callees, &takes_context);

    pass_context(&mut lines, &funcs, &needs, &defined, &takes_context)?;

    let mut kernels = Vec::new();
    let mut entries: HashSet<String> = HashSet::new();
    let mut extra = String::new();
    let mut simd_declarations: BTreeSet<String> = BTreeSet::new();
    // Past every numbered metadata node of clang's module.
    let loop_id = lines.iter().filter_map(|l| metadata_number(l)).max().map_or(0, |n| n + 1);
    // Unnamed types would collide with the renaming of unnamed values.
    let unnamed_types = lines.iter().any(|l| l.starts_with('%') && l[1..].starts_with(|c: char| c.is_ascii_digit()));
    for f in funcs.iter().filter(|f| f.kernel) {
        let define = lines[f.define].clone();
        let mut k = kernel_info(f, &define, &types, &md, &locals, &callees)?;
        let called = callees.values().any(|cs| cs.contains(&f.name));
        let mut barriers = None;
        let mut invariant = Vec::new();
        let mut caps = Vec::new();
        let mut computes = Vec::new();
        let mut uniform = 0;
        // The body before the regions transform, where its only barriers are sub-group
        // ones: a SIMD copy of it runs the kernel for groups whose sub-groups are its
        // chunks (`flat` below).
        let mut sub_groups_only: Option<Vec<String>> = None;
        let given = unit.map_or(true, |u| match &u.kernel {
            Some(name) => *name == f.name,
            None => !k.args.iter().any(|a| a.kind == ArgKind::Image),
        });
        if k.fibers && (called || unnamed_types) {
            simd::explain_fibers(&f.name, if called { "called by another kernel" } else { "unnamed struct types" });
        }
        if k.fibers && !called && !unnamed_types && given {
            let sync = |c: &str| sync_kind(c, &defined, &callees);
            // The program's functions that synchronise are inlined first: the regions
            // transform splits one body at its barriers and refuses a call that waits
            // inside, which SYCL's group algorithms (shuffles in a helper) all make.
            let waits = |name: &str| {
                let g = funcs.iter().find(|g| g.name == name && !g.kernel && reaches_sync(name, &callees))?;
                Some(simd::Callee { define: &lines[g.define], body: &lines[g.define + 1..g.end] })
            };
            let body = &lines[f.define + 1..f.end];
            let inlined = match body.iter().any(|l| callees_in(l).iter().any(|c| waits(c).is_some())) {
                true => simd::inline_calls(&define, body, &waits, &type_names),
                false => Ok(body.to_vec()),
            };
            let sub_group_barrier = |c: &str| opencl_name(c) == Some("sub_group_barrier");
            if let Ok(body) = &inlined {
                let only_sub_groups =
                    |l: &String| callees_in(l).iter().all(|c| sync(c) == regions::Sync::None || sub_group_barrier(c));
                if body.iter().all(only_sub_groups) {
                    sub_groups_only = Some(
                        body.iter().filter(|l| !callees_in(l).iter().any(|c| sub_group_barrier(c))).cloned().collect(),
                    );
                }
            }
            // A refusal is not an error: the kernel then runs as fibers.
            let made = inlined.and_then(|body| regions::make_resumable(&define, &body, &types, CTX, &sync));
            if let Err(why) = &made {
                simd::explain_fibers(&f.name, why);
            }
            if let Ok(r) = made {
                lines[f.define] = r.text;
                lines[f.define + 1..=f.end].iter_mut().for_each(String::clear);
                k.fibers = false;
                k.frame_size = r.frame_size;
                k.regions = true;
                barriers = Some(r.barriers);
                invariant = r.invariant;
                caps = r.caps;
                computes = r.computes;
                uniform = r.uniform;
            }
        }
        // Only the launchers are entry points: an internal kernel is dropped once inlined
        // into them instead of being compiled a second time on its own. It becomes an
        // ordinary function (`spir_func`, the C convention on this target): LLVM's
        // verifier requires a `spir_kernel` to return void, which a resumable one does
        // not, and a kernel is no longer an entry point.
        let head = &mut lines[f.define];
        for exported in ["define dso_local spir_kernel ", "define spir_kernel "] {
            if head.starts_with(exported) {
                head.replace_range(..exported.len(), "define internal spir_func ");
                break;
            }
        }
        mark_image_descriptors(head, &f.name, &k);
        if !given {
            kernels.push(k);
            continue;
        }
        entries.extend([format!("__ferrocl_launch_{}", f.name), format!("__ferrocl_item_{}", f.name)]);
        // Code for one launch's image formats: the kernel itself takes them as constants
        // where it runs without barriers; otherwise its item loop does.
        let mut images = unit.and_then(|u| u.images.clone());
        if let Some(keys) = images.as_deref().filter(|keys| !keys.is_empty() && barriers.is_none() && !k.fibers) {
            let (head, body) = lines[f.define..f.end].split_at_mut(1);
            if launcher::key_images_in_kernel(&head[0], body, &k, keys) {
                images = Some(Vec::new());
            }
        }
        let body = &lines[f.define + 1..f.end];
        // Work-items in SIMD lanes, where the kernel allows (`simd`): not run as fibers,
        // called by no other kernel, not specialised per image format. A resumable
        // kernel (its text all in its `define` line) gets a copy running each region.
        let simd = match simd_copies && !k.fibers && !called && !k.args.iter().any(|a| a.kind == ArgKind::Image) {
            true => {
                let (define, body): (String, Vec<String>) = match barriers {
                    Some(_) => {
                        let text: Vec<String> = lines[f.define].lines().map(str::to_string).collect();
                        let end = text.iter().rposition(|l| l.starts_with('}')).unwrap_or(text.len());
                        (text[0].clone(), text[1..end].to_vec())
                    }
                    None => (lines[f.define].clone(), body.to_vec()),
                };
                // The program's functions the kernel calls, inlined into the copy.
                let program = |name: &str| {
                    let g = funcs.iter().find(|g| g.name == name && !g.kernel && g.name != f.name)?;
                    Some(simd::Callee { define: &lines[g.define], body: &lines[g.define + 1..g.end] })
                };
                // Lanes answer sub-group queries only where the sub-group size is a
                // multiple of the width (`simd::sub_groups_fit`).
                let fits = simd::sub_groups_fit(k.sub_group_size());
                simd::inline_calls(&define, &body, &program, &type_names)
                    .and_then(|body| match fits || !k.sub_groups {
                        // Named structures as their bodies: the pass widens a variable
                        // from its type's text.
                        true => simd::vectorize(&define, &ir_text::literal_types(&body, &types), &f.name),
                        false => Err(format!("sub-groups of {} work-items", k.sub_group_size())),
                    })
                    .map_err(|why| simd::explain(&f.name, &why))
                    .ok()
            }
            false => None,
        };
        // The flat copy: the kernel without its sub-group barriers, in lanes. A chunk of
        // lanes that is its sub-group passes each collective's helpers lane by lane, all
        // its puts before its reads, as the barriers would order them.
        // Kernels run as regions with a SIMD copy, and kernels run as fibers (a sub-group
        // barrier under a branch alike only within each sub-group: dpctl's elementwise
        // kernels load a sub-group's block where the whole block is in range).
        let flat_allowed = match &simd {
            Some(s) => barriers.is_some() && s.folded.is_empty(),
            None => {
                k.fibers
                    && simd_copies
                    && !called
                    && !k.args.iter().any(|a| a.kind == ArgKind::Image)
                    && simd::sub_groups_fit(k.sub_group_size())
            }
        };
        let flat = match sub_groups_only.filter(|_| flat_allowed) {
            Some(body) => {
                // The kernel's own `define`, made an internal function as the copies' are.
                let head = ["define dso_local spir_kernel ", "define spir_kernel "]
                    .iter()
                    .find_map(|e| define.strip_prefix(e))
                    .map_or(define.clone(), |rest| format!("define internal spir_func {rest}"));
                simd::vectorize(&head, &ir_text::literal_types(&body, &types), &f.name)
                    .map_err(|why| simd::explain(&f.name, &format!("(no flat copy) {why}")))
                    .ok()
                    .filter(|copy| copy.folded.is_empty())
            }
            None => None,
        };
        if let Some(copy) = &flat {
            // The driver's entry point where the kernel runs as fibers (`FlatFn`).
            entries.insert(format!("__ferrocl_flat_{}", f.name));
            extra.push_str(&copy.text.replace(&format!("@{}.simd", f.name), &format!("@{}.flat", f.name)));
            simd_declarations.extend(copy.declarations.iter().cloned());
        }
        let jam = match simd {
            Some(_) => None,
            None => launcher::jam_pays(&k, body, &|n| defined.contains(n), &types).then_some(loop_id),
        };
        if let Some(copy) = &simd {
            extra.push_str(&copy.text);
            simd_declarations.extend(copy.declarations.iter().cloned());
        }
        let entry = launcher::Entry {
            jam,
            ctx: needs.contains(&f.name),
            barriers,
            invariant,
            caps,
            computes,
            uniform,
            tracks: reaches_async(&f.name, &callees),
            fixed: k.reqd_work_group_size.or(unit.and_then(|u| u.fixed)),
            images,
            simd: simd.is_some(),
            fold: simd.as_ref().map(|s| s.folded.clone()).unwrap_or_default(),
            wide: simd.as_ref().map_or(0, |s| s.wide),
            flat: flat.is_some(),
        };
        launcher::append(&mut extra, &define, &k, &entry, &types)?;
        kernels.push(k);
    }
    for declaration in simd_declarations {
        let name = callee_names(&declaration).into_iter().next().map(|(n, _)| n).unwrap_or_default();
        let declared =
            |l: &String| (l.starts_with("declare ") || l.starts_with("define ")) && l.contains(&format!("@{name}("));
        if !lines.iter().any(declared) {
            let _ = writeln!(extra, "{declaration}");
        }
    }
    let mut module = assemble(&lines, &extra, &locals, &takes_context, loop_id);
    if let Some(u) = unit {
        if let Some(name) = u.kernel.as_ref().filter(|n| !kernels.iter().any(|k| k.name == **n)) {
            return Err(format!("no kernel {name} in the program\n"));
        }
        // The entry points the driver looks up (`core::executable::KernelLibrary`).
        module = ir_text::reachable_only(&module, &|n| entries.contains(n) || n == "__ferrocl_static_local_query");
    }
    Ok(Rewritten { module, kernels, global_variable_size })
}

/// Direct callees of every defined function.
fn direct_callees<'a>(lines: &[String], funcs: &'a [Function]) -> HashMap<&'a str, BTreeSet<String>> {
    funcs
        .iter()
        .map(|f| {
            let calls = lines[f.define + 1..f.end]
                .iter()
                .filter(|l| l.contains("call "))
                .flat_map(|l| callee_names(l).into_iter().map(|(n, _)| n))
                .collect();
            (f.name.as_str(), calls)
        })
        .collect()
}

/// Functions that need the context: callers of the builtins that take it, then their
/// callers.
fn needing_context(
    funcs: &[Function],
    callees: &HashMap<&str, BTreeSet<String>>,
    takes_context: &dyn Fn(&str) -> bool,
) -> HashSet<String> {
    let mut needs: HashSet<String> = HashSet::new();
    loop {
        let before = needs.len();
        for f in funcs {
            let cs = &callees[f.name.as_str()];
            if cs.iter().any(|c| takes_context(c) || needs.contains(c)) {
                needs.insert(f.name.clone());
            }
        }
        if needs.len() == before {
            break;
        }
    }
    needs
}

/// Gives every function that needs the context a trailing context parameter, and
/// passes it at every call of one and of the builtins that take it.
fn pass_context(
    lines: &mut [String],
    funcs: &[Function],
    needs: &HashSet<String>,
    defined: &HashSet<&str>,
    takes_context: &dyn Fn(&str) -> bool,
) -> Result<(), String> {
    for f in funcs {
        if needs.contains(&f.name) {
            let line = &mut lines[f.define];
            let open = callee_names(line).first().map(|&(_, p)| p).ok_or("malformed define")?;
            append_arg(line, open, &format!("ptr {CTX}")).ok_or("malformed define")?;
        }
        for line in &mut lines[f.define + 1..f.end] {
            if !line.contains("call ") {
                continue;
            }
            // Kernels become `spir_func` (below); a kernel calling another must match.
            if line.contains("call spir_kernel ") {
                *line = line.replace("call spir_kernel ", "call spir_func ");
            }
            // Right to left, so inserting text does not move the remaining positions.
            for (name, open) in callee_names(line).into_iter().rev() {
                if (needs.contains(&name) && defined.contains(name.as_str())) || takes_context(&name) {
                    append_arg(line, open, &format!("ptr {CTX}")).ok_or("malformed call")?;
                }
            }
        }
    }
    for line in lines.iter_mut().filter(|l| l.starts_with("declare ")) {
        if let Some((name, open)) = callee_names(line).into_iter().next() {
            if takes_context(&name) {
                append_arg(line, open, "ptr").ok_or("malformed declaration")?;
            }
        }
    }
    Ok(())
}

/// The rewritten module: the kernels' functions, our declarations, the launchers
/// (`extra`) and their loop metadata.
fn assemble(
    lines: &[String],
    extra: &str,
    locals: &[(String, u64)],
    takes_context: &dyn Fn(&str) -> bool,
    loop_id: u32,
) -> String {
    let (module, fast_paths) = route_fast_paths(&lines.join("\n"), &takes_context);
    // OpenCL's printf (vector conversions, one write per call) is ours, not the C
    // library's (builtins/clc/printf.c).
    let mut module = tls::hoist(&module.replace("@printf(", "@__ferrocl_printf("), locals);
    for declaration in fast_paths {
        let _ = writeln!(module, "{declaration}");
    }
    module.push_str(launcher::DECLARATIONS);
    module.push_str(&static_local_test(locals));
    let memcpy = format!("@{}(", regions::MEMCPY);
    if module.contains(&memcpy) && !module.contains(&format!("declare void {memcpy}")) {
        let _ = writeln!(module, "declare void {memcpy}ptr, ptr, i64, i1 immarg)");
    }
    for (name, declaration) in launcher::INTRINSICS {
        let (used, declared) = (format!("@{name}("), format!("declare void @{name}("));
        if (extra.contains(&used) || module.contains(&used)) && !module.contains(&declared) {
            let _ = writeln!(module, "{declaration}");
        }
    }
    module.push_str(extra);
    module += &context::missing_declarations(&module);
    if module.contains(&format!("!llvm.loop !{loop_id}")) {
        module.push_str(&launcher::item_loop_metadata(loop_id));
    }
    module
}

/// The inline fast path (builtins/clc/workitem.c) a call to an async-copy builtin of
/// the archive goes through, its declaration, and the arguments the call gains before
/// the builtin's own: the builtin, then for a contiguous copy into local memory its
/// element's size in bytes, or 0 where the work-items must not move it themselves as
/// they pass it (`moved` in builtins/clc/workitem.c): `immediate` false.
fn fast_path(mangled: &str, immediate: bool) -> Option<(String, String, String)> {
    let name = opencl_name(mangled)?;
    let params = &mangled[mangled.find(name)? + name.len()..];
    if name == "wait_group_events" {
        let (space, list) =
            if params.starts_with("iPU9CLgeneric") { ("generic", "ptr addrspace(4)") } else { ("private", "ptr") };
        let helper = format!("__ferrocl_fast_wait_{space}");
        return Some((
            helper.clone(),
            format!("declare void @{helper}(ptr, i32, {list}, ptr)"),
            format!("ptr @{mangled}, "),
        ));
    }
    let AsyncReach::FastPath { kind, sizes, offsets } = async_builtin(name)?.reach else {
        return None;
    };
    let (dir, dst, src) = if params.starts_with("PU7CLlocal") {
        ("l", "ptr addrspace(3)", "ptr addrspace(1)")
    } else {
        ("g", "ptr addrspace(1)", "ptr addrspace(3)")
    };
    let mut types = vec!["ptr"];
    let mut leading = format!("ptr @{mangled}, ");
    if kind == "copy" && dir == "l" {
        // The element type follows the destination's address space.
        let elem = params.strip_prefix("PU7CLlocal").and_then(element_bytes)?;
        types.push("i64");
        let _ = write!(leading, "i64 {}, ", if immediate { elem } else { 0 });
    }
    types.push(dst);
    types.extend(offsets.then_some("i64"));
    types.push(src);
    types.extend(offsets.then_some("i64"));
    types.extend(std::iter::repeat("i64").take(sizes));
    types.extend(["ptr", "ptr"]);
    let helper = format!("__ferrocl_fast_{kind}_{dir}");
    Some((helper.clone(), format!("declare ptr @{helper}({})", types.join(", ")), leading))
}

/// The size in bytes of the OpenCL C type a mangled name continues with: `f` 4, `Dv4_f`
/// 16, `Dv3_s` 8 (three-element vectors take four elements' room).
fn element_bytes(mangled: &str) -> Option<u64> {
    let (lanes, scalar) = match mangled.strip_prefix("Dv") {
        Some(rest) => {
            let (lanes, scalar) = rest.split_once('_')?;
            (lanes.parse::<u64>().ok()?, scalar)
        }
        None => (1, mangled),
    };
    let bytes = if scalar.starts_with("Dh") {
        2
    } else {
        match scalar.as_bytes().first()? {
            b'c' | b'a' | b'h' => 1,
            b's' | b't' => 2,
            b'i' | b'j' | b'f' => 4,
            b'l' | b'm' | b'd' => 8,
            _ => return None,
        }
    };
    Some(bytes * if lanes == 3 { 4 } else { lanes })
}

/// Routes every call of an async-copy builtin of the archive through its inline fast
/// path, which takes the builtin as its first argument and calls it only when the
/// driver has work to do. Returns the module and the declarations it now needs.
fn route_fast_paths(module: &str, takes_context: &dyn Fn(&str) -> bool) -> (String, BTreeSet<String>) {
    let mut out = String::with_capacity(module.len() + 1024);
    let mut declarations = BTreeSet::new();
    // Work-items move their own part of a contiguous import as they pass it, out of order
    // with the parts of the others: a fence, which orders copies, needs the engine.
    let immediate = !module.contains("async_work_group_copy_fence");
    for line in module.lines() {
        let mut line = line.to_string();
        if !line.starts_with("declare ") && line.contains("call ") {
            for (name, open) in callee_names(&line).into_iter().rev() {
                if let Some((helper, declaration, leading)) =
                    takes_context(&name).then(|| fast_path(&name, immediate)).flatten()
                {
                    line.insert_str(open + 1, &leading);
                    line.replace_range(open - name.len()..open, &helper);
                    declarations.insert(declaration);
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    (out, declarations)
}

/// `__ferrocl_static_local(p)`: whether `p` points into one of the module's `__local`
/// variables (this thread's copies), for `to_local` and `get_fence`.
fn static_local_test(locals: &[(String, u64)]) -> String {
    let mut f = String::from(
        "define hidden zeroext i1 @__ferrocl_static_local(ptr addrspace(4) %p) {\n  %a = ptrtoint ptr addrspace(4) %p to i64\n",
    );
    let mut last = "false".to_string();
    for (i, (name, size)) in locals.iter().enumerate() {
        let _ = write!(
            f,
            "  %b{i} = ptrtoint ptr addrspace(3) @\"{name}\" to i64\n  %e{i} = add i64 %b{i}, {size}\n  \
             %ge{i} = icmp uge i64 %a, %b{i}\n  %lt{i} = icmp ult i64 %a, %e{i}\n  %in{i} = and i1 %ge{i}, %lt{i}\n  \
             %or{i} = or i1 {last}, %in{i}\n"
        );
        last = format!("%or{i}");
    }
    let _ = writeln!(f, "  ret i1 {last}\n}}");
    // The driver's validation mode asks the same of a copy's local range (exported; the
    // kernel's own calls stay on the hidden one).
    f.push_str(
        "define zeroext i1 @__ferrocl_static_local_query(ptr %p) {\n  %g = addrspacecast ptr %p to ptr addrspace(4)\n  \
         %r = call zeroext i1 @__ferrocl_static_local(ptr addrspace(4) %g)\n  ret i1 %r\n}\n",
    );
    f
}

fn type_table_of(lines: &[String]) -> TypeTable {
    ir_type::type_table(&lines.iter().filter(|l| l.starts_with('%')).cloned().collect::<Vec<_>>().join("\n"))
}

/// Makes `__local` variables thread-local; returns their names and sizes.
fn thread_local_locals(lines: &mut [String], types: &TypeTable) -> Result<Vec<(String, u64)>, String> {
    let mut out = Vec::new();
    for line in lines.iter_mut().filter(|l| l.starts_with('@') && l.contains(" addrspace(3) global ")) {
        let (name, _) = ir_type::ident(&line[1..]);
        let name = name.to_string();
        let ty_text = &line[line.find(" addrspace(3) global ").unwrap() + " addrspace(3) global ".len()..];
        let (ty, _) = ir_type::parse(ty_text).ok_or_else(|| format!("unknown type of __local {name}"))?;
        let (size, _) = ty.layout(types).ok_or_else(|| format!("unknown size of __local {name}"))?;
        out.push((name, size));
        let (lhs, rhs) = line.split_once(" = ").ok_or("malformed global")?;
        let mut words: Vec<&str> = rhs.split(' ').collect();
        if let Some(link) = words.first_mut() {
            if *link == "internal" || *link == "private" {
                *link = "hidden";
            }
        }
        let rhs = words.join(" ");
        let at = ["unnamed_addr ", "local_unnamed_addr ", "addrspace(3) global "]
            .iter()
            .filter_map(|m| rhs.find(m))
            .min()
            .ok_or("malformed global")?;
        *line = format!("{lhs} = {}thread_local(localdynamic) {}", &rhs[..at], &rhs[at..]);
    }
    Ok(out)
}

/// Image arguments point to the driver's descriptor of the image (kernel-abi `Image`),
/// which no other pointer of the kernel reaches and kernel code never writes: `noalias`
/// and `dereferenceable` let LLVM keep its fields (sizes, pitches, format) in registers
/// across the kernel's stores and hoist them out of conditional code, instead of
/// loading them again for every texel.
const IMAGE_ATTRIBUTES: &str = "noalias nonnull align 8 dereferenceable(64)";

fn mark_image_descriptors(head: &mut String, name: &str, k: &Kernel) {
    let Some(open) = head.find(&format!("@{name}(")).map(|i| i + name.len() + 1) else { return };
    let Some(close) = matching_paren(head, open) else { return };
    let params: Vec<String> = split_top(&head[open + 1..close])
        .into_iter()
        .enumerate()
        .map(|(i, p)| match k.args.get(i) {
            Some(a) if a.kind == ArgKind::Image && p.starts_with("ptr addrspace(1) ") && !p.contains("noalias") => {
                p.replacen("ptr addrspace(1) ", &format!("ptr addrspace(1) {IMAGE_ATTRIBUTES} "), 1)
            }
            _ => p.to_string(),
        })
        .collect();
    head.replace_range(open + 1..close, &params.join(", "));
}

fn kernel_info(
    f: &Function,
    define: &str,
    types: &TypeTable,
    md: &HashMap<String, Vec<String>>,
    locals: &[(String, u64)],
    callees: &HashMap<&str, BTreeSet<String>>,
) -> Result<Kernel, String> {
    let name = f.name.clone();
    let open = define.find(&format!("@{name}(")).ok_or("malformed kernel")? + name.len() + 1;
    let close = matching_paren(define, open).ok_or("malformed kernel")?;
    let params: Vec<Param> = split_top(&define[open + 1..close])
        .into_iter()
        .filter(|p| !p.ends_with(CTX))
        .map(|p| parse_param(p).ok_or_else(|| format!("kernel {name}: unsupported parameter '{p}'")))
        .collect::<Result<_, _>>()?;
    let list = |key: &str| attached(define, key, md).cloned().unwrap_or_default();
    let mut spaces: Vec<u32> = list("kernel_arg_addr_space").iter().map(|i| md_int(i).unwrap_or(0) as u32).collect();
    // The kernel clang makes for a block given to `enqueue_kernel` has no argument
    // metadata: its parameters are the block literal (a generic pointer) and the
    // block's `__local` pointers.
    if spaces.is_empty() && kernel_info::is_block_kernel(&name) {
        spaces = params.iter().map(|p| if let IrType::Ptr(s) = p.ty { s } else { 0 }).collect();
    }
    let access = list("kernel_arg_access_qual");
    let type_names = list("kernel_arg_type");
    let base_types = list("kernel_arg_base_type");
    let quals = list("kernel_arg_type_qual");
    let names = attached(define, "kernel_arg_name", md);
    if spaces.len() != params.len() {
        return Err(format!("kernel {name}: {} IR parameters for {} arguments", params.len(), spaces.len()));
    }
    let mut args = Vec::new();
    let mut offset = 0usize;
    for (i, p) in params.iter().enumerate() {
        // Images and samplers are pointers to clang; their base type tells them apart.
        let base = base_types.get(i).map(|s| md_string(s)).unwrap_or_default();
        let qual = quals.get(i).map(|s| md_string(s)).unwrap_or_default();
        let kind = match (&p.ty, spaces[i]) {
            (IrType::Ptr(_), _) if base == "sampler_t" => ArgKind::Sampler,
            (IrType::Ptr(_), _) if qual.split_whitespace().any(|q| q == "pipe") => ArgKind::Pipe,
            (IrType::Ptr(_), _) if base.starts_with("image") && base.ends_with("_t") => ArgKind::Image,
            (IrType::Ptr(_), 3) => ArgKind::Local,
            (IrType::Ptr(_), 1 | 2) => ArgKind::Buffer,
            // A block kernel's literal: the driver passes the address of its copy.
            (IrType::Ptr(_), 4) => ArgKind::Buffer,
            _ => ArgKind::Value,
        };
        let (size, align) = match (&p.byval, &p.ty) {
            (Some(t), _) => {
                let (s, a) = t.layout(types).ok_or_else(|| format!("kernel {name}: unknown struct layout"))?;
                (s, a.max(p.align.unwrap_or(1)))
            }
            (None, t) => t.layout(types).ok_or_else(|| format!("kernel {name}: unknown argument type"))?,
        };
        offset = offset.div_ceil(align as usize) * align as usize;
        args.push(Arg {
            kind,
            offset,
            size: size as usize,
            addr_space: spaces[i],
            access: access.get(i).map(|s| md_string(s)).unwrap_or_else(|| "none".into()),
            type_name: type_names.get(i).map(|s| md_string(s)).unwrap_or_default(),
            type_qual: qual,
            name: names.and_then(|n| n.get(i)).map(|s| md_string(s)),
        });
        offset += size as usize;
    }
    let reqd = attached(define, "reqd_work_group_size", md).and_then(|v| {
        let d: Vec<usize> = v.iter().filter_map(|i| md_int(i).map(|n| n as usize)).collect();
        (d.len() == 3).then(|| [d[0], d[1], d[2]])
    });
    let reqd_sub_group_size = attached(define, "intel_reqd_sub_group_size", md)
        .and_then(|v| v.first().and_then(|i| md_int(i)))
        .map(|n| n as usize);
    if let Some(n) = reqd_sub_group_size.filter(|n| !super::kernel_info::SUB_GROUP_SIZES.contains(n)) {
        return Err(format!(
            "kernel '{name}': intel_reqd_sub_group_size({n}) is not a sub-group size of this device (it has {:?})",
            super::kernel_info::SUB_GROUP_SIZES
        ));
    }
    let attributes = kernel_attributes(define, md);
    let prefix = format!("{name}.");
    let static_local_size = locals.iter().filter(|(n, _)| n.starts_with(&prefix)).map(|(_, s)| s).sum();
    let group_use = if static_local_size > 0
        || args.iter().any(|a: &Arg| a.kind == ArgKind::Local)
        || reaches(&name, callees, &needs_group)
    {
        GroupUse::Whole
    } else if reaches(&name, callees, &|g| context::answer(g).is_some_and(|a| a.group_ids())) {
        GroupUse::Ids
    } else {
        GroupUse::Blind
    };
    Ok(Kernel {
        name: name.clone(),
        args,
        args_size: offset.div_ceil(16) * 16,
        static_local_size,
        fibers: reaches_sync(&name, callees),
        frame_size: 0,
        regions: false,
        reqd_work_group_size: reqd,
        reqd_sub_group_size,
        sub_groups: reaches(&name, callees, &|g| {
            opencl_name(g).is_some_and(is_sub_group_function) || g.starts_with(collectives::SUB_GROUP_HELPERS)
        }),
        prints: reaches(&name, callees, &|g| g == "printf"),
        driver_copies: reaches(&name, callees, &|g| {
            opencl_name(g).is_some_and(|n| n.starts_with("async_work_group_"))
                && !g.starts_with("_Z21async_work_group_copyPU7CLlocal")
        }),
        group_use,
        attributes,
    })
}

/// The kernel's source attributes, written back from the metadata clang attaches:
/// `vec_type_hint` (`!{<4 x i32> undef, i32 0}`: a type and whether it is signed) and
/// the work-group sizes.
fn kernel_attributes(define: &str, md: &HashMap<String, Vec<String>>) -> String {
    let sizes = |key: &str| {
        attached(define, key, md).and_then(|v| {
            let d: Vec<String> = v.iter().filter_map(|i| md_int(i).map(|n| n.to_string())).collect();
            (d.len() == 3).then(|| format!("{key}({})", d.join(",")))
        })
    };
    let hint = attached(define, "vec_type_hint", md).and_then(|v| {
        let ty = v.first()?.trim().strip_suffix(" undef")?;
        let signed = v.get(1).and_then(|s| md_int(s)) == Some(1);
        let (width, elem) = match ty.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
            Some(t) => {
                let (n, e) = t.split_once(" x ")?;
                (n.trim().to_string(), e.trim())
            }
            None => (String::new(), ty),
        };
        let name = match elem {
            "half" | "float" | "double" => elem.to_string(),
            "i8" | "i16" | "i32" | "i64" => {
                let base =
                    ["char", "short", "int", "long"][["i8", "i16", "i32", "i64"].iter().position(|&t| t == elem)?];
                if signed {
                    base.to_string()
                } else {
                    format!("u{base}")
                }
            }
            _ => return None,
        };
        Some(format!("vec_type_hint({name}{width})"))
    });
    let sub_group = attached(define, "intel_reqd_sub_group_size", md)
        .and_then(|v| md_int(v.first()?))
        .map(|n| format!("intel_reqd_sub_group_size({n})"));
    [hint, sizes("work_group_size_hint"), sizes("reqd_work_group_size"), sub_group]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sub-group functions and queries (`sub_group_*`, `get_sub_group_*`, ...).
fn is_sub_group_function(opencl_name: &str) -> bool {
    opencl_name.starts_with("sub_group_") || opencl_name.contains("_sub_group")
}

/// Whether a call needs its work-group run as a whole: a builtin that takes the context
/// other than the queries of ids and sizes (barriers, async copies, collectives'
/// helpers, address space tests, sub-group queries), a synchronising or a sub-group
/// builtin.
fn needs_group(mangled: &str) -> bool {
    let id_or_size = context::answer(mangled).is_some_and(|a| a.group_blind() || a.group_ids());
    (takes_context(mangled) && !id_or_size)
        || synchronises(mangled)
        || opencl_name(mangled).is_some_and(is_sub_group_function)
}

/// Whether `f` (transitively) calls a synchronising builtin.
fn reaches_sync(f: &str, callees: &HashMap<&str, BTreeSet<String>>) -> bool {
    reaches(f, callees, &synchronises)
}

/// Whether `f` (transitively) calls an async-copy builtin, which finds its work-item
/// through a thread-local pointer to the context rather than a parameter.
fn reaches_async(f: &str, callees: &HashMap<&str, BTreeSet<String>>) -> bool {
    reaches(f, callees, &|g| g.contains("async_work_group") || g.contains("wait_group_events"))
}

fn reaches(f: &str, callees: &HashMap<&str, BTreeSet<String>>, hit: &dyn Fn(&str) -> bool) -> bool {
    let mut seen = HashSet::new();
    let mut todo = vec![f.to_string()];
    while let Some(g) = todo.pop() {
        if !seen.insert(g.clone()) {
            continue;
        }
        if hit(&g) {
            return true;
        }
        if let Some(cs) = callees.get(g.as_str()) {
            todo.extend(cs.iter().cloned());
        }
    }
    false
}

/// How a call synchronises the work-items of a group, for the region transform.
fn sync_kind(callee: &str, defined: &HashSet<&str>, callees: &HashMap<&str, BTreeSet<String>>) -> Sync {
    match callee {
        c if !defined.contains(c) && context::by_symbol(c).is_some_and(|b| b.role == Role::Barrier) => Sync::Barrier,
        c if c.starts_with("_Z17wait_group_events") => Sync::ThenBarrier,
        c if defined.contains(c) && reaches_sync(c, callees) => Sync::Unsupported,
        c if synchronises(c) => Sync::Unsupported,
        _ => Sync::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"%struct.S = type { float, i32, [5 x i8] }
@tiled.tile = internal unnamed_addr addrspace(3) global [64 x float] undef, align 16
define dso_local spir_kernel void @saxpy(ptr addrspace(1) nocapture noundef align 4 %0, float noundef %1, i8 noundef signext %2) local_unnamed_addr #0 !kernel_arg_addr_space !6 !kernel_arg_access_qual !7 !kernel_arg_type !8 !kernel_arg_base_type !8 !kernel_arg_type_qual !9 {
  %4 = tail call i64 @_Z13get_global_idj(i32 noundef 0) #5
  %5 = tail call float @helper(float %1) #5
  ret void
}
define internal float @helper(float %0) {
  %2 = call i64 @_Z12get_local_idj(i32 0)
  %3 = call i32 @_Z12get_work_dimv()
  ret float %0
}
define dso_local spir_kernel void @blind(ptr addrspace(1) noundef align 4 %0) !kernel_arg_addr_space !21 !kernel_arg_access_qual !22 !kernel_arg_type !23 !kernel_arg_base_type !23 !kernel_arg_type_qual !22 {
  %2 = tail call i64 @_Z13get_global_idj(i32 noundef 0)
  %3 = tail call i64 @_Z20get_global_linear_idv()
  ret void
}
define dso_local spir_kernel void @tiled(ptr addrspace(3) noundef align 4 %0, <4 x float> noundef %1, ptr nocapture noundef readonly byval(%struct.S) align 4 %2) #3 !kernel_arg_addr_space !15 !kernel_arg_access_qual !16 !kernel_arg_type !17 !kernel_arg_base_type !17 !kernel_arg_type_qual !18 !kernel_arg_name !19 !reqd_work_group_size !20 {
  tail call void @_Z7barrierj(i32 noundef 1) #6
  ret void
}
declare i64 @_Z13get_global_idj(i32 noundef)
!6 = !{i32 1, i32 0, i32 0}
!7 = !{!"none", !"none", !"none"}
!8 = !{!"float*", !"float", !"char"}
!9 = !{!"const", !"", !""}
!15 = !{i32 3, i32 0, i32 0}
!16 = !{!"none", !"none", !"none"}
!17 = !{!"float*", !"float4", !"S"}
!18 = !{!"", !"", !""}
!19 = !{!"scratch", !"v", !"s"}
!20 = !{i32 64, i32 1, i32 1}
!21 = !{i32 1}
!22 = !{!""}
!23 = !{!"int*"}
"#;

    #[test]
    fn kernels_and_argument_layout() {
        let r = rewrite(SAMPLE).unwrap();
        let saxpy = &r.kernels[0];
        assert_eq!(saxpy.name, "saxpy");
        let offs: Vec<(usize, usize)> = saxpy.args.iter().map(|a| (a.offset, a.size)).collect();
        assert_eq!(offs, vec![(0, 8), (8, 4), (12, 1)]);
        assert_eq!(saxpy.args[0].kind, ArgKind::Buffer);
        assert_eq!(saxpy.args[0].type_qual, "const");
        assert!(!saxpy.fibers);
        // Its helper asks the local id.
        assert_eq!(saxpy.group_use, GroupUse::Ids);
        assert_eq!(r.kernels[1].group_use, GroupUse::Blind);
        let tiled = &r.kernels[2];
        assert_eq!(tiled.group_use, GroupUse::Whole);
        assert_eq!(tiled.args[0].kind, ArgKind::Local);
        assert_eq!((tiled.args[1].offset, tiled.args[1].size), (16, 16));
        assert_eq!((tiled.args[2].offset, tiled.args[2].size), (32, 16));
        assert_eq!(tiled.args[2].name.as_deref(), Some("s"));
        assert_eq!(tiled.static_local_size, 256);
        assert!(!tiled.fibers);
        assert_eq!(tiled.frame_size, 0);
        assert_eq!(tiled.reqd_work_group_size, Some([64, 1, 1]));
        assert_eq!(tiled.attributes, "reqd_work_group_size(64,1,1)");
    }

    #[test]
    fn context_reaches_callers_of_queries() {
        let m = rewrite(SAMPLE).unwrap().module;
        assert!(m.contains("@saxpy(ptr addrspace(1) nocapture noundef align 4 %0, float noundef %1, i8 noundef signext %2, ptr %__ferrocl_ctx)"));
        assert!(m.contains("call i64 @_Z13get_global_idj(i32 noundef 0, ptr %__ferrocl_ctx)"));
        assert!(m.contains("call float @helper(float %1, ptr %__ferrocl_ctx)"));
        assert!(m.contains("define internal float @helper(float %0, ptr %__ferrocl_ctx)"));
        assert!(m.contains("call i32 @_Z12get_work_dimv(ptr %__ferrocl_ctx)"));
        // tiled's barrier became the end of its first region.
        assert!(!m.contains("call void @_Z7barrierj("));
        assert!(m.contains("define internal spir_func i32 @tiled("));
        assert!(m.contains("  ret i32 1\n__fcl_r1:\n  ret i32 0"));
    }

    #[test]
    fn inline_only_definitions_become_the_programs_own() {
        let text = "define available_externally i32 @g(i32 noundef %0) #0 {\n  ret i32 %0\n}\n";
        assert_eq!(inline_definitions_kept(text), "define internal i32 @g(i32 noundef %0) #0 {\n  ret i32 %0\n}\n");
        assert!(matches!(inline_definitions_kept(SAMPLE), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn kernel_attributes_are_written_as_in_the_source() {
        let md: HashMap<String, Vec<String>> = [
            ("!1", vec!["<4 x i32> undef", "i32 0"]),
            ("!2", vec!["i32 1", "i32 2", "i32 3"]),
            ("!3", vec!["<16 x half> undef", "i32 0"]),
            ("!4", vec!["i8 undef", "i32 1"]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
        let define =
            "define spir_kernel void @k() !vec_type_hint !1 !work_group_size_hint !2 !reqd_work_group_size !2 {";
        assert_eq!(
            kernel_attributes(define, &md),
            "vec_type_hint(uint4) work_group_size_hint(1,2,3) reqd_work_group_size(1,2,3)"
        );
        assert_eq!(kernel_attributes("define void @h() !vec_type_hint !3 {", &md), "vec_type_hint(half16)");
        assert_eq!(kernel_attributes("define void @c() !vec_type_hint !4 {", &md), "vec_type_hint(char)");
        assert_eq!(kernel_attributes("define void @none() {", &md), "");
    }

    #[test]
    fn locals_become_thread_local_and_visible() {
        let m = rewrite(SAMPLE).unwrap().module;
        assert!(m.contains(
            "@tiled.tile = hidden thread_local(localdynamic) unnamed_addr addrspace(3) global [64 x float] undef"
        ));
    }

    #[test]
    fn launchers_unpack_the_block() {
        let m = rewrite(SAMPLE).unwrap().module;
        assert!(m.contains("call spir_func void @saxpy(ptr addrspace(1) %a0, float %a1, i8 signext %a2, ptr %ctx)"));
        assert!(m.contains(
            "call spir_func i32 @tiled(ptr addrspace(3) %a0, <4 x float> %a1, ptr byval(%struct.S) %p2, ptr %ctx, \
             ptr %frames, ptr %uniform, i32 %resume)"
        ));
        assert!(m.contains("define void @__ferrocl_launch_tiled("));
        assert!(m.contains("call i32 @__ferrocl_items_tiled(ptr %group, ptr %args, ptr %frames, ptr %uniform, i32 1)"));
        // Only fiber kernels have a per-work-item entry point; kernels are internal.
        assert!(!m.contains("define void @__ferrocl_item_tiled("));
        assert!(!m.contains("define void @__ferrocl_item_saxpy("));
        assert!(m.contains("define internal spir_func void @saxpy("));
    }

    #[test]
    fn async_copies_take_the_context_through_their_fast_paths() {
        const COPY: &str = "_Z21async_work_group_copyPU7CLlocalfPU8CLglobalKfm9ocl_event";
        const WAIT: &str = "_Z17wait_group_eventsiPU9CLgeneric9ocl_event";
        let module = format!(
            "define void @tile(ptr addrspace(1) %g, ptr addrspace(3) %l) {{
  %e = call ptr @{COPY}(ptr addrspace(3) %l, ptr addrspace(1) %g, i64 4, ptr null)
  %p = alloca ptr
  call void @{WAIT}(i32 1, ptr addrspace(4) %p)
  ret void
}}
declare ptr @{COPY}(ptr addrspace(3), ptr addrspace(1), i64, ptr)
declare void @{WAIT}(i32, ptr addrspace(4))
"
        );
        let m = rewrite(&module).unwrap().module;
        // The builtin itself (the archive's export) gets the context as a last parameter,
        // and is called through the inline fast path, which receives it first.
        assert!(m.contains(&format!("declare ptr @{COPY}(ptr addrspace(3), ptr addrspace(1), i64, ptr, ptr)")), "{m}");
        // A contiguous import's path also receives its element's size (float: 4 bytes).
        assert!(m.contains(&format!(
            "call ptr @__ferrocl_fast_copy_l(ptr @{COPY}, i64 4, ptr addrspace(3) %l, ptr addrspace(1) %g, i64 4, \
             ptr null, ptr %__ferrocl_ctx)"
        )));
        assert!(m.contains(&format!(
            "call void @__ferrocl_fast_wait_generic(ptr @{WAIT}, i32 1, ptr addrspace(4) %p, ptr %__ferrocl_ctx)"
        )));
        assert!(m.contains(
            "declare ptr @__ferrocl_fast_copy_l(ptr, i64, ptr addrspace(3), ptr addrspace(1), i64, ptr, ptr)"
        ));
        assert!(m.contains("declare void @__ferrocl_fast_wait_generic(ptr, i32, ptr addrspace(4), ptr)"));
        assert_eq!(
            fast_path("_Z26async_work_group_copy_3D3DPU8CLglobalvmPU7CLlocalKvmmmmmmmmm9ocl_event", true).unwrap().1,
            "declare ptr @__ferrocl_fast_3d_g(ptr, ptr addrspace(1), i64, ptr addrspace(3), i64, i64, i64, i64, i64, i64, \
             i64, i64, i64, ptr, ptr)"
        );
        assert!(fast_path("_Z27async_work_group_copy_fencej", true).is_none());
        // In a kernel ordering its copies with fences, the engine moves them (size 0).
        let fenced = format!(
            "{module}declare void @_Z27async_work_group_copy_fencej(i32)\n\
             define void @f() {{\n  call void @_Z27async_work_group_copy_fencej(i32 1)\n  ret void\n}}\n"
        );
        let m = rewrite(&fenced).unwrap().module;
        assert!(m.contains(&format!("call ptr @__ferrocl_fast_copy_l(ptr @{COPY}, i64 0, ")), "{m}");
    }

    #[test]
    fn element_sizes_follow_the_mangled_type() {
        for (ty, bytes) in [("f", 4), ("c", 1), ("Dh", 2), ("Dv4_f", 16), ("Dv3_s", 8), ("Dv16_d", 128), ("m", 8)] {
            assert_eq!(element_bytes(&format!("{ty}PU8CLglobal")), Some(bytes), "{ty}");
        }
        assert_eq!(element_bytes("v"), None);
        assert_eq!(element_bytes("Dvx_f"), None);
    }

    #[test]
    fn kernels_calling_collectives_run_as_regions() {
        let module = "define dso_local spir_kernel void @sum(ptr addrspace(1) noundef align 4 %0) #0 \
            !kernel_arg_addr_space !1 !kernel_arg_access_qual !2 !kernel_arg_type !3 !kernel_arg_base_type !3 \
            !kernel_arg_type_qual !4 {
  %2 = load i32, ptr addrspace(1) %0, align 4
  %3 = call i32 @_Z21work_group_reduce_addi(i32 noundef %2) #1
  store i32 %3, ptr addrspace(1) %0, align 4
  ret void
}
declare i32 @_Z21work_group_reduce_addi(i32 noundef)
!1 = !{i32 1}
!2 = !{!\"none\"}
!3 = !{!\"int*\"}
!4 = !{!\"\"}
";
        let r = rewrite(module).unwrap();
        let k = &r.kernels[0];
        assert!(k.regions && !k.fibers, "{k:?}");
        assert!(r.module.contains("call void @__ferrocl_wg_put_i(i32 %__v2, ptr %__ferrocl_ctx)"), "{}", r.module);
        assert!(r.module.contains("declare i32 @__ferrocl_wg_get_i(i32, ptr)"), "{}", r.module);
    }

    #[test]
    fn metadata_strings_are_unescaped() {
        assert_eq!(md_string(r#"!"a\22b""#), "a\"b");
        assert_eq!(md_string(r#"!"float*""#), "float*");
    }
}
