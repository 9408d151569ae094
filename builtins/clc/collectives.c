/* The work-group collective functions (OpenCL C 6.15.16): work_group_all/any,
 * broadcast, reduce and inclusive/exclusive scans with add, min and max, on int, uint,
 * long, ulong, float, double and half. Compiled as C to LLVM bitcode with the rest of the
 * kernel library; each function is defined under clang's mangled name and takes the
 * work-item context as a hidden last argument (the IR rewrite passes it, as for the
 * work-item queries).
 *
 * Kernels calling these run as fibers (every work-item on one worker thread), so a
 * collective is two barriers around plain memory: each work-item writes its operand to
 * its slot of the group's scratch memory; after the first barrier work-item 0 computes
 * every result (a scan in local-id order, as the spec defines it); after the second
 * each work-item reads its own. The next collective's operands never overwrite what a
 * slower work-item still reads: results live apart from operands, and work-item 0
 * writes results only after the next first barrier, which every work-item reaches
 * after reading. */

#include "workitem.h"

void __ferrocl_barrier(unsigned flags, const ferrocl_ctx *c);

INLINE size_t items(const ferrocl_ctx *c) { return c->lsz[0] * c->lsz[1] * c->lsz[2]; }
INLINE void sync(const ferrocl_ctx *c) { __ferrocl_barrier(1 /* CLK_LOCAL_MEM_FENCE */, c); }
#define OPERANDS(T, c) ((T *)(c)->group->scratch)
#define RESULTS(T, c) ((T *)((char *)(c)->group->scratch + 8 * COLLECTIVE_SLOTS))

/* The operations, with OpenCL's min/max for floating point (fmin/fmax: a NaN operand
 * yields the other). */
#define OP_add(a, b) ((a) + (b))
#define OP_min(a, b) \
    _Generic((a), float: __builtin_fminf(a, b), double: __builtin_fmin(a, b), \
             _Float16: (_Float16)__builtin_fminf(a, b), default: (b) < (a) ? (b) : (a))
#define OP_max(a, b) \
    _Generic((a), float: __builtin_fmaxf(a, b), double: __builtin_fmax(a, b), \
             _Float16: (_Float16)__builtin_fmaxf(a, b), default: (b) > (a) ? (b) : (a))

/* Identities of the exclusive scans: the first work-item's result. */
#define ID_add(T, MIN, MAX) ((T)0)
#define ID_min(T, MIN, MAX) (MAX)
#define ID_max(T, MIN, MAX) (MIN)

/* A function under its mangled name: `RET NAME PARAMS` labelled MANGLED. */
#define DEFINE(RET, NAME, MANGLED, PARAMS) \
    __attribute__((used)) RET NAME PARAMS __asm__(MANGLED); \
    __attribute__((used)) RET NAME PARAMS

/* The common shape: operand in, barrier, work-item 0 computes BODY into `out`, barrier,
 * result `out[PICK]`. */
#define COLLECTIVE(T, x, c, BODY, PICK) \
    T *in = OPERANDS(T, c), *out = RESULTS(T, c); \
    size_t me = (c)->item, n = items(c); \
    in[me] = (x); \
    sync(c); \
    if (me == 0) { \
        BODY \
    } \
    sync(c); \
    return out[PICK];

#define REDUCE(OP, T, M) \
    DEFINE(T, reduce_##OP##_##M, "_Z21work_group_reduce_" #OP #M, (T x, const ferrocl_ctx *c)) { \
        COLLECTIVE(T, x, c, T r = in[0]; for (size_t i = 1; i < n; i++) r = OP_##OP(r, in[i]); out[0] = r;, 0) \
    }
#define SCAN_INCLUSIVE(OP, T, M) \
    DEFINE(T, scan_inclusive_##OP##_##M, "_Z29work_group_scan_inclusive_" #OP #M, (T x, const ferrocl_ctx *c)) { \
        COLLECTIVE(T, x, c, T r = in[0]; out[0] = r; for (size_t i = 1; i < n; i++) out[i] = r = OP_##OP(r, in[i]);, \
                   me) \
    }
#define SCAN_EXCLUSIVE(OP, T, M, MIN, MAX) \
    DEFINE(T, scan_exclusive_##OP##_##M, "_Z29work_group_scan_exclusive_" #OP #M, (T x, const ferrocl_ctx *c)) { \
        COLLECTIVE(T, x, c, T r = ID_##OP(T, MIN, MAX); for (size_t i = 0; i < n; i++) { \
            out[i] = r; \
            r = OP_##OP(r, in[i]); \
        }, me) \
    }

/* broadcast(x, local id) in one to three dimensions; an id outside the group (undefined
 * behaviour) reads work-item 0's value rather than memory past the group. */
INLINE size_t source(size_t x, size_t y, size_t z, const ferrocl_ctx *c) {
    size_t i = (z * c->lsz[1] + y) * c->lsz[0] + x;
    return x < c->lsz[0] && y < c->lsz[1] && z < c->lsz[2] ? i : 0;
}
#define BROADCAST(T, M) \
    DEFINE(T, broadcast1_##M, "_Z20work_group_broadcast" #M "m", (T x, size_t a, const ferrocl_ctx *c)) { \
        size_t s = source(a, 0, 0, c); \
        COLLECTIVE(T, x, c, out[0] = in[s];, 0) \
    } \
    DEFINE(T, broadcast2_##M, "_Z20work_group_broadcast" #M "mm", (T x, size_t a, size_t b, const ferrocl_ctx *c)) { \
        size_t s = source(a, b, 0, c); \
        COLLECTIVE(T, x, c, out[0] = in[s];, 0) \
    } \
    DEFINE(T, broadcast3_##M, "_Z20work_group_broadcast" #M "mmm", \
           (T x, size_t a, size_t b, size_t d, const ferrocl_ctx *c)) { \
        size_t s = source(a, b, d, c); \
        COLLECTIVE(T, x, c, out[0] = in[s];, 0) \
    }

/* Every collective of one type: T, its mangled code M, its least and greatest values. */
#define TYPE(T, M, MIN, MAX) \
    BROADCAST(T, M) \
    REDUCE(add, T, M) REDUCE(min, T, M) REDUCE(max, T, M) \
    SCAN_INCLUSIVE(add, T, M) SCAN_INCLUSIVE(min, T, M) SCAN_INCLUSIVE(max, T, M) \
    SCAN_EXCLUSIVE(add, T, M, MIN, MAX) SCAN_EXCLUSIVE(min, T, M, MIN, MAX) SCAN_EXCLUSIVE(max, T, M, MIN, MAX)

TYPE(int, i, (-2147483647 - 1), 2147483647)
TYPE(unsigned, j, 0u, 4294967295u)
TYPE(long, l, (-9223372036854775807l - 1), 9223372036854775807l)
TYPE(unsigned long, m, 0ul, 18446744073709551615ul)
TYPE(float, f, -__builtin_inff(), __builtin_inff())
TYPE(double, d, -__builtin_inf(), __builtin_inf())
TYPE(_Float16, Dh, -(_Float16)__builtin_inff(), (_Float16)__builtin_inff())

/* work_group_all / work_group_any: 1 when the predicate holds for all / any. */
DEFINE(int, all, "_Z14work_group_alli", (int x, const ferrocl_ctx *c)) {
    COLLECTIVE(int, x != 0, c, int r = 1; for (size_t i = 0; i < n; i++) r &= in[i]; out[0] = r;, 0)
}
DEFINE(int, any, "_Z14work_group_anyi", (int x, const ferrocl_ctx *c)) {
    COLLECTIVE(int, x != 0, c, int r = 0; for (size_t i = 0; i < n; i++) r |= in[i]; out[0] = r;, 0)
}
