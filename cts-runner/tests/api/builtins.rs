//! OpenCL C builtins from FerroCL's library, compared with host computations: math,
//! integer, common, geometric, relational, vload/vstore and conversions.

use crate::common::*;

const SOURCE: &str = r#"
kernel void math(global const float *x, global float *out) {
    size_t i = get_global_id(0);
    float v = x[i];
    global float *o = out + i * 16;
    o[0] = sin(v); o[1] = cos(v); o[2] = exp(v); o[3] = log(fabs(v) + 1.0f);
    o[4] = sqrt(fabs(v)); o[5] = pow(fabs(v), 1.5f); o[6] = atan2(v, 2.0f); o[7] = floor(v);
    o[8] = fmax(v, 0.5f); o[9] = clamp(v, -1.0f, 1.0f); o[10] = mad(v, 2.0f, 1.0f); o[11] = rsqrt(fabs(v) + 1.0f);
    o[12] = hypot(v, 3.0f); o[13] = fmod(v, 0.7f); o[14] = mix(1.0f, 3.0f, 0.25f); o[15] = sign(v);
}

kernel void vectors(global const float *in, global float *out) {
    float4 a = vload4(0, in), b = vload4(1, in);
    float3 c = vload3(0, in + 8);
    vstore4(sin(a) + b, 0, out);
    out[4] = dot(a, b); out[5] = length(a); out[6] = distance(a, b);
    float3 x = cross(c, (float3)(1.0f, 0.0f, 0.0f));
    vstore3(x, 0, out + 7);
    float4 n = normalize(b);
    vstore4(n, 0, out + 10);
    vstore4(select(a, b, isgreater(a, b)), 0, out + 14);
    out[18] = any(isless(a, b)); out[19] = all(isless(a, (float4)100.0f));
}

kernel void integers(global const int *in, global int *out) {
    int a = in[0], b = in[1];
    out[0] = abs(a); out[1] = abs_diff(a, b); out[2] = add_sat(a, b); out[3] = sub_sat(a, b);
    out[4] = hadd(a, b); out[5] = rhadd(a, b); out[6] = clz(b); out[7] = popcount(a);
    out[8] = mul_hi(a, b); out[9] = rotate(b, 7); out[10] = max(a, b); out[11] = min(a, b);
    out[12] = upsample((short)3, (ushort)4); out[13] = mad24(b, 3, 4); out[14] = clamp(a, -5, 5);
    out[15] = mad_sat(a, b, a);
    long l = (long)a * 1000000007L;
    out[16] = (int)(mul_hi(l, l) & 0x7fffffff);
    int4 v = (int4)(a, b, -a, -b);
    int4 r = add_sat(v, (int4)(INT_MAX));
    out[17] = r.x; out[18] = r.y; out[19] = r.z; out[20] = r.w;
}

kernel void conversions(global const float *f, global int *i, global uchar *c, global float *back) {
    size_t k = get_global_id(0);
    float v = f[k];
    i[k * 4 + 0] = convert_int(v);
    i[k * 4 + 1] = convert_int_rte(v);
    i[k * 4 + 2] = convert_int_sat_rtp(v);
    i[k * 4 + 3] = convert_int_sat_rtn(v);
    c[k] = convert_uchar_sat(v);
    back[k] = convert_float(convert_short_sat(v));
}

kernel void misc(global const float *in, global int *out, global half *h) {
    int4 a = (int4)(10, 20, 30, 40), b = (int4)(50, 60, 70, 80);
    int8 s = shuffle(a, (uint8)(3, 2, 1, 0, 7, 6, 5, 4));
    int4 t = shuffle2(a, b, (uint4)(7, 0, 5, 2));
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    vstore8(s, 0, out);
    vstore4(t, 2, out);
    for (int i = 0; i < 4; i++) {
        vstore_half_rte(in[i], i * 4 + 0, h);
        vstore_half_rtz(in[i], i * 4 + 1, h);
        vstore_half_rtp(in[i], i * 4 + 2, h);
        vstore_half_rtn(in[i], i * 4 + 3, h);
    }
    out[12] = (int)(vload_half(0, h) * 1000.0f);
}
"#;

fn env_and_program() -> (Env, cl_program) {
    let env = Env::new();
    let p = build(&env, SOURCE, "");
    (env, p)
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0) || (a.is_nan() && b.is_nan())
}

#[test]
fn math_functions() {
    let (env, p) = env_and_program();
    let k = kernel(p, "math");
    let xs: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) * 0.37).collect();
    let (bx, bo) = (buffer_of(&env, &xs), env.buffer(0, 64 * 16 * 4, null_mut()));
    set_arg(k, 0, &bx);
    set_arg(k, 1, &bo);
    run(&env, k, &[64], None);
    let out: Vec<f32> = read_as(&env, bo, 64 * 16);
    for (i, &v) in xs.iter().enumerate() {
        let want = [
            v.sin(),
            v.cos(),
            v.exp(),
            (v.abs() + 1.0).ln(),
            v.abs().sqrt(),
            v.abs().powf(1.5),
            v.atan2(2.0),
            v.floor(),
            v.max(0.5),
            v.clamp(-1.0, 1.0),
            v * 2.0 + 1.0,
            1.0 / (v.abs() + 1.0).sqrt(),
            v.hypot(3.0),
            v % 0.7,
            1.5,
            if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            },
        ];
        for (j, &w) in want.iter().enumerate() {
            assert!(close(out[i * 16 + j], w), "x={v} function #{j}: got {} want {w}", out[i * 16 + j]);
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn vector_geometric_relational() {
    let (env, p) = env_and_program();
    let k = kernel(p, "vectors");
    let input: [f32; 12] = [1.0, -2.0, 3.0, 0.5, 4.0, 1.0, -1.0, 2.0, 0.0, 2.0, 5.0, 9.0];
    let (bi, bo) = (buffer_of(&env, &input), env.buffer(0, 20 * 4, null_mut()));
    set_arg(k, 0, &bi);
    set_arg(k, 1, &bo);
    run(&env, k, &[1], None);
    let o: Vec<f32> = read_as(&env, bo, 20);
    let (a, b) = (&input[0..4], &input[4..8]);
    for j in 0..4 {
        assert!(close(o[j], a[j].sin() + b[j]));
    }
    let dot: f32 = (0..4).map(|j| a[j] * b[j]).sum();
    assert!(close(o[4], dot));
    assert!(close(o[5], a.iter().map(|v| v * v).sum::<f32>().sqrt()));
    assert!(close(o[6], (0..4).map(|j| (a[j] - b[j]).powi(2)).sum::<f32>().sqrt()));
    // cross((0,2,5), (1,0,0)) = (0, 5, -2)
    assert_eq!(&o[7..10], &[0.0, 5.0, -2.0]);
    let nb = b.iter().map(|v| v * v).sum::<f32>().sqrt();
    for j in 0..4 {
        assert!(close(o[10 + j], b[j] / nb));
        assert_eq!(o[14 + j], if a[j] > b[j] { b[j] } else { a[j] });
    }
    assert_eq!((o[18], o[19]), (1.0, 1.0));
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn integer_functions() {
    let (env, p) = env_and_program();
    let k = kernel(p, "integers");
    for (a, b) in [(-7i32, 19i32), (i32::MAX - 3, 100), (i32::MIN + 5, -100), (123456, -654321)] {
        let (bi, bo) = (buffer_of(&env, &[a, b]), env.buffer(0, 21 * 4, null_mut()));
        set_arg(k, 0, &bi);
        set_arg(k, 1, &bo);
        run(&env, k, &[1], None);
        let o: Vec<i32> = read_as(&env, bo, 21);
        let sat = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        let l = a as i64 * 1_000_000_007;
        let want = [
            a.unsigned_abs() as i32,
            (a as i64 - b as i64).unsigned_abs() as i32,
            sat(a as i64 + b as i64),
            sat(a as i64 - b as i64),
            ((a as i64 + b as i64) >> 1) as i32,
            ((a as i64 + b as i64 + 1) >> 1) as i32,
            b.leading_zeros() as i32,
            a.count_ones() as i32,
            ((a as i64 * b as i64) >> 32) as i32,
            b.rotate_left(7),
            a.max(b),
            a.min(b),
            (3 << 16) | 4,
            b.wrapping_mul(3).wrapping_add(4),
            a.clamp(-5, 5),
            sat(a as i64 * b as i64 + a as i64),
            ((((l as i128) * (l as i128)) >> 64) as i64 & 0x7fffffff) as i32,
            sat(a as i64 + i32::MAX as i64),
            sat(b as i64 + i32::MAX as i64),
            sat(-(a as i64) + i32::MAX as i64),
            sat(-(b as i64) + i32::MAX as i64),
        ];
        assert_eq!(o, want, "a={a} b={b}");
        for m in [bi, bo] {
            ok!(cl!(clReleaseMemObject(m)));
        }
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn conversions_round_and_saturate() {
    let (env, p) = env_and_program();
    let k = kernel(p, "conversions");
    let fs: Vec<f32> =
        vec![0.5, 1.5, 2.5, -0.5, -1.5, 2.7, -2.7, 300.0, -300.0, 1e10, -1e10, f32::NAN, 40000.0, 255.4, 0.0, -0.0];
    let n = fs.len();
    let (bf, bi, bc, bb) = (
        buffer_of(&env, &fs),
        env.buffer(0, n * 16, null_mut()),
        env.buffer(0, n, null_mut()),
        env.buffer(0, n * 4, null_mut()),
    );
    for (j, m) in [bf, bi, bc, bb].iter().enumerate() {
        set_arg(k, j as cl_uint, m);
    }
    run(&env, k, &[n], None);
    let ints: Vec<i32> = read_as(&env, bi, n * 4);
    let chars: Vec<u8> = read_as(&env, bc, n);
    let back: Vec<f32> = read_as(&env, bb, n);
    let sat = |v: f64| if v.is_nan() { 0 } else { v.clamp(i32::MIN as f64, i32::MAX as f64) as i32 };
    for (j, &v) in fs.iter().enumerate() {
        let d = v as f64;
        if d.is_finite() && d.abs() < 2e9 {
            assert_eq!(ints[j * 4], d.trunc() as i32, "convert_int({v})");
            assert_eq!(ints[j * 4 + 1], d.round_ties_even() as i32, "convert_int_rte({v})");
        }
        assert_eq!(ints[j * 4 + 2], sat(d.ceil()), "convert_int_sat_rtp({v})");
        assert_eq!(ints[j * 4 + 3], sat(d.floor()), "convert_int_sat_rtn({v})");
        let uc = if v.is_nan() { 0 } else { v.trunc().clamp(0.0, 255.0) as u8 };
        assert_eq!(chars[j], uc, "convert_uchar_sat({v})");
        let sh = if v.is_nan() { 0.0 } else { v.trunc().clamp(-32768.0, 32767.0) };
        assert_eq!(back[j], sh, "convert_float(convert_short_sat({v}))");
    }
    for m in [bf, bi, bc, bb] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// IEEE half bits of `x` rounded as asked (0 nearest, 1 toward zero, 2 up, 3 down),
/// for normal values in half's range.
fn to_half_bits(x: f32, mode: u8) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mant = bits & 0x7f_ffff;
    let (mut h, rest) = ((exp as u32) << 10 | (mant >> 13), mant & 0x1fff);
    let up = match mode {
        0 => rest > 0x1000 || (rest == 0x1000 && h & 1 == 1),
        1 => false,
        2 => rest != 0 && sign == 0,
        _ => rest != 0 && sign != 0,
    };
    if up {
        h += 1;
    }
    sign | h as u16
}

#[test]
fn shuffles_fences_and_half_stores() {
    let (env, p) = env_and_program();
    let k = kernel(p, "misc");
    let input = [1.0001f32, -2.3456, 3.7071, -0.33333];
    let (bi, bo, bh) = (buffer_of(&env, &input), env.buffer(0, 13 * 4, null_mut()), env.buffer(0, 16 * 2, null_mut()));
    set_arg(k, 0, &bi);
    set_arg(k, 1, &bo);
    set_arg(k, 2, &bh);
    run(&env, k, &[1], None);
    let o: Vec<i32> = read_as(&env, bo, 13);
    assert_eq!(&o[..8], &[40, 30, 20, 10, 40, 30, 20, 10]);
    assert_eq!(&o[8..12], &[80, 10, 60, 30]);
    let h: Vec<u16> = read_as(&env, bh, 16);
    for (i, &x) in input.iter().enumerate() {
        for mode in 0..4u8 {
            assert_eq!(h[i * 4 + mode as usize], to_half_bits(x, mode), "vstore_half of {x}, mode {mode}");
        }
    }
    assert_eq!(o[12], 1000, "vload_half(1.0001 rounded to half) * 1000");
    for m in [bi, bo, bh] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const EXACT: &str = r#"
kernel void exact(global float *o, global double *d) {
    o[0] = sinpi(1.0f); o[1] = sinpi(-2.0f); o[2] = cospi(0.5f); o[3] = tanpi(0.5f);
    o[4] = tanpi(1.5f); o[5] = tanpi(1.0f); o[6] = cospi(1.0f); o[7] = sinpi(0.5f);
    o[8] = pown(-1.0f, 2147483647); o[9] = rootn(-1.0f, 2147483647); o[10] = rootn(-8.0f, 3);
    o[11] = rootn(-8.0f, 2); o[12] = rootn(-0.0f, -3); o[13] = sinpi(0.25f); o[14] = tanpi(-2.0f);
    o[15] = sinpi(2.5f);
    vstore4(normalize((float4)(1e-30f, 0.0f, 0.0f, 0.0f)), 0, o + 16);
    vstore2(normalize((float2)(1e-40f, -1e-40f)), 0, o + 20);
    vstore3(normalize((float3)(INFINITY, 1.0f, -INFINITY)), 0, o + 22);
    vstore2(normalize((float2)(NAN, 1.0f)), 0, o + 25);
    o[27] = normalize(-3.0f);
    float16 m = mad((float16)(2.0f), (float16)(3.0f) + (float16)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f,
                    8.0f, 9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f), (float16)(1.0f));
    o[28] = m.s7;
    o[29] = (float)mad24((int16)(1000), (int16)(-7), (int16)(5)).sa;
    o[30] = (float)mul24((int3)(-4000), (int3)(300)).z;
    d[0] = sinpi(1.0); d[1] = pown(-1.0, 2147483647); d[2] = cospi(0.5); d[3] = rootn(-27.0, 3);
}

kernel void outputs(global const float *x, global float *o, global int *e, local float8 *scratch) {
    float8 v = vload8(0, x);
    float8 whole;
    vstore8(fract(v, &whole), 0, o);
    vstore8(whole, 1, o);
    int8 ex;
    vstore8(frexp(v, &ex), 2, o);
    vstore8(ex, 0, e);
    global float4 *g = (global float4 *)(o + 32);
    vstore4(modf(v.lo, g), 0, o + 36);
    *scratch = (float8)0.0f;
    vstore8(sincos(v, scratch), 5, o);
    vstore8(*scratch, 6, o);
    int3 q;
    vstore3(remquo(v.s012, (float3)(0.75f), &q), 0, o + 56);
    vstore3(q, 0, e + 8);
    int16 s;
    float16 l = lgamma_r((float16)(v, -v), &s);
    vstore16(l, 0, o + 64);
    vstore16(s, 0, e + 16);
}
"#;

#[test]
fn pi_functions_roots_and_normalize_give_the_exact_values() {
    let env = Env::new();
    let p = build(&env, EXACT, "");
    let k = kernel(p, "exact");
    let (bo, bd) = (env.buffer(0, 32 * 4, null_mut()), env.buffer(0, 4 * 8, null_mut()));
    set_arg(k, 0, &bo);
    set_arg(k, 1, &bd);
    run(&env, k, &[1], None);
    let o: Vec<f32> = read_as(&env, bo, 31);
    let d: Vec<f64> = read_as(&env, bd, 4);
    let bits = |v: f32| v.to_bits();
    // Exact zeros with the spec's signs, exact ones and infinities.
    assert_eq!(bits(o[0]), 0.0f32.to_bits(), "sinpi(1)");
    assert_eq!(bits(o[1]), (-0.0f32).to_bits(), "sinpi(-2)");
    assert_eq!(bits(o[2]), 0.0f32.to_bits(), "cospi(0.5)");
    assert_eq!(o[3], f32::INFINITY, "tanpi(0.5)");
    assert_eq!(o[4], f32::NEG_INFINITY, "tanpi(1.5)");
    assert_eq!(bits(o[5]), (-0.0f32).to_bits(), "tanpi(1): copysign(0, -1)");
    assert_eq!(o[6], -1.0, "cospi(1)");
    assert_eq!(o[7], 1.0, "sinpi(0.5)");
    assert_eq!(o[8], -1.0, "pown(-1, 2147483647)");
    assert_eq!(o[9], -1.0, "rootn(-1, 2147483647)");
    assert_eq!(o[10], -2.0, "rootn(-8, 3)");
    assert!(o[11].is_nan(), "rootn(-8, 2)");
    assert_eq!(o[12], f32::NEG_INFINITY, "rootn(-0, -3)");
    assert!((o[13] - std::f32::consts::FRAC_1_SQRT_2).abs() <= f32::EPSILON, "sinpi(0.25) = {}", o[13]);
    assert_eq!(bits(o[14]), (-0.0f32).to_bits(), "tanpi(-2)");
    assert_eq!(o[15], 1.0, "sinpi(2.5)");
    // normalize scales first: tiny and denormal vectors still have length 1.
    assert_eq!(&o[16..20], &[1.0, 0.0, 0.0, 0.0]);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!((o[20] - h).abs() < 1e-6 && (o[21] + h).abs() < 1e-6, "{:?}", &o[20..22]);
    assert!((o[22] - h).abs() < 1e-6 && o[23] == 0.0 && (o[24] + h).abs() < 1e-6, "{:?}", &o[22..25]);
    assert!(o[25].is_nan() && o[26].is_nan(), "a NaN anywhere gives NaNs");
    assert_eq!(o[27], -1.0);
    // Vector mad/mad24/mul24 (one vector expression each).
    assert_eq!(o[28], 2.0 * 10.0 + 1.0, "mad(float16).s7");
    assert_eq!(o[29], -6995.0, "mad24(int16)");
    assert_eq!(o[30], -1_200_000.0, "mul24(int3)");
    assert_eq!(d[0].to_bits(), 0.0f64.to_bits());
    assert_eq!(d[1], -1.0);
    assert_eq!(d[2].to_bits(), 0.0f64.to_bits());
    assert_eq!(d[3], -3.0);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

// Division and sqrt, scalar and vector, against the host's IEEE 754 operations: the
// device claims CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, which the option asks for.
const ROUNDED: &str = r#"
kernel void rounded(global const float *x, global const float *y, global float *o) {
    size_t i = get_global_id(0);
    o[4 * i] = x[i] / y[i];
    o[4 * i + 1] = sqrt(x[i]);
    float4 q = vload4(i / 4, x) / vload4(i / 4, y), r = sqrt(vload4(i / 4, x));
    o[4 * i + 2] = q[i % 4];
    o[4 * i + 3] = r[i % 4];
}
kernel void rsqrts(global const float *x, global float *o) {
    size_t i = get_global_id(0);
    o[2 * i] = rsqrt(x[i]);
    float8 r = rsqrt(vload8(i / 8, x));
    o[2 * i + 1] = r[i % 8];
}
"#;

#[test]
fn divide_and_sqrt_are_correctly_rounded() {
    let env = Env::new();
    let config: cl_device_fp_config = device_info(env.device, CL_DEVICE_SINGLE_FP_CONFIG);
    assert_ne!(config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, 0, "{config:#x}");
    let p = build(&env, ROUNDED, "-cl-fp32-correctly-rounded-divide-sqrt");
    let k = kernel(p, "rounded");
    // Positive floats from every binade, denormals included, from a fixed generator.
    let n = 1 << 16;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        f32::from_bits((state as u32) & 0x7f7f_ffff)
    };
    let (x, y): (Vec<f32>, Vec<f32>) = (0..n).map(|_| (next(), next())).unzip();
    let (bx, by) = (buffer_of(&env, &x), buffer_of(&env, &y));
    let bo = env.buffer(0, n * 16, null_mut());
    set_arg(k, 0, &bx);
    set_arg(k, 1, &by);
    set_arg(k, 2, &bo);
    run(&env, k, &[n], None);
    let o: Vec<f32> = read_as(&env, bo, n * 4);
    for i in 0..n {
        let (q, r) = ((x[i] / y[i]).to_bits(), x[i].sqrt().to_bits());
        assert_eq!(o[4 * i].to_bits(), q, "{} / {}", x[i], y[i]);
        assert_eq!(o[4 * i + 1].to_bits(), r, "sqrt({})", x[i]);
        assert_eq!(o[4 * i + 2].to_bits(), q, "float4: {} / {}", x[i], y[i]);
        assert_eq!(o[4 * i + 3].to_bits(), r, "float4: sqrt({})", x[i]);
    }
    for m in [bx, by, bo] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// `rsqrt` within the spec's 2 ulp (an estimate and a Newton step with AVX-512, a
/// division by a square root elsewhere), exact at the special values, and the same bits
/// from a scalar call as from a float8 one, so a work-item's result does not depend on
/// whether it ran in a SIMD chunk or alone.
#[test]
fn rsqrt_is_within_two_ulp_and_the_same_in_every_width() {
    let env = Env::new();
    let p = build(&env, ROUNDED, "");
    let k = kernel(p, "rsqrts");
    let n = 1 << 16;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    // Random positive floats (denormals among them), then the special values.
    let mut x: Vec<f32> = (0..n - 8)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            f32::from_bits((state as u32) & 0x7f7f_ffff)
        })
        .collect();
    x.extend([0.0, -0.0, f32::INFINITY, -1.0, f32::NAN, f32::MIN_POSITIVE / 4.0, f32::MAX, -f32::INFINITY]);
    let bx = buffer_of(&env, &x);
    let bo = env.buffer(0, n * 8, null_mut());
    set_arg(k, 0, &bx);
    set_arg(k, 1, &bo);
    run(&env, k, &[n], None);
    let o: Vec<f32> = read_as(&env, bo, n * 2);
    for i in 0..n {
        let (got, wide) = (o[2 * i], o[2 * i + 1]);
        assert_eq!(got.to_bits(), wide.to_bits(), "rsqrt({}): float {got}, float8 {wide}", x[i]);
        let want = 1.0 / (x[i] as f64).sqrt();
        match want {
            w if w.is_nan() => assert!(got.is_nan(), "rsqrt({}) = {got}", x[i]),
            w if w.is_infinite() || w == 0.0 => assert_eq!(got as f64, w, "rsqrt({})", x[i]),
            w => {
                // OpenCL C 3.0, 7.5.1: 2 ulp (of float, at the correctly rounded value).
                let f = w as f32;
                let ulp = (f32::from_bits(f.to_bits() + 1) - f) as f64;
                assert!((got as f64 - w).abs() <= 2.0 * ulp, "rsqrt({}) = {got}, want {w}", x[i]);
            }
        }
    }
    for m in [bx, bo] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

// The C library's, as host references (std links libm).
extern "C" {
    fn lgammaf_r(x: f32, sign: *mut i32) -> f32;
    fn remquof(x: f32, y: f32, quo: *mut i32) -> f32;
}

#[test]
fn vector_functions_with_pointer_outputs_in_every_address_space() {
    let env = Env::new();
    let p = build(&env, EXACT, "");
    let k = kernel(p, "outputs");
    let x: Vec<f32> = vec![-2.75, -0.5, 0.3, 1.0, 2.5, 7.125, -13.5, 100.25];
    let (bx, bo, be) = (buffer_of(&env, &x), env.buffer(0, 80 * 4, null_mut()), env.buffer(0, 32 * 4, null_mut()));
    set_arg(k, 0, &bx);
    set_arg(k, 1, &bo);
    set_arg(k, 2, &be);
    ok!(cl!(clSetKernelArg(k, 3, 32, null())));
    run(&env, k, &[1], None);
    let o: Vec<f32> = read_as(&env, bo, 80);
    let e: Vec<i32> = read_as(&env, be, 32);
    for (i, &v) in x.iter().enumerate() {
        assert_eq!(o[8 + i], v.floor(), "fract's whole part of {v}");
        assert_eq!(o[i], (v - v.floor()).min(0.99999994), "fract({v})");
        // frexp: v = m * 2^e with 0.5 <= |m| < 1.
        assert!(o[16 + i].abs() >= 0.5 && o[16 + i].abs() < 1.0, "frexp({v}) mantissa {}", o[16 + i]);
        assert_eq!(o[16 + i] * 2f32.powi(e[i]), v, "frexp({v})");
        assert!(close(o[40 + i], v.sin()) && close(o[48 + i], v.cos()), "sincos({v}) into local memory");
        let mut sign = 0;
        // SAFETY: plain libm call with a valid out-pointer.
        let want = unsafe { lgammaf_r(v, &mut sign) };
        assert!(close(o[64 + i], want) && e[16 + i] == sign, "lgamma_r({v}): {} {}", o[64 + i], e[16 + i]);
    }
    for i in 0..4 {
        assert_eq!(o[32 + i], x[i].trunc(), "modf into global memory");
        assert_eq!(o[36 + i], x[i] - x[i].trunc());
    }
    for i in 0..3 {
        let mut quo = 0;
        // SAFETY: plain libm call with a valid out-pointer.
        let want = unsafe { remquof(x[i], 0.75, &mut quo) };
        assert_eq!(o[56 + i], want, "remquo({}, 0.75)", x[i]);
        assert_eq!(e[8 + i] & 0x7f, quo & 0x7f, "remquo's quotient bits");
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

const PRINTF: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global int *o) {
    size_t i = get_global_id(0);
    if (i == 0) {
        float4 f = (float4)(1.5f, -2.25f, 3.0f, 4.125f);
        printf("f=%v4hlf i=%v2hld x=%#v2hlx c=%v3hhu l=%v2ld d=%.2v2lf h=%v2hf\n", f, (int2)(-7, 42),
               (int2)(-7, 42), (uchar3)(1, 2, 255), (long2)(1L << 40, -3), (double2)(0.5, 1e10),
               (half2)(0.5h, 2.0h));
        printf("s=%s n=%d %5.1f%% %c %lu %x\n", "str", 12, 3.14159f, 'A', 18446744073709551615UL, 255u);
    }
    o[i] = printf("item %d:%v2hhd\n", (int)i, (char2)((char)i, (char)-i));
}
"#;

/// Child: runs the printf kernel; its output goes to this process's standard output.
#[test]
#[ignore]
fn child_prints() {
    let env = Env::new();
    let p = build(&env, PRINTF, "");
    let k = kernel(p, "k");
    let o = env.buffer(0, 64 * 4, null_mut());
    set_arg(k, 0, &o);
    run(&env, k, &[64], Some(&[16]));
    let status: Vec<i32> = read_as(&env, o, 64);
    assert!(status.iter().all(|&s| s == 0), "printf returns 0: {status:?}");
}

#[test]
fn printf_prints_vector_and_c_conversions_one_line_per_call() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "builtins::child_prints", "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains(
            "f=1.500000,-2.250000,3.000000,4.125000 i=-7,42 x=0xfffffff9,0x2a c=1,2,255 \
             l=1099511627776,-3 d=0.50,10000000000.00 h=0.500000,2.000000\n"
        ),
        "{text}"
    );
    assert!(text.contains("s=str n=12   3.1% A 18446744073709551615 ff\n"), "{text}");
    // 64 work-items on two workers: every line whole, none lost.
    for i in 0..64 {
        let line = format!("item {i}:{},{}\n", i as i8, (-i) as i8);
        assert!(text.contains(&line), "missing {line:?} in {text}");
    }
}

const HALVES: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void halves(global const float *in, global ushort *o, global int *n) {
    size_t k = get_global_id(0);
    half x = (half)in[k], y = (half)in[k + 8];
    global ushort *r = o + k * 16;
    r[0] = as_ushort(sqrt(fabs(x)));
    r[1] = as_ushort(sin(x));
    r[2] = as_ushort(exp(x));
    r[3] = as_ushort(pow(fabs(x), (half)1.5f));
    r[4] = as_ushort(fma(x, y, (half)1.0f));
    half w;
    r[5] = as_ushort(fract(x, &w));
    r[6] = as_ushort(w);
    r[7] = as_ushort(convert_half_rtz(in[k] * 1.001f));
    r[8] = as_ushort(convert_half_rtp(in[k] * 1.001f));
    r[9] = as_ushort(convert_half_rtn(in[k] * 1.001f));
    r[10] = as_ushort(nextafter(x, (half)INFINITY));
    r[11] = as_ushort(clamp(x, (half)-1.0f, (half)1.0f));
    r[12] = as_ushort(hypot(x, y));
    r[13] = as_ushort(length((half2)(x, y)));
    r[14] = as_ushort(normalize((half2)(x, y)).x);
    half4 v = (half4)(x, y, -x, (half)NAN);
    r[15] = as_ushort(shuffle(v, (ushort4)(2, 0, 1, 3)).x);
    short4 nan = isnan(v);
    n[k * 4 + 0] = convert_int_sat_rte(x);
    n[k * 4 + 1] = nan.w;
    n[k * 4 + 2] = nan.x;
    n[k * 4 + 3] = isgreater(x, y);
}
"#;

pub fn half_bits_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as f32;
    match exp {
        0 => sign * mant * 2f32.powi(-24),
        31 if mant == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + mant / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// Distance in units in the last place between two halves of the same sign.
fn half_ulps(a: u16, b: u16) -> u16 {
    a.abs_diff(b)
}

#[test]
fn half_builtins_compute_in_float_and_round_once() {
    let env = Env::new();
    let p = build(&env, HALVES, "");
    let k = kernel(p, "halves");
    let xs: Vec<f32> = vec![0.3125, 1.5, 2.25, 3.75, -1.125, 7.5, 10.0, -0.625];
    let ys: Vec<f32> = vec![0.5, 1.25, -3.0, 2.0, 0.75, -1.5, 4.0, 6.5];
    let input: Vec<f32> = xs.iter().chain(&ys).copied().collect();
    let (bi, bo, bn) =
        (buffer_of(&env, &input), env.buffer(0, 8 * 16 * 2, null_mut()), env.buffer(0, 8 * 4 * 4, null_mut()));
    set_arg(k, 0, &bi);
    set_arg(k, 1, &bo);
    set_arg(k, 2, &bn);
    run(&env, k, &[8], None);
    let o: Vec<u16> = read_as(&env, bo, 8 * 16);
    let n: Vec<i32> = read_as(&env, bn, 8 * 4);
    let h = |v: f32| to_half_bits(v, 0);
    for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
        let r = &o[i * 16..i * 16 + 16];
        // Correctly rounded or within the cl_khr_fp16 limits (2 ulp for these).
        let near = |got: u16, want: f32, ulps: u16, what: &str| {
            assert!(half_ulps(got, h(want)) <= ulps, "{what}({x}, {y}) = {} want {want}", half_bits_to_f32(got));
        };
        near(r[0], x.abs().sqrt(), 1, "sqrt");
        near(r[1], x.sin(), 2, "sin");
        near(r[2], x.exp(), 2, "exp");
        near(r[3], x.abs().powf(1.5), 2, "pow");
        near(r[4], (x as f64 * y as f64 + 1.0) as f32, 1, "fma");
        assert_eq!(half_bits_to_f32(r[5]), x - x.floor(), "fract({x})");
        assert_eq!(half_bits_to_f32(r[6]), x.floor(), "fract's whole part of {x}");
        let f = x * 1.001;
        assert_eq!(r[7], to_half_bits(f, 1), "convert_half_rtz({f})");
        assert_eq!(r[8], to_half_bits(f, 2), "convert_half_rtp({f})");
        assert_eq!(r[9], to_half_bits(f, 3), "convert_half_rtn({f})");
        assert_eq!(r[10], if x > 0.0 { h(x) + 1 } else { h(x) - 1 }, "nextafter({x}, inf)");
        assert_eq!(half_bits_to_f32(r[11]), x.clamp(-1.0, 1.0));
        near(r[12], x.hypot(y), 1, "hypot");
        near(r[13], x.hypot(y), 2, "length");
        near(r[14], x / x.hypot(y), 2, "normalize");
        assert_eq!(half_bits_to_f32(r[15]), -x, "shuffle of half4");
        assert_eq!(n[i * 4], x.round_ties_even() as i32, "convert_int_sat_rte({x})");
        assert_eq!((n[i * 4 + 1], n[i * 4 + 2]), (-1, 0), "isnan on half4");
        assert_eq!(n[i * 4 + 3], (x > y) as i32, "isgreater({x}, {y})");
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Half vectors convert whole to float vectors and back around the float forms: every
/// width of each such builtin gives what the scalar form gives each component (within
/// an ulp where the float vector form rounds differently).
#[test]
fn half_vectors_match_their_scalar_forms() {
    let env = Env::new();
    let (unary, binary, ternary) = (
        ["sqrt", "sin", "exp", "log", "floor", "rint", "cbrt", "tanh", "rsqrt", "fabs"],
        ["pow", "hypot", "fmax", "fmin", "atan2", "fmod", "copysign", "fdim"],
        ["mad", "fma"],
    );
    let mut src = String::from("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    let mut names = Vec::new();
    for (arity, fs) in [(1, &unary[..]), (2, &binary[..]), (3, &ternary[..])] {
        for f in fs {
            let (vargs, sargs) = [("x", "a"), ("y", "b"), ("z", "c")][..arity].iter().fold(
                (Vec::new(), Vec::new()),
                |(mut v, mut s), (x, a)| {
                    v.push(*x);
                    s.push(*a);
                    (v, s)
                },
            );
            src +=
                &format!("kernel void {f}_all(global const float *in, global ushort *vout, global ushort *sout) {{\n");
            let mut at = 0;
            for w in [2, 3, 4, 8, 16] {
                src += &format!(
                    "  {{ half{w} x = convert_half{w}(vload{w}(0, in + {at})), y = convert_half{w}(vload{w}(0, in + 64 + {at})),\n\
                     \x20   z = convert_half{w}(vload{w}(0, in + 128 + {at}));\n\
                     \x20   vstore{w}(as_ushort{w}({f}({v})), 0, vout + {at});\n\
                     \x20   for (int i = 0; i < {w}; i++) {{ half a = (half)in[{at} + i], b = (half)in[64 + {at} + i],\n\
                     \x20     c = (half)in[128 + {at} + i]; sout[{at} + i] = as_ushort({f}({s})); }} }}\n",
                    v = vargs.join(", "),
                    s = sargs.join(", ")
                );
                at += w;
            }
            src += "}\n";
            names.push(format!("{f}_all"));
        }
    }
    let p = build(&env, &src, "");
    // Positive, negative, small and large values, as floats the kernel rounds to half.
    let input: Vec<f32> = (0..192).map(|i| ((i * 37 % 101) as f32 - 40.0) * 0.173 + 0.01 * i as f32).collect();
    let bi = buffer_of(&env, &input);
    let (bv, bs) = (env.buffer(0, 64 * 2, null_mut()), env.buffer(0, 64 * 2, null_mut()));
    for name in &names {
        let k = kernel(p, name);
        set_arg(k, 0, &bi);
        set_arg(k, 1, &bv);
        set_arg(k, 2, &bs);
        run(&env, k, &[1], None);
        let (v, s): (Vec<u16>, Vec<u16>) = (read_as(&env, bv, 33), read_as(&env, bs, 33));
        for (i, (&a, &b)) in v.iter().zip(&s).enumerate() {
            let nan = |h: u16| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
            assert!(
                (nan(a) && nan(b)) || a.abs_diff(b) <= 1,
                "{name} element {i}: vector {} scalar {}",
                half_bits_to_f32(a),
                half_bits_to_f32(b)
            );
        }
        ok!(cl!(clReleaseKernel(k)));
    }
    for m in [bi, bv, bs] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseProgram(p)));
}

const C11_ATOMICS: &str = r#"
kernel void c11(global atomic_int *counter, global atomic_long *largest, global int *per_group,
                global atomic_int *winner, global atomic_int *wins, global atomic_flag *flag,
                global atomic_int *first, local atomic_int *l) {
    if (get_local_id(0) == 0) atomic_init(l, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_max_explicit(largest, (long)get_global_id(0) * 3, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_add_explicit(l, 2, memory_order_relaxed, memory_scope_work_group);
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(winner, &expected, (int)get_global_id(0) + 1, memory_order_relaxed,
                                                memory_order_relaxed, memory_scope_work_group))
        atomic_fetch_add_explicit(wins, 1, memory_order_relaxed, memory_scope_work_group);
    if (!atomic_flag_test_and_set_explicit(flag, memory_order_relaxed, memory_scope_work_group))
        atomic_fetch_add_explicit(first, 1, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        per_group[get_group_id(0)] = atomic_load_explicit(l, memory_order_relaxed, memory_scope_work_group);
}
"#;

#[test]
fn c11_atomics_count_exactly_across_groups_and_workers() {
    let env = Env::new();
    let p = build(&env, C11_ATOMICS, "-cl-std=CL3.0");
    let k = kernel(p, "c11");
    let (groups, items) = (64usize, 128usize);
    let counter = buffer_of(&env, &[0i32]);
    let largest = buffer_of(&env, &[-1i64]);
    let per_group = env.buffer(0, groups * 4, null_mut());
    let (winner, wins, flag, first) =
        (buffer_of(&env, &[0i32]), buffer_of(&env, &[0i32]), buffer_of(&env, &[0i32]), buffer_of(&env, &[0i32]));
    for (i, m) in [counter, largest, per_group, winner, wins, flag, first].iter().enumerate() {
        set_arg(k, i as cl_uint, m);
    }
    ok!(cl!(clSetKernelArg(k, 7, 4, null())));
    run(&env, k, &[groups * items], Some(&[items]));
    let n = (groups * items) as i32;
    assert_eq!(read_as::<i32>(&env, counter, 1)[0], n, "atomic_fetch_add_explicit");
    assert_eq!(read_as::<i64>(&env, largest, 1)[0], (n as i64 - 1) * 3, "atomic_fetch_max_explicit on atomic_long");
    assert_eq!(read_as::<i32>(&env, per_group, groups), vec![2 * items as i32; groups], "local atomics per group");
    let w = read_as::<i32>(&env, winner, 1)[0];
    assert!((1..=n).contains(&w), "compare-exchange stored a work-item's id: {w}");
    assert_eq!(read_as::<i32>(&env, wins, 1)[0], 1, "exactly one compare-exchange succeeds");
    assert_eq!(read_as::<i32>(&env, first, 1)[0], 1, "exactly one test-and-set finds the flag clear");
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn denorms_are_zero_flushes_only_when_asked() {
    let env = Env::new();
    let src = "kernel void half_of(global float *x, global double *d) { x[0] = x[0] * 0.5f; x[1] = x[1] + 0.0f; \
               d[0] = d[0] * 0.5; }";
    let tiny = [f32::MIN_POSITIVE, 1e-40f32];
    for (options, flushed) in [("", false), ("-cl-denorms-are-zero", true)] {
        let p = build(&env, src, options);
        let k = kernel(p, "half_of");
        let (bx, bd) = (buffer_of(&env, &tiny), buffer_of(&env, &[f64::MIN_POSITIVE]));
        set_arg(k, 0, &bx);
        set_arg(k, 1, &bd);
        run(&env, k, &[1], None);
        let (x, d): (Vec<f32>, Vec<f64>) = (read_as(&env, bx, 2), read_as(&env, bd, 1));
        if flushed {
            assert_eq!((x[0], x[1], d[0]), (0.0, 0.0, 0.0), "'{options}': denormal results and inputs flush");
        } else {
            assert_eq!((x[0], x[1]), (f32::MIN_POSITIVE / 2.0, 1e-40), "'{options}': denormals kept");
            assert_eq!(d[0], f64::MIN_POSITIVE / 2.0, "'{options}': double denormals kept");
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
    // The mode does not leak into a later launch of a program built without it.
    let p = build(&env, src, "");
    let k = kernel(p, "half_of");
    let bx = buffer_of(&env, &tiny);
    let bd = buffer_of(&env, &[f64::MIN_POSITIVE]);
    set_arg(k, 0, &bx);
    set_arg(k, 1, &bd);
    run(&env, k, &[1], None);
    assert_eq!(read_as::<f32>(&env, bx, 2)[0], f32::MIN_POSITIVE / 2.0, "mode restored after the flushing program");
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn half_loads_read_private_arrays_written_as_ushort() {
    // OpenCL C has no type-based aliasing unless -cl-strict-aliasing: the CTS writes
    // private ushort arrays and reads them through half pointers.
    let env = Env::new();
    let src = "kernel void k(global const ushort *in, global float *out) {
        volatile ushort a[48];
        for (int i = 0; i < 48; i++) a[i] = in[i];
        out[0] = vload_half(45, (const private half *)a);
        out[1] = vloada_half4(10, (const private half *)a).y;
        out[2] = vload_half2(3, (const private half *)a).x;
    }";
    let p = build(&env, src, "");
    let k = kernel(p, "k");
    let input: Vec<u16> = (0..48).map(|i| 0x3c00 + i * 16).collect(); // 1 + i / 64
    let (bin, bout) = (buffer_of(&env, &input), env.buffer(0, 12, null_mut()));
    set_arg(k, 0, &bin);
    set_arg(k, 1, &bout);
    run(&env, k, &[1], None);
    let h = |i: u16| 1.0 + i as f32 / 64.0;
    assert_eq!(read_as::<f32>(&env, bout, 3), vec![h(45), h(41), h(6)]);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

#[test]
fn integer_division_by_zero_does_not_kill_the_host() {
    // Unspecified results, but x86's divide error must not reach the process.
    let env = Env::new();
    let src = "kernel void div(global const int *a, global const int *b, global int *q, global long *r,
                              global uint4 *v) {
        size_t i = get_global_id(0);
        q[i] = a[i] / b[i];
        r[i] = (long)a[i] % (long)b[i] + (char)a[i] / (char)b[i];
        v[i] = (uint4)(a[i]) / (uint4)(b[i], 1, b[i], 2);
    }
    kernel void after_barrier(global const int *a, global const int *b, global int *q, local int *t) {
        size_t i = get_global_id(0);
        t[get_local_id(0)] = b[i];
        barrier(CLK_LOCAL_MEM_FENCE);
        q[i] = a[i] % t[get_local_id(0)] + a[i] / t[get_local_id(0)];
    }";
    let p = build(&env, src, "");
    let a = [7, i32::MIN, 9, -8];
    let b = [0, -1, 3, 0];
    let (ba, bb) = (buffer_of(&env, &a), buffer_of(&env, &b));
    let (bq, br, bv) = (env.buffer(0, 16, null_mut()), env.buffer(0, 32, null_mut()), env.buffer(0, 64, null_mut()));
    let k = kernel(p, "div");
    for (i, m) in [ba, bb, bq, br, bv].iter().enumerate() {
        set_arg(k, i as cl_uint, m);
    }
    run(&env, k, &[4], None);
    // Defined divisions still give their results.
    assert_eq!(read_as::<i32>(&env, bq, 4)[2], 3);
    assert_eq!(read_as::<i64>(&env, br, 4)[2], 3);
    assert_eq!(read_as::<u32>(&env, bv, 16)[8..12], [3, 9, 3, 4]);
    let k2 = kernel(p, "after_barrier");
    set_arg(k2, 0, &ba);
    set_arg(k2, 1, &bb);
    set_arg(k2, 2, &bq);
    ok!(cl!(clSetKernelArg(k2, 3, 16, null())));
    run(&env, k2, &[4], Some(&[4]));
    assert_eq!(read_as::<i32>(&env, bq, 4)[2], 3);
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseKernel(k2)));
    ok!(cl!(clReleaseProgram(p)));
}

/// Unsigned division and remainder by divisors known only at run time (kernel
/// arguments and size queries) go through helpers that shift and mask for powers of
/// two (compiler/passes/division.rs): exact against the host for 32 and 64 bits, powers of
/// two and others, and a zero divisor does not bring the process down.
#[test]
fn unsigned_division_by_run_time_divisors() {
    let env = Env::new();
    let p = build(
        &env,
        r#"
        kernel void udivs(global const ulong *a, global const ulong *n, global ulong *out) {
            size_t i = get_global_id(0);
            ulong x = a[i], d = n[i];
            uint x32 = (uint)x, d32 = (uint)d;
            out[6 * i] = x / d;
            out[6 * i + 1] = x % d;
            out[6 * i + 2] = x32 / d32;
            out[6 * i + 3] = x32 % d32;
            out[6 * i + 4] = (i + 1) % get_local_size(0);
            out[6 * i + 5] = i / get_local_size(0);
        }"#,
        "",
    );
    let k = kernel(p, "udivs");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // A multiple of both group sizes below.
    let n = 4032;
    let a: Vec<u64> = (0..n).map(|_| next()).collect();
    // Powers of two (1 up to 2^63, some past 32 bits), small and large others, and 0.
    let d: Vec<u64> = (0..n)
        .map(|i| match i % 4 {
            0 => 1u64 << (next() % 64),
            1 => next() % 1000,
            2 => next() >> (next() % 64),
            _ => (next() % 3) << 32 | (next() % 9),
        })
        .collect();
    let (ba, bd) = (buffer_of(&env, &a), buffer_of(&env, &d));
    let bo = env.buffer(0, n * 6 * 8, null_mut());
    set_arg(k, 0, &ba);
    set_arg(k, 1, &bd);
    set_arg(k, 2, &bo);
    for local in [64usize, 48] {
        run(&env, k, &[n], Some(&[local]));
        let o: Vec<u64> = read_as(&env, bo, n * 6);
        for i in 0..n {
            let (x, y, x32, y32) = (a[i], d[i], a[i] as u32, d[i] as u32);
            if let (Some(q), Some(r)) = (x.checked_div(y), x.checked_rem(y)) {
                assert_eq!((o[6 * i], o[6 * i + 1]), (q, r), "{x} / {y}");
            }
            if let (Some(q), Some(r)) = (x32.checked_div(y32), x32.checked_rem(y32)) {
                assert_eq!((o[6 * i + 2], o[6 * i + 3]), (q as u64, r as u64), "{x32} / {y32}");
            }
            let g = i as u64;
            assert_eq!((o[6 * i + 4], o[6 * i + 5]), ((g + 1) % local as u64, g / local as u64), "local {local}");
        }
    }
    for m in [ba, bd, bo] {
        ok!(cl!(clReleaseMemObject(m)));
    }
    ok!(cl!(clReleaseKernel(k)));
    ok!(cl!(clReleaseProgram(p)));
}

/// cl_khr_extended_bit_ops on four widths and two vector types, and
/// cl_khr_integer_dot_product in every signedness, plain, saturating and packed,
/// against host references, in OpenCL C 1.2 and 3.0.
const BIT_OPS_AND_DOTS: &str = r#"
#define SCALAR(T, n, o, c) \
    out[n] = (ulong)(T)bitfield_insert((T)a, (T)b, o, c); \
    out[n + 1] = (ulong)(long)bitfield_extract_signed((T)a, o, c); \
    out[n + 2] = (ulong)bitfield_extract_unsigned((T)a, o, c); \
    out[n + 3] = (ulong)(T)bit_reverse((T)a);
kernel void bits(global const ulong *in, global const uint *oc, global ulong *out) {
    size_t i = get_global_id(0);
    ulong a = in[2 * i], b = in[2 * i + 1];
    global const uint *w = oc + 8 * i;
    out += 80 * i;
    SCALAR(uchar, 0, w[0], w[1]) SCALAR(short, 4, w[2], w[3]) SCALAR(int, 8, w[4], w[5]) SCALAR(ulong, 12, w[6], w[7])
    int4 v = (int4)((int)a, (int)(a >> 32), (int)b, (int)(b >> 32));
    int4 r[4] = {bitfield_insert(v, v.wzyx, w[4], w[5]), bitfield_extract_signed(v, w[4], w[5]),
                 as_int4(bitfield_extract_unsigned(v, w[4], w[5])), bit_reverse(v)};
    for (int k = 0; k < 16; k++) out[16 + k] = (ulong)(uint)r[k / 4][k % 4];
    char16 c = as_char16((ulong2)(a, b));
    char16 s[3] = {bitfield_insert(c, c.sfedcba9876543210, w[0], w[1]), bitfield_extract_signed(c, w[0], w[1]),
                   bit_reverse(c)};
    for (int k = 0; k < 48; k++) out[32 + k] = (ulong)(uchar)s[k / 16][k % 16];
}

kernel void dots(global const uint *a, global const uint *b, global const int *acc, global int *out) {
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i];
    int z = acc[i];
    uchar4 ux = as_uchar4(x), uy = as_uchar4(y);
    char4 sx = as_char4(x), sy = as_char4(y);
    out += 16 * i;
    out[0] = (int)dot(ux, uy); out[1] = dot(sx, sy); out[2] = dot(ux, sy); out[3] = dot(sx, uy);
    out[4] = (int)dot_acc_sat(ux, uy, (uint)z); out[5] = dot_acc_sat(sx, sy, z);
    out[6] = dot_acc_sat(ux, sy, z); out[7] = dot_acc_sat(sx, uy, z);
    out[8] = (int)dot_4x8packed_uu_uint(x, y); out[9] = dot_4x8packed_ss_int(x, y);
    out[10] = dot_4x8packed_us_int(x, y); out[11] = dot_4x8packed_su_int(x, y);
    out[12] = (int)dot_acc_sat_4x8packed_uu_uint(x, y, (uint)z); out[13] = dot_acc_sat_4x8packed_ss_int(x, y, z);
    out[14] = dot_acc_sat_4x8packed_us_int(x, y, z); out[15] = dot_acc_sat_4x8packed_su_int(x, y, z);
}
"#;

/// A field of `count` bits at `offset` of a `bits`-wide value.
fn field(bits: u32, offset: u32, count: u32) -> u64 {
    let m = if count == 64 { u64::MAX } else { (1u64 << count) - 1 };
    m.checked_shl(offset).unwrap_or(0) & (u64::MAX >> (64 - bits))
}

/// The four bit operations on a `bits`-wide value, as the kernel stores them: the
/// insert and reverse as the type's bits, the signed extract sign-extended.
fn bit_ops(a: u64, b: u64, bits: u32, offset: u32, count: u32) -> [u64; 4] {
    let width = u64::MAX >> (64 - bits);
    let f = field(bits, offset, count);
    // An empty field may sit at offset `bits` (64 included).
    let insert = (a & !f | b.checked_shl(offset).unwrap_or(0) & f) & width;
    let unsigned = (a & f).checked_shr(offset).unwrap_or(0);
    let signed = if count == 0 { 0 } else { ((unsigned << (64 - count)) as i64 >> (64 - count)) as u64 };
    [insert, signed, unsigned, (a & width).reverse_bits() >> (64 - bits)]
}

/// Sign-extends the low `bits` of `v` (the kernel's signed types stored as ulong).
fn sext(v: u64, bits: u32) -> u64 {
    ((v << (64 - bits)) as i64 >> (64 - bits)) as u64
}

#[test]
fn extended_bit_ops_and_integer_dot_products() {
    let env = Env::new();
    let ext = info_string(|s, v, r| cl!(clGetDeviceInfo(env.device, CL_DEVICE_EXTENSIONS, s, v, r)));
    assert!(ext.contains("cl_khr_extended_bit_ops") && ext.contains("cl_khr_integer_dot_product"), "{ext}");
    let caps: cl_bitfield = device_info(env.device, 0x1073);
    assert_eq!(caps, 3, "both input forms");
    let acceleration: [cl_bool; 6] = device_info(env.device, 0x1074);
    assert_eq!(acceleration, [CL_FALSE; 6]);
    // Inputs from a fixed LCG; offsets and counts within each width, the edges
    // (count 0, the whole width) included.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed ^ (seed >> 29)
    };
    let n = 256;
    let values: Vec<u64> = (0..2 * n).map(|_| next()).collect();
    let mut oc = Vec::new();
    for i in 0..n {
        for bits in [8u32, 16, 32, 64] {
            let (offset, count) = match i {
                0 => (0, 0),
                1 => (0, bits),
                2 => (bits - 1, 1),
                _ => {
                    let o = (next() % (bits as u64 + 1)) as u32;
                    (o, (next() % ((bits - o) as u64 + 1)) as u32)
                }
            };
            oc.extend([offset, count]);
        }
    }
    let acc: Vec<i32> = (0..n)
        .map(|i| match i % 4 {
            0 => i32::MAX - (next() % 70_000) as i32,
            1 => i32::MIN + (next() % 70_000) as i32,
            _ => next() as i32,
        })
        .collect();
    for std in ["", "-cl-std=CL3.0"] {
        let p = build(&env, BIT_OPS_AND_DOTS, std);
        let k = kernel(p, "bits");
        let (bi, bo) = (buffer_of(&env, &values), buffer_of(&env, &oc));
        let out = env.buffer(0, n * 80 * 8, null_mut());
        set_arg(k, 0, &bi);
        set_arg(k, 1, &bo);
        set_arg(k, 2, &out);
        run(&env, k, &[n], None);
        let got: Vec<u64> = read_as(&env, out, n * 80);
        for i in 0..n {
            let (a, b, w) = (values[2 * i], values[2 * i + 1], &oc[8 * i..8 * i + 8]);
            let mut want = Vec::new();
            for (j, bits) in [8u32, 16, 32, 64].into_iter().enumerate() {
                let [ins, s, u, r] = bit_ops(a, b, bits, w[2 * j], w[2 * j + 1]);
                // uchar and ulong results are stored zero-extended, short and int ones
                // sign-extended.
                let store = |v: u64| if bits == 16 || bits == 32 { sext(v, bits) } else { v };
                want.extend([store(ins), s, u, store(r)]);
            }
            let lanes = [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32];
            let ops: Vec<[u64; 4]> =
                (0..4).map(|l| bit_ops(lanes[l] as u64, lanes[3 - l] as u64, 32, w[4], w[5])).collect();
            // Operation by operation, lane by lane, as the kernel stores them.
            want.extend((0..16).map(|k| ops[k % 4][k / 4] & 0xffff_ffff));
            let bytes: Vec<u64> = a.to_le_bytes().into_iter().chain(b.to_le_bytes()).map(u64::from).collect();
            let chars: Vec<[u64; 4]> = (0..16).map(|l| bit_ops(bytes[l], bytes[15 - l], 8, w[0], w[1])).collect();
            want.extend((0..16).map(|l| chars[l][0]));
            want.extend((0..16).map(|l| chars[l][1] & 0xff));
            want.extend((0..16).map(|l| chars[l][3]));
            assert_eq!(
                &got[80 * i..80 * i + 80],
                &want[..],
                "{std} item {i}: a={a:#x} b={b:#x} offsets and counts {w:?}"
            );
        }
        for m in [bi, bo, out] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));

        let k = kernel(p, "dots");
        let (xa, xb): (Vec<u32>, Vec<u32>) = (0..n).map(|i| (values[i] as u32, (values[i] >> 32) as u32)).unzip();
        let (ba, bb, bc) = (buffer_of(&env, &xa), buffer_of(&env, &xb), buffer_of(&env, &acc));
        let out = env.buffer(0, n * 16 * 4, null_mut());
        for (j, m) in [ba, bb, bc, out].iter().enumerate() {
            set_arg(k, j as cl_uint, m);
        }
        run(&env, k, &[n], None);
        let got: Vec<i32> = read_as(&env, out, n * 16);
        for i in 0..n {
            let (x, y, z) = (xa[i].to_le_bytes(), xb[i].to_le_bytes(), acc[i]);
            let dot = |sx: bool, sy: bool| -> i64 {
                let v = |b: u8, s: bool| if s { b as i8 as i64 } else { b as i64 };
                (0..4).map(|c| v(x[c], sx) * v(y[c], sy)).sum()
            };
            let forms = [(false, false), (true, true), (false, true), (true, false)];
            let plain: Vec<i32> = forms.iter().map(|&(sx, sy)| dot(sx, sy) as i32).collect();
            let sat: Vec<i32> = forms
                .iter()
                .map(|&(sx, sy)| match (sx, sy) {
                    (false, false) => (dot(sx, sy) + z as u32 as i64).min(u32::MAX as i64) as u32 as i32,
                    _ => (dot(sx, sy) + z as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32,
                })
                .collect();
            let want: Vec<i32> = [&plain[..], &sat[..], &plain[..], &sat[..]].concat();
            assert_eq!(&got[16 * i..16 * i + 16], &want[..], "{std} item {i}: {x:?} . {y:?} + {z}");
        }
        for m in [ba, bb, bc, out] {
            ok!(cl!(clReleaseMemObject(m)));
        }
        ok!(cl!(clReleaseKernel(k)));
        ok!(cl!(clReleaseProgram(p)));
    }
}
