/* Work-item functions and helpers of the work-group loops, compiled by the driver to
 * LLVM bitcode with the same clang and target flags as the kernels and linked into each
 * kernel's module, so that queries inline into the kernel and the loop over work-items
 * (generated per kernel, icd/src/compiler/passes/launcher.rs) is optimised with its body.
 *
 * The driver rewrites every kernel-module function that calls a work-item query to
 * take a hidden trailing `ferrocl_ctx *` parameter; queries read it, so in the item
 * loop they become the loop's induction variables instead of memory loads. */

#include "workitem.h"

INLINE void ctx_init(ferrocl_ctx *c, const ferrocl_group *g) {
    for (int d = 0; d < 3; d++) {
        c->gid[d] = g->group_id[d];
        c->lsz[d] = g->local_size[d];
        c->elsz[d] = g->enqueued_local_size[d];
        c->off[d] = g->global_offset[d];
        c->gsz[d] = g->global_size[d];
        c->ngr[d] = g->num_groups[d];
    }
    c->dim = g->work_dim;
    c->alone = 0;
    c->group = g;
    c->copies = g->copies;
    c->item = 0;
    c->stack_top = g->stack_top;
    const ferrocl_copy_log *log = g->copies;
    c->in_place = log && log->defer && !log->slow;
}

/* Queries: the OpenCL functions with the context as a trailing argument. Out-of-range
 * dimensions return the values the spec gives for them. */
CONTEXT_FN(unsigned, get_work_dim, const ferrocl_ctx *c) { return c->dim; }
CONTEXT_FN(size_t, get_global_size, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->gsz[d] : 1; }
CONTEXT_FN(size_t, get_global_id, unsigned d, const ferrocl_ctx *c) {
    return d < 3 ? c->gid[d] * c->elsz[d] + c->lid[d] + c->off[d] : 0;
}
CONTEXT_FN(size_t, get_local_size, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->lsz[d] : 1; }
CONTEXT_FN(size_t, get_enqueued_local_size, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->elsz[d] : 1; }
CONTEXT_FN(size_t, get_local_id, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->lid[d] : 0; }
CONTEXT_FN(size_t, get_num_groups, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->ngr[d] : 1; }
CONTEXT_FN(size_t, get_group_id, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->gid[d] : 0; }
CONTEXT_FN(size_t, get_global_offset, unsigned d, const ferrocl_ctx *c) { return d < 3 ? c->off[d] : 0; }
CONTEXT_FN(size_t, get_global_linear_id, const ferrocl_ctx *c) {
    size_t id[3];
    for (int d = 0; d < 3; d++) id[d] = c->gid[d] * c->elsz[d] + c->lid[d];
    return (id[2] * c->gsz[1] + id[1]) * c->gsz[0] + id[0];
}
CONTEXT_FN(size_t, get_local_linear_id, const ferrocl_ctx *c) {
    return (c->lid[2] * c->lsz[1] + c->lid[1]) * c->lsz[0] + c->lid[0];
}
/* Sub-groups: runs of the kernel's sub-group size S (`ferrocl_group::sub_group_size`)
 * in x, the last of a row shorter where the row's width is no multiple of S, numbered
 * row after row: the work-items one SIMD step of the item loop runs together, and the
 * layout of Intel's CPU runtime, which SYCL code is written against. The sub-groups of
 * a group run one after another on its thread, so they make no independent forward
 * progress (the device says so). The functions are barriers around helpers
 * (collectives.c) that fold the operands of the work-item's own sub-group. */
INLINE size_t sg_per_row(size_t width, const ferrocl_ctx *c) { return (width + sg_width(c) - 1) / sg_width(c); }
CONTEXT_FN(unsigned, get_sub_group_size, const ferrocl_ctx *c) { return (unsigned)sg_size(c); }
CONTEXT_FN(unsigned, get_max_sub_group_size, const ferrocl_ctx *c) {
    return (unsigned)(c->elsz[0] < sg_width(c) ? c->elsz[0] : sg_width(c));
}
CONTEXT_FN(unsigned, get_num_sub_groups, const ferrocl_ctx *c) {
    return (unsigned)(sg_per_row(c->lsz[0], c) * c->lsz[1] * c->lsz[2]);
}
CONTEXT_FN(unsigned, get_enqueued_num_sub_groups, const ferrocl_ctx *c) {
    return (unsigned)(sg_per_row(c->elsz[0], c) * c->elsz[1] * c->elsz[2]);
}
CONTEXT_FN(unsigned, get_sub_group_id, const ferrocl_ctx *c) {
    size_t row = c->lid[2] * c->lsz[1] + c->lid[1];
    return (unsigned)(row * sg_per_row(c->lsz[0], c) + c->lid[0] / sg_width(c));
}
CONTEXT_FN(unsigned, get_sub_group_local_id, const ferrocl_ctx *c) { return (unsigned)(c->lid[0] % sg_width(c)); }

/* cl_khr_subgroup_ballot's masks (bit i: sub-group local id i) and arithmetic on
 * ballots, counting only the bits of the sub-group's work-items. */
typedef unsigned ferrocl_uint4 __attribute__((ext_vector_type(4)));
INLINE int ballot_bit(ferrocl_uint4 v, size_t i) { return i < 128 && (v[i / 32] >> (i % 32)) & 1; }
/* The bits of ids from `lo` up to (not including) `hi`. */
INLINE ferrocl_uint4 id_range(size_t lo, size_t hi) {
    ferrocl_uint4 r = 0;
    for (size_t i = lo; i < hi && i < 128; i++) r[i / 32] |= 1u << (i % 32);
    return r;
}
CONTEXT_FN(ferrocl_uint4, get_sub_group_eq_mask, const ferrocl_ctx *c) { return id_range(sg_local(c), sg_local(c) + 1); }
/* The masks and the bit counts and searches below take the bits of the sub-group's
 * largest size (`get_max_sub_group_size`), as the Khronos CTS reads them, also in a
 * row's shorter last sub-group. */
CONTEXT_FN(ferrocl_uint4, get_sub_group_ge_mask, const ferrocl_ctx *c) { return id_range(sg_local(c), sg_width(c)); }
CONTEXT_FN(ferrocl_uint4, get_sub_group_gt_mask, const ferrocl_ctx *c) { return id_range(sg_local(c) + 1, sg_width(c)); }
CONTEXT_FN(ferrocl_uint4, get_sub_group_le_mask, const ferrocl_ctx *c) { return id_range(0, sg_local(c) + 1); }
CONTEXT_FN(ferrocl_uint4, get_sub_group_lt_mask, const ferrocl_ctx *c) { return id_range(0, sg_local(c)); }
CONTEXT_FN(int, sub_group_inverse_ballot, ferrocl_uint4 v, const ferrocl_ctx *c) { return ballot_bit(v, sg_local(c)); }
CONTEXT_FN(int, sub_group_ballot_bit_extract, ferrocl_uint4 v, unsigned i, const ferrocl_ctx *c) {
    (void)c;
    return ballot_bit(v, i);
}
/* The number of set bits of `v` among ids `lo` up to `hi`. */
INLINE unsigned bits_between(ferrocl_uint4 v, size_t lo, size_t hi) {
    ferrocl_uint4 m = v & id_range(lo, hi);
    return __builtin_popcount(m.x) + __builtin_popcount(m.y) + __builtin_popcount(m.z) + __builtin_popcount(m.w);
}
CONTEXT_FN(unsigned, sub_group_ballot_bit_count, ferrocl_uint4 v, const ferrocl_ctx *c) { return bits_between(v, 0, sg_width(c)); }
CONTEXT_FN(unsigned, sub_group_ballot_inclusive_scan, ferrocl_uint4 v, const ferrocl_ctx *c) {
    return bits_between(v, 0, sg_local(c) + 1);
}
CONTEXT_FN(unsigned, sub_group_ballot_exclusive_scan, ferrocl_uint4 v, const ferrocl_ctx *c) {
    return bits_between(v, 0, sg_local(c));
}
/* The lowest and highest set bit among the sub-group's; with none, undefined: the
 * sub-group's size and -1. */
CONTEXT_FN(unsigned, sub_group_ballot_find_lsb, ferrocl_uint4 v, const ferrocl_ctx *c) {
    size_t i = 0;
    while (i < sg_width(c) && !ballot_bit(v, i)) i++;
    return (unsigned)i;
}
CONTEXT_FN(unsigned, sub_group_ballot_find_msb, ferrocl_uint4 v, const ferrocl_ctx *c) {
    size_t i = sg_width(c);
    while (i > 0 && !ballot_bit(v, i - 1)) i--;
    return (unsigned)i - 1;
}
CONTEXT_FN(int, sub_group_elect, const ferrocl_ctx *c) { return sg_local(c) == 0; }

/* For the item loops the driver generates per kernel (icd/src/compiler/passes/launcher.rs):
 * the context of a group, the loop bounds, the running work-item's id, and the frame
 * memory of kernels run as barrier regions. The loop keeps the context in an alloca of
 * 256 bytes. */
_Static_assert(sizeof(ferrocl_ctx) <= 256, "the launcher reserves 256 bytes for the context");
QUERY void __ferrocl_ctx_init(ferrocl_ctx *c, const ferrocl_group *g) { ctx_init(c, g); }
/* A group has at most 4096 work-items per dimension; the mask tells the optimiser the
 * 32-bit induction variables cannot overflow. */
QUERY unsigned __ferrocl_ctx_bound(const ferrocl_ctx *c, unsigned d) { return c->lsz[d] & 8191; }
QUERY void __ferrocl_ctx_set(ferrocl_ctx *c, size_t x, size_t y, size_t z) {
    c->lid[0] = x;
    c->lid[1] = y;
    c->lid[2] = z;
    c->item = (z * c->lsz[1] + y) * c->lsz[0] + x;
}
/* A kernel that reads group ids but shares nothing between its work-items runs
 * `Group::row` consecutive groups of a row in x per call: its launcher loops over them,
 * making the context each group in turn (the last of a row may be partial). */
QUERY unsigned __ferrocl_ctx_row(const ferrocl_ctx *c) { return c->group->row ? c->group->row : 1; }
QUERY void __ferrocl_ctx_row_group(ferrocl_ctx *c, unsigned i) {
    size_t id = c->group->group_id[0] + i;
    /* Where a fault finds it: the groups before it are done, those after it are not. */
    *(volatile size_t *)&c->group->row_at = i;
    size_t left = c->gsz[0] - id * c->elsz[0];
    c->gid[0] = id;
    c->lsz[0] = left < c->elsz[0] ? left : c->elsz[0];
}
/* A kernel that declares reqd_work_group_size, or that the driver built again for the
 * group size it runs with, has a second item loop for groups of exactly that size, where
 * the size is the constant the launcher passes here. */
QUERY int __ferrocl_group_sized(const ferrocl_group *g, size_t x, size_t y, size_t z) {
    return g->local_size[0] == x && g->local_size[1] == y && g->local_size[2] == z;
}
QUERY void __ferrocl_ctx_fix(ferrocl_ctx *c, size_t x, size_t y, size_t z) {
    c->lsz[0] = c->elsz[0] = x;
    c->lsz[1] = c->elsz[1] = y;
    c->lsz[2] = c->elsz[2] = z;
}
/* The first work-item runs a region for the whole group. */
QUERY void __ferrocl_ctx_alone(ferrocl_ctx *c) { c->alone = 1; }
/* A kernel's SIMD copy runs 8 work-items in x at once; it calls a work-group function
 * (an async copy, a wait) once per work-item, stepping the context to each in turn. */
QUERY void __ferrocl_ctx_lane(ferrocl_ctx *c, long step) {
    c->lid[0] += step;
    c->item += step;
}
/* Whether the group's sub-groups are exactly the chunks of `width` work-items a SIMD copy
 * runs: a kernel whose only barriers are sub-group ones then runs its flat copy, which
 * passes its collectives lane by lane with no barrier (passes/launcher.rs). */
QUERY _Bool __ferrocl_ctx_in_sub_groups(const ferrocl_ctx *c, size_t width) {
    return sg_width(c) == width && c->lsz[0] % width == 0;
}
QUERY void *__ferrocl_group_frames(const ferrocl_group *g) { return g->frames; }
QUERY size_t __ferrocl_group_items(const ferrocl_ctx *c) { return c->lsz[0] * c->lsz[1] * c->lsz[2]; }

/* Runs one work-item (a fiber of a kernel with barriers). */
QUERY void __ferrocl_run_item(const ferrocl_group *g, const char *args, const size_t *lid,
                             void (*item)(const char *, ferrocl_ctx *)) {
    ferrocl_ctx c;
    ctx_init(&c, g);
    c.lid[0] = lid[0];
    c.lid[1] = lid[1];
    c.lid[2] = lid[2];
    c.item = ferrocl_get_local_linear_id(&c);
    /* A fiber's private variables lie below this frame, on its own stack. */
    c.stack_top = __builtin_frame_address(0);
    item(args, &c);
}

/* barrier(flags), work_group_barrier(flags[, scope]): every work-item of the group must
 * arrive before any continues; sub_group_barrier: every work-item of its sub-group.
 * Fibers share one OS thread, so memory is coherent between them; the driver switches
 * to the next work-item. (Kernels run as regions have no barrier calls left.) */
INLINE void group_barrier(const ferrocl_ctx *c) { c->group->services->barrier(c->group); }
INLINE void sub_barrier(const ferrocl_ctx *c) { c->group->services->sub_group_barrier(c->group); }
#define BARRIER(NAME, WAIT) \
    CONTEXT_FN(void, NAME, unsigned flags, const ferrocl_ctx *c) { \
        (void)flags; \
        WAIT(c); \
    } \
    CONTEXT_FN(void, NAME##_scope, unsigned flags, int scope, const ferrocl_ctx *c) { \
        (void)flags; \
        (void)scope; \
        WAIT(c); \
    }
BARRIER(work_group_barrier, group_barrier)
BARRIER(sub_group_barrier, sub_barrier)
CONTEXT_FN(void, barrier, unsigned flags, const ferrocl_ctx *c) {
    (void)flags;
    group_barrier(c);
}

/* Unsigned division and remainder by a divisor known only at run time (a size query, a
 * kernel argument): where it is a power of two, as it mostly is for group and image
 * sizes, a shift or a mask instead of `div`, whose 10-40 cycles per work-item were 64%
 * of the bench's barrier kernel (`x[(l + 1) % get_local_size(0)]`). The test is the
 * same for every work-item of the loop. The IR rewrite (compiler/passes/division.rs) routes
 * the kernel's scalar `udiv` and `urem` here after guarding the divisor against 0. */
#define UNSIGNED_DIVISION(T, SUFFIX) \
    QUERY T __ferrocl_udiv_##SUFFIX(T x, T n) { return n & (n - 1) ? x / n : x >> __builtin_ctzg(n, 0); } \
    QUERY T __ferrocl_urem_##SUFFIX(T x, T n) { return n & (n - 1) ? x % n : x & (n - 1); }
UNSIGNED_DIVISION(unsigned, u32)
UNSIGNED_DIVISION(unsigned long, u64)

/* The async-copy builtins live in the Rust archive (builtins/src/async_copies.rs). Every
 * work-item of a group calls each copy and only the first issues it, so the IR rewrite
 * routes each call through one of these inline fast paths, which moves a contiguous copy
 * in place where it can (`moved`), hands the others the event straight from the group's
 * copy log (and notes deferred waits), and calls the archive's function, passed as
 * `slow`, only when the driver has work to do. Inline, the common call costs a few
 * loads; as a call into the archive it cost the double-buffered benchmark kernel 10%
 * (copies alone 4.6 -> 5.05 ms). */
typedef AS(3) void local_p;
typedef AS(1) void global_p;
typedef const AS(3) void const_local_p;
typedef const AS(1) void const_global_p;

/* Moves `n` bytes. Inline 64-byte moves: glibc's memmove costs a call and its size
 * dispatch per work-item's part, and for whole 16 KiB tiles it uses `rep movsb`, slower
 * on the 2-core AMD machine than these moves (DESIGN.md "Async copies"). A plain loop
 * would be turned back into the call. */
INLINE void move_bytes(char *d, const char *s, size_t n) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) __builtin_memcpy_inline(d + i, s + i, 64);
    for (; i < n; i++) d[i] = s[i];
}

/* This work-item's next copy operation was issued by an earlier one: take its event. */
INLINE int issued(const ferrocl_ctx *c, void **event) {
    ferrocl_copy_log *log = c->copies;
    size_t item = c->item;
    if (!log || log->slow || item >= log->items) return 0;
    unsigned k = log->reached[item];
    if (k >= log->ops) return 0;
    log->reached[item] = k + 1;
    *event = (void *)log->events[k];
    return 1;
}

/* Deferred imports (kernel-abi's `Deferred`). A contiguous import into local memory of
 * a kernel run as regions is noted by work-item 0 and moved a step at a time by the
 * group's compute loops (`__ferrocl_copy_step`, called once per step of a folded loop;
 * `__ferrocl_copy_share`, after each chunk of a region that computes),
 * so its loads overlap the computation on the tile before, as a kernel reading global
 * memory directly overlaps them; the wait moves what is left. Its event is the
 * destination with the top bit set, which every work-item computes alike and no driver
 * event has. Moved at once instead, on the 2-core Xeon, the bench's double-buffered tile
 * kernel spent 0.94 ms where reading global memory directly took 0.70, and 0.84-0.87
 * deferred (DESIGN.md "Async copies"). */
#define DEFERRED_TAG (1ul << 63)
#define DEFERRED_MAX 4
/* Smaller imports move at once: they cost less than their bookkeeping. */
#define DEFER_FROM 1024

/* Moves the rest of the oldest deferred import and drops it from the list. */
__attribute__((noinline)) static void finish_oldest(ferrocl_copy_log *log) {
    size_t at = log->deferred[0].at;
    move_bytes(log->deferred[0].dst + at, log->deferred[0].src + at, log->deferred[0].bytes - at);
    for (size_t i = 1; i < log->pending; i++) log->deferred[i - 1] = log->deferred[i];
    log->pending--;
}

__attribute__((noinline)) static void note_import(ferrocl_copy_log *log, char *dst, const char *src, size_t bytes) {
    if (log->pending == DEFERRED_MAX) finish_oldest(log);
    size_t k = log->pending++;
    log->deferred[k].dst = dst;
    log->deferred[k].src = src;
    log->deferred[k].bytes = bytes;
    log->deferred[k].at = 0;
}

/* The wait for a deferred import moves it and every older one, in order (a later import
 * may overwrite part of an earlier one's destination). An import already moved, or a
 * garbage event with the top bit set, finds nothing. */
__attribute__((noinline)) static void finish_import(ferrocl_copy_log *log, size_t event) {
    const char *dst = (const char *)(event & ~DEFERRED_TAG);
    size_t last = 0;
    for (size_t i = 0; i < log->pending; i++)
        if (log->deferred[i].dst == dst) last = i + 1;
    while (last--) finish_oldest(log);
}

/* A contiguous import into local memory with no event given, in a kernel run as regions:
 * deferred. Every work-item makes the same choice from the same arguments. */
INLINE int deferred(const ferrocl_ctx *c, size_t elem, char *dst, const char *src, size_t n, void *e, void **event) {
    size_t bytes;
    if (e || !elem || !c->in_place || __builtin_mul_overflow(n, elem, &bytes) || bytes < DEFER_FROM) return 0;
    if (c->item == 0) note_import(c->copies, dst, src, bytes);
    *event = (void *)((size_t)dst | DEFERRED_TAG);
    return 1;
}

/* The event a copy is given: one of a deferred import's moves that import now (the
 * driver, or a copy moved in place, cannot join it) and leaves the copy an event of its
 * own. */
INLINE void *joined(const ferrocl_ctx *c, void *e) {
    if (!((size_t)e & DEFERRED_TAG)) return e;
    ferrocl_copy_log *log = c->copies;
    if (c->in_place && log->pending) finish_import(log, (size_t)e);
    return 0;
}

/* Each step prefetches the source of the step this many steps ahead: a step's loads
 * then hit the cache where the source is in memory, as they do for a kernel streaming
 * through global memory, whose loads the hardware prefetcher runs ahead of. 16-core
 * host, one core, 64 MiB in 16 KiB tiles, the bench's double-buffered `tiles` kernel,
 * 8 steps of work per element, ms: 13.2-17.5 without, 11.9-12.7 with 3 steps ahead,
 * 11.8-12.1 with 6; the kernel copying its tiles by hand 12.3-12.8. */
#define PREFETCH_STEPS 6
/* Moves `step` more bytes of the oldest deferred import. */
INLINE void copy_steps(ferrocl_copy_log *log, size_t step) {
    size_t at = log->deferred[0].at;
    if (log->deferred[0].bytes - at <= step) {
        finish_oldest(log);
        return;
    }
    move_bytes(log->deferred[0].dst + at, log->deferred[0].src + at, step);
    log->deferred[0].at = at + step;
    size_t ahead = at + PREFETCH_STEPS * step, end = log->deferred[0].bytes;
    for (size_t i = 0; i < step && ahead + i < end; i += 64) __builtin_prefetch(log->deferred[0].src + ahead + i, 0, 3);
}

/* Called by the compiler once per step of a folded loop (a group's stride loop) in a
 * kernel that makes async copies (icd/src/compiler/passes/simd/fold.rs). */
QUERY void __ferrocl_copy_step(const ferrocl_ctx *c) {
    ferrocl_copy_log *log = c->copies;
    /* 4 bytes per work-item of the group (at least 256): the import of a tile of floats
     * as large as the loop's takes as many steps as the loop. */
    if (log && log->pending) {
        size_t step = 4 * c->lsz[0] * c->lsz[1] * c->lsz[2];
        copy_steps(log, step < 256 ? 256 : step);
    }
}

/* Called by the item loop of a region that computes after each `items` work-items
 * (`steps` set; icd/src/compiler/passes/launcher.rs): their share of the oldest import,
 * so that the import moves over one pass of the region. */
QUERY void __ferrocl_copy_share(const ferrocl_ctx *c, _Bool steps, size_t items) {
    ferrocl_copy_log *log = c->copies;
    if (steps && log && log->pending) {
        size_t group = c->lsz[0] * c->lsz[1] * c->lsz[2];
        size_t share = (log->deferred[0].bytes / group + 1) * items;
        copy_steps(log, (share + 63) & ~(size_t)63);
    }
}

/* Kernels run as regions: the waited events are noted and the region's end completes
 * them. Unknown events (the CTS passes an uninitialised one) are ignored; events past
 * 64 go to the driver. A null event (a copy moved in place) reads nothing from the log;
 * a deferred import's moves now. */
INLINE int noted(const ferrocl_ctx *c, int count, const size_t *ev) {
    ferrocl_copy_log *log = c->copies;
    if (!c->in_place) return 0;
    for (int i = 0; i < count; i++)
        if (ev[i] & DEFERRED_TAG && log->pending) finish_import(log, ev[i]);
    for (int i = 0; i < count; i++) {
        size_t e = ev[i];
        if (e && e - 1 < log->issued) {
            if (e > 64) return 0;
            log->waited |= 1ul << (e - 1);
        }
    }
    return 1;
}

/* Kernels run as regions, outside validation mode: a contiguous copy into local memory
 * that is not deferred (smaller, or given an event) moves as the work-items pass it, each its own 64-byte-aligned part, or the first
 * work-item all of it where it runs the region for the whole group (`alone`). The copy
 * needs no event: the wait for it ends the region, by which every part has moved. This
 * is a copy by hand with no bookkeeping per work-item (PoCL's copies are such loops
 * too). The group reads what it imports, so its own core moves it in any case; exports
 * go to the driver, which moves each at once with stores that stream past the cache
 * (docs/measurements/16-core-host.md, "Imports moved where they are called"). `elem` 0: the
 * kernel orders copies with fences, which the driver keeps (a work-item's parts of two
 * copies would move before another work-item's parts of the first). */
INLINE int moved(const ferrocl_ctx *c, size_t elem, char *dst, const char *src, size_t n) {
    size_t bytes;
    if (!elem || !c->in_place || __builtin_mul_overflow(n, elem, &bytes)) return 0;
    if (c->alone) {
        move_bytes(dst, src, bytes);
        return 1;
    }
    /* A shift for the usual power-of-two group: the division and what waited for it
     * took ~15% of a copy-bound kernel's samples at 2 KiB tiles (perf, 2-core machine). */
    size_t items = c->lsz[0] * c->lsz[1] * c->lsz[2], up = bytes + items - 1;
    size_t each = items & (items - 1) ? up / items : up >> __builtin_ctzl(items);
    size_t part = (each + 63) & ~(size_t)63;
    size_t at = c->item * part;
    if (at < bytes) move_bytes(dst + at, src + at, bytes - at < part ? bytes - at : part);
    return 1;
}

/* The driver's functions get a copy of the work-item's context (they read `group` and
 * `item`). Given the context itself, it escapes: the item loop then keeps it in memory,
 * stores it per work-item and reloads its fields after every store that may alias it,
 * even where the driver is never called (DESIGN.md "Async copies": the double-buffered
 * bench kernel ran 0.6 of the hand-written double buffer at 2 KiB tiles for this). */
#define OWN_CONTEXT(c) ferrocl_ctx own = *(c)

#define UNWRAP(...) __VA_ARGS__
/* NAME(slow, the builtin's parameters..., event, context). */
#define FAST_COPY(NAME, PARAMS, ARGS) \
    QUERY void *NAME(void *slow, UNWRAP PARAMS, void *e, const ferrocl_ctx *c) { \
        void *event; \
        e = joined(c, e); \
        if (issued(c, &event)) return event; \
        OWN_CONTEXT(c); \
        return ((void *(*)(UNWRAP PARAMS, void *, const ferrocl_ctx *))slow)(UNWRAP ARGS, e, &own); \
    }
#define COPY(D, S) (D *dst, S *src, size_t n), (dst, src, n)
#define STRIDED(D, S) (D *dst, S *src, size_t n, size_t stride), (dst, src, n, stride)
/* 2D2D and 3D3D: (dst, dst_offset, src, src_offset, sizes...). */
#define COPY_2D(D, S) \
    (D *dst, size_t d_off, S *src, size_t s_off, size_t a0, size_t a1, size_t a2, size_t a3, size_t a4), \
        (dst, d_off, src, s_off, a0, a1, a2, a3, a4)
#define COPY_3D(D, S) \
    (D *dst, size_t d_off, S *src, size_t s_off, size_t a0, size_t a1, size_t a2, size_t a3, size_t a4, size_t a5, \
     size_t a6, size_t a7), \
        (dst, d_off, src, s_off, a0, a1, a2, a3, a4, a5, a6, a7)
#define FAST(NAME, SHAPE) FAST_COPY(NAME, SHAPE)
/* Contiguous copies into local memory: (slow, element size, dst, src, n, event, context). */
QUERY void *__ferrocl_fast_copy_l(void *slow, size_t elem, local_p *dst, const_global_p *src, size_t n, void *e,
                                  const ferrocl_ctx *c) {
    void *event;
    e = joined(c, e);
    if (deferred(c, elem, (char *)dst, (const char *)src, n, e, &event)) return event;
    if (moved(c, elem, (char *)dst, (const char *)src, n)) return e;
    if (issued(c, &event)) return event;
    OWN_CONTEXT(c);
    return ((void *(*)(local_p *, const_global_p *, size_t, void *, const ferrocl_ctx *))slow)(dst, src, n, e, &own);
}
FAST(__ferrocl_fast_copy_g, COPY(global_p, const_local_p))
FAST(__ferrocl_fast_strided_l, STRIDED(local_p, const_global_p))
FAST(__ferrocl_fast_strided_g, STRIDED(global_p, const_local_p))
FAST(__ferrocl_fast_2d_l, COPY_2D(local_p, const_global_p))
FAST(__ferrocl_fast_2d_g, COPY_2D(global_p, const_local_p))
FAST(__ferrocl_fast_3d_l, COPY_3D(local_p, const_global_p))
FAST(__ferrocl_fast_3d_g, COPY_3D(global_p, const_local_p))

/* wait_group_events, with the event list generic (clang 19) or private (older clangs in
 * OpenCL C 1.2). */
#define FAST_WAIT(NAME, SPACE) \
    QUERY void NAME(void *slow, int count, SPACE const size_t *events, const ferrocl_ctx *c) { \
        if (noted(c, count, (const size_t *)events)) return; \
        OWN_CONTEXT(c); \
        ((void (*)(int, SPACE const size_t *, const ferrocl_ctx *))slow)(count, events, &own); \
    }
FAST_WAIT(__ferrocl_fast_wait_generic, AS(4))
FAST_WAIT(__ferrocl_fast_wait_private, )

/* For regions the compiler found to be the same for every work-item, run by the first
 * work-item alone (icd/src/compiler/passes/uniform.rs): allowed unless every work-item's copies
 * must reach the driver (validation mode). */
QUERY _Bool __ferrocl_group_may_share(const ferrocl_group *g) {
    const ferrocl_copy_log *log = g->copies;
    return !log || !log->slow;
}

/* Gives every work-item the first one's frame slot of a variable the region stored. */
void __ferrocl_group_share(const ferrocl_group *g, char *frames, size_t offset, size_t size) {
    size_t items = g->local_size[0] * g->local_size[1] * g->local_size[2];
    char *first = frames + items * offset;
    for (size_t i = 1; i < items; i++) __builtin_memcpy(first + i * size, first, size);
}

/* The others have passed the copies the first one made, as if they had made them too. */
void __ferrocl_group_catch_up(const ferrocl_group *g) {
    ferrocl_copy_log *log = g->copies;
    if (!log || !log->items) return;
    unsigned k = log->reached[0];
    for (size_t i = 1; i < log->items; i++) log->reached[i] = k;
}

/* Called by the launcher of a kernel run as regions after each region. A region that
 * waited for nothing, with nothing else for the driver to do there (`settle` 0), skips
 * the call: a tile of a double-buffered kernel passes several such regions. */
QUERY void __ferrocl_group_settle(const ferrocl_group *g) {
    const ferrocl_copy_log *log = g->copies;
    if (!log || (!log->slow && !log->waited && !log->settle)) return;
    g->services->settle(g);
}

/* atomic_work_item_fence(flags, order, scope) (OpenCL C 2.0+): as mem_fence. The enums
 * carry OpenCL C's names so the function mangles as the kernels' calls do. */
typedef enum memory_scope {
    memory_scope_work_item = 0,
    memory_scope_work_group = 1,
    memory_scope_device = 2,
    memory_scope_all_svm_devices = 3,
    memory_scope_sub_group = 4
} memory_scope;
typedef enum memory_order {
    memory_order_relaxed = 0,
    memory_order_acquire = 2,
    memory_order_release = 3,
    memory_order_acq_rel = 4,
    memory_order_seq_cst = 5
} memory_order;
__attribute__((overloadable)) void atomic_work_item_fence(unsigned flags, memory_order order, memory_scope scope) {
    (void)flags;
    (void)order;
    (void)scope;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* to_global, to_local, to_private and get_fence (OpenCL C 2.0 generic address space):
 * every address space is the same memory on a CPU, so the address itself says where it
 * points. Private: between the stack pointer and the work-item's stack top, or in the
 * frame memory of a kernel run as regions (its variables live across barriers there).
 * Local: the group's __local arguments, or a __local variable of the kernel, which the
 * IR rewrite makes thread-local and lists in __ferrocl_static_local (generated per
 * module). Global: the rest. */
_Bool __ferrocl_static_local(const AS(4) void *p);

/* The frame of a function that is never inlined lies below every live frame of its
 * callers. */
__attribute__((noinline)) static char *stack_pointer(void) { return __builtin_frame_address(0); }

INLINE int is_private(const AS(4) void *p, const ferrocl_ctx *c) {
    const char *a = (const char *)p;
    const ferrocl_group *g = c->group;
    return (a >= stack_pointer() && a < c->stack_top) || (g->frames && a >= (char *)g->frames && a < g->frames_end);
}

INLINE int is_local(const AS(4) void *p, const ferrocl_ctx *c) {
    const char *a = (const char *)p;
    const ferrocl_group *g = c->group;
    return (a >= g->local_begin && a < g->local_end) || __ferrocl_static_local(p);
}

CONTEXT_FN(AS(1) void *, to_global, AS(4) void *p, const ferrocl_ctx *c) {
    return p && !is_private(p, c) && !is_local(p, c) ? (AS(1) void *)p : 0;
}
CONTEXT_FN(AS(3) void *, to_local, AS(4) void *p, const ferrocl_ctx *c) {
    return p && is_local(p, c) ? (AS(3) void *)p : 0;
}
CONTEXT_FN(void *, to_private, AS(4) void *p, const ferrocl_ctx *c) { return p && is_private(p, c) ? (void *)p : 0; }

/* CLK_LOCAL_MEM_FENCE for local memory, CLK_GLOBAL_MEM_FENCE for global, none for
 * private memory, which no other work-item sees. */
#define GET_FENCE(NAME, Q) \
    CONTEXT_FN(unsigned, NAME, Q AS(4) void *p, const ferrocl_ctx *c) { \
        return is_local(p, c) ? 1u : is_private(p, c) ? 0u : 2u; \
    }
GET_FENCE(get_fence, )
GET_FENCE(get_fence_const, const)

/* cl_khr_kernel_clock, every scope: the system's monotonic clock in nanoseconds (the
 * vDSO, about 20 ns a read). A group may run on the thread that enqueued it, which the
 * system can move between cores, and the cores' time-stamp counters agree only where
 * the TSC is invariant; this clock agrees everywhere. */
struct ferrocl_timespec {
    long sec, nsec;
};
int clock_gettime(int clock, struct ferrocl_timespec *t);
static unsigned long monotonic_ns(void) {
    struct ferrocl_timespec t;
    clock_gettime(1 /* CLOCK_MONOTONIC */, &t);
    return (unsigned long)t.sec * 1000000000ul + (unsigned long)t.nsec;
}
typedef unsigned int ferrocl_uint2 __attribute__((ext_vector_type(2)));
#define KERNEL_CLOCK(scope) \
    __attribute__((overloadable)) unsigned long clock_read_##scope(void) { return monotonic_ns(); } \
    __attribute__((overloadable)) ferrocl_uint2 clock_read_hilo_##scope(void) { \
        unsigned long t = monotonic_ns(); \
        return (ferrocl_uint2){(unsigned)t, (unsigned)(t >> 32)}; \
    }
KERNEL_CLOCK(device)
KERNEL_CLOCK(work_group)
KERNEL_CLOCK(sub_group)
