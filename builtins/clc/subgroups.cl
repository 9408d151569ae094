/* Sub-groups (cl_khr_subgroups, OpenCL C 3.0 __opencl_c_subgroups). A FerroCL sub-group
 * is one work-item: the work-items of a group run one after another in a loop the
 * compiler vectorises (or as fibers), with no lanes that could exchange values, and a
 * sub-group of one keeps kernels using these functions on that fast path, free of any
 * synchronisation. The spec allows it: every function then sees the work-item's own
 * value. get_sub_group_id and the sub-group counts read the work-item context
 * (builtins/clc/workitem.c). */

#include "clc.h"

OVL uint get_sub_group_size(void) { return 1; }
OVL uint get_max_sub_group_size(void) { return 1; }
OVL uint get_sub_group_local_id(void) { return 0; }

/* Nothing to wait for, and a work-item's own accesses are ordered already. */
OVL void sub_group_barrier(cl_mem_fence_flags flags) {}
OVL void sub_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {}

OVL int sub_group_all(int predicate) { return predicate != 0; }
OVL int sub_group_any(int predicate) { return predicate != 0; }

/* Exclusive scans give the operation's identity: nothing comes before the work-item. */
#define COLLECTIVES(T, MIN, MAX) \
    OVL T sub_group_broadcast(T x, uint id) { return x; } \
    OVL T sub_group_reduce_add(T x) { return x; } \
    OVL T sub_group_reduce_min(T x) { return x; } \
    OVL T sub_group_reduce_max(T x) { return x; } \
    OVL T sub_group_scan_inclusive_add(T x) { return x; } \
    OVL T sub_group_scan_inclusive_min(T x) { return x; } \
    OVL T sub_group_scan_inclusive_max(T x) { return x; } \
    OVL T sub_group_scan_exclusive_add(T x) { return (T)0; } \
    OVL T sub_group_scan_exclusive_min(T x) { return MAX; } \
    OVL T sub_group_scan_exclusive_max(T x) { return MIN; }

COLLECTIVES(int, INT_MIN, INT_MAX)
COLLECTIVES(uint, 0u, UINT_MAX)
COLLECTIVES(long, LONG_MIN, LONG_MAX)
COLLECTIVES(ulong, 0ul, ULONG_MAX)
COLLECTIVES(float, -INFINITY, INFINITY)
COLLECTIVES(double, -(double)INFINITY, (double)INFINITY)
COLLECTIVES(half, -(half)INFINITY, (half)INFINITY)
