/* Integer functions (OpenCL C 6.15.3). Exact results through __int128 where the
 * operation can leave the type's range. */

#include "clc.h"

typedef __int128 wide;

/* Every integer type: T, its signed and unsigned twins S and U, its width BITS and
 * its range LO..HI, for the families below that take them all. */
#define FOR_INTEGER_TYPES(M) \
    M(char, char, uchar, 8, CHAR_MIN, CHAR_MAX) \
    M(uchar, char, uchar, 8, 0, UCHAR_MAX) \
    M(short, short, ushort, 16, SHRT_MIN, SHRT_MAX) \
    M(ushort, short, ushort, 16, 0, USHRT_MAX) \
    M(int, int, uint, 32, INT_MIN, INT_MAX) \
    M(uint, int, uint, 32, 0, UINT_MAX) \
    M(long, long, ulong, 64, LONG_MIN, LONG_MAX) \
    M(ulong, long, ulong, 64, 0, ULONG_MAX)

#define INTEGER(T, S, U, BITS, LO, HI) \
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
    FOR_WIDTHS(INTEGER_VECTORS, T, U, BITS)

/* The vector forms, each one vector expression: through component halves, popcount,
 * rotate, min, mad_sat and mul_hi on int16 came out 1.3-15x slower per element than a
 * scalar loop. SWAR popcount and the rotate expression are what LLVM recognises as
 * ctpop and funnel shifts. */
#define INTEGER_VECTORS(N, T, U, BITS) \
    OVL U##N abs(T##N x) { \
        U##N u = AS(x, U##N); \
        return x < (T##N)0 ? -u : u; \
    } \
    OVL U##N abs_diff(T##N x, T##N y) { \
        U##N ux = AS(x, U##N), uy = AS(y, U##N); \
        return x > y ? ux - uy : uy - ux; \
    } \
    OVL T##N add_sat(T##N x, T##N y) { return __builtin_elementwise_add_sat(x, y); } \
    OVL T##N sub_sat(T##N x, T##N y) { return __builtin_elementwise_sub_sat(x, y); } \
    OVL T##N hadd(T##N x, T##N y) { return (x >> (T##N)1) + (y >> (T##N)1) + (x & y & (T##N)1); } \
    OVL T##N rhadd(T##N x, T##N y) { return (x >> (T##N)1) + (y >> (T##N)1) + ((x | y) & (T##N)1); } \
    OVL T##N max(T##N x, T##N y) { return __builtin_elementwise_max(x, y); } \
    OVL T##N min(T##N x, T##N y) { return __builtin_elementwise_min(x, y); } \
    OVL T##N max(T##N x, T y) { return __builtin_elementwise_max(x, (T##N)y); } \
    OVL T##N min(T##N x, T y) { return __builtin_elementwise_min(x, (T##N)y); } \
    OVL T##N clamp(T##N x, T##N lo, T##N hi) { return min(max(x, lo), hi); } \
    OVL T##N clamp(T##N x, T lo, T hi) { return min(max(x, lo), hi); } \
    OVL T##N popcount(T##N x) { \
        U##N v = AS(x, U##N); \
        U ones = (U)~(U)0; \
        v = v - ((v >> (U##N)1) & (U##N)(U)(ones / 3)); \
        v = (v & (U##N)(U)(ones / 5)) + ((v >> (U##N)2) & (U##N)(U)(ones / 5)); \
        v = (v + (v >> (U##N)4)) & (U##N)(U)(ones / 17); \
        return AS((v * (U##N)(U)(ones / 255)) >> (U##N)(BITS - 8), T##N); \
    } \
    /* clz: the bits below the highest set one, smeared, counted inverted; ctz: the \
     * zeros below the lowest set bit. Both give BITS for 0. */ \
    OVL T##N clz(T##N x) { \
        U##N v = AS(x, U##N); \
        for (int s = 1; s < BITS; s <<= 1) v |= v >> (U##N)s; \
        return popcount(AS(~v, T##N)); \
    } \
    OVL T##N ctz(T##N x) { \
        U##N v = AS(x, U##N); \
        return popcount(AS(~v & (v - (U##N)1), T##N)); \
    } \
    OVL T##N rotate(T##N v, T##N i) { \
        U##N u = AS(v, U##N), n = AS(i, U##N) & (U##N)(BITS - 1); \
        return AS((u << n) | (u >> (((U##N)BITS - n) & (U##N)(BITS - 1))), T##N); \
    }

/* mul_hi and mad_sat through the next wider type W, for 8- to 32-bit types (a 64-bit
 * one has no wider vector type: component-wise through __int128). */
#define WIDENING(N, T, W, LO, HI, BITS) \
    OVL T##N mul_hi(T##N x, T##N y) { return CVT((CVT(x, W##N) * CVT(y, W##N)) >> (W##N)BITS, T##N); } \
    OVL T##N mad_hi(T##N x, T##N y, T##N z) { return mul_hi(x, y) + z; } \
    OVL T##N mad_sat(T##N x, T##N y, T##N z) { \
        W##N r = CVT(x, W##N) * CVT(y, W##N) + CVT(z, W##N); \
        return CVT(__builtin_elementwise_min(__builtin_elementwise_max(r, (W##N)LO), (W##N)HI), T##N); \
    }
/* mul_hi on 64-bit vectors: no vector instruction gives the high half of a 64x64
 * product, so it is summed from the four 32x32->64 products (PMULUDQ), about a dozen
 * vector operations per vector. Lane by lane through __int128, the extracts and inserts
 * around each scalar multiply made mul_hi(long16) 1.2-2.2x slower per element than a
 * scalar loop. Signed: the unsigned high half less y where x < 0 and x where y < 0. */
#define MUL_HI64(N, _) \
    OVL ulong##N mul_hi(ulong##N x, ulong##N y) { \
        ulong##N m = (ulong##N)0xffffffffUL, xl = x & m, xh = x >> 32, yl = y & m, yh = y >> 32; \
        ulong##N ll = xl * yl, lh = xl * yh, hl = xh * yl; \
        ulong##N mid = (ll >> 32) + (lh & m) + (hl & m); \
        return xh * yh + (lh >> 32) + (hl >> 32) + (mid >> 32); \
    } \
    OVL long##N mul_hi(long##N x, long##N y) { \
        ulong##N ux = AS(x, ulong##N), uy = AS(y, ulong##N); \
        ulong##N sx = AS(x >> 63, ulong##N), sy = AS(y >> 63, ulong##N); \
        return AS(mul_hi(ux, uy) - (sx & uy) - (sy & ux), long##N); \
    } \
    OVL ulong##N mad_hi(ulong##N x, ulong##N y, ulong##N z) { return mul_hi(x, y) + z; } \
    OVL long##N mad_hi(long##N x, long##N y, long##N z) { return mul_hi(x, y) + z; }
FOR_WIDTHS(MUL_HI64, _)
#define WIDE64(T) VEC3(T, mad_sat, T, T, T)

FOR_INTEGER_TYPES(INTEGER)
FOR_WIDTHS(WIDENING, char, short, CHAR_MIN, CHAR_MAX, 8)
FOR_WIDTHS(WIDENING, uchar, ushort, 0, UCHAR_MAX, 8)
FOR_WIDTHS(WIDENING, short, int, SHRT_MIN, SHRT_MAX, 16)
FOR_WIDTHS(WIDENING, ushort, uint, 0, USHRT_MAX, 16)
FOR_WIDTHS(WIDENING, int, long, INT_MIN, INT_MAX, 32)
FOR_WIDTHS(WIDENING, uint, ulong, 0, UINT_MAX, 32)
WIDE64(long)
WIDE64(ulong)

/* upsample(hi, lo): the two halves of the next wider type. */
#define UPSAMPLE(W, H, L, BITS) \
    OVL W upsample(H hi, L lo) { return ((W)hi << BITS) | (W)lo; } \
    FOR_WIDTHS(UPSAMPLE_VECTOR, W, H, L, BITS)
#define UPSAMPLE_VECTOR(N, W, H, L, BITS) \
    OVL W##N upsample(H##N hi, L##N lo) { return (CVT(hi, W##N) << (W##N)BITS) | CVT(lo, W##N); }
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

/* cl_khr_extended_bit_ops. Offsets and counts past the type's width are undefined;
 * OpenCL C masks shift counts to the width, so only the full-width mask (count ==
 * BITS) and the empty field (count == 0) need a case of their own. Extraction shifts
 * the field to the top, then back down: arithmetically for the signed form. */
#define BIT_OPS(T, S, U, BITS, LO, HI) \
    OVL T bitfield_insert(T base, T insert, uint offset, uint count) { \
        U mask = count >= BITS ? (U)~(U)0 : (U)((U)((U)1 << count) - (U)1); \
        mask = (U)(mask << offset); \
        return (T)(((U)base & (U)~mask) | ((U)((U)insert << offset) & mask)); \
    } \
    OVL S bitfield_extract_signed(T base, uint offset, uint count) { \
        return count == 0 ? (S)0 : (S)((S)(U)((U)base << (BITS - count - offset)) >> (BITS - count)); \
    } \
    OVL U bitfield_extract_unsigned(T base, uint offset, uint count) { \
        return count == 0 ? (U)0 : (U)((U)((U)base << (BITS - count - offset)) >> (BITS - count)); \
    } \
    /* Not the element-wise builtin here: it promotes a scalar char or short to int. */ \
    OVL T bit_reverse(T base) { return (T)__builtin_bitreverse##BITS((U)base); } \
    FOR_WIDTHS(BIT_OPS_VECTORS, T, S, U, BITS)
#define BIT_OPS_VECTORS(N, T, S, U, BITS) \
    OVL T##N bitfield_insert(T##N base, T##N insert, uint offset, uint count) { \
        U##N ones = (U##N)(U)~(U)0; \
        U##N mask = count >= BITS ? ones : ((U##N)(U)1 << (U##N)(U)count) - (U##N)(U)1; \
        mask = mask << (U##N)(U)offset; \
        return AS((AS(base, U##N) & ~mask) | ((AS(insert, U##N) << (U##N)(U)offset) & mask), T##N); \
    } \
    OVL S##N bitfield_extract_signed(T##N base, uint offset, uint count) { \
        S##N top = AS(AS(base, U##N) << (U##N)(U)(BITS - count - offset), S##N); \
        return count == 0 ? (S##N)0 : top >> (S##N)(S)(BITS - count); \
    } \
    OVL U##N bitfield_extract_unsigned(T##N base, uint offset, uint count) { \
        U##N top = AS(base, U##N) << (U##N)(U)(BITS - count - offset); \
        return count == 0 ? (U##N)0 : top >> (U##N)(U)(BITS - count); \
    } \
    OVL T##N bit_reverse(T##N base) { return __builtin_elementwise_bitreverse(base); }
FOR_INTEGER_TYPES(BIT_OPS)

/* cl_khr_integer_dot_product: 4x8-bit dot products, as vectors (the four products
 * and their sum fit the 32-bit result), and the packed forms, whose byte 0 is the
 * least significant (as_uchar4 on a little-endian device). The sum cannot overflow,
 * so the saturating forms saturate only the accumulation. */
/* The four signedness forms: the packed functions' suffix, the result, the inputs. */
#define DOT_FORMS(F) \
    F(uu_uint, uint, uchar, uchar) \
    F(ss_int, int, char, char) \
    F(us_int, int, uchar, char) \
    F(su_int, int, char, uchar)
#define DOT(SUFFIX, R, A, B) \
    OVL R dot(A##4 a, B##4 b) { \
        R##4 p = CVT(a, R##4) * CVT(b, R##4); \
        return p.s0 + p.s1 + p.s2 + p.s3; \
    } \
    OVL R dot_acc_sat(A##4 a, B##4 b, R acc) { return add_sat(dot(a, b), acc); }
#define DOT_PACKED(SUFFIX, R, A, B) \
    OVL R dot_4x8packed_##SUFFIX(uint a, uint b) { return dot(AS(a, A##4), AS(b, B##4)); } \
    OVL R dot_acc_sat_4x8packed_##SUFFIX(uint a, uint b, R acc) { return dot_acc_sat(AS(a, A##4), AS(b, B##4), acc); }
DOT_FORMS(DOT)
DOT_FORMS(DOT_PACKED)
