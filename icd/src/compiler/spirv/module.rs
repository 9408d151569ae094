//! What the driver itself reads of a SPIR-V module: the header, the instruction stream's
//! shape (so a malformed module is `CL_INVALID_VALUE` at `clCreateProgramWithIL`, before
//! any tool sees it) and the specialization constants (`clSetProgramSpecializationConstant`
//! checks ids and sizes against them). Everything else is the translator's.

use std::collections::HashMap;

const MAGIC: u32 = 0x0723_0203;

// Opcodes and decorations used here (SPIR-V specification, section 3).
const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_SPEC_CONSTANT_TRUE: u32 = 48;
const OP_SPEC_CONSTANT_FALSE: u32 = 49;
const OP_SPEC_CONSTANT: u32 = 50;
const OP_DECORATE: u32 = 71;
const DECORATION_SPEC_ID: u32 = 1;

/// A scalar specialization constant's type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum SpecType {
    Bool,
    Int(u32),
    Float(u32),
}

impl SpecType {
    /// The `spec_size` `clSetProgramSpecializationConstant` expects: 1 for booleans.
    pub(crate) fn size(self) -> usize {
        match self {
            SpecType::Bool => 1,
            SpecType::Int(bits) | SpecType::Float(bits) => (bits as usize).div_ceil(8),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SpecConstant {
    pub(crate) id: u32,
    pub(crate) ty: SpecType,
}

/// A checked module.
#[derive(Debug)]
pub(crate) struct Module {
    pub(crate) spec_constants: Vec<SpecConstant>,
}

/// The module's words in host order: SPIR-V may be stored in either byte order, which
/// the magic number tells.
pub(crate) fn words(bytes: &[u8]) -> Result<Vec<u32>, String> {
    if bytes.len() % 4 != 0 {
        return Err(format!("a SPIR-V module is a whole number of 32-bit words; this one has {} bytes", bytes.len()));
    }
    let le: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    match le.first() {
        Some(&MAGIC) => Ok(le),
        Some(m) if m.swap_bytes() == MAGIC => Ok(le.into_iter().map(u32::swap_bytes).collect()),
        _ => Err("not a SPIR-V module: the magic number 0x07230203 is missing".into()),
    }
}

/// Reads the header and walks every instruction; `Err` says what is wrong.
pub(crate) fn parse(bytes: &[u8]) -> Result<Module, String> {
    let w = words(bytes)?;
    if w.len() < 5 {
        return Err("the SPIR-V header is cut short (5 words expected)".into());
    }
    // Version 1.x: 0x0001mm00. Which minor versions build is the translator's to say.
    if w[1] & 0xffff_00ff != 0x0001_0000 {
        return Err(format!("unknown SPIR-V version word 0x{:08x}", w[1]));
    }
    let mut types: HashMap<u32, SpecType> = HashMap::new();
    let mut spec_ids: HashMap<u32, u32> = HashMap::new();
    let mut constants: Vec<(u32, u32)> = Vec::new(); // (result id, type id)
    let mut at = 5;
    while at < w.len() {
        let (count, opcode) = ((w[at] >> 16) as usize, w[at] & 0xffff);
        if count == 0 || at + count > w.len() {
            return Err(format!("SPIR-V instruction at word {at} (opcode {opcode}) has a bad word count {count}"));
        }
        let ops = &w[at + 1..at + count];
        let short = || format!("SPIR-V instruction at word {at} (opcode {opcode}) is missing operands");
        match opcode {
            OP_TYPE_BOOL => drop(types.insert(*ops.first().ok_or_else(short)?, SpecType::Bool)),
            OP_TYPE_INT | OP_TYPE_FLOAT if ops.len() >= 2 => {
                let ty = if opcode == OP_TYPE_INT { SpecType::Int(ops[1]) } else { SpecType::Float(ops[1]) };
                types.insert(ops[0], ty);
            }
            OP_TYPE_INT | OP_TYPE_FLOAT => return Err(short()),
            OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT if ops.len() >= 2 => {
                constants.push((ops[1], ops[0]))
            }
            OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT => return Err(short()),
            OP_DECORATE if ops.len() >= 3 && ops[1] == DECORATION_SPEC_ID => drop(spec_ids.insert(ops[0], ops[2])),
            OP_DECORATE if ops.len() < 2 => return Err(short()),
            _ => {}
        }
        at += count;
    }
    let mut spec_constants: Vec<SpecConstant> = constants
        .into_iter()
        .filter_map(|(result, ty)| Some(SpecConstant { id: *spec_ids.get(&result)?, ty: *types.get(&ty)? }))
        .collect();
    spec_constants.sort_by_key(|c| c.id);
    spec_constants.dedup_by_key(|c| c.id);
    Ok(Module { spec_constants })
}

/// A value for the translator's `--spec-const` (`id:type:value`), from the bytes the
/// application gave: integers as unsigned decimals, floats as exact hexadecimal ones.
pub(crate) fn spec_const_arg(c: &SpecConstant, value: &[u8]) -> String {
    let mut raw = [0u8; 8];
    let n = value.len().min(8);
    raw[..n].copy_from_slice(&value[..n]);
    let bits = u64::from_le_bytes(raw);
    let (ty, text) = match c.ty {
        SpecType::Bool => ("i1".to_string(), u64::from(bits != 0).to_string()),
        SpecType::Int(w) => (format!("i{w}"), bits.to_string()),
        SpecType::Float(16) => ("f16".into(), hex_float(f64::from(half_to_f32(bits as u16)))),
        SpecType::Float(32) => ("f32".into(), hex_float(f64::from(f32::from_bits(bits as u32)))),
        SpecType::Float(w) => (format!("f{w}"), hex_float(f64::from_bits(bits))),
    };
    format!("{}:{ty}:{text}", c.id)
}

fn half_to_f32(h: u16) -> f32 {
    let (sign, exp, man) = ((h >> 15) as u32, ((h >> 10) & 0x1f) as u32, (h & 0x3ff) as u32);
    let bits = match (exp, man) {
        (0, 0) => sign << 31,
        // Subnormal: exact in f32 as man * 2^-24.
        (0, m) => return if sign == 1 { -(m as f32) } else { m as f32 } * (-24f32).exp2(),
        (31, m) => (sign << 31) | (0xff << 23) | (m << 13),
        (e, m) => (sign << 31) | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// `[-]0x1.<hex>p<exp>` (or inf/nan spelled as LLVM's APFloat reads them): exact.
fn hex_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let bits = v.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let (exp, man) = (((bits >> 52) & 0x7ff) as i64, bits & ((1u64 << 52) - 1));
    match exp {
        0 if man == 0 => format!("{sign}0x0p+0"),
        0 => format!("{sign}0x0.{man:013x}p-1022"),
        e => format!("{sign}0x1.{man:013x}p{:+}", e - 1023),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &[u32]) -> Vec<u8> {
        let mut w = vec![MAGIC, 0x0001_0000, 0, 100, 0];
        w.extend_from_slice(body);
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn op(opcode: u32, operands: &[u32]) -> Vec<u32> {
        let mut v = vec![((operands.len() as u32 + 1) << 16) | opcode];
        v.extend_from_slice(operands);
        v
    }

    #[test]
    fn spec_constants_are_found_with_their_types() {
        let body: Vec<u32> = [
            op(OP_DECORATE, &[10, DECORATION_SPEC_ID, 7]),
            op(OP_DECORATE, &[11, DECORATION_SPEC_ID, 3]),
            op(OP_DECORATE, &[12, 0 /* RelaxedPrecision */]),
            op(OP_TYPE_FLOAT, &[1, 32]),
            op(OP_TYPE_BOOL, &[2]),
            op(OP_SPEC_CONSTANT, &[1, 10, 0x3fc0_0000]),
            op(OP_SPEC_CONSTANT_TRUE, &[2, 11]),
        ]
        .concat();
        let m = parse(&module(&body)).unwrap();
        assert_eq!(
            m.spec_constants,
            [SpecConstant { id: 3, ty: SpecType::Bool }, SpecConstant { id: 7, ty: SpecType::Float(32) }]
        );
        let swapped: Vec<u8> = module(&body).chunks(4).flat_map(|c| [c[3], c[2], c[1], c[0]]).collect();
        assert_eq!(parse(&swapped).unwrap().spec_constants.len(), 2, "big-endian modules read the same");
    }

    #[test]
    fn malformed_modules_are_refused() {
        assert!(parse(b"").is_err());
        assert!(parse(&[1, 2, 3, 4, 5, 6, 7, 8]).is_err(), "no magic");
        assert!(parse(&module(&[])[..19]).is_err(), "not whole words");
        assert!(parse(&module(&[])[..16]).is_err(), "short header");
        assert!(parse(&module(&[(5 << 16) | 71, 1])).is_err(), "an instruction running past the end");
        assert!(parse(&module(&[0])).is_err(), "a zero word count");
        let mut bad_version = module(&[]);
        bad_version[4..8].copy_from_slice(&0x0002_0000u32.to_le_bytes());
        assert!(parse(&bad_version).is_err());
        assert!(parse(&module(&op(OP_NOP_FOR_TEST, &[]))).is_ok());
    }
    const OP_NOP_FOR_TEST: u32 = 0;

    #[test]
    fn spec_values_are_exact() {
        let f = SpecConstant { id: 1, ty: SpecType::Float(32) };
        assert_eq!(spec_const_arg(&f, &1.5f32.to_le_bytes()), "1:f32:0x1.8000000000000p+0");
        assert_eq!(spec_const_arg(&f, &(-0.1f32).to_le_bytes()), format!("1:f32:{}", hex_float(-0.1f32 as f64)));
        let i = SpecConstant { id: 2, ty: SpecType::Int(8) };
        assert_eq!(spec_const_arg(&i, &[255]), "2:i8:255");
        let b = SpecConstant { id: 3, ty: SpecType::Bool };
        assert_eq!(spec_const_arg(&b, &[2]), "3:i1:1");
        let h = SpecConstant { id: 4, ty: SpecType::Float(16) };
        assert_eq!(spec_const_arg(&h, &0x3e00u16.to_le_bytes()), "4:f16:0x1.8000000000000p+0");
        assert_eq!(half_to_f32(1), (-24f32).exp2());
        assert_eq!(hex_float(f64::MIN_POSITIVE / 2.0), "0x0.8000000000000p-1022");
    }
}
