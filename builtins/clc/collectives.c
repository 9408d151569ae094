/* The work-group collective functions (OpenCL C 6.15.16): work_group_all/any,
 * broadcast, reduce and inclusive/exclusive scans with add, min and max, on int, uint,
 * long, ulong, float, double and half, and the same sub_group_ functions. The driver's
 * IR rewrite turns each work-group call into
 *
 *     __ferrocl_wg_put_T(x); barrier; __ferrocl_wg_OP_T(); barrier; r = __ferrocl_wg_get_T(mine)
 *
 * (icd/src/compiler/passes/collectives.rs), so a kernel calling collectives runs as barrier
 * regions like any kernel with barriers, or as fibers where regions cannot be made.
 * These are the helpers, in C, taking the work-item context as a hidden last argument:
 * each work-item writes its operand to its slot of the group's scratch memory; after
 * the first barrier work-item 0 computes every result (a scan in local-id order, as the
 * spec defines it); after the second each reads its own. The next collective's operands
 * never overwrite what a slower work-item still reads: results live apart from
 * operands, and work-item 0 writes results only after the next first barrier, which
 * every work-item reaches after reading. T is clang's mangled type code.
 *
 * Sub-group calls become `put; barrier; r = __ferrocl_sg_OP_T(...); barrier`: between
 * the barriers each work-item folds or reads the operands of its own sub-group
 * (workitem.h's `sg_first`, `sg_size`), in local-id order, so every work-item of a
 * sub-group computes the same result the same way. The barriers are the work-group's:
 * every work-item of the group must reach the call, which the sub-groups of the CTS and
 * of SYCL's group algorithms do. */

#include "workitem.h"

INLINE size_t items(const ferrocl_ctx *c) { return c->lsz[0] * c->lsz[1] * c->lsz[2]; }
#define OPERANDS(T, c) ((T *)(c)->group->scratch)
#define RESULTS(T, c) ((T *)((char *)(c)->group->scratch + 8 * COLLECTIVE_SLOTS))
/* The broadcast's source work-item, after the results. */
#define SOURCE(c) ((size_t *)((char *)(c)->group->scratch + 16 * COLLECTIVE_SLOTS))
/* A byte per work-item, after the lane planes (kernel-abi `COLLECTIVE_MARKS`): set to the
 * number of the sub-group call it enters (`__ferrocl_sg_enter`, 1 to 255, numbered by
 * the driver) and cleared after the call's second barrier, so between the barriers it
 * tells the work-items of the sub-group in the same call. The non-uniform functions
 * (cl_khr_subgroup_non_uniform_arithmetic, _vote, _ballot) fold, vote and elect over
 * those alone, even while the sub-group's other branch makes another call; where every
 * work-item calls, all are marked alike and nothing changes. */
#define ACTIVE(c) ((unsigned char *)(c)->group->scratch + 16 * COLLECTIVE_SLOTS + 64 + 16 * 8 * COLLECTIVE_SLOTS)

/* The first work-item of the caller's sub-group in the call (the caller, at the latest). */
INLINE size_t sg_first_active(const ferrocl_ctx *c) {
    const unsigned char *on = ACTIVE(c), site = on[c->item];
    for (size_t i = sg_first(c), end = c->item; i < end; i++)
        if (on[i] == site) return i;
    return c->item;
}

QUERY void __ferrocl_sg_enter(unsigned site, const ferrocl_ctx *c) { ACTIVE(c)[c->item] = (unsigned char)site; }
QUERY void __ferrocl_sg_done(const ferrocl_ctx *c) { ACTIVE(c)[c->item] = 0; }

/* The operations, with OpenCL's min/max for floating point (fmin/fmax: a NaN operand
 * yields the other); mul, the bitwise and the logical ones are
 * cl_khr_work_group_uniform_arithmetic's (and SPIR-V's GroupIMulKHR and kin, which the
 * translator makes `work_group_reduce_mul` and `sub_group_reduce_mul`). */
#define OP_add(a, b) ((a) + (b))
#define OP_min(a, b) \
    _Generic((a), float: __builtin_fminf(a, b), double: __builtin_fmin(a, b), \
             _Float16: (_Float16)__builtin_fminf(a, b), default: (b) < (a) ? (b) : (a))
#define OP_max(a, b) \
    _Generic((a), float: __builtin_fmaxf(a, b), double: __builtin_fmax(a, b), \
             _Float16: (_Float16)__builtin_fmaxf(a, b), default: (b) > (a) ? (b) : (a))
#define OP_mul(a, b) ((a) * (b))
#define OP_and(a, b) ((a) & (b))
#define OP_or(a, b) ((a) | (b))
#define OP_xor(a, b) ((a) ^ (b))
#define OP_logical_and(a, b) ((a) && (b))
#define OP_logical_or(a, b) ((a) || (b))
#define OP_logical_xor(a, b) (!(a) != !(b))

/* Identities of the exclusive scans: the first work-item's result. */
#define ID_add(T, MIN, MAX) ((T)0)
#define ID_min(T, MIN, MAX) (MAX)
#define ID_max(T, MIN, MAX) (MIN)
#define ID_mul(T, MIN, MAX) ((T)1)
#define ID_and(T, MIN, MAX) ((T) ~(T)0)
#define ID_or(T, MIN, MAX) ((T)0)
#define ID_xor(T, MIN, MAX) ((T)0)
#define ID_logical_and(T, MIN, MAX) 1
#define ID_logical_or(T, MIN, MAX) 0
#define ID_logical_xor(T, MIN, MAX) 0

/* A fold's first value from the first operand: the operand itself, or for the logical
 * operations its truth (a reduction of one work-item's 5 is 1). */
#define FIRST_add(x) (x)
#define FIRST_min(x) (x)
#define FIRST_max(x) (x)
#define FIRST_mul(x) (x)
#define FIRST_and(x) (x)
#define FIRST_or(x) (x)
#define FIRST_xor(x) (x)
#define FIRST_logical_and(x) ((x) != 0)
#define FIRST_logical_or(x) ((x) != 0)
#define FIRST_logical_xor(x) ((x) != 0)

/* Work-item 0 computes the results from `in` into `out`, of n work-items. */
#define COMPUTE(NAME, T, BODY) \
    QUERY void NAME(const ferrocl_ctx *c) { \
        if (c->item != 0) return; \
        const T *in = OPERANDS(T, c); \
        T *out = RESULTS(T, c); \
        size_t n = items(c); \
        BODY \
    }

#define REDUCE(OP, T, M) \
    COMPUTE(__ferrocl_wg_reduce_##OP##_##M, T, T r = FIRST_##OP(in[0]); \
            for (size_t i = 1; i < n; i++) r = OP_##OP(r, in[i]); out[0] = r;)
#define SCAN_INCLUSIVE(OP, T, M) \
    COMPUTE(__ferrocl_wg_scan_inclusive_##OP##_##M, T, T r = FIRST_##OP(in[0]); out[0] = r; \
            for (size_t i = 1; i < n; i++) out[i] = r = OP_##OP(r, in[i]);)
#define SCAN_EXCLUSIVE(OP, T, M, MIN, MAX) \
    COMPUTE(__ferrocl_wg_scan_exclusive_##OP##_##M, T, T r = ID_##OP(T, MIN, MAX); for (size_t i = 0; i < n; i++) { \
        out[i] = r; \
        r = OP_##OP(r, in[i]); \
    })

/* A sub-group's reduction and scans: folds of the operands of the work-item's
 * sub-group, from its first work-item to its last (reduce), to the work-item itself
 * (inclusive) or to the one before it (exclusive, from the identity). */
#define SG_FOLD(NAME, T, INIT, START, END, OP) \
    QUERY T NAME(const ferrocl_ctx *c) { \
        const T *in = OPERANDS(T, c); \
        const unsigned char *on = ACTIVE(c), site = on[c->item]; \
        T r = INIT; \
        for (size_t i = START, end = END; i < end; i++) \
            if (on[i] == site) r = OP(r, in[i]); \
        return r; \
    }
#define SG_FOLDS(OP, T, M, MIN, MAX) \
    SG_FOLD(__ferrocl_sg_reduce_##OP##_##M, T, FIRST_##OP(in[sg_first_active(c)]), sg_first_active(c) + 1, \
            sg_first(c) + sg_size(c), OP_##OP) \
    SG_FOLD(__ferrocl_sg_scan_inclusive_##OP##_##M, T, FIRST_##OP(in[sg_first_active(c)]), sg_first_active(c) + 1, \
            c->item + 1, OP_##OP) \
    SG_FOLD(__ferrocl_sg_scan_exclusive_##OP##_##M, T, ID_##OP(T, MIN, MAX), sg_first(c), c->item, OP_##OP)

/* One operation's work-group and sub-group reduction and scans. */
#define FOLDS(OP, T, M, MIN, MAX) \
    REDUCE(OP, T, M) SCAN_INCLUSIVE(OP, T, M) SCAN_EXCLUSIVE(OP, T, M, MIN, MAX) SG_FOLDS(OP, T, M, MIN, MAX)

/* broadcast(x, local id) in one to three dimensions (unused ids are 0); an id outside
 * the group (undefined behaviour) reads work-item 0's value rather than memory past
 * the group. Every work-item passes the same id. */
QUERY void __ferrocl_wg_source(size_t x, size_t y, size_t z, const ferrocl_ctx *c) {
    size_t i = (z * c->lsz[1] + y) * c->lsz[0] + x;
    *SOURCE(c) = x < c->lsz[0] && y < c->lsz[1] && z < c->lsz[2] ? i : 0;
}

/* Every collective of one type (COLLECTIVE_TYPES). */
#define TYPE(T, M, MIN, MAX) \
    QUERY void __ferrocl_wg_put_##M(T x, const ferrocl_ctx *c) { OPERANDS(T, c)[c->item] = x; } \
    /* The same for sub-group calls, named apart so the driver sees sub-group use. */ \
    QUERY void __ferrocl_sg_put_##M(T x, const ferrocl_ctx *c) { OPERANDS(T, c)[c->item] = x; } \
    QUERY T __ferrocl_wg_get_##M(int mine, const ferrocl_ctx *c) { return RESULTS(T, c)[mine ? c->item : 0]; } \
    COMPUTE(__ferrocl_wg_broadcast_##M, T, out[0] = in[*SOURCE(c)];) \
    FOLDS(add, T, M, MIN, MAX) FOLDS(min, T, M, MIN, MAX) FOLDS(max, T, M, MIN, MAX) FOLDS(mul, T, M, MIN, MAX) \
    QUERY T __ferrocl_sg_broadcast_##M(unsigned id, const ferrocl_ctx *c) { \
        /* An id outside the sub-group (undefined) reads its first work-item's. */ \
        return OPERANDS(T, c)[sg_first(c) + (id < sg_size(c) ? id : 0)]; \
    } \
    QUERY T __ferrocl_sg_broadcast_first_##M(const ferrocl_ctx *c) { return OPERANDS(T, c)[sg_first_active(c)]; }

/* The operand types: T, its mangled code M, its least and greatest values. */
#define INTEGER_OPERANDS(F) \
    F(signed char, c, -128, 127) \
    F(unsigned char, h, 0, 255) \
    F(short, s, -32768, 32767) \
    F(unsigned short, t, 0, 65535) \
    F(int, i, (-2147483647 - 1), 2147483647) \
    F(unsigned, j, 0u, 4294967295u) \
    F(long, l, (-9223372036854775807l - 1), 9223372036854775807l) \
    F(unsigned long, m, 0ul, 18446744073709551615ul)
#define COLLECTIVE_TYPES(F) \
    INTEGER_OPERANDS(F) \
    F(float, f, -__builtin_inff(), __builtin_inff()) \
    F(double, d, -__builtin_inf(), __builtin_inf()) \
    F(_Float16, Dh, -(_Float16)__builtin_inff(), (_Float16)__builtin_inff())
COLLECTIVE_TYPES(TYPE)

/* The bitwise and logical folds (cl_khr_work_group_uniform_arithmetic): on integers,
 * the logical ones on int. */
#define BITS(T, M, MIN, MAX) FOLDS(and, T, M, MIN, MAX) FOLDS(or, T, M, MIN, MAX) FOLDS(xor, T, M, MIN, MAX)
INTEGER_OPERANDS(BITS)
FOLDS(logical_and, int, i, 0, 0)
FOLDS(logical_or, int, i, 0, 0)
FOLDS(logical_xor, int, i, 0, 0)

/* work_group_all / work_group_any (on int operands, put with __ferrocl_wg_put_i): 1 when
 * the predicate holds for all / any. */
COMPUTE(__ferrocl_wg_all_i, int, int r = 1; for (size_t i = 0; i < n; i++) r &= in[i] != 0; out[0] = r;)
COMPUTE(__ferrocl_wg_any_i, int, int r = 0; for (size_t i = 0; i < n; i++) r |= in[i] != 0; out[0] = r;)
#define OP_all(a, b) ((a) && (b))
#define OP_any(a, b) ((a) || (b))
SG_FOLD(__ferrocl_sg_all_i, int, 1, sg_first(c), sg_first(c) + sg_size(c), OP_all)
SG_FOLD(__ferrocl_sg_any_i, int, 0, sg_first(c), sg_first(c) + sg_size(c), OP_any)

/* sub_group_ballot(predicate) (cl_khr_subgroup_ballot; SPIR-V's GroupNonUniformBallot):
 * bit i set where the sub-group's work-item i's predicate holds. */
typedef unsigned ferrocl_uint4 __attribute__((ext_vector_type(4)));
QUERY ferrocl_uint4 __ferrocl_sg_ballot_i(const ferrocl_ctx *c) {
    const int *in = OPERANDS(int, c) + sg_first(c);
    ferrocl_uint4 r = 0;
    const unsigned char *on = ACTIVE(c) + sg_first(c), site = ACTIVE(c)[c->item];
    for (size_t i = 0, n = sg_size(c); i < n && i < 128; i++)
        if (in[i] && on[i] == site) r[i / 32] |= 1u << (i % 32);
    return r;
}

/* sub_group_elect (cl_khr_subgroup_non_uniform_vote): the first work-item in the call. */
QUERY int __ferrocl_sg_elect_i(const ferrocl_ctx *c) { return sg_first_active(c) == c->item; }

/* Sub-group exchanges (cl_khr_subgroup_shuffle, _shuffle_relative, _rotate): after the
 * first barrier each work-item reads the operand of the work-item of its sub-group it
 * names, before the second (no later operand is put until every work-item has passed
 * it). An index outside the sub-group (undefined in the spec) reads the work-item's own
 * operand, never another sub-group's or memory past the group. Rotations count in
 * 32-bit unsigned arithmetic, as SPIR-V's rotate does: a delta of -1 rotates by one the
 * other way in sub-groups of a power-of-two size. */
INLINE size_t exchanged(size_t local, const ferrocl_ctx *c) {
    return local < sg_size(c) ? sg_first(c) + local : c->item;
}
#define EXCHANGES(T, M, MIN, MAX) \
    QUERY T __ferrocl_sg_shuffle_##M(unsigned id, const ferrocl_ctx *c) { return OPERANDS(T, c)[exchanged(id, c)]; } \
    QUERY T __ferrocl_sg_shuffle_xor_##M(unsigned mask, const ferrocl_ctx *c) { \
        return OPERANDS(T, c)[exchanged(sg_local(c) ^ mask, c)]; \
    } \
    QUERY T __ferrocl_sg_shuffle_up_##M(unsigned delta, const ferrocl_ctx *c) { \
        return OPERANDS(T, c)[delta <= sg_local(c) ? c->item - delta : c->item]; \
    } \
    QUERY T __ferrocl_sg_shuffle_down_##M(unsigned delta, const ferrocl_ctx *c) { \
        return OPERANDS(T, c)[exchanged(sg_local(c) + delta, c)]; \
    } \
    QUERY T __ferrocl_sg_rotate_##M(int delta, const ferrocl_ctx *c) { \
        return OPERANDS(T, c)[sg_first(c) + ((unsigned)sg_local(c) + (unsigned)delta) % sg_size(c)]; \
    } \
    QUERY T __ferrocl_sg_clustered_rotate_##M(int delta, unsigned cluster, const ferrocl_ctx *c) { \
        /* A cluster size of 0 (undefined) must not divide by zero in the host process. */ \
        if (!cluster) return OPERANDS(T, c)[c->item]; \
        size_t base = sg_local(c) & ~(size_t)(cluster - 1); \
        return OPERANDS(T, c)[exchanged(base + ((unsigned)sg_local(c) + (unsigned)delta) % cluster, c)]; \
    }
COLLECTIVE_TYPES(EXCHANGES)

/* cl_intel_subgroups' shuffles of two operands (SPIR-V's SubgroupShuffleDownINTEL and
 * UpINTEL): `current` is put as the operand, `next` or `previous` in a second plane (the
 * results' slots, which sub-group functions do not use). Down reads `current` of the
 * work-item `delta` later, past the sub-group's end `next` of the one wrapped round; up
 * reads `current` `delta` earlier, before its start `previous` from the end. */
#define SECOND(T, c) RESULTS(T, c)
#define TWO_OPERANDS(T, M, MIN, MAX) \
    QUERY void __ferrocl_sg_put2_##M(T x, const ferrocl_ctx *c) { SECOND(T, c)[c->item] = x; } \
    QUERY T __ferrocl_sg_intel_shuffle_down_##M(unsigned delta, const ferrocl_ctx *c) { \
        size_t n = sg_size(c), at = sg_local(c) + delta; \
        if (at < n) return OPERANDS(T, c)[sg_first(c) + at]; \
        return at - n < n ? SECOND(T, c)[sg_first(c) + at - n] : OPERANDS(T, c)[c->item]; \
    } \
    QUERY T __ferrocl_sg_intel_shuffle_up_##M(unsigned delta, const ferrocl_ctx *c) { \
        size_t n = sg_size(c), l = sg_local(c); \
        if (delta <= l) return OPERANDS(T, c)[c->item - delta]; \
        return delta - l <= n ? SECOND(T, c)[sg_first(c) + n - (delta - l)] : OPERANDS(T, c)[c->item]; \
    } \
    /* sub_group_non_uniform_all_equal (cl_khr_subgroup_non_uniform_vote). */ \
    QUERY int __ferrocl_sg_all_equal_##M(const ferrocl_ctx *c) { \
        const T *in = OPERANDS(T, c); \
        const unsigned char *on = ACTIVE(c), site = on[c->item]; \
        T first = in[sg_first_active(c)]; \
        for (size_t i = sg_first(c), end = sg_first(c) + sg_size(c); i < end; i++) \
            if (on[i] == site && !(in[i] == first)) return 0; \
        return 1; \
    }
COLLECTIVE_TYPES(TWO_OPERANDS)

/* sub_group_broadcast and cl_intel_subgroups' shuffles of vectors, lane by lane: lane
 * L of every work-item in plane L of the lane memory (16 lanes of 8 bytes for each
 * work-item of the largest group: 32 planes of 4-byte lanes, for the shuffles of two
 * 16-lane operands); each reads its sub-group's source work-item's. */
#define LANE_PLANES(c) ((char *)(c)->group->scratch + 16 * COLLECTIVE_SLOTS + 64)
#define LANES(T, M, MIN, MAX) \
    QUERY void __ferrocl_sg_put_lane_##M(T x, unsigned lane, const ferrocl_ctx *c) { \
        size_t at = lane * items(c) + c->item; \
        if (at < COLLECTIVE_SLOTS * 16 * 8 / sizeof(T)) ((T *)LANE_PLANES(c))[at] = x; \
    } \
    QUERY T __ferrocl_sg_get_lane_##M(unsigned lane, unsigned id, const ferrocl_ctx *c) { \
        size_t at = lane * items(c) + sg_first(c) + (id < sg_size(c) ? id : 0); \
        return at < COLLECTIVE_SLOTS * 16 * 8 / sizeof(T) ? ((T *)LANE_PLANES(c))[at] : (T)0; \
    } \
    /* cl_intel_subgroups' shuffles of vectors, as their scalar forms above choose. */ \
    QUERY T __ferrocl_sg_lane_xor_##M(unsigned lane, unsigned mask, const ferrocl_ctx *c) { \
        return __ferrocl_sg_get_lane_##M(lane, (unsigned)sg_local(c) ^ mask, c); \
    } \
    QUERY T __ferrocl_sg_lane_down_##M(unsigned lane, unsigned lanes, unsigned delta, const ferrocl_ctx *c) { \
        size_t n = sg_size(c), at = sg_local(c) + delta; \
        if (at < n) return __ferrocl_sg_get_lane_##M(lane, at, c); \
        return __ferrocl_sg_get_lane_##M(at - n < n ? lanes + lane : lane, at - n < n ? at - n : sg_local(c), c); \
    } \
    QUERY T __ferrocl_sg_lane_up_##M(unsigned lane, unsigned lanes, unsigned delta, const ferrocl_ctx *c) { \
        size_t n = sg_size(c), l = sg_local(c); \
        if (delta <= l) return __ferrocl_sg_get_lane_##M(lane, l - delta, c); \
        return delta - l <= n ? __ferrocl_sg_get_lane_##M(lanes + lane, n - (delta - l), c) \
                              : __ferrocl_sg_get_lane_##M(lane, l, c); \
    }
COLLECTIVE_TYPES(LANES)

/* sub_group_clustered_reduce_<op>(x, cluster) (cl_khr_subgroup_clustered_reduce):
 * between the barriers each work-item folds the operands of its cluster of its
 * sub-group (the cluster sizes are powers of two up to the sub-group's) in local-id
 * order, as the CTS's
 * reference does, which matters for floating point. */
#define CLUSTERED(OP, T, M) \
    QUERY T __ferrocl_sg_clustered_reduce_##OP##_##M(unsigned cluster, const ferrocl_ctx *c) { \
        size_t n = sg_size(c), base = cluster ? sg_local(c) / cluster * cluster : 0; \
        size_t end = base + cluster < n ? base + cluster : n; \
        const T *in = OPERANDS(T, c) + sg_first(c); \
        T r = FIRST_##OP(in[base]); \
        for (size_t i = base + 1; i < end; i++) r = OP_##OP(r, in[i]); \
        return r; \
    }
#define CLUSTERED_ARITHMETIC(T, M, MIN, MAX) CLUSTERED(add, T, M) CLUSTERED(mul, T, M) CLUSTERED(min, T, M) CLUSTERED(max, T, M)
#define CLUSTERED_BITS(T, M, MIN, MAX) CLUSTERED(and, T, M) CLUSTERED(or, T, M) CLUSTERED(xor, T, M)
COLLECTIVE_TYPES(CLUSTERED_ARITHMETIC)
INTEGER_OPERANDS(CLUSTERED_BITS)
CLUSTERED(logical_and, int, i)
CLUSTERED(logical_or, int, i)
CLUSTERED(logical_xor, int, i)
