//! OpenCL build options, checked and translated to clang arguments.

/// A parsed option string.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BuildOptions {
    /// Arguments for clang's OpenCL C front end.
    pub(crate) clang: Vec<String>,
    /// `-cl-opt-disable`: no optimisation after the front end.
    pub(crate) opt_disable: bool,
    /// `-create-library` (clCompileProgram/clLinkProgram).
    pub(crate) create_library: bool,
}

/// Options clang understands exactly as OpenCL spells them.
const PASSED: &[&str] = &[
    "-cl-mad-enable",
    "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only",
    "-cl-fast-relaxed-math",
    "-cl-denorms-are-zero",
    "-cl-single-precision-constant",
    "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-uniform-work-group-size",
    "-cl-kernel-arg-info",
    "-w",
    "-Werror",
    "-g",
];

/// Options that are valid but change nothing here.
const IGNORED: &[&str] = &["-cl-no-subgroup-ifp", "-enable-link-options"];

const STANDARDS: &[&str] = &["CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"];

/// Splits an option string at whitespace, keeping double-quoted parts together.
fn words(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in s.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Parses build options; the error names the option that is not valid.
pub(crate) fn parse(s: &str) -> Result<BuildOptions, String> {
    let mut o = BuildOptions::default();
    let (mut std_given, mut strict_aliasing) = (false, false);
    let mut it = words(s).into_iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "-D" | "-I" => {
                let v = it.next().ok_or_else(|| format!("{w} needs an argument"))?;
                o.clang.push(format!("{w}{v}"));
            }
            _ if (w.starts_with("-D") || w.starts_with("-I")) && w.len() > 2 => o.clang.push(w),
            "-cl-opt-disable" => o.opt_disable = true,
            "-create-library" => o.create_library = true,
            "-cl-strict-aliasing" => strict_aliasing = true,
            _ if PASSED.contains(&w.as_str()) => o.clang.push(w),
            _ if IGNORED.contains(&w.as_str()) => {}
            _ if w.starts_with("-cl-std=") => {
                if !STANDARDS.contains(&&w["-cl-std=".len()..]) {
                    return Err(format!("unsupported OpenCL C version in '{w}'"));
                }
                std_given = true;
                o.clang.push(w);
            }
            _ => return Err(format!("unknown build option '{w}'")),
        }
    }
    // "If the -cl-std build option is not specified, the highest OpenCL C 1.x language
    // version supported by each device is used."
    if !std_given {
        o.clang.push("-cl-std=CL1.2".into());
    }
    // OpenCL C assumes no type-based aliasing rules unless asked (-cl-strict-aliasing):
    // kernels read private arrays of ushort through half pointers (vload_half), and with
    // clang's default type-based alias analysis such loads folded to undefined values.
    if !strict_aliasing {
        o.clang.push("-fno-strict-aliasing".into());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_includes_and_flags() {
        let o = parse(r#"-D N=4 -DM -I /tmp/x -I"/a b" -cl-mad-enable -cl-std=CL3.0 -cl-opt-disable"#).unwrap();
        assert_eq!(
            o.clang,
            vec!["-DN=4", "-DM", "-I/tmp/x", "-I/a b", "-cl-mad-enable", "-cl-std=CL3.0", "-fno-strict-aliasing"]
        );
        assert!(o.opt_disable);
    }

    #[test]
    fn default_standard_and_errors() {
        assert_eq!(parse("").unwrap().clang, vec!["-cl-std=CL1.2", "-fno-strict-aliasing"]);
        assert_eq!(parse("-cl-strict-aliasing").unwrap().clang, vec!["-cl-std=CL1.2"]);
        assert!(parse("-cl-std=CL9.9").is_err());
        assert!(parse("-fno-such-thing").is_err());
        assert!(parse("-D").is_err());
        assert!(parse("-cl-strict-aliasing -w").is_ok());
    }
}
