//! What the driver itself reads of a SPIR-V module: the header, the instruction stream's
//! shape (so a malformed module is `CL_INVALID_VALUE` at `clCreateProgramWithIL`, before
//! any tool sees it) and the specialization constants (`clSetProgramSpecializationConstant`
//! checks ids and sizes against them). Everything else is the translator's.
//!
//! The shape checked: the header (magic, version, an id bound within SPIR-V's limit, the
//! reserved word 0), every instruction's word count, every result id within the bound
//! and defined once, the module's logical layout (section 2.4: capabilities, ...,
//! exactly one memory model, ..., types and globals, then functions, each closed), and
//! nothing but functions after the first. A malformed module went to the translator,
//! which built it or crashed on it.

use std::collections::HashMap;

use super::results::{RESULT_ONLY, TYPE_AND_RESULT};

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
const OP_NOP: u32 = 0;
const OP_LINE: u32 = 8;
const OP_NO_LINE: u32 = 317;
const OP_EXT_INST: u32 = 12;
const OP_MEMORY_MODEL: u32 = 14;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;

/// SPIR-V's universal limit on the id bound (section 2.17, "Result <id> bound").
const MAX_BOUND: u32 = 4_194_303;

/// The section of the logical layout (2.4) an instruction outside functions belongs
/// to, in order; `None` for those allowed in any (debug lines, non-semantic
/// extended instructions) and for `OpNop`, which belongs to none.
fn section(opcode: u32) -> Option<u8> {
    Some(match opcode {
        17 => 0,                          // OpCapability
        10 => 1,                          // OpExtension
        11 => 2,                          // OpExtInstImport
        OP_MEMORY_MODEL => 3,             //
        15 => 4,                          // OpEntryPoint
        16 | 331 => 5,                    // OpExecutionMode[Id]
        2..=7 | 330 => 6,                 // strings, sources, names, processes
        71..=75 | 332 | 5632 | 5633 => 7, // annotations
        OP_FUNCTION => 9,                 //
        OP_NOP | OP_LINE | OP_NO_LINE | OP_EXT_INST => return None,
        // SPV_INTEL_memory_access_aliasing's declarations: the translator writes them
        // before the decorations that name them (SYCL's dpnp kernels), the extension
        // among the types; either is read.
        5911..=5913 => return None,
        _ => 8, // types, constants, global variables, undefs
    })
}

/// Where an instruction's result id is (1: after the result type), if it has one.
fn result_at(opcode: u32) -> Option<usize> {
    let op = u16::try_from(opcode).ok()?;
    if TYPE_AND_RESULT.binary_search(&op).is_ok() {
        Some(1)
    } else {
        RESULT_ONLY.binary_search(&op).is_ok().then_some(0)
    }
}

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
    let bound = w[3];
    if bound == 0 || bound > MAX_BOUND {
        return Err(format!("the SPIR-V id bound {bound} is outside 1..={MAX_BOUND}"));
    }
    if w[4] != 0 {
        return Err(format!("the SPIR-V header's reserved word is 0x{:08x}, not 0", w[4]));
    }
    let mut types: HashMap<u32, SpecType> = HashMap::new();
    let mut spec_ids: HashMap<u32, u32> = HashMap::new();
    let mut constants: Vec<(u32, u32)> = Vec::new(); // (result id, type id)
    let mut defined = vec![0u64; (bound as usize).div_ceil(64)];
    let (mut layout, mut in_function, mut memory_models) = (0u8, false, 0);
    let mut at = 5;
    while at < w.len() {
        let (count, opcode) = ((w[at] >> 16) as usize, w[at] & 0xffff);
        if count == 0 || at + count > w.len() {
            return Err(format!("SPIR-V instruction at word {at} (opcode {opcode}) has a bad word count {count}"));
        }
        let ops = &w[at + 1..at + count];
        let short = || format!("SPIR-V instruction at word {at} (opcode {opcode}) is missing operands");
        if let Some(r) = result_at(opcode) {
            let id = *ops.get(r).ok_or_else(short)?;
            if id == 0 || id >= bound {
                return Err(format!("SPIR-V instruction at word {at} defines id {id}, outside the bound {bound}"));
            }
            let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
            if defined[word] & bit != 0 {
                return Err(format!("SPIR-V instruction at word {at} defines id {id} a second time"));
            }
            defined[word] |= bit;
        }
        if in_function {
            match opcode {
                OP_FUNCTION => return Err(format!("SPIR-V function at word {at} starts inside another")),
                OP_FUNCTION_END => in_function = false,
                _ => {}
            }
        } else if opcode == OP_FUNCTION_END {
            return Err(format!("SPIR-V OpFunctionEnd at word {at} ends no function"));
        } else if opcode == OP_NOP {
            return Err(format!("SPIR-V OpNop at word {at} lies outside any function"));
        } else if let Some(s) = section(opcode) {
            if s < layout {
                return Err(format!(
                    "SPIR-V instruction at word {at} (opcode {opcode}) is out of the module's logical layout"
                ));
            }
            layout = s;
            in_function = opcode == OP_FUNCTION;
            memory_models += usize::from(opcode == OP_MEMORY_MODEL);
        }
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
    if in_function {
        return Err("the SPIR-V module ends inside a function".into());
    }
    if memory_models != 1 {
        return Err(format!("a SPIR-V module has one OpMemoryModel; this one has {memory_models}"));
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

    /// A module of `body` after its capability and memory model.
    fn module(body: &[u32]) -> Vec<u8> {
        let mut w = vec![MAGIC, 0x0001_0000, 0, 100, 0];
        w.extend(op(17, &[6 /* Kernel */]));
        w.extend(op(OP_MEMORY_MODEL, &[2 /* Physical64 */, 2 /* OpenCL */]));
        w.extend_from_slice(body);
        words_to_bytes(&w)
    }

    fn words_to_bytes(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// A function `%f = OpFunction %void None %fnty` with one empty block.
    fn function(f: u32, label: u32) -> Vec<u32> {
        [
            op(OP_FUNCTION, &[1, f, 0, 2]),
            op(248 /* OpLabel */, &[label]),
            op(253 /* OpReturn */, &[]),
            op(OP_FUNCTION_END, &[]),
        ]
        .concat()
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
    fn alias_declarations_may_precede_decorations() {
        // OpAliasDomainDeclINTEL %1, OpAliasScopeDeclINTEL %2 %1, then a decoration.
        let body = [op(5911, &[1]), op(5912, &[2, 1]), op(OP_DECORATE, &[2, 0])].concat();
        assert!(parse(&module(&body)).is_ok());
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
        let types = [op(19, &[1]) /* OpTypeVoid %1 */, op(33, &[2, 1]) /* OpTypeFunction %2 %1 */].concat();
        let fine = [types.clone(), function(3, 4), op(OP_LINE, &[5, 1, 1]), function(6, 7)].concat();
        assert!(parse(&module(&fine)).is_ok());
        // The header alone: no memory model.
        assert!(parse(&words_to_bytes(&[MAGIC, 0x0001_0000, 0, 100, 0])).is_err(), "a header alone");
        let with_bound = |bound: u32, body: &[u32]| {
            let mut m = module(body);
            m[12..16].copy_from_slice(&bound.to_le_bytes());
            m
        };
        assert!(parse(&with_bound(2, &fine)).is_err(), "ids above a bound of 2");
        assert!(parse(&with_bound(0, &[])).is_err(), "a bound of 0");
        assert!(parse(&with_bound(u32::MAX, &fine)).is_err(), "a bound past SPIR-V's limit");
        let mut reserved = module(&fine);
        reserved[16..20].copy_from_slice(&1u32.to_le_bytes());
        assert!(parse(&reserved).is_err(), "the reserved word set");
        assert!(parse(&module(&[types.clone(), op(19, &[1])].concat())).is_err(), "an id defined twice");
        assert!(parse(&module(&[types.clone(), op(19, &[100])].concat())).is_err(), "an id at the bound");
        let nops: Vec<u32> = std::iter::repeat(op(OP_NOP, &[])).take(1000).flatten().collect();
        assert!(parse(&module(&[fine.clone(), nops].concat())).is_err(), "OpNops after the last function");
        assert!(parse(&module(&[fine.clone(), types.clone()].concat())).is_err(), "types after the functions");
        let open = [types.clone(), op(OP_FUNCTION, &[1, 3, 0, 2])].concat();
        assert!(parse(&module(&open)).is_err(), "a function left open");
        assert!(parse(&module(&[types.clone(), op(OP_FUNCTION_END, &[])].concat())).is_err(), "an end of nothing");
        let late_capability = [types.clone(), op(17, &[4])].concat();
        assert!(parse(&module(&late_capability)).is_err(), "a capability after the types");
        assert!(parse(&module(&op(OP_MEMORY_MODEL, &[2, 2]))).is_err(), "two memory models");
        // Debug lines may come anywhere, and a function's body is not checked.
        let nop_inside = [types, op(OP_FUNCTION, &[1, 3, 0, 2]), op(OP_NOP, &[]), op(OP_FUNCTION_END, &[])].concat();
        assert!(parse(&module(&nop_inside)).is_ok());
    }

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
