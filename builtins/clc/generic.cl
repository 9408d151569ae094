/* The builtins whose pointer parameters are generic in OpenCL C 2.0, and in 3.0 with
 * __opencl_c_generic_address_space: the math functions with pointer outputs, vloadn and
 * vstoren, vload_half and vstore_half. Compiled as OpenCL C 2.0, where clang declares
 * them. Every address space is the same memory on a CPU, so each forwards to the
 * __global form the other library parts define (declared here: OpenCL C 2.0 headers
 * declare no named-space forms); the cast costs nothing once inlined. */

#include "clc.h"

#define G __global

/* R F(T x, P *o) and R F(T x, T y, P *o) for one type. */
#define OUT1(F, T, P) \
    OVL T F(T x, G P *o); \
    OVL T F(T x, __generic P *o) { return F(x, (G P *)o); }
#define OUT2(F, T, P) \
    OVL T F(T x, T y, G P *o); \
    OVL T F(T x, T y, __generic P *o) { return F(x, y, (G P *)o); }
#define MATH_OUT(T, I) \
    OUT1(fract, T, T) OUT1(modf, T, T) OUT1(sincos, T, T) OUT1(frexp, T, I) OUT1(lgamma_r, T, I) OUT2(remquo, T, I)
#define MATH_WIDTHS(T) \
    MATH_OUT(T, int) MATH_OUT(T##2, int2) MATH_OUT(T##3, int3) MATH_OUT(T##4, int4) MATH_OUT(T##8, int8) \
        MATH_OUT(T##16, int16)
MATH_WIDTHS(float)
MATH_WIDTHS(double)
MATH_WIDTHS(half)

/* vloadn and vstoren. */
#define VLOAD_STORE(T, N) \
    OVL T##N vload##N(size_t i, const G T *p); \
    OVL T##N vload##N(size_t i, const __generic T *p) { return vload##N(i, (const G T *)p); } \
    OVL void vstore##N(T##N v, size_t i, G T *p); \
    OVL void vstore##N(T##N v, size_t i, __generic T *p) { vstore##N(v, i, (G T *)p); }
#define VECTOR_DATA(T) \
    VLOAD_STORE(T, 2) VLOAD_STORE(T, 3) VLOAD_STORE(T, 4) VLOAD_STORE(T, 8) VLOAD_STORE(T, 16)
FOR_INTEGERS(VECTOR_DATA)
FOR_FLOATS(VECTOR_DATA)
VECTOR_DATA(half)

/* vload_half, vloada_half, vstore_half and vstorea_half with every rounding mode, from
 * float and double; N is the width's suffix (empty for scalars). */
#define LOAD_HALF(F, R) \
    OVL R F(size_t i, const G half *p); \
    OVL R F(size_t i, const __generic half *p) { return F(i, (const G half *)p); }
#define STORE_HALF(F, T) \
    OVL void F(T v, size_t i, G half *p); \
    OVL void F(T v, size_t i, __generic half *p) { F(v, i, (G half *)p); }
#define STORE_MODES(F, T) \
    STORE_HALF(F, T) STORE_HALF(F##_rte, T) STORE_HALF(F##_rtz, T) STORE_HALF(F##_rtp, T) STORE_HALF(F##_rtn, T)
#define HALF_DATA(N, ALIGNED) \
    LOAD_HALF(vload_half##N, float##N) STORE_MODES(vstore_half##N, float##N) STORE_MODES(vstore_half##N, double##N) \
        ALIGNED(N)
#define ALIGNED(N) \
    LOAD_HALF(vloada_half##N, float##N) STORE_MODES(vstorea_half##N, float##N) STORE_MODES(vstorea_half##N, double##N)
#define SCALAR(N)
HALF_DATA(, SCALAR)
HALF_DATA(2, ALIGNED)
HALF_DATA(3, ALIGNED)
HALF_DATA(4, ALIGNED)
HALF_DATA(8, ALIGNED)
HALF_DATA(16, ALIGNED)
