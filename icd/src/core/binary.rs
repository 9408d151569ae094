//! Program binaries (`CL_PROGRAM_BINARIES`): FerroCL's container around an executable
//! (the kernel library, a shared object, with its kernel descriptions) or a compiled
//! object or library (LLVM IR text).
//!
//! ```text
//! FERROCL-BINARY-4
//! kind executable|compiled-object|library
//! abi <the kernel ABI version of the driver that made it>
//! isa <the instruction-set flags of the CPU it was compiled for>
//! payload <bytes> <hash of the kind, kernel descriptions and payload>
//! <kernel descriptions, executables only>
//! --
//! <payload>
//! ```
//!
//! An executable is code the process will map and run, so a binary is checked before
//! anything of it is used: its length and hash (a truncated or damaged binary made
//! the dynamic loader fault, and a damaged kernel description gives the launcher wrong
//! argument sizes or offsets), that it was made for the kernel ABI of this driver
//! (compiled kernels read the driver's structures by their layout), and that this CPU
//! has every instruction-set extension the code was compiled for (`-march=native`;
//! another CPU would die of SIGILL).

/// Version 3: the hash covers the kernel descriptions too (version 2 hashed the
/// payload alone, and a flipped byte in a description could read as another one).
/// Version 4: the kernel ABI line.
const MAGIC: &str = "FERROCL-BINARY-4";
const END: &str = "\n--\n";
const ABI: u32 = ferrocl_kernel_abi::KERNEL_ABI;

/// CPU flags (as `/proc/cpuinfo` names them) that decide which instructions compiled
/// code may use, each with the macro clang predefines when code may use it; the other
/// flags (`hypervisor`, `constant_tsc`, ...) do not matter to code.
const ISA: &[(&str, &str)] = &[
    ("sse", "__SSE__"),
    ("sse2", "__SSE2__"),
    ("pni", "__SSE3__"),
    ("ssse3", "__SSSE3__"),
    ("sse4_1", "__SSE4_1__"),
    ("sse4_2", "__SSE4_2__"),
    ("popcnt", "__POPCNT__"),
    ("aes", "__AES__"),
    ("pclmulqdq", "__PCLMUL__"),
    ("avx", "__AVX__"),
    ("avx2", "__AVX2__"),
    ("fma", "__FMA__"),
    ("f16c", "__F16C__"),
    ("bmi1", "__BMI__"),
    ("bmi2", "__BMI2__"),
    ("abm", "__LZCNT__"),
    // Linux names LZCNT `abm`; no macro says `lzcnt` alone.
    ("lzcnt", ""),
    ("movbe", "__MOVBE__"),
    ("adx", "__ADX__"),
    ("sha_ni", "__SHA__"),
    ("gfni", "__GFNI__"),
    ("vaes", "__VAES__"),
    ("vpclmulqdq", "__VPCLMULQDQ__"),
    ("xsave", "__XSAVE__"),
    ("rdrand", "__RDRND__"),
    ("rdseed", "__RDSEED__"),
    ("clflushopt", "__CLFLUSHOPT__"),
    ("clwb", "__CLWB__"),
    ("cx16", "__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16"),
    ("avx512f", "__AVX512F__"),
    ("avx512dq", "__AVX512DQ__"),
    ("avx512cd", "__AVX512CD__"),
    ("avx512bw", "__AVX512BW__"),
    ("avx512vl", "__AVX512VL__"),
    ("avx512ifma", "__AVX512IFMA__"),
    ("avx512vbmi", "__AVX512VBMI__"),
    ("avx512_vbmi2", "__AVX512VBMI2__"),
    ("avx512_vnni", "__AVX512VNNI__"),
    ("avx512_bitalg", "__AVX512BITALG__"),
    ("avx512_vpopcntdq", "__AVX512VPOPCNTDQ__"),
    ("avx512_bf16", "__AVX512BF16__"),
    ("avx512_fp16", "__AVX512FP16__"),
    ("avx_vnni", "__AVXVNNI__"),
    ("amx_tile", "__AMX_TILE__"),
    ("amx_int8", "__AMX_INT8__"),
    ("amx_bf16", "__AMX_BF16__"),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    Executable,
    CompiledObject,
    Library,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Executable => "executable",
            Kind::CompiledObject => "compiled-object",
            Kind::Library => "library",
        }
    }
}

/// A binary taken apart: what it is, the kernel descriptions (executables) and the
/// payload (the shared object, or the IR text).
#[derive(Debug)]
pub(crate) struct Unpacked<'a> {
    pub(crate) kind: Kind,
    pub(crate) meta: &'a str,
    pub(crate) payload: &'a [u8],
}

/// The instruction-set flags among `cpu_flags`, in `ISA` order.
pub(crate) fn isa_of(cpu_flags: &str) -> Vec<&'static str> {
    let have: std::collections::HashSet<&str> = cpu_flags.split_whitespace().collect();
    ISA.iter().filter(|(f, _)| have.contains(f)).map(|(f, _)| *f).collect()
}

/// The instruction-set flags of code compiled with these predefined macros (clang's
/// `-dM -E` for a `-march` CPU), in `ISA` order.
pub(crate) fn isa_of_macros(macros: &[String]) -> Vec<&'static str> {
    let have: std::collections::HashSet<&str> = macros.iter().map(String::as_str).collect();
    ISA.iter().filter(|(_, m)| have.contains(m)).map(|(f, _)| *f).collect()
}

/// What a binary's hash covers. Not the `isa` line: it is checked flag by flag (a
/// damaged flag is one this CPU lacks), and a binary made on a CPU with fewer
/// extensions, which differs only there, runs here.
fn hash(kind: &str, meta: &str, payload: &[u8]) -> String {
    crate::compiler::cache::key(&[kind.as_bytes(), meta.as_bytes(), payload])
}

pub(crate) fn pack(kind: Kind, isa: &[&str], meta: &str, payload: &[u8]) -> Vec<u8> {
    let isa = isa.join(" ");
    let hash = hash(kind.name(), meta, payload);
    let mut out = format!(
        "{MAGIC}\nkind {}\nabi {ABI}\nisa {isa}\npayload {} {hash}\n{meta}{}",
        kind.name(),
        payload.len(),
        &END[1..]
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// Checks and takes apart a binary for a CPU with flags `cpu_flags`; `Err` says why
/// it cannot be used.
pub(crate) fn unpack<'a>(bytes: &'a [u8], cpu_flags: &str) -> Result<Unpacked<'a>, String> {
    let end = bytes.windows(END.len()).position(|w| w == END.as_bytes()).ok_or("not a FerroCL program binary")?;
    let head = std::str::from_utf8(&bytes[..end + 1]).map_err(|_| "not a FerroCL program binary")?;
    let payload = &bytes[end + END.len()..];
    let mut lines = head.lines();
    if lines.next() != Some(MAGIC) {
        return Err("not a FerroCL program binary of this version".into());
    }
    let kind = match lines.next().and_then(|l| l.strip_prefix("kind ")) {
        Some("executable") => Kind::Executable,
        Some("compiled-object") => Kind::CompiledObject,
        Some("library") => Kind::Library,
        _ => return Err("damaged binary: no kind".into()),
    };
    if lines.next() != Some(&format!("abi {ABI}")) {
        return Err(format!("made by a FerroCL build of another kernel ABI (this one: {ABI}); rebuild it from source"));
    }
    let isa = lines.next().and_then(|l| l.strip_prefix("isa ")).ok_or("damaged binary: no instruction set")?;
    let here = isa_of(cpu_flags);
    let lacking: Vec<&str> = isa.split_whitespace().filter(|f| !here.contains(f)).collect();
    if !lacking.is_empty() {
        return Err(format!("compiled for a CPU with {} that this CPU lacks", lacking.join(", ")));
    }
    let mut fields = lines.next().and_then(|l| l.strip_prefix("payload ")).ok_or("damaged binary")?.split(' ');
    let (len, hash) = (fields.next().and_then(|n| n.parse::<usize>().ok()), fields.next());
    if len != Some(payload.len()) {
        return Err(format!("truncated or extended binary: {} payload bytes, {len:?} recorded", payload.len()));
    }
    let meta_start = head.match_indices('\n').nth(4).map_or(head.len(), |(i, _)| i + 1);
    let meta = &head[meta_start.min(head.len())..];
    if hash != Some(self::hash(kind.name(), meta, payload).as_str()) {
        return Err("damaged binary: its contents do not match their hash".into());
    }
    match kind {
        Kind::Executable if !payload.starts_with(b"\x7fELF") => Err("damaged binary: no shared object".into()),
        Kind::CompiledObject | Kind::Library if std::str::from_utf8(payload).is_err() => {
            Err("damaged binary: the module is not text".into())
        }
        _ => Ok(Unpacked { kind, meta, payload }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: &str = "fpu sse sse2 avx avx2 fma hypervisor";

    fn sample() -> Vec<u8> {
        let so = [b"\x7fELF".as_slice(), &[7u8; 300]].concat();
        pack(Kind::Executable, &isa_of(CPU), "k 1 2 3\nmore\n", &so)
    }

    #[test]
    fn a_binary_comes_back_as_packed() {
        let b = sample();
        let u = unpack(&b, CPU).unwrap();
        assert_eq!(u.kind, Kind::Executable);
        assert_eq!(u.meta, "k 1 2 3\nmore\n");
        assert_eq!(u.payload.len(), 304);
        let ir = pack(Kind::Library, &isa_of(CPU), "", b"define void @f() {\n}\n");
        let u = unpack(&ir, CPU).unwrap();
        assert_eq!((u.kind, u.meta, u.payload), (Kind::Library, "", b"define void @f() {\n}\n".as_slice()));
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let b = sample();
        for n in 0..b.len() {
            assert!(unpack(&b[..n], CPU).is_err(), "truncated to {n} bytes");
        }
        for i in 0..b.len() {
            let mut d = b.clone();
            d[i] ^= 0x20;
            assert!(unpack(&d, CPU).is_err(), "flip at {i} went unnoticed");
        }
    }

    #[test]
    fn code_for_extensions_this_cpu_lacks_is_refused() {
        let b = sample();
        let e = unpack(&b, "fpu sse sse2 avx").unwrap_err();
        assert!(e.contains("avx2") && e.contains("fma"), "{e}");
        assert!(unpack(&b, "sse sse2 avx avx2 fma avx512f").is_ok(), "a CPU with more is fine");
    }

    #[test]
    fn a_binary_of_another_kernel_abi_is_refused() {
        let b = String::from_utf8_lossy(&sample()).replace(&format!("abi {ABI}\n"), "abi 4\n");
        let e = unpack(b.as_bytes(), CPU).unwrap_err();
        assert!(e.contains("another kernel ABI"), "{e}");
    }
}
