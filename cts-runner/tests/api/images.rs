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
    ok!(e);
    m
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
        ok!(cl!(clEnqueueReadImage(
            env.queue,
            img,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            back.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        )));
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
