/* Explicit conversions convert_<dst><n>[_sat][_<rounding>](src) (OpenCL C 6.4.3) for
 * every pair of scalar types and every vector width. Integer results saturate exactly
 * through __int128; float to integer rounding uses rint/trunc/ceil/floor; integer or
 * double to float rounding other than to-nearest corrects the nearest result by one
 * ulp in the requested direction. */

#include "clc.h"

typedef __int128 wide;

/* Rounding of a floating value before it becomes an integer. */
#define R_(x) __builtin_trunc(x)
#define R__rtz(x) __builtin_trunc(x)
#define R__rte(x) __builtin_rint(x)
#define R__rtp(x) __builtin_ceil(x)
#define R__rtn(x) __builtin_floor(x)

/* Integer destination D (range LO..HI) from an integer source. */
#define INT_FROM_INT(D, LO, HI, S, SAT, RND) \
    OVL D convert_##D##SAT##RND(S x) { return INT_FROM_INT_##SAT(D, LO, HI, x); }
#define INT_FROM_INT_(D, LO, HI, x) ((D)(x))
#define INT_FROM_INT__sat(D, LO, HI, x) ((wide)(x) > (wide)HI ? (D)HI : (wide)(x) < (wide)LO ? (D)LO : (D)(x))

/* Integer destination from a floating source: round, then (for _sat) clamp; NaN is 0. */
#define INT_FROM_FLOAT(D, LO, HI, S, SAT, RND) \
    OVL D convert_##D##SAT##RND(S x) { return INT_FROM_FLOAT_##SAT(D, LO, HI, S, R_##RND((double)x)); }
#define INT_FROM_FLOAT_(D, LO, HI, S, r) ((D)(r))
#define INT_FROM_FLOAT__sat(D, LO, HI, S, r) \
    ((r) != (r) ? (D)0 : (r) >= (double)HI ? (D)HI : (r) <= (double)LO ? (D)LO : (D)(r))

/* Floating destination: the nearest value, then one step toward the requested
 * direction when the nearest went the other way. Exact comparison happens in wide
 * integers for integer sources and in double for double sources. */
#define FLOAT_FROM(D, S, SAT, RND) \
    OVL D convert_##D##SAT##RND(S x) { return FIX_##RND(D, S, x); }
#define FIX_(D, S, x) ((D)(x))
#define FIX__rte(D, S, x) ((D)(x))
#define FIX__rtz(D, S, x) fix_dir((D)(x), CMP(D, S, x), -1)
#define FIX__rtp(D, S, x) fix_dir((D)(x), CMP(D, S, x), 0)
#define FIX__rtn(D, S, x) fix_dir((D)(x), CMP(D, S, x), 1)

/* Sign of (nearest - exact): >0 if the nearest rounded up. */
#define CMP(D, S, x) cmp_##S((D)(x), x)

#define CMP_INT(S) \
    OVL int cmp_##S(half r, S x) { return cmp_wide_h(r, (wide)x); } \
    OVL int cmp_##S(float r, S x) { return cmp_wide_f(r, (wide)x); } \
    OVL int cmp_##S(double r, S x) { return cmp_wide_d(r, (wide)x); }
/* A finite half rounded from an integer is an integer, exact in float. */
OVL int cmp_wide_h(half r, wide x) {
    if (__builtin_isinf(r)) return r > 0 ? 1 : -1;
    wide w = (wide)(float)r;
    return w > x ? 1 : w < x ? -1 : 0;
}
OVL int cmp_wide_f(float r, wide x) {
    if (r >= 0x1p127f) return 1;
    wide w = (wide)r;
    return w > x ? 1 : w < x ? -1 : 0;
}
OVL int cmp_wide_d(double r, wide x) {
    if (r >= 0x1p127) return 1;
    if (r <= -0x1p127) return -1;
    wide w = (wide)r;
    return w > x ? 1 : w < x ? -1 : 0;
}
FOR_INTEGERS(CMP_INT)
OVL int cmp_half(half r, half x) { return 0; }
OVL int cmp_half(float r, half x) { return 0; }
OVL int cmp_half(double r, half x) { return 0; }
OVL int cmp_float(half r, float x) { return (float)r > x ? 1 : (float)r < x ? -1 : 0; }
OVL int cmp_double(half r, double x) { return (double)r > x ? 1 : (double)r < x ? -1 : 0; }
OVL int cmp_float(float r, float x) { return 0; }
OVL int cmp_float(double r, float x) { return 0; }
OVL int cmp_double(float r, double x) { return (double)r > x ? 1 : (double)r < x ? -1 : 0; }
OVL int cmp_double(double r, double x) { return 0; }

/* Moves r one ulp: dir 0 = toward +inf, 1 = toward -inf, -1 = toward zero, when the
 * nearest rounding went the wrong way. */
#define FIX_DIR(T) \
    OVL T fix_dir(T r, int c, int dir) { \
        if (c == 0 || r != r) return r; \
        if (dir == 0) return c < 0 ? __builtin_nextafter##T(r, (T)INFINITY) : r; \
        if (dir == 1) return c > 0 ? __builtin_nextafter##T(r, -(T)INFINITY) : r; \
        return (r > 0 && c > 0) || (r < 0 && c < 0) ? __builtin_nextafter##T(r, (T)0) : r; \
    }
#define __builtin_nextafterfloat __builtin_nextafterf
#define __builtin_nextafterdouble __builtin_nextafter
FIX_DIR(float)
FIX_DIR(double)

/* half steps with the library's nextafter(half, half) (math.cl: no builtin exists). */
OVL half fix_dir(half r, int c, int dir) {
    if (c == 0 || r != r) return r;
    if (dir == 0) return c < 0 ? nextafter(r, (half)INFINITY) : r;
    if (dir == 1) return c > 0 ? nextafter(r, (half)-INFINITY) : r;
    return (r > 0 && c > 0) || (r < 0 && c < 0) ? nextafter(r, (half)0) : r;
}

/* Every scalar conversion into D, with vector forms. */
#define VECS(D, S, SAT, RND) \
    OVL D##2 convert_##D##2##SAT##RND(S##2 x) { return (D##2)(convert_##D##SAT##RND(x.s0), convert_##D##SAT##RND(x.s1)); } \
    OVL D##3 convert_##D##3##SAT##RND(S##3 x) { \
        return (D##3)(convert_##D##SAT##RND(x.s0), convert_##D##SAT##RND(x.s1), convert_##D##SAT##RND(x.s2)); \
    } \
    OVL D##4 convert_##D##4##SAT##RND(S##4 x) { return (D##4)(convert_##D##2##SAT##RND(x.lo), convert_##D##2##SAT##RND(x.hi)); } \
    OVL D##8 convert_##D##8##SAT##RND(S##8 x) { return (D##8)(convert_##D##4##SAT##RND(x.lo), convert_##D##4##SAT##RND(x.hi)); } \
    OVL D##16 convert_##D##16##SAT##RND(S##16 x) { return (D##16)(convert_##D##8##SAT##RND(x.lo), convert_##D##8##SAT##RND(x.hi)); }

/* The vector forms as one conversion instruction, where the scalar one is C's cast
 * (integer to integer without saturation, to floating point rounding to nearest):
 * through halves, convert_float4(uchar4) took five shuffles on x86. */
#define DIRECT(D, S, SAT, RND) \
    OVL D##2 convert_##D##2##SAT##RND(S##2 x) { return __builtin_convertvector(x, D##2); } \
    OVL D##3 convert_##D##3##SAT##RND(S##3 x) { return __builtin_convertvector(x, D##3); } \
    OVL D##4 convert_##D##4##SAT##RND(S##4 x) { return __builtin_convertvector(x, D##4); } \
    OVL D##8 convert_##D##8##SAT##RND(S##8 x) { return __builtin_convertvector(x, D##8); } \
    OVL D##16 convert_##D##16##SAT##RND(S##16 x) { return __builtin_convertvector(x, D##16); }
#define INT_VECS(D, S, SAT, RND) INT_VECS_##SAT(D, S, SAT, RND)
#define INT_VECS_(D, S, SAT, RND) DIRECT(D, S, SAT, RND)
#define INT_VECS__sat(D, S, SAT, RND) VECS(D, S, SAT, RND)
#define FLOAT_VECS(D, S, SAT, RND) FLOAT_VECS_##RND(D, S, SAT, RND)
#define FLOAT_VECS_(D, S, SAT, RND) DIRECT(D, S, SAT, RND)
#define FLOAT_VECS__rte(D, S, SAT, RND) DIRECT(D, S, SAT, RND)
#define FLOAT_VECS__rtz(D, S, SAT, RND) VECS(D, S, SAT, RND)
#define FLOAT_VECS__rtp(D, S, SAT, RND) VECS(D, S, SAT, RND)
#define FLOAT_VECS__rtn(D, S, SAT, RND) VECS(D, S, SAT, RND)

/* Float vectors to 8- and 16-bit integers in vector instructions: round, clamp to the
 * range (exact in float), NaN to 0. Through halves of the scalar form (in double),
 * convert_uchar4_sat_rte cost a call and ~40 instructions per vector. */
#define RV_(x) __builtin_elementwise_trunc(x)
#define RV__rtz(x) __builtin_elementwise_trunc(x)
#define RV__rte(x) __builtin_elementwise_roundeven(x)
#define RV__rtp(x) __builtin_elementwise_ceil(x)
#define RV__rtn(x) __builtin_elementwise_floor(x)
#define FAST_(DN, SN, LO, HI, r) __builtin_convertvector(r, DN)
#define FAST__sat(DN, SN, LO, HI, r) \
    __builtin_convertvector((r) != (r) ? (SN)0 : __builtin_elementwise_min(__builtin_elementwise_max(r, (SN)(LO)), (SN)(HI)), DN)
#define FAST_N(D, LO, HI, S, SAT, RND, N) \
    OVL D##N convert_##D##N##SAT##RND(S##N x) { return FAST_##SAT(D##N, S##N, LO, HI, RV_##RND(x)); }
#define FAST_VECS(D, LO, HI, S, SAT, RND) \
    FAST_N(D, LO, HI, S, SAT, RND, 2) FAST_N(D, LO, HI, S, SAT, RND, 3) FAST_N(D, LO, HI, S, SAT, RND, 4) \
    FAST_N(D, LO, HI, S, SAT, RND, 8) FAST_N(D, LO, HI, S, SAT, RND, 16)
#define INT_FLOAT_FAST_V(D, LO, HI, S, SAT, RND) INT_FROM_FLOAT(D, LO, HI, S, SAT, RND) FAST_VECS(D, LO, HI, S, SAT, RND)

/* Scalar and vector forms of one conversion. */
#define INT_INT_V(D, LO, HI, S, SAT, RND) INT_FROM_INT(D, LO, HI, S, SAT, RND) INT_VECS(D, S, SAT, RND)
#define INT_FLOAT_V(D, LO, HI, S, SAT, RND) INT_FROM_FLOAT(D, LO, HI, S, SAT, RND) VECS(D, S, SAT, RND)
#define FLOAT_V(D, LO, HI, S, SAT, RND) FLOAT_FROM(D, S, SAT, RND) FLOAT_VECS(D, S, SAT, RND)

#define MODES(M, D, LO, HI, S, SAT) \
    M(D, LO, HI, S, SAT, ) M(D, LO, HI, S, SAT, _rte) M(D, LO, HI, S, SAT, _rtz) M(D, LO, HI, S, SAT, _rtp) \
    M(D, LO, HI, S, SAT, _rtn)
#define SAT_MODES(M, D, LO, HI, S) MODES(M, D, LO, HI, S, ) MODES(M, D, LO, HI, S, _sat)

/* An integer destination from every source type; FV: the form of float sources. */
#define INTEGER_DST(D, LO, HI, FV) \
    SAT_MODES(INT_INT_V, D, LO, HI, char) SAT_MODES(INT_INT_V, D, LO, HI, uchar) \
    SAT_MODES(INT_INT_V, D, LO, HI, short) SAT_MODES(INT_INT_V, D, LO, HI, ushort) \
    SAT_MODES(INT_INT_V, D, LO, HI, int) SAT_MODES(INT_INT_V, D, LO, HI, uint) \
    SAT_MODES(INT_INT_V, D, LO, HI, long) SAT_MODES(INT_INT_V, D, LO, HI, ulong) \
    SAT_MODES(FV, D, LO, HI, float) SAT_MODES(INT_FLOAT_V, D, LO, HI, double) \
    SAT_MODES(INT_FLOAT_V, D, LO, HI, half)

/* A floating destination from every source type (no _sat forms). */
#define FLOAT_DST(D) \
    MODES(FLOAT_V, D, 0, 0, char, ) MODES(FLOAT_V, D, 0, 0, uchar, ) MODES(FLOAT_V, D, 0, 0, short, ) \
    MODES(FLOAT_V, D, 0, 0, ushort, ) MODES(FLOAT_V, D, 0, 0, int, ) MODES(FLOAT_V, D, 0, 0, uint, ) \
    MODES(FLOAT_V, D, 0, 0, long, ) MODES(FLOAT_V, D, 0, 0, ulong, ) MODES(FLOAT_V, D, 0, 0, float, ) \
    MODES(FLOAT_V, D, 0, 0, double, ) MODES(FLOAT_V, D, 0, 0, half, )

INTEGER_DST(char, CHAR_MIN, CHAR_MAX, INT_FLOAT_FAST_V)
INTEGER_DST(uchar, 0, UCHAR_MAX, INT_FLOAT_FAST_V)
INTEGER_DST(short, SHRT_MIN, SHRT_MAX, INT_FLOAT_FAST_V)
INTEGER_DST(ushort, 0, USHRT_MAX, INT_FLOAT_FAST_V)
INTEGER_DST(int, INT_MIN, INT_MAX, INT_FLOAT_V)
INTEGER_DST(uint, 0, UINT_MAX, INT_FLOAT_V)
INTEGER_DST(long, LONG_MIN, LONG_MAX, INT_FLOAT_V)
INTEGER_DST(ulong, 0, ULONG_MAX, INT_FLOAT_V)
FLOAT_DST(float)
FLOAT_DST(double)
FLOAT_DST(half)
