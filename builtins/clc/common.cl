/* Common functions (OpenCL C 6.15.4) for float, double and half (whose arithmetic is
 * done in float and rounded after each operation). */

#include "clc.h"

#define COMMON(T) \
    OVL T clamp(T x, T lo, T hi) { return fmin(fmax(x, lo), hi); } \
    OVL T degrees(T r) { return r * (T)(180.0 / M_PI); } \
    OVL T radians(T d) { return d * (T)(M_PI / 180.0); } \
    OVL T max(T x, T y) { return fmax(x, y); } \
    OVL T min(T x, T y) { return fmin(x, y); } \
    OVL T mix(T x, T y, T a) { return x + (y - x) * a; } \
    OVL T step(T edge, T x) { return x < edge ? (T)0 : (T)1; } \
    OVL T smoothstep(T e0, T e1, T x) { \
        T t = clamp((x - e0) / (e1 - e0), (T)0, (T)1); \
        return t * t * ((T)3 - (T)2 * t); \
    } \
    OVL T sign(T x) { return x > (T)0 ? (T)1 : x < (T)0 ? (T)-1 : x == (T)0 ? copysign((T)0, x) : (T)0; } \
    VEC3(T, clamp, T, T, T) VEC3SS(T, clamp, T, T) VEC1(T, degrees, T) VEC1(T, radians, T) \
    VEC2(T, max, T, T) VEC2S(T, max, T, T) VEC2(T, min, T, T) VEC2S(T, min, T, T) \
    VEC3(T, mix, T, T, T) VEC1(T, sign, T) VEC2(T, step, T, T) VEC3(T, smoothstep, T, T, T) \
    /* Scalar edge / scalar blend with vector operands. */ \
    OVL T##2 mix(T##2 x, T##2 y, T a) { return x + (y - x) * a; } \
    OVL T##3 mix(T##3 x, T##3 y, T a) { return x + (y - x) * a; } \
    OVL T##4 mix(T##4 x, T##4 y, T a) { return x + (y - x) * a; } \
    OVL T##8 mix(T##8 x, T##8 y, T a) { return x + (y - x) * a; } \
    OVL T##16 mix(T##16 x, T##16 y, T a) { return x + (y - x) * a; } \
    SCALAR_FIRST(T, step) SCALAR_FIRST2(T, smoothstep)

/* step(T edge, Tn x) and smoothstep(T e0, T e1, Tn x). */
#define SCALAR_FIRST(T, F) \
    OVL T##2 F(T e, T##2 x) { return (T##2)(F(e, x.s0), F(e, x.s1)); } \
    OVL T##3 F(T e, T##3 x) { return (T##3)(F(e, x.s0), F(e, x.s1), F(e, x.s2)); } \
    OVL T##4 F(T e, T##4 x) { return (T##4)(F(e, x.lo), F(e, x.hi)); } \
    OVL T##8 F(T e, T##8 x) { return (T##8)(F(e, x.lo), F(e, x.hi)); } \
    OVL T##16 F(T e, T##16 x) { return (T##16)(F(e, x.lo), F(e, x.hi)); }
#define SCALAR_FIRST2(T, F) \
    OVL T##2 F(T a, T b, T##2 x) { return (T##2)(F(a, b, x.s0), F(a, b, x.s1)); } \
    OVL T##3 F(T a, T b, T##3 x) { return (T##3)(F(a, b, x.s0), F(a, b, x.s1), F(a, b, x.s2)); } \
    OVL T##4 F(T a, T b, T##4 x) { return (T##4)(F(a, b, x.lo), F(a, b, x.hi)); } \
    OVL T##8 F(T a, T b, T##8 x) { return (T##8)(F(a, b, x.lo), F(a, b, x.hi)); } \
    OVL T##16 F(T a, T b, T##16 x) { return (T##16)(F(a, b, x.lo), F(a, b, x.hi)); }

COMMON(float)
COMMON(double)
COMMON(half)
