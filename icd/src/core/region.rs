//! Byte-range arithmetic for buffer transfers: bounds checks that cannot overflow,
//! rectangle geometry for the `_rect` commands and the spec's overlap test.

/// True when `[offset, offset + size)` lies inside `[0, total)`.
pub(crate) fn fits(offset: usize, size: usize, total: usize) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= total)
}

/// True when two byte ranges share at least one byte.
pub(crate) fn overlaps(a: usize, a_size: usize, b: usize, b_size: usize) -> bool {
    a < b.saturating_add(b_size) && b < a.saturating_add(a_size)
}

/// One side of a rectangular transfer: where it starts and how rows and slices are laid
/// out in memory. Pitches are already defaulted (`0` means tightly packed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RectSide {
    pub(crate) origin: [usize; 3],
    pub(crate) row_pitch: usize,
    pub(crate) slice_pitch: usize,
}

impl RectSide {
    /// Applies the spec's defaults and checks the pitches against the region:
    /// "If row_pitch is 0, row_pitch is computed as region[0]"; "If slice_pitch is 0,
    /// slice_pitch is computed as region[1] * row_pitch"; a non-zero row pitch must be
    /// at least region[0], a non-zero slice pitch at least region[1] * row_pitch and a multiple of
    /// row_pitch. `None` means `CL_INVALID_VALUE`.
    pub(crate) fn new(
        origin: [usize; 3],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Option<RectSide> {
        let row_pitch = if row_pitch == 0 { region[0] } else { row_pitch };
        if row_pitch < region[0] {
            return None;
        }
        let min_slice = region[1].checked_mul(row_pitch)?;
        let slice_pitch = if slice_pitch == 0 { min_slice } else { slice_pitch };
        if slice_pitch < min_slice || slice_pitch % row_pitch != 0 {
            return None;
        }
        Some(RectSide { origin, row_pitch, slice_pitch })
    }

    /// Byte offset of the first byte of row `y` in slice `z` (relative to the region).
    pub(crate) fn row_offset(&self, y: usize, z: usize) -> usize {
        (self.origin[2] + z) * self.slice_pitch + (self.origin[1] + y) * self.row_pitch + self.origin[0]
    }

    /// One past the last byte the region touches, or `None` on overflow.
    pub(crate) fn end(&self, region: [usize; 3]) -> Option<usize> {
        let z = self.origin[2].checked_add(region[2] - 1)?.checked_mul(self.slice_pitch)?;
        let y = self.origin[1].checked_add(region[1] - 1)?.checked_mul(self.row_pitch)?;
        z.checked_add(y)?.checked_add(self.origin[0])?.checked_add(region[0])
    }
}

/// Copies a rectangular region between two memory areas, row by row.
///
/// # Safety
/// Every row of `region` on each side must lie inside memory valid for the access
/// (checked by the caller with [`RectSide::end`]). Rows may overlap only if the caller
/// has ruled out a `CL_MEM_COPY_OVERLAP`; `copy` (memmove) keeps each row correct.
pub(crate) unsafe fn copy_rect(src: *const u8, s: &RectSide, dst: *mut u8, d: &RectSide, region: [usize; 3]) {
    for z in 0..region[2] {
        for y in 0..region[1] {
            std::ptr::copy(src.add(s.row_offset(y, z)), dst.add(d.row_offset(y, z)), region[0]);
        }
    }
}

/// The overlap test the OpenCL spec gives for `clEnqueueCopyBufferRect` on one buffer
/// (both sides share the pitches, which the caller has checked).
pub(crate) fn rects_overlap(
    src_origin: [usize; 3],
    dst_origin: [usize; 3],
    region: [usize; 3],
    row_pitch: usize,
    slice_pitch: usize,
) -> bool {
    let slice_size = (region[1] - 1) * row_pitch + region[0];
    let block_size = (region[2] - 1) * slice_pitch + slice_size;
    let start = |o: [usize; 3]| o[2] * slice_pitch + o[1] * row_pitch + o[0];
    let (src_start, dst_start) = (start(src_origin), start(dst_origin));
    if dst_start + block_size <= src_start || src_start + block_size <= dst_start {
        return false;
    }
    // Rows may interleave without touching: region[0] fits in the gap of a row pitch.
    let (sx, dx) = (src_origin[0] % row_pitch, dst_origin[0] % row_pitch);
    if (dx >= sx + region[0] && dx + region[0] <= sx + row_pitch)
        || (sx >= dx + region[0] && sx + region[0] <= dx + row_pitch)
    {
        return false;
    }
    // Likewise whole slices in the gap of a slice pitch.
    let (sy, dy) = (
        (src_origin[1] * row_pitch + src_origin[0]) % slice_pitch,
        (dst_origin[1] * row_pitch + dst_origin[0]) % slice_pitch,
    );
    if (dy >= sy + slice_size && dy + slice_size <= sy + slice_pitch)
        || (sy >= dy + slice_size && sy + slice_size <= dy + slice_pitch)
    {
        return false;
    }
    true
}

/// Repeats `pattern` over `dst[0..size]` (`size` is a multiple of the pattern size).
///
/// # Safety
/// `dst` is valid for `size` bytes.
pub(crate) unsafe fn fill(dst: *mut u8, size: usize, pattern: &[u8]) {
    let out = std::slice::from_raw_parts_mut(dst, size);
    for chunk in out.chunks_exact_mut(pattern.len()) {
        chunk.copy_from_slice(pattern);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_handles_overflow() {
        assert!(fits(0, 10, 10));
        assert!(!fits(1, 10, 10));
        assert!(!fits(usize::MAX, 2, 10));
        assert!(fits(10, 0, 10));
    }

    #[test]
    fn rect_defaults_and_checks() {
        let r = RectSide::new([0; 3], [4, 3, 2], 0, 0).unwrap();
        assert_eq!((r.row_pitch, r.slice_pitch), (4, 12));
        assert_eq!(r.end([4, 3, 2]), Some(24));
        assert!(RectSide::new([0; 3], [4, 3, 2], 3, 0).is_none());
        assert!(RectSide::new([0; 3], [4, 3, 2], 8, 20).is_none()); // < 3 rows of 8
        assert!(RectSide::new([0; 3], [4, 3, 2], 8, 28).is_none()); // not a multiple
        let r = RectSide::new([1, 2, 1], [2, 2, 2], 8, 32).unwrap();
        assert_eq!(r.row_offset(0, 0), 32 + 16 + 1);
        assert_eq!(r.end([2, 2, 2]), Some(2 * 32 + 3 * 8 + 1 + 2));
    }

    #[test]
    fn copy_rect_moves_rows() {
        let src: Vec<u8> = (0..64).collect();
        let mut dst = vec![0u8; 64];
        let s = RectSide::new([1, 1, 0], [2, 2, 1], 4, 16).unwrap();
        let d = RectSide::new([0, 0, 0], [2, 2, 1], 2, 4).unwrap();
        unsafe { copy_rect(src.as_ptr(), &s, dst.as_mut_ptr(), &d, [2, 2, 1]) };
        assert_eq!(&dst[..4], &[5, 6, 9, 10]);
        assert!(dst[4..].iter().all(|&b| b == 0));
    }

    #[test]
    fn overlap_cases() {
        // Same rows: overlap.
        assert!(rects_overlap([0, 0, 0], [1, 0, 0], [4, 2, 1], 8, 16));
        // Side by side columns that interleave without touching.
        assert!(!rects_overlap([0, 0, 0], [4, 0, 0], [4, 2, 1], 8, 16));
        // Disjoint ranges.
        assert!(!rects_overlap([0, 0, 0], [0, 0, 1], [8, 2, 1], 8, 16));
        assert!(overlaps(0, 4, 3, 4));
        assert!(!overlaps(0, 4, 4, 4));
    }

    #[test]
    fn fill_repeats() {
        let mut buf = [0u8; 8];
        unsafe { fill(buf.as_mut_ptr(), 8, &[1, 2]) };
        assert_eq!(buf, [1, 2, 1, 2, 1, 2, 1, 2]);
    }
}
