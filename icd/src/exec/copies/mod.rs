//! The async-copy engine: what `async_work_group_copy` and its relatives do.
//!
//! A CPU has no DMA engine, so "asynchronous" has to come from hardware the computing
//! work-group leaves idle (see DESIGN.md, "Async copies", for what was measured;
//! software prefetch of the source, tried twice, stalled the issuing work-item and
//! was removed):
//!
//! - idle cores: while some compute worker has no group, copies big enough to be worth
//!   a hand-off are offered to background copy workers, which run at idle priority and
//!   so only take cores no compute worker uses (with every worker busy, copies run
//!   when issued: nothing else could run them meanwhile);
//! - whoever waits first for a copy that nobody has started runs it itself, so an async
//!   copy never costs more than a synchronous one.
//!
//! `shape` moves the bytes, `engine` holds the jobs and the background workers, `group`
//! is one work-group's view (which work-item reached which copy, its events, waits and
//! fences) and the entry points kernels reach through the services table, `validate`
//! the optional checks of how kernels use them.

pub mod engine;
pub mod group;
pub mod shape;
pub mod validate;
