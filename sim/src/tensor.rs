//! Reading and writing numpy `.npy` arrays and `.npz` archives.
//!
//! Arrays come back in C (row-major) order whatever order the file used, as
//! either floating-point values or integers, so callers decide what a value
//! means. Writes never replace an existing file and never leave a partial one
//! (see [`crate::files::write_new`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};

use crate::error::{Error, TensorError};

/// The most values one array may hold (2^26: MNIST's 60,000 training
/// images of 784 values fit, and a weights tensor's own bound, 2^24, is
/// checked where the model reads it): checked against the shape in the
/// `.npy` header before any value is read, so a header that claims more is
/// an error naming the file, the array and its shape, not an allocation.
pub const MAX_ARRAY_VALUES: u64 = 1 << 26;

/// The most values all arrays of one `.npz` archive may hold together
/// (2^26, one array's budget): an archive of many arrays, each within
/// [`MAX_ARRAY_VALUES`], is refused once their sum passes this.
pub const MAX_ARCHIVE_VALUES: u64 = 1 << 26;

/// The longest `.npy` header read (64 KiB; numpy writes a few hundred
/// bytes and itself refuses headers over 10,000 bytes by default): a
/// version 2 or 3 header may claim up to 4 GiB, which the `npyz` reader
/// would reserve before reading it.
pub const MAX_NPY_HEADER: u64 = 1 << 16;

/// The deepest nesting of brackets (`(`, `[`, `{`) a `.npy` header may
/// have (numpy writes 2 for a plain array, a few more for a structured
/// type): the Python-literal parser `npyz` uses backtracks, and takes time
/// exponential in the depth (a 251-byte header of nested braces took
/// minutes, docs/fuzzing.md).
pub const MAX_NPY_NESTING: usize = 8;

/// The most bytes one member of a `.npz` archive may decompress to: its
/// header and [`MAX_ARRAY_VALUES`] values of 8 bytes (512 MiB and 64 KiB
/// and the 12 bytes before the header). A member whose data goes on is
/// refused when it passes this, whatever size its zip header claims.
pub const MAX_MEMBER_BYTES: u64 = 12 + MAX_NPY_HEADER + 8 * MAX_ARRAY_VALUES;

/// Reads the start of a `.npy` stream (magic string, version, header
/// length, header text) and checks it against the budgets: the header's
/// length against [`MAX_NPY_HEADER`], its shape against
/// [`MAX_ARRAY_VALUES`] (npyz multiplies the dimensions without a check,
/// which overflows on a crafted shape). Returns the bytes it read, for the
/// `npyz` reader to read again; a start it cannot read is left to `npyz`,
/// which reports it.
fn checked_header<R: Read>(reader: &mut R) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(128);
    let mut read = |bytes: &mut Vec<u8>, n: u64| -> Result<bool, String> {
        let before = bytes.len();
        reader.by_ref().take(n).read_to_end(bytes).map_err(|e| format!("cannot be read: {e}"))?;
        Ok((bytes.len() - before) as u64 == n)
    };
    if !read(&mut bytes, 8)? || &bytes[..6] != b"\x93NUMPY" {
        return Ok(bytes);
    }
    let len = match bytes[6] {
        1 => {
            if !read(&mut bytes, 2)? {
                return Ok(bytes);
            }
            u64::from(u16::from_le_bytes([bytes[8], bytes[9]]))
        }
        2 | 3 => {
            if !read(&mut bytes, 4)? {
                return Ok(bytes);
            }
            u64::from(u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]))
        }
        _ => return Ok(bytes),
    };
    if len > MAX_NPY_HEADER {
        return Err(format!("its .npy header claims {len} bytes; at most {MAX_NPY_HEADER} are read (fptgen's budget)"));
    }
    let start = bytes.len();
    if !read(&mut bytes, len)? {
        return Ok(bytes);
    }
    let depth = nesting(&bytes[start..]);
    if depth > MAX_NPY_NESTING {
        return Err(format!("its .npy header nests brackets {depth} deep; at most {MAX_NPY_NESTING} are read (fptgen's budget)"));
    }
    if let Some(shape) = header_shape(&bytes[start..]) {
        checked_count(&shape)?;
    }
    Ok(bytes)
}

/// The deepest nesting of brackets in `text` (quotes not considered: a
/// bracket in a string counts too).
fn nesting(text: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for &b in text {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The shape of a `.npy` header's text, read as `npyz` reads it (the same
/// Python-literal parser); `None` where `npyz` finds no shape and reports it.
fn header_shape(text: &[u8]) -> Option<Vec<u64>> {
    use num_traits::ToPrimitive;
    use py_literal::Value;
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let Ok(Value::Dict(entries)) = std::str::from_utf8(text).ok()?.parse::<Value>() else { return None };
    let shape = entries.iter().rev().find(|(k, _)| matches!(k, Value::String(s) if s == "shape"))?;
    let (Value::Tuple(dims) | Value::List(dims)) = &shape.1 else { return None };
    dims.iter().map(|d| if let Value::Integer(n) = d { n.to_u64() } else { None }).collect()
}

/// The number of values of `shape`, if within [`MAX_ARRAY_VALUES`].
fn checked_count(shape: &[u64]) -> Result<u64, String> {
    let count = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
    match count {
        Some(n) if n <= MAX_ARRAY_VALUES => Ok(n),
        _ => Err(format!(
            "its shape {shape:?} holds {} values; at most {MAX_ARRAY_VALUES} are read (fptgen's budget for one array)",
            count.map_or("more than 2^64".to_string(), |n| n.to_string())
        )),
    }
}

/// Values of an array, in C order.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// From a float16/32/64 array (converted exactly to f64).
    Float(Vec<f64>),
    /// From a signed or unsigned integer array (any width up to 64 bits).
    Int(Vec<i128>),
}

impl Values {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Values::Float(v) => v.len(),
            Values::Int(v) => v.len(),
        }
    }

    /// True if there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An n-dimensional array read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// Dimensions; empty for a scalar.
    pub shape: Vec<usize>,
    /// The values in C order.
    pub values: Values,
    /// numpy's type string, e.g. `<f4`, for messages.
    pub dtype: String,
}

/// Converts a flat C-order position into a multi-dimensional index.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            idx[d] = flat % n;
            flat /= n;
        }
    }
    idx
}

fn to_c_order<T: Clone>(v: Vec<T>, shape: &[usize]) -> Vec<T> {
    if shape.len() < 2 {
        return v;
    }
    // In Fortran order the first index varies fastest.
    let n = v.len();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let idx = unravel(flat, shape);
        let mut f = 0;
        for d in (0..shape.len()).rev() {
            f = f * shape[d] + idx[d];
        }
        out.push(v[f].clone());
    }
    out
}

fn read_array<R: Read>(npy: NpyFile<R>, file: &Path, name: Option<&str>) -> Result<Array, TensorError> {
    let mk = |m: String| match name {
        Some(t) => TensorError::tensor(file, t, m),
        None => TensorError::file(file, m),
    };
    checked_count(npy.shape()).map_err(mk)?;
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let order = npy.order();
    let dtype = npy.dtype();
    let ts = match &dtype {
        DType::Plain(ts) => ts.clone(),
        other => return Err(mk(format!("unsupported array type {}; expected a plain float or integer array", other.descr()))),
    };
    let descr = ts.to_string();
    let size = ts.size_field();
    let bad = |e: io::Error| mk(format!("cannot read the {descr} data: {e}"));
    let little = ts.endianness() == npyz::Endianness::Little;
    let values = match (ts.type_char(), size) {
        (TypeChar::Float, 4 | 8) if little => {
            let n = shape.iter().product::<usize>();
            Values::Float(read_floats_le(npy.into_inner(), n, size as usize).map_err(bad)?)
        }
        (TypeChar::Float, 4) => Values::Float(npy.into_vec::<f32>().map_err(bad)?.into_iter().map(f64::from).collect()),
        (TypeChar::Float, 8) => Values::Float(npy.into_vec::<f64>().map_err(bad)?),
        (TypeChar::Int, 1) => Values::Int(npy.into_vec::<i8>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Int, 2) => Values::Int(npy.into_vec::<i16>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Int, 4) => Values::Int(npy.into_vec::<i32>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Int, 8) => Values::Int(npy.into_vec::<i64>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 1) => Values::Int(npy.into_vec::<u8>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 2) => Values::Int(npy.into_vec::<u16>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 4) => Values::Int(npy.into_vec::<u32>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 8) => Values::Int(npy.into_vec::<u64>().map_err(bad)?.into_iter().map(i128::from).collect()),
        _ => return Err(mk(format!("unsupported array type {descr}; expected float32, float64 or an integer type"))),
    };
    let expected: usize = shape.iter().product();
    if values.len() != expected {
        return Err(mk(format!("holds {} values but its shape {:?} needs {expected}", values.len(), shape)));
    }
    let values = if order == Order::Fortran {
        match values {
            Values::Float(v) => Values::Float(to_c_order(v, &shape)),
            Values::Int(v) => Values::Int(to_c_order(v, &shape)),
        }
    } else {
        values
    };
    Ok(Array { shape, values, dtype: descr })
}

/// Why a block-by-block read of floats stopped.
enum Halt<E> {
    /// The file could not be read (or ended early).
    Io(io::Error),
    /// The consumer of the values refused them.
    By(E),
}

/// Hands `n` little-endian floats of `size` bytes (4 or 8) from `r` to
/// `each`, in order, in blocks of at most 2^17 values (`each(offset,
/// values)`, `offset` the flat position of the block's first value), read
/// in pieces of 1 MiB (`npyz` reads value by value, which dominated `fptgen
/// simulate` on large inputs). A file that ends early is an error, as
/// `npyz`'s is.
fn float_blocks_le<R: Read, E>(mut r: R, n: usize, size: usize, mut each: impl FnMut(usize, &[f64]) -> Result<(), E>) -> Result<(), Halt<E>> {
    let mut block = vec![0u8; (1 << 20) / size * size];
    let mut values: Vec<f64> = Vec::with_capacity(block.len() / size);
    let mut done = 0;
    while done < n {
        let want = ((n - done) * size).min(block.len());
        if let Err(e) = r.read_exact(&mut block[..want]) {
            return Err(Halt::Io(io::Error::new(e.kind(), format!("the file ends within the first {} of the {n} values", done + want / size))));
        }
        values.clear();
        if size == 4 {
            values.extend(block[..want].chunks_exact(4).map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))));
        } else {
            values.extend(block[..want].chunks_exact(8).map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])));
        }
        each(done, &values).map_err(Halt::By)?;
        done += values.len();
    }
    Ok(())
}

/// `n` little-endian floats of `size` bytes (4 or 8) from `r`
/// ([`float_blocks_le`]); `n` is within [`MAX_ARRAY_VALUES`], checked before.
fn read_floats_le<R: Read>(r: R, n: usize, size: usize) -> io::Result<Vec<f64>> {
    let mut out = Vec::with_capacity(n);
    float_blocks_le(r, n, size, |_, v: &[f64]| {
        out.extend_from_slice(v);
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|h| match h {
        Halt::Io(e) => e,
        Halt::By(never) => match never {},
    })?;
    Ok(out)
}

/// The shape and type of a `.npy` file's array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// Dimensions; empty for a scalar.
    pub shape: Vec<usize>,
    /// numpy's type string, e.g. `<f4`, for messages.
    pub dtype: String,
}

/// A `.npy` file read by [`read_npy_floats_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct Streamed {
    /// Its array's shape and type.
    pub header: NpyHeader,
    /// `None` when the values (floats) went to the callback; the values of
    /// any other array (integers, big-endian floats, Fortran order).
    pub values: Option<Values>,
}

/// Reads one `.npy` file without holding a float array whole: a C-order
/// array of little-endian float32 or float64 goes to `each(header, offset,
/// values)` block by block, in order (`offset` the flat position of the
/// block's first value); any other array is read as [`read_npy`] reads it
/// and returned in [`Streamed::values`]. An error of `each` stops the read
/// and is returned. The same checks and budgets as [`read_npy`].
pub fn read_npy_floats_with(path: &Path, mut each: impl FnMut(&NpyHeader, usize, &[f64]) -> Result<(), Error>) -> Result<Streamed, Error> {
    let mut reader = io::BufReader::new(open_file(path)?);
    let prefix = checked_header(&mut reader).map_err(|m| TensorError::file(path, m))?;
    let npy = NpyFile::new(io::Cursor::new(prefix).chain(reader)).map_err(|e| TensorError::file(path, format!("not a valid .npy file: {e}")))?;
    let floats = match npy.dtype() {
        DType::Plain(ts)
            if ts.type_char() == TypeChar::Float
                && matches!(ts.size_field(), 4 | 8)
                && ts.endianness() == npyz::Endianness::Little
                && npy.order() == Order::C =>
        {
            Some((ts.to_string(), ts.size_field() as usize))
        }
        _ => None,
    };
    let Some((dtype, size)) = floats else {
        let a = read_array(npy, path, None)?;
        return Ok(Streamed { header: NpyHeader { shape: a.shape, dtype: a.dtype }, values: Some(a.values) });
    };
    checked_count(npy.shape()).map_err(|m| TensorError::file(path, m))?;
    let header = NpyHeader { shape: npy.shape().iter().map(|&d| d as usize).collect(), dtype };
    let n = header.shape.iter().product::<usize>();
    match float_blocks_le(npy.into_inner(), n, size, |offset, v| each(&header, offset, v)) {
        Ok(()) => Ok(Streamed { header, values: None }),
        Err(Halt::Io(e)) => Err(TensorError::file(path, format!("cannot read the {} data: {e}", header.dtype)).into()),
        Err(Halt::By(e)) => Err(e),
    }
}

/// Reads one `.npy` file.
pub fn read_npy(path: &Path) -> Result<Array, Error> {
    let f = open_file(path)?;
    Ok(read_npy_from(path, io::BufReader::new(f))?)
}

/// Reads one `.npy` array from `reader` (the bytes of a file; `path`
/// names it in errors), within [`MAX_NPY_HEADER`] and
/// [`MAX_ARRAY_VALUES`].
pub fn read_npy_from<R: Read>(path: &Path, mut reader: R) -> Result<Array, TensorError> {
    let prefix = checked_header(&mut reader).map_err(|m| TensorError::file(path, m))?;
    let npy = NpyFile::new(io::Cursor::new(prefix).chain(reader))
        .map_err(|e| TensorError::file(path, format!("not a valid .npy file: {e}")))?;
    read_array(npy, path, None)
}

/// Opens a file to read, with a clear error for a directory.
fn open_file(path: &Path) -> Result<File, Error> {
    if path.is_dir() {
        return Err(TensorError::file(path, "is a directory, not a numpy file").into());
    }
    File::open(path).map_err(|e| Error::io(path, e))
}

/// Reads every array of a `.npz` archive, by name.
///
/// Every member is read to its end, so a member whose data does not match
/// its CRC-32 is an error (not only the bytes a parser happens to use), and
/// two members with the same name are an error (not "the later one wins").
/// Each member is read within [`MAX_MEMBER_BYTES`] and [`MAX_ARRAY_VALUES`],
/// the archive within [`MAX_ARCHIVE_VALUES`].
pub fn read_npz(path: &Path) -> Result<BTreeMap<String, Array>, Error> {
    let f = open_file(path)?;
    Ok(read_npz_from(path, io::BufReader::new(f))?)
}

/// Reads every array of the `.npz` archive in `reader` (the bytes of a
/// file; `path` names it in errors), as [`read_npz`] does.
pub fn read_npz_from<R: Read + Seek>(path: &Path, reader: R) -> Result<BTreeMap<String, Array>, TensorError> {
    let mut zip = zip::ZipArchive::new(reader)
        .map_err(|e| TensorError::file(path, format!("not a valid .npz archive (a zip file of .npy arrays): {e}")))?;
    let mut out = BTreeMap::new();
    let mut total: u64 = 0;
    for i in 0..zip.len() {
        let member = zip
            .by_index(i)
            .map_err(|e| TensorError::file(path, format!("member {i} of the archive cannot be read: {e}")))?;
        let member_name = member.name().to_string();
        let Some(name) = member_name.strip_suffix(".npy") else {
            if member.is_dir() {
                continue;
            }
            return Err(TensorError::file(path, format!("member '{member_name}' is not a .npy array")));
        };
        let name = name.to_string();
        // The zip header's size is a claim: it only sizes the first
        // reservation, and the data is read up to the budget whatever it says.
        let mut bytes = Vec::with_capacity(member.size().min(1 << 20) as usize);
        member
            .take(MAX_MEMBER_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| TensorError::tensor(path, &name, format!("its data is corrupt: {e}")))?;
        if bytes.len() as u64 > MAX_MEMBER_BYTES {
            return Err(TensorError::tensor(
                path,
                &name,
                format!("decompresses to more than {MAX_MEMBER_BYTES} bytes (fptgen's budget for one array)"),
            ));
        }
        if out.contains_key(&name) {
            return Err(TensorError::tensor(path, &name, "appears twice in the archive"));
        }
        checked_header(&mut &bytes[..]).map_err(|m| TensorError::tensor(path, &name, m))?;
        let npy = NpyFile::new(io::Cursor::new(bytes))
            .map_err(|e| TensorError::tensor(path, &name, format!("not a valid .npy array: {e}")))?;
        total = total.saturating_add(checked_count(npy.shape()).map_err(|m| TensorError::tensor(path, &name, m))?);
        if total > MAX_ARCHIVE_VALUES {
            return Err(TensorError::tensor(
                path,
                &name,
                format!("brings the archive to {total} values; at most {MAX_ARCHIVE_VALUES} are read (fptgen's budget for an archive)"),
            ));
        }
        let arr = read_array(npy, path, Some(&name))?;
        out.insert(name, arr);
    }
    Ok(out)
}

/// An array to write: name, shape and C-order values.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedArray {
    /// Name inside the archive.
    pub name: String,
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Values in C order.
    pub values: OutValues,
}

/// Values to write, with their numpy type.
#[derive(Debug, Clone, PartialEq)]
pub enum OutValues {
    /// Written as `<f8`.
    F64(Vec<f64>),
    /// Written as `<i8`.
    I64(Vec<i64>),
    /// Written as `<u8`.
    U64(Vec<u64>),
}

fn write_npy_to<W: Write + Seek>(w: W, shape: &[usize], values: &OutValues) -> io::Result<()> {
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    match values {
        OutValues::F64(v) => {
            let mut wr = npyz::WriteOptions::<f64>::new().default_dtype().shape(&shape).writer(w).begin_nd()?;
            wr.extend(v.iter().copied())?;
            wr.finish()
        }
        OutValues::I64(v) => {
            let mut wr = npyz::WriteOptions::<i64>::new().default_dtype().shape(&shape).writer(w).begin_nd()?;
            wr.extend(v.iter().copied())?;
            wr.finish()
        }
        OutValues::U64(v) => {
            let mut wr = npyz::WriteOptions::<u64>::new().default_dtype().shape(&shape).writer(w).begin_nd()?;
            wr.extend(v.iter().copied())?;
            wr.finish()
        }
    }
}

/// Writes one array as a new `.npy` file (see [`write_new`]).
pub fn write_npy(path: &Path, shape: &[usize], values: &OutValues) -> Result<(), Error> {
    let mut buf = io::Cursor::new(Vec::new());
    write_npy_to(&mut buf, shape, values).map_err(|e| Error::io(path, e))?;
    write_new(path, |mut f| f.write_all(buf.get_ref()).and_then(|()| f.sync_all()))
}

/// Writes arrays as a new `.npz` archive (see [`write_new`]).
pub fn write_npz(path: &Path, arrays: &[NamedArray]) -> Result<(), Error> {
    // The archive is assembled in memory, so the only write to the file
    // system is one plain write whose error (a full disk, a file-size
    // limit) is reported as it is.
    let bytes = npz_bytes(arrays).map_err(|e| Error::io(path, e))?;
    write_new(path, |mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
}

/// The bytes of an `.npz` archive holding `arrays`.
pub fn npz_bytes(arrays: &[NamedArray]) -> io::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    // A fixed timestamp (1980-01-01, zip's epoch): the same arrays give
    // the same bytes, whenever they are written.
    let opts = zip::write::FileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for a in arrays {
        zip.start_file(format!("{}.npy", a.name), opts)?;
        let mut buf = io::Cursor::new(Vec::new());
        write_npy_to(&mut buf, &a.shape, &a.values)?;
        zip.write_all(buf.get_ref())?;
    }
    Ok(zip.finish()?.into_inner())
}

pub use crate::files::write_new;

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1 `.npy` header for `descr` and `shape`, without data.
    fn npy_header(descr: &str, shape: &str) -> Vec<u8> {
        let text = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n");
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(text.len() as u16).to_le_bytes());
        b.extend_from_slice(text.as_bytes());
        b
    }

    fn npz_of(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        for (name, bytes) in members {
            zip.start_file(*name, zip::write::FileOptions::default()).expect("a member");
            zip.write_all(bytes).expect("written");
        }
        zip.finish().expect("an archive").into_inner()
    }

    #[test]
    fn a_shape_beyond_the_budget_is_refused_before_its_values_are_read() {
        let bytes = npy_header("<f8", "(1048576, 1048576)");
        let err = read_npy_from(Path::new("big.npy"), &bytes[..]).expect_err("over the budget").to_string();
        assert!(err.contains("big.npy") && err.contains("[1048576, 1048576]") && err.contains("1099511627776 values"), "{err}");
        // A product beyond u64 is the same error, not an overflow.
        let bytes = npy_header("<f8", "(4294967296, 4294967296, 4294967296)");
        let err = read_npy_from(Path::new("big.npy"), &bytes[..]).expect_err("over the budget").to_string();
        assert!(err.contains("more than 2^64"), "{err}");
    }

    #[test]
    fn a_long_version_2_header_is_refused_before_it_is_reserved() {
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend_from_slice(&0xffff_fff0u32.to_le_bytes());
        let err = read_npy_from(Path::new("long.npy"), &bytes[..]).expect_err("over the budget").to_string();
        assert!(err.contains("long.npy") && err.contains("4294967280 bytes"), "{err}");
        let npz = npz_of(&[("w.npy", bytes)]);
        let err = read_npz_from(Path::new("long.npz"), io::Cursor::new(npz)).expect_err("over the budget").to_string();
        assert!(err.contains("long.npz") && err.contains("'w'") && err.contains("4294967280 bytes"), "{err}");
    }

    /// Found by fuzzing (fuzz/regressions/weights_archive/timeout-nested-braces.npy):
    /// a header of nested braces took the Python-literal parser minutes.
    #[test]
    fn a_deeply_nested_header_is_refused_before_it_is_parsed() {
        let text = format!("{{'descr': '<i2', 'shape': (2, 3), {}{}}}\n", "{".repeat(100), "}".repeat(100));
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        let t = std::time::Instant::now();
        let err = read_npy_from(Path::new("deep.npy"), &bytes[..]).expect_err("too deep").to_string();
        assert!(err.contains("deep.npy") && err.contains("nests brackets 101 deep"), "{err}");
        assert!(t.elapsed().as_secs() < 5, "refused at once");
    }

    #[test]
    fn an_archive_member_beyond_the_budget_names_the_array() {
        let over = MAX_ARRAY_VALUES + 1;
        let npz = npz_of(&[("layer/w.npy", npy_header("<i8", &format!("({over},)")))]);
        let err = read_npz_from(Path::new("w.npz"), io::Cursor::new(npz)).expect_err("over the budget").to_string();
        assert!(err.contains("w.npz") && err.contains("layer/w") && err.contains(&format!("{over} values")), "{err}");
    }

    #[test]
    fn arrays_within_the_budget_read_as_before() {
        let mut bytes = npy_header("<i2", "(2, 3)");
        for v in 0..6i16 {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let a = read_npy_from(Path::new("ok.npy"), &bytes[..]).expect("within the budget");
        assert_eq!((a.shape, a.values), (vec![2, 3], Values::Int((0..6).collect())));
        let arrays = read_npz_from(Path::new("ok.npz"), io::Cursor::new(npz_of(&[("a.npy", bytes)]))).expect("an archive");
        assert_eq!(arrays["a"].shape, [2, 3]);
    }
}
