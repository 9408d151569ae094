//! Rewrites the SPIR-V 1.4 instructions the translator (LLVM/SPIR-V 15) cannot read
//! into older ones with the same meaning, so the device can claim SPIR-V 1.4 whole:
//! - `OpDecorateString`/`OpMemberDecorateString` (user semantics, which mean nothing
//!   to execution) are dropped;
//! - `OpCopyMemorySized` with separate source and target memory operands keeps the
//!   first set (volatility and alignment hints on a CPU copy);
//! - `OpCopyMemory` becomes a load and a store (the translator fails on it whatever
//!   its operands), each with its own memory operands;
//! - `OpPtrEqual`/`OpPtrNotEqual` become integer compares of the addresses, and
//!   `OpPtrDiff` their difference divided by the element size;
//! - `OpCopyLogical` becomes extracts and constructs, member by member;
//! - `OpVectorShuffle` of vectors of different lengths (valid; the translator asserts
//!   they match) first widens the shorter one with a shuffle of its own;
//! - `OpConstantNull` of a scalar (valid SPIR-V the translator asserts on) becomes a
//!   zero or false constant;
//! - `OpReadClockKHR` (`SPV_KHR_shader_clock`, which the translator does not know)
//!   becomes a call of cl_khr_kernel_clock's `clock_read_device`, `_work_group` or
//!   `_sub_group` for its scope, declared as an imported function (a `uint2` result is
//!   the 64-bit count cast, low half first).
//!
//! And modules of SPIR-V 1.5 and 1.6 become 1.4 ones, so the device claims those too
//! (`super::versions`): what those versions add for kernels is said in 1.4 terms:
//! - `OpBitcast` between a pointer and a vector of integers (1.5) goes through an
//!   integer as wide as an address (and one between a pointer and such an integer, in
//!   any version, is that conversion);
//! - the `Nontemporal` image operand (1.6, a hint) is dropped, as are the `Uniform` and
//!   `UniformId` decorations and their capability (1.6, hints too);
//! - integer dot products, core in 1.6, get `SPV_KHR_integer_dot_product` declared
//!   (the same capabilities and opcodes).

use std::collections::HashMap;

const OP_CAPABILITY: u32 = 17;
const OP_MEMORY_MODEL: u32 = 14;
const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_CONSTANT_FALSE: u32 = 42;
const OP_CONSTANT_NULL: u32 = 46;
const OP_FUNCTION: u32 = 54;
const OP_LOAD: u32 = 61;
const OP_STORE: u32 = 62;
const OP_COPY_MEMORY: u32 = 63;
const OP_COPY_MEMORY_SIZED: u32 = 64;
const OP_DECORATE: u32 = 71;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_COPY_OBJECT: u32 = 83;
const OP_CONVERT_PTR_TO_U: u32 = 117;
const OP_ISUB: u32 = 130;
const OP_SDIV: u32 = 135;
const OP_IEQUAL: u32 = 170;
const OP_INOT_EQUAL: u32 = 171;
const OP_COPY_LOGICAL: u32 = 400;
const OP_PTR_EQUAL: u32 = 401;
const OP_PTR_NOT_EQUAL: u32 = 402;
const OP_PTR_DIFF: u32 = 403;
const OP_DECORATE_STRING: u32 = 5632;
const OP_MEMBER_DECORATE_STRING: u32 = 5633;
const CAPABILITY_INT64: u32 = 11;
const DECORATION_CPACKED: u32 = 10;

const OP_VECTOR_SHUFFLE: u32 = 79;
const OP_EXTENSION: u32 = 10;
const OP_TYPE_FUNCTION: u32 = 33;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;
const OP_BITCAST: u32 = 124;
const OP_READ_CLOCK: u32 = 5056;
const OP_CONVERT_U_TO_PTR: u32 = 120;
const OP_DECORATE_ID: u32 = 332;
const OP_IMAGE_SAMPLE_EXPLICIT_LOD: u32 = 88;
const OP_IMAGE_FETCH: u32 = 95;
const OP_IMAGE_READ: u32 = 98;
const OP_IMAGE_WRITE: u32 = 99;
const CAPABILITY_UNIFORM_DECORATION: u32 = 71;
/// DotProductInputAll, DotProductInput4x8Bit, DotProductInput4x8BitPacked, DotProduct.
const CAPABILITIES_DOT_PRODUCT: [u32; 4] = [6016, 6017, 6018, 6019];
const DECORATION_UNIFORM: u32 = 26;
const DECORATION_UNIFORM_ID: u32 = 27;
const IMAGE_OPERAND_NONTEMPORAL: u32 = 0x4000;
/// The newest version the translator reads, which later modules are lowered to.
const VERSION_1_4: u32 = 0x0001_0400;
const CAPABILITY_LINKAGE: u32 = 5;
const CAPABILITY_SHADER_CLOCK: u32 = 5055;
const DECORATION_LINKAGE_ATTRIBUTES: u32 = 41;
const LINKAGE_IMPORT: u32 = 1;
/// Deeper type nesting than any real module has.
const MAX_DEPTH: u32 = 64;
/// Most instructions one `OpCopyLogical` may become.
const MAX_COPY_INSTRUCTIONS: usize = 1 << 16;
/// Instructions whose first operand may be a type without the second being a value of
/// it: names, modes and decorations (see `Module::learn`).
const NOT_TYPED: &[u32] = &[3, 4, 5, 6, 7, 8, 10, 11, 15, 16, 71, 72, 73, 74, 332, 5632, 5633];

struct Inst {
    op: u32,
    ops: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq)]
enum Type {
    Bool,
    Int(u32, u32),
    Float(u32),
    Vector(u32, u32),
    Array(u32, u32),
    Struct(Vec<u32>),
    Pointer(u32),
}

struct Module {
    types: HashMap<u32, Type>,
    constants: HashMap<u32, u64>,
    value_types: HashMap<u32, u32>,
    packed: Vec<u32>,
    bound: u32,
    /// Instructions to add before the first function (types and constants).
    globals: Vec<Inst>,
    /// Capabilities to add.
    capabilities: Vec<u32>,
    /// Decorations to add (before the first type), and functions to declare (before
    /// the first function).
    decorations: Vec<Inst>,
    declarations: Vec<Inst>,
    /// The clock functions declared, by scope.
    clocks: HashMap<u64, u32>,
    has_linkage: bool,
    has_int64: bool,
    physical64: bool,
    /// Extensions to declare (after the capabilities).
    extensions: Vec<String>,
}

/// The module (host-order words, header included) with those instructions rewritten;
/// unchanged when it has none.
pub(crate) fn legalize(words: &[u32]) -> Vec<u32> {
    let Some(insts) = instructions(words) else { return words.to_vec() };
    let wanted = [OP_DECORATE_STRING, OP_MEMBER_DECORATE_STRING, OP_COPY_MEMORY, OP_COPY_MEMORY_SIZED];
    let rare = [
        OP_COPY_LOGICAL,
        OP_PTR_EQUAL,
        OP_PTR_NOT_EQUAL,
        OP_PTR_DIFF,
        OP_CONSTANT_NULL,
        OP_VECTOR_SHUFFLE,
        OP_READ_CLOCK,
        OP_BITCAST,
    ];
    let newer = words[1] > VERSION_1_4;
    if !newer && !insts.iter().any(|i| wanted.contains(&i.op) || rare.contains(&i.op)) {
        return words.to_vec();
    }
    let mut m = Module {
        types: HashMap::new(),
        constants: HashMap::new(),
        value_types: HashMap::new(),
        packed: Vec::new(),
        bound: words[3],
        globals: Vec::new(),
        capabilities: Vec::new(),
        decorations: Vec::new(),
        declarations: Vec::new(),
        clocks: HashMap::new(),
        has_linkage: false,
        has_int64: false,
        physical64: true,
        extensions: Vec::new(),
    };
    for i in &insts {
        m.learn(i);
    }
    let declares = |name: &str| insts.iter().any(|i| i.op == OP_EXTENSION && literal(&i.ops) == name);
    let dot_products = insts.iter().any(|i| i.op == OP_CAPABILITY && CAPABILITIES_DOT_PRODUCT.contains(&i.ops[0]));
    if newer && dot_products && !declares("SPV_KHR_integer_dot_product") {
        m.extensions.push("SPV_KHR_integer_dot_product".into());
    }
    let mut body: Vec<Inst> = Vec::with_capacity(insts.len());
    for mut i in insts {
        if newer && lowered_away(&mut i) {
            continue;
        }
        match i.op {
            OP_BITCAST if i.ops.len() == 3 => match m.pointer_bitcast(&i.ops) {
                Some(insts) => body.extend(insts),
                None => body.push(i),
            },
            OP_DECORATE_STRING | OP_MEMBER_DECORATE_STRING => {}
            OP_CAPABILITY if i.ops.first() == Some(&CAPABILITY_SHADER_CLOCK) => {}
            OP_EXTENSION if literal(&i.ops) == "SPV_KHR_shader_clock" => {}
            OP_READ_CLOCK if i.ops.len() == 3 => match m.read_clock(&i.ops) {
                Some(insts) => body.extend(insts),
                None => body.push(i),
            },
            OP_VECTOR_SHUFFLE if i.ops.len() >= 4 => match m.matched_shuffle(&i.ops) {
                Some((widen, ops)) => {
                    body.extend(widen);
                    body.push(Inst { op: i.op, ops });
                }
                None => body.push(i),
            },
            OP_CONSTANT_NULL if i.ops.len() == 2 => match m.types.get(&i.ops[0]) {
                Some(Type::Bool) => body.push(Inst { op: OP_CONSTANT_FALSE, ops: i.ops }),
                Some(Type::Int(w, _) | Type::Float(w)) => {
                    let words = if *w > 32 { 2 } else { 1 };
                    body.push(Inst { op: OP_CONSTANT, ops: [&i.ops[..], &vec![0; words]].concat() });
                }
                _ => body.push(i),
            },
            OP_COPY_MEMORY => match i.ops.first().filter(|_| i.ops.len() >= 2).and_then(|&t| m.pointee(t)) {
                Some(ty) => {
                    // The first memory operands are the target's, the second the source's
                    // (one set serves both).
                    let target = memory_operands(&i.ops[2..]);
                    let rest = &i.ops[2 + target.len()..];
                    let source = if rest.is_empty() { target.clone() } else { memory_operands(rest) };
                    let v = m.fresh();
                    body.push(Inst { op: OP_LOAD, ops: [&[ty, v, i.ops[1]][..], &source].concat() });
                    body.push(Inst { op: OP_STORE, ops: [&[i.ops[0], v][..], &target].concat() });
                }
                None => body.push(i),
            },
            OP_COPY_MEMORY_SIZED => body.push(Inst { op: i.op, ops: first_memory_operands(&i.ops, 3) }),
            OP_PTR_EQUAL | OP_PTR_NOT_EQUAL if i.ops.len() == 4 => {
                let int = m.address_int();
                let (a, b) = (m.fresh(), m.fresh());
                body.push(Inst { op: OP_CONVERT_PTR_TO_U, ops: vec![int, a, i.ops[2]] });
                body.push(Inst { op: OP_CONVERT_PTR_TO_U, ops: vec![int, b, i.ops[3]] });
                let cmp = if i.op == OP_PTR_EQUAL { OP_IEQUAL } else { OP_INOT_EQUAL };
                body.push(Inst { op: cmp, ops: vec![i.ops[0], i.ops[1], a, b] });
            }
            OP_PTR_DIFF if i.ops.len() == 4 => match m.pointee_size(i.ops[2]).map(|s| m.constant(i.ops[0], s)) {
                Some(Some(size)) => {
                    let (ty, a, b, d) = (i.ops[0], m.fresh(), m.fresh(), m.fresh());
                    body.push(Inst { op: OP_CONVERT_PTR_TO_U, ops: vec![ty, a, i.ops[2]] });
                    body.push(Inst { op: OP_CONVERT_PTR_TO_U, ops: vec![ty, b, i.ops[3]] });
                    body.push(Inst { op: OP_ISUB, ops: vec![ty, d, a, b] });
                    body.push(Inst { op: OP_SDIV, ops: vec![ty, i.ops[1], d, size] });
                }
                _ => body.push(i),
            },
            OP_COPY_LOGICAL if i.ops.len() == 3 => {
                let mut out = Vec::new();
                match m.copy_logical(i.ops[0], i.ops[1], i.ops[2], &mut out) {
                    Some(()) => body.extend(out),
                    None => body.push(i),
                }
            }
            _ => body.push(i),
        }
    }
    if !m.declarations.is_empty() && !m.has_linkage {
        m.capabilities.push(CAPABILITY_LINKAGE);
    }
    let mut out = words[..5].to_vec();
    out[1] = out[1].min(VERSION_1_4);
    out[3] = m.bound;
    let (mut added, mut decorated, mut extended) = (false, false, false);
    for (n, i) in body.iter().enumerate() {
        if n == 0 {
            for &c in &m.capabilities {
                emit(&mut out, OP_CAPABILITY, &[c]);
            }
        }
        if !extended && i.op != OP_CAPABILITY {
            extended = true;
            for e in &m.extensions {
                emit(&mut out, OP_EXTENSION, &literal_words(e));
            }
        }
        // Annotations come before the types, constants and variables: the first of
        // those or of the decorations takes the new ones before it.
        if !decorated && (i.op == OP_DECORATE || (19..=46).contains(&i.op) || i.op == 59 || i.op == OP_FUNCTION) {
            decorated = true;
            for d in &m.decorations {
                emit(&mut out, d.op, &d.ops);
            }
        }
        if i.op == OP_FUNCTION && !added {
            added = true;
            for g in m.globals.iter().chain(&m.declarations) {
                emit(&mut out, g.op, &g.ops);
            }
        }
        emit(&mut out, i.op, &i.ops);
    }
    out
}

/// For a module of SPIR-V 1.5 or later: whether `i` says nothing a 1.4 module must (the
/// `Uniform` hints and their capability), else `i` without what 1.4 lacks (the
/// `Nontemporal` image operand, a hint).
fn lowered_away(i: &mut Inst) -> bool {
    let uniform = |d: Option<&u32>| matches!(d, Some(&DECORATION_UNIFORM | &DECORATION_UNIFORM_ID));
    match i.op {
        OP_CAPABILITY => i.ops.first() == Some(&CAPABILITY_UNIFORM_DECORATION),
        OP_DECORATE | OP_DECORATE_ID => uniform(i.ops.get(1)),
        OP_IMAGE_SAMPLE_EXPLICIT_LOD | OP_IMAGE_FETCH | OP_IMAGE_READ | OP_IMAGE_WRITE => {
            // The operand mask follows the image, the coordinate and (for a write) the
            // texel or (for the others) the result's type and id.
            let at = if i.op == OP_IMAGE_WRITE { 3 } else { 4 };
            if let Some(mask) = i.ops.get_mut(at) {
                *mask &= !IMAGE_OPERAND_NONTEMPORAL;
                if *mask == 0 && i.ops.len() == at + 1 {
                    i.ops.pop();
                }
            }
            false
        }
        _ => false,
    }
}

/// A literal string operand (nul-terminated, packed four bytes a word, low first).
fn literal(ops: &[u32]) -> String {
    let bytes: Vec<u8> = ops.iter().flat_map(|w| w.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The words of a literal string operand.
fn literal_words(text: &str) -> Vec<u32> {
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn instructions(words: &[u32]) -> Option<Vec<Inst>> {
    let mut at = 5;
    let mut out = Vec::new();
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return None;
        }
        out.push(Inst { op: words[at] & 0xffff, ops: words[at + 1..at + count].to_vec() });
        at += count;
    }
    Some(out)
}

fn emit(out: &mut Vec<u32>, op: u32, ops: &[u32]) {
    out.push(((ops.len() as u32 + 1) << 16) | op);
    out.extend_from_slice(ops);
}

/// The operands of a copy up to the end of its first memory-operand set (`fixed`
/// operands come before them).
fn first_memory_operands(ops: &[u32], fixed: usize) -> Vec<u32> {
    [&ops[..fixed.min(ops.len())], &memory_operands(ops.get(fixed..).unwrap_or(&[]))[..]].concat()
}

/// The memory-operand set at the start of `ops` (a mask and what its bits take).
fn memory_operands(ops: &[u32]) -> Vec<u32> {
    let Some(&mask) = ops.first() else { return Vec::new() };
    // Aligned takes a literal; MakePointerAvailable and MakePointerVisible a scope id.
    let extra = [0x2u32, 0x8, 0x10].iter().filter(|&&b| mask & b != 0).count();
    ops[..(1 + extra).min(ops.len())].to_vec()
}

impl Module {
    fn learn(&mut self, i: &Inst) {
        let o = &i.ops;
        let ty = match (i.op, o.len()) {
            (OP_TYPE_BOOL, 1..) => Some(Type::Bool),
            (OP_TYPE_INT, 3..) => Some(Type::Int(o[1], o[2])),
            (OP_TYPE_FLOAT, 2..) => Some(Type::Float(o[1])),
            (OP_TYPE_VECTOR, 3..) => Some(Type::Vector(o[1], o[2])),
            (OP_TYPE_ARRAY, 3..) => Some(Type::Array(o[1], o[2])),
            (OP_TYPE_STRUCT, 1..) => Some(Type::Struct(o[1..].to_vec())),
            (OP_TYPE_POINTER, 3..) => Some(Type::Pointer(o[2])),
            _ => None,
        };
        // An instruction whose first operand is a known type has a result of that type
        // as its second: that is the layout of every typed instruction, and no other
        // instruction starts with a type but names, modes and decorations (a type
        // being defined is learnt after this).
        if o.len() >= 2 && !NOT_TYPED.contains(&i.op) && ty.is_none() && self.types.contains_key(&o[0]) {
            self.value_types.insert(o[1], o[0]);
        }
        if let Some(t) = ty {
            if t == Type::Int(64, 0) || t == Type::Int(64, 1) {
                self.has_int64 = true;
            }
            self.types.insert(o[0], t);
        }
        match i.op {
            OP_CAPABILITY if o.first() == Some(&CAPABILITY_INT64) => self.has_int64 = true,
            OP_MEMORY_MODEL => self.physical64 = o.first() != Some(&1),
            OP_CONSTANT if o.len() >= 3 => {
                let hi = o.get(3).copied().unwrap_or(0) as u64;
                self.constants.insert(o[1], (hi << 32) | o[2] as u64);
            }
            OP_DECORATE if o.get(1) == Some(&DECORATION_CPACKED) => self.packed.push(o[0]),
            OP_CAPABILITY if o.first() == Some(&CAPABILITY_LINKAGE) => self.has_linkage = true,
            _ => {}
        }
    }

    fn fresh(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// `%r = OpReadClockKHR %type %scope` as a call of cl_khr_kernel_clock's function
    /// of that scope (Device 1, Workgroup 2, Subgroup 3), cast for a `uint2` result.
    fn read_clock(&mut self, ops: &[u32]) -> Option<Vec<Inst>> {
        let (ty, result, scope) = (ops[0], ops[1], *self.constants.get(&ops[2])?);
        let name = match scope {
            1 => "_Z17clock_read_devicev",
            2 => "_Z21clock_read_work_groupv",
            3 => "_Z20clock_read_sub_groupv",
            _ => return None,
        };
        let vector = match self.types.get(&ty)? {
            Type::Int(64, _) => false,
            Type::Vector(e, 2) if self.types.get(e) == Some(&Type::Int(32, 0)) => true,
            _ => return None,
        };
        let ulong = self.int_type(64);
        let function = match self.clocks.get(&scope) {
            Some(&f) => f,
            None => {
                let (fty, f) = (self.fresh(), self.fresh());
                self.globals.push(Inst { op: OP_TYPE_FUNCTION, ops: vec![fty, ulong] });
                self.declarations.push(Inst { op: OP_FUNCTION, ops: vec![ulong, f, 0, fty] });
                self.declarations.push(Inst { op: OP_FUNCTION_END, ops: vec![] });
                let linkage =
                    [&[f, DECORATION_LINKAGE_ATTRIBUTES][..], &literal_words(name), &[LINKAGE_IMPORT]].concat();
                self.decorations.push(Inst { op: OP_DECORATE, ops: linkage });
                self.clocks.insert(scope, f);
                f
            }
        };
        if !vector {
            return Some(vec![Inst { op: OP_FUNCTION_CALL, ops: vec![ty, result, function] }]);
        }
        let count = self.fresh();
        Some(vec![
            Inst { op: OP_FUNCTION_CALL, ops: vec![ulong, count, function] },
            Inst { op: OP_BITCAST, ops: vec![ty, result, count] },
        ])
    }

    /// `%r = OpBitcast %type %value` between a pointer and a vector of integers (SPIR-V
    /// 1.5) as a conversion through an address-wide integer, and between a pointer and
    /// such an integer as the conversion (LLVM has no bitcast between pointers and
    /// integers); `None` for other bitcasts.
    fn pointer_bitcast(&mut self, ops: &[u32]) -> Option<Vec<Inst>> {
        let (ty, result, value) = (ops[0], ops[1], ops[2]);
        let from = self.types.get(self.value_types.get(&value)?)?.clone();
        let to = self.types.get(&ty)?.clone();
        let int = self.address_int();
        let via = self.fresh();
        match (from, to) {
            (Type::Pointer(_), Type::Vector(..)) => Some(vec![
                Inst { op: OP_CONVERT_PTR_TO_U, ops: vec![int, via, value] },
                Inst { op: OP_BITCAST, ops: vec![ty, result, via] },
            ]),
            (Type::Vector(..), Type::Pointer(_)) => Some(vec![
                Inst { op: OP_BITCAST, ops: vec![int, via, value] },
                Inst { op: OP_CONVERT_U_TO_PTR, ops: vec![ty, result, via] },
            ]),
            (Type::Pointer(_), Type::Int(..)) if ty == int => {
                Some(vec![Inst { op: OP_CONVERT_PTR_TO_U, ops: vec![ty, result, value] }])
            }
            (Type::Int(..), Type::Pointer(_)) if self.value_types.get(&value) == Some(&int) => {
                Some(vec![Inst { op: OP_CONVERT_U_TO_PTR, ops: vec![ty, result, value] }])
            }
            _ => None,
        }
    }

    /// An unsigned integer type of `width` bits, found or added.
    fn int_type(&mut self, width: u32) -> u32 {
        if let Some((&id, _)) = self.types.iter().find(|(_, t)| **t == Type::Int(width, 0)) {
            return id;
        }
        if width == 64 && !self.has_int64 {
            self.capabilities.push(CAPABILITY_INT64);
            self.has_int64 = true;
        }
        let id = self.fresh();
        self.globals.push(Inst { op: OP_TYPE_INT, ops: vec![id, width, 0] });
        self.types.insert(id, Type::Int(width, 0));
        id
    }

    /// An unsigned integer type as wide as a pointer, found or added.
    fn address_int(&mut self) -> u32 {
        self.int_type(if self.physical64 { 64 } else { 32 })
    }

    /// A constant of integer type `ty`, found or added.
    fn constant(&mut self, ty: u32, value: u64) -> Option<u32> {
        let Some(Type::Int(width, _)) = self.types.get(&ty).cloned() else { return None };
        let id = self.fresh();
        let mut ops = vec![ty, id, value as u32];
        if width == 64 {
            ops.push((value >> 32) as u32);
        }
        self.globals.push(Inst { op: OP_CONSTANT, ops });
        Some(id)
    }

    /// The type a pointer value points to.
    fn pointee(&self, pointer: u32) -> Option<u32> {
        match self.types.get(self.value_types.get(&pointer)?)? {
            Type::Pointer(p) => Some(*p),
            _ => None,
        }
    }

    /// The size of what a pointer value points to.
    fn pointee_size(&self, pointer: u32) -> Option<u64> {
        let ty = self.value_types.get(&pointer).or_else(|| self.types.get(&pointer).map(|_| &pointer))?;
        match self.types.get(ty)? {
            Type::Pointer(p) => self.size(*p, 0).map(|(s, _)| s),
            _ => None,
        }
    }

    /// (size, alignment) of a type as OpenCL lays it out; `None` for what no valid
    /// module has (types nested deeper than `MAX_DEPTH`, which is how a malformed
    /// module's self-referring types end, or sizes past 64 bits).
    fn size(&self, ty: u32, depth: u32) -> Option<(u64, u64)> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match self.types.get(&ty)? {
            Type::Bool => (1, 1),
            Type::Int(w, _) | Type::Float(w) => ((*w as u64 / 8).max(1), (*w as u64 / 8).max(1)),
            Type::Pointer(_) => {
                let p = if self.physical64 { 8 } else { 4 };
                (p, p)
            }
            Type::Vector(e, n) => {
                let (s, _) = self.size(*e, depth + 1)?;
                let total = s.checked_mul(u64::from(*n).checked_next_power_of_two()?)?;
                (total, total)
            }
            Type::Array(e, len) => {
                let (s, a) = self.size(*e, depth + 1)?;
                (s.checked_mul(*self.constants.get(len)?)?, a)
            }
            Type::Struct(members) => {
                let packed = self.packed.contains(&ty);
                let (mut off, mut align) = (0u64, 1u64);
                for &m in members {
                    let (s, a) = self.size(m, depth + 1)?;
                    let a = if packed { 1 } else { a.max(1) };
                    off = off.div_ceil(a).checked_mul(a)?.checked_add(s)?;
                    align = align.max(a);
                }
                (off.div_ceil(align).checked_mul(align)?, align)
            }
        })
    }

    /// A shuffle of two vectors of different lengths as one of equal lengths: the
    /// shorter widened first (its components repeated), the indices of the second
    /// vector moved to where they now are.
    fn matched_shuffle(&mut self, ops: &[u32]) -> Option<(Vec<Inst>, Vec<u32>)> {
        let (t1, t2) = (*self.value_types.get(&ops[2])?, *self.value_types.get(&ops[3])?);
        let (Type::Vector(e1, n1), Type::Vector(e2, n2)) = (self.types.get(&t1)?.clone(), self.types.get(&t2)?.clone())
        else {
            return None;
        };
        // Vectors have 2 to 16 components.
        if t1 == t2 || e1 != e2 || n1 == n2 || n1.max(n2) > 16 {
            return None;
        }
        let wide = self.fresh();
        let (short, short_n, long_t, long_n) = if n1 < n2 { (ops[2], n1, t2, n2) } else { (ops[3], n2, t1, n1) };
        let mut w = vec![long_t, wide, short, short];
        w.extend((0..long_n).map(|k| if k < short_n { k } else { 0 }));
        let mut new = ops.to_vec();
        if n1 < n2 {
            // v1 widened to n2: the second vector's indices move up by n2 - n1.
            new[2] = wide;
            for c in new[4..].iter_mut().filter(|c| **c != u32::MAX && **c >= n1) {
                *c += n2 - n1;
            }
        } else {
            new[3] = wide;
        }
        Some((vec![Inst { op: OP_VECTOR_SHUFFLE, ops: w }], new))
    }

    /// `result = OpCopyLogical to x` as copies, extracts and constructs.
    fn copy_logical(&mut self, to: u32, result: u32, x: u32, out: &mut Vec<Inst>) -> Option<()> {
        let from = *self.value_types.get(&x)?;
        self.copy_as(to, from, result, x, out, 0)
    }

    fn copy_as(&mut self, to: u32, from: u32, result: u32, x: u32, out: &mut Vec<Inst>, depth: u32) -> Option<()> {
        // A budget on nesting and on the instructions written: a malformed module's
        // types must not make the rewrite run away.
        if depth > MAX_DEPTH || out.len() > MAX_COPY_INSTRUCTIONS {
            return None;
        }
        if to == from {
            out.push(Inst { op: OP_COPY_OBJECT, ops: vec![to, result, x] });
            return Some(());
        }
        let members: Vec<(u32, u32)> = match (self.types.get(&to)?.clone(), self.types.get(&from)?.clone()) {
            (Type::Struct(a), Type::Struct(b)) if a.len() == b.len() => a.into_iter().zip(b).collect(),
            (Type::Array(a, la), Type::Array(b, lb)) => {
                let n = *self.constants.get(&la)?;
                (n == *self.constants.get(&lb)? && n <= 4096).then_some(())?;
                (0..n).map(|_| (a, b)).collect()
            }
            _ => return None,
        };
        let mut parts = Vec::with_capacity(members.len());
        for (k, (t, f)) in members.into_iter().enumerate() {
            let e = self.fresh();
            out.push(Inst { op: OP_COMPOSITE_EXTRACT, ops: vec![f, e, x, k as u32] });
            if t == f {
                parts.push(e);
            } else {
                let c = self.fresh();
                self.copy_as(t, f, c, e, out, depth + 1)?;
                parts.push(c);
            }
        }
        let mut ops = vec![to, result];
        ops.extend(parts);
        out.push(Inst { op: OP_COMPOSITE_CONSTRUCT, ops });
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(insts: &[(u32, &[u32])], bound: u32) -> Vec<u32> {
        let mut w = vec![0x0723_0203, 0x0001_0400, 0, bound, 0];
        for (op, ops) in insts {
            emit(&mut w, *op, ops);
        }
        w
    }

    fn ops_of(words: &[u32]) -> Vec<(u32, Vec<u32>)> {
        instructions(words).unwrap().into_iter().map(|i| (i.op, i.ops)).collect()
    }

    #[test]
    fn clock_reads_become_calls_of_imported_kernel_clock_functions() {
        // %2 = uint, %3 = ulong, %4 = uint2, %5/%6 scopes 1 and 3.
        let ext = literal_words("SPV_KHR_shader_clock");
        let m = module(
            &[
                (OP_CAPABILITY, &[CAPABILITY_SHADER_CLOCK]),
                (OP_EXTENSION, &ext),
                (OP_MEMORY_MODEL, &[2, 2]),
                (OP_TYPE_INT, &[2, 32, 0]),
                (OP_TYPE_INT, &[3, 64, 0]),
                (OP_TYPE_VECTOR, &[4, 2, 2]),
                (OP_CONSTANT, &[2, 5, 1]),
                (OP_CONSTANT, &[2, 6, 3]),
                (OP_FUNCTION, &[1, 8, 0, 9]),
                (OP_READ_CLOCK, &[3, 10, 5]),
                (OP_READ_CLOCK, &[4, 11, 6]),
                (OP_READ_CLOCK, &[3, 12, 5]),
            ],
            20,
        );
        let out = ops_of(&legalize(&m));
        assert!(!out.iter().any(|(op, ops)| *op == OP_EXTENSION || ops.first() == Some(&CAPABILITY_SHADER_CLOCK)));
        assert!(out.contains(&(OP_CAPABILITY, vec![CAPABILITY_LINKAGE])), "Linkage is added for the imports");
        let imports: Vec<String> = out
            .iter()
            .filter(|(op, ops)| *op == OP_DECORATE && ops.get(1) == Some(&DECORATION_LINKAGE_ATTRIBUTES))
            .map(|(_, ops)| literal(&ops[2..]))
            .collect();
        assert_eq!(imports, ["_Z17clock_read_devicev", "_Z20clock_read_sub_groupv"], "one import a scope");
        let calls: Vec<&Vec<u32>> = out.iter().filter(|(op, _)| *op == OP_FUNCTION_CALL).map(|(_, o)| o).collect();
        assert_eq!(calls.len(), 3);
        assert_eq!((calls[0][0], calls[0][1]), (3, 10));
        assert_eq!(calls[0][2], calls[2][2], "the device clock is declared once");
        // The uint2 read is the 64-bit count cast.
        assert!(out.contains(&(OP_BITCAST, vec![4, 11, calls[1][1]])));
    }

    #[test]
    fn modules_without_those_instructions_are_unchanged() {
        let m = module(&[(OP_CAPABILITY, &[6]), (OP_MEMORY_MODEL, &[2, 2])], 10);
        assert_eq!(legalize(&m), m);
    }

    #[test]
    fn pointer_operations_become_integer_ones() {
        // %2 = uint, %3 = ptr to uint, %4/%5 pointers, %6 bool, %7 = ulong
        let m = module(
            &[
                (OP_MEMORY_MODEL, &[2, 2]),
                (OP_DECORATE_STRING, &[4, 5635, 0x4f4f46]),
                (OP_TYPE_INT, &[2, 32, 0]),
                (OP_TYPE_INT, &[7, 64, 0]),
                (OP_TYPE_POINTER, &[3, 5, 2]),
                (OP_TYPE_BOOL, &[6]),
                (OP_CONSTANT_NULL, &[7, 20]),
                (OP_CONSTANT_NULL, &[6, 21]),
                (OP_FUNCTION, &[1, 8, 0, 9]),
                (55, &[3, 4]),
                (55, &[3, 5]),
                (OP_PTR_EQUAL, &[6, 10, 4, 5]),
                (OP_PTR_DIFF, &[7, 11, 4, 5]),
                (OP_COPY_MEMORY, &[4, 5, 1, 1]),
                (OP_COPY_MEMORY_SIZED, &[4, 5, 7, 2, 4, 1]),
            ],
            22,
        );
        let out = legalize(&m);
        let insts = ops_of(&out);
        assert!(!insts.iter().any(|(op, _)| *op == OP_DECORATE_STRING));
        assert!(insts.contains(&(OP_CONSTANT, vec![7, 20, 0, 0])), "a null ulong is a zero");
        assert!(insts.contains(&(OP_CONSTANT_FALSE, vec![6, 21])), "a null bool is false");
        assert!(insts.contains(&(OP_IEQUAL, vec![6, 10, 22, 23])), "{insts:?}");
        // The element size, 4, as a ulong constant before the function.
        let size = insts.iter().find(|(op, o)| *op == OP_CONSTANT && o[0] == 7 && o[2] == 4).expect("size").1[1];
        let f = insts.iter().position(|(op, _)| *op == OP_FUNCTION).unwrap();
        assert!(insts[..f].iter().any(|(_, o)| o.get(1) == Some(&size)));
        assert!(insts.iter().any(|(op, o)| *op == OP_SDIV && o[1] == 11 && o[3] == size));
        let (_, load) = insts.iter().find(|(op, _)| *op == OP_LOAD).expect("a load");
        assert_eq!((load[0], load[2], load[3]), (2, 5, 1), "a volatile uint load from the source");
        assert!(insts.contains(&(OP_STORE, vec![4, load[1], 1])));
        assert!(insts.contains(&(OP_COPY_MEMORY_SIZED, vec![4, 5, 7, 2, 4])), "the second memory operand set goes");
        assert!(out[3] > 22, "the bound covers the new ids");
    }

    #[test]
    fn modules_of_spirv_1_6_become_1_4_ones() {
        // %2 = uint, %3 = uint2, %4 = ulong, %5 = ptr to uint, %6 a pointer value, %7 an
        // image, %8 a coordinate, %9 a texel.
        let mut m = module(
            &[
                (OP_CAPABILITY, &[6]),
                (OP_CAPABILITY, &[CAPABILITY_UNIFORM_DECORATION]),
                (OP_CAPABILITY, &[6019]),
                (OP_MEMORY_MODEL, &[2, 2]),
                (OP_DECORATE, &[6, DECORATION_UNIFORM]),
                (OP_DECORATE_ID, &[6, DECORATION_UNIFORM_ID, 2]),
                (OP_TYPE_INT, &[2, 32, 0]),
                (OP_TYPE_VECTOR, &[3, 2, 2]),
                (OP_TYPE_INT, &[4, 64, 0]),
                (OP_TYPE_POINTER, &[5, 7, 2]),
                (OP_FUNCTION, &[1, 10, 0, 11]),
                (55, &[5, 6]),
                (OP_BITCAST, &[3, 12, 6]),
                (OP_BITCAST, &[4, 13, 6]),
                (OP_IMAGE_WRITE, &[7, 8, 9, IMAGE_OPERAND_NONTEMPORAL]),
                (OP_IMAGE_READ, &[3, 14, 7, 8, IMAGE_OPERAND_NONTEMPORAL | 0x2, 15]),
            ],
            20,
        );
        m[1] = 0x0001_0600;
        let out = legalize(&m);
        assert_eq!(out[1], VERSION_1_4);
        let insts = ops_of(&out);
        assert!(!insts.iter().any(|(op, o)| *op == OP_CAPABILITY && o[0] == CAPABILITY_UNIFORM_DECORATION));
        assert!(!insts.iter().any(|(op, _)| *op == OP_DECORATE || *op == OP_DECORATE_ID));
        let ext = insts.iter().position(|(op, o)| *op == OP_EXTENSION && literal(o) == "SPV_KHR_integer_dot_product");
        let last_capability = insts.iter().rposition(|(op, _)| *op == OP_CAPABILITY).unwrap();
        assert_eq!(ext, Some(last_capability + 1), "{insts:?}");
        // Pointer to uint2: through a ulong; pointer to ulong: the conversion alone.
        assert!(insts.contains(&(OP_CONVERT_PTR_TO_U, vec![4, 20, 6])), "{insts:?}");
        assert!(insts.contains(&(OP_BITCAST, vec![3, 12, 20])));
        assert!(insts.contains(&(OP_CONVERT_PTR_TO_U, vec![4, 13, 6])));
        assert!(insts.contains(&(OP_IMAGE_WRITE, vec![7, 8, 9])), "the hint goes, and its empty mask");
        assert!(insts.contains(&(OP_IMAGE_READ, vec![3, 14, 7, 8, 0x2, 15])));
        // A 1.4 module keeps its Uniform decorations.
        let mut old = m.clone();
        old[1] = VERSION_1_4;
        assert!(ops_of(&legalize(&old)).iter().any(|(op, _)| *op == OP_DECORATE));
    }

    #[test]
    fn logical_copies_become_member_copies() {
        // Two structs { uint, float }: %5 and %6; a constant %9 of %5 copied as %6.
        let m = module(
            &[
                (OP_MEMORY_MODEL, &[2, 2]),
                (OP_TYPE_INT, &[2, 32, 0]),
                (OP_TYPE_FLOAT, &[3, 32]),
                (OP_TYPE_STRUCT, &[5, 2, 3]),
                (OP_TYPE_STRUCT, &[6, 2, 3]),
                (44, &[5, 9, 7, 8]),
                (OP_FUNCTION, &[1, 10, 0, 11]),
                (OP_COPY_LOGICAL, &[6, 12, 9]),
            ],
            13,
        );
        let insts = ops_of(&legalize(&m));
        assert!(insts.contains(&(OP_COMPOSITE_EXTRACT, vec![2, 13, 9, 0])), "{insts:?}");
        assert!(insts.contains(&(OP_COMPOSITE_EXTRACT, vec![3, 14, 9, 1])));
        assert!(insts.contains(&(OP_COMPOSITE_CONSTRUCT, vec![6, 12, 13, 14])));
    }

    #[test]
    fn malformed_types_do_not_run_away() {
        // %5 = struct { %5 }, %6 = struct { %7 }, %7 = struct { %6 }, a huge array and
        // vector; pointers to each, and the instructions that would size or copy them.
        let m = module(
            &[
                (OP_MEMORY_MODEL, &[2, 2]),
                (OP_TYPE_INT, &[2, 64, 0]),
                (OP_CONSTANT, &[2, 3, u32::MAX, u32::MAX]),
                (OP_TYPE_STRUCT, &[5, 5]),
                (OP_TYPE_STRUCT, &[6, 7]),
                (OP_TYPE_STRUCT, &[7, 6]),
                (OP_TYPE_ARRAY, &[8, 2, 3]),
                (OP_TYPE_VECTOR, &[9, 2, u32::MAX]),
                (OP_TYPE_POINTER, &[10, 5, 5]),
                (OP_TYPE_POINTER, &[11, 5, 8]),
                (OP_TYPE_POINTER, &[12, 5, 9]),
                (1, &[10, 20]),
                (1, &[11, 21]),
                (1, &[12, 22]),
                (1, &[6, 23]),
                (1, &[9, 24]),
                (OP_FUNCTION, &[1, 30, 0, 31]),
                (OP_PTR_DIFF, &[2, 40, 20, 20]),
                (OP_PTR_DIFF, &[2, 41, 21, 21]),
                (OP_PTR_DIFF, &[2, 42, 22, 22]),
                (OP_COPY_LOGICAL, &[7, 43, 23]),
                (OP_VECTOR_SHUFFLE, &[9, 44, 24, 20, 0]),
                (OP_COPY_MEMORY, &[]),
                (OP_COPY_MEMORY_SIZED, &[1]),
            ],
            50,
        );
        let insts = ops_of(&legalize(&m));
        for op in [OP_PTR_DIFF, OP_COPY_LOGICAL, OP_VECTOR_SHUFFLE, OP_COPY_MEMORY] {
            assert!(insts.iter().any(|(o, _)| *o == op), "opcode {op} is left for the translator to refuse");
        }
    }

    #[test]
    fn shuffles_of_unequal_vectors_are_widened() {
        // %3 = uint3, %4 = uint2, %5 = uint4; %6: uint3 value, %7: uint2 value.
        let m = module(
            &[
                (OP_MEMORY_MODEL, &[2, 2]),
                (OP_TYPE_INT, &[2, 32, 0]),
                (OP_TYPE_VECTOR, &[3, 2, 3]),
                (OP_TYPE_VECTOR, &[4, 2, 2]),
                (OP_TYPE_VECTOR, &[5, 2, 4]),
                (1, &[3, 6]),
                (1, &[4, 7]),
                (OP_FUNCTION, &[1, 10, 0, 11]),
                (OP_VECTOR_SHUFFLE, &[5, 12, 6, 7, 0, 2, 3, 4]),
                (OP_VECTOR_SHUFFLE, &[5, 13, 7, 6, 0, 2, 3, u32::MAX]),
            ],
            14,
        );
        let insts = ops_of(&legalize(&m));
        // uint2 %7 widened to uint3 %14 = (x, y, x); indices unchanged.
        assert!(insts.contains(&(OP_VECTOR_SHUFFLE, vec![3, 14, 7, 7, 0, 1, 0])), "{insts:?}");
        assert!(insts.contains(&(OP_VECTOR_SHUFFLE, vec![5, 12, 6, 14, 0, 2, 3, 4])));
        // As the first operand: the second vector's indices move up by one.
        assert!(insts.contains(&(OP_VECTOR_SHUFFLE, vec![3, 15, 7, 7, 0, 1, 0])));
        assert!(insts.contains(&(OP_VECTOR_SHUFFLE, vec![5, 13, 15, 6, 0, 3, 4, u32::MAX])));
    }
}
