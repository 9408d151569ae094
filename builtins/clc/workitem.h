/* The structures kernel code shares with the driver (mirrors of kernel-abi's types; the
 * offsets asserted here are asserted there too), for the C parts of the kernel library. */

#ifndef FERROCL_WORKITEM_H
#define FERROCL_WORKITEM_H

#include <stddef.h>

/* Mirrors kernel-abi's `Group`, `Services` and `AsyncCopy` (the offsets asserted below are
 * asserted there too). */
typedef struct ferrocl_group ferrocl_group;
typedef struct {
    size_t dst, src, elem, per_line, lines, planes, src_line, src_plane, dst_line, dst_plane;
    unsigned to_local, pad;
} ferrocl_copy;
/* kernel-abi's `NdRange` (clang's `ndrange_t`) and `Enqueue`. */
typedef struct {
    unsigned work_dim;
    size_t offset[3], global[3], local[3];
} ferrocl_ndrange;
typedef struct {
    size_t queue;
    unsigned flags, num_events;
    const ferrocl_ndrange *range;
    const char *kernel;
    const void *block;
    const size_t *locals;
    unsigned num_locals, pad;
    const size_t *events;
    size_t *event_ret;
} ferrocl_enqueue;
typedef struct {
    void (*barrier)(const ferrocl_group *);
    size_t (*copy)(const ferrocl_group *, size_t item, const ferrocl_copy *, size_t event);
    void (*wait)(const ferrocl_group *, size_t item, unsigned count, const size_t *events);
    void (*fence)(const ferrocl_group *, size_t item, unsigned flags);
    void (*settle)(const ferrocl_group *);
    void (*sub_group_barrier)(const ferrocl_group *);
    int (*enqueue)(const ferrocl_group *, const ferrocl_enqueue *);
    size_t (*device)(const ferrocl_group *, unsigned op, size_t event, size_t value);
} ferrocl_services;

struct ferrocl_group {
    size_t group_id[3];
    size_t local_size[3];
    size_t enqueued_local_size[3];
    size_t global_offset[3];
    size_t global_size[3];
    size_t num_groups[3];
    unsigned work_dim;
    /* Groups of the row in x this call runs, from group_id (kernel-abi's `Group::row`). */
    unsigned row;
    const ferrocl_services *services;
    void *runtime;
    void *frames;
    void *copies;
    /* For to_private, to_local and get_fence: the frame memory in use, the __local
     * arguments, and an address above the kernel's stack frames. */
    char *frames_end;
    char *local_begin, *local_end;
    char *stack_top;
    /* The collective functions' memory (collectives.c): COLLECTIVE_SLOTS operands, then
     * as many results, of 8 bytes each, then a broadcast's source. */
    void *scratch;
    /* Which group of the row the launcher runs (kernel-abi's `Group::row_at`). */
    size_t row_at;
    /* The kernel's sub-group size (kernel-abi's `Group::sub_group_size`). */
    size_t sub_group_size;
};
_Static_assert(__builtin_offsetof(struct ferrocl_group, copies) == 176, "Group layout");
_Static_assert(__builtin_offsetof(struct ferrocl_group, scratch) == 216, "Group layout");
_Static_assert(__builtin_offsetof(struct ferrocl_group, row_at) == 224, "Group layout");
_Static_assert(__builtin_offsetof(struct ferrocl_group, sub_group_size) == 232, "Group layout");
#define COLLECTIVE_SLOTS 4096

/* Mirrors kernel-abi's `CopyLog`: what the async-copy fast paths below read and write. */
typedef struct {
    unsigned *reached;
    size_t items;
    const size_t *events;
    size_t ops;
    size_t issued;
    unsigned long waited;
    unsigned defer, slow;
    size_t settle;
    /* Imports moved while the group computes (kernel-abi's `Deferred`), oldest first. */
    size_t pending;
    struct {
        char *dst;
        const char *src;
        size_t bytes, at;
    } deferred[4];
} ferrocl_copy_log;
_Static_assert(sizeof(ferrocl_copy_log) == 200, "CopyLog layout");
_Static_assert(__builtin_offsetof(ferrocl_copy_log, pending) == 64, "CopyLog layout");

_Static_assert(sizeof(ferrocl_copy) == 88, "Copy layout");
_Static_assert(__builtin_offsetof(ferrocl_services, settle) == 32, "Services layout");
_Static_assert(__builtin_offsetof(ferrocl_services, sub_group_barrier) == 40, "Services layout");
_Static_assert(__builtin_offsetof(ferrocl_services, device) == 56, "Services layout");
_Static_assert(sizeof(ferrocl_ndrange) == 80, "NdRange layout");
_Static_assert(__builtin_offsetof(ferrocl_enqueue, locals) == 40, "Enqueue layout");
_Static_assert(sizeof(ferrocl_enqueue) == 72, "Enqueue layout");

/* One work-item's view: a private copy of the group geometry plus its local id. Mirrors
 * kernel-abi's `WorkItem`: the archive's async-copy builtins receive it too. */
typedef struct ferrocl_ctx_s {
    size_t lid[3];
    size_t gid[3];
    size_t lsz[3];
    size_t elsz[3];
    size_t off[3];
    size_t gsz[3];
    size_t ngr[3];
    unsigned dim;
    /* Set while the work-item runs a region for the whole group (`__ferrocl_first_<k>`). */
    unsigned alone;
    const ferrocl_group *group;
    /* For the async-copy builtins, which run once per work-item and copy: the group's
     * copy log (one load instead of two) and the linear local id (set with the id). */
    void *copies;
    size_t item;
    /* Above the work-item's stack frames: the group's, or the top of its fiber. */
    char *stack_top;
    /* Copies and waits are answered here, without the driver (the log's `defer` set and
     * `slow` clear): read once per region pass, it stays in a register. */
    unsigned in_place;
} ferrocl_ctx;
_Static_assert(__builtin_offsetof(ferrocl_ctx, group) == 176, "WorkItem layout");
_Static_assert(__builtin_offsetof(ferrocl_ctx, item) == 192, "WorkItem layout");
_Static_assert(__builtin_offsetof(ferrocl_ctx, stack_top) == 200, "WorkItem layout");
_Static_assert(__builtin_offsetof(ferrocl_ctx, in_place) == 208, "WorkItem layout");

#define INLINE static inline __attribute__((always_inline))

/* Not `used`: that keeps every helper alive (optimised and compiled) in every kernel
   module, ~50 ms of each build. */
#define QUERY __attribute__((always_inline))

#define AS(n) __attribute__((address_space(n)))

/* The work-item's sub-group (workitem.c says how groups are cut): the sub-group size,
 * the work-item's place in its sub-group, the sub-group's work-item count, and its
 * first work-item's linear local id. */
INLINE size_t sg_width(const ferrocl_ctx *c) {
    size_t s = c->group->sub_group_size;
    return s ? s : 1;
}
INLINE size_t sg_local(const ferrocl_ctx *c) { return c->lid[0] % sg_width(c); }
INLINE size_t sg_size(const ferrocl_ctx *c) {
    size_t left = c->lsz[0] - (c->lid[0] - sg_local(c));
    return left < sg_width(c) ? left : sg_width(c);
}
INLINE size_t sg_first(const ferrocl_ctx *c) { return c->item - sg_local(c); }

/* A builtin that reads the work-item context: defined as `ferrocl_<NAME>` under the symbol
 * clang calls it by, which the driver's table generates into context.h
 * (icd/src/compiler/passes/context.rs), with the context as an extra last parameter. A
 * name the table lacks does not compile; an entry this library lacks fails the driver's
 * test of the library. */
#include "context.h"
#define CONTEXT_FN(RET, NAME, ...) \
    RET ferrocl_##NAME(__VA_ARGS__) __asm__(FERROCL_NAME_##NAME); \
    QUERY RET ferrocl_##NAME(__VA_ARGS__)

#endif
