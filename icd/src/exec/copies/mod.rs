//! The async-copy engine: what `async_work_group_copy` and its relatives do.
//!
//! A CPU has no DMA engine: what a copy can overlap with is the work of other cores,
//! and a group's copies into local memory are bound by its own core's ingest, whoever
//! moves them (the group reads what it imports, and lines another core wrote cost it
//! as much as fetching them). So copies move where they are issued: contiguous imports
//! in kernels run as regions by the work-items as they pass the call (the kernel-side
//! fast path in `builtins/clc/workitem.c`), every other copy here, by the work-item
//! that issues it, with non-temporal stores when the launch streams past the cache.
//! Background copy workers on idle cores were measured for exports until session 29
//! and never beat this on either host (DESIGN.md "Async copies"). Events still name the
//! copies: waits, fences and validation (whose delay mode holds each copy until its
//! wait) work on them.
//!
//! `shape` moves the bytes, `group` is one work-group's view (which work-item reached
//! which copy, its events, waits and fences) and the entry points kernels reach through
//! the services table, `validate` the optional checks of how kernels use them.

pub(crate) mod group;
pub(crate) mod shape;
pub(crate) mod validate;
