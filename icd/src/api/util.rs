//! Shared pieces of the C boundary: the result type, the wrappers that turn it into a
//! return code or `errcode_ret`, the one `clGet*Info` writer and property-list parsing.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use opencl_sys::*;

pub(crate) use crate::core::object::CLResult;

/// Runs an entry point body and returns its status. A panic must never unwind into C
/// (it would abort the host program), so it becomes `CL_OUT_OF_HOST_MEMORY`.
pub(crate) fn status(f: impl FnOnce() -> CLResult<()>) -> cl_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => CL_OUT_OF_HOST_MEMORY,
    }
}

/// Runs an entry point that returns an object and reports its status in `errcode_ret`
/// (which may be null: the spec makes it optional everywhere).
pub(crate) fn with_errcode<T>(errcode_ret: *mut cl_int, null: T, f: impl FnOnce() -> CLResult<T>) -> T {
    let (value, code) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => (v, CL_SUCCESS),
        Ok(Err(e)) => (null, e),
        Err(_) => (null, CL_OUT_OF_HOST_MEMORY),
    };
    if !errcode_ret.is_null() {
        // SAFETY: the caller passes either null or a writable cl_int, per the spec.
        unsafe { errcode_ret.write_unaligned(code) };
    }
    value
}

/// Writes `value` to an optional out-pointer.
///
/// # Safety
/// `ptr` is null or valid for writing one `T` (unaligned is fine), as the OpenCL
/// contract asks of an optional out-parameter.
pub(crate) unsafe fn write_opt<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: the caller's contract: non-null means writable.
        unsafe { ptr.write_unaligned(value) };
    }
}

/// A value a `clGet*Info` query can return, serialised exactly as the C API lays it out.
pub(crate) trait InfoValue {
    fn append_to(&self, out: &mut Vec<u8>);
}

macro_rules! plain_info_value {
    ($($t:ty),*) => {$(
        impl InfoValue for $t {
            fn append_to(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
plain_info_value!(u8, u32, i32, u64, i64, usize, isize);

impl InfoValue for bool {
    fn append_to(&self, out: &mut Vec<u8>) {
        (*self as cl_bool).append_to(out)
    }
}

/// Object handles are returned as their pointer value.
impl InfoValue for *mut c_void {
    fn append_to(&self, out: &mut Vec<u8>) {
        (*self as usize).append_to(out)
    }
}

/// Strings are returned NUL-terminated.
impl InfoValue for str {
    fn append_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
        out.push(0);
    }
}

impl InfoValue for String {
    fn append_to(&self, out: &mut Vec<u8>) {
        self.as_str().append_to(out)
    }
}

impl<T: InfoValue> InfoValue for [T] {
    fn append_to(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|v| v.append_to(out))
    }
}

impl<T: InfoValue> InfoValue for Vec<T> {
    fn append_to(&self, out: &mut Vec<u8>) {
        self.as_slice().append_to(out)
    }
}

impl<T: InfoValue, const N: usize> InfoValue for [T; N] {
    fn append_to(&self, out: &mut Vec<u8>) {
        self.as_slice().append_to(out)
    }
}

impl InfoValue for cl_name_version {
    fn append_to(&self, out: &mut Vec<u8>) {
        self.version.append_to(out);
        out.extend_from_slice(&self.name);
    }
}

/// The serialised answer to one info query.
pub(crate) struct Info(Vec<u8>);

impl Info {
    pub(crate) fn of<T: InfoValue + ?Sized>(value: &T) -> CLResult<Info> {
        let mut bytes = Vec::new();
        value.append_to(&mut bytes);
        Ok(Info(bytes))
    }

    /// The answer of a query whose value is empty (e.g. an absent property list).
    pub(crate) fn empty() -> CLResult<Info> {
        Ok(Info(Vec::new()))
    }

    /// The one writer behind every `clGet*Info`.
    ///
    /// # Safety
    /// `value` is null or has room for `size` bytes; `size_ret` is null or writable, as
    /// every `clGet*Info` asks.
    pub(crate) unsafe fn write(self, size: usize, value: *mut c_void, size_ret: *mut usize) -> CLResult<()> {
        let bytes = self.0;
        // "CL_INVALID_VALUE if ... size in bytes specified by param_value_size is < size of
        // return type ... and param_value is not NULL."
        if !value.is_null() {
            if size < bytes.len() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: the caller guarantees `value` has room for `size` >= len bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast(), bytes.len()) };
        }
        write_opt(size_ret, bytes.len());
        Ok(())
    }
}

/// Reads a C string argument; null is the caller's error to report.
///
/// # Safety
/// `ptr` is null or points at a NUL-terminated string that stays valid and unchanged
/// for `'a`, as the OpenCL contract asks of string arguments.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char) -> Option<&'a CStr> {
    // SAFETY: the caller's contract: non-null means NUL-terminated and live.
    (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr) })
}

/// An empty vector with room for `len` bytes, or `CL_OUT_OF_HOST_MEMORY`: for copies
/// sized by the application, where Rust's allocation failure would abort the process.
pub(crate) fn fallible_vec(len: usize) -> CLResult<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
    Ok(v)
}

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD; valid text (the usual case) is
/// not copied.
pub(crate) fn utf8_lossy(bytes: Vec<u8>) -> CLResult<String> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut out = String::new();
            let len = bytes.utf8_chunks().map(|c| c.valid().len() + if c.invalid().is_empty() { 0 } else { 3 }).sum();
            out.try_reserve_exact(len).map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    out.push(char::REPLACEMENT_CHARACTER);
                }
            }
            Ok(out)
        }
    }
}

/// Reads a pointer + count argument as a slice. `(null, 0)` is an empty slice; the
/// caller checks the combinations the spec forbids before calling this.
///
/// # Safety
/// `ptr` is null or points at `len` initialised `T`s that stay valid and unchanged for
/// `'a`, as the OpenCL contract asks of array arguments.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract: `ptr` points at `len` elements.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// Reads a zero-terminated `{name, value, ..., 0}` property list into pairs, rejecting
/// duplicate names with `CL_INVALID_PROPERTY` as every property-taking call requires.
pub(crate) fn properties<T: Copy + PartialEq + Default>(list: *const T) -> CLResult<Vec<(T, T)>> {
    let mut pairs: Vec<(T, T)> = Vec::new();
    if list.is_null() {
        return Ok(pairs);
    }
    let zero = T::default();
    let mut i = 0;
    loop {
        // SAFETY: the list is zero-terminated by contract; we stop at the terminator.
        let name = unsafe { list.add(i).read_unaligned() };
        if name == zero {
            return Ok(pairs);
        }
        let value = unsafe { list.add(i + 1).read_unaligned() };
        if pairs.iter().any(|&(n, _)| n == name) {
            return Err(CL_INVALID_PROPERTY);
        }
        pairs.push((name, value));
        i += 2;
    }
}

/// The property list as the caller gave it (terminator included), for `*_PROPERTIES`
/// queries, which return exactly what was passed.
pub(crate) fn property_array<T: Copy + PartialEq + Default>(pairs: &[(T, T)], given: bool) -> Vec<T> {
    if !given {
        return Vec::new();
    }
    let mut out: Vec<T> = pairs.iter().flat_map(|&(n, v)| [n, v]).collect();
    out.push(T::default());
    out
}
