/* The OpenCL C 2.0/3.0 atomic functions (6.15.12) on atomic_int, atomic_uint,
 * atomic_long, atomic_ulong, atomic_float, atomic_double (and atomic_uintptr_t with a
 * ptrdiff_t operand) in global, local and generic memory, and atomic_flag, in the three
 * forms: with order and scope (_explicit), with an order (scope device), and plain
 * (seq_cst, device). Compiled as OpenCL C 3.0 with every order and scope and the generic
 * address space, as the device claims them; clang's __opencl_atomic_* builtins take
 * order and scope at run time (x86 gives every order and scope the device reports).
 * The value `expected` of compare-exchange passes through a private copy, so one
 * builtin call serves every address space it may live in. */

#include "clc.h"

/* The names the extensions header sends float atomics through (cl_ext_float_atomics)
 * are functions here. */
#undef atomic_fetch_add
#undef atomic_fetch_sub
#undef atomic_fetch_min
#undef atomic_fetch_max
#undef atomic_fetch_add_explicit
#undef atomic_fetch_sub_explicit
#undef atomic_fetch_min_explicit
#undef atomic_fetch_max_explicit

#define SEQ memory_order_seq_cst
#define DEV memory_scope_device

#define CMPXCHG(NAME, AS, A, T, EAS) \
    OVL bool atomic_compare_exchange_##NAME##_explicit(volatile AS A *p, EAS T *expected, T desired, \
                                                       memory_order success, memory_order failure, memory_scope s) { \
        T e = *expected; \
        bool r = __opencl_atomic_compare_exchange_##NAME(p, &e, desired, success, failure, s); \
        *expected = e; \
        return r; \
    } \
    OVL bool atomic_compare_exchange_##NAME##_explicit(volatile AS A *p, EAS T *expected, T desired, \
                                                       memory_order success, memory_order failure) { \
        return atomic_compare_exchange_##NAME##_explicit(p, expected, desired, success, failure, DEV); \
    } \
    OVL bool atomic_compare_exchange_##NAME(volatile AS A *p, EAS T *expected, T desired) { \
        return atomic_compare_exchange_##NAME##_explicit(p, expected, desired, SEQ, SEQ, DEV); \
    }
#define CMPXCHG_SPACES(NAME, AS, A, T) \
    CMPXCHG(NAME, AS, A, T, __global) CMPXCHG(NAME, AS, A, T, __local) CMPXCHG(NAME, AS, A, T, __private) \
    CMPXCHG(NAME, AS, A, T, __generic)

/* F_explicit(p, ARGS..., order, scope) as given, F_explicit(p, ARGS..., order) and
 * F(p, ARGS...): R is the result type, PARAMS the parameters after p, ARGS their names. */
#define FORMS(R, F, AS, A, PARAMS, ARGS, BODY) \
    OVL R F##_explicit(volatile AS A *p UNWRAP PARAMS, memory_order o, memory_scope s) { BODY; } \
    OVL R F##_explicit(volatile AS A *p UNWRAP PARAMS, memory_order o) { return F##_explicit(p UNWRAP ARGS, o, DEV); } \
    OVL R F(volatile AS A *p UNWRAP PARAMS) { return F##_explicit(p UNWRAP ARGS, SEQ, DEV); }
#define UNWRAP(...) __VA_ARGS__

/* Functions every atomic type has. */
#define BASIC(AS, A, T) \
    OVL void atomic_init(volatile AS A *p, T v) { __opencl_atomic_init(p, v); } \
    FORMS(T, atomic_load, AS, A, (), (), return __opencl_atomic_load(p, o, s)) \
    FORMS(void, atomic_store, AS, A, (, T v), (, v), __opencl_atomic_store(p, v, o, s)) \
    FORMS(T, atomic_exchange, AS, A, (, T v), (, v), return __opencl_atomic_exchange(p, v, o, s)) \
    CMPXCHG_SPACES(strong, AS, A, T) CMPXCHG_SPACES(weak, AS, A, T)

/* Arithmetic and bitwise updates of integer atomics, operand type U. */
#define FETCH1(OP, AS, A, T, U) FORMS(T, atomic_fetch_##OP, AS, A, (, U v), (, v), return __opencl_atomic_fetch_##OP(p, v, o, s))
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
    FORMS(bool, atomic_flag_test_and_set, AS, atomic_flag, (), (), \
          return __opencl_atomic_exchange((volatile AS atomic_int *)p, 1, o, s) != 0) \
    FORMS(void, atomic_flag_clear, AS, atomic_flag, (), (), __opencl_atomic_store((volatile AS atomic_int *)p, 0, o, s))

INTEGER(__global)
INTEGER(__local)
INTEGER(__generic)

/* cl_ext_float_atomics' updates, under the names the extensions header sends float and
 * double atomics to and under their own (which clang's opencl-c.h declares): LLVM's
 * atomicrmw fadd, fsub, fmin and fmax, a compare-exchange loop on x86; min and max are
 * fmin and fmax (a NaN operand yields the other). */
#define FP_FORMS(F, OP, AS, A, T) FORMS(T, F, AS, A, (, T v), (, v), return __opencl_atomic_fetch_##OP(p, v, o, s))
#define FP_FETCH(OP, A, T) \
    FP_FORMS(__ferrocl_fp_fetch_##OP, OP, __global, A, T) FP_FORMS(__ferrocl_fp_fetch_##OP, OP, __local, A, T) \
    FP_FORMS(__ferrocl_fp_fetch_##OP, OP, __generic, A, T) FP_FORMS(atomic_fetch_##OP, OP, __generic, A, T)
#define FP_FETCHES(A, T) FP_FETCH(add, A, T) FP_FETCH(sub, A, T) FP_FETCH(min, A, T) FP_FETCH(max, A, T)
FP_FETCHES(atomic_float, float)
FP_FETCHES(atomic_double, double)
