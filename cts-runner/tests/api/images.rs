//! Images and samplers through the loader: every offered format written, read and
//! converted by kernels against a host reference written from the spec's rules, the
//! sampler's addressing and filtering against the spec's formulas, every image command
//! byte for byte, and the errors of each entry point.

#![allow(non_upper_case_globals)] // the spec's names (`CL_sRGBA`)

use crate::common::*;

fn fmt(o: cl_channel_order, t: cl_channel_type) -> cl_image_format {
    cl_image_format { image_channel_order: o, image_channel_data_type: t }
}

fn desc(image_type: cl_mem_object_type, w: usize, h: usize, d: usize, layers: usize) -> cl_image_desc {
    // SAFETY: a plain C struct; zero is "no pitches, no buffer".
    let mut x: cl_image_desc = unsafe { std::mem::zeroed() };
    x.image_type = image_type;
    x.image_width = w;
    x.image_height = h;
    x.image_depth = d;
    x.image_array_size = layers;
    x
}

fn try_image(
    env: &Env,
    flags: cl_mem_flags,
    f: &cl_image_format,
    d: &cl_image_desc,
    host: *mut c_void,
) -> (cl_mem, cl_int) {
    with_err(|e| cl!(clCreateImage(env.context, flags, f, d, host, e)))
}

fn image(env: &Env, flags: cl_mem_flags, f: &cl_image_format, d: &cl_image_desc, host: *mut c_void) -> cl_mem {
    let (m, e) = try_image(env, flags, f, d, host);
    assert_eq!(e, CL_SUCCESS, "clCreateImage of type {:#x}, {f:?}", d.image_type);
    m
}

/// `clEnqueueReadImage` of a region of `img` (origin and region as `*const usize`) into
/// `out` with these pitches, blocking.
fn try_read(env: &Env, img: cl_mem, o: *const usize, r: *const usize, pitches: [usize; 2], out: *mut c_void) -> cl_int {
    let ([row, slice], q) = (pitches, env.queue);
    cl!(clEnqueueReadImage(q, img, CL_TRUE, o, r, row, slice, out, 0, null(), null_mut()))
}

/// Reads a region of `img`, packed, into `out`.
fn read_into(env: &Env, img: cl_mem, origin: *const usize, region: *const usize, out: *mut c_void) {
    ok!(try_read(env, img, origin, region, [0, 0], out));
}

fn formats(env: &Env, flags: cl_mem_flags, t: cl_mem_object_type) -> Vec<cl_image_format> {
    let mut n = 0;
    ok!(cl!(clGetSupportedImageFormats(env.context, flags, t, 0, null_mut(), &mut n)));
    let mut out = vec![fmt(0, 0); n as usize];
    ok!(cl!(clGetSupportedImageFormats(env.context, flags, t, n, out.as_mut_ptr(), null_mut())));
    out
}

/// (bytes per channel or per packed texel, channels stored, kind): 'f' float reads,
/// 'i' signed, 'u' unsigned.
fn channel_info(f: &cl_image_format) -> (usize, usize, char) {
    let n = match f.image_channel_order {
        CL_R | CL_A | CL_INTENSITY | CL_LUMINANCE | CL_DEPTH => 1,
        CL_RG | CL_RA => 2,
        CL_RGB => 3,
        _ => 4,
    };
    match f.image_channel_data_type {
        CL_UNORM_INT8 | CL_SNORM_INT8 => (1, n, 'f'),
        CL_UNORM_INT16 | CL_SNORM_INT16 | CL_HALF_FLOAT => (2, n, 'f'),
        CL_FLOAT => (4, n, 'f'),
        CL_SIGNED_INT8 => (1, n, 'i'),
        CL_SIGNED_INT16 => (2, n, 'i'),
        CL_SIGNED_INT32 => (4, n, 'i'),
        CL_UNSIGNED_INT8 => (1, n, 'u'),
        CL_UNSIGNED_INT16 => (2, n, 'u'),
        CL_UNSIGNED_INT32 => (4, n, 'u'),
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 => (2, 1, 'f'),
        CL_UNORM_INT_101010 => (4, 1, 'f'),
        t => panic!("unexpected channel type {t:#x}"),
    }
}

fn texel_size(f: &cl_image_format) -> usize {
    let (b, n, _) = channel_info(f);
    b * n
}

fn half_to_f64(h: u16) -> f64 {
    let (s, e, m) = ((h >> 15) as i32, ((h >> 10) & 31) as i32, (h & 1023) as f64);
    let v = match e {
        0 => m * 2f64.powi(-24),
        31 => {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    };
    if s == 1 {
        -v
    } else {
        v
    }
}

/// The spec's conversion of one stored texel to (r, g, b, a), section 8.3: normalised
/// types divide by the largest value, sRGB decodes, missing channels are 0 and alpha 1.
fn reference(f: &cl_image_format, t: &[u8]) -> [f64; 4] {
    let (b, n, _) = channel_info(f);
    let raw = |i: usize| -> f64 {
        let c = &t[i * b..(i + 1) * b];
        match f.image_channel_data_type {
            CL_UNORM_INT8 => c[0] as f64 / 255.0,
            CL_SNORM_INT8 => (c[0] as i8 as f64 / 127.0).max(-1.0),
            CL_UNORM_INT16 => u16::from_ne_bytes([c[0], c[1]]) as f64 / 65535.0,
            CL_SNORM_INT16 => (i16::from_ne_bytes([c[0], c[1]]) as f64 / 32767.0).max(-1.0),
            CL_HALF_FLOAT => half_to_f64(u16::from_ne_bytes([c[0], c[1]])),
            CL_FLOAT => f32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as f64,
            CL_SIGNED_INT8 => c[0] as i8 as f64,
            CL_SIGNED_INT16 => i16::from_ne_bytes([c[0], c[1]]) as f64,
            CL_SIGNED_INT32 => i32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as f64,
            CL_UNSIGNED_INT8 => c[0] as f64,
            CL_UNSIGNED_INT16 => u16::from_ne_bytes([c[0], c[1]]) as f64,
            _ => u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as f64,
        }
    };
    let one = 1.0;
    let c: Vec<f64> = match f.image_channel_data_type {
        CL_UNORM_SHORT_565 => {
            let v = u16::from_ne_bytes([t[0], t[1]]) as u32;
            vec![(v >> 11) as f64 / 31.0, ((v >> 5) & 63) as f64 / 63.0, (v & 31) as f64 / 31.0]
        }
        CL_UNORM_SHORT_555 => {
            let v = u16::from_ne_bytes([t[0], t[1]]) as u32;
            vec![((v >> 10) & 31) as f64 / 31.0, ((v >> 5) & 31) as f64 / 31.0, (v & 31) as f64 / 31.0]
        }
        CL_UNORM_INT_101010 => {
            let v = u32::from_ne_bytes([t[0], t[1], t[2], t[3]]);
            vec![((v >> 20) & 1023) as f64 / 1023.0, ((v >> 10) & 1023) as f64 / 1023.0, (v & 1023) as f64 / 1023.0]
        }
        _ => (0..n).map(raw).collect(),
    };
    let srgb = |x: f64| if x <= 0.04045 { x / 12.92 } else { ((x + 0.055) / 1.055).powf(2.4) };
    match f.image_channel_order {
        CL_R | CL_DEPTH => [c[0], 0.0, 0.0, one],
        CL_A => [0.0, 0.0, 0.0, c[0]],
        CL_RG => [c[0], c[1], 0.0, one],
        CL_RA => [c[0], 0.0, 0.0, c[1]],
        CL_RGB => [c[0], c[1], c[2], one],
        CL_BGRA => [c[2], c[1], c[0], c[3]],
        CL_ARGB => [c[1], c[2], c[3], c[0]],
        CL_ABGR => [c[3], c[2], c[1], c[0]],
        CL_INTENSITY => [c[0]; 4],
        CL_LUMINANCE => [c[0], c[0], c[0], one],
        CL_sRGBA => [srgb(c[0]), srgb(c[1]), srgb(c[2]), c[3]],
        CL_sBGRA => [srgb(c[2]), srgb(c[1]), srgb(c[0]), c[3]],
        _ => [c[0], c[1], c[2], c[3]],
    }
}

/// Texel bytes that are valid for their type: half and float channels get finite
/// values from the pattern (no NaN, whose bits need not survive), the rest raw bytes.
fn texels(f: &cl_image_format, count: usize, seed: u8) -> Vec<u8> {
    let size = texel_size(f);
    let mut out = pattern(count * size, seed);
    match f.image_channel_data_type {
        CL_FLOAT => {
            for (i, c) in out.chunks_mut(4).enumerate() {
                c.copy_from_slice(&((i as f32 * 0.37 - 3.0) * (1.0 + seed as f32)).to_ne_bytes());
            }
        }
        CL_HALF_FLOAT => {
            for c in out.chunks_mut(2) {
                c[1] &= 0x5f; // exponent below 31: finite
            }
        }
        _ => {}
    }
    out
}

const READ_KERNELS: &str = r#"
kernel void rf(read_only image2d_t img, global float4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imagef(img, (int2)(x, y));
}
kernel void ri(read_only image2d_t img, global int4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imagei(img, (int2)(x, y));
}
kernel void ru(read_only image2d_t img, global uint4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imageui(img, (int2)(x, y));
}
kernel void rd(read_only image2d_depth_t img, global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imagef(img, (int2)(x, y));
}
kernel void query(read_only image2d_t img, global int *out) {
    out[0] = get_image_width(img);
    out[1] = get_image_height(img);
    out[2] = get_image_channel_order(img);
    out[3] = get_image_channel_data_type(img);
}
"#;

#[test]
fn every_format_round_trips_and_reads_in_kernels() {
    let env = Env::new();
    let p = build(&env, READ_KERNELS, "-cl-std=CL3.0");
    let (w, h) = (7usize, 5usize);
    let list = formats(&env, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D);
    assert!(list.len() >= 60, "{} formats", list.len());
    for f in &list {
        let size = texel_size(f);
        let mut bytes = texels(f, w * h, 3);
        let img = image(
            &env,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            f,
            &desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0),
            bytes.as_mut_ptr().cast(),
        );
        // The bytes come back as they went in.
        let mut back = vec![0u8; bytes.len()];
        let (origin, region) = ([0usize; 3], [w, h, 1]);
        read_into(&env, img, origin.as_ptr(), region.as_ptr(), back.as_mut_ptr().cast());
        assert_eq!(back, bytes, "{f:?}");
        let depth = f.image_channel_order == CL_DEPTH;
        let kind = channel_info(f).2;
        let name = if depth { "rd" } else { ["rf", "ri", "ru"]["fiu".find(kind).unwrap()] };
        let out = env.buffer(0, w * h * 16, null_mut());
        let k = kernel(p, name);
        set_arg(k, 0, &img);
        set_arg(k, 1, &out);
        run(&env, k, &[w, h], None);
        let got: Vec<[f64; 4]> = if depth {
            read_as::<f32>(&env, out, w * h).iter().map(|&v| [v as f64, 0.0, 0.0, 1.0]).collect()
        } else {
            match kind {
                'f' => read_as::<[f32; 4]>(&env, out, w * h).iter().map(|v| v.map(f64::from)).collect(),
                'i' => read_as::<[i32; 4]>(&env, out, w * h).iter().map(|v| v.map(f64::from)).collect(),
                _ => read_as::<[u32; 4]>(&env, out, w * h).iter().map(|v| v.map(f64::from)).collect(),
            }
        };
        for (i, g) in got.iter().enumerate() {
            let want = reference(f, &bytes[i * size..(i + 1) * size]);
            let channels = if depth { 1 } else { 4 };
            for c in 0..channels {
                // Normalised and sRGB conversions may be off by a few float ulps.
                let tol = if kind == 'f' { 2e-6 * want[c].abs().max(1.0) } else { 0.0 };
                assert!((g[c] - want[c]).abs() <= tol, "{f:?} texel {i} channel {c}: {} != {}", g[c], want[c]);
            }
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseMemObject(out)));
        ok!(cl!(clReleaseMemObject(img)));
    }
    // The queries read the descriptor.
    let f = fmt(CL_RGBA, CL_UNORM_INT8);
    let img = image(&env, CL_MEM_READ_ONLY, &f, &desc(CL_MEM_OBJECT_IMAGE2D, 33, 17, 0, 0), null_mut());
    let out = env.buffer(0, 16, null_mut());
    let k = kernel(p, "query");
    set_arg(k, 0, &img);
    set_arg(k, 1, &out);
    run(&env, k, &[1], None);
    assert_eq!(read_as::<i32>(&env, out, 4), [33, 17, CL_RGBA as i32, CL_UNORM_INT8 as i32]);
    for m in [img, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// One kernel object launched on images whose formats change between launches: code is
/// made per combination of formats at its first launch (the formats constants in it),
/// and after a few combinations code for any format takes over. Each launch must read
/// through its own images' formats, including combinations seen before, and write the
/// second image in its format.
#[test]
fn one_kernel_follows_its_images_formats_from_launch_to_launch() {
    let env = Env::new();
    let src = "kernel void copy(read_only image2d_t src, write_only image2d_t dst) {\n\
               int2 p = (int2)(get_global_id(0), get_global_id(1));\n\
               write_imagef(dst, p, read_imagef(src, p) * 0.5f); }";
    let p = build(&env, src, "");
    let k = kernel(p, "copy");
    let (w, h) = (6usize, 4usize);
    let combos = [
        (fmt(CL_RGBA, CL_UNORM_INT8), fmt(CL_RGBA, CL_FLOAT)),
        (fmt(CL_R, CL_FLOAT), fmt(CL_RGBA, CL_FLOAT)),
        (fmt(CL_RGBA, CL_UNORM_INT8), fmt(CL_RGBA, CL_UNORM_INT16)),
        (fmt(CL_BGRA, CL_UNORM_INT8), fmt(CL_RGBA, CL_FLOAT)),
        (fmt(CL_RG, CL_HALF_FLOAT), fmt(CL_RGBA, CL_FLOAT)),
        (fmt(CL_RGBA, CL_UNORM_INT8), fmt(CL_RGBA, CL_FLOAT)),
        (fmt(CL_R, CL_FLOAT), fmt(CL_RGBA, CL_FLOAT)),
    ];
    for (round, (fs, fd)) in combos.iter().enumerate() {
        let mut bytes = texels(fs, w * h, round as u8 + 1);
        let d = desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
        let src_img = image(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, fs, &d, bytes.as_mut_ptr().cast());
        let dst_img = image(&env, CL_MEM_WRITE_ONLY, fd, &d, null_mut());
        set_arg(k, 0, &src_img);
        set_arg(k, 1, &dst_img);
        run(&env, k, &[w, h], None);
        let size = texel_size(fd);
        let mut out = vec![0u8; w * h * size];
        let (origin, region) = ([0usize; 3], [w, h, 1]);
        read_into(&env, dst_img, origin.as_ptr(), region.as_ptr(), out.as_mut_ptr().cast());
        let (ss, ds) = (texel_size(fs), size);
        for i in 0..w * h {
            let want = reference(fs, &bytes[i * ss..(i + 1) * ss]).map(|v| v * 0.5);
            let got = reference(fd, &out[i * ds..(i + 1) * ds]);
            let step = if fd.image_channel_data_type == CL_FLOAT { 1e-6 } else { 1.0 / 255.0 };
            for c in 0..4 {
                assert!(
                    (got[c] - want[c]).abs() <= step,
                    "launch {round} {fs:?} -> {fd:?}, texel {i}: {got:?} vs {want:?}"
                );
            }
        }
        ok!(cl!(clReleaseMemObject(src_img)));
        ok!(cl!(clReleaseMemObject(dst_img)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// The texel indices and weights the spec's formulas (section 8.2) give along one
/// dimension of `size` texels: one index for nearest, two and the second's weight for
/// linear. Indices outside `0..size` read the border (CLK_ADDRESS_CLAMP).
fn spec_indices(s: f32, size: usize, normalized: bool, mode: cl_addressing_mode, linear: bool) -> (i64, i64, f32) {
    let w = size as f32;
    let frac = |x: f32| x - x.floor();
    match mode {
        CL_ADDRESS_REPEAT => {
            let u = (s - s.floor()) * w;
            if linear {
                let mut i0 = (u - 0.5).floor() as i64;
                let mut i1 = i0 + 1;
                if i0 < 0 {
                    i0 += size as i64;
                }
                if i1 > size as i64 - 1 {
                    i1 -= size as i64;
                }
                (i0, i1, frac(u - 0.5))
            } else {
                let i = u.floor() as i64;
                let i = if i > size as i64 - 1 { i - size as i64 } else { i };
                (i, i, 0.0)
            }
        }
        CL_ADDRESS_MIRRORED_REPEAT => {
            let sp = (s - 2.0 * (0.5 * s).round_ties_even()).abs();
            let u = sp * w;
            if linear {
                let i0 = ((u - 0.5).floor() as i64).max(0);
                let i1 = ((u - 0.5).floor() as i64 + 1).min(size as i64 - 1);
                (i0, i1, frac(u - 0.5))
            } else {
                let i = (u.floor() as i64).min(size as i64 - 1);
                (i, i, 0.0)
            }
        }
        _ => {
            let u = if normalized { s * w } else { s };
            let (lo, hi) = if mode == CL_ADDRESS_CLAMP_TO_EDGE { (0, size as i64 - 1) } else { (-1, size as i64) };
            if linear {
                let i0 = (u - 0.5).floor() as i64;
                (i0.clamp(lo, hi), (i0 + 1).clamp(lo, hi), frac(u - 0.5))
            } else {
                let i = (u.floor() as i64).clamp(lo, hi);
                (i, i, 0.0)
            }
        }
    }
}

/// The value of texel (x, y) of the sampling tests' image, channel c.
fn sample_texel(x: i64, y: i64, c: usize, w: usize, h: usize) -> f32 {
    if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
        return 0.0; // RGBA: the border is (0, 0, 0, 0)
    }
    (x + 10 * y) as f32 + 100.0 * c as f32
}

fn spec_sample(c: [f32; 2], (w, h): (usize, usize), norm: bool, mode: cl_addressing_mode, linear: bool) -> [f32; 4] {
    spec_sample_of(c, (w, h), norm, mode, linear, |x, y| std::array::from_fn(|ch| sample_texel(x, y, ch, w, h) as f64))
        .map(|v| v as f32)
}

/// The spec's sample at `c` of an image whose texel (x, y), inside or outside (the
/// border), is `texel(x, y)`.
fn spec_sample_of(
    c: [f32; 2],
    (w, h): (usize, usize),
    norm: bool,
    mode: cl_addressing_mode,
    linear: bool,
    texel: impl Fn(i64, i64) -> [f64; 4],
) -> [f64; 4] {
    let (x0, x1, a) = spec_indices(c[0], w, norm, mode, linear);
    let (y0, y1, b) = spec_indices(c[1], h, norm, mode, linear);
    let (a, b) = (a as f64, b as f64);
    std::array::from_fn(|ch| {
        let t = |x, y| texel(x, y)[ch];
        if linear {
            (1.0 - a) * (1.0 - b) * t(x0, y0)
                + a * (1.0 - b) * t(x1, y0)
                + (1.0 - a) * b * t(x0, y1)
                + a * b * t(x1, y1)
        } else {
            t(x0, y0)
        }
    })
}

const SAMPLE_KERNELS: &str = r#"
kernel void sample(read_only image2d_t img, sampler_t s, global const float2 *c, global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, c[i]);
}
const sampler_t repeat_linear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
kernel void constant_sampler(read_only image2d_t img, global const float2 *c, global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, repeat_linear, c[i]);
}
kernel void sample_i(read_only image2d_t img, sampler_t s, global const float2 *c, global int4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagei(img, s, c[i]);
}
kernel void sample_u(read_only image2d_t img, sampler_t s, global const float2 *c, global uint4 *out) {
    int i = get_global_id(0);
    out[i] = read_imageui(img, s, c[i]);
}
kernel void int_coords(read_only image2d_t img, sampler_t s, global const int2 *c, global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, c[i]);
}
"#;

#[test]
fn sampling_follows_the_spec() {
    let env = Env::new();
    let (w, h) = (5usize, 4usize);
    let mut data: Vec<f32> = Vec::new();
    for y in 0..h {
        for x in 0..w {
            data.extend((0..4).map(|c| sample_texel(x as i64, y as i64, c, w, h)));
        }
    }
    let f = fmt(CL_RGBA, CL_FLOAT);
    let img = image(
        &env,
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        &f,
        &desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0),
        data.as_mut_ptr().cast(),
    );
    let p = build(&env, SAMPLE_KERNELS, "");
    // Unnormalised coordinates in and out of the image, off and on texel centres.
    let raw: Vec<[f32; 2]> = [-1.3f32, -0.25, 0.0, 0.3, 0.5, 1.25, 2.5, 2.75, 3.999, 4.6, 5.0, 6.3, 11.1]
        .iter()
        .flat_map(|&x| [-0.7f32, 0.2, 1.5, 2.9, 3.6, 4.4, 7.0].map(|y| [x, y]))
        .collect();
    let out = env.buffer(0, raw.len() * 16, null_mut());
    let k = kernel(p, "sample");
    for norm in [false, true] {
        let coords: Vec<[f32; 2]> =
            if norm { raw.iter().map(|c| [c[0] / w as f32, c[1] / h as f32]).collect() } else { raw.clone() };
        let cbuf = buffer_of(&env, &coords);
        for mode in [CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP, CL_ADDRESS_REPEAT, CL_ADDRESS_MIRRORED_REPEAT] {
            if !norm && (mode == CL_ADDRESS_REPEAT || mode == CL_ADDRESS_MIRRORED_REPEAT) {
                continue;
            }
            for filter in [CL_FILTER_NEAREST, CL_FILTER_LINEAR] {
                let (s, e) = with_err(|e| cl!(clCreateSampler(env.context, norm as cl_bool, mode, filter, e)));
                ok!(e);
                set_arg(k, 0, &img);
                set_arg(k, 1, &s);
                set_arg(k, 2, &cbuf);
                set_arg(k, 3, &out);
                run(&env, k, &[coords.len()], None);
                let got = read_as::<[f32; 4]>(&env, out, coords.len());
                for (c, g) in coords.iter().zip(&got) {
                    let want = spec_sample(*c, (w, h), norm, mode, filter == CL_FILTER_LINEAR);
                    for ch in 0..4 {
                        assert!(
                            (g[ch] - want[ch]).abs() <= 1e-3 * want[ch].abs().max(1.0),
                            "norm {norm} mode {mode:#x} filter {filter:#x} at {c:?}: {g:?} != {want:?}"
                        );
                    }
                }
                ok!(cl!(clReleaseSampler(s)));
            }
        }
        // A kernel-scope sampler constant samples like the same sampler object.
        if norm {
            let k2 = kernel(p, "constant_sampler");
            set_arg(k2, 0, &img);
            set_arg(k2, 1, &cbuf);
            set_arg(k2, 2, &out);
            run(&env, k2, &[coords.len()], None);
            let got = read_as::<[f32; 4]>(&env, out, coords.len());
            for (c, g) in coords.iter().zip(&got) {
                let want = spec_sample(*c, (w, h), true, CL_ADDRESS_REPEAT, true);
                assert!((0..4).all(|ch| (g[ch] - want[ch]).abs() <= 1e-3 * want[ch].abs().max(1.0)), "{c:?}");
            }
            ok!(cl!(clReleaseKernel(k2)));
        }
        ok!(cl!(clReleaseMemObject(cbuf)));
    }
    // Integer coordinates: CLAMP reads the border outside, CLAMP_TO_EDGE the edge.
    let ints: Vec<[i32; 2]> = vec![[0, 0], [4, 3], [-1, 2], [5, 0], [2, -3], [100, 100]];
    let cbuf = buffer_of(&env, &ints);
    let k3 = kernel(p, "int_coords");
    for mode in [CL_ADDRESS_CLAMP, CL_ADDRESS_CLAMP_TO_EDGE] {
        let (s, e) = with_err(|e| cl!(clCreateSampler(env.context, CL_FALSE, mode, CL_FILTER_NEAREST, e)));
        ok!(e);
        set_arg(k3, 0, &img);
        set_arg(k3, 1, &s);
        set_arg(k3, 2, &cbuf);
        set_arg(k3, 3, &out);
        run(&env, k3, &[ints.len()], None);
        let got = read_as::<[f32; 4]>(&env, out, ints.len());
        for (c, g) in ints.iter().zip(&got) {
            let (x, y) = if mode == CL_ADDRESS_CLAMP {
                (c[0] as i64, c[1] as i64)
            } else {
                (c[0].clamp(0, w as i32 - 1) as i64, c[1].clamp(0, h as i32 - 1) as i64)
            };
            let want: [f32; 4] = std::array::from_fn(|ch| sample_texel(x, y, ch, w, h));
            assert_eq!(*g, want, "mode {mode:#x} at {c:?}");
        }
        ok!(cl!(clReleaseSampler(s)));
    }
    for m in [cbuf, out, img] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseKernel(k3)));
    ok!(cl!(clReleaseProgram(p)));
}

const WRITE_KERNELS: &str = r#"
kernel void wf(write_only image2d_t img, global const float4 *v) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), v[y * get_image_width(img) + x]);
}
kernel void wi(write_only image2d_t img, global const int4 *v) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagei(img, (int2)(x, y), v[y * get_image_width(img) + x]);
}
kernel void wu(write_only image2d_t img, global const uint4 *v) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imageui(img, (int2)(x, y), v[y * get_image_width(img) + x]);
}
kernel void wd(write_only image2d_depth_t img, global const float4 *v) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), v[y * get_image_width(img) + x].x);
}
"#;

/// The value a channel of `f` holds after storing `v`: saturated to the type's range
/// and rounded to its step (float and half keep the value within half's precision).
fn quantized(f: &cl_image_format, v: f64) -> (f64, f64) {
    // Within half a step of the exact value: ties may round either way.
    let norm = |max: f64, min: f64| (v.clamp(min, 1.0), 0.5 / max + 1e-6);
    match f.image_channel_data_type {
        CL_UNORM_INT8 => norm(255.0, 0.0),
        CL_UNORM_INT16 => norm(65535.0, 0.0),
        CL_SNORM_INT8 => norm(127.0, -1.0),
        CL_SNORM_INT16 => norm(32767.0, -1.0),
        CL_UNORM_SHORT_555 => norm(31.0, 0.0),
        CL_UNORM_INT_101010 => norm(1023.0, 0.0),
        CL_HALF_FLOAT => (v, v.abs() / 1024.0),
        CL_FLOAT => (v, 0.0),
        CL_SIGNED_INT8 => (v.clamp(-128.0, 127.0), 0.0),
        CL_SIGNED_INT16 => (v.clamp(-32768.0, 32767.0), 0.0),
        CL_UNSIGNED_INT8 => (v.clamp(0.0, 255.0), 0.0),
        CL_UNSIGNED_INT16 => (v.clamp(0.0, 65535.0), 0.0),
        _ => (v, 0.0),
    }
}

#[test]
fn kernels_write_every_format_as_fill_does() {
    let env = Env::new();
    let p = build(&env, WRITE_KERNELS, "-cl-std=CL3.0");
    let (w, h) = (6usize, 3usize);
    for f in formats(&env, CL_MEM_WRITE_ONLY, CL_MEM_OBJECT_IMAGE2D) {
        let (_, _, kind) = channel_info(&f);
        let depth = f.image_channel_order == CL_DEPTH;
        let d = desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
        let img = image(&env, CL_MEM_READ_WRITE, &f, &d, null_mut());
        let filled = image(&env, CL_MEM_READ_WRITE, &f, &d, null_mut());
        // Values across and beyond each type's range.
        let floats: Vec<[f32; 4]> =
            (0..w * h).map(|i| std::array::from_fn(|c| (i as f32 * 0.173 + c as f32 * 0.31) - 1.2)).collect();
        let ints: Vec<[i32; 4]> =
            (0..w * h).map(|i| std::array::from_fn(|c| (i as i32 - 9) * 37 + c as i32 * 1000)).collect();
        let vals = match kind {
            'f' => buffer_of(&env, &floats),
            _ => buffer_of(&env, &ints),
        };
        let k = kernel(p, if depth { "wd" } else { ["wf", "wi", "wu"]["fiu".find(kind).unwrap()] });
        set_arg(k, 0, &img);
        set_arg(k, 1, &vals);
        run(&env, k, &[w, h], None);
        let size = texel_size(&f);
        let mut bytes = vec![0u8; w * h * size];
        let region = [w, h, 1];
        read_into(&env, img, [0; 3].as_ptr(), region.as_ptr(), bytes.as_mut_ptr().cast());
        for i in 0..w * h {
            let got = reference(&f, &bytes[i * size..(i + 1) * size]);
            let input: [f64; 4] = match kind {
                'f' => floats[i].map(f64::from),
                _ => ints[i].map(f64::from),
            };
            // The channels the order stores, as (r, g, b, a) indices.
            let stored: &[usize] = match f.image_channel_order {
                CL_R | CL_DEPTH | CL_INTENSITY | CL_LUMINANCE => &[0],
                CL_A => &[3],
                CL_RG => &[0, 1],
                CL_RA => &[0, 3],
                CL_RGB => &[0, 1, 2],
                _ => &[0, 1, 2, 3],
            };
            for &c in stored {
                let (want, tol) = if f.image_channel_data_type == CL_UNORM_SHORT_565 {
                    let max = if c == 1 { 63.0 } else { 31.0 };
                    ((input[c].clamp(0.0, 1.0) * max).round() / max, 0.5 / max + 1e-6)
                } else {
                    quantized(&f, input[c])
                };
                let unsigned_of_negative = kind == 'u' && input[c] < 0.0;
                let got_c = if matches!(f.image_channel_order, CL_INTENSITY | CL_LUMINANCE) { got[0] } else { got[c] };
                if !unsigned_of_negative {
                    assert!(
                        (got_c - want).abs() <= tol,
                        "{f:?} texel {i} channel {c}: {got_c} != {want} (from {})",
                        input[c]
                    );
                }
            }
        }
        // clEnqueueFillImage stores the same texel for the same colour.
        for i in [0, 7, w * h - 1] {
            let color: [u8; 16] = match kind {
                'f' => unsafe { std::mem::transmute::<[f32; 4], [u8; 16]>(floats[i]) },
                _ => unsafe { std::mem::transmute::<[i32; 4], [u8; 16]>(ints[i]) },
            };
            let one = [1usize, 1, 1];
            ok!(cl!(clEnqueueFillImage(
                env.queue,
                filled,
                color.as_ptr().cast(),
                [0; 3].as_ptr(),
                one.as_ptr(),
                0,
                null(),
                null_mut()
            )));
            let mut t = vec![0u8; size];
            read_into(&env, filled, [0; 3].as_ptr(), one.as_ptr(), t.as_mut_ptr().cast());
            let unsigned_negative = kind == 'u' && ints[i].iter().any(|&v| v < 0);
            if !unsigned_negative {
                assert_eq!(t, bytes[i * size..(i + 1) * size], "{f:?}: fill and write_image differ at texel {i}");
            }
        }
        for m in [img, filled, vals] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

/// An image's texels as the test expects them: extents in x, y, z as the commands
/// address them (a 1D array's layers are y, a 2D array's z), packed.
struct Model {
    extent: [usize; 3],
    elem: usize,
    bytes: Vec<u8>,
}

impl Model {
    fn at(&self, p: [usize; 3]) -> usize {
        ((p[2] * self.extent[1] + p[1]) * self.extent[0] + p[0]) * self.elem
    }

    /// Each texel of `region` at `origin`: (model offset, position in the region), x fastest.
    fn texels(&self, origin: [usize; 3], region: [usize; 3]) -> Vec<(usize, [usize; 3])> {
        let mut out = Vec::new();
        for z in 0..region[2] {
            for y in 0..region[1] {
                for x in 0..region[0] {
                    out.push((self.at([origin[0] + x, origin[1] + y, origin[2] + z]), [x, y, z]));
                }
            }
        }
        out
    }
}

/// Host-side offset of texel `p` of a region laid out with these pitches (a 1D array's
/// layers are a slice pitch apart).
fn host_offset(array_1d: bool, elem: usize, row: usize, slice: usize, p: [usize; 3]) -> usize {
    if array_1d {
        p[1] * slice + p[0] * elem
    } else {
        p[2] * slice + p[1] * row + p[0] * elem
    }
}

#[test]
fn commands_move_the_right_texels_for_every_image_type() {
    let env = Env::new();
    let f = fmt(CL_RGBA, CL_UNSIGNED_INT16);
    let elem = 8;
    let types = [
        (CL_MEM_OBJECT_IMAGE1D, [13, 1, 1]),
        (CL_MEM_OBJECT_IMAGE1D_BUFFER, [13, 1, 1]),
        (CL_MEM_OBJECT_IMAGE1D_ARRAY, [11, 3, 1]),
        (CL_MEM_OBJECT_IMAGE2D, [9, 7, 1]),
        (CL_MEM_OBJECT_IMAGE2D_ARRAY, [6, 5, 3]),
        (CL_MEM_OBJECT_IMAGE3D, [5, 4, 6]),
    ];
    for (t, extent) in types {
        let array_1d = t == CL_MEM_OBJECT_IMAGE1D_ARRAY;
        let mut d = match t {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => desc(t, extent[0], 0, 0, extent[1]),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => desc(t, extent[0], extent[1], 0, extent[2]),
            _ => desc(t, extent[0], extent[1], extent[2], 0),
        };
        let mut model = Model { extent, elem, bytes: pattern(extent.iter().product::<usize>() * elem, 5) };
        // Created from host memory with padded pitches (except a 1D buffer image, which
        // is made from a buffer holding the texels).
        // (The image's slice pitch must be a multiple of its row pitch.)
        let row = extent[0] * elem + 8;
        let slice = row * (if array_1d { 1 } else { extent[1] } + 1);
        let mut host = vec![0u8; slice * extent[2].max(extent[1]) + 64];
        for (m, p) in model.texels([0; 3], extent) {
            let h = host_offset(array_1d, elem, row, slice, p);
            host[h..h + elem].copy_from_slice(&model.bytes[m..m + elem]);
        }
        let buffer = (t == CL_MEM_OBJECT_IMAGE1D_BUFFER).then(|| env.buffer_with(&model.bytes));
        let img = match buffer {
            Some(b) => {
                d.buffer = b;
                image(&env, CL_MEM_READ_WRITE, &f, &d, null_mut())
            }
            None => {
                let uses_slices =
                    matches!(t, CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D);
                d.image_row_pitch = row;
                d.image_slice_pitch = if uses_slices { slice } else { 0 };
                image(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &d, host.as_mut_ptr().cast())
            }
        };
        let img_info = |q| info::<usize>(|s, v, r| cl!(clGetImageInfo(img, q, s, v, r)));
        assert_eq!(img_info(CL_IMAGE_WIDTH), extent[0]);
        assert_eq!(img_info(CL_IMAGE_ELEMENT_SIZE), elem);
        assert_eq!(mem_info::<cl_mem_object_type>(img, CL_MEM_TYPE), t);
        let whole = |r: [usize; 3]| -> [usize; 3] { r };
        // Read a sub-region into padded host memory.
        let origin = [1, extent[1] / 2, extent[2] / 2];
        let region = [extent[0] - 1, extent[1] - extent[1] / 2, extent[2] - extent[2] / 2];
        let (hrow, hslice) = (region[0] * elem + 4, (region[0] * elem + 4) * if array_1d { 1 } else { region[1] } + 12);
        let mut out = vec![0u8; hslice * region[2].max(region[1]) + 64];
        let slice_arg = if matches!(t, CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D) {
            0
        } else {
            hslice
        };
        ok!(try_read(&env, img, origin.as_ptr(), region.as_ptr(), [hrow, slice_arg], out.as_mut_ptr().cast()));
        for (m, p) in model.texels(origin, region) {
            let h = host_offset(array_1d, elem, hrow, hslice, p);
            assert_eq!(out[h..h + elem], model.bytes[m..m + elem], "type {t:#x} read at {p:?}");
        }
        // Write it back shifted to the origin, then read the whole image.
        let data = pattern(out.len(), 77);
        ok!(cl!(clEnqueueWriteImage(
            env.queue,
            img,
            CL_TRUE,
            [0; 3].as_ptr(),
            region.as_ptr(),
            hrow,
            slice_arg,
            data.as_ptr().cast(),
            0,
            null(),
            null_mut()
        )));
        for (m, p) in model.texels([0; 3], region) {
            let h = host_offset(array_1d, elem, hrow, hslice, p);
            model.bytes[m..m + elem].copy_from_slice(&data[h..h + elem]);
        }
        let total = model.bytes.len();
        let read_all = |img: cl_mem| {
            let mut all = vec![0u8; total];
            read_into(&env, img, [0; 3].as_ptr(), whole(extent).as_ptr(), all.as_mut_ptr().cast());
            all
        };
        assert_eq!(read_all(img), model.bytes, "type {t:#x} after write");
        // Fill a region.
        let color = [1u32, 2, 300, 70000];
        let fo = [extent[0] / 3, 0, 0];
        let fr = [2, extent[1], 1];
        ok!(cl!(clEnqueueFillImage(
            env.queue,
            img,
            color.as_ptr().cast(),
            fo.as_ptr(),
            fr.as_ptr(),
            0,
            null(),
            null_mut()
        )));
        let texel: Vec<u8> = [1u16, 2, 300, 65535].iter().flat_map(|v| v.to_ne_bytes()).collect();
        for (m, _) in model.texels(fo, fr) {
            model.bytes[m..m + elem].copy_from_slice(&texel);
        }
        assert_eq!(read_all(img), model.bytes, "type {t:#x} after fill");
        // Copy to a second image, and through a buffer back.
        let (copy, e) = try_image(
            &env,
            CL_MEM_READ_WRITE,
            &f,
            &desc(d.image_type, d.image_width, d.image_height, d.image_depth, d.image_array_size),
            null_mut(),
        );
        if t == CL_MEM_OBJECT_IMAGE1D_BUFFER {
            err!(CL_INVALID_IMAGE_DESCRIPTOR, e);
        } else {
            ok!(e);
            ok!(cl!(clEnqueueCopyImage(
                env.queue,
                img,
                copy,
                [0; 3].as_ptr(),
                [0; 3].as_ptr(),
                whole(extent).as_ptr(),
                0,
                null(),
                null_mut()
            )));
            assert_eq!(read_all(copy), model.bytes, "type {t:#x} copied");
            ok!(cl!(clReleaseMemObject(copy)));
        }
        let buf = env.buffer(0, model.bytes.len() + 24, null_mut());
        ok!(cl!(clEnqueueCopyImageToBuffer(
            env.queue,
            img,
            buf,
            origin.as_ptr(),
            region.as_ptr(),
            24,
            0,
            null(),
            null_mut()
        )));
        let got = env.read(buf, model.bytes.len() + 24);
        let mut i = 24;
        for (m, _) in model.texels(origin, region) {
            assert_eq!(got[i..i + elem], model.bytes[m..m + elem], "type {t:#x} to buffer");
            i += elem;
        }
        ok!(cl!(clEnqueueCopyBufferToImage(
            env.queue,
            buf,
            img,
            24,
            [0; 3].as_ptr(),
            region.as_ptr(),
            0,
            null(),
            null_mut()
        )));
        let mut i = 24;
        for (m, _) in model.texels([0; 3], region) {
            model.bytes[m..m + elem].copy_from_slice(&got[i..i + elem]);
            i += elem;
        }
        assert_eq!(read_all(img), model.bytes, "type {t:#x} from buffer");
        // Map a region, change a texel through the mapping, unmap.
        let (mut mrow, mut mslice) = (0usize, 0usize);
        let (ptr, e) = with_err(|e| {
            cl!(clEnqueueMapImage(
                env.queue,
                img,
                CL_TRUE,
                CL_MAP_READ | CL_MAP_WRITE,
                origin.as_ptr(),
                region.as_ptr(),
                &mut mrow,
                &mut mslice,
                0,
                null(),
                null_mut(),
                e
            ))
        });
        ok!(e);
        let mapped_at = |p: [usize; 3]| {
            if array_1d {
                p[1] * mslice + p[0] * elem
            } else {
                p[2] * mslice + p[1] * mrow + p[0] * elem
            }
        };
        let last = [region[0] - 1, region[1] - 1, region[2] - 1];
        // SAFETY: the mapping covers the region with the pitches returned.
        let mapped = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), mapped_at(last) + elem) };
        let m_last = model.at([origin[0] + last[0], origin[1] + last[1], origin[2] + last[2]]);
        assert_eq!(mapped[mapped_at(last)..][..elem], model.bytes[m_last..m_last + elem], "type {t:#x} mapped");
        mapped[mapped_at(last)..][..elem].fill(0xab);
        ok!(cl!(clEnqueueUnmapMemObject(env.queue, img, ptr, 0, null(), null_mut())));
        model.bytes[m_last..m_last + elem].fill(0xab);
        assert_eq!(read_all(img), model.bytes, "type {t:#x} after unmap");
        ok!(cl!(clReleaseMemObject(img)));
        ok!(cl!(clReleaseMemObject(buf)));
        if let Some(b) = buffer {
            // The 1D buffer image's texels are the buffer's bytes.
            assert_eq!(env.read(b, model.bytes.len()), model.bytes);
            ok!(cl!(clReleaseMemObject(b)));
        }
    }
}

#[test]
fn image_creation_errors() {
    let env = Env::new();
    let f = fmt(CL_RGBA, CL_UNORM_INT8);
    let d2 = desc(CL_MEM_OBJECT_IMAGE2D, 16, 8, 0, 0);
    let mut host = vec![0u8; 16 * 8 * 4 * 4];
    let hp: *mut c_void = host.as_mut_ptr().cast();
    let create = |flags, f: &cl_image_format, d: &cl_image_desc, h| try_image(&env, flags, f, d, h).1;
    err!(
        CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
        with_err(|e| cl!(clCreateImage(env.context, 0, null(), &d2, null_mut(), e))).1
    );
    err!(CL_INVALID_IMAGE_DESCRIPTOR, with_err(|e| cl!(clCreateImage(env.context, 0, &f, null(), null_mut(), e))).1);
    err!(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, create(0, &fmt(CL_BGRA, CL_FLOAT), &d2, null_mut()));
    err!(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, create(0, &fmt(CL_RGBA, 0x1234), &d2, null_mut()));
    err!(CL_IMAGE_FORMAT_NOT_SUPPORTED, create(CL_MEM_WRITE_ONLY, &fmt(CL_sRGBA, CL_UNORM_INT8), &d2, null_mut()));
    err!(
        CL_IMAGE_FORMAT_NOT_SUPPORTED,
        create(0, &fmt(CL_DEPTH, CL_FLOAT), &desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 4, 0), null_mut())
    );
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(0, &f, &desc(CL_MEM_OBJECT_BUFFER, 16, 8, 0, 0), null_mut()));
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(0, &f, &desc(CL_MEM_OBJECT_IMAGE2D, 0, 8, 0, 0), null_mut()));
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(0, &f, &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 4, 0, 0), null_mut()));
    err!(CL_INVALID_IMAGE_SIZE, create(0, &f, &desc(CL_MEM_OBJECT_IMAGE2D, 1 << 20, 1, 0, 0), null_mut()));
    err!(CL_INVALID_IMAGE_SIZE, create(0, &f, &desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 1 << 20, 0), null_mut()));
    err!(CL_INVALID_IMAGE_SIZE, create(0, &f, &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 4, 0, 1 << 20), null_mut()));
    // Pitches only with memory the application gives, at least a row, whole texels.
    let mut pitched = d2;
    pitched.image_row_pitch = 128;
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(0, &f, &pitched, null_mut()));
    ok!(cl!(clReleaseMemObject(image(&env, CL_MEM_COPY_HOST_PTR, &f, &pitched, hp))));
    pitched.image_row_pitch = 63;
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(CL_MEM_USE_HOST_PTR, &f, &pitched, hp));
    pitched.image_row_pitch = 60;
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(CL_MEM_USE_HOST_PTR, &f, &pitched, hp));
    // Pitches that put the application's rows past any block it could have: refused for
    // a copy as for a use (the copy read rows 2^62 bytes apart and the host crashed).
    for (row, slice) in [(1usize << 62, 0usize), (1 << 40, 0), (64, 1 << 62)] {
        let mut far = if slice == 0 { d2 } else { desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2, 0) };
        far.image_row_pitch = row;
        far.image_slice_pitch = slice;
        for flags in [CL_MEM_COPY_HOST_PTR, CL_MEM_USE_HOST_PTR] {
            err!(CL_INVALID_IMAGE_SIZE, create(flags, &f, &far, hp));
        }
    }
    let mut sliced = desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2, 0);
    sliced.image_row_pitch = 16;
    sliced.image_slice_pitch = 72; // not a multiple of the row pitch
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(CL_MEM_COPY_HOST_PTR, &f, &sliced, hp));
    // Host pointers and flags as for buffers.
    err!(CL_INVALID_HOST_PTR, create(CL_MEM_USE_HOST_PTR, &f, &d2, null_mut()));
    err!(CL_INVALID_HOST_PTR, create(0, &f, &d2, hp));
    err!(CL_INVALID_VALUE, create(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, &f, &d2, null_mut()));
    let (m, e) = with_err(|e| cl!(clCreateImage(null_mut(), 0, &f, &d2, null_mut(), e)));
    assert!(m.is_null());
    err!(CL_INVALID_CONTEXT, e);
    // A 1D buffer image needs a buffer large enough; other types take none.
    let small = env.buffer(0, 64, null_mut());
    let mut b1 = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0, 0, 0);
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(0, &f, &b1, null_mut()));
    b1.buffer = small;
    ok!(cl!(clReleaseMemObject(image(&env, 0, &f, &b1, null_mut()))));
    b1.image_width = 17;
    err!(CL_INVALID_IMAGE_SIZE, create(0, &f, &b1, null_mut()));
    let mut d3 = desc(CL_MEM_OBJECT_IMAGE3D, 2, 2, 2, 0);
    d3.buffer = small;
    err!(CL_INVALID_IMAGE_DESCRIPTOR, create(0, &f, &d3, null_mut()));
    // A 2D image from a buffer shares its bytes; one from an image views its texels.
    let mut from_buf = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
    from_buf.buffer = small;
    let view = image(&env, 0, &f, &from_buf, null_mut());
    assert_eq!(mem_info::<cl_mem>(view, CL_MEM_ASSOCIATED_MEMOBJECT), small);
    let mut srgb = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
    srgb.buffer = view;
    let s = image(&env, CL_MEM_READ_ONLY, &fmt(CL_sRGBA, CL_UNORM_INT8), &srgb, null_mut());
    err!(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, create(0, &fmt(CL_RGBA, CL_UNORM_INT16), &srgb, null_mut()));
    for m in [s, view, small] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    // Image queries on buffers, buffer commands on images.
    let img = image(&env, 0, &f, &d2, null_mut());
    let buf = env.buffer(0, 64, null_mut());
    err!(CL_INVALID_MEM_OBJECT, cl!(clGetImageInfo(buf, CL_IMAGE_WIDTH, 0, null_mut(), null_mut())));
    err!(CL_INVALID_VALUE, cl!(clGetImageInfo(img, CL_MEM_SIZE, 0, null_mut(), null_mut())));
    let mut x = [0u8; 64];
    err!(
        CL_INVALID_MEM_OBJECT,
        cl!(clEnqueueReadBuffer(env.queue, img, CL_TRUE, 0, 4, x.as_mut_ptr().cast(), 0, null(), null_mut()))
    );
    let region = [1usize, 1, 1];
    err!(CL_INVALID_MEM_OBJECT, try_read(&env, buf, [0; 3].as_ptr(), region.as_ptr(), [0, 0], x.as_mut_ptr().cast()));
    let sub = cl_buffer_region { origin: 0, size: 4 };
    let (_, e) = with_err(|e| {
        cl!(clCreateSubBuffer(img, 0, CL_BUFFER_CREATE_TYPE_REGION, (&sub as *const cl_buffer_region).cast(), e))
    });
    err!(CL_INVALID_MEM_OBJECT, e);
    // Regions outside the image, unused dimensions that are not 0/1, pitches too small.
    let mut read = |o: [usize; 3], r: [usize; 3], row, slice| {
        try_read(&env, img, o.as_ptr(), r.as_ptr(), [row, slice], x.as_mut_ptr().cast())
    };
    err!(CL_INVALID_VALUE, read([15, 0, 0], [2, 1, 1], 0, 0));
    err!(CL_INVALID_VALUE, read([0, 0, 1], [1, 1, 1], 0, 0));
    err!(CL_INVALID_VALUE, read([0, 0, 0], [1, 1, 2], 0, 0));
    err!(CL_INVALID_VALUE, read([0, 0, 0], [0, 1, 1], 0, 0));
    err!(CL_INVALID_VALUE, read([usize::MAX, 0, 0], [2, 1, 1], 0, 0));
    err!(CL_INVALID_VALUE, read([0, 0, 0], [2, 1, 1], 4, 0));
    err!(CL_INVALID_VALUE, read([0, 0, 0], [2, 1, 1], 0, 64));
    ok!(read([0, 0, 0], [2, 2, 1], 8, 0));
    err!(CL_INVALID_VALUE, try_read(&env, img, null(), region.as_ptr(), [0, 0], x.as_mut_ptr().cast()));
    err!(CL_INVALID_VALUE, try_read(&env, img, [0; 3].as_ptr(), region.as_ptr(), [0, 0], null_mut()));
    // Copies: overlap within one image, format mismatch, buffer ranges.
    let big = [8usize, 8, 1];
    err!(
        CL_MEM_COPY_OVERLAP,
        cl!(clEnqueueCopyImage(
            env.queue,
            img,
            img,
            [0; 3].as_ptr(),
            [4, 2, 0].as_ptr(),
            [8usize, 4, 1].as_ptr(),
            0,
            null(),
            null_mut()
        ))
    );
    ok!(cl!(clEnqueueCopyImage(
        env.queue,
        img,
        img,
        [0; 3].as_ptr(),
        [8, 0, 0].as_ptr(),
        big.as_ptr(),
        0,
        null(),
        null_mut()
    )));
    let other = image(&env, 0, &fmt(CL_RGBA, CL_SIGNED_INT8), &d2, null_mut());
    err!(
        CL_IMAGE_FORMAT_MISMATCH,
        cl!(clEnqueueCopyImage(
            env.queue,
            img,
            other,
            [0; 3].as_ptr(),
            [0; 3].as_ptr(),
            region.as_ptr(),
            0,
            null(),
            null_mut()
        ))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueCopyImageToBuffer(
            env.queue,
            img,
            buf,
            [0; 3].as_ptr(),
            [4, 4, 1].as_ptr(),
            4,
            0,
            null(),
            null_mut()
        ))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueCopyBufferToImage(
            env.queue,
            buf,
            img,
            usize::MAX,
            [0; 3].as_ptr(),
            region.as_ptr(),
            0,
            null(),
            null_mut()
        ))
    );
    err!(
        CL_INVALID_MEM_OBJECT,
        cl!(clEnqueueCopyImageToBuffer(
            env.queue,
            img,
            other,
            [0; 3].as_ptr(),
            region.as_ptr(),
            0,
            0,
            null(),
            null_mut()
        ))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clEnqueueFillImage(env.queue, img, null(), [0; 3].as_ptr(), region.as_ptr(), 0, null(), null_mut()))
    );
    // Maps need the row pitch out-parameter (and the slice pitch for 3D and arrays).
    let (p, e) = with_err(|e| {
        cl!(clEnqueueMapImage(
            env.queue,
            img,
            CL_TRUE,
            CL_MAP_READ,
            [0; 3].as_ptr(),
            region.as_ptr(),
            null_mut(),
            null_mut(),
            0,
            null(),
            null_mut(),
            e
        ))
    });
    assert!(p.is_null());
    err!(CL_INVALID_VALUE, e);
    // Host access flags hold for images too.
    let no_host = image(&env, CL_MEM_HOST_NO_ACCESS, &f, &d2, null_mut());
    err!(
        CL_INVALID_OPERATION,
        try_read(&env, no_host, [0; 3].as_ptr(), region.as_ptr(), [0, 0], x.as_mut_ptr().cast())
    );
    // Format listing errors.
    let mut n = 0;
    err!(
        CL_INVALID_VALUE,
        cl!(clGetSupportedImageFormats(env.context, 0, CL_MEM_OBJECT_BUFFER, 0, null_mut(), &mut n))
    );
    err!(
        CL_INVALID_VALUE,
        cl!(clGetSupportedImageFormats(env.context, 1 << 40, CL_MEM_OBJECT_IMAGE2D, 0, null_mut(), &mut n))
    );
    let mut one = [fmt(0, 0)];
    err!(
        CL_INVALID_VALUE,
        cl!(clGetSupportedImageFormats(env.context, 0, CL_MEM_OBJECT_IMAGE2D, 0, one.as_mut_ptr(), &mut n))
    );
    ok!(cl!(clGetSupportedImageFormats(env.context, 0, CL_MEM_OBJECT_IMAGE2D, 1, one.as_mut_ptr(), &mut n)));
    assert!(n > 1 && one[0].image_channel_order != 0);
    for m in [img, buf, other, no_host] {
        ok!(cl!(clReleaseMemObject(m)));
    }
}

#[test]
fn samplers_and_image_arguments() {
    let env = Env::new();
    let (s, e) = with_err(|e| cl!(clCreateSampler(env.context, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, e)));
    ok!(e);
    let sinfo = |s: cl_sampler, q| info::<cl_uint>(|sz, v, r| cl!(clGetSamplerInfo(s, q, sz, v, r)));
    assert_eq!(sinfo(s, CL_SAMPLER_NORMALIZED_COORDS), CL_TRUE);
    assert_eq!(sinfo(s, CL_SAMPLER_ADDRESSING_MODE), CL_ADDRESS_REPEAT);
    assert_eq!(sinfo(s, CL_SAMPLER_FILTER_MODE), CL_FILTER_LINEAR);
    assert_eq!(sinfo(s, CL_SAMPLER_REFERENCE_COUNT), 1);
    assert_eq!(info::<cl_context>(|sz, v, r| cl!(clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sz, v, r))), env.context);
    ok!(cl!(clRetainSampler(s)));
    assert_eq!(sinfo(s, CL_SAMPLER_REFERENCE_COUNT), 2);
    ok!(cl!(clReleaseSampler(s)));
    err!(CL_INVALID_VALUE, cl!(clGetSamplerInfo(s, 0x9999, 0, null_mut(), null_mut())));
    // Invalid modes, and repeat addressing without normalised coordinates.
    for (norm, mode, filter) in [
        (CL_TRUE, 0x1200, CL_FILTER_NEAREST),
        (CL_TRUE, CL_ADDRESS_CLAMP, 0x1200),
        (CL_FALSE, CL_ADDRESS_REPEAT, CL_FILTER_NEAREST),
        (7, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST),
    ] {
        let (x, e) = with_err(|e| cl!(clCreateSampler(env.context, norm, mode, filter, e)));
        assert!(x.is_null());
        err!(CL_INVALID_VALUE, e);
    }
    // Properties: defaults, the list echoed, unknown names refused.
    let props: [cl_sampler_properties; 5] = [
        CL_SAMPLER_FILTER_MODE as u64,
        CL_FILTER_LINEAR as u64,
        CL_SAMPLER_NORMALIZED_COORDS as u64,
        CL_FALSE as u64,
        0,
    ];
    let (p, e) = with_err(|e| cl!(clCreateSamplerWithProperties(env.context, props.as_ptr(), e)));
    ok!(e);
    assert_eq!(sinfo(p, CL_SAMPLER_ADDRESSING_MODE), CL_ADDRESS_CLAMP);
    assert_eq!(sinfo(p, CL_SAMPLER_NORMALIZED_COORDS), CL_FALSE);
    let echoed = info_bytes(|sz, v, r| cl!(clGetSamplerInfo(p, CL_SAMPLER_PROPERTIES, sz, v, r)));
    assert_eq!(echoed.len(), 5 * 8);
    let bad: [cl_sampler_properties; 3] = [0x7777, 1, 0];
    err!(CL_INVALID_VALUE, with_err(|e| cl!(clCreateSamplerWithProperties(env.context, bad.as_ptr(), e))).1);
    err!(CL_INVALID_SAMPLER, cl!(clRetainSampler(null_mut())));
    // Kernel arguments: images and samplers of the right kinds only.
    let prog = build(
        &env,
        "kernel void k(read_only image2d_t i, sampler_t s, write_only image2d_t o, global int *b) {\n\
        write_imagef(o, (int2)(0, 0), read_imagef(i, s, (float2)(0.5f, 0.5f)));\n}",
        "",
    );
    let k = kernel(prog, "k");
    let f = fmt(CL_RGBA, CL_FLOAT);
    let d = desc(CL_MEM_OBJECT_IMAGE2D, 1, 1, 0, 0);
    let mut texel = [0.25f32, 0.5, 0.75, 1.0];
    let src = image(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f, &d, texel.as_mut_ptr().cast());
    let dst = image(&env, CL_MEM_WRITE_ONLY, &f, &d, null_mut());
    let buf = env.buffer(0, 16, null_mut());
    err!(CL_INVALID_MEM_OBJECT, cl!(clSetKernelArg(k, 0, 8, (&buf as *const cl_mem).cast())));
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArg(k, 0, 8, null())));
    err!(CL_INVALID_ARG_SIZE, cl!(clSetKernelArg(k, 0, 4, (&src as *const cl_mem).cast())));
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArg(k, 0, 8, (&dst as *const cl_mem).cast())));
    err!(CL_INVALID_ARG_VALUE, cl!(clSetKernelArg(k, 2, 8, (&src as *const cl_mem).cast())));
    err!(CL_INVALID_SAMPLER, cl!(clSetKernelArg(k, 1, 8, (&buf as *const cl_mem).cast())));
    err!(CL_INVALID_SAMPLER, cl!(clSetKernelArg(k, 1, 8, null())));
    err!(CL_INVALID_MEM_OBJECT, cl!(clSetKernelArg(k, 3, 8, (&src as *const cl_mem).cast())));
    set_arg(k, 0, &src);
    set_arg(k, 1, &p);
    set_arg(k, 2, &dst);
    set_arg(k, 3, &buf);
    run(&env, k, &[1], None);
    let mut out = [0f32; 4];
    ok!(cl!(clEnqueueReadImage(
        env.queue,
        dst,
        CL_TRUE,
        [0; 3].as_ptr(),
        [1usize, 1, 1].as_ptr(),
        0,
        0,
        out.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    )));
    assert_eq!(out, texel);
    // The argument queries name the image types and access qualifiers.
    let arg_str = |i, q| info_string(|sz, v, r| cl!(clGetKernelArgInfo(k, i, q, sz, v, r)));
    assert_eq!(arg_str(0, CL_KERNEL_ARG_TYPE_NAME), "image2d_t");
    assert_eq!(arg_str(1, CL_KERNEL_ARG_TYPE_NAME), "sampler_t");
    let access =
        |i| info::<cl_uint>(|sz, v, r| cl!(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sz, v, r)));
    assert_eq!(access(0), CL_KERNEL_ARG_ACCESS_READ_ONLY);
    assert_eq!(access(2), CL_KERNEL_ARG_ACCESS_WRITE_ONLY);
    for m in [src, dst, buf] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseSampler(s)));
    ok!(cl!(clReleaseSampler(p)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(prog)));
}

const MIXED_KERNELS: &str = r#"
const sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
// Each group copies its row of weights into local memory, then scales its texels.
kernel void scaled(read_only image2d_t src, write_only image2d_t dst, global const float *weights,
                   local float *row) {
    int x = get_global_id(0), y = get_global_id(1);
    event_t e = async_work_group_copy(row, weights + get_group_id(1) * get_local_size(0) * get_num_groups(0),
                                      get_local_size(0) * get_num_groups(0), 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    write_imagef(dst, (int2)(x, y), read_imagef(src, nearest, (int2)(x, y)) * row[x]);
}
float4 fetch(read_only image2d_t src, int x, int y) {
    barrier(CLK_LOCAL_MEM_FENCE);
    return read_imagef(src, nearest, (int2)(x, y));
}
// A kernel another kernel calls: its work-items run as fibers.
kernel void via_fibers(read_only image2d_t src, write_only image2d_t dst) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(dst, (int2)(x, y), fetch(src, x + 1, y) * 2.0f);
}
kernel void calls_via_fibers(read_only image2d_t src, write_only image2d_t dst) { via_fibers(src, dst); }
// Array layers and 3D slices: the layer coordinate rounds and clamps.
kernel void layers(read_only image2d_array_t a, read_only image3d_t v, global float4 *out) {
    int i = get_global_id(0);
    out[2 * i] = read_imagef(a, nearest, (float4)(1.5f, 0.5f, (float)i - 0.6f, 0.0f));
    out[2 * i + 1] = read_imagef(v, nearest, (int4)(1, 0, i, 0));
}
"#;

#[test]
fn images_mix_with_async_copies_barriers_and_arrays() {
    let env = Env::new();
    let p = build(&env, MIXED_KERNELS, "");
    let (w, h) = (16usize, 4usize);
    // RGBA8 is a format whose loops are compiled apart, RG16 one that is not.
    for f in [fmt(CL_RGBA, CL_UNORM_INT8), fmt(CL_RG, CL_UNORM_INT16)] {
        let size = texel_size(&f);
        // The channels the format stores (R, G, ... in order): the rest read as 0 or 1.
        let stored = channel_info(&f).1;
        let mut bytes = texels(&f, w * h, 9);
        let d = desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
        let src = image(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f, &d, bytes.as_mut_ptr().cast());
        let dst = image(&env, CL_MEM_WRITE_ONLY, &f, &d, null_mut());
        let weights: Vec<f32> = (0..w * h).map(|i| (i % 5) as f32 * 0.25).collect();
        let wbuf = buffer_of(&env, &weights);
        let k = kernel(p, "scaled");
        set_arg(k, 0, &src);
        set_arg(k, 1, &dst);
        set_arg(k, 2, &wbuf);
        ok!(cl!(clSetKernelArg(k, 3, w * 4, null())));
        run(&env, k, &[w, h], Some(&[4, 1]));
        let mut out = vec![0u8; bytes.len()];
        read_into(&env, dst, [0usize; 3].as_ptr(), [w, h, 1].as_ptr(), out.as_mut_ptr().cast());
        for i in 0..w * h {
            let (want, got) = (reference(&f, &bytes[i * size..][..size]), reference(&f, &out[i * size..][..size]));
            for c in 0..stored {
                let (v, tol) = quantized(&f, want[c] * weights[i] as f64);
                assert!((got[c] - v).abs() <= tol + 1e-6, "{f:?} scaled texel {i} channel {c}: {} != {v}", got[c]);
            }
        }
        let k2 = kernel(p, "via_fibers");
        set_arg(k2, 0, &src);
        set_arg(k2, 1, &dst);
        run(&env, k2, &[w, h], Some(&[8, 2]));
        read_into(&env, dst, [0usize; 3].as_ptr(), [w, h, 1].as_ptr(), out.as_mut_ptr().cast());
        for y in 0..h {
            for x in 0..w {
                let i = y * w + (x + 1).min(w - 1);
                let (want, got) =
                    (reference(&f, &bytes[i * size..][..size]), reference(&f, &out[(y * w + x) * size..][..size]));
                for c in 0..stored {
                    let (v, tol) = quantized(&f, want[c] * 2.0);
                    assert!((got[c] - v).abs() <= tol + 1e-6, "{f:?} fibers ({x}, {y}) channel {c}");
                }
            }
        }
        for m in [src, dst, wbuf] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseKernel(k2)));
    }
    // A 2D array of 3 layers and a 3D image of 3 slices, texel value = layer * 10 + x.
    let f = fmt(CL_R, CL_FLOAT);
    let mut values: Vec<f32> = (0..3).flat_map(|l| (0..4).map(move |x| (l * 10 + x) as f32)).collect();
    let a = image(
        &env,
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        &f,
        &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 1, 0, 3),
        values.as_mut_ptr().cast(),
    );
    let v = image(
        &env,
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        &f,
        &desc(CL_MEM_OBJECT_IMAGE3D, 4, 1, 3, 0),
        values.as_mut_ptr().cast(),
    );
    let out = env.buffer(0, 5 * 2 * 16, null_mut());
    let k = kernel(p, "layers");
    set_arg(k, 0, &a);
    set_arg(k, 1, &v);
    set_arg(k, 2, &out);
    run(&env, k, &[5], None);
    let got = read_as::<[f32; 4]>(&env, out, 10);
    for i in 0..5i32 {
        // Layer rint(i - 0.6) clamped to 0..2; slice i clamped to the edge.
        let layer = ((i as f32 - 0.6).round_ties_even() as i32).clamp(0, 2);
        assert_eq!(got[2 * i as usize][0], (layer * 10 + 1) as f32, "array layer for {i}");
        assert_eq!(got[2 * i as usize + 1][0], (i.clamp(0, 2) * 10 + 1) as f32, "3D slice {i}");
    }
    for m in [a, v, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn every_format_samples_as_the_spec_says() {
    let env = Env::new();
    let p = build(&env, SAMPLE_KERNELS, "");
    let (w, h) = (5usize, 3usize);
    let raw: Vec<[f32; 2]> =
        [-0.8f32, 0.3, 1.5, 2.75, 4.9, 6.1].iter().flat_map(|&x| [-0.4f32, 0.6, 1.25, 3.7].map(|y| [x, y])).collect();
    let out = env.buffer(0, raw.len() * 16, null_mut());
    let mut checked = 0;
    for f in formats(&env, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D) {
        if f.image_channel_order == CL_DEPTH {
            continue; // depth images read through image2d_depth_t (every_format_round_trips...)
        }
        let (size, kind) = (texel_size(&f), channel_info(&f).2);
        let mut bytes = texels(&f, w * h, 21);
        let img = image(
            &env,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &f,
            &desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0),
            bytes.as_mut_ptr().cast(),
        );
        // The border: (0, 0, 0, 0), or alpha 1 for orders without alpha.
        let alpha_one = matches!(f.image_channel_order, CL_R | CL_RG | CL_RGB | CL_LUMINANCE);
        let texel = |x: i64, y: i64| -> [f64; 4] {
            if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
                return [0.0, 0.0, 0.0, if alpha_one { 1.0 } else { 0.0 }];
            }
            let i = (y as usize * w + x as usize) * size;
            reference(&f, &bytes[i..i + size])
        };
        for norm in [false, true] {
            let coords: Vec<[f32; 2]> =
                if norm { raw.iter().map(|c| [c[0] / w as f32, c[1] / h as f32]).collect() } else { raw.clone() };
            let cbuf = buffer_of(&env, &coords);
            let modes = [CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP, CL_ADDRESS_REPEAT, CL_ADDRESS_MIRRORED_REPEAT];
            for mode in modes.into_iter().filter(|&m| norm || m < CL_ADDRESS_REPEAT) {
                // Linear filtering is defined for float reads only.
                let filters: &[cl_filter_mode] =
                    if kind == 'f' { &[CL_FILTER_NEAREST, CL_FILTER_LINEAR] } else { &[CL_FILTER_NEAREST] };
                for &filter in filters {
                    let (s, e) = with_err(|e| cl!(clCreateSampler(env.context, norm as cl_bool, mode, filter, e)));
                    ok!(e);
                    let k = kernel(p, ["sample", "sample_i", "sample_u"]["fiu".find(kind).unwrap()]);
                    set_arg(k, 0, &img);
                    set_arg(k, 1, &s);
                    set_arg(k, 2, &cbuf);
                    set_arg(k, 3, &out);
                    run(&env, k, &[coords.len()], None);
                    let got: Vec<[f64; 4]> = match kind {
                        'f' => read_as::<[f32; 4]>(&env, out, coords.len()).iter().map(|v| v.map(f64::from)).collect(),
                        'i' => read_as::<[i32; 4]>(&env, out, coords.len()).iter().map(|v| v.map(f64::from)).collect(),
                        _ => read_as::<[u32; 4]>(&env, out, coords.len()).iter().map(|v| v.map(f64::from)).collect(),
                    };
                    for (c, g) in coords.iter().zip(&got) {
                        let want = spec_sample_of(*c, (w, h), norm, mode, filter == CL_FILTER_LINEAR, texel);
                        for ch in 0..4 {
                            let tol = if kind == 'f' { 2e-4 * want[ch].abs().max(1.0) } else { 0.0 };
                            assert!(
                                (g[ch] - want[ch]).abs() <= tol,
                                "{f:?} norm {norm} mode {mode:#x} filter {filter:#x} at {c:?} channel {ch}: {} != {}",
                                g[ch],
                                want[ch]
                            );
                        }
                    }
                    checked += 1;
                    ok!(cl!(clReleaseKernel(k)));
                    ok!(cl!(clReleaseSampler(s)));
                }
            }
            ok!(cl!(clReleaseMemObject(cbuf)));
        }
        ok!(cl!(clReleaseMemObject(img)));
    }
    assert!(checked > 500, "{checked} format/sampler combinations");
    ok!(cl!(clReleaseMemObject(out)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn image_support_macro_is_defined() {
    // "__IMAGE_SUPPORT__ ... is defined as the integer constant 1 if images are supported"
    // (CTS test_basic kernel_preprocessor_macros).
    let env = Env::new();
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let p = build(&env, "kernel void k(global int *a) { *a = __IMAGE_SUPPORT__; }", std);
        let out = buffer_of(&env, &[0i32]);
        let k = kernel(p, "k");
        set_arg(k, 0, &out);
        run(&env, k, &[1], None);
        assert_eq!(read_as::<i32>(&env, out, 1), [1], "{std}");
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseMemObject(out)));
        ok!(cl!(clReleaseProgram(p)));
    }
}

/// cl_ext_immutable_memory_objects on images: read-only to kernels, nothing writes them.
#[test]
fn immutable_images_are_read_only() {
    let env = Env::new();
    let f = fmt(CL_RGBA, CL_UNSIGNED_INT8);
    let d = desc(CL_MEM_OBJECT_IMAGE2D, 8, 4, 0, 0);
    let mut bytes = texels(&f, 32, 3);
    let listed = formats(&env, CL_MEM_IMMUTABLE_EXT, CL_MEM_OBJECT_IMAGE2D);
    let same = |g: &cl_image_format| (g.image_channel_order, g.image_channel_data_type) == (CL_RGBA, CL_UNSIGNED_INT8);
    assert!(listed.iter().any(same));
    let (m, e) = try_image(&env, CL_MEM_IMMUTABLE_EXT, &f, &d, null_mut());
    assert!(m.is_null());
    err!(CL_INVALID_VALUE, e);
    let (m, e) = try_image(
        &env,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_COPY_HOST_PTR,
        &f,
        &d,
        bytes.as_mut_ptr().cast(),
    );
    assert!(m.is_null());
    err!(CL_INVALID_VALUE, e);
    let img = image(&env, CL_MEM_IMMUTABLE_EXT | CL_MEM_USE_HOST_PTR, &f, &d, bytes.as_mut_ptr().cast());
    let flags: cl_mem_flags = mem_info(img, CL_MEM_FLAGS);
    assert_eq!(flags & (CL_MEM_IMMUTABLE_EXT | CL_MEM_READ_ONLY), CL_MEM_IMMUTABLE_EXT | CL_MEM_READ_ONLY);

    let q = env.queue;
    let (origin, region) = ([0usize; 3], [8usize, 4, 1]);
    let (o, r) = (origin.as_ptr(), region.as_ptr());
    let other = image(&env, CL_MEM_READ_WRITE, &f, &d, null_mut());
    let buf = env.buffer_with(&bytes);
    let color = [1u32; 4];
    err!(
        CL_INVALID_OPERATION,
        cl!(clEnqueueWriteImage(q, img, CL_TRUE, o, r, 0, 0, bytes.as_ptr().cast(), 0, null(), null_mut()))
    );
    err!(CL_INVALID_OPERATION, cl!(clEnqueueFillImage(q, img, color.as_ptr().cast(), o, r, 0, null(), null_mut())));
    err!(CL_INVALID_OPERATION, cl!(clEnqueueCopyImage(q, other, img, o, o, r, 0, null(), null_mut())));
    err!(CL_INVALID_OPERATION, cl!(clEnqueueCopyBufferToImage(q, buf, img, 0, o, r, 0, null(), null_mut())));
    let (p, e) = with_err(|e| {
        let (mut row, mut slice) = (0, 0);
        cl!(clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_WRITE, o, r, &mut row, &mut slice, 0, null(), null_mut(), e))
    });
    assert!(p.is_null());
    err!(CL_INVALID_OPERATION, e);
    // Reading it and copying from it work.
    ok!(cl!(clEnqueueCopyImage(q, img, other, o, o, r, 0, null(), null_mut())));
    let mut out = vec![0u8; bytes.len()];
    read_into(&env, other, o, r, out.as_mut_ptr().cast());
    assert_eq!(out, bytes);

    // Kernels take it as a read_only argument only.
    let p = build(
        &env,
        "kernel void copy(read_only image2d_t src, write_only image2d_t dst, read_write image2d_t rw) {
             int2 c = (int2)(get_global_id(0), get_global_id(1));
             write_imageui(dst, c, read_imageui(src, c) + read_imageui(rw, c));
         }",
        "-cl-std=CL3.0",
    );
    let k = kernel(p, "copy");
    set_arg(k, 0, &img);
    for i in [1, 2] {
        err!(
            CL_INVALID_ARG_VALUE,
            cl!(clSetKernelArg(k, i, std::mem::size_of::<cl_mem>(), (&img as *const cl_mem).cast()))
        );
    }
    for m in [img, other] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseMemObject(buf)));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const IMAGE_BLOCKS: &str = r#"
kernel void image_blocks(read_only image2d_t src, write_only image2d_t dst, global uint *out) {
    uint n = get_max_sub_group_size();
    uint sg = get_sub_group_id() + get_num_sub_groups() * get_group_id(0);
    int2 at = (int2)((int)(sg % (64 / n) * n * 4), (int)(sg / (64 / n) * 2));
    uint2 v = intel_sub_group_block_read2(src, at);
    size_t i = get_global_id(0);
    out[3 * i] = v.x;
    out[3 * i + 1] = v.y;
    out[3 * i + 2] = intel_sub_group_block_read(src, (int2)(1 << 20, 0)) + 7u;
    intel_sub_group_block_write2(dst, at, v + 1u);
}
"#;

/// cl_intel_subgroups' block reads and writes of 2D images: a sub-group's work-items
/// read or write consecutive 32-bit values of rows taken as raw memory (x in bytes);
/// outside the image a read gives 0 and nothing faults.
#[test]
fn intel_sub_group_block_reads_and_writes_of_images() {
    let env = Env::new();
    let (w, h) = (64usize, 8usize);
    let f = fmt(CL_R, CL_UNSIGNED_INT32);
    let d = desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
    let texels: Vec<u32> = (0..(w * h) as u32).map(|i| i.wrapping_mul(0x9e37_79b9) >> 3).collect();
    let src = image(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f, &d, texels.as_ptr() as *mut c_void);
    let dst = image(&env, CL_MEM_WRITE_ONLY, &f, &d, null_mut());
    let p = build(&env, IMAGE_BLOCKS, "");
    let k = kernel(p, "image_blocks");
    let total = w * h / 2;
    let out = env.buffer(0, total * 3 * 4, null_mut());
    set_arg(k, 0, &src);
    set_arg(k, 1, &dst);
    set_arg(k, 2, &out);
    run(&env, k, &[total], Some(&[64]));
    let got = read_as::<u32>(&env, out, total * 3);
    let n = 8;
    for i in 0..total {
        let (sg, l) = (i / n, i % n);
        let (x, y) = (sg % (w / n) * n + l, sg / (w / n) * 2);
        assert_eq!(got[3 * i..3 * i + 3], [texels[y * w + x], texels[(y + 1) * w + x], 7], "work-item {i}");
    }
    let mut back = vec![0u32; w * h];
    let (origin, region) = ([0usize; 3], [w, h, 1]);
    read_into(&env, dst, origin.as_ptr(), region.as_ptr(), back.as_mut_ptr().cast());
    assert_eq!(back, texels.iter().map(|t| t + 1).collect::<Vec<_>>());
    for m in [src, dst, out] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}
