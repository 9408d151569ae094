/* Relational functions (OpenCL C 6.15.6). Scalars return 0 or 1; vectors return a
 * signed integer vector (of the operands' element size) with -1 for true. */

#include "clc.h"

/* F(x[, y]) as a scalar test, and its vector forms returning -1/0 in type I. */
#define TEST1(F, T, I, EXPR) \
    OVL int F(T x) { return (EXPR) ? 1 : 0; } \
    OVL I##2 F(T##2 x) { return (I##2)(-F(x.s0), -F(x.s1)); } \
    OVL I##3 F(T##3 x) { return (I##3)(-F(x.s0), -F(x.s1), -F(x.s2)); } \
    OVL I##4 F(T##4 x) { return (I##4)(F(x.lo), F(x.hi)); } \
    OVL I##8 F(T##8 x) { return (I##8)(F(x.lo), F(x.hi)); } \
    OVL I##16 F(T##16 x) { return (I##16)(F(x.lo), F(x.hi)); }
#define TEST2(F, T, I, EXPR) \
    OVL int F(T x, T y) { return (EXPR) ? 1 : 0; } \
    OVL I##2 F(T##2 x, T##2 y) { return (I##2)(-F(x.s0, y.s0), -F(x.s1, y.s1)); } \
    OVL I##3 F(T##3 x, T##3 y) { return (I##3)(-F(x.s0, y.s0), -F(x.s1, y.s1), -F(x.s2, y.s2)); } \
    OVL I##4 F(T##4 x, T##4 y) { return (I##4)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
    OVL I##8 F(T##8 x, T##8 y) { return (I##8)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
    OVL I##16 F(T##16 x, T##16 y) { return (I##16)(F(x.lo, y.lo), F(x.hi, y.hi)); }

#define RELATIONAL(T, I) \
    TEST2(isequal, T, I, x == y) \
    TEST2(isnotequal, T, I, x != y) \
    TEST2(isgreater, T, I, x > y) \
    TEST2(isgreaterequal, T, I, x >= y) \
    TEST2(isless, T, I, x < y) \
    TEST2(islessequal, T, I, x <= y) \
    TEST2(islessgreater, T, I, x < y || x > y) \
    TEST2(isordered, T, I, x == x && y == y) \
    TEST2(isunordered, T, I, x != x || y != y) \
    TEST1(isfinite, T, I, __builtin_isfinite(x)) \
    TEST1(isinf, T, I, __builtin_isinf(x)) \
    TEST1(isnan, T, I, __builtin_isnan(x)) \
    TEST1(isnormal, T, I, __builtin_isnormal(x)) \
    TEST1(signbit, T, I, __builtin_signbit(x))

RELATIONAL(float, int)
RELATIONAL(double, long)
RELATIONAL(half, short)

/* any/all look at the most significant bit of signed integers. */
#define ANY_ALL(T) \
    OVL int any(T x) { return x < (T)0; } \
    OVL int all(T x) { return x < (T)0; } \
    OVL int any(T##2 x) { return any(x.s0) | any(x.s1); } \
    OVL int all(T##2 x) { return all(x.s0) & all(x.s1); } \
    OVL int any(T##3 x) { return any(x.s0) | any(x.s1) | any(x.s2); } \
    OVL int all(T##3 x) { return all(x.s0) & all(x.s1) & all(x.s2); } \
    OVL int any(T##4 x) { return any(x.lo) | any(x.hi); } \
    OVL int all(T##4 x) { return all(x.lo) & all(x.hi); } \
    OVL int any(T##8 x) { return any(x.lo) | any(x.hi); } \
    OVL int all(T##8 x) { return all(x.lo) & all(x.hi); } \
    OVL int any(T##16 x) { return any(x.lo) | any(x.hi); } \
    OVL int all(T##16 x) { return all(x.lo) & all(x.hi); }
ANY_ALL(char)
ANY_ALL(short)
ANY_ALL(int)
ANY_ALL(long)

/* bitselect(a, b, c): bits of b where c is 1, of a elsewhere. select(a, b, c): b where
 * c is true (scalar) or where c's element has its top bit set (vector). */
#define SELECT_N(T, B, S, U, N) \
    OVL T##N bitselect(T##N a, T##N b, T##N c) { \
        return __builtin_astype((__builtin_astype(a, B##N) & ~__builtin_astype(c, B##N)) | \
                                (__builtin_astype(b, B##N) & __builtin_astype(c, B##N)), T##N); \
    } \
    OVL T##N select(T##N a, T##N b, S##N c) { return c < (S##N)0 ? b : a; } \
    OVL T##N select(T##N a, T##N b, U##N c) { return __builtin_astype(c, S##N) < (S##N)0 ? b : a; }
/* T: the type, B: same-size unsigned bits type, S/U: signed/unsigned selectors. */
#define SELECTS(T, B, S, U) \
    OVL T bitselect(T a, T b, T c) { \
        B bits = (B)((__builtin_astype(a, B) & ~__builtin_astype(c, B)) | (__builtin_astype(b, B) & __builtin_astype(c, B))); \
        return __builtin_astype(bits, T); \
    } \
    OVL T select(T a, T b, S c) { return c ? b : a; } \
    OVL T select(T a, T b, U c) { return c ? b : a; } \
    SELECT_N(T, B, S, U, 2) SELECT_N(T, B, S, U, 3) SELECT_N(T, B, S, U, 4) SELECT_N(T, B, S, U, 8) \
    SELECT_N(T, B, S, U, 16)
SELECTS(char, uchar, char, uchar)
SELECTS(uchar, uchar, char, uchar)
SELECTS(short, ushort, short, ushort)
SELECTS(ushort, ushort, short, ushort)
SELECTS(int, uint, int, uint)
SELECTS(uint, uint, int, uint)
SELECTS(long, ulong, long, ulong)
SELECTS(ulong, ulong, long, ulong)
SELECTS(float, uint, int, uint)
SELECTS(double, ulong, long, ulong)
SELECTS(half, ushort, short, ushort)
