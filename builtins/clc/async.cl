/* Async work-group copies (6.15.11), cl_khr_extended_async_copies (2D2D, 3D3D) and
 * cl_khr_async_work_group_copy_fence, for every gentype.
 *
 * Every builtin describes its copy as one shape (planes x lines x elements, strides in
 * elements) and hands it to the driver's copy engine through workitem.c; see
 * icd/src/exec/copies for what happens to it. Compiled as OpenCL C 2.0 with the generic
 * address space because clang declares wait_group_events with a generic event pointer. */

#include "clc.h"

event_t __ferrocl_async_copy(size_t dst, size_t src, size_t elem, size_t per_line, size_t lines, size_t planes,
                             size_t src_line, size_t src_plane, size_t dst_line, size_t dst_plane, uint to_local,
                             event_t e);
void __ferrocl_async_wait(int count, size_t events);
void __ferrocl_async_fence(uint flags);

#define A(p) ((size_t)(p))

/* 3-component vectors occupy 4 components in memory, so they copy as E = 4-component. */
#define COPIES(T, E) \
    OVL event_t async_work_group_copy(__local T *dst, const __global T *src, size_t n, event_t e) { \
        return __ferrocl_async_copy(A(dst), A(src), sizeof(E), n, 1, 1, 0, 0, 0, 0, 1, e); \
    } \
    OVL event_t async_work_group_copy(__global T *dst, const __local T *src, size_t n, event_t e) { \
        return __ferrocl_async_copy(A(dst), A(src), sizeof(E), n, 1, 1, 0, 0, 0, 0, 0, e); \
    } \
    OVL event_t async_work_group_strided_copy(__local T *dst, const __global T *src, size_t n, size_t stride, event_t e) { \
        return __ferrocl_async_copy(A(dst), A(src), sizeof(E), 1, n, 1, stride, 0, 1, 0, 1, e); \
    } \
    OVL event_t async_work_group_strided_copy(__global T *dst, const __local T *src, size_t n, size_t stride, event_t e) { \
        return __ferrocl_async_copy(A(dst), A(src), sizeof(E), 1, n, 1, 1, 0, stride, 0, 0, e); \
    } \
    OVL void prefetch(const __global T *p, size_t n) { \
        /* One prefetch per 64-byte line; elements can be larger than a line. */ \
        size_t step = sizeof(E) >= 64 ? 1 : 64 / sizeof(E); \
        for (size_t i = 0; i < n; i += step) __builtin_prefetch((const __global E *)p + i); \
    }

#define WIDTHS(T) COPIES(T, T) COPIES(T##2, T##2) COPIES(T##3, T##4) COPIES(T##4, T##4) COPIES(T##8, T##8) COPIES(T##16, T##16)
FOR_INTEGERS(WIDTHS)
FOR_FLOATS(WIDTHS)
WIDTHS(half)

OVL void wait_group_events(int n, event_t *events) { __ferrocl_async_wait(n, A(events)); }

/* Element-size-generic copies between 2D and 3D regions; offsets and strides count
 * elements of num_bytes_per_element bytes. */
#define COPY_ND(DS, SS, TO_LOCAL) \
    OVL event_t async_work_group_copy_2D2D(DS void *dst, size_t dst_offset, const SS void *src, size_t src_offset, \
                                          size_t elem, size_t per_line, size_t lines, size_t src_line_stride, \
                                          size_t dst_line_stride, event_t e) { \
        return __ferrocl_async_copy(A(dst) + dst_offset * elem, A(src) + src_offset * elem, elem, per_line, lines, 1, \
                                    src_line_stride, 0, dst_line_stride, 0, TO_LOCAL, e); \
    } \
    OVL event_t async_work_group_copy_3D3D(DS void *dst, size_t dst_offset, const SS void *src, size_t src_offset, \
                                          size_t elem, size_t per_line, size_t lines, size_t planes, \
                                          size_t src_line_stride, size_t src_plane_stride, size_t dst_line_stride, \
                                          size_t dst_plane_stride, event_t e) { \
        return __ferrocl_async_copy(A(dst) + dst_offset * elem, A(src) + src_offset * elem, elem, per_line, lines, \
                                    planes, src_line_stride, src_plane_stride, dst_line_stride, dst_plane_stride, \
                                    TO_LOCAL, e); \
    }
COPY_ND(__local, __global, 1)
COPY_ND(__global, __local, 0)

OVL void async_work_group_copy_fence(cl_mem_fence_flags flags) { __ferrocl_async_fence(flags); }
