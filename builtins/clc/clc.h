/* Macros that turn one scalar definition into every OpenCL overload. Library files are
 * compiled with OpenCL's default header, so the declarations (and their attributes)
 * come from clang; these are the definitions. Vectors are handled component-wise
 * through halves (.lo/.hi), which the optimiser turns back into vector code where the
 * scalar operation has a vector instruction. */

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define OVL __attribute__((overloadable))

/* RET F(T x) for the vector widths of T, from the scalar F. */
#define VEC1(RET, F, T) \
    OVL RET##2 F(T##2 x) { return (RET##2)(F(x.s0), F(x.s1)); } \
    OVL RET##3 F(T##3 x) { return (RET##3)(F(x.s0), F(x.s1), F(x.s2)); } \
    OVL RET##4 F(T##4 x) { return (RET##4)(F(x.lo), F(x.hi)); } \
    OVL RET##8 F(T##8 x) { return (RET##8)(F(x.lo), F(x.hi)); } \
    OVL RET##16 F(T##16 x) { return (RET##16)(F(x.lo), F(x.hi)); }

/* RET F(T x, U y), both vectors of the same width. */
#define VEC2(RET, F, T, U) \
    OVL RET##2 F(T##2 x, U##2 y) { return (RET##2)(F(x.s0, y.s0), F(x.s1, y.s1)); } \
    OVL RET##3 F(T##3 x, U##3 y) { return (RET##3)(F(x.s0, y.s0), F(x.s1, y.s1), F(x.s2, y.s2)); } \
    OVL RET##4 F(T##4 x, U##4 y) { return (RET##4)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
    OVL RET##8 F(T##8 x, U##8 y) { return (RET##8)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
    OVL RET##16 F(T##16 x, U##16 y) { return (RET##16)(F(x.lo, y.lo), F(x.hi, y.hi)); }

/* RET F(Tn x, U y): vector first argument, scalar second. */
#define VEC2S(RET, F, T, U) \
    OVL RET##2 F(T##2 x, U y) { return (RET##2)(F(x.s0, y), F(x.s1, y)); } \
    OVL RET##3 F(T##3 x, U y) { return (RET##3)(F(x.s0, y), F(x.s1, y), F(x.s2, y)); } \
    OVL RET##4 F(T##4 x, U y) { return (RET##4)(F(x.lo, y), F(x.hi, y)); } \
    OVL RET##8 F(T##8 x, U y) { return (RET##8)(F(x.lo, y), F(x.hi, y)); } \
    OVL RET##16 F(T##16 x, U y) { return (RET##16)(F(x.lo, y), F(x.hi, y)); }

/* RET F(T x, U y, V z), all vectors of the same width. */
#define VEC3(RET, F, T, U, V) \
    OVL RET##2 F(T##2 x, U##2 y, V##2 z) { return (RET##2)(F(x.s0, y.s0, z.s0), F(x.s1, y.s1, z.s1)); } \
    OVL RET##3 F(T##3 x, U##3 y, V##3 z) { \
        return (RET##3)(F(x.s0, y.s0, z.s0), F(x.s1, y.s1, z.s1), F(x.s2, y.s2, z.s2)); \
    } \
    OVL RET##4 F(T##4 x, U##4 y, V##4 z) { return (RET##4)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi)); } \
    OVL RET##8 F(T##8 x, U##8 y, V##8 z) { return (RET##8)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi)); } \
    OVL RET##16 F(T##16 x, U##16 y, V##16 z) { return (RET##16)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi)); }

/* RET F(Tn x, U y, U z): vector first argument, scalar others (clamp, mix, ...). */
#define VEC3SS(RET, F, T, U) \
    OVL RET##2 F(T##2 x, U y, U z) { return (RET##2)(F(x.s0, y, z), F(x.s1, y, z)); } \
    OVL RET##3 F(T##3 x, U y, U z) { return (RET##3)(F(x.s0, y, z), F(x.s1, y, z), F(x.s2, y, z)); } \
    OVL RET##4 F(T##4 x, U y, U z) { return (RET##4)(F(x.lo, y, z), F(x.hi, y, z)); } \
    OVL RET##8 F(T##8 x, U y, U z) { return (RET##8)(F(x.lo, y, z), F(x.hi, y, z)); } \
    OVL RET##16 F(T##16 x, U y, U z) { return (RET##16)(F(x.lo, y, z), F(x.hi, y, z)); }

/* F(x[, y[, z]]) for every vector width of T as one vector expression EXPR. Where a
 * builtin is plain arithmetic this keeps it a vector operation: through VEC3's
 * component halves mad(float16) came out as scalar code (6.5 G ops/s against PoCL's
 * 21.9). */
#define VEC_EXPR1(T, F, EXPR) \
    OVL T##2 F(T##2 x) { return EXPR; } \
    OVL T##3 F(T##3 x) { return EXPR; } \
    OVL T##4 F(T##4 x) { return EXPR; } \
    OVL T##8 F(T##8 x) { return EXPR; } \
    OVL T##16 F(T##16 x) { return EXPR; }
#define VEC_EXPR2(T, F, EXPR) \
    OVL T##2 F(T##2 x, T##2 y) { return EXPR; } \
    OVL T##3 F(T##3 x, T##3 y) { return EXPR; } \
    OVL T##4 F(T##4 x, T##4 y) { return EXPR; } \
    OVL T##8 F(T##8 x, T##8 y) { return EXPR; } \
    OVL T##16 F(T##16 x, T##16 y) { return EXPR; }
#define VEC_EXPR3(T, F, EXPR) \
    OVL T##2 F(T##2 x, T##2 y, T##2 z) { return EXPR; } \
    OVL T##3 F(T##3 x, T##3 y, T##3 z) { return EXPR; } \
    OVL T##4 F(T##4 x, T##4 y, T##4 z) { return EXPR; } \
    OVL T##8 F(T##8 x, T##8 y, T##8 z) { return EXPR; } \
    OVL T##16 F(T##16 x, T##16 y, T##16 z) { return EXPR; }

/* M(N, args...) for every vector width N: for vector forms written as one vector
 * expression (an element-wise clang builtin, or arithmetic), which stay vector code
 * where component-wise forms came out as 4-wide or scalar code. */
#define FOR_WIDTHS(M, ...) M(2, __VA_ARGS__) M(3, __VA_ARGS__) M(4, __VA_ARGS__) M(8, __VA_ARGS__) M(16, __VA_ARGS__)
#define CVT(x, T) __builtin_convertvector(x, T)
#define AS(x, T) __builtin_astype(x, T)

/* The scalar integer types, for macros applied to each. */
#define FOR_INTEGERS(M) M(char) M(uchar) M(short) M(ushort) M(int) M(uint) M(long) M(ulong)
#define FOR_FLOATS(M) M(float) M(double)
