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
MATH1(ceil, __builtin_ceilf, __builtin_ceil)
MATH1(cos, __builtin_cosf, __builtin_cos)
MATH1(cosh, __builtin_coshf, __builtin_cosh)
MATH1(erfc, __builtin_erfcf, __builtin_erfc)
MATH1(erf, __builtin_erff, __builtin_erf)
MATH1(exp, __builtin_expf, __builtin_exp)
MATH1(exp2, __builtin_exp2f, __builtin_exp2)
MATH1(expm1, __builtin_expm1f, __builtin_expm1)
MATH1(fabs, __builtin_fabsf, __builtin_fabs)
MATH1(floor, __builtin_floorf, __builtin_floor)
MATH1(lgamma, __builtin_lgammaf, __builtin_lgamma)
MATH1(log, __builtin_logf, __builtin_log)
MATH1(log2, __builtin_log2f, __builtin_log2)
MATH1(log10, __builtin_log10f, __builtin_log10)
MATH1(log1p, __builtin_log1pf, __builtin_log1p)
MATH1(logb, __builtin_logbf, __builtin_logb)
MATH1(rint, __builtin_rintf, __builtin_rint)
MATH1(round, __builtin_roundf, __builtin_round)
MATH1(sin, __builtin_sinf, __builtin_sin)
MATH1(sinh, __builtin_sinhf, __builtin_sinh)
MATH1(sqrt, __builtin_sqrtf, __builtin_sqrt)
MATH1(tan, __builtin_tanf, __builtin_tan)
MATH1(tanh, __builtin_tanhf, __builtin_tanh)
MATH1(tgamma, __builtin_tgammaf, __builtin_tgamma)
MATH1(trunc, __builtin_truncf, __builtin_trunc)

MATH2(atan2, __builtin_atan2f, __builtin_atan2)
MATH2(copysign, __builtin_copysignf, __builtin_copysign)
MATH2(fdim, __builtin_fdimf, __builtin_fdim)
MATH2(fmod, __builtin_fmodf, __builtin_fmod)
MATH2(hypot, __builtin_hypotf, __builtin_hypot)
MATH2(nextafter, __builtin_nextafterf, __builtin_nextafter)
MATH2(pow, __builtin_powf, __builtin_pow)
MATH2(remainder, __builtin_remainderf, __builtin_remainder)

/* fmax/fmin also take a scalar second argument with vectors. */
#define MINMAX(NAME, FB, DB) \
    MATH2(NAME, FB, DB) \
    VEC2S(float, NAME, float, float) \
    VEC2S(double, NAME, double, double)
MINMAX(fmax, __builtin_fmaxf, __builtin_fmax)
MINMAX(fmin, __builtin_fminf, __builtin_fmin)

/* Functions defined by a formula over the others, for both float and double. */
#define DERIVED(T) \
    OVL T rsqrt(T x) { return (T)1 / sqrt(x); } \
    OVL T exp10(T x) { return pow((T)10, x); } \
    OVL T sinpi(T x) { return sin(x * M_PI); } \
    OVL T cospi(T x) { return cos(x * M_PI); } \
    OVL T tanpi(T x) { return tan(x * M_PI); } \
    OVL T asinpi(T x) { return asin(x) / M_PI; } \
    OVL T acospi(T x) { return acos(x) / M_PI; } \
    OVL T atanpi(T x) { return atan(x) / M_PI; } \
    OVL T atan2pi(T y, T x) { return atan2(y, x) / M_PI; } \
    OVL T powr(T x, T y) { return pow(x, y); } \
    OVL T pown(T x, int n) { return pow(x, (T)n); } \
    OVL T rootn(T x, int n) { return pow(x, (T)1 / n); } \
    OVL T mad(T a, T b, T c) { return a * b + c; } \
    OVL T maxmag(T x, T y) { \
        T ax = fabs(x), ay = fabs(y); \
        return ax > ay ? x : ay > ax ? y : fmax(x, y); \
    } \
    OVL T minmag(T x, T y) { \
        T ax = fabs(x), ay = fabs(y); \
        return ax < ay ? x : ay < ax ? y : fmin(x, y); \
    } \
    VEC1(T, rsqrt, T) VEC1(T, exp10, T) VEC1(T, sinpi, T) VEC1(T, cospi, T) VEC1(T, tanpi, T) \
    VEC1(T, asinpi, T) VEC1(T, acospi, T) VEC1(T, atanpi, T) \
    VEC2(T, atan2pi, T, T) VEC2(T, powr, T, T) VEC2(T, pown, T, int) VEC2(T, rootn, T, int) \
    VEC2(T, maxmag, T, T) VEC2(T, minmag, T, T) \
    VEC3(T, mad, T, T, T) VEC3(T, fma, T, T, T)
OVL float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
OVL double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
DERIVED(float)
DERIVED(double)

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

/* ilogb, ldexp, nan, fract/modf/frexp/remquo/sincos/lgamma_r (pointer outputs). */
#define POINTERS(T, I, AS) \
    OVL T fract(T x, AS T *iptr) { \
        T f = floor(x); \
        *iptr = f; \
        return fmin(x - f, (T)0x1.fffffep-1f); \
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
        T r = __builtin_remquo(x, y, &qq); \
        *q = qq; \
        return r; \
    } \
    OVL T lgamma_r(T x, AS int *s) { \
        T r = lgamma(x); \
        *s = __builtin_tgamma(x) < 0 ? -1 : 1; \
        return r; \
    }
#define ALL_SPACES(M, T, I) M(T, I, __global) M(T, I, __local) M(T, I, __private)
ALL_SPACES(POINTERS, float, int)
ALL_SPACES(POINTERS, double, int)

OVL int ilogb(float x) { return __builtin_ilogbf(x); }
OVL int ilogb(double x) { return __builtin_ilogb(x); }
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
