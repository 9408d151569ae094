//! Kernel descriptions saved next to a cached kernel library and inside program
//! binaries: one tab-separated line per kernel and per argument.

use super::kernel_info::{Arg, ArgKind, GroupUse, Kernel};

pub(crate) fn to_text(kernels: &[Kernel], global_variable_size: u64) -> String {
    let mut s = format!("globals\t{global_variable_size}\n");
    for k in kernels {
        let reqd = k.reqd_work_group_size.map_or("-".to_string(), |r| format!("{},{},{}", r[0], r[1], r[2]));
        s += &format!(
            "kernel\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            k.name,
            k.args_size,
            k.static_local_size,
            k.fibers as u8,
            k.frame_size,
            k.regions as u8,
            reqd,
            k.sub_groups as u8,
            k.attributes,
            match k.group_use {
                GroupUse::Whole => 0,
                GroupUse::Blind => 1,
                GroupUse::Ids => 2,
            },
            k.prints as u8,
            k.driver_copies as u8,
            k.reqd_sub_group_size.unwrap_or(0)
        );
        for a in &k.args {
            let kind = match a.kind {
                ArgKind::Buffer => "B",
                ArgKind::Local => "L",
                ArgKind::Value => "V",
                ArgKind::Image => "I",
                ArgKind::Sampler => "S",
                ArgKind::Pipe => "P",
            };
            s += &format!(
                "arg\t{kind}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                a.offset,
                a.size,
                a.addr_space,
                a.access,
                a.type_name,
                a.type_qual,
                a.name.as_deref().unwrap_or("\u{1}")
            );
        }
    }
    s
}

/// The kernels and the size of the program-scope variables.
pub(crate) fn from_text(s: &str) -> Option<(Vec<Kernel>, u64)> {
    let mut out: Vec<Kernel> = Vec::new();
    let mut globals = 0;
    for line in s.lines().filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "globals" if f.len() == 2 => globals = f[1].parse().ok()?,
            // Descriptions from before `group_use` (10 fields) read as `Whole`, from
            // before `prints` (11) as printing, from before `driver_copies` (12) as making
            // none, from before `reqd_sub_group_size` (13) as asking for no size.
            "kernel" if (10..=14).contains(&f.len()) => out.push(Kernel {
                name: f[1].into(),
                args: Vec::new(),
                args_size: f[2].parse().ok()?,
                static_local_size: f[3].parse().ok()?,
                fibers: f[4] == "1",
                frame_size: f[5].parse().ok()?,
                regions: f[6] == "1",
                reqd_work_group_size: match f[7] {
                    "-" => None,
                    r => {
                        let v: Vec<usize> = r.split(',').filter_map(|x| x.parse().ok()).collect();
                        Some([*v.first()?, *v.get(1)?, *v.get(2)?])
                    }
                },
                sub_groups: f[8] == "1",
                attributes: f[9].into(),
                group_use: match f.get(10) {
                    Some(&"1") => GroupUse::Blind,
                    Some(&"2") => GroupUse::Ids,
                    _ => GroupUse::Whole,
                },
                prints: f.get(11) != Some(&"0"),
                driver_copies: f.get(12) == Some(&"1"),
                reqd_sub_group_size: f.get(13).and_then(|n| n.parse().ok()).filter(|&n| n > 0),
            }),
            "arg" if f.len() == 9 => out.last_mut()?.args.push(Arg {
                kind: match f[1] {
                    "B" => ArgKind::Buffer,
                    "L" => ArgKind::Local,
                    "I" => ArgKind::Image,
                    "S" => ArgKind::Sampler,
                    "P" => ArgKind::Pipe,
                    _ => ArgKind::Value,
                },
                offset: f[2].parse().ok()?,
                size: f[3].parse().ok()?,
                addr_space: f[4].parse().ok()?,
                access: f[5].into(),
                type_name: f[6].into(),
                type_qual: f[7].into(),
                name: (f[8] != "\u{1}").then(|| f[8].to_string()),
            }),
            _ => return None,
        }
    }
    Some((out, globals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let k = Kernel {
            name: "k".into(),
            args: vec![Arg {
                kind: ArgKind::Local,
                offset: 8,
                size: 8,
                addr_space: 3,
                access: "none".into(),
                type_name: "float*".into(),
                type_qual: "const volatile".into(),
                name: None,
            }],
            args_size: 16,
            static_local_size: 256,
            fibers: true,
            frame_size: 96,
            regions: false,
            reqd_work_group_size: Some([8, 4, 1]),
            sub_groups: true,
            reqd_sub_group_size: Some(16),
            prints: false,
            driver_copies: true,
            group_use: GroupUse::Ids,
            attributes: "vec_type_hint(float4) reqd_work_group_size(64,1,1)".into(),
        };
        assert_eq!(from_text(&to_text(std::slice::from_ref(&k), 24)), Some((vec![k], 24)));
        assert_eq!(from_text("garbage"), None);
        // A description written before `group_use` existed.
        let old = "kernel\tk\t16\t0\t0\t0\t0\t-\t0\t\n";
        assert!(from_text(old).is_some_and(|(ks, _)| ks[0].group_use == GroupUse::Whole && ks[0].prints));
    }
}
