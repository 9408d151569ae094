/* Fences (6.15.8, 6.15.10), shuffle/shuffle2 (6.15.16) and the half-float loads and
 * stores (6.15.7) that exist without cl_khr_fp16. */

#include "clc.h"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

/* Work-items of a group run on one thread (in order, or as fibers switching only at
 * barriers), so ordering their accesses needs only a compiler fence; other groups run
 * on other threads, which device-scope fences order. A full fence covers both. */
OVL void mem_fence(cl_mem_fence_flags f) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
OVL void read_mem_fence(cl_mem_fence_flags f) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
OVL void write_mem_fence(cl_mem_fence_flags f) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* shuffle(x, mask): element i of the result is x[mask[i] % N]; shuffle2 picks from the
 * concatenation of x and y. */
#define SHUFFLE(T, U, N, M) \
    OVL T##M shuffle(T##N x, U##M mask) { \
        T##M r; \
        for (int i = 0; i < M; i++) ((T *)&r)[i] = ((T *)&x)[((U *)&mask)[i] % N]; \
        return r; \
    } \
    OVL T##M shuffle2(T##N x, T##N y, U##M mask) { \
        T##M r; \
        for (int i = 0; i < M; i++) { \
            U m = ((U *)&mask)[i] % (2 * N); \
            ((T *)&r)[i] = m < N ? ((T *)&x)[m] : ((T *)&y)[m - N]; \
        } \
        return r; \
    }
#define SHUFFLE_M(T, U, N) SHUFFLE(T, U, N, 2) SHUFFLE(T, U, N, 4) SHUFFLE(T, U, N, 8) SHUFFLE(T, U, N, 16)
#define SHUFFLES(T, U) SHUFFLE_M(T, U, 2) SHUFFLE_M(T, U, 4) SHUFFLE_M(T, U, 8) SHUFFLE_M(T, U, 16)
SHUFFLES(char, uchar)
SHUFFLES(uchar, uchar)
SHUFFLES(short, ushort)
SHUFFLES(ushort, ushort)
SHUFFLES(int, uint)
SHUFFLES(uint, uint)
SHUFFLES(long, ulong)
SHUFFLES(ulong, ulong)
SHUFFLES(float, uint)
SHUFFLES(double, ulong)
SHUFFLES(half, ushort)

/* float -> half with a rounding mode: the nearest (hardware) result, moved one half ulp
 * step when it went the wrong way for the requested direction. */
static half to_half(float x) { return (half)x; }
static half to_half_rte(float x) { return (half)x; }
static half step_half(half h, int up) {
    ushort b = __builtin_astype(h, ushort);
    if ((b & 0x7fff) > 0x7c00) return h; /* NaN */
    if ((b & 0x7fff) == 0) return __builtin_astype((ushort)(up ? 0x0001 : 0x8001), half);
    /* Positive values grow with their bits, negative ones shrink. */
    int grow = up == !(b & 0x8000);
    return __builtin_astype((ushort)(grow ? b + 1 : b - 1), half);
}
static half to_half_rtp(float x) { half h = (half)x; return (float)h < x ? step_half(h, 1) : h; }
static half to_half_rtn(float x) { half h = (half)x; return (float)h > x ? step_half(h, 0) : h; }
static half to_half_rtz(float x) { return x < 0 ? to_half_rtp(x) : to_half_rtn(x); }
static half d_to_half(double x) { return (half)x; }
static half d_to_half_rte(double x) { return (half)x; }
static half d_to_half_rtp(double x) { half h = (half)x; return (double)h < x ? step_half(h, 1) : h; }
static half d_to_half_rtn(double x) { half h = (half)x; return (double)h > x ? step_half(h, 0) : h; }
static half d_to_half_rtz(double x) { return x < 0 ? d_to_half_rtp(x) : d_to_half_rtn(x); }

#define HALF_LOAD(AS) \
    OVL float vload_half(size_t i, const AS half *p) { return (float)p[i]; } \
    OVL float2 vload_half2(size_t i, const AS half *p) { return (float2)((float)p[i * 2], (float)p[i * 2 + 1]); } \
    OVL float3 vload_half3(size_t i, const AS half *p) { \
        return (float3)((float)p[i * 3], (float)p[i * 3 + 1], (float)p[i * 3 + 2]); \
    } \
    OVL float4 vload_half4(size_t i, const AS half *p) { return (float4)(vload_half2(i * 2, p), vload_half2(i * 2 + 1, p)); } \
    OVL float8 vload_half8(size_t i, const AS half *p) { return (float8)(vload_half4(i * 2, p), vload_half4(i * 2 + 1, p)); } \
    OVL float16 vload_half16(size_t i, const AS half *p) { return (float16)(vload_half8(i * 2, p), vload_half8(i * 2 + 1, p)); } \
    OVL float vloada_half(size_t i, const AS half *p) { return vload_half(i, p); } \
    OVL float2 vloada_half2(size_t i, const AS half *p) { return vload_half2(i, p); } \
    OVL float3 vloada_half3(size_t i, const AS half *p) { return vload_half4(i, p).xyz; } \
    OVL float4 vloada_half4(size_t i, const AS half *p) { return vload_half4(i, p); } \
    OVL float8 vloada_half8(size_t i, const AS half *p) { return vload_half8(i, p); } \
    OVL float16 vloada_half16(size_t i, const AS half *p) { return vload_half16(i, p); }

/* vstore_halfN[_mode] and vstorea_halfN[_mode] from float and double (the default
 * mode is round to nearest even). vstorea_half3 uses a stride of 4 elements. */
#define HALF_STORE(T, AS, MODE) \
    OVL void vstore_half##MODE(T v, size_t i, AS half *p) { p[i] = CONV_##T(MODE)(v); } \
    OVL void vstorea_half##MODE(T v, size_t i, AS half *p) { p[i] = CONV_##T(MODE)(v); } \
    HALF_STORE_N2(T, AS, MODE, 2, 2) HALF_STORE_N2(T, AS, MODE, 3, 3) HALF_STORE_N2(T, AS, MODE, 4, 4) \
    HALF_STORE_N2(T, AS, MODE, 8, 8) HALF_STORE_N2(T, AS, MODE, 16, 16) \
    HALF_STORE_A(T, AS, MODE, 2, 2) HALF_STORE_A(T, AS, MODE, 3, 4) HALF_STORE_A(T, AS, MODE, 4, 4) \
    HALF_STORE_A(T, AS, MODE, 8, 8) HALF_STORE_A(T, AS, MODE, 16, 16)
#define HALF_STORE_N2(T, AS, MODE, N, STRIDE) \
    OVL void vstore_half##N##MODE(T##N v, size_t i, AS half *p) { \
        for (int k = 0; k < N; k++) p[i * STRIDE + k] = CONV_##T(MODE)(((T *)&v)[k]); \
    }
#define HALF_STORE_A(T, AS, MODE, N, STRIDE) \
    OVL void vstorea_half##N##MODE(T##N v, size_t i, AS half *p) { \
        for (int k = 0; k < N; k++) p[i * STRIDE + k] = CONV_##T(MODE)(((T *)&v)[k]); \
    }
#define CONV_float(MODE) to_half##MODE
#define CONV_double(MODE) d_to_half##MODE
#define HALF_MODES(T, AS) \
    HALF_STORE(T, AS, ) HALF_STORE(T, AS, _rte) HALF_STORE(T, AS, _rtz) HALF_STORE(T, AS, _rtp) HALF_STORE(T, AS, _rtn)

HALF_LOAD(__global)
HALF_LOAD(__local)
HALF_LOAD(__constant)
HALF_LOAD(__private)
HALF_MODES(float, __global)
HALF_MODES(float, __local)
HALF_MODES(float, __private)
HALF_MODES(double, __global)
HALF_MODES(double, __local)
HALF_MODES(double, __private)
