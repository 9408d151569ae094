//! Validation mode for async copies (`FERROCL_VALIDATE=1`, or `=delay` to also hold
//! every copy back until its wait): reports kernels that misuse copies, in the words
//! Oclgrind uses, naming the kernel, the work-group and the work-item. Off, it costs
//! one branch per copy operation.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use ferrocl_kernel_abi::AsyncCopy;

use super::shape;

#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Mode {
    Off,
    Check,
    /// Check, and run every copy only when waited for (or at the group's end), so a
    /// kernel that reads a copy's destination too early reads stale data every time.
    Delay,
}

pub(crate) static MODE: LazyLock<Mode> = LazyLock::new(|| match std::env::var("FERROCL_VALIDATE").as_deref() {
    Ok("delay") => Mode::Delay,
    Ok("") | Ok("0") | Err(_) => Mode::Off,
    Ok(_) => Mode::Check,
});

/// What validation knows about the launch: the kernel and the memory it may copy.
#[derive(Default)]
pub(crate) struct Launch {
    pub(crate) kernel: Arc<str>,
    /// `[start, end)` of each buffer argument.
    pub(crate) buffers: Vec<(usize, usize)>,
    /// Whether an address lies in one of the kernel's own `__local` variables (this
    /// thread's copies), where the kernel library answers that.
    pub(crate) static_local: Option<StaticLocalFn>,
}

impl Launch {
    /// What a launch's groups check against, or `None` outside validation mode (which
    /// the engine reads from `FERROCL_VALIDATE` itself).
    pub(crate) fn when_validating(
        kernel: &str,
        buffers: &[(usize, usize)],
        static_local: Option<StaticLocalFn>,
    ) -> Option<Arc<Launch>> {
        (*MODE != Mode::Off)
            .then(|| Arc::new(Launch { kernel: kernel.into(), buffers: buffers.to_vec(), static_local }))
    }
}

/// The kernel library's `__ferrocl_static_local_query`.
pub(crate) type StaticLocalFn = unsafe extern "C" fn(*const u8) -> bool;

/// One group's checks.
#[derive(Default)]
pub(crate) struct Validator {
    pub(crate) launch: Arc<Launch>,
    pub(crate) group: [usize; 3],
    pub(crate) local_size: [usize; 3],
    /// `[start, end)` of the group's `__local` argument memory, when the kernel has no
    /// `__local` variables of its own (those live elsewhere, so local addresses outside
    /// the arguments cannot be judged then).
    pub(crate) local: Option<(usize, usize)>,
    waits: HashSet<(usize, usize)>,
    reported: HashSet<String>,
}

impl Validator {
    pub(crate) fn begin(
        &mut self,
        launch: Arc<Launch>,
        group: [usize; 3],
        local_size: [usize; 3],
        local: Option<(usize, usize)>,
    ) {
        self.launch = launch;
        self.group = group;
        self.local_size = local_size;
        self.local = local;
        self.waits.clear();
        self.reported.clear();
    }

    fn item_id(&self, item: usize) -> [usize; 3] {
        let [x, y, _] = self.local_size;
        [item % x.max(1), item / x.max(1) % y.max(1), item / (x.max(1) * y.max(1))]
    }

    pub(crate) fn report(&mut self, item: usize, what: &str) {
        // Each problem once per group: a kernel wrong for one work-item is usually
        // wrong for all of them.
        if !self.reported.insert(what.to_string()) {
            return;
        }
        let [gx, gy, gz] = self.group;
        let [lx, ly, lz] = self.item_id(item);
        eprintln!(
            "FerroCL validation: kernel {}, work-group ({gx},{gy},{gz}), work-item ({lx},{ly},{lz}): {what}",
            self.launch.kernel
        );
    }

    /// A copy issued by `item`: its arguments. `false` when it is invalid: it is then
    /// reported and not performed (it could write memory it must not touch).
    pub(crate) fn issued(&mut self, item: usize, c: &AsyncCopy) -> bool {
        let mut valid = true;
        let strided = c.per_line == 1 && c.lines > 1;
        if strided && (c.src_line == 0 || c.dst_line == 0) {
            self.report(item, "async copy with a stride of zero");
            valid = false;
        }
        let (overlaps_dst, overlaps_src) = overlapping(c);
        if overlaps_dst {
            self.report(item, "async copy destination lines or planes overlap");
            valid = false;
        }
        if overlaps_src && !strided {
            self.report(item, "async copy source lines or planes overlap");
            valid = false;
        }
        if shape::bytes(c) == 0 {
            return valid;
        }
        let (src, dst) = (extent(c, c.src, c.src_line, c.src_plane), extent(c, c.dst, c.dst_line, c.dst_plane));
        let (global, local) = if c.to_local == 1 { (src, dst) } else { (dst, src) };
        if !self.launch.buffers.iter().any(|&(s, e)| s <= global.0 && global.1 <= e) {
            self.report(
                item,
                &format!(
                    "async copy accesses global memory outside any buffer argument ({:#x}..{:#x})",
                    global.0, global.1
                ),
            );
            valid = false;
        }
        if let Some((s, e)) = self.local {
            // SAFETY: the query only compares the address with its variables' addresses;
            // this thread runs the group, so they are the group's copies.
            let in_variables = |a: usize| self.launch.static_local.is_some_and(|f| unsafe { f(a as *const u8) });
            let inside = (s <= local.0 && local.1 <= e) || (in_variables(local.0) && in_variables(local.1 - 1));
            if !inside {
                self.report(
                    item,
                    &format!(
                        "async copy accesses local memory outside the group's local arguments and variables \
                         ({:#x}..{:#x})",
                        local.0, local.1
                    ),
                );
                valid = false;
            }
        }
        valid
    }

    /// `item` reached copy operation `k` with arguments different from the first
    /// arrival's.
    pub(crate) fn divergent(&mut self, item: usize, k: usize) {
        self.report(item, &format!("work-group divergence detected (async copy {k} called with different arguments)"));
    }

    pub(crate) fn waited(&mut self, item: usize, event: usize) {
        self.waits.insert((item, event));
    }

    pub(crate) fn unknown_event(&mut self, item: usize, event: usize) {
        self.report(item, &format!("invalid wait event {event:#x}"));
    }

    /// The group ended: copies not every work-item executed, events not every
    /// work-item waited for.
    pub(crate) fn finish(&mut self, reached: &[u32], ops: usize, events: &[usize]) {
        let items = reached.len();
        for k in 0..ops {
            let n = reached.iter().filter(|&&r| r as usize > k).count();
            if n < items {
                let first_missing = reached.iter().position(|&r| r as usize <= k).unwrap_or(0);
                self.report(first_missing, &format!("only {n} out of {items} work-items executed async copy {k}"));
            }
        }
        for &e in events {
            if let Some(item) = (0..items).find(|&i| !self.waits.contains(&(i, e))) {
                self.report(item, &format!("work-item finished without waiting for events (event {e})"));
            }
        }
    }
}

/// `[first byte, past the last byte)` a side of the copy touches.
fn extent(c: &AsyncCopy, base: usize, line: usize, plane: usize) -> (usize, usize) {
    let last = (c.planes - 1).saturating_mul(plane).saturating_add((c.lines - 1).saturating_mul(line));
    let end = last.saturating_add(c.per_line).saturating_mul(c.elem);
    (base, base.saturating_add(end))
}

/// Whether consecutive lines (or planes) of the destination / source overlap.
fn overlapping(c: &AsyncCopy) -> (bool, bool) {
    let side = |line: usize, plane: usize| {
        (c.lines > 1 && line < c.per_line) || (c.planes > 1 && plane < (c.lines - 1) * line + c.per_line)
    };
    if c.per_line == 1 {
        // Strided copies: lines of one element; a stride of zero is reported as such.
        return (false, false);
    }
    (side(c.dst_line, c.dst_plane), side(c.src_line, c.src_plane))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_and_extent() {
        let c = AsyncCopy {
            elem: 4,
            per_line: 8,
            lines: 3,
            planes: 2,
            src_line: 8,
            src_plane: 24,
            dst_line: 6,
            dst_plane: 30,
            ..Default::default()
        };
        assert_eq!(overlapping(&c), (true, false));
        assert_eq!(extent(&c, 100, c.src_line, c.src_plane), (100, 100 + (24 + 16 + 8) * 4));
        let tight = AsyncCopy { dst_line: 8, dst_plane: 23, ..c };
        assert_eq!(overlapping(&tight), (true, false));
    }
}
