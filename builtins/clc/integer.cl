/* Integer functions (OpenCL C 6.15.3). Exact results through __int128 where the
 * operation can leave the type's range. */

#include "clc.h"

typedef __int128 wide;

/* T: the type, U: its unsigned twin, BITS, LO/HI: its range. */
#define INTEGER(T, U, BITS, LO, HI) \
    OVL U abs(T x) { return x < (T)0 ? (U)((U)0 - (U)x) : (U)x; } \
    OVL U abs_diff(T x, T y) { return x > y ? (U)((U)x - (U)y) : (U)((U)y - (U)x); } \
    OVL T add_sat(T x, T y) { wide r = (wide)x + (wide)y; return r > (wide)HI ? HI : r < (wide)LO ? LO : (T)r; } \
    OVL T sub_sat(T x, T y) { wide r = (wide)x - (wide)y; return r > (wide)HI ? HI : r < (wide)LO ? LO : (T)r; } \
    OVL T hadd(T x, T y) { return (x >> 1) + (y >> 1) + (x & y & (T)1); } \
    OVL T rhadd(T x, T y) { return (x >> 1) + (y >> 1) + ((x | y) & (T)1); } \
    OVL T clamp(T x, T lo, T hi) { return x < lo ? lo : x > hi ? hi : x; } \
    OVL T max(T x, T y) { return x > y ? x : y; } \
    OVL T min(T x, T y) { return x < y ? x : y; } \
    /* In OpenCL C `long long` is 128 bits: the `l` builtins are the 64-bit ones. */ \
    OVL T clz(T x) { \
        return x == (T)0 ? (T)BITS : (T)(__builtin_clzl((ulong)(U)x) - (64 - BITS)); \
    } \
    OVL T ctz(T x) { return x == (T)0 ? (T)BITS : (T)__builtin_ctzl((ulong)(U)x); } \
    OVL T popcount(T x) { return (T)__builtin_popcountl((ulong)(U)x); } \
    OVL T mul_hi(T x, T y) { return (T)(((wide)x * (wide)y) >> BITS); } \
    OVL T mad_hi(T x, T y, T z) { return mul_hi(x, y) + z; } \
    OVL T mad_sat(T x, T y, T z) { \
        /* The product of two 64-bit values fits 128 bits; adding z may not, but then \
         * the sum is far outside any range and saturates either way. */ \
        wide p; \
        if (__builtin_mul_overflow((wide)x, (wide)y, &p)) return ((x < (T)0) != (y < (T)0)) ? LO : HI; \
        wide r; \
        if (__builtin_add_overflow(p, (wide)z, &r)) return p < 0 ? LO : HI; \
        return r > (wide)HI ? HI : r < (wide)LO ? LO : (T)r; \
    } \
    OVL T rotate(T v, T i) { \
        U n = (U)i & (U)(BITS - 1); \
        return (T)(((U)v << n) | ((U)v >> ((U)(BITS - n) & (U)(BITS - 1)))); \
    } \
    VEC1(U, abs, T) VEC2(U, abs_diff, T, T) VEC2(T, add_sat, T, T) VEC2(T, sub_sat, T, T) \
    VEC2(T, hadd, T, T) VEC2(T, rhadd, T, T) VEC3(T, clamp, T, T, T) VEC3SS(T, clamp, T, T) \
    VEC2(T, max, T, T) VEC2S(T, max, T, T) VEC2(T, min, T, T) VEC2S(T, min, T, T) \
    VEC1(T, clz, T) VEC1(T, ctz, T) VEC1(T, popcount, T) VEC2(T, mul_hi, T, T) \
    VEC3(T, mad_hi, T, T, T) VEC3(T, mad_sat, T, T, T) VEC2(T, rotate, T, T)

INTEGER(char, uchar, 8, CHAR_MIN, CHAR_MAX)
INTEGER(uchar, uchar, 8, 0, UCHAR_MAX)
INTEGER(short, ushort, 16, SHRT_MIN, SHRT_MAX)
INTEGER(ushort, ushort, 16, 0, USHRT_MAX)
INTEGER(int, uint, 32, INT_MIN, INT_MAX)
INTEGER(uint, uint, 32, 0, UINT_MAX)
INTEGER(long, ulong, 64, LONG_MIN, LONG_MAX)
INTEGER(ulong, ulong, 64, 0, ULONG_MAX)

/* upsample(hi, lo): the two halves of the next wider type. */
#define UPSAMPLE(W, H, L, BITS) \
    OVL W upsample(H hi, L lo) { return ((W)hi << BITS) | (W)lo; } \
    VEC2(W, upsample, H, L)
UPSAMPLE(short, char, uchar, 8)
UPSAMPLE(ushort, uchar, uchar, 8)
UPSAMPLE(int, short, ushort, 16)
UPSAMPLE(uint, ushort, ushort, 16)
UPSAMPLE(long, int, uint, 32)
UPSAMPLE(ulong, uint, uint, 32)

/* 24-bit multiplies: defined only for operands in 24-bit range, where the full
 * 32-bit product is the answer. */
#define FAST24(T) \
    OVL T mul24(T x, T y) { return x * y; } \
    OVL T mad24(T x, T y, T z) { return x * y + z; } \
    VEC_EXPR2(T, mul24, x * y) VEC_EXPR3(T, mad24, x * y + z)
FAST24(int)
FAST24(uint)
