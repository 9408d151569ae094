/* The OpenCL C 2.0/3.0 atomic functions (6.15.12) on atomic_int, atomic_uint,
 * atomic_long, atomic_ulong, atomic_float, atomic_double (and atomic_uintptr_t with a
 * ptrdiff_t operand) in global and local memory, and atomic_flag. Compiled as OpenCL C
 * 3.0, where clang declares the _explicit forms with a memory order and scope; clang's
 * __opencl_atomic_* builtins take both at run time (x86 gives every order and scope
 * the device reports). The value `expected` of compare-exchange passes through a
 * private copy, so one builtin call serves the three address spaces it may live in. */

#include "clc.h"

#define CMPXCHG(NAME, AS, A, T, EAS) \
    OVL bool atomic_compare_exchange_##NAME##_explicit(volatile AS A *p, EAS T *expected, T desired, \
                                                       memory_order success, memory_order failure, memory_scope s) { \
        T e = *expected; \
        bool r = __opencl_atomic_compare_exchange_##NAME(p, &e, desired, success, failure, s); \
        *expected = e; \
        return r; \
    }

/* Functions every atomic type has. */
#define BASIC(AS, A, T) \
    OVL void atomic_init(volatile AS A *p, T v) { __opencl_atomic_init(p, v); } \
    OVL T atomic_load_explicit(volatile AS A *p, memory_order o, memory_scope s) { return __opencl_atomic_load(p, o, s); } \
    OVL void atomic_store_explicit(volatile AS A *p, T v, memory_order o, memory_scope s) { \
        __opencl_atomic_store(p, v, o, s); \
    } \
    OVL T atomic_exchange_explicit(volatile AS A *p, T v, memory_order o, memory_scope s) { \
        return __opencl_atomic_exchange(p, v, o, s); \
    } \
    CMPXCHG(strong, AS, A, T, __global) CMPXCHG(strong, AS, A, T, __local) CMPXCHG(strong, AS, A, T, __private) \
    CMPXCHG(weak, AS, A, T, __global) CMPXCHG(weak, AS, A, T, __local) CMPXCHG(weak, AS, A, T, __private)

/* Arithmetic and bitwise updates of integer atomics, operand type U. */
#define FETCH1(OP, AS, A, T, U) \
    OVL T atomic_fetch_##OP##_explicit(volatile AS A *p, U v, memory_order o, memory_scope s) { \
        return __opencl_atomic_fetch_##OP(p, v, o, s); \
    }
#define FETCH(AS, A, T) \
    FETCH1(add, AS, A, T, T) FETCH1(sub, AS, A, T, T) FETCH1(or, AS, A, T, T) FETCH1(xor, AS, A, T, T) \
    FETCH1(and, AS, A, T, T) FETCH1(min, AS, A, T, T) FETCH1(max, AS, A, T, T)

#define INTEGER(AS) \
    BASIC(AS, atomic_int, int) FETCH(AS, atomic_int, int) \
    BASIC(AS, atomic_uint, uint) FETCH(AS, atomic_uint, uint) \
    BASIC(AS, atomic_long, long) FETCH(AS, atomic_long, long) \
    BASIC(AS, atomic_ulong, ulong) FETCH(AS, atomic_ulong, ulong) \
    BASIC(AS, atomic_float, float) BASIC(AS, atomic_double, double) \
    FETCH1(add, AS, atomic_uintptr_t, uintptr_t, ptrdiff_t) FETCH1(sub, AS, atomic_uintptr_t, uintptr_t, ptrdiff_t) \
    OVL bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag *f, memory_order o, memory_scope s) { \
        return __opencl_atomic_exchange((volatile AS atomic_int *)f, 1, o, s) != 0; \
    } \
    OVL void atomic_flag_clear_explicit(volatile AS atomic_flag *f, memory_order o, memory_scope s) { \
        __opencl_atomic_store((volatile AS atomic_int *)f, 0, o, s); \
    }

INTEGER(__global)
INTEGER(__local)
