//! Image formats and geometry: which formats exist and which this device offers, the
//! bytes a texel takes, how an image's texels are laid out in memory, and the
//! conversion of a fill colour into a texel. Kernels read and write texels with
//! builtins/clc/image.cl, which follows the same layout (kernel-abi `Image`).

// The spec's constants keep their names (`CL_sRGBA`, `CL_Rx`).
#![allow(non_upper_case_globals)]

use opencl_sys::*;

use super::region::RectSide;

/// Channel types with one value per channel, and the bytes of each.
const PLAIN_TYPES: &[(cl_channel_type, usize)] = &[
    (CL_SNORM_INT8, 1),
    (CL_SNORM_INT16, 2),
    (CL_UNORM_INT8, 1),
    (CL_UNORM_INT16, 2),
    (CL_SIGNED_INT8, 1),
    (CL_SIGNED_INT16, 2),
    (CL_SIGNED_INT32, 4),
    (CL_UNSIGNED_INT8, 1),
    (CL_UNSIGNED_INT16, 2),
    (CL_UNSIGNED_INT32, 4),
    (CL_HALF_FLOAT, 2),
    (CL_FLOAT, 4),
];

/// Types that pack every channel into one value, and its bytes.
const PACKED_TYPES: &[(cl_channel_type, usize)] =
    &[(CL_UNORM_SHORT_565, 2), (CL_UNORM_SHORT_555, 2), (CL_UNORM_INT_101010, 4), (CL_UNORM_INT_101010_2, 4)];

const EIGHT_BIT: &[cl_channel_type] = &[CL_UNORM_INT8, CL_SNORM_INT8, CL_SIGNED_INT8, CL_UNSIGNED_INT8];
const NORM_AND_FLOAT: &[cl_channel_type] =
    &[CL_UNORM_INT8, CL_UNORM_INT16, CL_SNORM_INT8, CL_SNORM_INT16, CL_HALF_FLOAT, CL_FLOAT];

/// Channels stored per texel for each channel order (packed types store one value).
fn channel_count(order: cl_channel_order) -> Option<usize> {
    Some(match order {
        CL_R | CL_A | CL_Rx | CL_INTENSITY | CL_LUMINANCE | CL_DEPTH => 1,
        CL_RG | CL_RA | CL_RGx => 2,
        CL_RGB | CL_RGBx | CL_sRGB | CL_sRGBx => 3,
        CL_RGBA | CL_BGRA | CL_ARGB | CL_ABGR | CL_sRGBA | CL_sBGRA => 4,
        _ => return None,
    })
}

/// Whether the spec allows the pair at all ("CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if
/// values specified in image_format are not valid"), OpenCL 3.0 section 5.3.1.1.
pub(crate) fn valid(f: &cl_image_format) -> bool {
    let (o, t) = (f.image_channel_order, f.image_channel_data_type);
    let plain = PLAIN_TYPES.iter().any(|&(p, _)| p == t);
    match o {
        CL_R | CL_A | CL_Rx | CL_RG | CL_RA | CL_RGx | CL_RGBA => plain || (o == CL_RGBA && t == CL_UNORM_INT_101010_2),
        CL_INTENSITY | CL_LUMINANCE => NORM_AND_FLOAT.contains(&t),
        CL_RGB | CL_RGBx => [CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010].contains(&t),
        CL_BGRA | CL_ARGB | CL_ABGR => EIGHT_BIT.contains(&t),
        CL_sRGB | CL_sRGBx | CL_sRGBA | CL_sBGRA => t == CL_UNORM_INT8,
        CL_DEPTH => t == CL_UNORM_INT16 || t == CL_FLOAT,
        _ => false,
    }
}

/// Bytes per texel of a valid format.
pub(crate) fn element_size(f: &cl_image_format) -> usize {
    let t = f.image_channel_data_type;
    if let Some(&(_, bytes)) = PACKED_TYPES.iter().find(|&&(p, _)| p == t) {
        return bytes;
    }
    let bytes = PLAIN_TYPES.iter().find(|&&(p, _)| p == t).map_or(0, |&(_, b)| b);
    bytes * channel_count(f.image_channel_order).unwrap_or(0)
}

/// Channels stored per texel as kernel code loads them (1 for packed types).
pub(crate) fn stored_channels(f: &cl_image_format) -> usize {
    if PACKED_TYPES.iter().any(|&(p, _)| p == f.image_channel_data_type) {
        1
    } else {
        channel_count(f.image_channel_order).unwrap_or(0)
    }
}

/// The formats this device offers for `image_type` with access `flags`: what
/// `clGetSupportedImageFormats` lists, in a fixed order. Every one is read, written and
/// sampled by builtins/clc/image.cl.
pub(crate) fn supported(image_type: cl_mem_object_type, flags: cl_mem_flags) -> Vec<cl_image_format> {
    let fmt = |o, t| cl_image_format { image_channel_order: o, image_channel_data_type: t };
    let mut out = Vec::new();
    let all: Vec<cl_channel_type> = PLAIN_TYPES.iter().map(|&(t, _)| t).collect();
    for o in [CL_R, CL_A, CL_RG, CL_RA, CL_RGBA] {
        out.extend(all.iter().map(|&t| fmt(o, t)));
    }
    for o in [CL_BGRA, CL_ARGB, CL_ABGR] {
        out.extend(EIGHT_BIT.iter().map(|&t| fmt(o, t)));
    }
    for o in [CL_INTENSITY, CL_LUMINANCE] {
        out.extend(NORM_AND_FLOAT.iter().map(|&t| fmt(o, t)));
    }
    out.extend([CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010].map(|t| fmt(CL_RGB, t)));
    // sRGB is offered for reading: writing it is cl_khr_srgb_image_writes, not claimed.
    if flags & (CL_MEM_WRITE_ONLY | CL_MEM_READ_WRITE | CL_MEM_KERNEL_READ_AND_WRITE) == 0 {
        out.extend([CL_sRGBA, CL_sBGRA].map(|o| fmt(o, CL_UNORM_INT8)));
    }
    // cl_khr_depth_images: 2D images and 2D arrays only.
    if image_type == CL_MEM_OBJECT_IMAGE2D || image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY {
        out.extend([CL_UNORM_INT16, CL_FLOAT].map(|t| fmt(CL_DEPTH, t)));
    }
    out
}

pub(crate) fn is_supported(image_type: cl_mem_object_type, flags: cl_mem_flags, f: &cl_image_format) -> bool {
    supported(image_type, flags).iter().any(|s| {
        s.image_channel_order == f.image_channel_order && s.image_channel_data_type == f.image_channel_data_type
    })
}

/// The image types, each with its number of dimensions and whether it is an array.
pub(crate) fn shape(image_type: cl_mem_object_type) -> Option<(usize, bool)> {
    Some(match image_type {
        CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => (1, false),
        CL_MEM_OBJECT_IMAGE1D_ARRAY => (1, true),
        CL_MEM_OBJECT_IMAGE2D => (2, false),
        CL_MEM_OBJECT_IMAGE2D_ARRAY => (2, true),
        CL_MEM_OBJECT_IMAGE3D => (3, false),
        _ => return None,
    })
}

/// An image's geometry: sizes as the application gave them and the layout in memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) image_type: cl_mem_object_type,
    pub(crate) format: cl_image_format,
    pub(crate) width: usize,
    /// 1 for types without height.
    pub(crate) height: usize,
    /// 1 for types without depth.
    pub(crate) depth: usize,
    /// 0 for types that are not arrays.
    pub(crate) array_size: usize,
    pub(crate) elem: usize,
    /// `CL_IMAGE_ROW_PITCH` and `CL_IMAGE_SLICE_PITCH` (for a 1D array, the slice pitch is
    /// the distance between its images; 0 for 1D and 2D images).
    pub(crate) row_pitch: usize,
    pub(crate) slice_pitch: usize,
}

impl Layout {
    /// Extent of the coordinates kernels address texels by: x, y, z with layers counted
    /// as a dimension (a 1D array's layers are y, a 2D array's z).
    pub(crate) fn extent(&self) -> [usize; 3] {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [self.width, self.array_size, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [self.width, self.height, self.array_size],
            _ => [self.width, self.height, self.depth],
        }
    }

    /// Bytes between texels one apart in y and z of `extent`.
    pub(crate) fn strides(&self) -> (usize, usize) {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (self.slice_pitch, self.slice_pitch),
            _ => (self.row_pitch, self.slice_pitch.max(self.row_pitch)),
        }
    }

    /// Bytes the image spans in memory.
    pub(crate) fn bytes(&self) -> Option<usize> {
        let [w, h, d] = self.extent();
        let (row, slice) = self.strides();
        // The last texel's end: (d - 1) slices, (h - 1) rows, then w texels.
        (d - 1).checked_mul(slice)?.checked_add((h - 1).checked_mul(row)?)?.checked_add(w.checked_mul(self.elem)?)
    }

    /// The byte rectangle of a region of texels (`origin` and `region` as the API gives
    /// them for this image type), for the `region` copy helpers.
    pub(crate) fn rect(&self, origin: [usize; 3]) -> RectSide {
        let (row, slice) = self.strides();
        RectSide { origin: [origin[0] * self.elem, origin[1], origin[2]], row_pitch: row, slice_pitch: slice }
    }

    /// Whether `origin + region` (in texels) lies inside the image, and the region's
    /// unused dimensions are as the spec demands ("CL_INVALID_VALUE if the region being
    /// read or written specified by origin and region is out of bounds or if ptr is a
    /// NULL value"; for a 1D image origin[1], origin[2] must be 0 and region[1],
    /// region[2] 1, and so on).
    pub(crate) fn contains(&self, origin: [usize; 3], region: [usize; 3]) -> bool {
        let extent = self.extent();
        let used = match self.image_type {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => 1,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D => 2,
            _ => 3,
        };
        (0..3).all(|d| {
            if d >= used {
                origin[d] == 0 && region[d] == 1
            } else {
                region[d] != 0 && origin[d].checked_add(region[d]).is_some_and(|end| end <= extent[d])
            }
        })
    }
}

impl PartialEq for Layout {
    fn eq(&self, o: &Layout) -> bool {
        let key = |l: &Layout| {
            let f = (l.format.image_channel_order, l.format.image_channel_data_type);
            (l.image_type, f, l.width, l.height, l.depth, l.array_size, l.elem, l.row_pitch, l.slice_pitch)
        };
        key(self) == key(o)
    }
}

/// The device's image size limits (`CL_DEVICE_IMAGE*_MAX_*`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_2d: usize,
    pub(crate) max_3d: usize,
    pub(crate) max_array: usize,
    pub(crate) max_buffer: usize,
}

pub(crate) const LIMITS: Limits = Limits { max_2d: 16384, max_3d: 2048, max_array: 2048, max_buffer: 1 << 27 };

/// Rows of texels a 2D image made from a buffer must start at, in texels
/// (`CL_DEVICE_IMAGE_PITCH_ALIGNMENT`), and the alignment of the buffer's address
/// (`CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT`): kernels load texels channel by channel,
/// so one texel is enough.
pub(crate) const PITCH_ALIGNMENT: u32 = 1;
pub(crate) const BASE_ADDRESS_ALIGNMENT: u32 = 1;

/// What a descriptor asks for, in the API's terms (`cl_image_desc` without the union).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Desc {
    pub(crate) image_type: cl_mem_object_type,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) depth: usize,
    pub(crate) array_size: usize,
    pub(crate) row_pitch: usize,
    pub(crate) slice_pitch: usize,
    pub(crate) num_mip_levels: u32,
    pub(crate) num_samples: u32,
}

/// Checks `desc` for an image of `format` and lays it out. `host_pitches`: the pitches
/// describe memory the application gives (a host pointer or a buffer); otherwise they
/// must be 0 and the image is packed. Errors are the spec's for clCreateImage.
pub(crate) fn layout(
    desc: &Desc,
    format: &cl_image_format,
    host_pitches: bool,
    lim: &Limits,
) -> Result<Layout, cl_int> {
    let (dims, array) = shape(desc.image_type).ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    if desc.num_mip_levels != 0 || desc.num_samples != 0 {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let elem = element_size(format);
    // "CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid"
    // (sizes of 0 in the dimensions the type uses); "CL_INVALID_IMAGE_SIZE if image
    // dimensions specified in image_desc exceed the maximum image dimensions".
    let height = if dims >= 2 { desc.height } else { 1 };
    let depth = if dims == 3 { desc.depth } else { 1 };
    let array_size = if array { desc.array_size } else { 0 };
    if desc.width == 0 || height == 0 || depth == 0 || (array && array_size == 0) {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let max = match desc.image_type {
        CL_MEM_OBJECT_IMAGE1D_BUFFER => lim.max_buffer,
        CL_MEM_OBJECT_IMAGE3D => lim.max_3d,
        _ => lim.max_2d,
    };
    if desc.width > max || height > max || depth > max || array_size > lim.max_array {
        return Err(CL_INVALID_IMAGE_SIZE);
    }
    let min_row = desc.width.checked_mul(elem).ok_or(CL_INVALID_IMAGE_SIZE)?;
    // "CL_INVALID_IMAGE_DESCRIPTOR if ... image_row_pitch is not 0 and host_ptr is NULL",
    // "... is not 0 and is less than image_width * size of element in bytes or is not
    // a multiple of size of element in bytes" (likewise image_slice_pitch with
    // image_row_pitch * image_height, or image_row_pitch for a 1D array).
    if !host_pitches && (desc.row_pitch != 0 || desc.slice_pitch != 0) {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let row_pitch = match desc.row_pitch {
        0 => min_row,
        p if p < min_row || p % elem != 0 => return Err(CL_INVALID_IMAGE_DESCRIPTOR),
        p => p,
    };
    let (has_slices, rows) = match desc.image_type {
        CL_MEM_OBJECT_IMAGE1D_ARRAY => (true, 1),
        CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => (true, height),
        _ => (false, 1),
    };
    let slice_pitch = if has_slices {
        let min_slice = row_pitch.checked_mul(rows).ok_or(CL_INVALID_IMAGE_SIZE)?;
        match desc.slice_pitch {
            0 => min_slice,
            p if p < min_slice || p % row_pitch != 0 => return Err(CL_INVALID_IMAGE_DESCRIPTOR),
            p => p,
        }
    } else {
        0
    };
    let out = Layout {
        image_type: desc.image_type,
        format: *format,
        width: desc.width,
        height,
        depth,
        array_size,
        elem,
        row_pitch,
        slice_pitch,
    };
    out.bytes().ok_or(CL_INVALID_IMAGE_SIZE)?;
    Ok(out)
}

/// IEEE binary16 nearest to `x`, ties to even.
pub(crate) fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 | (man >> 13) as u16 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // Denormal halves (and zero): the mantissa with its implicit bit, shifted down.
    let (m, shift) = if e <= 0 { (man | 0x80_0000, (14 - e) as u32) } else { (man, 13) };
    if shift > 24 {
        return sign;
    }
    let half = 1u32 << (shift - 1);
    let rest = m & ((1 << shift) - 1);
    let mut out = m >> shift;
    if rest > half || (rest == half && out & 1 == 1) {
        out += 1;
    }
    // A carry out of the mantissa moves into the exponent, which is the right result.
    let biased = if e <= 0 { 0 } else { (e as u32) << 10 };
    sign | (biased + out) as u16
}

/// A fill colour as `clEnqueueFillImage` passes it: four floats, ints or uints by the
/// image's channel type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Color {
    Float([f32; 4]),
    Int([i32; 4]),
    Uint([u32; 4]),
}

impl Color {
    /// Reads the application's `fill_color` for an image of channel type `t`.
    ///
    /// # Safety
    /// `p` points at 16 readable bytes.
    pub(crate) unsafe fn read(p: *const u8, t: cl_channel_type) -> Color {
        let words: [u32; 4] = std::ptr::read_unaligned(p.cast());
        match t {
            CL_SIGNED_INT8 | CL_SIGNED_INT16 | CL_SIGNED_INT32 => Color::Int(words.map(|w| w as i32)),
            CL_UNSIGNED_INT8 | CL_UNSIGNED_INT16 | CL_UNSIGNED_INT32 => Color::Uint(words),
            _ => Color::Float(words.map(f32::from_bits)),
        }
    }
}

/// Round to nearest even and saturate to [lo, hi]; NaN is 0 (OpenCL C's `_sat_rte`).
fn sat_rte(x: f32, lo: f32, hi: f32) -> i64 {
    if x.is_nan() {
        0
    } else {
        x.clamp(lo, hi).round_ties_even() as i64
    }
}

fn linear_to_srgb(c: f32) -> f32 {
    if c.is_nan() {
        return 0.0;
    }
    let c = c.clamp(0.0, 1.0);
    if c < 0.003_130_8 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

/// The texel `color` (r, g, b, a) becomes in format `f`, as builtins/clc/image.cl's
/// `write_image*` would store it.
pub(crate) fn encode(f: &cl_image_format, color: Color) -> Vec<u8> {
    let order = f.image_channel_order;
    // (r, g, b, a) to the stored channels, in memory order.
    let pick: &[usize] = match order {
        CL_R | CL_Rx | CL_INTENSITY | CL_LUMINANCE | CL_DEPTH => &[0],
        CL_A => &[3],
        CL_RG | CL_RGx => &[0, 1],
        CL_RA => &[0, 3],
        CL_RGB | CL_RGBx | CL_sRGB | CL_sRGBx => &[0, 1, 2],
        CL_BGRA | CL_sBGRA => &[2, 1, 0, 3],
        CL_ARGB => &[3, 0, 1, 2],
        CL_ABGR => &[3, 2, 1, 0],
        _ => &[0, 1, 2, 3],
    };
    let srgb = matches!(order, CL_sRGB | CL_sRGBx | CL_sRGBA | CL_sBGRA);
    let mut out = Vec::with_capacity(16);
    match color {
        Color::Float(mut v) => {
            if srgb {
                for c in &mut v[..3] {
                    *c = linear_to_srgb(*c);
                }
            }
            let t = f.image_channel_data_type;
            let packed = |shifts: &[(u32, f32)]| -> u32 {
                shifts.iter().zip(v).map(|(&(s, max), c)| (sat_rte(c * max, 0.0, max) as u32) << s).sum()
            };
            match t {
                CL_UNORM_SHORT_565 => out.extend((packed(&[(11, 31.0), (5, 63.0), (0, 31.0)]) as u16).to_ne_bytes()),
                CL_UNORM_SHORT_555 => out.extend((packed(&[(10, 31.0), (5, 31.0), (0, 31.0)]) as u16).to_ne_bytes()),
                CL_UNORM_INT_101010 => out.extend(packed(&[(20, 1023.0), (10, 1023.0), (0, 1023.0)]).to_ne_bytes()),
                _ => {
                    for &i in pick {
                        let c = v[i];
                        match t {
                            CL_UNORM_INT8 => out.push(sat_rte(c * 255.0, 0.0, 255.0) as u8),
                            CL_SNORM_INT8 => out.push(sat_rte(c * 127.0, -128.0, 127.0) as i8 as u8),
                            CL_UNORM_INT16 => out.extend((sat_rte(c * 65535.0, 0.0, 65535.0) as u16).to_ne_bytes()),
                            CL_SNORM_INT16 => {
                                out.extend((sat_rte(c * 32767.0, -32768.0, 32767.0) as i16).to_ne_bytes())
                            }
                            CL_HALF_FLOAT => out.extend(f32_to_f16(c).to_ne_bytes()),
                            _ => out.extend(c.to_ne_bytes()),
                        }
                    }
                }
            }
        }
        Color::Int(v) => {
            for &i in pick {
                let c = v[i];
                match f.image_channel_data_type {
                    CL_SIGNED_INT8 => out.push(c.clamp(-128, 127) as i8 as u8),
                    CL_SIGNED_INT16 => out.extend((c.clamp(-32768, 32767) as i16).to_ne_bytes()),
                    _ => out.extend(c.to_ne_bytes()),
                }
            }
        }
        Color::Uint(v) => {
            for &i in pick {
                let c = v[i];
                match f.image_channel_data_type {
                    CL_UNSIGNED_INT8 => out.push(c.min(255) as u8),
                    CL_UNSIGNED_INT16 => out.extend((c.min(65535) as u16).to_ne_bytes()),
                    _ => out.extend(c.to_ne_bytes()),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(o: cl_channel_order, t: cl_channel_type) -> cl_image_format {
        cl_image_format { image_channel_order: o, image_channel_data_type: t }
    }

    #[test]
    fn validity_and_sizes() {
        assert!(valid(&fmt(CL_RGBA, CL_FLOAT)));
        assert!(!valid(&fmt(CL_BGRA, CL_FLOAT)));
        assert!(!valid(&fmt(CL_RGB, CL_UNORM_INT8)));
        assert!(valid(&fmt(CL_RGB, CL_UNORM_SHORT_565)));
        assert!(!valid(&fmt(CL_INTENSITY, CL_SIGNED_INT8)));
        assert!(!valid(&fmt(0, CL_FLOAT)));
        assert_eq!(element_size(&fmt(CL_RGBA, CL_FLOAT)), 16);
        assert_eq!(element_size(&fmt(CL_RG, CL_HALF_FLOAT)), 4);
        assert_eq!(element_size(&fmt(CL_RGB, CL_UNORM_INT_101010)), 4);
        assert_eq!(stored_channels(&fmt(CL_RGB, CL_UNORM_SHORT_565)), 1);
        // Every offered format is valid.
        for t in [CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D] {
            assert!(supported(t, CL_MEM_READ_ONLY).iter().all(valid));
        }
        assert!(is_supported(CL_MEM_OBJECT_IMAGE2D, CL_MEM_READ_ONLY, &fmt(CL_sRGBA, CL_UNORM_INT8)));
        assert!(!is_supported(CL_MEM_OBJECT_IMAGE2D, CL_MEM_WRITE_ONLY, &fmt(CL_sRGBA, CL_UNORM_INT8)));
        assert!(!is_supported(CL_MEM_OBJECT_IMAGE3D, CL_MEM_READ_ONLY, &fmt(CL_DEPTH, CL_FLOAT)));
    }

    #[test]
    fn layouts() {
        let f = fmt(CL_RGBA, CL_UNORM_INT8);
        let d = Desc { image_type: CL_MEM_OBJECT_IMAGE2D, width: 10, height: 3, ..Default::default() };
        let l = layout(&d, &f, false, &LIMITS).unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch, l.bytes()), (40, 0, Some(120)));
        let pitched = Desc { row_pitch: 64, ..d };
        assert_eq!(layout(&pitched, &f, false, &LIMITS), Err(CL_INVALID_IMAGE_DESCRIPTOR));
        assert_eq!(layout(&pitched, &f, true, &LIMITS).unwrap().bytes(), Some(64 * 2 + 40));
        assert_eq!(layout(&Desc { row_pitch: 42, ..d }, &f, true, &LIMITS), Err(CL_INVALID_IMAGE_DESCRIPTOR));
        assert_eq!(layout(&Desc { width: 1 << 20, ..d }, &f, false, &LIMITS), Err(CL_INVALID_IMAGE_SIZE));
        let a = Desc { image_type: CL_MEM_OBJECT_IMAGE1D_ARRAY, width: 8, array_size: 4, ..Default::default() };
        let l = layout(&a, &f, false, &LIMITS).unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch, l.extent(), l.bytes()), (32, 32, [8, 4, 1], Some(128)));
        assert!(l.contains([0, 3, 0], [8, 1, 1]));
        assert!(!l.contains([0, 3, 0], [8, 2, 1]));
        assert!(!l.contains([0, 0, 1], [8, 1, 1]));
        let v = Desc { image_type: CL_MEM_OBJECT_IMAGE3D, width: 4, height: 4, depth: 0, ..Default::default() };
        assert_eq!(layout(&v, &f, false, &LIMITS), Err(CL_INVALID_IMAGE_DESCRIPTOR));
    }

    #[test]
    fn halves_round_to_nearest_even() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(f32::INFINITY), 0x7c00);
        assert!(f32_to_f16(f32::NAN) & 0x3ff != 0);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001);
        assert_eq!(f32_to_f16(2.980_232_2e-8), 0x0000, "a tie rounds to even (0)");
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00, "a tie rounds to even");
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02);
    }

    #[test]
    fn fill_colours() {
        let c = Color::Float([1.0, 0.5, 0.0, 1.0]);
        assert_eq!(encode(&fmt(CL_RGBA, CL_UNORM_INT8), c), vec![255, 128, 0, 255]);
        assert_eq!(encode(&fmt(CL_BGRA, CL_UNORM_INT8), c), vec![0, 128, 255, 255]);
        assert_eq!(encode(&fmt(CL_A, CL_UNORM_INT8), c), vec![255]);
        assert_eq!(encode(&fmt(CL_RGB, CL_UNORM_SHORT_565), c), (0xf800u16 | 32 << 5).to_ne_bytes().to_vec());
        assert_eq!(encode(&fmt(CL_R, CL_SIGNED_INT8), Color::Int([-300, 0, 0, 0])), vec![0x80]);
        assert_eq!(encode(&fmt(CL_RG, CL_UNSIGNED_INT16), Color::Uint([70000, 7, 0, 0])), vec![255, 255, 7, 0]);
    }
}
