/* Async work-group copies (6.15.11), cl_khr_extended_async_copies (2D2D, 3D3D) and
 * cl_khr_async_work_group_copy_fence, for every gentype.
 *
 * This version copies synchronously: the first work-item of the group performs the
 * whole copy when it reaches the call, and wait_group_events is a barrier, so every
 * work-item sees the data afterwards. Compiled as OpenCL C 2.0 with the generic address
 * space because clang declares wait_group_events with a generic event pointer. */

#include "clc.h"

size_t __ferrocl_current_local_linear_id(void);
void __ferrocl_current_barrier(void);
event_t __ferrocl_event(event_t e);

#define FIRST (__ferrocl_current_local_linear_id() == 0)

/* One element copy; 3-component vectors move as 4 components, as the spec says they
 * occupy 4 in memory. */
#define COPIES(T, E) \
    OVL event_t async_work_group_copy(__local T *dst, const __global T *src, size_t n, event_t e) { \
        if (FIRST) for (size_t i = 0; i < n; i++) ((__local E *)dst)[i] = ((const __global E *)src)[i]; \
        return __ferrocl_event(e); \
    } \
    OVL event_t async_work_group_copy(__global T *dst, const __local T *src, size_t n, event_t e) { \
        if (FIRST) for (size_t i = 0; i < n; i++) ((__global E *)dst)[i] = ((const __local E *)src)[i]; \
        return __ferrocl_event(e); \
    } \
    OVL event_t async_work_group_strided_copy(__local T *dst, const __global T *src, size_t n, size_t stride, event_t e) { \
        if (FIRST) for (size_t i = 0; i < n; i++) ((__local E *)dst)[i] = ((const __global E *)src)[i * stride]; \
        return __ferrocl_event(e); \
    } \
    OVL event_t async_work_group_strided_copy(__global T *dst, const __local T *src, size_t n, size_t stride, event_t e) { \
        if (FIRST) for (size_t i = 0; i < n; i++) ((__global E *)dst)[i * stride] = ((const __local E *)src)[i]; \
        return __ferrocl_event(e); \
    } \
    OVL void prefetch(const __global T *p, size_t n) { \
        /* One prefetch per 64-byte line; elements can be larger than a line. */ \
        size_t step = sizeof(E) >= 64 ? 1 : 64 / sizeof(E); \
        for (size_t i = 0; i < n; i += step) __builtin_prefetch((const __global E *)p + i); \
    }

#define WIDTHS(T) COPIES(T, T) COPIES(T##2, T##2) COPIES(T##3, T##4) COPIES(T##4, T##4) COPIES(T##8, T##8) COPIES(T##16, T##16)
FOR_INTEGERS(WIDTHS)
FOR_FLOATS(WIDTHS)

OVL void wait_group_events(int n, event_t *events) { __ferrocl_current_barrier(); }

/* Element-size-generic copies between 2D and 3D regions; offsets and strides count
 * elements of num_bytes_per_element bytes. */
#define COPY_2D(DS, SS) \
    OVL event_t async_work_group_copy_2D2D(DS void *dst, size_t dst_offset, const SS void *src, size_t src_offset, \
                                          size_t elem, size_t per_line, size_t lines, size_t src_line_stride, \
                                          size_t dst_line_stride, event_t e) { \
        if (FIRST) \
            for (size_t l = 0; l < lines; l++) { \
                DS uchar *d = (DS uchar *)dst + (dst_offset + l * dst_line_stride) * elem; \
                const SS uchar *s = (const SS uchar *)src + (src_offset + l * src_line_stride) * elem; \
                for (size_t b = 0; b < per_line * elem; b++) d[b] = s[b]; \
            } \
        return __ferrocl_event(e); \
    } \
    OVL event_t async_work_group_copy_3D3D(DS void *dst, size_t dst_offset, const SS void *src, size_t src_offset, \
                                          size_t elem, size_t per_line, size_t lines, size_t planes, \
                                          size_t src_line_stride, size_t src_plane_stride, size_t dst_line_stride, \
                                          size_t dst_plane_stride, event_t e) { \
        if (FIRST) \
            for (size_t p = 0; p < planes; p++) \
                for (size_t l = 0; l < lines; l++) { \
                    DS uchar *d = (DS uchar *)dst + (dst_offset + p * dst_plane_stride + l * dst_line_stride) * elem; \
                    const SS uchar *s = \
                        (const SS uchar *)src + (src_offset + p * src_plane_stride + l * src_line_stride) * elem; \
                    for (size_t b = 0; b < per_line * elem; b++) d[b] = s[b]; \
                } \
        return __ferrocl_event(e); \
    }
COPY_2D(__local, __global)
COPY_2D(__global, __local)

/* Copies complete before their call returns, so they are already ordered. */
OVL void async_work_group_copy_fence(cl_mem_fence_flags flags) {}
