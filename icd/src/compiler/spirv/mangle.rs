//! Reading the Itanium-mangled names of OpenCL builtins, as the SPIR-V translator writes
//! them (`_Z5fractfPU3AS1f`), back into a function name and OpenCL C parameter types
//! (`fract`, `float`, `__global float *`), so the calls can be written again in OpenCL C
//! and clang mangles and lowers them for this target (`abi`).

/// An OpenCL C parameter type, and how the wrapper `abi` writes passes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Param {
    /// The type as OpenCL C writes it.
    pub(crate) c: String,
    /// Whether the type may be the target of a pointer (images, samplers, events and
    /// queues are passed as they are: they are pointers to clang on either side).
    pub(crate) by_pointer: bool,
}

/// A parsed type: its OpenCL C spelling, and whether it is an opaque OpenCL type.
#[derive(Clone, Debug)]
struct Ty {
    c: String,
    opaque: bool,
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    /// Substitution candidates, in the order the mangling defines them.
    subs: Vec<Ty>,
}

/// The name and parameter types of `_Z<len><name><types>`; `None` for anything this
/// subset does not read (nested names, templates, ...).
pub(crate) fn demangle(mangled: &str) -> Option<(String, Vec<Param>)> {
    let rest = mangled.strip_prefix("_Z")?;
    let mut p = Parser { s: rest.as_bytes(), at: 0, subs: Vec::new() };
    let name = p.source_name()?;
    let mut params = Vec::new();
    while p.at < p.s.len() {
        let t = p.ty()?;
        params.push(Param { by_pointer: !t.opaque, c: t.c });
    }
    // `f(void)` has no parameters.
    if params.len() == 1 && params[0].c == "void" {
        params.clear();
    }
    (!params.is_empty() || rest.ends_with('v')).then_some((name, params))
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, prefix: &str) -> bool {
        let hit = self.s[self.at..].starts_with(prefix.as_bytes());
        if hit {
            self.at += prefix.len();
        }
        hit
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).ok()?.parse().ok()
    }

    fn source_name(&mut self) -> Option<String> {
        let n = self.number()?;
        let name = std::str::from_utf8(self.s.get(self.at..self.at + n)?).ok()?.to_string();
        self.at += n;
        Some(name)
    }

    fn ty(&mut self) -> Option<Ty> {
        let c = self.peek()?;
        if let Some(b) = builtin(c) {
            self.at += 1;
            return Some(Ty { c: b.into(), opaque: false });
        }
        let t = match c {
            b'D' if self.eat("Dh") => return Some(Ty { c: "half".into(), opaque: false }),
            b'D' if self.eat("Dv") => {
                let n = self.number()?;
                self.eat("_").then_some(())?;
                let e = self.ty()?;
                Ty { c: format!("{}{n}", e.c), opaque: false }
            }
            b'S' => {
                self.at += 1;
                let i = if self.eat("_") {
                    0
                } else {
                    let start = self.at;
                    while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() && c != b'_') {
                        self.at += 1;
                    }
                    let seq = std::str::from_utf8(&self.s[start..self.at]).ok()?;
                    self.eat("_").then_some(())?;
                    usize::from_str_radix(seq, 36).ok()? + 1
                };
                // A substitution is not a new candidate.
                return self.subs.get(i).cloned();
            }
            b'P' => {
                self.at += 1;
                let pointee = self.ty()?;
                // SPIR mangles the private address space as no qualifier at all; in
                // OpenCL C 2.0 and later an unqualified pointer would be generic.
                let spaced = SPACES.iter().any(|s| pointee.c.starts_with(s));
                let space = if spaced { "" } else { "__private " };
                Ty { c: format!("{space}{} *", pointee.c), opaque: false }
            }
            b'U' if self.eat("U7_Atomic") => {
                let inner = self.ty()?;
                Ty { c: format!("atomic_{}", inner.c), opaque: false }
            }
            b'U' | b'r' | b'V' | b'K' => return self.qualified(),
            b'0'..=b'9' => {
                let name = self.source_name()?;
                opaque(&name)?
            }
            _ => return None,
        };
        self.subs.push(t.clone());
        Some(t)
    }

    /// `U<address space>`, `r`, `V`, `K` before a type: the qualified type is a
    /// candidate after the unqualified one.
    fn qualified(&mut self) -> Option<Ty> {
        let mut quals: Vec<&str> = Vec::new();
        loop {
            if self.peek() == Some(b'U') && !self.s[self.at..].starts_with(b"U7_Atomic") {
                self.at += 1;
                let q = self.source_name()?;
                quals.push(address_space(&q)?);
            } else if self.eat("r") {
                quals.push("restrict");
            } else if self.eat("V") {
                quals.push("volatile");
            } else if self.eat("K") {
                quals.push("const");
            } else {
                break;
            }
        }
        let inner = self.ty()?;
        // `restrict` qualifies a pointer, after its star; the others come before.
        let (after, before): (Vec<&str>, Vec<&str>) = quals.into_iter().partition(|q| *q == "restrict");
        let mut c = before.iter().map(|q| format!("{q} ")).collect::<String>() + &inner.c;
        for q in after {
            c = format!("{c} {q}");
        }
        let t = Ty { c, opaque: inner.opaque };
        self.subs.push(t.clone());
        Some(t)
    }
}

const SPACES: [&str; 5] = ["__private", "__global", "__constant", "__local", "__generic"];

fn builtin(c: u8) -> Option<&'static str> {
    Some(match c {
        b'v' => "void",
        b'b' => "bool",
        b'c' => "char",
        b'a' => "char",
        b'h' => "uchar",
        b's' => "short",
        b't' => "ushort",
        b'i' => "int",
        b'j' => "uint",
        b'l' | b'x' => "long",
        b'm' | b'y' => "ulong",
        b'f' => "float",
        b'd' => "double",
        _ => return None,
    })
}

/// The address-space qualifiers as SPIR (numbers) and other targets (names) mangle them.
fn address_space(q: &str) -> Option<&'static str> {
    Some(match q {
        "AS0" | "CLprivate" => "__private",
        "AS1" | "CLglobal" => "__global",
        "AS2" | "CLconstant" => "__constant",
        "AS3" | "CLlocal" => "__local",
        "AS4" | "CLgeneric" => "__generic",
        _ => return None,
    })
}

/// OpenCL's named types: images (with their access), samplers, events, and the enums
/// of the C11 atomics.
fn opaque(name: &str) -> Option<Ty> {
    let t = |c: &str, opaque: bool| Some(Ty { c: c.to_string(), opaque });
    match name {
        "ocl_sampler" => t("sampler_t", true),
        "ocl_event" => t("event_t", true),
        "ocl_clkevent" => t("clk_event_t", true),
        "ocl_queue" => t("queue_t", true),
        "memory_order" | "memory_scope" => t(name, false),
        _ => {
            let image = name.strip_prefix("ocl_image")?;
            let (dims, access) = image.rsplit_once('_')?;
            let access = match access {
                "ro" => "read_only",
                "wo" => "write_only",
                "rw" => "read_write",
                _ => return None,
            };
            t(&format!("{access} image{dims}_t"), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(m: &str) -> (String, Vec<String>) {
        let (n, p) = demangle(m).unwrap_or_else(|| panic!("{m} unread"));
        (n, p.into_iter().map(|p| p.c).collect())
    }

    #[test]
    fn builtin_names_read_back() {
        assert_eq!(types("_Z13get_global_idj"), ("get_global_id".into(), vec!["uint".into()]));
        assert_eq!(types("_Z5fractfPU3AS1f").1, ["float", "__global float *"]);
        assert_eq!(types("_Z5fractDv4_fPS_").1, ["float4", "__private float4 *"]);
        assert_eq!(types("_Z3fmaDv16_fS_S_").1, ["float16", "float16", "float16"]);
        assert_eq!(
            types("_Z29async_work_group_strided_copyPU3AS3fPU3AS1Kfmm9ocl_event").1,
            ["__local float *", "__global const float *", "ulong", "ulong", "event_t"]
        );
        assert_eq!(
            types("_Z25atomic_fetch_add_explicitPU3AS4VU7_Atomicii12memory_order12memory_scope").1,
            ["__generic volatile atomic_int *", "int", "memory_order", "memory_scope"]
        );
        assert_eq!(
            types("_Z11read_imagef14ocl_image2d_ro11ocl_samplerDv2_i").1,
            ["read_only image2d_t", "sampler_t", "int2"]
        );
        // The substitution refers to the qualified type, not to the pointer after it.
        assert_eq!(types("_Z6vload4mPU3AS1KDh").1, ["ulong", "__global const half *"]);
        assert_eq!(types("_Z8shuffle2Dv4_fS_Dv4_j").1, ["float4", "float4", "uint4"]);
        assert_eq!(types("_Z7barrierj").1, ["uint"]);
        assert_eq!(types("_Z17get_global_offsetv").1, Vec::<String>::new());
        let (_, p) = demangle("_Z17wait_group_eventsiP9ocl_event").unwrap();
        assert_eq!((p[1].c.as_str(), p[1].by_pointer), ("__private event_t *", true));
        assert!(demangle("printf").is_none());
        assert!(demangle("_ZN3foo3barEv").is_none());
    }
}
