//! `cts-runner coverage` against the build tree's FerroCL: every builtin overload clang
//! declares for the device, per OpenCL C version, built into kernels through the loader.
//! Families FerroCL defines in full must stay so, and the defined counts must not fall
//! below what this version defines (raise the floors as the library grows; the
//! remaining gaps are #23's half, C11 atomics, generic-address-space forms and
//! work-group collectives).

use std::collections::BTreeMap;
use std::process::Command;

/// family -> [overloads, defined, missing, half, half defined], per `-cl-std`.
fn coverage() -> BTreeMap<String, BTreeMap<String, [usize; 5]>> {
    let out = Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .args(["coverage", "--ferrocl-build"])
        .output()
        .expect("cts-runner runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "a batch failed for a reason other than missing builtins:\n{text}");
    println!("{text}");
    let mut all = BTreeMap::new();
    let mut std = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("family (") {
            std = rest[..rest.find(')').unwrap()].to_string();
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 6 || std.is_empty() {
            continue;
        }
        let numbers: Vec<usize> = words[words.len() - 5..].iter().filter_map(|w| w.parse().ok()).collect();
        if numbers.len() == 5 {
            let family = words[..words.len() - 5].join(" ");
            all.entry(std.clone()).or_insert_with(BTreeMap::new).insert(family, numbers.try_into().unwrap());
        }
    }
    all
}

#[test]
fn builtin_coverage_per_family_holds() {
    let all = coverage();
    assert_eq!(all.keys().collect::<Vec<_>>(), ["CL1.2", "CL2.0", "CL3.0"]);
    for (std, families) in &all {
        let total = families["total"];
        assert!(total[0] > 10_000, "{std}: clang's header declared only {} overloads", total[0]);
        for family in ["async copies", "integer", "synchronization", "work-item"] {
            let f = families[family];
            assert_eq!(f[1], f[0], "{std}: {family} is no longer fully defined");
        }
        // Without half (cl_khr_fp16 is #23's largest gap), these are complete.
        for family in ["common", "geometric", "relational", "miscellaneous vector", "conversions"] {
            let f = families[family];
            assert_eq!(f[1], f[0] - f[3], "{std}: {family} lacks overloads other than half");
        }
    }
    for (std, floor) in [("CL1.2", 9619), ("CL2.0", 8764), ("CL3.0", 9689)] {
        let defined = all[std]["total"][1];
        assert!(defined >= floor, "{std}: {defined} builtins defined, fewer than the {floor} of this version");
    }
    // The vector pointer-output math of every address space and the vector data functions
    // are complete where no generic address space is declared.
    for std in ["CL1.2", "CL3.0"] {
        let m = all[std]["math"];
        assert_eq!(m[1], m[0] - m[3], "{std}: math lacks overloads other than half");
        let v = all[std]["vector data"];
        assert_eq!(v[1], v[0], "{std}: vector data");
    }
}
