//! Facts about the machine the device runs on, read once from the OS.

use std::fs;

#[derive(Clone)]
pub(crate) struct HostFacts {
    pub(crate) cores: u32,
    pub(crate) memory_bytes: u64,
    pub(crate) cpu_name: String,
    pub(crate) cpu_vendor: String,
    /// CPUID leaf 1's signature (stepping, model and family, as EAX encodes them), which
    /// `CL_DEVICE_ID_INTEL` reports as Intel's CPU runtime does.
    pub(crate) cpu_signature: u32,
    /// The CPU's feature flags (what `-march=native` compiles for).
    pub(crate) cpu_flags: String,
    pub(crate) max_clock_mhz: u32,
    pub(crate) cacheline: u32,
    /// The largest data cache a core can use (normally the shared last level).
    pub(crate) cache_bytes: u64,
    pub(crate) has_avx2: bool,
    pub(crate) has_avx512: bool,
    pub(crate) has_fma: bool,
}

impl HostFacts {
    pub(crate) fn probe() -> HostFacts {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            cpuinfo
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        HostFacts {
            cores: usable_cores(),
            memory_bytes: physical_memory(),
            cpu_name: field("model name").unwrap_or_else(|| "CPU".into()),
            cpu_vendor: field("vendor_id").unwrap_or_else(|| "unknown".into()),
            cpu_signature: signature(
                field("cpu family").and_then(|v| v.parse().ok()).unwrap_or(0),
                field("model").and_then(|v| v.parse().ok()).unwrap_or(0),
                field("stepping").and_then(|v| v.parse().ok()).unwrap_or(0),
            ),
            cpu_flags: field("flags").unwrap_or_default(),
            max_clock_mhz: max_clock_mhz()
                .unwrap_or_else(|| field("cpu MHz").and_then(|v| v.parse::<f64>().ok()).map_or(0, |v| v as u32)),
            cacheline: field("cache_alignment").and_then(|v| v.parse().ok()).unwrap_or(64),
            cache_bytes: largest_cache().unwrap_or(1 << 20),
            has_avx2: is_x86_feature_detected!("avx2"),
            has_avx512: is_x86_feature_detected!("avx512f"),
            has_fma: is_x86_feature_detected!("fma"),
        }
    }
}

/// CPUID leaf 1's EAX for a family, model and stepping as /proc/cpuinfo gives them
/// (the kernel adds the extended fields in): the family's base nibble saturates at 15
/// with the rest in the extended family, the model's high nibble is the extended model.
fn signature(family: u32, model: u32, stepping: u32) -> u32 {
    let (base, extended) = (family.min(15), family.saturating_sub(15));
    (stepping & 0xF) | (model & 0xF) << 4 | base << 8 | (model >> 4 & 0xF) << 16 | (extended & 0xFF) << 20
}

/// Cores this process may run on (respects `taskset` and cgroup cpusets).
fn usable_cores() -> u32 {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = libc::CPU_COUNT(&set);
            if n > 0 {
                return n as u32;
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn physical_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    if pages > 0 && page > 0 {
        pages as u64 * page as u64
    } else {
        1 << 30
    }
}

fn max_clock_mhz() -> Option<u32> {
    let khz = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").ok()?;
    Some((khz.trim().parse::<u64>().ok()? / 1000) as u32)
}

fn largest_cache() -> Option<u64> {
    let dir = fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let path = e.ok()?.path();
        let kind = fs::read_to_string(path.join("type")).ok()?;
        if kind.trim() == "Instruction" {
            return None;
        }
        parse_size(fs::read_to_string(path.join("size")).ok()?.trim())
    })
    .max()
}

/// Parses sysfs cache sizes such as "32K" or "16384K" or "8M".
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes() {
        assert_eq!(parse_size("32K"), Some(32 << 10));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn signatures_encode_cpuid_leaf_1() {
        // A Xeon of family 6, model 207, stepping 2 (Intel's runtime reports 788210);
        // a Zen 3 of family 25, model 1, stepping 1.
        assert_eq!(signature(6, 207, 2), 0xC06F2);
        assert_eq!(signature(25, 1, 1), 0xA00F11);
    }

    #[test]
    fn probe_is_sane() {
        let h = HostFacts::probe();
        assert!(h.cores >= 1);
        assert!(h.memory_bytes >= 1 << 20);
        assert!(h.cacheline.is_power_of_two());
    }
}
