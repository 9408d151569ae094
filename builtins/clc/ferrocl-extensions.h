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

#undef __FERROCL_OVL
#endif
