//! Sub-devices (`clCreateSubDevices`): a device's workers split equally, by counts, or
//! by the host's affinity domains (NUMA nodes and shared caches, read from sysfs). A
//! sub-device's launches run on its workers alone (`exec::pool::Workers`), each pinned to
//! its own core, so launches on two sub-devices never share a core.

use std::collections::BTreeMap;
use std::sync::Arc;

use opencl_sys::*;

use super::device::{Device, Partition};
use super::object::CLResult;
use crate::exec::pool;

/// A partition scheme, as `clCreateSubDevices` names it.
#[derive(Debug, PartialEq)]
pub(crate) enum Scheme {
    /// Sub-devices of n compute units each, as many as fit.
    Equally(usize),
    /// One sub-device of each count.
    Counts(Vec<usize>),
    /// One sub-device per affinity domain (`CL_DEVICE_AFFINITY_DOMAIN_*`).
    Domain(cl_device_affinity_domain),
}

/// The most properties a list is read for (its terminating 0 included): a list that
/// long is not one a program wrote.
pub(crate) const MOST_PROPERTIES: usize = 4096;

/// Reads a property list, up to its first 0, into a scheme (a partition's counts end at
/// `CL_DEVICE_PARTITION_BY_COUNTS_LIST_END`, which is 0 too). "CL_INVALID_VALUE if values
/// specified in properties are not valid or ... not supported by the device";
/// "CL_INVALID_DEVICE_PARTITION_COUNT if ... the number of compute units requested for
/// one or more sub-devices is less than zero".
pub(crate) fn parse(props: &[cl_device_partition_property]) -> CLResult<Scheme> {
    let value = |i: usize| props.get(i).copied().ok_or(CL_INVALID_VALUE);
    let scheme = match value(0)? {
        CL_DEVICE_PARTITION_EQUALLY => {
            let n = value(1)?;
            if n <= 0 || value(2)? != 0 {
                return Err(CL_INVALID_VALUE);
            }
            Scheme::Equally(n as usize)
        }
        CL_DEVICE_PARTITION_BY_COUNTS => {
            let mut counts = Vec::new();
            let mut i = 1;
            loop {
                let c = value(i)?;
                if c == CL_DEVICE_PARTITION_BY_COUNTS_LIST_END {
                    break;
                }
                if c < 0 {
                    return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
                }
                counts.push(c as usize);
                i += 1;
            }
            if counts.is_empty() {
                return Err(CL_INVALID_VALUE);
            }
            Scheme::Counts(counts)
        }
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN => {
            let d = value(1)? as cl_device_affinity_domain;
            if value(2)? != 0 || !DOMAINS.iter().any(|&(flag, _)| flag == d) && d != NEXT {
                return Err(CL_INVALID_VALUE);
            }
            Scheme::Domain(d)
        }
        _ => return Err(CL_INVALID_VALUE),
    };
    Ok(scheme)
}

const NEXT: cl_device_affinity_domain = CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;

/// The affinity domains, from the outermost: each flag and the cache level it is (0 for
/// a NUMA node). `NEXT_PARTITIONABLE` tries them in this order.
const DOMAINS: [(cl_device_affinity_domain, u32); 5] = [
    (CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0),
    (CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE, 4),
    (CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, 3),
    (CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, 2),
    (CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE, 1),
];

/// `workers` (a device's) split by `scheme`: the workers of each sub-device, and the
/// properties each reports. "CL_DEVICE_PARTITION_FAILED if the partition name is
/// supported ... but in_device could not be further partitioned";
/// "CL_INVALID_DEVICE_PARTITION_COUNT if ... BY_COUNTS and the number of sub-devices
/// requested exceeds CL_DEVICE_PARTITION_MAX_SUB_DEVICES or the total number of compute
/// units requested exceeds CL_DEVICE_PARTITION_MAX_COMPUTE_UNITS".
pub(crate) fn split(
    scheme: &Scheme,
    workers: &[usize],
) -> CLResult<(Vec<Vec<usize>>, Vec<cl_device_partition_property>)> {
    let units = workers.len();
    Ok(match scheme {
        Scheme::Equally(n) => {
            // "CL_INVALID_DEVICE_PARTITION_COUNT if ... the total number of compute
            // units requested exceeds CL_DEVICE_MAX_COMPUTE_UNITS for in_device"; one
            // sub-device of every unit is no partition ("could not be further
            // partitioned", as the CTS's negative_create_sub_devices has it).
            if *n > units {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            if *n == units {
                return Err(CL_DEVICE_PARTITION_FAILED);
            }
            let sets = workers.chunks_exact(*n).map(<[usize]>::to_vec).collect();
            (sets, vec![CL_DEVICE_PARTITION_EQUALLY, *n as isize, 0])
        }
        Scheme::Counts(counts) => {
            let total = counts.iter().try_fold(0usize, |t, &c| t.checked_add(c));
            if counts.len() > units || !total.is_some_and(|t| t <= units) {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            // A sub-device of no compute units cannot run anything.
            if counts.contains(&0) {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            let mut at = 0;
            let sets = counts
                .iter()
                .map(|&c| {
                    at += c;
                    workers[at - c..at].to_vec()
                })
                .collect();
            let mut props = vec![CL_DEVICE_PARTITION_BY_COUNTS];
            props.extend(counts.iter().map(|&c| c as isize));
            props.extend([CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0]);
            (sets, props)
        }
        Scheme::Domain(d) => {
            let candidates: Vec<(cl_device_affinity_domain, u32)> =
                DOMAINS.iter().copied().filter(|&(flag, _)| *d == NEXT || flag == *d).collect();
            let topology = Topology::get();
            let mut chosen = None;
            for (flag, level) in candidates {
                match topology.group(level, workers) {
                    Some(sets) if sets.len() > 1 => {
                        chosen = Some((sets, flag));
                        break;
                    }
                    // Not a domain that splits this device, so not one it offers
                    // (`affinity_domains`): "valid but not supported by the device".
                    _ if *d != NEXT => return Err(CL_INVALID_VALUE),
                    _ => {}
                }
            }
            let (sets, flag) = chosen.ok_or(CL_DEVICE_PARTITION_FAILED)?;
            (sets, vec![CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, flag as isize, 0])
        }
    })
}

/// `CL_DEVICE_PARTITION_AFFINITY_DOMAIN` of a device with these workers: the domains
/// that split them (more than one NUMA node, L3 slice, ... among them), and
/// `NEXT_PARTITIONABLE` with them. A domain the device lies within (the one NUMA node
/// of a one-socket host) is not offered: the CTS's migration tests partition by every
/// domain offered and take a refusal for a failure.
pub(crate) fn affinity_domains(workers: &[usize]) -> cl_device_affinity_domain {
    let topology = Topology::get();
    let splits = |level| topology.group(level, workers).is_some_and(|sets| sets.len() > 1);
    let found = DOMAINS.iter().filter(|&&(_, level)| splits(level)).fold(0, |a, &(f, _)| a | f);
    if found != 0 {
        found | NEXT
    } else {
        0
    }
}

/// Which CPUs share each domain: per CPU, its NUMA node and the first CPU of each cache
/// level it shares (sysfs).
struct Topology {
    /// (level, cpu) -> the domain's key (0: the NUMA node).
    domain: BTreeMap<(u32, usize), usize>,
}

impl Topology {
    /// The host's, read once: device queries ask for the affinity domains, and sysfs
    /// holds a few files per CPU.
    fn get() -> &'static Topology {
        static TOPOLOGY: std::sync::LazyLock<Topology> = std::sync::LazyLock::new(Topology::read);
        &TOPOLOGY
    }

    fn read() -> Topology {
        let mut domain = BTreeMap::new();
        let list = |path: &str| std::fs::read_to_string(path).ok().map(|s| cpu_list(s.trim()));
        for node in 0..1024 {
            let Some(cpus) = list(&format!("/sys/devices/system/node/node{node}/cpulist")) else {
                if node > 0 {
                    break;
                }
                continue;
            };
            for cpu in cpus {
                domain.insert((0, cpu), node);
            }
        }
        for worker in 0..pool::Pool::get().workers {
            let Some(cpu) = pool::cpu_of_worker(worker) else { continue };
            for index in 0..16 {
                let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
                let Ok(level) = std::fs::read_to_string(format!("{dir}/level")) else { break };
                let kind = std::fs::read_to_string(format!("{dir}/type")).unwrap_or_default();
                let (Ok(level), Some(shared)) = (level.trim().parse::<u32>(), list(&format!("{dir}/shared_cpu_list")))
                else {
                    continue;
                };
                // Data and unified caches: the instruction cache shares a level with them.
                if kind.trim() != "Instruction" {
                    domain.insert((level, cpu), shared.first().copied().unwrap_or(cpu));
                }
            }
        }
        Topology { domain }
    }

    /// `workers` grouped by their domain at `level` (in the order of the workers), or
    /// `None` where some worker's CPU has no domain there.
    fn group(&self, level: u32, workers: &[usize]) -> Option<Vec<Vec<usize>>> {
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for &w in workers {
            let key = *self.domain.get(&(level, pool::cpu_of_worker(w)?))?;
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(w),
                None => groups.push((key, vec![w])),
            }
        }
        Some(groups.into_iter().map(|(_, g)| g).collect())
    }
}

/// A sysfs CPU list (`0-3,8,10-11`).
fn cpu_list(s: &str) -> Vec<usize> {
    s.split(',')
        .filter_map(|part| match part.split_once('-') {
            Some((a, b)) => Some((a.trim().parse().ok()?..=b.trim().parse().ok()?).collect::<Vec<usize>>()),
            None => part.trim().parse().ok().map(|c| vec![c]),
        })
        .flatten()
        .collect()
}

/// Makes the sub-devices of `parent` for `scheme`.
pub(crate) fn create(parent: &Arc<Device>, scheme: &Scheme) -> CLResult<Vec<Arc<Device>>> {
    let workers = parent.worker_list();
    let (sets, properties) = split(scheme, &workers)?;
    Ok(sets
        .into_iter()
        .map(|set| {
            let partition = Partition { parent: parent.clone(), workers: set.into(), properties: properties.clone() };
            Device::sub_device(parent, partition)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_lists_parse_into_schemes_or_the_specs_errors() {
        let (eq, counts, dom) =
            (CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS, CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
        assert_eq!(parse(&[eq, 2, 0]), Ok(Scheme::Equally(2)));
        assert_eq!(parse(&[eq, 0, 0]), Err(CL_INVALID_VALUE));
        assert_eq!(parse(&[eq, 2]), Err(CL_INVALID_VALUE), "unterminated");
        assert_eq!(parse(&[counts, 1, 3, 0, 0]), Ok(Scheme::Counts(vec![1, 3])));
        assert_eq!(parse(&[counts, 1, 3, 0]), Ok(Scheme::Counts(vec![1, 3])), "SYCL's runtime ends with one 0");
        assert_eq!(parse(&[counts, 0, 0]), Err(CL_INVALID_VALUE), "no counts");
        assert_eq!(parse(&[counts, -1, 0, 0]), Err(CL_INVALID_DEVICE_PARTITION_COUNT));
        let l2 = CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE as isize;
        assert_eq!(parse(&[dom, l2, 0]), Ok(Scheme::Domain(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE)));
        assert_eq!(parse(&[dom, 3, 0]), Err(CL_INVALID_VALUE), "two domains at once");
        assert_eq!(parse(&[0x1234, 1, 0]), Err(CL_INVALID_VALUE));
        assert_eq!(parse(&[]), Err(CL_INVALID_VALUE));
    }

    #[test]
    fn schemes_split_the_workers() {
        let w: Vec<usize> = (0..7).collect();
        let (sets, props) = split(&Scheme::Equally(3), &w).unwrap();
        assert_eq!(sets, [vec![0, 1, 2], vec![3, 4, 5]], "the seventh unit is left out");
        assert_eq!(props, [CL_DEVICE_PARTITION_EQUALLY, 3, 0]);
        assert_eq!(split(&Scheme::Equally(8), &w).unwrap_err(), CL_INVALID_DEVICE_PARTITION_COUNT);
        assert_eq!(split(&Scheme::Equally(7), &w).unwrap_err(), CL_DEVICE_PARTITION_FAILED);
        let (sets, _) = split(&Scheme::Counts(vec![1, 4]), &w).unwrap();
        assert_eq!(sets, [vec![0], vec![1, 2, 3, 4]]);
        assert_eq!(split(&Scheme::Counts(vec![4, 4]), &w).unwrap_err(), CL_INVALID_DEVICE_PARTITION_COUNT);
        assert_eq!(split(&Scheme::Counts(vec![1; 8]), &w).unwrap_err(), CL_INVALID_DEVICE_PARTITION_COUNT);
        assert_eq!(cpu_list("0-3,8,10-11"), [0, 1, 2, 3, 8, 10, 11]);
    }
}
