//! LLVM IR types as they appear in clang's textual output, and their size and
//! alignment under the x86-64 data layout (what the host must lay out in a kernel's
//! argument block, and what `__local` arrays occupy).

use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum IrType {
    Int(u32),
    Half,
    BFloat,
    Float,
    Double,
    Ptr(u32),
    Vector(u64, Box<IrType>),
    Array(u64, Box<IrType>),
    Struct(Vec<IrType>, bool),
    Named(String),
}

/// Named struct types of a module (`%struct.S = type { ... }`).
pub(crate) type TypeTable = HashMap<String, IrType>;

/// Parses one type at the start of `s`; returns it and the rest of the input.
pub(crate) fn parse(s: &str) -> Option<(IrType, &str)> {
    let s = s.trim_start();
    if let Some(rest) = s.strip_prefix("ptr") {
        let rest2 = rest.trim_start();
        if let Some(after) = rest2.strip_prefix("addrspace(") {
            let end = after.find(')')?;
            let space = after[..end].trim().parse().ok()?;
            return Some((IrType::Ptr(space), &after[end + 1..]));
        }
        return Some((IrType::Ptr(0), rest));
    }
    if let Some(rest) = s.strip_prefix("<{") {
        let (fields, rest) = fields(rest, "}>")?;
        return Some((IrType::Struct(fields, true), rest));
    }
    if let Some(rest) = s.strip_prefix('{') {
        let (fields, rest) = fields(rest, "}")?;
        return Some((IrType::Struct(fields, false), rest));
    }
    if let Some(rest) = s.strip_prefix('<') {
        let (n, elem, rest) = sized(rest, '>')?;
        return Some((IrType::Vector(n, Box::new(elem)), rest));
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (n, elem, rest) = sized(rest, ']')?;
        return Some((IrType::Array(n, Box::new(elem)), rest));
    }
    if let Some(rest) = s.strip_prefix('%') {
        let (name, rest) = ident(rest);
        return Some((IrType::Named(name.to_string()), rest));
    }
    if let Some(rest) = s.strip_prefix('i') {
        let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if end > 0 {
            return Some((IrType::Int(rest[..end].parse().ok()?), &rest[end..]));
        }
    }
    for (kw, t) in
        [("half", IrType::Half), ("bfloat", IrType::BFloat), ("float", IrType::Float), ("double", IrType::Double)]
    {
        if let Some(rest) = s.strip_prefix(kw) {
            if !rest.starts_with(|c: char| c.is_alphanumeric()) {
                return Some((t, rest));
            }
        }
    }
    None
}

/// An identifier after `%` or `@`: plain (`struct.S`) or quoted (`"a b"`).
pub(crate) fn ident(s: &str) -> (&str, &str) {
    if let Some(q) = s.strip_prefix('"') {
        let end = q.find('"').unwrap_or(q.len());
        return (&q[..end], &q[(end + 1).min(q.len())..]);
    }
    let end = s.find(|c: char| !(c.is_alphanumeric() || "._$-".contains(c))).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn sized(s: &str, close: char) -> Option<(u64, IrType, &str)> {
    let s = s.trim_start();
    let x = s.find(" x ")?;
    let n = s[..x].trim().parse().ok()?;
    let (elem, rest) = parse(&s[x + 3..])?;
    let rest = rest.trim_start().strip_prefix(close)?;
    Some((n, elem, rest))
}

fn fields<'a>(mut s: &'a str, close: &str) -> Option<(Vec<IrType>, &'a str)> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix(close) {
            return Some((out, rest));
        }
        let (t, rest) = parse(s)?;
        out.push(t);
        s = rest.trim_start();
        s = s.strip_prefix(',').unwrap_or(s);
    }
}

impl IrType {
    /// The type with each named struct replaced by its body, as a literal struct (`None`
    /// where a name is opaque or the nesting does not end).
    pub(crate) fn resolved(&self, types: &TypeTable) -> Option<IrType> {
        fn go(t: &IrType, types: &TypeTable, depth: u32) -> Option<IrType> {
            Some(match t {
                _ if depth > 32 => return None,
                IrType::Named(n) => go(types.get(n)?, types, depth + 1)?,
                IrType::Array(n, e) => IrType::Array(*n, Box::new(go(e, types, depth + 1)?)),
                IrType::Struct(fs, packed) => {
                    IrType::Struct(fs.iter().map(|f| go(f, types, depth + 1)).collect::<Option<_>>()?, *packed)
                }
                other => other.clone(),
            })
        }
        go(self, types, 0)
    }

    /// (allocation size, ABI alignment) in bytes under the x86-64 data layout.
    pub(crate) fn layout(&self, types: &TypeTable) -> Option<(u64, u64)> {
        Some(match self {
            IrType::Int(bits) => {
                let bytes = (*bits as u64).div_ceil(8).next_power_of_two();
                let align = bytes.min(16);
                (bytes.max(1).div_ceil(align) * align, align)
            }
            IrType::Half | IrType::BFloat => (2, 2),
            IrType::Float => (4, 4),
            IrType::Double | IrType::Ptr(_) => (8, 8),
            // Vectors are aligned to their (power-of-two rounded) size; a 3-element
            // vector occupies 4 elements, as OpenCL requires.
            IrType::Vector(n, e) => {
                let (es, _) = e.layout(types)?;
                let size = (n * es).next_power_of_two();
                (size, size)
            }
            IrType::Array(n, e) => {
                let (es, ea) = e.layout(types)?;
                (n * es, ea)
            }
            IrType::Struct(fs, packed) => {
                let (mut off, mut align) = (0u64, 1u64);
                for f in fs {
                    let (fsz, fa) = f.layout(types)?;
                    let fa = if *packed { 1 } else { fa };
                    off = off.div_ceil(fa) * fa + fsz;
                    align = align.max(fa);
                }
                (off.div_ceil(align) * align, align)
            }
            IrType::Named(n) => types.get(n)?.layout(types)?,
        })
    }
}

impl std::fmt::Display for IrType {
    /// As LLVM writes the type.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IrType::Int(bits) => write!(f, "i{bits}"),
            IrType::Half => f.write_str("half"),
            IrType::BFloat => f.write_str("bfloat"),
            IrType::Float => f.write_str("float"),
            IrType::Double => f.write_str("double"),
            IrType::Ptr(0) => f.write_str("ptr"),
            IrType::Ptr(space) => write!(f, "ptr addrspace({space})"),
            IrType::Vector(n, e) => write!(f, "<{n} x {e}>"),
            IrType::Array(n, e) => write!(f, "[{n} x {e}]"),
            IrType::Struct(fields, packed) => {
                let inner: Vec<String> = fields.iter().map(|t| t.to_string()).collect();
                match packed {
                    true => write!(f, "<{{ {} }}>", inner.join(", ")),
                    false => write!(f, "{{ {} }}", inner.join(", ")),
                }
            }
            IrType::Named(n) => write!(f, "%{n}"),
        }
    }
}

/// Reads `%name = type { ... }` definitions from a module.
pub(crate) fn type_table(module: &str) -> TypeTable {
    module
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('%')?;
            let (name, rest) = ident(rest);
            let def = rest.trim_start().strip_prefix("= type")?;
            Some((name.to_string(), parse(def)?.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(s: &str) -> (u64, u64) {
        let types = type_table("%struct.S = type { float, i32, [5 x i8] }\n%struct.P = type <{ i8, i32 }>\n");
        parse(s).unwrap().0.layout(&types).unwrap()
    }

    #[test]
    fn scalar_and_vector_layouts() {
        assert_eq!(lay("i8"), (1, 1));
        assert_eq!(lay("i16"), (2, 2));
        assert_eq!(lay("i64"), (8, 8));
        assert_eq!(lay("half"), (2, 2));
        assert_eq!(lay("double"), (8, 8));
        assert_eq!(lay("ptr addrspace(1)"), (8, 8));
        assert_eq!(lay("<4 x float>"), (16, 16));
        assert_eq!(lay("<3 x float>"), (16, 16));
        assert_eq!(lay("<16 x i8>"), (16, 16));
        assert_eq!(lay("<8 x double>"), (64, 64));
        assert_eq!(lay("<3 x i16>"), (8, 8));
    }

    #[test]
    fn aggregate_layouts() {
        assert_eq!(lay("%struct.S"), (16, 4));
        assert_eq!(lay("%struct.P"), (5, 1));
        assert_eq!(lay("[64 x float]"), (256, 4));
        assert_eq!(lay("{ i8, double }"), (16, 8));
        assert_eq!(lay("[2 x <3 x float>]"), (32, 16));
        assert_eq!(lay("{ [3 x float] }"), (12, 4));
    }

    #[test]
    fn parse_leaves_the_rest() {
        let (t, rest) = parse("ptr addrspace(3) noundef align 4 %1").unwrap();
        assert_eq!(t, IrType::Ptr(3));
        assert_eq!(rest.trim(), "noundef align 4 %1");
        let (t, _) = parse("<{ i8, [2 x i16] }>").unwrap();
        assert_eq!(t, IrType::Struct(vec![IrType::Int(8), IrType::Array(2, Box::new(IrType::Int(16)))], true));
        assert!(parse("label").is_none());
    }
}
