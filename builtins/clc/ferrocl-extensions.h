/* Declarations of FerroCL's OpenCL C extensions that clang does not declare, in the
 * signatures the extension specifications give. Included into every kernel. */

#ifndef FERROCL_EXTENSIONS_H
#define FERROCL_EXTENSIONS_H

#define cl_khr_extended_async_copies 1
#define cl_khr_async_work_group_copy_fence 1

#define __FERROCL_OVL __attribute__((overloadable))

event_t __FERROCL_OVL async_work_group_copy_2D2D(__local void *dst, size_t dst_offset, const __global void *src,
                                                 size_t src_offset, size_t num_bytes_per_element,
                                                 size_t num_elements_per_line, size_t num_lines,
                                                 size_t src_line_stride, size_t dst_line_stride, event_t event);
event_t __FERROCL_OVL async_work_group_copy_2D2D(__global void *dst, size_t dst_offset, const __local void *src,
                                                 size_t src_offset, size_t num_bytes_per_element,
                                                 size_t num_elements_per_line, size_t num_lines,
                                                 size_t src_line_stride, size_t dst_line_stride, event_t event);
event_t __FERROCL_OVL async_work_group_copy_3D3D(__local void *dst, size_t dst_offset, const __global void *src,
                                                 size_t src_offset, size_t num_bytes_per_element,
                                                 size_t num_elements_per_line, size_t num_lines, size_t num_planes,
                                                 size_t src_line_stride, size_t src_plane_stride,
                                                 size_t dst_line_stride, size_t dst_plane_stride, event_t event);
event_t __FERROCL_OVL async_work_group_copy_3D3D(__global void *dst, size_t dst_offset, const __local void *src,
                                                 size_t src_offset, size_t num_bytes_per_element,
                                                 size_t num_elements_per_line, size_t num_lines, size_t num_planes,
                                                 size_t src_line_stride, size_t src_plane_stride,
                                                 size_t dst_line_stride, size_t dst_plane_stride, event_t event);
void __FERROCL_OVL async_work_group_copy_fence(cl_mem_fence_flags flags);

/* cl_khr_work_group_uniform_arithmetic: reductions and scans with mul, the bitwise and
 * the logical operations, where the work-group functions are (OpenCL C 2.0, 3.0). */
#if __OPENCL_C_VERSION__ >= 200
#define cl_khr_work_group_uniform_arithmetic 1
#define __FERROCL_FOLDS(T, OP) \
    T __FERROCL_OVL work_group_reduce_##OP(T x); \
    T __FERROCL_OVL work_group_scan_inclusive_##OP(T x); \
    T __FERROCL_OVL work_group_scan_exclusive_##OP(T x);
#define __FERROCL_INTEGER_FOLDS(T) __FERROCL_FOLDS(T, mul) __FERROCL_FOLDS(T, and) __FERROCL_FOLDS(T, or) __FERROCL_FOLDS(T, xor)
__FERROCL_INTEGER_FOLDS(int)
__FERROCL_INTEGER_FOLDS(uint)
__FERROCL_INTEGER_FOLDS(long)
__FERROCL_INTEGER_FOLDS(ulong)
__FERROCL_FOLDS(float, mul)
#ifdef cl_khr_fp64
__FERROCL_FOLDS(double, mul)
#endif
#ifdef cl_khr_fp16
/* half parameters need the extension enabled; the program enables it itself. */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__FERROCL_FOLDS(half, mul)
#pragma OPENCL EXTENSION cl_khr_fp16 : disable
#endif
__FERROCL_FOLDS(int, logical_and)
__FERROCL_FOLDS(int, logical_or)
__FERROCL_FOLDS(int, logical_xor)
#undef __FERROCL_INTEGER_FOLDS
#undef __FERROCL_FOLDS
#endif

#undef __FERROCL_OVL
#endif
