//! Tensor storage: every tensor of a run in its own buffer, in its dtype's native layout
//! (f16/bf16 as 16-bit words), row-major. Initialisers, `.npy` in and out.

use std::collections::HashMap;
use std::path::Path;

use half::{bf16, f16};
use npyz::WriterBuilder;
use wsp_ir::DType;
use wsp_ir::plan::Init;

use wsp_files::write_atomically;

/// One tensor's elements. The buffer is 8-byte aligned (held as `u64`s) so that any element
/// type can be read in place by generated code.
#[derive(Debug)]
pub struct TensorData {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<u64>,
    words: Vec<u64>,
}

impl TensorData {
    /// A tensor of zeros, allocated fallibly: a size past the address space or a refused
    /// allocation is an error naming the tensor, not an abort.
    pub fn zeros(name: &str, dtype: DType, shape: &[u64]) -> Result<TensorData, String> {
        TensorData::new(name, dtype, shape, None, Path::new(""), 1)
    }

    /// A tensor holding `bytes`, its elements as they sit in memory.
    pub fn from_bytes(
        name: &str,
        dtype: DType,
        shape: &[u64],
        bytes: &[u8],
    ) -> Result<TensorData, String> {
        let mut t = TensorData::zeros(name, dtype, shape)?;
        if t.bytes().len() != bytes.len() {
            return Err(format!(
                "{} bytes for tensor `{name}` of {} bytes",
                bytes.len(),
                t.bytes().len()
            ));
        }
        t.bytes_mut().copy_from_slice(bytes);
        Ok(t)
    }

    /// A tensor filled by `init` (zeros without one), with up to `workers` threads; `base` is
    /// the `.wsp` file's folder, for `load_npy`.
    ///
    /// The memory is resident before any task runs, as a device allocation is, so the first
    /// tasks that write it do not pay its page faults: each thread writes its own part, so
    /// the faults are taken in parallel, and large tensors ask for transparent huge pages
    /// (one fault per 2 MiB instead of per 4 KiB).
    pub fn new(
        name: &str,
        dtype: DType,
        shape: &[u64],
        init: Option<&Init>,
        base: &Path,
        workers: usize,
    ) -> Result<TensorData, String> {
        let too_big = || {
            format!(
                "cannot allocate tensor `{name}`, {} {}: {}",
                dtype.name(),
                wsp_ir::shape_text(shape),
                wsp_ir::memory::size_text(wsp_ir::memory::tensor_bytes(shape, dtype))
            )
        };
        let words = wsp_ir::memory::tensor_bytes(shape, dtype)
            .and_then(|b| usize::try_from(b.div_ceil(8)).ok())
            .ok_or_else(too_big)?;
        let mut t = TensorData {
            name: name.to_string(),
            dtype,
            shape: shape.to_vec(),
            words: zeroed_words(words).ok_or_else(|| format!("{}: out of memory", too_big()))?,
        };
        let workers = if t.words.len() < PARALLEL_WORDS {
            1
        } else {
            workers.max(1)
        };
        match init {
            None | Some(Init::Zeros) => t.touch(workers),
            Some(init) => t.fill_from(init, base, workers)?,
        }
        Ok(t)
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    /// A copy, allocated fallibly: a refused allocation is an error naming the tensor.
    pub fn try_clone(&self) -> Result<TensorData, String> {
        let mut words = Vec::new();
        words.try_reserve_exact(self.words.len()).map_err(|_| {
            format!(
                "cannot copy tensor `{}` ({}): out of memory",
                self.name,
                wsp_ir::memory::bytes_text(self.words.len() as u64 * 8)
            )
        })?;
        words.extend_from_slice(&self.words);
        Ok(TensorData {
            name: self.name.clone(),
            dtype: self.dtype,
            shape: self.shape.clone(),
            words,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }

    /// The tensor's bytes as they sit in memory.
    pub fn bytes(&self) -> &[u8] {
        let n = self.len() * self.dtype.size_bytes() as usize;
        // SAFETY: `words` holds at least `n` initialised bytes; u8 has no alignment needs.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast(), n) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.len() * self.dtype.size_bytes() as usize;
        // SAFETY: as in `bytes`, and the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), n) }
    }

    /// Element `i` (flat, row-major) as f64.
    pub fn get(&self, i: usize) -> f64 {
        read(self.dtype, self.bytes(), i)
    }

    /// Element `i` as an integer (for predicates, keys, axis data), exact for integer dtypes.
    pub fn get_int(&self, i: usize) -> i64 {
        read_int(self.dtype, self.bytes(), i)
    }

    /// Sets element `i`, converting as NumPy's `astype` does (round to nearest even for
    /// f16/bf16, truncation toward zero for integers).
    pub fn set(&mut self, i: usize, v: f64) {
        let dtype = self.dtype;
        write_elem(dtype, self.bytes_mut(), i, v)
    }

    /// Makes every page resident, each thread writing one word per page of its part.
    fn touch(&mut self, workers: usize) {
        const PAGE_WORDS: usize = 4096 / 8;
        par_parts(&mut self.words, 1, workers, |_, part| {
            part.iter_mut().step_by(PAGE_WORDS).for_each(|w| {
                // SAFETY: a valid, aligned word of the part; volatile so that the write of a
                // zero over a zero page is not left out.
                unsafe { std::ptr::write_volatile(w, 0) }
            })
        });
    }

    /// Fills the tensor from its initialiser. `base` is the `.wsp` file's folder.
    pub fn init(&mut self, init: &Init, base: &Path) -> Result<(), String> {
        self.fill_from(init, base, 1)
    }

    fn fill_from(&mut self, init: &Init, base: &Path, workers: usize) -> Result<(), String> {
        let (dtype, size) = (self.dtype, self.dtype.size_bytes() as usize);
        match init {
            Init::Zeros => par_parts(self.bytes_mut(), 1, workers, |_, part| part.fill(0)),
            Init::Ones | Init::Full(_) => {
                let v = if let Init::Full(v) = init { v.0 } else { 1.0 };
                let mut one = vec![0u8; size];
                write_elem(dtype, &mut one, 0, v);
                // Parts are whole elements, so the pattern lines up in each: a block of
                // elements filled in doubling runs, then copied on from the cache.
                par_elements(self.bytes_mut(), size, workers, |_, part| {
                    let block = part.len().min((64 << 10) / size * size);
                    let (head, rest) = part.split_at_mut(block);
                    if head.is_empty() {
                        return;
                    }
                    head[..size].copy_from_slice(&one);
                    let mut filled = size;
                    while filled < head.len() {
                        let run = filled.min(head.len() - filled);
                        head.copy_within(0..run, filled);
                        filled += run;
                    }
                    for chunk in rest.chunks_mut(block) {
                        chunk.copy_from_slice(&head[..chunk.len()]);
                    }
                });
            }
            Init::Arange => par_elements(self.bytes_mut(), size, workers, |first, part| {
                (0..part.len() / size).for_each(|i| write_elem(dtype, part, i, (first + i) as f64))
            }),
            Init::Randn { seed, std } => {
                // `np.float32(std) * default_rng(seed).standard_normal(shape, np.float32)`,
                // row-major, then converted to the dtype as `astype` does.
                let std = std.0 as f32;
                if dtype == DType::F32 {
                    let out = self.f32s_mut();
                    crate::normal::fill(*seed as u64, out, workers);
                    if std != 1.0 {
                        par_parts(out, 1, workers, |_, part| {
                            part.iter_mut().for_each(|x| *x *= std)
                        });
                    }
                } else {
                    let mut samples = vec![0f32; self.len()];
                    crate::normal::fill(*seed as u64, &mut samples, workers);
                    let samples = &samples;
                    par_elements(self.bytes_mut(), size, workers, |first, part| {
                        let mine = &samples[first..first + part.len() / size];
                        for (i, x) in mine.iter().enumerate() {
                            write_elem(dtype, part, i, f64::from(std * x));
                        }
                    });
                }
            }
            Init::LoadNpy(path) => self.load_npy(&base.join(path))?,
            // The values in row-major order of `shape`, each moved to where the memory order
            // keeps it.
            Init::Permuted { of, shape, order } => {
                let logical = TensorData::new(&self.name, dtype, shape, Some(of), base, workers)?;
                let stored = strides(&self.shape);
                // Element strides in storage, per logical dimension.
                let mut at = vec![0u64; shape.len()];
                for (k, &d) in order.iter().enumerate() {
                    if let Some(a) = at.get_mut(d as usize) {
                        *a = stored[k];
                    }
                }
                let (from, to) = (logical.bytes(), self.bytes_mut());
                for (i, o) in strided_offsets(shape, &at).enumerate() {
                    let (src, dst) = (i * size, o as usize * size);
                    to[dst..dst + size].copy_from_slice(&from[src..src + size]);
                }
            }
        }
        Ok(())
    }

    /// The elements of an f32 tensor.
    fn f32s_mut(&mut self) -> &mut [f32] {
        debug_assert_eq!(self.dtype, DType::F32);
        let n = self.len();
        // SAFETY: `words` holds `n` f32s in at least `n * 4` initialised bytes, 8-byte
        // aligned; every bit pattern is an f32, and the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), n) }
    }

    fn load_npy(&mut self, path: &Path) -> Result<(), String> {
        let shown = path.display();
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
        let npy = npyz::NpyFile::new(&bytes[..])
            .map_err(|e| format!("`{shown}` is not a .npy file: {e}"))?;
        if npy.shape() != self.shape.as_slice() {
            return Err(format!(
                "`{shown}` has shape {:?} but tensor `{}` is {:?}",
                npy.shape(),
                self.name,
                self.shape
            ));
        }
        // Where element (i0, i1, ...) sits in the file: C order is row-major as the tensor
        // is; Fortran order (NumPy's `order="F"`, a transposed array saved as is) is not.
        let fortran = npy.order() == npyz::Order::Fortran;
        let file_strides = npy.strides().to_vec();
        let descr = npy.dtype().descr();
        // The file holds the tensor's bytes as they sit in memory: copy them.
        let plain = descr.trim_matches('\'');
        if !fortran
            && let Some(ours) = npy_descr(self.dtype)
            && plain.get(1..) == ours.get(1..)
            && !plain.starts_with('>')
        {
            let n = self.bytes().len();
            if let Some(data) = bytes.len().checked_sub(n).map(|start| &bytes[start..]) {
                self.bytes_mut().copy_from_slice(data);
                return Ok(());
            }
        }
        let values: Vec<f64> = match descr.trim_matches('\'').trim_start_matches(['<', '|', '=']) {
            "f2" => npy
                .into_vec::<f16>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "f4" => npy
                .into_vec::<f32>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "f8" => npy.into_vec::<f64>(),
            "i1" => npy
                .into_vec::<i8>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "i2" => npy
                .into_vec::<i16>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "i4" => npy
                .into_vec::<i32>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "i8" => npy
                .into_vec::<i64>()
                .map(|v| v.into_iter().map(|x| x as f64).collect()),
            "u1" | "b1" => npy
                .into_vec::<u8>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "u2" => npy
                .into_vec::<u16>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "u4" => npy
                .into_vec::<u32>()
                .map(|v| v.into_iter().map(f64::from).collect()),
            "u8" => npy
                .into_vec::<u64>()
                .map(|v| v.into_iter().map(|x| x as f64).collect()),
            other => {
                return Err(format!(
                    "`{shown}` holds dtype `{other}`, which WSP cannot read"
                ));
            }
        }
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
        if !fortran {
            for (i, v) in values.into_iter().enumerate() {
                self.set(i, v);
            }
            return Ok(());
        }
        // Walk the tensor's elements in row-major order, keeping the index and its position
        // in the file.
        let shape = self.shape.clone();
        for (i, at) in strided_offsets(&shape, &file_strides).enumerate() {
            self.set(i, values[at as usize]);
        }
        Ok(())
    }

    /// Writes the tensor as `.npy` (through [`write_atomically`]). bf16, which NumPy has no
    /// dtype for, is written as f32.
    pub fn save_npy(&self, path: &Path) -> Result<(), String> {
        write_atomically(path, |out| self.write_npy(out))
    }

    /// The tensor's `.npy` bytes, as [`TensorData::save_npy`] writes them.
    pub fn write_npy(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let n = self.len();
        let shape = &self.shape;
        if let Some(descr) = npy_descr(self.dtype) {
            // The bytes as they sit in memory are the file's data.
            let dtype = npyz::DType::Plain(descr.parse().expect("a valid type string"));
            npyz::WriteOptions::new_header_only()
                .dtype(dtype)
                .shape(shape)
                .writer(&mut *out)
                .write_header_only()?;
            return out.write_all(self.bytes());
        }
        match self.dtype {
            DType::F16 => write(out, shape, (0..n).map(|i| f16::from_f64(self.get(i)))),
            DType::BF16 | DType::F32 => write(out, shape, (0..n).map(|i| self.get(i) as f32)),
            DType::F64 => write(out, shape, (0..n).map(|i| self.get(i))),
            DType::I8 => write(out, shape, (0..n).map(|i| self.get_int(i) as i8)),
            DType::I16 => write(out, shape, (0..n).map(|i| self.get_int(i) as i16)),
            DType::I32 => write(out, shape, (0..n).map(|i| self.get_int(i) as i32)),
            DType::I64 => write(out, shape, (0..n).map(|i| self.get_int(i))),
            DType::U8 => write(out, shape, (0..n).map(|i| self.get_int(i) as u8)),
            DType::U16 => write(out, shape, (0..n).map(|i| self.get_int(i) as u16)),
            DType::U32 => write(out, shape, (0..n).map(|i| self.get_int(i) as u32)),
            DType::U64 => write(out, shape, (0..n).map(|i| self.get_int(i) as u64)),
        }
    }
}

/// The `.npy` type string of a dtype whose bytes in memory are NumPy's (every one but bf16, on
/// a little-endian host).
fn npy_descr(dtype: DType) -> Option<&'static str> {
    if cfg!(target_endian = "big") {
        return None;
    }
    Some(match dtype {
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::BF16 => return None,
    })
}

fn write<T: npyz::AutoSerialize>(
    out: impl std::io::Write,
    shape: &[u64],
    values: impl Iterator<Item = T>,
) -> std::io::Result<()> {
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(out)
        .begin_nd()?;
    w.extend(values)?;
    w.finish()
}

/// The element offset, under `strides`, of each index of `shape` in turn, in row-major order:
/// walking a permuted or strided layout (a Fortran-order file, a memory order, a view).
fn strided_offsets<'a>(shape: &'a [u64], strides: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
    let total: u64 = shape.iter().product();
    let mut index = vec![0u64; shape.len()];
    let mut at = 0u64;
    (0..total).map(move |_| {
        let here = at;
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            at += strides[d];
            if index[d] < shape[d] {
                break;
            }
            at -= index[d] * strides[d];
            index[d] = 0;
        }
        here
    })
}

/// Row-major strides, in elements.
pub fn strides(shape: &[u64]) -> Vec<u64> {
    let mut st = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}

/// Every tensor of a run, by name; views have no data of their own.
#[derive(Debug, Default)]
pub struct Tensors {
    pub by_name: HashMap<String, usize>,
    pub data: Vec<TensorData>,
    pub views: HashMap<String, TensorView>,
}

/// `Xt = X.T` and the like: another order over the bytes of the tensor `base`.
#[derive(Debug, Clone)]
pub struct TensorView {
    pub base: usize,
    pub shape: Vec<u64>,
    pub dims: Vec<wsp_ir::plan::ViewDim>,
}

impl TensorView {
    /// The view's strides in elements of its base (row-major).
    pub fn strides(&self, base_shape: &[u64]) -> Vec<u64> {
        let base = strides(base_shape);
        self.dims
            .iter()
            .map(|d| base.get(d.base_dim as usize).map_or(0, |s| s * d.step))
            .collect()
    }

    /// The box of the base a box of the view (`lo`, `hi` per view dimension) lies in, or
    /// `None` if it is empty.
    pub fn base_box(
        &self,
        base_rank: usize,
        lo: &[u64],
        hi: &[u64],
    ) -> Option<(Vec<u64>, Vec<u64>)> {
        if lo.iter().zip(hi).any(|(l, h)| h <= l) {
            return None;
        }
        let mut blo = vec![0u64; base_rank];
        let mut bhi = vec![1u64; base_rank];
        for (j, d) in self.dims.iter().enumerate() {
            let b = d.base_dim as usize;
            if d.step == 0 || b >= base_rank {
                continue;
            }
            blo[b] += d.step * lo[j];
            bhi[b] += d.step * (hi[j] - 1);
        }
        Some((blo, bhi))
    }
}

impl Tensors {
    /// A copy of every tensor's values, for work that must not change them (an exploration).
    pub fn try_clone(&self) -> Result<Tensors, String> {
        Ok(Tensors {
            by_name: self.by_name.clone(),
            data: self
                .data
                .iter()
                .map(TensorData::try_clone)
                .collect::<Result<_, _>>()?,
            views: self.views.clone(),
        })
    }

    /// Element `i` (row-major) of a tensor or a view.
    pub fn element(&self, name: &str, i: u64) -> Option<f64> {
        if let Some(t) = self.get(name) {
            return Some(t.get(i as usize));
        }
        let v = self.views.get(name)?;
        let base = &self.data[v.base];
        let strides = v.strides(&base.shape);
        let mut rest = i;
        let mut at = 0;
        for (n, s) in v.shape.iter().zip(&strides).rev() {
            at += (rest % n) * s;
            rest /= n;
        }
        Some(base.get(at as usize))
    }

    /// A view's values as a tensor of its own (row-major, in the view's order): what
    /// `save_npy` writes and `--dump-tensors` dumps of it.
    pub fn view_data(&self, name: &str) -> Option<TensorData> {
        let v = self.views.get(name)?;
        let base = &self.data[v.base];
        let strides = v.strides(&base.shape);
        let mut t = TensorData::new(name, base.dtype, &v.shape, None, Path::new(""), 1).ok()?;
        let size = base.dtype.size_bytes() as usize;
        let (from, to) = (base.bytes(), t.bytes_mut());
        for (i, o) in strided_offsets(&v.shape, &strides).enumerate() {
            let src = o as usize * size;
            to[i * size..(i + 1) * size].copy_from_slice(&from[src..src + size]);
        }
        Some(t)
    }

    /// The shape and dtype of a tensor or a view.
    pub fn shape_of(&self, name: &str) -> Option<(&[u64], DType)> {
        if let Some(t) = self.get(name) {
            return Some((&t.shape, t.dtype));
        }
        let v = self.views.get(name)?;
        Some((&v.shape, self.data[v.base].dtype))
    }

    pub fn id(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn get(&self, name: &str) -> Option<&TensorData> {
        self.id(name).map(|i| &self.data[i])
    }

    pub fn insert(&mut self, t: TensorData) -> usize {
        let id = self.data.len();
        self.by_name.insert(t.name.clone(), id);
        self.data.push(t);
        id
    }
}

/// Element `i` of a buffer of `dtype`, as f64.
pub fn read(dtype: DType, bytes: &[u8], i: usize) -> f64 {
    let w = dtype.size_bytes() as usize;
    let b = &bytes[i * w..(i + 1) * w];
    match dtype {
        DType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
        DType::BF16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        DType::F32 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::F64 => f64::from_le_bytes(b.try_into().unwrap()),
        _ => read_int(dtype, bytes, i) as f64,
    }
}

/// Element `i` of a buffer as an integer, exact for integer dtypes.
pub fn read_int(dtype: DType, bytes: &[u8], i: usize) -> i64 {
    let w = dtype.size_bytes() as usize;
    let b = &bytes[i * w..(i + 1) * w];
    match dtype {
        DType::I8 => b[0] as i8 as i64,
        DType::I16 => i16::from_le_bytes([b[0], b[1]]) as i64,
        DType::I32 => i32::from_le_bytes(b.try_into().unwrap()) as i64,
        DType::I64 => i64::from_le_bytes(b.try_into().unwrap()),
        DType::U8 => b[0] as i64,
        DType::U16 => u16::from_le_bytes([b[0], b[1]]) as i64,
        DType::U32 => u32::from_le_bytes(b.try_into().unwrap()) as i64,
        DType::U64 => u64::from_le_bytes(b.try_into().unwrap()) as i64,
        _ => read(dtype, bytes, i) as i64,
    }
}

/// Sets element `i` of a buffer, converting as NumPy's `astype` does (round to nearest even
/// for f16/bf16, truncation toward zero for integers).
/// Below this many words (2 MiB) a tensor is filled by the calling thread: starting threads
/// would cost more than they save.
const PARALLEL_WORDS: usize = 1 << 18;

/// `words` zeroed words, or `None` when the system refuses the memory. Zeroed memory of that
/// size comes straight from the kernel, untouched, so the fill that follows takes its page
/// faults; from 4 MiB on, the memory asks for transparent huge pages first.
fn zeroed_words(words: usize) -> Option<Vec<u64>> {
    if words == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u64>(words).ok()?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    if ptr.is_null() {
        return None;
    }
    const HUGE: usize = 2 << 20;
    let (start, end) = (ptr as usize, ptr as usize + words * 8);
    let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
    if hi > lo && end - start >= 2 * HUGE {
        // SAFETY: [lo, hi) lies inside the allocation; the advice only changes how pages are
        // backed. Refused advice (no THP here) leaves ordinary pages.
        unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
    }
    // SAFETY: allocated by the global allocator with `Layout::array::<u64>(words)`, all
    // `words` zeroed (a valid u64 each), as `Vec` would have.
    Some(unsafe { Vec::from_raw_parts(ptr, words, words) })
}

/// Calls `f(first, part)` on up to `workers` consecutive parts of `items` at once, each a
/// multiple of `align` items long (but the last), `first` being the part's first index.
fn par_parts<T: Send>(
    items: &mut [T],
    align: usize,
    workers: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let size = items
        .len()
        .div_ceil(workers.max(1))
        .next_multiple_of(align)
        .max(align);
    if workers <= 1 || size >= items.len() {
        return f(0, items);
    }
    std::thread::scope(|s| {
        for (k, part) in items.chunks_mut(size).enumerate() {
            let f = &f;
            s.spawn(move || f(k * size, part));
        }
    });
}

/// [`par_parts`] over the bytes of elements `size` bytes wide, split between elements:
/// `first` is the part's first element.
fn par_elements(
    bytes: &mut [u8],
    size: usize,
    workers: usize,
    f: impl Fn(usize, &mut [u8]) + Sync,
) {
    par_parts(bytes, size, workers, |first, part| f(first / size, part))
}

pub fn write_elem(dtype: DType, bytes: &mut [u8], i: usize, v: f64) {
    let w = dtype.size_bytes() as usize;
    let b = &mut bytes[i * w..(i + 1) * w];
    match dtype {
        DType::F16 => b.copy_from_slice(&f16::from_f64(v).to_le_bytes()),
        DType::BF16 => b.copy_from_slice(&bf16::from_f64(v).to_le_bytes()),
        DType::F32 => b.copy_from_slice(&(v as f32).to_le_bytes()),
        DType::F64 => b.copy_from_slice(&v.to_le_bytes()),
        DType::I8 => b.copy_from_slice(&(v as i8).to_le_bytes()),
        DType::I16 => b.copy_from_slice(&(v as i16).to_le_bytes()),
        DType::I32 => b.copy_from_slice(&(v as i32).to_le_bytes()),
        DType::I64 => b.copy_from_slice(&(v as i64).to_le_bytes()),
        DType::U8 => b.copy_from_slice(&(v as u8).to_le_bytes()),
        DType::U16 => b.copy_from_slice(&(v as u16).to_le_bytes()),
        DType::U32 => b.copy_from_slice(&(v as u32).to_le_bytes()),
        DType::U64 => b.copy_from_slice(&(v as u64).to_le_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use npyz::WriterBuilder;
    use wsp_ir::plan::F64;

    /// Initialisers filled by several threads, in parts split between elements, give what one
    /// thread's element-by-element definition gives, in every storage width.
    #[test]
    fn parallel_initialisers_equal_the_element_by_element_definition() {
        // 3 Mi elements: past the size where threads start, for each dtype.
        let shape = [3u64, 1 << 20];
        let inits = [
            Init::Zeros,
            Init::Ones,
            Init::Full(F64(-2.75)),
            Init::Arange,
            Init::Randn {
                seed: 3,
                std: F64(0.5),
            },
        ];
        for dtype in [DType::F32, DType::F16, DType::I32, DType::F64] {
            for init in &inits {
                let t = TensorData::new("t", dtype, &shape, Some(init), Path::new(""), 3).unwrap();
                let mut want = TensorData::zeros("t", dtype, &shape).unwrap();
                let mut rng = crate::normal::NumpyNormal::new(3);
                for i in 0..want.len() {
                    let v = match init {
                        Init::Zeros => 0.0,
                        Init::Ones => 1.0,
                        Init::Full(v) => v.0,
                        Init::Arange => i as f64,
                        _ => f64::from(0.5f32 * rng.sample()),
                    };
                    want.set(i, v);
                }
                assert!(t.bytes() == want.bytes(), "{dtype:?} {init:?}");
            }
        }
    }

    /// A Fortran-order file of a 2×3×2 array: the tensor reads it back with every element at
    /// its index, as NumPy's `np.load` would.
    #[test]
    fn load_npy_reads_fortran_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.npy");
        let shape = [2u64, 3, 2];
        let value = |i: u64, j: u64, k: u64| (100 * i + 10 * j + k) as f32;
        // Fortran order: the first index varies fastest.
        let mut column_major = Vec::new();
        for k in 0..2 {
            for j in 0..3 {
                for i in 0..2 {
                    column_major.push(value(i, j, k));
                }
            }
        }
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .order(npyz::Order::Fortran)
            .writer(std::fs::File::create(&path).unwrap())
            .begin_nd()
            .unwrap();
        w.extend(column_major).unwrap();
        w.finish().unwrap();

        let mut t = TensorData::zeros("x", DType::F32, &shape).unwrap();
        t.init(&Init::LoadNpy("f.npy".into()), dir.path()).unwrap();
        let mut row_major = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..2 {
                    row_major.push(value(i, j, k) as f64);
                }
            }
        }
        let read: Vec<f64> = (0..t.len()).map(|i| t.get(i)).collect();
        assert_eq!(read, row_major);
    }
}
