//! Builds of programs shaped like applications': a cold `clBuildProgram` plus the first
//! launch of each kernel used (some platforms generate a kernel's code only then), for
//! programs of 1, 16 and 56 kernels shaped like an image editor's (image reads through
//! samplers, colour conversions, neighbourhood loops, a reduction in `__local` memory),
//! the 56-kernel one again with only 4 kernels launched (what an application pays at its
//! start when it creates every kernel and runs a few), and a hash tool's program: six
//! kernels of a thousand unrolled rounds each, 10.5 MB of unoptimised IR, one launched.
//!
//! Every program is new to every platform's cache: its kernels carry a number no earlier
//! run used, in their code (some platforms cache compiled kernels by their code).

use std::fmt::Write;
use std::time::Instant;

use crate::cl;
use crate::cl::*;
use crate::session::{arg, check, Session};

pub const METRICS: &[(&str, &str, bool)] = &[
    ("build1_ms", "cold build + first launch: 1-kernel image program, ms", false),
    ("build16_ms", "  16-kernel image program, every kernel launched, ms", false),
    ("build56_ms", "  56-kernel image program, every kernel launched, ms", false),
    ("build56_four_ms", "  56-kernel image program, 4 kernels launched, ms", false),
    ("build_unrolled_ms", "  hash tool's program (10 MB of IR), 1 of 6 kernels launched, ms", false),
];

/// The helpers every image program shares: colour conversions and a tone curve.
const PRELUDE: &str = "
constant sampler_t sampleri = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
constant sampler_t samplerf = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;
static inline float lab_f(float x) { return x > 0.008856f ? cbrt(x) : 7.787f * x + 0.137931f; }
static inline float4 rgb_to_lab(float4 c) {
  float4 xyz = (float4)(0.4124f*c.x + 0.3576f*c.y + 0.1805f*c.z, 0.2126f*c.x + 0.7152f*c.y + 0.0722f*c.z,
                        0.0193f*c.x + 0.1192f*c.y + 0.9505f*c.z, c.w);
  float fx = lab_f(xyz.x), fy = lab_f(xyz.y), fz = lab_f(xyz.z);
  return (float4)(116.f*fy - 16.f, 500.f*(fx - fy), 200.f*(fy - fz), c.w);
}
static inline float4 lab_to_rgb(float4 l) {
  float fy = (l.x + 16.f)/116.f, fx = fy + l.y/500.f, fz = fy - l.z/200.f;
  float4 xyz = (float4)(fx*fx*fx, fy*fy*fy, fz*fz*fz, l.w);
  return (float4)(3.2406f*xyz.x - 1.5372f*xyz.y - 0.4986f*xyz.z, -0.9689f*xyz.x + 1.8758f*xyz.y + 0.0415f*xyz.z,
                  0.0557f*xyz.x - 0.2040f*xyz.y + 1.0570f*xyz.z, l.w);
}
inline float curve(float x, float g) { return x > 0.04045f ? pow((x + 0.055f) / 1.055f, g) : x / 12.92f; }
";

/// The six kernel shapes, by `i % 6`; `u` makes the code unique.
fn image_kernel(i: usize, u: u64) -> String {
    let head = |params: &str| format!("kernel void k{i}({params})\n{{ int x = get_global_id(0), y = get_global_id(1);");
    let img = "read_only image2d_t in, write_only image2d_t out, int w, int h";
    match i % 6 {
        0 => format!(
            "{} if(x >= w || y >= h) return;
  float4 p = read_imagef(in, sampleri, (int2)(x, y));
  p.x = curve(p.x, g + {i}.f); p.y = curve(p.y, g); p.z = curve(p.z, g + {u}.f);
  write_imagef(out, (int2)(x, y), lab_to_rgb(rgb_to_lab(p) * (float4)(1.f, 0.9f, 0.9f, 1.f))); }}\n",
            head(&format!("{img}, float g"))
        ),
        1 => format!(
            "{} if(x >= w || y >= h) return;
  float4 sum = 0.f; float ws = 0.f;
  for(int j = -2; j <= 2; j++) for(int i = -2; i <= 2; i++) {{
    float4 q = read_imagef(in, sampleri, (int2)(x + i, y + j)); float k = wt[(j+2)*5 + i+2] * {i}.5f;
    sum += k * q; ws += k; }}
  write_imagef(out, (int2)(x, y), sum / (ws + {u}.f)); }}\n",
            head(&format!("{img}, global const float *wt"))
        ),
        2 => format!(
            "{} if(x >= w || y >= h) return;
  float2 pt = ((float2)(x, y) + 0.5f) * scale;
  float4 a = read_imagef(in, samplerf, pt), b = read_imagef(in, samplerf, pt + (float2)(0.5f, 0.f));
  float4 c = read_imagef(in, samplerf, pt + (float2)(0.f, 0.5f));
  float4 l = rgb_to_lab(0.5f*a + 0.25f*(b + c));
  l.x = clamp(l.x * {i}.01f, 0.f, {u}.f);
  write_imagef(out, (int2)(x, y), lab_to_rgb(l)); }}\n",
            head(&format!("{img}, float2 scale"))
        ),
        3 => format!(
            "{} if(x >= w || y >= h) return;
  float4 acc = 0.f;
  for(int j = max(0, y - r); j < min(h, y + r + 1); j++)
    for(int i = max(0, x - r); i < min(w, x + r + 1); i++)
      acc += in[j*w + i] * exp(-(float)((i-x)*(i-x) + (j-y)*(j-y)) / {i}.5f);
  out[y*w + x] = acc + {u}.f; }}\n",
            head("global const float4 *in, global float4 *out, int w, int h, int r")
        ),
        4 => format!(
            "{} int l = get_local_id(0), ls = get_local_size(0);
  tile[l] = x < n ? in[x] : {u}.f; barrier(CLK_LOCAL_MEM_FENCE);
  for(int s = ls / 2; s > 0; s >>= 1) {{ if(l < s) tile[l] += tile[l + s] * {i}.001f; barrier(CLK_LOCAL_MEM_FENCE); }}
  if(l == 0) out[get_group_id(0)] = tile[0]; }}\n",
            head("global const float *in, global float *out, int n, local float *tile")
        ),
        _ => format!(
            "{} if(x >= w || y >= h) return;
  float4 p = read_imagef(in, sampleri, (int2)(x + 1, y)), q = read_imagef(in, sampleri, (int2)(x, y + 1));
  float m = 0.f;
  for(int c = 0; c < 3; c++) m += (((float *)&p)[c] > ((float *)&clip)[c]) ? 1.f : 0.f;
  mask[y*w + x] = m + q.w * {i}.f + {u}.f; }}\n",
            head("read_only image2d_t in, global float *mask, int w, int h, const float4 clip")
        ),
    }
}

/// An image program of `n` kernels.
fn image_program(n: usize, u: u64) -> String {
    (0..n).fold(PRELUDE.to_string(), |mut s, i| {
        s += &image_kernel(i, u);
        s
    })
}

/// The kernels of a hash tool's program: six (attack modes, as such tools ship them),
/// each `rounds` rounds of an ARX mix written out (as their kernels unroll with
/// macros) over a message in private memory. At 1,000 rounds each the program is
/// 10.5 MB of unoptimised IR; an attack runs one of its kernels.
fn unrolled_program(rounds: usize, u: u64) -> String {
    let mut s = String::from(
        "#define MIX(a, b, c, d, m, r) a += b + (m); d = rotate(d ^ a, (uint)(r)); c += d; b = rotate(b ^ c, 7u);\n",
    );
    for (n, name) in UNROLLED_KERNELS.iter().enumerate() {
        let _ = writeln!(
            s,
            "kernel void {name}(global const uint *in, global uint *out) {{\n\
             size_t g = get_global_id(0);\n\
             uint m[16]; for (int i = 0; i < 16; i++) m[i] = in[g * 16 + i];\n\
             uint a = {u}u, b = 0xbb67ae85u, c = 0x3c6ef372u, d = 0xa54ff53au ^ {n}u;"
        );
        for r in 0..rounds {
            let (x, y) = ((r + n) * 7 % 16, r * 11 % 16);
            let _ = writeln!(
                s,
                "MIX(a, b, c, d, m[{x}], {}) MIX(b, c, d, a, m[{y}] ^ 0x{:08x}u, {})",
                r % 31 + 1,
                (r as u64).wrapping_mul(0x9e37_79b9) as u32,
                (r + 5) % 31 + 1
            );
        }
        s += "out[g] = a ^ b ^ c ^ d;\n}\n";
    }
    s
}

/// The unrolled program's kernels, by the names of the modes they run.
const UNROLLED_KERNELS: [&str; 6] = ["m04", "m08", "m16", "s04", "s08", "s16"];

fn image(s: &Session, flags: cl_mem_flags) -> Result<cl_mem, String> {
    let f = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_FLOAT };
    // SAFETY: a plain C struct; zero is "no pitches, no buffer".
    let mut d: cl_image_desc = unsafe { std::mem::zeroed() };
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = 16;
    d.image_height = 16;
    let mut e = 0;
    let m = cl!(clCreateImage(s.context, flags, &f, &d, std::ptr::null_mut(), &mut e));
    check(e, "clCreateImage")?;
    Ok(m)
}

/// The memory objects kernels of every shape run on: 16 x 16 pictures.
struct Objects {
    src: cl_mem,
    dst: cl_mem,
    buf: cl_mem,
    out: cl_mem,
}

/// Builds an image program of `n` kernels and runs `launched` of them once, each kernel
/// created first as applications do at their start; ms.
fn image_build(s: &Session, o: &Objects, n: usize, launched: usize, u: u64) -> Result<f64, String> {
    let t = Instant::now();
    let prog = s.build(&image_program(n, u))?;
    let kernels: Vec<cl_kernel> = (0..n).map(|i| s.kernel(prog, &format!("k{i}"))).collect::<Result<_, _>>()?;
    // The kernels launched are spread over the shapes.
    for (i, &k) in kernels.iter().enumerate().filter(|(i, _)| launched == n || i % (n / launched) == 0).take(launched) {
        let (w, h) = (16i32, 16i32);
        match i % 6 {
            3 | 4 => {
                arg(k, 0, &o.buf)?;
                arg(k, 1, &o.out)?;
            }
            5 => {
                arg(k, 0, &o.src)?;
                arg(k, 1, &o.out)?;
            }
            _ => {
                arg(k, 0, &o.src)?;
                arg(k, 1, &o.dst)?;
            }
        }
        if i % 6 == 4 {
            arg(k, 2, &256i32)?;
            check(cl!(clSetKernelArg(k, 3, 64 * 4, std::ptr::null())), "clSetKernelArg")?;
            s.run(k, &[256], Some(&[64]))?;
            continue;
        }
        arg(k, 2, &w)?;
        arg(k, 3, &h)?;
        match i % 6 {
            0 => arg(k, 4, &2.4f32)?,
            1 => arg(k, 4, &o.buf)?,
            2 => arg(k, 4, &[0.5f32, 0.5])?,
            3 => arg(k, 4, &2i32)?,
            _ => arg(k, 4, &[1.0f32; 4])?,
        }
        s.run(k, &[16, 16], None)?;
    }
    let ms = t.elapsed().as_secs_f64() * 1e3;
    for k in kernels {
        cl!(clReleaseKernel(k));
    }
    cl!(clReleaseProgram(prog));
    Ok(ms)
}

/// The figures, each from one cold build (a second would measure the same thing in a
/// process that has compiled before, which the first-build figure of the main bench
/// covers).
pub fn measure(s: &Session, unique: u64) -> Result<Vec<(String, f64)>, String> {
    if s.device_info(CL_DEVICE_IMAGE_SUPPORT) == 0 {
        return Ok(Vec::new());
    }
    let o = Objects {
        src: image(s, CL_MEM_READ_ONLY)?,
        dst: image(s, CL_MEM_WRITE_ONLY)?,
        buf: s.buffer(16 * 16 * 16, Some(&[0.25f32; 16 * 16 * 4]))?,
        out: s.buffer(16 * 16 * 16, None)?,
    };
    let mut out = Vec::new();
    for (key, n, launched) in
        [("build1_ms", 1, 1), ("build16_ms", 16, 16), ("build56_ms", 56, 56), ("build56_four_ms", 56, 4)]
    {
        out.push((key.to_string(), image_build(s, &o, n, launched, unique.wrapping_add(n as u64 + launched as u64))?));
    }
    let t = Instant::now();
    let prog = s.build(&unrolled_program(1000, unique))?;
    let k = s.kernel(prog, UNROLLED_KERNELS[0])?;
    arg(k, 0, &o.buf)?;
    arg(k, 1, &o.out)?;
    s.run(k, &[16], None)?;
    out.push(("build_unrolled_ms".into(), t.elapsed().as_secs_f64() * 1e3));
    cl!(clReleaseKernel(k));
    cl!(clReleaseProgram(prog));
    for m in [o.src, o.dst, o.buf, o.out] {
        cl!(clReleaseMemObject(m));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    /// The unrolled program's source is what sizes its IR: over 10 MB unoptimised
    /// (clang's IR runs near 30 bytes per source byte for this code).
    #[test]
    fn the_programs_have_their_sizes() {
        assert_eq!(super::image_program(56, 1).matches("kernel void").count(), 56);
        let big = super::unrolled_program(1000, 1);
        assert!(big.len() > 350_000, "{}", big.len());
    }
}
