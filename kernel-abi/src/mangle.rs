//! Itanium C++ ABI names of OpenCL C builtins, as clang gives them to calls on this
//! target: address spaces are vendor qualifiers (`U7CLlocal`), vectors `Dv4_f`, half
//! `Dh`, `event_t` the class `ocl_event`, and every non-builtin type joins the
//! substitution table (`S_`, `S0_`, ...) after its parts.
//!
//! The one writer of such names: `builtins/build.rs` names the archive's exports with it
//! and the driver the builtins that read the work-item context
//! (`icd/src/compiler/passes/context.rs`). The SPIR-V reader goes the other way
//! (`icd/src/compiler/spirv/mangle.rs` reads the translator's names back into OpenCL C
//! types).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// A parameter type, as far as the builtins FerroCL names need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty<'a> {
    /// Builtin type code (`f`, `Dh`, `m`, `v`, ...): never substituted.
    Builtin(&'a str),
    Vector(u32, &'a Ty<'a>),
    /// A pointer to a type in an address space (`None`: unqualified), const or not.
    Pointer {
        space: Option<&'a str>,
        constant: bool,
        to: &'a Ty<'a>,
    },
    /// A class or enum type named in the source (`ocl_event`, `memory_scope`).
    Named(&'a str),
}

/// The address spaces' vendor qualifiers.
pub const LOCAL: &str = "U7CLlocal";
pub const GLOBAL: &str = "U8CLglobal";
pub const GENERIC: &str = "U9CLgeneric";
pub const PRIVATE: &str = "U9CLprivate";

/// `_Z<len><name><parameters>`; no parameters mangle as `v`.
pub fn function(name: &str, params: &[Ty]) -> String {
    let mut m = Mangler::default();
    let args: String = if params.is_empty() { "v".into() } else { params.iter().map(|p| m.mangle(p)).collect() };
    format!("_Z{}{name}{args}", name.len())
}

/// Keeps the substitution table that Itanium builds as it goes.
#[derive(Default)]
struct Mangler {
    seen: Vec<String>,
}

impl Mangler {
    fn qualifiers(space: Option<&str>, constant: bool) -> String {
        format!("{}{}", space.unwrap_or(""), if constant { "K" } else { "" })
    }

    fn canonical(t: &Ty) -> String {
        match t {
            Ty::Builtin(c) => c.to_string(),
            Ty::Vector(n, e) => format!("Dv{n}_{}", Self::canonical(e)),
            Ty::Pointer { space, constant, to } => {
                format!("P{}{}", Self::qualifiers(*space, *constant), Self::canonical(to))
            }
            Ty::Named(n) => format!("{}{n}", n.len()),
        }
    }

    /// A substitution for a type seen before, else its mangling (and it is seen now).
    fn substitute_or(&mut self, key: String, mangle: impl FnOnce(&mut Self) -> String) -> String {
        if let Some(i) = self.seen.iter().position(|s| *s == key) {
            return if i == 0 { "S_".into() } else { format!("S{}_", base36(i - 1)) };
        }
        let out = mangle(self);
        self.seen.push(key);
        out
    }

    fn mangle(&mut self, t: &Ty) -> String {
        match *t {
            Ty::Builtin(c) => c.to_string(),
            Ty::Vector(n, e) => self.substitute_or(Self::canonical(t), |m| format!("Dv{n}_{}", m.mangle(e))),
            Ty::Named(_) => self.substitute_or(Self::canonical(t), |_| Self::canonical(t)),
            Ty::Pointer { space, constant, to } => self.substitute_or(Self::canonical(t), |m| {
                let q = Self::qualifiers(space, constant);
                if q.is_empty() {
                    format!("P{}", m.mangle(to))
                } else {
                    // The qualified type is a candidate of its own, after its parts.
                    let key = format!("{q}{}", Self::canonical(to));
                    format!("P{}", m.substitute_or(key, |m| format!("{q}{}", m.mangle(to))))
                }
            }),
        }
    }
}

fn base36(mut n: usize) -> String {
    let digits = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = Vec::new();
    loop {
        out.push(digits[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The OpenCL C name in a mangled name: `async_work_group_copy` in
/// `_Z21async_work_group_copy...`.
pub fn opencl_name(mangled: &str) -> Option<&str> {
    let rest = mangled.strip_prefix("_Z")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    let len: usize = rest[..digits].parse().ok()?;
    rest.get(digits..digits + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_follow_clang() {
        let f4 = Ty::Vector(4, &Ty::Builtin("f"));
        let event = Ty::Named("ocl_event");
        let copy = [
            Ty::Pointer { space: Some(LOCAL), constant: false, to: &f4 },
            Ty::Pointer { space: Some(GLOBAL), constant: true, to: &f4 },
            Ty::Builtin("m"),
            event,
        ];
        assert_eq!(
            function("async_work_group_copy", &copy),
            "_Z21async_work_group_copyPU7CLlocalDv4_fPU8CLglobalKS_m9ocl_event"
        );
        let list = Ty::Pointer { space: None, constant: false, to: &event };
        assert_eq!(function("wait_group_events", &[Ty::Builtin("i"), list]), "_Z17wait_group_eventsiP9ocl_event");
        let void = Ty::Builtin("v");
        let generic = Ty::Pointer { space: Some(GENERIC), constant: true, to: &void };
        assert_eq!(function("get_fence", &[generic]), "_Z9get_fencePU9CLgenericKv");
        assert_eq!(function("get_work_dim", &[]), "_Z12get_work_dimv");
        let scoped = [Ty::Builtin("j"), Ty::Named("memory_scope")];
        assert_eq!(function("work_group_barrier", &scoped), "_Z18work_group_barrierj12memory_scope");
        assert_eq!(base36(0), "0");
        assert_eq!(base36(37), "11");
        assert_eq!(opencl_name("_Z21async_work_group_copyPU7CLlocalv"), Some("async_work_group_copy"));
        assert_eq!(opencl_name("__to_global"), None);
    }
}
