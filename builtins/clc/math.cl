/* Math functions (OpenCL C 6.15.2) for float and double. Scalars map to clang
 * builtins (libm or single instructions); vectors are component-wise. native_ and
 * half_ variants use the full-precision functions, which satisfy their looser
 * accuracy. */

#include "clc.h"

/* f(x) -> libm builtin; for T = float the builtin name takes an f suffix. */
#define MATH1(NAME, FB, DB) \
    OVL float NAME(float x) { return FB(x); } \
    OVL double NAME(double x) { return DB(x); } \
    VEC1(float, NAME, float) \
    VEC1(double, NAME, double)

/* Functions with an element-wise clang builtin (one LLVM vector intrinsic, exact as
 * the scalar one): vectors through it rather than component-wise (fma(float16)
 * component-wise came out as 4-wide code, 8.8x slower per element than a scalar loop). */
#define MATH1E(NAME, FB, DB, EB) \
    OVL float NAME(float x) { return FB(x); } \
    OVL double NAME(double x) { return DB(x); } \
    FOR_WIDTHS(ELEMENTWISE1, NAME, EB, float) \
    FOR_WIDTHS(ELEMENTWISE1, NAME, EB, double)
#define ELEMENTWISE1(N, NAME, EB, T) \
    OVL T##N NAME(T##N x) { return EB(x); }
#define MATH2E(NAME, FB, DB, EB) \
    OVL float NAME(float x, float y) { return FB(x, y); } \
    OVL double NAME(double x, double y) { return DB(x, y); } \
    FOR_WIDTHS(ELEMENTWISE2, NAME, EB, float) \
    FOR_WIDTHS(ELEMENTWISE2, NAME, EB, double)
#define ELEMENTWISE2(N, NAME, EB, T) \
    OVL T##N NAME(T##N x, T##N y) { return EB(x, y); }

#define MATH2(NAME, FB, DB) \
    OVL float NAME(float x, float y) { return FB(x, y); } \
    OVL double NAME(double x, double y) { return DB(x, y); } \
    VEC2(float, NAME, float, float) \
    VEC2(double, NAME, double, double)

MATH1(acos, __builtin_acosf, __builtin_acos)
MATH1(acosh, __builtin_acoshf, __builtin_acosh)
MATH1(asin, __builtin_asinf, __builtin_asin)
MATH1(asinh, __builtin_asinhf, __builtin_asinh)
MATH1(atan, __builtin_atanf, __builtin_atan)
MATH1(atanh, __builtin_atanhf, __builtin_atanh)
MATH1(cbrt, __builtin_cbrtf, __builtin_cbrt)
MATH1E(ceil, __builtin_ceilf, __builtin_ceil, __builtin_elementwise_ceil)
MATH1(cos, __builtin_cosf, __builtin_cos)
MATH1(cosh, __builtin_coshf, __builtin_cosh)
MATH1(erfc, __builtin_erfcf, __builtin_erfc)
MATH1(erf, __builtin_erff, __builtin_erf)
MATH1(exp, __builtin_expf, __builtin_exp)
MATH1(exp2, __builtin_exp2f, __builtin_exp2)
MATH1(expm1, __builtin_expm1f, __builtin_expm1)
MATH1E(fabs, __builtin_fabsf, __builtin_fabs, __builtin_elementwise_abs)
MATH1E(floor, __builtin_floorf, __builtin_floor, __builtin_elementwise_floor)
MATH1(lgamma, __builtin_lgammaf, __builtin_lgamma)
MATH1(log, __builtin_logf, __builtin_log)
MATH1(log2, __builtin_log2f, __builtin_log2)
MATH1(log10, __builtin_log10f, __builtin_log10)
MATH1(log1p, __builtin_log1pf, __builtin_log1p)
MATH1(logb, __builtin_logbf, __builtin_logb)
MATH1E(rint, __builtin_rintf, __builtin_rint, __builtin_elementwise_rint)
MATH1E(round, __builtin_roundf, __builtin_round, __builtin_elementwise_round)
MATH1(sin, __builtin_sinf, __builtin_sin)
MATH1(sinh, __builtin_sinhf, __builtin_sinh)
MATH1E(sqrt, __builtin_sqrtf, __builtin_sqrt, __builtin_elementwise_sqrt)
MATH1(tan, __builtin_tanf, __builtin_tan)
MATH1(tanh, __builtin_tanhf, __builtin_tanh)
MATH1(tgamma, __builtin_tgammaf, __builtin_tgamma)
MATH1E(trunc, __builtin_truncf, __builtin_trunc, __builtin_elementwise_trunc)

MATH2(atan2, __builtin_atan2f, __builtin_atan2)
MATH2E(copysign, __builtin_copysignf, __builtin_copysign, __builtin_elementwise_copysign)
MATH2(fdim, __builtin_fdimf, __builtin_fdim)
MATH2(fmod, __builtin_fmodf, __builtin_fmod)
MATH2(hypot, __builtin_hypotf, __builtin_hypot)
MATH2(nextafter, __builtin_nextafterf, __builtin_nextafter)
MATH2(pow, __builtin_powf, __builtin_pow)
MATH2(remainder, __builtin_remainderf, __builtin_remainder)

/* fmax/fmin (IEEE maxNum/minNum: a NaN operand gives the other) also take a scalar
 * second argument with vectors. */
#define MINMAX(NAME, FB, DB, EB) \
    MATH2E(NAME, FB, DB, EB) \
    FOR_WIDTHS(MINMAX_SCALAR, NAME, EB, float) \
    FOR_WIDTHS(MINMAX_SCALAR, NAME, EB, double)
#define MINMAX_SCALAR(N, NAME, EB, T) \
    OVL T##N NAME(T##N x, T y) { return EB(x, (T##N)y); }
MINMAX(fmax, __builtin_fmaxf, __builtin_fmax, __builtin_elementwise_max)
MINMAX(fmin, __builtin_fminf, __builtin_fmin, __builtin_elementwise_min)

/* Functions defined by a formula over the others, for both float and double. */
#define DERIVED(T) \
    OVL T exp10(T x) { return pow((T)10, x); } \
    OVL T asinpi(T x) { return asin(x) / M_PI; } \
    OVL T acospi(T x) { return acos(x) / M_PI; } \
    OVL T atanpi(T x) { return atan(x) / M_PI; } \
    OVL T atan2pi(T y, T x) { return atan2(y, x) / M_PI; } \
    /* powr: pow for x >= 0, with its own special values (OpenCL C 7.5.1): NaN for x < 0, \
     * 0^0, inf^0 and 1^inf. */ \
    OVL T powr(T x, T y) { \
        if (x < (T)0) return (T)NAN; \
        if (__builtin_isnan(x) || __builtin_isnan(y)) return x + y; \
        if (x == (T)1) return __builtin_isinf(y) ? (T)NAN : (T)1; \
        if (y == (T)0) return x == (T)0 || __builtin_isinf(x) ? (T)NAN : (T)1; \
        if (x == (T)0) return y < (T)0 ? (T)INFINITY : (T)0; \
        if (__builtin_isinf(x)) return y < (T)0 ? (T)0 : (T)INFINITY; \
        return pow(x, y); \
    } \
    OVL T mad(T a, T b, T c) { return a * b + c; } \
    OVL T maxmag(T x, T y) { \
        T ax = fabs(x), ay = fabs(y); \
        return ax > ay ? x : ay > ax ? y : fmax(x, y); \
    } \
    OVL T minmag(T x, T y) { \
        T ax = fabs(x), ay = fabs(y); \
        return ax < ay ? x : ay < ax ? y : fmin(x, y); \
    } \
    VEC1(T, exp10, T) \
    VEC1(T, asinpi, T) VEC1(T, acospi, T) VEC1(T, atanpi, T) \
    VEC2(T, atan2pi, T, T) VEC2(T, powr, T, T) \
    VEC2(T, maxmag, T, T) VEC2(T, minmag, T, T) \
    VEC_EXPR3(T, mad, x * y + z) VEC_EXPR3(T, fma, __builtin_elementwise_fma(x, y, z))
/* sinpi, cospi, tanpi: reduced exactly first (x - 2 rint(x / 2) and x - rint(x) lose no
 * bits), so that integers and half-integers give the exact zeros, ones and infinities
 * 6.15.2.4 requires; sin(x * M_PI) gave sinpi(1) = 1.2e-16. float works in double. */
#define PI_FUNCTIONS(T, W) \
    OVL T sinpi(T x) { \
        W t = (W)x - 2 * rint((W)x * (W)0.5), a = fabs(t); \
        W r = a <= (W)0.25 ? sin(a * M_PI) : a <= (W)0.75 ? cos(((W)0.5 - a) * M_PI) : sin(((W)1 - a) * M_PI); \
        return r == 0 ? copysign((T)0, x) : (T)copysign(r, t); \
    } \
    OVL T cospi(T x) { \
        W a = fabs((W)x - 2 * rint((W)x * (W)0.5)); \
        return a <= (W)0.25 ? (T)cos(a * M_PI) \
               : a <= (W)0.75 ? (T)sin(((W)0.5 - a) * M_PI) \
                               : (T)-cos(((W)1 - a) * M_PI); \
    } \
    OVL T tanpi(T x) { \
        if (__builtin_isinf(x)) return (T)NAN; \
        W n = rint((W)x), t = (W)x - n; \
        int odd = fmod(n, (W)2) != 0; \
        if (t == 0) return copysign((T)0, odd ? -x : x); \
        if (fabs(t) == (W)0.5) return fmod(floor((W)x), (W)2) == 0 ? (T)INFINITY : (T)-INFINITY; \
        /* Near a pole tan magnifies the argument's rounding: there, 1 / tan of the \
         * (exact) distance to it. */ \
        if (fabs(t) > (W)0.25) return (T)copysign((W)1 / tan(((W)0.5 - fabs(t)) * M_PI), t); \
        return (T)tan(t * M_PI); \
    } \
    /* pown and rootn: n converted to T lost its parity (float(2147483647) is even). */ \
    OVL T pown(T x, int n) { return (T)pow((W)x, (W)n); } \
    OVL T rootn(T x, int n) { \
        if (n == 0) return (T)NAN; \
        int odd = n & 1; \
        if (x == 0) return n > 0 ? (odd ? x : (T)0) : (odd ? copysign((T)INFINITY, x) : (T)INFINITY); \
        if (x < 0 && !odd) return (T)NAN; \
        if (__builtin_isinf(x)) return n > 0 ? x : copysign((T)0, x); \
        /* |x| = m 2^e with e = q n + s, |s| < |n|: the root is 2^q (m 2^s)^(1/n), where \
         * 1/n's rounding moves the result by far less than with |x| itself \
         * (rootn(-DBL_MAX, 3) was 75 ulp off). */ \
        int e; \
        W m = frexp(fabs((W)x), &e); \
        int s = e % n, q = (e - s) / n; \
        W r = ldexp(pow(ldexp(m, s), (W)1 / (W)n), q); \
        return (T)(x < 0 ? -r : r); \
    }
PI_FUNCTIONS(float, double)
PI_FUNCTIONS(double, double)
VEC1(float, sinpi, float) VEC1(float, cospi, float) VEC1(float, tanpi, float)
VEC1(double, sinpi, double) VEC1(double, cospi, double) VEC1(double, tanpi, double)
VEC2(float, pown, float, int) VEC2(float, rootn, float, int)
VEC2(double, pown, double, int) VEC2(double, rootn, double, int)

OVL float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
OVL double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
DERIVED(float)
DERIVED(double)

/* rsqrt: one vector square root and division, element by element (LLVM made them 128-bit
 * square roots of shuffled pairs: n-body had 4 vsqrtps and 12 shuffles). With AVX-512,
 * float takes the 14-bit estimate and one Newton step instead: at most 1.04 ulp over
 * every float (the limit is 2), exact for zeros, infinities, negatives and NaNs, where
 * the step gives NaN and the estimate is kept; the divider took two of its instructions
 * per interaction and bound n-body (2 cores, Xeon: G interactions/s). */
#define RSQRT_DIVIDED(T) OVL T rsqrt(T x) { return (T)1 / sqrt(x); } VEC_EXPR1(T, rsqrt, (T)1 / sqrt(x))
RSQRT_DIVIDED(double)
#if defined(__AVX512VL__)
typedef float ferrocl_v4sf __attribute__((__vector_size__(16)));
typedef float ferrocl_v8sf __attribute__((__vector_size__(32)));
#define RSQRT_REFINED(V, EST) \
    V y = EST, h = x * y; \
    V z = __builtin_elementwise_fma(y * 0.5f, __builtin_elementwise_fma(-h, y, (V)1.0f), y); \
    return z != z ? y : z;
#define RSQRT14_4(x) \
    __builtin_bit_cast(float4, __builtin_ia32_rsqrt14ps128_mask(__builtin_bit_cast(ferrocl_v4sf, x), \
                                                                (ferrocl_v4sf){0, 0, 0, 0}, (uchar)0xff))
#define RSQRT14_8(x) \
    __builtin_bit_cast(float8, __builtin_ia32_rsqrt14ps256_mask(__builtin_bit_cast(ferrocl_v8sf, x), \
                                                                (ferrocl_v8sf){0, 0, 0, 0, 0, 0, 0, 0}, (uchar)0xff))
OVL float4 rsqrt(float4 x) { RSQRT_REFINED(float4, RSQRT14_4(x)) }
OVL float8 rsqrt(float8 x) { RSQRT_REFINED(float8, RSQRT14_8(x)) }
OVL float rsqrt(float x) { return rsqrt((float4)x).s0; }
OVL float2 rsqrt(float2 x) { return rsqrt((float4)(x, 1.0f, 1.0f)).s01; }
OVL float3 rsqrt(float3 x) { return rsqrt((float4)(x, 1.0f)).s012; }
OVL float16 rsqrt(float16 x) { return (float16)(rsqrt(x.lo), rsqrt(x.hi)); }
#else
RSQRT_DIVIDED(float)
#endif

/* native_ and half_ variants (float only). */
#define NATIVE1(F) \
    OVL float native_##F(float x) { return F(x); } \
    OVL float half_##F(float x) { return F(x); } \
    VEC1(float, native_##F, float) \
    VEC1(float, half_##F, float)
NATIVE1(cos) NATIVE1(exp) NATIVE1(exp2) NATIVE1(exp10) NATIVE1(log) NATIVE1(log2) NATIVE1(log10)
NATIVE1(rsqrt) NATIVE1(sin) NATIVE1(sqrt) NATIVE1(tan)
OVL float native_recip(float x) { return 1.0f / x; }
OVL float half_recip(float x) { return 1.0f / x; }
OVL float native_divide(float x, float y) { return x / y; }
OVL float half_divide(float x, float y) { return x / y; }
OVL float native_powr(float x, float y) { return powr(x, y); }
OVL float half_powr(float x, float y) { return powr(x, y); }
VEC1(float, native_recip, float) VEC1(float, half_recip, float)
VEC2(float, native_divide, float, float) VEC2(float, half_divide, float, float)
VEC2(float, native_powr, float, float) VEC2(float, half_powr, float, float)

/* remquo with the 7 low bits of the quotient OpenCL requires (the C library gives 3):
 * fmod by 128 y is exact and leaves a quotient below 128, whose bits come from
 * subtracting 64 y, 32 y, ... (each exact by Sterbenz's lemma), then rounding to
 * nearest, ties to even, as remainder does. */
#define REMQUO7(T) \
    static OVL T remquo7(T x, T y, int *quo) { \
        T r = remainder(x, y); \
        if (__builtin_isnan(r)) { \
            *quo = 0; \
            return r; \
        } \
        T ay = fabs(y), a = fmod(fabs(x), ay * (T)128); \
        int k = 0; \
        for (int b = 6; b >= 0; b--) { \
            T m = ay * (T)(1 << b); \
            if (a >= m) { \
                a -= m; \
                k += 1 << b; \
            } \
        } \
        if (a > ay - a || (a == ay - a && (k & 1))) k++; \
        k &= 127; \
        *quo = (__builtin_signbit(x) != __builtin_signbit(y)) ? -k : k; \
        return r; \
    }
REMQUO7(float)
REMQUO7(double)

/* ilogb, ldexp, nan, fract/modf/frexp/remquo/sincos/lgamma_r (pointer outputs). */
#define POINTERS(T, I, AS) \
    /* The largest T below 1 caps x - floor(x), which rounds to 1 for tiny negative x; \
     * NaN gives NaN twice, infinities a zero of their sign. */ \
    OVL T fract(T x, AS T *iptr) { \
        T f = floor(x); \
        *iptr = f; \
        if (__builtin_isnan(x) || __builtin_isinf(x)) return __builtin_isnan(x) ? x : copysign((T)0, x); \
        return fmin(x - f, nextafter((T)1, (T)0)); \
    } \
    OVL T modf(T x, AS T *iptr) { \
        T i = trunc(x); \
        *iptr = i; \
        return copysign(__builtin_isinf(x) ? (T)0 : x - i, x); \
    } \
    OVL T sincos(T x, AS T *c) { \
        *c = cos(x); \
        return sin(x); \
    } \
    OVL T frexp(T x, AS int *e) { \
        int ex; \
        T m = __builtin_frexp(x, &ex); \
        *e = ex; \
        return m; \
    } \
    OVL T remquo(T x, T y, AS int *q) { \
        int qq; \
        T r = remquo7(x, y, &qq); \
        *q = qq; \
        return r; \
    } \
    /* The sign of gamma(x): negative between -1 and 0, -3 and -2, ... (from the parity \
     * of floor(x), not from tgamma, which underflows to -0 or overflows far out). */ \
    OVL T lgamma_r(T x, AS int *s) { \
        T f = floor(x); \
        *s = x == 0 ? (__builtin_signbit(x) ? -1 : 1) : (x < 0 && x != f && fmod(f, (T)2) != 0) ? -1 : 1; \
        return lgamma(x); \
    }
/* The vector forms: each component through the scalar function into private
 * temporaries, then the output vector stored once. */
#define VEC_OUT(F, T, P, AS) \
    OVL T##2 F(T##2 x, AS P##2 *o) { \
        P a, b; \
        T##2 r = (T##2)(F(x.s0, &a), F(x.s1, &b)); \
        *o = (P##2)(a, b); \
        return r; \
    } \
    OVL T##3 F(T##3 x, AS P##3 *o) { \
        P a, b, c; \
        T##3 r = (T##3)(F(x.s0, &a), F(x.s1, &b), F(x.s2, &c)); \
        *o = (P##3)(a, b, c); \
        return r; \
    } \
    VEC_OUT_HALVES(F, T, P, AS, 4, 2) VEC_OUT_HALVES(F, T, P, AS, 8, 4) VEC_OUT_HALVES(F, T, P, AS, 16, 8)
#define VEC_OUT_HALVES(F, T, P, AS, N, H) \
    OVL T##N F(T##N x, AS P##N *o) { \
        P##H a, b; \
        T##N r = (T##N)(F(x.lo, &a), F(x.hi, &b)); \
        *o = (P##N)(a, b); \
        return r; \
    }
/* remquo: two value arguments. */
#define VEC_OUT2(F, T, P, AS) \
    OVL T##2 F(T##2 x, T##2 y, AS P##2 *o) { \
        P a, b; \
        T##2 r = (T##2)(F(x.s0, y.s0, &a), F(x.s1, y.s1, &b)); \
        *o = (P##2)(a, b); \
        return r; \
    } \
    OVL T##3 F(T##3 x, T##3 y, AS P##3 *o) { \
        P a, b, c; \
        T##3 r = (T##3)(F(x.s0, y.s0, &a), F(x.s1, y.s1, &b), F(x.s2, y.s2, &c)); \
        *o = (P##3)(a, b, c); \
        return r; \
    } \
    VEC_OUT2_HALVES(F, T, P, AS, 4, 2) VEC_OUT2_HALVES(F, T, P, AS, 8, 4) VEC_OUT2_HALVES(F, T, P, AS, 16, 8)
#define VEC_OUT2_HALVES(F, T, P, AS, N, H) \
    OVL T##N F(T##N x, T##N y, AS P##N *o) { \
        P##H a, b; \
        T##N r = (T##N)(F(x.lo, y.lo, &a), F(x.hi, y.hi, &b)); \
        *o = (P##N)(a, b); \
        return r; \
    }
#define POINTER_VECTORS(T, I, AS) \
    VEC_OUT(fract, T, T, AS) VEC_OUT(modf, T, T, AS) VEC_OUT(sincos, T, T, AS) VEC_OUT(frexp, T, I, AS) \
    VEC_OUT(lgamma_r, T, I, AS) VEC_OUT2(remquo, T, I, AS)
#define ALL_SPACES(M, T, I) M(T, I, __global) M(T, I, __local) M(T, I, __private)
ALL_SPACES(POINTERS, float, int)
ALL_SPACES(POINTERS, double, int)
/* Private first: the wider forms of every space go through the narrower private ones. */
#define PRIVATE_FIRST(M, T, I) M(T, I, __private) M(T, I, __global) M(T, I, __local)
PRIVATE_FIRST(POINTER_VECTORS, float, int)
PRIVATE_FIRST(POINTER_VECTORS, double, int)

/* OpenCL's FP_ILOGBNAN is INT_MAX; the C library's is INT_MIN. */
OVL int ilogb(float x) { return __builtin_isnan(x) ? INT_MAX : __builtin_ilogbf(x); }
OVL int ilogb(double x) { return __builtin_isnan(x) ? INT_MAX : __builtin_ilogb(x); }
VEC1(int, ilogb, float)
VEC1(int, ilogb, double)
OVL float ldexp(float x, int k) { return __builtin_ldexpf(x, k); }
OVL double ldexp(double x, int k) { return __builtin_ldexp(x, k); }
VEC2(float, ldexp, float, int)
VEC2(double, ldexp, double, int)
VEC2S(float, ldexp, float, int)
VEC2S(double, ldexp, double, int)
OVL float nan(uint c) { return __builtin_astype(0x7fc00000u | (c & 0x3fffffu), float); }
OVL double nan(ulong c) { return __builtin_astype(0x7ff8000000000000ul | (c & 0x7ffffffffffful), double); }
VEC1(float, nan, uint)
VEC1(double, nan, ulong)

/* cl_khr_fp16: every half function computes in float, where each half is exact, and
 * rounds its result to half once (well inside the extension's ulp limits). A vector
 * converts whole, both ways (F16C's vcvtph2ps and vcvtps2ph on the vector), around
 * the float vector form: component by component, mad(half4) became lane shuffles and
 * half ran 5-7x slower than float. */
#define HALF_VEC1(N, F) OVL half##N F(half##N x) { return CVT(F(CVT(x, float##N)), half##N); }
#define HALF_VEC2(N, F) \
    OVL half##N F(half##N x, half##N y) { return CVT(F(CVT(x, float##N), CVT(y, float##N)), half##N); }
#define HALF_VEC3(N, F, W) \
    OVL half##N F(half##N x, half##N y, half##N z) { \
        return CVT(F(CVT(x, W##N), CVT(y, W##N), CVT(z, W##N)), half##N); \
    }
#define HALF1(F) \
    OVL half F(half x) { return (half)F((float)x); } \
    FOR_WIDTHS(HALF_VEC1, F)
#define HALF2(F) \
    OVL half F(half x, half y) { return (half)F((float)x, (float)y); } \
    FOR_WIDTHS(HALF_VEC2, F)
HALF1(acos) HALF1(acosh) HALF1(acospi) HALF1(asin) HALF1(asinh) HALF1(asinpi) HALF1(atan) HALF1(atanh)
HALF1(atanpi) HALF1(cbrt) HALF1(cos) HALF1(cosh) HALF1(cospi) HALF1(erfc) HALF1(erf) HALF1(exp)
HALF1(exp2) HALF1(exp10) HALF1(expm1) HALF1(lgamma) HALF1(log) HALF1(log2)
HALF1(log10) HALF1(log1p) HALF1(logb) HALF1(rsqrt) HALF1(sin) HALF1(sinh)
HALF1(sinpi) HALF1(tan) HALF1(tanh) HALF1(tanpi) HALF1(tgamma)
HALF2(atan2) HALF2(atan2pi) HALF2(fdim) HALF2(fmod) HALF2(hypot) HALF2(maxmag) HALF2(minmag)
HALF2(pow) HALF2(powr) HALF2(remainder)
#ifdef __AVX512FP16__
/* The CPU computes in half (AVX512-FP16): each of these is one instruction, correctly
 * rounded, on a whole vector (mad(half16) a vfmadd231ph, where F16C's round trip
 * around a float FMA costs three instructions and four times the time). */
#define HALF_OWN_VEC1(N, F, B) OVL half##N F(half##N x) { return B(x); }
#define HALF_OWN_VEC2(N, F, B) OVL half##N F(half##N x, half##N y) { return B(x, y); }
#define HALF_OWN_VEC3(N, F, B) OVL half##N F(half##N x, half##N y, half##N z) { return B(x, y, z); }
#define HALF_OWN1(F, B) OVL half F(half x) { return B(x); } FOR_WIDTHS(HALF_OWN_VEC1, F, B)
#define HALF_OWN2(F, B) OVL half F(half x, half y) { return B(x, y); } FOR_WIDTHS(HALF_OWN_VEC2, F, B)
#define HALF_OWN3(F, B) OVL half F(half x, half y, half z) { return B(x, y, z); } FOR_WIDTHS(HALF_OWN_VEC3, F, B)
HALF_OWN1(ceil, __builtin_elementwise_ceil) HALF_OWN1(fabs, __builtin_elementwise_abs)
HALF_OWN1(floor, __builtin_elementwise_floor) HALF_OWN1(rint, __builtin_elementwise_rint)
HALF_OWN1(round, __builtin_elementwise_round) HALF_OWN1(sqrt, __builtin_elementwise_sqrt)
HALF_OWN1(trunc, __builtin_elementwise_trunc)
HALF_OWN2(copysign, __builtin_elementwise_copysign) HALF_OWN2(fmax, __builtin_elementwise_max)
HALF_OWN2(fmin, __builtin_elementwise_min)
HALF_OWN3(fma, __builtin_elementwise_fma) HALF_OWN3(mad, __builtin_elementwise_fma)
#else
HALF1(ceil) HALF1(fabs) HALF1(floor) HALF1(rint) HALF1(round) HALF1(sqrt) HALF1(trunc)
HALF2(copysign) HALF2(fmax) HALF2(fmin)
/* fma in double: the product of two halves is exact there, so only the sum rounds. */
OVL half fma(half a, half b, half c) { return (half)fma((double)a, (double)b, (double)c); }
OVL half mad(half a, half b, half c) { return (half)((float)a * (float)b + (float)c); }
FOR_WIDTHS(HALF_VEC3, fma, double)
FOR_WIDTHS(HALF_VEC3, mad, float)
#endif
VEC2S(half, fmax, half, half)
VEC2S(half, fmin, half, half)
/* nextafter steps the bit pattern: a float step would round back to x. */
OVL half nextafter(half x, half y) {
    if (x != x || y != y) return x + y;
    if (x == y) return y;
    ushort b = as_ushort(x);
    if ((b & 0x7fff) == 0) return as_half((ushort)(y > x ? 0x0001 : 0x8001));
    return as_half((ushort)((x < y) == (x > 0) ? b + 1 : b - 1));
}
VEC2(half, nextafter, half, half)
OVL int ilogb(half x) { return ilogb((float)x); }
VEC1(int, ilogb, half)
OVL half ldexp(half x, int k) { return (half)ldexp((float)x, k); }
VEC2(half, ldexp, half, int)
VEC2S(half, ldexp, half, int)
OVL half pown(half x, int n) { return (half)pown((float)x, n); }
OVL half rootn(half x, int n) { return (half)rootn((float)x, n); }
VEC2(half, pown, half, int)
VEC2(half, rootn, half, int)
OVL half nan(ushort c) { return as_half((ushort)(0x7e00 | (c & 0x1ff))); }
VEC1(half, nan, ushort)

/* Pointer outputs through float temporaries. fract's cap is the largest half below 1:
 * a float result just below 1 rounds to 1.0 in half. */
#define HALF_POINTERS(T, I, AS) \
    OVL half fract(half x, AS half *iptr) { \
        float w; \
        half f = (half)fract((float)x, &w); \
        *iptr = (half)w; \
        return __builtin_isnan(f) ? f : fmin(f, (half)0x1.ffcp-1); \
    } \
    HALF_OUT(modf, half, float, AS) HALF_OUT(sincos, half, float, AS) HALF_OUT(frexp, int, int, AS) \
    HALF_OUT(lgamma_r, int, int, AS) \
    OVL half remquo(half x, half y, AS int *q) { \
        int qq; \
        half r = (half)remquo((float)x, (float)y, &qq); \
        *q = qq; \
        return r; \
    }
/* F(half x, P *out) through the float form with a W temporary. */
#define HALF_OUT(F, P, W, AS) \
    OVL half F(half x, AS P *out) { \
        W w; \
        half r = (half)F((float)x, &w); \
        *out = (P)w; \
        return r; \
    }
ALL_SPACES(HALF_POINTERS, half, int)
PRIVATE_FIRST(POINTER_VECTORS, half, int)
