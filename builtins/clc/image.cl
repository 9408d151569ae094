/* Images and samplers (OpenCL C 3.0 section 6.15.15 and chapter 8).
 *
 * An image argument is a pointer to the driver's image descriptor (kernel-abi `Image`,
 * declared below as `img_t`), a sampler an integer holding the CLK_* bits cast to a
 * pointer (`__translate_sampler_initializer` makes kernel-scope sampler constants the
 * same way). Every overload reaches one of four inline helpers (sampled float read,
 * integer read, write, query) with its dimension count and layer coordinate as
 * constants, and the sampler's bits as a constant where the kernel declares the
 * sampler, so each call keeps only the addressing and filtering code it uses. The
 * channel type and order stay a run-time switch: they belong to the image object.
 *
 * Every texel access is bounds-checked: out-of-range coordinates give the border
 * colour (CLK_ADDRESS_CLAMP's rule) whatever the spec leaves undefined, so no
 * coordinate a kernel computes can read or write outside the image. */

#include "clc.h"

#pragma OPENCL EXTENSION cl_khr_depth_images : enable

/* kernel-abi `Image`. The coordinates address x + y * row_pitch + z * slice_pitch:
 * a 1D array's layer is y (its row pitch is the layer pitch), a 2D array's is z. */
typedef struct {
    __global uchar *data;
    ulong row_pitch;
    ulong slice_pitch;
    int size[3];   /* extent in x, y, z as addressed (layers included) */
    int layers;    /* array size, 0 for images that are not arrays */
    uint order;    /* CLK_R, CLK_RGBA, ... */
    uint type;     /* CLK_UNORM_INT8, ... */
    uint elem;     /* bytes per texel */
    uint channels; /* channels stored per texel (packed types: 1) */
    uint key;      /* OKEY(type, order) */
    uint pad;
} img_t;

#define DESC(i) (__builtin_astype((i), __global const img_t *))
#define BITS(s) ((uint)(ulong)__builtin_astype((s), __constant void *))
#define INLINE static inline __attribute__((always_inline))

__constant void *__translate_sampler_initializer(int bits) { return (__constant void *)(ulong)bits; }

#define ADDRESS_MASK 0xE

/* Whether a sampler's reads may address texels outside the image: with integer
 * coordinates only clamping to the edge stays inside (repeat modes need normalised
 * coordinates); with float ones, repeating and mirroring do too. */
INLINE bool int_may_leave(uint bits) { return (bits & ADDRESS_MASK) != CLK_ADDRESS_CLAMP_TO_EDGE; }
INLINE bool float_may_leave(uint bits) {
    uint mode = bits & ADDRESS_MASK;
    return mode == CLK_ADDRESS_CLAMP || mode == CLK_ADDRESS_NONE;
}

/* ---- texel memory ---------------------------------------------------------------- */

INLINE __global uchar *texel(__global const img_t *im, int4 c) {
    return im->data + (ulong)c.x * im->elem + (ulong)c.y * im->row_pitch + (ulong)c.z * im->slice_pitch;
}

INLINE bool inside(__global const img_t *im, int4 c) {
    return (uint)c.x < (uint)im->size[0] && (uint)c.y < (uint)im->size[1] && (uint)c.z < (uint)im->size[2];
}

/* ---- channel order --------------------------------------------------------------- */

/* The colour CLK_ADDRESS_CLAMP returns outside the image: alpha 0 where the order has
 * an alpha channel (or an unused one), 1 otherwise. */
INLINE bool border_alpha_one(uint order) {
    return order == CLK_R || order == CLK_RG || order == CLK_RGB || order == CLK_LUMINANCE || order == CLK_DEPTH;
}

INLINE float srgb_to_linear(float c) {
    return c <= 0.04045f ? c / 12.92f : pow((c + 0.055f) / 1.055f, 2.4f);
}

/* ---- conversions (OpenCL C 3.0 section 8.3) ------------------------------------- */

/* Reading a texel is one jump on a dense key of (channel type, channel order) to code
 * specialised for that format: load, convert, reorder to (r, g, b, a). The key is
 * loop-invariant (computed once per kernel); every extra branch or jump per texel cost
 * throughput in the benchmark's 5x5 blur (a chain of 25 dependent additions per
 * work-item, where fewer instructions per read let the core overlap more work-items). */
#define OKEY(TYPE, ORDER) (((TYPE) - CLK_SNORM_INT8) * 32 + (ORDER) - CLK_R)
/* The key is a field of the descriptor (kernel-abi `image_key`), read from the same
 * address in every read: the driver compiles the work-item loop of kernels reading
 * images once per common format with that field's value known (launcher.rs), which
 * turns this switch into straight code the loop can keep in registers. */
INLINE uint okey(__global const img_t *im) { return im->key; }

/* A texel's N channels of T as a T4 (the rest 0), loaded as one integer of their size
 * at the alignment of their elements (texels are that aligned, even in an application's
 * memory): one integer load converts in one instruction, where LLVM splits a byte
 * vector's load into shuffles. */
typedef ushort __attribute__((aligned(1))) ushort_a1;
typedef uint __attribute__((aligned(1))) uint_a1;
typedef uint __attribute__((aligned(2))) uint_a2;
typedef ulong __attribute__((aligned(2))) ulong_a2;
typedef ulong __attribute__((aligned(4))) ulong_a4;
typedef uint4 __attribute__((aligned(4))) uint4_a4;
#define BITS2_1 ushort_a1
#define BITS4_1 uint_a1
#define BITS2_2 uint_a2
#define BITS4_2 ulong_a2
#define BITS2_4 ulong_a4
#define BITS4_4 uint4_a4
#define LOADN_1(T, S, p) ((T##4)(*(__global const T *)(p), 0, 0, 0))
#define LOADN_2(T, S, p) ((T##4)(__builtin_astype(*(__global const BITS2_##S *)(p), T##2), 0, 0))
#define LOADN_4(T, S, p) __builtin_astype(*(__global const BITS4_##S *)(p), T##4)

/* One format's case: N channels of T (S bytes each), converted by CONV to c, in memory
 * order, returned as RGBA (an expression in c). */
#define CASE(TYPE, T, S, CONV, ORDER, N, RGBA) \
    case OKEY(TYPE, ORDER): { \
        R4 c = CONV(LOADN_##N(T, S, p)); \
        return RGBA; \
    }
/* The orders every channel type has, the 8-bit ones, and those of normalised types. */
#define ANY_ORDER(TYPE, T, S, CONV) \
    CASE(TYPE, T, S, CONV, CLK_R, 1, (R4)(c.x, 0, 0, ONE)) \
    CASE(TYPE, T, S, CONV, CLK_A, 1, (R4)(0, 0, 0, c.x)) \
    CASE(TYPE, T, S, CONV, CLK_RG, 2, (R4)(c.x, c.y, 0, ONE)) \
    CASE(TYPE, T, S, CONV, CLK_RA, 2, (R4)(c.x, 0, 0, c.y)) \
    CASE(TYPE, T, S, CONV, CLK_RGBA, 4, c)
#define BYTE_ORDER(TYPE, T, CONV) \
    CASE(TYPE, T, 1, CONV, CLK_BGRA, 4, c.zyxw) \
    CASE(TYPE, T, 1, CONV, CLK_ARGB, 4, c.yzwx) \
    CASE(TYPE, T, 1, CONV, CLK_ABGR, 4, c.wzyx)
#define NORM_ORDER(TYPE, T, S, CONV) \
    CASE(TYPE, T, S, CONV, CLK_INTENSITY, 1, c.xxxx) \
    CASE(TYPE, T, S, CONV, CLK_LUMINANCE, 1, (R4)(c.x, c.x, c.x, ONE))

/* Conversions as one vector instruction (the library's convert_float4 of a byte vector
 * goes through halves, five shuffles on x86); integer to float rounds to nearest, as
 * convert_float4 does. */
#define TO_F(x) __builtin_convertvector((x), float4)
#define TO_I(x) __builtin_convertvector((x), int4)
#define UNORM8(x) (TO_F(x) * (1.0f / 255.0f))
#define UNORM16(x) (TO_F(x) * (1.0f / 65535.0f))
#define SNORM8(x) fmax(TO_F(x) * (1.0f / 127.0f), -1.0f)
#define SNORM16(x) fmax(TO_F(x) * (1.0f / 32767.0f), -1.0f)
#define SAME(x) (x)
#define SRGB(c) (R4)(srgb_to_linear(c.x), srgb_to_linear(c.y), srgb_to_linear(c.z), c.w)

/* (r, g, b, a) as read_imagef/h return it (section 8.3). Integer types read as float
 * are undefined; they give their values. */
/* Clamped to [0, 1] (NaN to 0), for the packed types' fields. */
INLINE float4 unit(float4 v) { return fmin(fmax(v, 0.0f), 1.0f); }

/* Writing a texel mirrors reading: one jump on the key to a case that reorders (r, g,
 * b, a) into the stored channels, converts them with rounding to nearest even and
 * saturation (section 8.3), and stores them in one access. Writes of the wrong kind
 * (write_imagef to an integer image, ...) are undefined and leave the texel as it is. */
#define STOREN_1(T, S, p, val) (*(__global T *)(p) = (val).x)
#define STOREN_2(T, S, p, val) (*(__global BITS2_##S *)(p) = __builtin_astype((val).xy, BITS2_##S))
#define STOREN_4(T, S, p, val) (*(__global BITS4_##S *)(p) = __builtin_astype((val), BITS4_##S))
#define WCASE(TYPE, T, S, CONV, ORDER, N, STORED) \
    case OKEY(TYPE, ORDER): { \
        T##4 s = CONV(STORED); \
        STOREN_##N(T, S, p, s); \
        return; \
    }
#define W_ANY_ORDER(TYPE, T, S, CONV) \
    WCASE(TYPE, T, S, CONV, CLK_R, 1, v) \
    WCASE(TYPE, T, S, CONV, CLK_A, 1, v.wwww) \
    WCASE(TYPE, T, S, CONV, CLK_RG, 2, v) \
    WCASE(TYPE, T, S, CONV, CLK_RA, 2, v.xwzy) \
    WCASE(TYPE, T, S, CONV, CLK_RGBA, 4, v)
#define W_BYTE_ORDER(TYPE, T, CONV) \
    WCASE(TYPE, T, 1, CONV, CLK_BGRA, 4, v.zyxw) \
    WCASE(TYPE, T, 1, CONV, CLK_ARGB, 4, v.wxyz) \
    WCASE(TYPE, T, 1, CONV, CLK_ABGR, 4, v.wzyx)
#define W_NORM_ORDER(TYPE, T, S, CONV) \
    WCASE(TYPE, T, S, CONV, CLK_INTENSITY, 1, v) \
    WCASE(TYPE, T, S, CONV, CLK_LUMINANCE, 1, v)

#define TO_UNORM8(x) convert_uchar4_sat_rte((x) * 255.0f)
#define TO_UNORM16(x) convert_ushort4_sat_rte((x) * 65535.0f)
#define TO_SNORM8(x) convert_char4_sat_rte((x) * 127.0f)
#define TO_SNORM16(x) convert_short4_sat_rte((x) * 32767.0f)
#define TO_HALF(x) convert_half4_rte(x)

/* The formats of plain channel types, one line each: X(type, channel type T, bytes per
 * channel, conversion of a T4 to what reads return, conversion of what writes take to
 * a T4, and whether the type also has the 8-bit orders (BGRA, ARGB, ABGR), the
 * normalised ones (INTENSITY, LUMINANCE) and DEPTH). Reads and writes are generated
 * from the same table. */
#define FLOAT_FORMATS(X) \
    X(CLK_UNORM_INT8, uchar, 1, UNORM8, TO_UNORM8, YES, YES, NO) \
    X(CLK_SNORM_INT8, char, 1, SNORM8, TO_SNORM8, YES, YES, NO) \
    X(CLK_UNORM_INT16, ushort, 2, UNORM16, TO_UNORM16, NO, YES, YES) \
    X(CLK_SNORM_INT16, short, 2, SNORM16, TO_SNORM16, NO, YES, NO) \
    X(CLK_HALF_FLOAT, half, 2, TO_F, TO_HALF, NO, YES, NO) \
    X(CLK_FLOAT, float, 4, SAME, SAME, NO, YES, YES)
#define INT_FORMATS(X) \
    X(CLK_SIGNED_INT8, char, 1, TO_I, convert_char4_sat, YES, NO, NO) \
    X(CLK_SIGNED_INT16, short, 2, TO_I, convert_short4_sat, NO, NO, NO) \
    X(CLK_SIGNED_INT32, int, 4, SAME, SAME, NO, NO, NO)
#define UINT_FORMATS(X) \
    X(CLK_UNSIGNED_INT8, uchar, 1, TO_I, convert_uchar4_sat, YES, NO, NO) \
    X(CLK_UNSIGNED_INT16, ushort, 2, TO_I, convert_ushort4_sat, NO, NO, NO) \
    X(CLK_UNSIGNED_INT32, uint, 4, as_int4, SAME, NO, NO, NO)
#define IF_YES(...) __VA_ARGS__
#define IF_NO(...)

/* The read cases of one format line; READS_AS_FLOAT: an integer format read by
 * read_imagef (undefined: its values, converted). */
#define READS(TYPE, T, S, RCONV, WCONV, BYTE, NORM, DEPTH) \
    ANY_ORDER(TYPE, T, S, RCONV) \
    IF_##BYTE(BYTE_ORDER(TYPE, T, RCONV)) \
    IF_##NORM(NORM_ORDER(TYPE, T, S, RCONV)) \
    IF_##DEPTH(CASE(TYPE, T, S, RCONV, CLK_DEPTH, 1, c))
#define READS_AS_FLOAT(TYPE, T, S, RCONV, WCONV, BYTE, NORM, DEPTH) READS(TYPE, T, S, TO_F, WCONV, BYTE, NORM, DEPTH)
#define WRITES_OF(TYPE, T, S, RCONV, WCONV, BYTE, NORM, DEPTH) \
    W_ANY_ORDER(TYPE, T, S, WCONV) \
    IF_##BYTE(W_BYTE_ORDER(TYPE, T, WCONV)) \
    IF_##NORM(W_NORM_ORDER(TYPE, T, S, WCONV)) \
    IF_##DEPTH(WCASE(TYPE, T, S, WCONV, CLK_DEPTH, 1, v))

/* (r, g, b, a) as read_imagef/h return it (section 8.3). */
INLINE float4 decode_f(__global const img_t *im, __global const uchar *p) {
#define R4 float4
#define ONE 1.0f
    switch (okey(im)) {
    FLOAT_FORMATS(READS)
    INT_FORMATS(READS_AS_FLOAT)
    UINT_FORMATS(READS_AS_FLOAT)
    CASE(CLK_UNORM_INT8, uchar, 1, UNORM8, CLK_sRGBA, 4, SRGB(c))
    CASE(CLK_UNORM_INT8, uchar, 1, UNORM8, CLK_sBGRA, 4, SRGB(c.zyxw))
    case OKEY(CLK_UNORM_SHORT_565, CLK_RGB): {
        uint v = *(__global const ushort_a1 *)p;
        return (float4)((v >> 11) / 31.0f, ((v >> 5) & 63) / 63.0f, (v & 31) / 31.0f, 1.0f);
    }
    case OKEY(CLK_UNORM_SHORT_555, CLK_RGB): {
        uint v = *(__global const ushort_a1 *)p;
        return (float4)(((v >> 10) & 31) / 31.0f, ((v >> 5) & 31) / 31.0f, (v & 31) / 31.0f, 1.0f);
    }
    case OKEY(CLK_UNORM_INT_101010, CLK_RGB): {
        uint v = *(__global const uint_a1 *)p;
        return (float4)(((v >> 20) & 1023) / 1023.0f, ((v >> 10) & 1023) / 1023.0f, (v & 1023) / 1023.0f, 1.0f);
    }
    default: return (float4)(0.0f);
    }
#undef R4
#undef ONE
}

/* (r, g, b, a) as read_imagei/ui return it, for the 8-, 16- and 32-bit integer types
 * (other types are undefined there and read 0). */
INLINE int4 decode_i(__global const img_t *im, __global const uchar *p) {
#define R4 int4
#define ONE 1
    switch (okey(im)) {
    INT_FORMATS(READS)
    UINT_FORMATS(READS)
    default: return (int4)(0);
    }
#undef R4
#undef ONE
}

INLINE void encode_f(__global const img_t *im, __global uchar *p, float4 v) {
    switch (okey(im)) {
    FLOAT_FORMATS(WRITES_OF)
    case OKEY(CLK_UNORM_SHORT_565, CLK_RGB): {
        uint4 u = convert_uint4_sat_rte(unit(v) * (float4)(31.0f, 63.0f, 31.0f, 0.0f));
        *(__global ushort_a1 *)p = (ushort)(u.x << 11 | u.y << 5 | u.z);
        return;
    }
    case OKEY(CLK_UNORM_SHORT_555, CLK_RGB): {
        uint4 u = convert_uint4_sat_rte(unit(v) * 31.0f);
        *(__global ushort_a1 *)p = (ushort)(u.x << 10 | u.y << 5 | u.z);
        return;
    }
    case OKEY(CLK_UNORM_INT_101010, CLK_RGB): {
        uint4 u = convert_uint4_sat_rte(unit(v) * 1023.0f);
        *(__global uint_a1 *)p = u.x << 20 | u.y << 10 | u.z;
        return;
    }
    default: return;
    }
}

INLINE void encode_i(__global const img_t *im, __global uchar *p, int4 v) {
    switch (okey(im)) {
    INT_FORMATS(WRITES_OF)
    default: return;
    }
}

INLINE void encode_ui(__global const img_t *im, __global uchar *p, uint4 v) {
    switch (okey(im)) {
    UINT_FORMATS(WRITES_OF)
    default: return;
    }
}

/* ---- reads ----------------------------------------------------------------------- */

/* `checked`: the coordinates may lie outside (CLK_ADDRESS_CLAMP and NONE, reads without
 * a sampler). Clamping to the edge, repeating and mirroring always give indices inside
 * (every size is at least 1), so those reads skip the test. */
INLINE float4 texel_f(__global const img_t *im, int4 c, bool checked) {
    if (checked && !inside(im, c))
        return (float4)(0.0f, 0.0f, 0.0f, border_alpha_one(im->order) ? 1.0f : 0.0f);
    return decode_f(im, texel(im, c));
}

INLINE int4 texel_i(__global const img_t *im, int4 c, bool checked) {
    if (checked && !inside(im, c))
        return (int4)(0, 0, 0, border_alpha_one(im->order) ? 1 : 0);
    return decode_i(im, texel(im, c));
}

/* The layer of an array image: "clamp(rint(coord), 0, array_size - 1)". */
INLINE int layer(__global const img_t *im, float c) {
    return clamp(convert_int_sat_rte(c), 0, im->layers - 1);
}

/* Integer coordinates with a sampler (which must be unnormalised, nearest, and not
 * repeat): CLK_ADDRESS_CLAMP_TO_EDGE clamps, the others read the border outside. */
INLINE int4 int_coords(__global const img_t *im, uint bits, int4 c, int dims, int lay) {
    if ((bits & ADDRESS_MASK) == CLK_ADDRESS_CLAMP_TO_EDGE)
        for (int d = 0; d < dims; ++d)
            c[d] = clamp(c[d], 0, im->size[d] - 1);
    if (lay)
        c[lay] = clamp(c[lay], 0, im->layers - 1);
    return c;
}

/* Nearest texel index along one dimension of size w (section 8.2). */
INLINE int nearest(float s, int w, uint bits) {
    uint mode = bits & ADDRESS_MASK;
    if (mode == CLK_ADDRESS_REPEAT) {
        int i = convert_int_sat_rtn((s - floor(s)) * w);
        return i > w - 1 ? i - w : i;
    }
    if (mode == CLK_ADDRESS_MIRRORED_REPEAT) {
        float m = fabs(s - 2.0f * rint(0.5f * s));
        return min(convert_int_sat_rtn(m * w), w - 1);
    }
    int i = convert_int_sat_rtn((bits & CLK_NORMALIZED_COORDS_TRUE) ? s * w : s);
    if (mode == CLK_ADDRESS_CLAMP_TO_EDGE)
        return clamp(i, 0, w - 1);
    return clamp(i, -1, w); /* CLAMP (and NONE): outside reads the border */
}

/* The two texel indices a linear filter blends along one dimension and the weight of
 * the second (section 8.2). */
INLINE int2 linear(float s, int w, uint bits, float *a) {
    uint mode = bits & ADDRESS_MASK;
    float u;
    if (mode == CLK_ADDRESS_REPEAT)
        u = (s - floor(s)) * w;
    else if (mode == CLK_ADDRESS_MIRRORED_REPEAT)
        u = fabs(s - 2.0f * rint(0.5f * s)) * w;
    else
        u = (bits & CLK_NORMALIZED_COORDS_TRUE) ? s * w : s;
    float f = floor(u - 0.5f);
    *a = (u - 0.5f) - f;
    int i0 = convert_int_sat(f), i1 = i0 + 1;
    if (mode == CLK_ADDRESS_REPEAT) {
        if (i0 < 0)
            i0 += w;
        if (i1 > w - 1)
            i1 -= w;
    } else if (mode == CLK_ADDRESS_MIRRORED_REPEAT) {
        i0 = max(i0, 0);
        i1 = min(i1, w - 1);
    } else if (mode == CLK_ADDRESS_CLAMP_TO_EDGE) {
        i0 = clamp(i0, 0, w - 1);
        i1 = clamp(i1, 0, w - 1);
    } else {
        i0 = clamp(i0, -1, w);
        i1 = clamp(i1, -1, w);
    }
    return (int2)(i0, i1);
}

/* read_imagef/h with float coordinates: nearest or linear per the sampler. */
INLINE float4 sample_f(__global const img_t *im, uint bits, float4 s, int dims, int lay) {
    int4 base = (int4)(0);
    if (lay)
        base[lay] = layer(im, s[lay]);
    if (!(bits & CLK_FILTER_LINEAR)) {
        for (int d = 0; d < dims; ++d)
            base[d] = nearest(s[d], im->size[d], bits);
        return texel_f(im, base, float_may_leave(bits));
    }
    int2 idx[3];
    float a[3] = {0.0f, 0.0f, 0.0f};
    for (int d = 0; d < dims; ++d)
        idx[d] = linear(s[d], im->size[d], bits, &a[d]);
    float4 sum = (float4)(0.0f);
    for (int corner = 0; corner < (1 << dims); ++corner) {
        int4 c = base;
        float w = 1.0f;
        for (int d = 0; d < dims; ++d) {
            int hi = (corner >> d) & 1;
            c[d] = hi ? idx[d].y : idx[d].x;
            w *= hi ? a[d] : 1.0f - a[d];
        }
        sum += w * texel_f(im, c, float_may_leave(bits));
    }
    return sum;
}

/* read_imagei/ui with float coordinates: always nearest (linear is undefined there). */
INLINE int4 sample_i(__global const img_t *im, uint bits, float4 s, int dims, int lay) {
    int4 c = (int4)(0);
    if (lay)
        c[lay] = layer(im, s[lay]);
    for (int d = 0; d < dims; ++d)
        c[d] = nearest(s[d], im->size[d], bits);
    return texel_i(im, c, float_may_leave(bits));
}

INLINE void write_f(__global const img_t *im, int4 c, float4 v) {
    if (inside(im, c))
        encode_f(im, texel(im, c), v);
}

INLINE void write_i(__global const img_t *im, int4 c, int4 v) {
    if (inside(im, c))
        encode_i(im, texel(im, c), v);
}

INLINE void write_ui(__global const img_t *im, int4 c, uint4 v) {
    if (inside(im, c))
        encode_ui(im, texel(im, c), v);
}

/* Coordinates widened to four components. */
OVL INLINE int4 wide(int c) { return (int4)(c, 0, 0, 0); }
OVL INLINE int4 wide(int2 c) { return (int4)(c, 0, 0); }
OVL INLINE int4 wide(int4 c) { return c; }
OVL INLINE float4 wide(float c) { return (float4)(c, 0.0f, 0.0f, 0.0f); }
OVL INLINE float4 wide(float2 c) { return (float4)(c, 0.0f, 0.0f); }
OVL INLINE float4 wide(float4 c) { return c; }

/* ---- the overloads ------------------------------------------------------------------
 * Per image type: the integer and float coordinate types, the dimensions filtered and
 * the index of the layer coordinate (0: not an array). */

/* The reads and writes inline into kernels: a write left as a call would clobber, for
 * LLVM, every descriptor field the kernel's reads keep in registers. */
#define IN __attribute__((always_inline))

#define SAMPLED_READS(IMG, IC, FC, DIMS, LAY) \
    OVL IN float4 read_imagef(read_only IMG i, sampler_t s, FC c) { \
        return sample_f(DESC(i), BITS(s), wide(c), DIMS, LAY); \
    } \
    OVL IN half4 read_imageh(read_only IMG i, sampler_t s, FC c) { \
        return convert_half4(sample_f(DESC(i), BITS(s), wide(c), DIMS, LAY)); \
    } \
    OVL IN int4 read_imagei(read_only IMG i, sampler_t s, FC c) { return sample_i(DESC(i), BITS(s), wide(c), DIMS, LAY); } \
    OVL IN uint4 read_imageui(read_only IMG i, sampler_t s, FC c) { \
        return as_uint4(sample_i(DESC(i), BITS(s), wide(c), DIMS, LAY)); \
    } \
    OVL IN float4 read_imagef(read_only IMG i, sampler_t s, IC c) { \
        __global const img_t *d = DESC(i); \
        return texel_f(d, int_coords(d, BITS(s), wide(c), DIMS, LAY), int_may_leave(BITS(s))); \
    } \
    OVL IN half4 read_imageh(read_only IMG i, sampler_t s, IC c) { \
        __global const img_t *d = DESC(i); \
        return convert_half4(texel_f(d, int_coords(d, BITS(s), wide(c), DIMS, LAY), int_may_leave(BITS(s)))); \
    } \
    OVL IN int4 read_imagei(read_only IMG i, sampler_t s, IC c) { \
        __global const img_t *d = DESC(i); \
        return texel_i(d, int_coords(d, BITS(s), wide(c), DIMS, LAY), int_may_leave(BITS(s))); \
    } \
    OVL IN uint4 read_imageui(read_only IMG i, sampler_t s, IC c) { \
        __global const img_t *d = DESC(i); \
        return as_uint4(texel_i(d, int_coords(d, BITS(s), wide(c), DIMS, LAY), int_may_leave(BITS(s)))); \
    }

/* Reads without a sampler: unnormalised integer coordinates, nearest. */
#define PLAIN_READS(ACC, IMG, IC) \
    OVL IN float4 read_imagef(ACC IMG i, IC c) { return texel_f(DESC(i), wide(c), true); } \
    OVL IN half4 read_imageh(ACC IMG i, IC c) { return convert_half4(texel_f(DESC(i), wide(c), true)); } \
    OVL IN int4 read_imagei(ACC IMG i, IC c) { return texel_i(DESC(i), wide(c), true); } \
    OVL IN uint4 read_imageui(ACC IMG i, IC c) { return as_uint4(texel_i(DESC(i), wide(c), true)); }

#define WRITES(ACC, IMG, IC) \
    OVL IN void write_imagef(ACC IMG i, IC c, float4 v) { write_f(DESC(i), wide(c), v); } \
    OVL IN void write_imageh(ACC IMG i, IC c, half4 v) { write_f(DESC(i), wide(c), convert_float4(v)); } \
    OVL IN void write_imagei(ACC IMG i, IC c, int4 v) { write_i(DESC(i), wide(c), v); } \
    OVL IN void write_imageui(ACC IMG i, IC c, uint4 v) { write_ui(DESC(i), wide(c), v); }

/* Depth images hold one float channel. */
#define DEPTH_ACCESS(IMG, IC, FC, DIMS, LAY) \
    OVL IN float read_imagef(read_only IMG i, sampler_t s, FC c) { return sample_f(DESC(i), BITS(s), wide(c), DIMS, LAY).x; } \
    OVL IN float read_imagef(read_only IMG i, sampler_t s, IC c) { \
        __global const img_t *d = DESC(i); \
        return texel_f(d, int_coords(d, BITS(s), wide(c), DIMS, LAY), int_may_leave(BITS(s))).x; \
    } \
    OVL IN float read_imagef(read_only IMG i, IC c) { return texel_f(DESC(i), wide(c), true).x; } \
    OVL IN float read_imagef(read_write IMG i, IC c) { return texel_f(DESC(i), wide(c), true).x; } \
    OVL IN void write_imagef(write_only IMG i, IC c, float v) { write_f(DESC(i), wide(c), (float4)(v)); } \
    OVL IN void write_imagef(read_write IMG i, IC c, float v) { write_f(DESC(i), wide(c), (float4)(v)); }

#define QUERIES(ACC, IMG) \
    OVL int get_image_width(ACC IMG i) { return DESC(i)->size[0]; } \
    OVL int get_image_channel_data_type(ACC IMG i) { return DESC(i)->type; } \
    OVL int get_image_channel_order(ACC IMG i) { return DESC(i)->order; }
#define HEIGHT(ACC, IMG) \
    OVL int get_image_height(ACC IMG i) { return DESC(i)->size[1]; } \
    OVL int2 get_image_dim(ACC IMG i) { return (int2)(DESC(i)->size[0], DESC(i)->size[1]); }
#define LAYERS(ACC, IMG) \
    OVL size_t get_image_array_size(ACC IMG i) { return DESC(i)->layers; }

#define ALL_ACCESS(M, ...) M(read_only, __VA_ARGS__) M(write_only, __VA_ARGS__) M(read_write, __VA_ARGS__)
#define WRITABLE(M, ...) M(write_only, __VA_ARGS__) M(read_write, __VA_ARGS__)
#define READABLE(M, ...) M(read_only, __VA_ARGS__) M(read_write, __VA_ARGS__)

SAMPLED_READS(image1d_t, int, float, 1, 0)
SAMPLED_READS(image1d_array_t, int2, float2, 1, 1)
SAMPLED_READS(image2d_t, int2, float2, 2, 0)
SAMPLED_READS(image2d_array_t, int4, float4, 2, 2)
SAMPLED_READS(image3d_t, int4, float4, 3, 0)

READABLE(PLAIN_READS, image1d_t, int)
READABLE(PLAIN_READS, image1d_buffer_t, int)
READABLE(PLAIN_READS, image1d_array_t, int2)
READABLE(PLAIN_READS, image2d_t, int2)
READABLE(PLAIN_READS, image2d_array_t, int4)
READABLE(PLAIN_READS, image3d_t, int4)

WRITABLE(WRITES, image1d_t, int)
WRITABLE(WRITES, image1d_buffer_t, int)
WRITABLE(WRITES, image1d_array_t, int2)
WRITABLE(WRITES, image2d_t, int2)
WRITABLE(WRITES, image2d_array_t, int4)
WRITABLE(WRITES, image3d_t, int4)

DEPTH_ACCESS(image2d_depth_t, int2, float2, 2, 0)
DEPTH_ACCESS(image2d_array_depth_t, int4, float4, 2, 2)

ALL_ACCESS(QUERIES, image1d_t)
ALL_ACCESS(QUERIES, image1d_buffer_t)
ALL_ACCESS(QUERIES, image1d_array_t)
ALL_ACCESS(QUERIES, image2d_t)
ALL_ACCESS(QUERIES, image2d_array_t)
ALL_ACCESS(QUERIES, image3d_t)
ALL_ACCESS(QUERIES, image2d_depth_t)
ALL_ACCESS(QUERIES, image2d_array_depth_t)
ALL_ACCESS(HEIGHT, image2d_t)
ALL_ACCESS(HEIGHT, image2d_array_t)
ALL_ACCESS(HEIGHT, image2d_depth_t)
ALL_ACCESS(HEIGHT, image2d_array_depth_t)
ALL_ACCESS(LAYERS, image1d_array_t)
ALL_ACCESS(LAYERS, image2d_array_t)
ALL_ACCESS(LAYERS, image2d_array_depth_t)

#define DEPTH_3D(ACC, IMG) \
    OVL int get_image_height(ACC IMG i) { return DESC(i)->size[1]; } \
    OVL int get_image_depth(ACC IMG i) { return DESC(i)->size[2]; } \
    OVL int4 get_image_dim(ACC IMG i) { return (int4)(DESC(i)->size[0], DESC(i)->size[1], DESC(i)->size[2], 0); }
ALL_ACCESS(DEPTH_3D, image3d_t)

/* ---- cl_intel_subgroups' block reads and writes ------------------------------------ */

/* One 32-bit value of a 2D image's rows as raw memory, at byte x of row y (the rewrite,
 * `passes/collectives.rs`, gives each work-item of a sub-group its own x): 0 outside
 * the image's bytes, and a write there does nothing. */
INLINE __global uchar *block_at(__global const img_t *d, int x, int y) {
    bool inside = x >= 0 && y >= 0 && (ulong)x + 4 <= (ulong)d->size[0] * d->elem && y < d->size[1];
    return inside ? d->data + (ulong)y * d->row_pitch + (ulong)x : 0;
}

uint __ferrocl_block_dword(read_only image2d_t im, int x, int y) {
    __global const uchar *p = block_at(DESC(im), x, y);
    return p ? (uint)p[0] | (uint)p[1] << 8 | (uint)p[2] << 16 | (uint)p[3] << 24 : 0u;
}

void __ferrocl_block_put(write_only image2d_t im, int x, int y, uint v) {
    __global uchar *p = block_at(DESC(im), x, y);
    if (p) {
        p[0] = (uchar)v;
        p[1] = (uchar)(v >> 8);
        p[2] = (uchar)(v >> 16);
        p[3] = (uchar)(v >> 24);
    }
}
