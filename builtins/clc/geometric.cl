/* Geometric functions (OpenCL C 6.15.5) for float, double and half, 1 to 4 components. */

#include "clc.h"

#define GEOMETRIC(T, N, V) \
    OVL T dot(V a, V b) { return DOT##N(a, b); } \
    OVL T length(V p) { \
        T m = MAXABS##N(p); \
        if (m == (T)0 || __builtin_isinf(m)) return m; \
        V q = p / m; \
        return m * sqrt(dot(q, q)); \
    } \
    OVL T distance(V a, V b) { return length(a - b); } \
    NORMALIZE##N(T, V) \
    OVL T fast_length(V p) { return sqrt(dot(p, p)); } \
    OVL T fast_distance(V a, V b) { return fast_length(a - b); } \
    OVL V fast_normalize(V p) { return p * rsqrt(dot(p, p)); }

#define DOT1(a, b) ((a) * (b))
#define DOT2(a, b) ((a).x * (b).x + (a).y * (b).y)
#define DOT3(a, b) ((a).x * (b).x + (a).y * (b).y + (a).z * (b).z)
#define DOT4(a, b) ((a).x * (b).x + (a).y * (b).y + (a).z * (b).z + (a).w * (b).w)
/* normalize: scaled by the largest magnitude first, so that vectors whose squared length
 * underflows (or overflows) still normalise; a NaN anywhere gives NaNs; infinities count
 * as +-1 and the other components as 0 (6.15.5). */
#define NORMALIZE1(T, V) \
    OVL T normalize(T p) { return p == (T)0 || __builtin_isnan(p) ? p : copysign((T)1, p); }
#define NORMALIZE_VEC(T, V, N) \
    OVL V normalize(V p) { \
        if (__builtin_isnan(dot(p, p))) return (V)(T)NAN; \
        T m = MAXABS##N(p); \
        if (m == (T)0) return p; \
        V q = __builtin_isinf(m) ? select((V)(T)0 * p, copysign((V)(T)1, p), isinf(p)) : p / m; \
        return q / sqrt(dot(q, q)); \
    }
#define NORMALIZE2(T, V) NORMALIZE_VEC(T, V, 2)
#define NORMALIZE3(T, V) NORMALIZE_VEC(T, V, 3)
#define NORMALIZE4(T, V) NORMALIZE_VEC(T, V, 4)

#define MAXABS1(p) fabs(p)
#define MAXABS2(p) fmax(fabs((p).x), fabs((p).y))
#define MAXABS3(p) fmax(MAXABS2(p), fabs((p).z))
#define MAXABS4(p) fmax(MAXABS3(p), fabs((p).w))

#define ALL_WIDTHS(T) GEOMETRIC(T, 1, T) GEOMETRIC(T, 2, T##2) GEOMETRIC(T, 3, T##3) GEOMETRIC(T, 4, T##4) \
    OVL T##3 cross(T##3 a, T##3 b) { return (T##3)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); } \
    OVL T##4 cross(T##4 a, T##4 b) { \
        return (T##4)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, (T)0); \
    }

ALL_WIDTHS(float)
ALL_WIDTHS(double)
ALL_WIDTHS(half)
