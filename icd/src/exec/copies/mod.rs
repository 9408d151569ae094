//! The async-copy engine: what `async_work_group_copy` and its relatives do.
//!
//! A CPU has no DMA engine: what a copy can overlap with is the group's own
//! computation, or the work of other cores. A contiguous import is bound by the group's
//! own core's ingest, whoever moves it (the group reads what it imports, and lines
//! another core wrote cost it as much as fetching them), so kernel code moves it itself,
//! beside its computation (the kernel-side fast path in `builtins/clc/workitem.c`). A
//! gather of short rows is bound by latency, which more cores divide. Every copy but a
//! contiguous import moves here: by the work-item that issues it, with non-temporal stores when the launch streams past the cache,
//! or, with `FERROCL_COPY_WORKERS` set, in parts by pool workers the launch leaves idle
//! (`helpers`; DESIGN.md "Async copies" says why not by default yet). Events name the
//! copies: waits, fences and validation (whose delay mode holds each copy until its
//! wait) work on them.
//!
//! `shape` moves the bytes, `group` is one work-group's view (which work-item reached
//! which copy, its events, waits and fences) and the entry points kernels reach through
//! the services table, `helpers` the copy workers, `validate` the optional checks of how
//! kernels use them.

pub(crate) mod group;
pub(crate) mod helpers;
pub(crate) mod shape;
pub(crate) mod validate;
