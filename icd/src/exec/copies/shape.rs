//! Moving the bytes of one copy shape.

use ferrocl_kernel_abi::{AsyncCopy, HINT_STREAM};

pub(crate) fn bytes(c: &AsyncCopy) -> usize {
    c.elem.saturating_mul(c.per_line).saturating_mul(c.lines).saturating_mul(c.planes)
}

/// The same copy with lines that follow each other in both source and destination
/// merged into one (and planes likewise): a strided copy of stride 1 becomes one
/// memcpy instead of a loop over its elements.
pub(crate) fn simplified(c: &AsyncCopy) -> AsyncCopy {
    let mut c = *c;
    if c.lines > 1 && c.src_line == c.per_line && c.dst_line == c.per_line {
        c.per_line = c.per_line.saturating_mul(c.lines);
        c.lines = 1;
        (c.src_line, c.dst_line) = (c.per_line, c.per_line);
    }
    let plane = c.per_line.saturating_mul(c.lines);
    if c.planes > 1 && c.lines == 1 && c.src_plane == plane && c.dst_plane == plane {
        c.per_line = plane.saturating_mul(c.planes);
        c.planes = 1;
        (c.src_line, c.dst_line, c.src_plane, c.dst_plane) = (c.per_line, c.per_line, c.per_line, c.per_line);
    }
    c
}

/// Byte offsets of line `l` of plane `p` in the source and the destination.
fn line_offsets(c: &AsyncCopy, p: usize, l: usize) -> (usize, usize) {
    let src = (p.wrapping_mul(c.src_plane)).wrapping_add(l.wrapping_mul(c.src_line)).wrapping_mul(c.elem);
    let dst = (p.wrapping_mul(c.dst_plane)).wrapping_add(l.wrapping_mul(c.dst_line)).wrapping_mul(c.elem);
    (src, dst)
}

/// Performs the copy.
///
/// # Safety
/// The shape must describe readable source and writable destination memory, not
/// overlapping (the kernel's promise; validation mode checks it).
pub(crate) unsafe fn run(c: &AsyncCopy) {
    // Lines of one element (strided copies) move with a fixed-size copy per element;
    // longer lines are one memcpy each.
    if c.per_line == 1 {
        // SAFETY: the caller's contract.
        match c.elem {
            1 => return unsafe { elements::<1>(c) },
            2 => return unsafe { elements::<2>(c) },
            4 => return unsafe { elements::<4>(c) },
            8 => return unsafe { elements::<8>(c) },
            16 => return unsafe { elements::<16>(c) },
            32 => return unsafe { elements::<32>(c) },
            64 => return unsafe { elements::<64>(c) },
            128 => return unsafe { elements::<128>(c) },
            _ => {}
        }
    }
    let (src, dst) = (c.src as *const u8, c.dst as *mut u8);
    let len = c.per_line.saturating_mul(c.elem);
    let (src_pitch, dst_pitch) = (c.src_line.wrapping_mul(c.elem), c.dst_line.wrapping_mul(c.elem));
    // Whole cache lines: every row starts on a line and fills its lines.
    let lines_only = len % 64 == 0 && dst as usize % 64 == 0 && dst_pitch % 64 == 0;
    let stream = c.to_local == 0 && c.hints & HINT_STREAM != 0 && (len >= STREAM_BYTES || lines_only) && *HAS_AVX2;
    // Short rows pages apart (2D tiles): the hardware prefetcher does not follow them,
    // so fetch the rows a few ahead (the destination's for writing).
    let sparse = |pitch: usize| c.lines > AHEAD && len <= SHORT_ROW && pitch >= len + 64;
    let (src_ahead, dst_ahead) = (sparse(src_pitch), sparse(dst_pitch) && !stream);
    for (s, d) in row_offsets(c) {
        let (from, to) = (src.wrapping_add(s), dst.wrapping_add(d));
        if src_ahead {
            prefetch_lines::<false>(from.wrapping_add(src_pitch * AHEAD), len);
        }
        if dst_ahead {
            prefetch_lines::<true>(to.wrapping_add(dst_pitch * AHEAD), len);
        }
        // SAFETY: the caller's contract covers every line of the shape.
        unsafe {
            if stream {
                #[cfg(target_arch = "x86_64")]
                stream_copy(to, from, len);
            } else {
                std::ptr::copy_nonoverlapping(from, to, len)
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    if stream {
        // Non-temporal stores are weakly ordered: make them visible before the copy
        // is reported done.
        // SAFETY: a plain fence.
        unsafe { std::arch::x86_64::_mm_sfence() };
    }
}

/// How many rows ahead short rows are prefetched, and what counts as short.
/// Measured on the 2D-tile benchmark (64 rows of 256 bytes, 16 KiB apart, in and out):
/// 15-16 GB/s without, 16-17 with 4 rows ahead, 17.5-17.8 with 8 rows ahead and the
/// destination prefetched for writing too.
const AHEAD: usize = 8;
const SHORT_ROW: usize = 1024;

/// Hints the lines of `len` bytes at `p` into the cache (for writing when `WRITE`).
fn prefetch_lines<const WRITE: bool>(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0, _MM_HINT_T0};
        let mut o = 0;
        while o < len {
            // SAFETY: a prefetch is a hint and never faults, whatever the address.
            unsafe {
                if WRITE {
                    _mm_prefetch::<_MM_HINT_ET0>(p.wrapping_add(o).cast())
                } else {
                    _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(o).cast())
                }
            };
            o += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// Pushes the lines of `c`'s destination from this core's caches to the shared last
/// level (`cldemote`), where another core reads them without a snoop into this one's:
/// a copy worker's part of a group's import, which the group reads next.
pub(crate) fn demote_destination(c: &AsyncCopy) {
    #[cfg(target_arch = "x86_64")]
    if *HAS_CLDEMOTE {
        // The destination's extent, first byte to last (lines between rows are only
        // hinted, never touched); a copy worker's parts are a few KiB.
        let last = (c.planes.saturating_sub(1))
            .saturating_mul(c.dst_plane)
            .saturating_add(c.lines.saturating_sub(1).saturating_mul(c.dst_line))
            .saturating_add(c.per_line)
            .saturating_mul(c.elem);
        let (start, end) = (c.dst & !63, c.dst.saturating_add(last.min(DEMOTE_MOST)));
        let mut p = start;
        while p < end {
            // SAFETY: `cldemote` (0F 1C /0) is a hint: it never faults, whatever the
            // address, and changes no architectural state.
            unsafe {
                std::arch::asm!(".byte 0x0f, 0x1c, 0x00", in("rax") p, options(nostack, preserves_flags, readonly))
            };
            p += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = c;
}

/// The most destination bytes one copy demotes.
const DEMOTE_MOST: usize = 256 << 10;

/// CPUID leaf 7 says `cldemote` (ECX bit 25).
static HAS_CLDEMOTE: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_unsafe)] // `__cpuid` is safe from Rust 1.87 on; MSRV is 1.80.
    {
        // SAFETY: `cpuid` exists on every x86-64 processor; leaf 7 is read only where
        // the highest leaf says it exists.
        let max = unsafe { std::arch::x86_64::__cpuid(0) }.eax;
        max >= 7 && unsafe { std::arch::x86_64::__cpuid_count(7, 0) }.ecx & (1 << 25) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
});

/// Runs at least this long are copied to global memory with non-temporal stores when
/// the launch streams (`HINT_STREAM`): then nothing reads them back from the cache
/// soon, and ordinary stores would first read every destination line from memory.
/// A launch whose buffers fit the cache keeps its output there (cache-resident
/// gather benchmark: 21.7 GB/s with ordinary stores, 15.5 with streaming ones).
const STREAM_BYTES: usize = 2 << 10;

static HAS_AVX2: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
});

/// memcpy with non-temporal 32-byte stores for the aligned middle; the caller fences.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping; AVX2 present.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn stream_copy(dst: *mut u8, src: *const u8, len: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};
    let head = (dst as usize).wrapping_neg() & 31;
    let head = head.min(len);
    // SAFETY: all offsets stay within `len`; the stores are to 32-byte aligned addresses.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let mut i = head;
        while i + 32 <= len {
            let v = _mm256_loadu_si256(src.add(i).cast::<__m256i>());
            _mm256_stream_si256(dst.add(i).cast::<__m256i>(), v);
            i += 32;
        }
        std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    }
}

/// Source and destination byte offsets of every row of the shape, walking lines and
/// planes without a division per row (strided copies have a row per element).
fn row_offsets(c: &AsyncCopy) -> impl Iterator<Item = (usize, usize)> + '_ {
    let (mut p, mut l) = (0, 0);
    let (mut s, mut d) = line_offsets(c, 0, 0);
    let (sl, dl) = (c.src_line.wrapping_mul(c.elem), c.dst_line.wrapping_mul(c.elem));
    (0..c.planes.saturating_mul(c.lines)).map(move |_| {
        let here = (s, d);
        l += 1;
        if l == c.lines {
            l = 0;
            p += 1;
            (s, d) = line_offsets(c, p, 0);
        } else {
            s = s.wrapping_add(sl);
            d = d.wrapping_add(dl);
        }
        here
    })
}

/// Copies rows of one `N`-byte element each (strided copies): four at a time, with
/// the addresses bumped rather than multiplied, so that more source lines are in flight.
unsafe fn elements<const N: usize>(c: &AsyncCopy) {
    let (src, dst) = (c.src as *const u8, c.dst as *mut u8);
    let (sl, dl) = (c.src_line.wrapping_mul(N), c.dst_line.wrapping_mul(N));
    let copy = |from: *const u8, to: *mut u8| {
        // SAFETY: the caller's contract; elements need not be aligned.
        unsafe { to.cast::<[u8; N]>().write_unaligned(from.cast::<[u8; N]>().read_unaligned()) }
    };
    // Plane by plane: within one, consecutive rows are `src_line` / `dst_line` apart.
    let n = c.lines;
    for (s, d) in (0..c.planes).map(|p| line_offsets(c, p, 0)) {
        let (mut f0, mut t0) = (src.wrapping_add(s), dst.wrapping_add(d));
        let (mut f1, mut t1) = (f0.wrapping_add(sl), t0.wrapping_add(dl));
        let (s4, d4) = (sl.wrapping_mul(4), dl.wrapping_mul(4));
        let (s2, d2) = (sl.wrapping_mul(2), dl.wrapping_mul(2));
        for _ in 0..n / 4 {
            copy(f0, t0);
            copy(f1, t1);
            copy(f0.wrapping_add(s2), t0.wrapping_add(d2));
            copy(f1.wrapping_add(s2), t1.wrapping_add(d2));
            (f0, t0, f1, t1) = (f0.wrapping_add(s4), t0.wrapping_add(d4), f1.wrapping_add(s4), t1.wrapping_add(d4));
        }
        for _ in 0..n % 4 {
            copy(f0, t0);
            (f0, t0) = (f0.wrapping_add(sl), t0.wrapping_add(dl));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(src: &[u8], dst: &mut [u8]) -> AsyncCopy {
        AsyncCopy {
            src: src.as_ptr() as usize,
            dst: dst.as_mut_ptr() as usize,
            planes: 1,
            lines: 1,
            ..Default::default()
        }
    }

    #[test]
    fn streamed_export_matches_a_plain_copy() {
        // Rows long enough to stream, at odd offsets and lengths, with and without the hint.
        let src: Vec<u8> = (0..20000).map(|i| (i * 7) as u8).collect();
        for hints in [0, HINT_STREAM] {
            for (from, len) in [(0usize, 4096usize), (3, 5000), (61, 2049)] {
                let mut dst = vec![0u8; 12000];
                let c = AsyncCopy {
                    elem: 1,
                    per_line: len,
                    lines: 2,
                    src_line: len + 100,
                    dst_line: len + 9,
                    hints,
                    ..shape(&src[from..], &mut dst[5..])
                };
                unsafe { run(&c) };
                assert!(dst[..5].iter().all(|&b| b == 0));
                assert_eq!(dst[5..5 + len], src[from..from + len]);
                assert!(dst[5 + len..5 + len + 9].iter().all(|&b| b == 0));
                assert_eq!(dst[5 + len + 9..5 + 2 * len + 9], src[from + len + 100..from + 2 * len + 100]);
                assert!(dst[5 + 2 * len + 9..].iter().all(|&b| b == 0));
            }
        }
    }

    #[test]
    fn streamed_whole_line_rows_match_a_plain_copy() {
        // Rows of whole cache lines at line-aligned destinations stream however short
        // they are (2D tiles); the rows between stay untouched.
        let src: Vec<u8> = (0..8192).map(|i| (i * 5 + 3) as u8).collect();
        let mut buf = vec![0u8; 8192 + 64];
        let at = buf.as_ptr().align_offset(64);
        let dst = &mut buf[at..at + 8192];
        let (len, pitch, rows) = (128usize, 192usize, 20usize);
        let c = AsyncCopy {
            elem: 4,
            per_line: len / 4,
            lines: rows,
            src_line: 100,
            dst_line: pitch / 4,
            hints: HINT_STREAM,
            ..shape(&src[8..], dst)
        };
        unsafe { run(&c) };
        for r in 0..rows {
            assert_eq!(dst[r * pitch..r * pitch + len], src[8 + r * 400..8 + r * 400 + len], "row {r}");
            assert!(dst[r * pitch + len..(r + 1) * pitch].iter().all(|&b| b == 0), "gap after row {r}");
        }
    }

    #[test]
    fn strided_gather_of_each_element_size() {
        for elem in [1usize, 2, 3, 4, 8, 13, 16, 64] {
            let src: Vec<u8> = (0..elem * 3 * 10).map(|i| i as u8).collect();
            let mut dst = vec![0u8; elem * 10 + 5];
            let c = AsyncCopy { elem, per_line: 1, lines: 10, src_line: 3, dst_line: 1, ..shape(&src, &mut dst) };
            unsafe { run(&c) };
            for i in 0..10 {
                assert_eq!(&dst[i * elem..(i + 1) * elem], &src[i * 3 * elem..(i * 3 + 1) * elem], "elem {elem}");
            }
            assert!(dst[elem * 10..].iter().all(|&b| b == 0), "bytes past the copy");
        }
    }

    #[test]
    fn contiguous_lines_and_planes_merge() {
        let src: Vec<u8> = (0..=255).collect();
        let mut dst = vec![0u8; 256];
        // Stride 1: 10 lines of one 4-byte element -> one line of 10.
        let c = AsyncCopy { elem: 4, per_line: 1, lines: 10, src_line: 1, dst_line: 1, ..shape(&src, &mut dst) };
        let m = simplified(&c);
        assert_eq!((m.per_line, m.lines, m.planes), (10, 1, 1));
        assert_eq!(bytes(&m), bytes(&c));
        // 3 planes of 2 contiguous lines of 5 -> one line of 30.
        let c = AsyncCopy {
            elem: 1,
            per_line: 5,
            lines: 2,
            planes: 3,
            src_line: 5,
            dst_line: 5,
            src_plane: 10,
            dst_plane: 10,
            ..shape(&src, &mut dst)
        };
        assert_eq!(simplified(&c).per_line, 30);
        // A gap between lines keeps them; one between planes keeps the planes.
        for (c, want) in [
            (AsyncCopy { src_line: 6, ..c }, (5, 2, 3)),
            (AsyncCopy { dst_plane: 11, ..c }, (10, 1, 3)),
            (AsyncCopy { elem: 4, per_line: 1, lines: 10, src_line: 4, dst_line: 1, planes: 1, ..c }, (1, 10, 1)),
        ] {
            let m = simplified(&c);
            assert_eq!((m.per_line, m.lines, m.planes), want, "{c:?}");
            assert_eq!(bytes(&m), bytes(&c));
        }
    }

    #[test]
    fn planes_of_lines() {
        // 2 planes x 3 lines x 4 elements of 2 bytes, from a 5-element-wide source.
        let src: Vec<u8> = (0..200).collect();
        let mut dst = vec![0u8; 2 * 3 * 4 * 2];
        let c = AsyncCopy {
            elem: 2,
            per_line: 4,
            lines: 3,
            planes: 2,
            src_line: 5,
            src_plane: 20,
            dst_line: 4,
            dst_plane: 12,
            ..shape(&src, &mut dst)
        };
        unsafe { run(&c) };
        for p in 0..2 {
            for l in 0..3 {
                let s = (p * 20 + l * 5) * 2;
                let d = (p * 12 + l * 4) * 2;
                assert_eq!(&dst[d..d + 8], &src[s..s + 8]);
            }
        }
        assert_eq!(bytes(&c), 48);
    }
}
