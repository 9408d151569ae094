/* OpenCL 1.x atomic functions (atomic_* core since 1.1, atom_* from the cl_khr_*_atomics
 * extensions), for __global and __local memory. Compiled by the driver to bitcode with
 * the kernels' flags and linked into each kernel module, so they inline to single
 * instructions. Built without OpenCL's default header: these are the definitions of
 * what that header declares. Every operation is sequentially consistent, which is at
 * least as strong as the relaxed ordering OpenCL 1.x atomics promise. */

#define OVL __attribute__((overloadable))
#define SC __ATOMIC_SEQ_CST

#define BINARY(NAME, BUILTIN, T, AS) \
    OVL T NAME(volatile AS T *p, T v) { return BUILTIN(p, v, SC); }
#define UNARY(NAME, BUILTIN, T, AS) \
    OVL T NAME(volatile AS T *p) { return BUILTIN(p, (T)1, SC); }
#define CMPXCHG(NAME, T, AS) \
    OVL T NAME(volatile AS T *p, T cmp, T v) { \
        __atomic_compare_exchange_n(p, &cmp, v, 0, SC, SC); \
        return cmp; \
    }

#define FAMILY(PREFIX, T, AS) \
    BINARY(PREFIX##add, __atomic_fetch_add, T, AS) \
    BINARY(PREFIX##sub, __atomic_fetch_sub, T, AS) \
    BINARY(PREFIX##xchg, __atomic_exchange_n, T, AS) \
    BINARY(PREFIX##min, __atomic_fetch_min, T, AS) \
    BINARY(PREFIX##max, __atomic_fetch_max, T, AS) \
    BINARY(PREFIX##and, __atomic_fetch_and, T, AS) \
    BINARY(PREFIX##or, __atomic_fetch_or, T, AS) \
    BINARY(PREFIX##xor, __atomic_fetch_xor, T, AS) \
    UNARY(PREFIX##inc, __atomic_fetch_add, T, AS) \
    UNARY(PREFIX##dec, __atomic_fetch_sub, T, AS) \
    CMPXCHG(PREFIX##cmpxchg, T, AS)

#define SPACES(PREFIX, T) FAMILY(PREFIX, T, __global) FAMILY(PREFIX, T, __local)

SPACES(atomic_, int)
SPACES(atomic_, uint)
SPACES(atom_, int)
SPACES(atom_, uint)
SPACES(atom_, long)
SPACES(atom_, ulong)

/* atomic_xchg also exists for float (OpenCL 1.1). */
#define FLOAT_XCHG(AS) \
    OVL float atomic_xchg(volatile AS float *p, float v) { \
        return __builtin_astype(__atomic_exchange_n((volatile AS int *)p, __builtin_astype(v, int), SC), float); \
    }
FLOAT_XCHG(__global)
FLOAT_XCHG(__local)
