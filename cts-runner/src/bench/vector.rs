//! Vector builtins against the scalar loops they replace: for each builtin, a chain of
//! dependent calls on a 16-wide vector, and the same number of calls on 16 scalar
//! chains, timed on the same platform. A vector builtin should cost no more per element
//! than the scalar code it replaces (a ratio of at most 1); a ratio above 1 names a
//! builtin whose vector form is implemented worse than a loop over its lanes.

use crate::cl;
use crate::cl::*;
use crate::session::{arg, best, Session};

pub const METRICS: &[(&str, &str, bool)] = &[
    ("vector_worst_ratio", "vector builtin / scalar loop per element, worst", false),
    ("vector_mean_ratio", "vector builtin / scalar loop per element, geo. mean", false),
];

/// (label, scalar type, one step of the chain in `x` (the running value) and `y`;
/// `CONV(e)` converts to the chain's type). Each step keeps the values finite and away
/// from denormals.
pub const BUILTINS: &[(&str, &str, &str)] = &[
    ("sqrt", "float", "sqrt(x) + y"),
    ("exp", "float", "exp(-x) + y"),
    ("log", "float", "log(x + y + 1.0f)"),
    ("sin", "float", "sin(x) + y"),
    ("native_exp", "float", "native_exp(-x) + y"),
    ("fabs", "float", "fabs(x - y)"),
    ("floor", "float", "floor(x * 3.0f) * y"),
    ("fmin", "float", "fmin(x, y) + 0.25f"),
    ("hypot", "float", "hypot(x, y) * 0.5f"),
    ("clamp", "float", "clamp(x * 1.5f, -1.0f, y)"),
    ("mix", "float", "mix(x, y, 0.5f)"),
    ("fma", "float", "fma(x, y, 0.25f)"),
    ("rsqrt", "float", "rsqrt(x + 1.0f) + y"),
    ("sqrt(double)", "double", "sqrt(x) + y"),
    ("fma(double)", "double", "fma(x, y, 0.25)"),
    ("sqrt(half)", "half", "sqrt(x) + y"),
    ("fma(half)", "half", "fma(x, y, (half)0.25f)"),
    ("abs", "int", "CONV(abs(x - y))"),
    ("clz", "int", "clz(x) + y"),
    ("popcount", "int", "popcount(x) + y"),
    ("rotate", "int", "rotate(x, y)"),
    ("add_sat", "int", "add_sat(x, y)"),
    ("hadd", "int", "hadd(x, y)"),
    ("mul_hi", "int", "mul_hi(x, y) + 7"),
    ("min", "int", "min(x, y) + 1"),
    ("mad24", "int", "mad24(x, y, 3)"),
    ("mad_sat", "int", "mad_sat(x, y, 3)"),
    ("select", "int", "select(x + 1, y, x > 5)"),
    ("add_sat(char)", "char", "add_sat(x, y)"),
    ("mul_hi(long)", "long", "mul_hi(x, y) + 7"),
];

/// Dependent steps per chain.
const STEPS: usize = 64;

/// The program: `v<i>` runs the vector chain, `s<i>` 16 scalar chains, per work-item.
pub fn source() -> String {
    let mut s = String::from("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    for (i, (_, t, step)) in BUILTINS.iter().enumerate() {
        let guard = match *t {
            "half" => Some("cl_khr_fp16"),
            "double" => Some("cl_khr_fp64"),
            _ => None,
        };
        if let Some(g) = guard {
            s += &format!("#ifdef {g}\n");
        }
        s += &format!(
            "#define CONV(e) convert_{t}16(e)\n\
             kernel void v{i}(global {t}16 *o, {t} s) {{\n\
             \x20   {t}16 y = ({t}16)(s), x = y + ({t}16)(({t})(get_global_id(0) & 7));\n\
             \x20   for (int i = 0; i < {STEPS}; i++) x = {step};\n\
             \x20   o[get_global_id(0)] = x;\n}}\n\
             #undef CONV\n#define CONV(e) convert_{t}(e)\n\
             kernel void s{i}(global {t} *o, {t} s) {{\n\
             \x20   for (int l = 0; l < 16; l++) {{\n\
             \x20       {t} y = s, x = y + ({t})((get_global_id(0) + l) & 7);\n\
             \x20       for (int i = 0; i < {STEPS}; i++) x = {step};\n\
             \x20       o[get_global_id(0) * 16 + l] = x;\n\
             \x20   }}\n}}\n#undef CONV\n"
        );
        if guard.is_some() {
            s += "#endif\n";
        }
    }
    s
}

/// The scalar kernel argument `s` of a type, as bytes: 0.5 for floating point, 3 for
/// integers.
fn scalar_arg(t: &str) -> Vec<u8> {
    match t {
        "float" => 0.5f32.to_ne_bytes().to_vec(),
        "double" => 0.5f64.to_ne_bytes().to_vec(),
        "half" => 0x3800u16.to_ne_bytes().to_vec(),
        "char" => vec![3],
        "long" => 3i64.to_ne_bytes().to_vec(),
        _ => 3i32.to_ne_bytes().to_vec(),
    }
}

/// `vector_ratio_<label>` per builtin the platform builds, then the worst and the
/// geometric mean.
pub fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    // A platform lacking one of these builtins gives no figures rather than no bench.
    let prog = match s.build(&source()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("vector builtins not measured: {e}");
            return Ok(Vec::new());
        }
    };
    // Enough work-items that a launch is not mostly its own overhead on 16 cores: with
    // 4,096 a jammed vector chain took ~40 us there, and the ratios moved 0.6-1.9 from
    // run to run.
    let n = 16384;
    let out = s.buffer(n * 16 * 8, None)?;
    let mut ratios = Vec::new();
    for (i, (label, t, _)) in BUILTINS.iter().enumerate() {
        // Absent where the platform lacks the type's extension.
        let (Ok(v), Ok(sc)) = (s.kernel(prog, &format!("v{i}")), s.kernel(prog, &format!("s{i}"))) else { continue };
        let value = scalar_arg(t);
        let time = |k: cl_kernel| -> Result<f64, String> {
            arg(k, 0, &out)?;
            crate::session::check(cl!(clSetKernelArg(k, 1, value.len(), value.as_ptr().cast())), "clSetKernelArg")?;
            s.run(k, &[n], None)?;
            best((0..5).map(|_| s.run(k, &[n], None)))
        };
        let ratio = time(v)? / time(sc)?;
        ratios.push((format!("vector_ratio_{label}"), ratio));
    }
    if ratios.is_empty() {
        return Ok(ratios);
    }
    let worst = ratios.iter().map(|(_, r)| *r).fold(0.0, f64::max);
    let mean = (ratios.iter().map(|(_, r)| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    ratios.push(("vector_worst_ratio".into(), worst));
    ratios.push(("vector_mean_ratio".into(), mean));
    Ok(ratios)
}
