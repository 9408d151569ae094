//! Which OpenCL C builtins a platform defines. clang's full OpenCL header (`opencl-c.h`)
//! declares every builtin overload; compiled with the device's extensions and OpenCL C
//! features and dumped as JSON (`-ast-dump=json`, every declaration with its mangled
//! name), it lists what a kernel may call. Kernels calling each of them, in batches, are
//! built on the platform: a batch that builds defines all its overloads; FerroCL's build
//! log names those it lacks (`missing builtin: <mangled>`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr::null_mut;

use crate::cl;
use crate::cl::*;
use crate::session::Session;

/// One declared overload.
#[derive(Clone, Debug)]
pub struct Decl {
    pub name: String,
    pub mangled: String,
    pub params: Vec<String>,
    /// The function's type as clang prints it (return type first).
    pub signature: String,
}

impl Decl {
    /// Takes or returns half (an overload cl_khr_fp16 adds).
    pub fn is_half(&self) -> bool {
        self.signature.starts_with("half") || self.params.iter().any(|p| p.contains("half"))
    }

    /// The spec's family, by name (and for min/max/clamp, by argument type).
    pub fn family(&self) -> &'static str {
        let n = self.name.as_str();
        let integer_args = self.params.first().is_some_and(|p| {
            ["char", "short", "int", "long"].iter().any(|t| p.trim_start_matches("const ").contains(t))
                && !p.contains('*')
        });
        match n {
            _ if n.starts_with("convert_") => "conversions",
            _ if n.starts_with("vload") || n.starts_with("vstore") => "vector data",
            _ if n.starts_with("atom") => "atomics",
            _ if n.starts_with("async_") || n == "wait_group_events" || n == "prefetch" => "async copies",
            _ if n.starts_with("work_group_") && n != "work_group_barrier" => "work-group collectives",
            _ if n.starts_with("sub_group_") || n.starts_with("get_sub_group") || n.starts_with("get_max_sub") => {
                "sub-groups"
            }
            "to_global" | "to_local" | "to_private" | "get_fence" => "address space",
            _ if n.starts_with("read_image") || n.starts_with("write_image") || n.starts_with("get_image_") => "images",
            _ if n.starts_with("get_") => "work-item",
            "barrier" | "work_group_barrier" | "mem_fence" | "read_mem_fence" | "write_mem_fence" => "synchronization",
            "shuffle" | "shuffle2" | "vec_step" => "miscellaneous vector",
            "printf" => "printf",
            _ if n.starts_with("dot_") || (n == "dot" && integer_args) => "integer",
            "dot" | "cross" | "distance" | "length" | "normalize" | "fast_distance" | "fast_length"
            | "fast_normalize" => "geometric",
            _ if n.starts_with("is") || ["any", "all", "select", "bitselect", "signbit"].contains(&n) => "relational",
            "abs" | "abs_diff" | "add_sat" | "hadd" | "rhadd" | "clz" | "ctz" | "mad_hi" | "mad_sat" | "mul_hi"
            | "rotate" | "sub_sat" | "upsample" | "popcount" | "mad24" | "mul24" => "integer",
            _ if n.starts_with("bitfield_") || n == "bit_reverse" => "integer",
            "max" | "min" | "clamp" if integer_args => "integer",
            "clamp" | "degrees" | "max" | "min" | "mix" | "radians" | "step" | "smoothstep" | "sign" => "common",
            _ => "math",
        }
    }
}

/// clang as FerroCL picks it: `FERROCL_CLANG`, else the newest `clang-N` (19 to 15), else
/// `clang`.
pub fn find_clang() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("FERROCL_CLANG") {
        return Ok(PathBuf::from(p));
    }
    (15..=19)
        .rev()
        .map(|v| format!("clang-{v}"))
        .chain(["clang".to_string()])
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        .map(PathBuf::from)
        .ok_or_else(|| "no clang found: install one (apt-get install clang-19)".into())
}

/// The declarations clang's full OpenCL header makes for `-cl-std=std` with the given
/// extensions and features enabled, the macros `defined` defined (`defined_macros`),
/// and `extra`, a header of the platform's own extensions.
pub fn declarations(
    clang: &Path,
    std: &str,
    enabled: &[String],
    defined: &[String],
    extra: Option<&Path>,
) -> Result<Vec<Decl>, String> {
    let resource = Command::new(clang).arg("-print-resource-dir").output().map_err(|e| e.to_string())?;
    let header = PathBuf::from(String::from_utf8_lossy(&resource.stdout).trim()).join("include/opencl-c.h");
    if !header.is_file() {
        return Err(format!("{} is missing", header.display()));
    }
    let dir = std::env::temp_dir().join(format!("cts-runner-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let empty = dir.join("empty.cl");
    std::fs::write(&empty, "").map_err(|e| e.to_string())?;
    let ext: String = enabled.iter().map(|e| format!(",+{e}")).collect();
    let mut cmd = Command::new(clang);
    cmd.args(["-x", "cl", &format!("-cl-std={std}"), "-target", "x86_64-unknown-linux-gnu", "-fsyntax-only"])
        .args(["-Xclang", &format!("-cl-ext=-all{ext}"), "-Xclang", "-ast-dump=json", "-include"])
        .arg(&header);
    if let Some(x) = extra {
        cmd.arg("-include").arg(x);
    }
    // The macros as a kernel on the platform sees them (`defined_macros`): clang defines
    // some from -cl-ext and leaves others to the platform's compiler.
    cmd.args(defined.iter().map(|f| format!("-D{f}=1")));
    // clang reports errors for declarations of features the device lacks: those
    // declarations are marked invalid and skipped below.
    let out = cmd.arg(&empty).output().map_err(|e| format!("{}: {e}", clang.display()))?;
    let _ = std::fs::remove_dir_all(&dir);
    let tree: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("clang's AST dump for {std}: {e}"))?;
    let skip = ["pipe", "queue_t", "clk_event_t", "ndrange_t", "reserve_id_t", "^"];
    let mut decls = Vec::new();
    for d in tree["inner"].as_array().into_iter().flatten() {
        let (Some(name), Some(mangled), Some(ty)) =
            (d["name"].as_str(), d["mangledName"].as_str(), d["type"]["qualType"].as_str())
        else {
            continue;
        };
        if d["kind"] != "FunctionDecl"
            || d["isImplicit"].as_bool() == Some(true)
            || d["isInvalid"].as_bool() == Some(true)
            || name.starts_with("__")
            || !mangled.starts_with("_Z")
            || skip.iter().any(|s| ty.contains(s))
        {
            continue;
        }
        // The parameters' own types: the function type's text has parentheses inside
        // vector types (`__attribute__((ext_vector_type(4)))`).
        let params: Vec<String> = d["inner"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["kind"] == "ParmVarDecl")
            .filter_map(|p| p["type"]["qualType"].as_str().map(String::from))
            .collect();
        decls.push(Decl { name: name.into(), mangled: mangled.into(), params, signature: ty.into() });
    }
    decls.sort_by(|a, b| a.mangled.cmp(&b.mangled));
    decls.dedup_by(|a, b| a.mangled == b.mangled);
    Ok(decls)
}

/// A kernel calling each of `decls` with zero arguments of its parameter types. Images
/// and samplers cannot be made from 0: they are the kernel's parameters, one per type.
pub fn calling_kernel(decls: &[&Decl]) -> String {
    let mut params: Vec<String> = Vec::new();
    let mut calls = String::new();
    for d in decls {
        let args: Vec<String> = d
            .params
            .iter()
            .map(|p| {
                if p.contains("image") || p.contains("sampler_t") {
                    let i = params.iter().position(|q| q == p).unwrap_or_else(|| {
                        params.push(p.clone());
                        params.len() - 1
                    });
                    format!("p{i}")
                } else {
                    format!("({p})0")
                }
            })
            .collect();
        calls += &format!("    (void){}({});\n", d.name, args.join(", "));
    }
    let params: Vec<String> = params.iter().enumerate().map(|(i, p)| format!("{p} p{i}")).collect();
    let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
    format!(
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
         kernel void coverage({params}) {{\n{calls}}}\n"
    )
}

/// The outcome for one declaration.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Found {
    Defined,
    Missing,
    /// Its batch failed to build for another reason (see the report's errors).
    Unknown,
}

pub struct Report {
    pub std: String,
    pub results: Vec<(Decl, Found)>,
    pub errors: Vec<String>,
}

impl Report {
    /// Per family: (overloads, defined, of which half: overloads, defined).
    pub fn families(&self) -> BTreeMap<&'static str, [usize; 4]> {
        let mut out: BTreeMap<&'static str, [usize; 4]> = BTreeMap::new();
        for (d, f) in &self.results {
            let e = out.entry(d.family()).or_default();
            let defined = (*f == Found::Defined) as usize;
            e[0] += 1;
            e[1] += defined;
            if d.is_half() {
                e[2] += 1;
                e[3] += defined;
            }
        }
        out
    }

    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<26}{:>10}{:>10}{:>10}{:>12}{:>12}\n",
            format!("family ({})", self.std),
            "overloads",
            "defined",
            "missing",
            "half",
            "half def."
        );
        let mut total = [0; 4];
        for (family, c) in self.families() {
            s += &format!("{family:<26}{:>10}{:>10}{:>10}{:>12}{:>12}\n", c[0], c[1], c[0] - c[1], c[2], c[3]);
            (0..4).for_each(|i| total[i] += c[i]);
        }
        s += &format!(
            "{:<26}{:>10}{:>10}{:>10}{:>12}{:>12}\n",
            "total",
            total[0],
            total[1],
            total[0] - total[1],
            total[2],
            total[3]
        );
        s
    }
}

/// Builds `source` with `options`; `Err` carries the whole build log.
fn build(session: &Session, source: &str, options: &str) -> Result<(), String> {
    let p = session.build_with(source, options)?;
    cl!(clReleaseProgram(p));
    Ok(())
}

/// Calls of at most this many overloads per kernel: builds stay a second or two.
const BATCH: usize = 600;

/// Builds kernels calling every declaration on `session`'s device.
pub fn measure(session: &Session, std: &str, decls: Vec<Decl>) -> Report {
    let mut by_family: BTreeMap<&'static str, Vec<&Decl>> = BTreeMap::new();
    for d in &decls {
        by_family.entry(d.family()).or_default().push(d);
    }
    let mut found: BTreeMap<&str, Found> = BTreeMap::new();
    let mut errors = Vec::new();
    for list in by_family.values() {
        for batch in list.chunks(BATCH) {
            let outcome = build(session, &calling_kernel(batch), &format!("-cl-std={std} -cl-opt-disable"));
            let missing: Vec<&str> = match &outcome {
                Ok(()) => Vec::new(),
                Err(log) => log.lines().filter_map(|l| l.strip_prefix("missing builtin: ")).collect(),
            };
            let unknown = outcome.is_err() && missing.is_empty();
            if let (true, Err(log)) = (unknown, &outcome) {
                errors.push(log.lines().take(8).collect::<Vec<_>>().join("\n"));
            }
            for d in batch {
                let f = if unknown {
                    Found::Unknown
                } else if missing.contains(&d.mangled.as_str()) {
                    Found::Missing
                } else {
                    Found::Defined
                };
                found.insert(d.mangled.as_str(), f);
            }
        }
    }
    let results = decls.iter().map(|d| (d.clone(), found[d.mangled.as_str()])).collect();
    Report { std: std.into(), results, errors }
}

/// Which of `names` (the device's extensions and features) the platform's compiler
/// defines as macros for `-cl-std=std`, asked of the platform itself: a program with a
/// kernel inside `#ifdef` of each name, whose kernel names come back. clang leaves some
/// to the platform (the 3.0 features its header alone tests; extensions whose macros
/// its header defines for SPIR only), and a platform that claims a feature without
/// defining it gives kernels none of its builtins: measured this way, the coverage is
/// of what a kernel can call.
pub fn defined_macros(session: &Session, std: &str, names: &[String]) -> Result<Vec<String>, String> {
    let mut source = String::from("kernel void probe_none(global int *x) { }\n");
    for (i, n) in names.iter().enumerate() {
        source += &format!("#ifdef {n}\nkernel void probe_{i}(global int *x) {{ }}\n#endif\n");
    }
    let p = session.build_with(&source, &format!("-cl-std={std}"))?;
    let mut len = 0;
    cl!(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, null_mut(), &mut len));
    let mut bytes = vec![0u8; len];
    cl!(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, len, bytes.as_mut_ptr().cast(), null_mut()));
    cl!(clReleaseProgram(p));
    let kernels = String::from_utf8_lossy(&bytes).trim_end_matches('\0').to_string();
    let index: Vec<usize> = kernels.split(';').filter_map(|k| k.strip_prefix("probe_")?.parse().ok()).collect();
    Ok(index.into_iter().map(|i| names[i].clone()).collect())
}

/// The extensions and OpenCL C features the device reports, as `-cl-ext` names.
pub fn device_features(session: &Session) -> Vec<String> {
    let mut out: Vec<String> = session.extensions().split_whitespace().map(String::from).collect();
    let mut len = 0;
    cl!(clGetDeviceInfo(session.device, CL_DEVICE_OPENCL_C_FEATURES, 0, null_mut(), &mut len));
    let n = len / std::mem::size_of::<cl_name_version>();
    // SAFETY: `cl_name_version` is plain data; zeroed is a valid value.
    let mut features: Vec<cl_name_version> = vec![unsafe { std::mem::zeroed() }; n];
    cl!(clGetDeviceInfo(session.device, CL_DEVICE_OPENCL_C_FEATURES, len, features.as_mut_ptr().cast(), null_mut()));
    for f in features {
        let name: Vec<u8> = f.name.iter().take_while(|&&c| c != 0).copied().collect();
        out.push(String::from_utf8_lossy(&name).into_owned());
    }
    out
}
