/* vloadn / vstoren (OpenCL C 6.15.7): element-aligned vector loads and stores, for
 * every scalar type and address space. Component-wise; the optimiser merges them into
 * unaligned vector moves. */

#include "clc.h"

#define LOAD2(p, o) (p)[(o)], (p)[(o) + 1]
#define LOAD3(p, o) LOAD2(p, o), (p)[(o) + 2]
#define LOAD4(p, o) LOAD2(p, o), LOAD2(p, (o) + 2)
#define LOAD8(p, o) LOAD4(p, o), LOAD4(p, (o) + 4)
#define LOAD16(p, o) LOAD8(p, o), LOAD8(p, (o) + 8)

#define VLOAD(T, N, AS) \
    OVL T##N vload##N(size_t i, const AS T *p) { return (T##N)(LOAD##N(p, i * N)); }

#define STORE(T, N, AS) \
    OVL void vstore##N(T##N v, size_t i, AS T *p) { \
        AS T *q = p + i * N; \
        for (int k = 0; k < N; k++) q[k] = ((T *)&v)[k]; \
    }

#define WIDTHS(M, T, AS) M(T, 2, AS) M(T, 3, AS) M(T, 4, AS) M(T, 8, AS) M(T, 16, AS)
#define TYPE(T) \
    WIDTHS(VLOAD, T, __global) WIDTHS(VLOAD, T, __local) WIDTHS(VLOAD, T, __constant) WIDTHS(VLOAD, T, __private) \
    WIDTHS(STORE, T, __global) WIDTHS(STORE, T, __local) WIDTHS(STORE, T, __private)

FOR_INTEGERS(TYPE)
FOR_FLOATS(TYPE)
TYPE(half)
