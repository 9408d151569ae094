//! `cts-runner coverage` against the build tree's FerroCL: every builtin overload clang
//! declares for the device, per OpenCL C version, built into kernels through the loader.
//! Families FerroCL defines in full must stay so, and the defined counts must not fall
//! below what this version defines (raise the floor as the library grows; the
//! remaining gaps are OpenCL C 2.0's generic-address-space forms, its atomics on
//! generic pointers, and the work-group collectives).

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
        // Complete in every version, half overloads included.
        for family in [
            "async copies",
            "common",
            "images",
            "conversions",
            "geometric",
            "integer",
            "miscellaneous vector",
            "relational",
            "synchronization",
            "work-item",
        ] {
            let f = families[family];
            assert_eq!(f[1], f[0], "{std}: {family} is no longer fully defined");
            assert_eq!(f[4], f[3], "{std}: {family}'s half overloads are no longer defined");
        }
    }
    // Every version, with the device's features (generic address space, C11 atomics,
    // collectives, sub-groups): everything clang declares, every family present.
    for (std, families) in &all {
        let t = families["total"];
        assert_eq!(t[1], t[0], "{std} lacks builtins: {families:#?}");
        assert_eq!(t[4], t[3], "{std} lacks half builtins: {families:#?}");
    }
    for family in ["address space", "work-group collectives", "atomics"] {
        assert!(all["CL2.0"][family][0] > 0, "CL2.0 declares no {family}");
        assert!(all["CL3.0"][family][0] > 0, "CL3.0 declares no {family}");
    }
    assert!(all["CL3.0"]["sub-groups"][0] > 0, "CL3.0 declares no sub-group functions");
    // Images: read_write images and their samplerless reads from OpenCL C 2.0 on.
    assert!(all["CL1.2"]["images"][0] > 150, "CL1.2 declares too few image builtins");
    assert!(all["CL3.0"]["images"][0] > all["CL1.2"]["images"][0], "CL3.0 lacks read_write images");
}
