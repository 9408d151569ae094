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

/* cl_ext_float_atomics: add, sub, min and max of float and double atomics, in the three
 * forms. Declared as overloads of the OpenCL names, they made integer calls ambiguous
 * (clang ranks an atomic_int pointer passed for an atomic_float one like an added
 * qualifier; its own declarations fail the same way), so each name is a macro that
 * sends float and double atomics to the library's `__ferrocl_fp_*` and the rest to the
 * function. Load, store and exchange are OpenCL C 2.0's already. */
#if __OPENCL_C_VERSION__ >= 200
#define cl_ext_float_atomics 1
#define __opencl_c_ext_fp32_global_atomic_add 1
#define __opencl_c_ext_fp32_local_atomic_add 1
#define __opencl_c_ext_fp32_global_atomic_min_max 1
#define __opencl_c_ext_fp32_local_atomic_min_max 1
/* X where the program has the generic address space (OpenCL C 2.0, or 3.0 with it). */
#if __OPENCL_C_VERSION__ == 200 || defined(__opencl_c_generic_address_space)
#define __FERROCL_IF_GENERIC(...) __VA_ARGS__
#else
#define __FERROCL_IF_GENERIC(...)
#endif
#define __FERROCL_FP_ATOMIC(AS, A, T, OP) \
    T __FERROCL_OVL __ferrocl_fp_fetch_##OP(volatile AS A *p, T v); \
    T __FERROCL_OVL __ferrocl_fp_fetch_##OP##_explicit(volatile AS A *p, T v, memory_order o); \
    T __FERROCL_OVL __ferrocl_fp_fetch_##OP##_explicit(volatile AS A *p, T v, memory_order o, memory_scope s);
#define __FERROCL_FP_SPACES(A, T, OP) \
    __FERROCL_FP_ATOMIC(__global, A, T, OP) __FERROCL_FP_ATOMIC(__local, A, T, OP) \
    __FERROCL_IF_GENERIC(__FERROCL_FP_ATOMIC(__generic, A, T, OP))
#define __FERROCL_FP_ATOMICS(A, T) \
    __FERROCL_FP_SPACES(A, T, add) __FERROCL_FP_SPACES(A, T, sub) __FERROCL_FP_SPACES(A, T, min) \
    __FERROCL_FP_SPACES(A, T, max)
__FERROCL_FP_ATOMICS(atomic_float, float)
#if defined(cl_khr_fp64) && defined(cl_khr_int64_base_atomics)
#define __opencl_c_ext_fp64_global_atomic_add 1
#define __opencl_c_ext_fp64_local_atomic_add 1
#define __opencl_c_ext_fp64_global_atomic_min_max 1
#define __opencl_c_ext_fp64_local_atomic_min_max 1
__FERROCL_FP_ATOMICS(atomic_double, double)
#define __FERROCL_FP_TYPE(Q, AS, F) Q AS atomic_float * : F, Q AS atomic_double * : F
#else
#define __FERROCL_FP_TYPE(Q, AS, F) Q AS atomic_float * : F
#endif
#undef __FERROCL_FP_ATOMICS
#undef __FERROCL_FP_SPACES
#undef __FERROCL_FP_ATOMIC
/* Every pointer to a float atomic a call may pass, volatile or not, in each space. */
#define __FERROCL_FP_TYPES(F) \
    __FERROCL_FP_TYPE(, __global, F), __FERROCL_FP_TYPE(volatile, __global, F), __FERROCL_FP_TYPE(, __local, F), \
        __FERROCL_FP_TYPE(volatile, __local, F) \
            __FERROCL_IF_GENERIC(, __FERROCL_FP_TYPE(, __generic, F), __FERROCL_FP_TYPE(volatile, __generic, F))
#define __FERROCL_FP_SEND(NAME, p) _Generic((p), __FERROCL_FP_TYPES(__ferrocl_fp_##NAME), default: atomic_##NAME)
#define atomic_fetch_add(p, ...) __FERROCL_FP_SEND(fetch_add, p)(p, __VA_ARGS__)
#define atomic_fetch_sub(p, ...) __FERROCL_FP_SEND(fetch_sub, p)(p, __VA_ARGS__)
#define atomic_fetch_min(p, ...) __FERROCL_FP_SEND(fetch_min, p)(p, __VA_ARGS__)
#define atomic_fetch_max(p, ...) __FERROCL_FP_SEND(fetch_max, p)(p, __VA_ARGS__)
#define atomic_fetch_add_explicit(p, ...) __FERROCL_FP_SEND(fetch_add_explicit, p)(p, __VA_ARGS__)
#define atomic_fetch_sub_explicit(p, ...) __FERROCL_FP_SEND(fetch_sub_explicit, p)(p, __VA_ARGS__)
#define atomic_fetch_min_explicit(p, ...) __FERROCL_FP_SEND(fetch_min_explicit, p)(p, __VA_ARGS__)
#define atomic_fetch_max_explicit(p, ...) __FERROCL_FP_SEND(fetch_max_explicit, p)(p, __VA_ARGS__)
#endif

/* cl_intel_subgroups (claimed by the device; clang declares its functions for SPIR
 * targets only). The shuffles on the types the specification lists; the block reads
 * and writes of 32-bit values, in buffers and 2D images. */
#if defined(cl_intel_subgroups)
#define __FERROCL_SHUFFLES(T) \
    T __FERROCL_OVL intel_sub_group_shuffle(T x, uint c); \
    T __FERROCL_OVL intel_sub_group_shuffle_down(T cur, T next, uint c); \
    T __FERROCL_OVL intel_sub_group_shuffle_up(T prev, T cur, uint c); \
    T __FERROCL_OVL intel_sub_group_shuffle_xor(T x, uint c);
#define __FERROCL_SHUFFLE_WIDTHS(T) \
    __FERROCL_SHUFFLES(T) __FERROCL_SHUFFLES(T##2) __FERROCL_SHUFFLES(T##3) __FERROCL_SHUFFLES(T##4) \
    __FERROCL_SHUFFLES(T##8) __FERROCL_SHUFFLES(T##16)
__FERROCL_SHUFFLE_WIDTHS(float)
__FERROCL_SHUFFLE_WIDTHS(int)
__FERROCL_SHUFFLE_WIDTHS(uint)
__FERROCL_SHUFFLES(long)
__FERROCL_SHUFFLES(ulong)
#ifdef cl_khr_fp64
__FERROCL_SHUFFLES(double)
#endif
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__FERROCL_SHUFFLES(half)
#pragma OPENCL EXTENSION cl_khr_fp16 : disable
#endif
#undef __FERROCL_SHUFFLE_WIDTHS
#undef __FERROCL_SHUFFLES
#define __FERROCL_BLOCKS(N, T) \
    T __FERROCL_OVL intel_sub_group_block_read##N(const __global uint *p); \
    void __FERROCL_OVL intel_sub_group_block_write##N(__global uint *p, T data);
#define __FERROCL_IMAGE_BLOCKS(N, T, R, W) \
    T __FERROCL_OVL intel_sub_group_block_read##N(R image2d_t image, int2 coord); \
    void __FERROCL_OVL intel_sub_group_block_write##N(W image2d_t image, int2 coord, T data);
#define __FERROCL_ALL_BLOCKS(F, ...) F(, uint __VA_ARGS__) F(2, uint2 __VA_ARGS__) F(4, uint4 __VA_ARGS__) F(8, uint8 __VA_ARGS__)
__FERROCL_ALL_BLOCKS(__FERROCL_BLOCKS)
#if defined(__opencl_c_images) || __OPENCL_C_VERSION__ < 200
__FERROCL_ALL_BLOCKS(__FERROCL_IMAGE_BLOCKS, , read_only, write_only)
#endif
#if defined(__opencl_c_read_write_images)
__FERROCL_ALL_BLOCKS(__FERROCL_IMAGE_BLOCKS, , read_write, read_write)
#endif
#undef __FERROCL_ALL_BLOCKS
#undef __FERROCL_IMAGE_BLOCKS
#undef __FERROCL_BLOCKS
#endif

#undef __FERROCL_OVL

#endif
