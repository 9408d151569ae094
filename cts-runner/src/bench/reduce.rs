//! Reductions: a group sums its part of a 64 MiB float array, first each work-item
//! its run, then the group's work-items together, as an application's reduction kernel
//! does, in two forms: a tree in local memory with a barrier per level (the form every
//! OpenCL tutorial teaches), and OpenCL C 2.0's `work_group_reduce_add`. Memory-bound
//! with a barrier-heavy tail, so the figure shows whether barriers keep up with the
//! cores' bandwidth; read against the host's own sum of the same array on every core.

use crate::session::{arg, Session};

pub const METRICS: &[(&str, &str, bool)] = &[
    ("reduce_tree_gbs", "reduction of 64 MiB floats, local-memory tree, GB/s", true),
    ("reduce_wg_gbs", "  the same with work_group_reduce_add, GB/s", true),
];

/// Each group of `GROUP` work-items sums `GROUP * PER` float4s, read as GPU code reads
/// them: in each step the group takes `GROUP` consecutive float4s, one per work-item.
const GROUP: usize = 256;
const PER: usize = 16;
const BYTES: usize = 64 << 20;

const SOURCE_TREE: &str = r#"
kernel void reduce_tree(global const float4 *in, global float *partial, int per) {
    local float sums[256];
    size_t l = get_local_id(0), n = get_local_size(0);
    global const float4 *p = in + get_group_id(0) * n * per;
    float4 acc = 0;
    for (int i = 0; i < per; i++) acc += p[i * n + l];
    sums[l] = acc.x + acc.y + acc.z + acc.w;
    for (size_t s = n / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s) sums[l] += sums[l + s];
    }
    if (l == 0) partial[get_group_id(0)] = sums[0];
}
"#;

const SOURCE_WG: &str = r#"
kernel void reduce_wg(global const float4 *in, global float *partial, int per) {
    size_t l = get_local_id(0), n = get_local_size(0);
    global const float4 *p = in + get_group_id(0) * n * per;
    float4 acc = 0;
    for (int i = 0; i < per; i++) acc += p[i * n + l];
    float sum = work_group_reduce_add(acc.x + acc.y + acc.z + acc.w);
    if (l == 0) partial[get_group_id(0)] = sum;
}
"#;

/// Both forms; a platform that cannot build one (no OpenCL C 2.0) gives no figure for
/// it. Every group's sum is checked: the array holds ones, so each is exact.
pub fn measure(s: &Session) -> Result<Vec<(String, f64)>, String> {
    let n = BYTES / 4;
    let groups = BYTES / (16 * GROUP * PER);
    let input = s.buffer(BYTES, Some(&vec![1.0f32; n]))?;
    let partial = s.buffer(groups * 4, None)?;
    let mut out = Vec::new();
    for (key, name, source, options) in [
        ("reduce_tree_gbs", "reduce_tree", SOURCE_TREE, ""),
        ("reduce_wg_gbs", "reduce_wg", SOURCE_WG, "-cl-std=CL2.0"),
    ] {
        let prog = match s.build_with(source, options) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{name} not measured: {e}");
                continue;
            }
        };
        let k = s.kernel(prog, name)?;
        arg(k, 0, &input)?;
        arg(k, 1, &partial)?;
        arg(k, 2, &(PER as i32))?;
        let (global, local) = ([groups * GROUP], [GROUP]);
        s.run(k, &global, Some(&local))?;
        let sums = s.read(partial, groups * 4)?;
        let want = (GROUP * PER * 4) as f32;
        if let Some((g, got)) = sums
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .enumerate()
            .find(|(_, v)| *v != want)
        {
            return Err(format!("{name}: group {g} summed {got}, not {want}"));
        }
        let t = s.timed(5, k, &global, Some(&local))?;
        out.push((key.to_string(), BYTES as f64 / t / 1e9));
    }
    Ok(out)
}

/// The host's sum of the same array, one thread per core, each over a contiguous part:
/// what plain compiled code reads from memory.
pub fn host_sum_gbs() -> f64 {
    let data = vec![1.0f32; BYTES / 4];
    let parts: Vec<&[f32]> = data.chunks(data.len().div_ceil(crate::host::host_threads())).collect();
    let best_t = crate::host::on_host_threads(parts, 10, |part| {
        std::hint::black_box(sum(part));
    });
    BYTES as f64 / best_t / 1e9
}

/// Eight independent sums, so the loop is bound by memory, not by one addition chain.
fn sum(c: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut blocks = c.chunks_exact(8);
    for b in &mut blocks {
        for (a, v) in acc.iter_mut().zip(b) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + blocks.remainder().iter().sum::<f32>()
}
