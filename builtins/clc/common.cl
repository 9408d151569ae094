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
    FOR_WIDTHS(COMMON_VECTORS, T) VEC1(T, sign, T)

/* Vector forms, each one vector expression (min, max and clamp through fmin/fmax's
 * element-wise minNum/maxNum), so they stay vector code; a scalar edge or bounds is
 * broadcast. */
#define COMMON_VECTORS(N, T) \
    OVL T##N max(T##N x, T##N y) { return __builtin_elementwise_max(x, y); } \
    OVL T##N min(T##N x, T##N y) { return __builtin_elementwise_min(x, y); } \
    OVL T##N max(T##N x, T y) { return max(x, (T##N)y); } \
    OVL T##N min(T##N x, T y) { return min(x, (T##N)y); } \
    OVL T##N clamp(T##N x, T##N lo, T##N hi) { return min(max(x, lo), hi); } \
    OVL T##N clamp(T##N x, T lo, T hi) { return min(max(x, (T##N)lo), (T##N)hi); } \
    OVL T##N degrees(T##N r) { return r * (T##N)(T)(180.0 / M_PI); } \
    OVL T##N radians(T##N d) { return d * (T##N)(T)(M_PI / 180.0); } \
    OVL T##N mix(T##N x, T##N y, T##N a) { return x + (y - x) * a; } \
    OVL T##N mix(T##N x, T##N y, T a) { return x + (y - x) * a; } \
    OVL T##N step(T##N edge, T##N x) { return x < edge ? (T##N)(T)0 : (T##N)(T)1; } \
    OVL T##N step(T edge, T##N x) { return step((T##N)edge, x); } \
    OVL T##N smoothstep(T##N e0, T##N e1, T##N x) { \
        T##N t = clamp((x - e0) / (e1 - e0), (T)0, (T)1); \
        return t * t * ((T##N)(T)3 - (T##N)(T)2 * t); \
    } \
    OVL T##N smoothstep(T e0, T e1, T##N x) { return smoothstep((T##N)e0, (T##N)e1, x); }

COMMON(float)
COMMON(double)
COMMON(half)
