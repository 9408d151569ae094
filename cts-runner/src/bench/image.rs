//! Images against buffers: a 5x5 box blur of a 2048 x 2048 RGBA8 picture read through a
//! sampler (clamp to edge, as video filters read their frames) and the same blur over
//! a `uchar4` buffer with the clamping and conversions written out, and a bilinear
//! downscale through a normalised linear sampler. The image read should cost little
//! more than the buffer read it replaces.

use crate::cl;
use crate::cl::*;
use crate::session::{arg, check, Session};

pub const METRICS: &[(&str, &str, bool)] = &[
    ("blur_image_mpix", "5x5 blur via images (sampler), Mpixel/s", true),
    ("blur_buffer_mpix", "5x5 blur via buffers, Mpixel/s", true),
    ("blur_image_per_buffer", "  image blur time / buffer blur time", false),
    ("scale_linear_mpix", "bilinear downscale via a linear sampler, Mpixel/s", true),
];

pub const SOURCE: &str = r#"
const sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
kernel void blur_image(read_only image2d_t src, write_only image2d_t dst) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 sum = (float4)(0.0f);
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
            sum += read_imagef(src, edge, (int2)(x + dx, y + dy));
    write_imagef(dst, (int2)(x, y), sum * (1.0f / 25.0f));
}
kernel void blur_buffer(global const uchar4 *src, global uchar4 *dst, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 sum = (float4)(0.0f);
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            int sx = clamp(x + dx, 0, w - 1), sy = clamp(y + dy, 0, h - 1);
            sum += convert_float4(src[sy * w + sx]) * (1.0f / 255.0f);
        }
    dst[y * w + x] = convert_uchar4_sat_rte(sum * (255.0f / 25.0f));
}
const sampler_t bilinear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;
kernel void scale(read_only image2d_t src, write_only image2d_t dst) {
    int x = get_global_id(0), y = get_global_id(1);
    float2 at = ((float2)(x, y) + 0.5f) / convert_float2(get_image_dim(dst));
    write_imagef(dst, (int2)(x, y), read_imagef(src, bilinear, at));
}
"#;

fn image2d(s: &Session, flags: cl_mem_flags, w: usize, h: usize, host: Option<&mut [u8]>) -> Result<cl_mem, String> {
    let f = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_UNORM_INT8 };
    // SAFETY: a plain C struct; zero is "no pitches, no buffer".
    let mut d: cl_image_desc = unsafe { std::mem::zeroed() };
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = w;
    d.image_height = h;
    let (flags, ptr) = match host {
        Some(b) => (flags | CL_MEM_COPY_HOST_PTR, b.as_mut_ptr().cast()),
        None => (flags, std::ptr::null_mut()),
    };
    let mut e = 0;
    let m = cl!(clCreateImage(s.context, flags, &f, &d, ptr, &mut e));
    check(e, "clCreateImage")?;
    Ok(m)
}

/// The figures, or none on a platform without images.
pub fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    if s.device_info(CL_DEVICE_IMAGE_SUPPORT) == 0 {
        return Ok(Vec::new());
    }
    let prog = s.build(SOURCE)?;
    let (w, h) = (2048usize, 2048usize);
    let mut pixels: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 251) as u8).collect();
    let src = image2d(s, CL_MEM_READ_ONLY, w, h, Some(&mut pixels))?;
    let dst = image2d(s, CL_MEM_WRITE_ONLY, w, h, None)?;
    let bsrc = s.buffer_of(&pixels)?;
    let bdst = s.buffer_of(&pixels)?;
    let mut out = Vec::new();
    let ki = s.kernel(prog, "blur_image")?;
    arg(ki, 0, &src)?;
    arg(ki, 1, &dst)?;
    let ti = s.timed(5, ki, &[w, h], None)?;
    let kb = s.kernel(prog, "blur_buffer")?;
    arg(kb, 0, &bsrc)?;
    arg(kb, 1, &bdst)?;
    arg(kb, 2, &(w as i32))?;
    arg(kb, 3, &(h as i32))?;
    let tb = s.timed(5, kb, &[w, h], None)?;
    // Both blurs compute the same picture (the buffer's store rounds like the image's).
    let mut from_image = vec![0u8; w * h * 4];
    let (origin, region) = ([0usize; 3], [w, h, 1]);
    check(
        cl!(clEnqueueReadImage(
            s.queue(),
            dst,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            from_image.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut()
        )),
        "clEnqueueReadImage",
    )?;
    let from_buffer = s.read(bdst, w * h * 4)?;
    let differ = from_image.iter().zip(&from_buffer).filter(|(a, b)| a.abs_diff(**b) > 1).count();
    if differ > 0 {
        return Err(format!("the image and buffer blurs differ in {differ} bytes"));
    }
    out.push(("blur_image_mpix".into(), (w * h) as f64 / ti / 1e6));
    out.push(("blur_buffer_mpix".into(), (w * h) as f64 / tb / 1e6));
    out.push(("blur_image_per_buffer".into(), ti / tb));
    let (sw, sh) = (w * 2 / 3, h * 2 / 3);
    let small = image2d(s, CL_MEM_WRITE_ONLY, sw, sh, None)?;
    let ks = s.kernel(prog, "scale")?;
    arg(ks, 0, &src)?;
    arg(ks, 1, &small)?;
    let ts = s.timed(5, ks, &[sw, sh], None)?;
    out.push(("scale_linear_mpix".into(), (sw * sh) as f64 / ts / 1e6));
    for m in [src, dst, bsrc, bdst, small] {
        cl!(clReleaseMemObject(m));
    }
    for k in [ki, kb, ks] {
        cl!(clReleaseKernel(k));
    }
    cl!(clReleaseProgram(prog));
    Ok(out)
}
