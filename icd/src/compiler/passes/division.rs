//! Integer division that cannot trap. OpenCL C leaves the result of an integer division
//! by zero (and of `INT_MIN / -1`) unspecified, but x86's `div` and `idiv` raise a
//! divide error, which kills the host process with SIGFPE (the CTS's integer_ops
//! divides chars by zero). Every `sdiv`, `udiv`, `srem` and `urem` of the kernel module
//! gets its divisor replaced by 1 where the division would trap; the optimiser folds the
//! guard away for constant divisors, and next to a division it costs little.
//!
//! Scalar `udiv` and `urem` by a divisor that is not a constant (a size query, a kernel
//! argument) then call helpers in builtins/clc/workitem.c that shift or mask where the
//! divisor is a power of two: on the 2-core machine `x[(l + 1) % get_local_size(0)]`
//! spent 64% of the bench's barrier kernel in `div`, and the barrier cost per
//! work-item went 1.25-1.47 -> 1.08-1.13 ns.

use std::fmt::Write;

use super::ir_text::split_top;

/// `(lanes, element bits)` of an integer type `iN` or `<L x iN>`.
fn int_type(ty: &str) -> Option<(Option<u32>, u32)> {
    match ty.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        Some(v) => {
            let (lanes, elem) = v.split_once(" x ")?;
            Some((Some(lanes.trim().parse().ok()?), elem.trim().strip_prefix('i')?.parse().ok()?))
        }
        None => Some((None, ty.strip_prefix('i')?.parse().ok()?)),
    }
}

/// A constant of the type: `value` in every lane.
fn constant(lanes: Option<u32>, bits: u32, value: &str) -> String {
    match lanes {
        None => value.to_string(),
        Some(n) => format!("<{}>", vec![format!("i{bits} {value}"); n as usize].join(", ")),
    }
}

/// Rewrites one division instruction, or returns None for any other line; with the
/// declaration of the helper it calls, if any.
fn guard_line(line: &str, n: usize) -> Option<(String, Option<String>)> {
    let (lhs, rhs) = line.split_once(" = ")?;
    let (op, rest) = rhs.split_once(' ')?;
    if !matches!(op, "sdiv" | "udiv" | "srem" | "urem") || !lhs.trim_start().starts_with('%') {
        return None;
    }
    let rest = rest.strip_prefix("exact ").unwrap_or(rest);
    // `TYPE a, b` then metadata (`, !dbg !7`); a vector type contains spaces.
    let type_end = if rest.starts_with('<') { rest.find('>')? + 1 } else { rest.find(' ')? };
    let ty = &rest[..type_end];
    let (lanes, bits) = int_type(ty)?;
    let items = split_top(&rest[type_end..]);
    let (a, b) = (*items.first()?, *items.get(1)?);
    let meta: String = items[2..].iter().map(|m| format!(", {m}")).collect();
    let i1 = lanes.map_or("i1".to_string(), |l| format!("<{l} x i1>"));
    let zero = if lanes.is_some() { "zeroinitializer".to_string() } else { "0".to_string() };
    let p = format!("%__fcl_div{n}");
    let mut out = String::new();
    let _ = writeln!(out, "  {p}_zero = icmp eq {ty} {b}, {zero}");
    let bad = if op.starts_with('s') {
        // INT_MIN / -1 overflows, and traps too.
        let min = format!("-{}", 1u128 << (bits - 1));
        let _ = writeln!(out, "  {p}_m1 = icmp eq {ty} {b}, {}", constant(lanes, bits, "-1"));
        let _ = writeln!(out, "  {p}_min = icmp eq {ty} {a}, {}", constant(lanes, bits, &min));
        let _ = writeln!(out, "  {p}_ovf = and {i1} {p}_m1, {p}_min");
        let _ = writeln!(out, "  {p}_bad = or {i1} {p}_zero, {p}_ovf");
        format!("{p}_bad")
    } else {
        format!("{p}_zero")
    };
    let _ = writeln!(out, "  {p}_d = select {i1} {bad}, {ty} {}, {ty} {b}", constant(lanes, bits, "1"));
    let helper = unsigned_helper(op, lanes, bits, b);
    match &helper {
        Some(h) => {
            let _ = write!(out, "{lhs} = call {ty} @{h}({ty} {a}, {ty} {p}_d){meta}");
        }
        None => {
            let _ = write!(out, "{lhs} = {op} {ty} {a}, {p}_d{meta}");
        }
    }
    Some((out, helper.map(|h| format!("declare {ty} @{h}({ty}, {ty})"))))
}

/// Whether a function is one of the helpers below: a value of its arguments alone.
pub(crate) fn is_helper(name: &str) -> bool {
    ["__ferrocl_udiv_u", "__ferrocl_urem_u"].iter().any(|p| name.starts_with(p))
}

/// The helper (builtins/clc/workitem.c) for a scalar unsigned division or remainder by
/// a divisor that is not a constant: a shift or a mask where the divisor turns out a
/// power of two. Constant divisors are the optimiser's already.
fn unsigned_helper(op: &str, lanes: Option<u32>, bits: u32, divisor: &str) -> Option<String> {
    let constant = divisor.parse::<i128>().is_ok();
    (lanes.is_none() && !constant && matches!(bits, 32 | 64) && matches!(op, "udiv" | "urem"))
        .then(|| format!("__ferrocl_{op}_u{bits}"))
}

/// Guards every integer division of the module, and routes scalar unsigned ones by a
/// run-time divisor through the helpers (declared at the end).
pub(crate) fn guard(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut n = 0;
    let mut helpers = std::collections::BTreeSet::new();
    for line in text.lines() {
        match guard_line(line, n) {
            Some((g, declaration)) => {
                helpers.extend(declaration);
                out.push_str(&g);
                n += 1;
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    for d in helpers {
        out.push_str(&d);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_that_would_trap_become_one() {
        let g = guard("  %3 = sdiv i8 %1, %2, !dbg !9\n  %4 = add i32 %a, %b\n");
        assert_eq!(
            g,
            "  %__fcl_div0_zero = icmp eq i8 %2, 0\n  %__fcl_div0_m1 = icmp eq i8 %2, -1\n  \
             %__fcl_div0_min = icmp eq i8 %1, -128\n  %__fcl_div0_ovf = and i1 %__fcl_div0_m1, %__fcl_div0_min\n  \
             %__fcl_div0_bad = or i1 %__fcl_div0_zero, %__fcl_div0_ovf\n  \
             %__fcl_div0_d = select i1 %__fcl_div0_bad, i8 1, i8 %2\n  %3 = sdiv i8 %1, %__fcl_div0_d, !dbg !9\n  \
             %4 = add i32 %a, %b\n"
        );
        let v = guard("  %q = urem <2 x i64> %x, <i64 3, i64 0>\n");
        assert!(v.contains("icmp eq <2 x i64> <i64 3, i64 0>, zeroinitializer"), "{v}");
        assert!(
            v.contains("select <2 x i1> %__fcl_div0_zero, <2 x i64> <i64 1, i64 1>, <2 x i64> <i64 3, i64 0>"),
            "{v}"
        );
        assert!(v.ends_with("%q = urem <2 x i64> %x, %__fcl_div0_d\n"), "{v}");
        let h = guard("  %q = urem i64 %x, %n\n  %r = udiv i32 %x, %m\n  %s = udiv i64 %x, 12\n");
        assert!(h.contains("%q = call i64 @__ferrocl_urem_u64(i64 %x, i64 %__fcl_div0_d)"), "{h}");
        assert!(h.contains("%r = call i32 @__ferrocl_udiv_u32(i32 %x, i32 %__fcl_div1_d)"), "{h}");
        assert!(h.contains("%s = udiv i64 %x, %__fcl_div2_d"), "constant divisors stay: {h}");
        assert!(
            h.ends_with("declare i32 @__ferrocl_udiv_u32(i32, i32)\ndeclare i64 @__ferrocl_urem_u64(i64, i64)\n"),
            "{h}"
        );
        let e = guard("  %r = sdiv exact i64 %a, 8\n");
        assert!(e.contains("icmp eq i64 %a, -9223372036854775808"), "{e}");
        assert_eq!(guard("  %f = fdiv float %a, %b\n"), "  %f = fdiv float %a, %b\n");
    }
}
