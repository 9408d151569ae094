/* OpenCL C 2.0's device-side enqueue, kernel side: each builtin packs its arguments for
 * the driver (kernel-abi's `Services::enqueue` and `Services::device`), which keeps the
 * commands, their events and the device queues (icd/src/exec/enqueue.rs). clang calls
 * `enqueue_kernel` as one of four `__enqueue_kernel_*` functions with the address of
 * the kernel it made for the block; the driver's rewrite turns that address into the
 * kernel's name (icd/src/compiler/passes/mod.rs, `block_kernels_by_name`). */

#include "workitem.h"

#define GENERIC __attribute__((address_space(4)))
#define GLOBAL __attribute__((address_space(1)))

/* A builtin of the driver's context table (icd/src/compiler/passes/context.rs). */
#define DEVICE_FN(RET, NAME, ...) \
    RET ferrocl_##NAME(__VA_ARGS__) __asm__(FERROCL_NAME_##NAME); \
    RET ferrocl_##NAME(__VA_ARGS__)

enum { DEFAULT_QUEUE, RETAIN, RELEASE, CREATE_USER, SET_STATUS, IS_VALID, PROFILING, WG_SIZE, MULTIPLE, MAX_SG, SG_COUNT };

static int enqueue(const ferrocl_ctx *c, void *q, unsigned flags, const ferrocl_ndrange *r, unsigned num_events,
                   GENERIC const void *events, GENERIC void *event_ret, GENERIC const char *kernel,
                   GENERIC const void *block, unsigned num_locals, const size_t *locals) {
    ferrocl_enqueue e = {
        .queue = (size_t)q,
        .flags = flags,
        .num_events = num_events,
        .range = r,
        .kernel = (const char *)kernel,
        .block = (const void *)block,
        .locals = locals,
        .num_locals = num_locals,
        .events = (const size_t *)events,
        .event_ret = (size_t *)event_ret,
    };
    return c->group->services->enqueue(c->group, &e);
}

/* The plain form passes the range by value (byval in IR), the others by address. */
DEVICE_FN(int, enqueue_kernel_basic, void *q, unsigned flags, ferrocl_ndrange r, GENERIC const char *kernel,
          GENERIC const void *block, const ferrocl_ctx *c) {
    return enqueue(c, q, flags, &r, 0, 0, 0, kernel, block, 0, 0);
}
DEVICE_FN(int, enqueue_kernel_basic_events, void *q, unsigned flags, const ferrocl_ndrange *r, unsigned n,
          GENERIC const void *events, GENERIC void *event_ret, GENERIC const char *kernel, GENERIC const void *block,
          const ferrocl_ctx *c) {
    return enqueue(c, q, flags, r, n, events, event_ret, kernel, block, 0, 0);
}
DEVICE_FN(int, enqueue_kernel_varargs, void *q, unsigned flags, const ferrocl_ndrange *r, GENERIC const char *kernel,
          GENERIC const void *block, unsigned num_locals, const size_t *locals, const ferrocl_ctx *c) {
    return enqueue(c, q, flags, r, 0, 0, 0, kernel, block, num_locals, locals);
}
DEVICE_FN(int, enqueue_kernel_events_varargs, void *q, unsigned flags, const ferrocl_ndrange *r, unsigned n,
          GENERIC const void *events, GENERIC void *event_ret, GENERIC const char *kernel, GENERIC const void *block,
          unsigned num_locals, const size_t *locals, const ferrocl_ctx *c) {
    return enqueue(c, q, flags, r, n, events, event_ret, kernel, block, num_locals, locals);
}
/* A marker: a command with no kernel. */
DEVICE_FN(int, enqueue_marker, void *q, unsigned n, GENERIC const void *events, GENERIC void *event_ret,
          const ferrocl_ctx *c) {
    return enqueue(c, q, 0, 0, n, events, event_ret, 0, 0, 0, 0);
}

static size_t device(const ferrocl_ctx *c, unsigned op, size_t event, size_t value) {
    return c->group->services->device(c->group, op, event, value);
}

DEVICE_FN(unsigned, kernel_work_group_size, GENERIC const char *kernel, GENERIC const void *block,
          const ferrocl_ctx *c) {
    return (unsigned)device(c, WG_SIZE, (size_t)kernel, 0);
}
DEVICE_FN(unsigned, kernel_preferred_multiple, GENERIC const char *kernel, GENERIC const void *block,
          const ferrocl_ctx *c) {
    return (unsigned)device(c, MULTIPLE, (size_t)kernel, 0);
}
DEVICE_FN(unsigned, kernel_max_sub_group_size, const ferrocl_ndrange *r, GENERIC const char *kernel,
          GENERIC const void *block, const ferrocl_ctx *c) {
    return (unsigned)device(c, MAX_SG, (size_t)kernel, (size_t)r);
}
DEVICE_FN(unsigned, kernel_sub_group_count, const ferrocl_ndrange *r, GENERIC const char *kernel,
          GENERIC const void *block, const ferrocl_ctx *c) {
    return (unsigned)device(c, SG_COUNT, (size_t)kernel, (size_t)r);
}
DEVICE_FN(void *, get_default_queue, const ferrocl_ctx *c) { return (void *)device(c, DEFAULT_QUEUE, 0, 0); }
DEVICE_FN(void, retain_event, void *e, const ferrocl_ctx *c) { device(c, RETAIN, (size_t)e, 0); }
DEVICE_FN(void, release_event, void *e, const ferrocl_ctx *c) { device(c, RELEASE, (size_t)e, 0); }
DEVICE_FN(void *, create_user_event, const ferrocl_ctx *c) { return (void *)device(c, CREATE_USER, 0, 0); }
DEVICE_FN(void, set_user_event_status, void *e, int status, const ferrocl_ctx *c) {
    device(c, SET_STATUS, (size_t)e, (size_t)(long)status);
}
DEVICE_FN(_Bool, is_valid_event, void *e, const ferrocl_ctx *c) { return device(c, IS_VALID, (size_t)e, 0) != 0; }
DEVICE_FN(void, capture_event_profiling_info, void *e, int name, GLOBAL void *value, const ferrocl_ctx *c) {
    /* CLK_PROFILING_COMMAND_EXEC_TIME is the only name. */
    if (name == 1)
        device(c, PROFILING, (size_t)e, (size_t)(void *)value);
}
