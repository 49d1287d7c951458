//! A tensor as a notebook shows it: the NumPy-style preview, its range, and a heatmap of its
//! first 2-D slice.

use std::io::{BufReader, Seek};
use std::path::Path;

use base64::Engine;
use wsp_ir::DType;
use wsp_ir::plan::Init;
use wsp_runtime::preview::array_text;
use wsp_runtime::tensors::TensorData;

use super::{MimeBundle, escape};

/// The heatmap is at most this many pixels a side.
const MAX_SIDE: u64 = 512;
/// Pixels per element a tensor of up to 64 columns and rows gets at least.
const MIN_CELL: u64 = 8;
/// A large slice's block mean reads at most this many elements a side of each block.
const BLOCK_SAMPLES: u64 = 8;
/// nan and ±inf in the heatmap.
const GREY: [u8; 3] = [128, 128, 128];

/// A tensor's MIME bundle: text/plain (`NAME: f32[4, 8]` and NumPy's `str()`), text/html
/// (the same with min/max/mean and a heatmap) and, for two or more dimensions, image/png.
/// Element `i` of the C-order tensor is `value(i)`.
pub fn tensor(name: &str, dtype: DType, shape: &[u64], value: &dyn Fn(usize) -> f64) -> MimeBundle {
    let title = format!(
        "{name}: {}{}",
        dtype.name().to_lowercase(),
        shape_text(shape)
    );
    let preview = array_text(dtype, shape, value);
    let range = Range::of(shape, value);
    let heatmap = if shape.len() >= 2 {
        Heatmap::of(shape, value)
    } else {
        None
    };
    let png = heatmap.as_ref().and_then(Heatmap::png);
    let mut html = format!(
        "<div class=\"wsp-tensor\">\n<div><b>{}</b> <code>{}{}</code> · {}</div>\n<pre>{}</pre>\n",
        escape(name),
        dtype.name().to_lowercase(),
        shape_text(shape),
        escape(&range.text(dtype.is_float())),
        escape(&preview)
    );
    if let (Some(map), Some(png)) = (&heatmap, &png) {
        let slice = match shape.len() {
            2 => name.to_string(),
            n => format!("{name}[{}:, :]", "0, ".repeat(n - 2)),
        };
        let blocks = if map.block > 1 {
            format!(", each pixel the mean of a {0}×{0} block", map.block)
        } else {
            String::new()
        };
        let scale = match (map.lo, map.hi) {
            (Some(lo), Some(hi)) => format!(
                "viridis from {} (dark) to {} (yellow)",
                short(lo),
                short(hi)
            ),
            _ => "no finite values".into(),
        };
        html += &format!(
            "<figure style=\"margin:0\"><img src=\"data:image/png;base64,{png}\" width=\"{}\" height=\"{}\" \
             style=\"image-rendering:pixelated\" alt=\"heatmap of {}\"/>\n\
             <figcaption>heatmap of {}{}; {}; grey: nan/inf</figcaption></figure>\n",
            map.width,
            map.height,
            escape(&slice),
            escape(&slice),
            escape(&blocks),
            escape(&scale)
        );
    }
    html += "</div>";
    let mut bundle = vec![
        ("text/plain", format!("{title}\n{preview}")),
        ("text/html", html),
    ];
    if let Some(png) = png {
        bundle.push(("image/png", png));
    }
    MimeBundle(bundle)
}

/// [`tensor`] of a `.npy` file as `save_npy` writes it (C or Fortran order, the dtypes WSP
/// has); the file's size is checked against its header before its data is read.
pub fn tensor_npy(name: &str, path: &Path) -> Result<MimeBundle, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open `{shown}`: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?
        .len();
    let npy = npyz::NpyFile::new(BufReader::new(file))
        .map_err(|e| format!("`{shown}` is not a .npy file: {e}"))?;
    let descr = npy.dtype().descr();
    let code = descr.trim_matches('\'');
    let dtype = match code.trim_start_matches(['<', '|', '=']) {
        _ if code.starts_with('>') => None,
        "f2" => Some(DType::F16),
        "f4" => Some(DType::F32),
        "f8" => Some(DType::F64),
        "i1" => Some(DType::I8),
        "i2" => Some(DType::I16),
        "i4" => Some(DType::I32),
        "i8" => Some(DType::I64),
        "u1" | "b1" => Some(DType::U8),
        "u2" => Some(DType::U16),
        "u4" => Some(DType::U32),
        "u8" => Some(DType::U64),
        _ => None,
    }
    .ok_or_else(|| format!("`{shown}` holds dtype `{code}`, which WSP cannot show"))?;
    let shape = npy.shape().to_vec();
    let data_bytes = npy
        .len()
        .checked_mul(u64::from(dtype.size_bytes()))
        .ok_or_else(|| format!("`{shown}`: shape {shape:?} is too large"))?;
    let header_bytes = npy
        .into_inner()
        .stream_position()
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    if len.checked_sub(header_bytes) != Some(data_bytes) {
        return Err(format!(
            "`{shown}` is damaged: its header says {data_bytes} bytes of data ({} {shape:?}), \
             the file has {}",
            dtype.name().to_lowercase(),
            len.saturating_sub(header_bytes)
        ));
    }
    let path_text = path
        .to_str()
        .ok_or_else(|| format!("`{shown}`: the path is not UTF-8"))?;
    let mut t = TensorData::zeros(name, dtype, &shape)?;
    t.init(&Init::LoadNpy(path_text.to_string()), Path::new(""))?;
    Ok(tensor(name, dtype, &shape, &|i| t.get(i)))
}

/// `[4, 8]`.
fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// The finite values' extremes and mean over the whole tensor, and how many are not finite.
struct Range {
    min: f64,
    max: f64,
    mean: f64,
    finite: u64,
    nan: u64,
    inf: u64,
}

impl Range {
    fn of(shape: &[u64], value: &dyn Fn(usize) -> f64) -> Range {
        let n = shape.iter().product::<u64>();
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        // Neumaier's compensated sum: a million f32 values sum without visible drift.
        let (mut sum, mut carry) = (0.0f64, 0.0f64);
        let (mut finite, mut nan, mut inf) = (0u64, 0u64, 0u64);
        for i in 0..n {
            let v = value(i as usize);
            if v.is_nan() {
                nan += 1;
            } else if v.is_infinite() {
                inf += 1;
            } else {
                finite += 1;
                min = min.min(v);
                max = max.max(v);
                let t = sum + v;
                carry += if sum.abs() >= v.abs() {
                    (sum - t) + v
                } else {
                    (v - t) + sum
                };
                sum = t;
            }
        }
        Range {
            min,
            max,
            mean: (sum + carry) / finite.max(1) as f64,
            finite,
            nan,
            inf,
        }
    }

    fn text(&self, float: bool) -> String {
        let mut parts = Vec::new();
        if self.finite == 0 {
            parts.push("no finite values".to_string());
        } else if float {
            parts.push(format!(
                "min {} · max {} · mean {}",
                short(self.min),
                short(self.max),
                short(self.mean)
            ));
        } else {
            parts.push(format!(
                "min {} · max {} · mean {}",
                self.min,
                self.max,
                short(self.mean)
            ));
        }
        if self.nan > 0 {
            parts.push(format!("{} nan", self.nan));
        }
        if self.inf > 0 {
            parts.push(format!("{} inf", self.inf));
        }
        parts.join(" · ")
    }
}

/// Six significant digits, positional between 1e-4 and 1e6, trailing zeros dropped.
fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-4..1e6).contains(&a) {
        let s = format!("{v:.5e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exp}");
    }
    let decimals = (5 - a.log10().floor() as i64).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The first 2-D slice as a grid of cells (one per element, or per block of a large slice),
/// drawn `cell` pixels a side.
struct Heatmap {
    /// Cell values, row-major, `None` where no finite value was seen.
    cells: Vec<Option<f64>>,
    rows: u64,
    cols: u64,
    block: u64,
    cell: u64,
    width: u64,
    height: u64,
    lo: Option<f64>,
    hi: Option<f64>,
}

impl Heatmap {
    fn of(shape: &[u64], value: &dyn Fn(usize) -> f64) -> Option<Heatmap> {
        let (rows, cols) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        if rows == 0 || cols == 0 {
            return None;
        }
        let side = rows.max(cols);
        let block = side.div_ceil(MAX_SIDE);
        let cell = if block > 1 {
            1
        } else if side * MIN_CELL <= MAX_SIDE {
            (MAX_SIDE / 2 / side).max(MIN_CELL)
        } else {
            (MAX_SIDE / 2 / side).max(1)
        };
        let (out_rows, out_cols) = (rows.div_ceil(block), cols.div_ceil(block));
        // Both at most MAX_SIDE: the allocation below is bounded.
        let mut cells = Vec::with_capacity((out_rows * out_cols) as usize);
        // Within a block, every `step`-th row and column.
        let step = block.div_ceil(BLOCK_SAMPLES);
        for br in 0..out_rows {
            for bc in 0..out_cols {
                let (mut sum, mut count) = (0.0, 0u32);
                let row_end = ((br + 1) * block).min(rows);
                let col_end = ((bc + 1) * block).min(cols);
                for r in (br * block..row_end).step_by(step as usize) {
                    for c in (bc * block..col_end).step_by(step as usize) {
                        let v = value((r * cols + c) as usize);
                        if v.is_finite() {
                            sum += v;
                            count += 1;
                        }
                    }
                }
                cells.push((count > 0).then(|| sum / f64::from(count)));
            }
        }
        let lo = cells.iter().flatten().copied().reduce(f64::min);
        let hi = cells.iter().flatten().copied().reduce(f64::max);
        Some(Heatmap {
            cells,
            rows: out_rows,
            cols: out_cols,
            block,
            cell,
            width: out_cols * cell,
            height: out_rows * cell,
            lo,
            hi,
        })
    }

    fn colour(&self, v: Option<f64>) -> [u8; 3] {
        let (Some(v), Some(lo), Some(hi)) = (v, self.lo, self.hi) else {
            return GREY;
        };
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        VIRIDIS[(t * 255.0).round().clamp(0.0, 255.0) as usize]
    }

    /// The heatmap as a base64 PNG; `None` if encoding fails.
    fn png(&self) -> Option<String> {
        let mut rgb = Vec::with_capacity((self.width * self.height * 3) as usize);
        for r in 0..self.rows {
            let mut line = Vec::with_capacity((self.width * 3) as usize);
            for c in 0..self.cols {
                let colour = self.colour(self.cells[(r * self.cols + c) as usize]);
                for _ in 0..self.cell {
                    line.extend_from_slice(&colour);
                }
            }
            for _ in 0..self.cell {
                rgb.extend_from_slice(&line);
            }
        }
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().ok()?;
        writer.write_image_data(&rgb).ok()?;
        writer.finish().ok()?;
        Some(base64::engine::general_purpose::STANDARD.encode(&bytes))
    }
}

/// Matplotlib's viridis, 256 entries.
const VIRIDIS: [[u8; 3]; 256] = [
    [68, 1, 84],
    [68, 2, 86],
    [69, 4, 87],
    [69, 5, 89],
    [70, 7, 90],
    [70, 8, 92],
    [70, 10, 93],
    [70, 11, 94],
    [71, 13, 96],
    [71, 14, 97],
    [71, 16, 99],
    [71, 17, 100],
    [71, 19, 101],
    [72, 20, 103],
    [72, 22, 104],
    [72, 23, 105],
    [72, 24, 106],
    [72, 26, 108],
    [72, 27, 109],
    [72, 28, 110],
    [72, 29, 111],
    [72, 31, 112],
    [72, 32, 113],
    [72, 33, 115],
    [72, 35, 116],
    [72, 36, 117],
    [72, 37, 118],
    [72, 38, 119],
    [72, 40, 120],
    [72, 41, 121],
    [71, 42, 122],
    [71, 44, 122],
    [71, 45, 123],
    [71, 46, 124],
    [71, 47, 125],
    [70, 48, 126],
    [70, 50, 126],
    [70, 51, 127],
    [70, 52, 128],
    [69, 53, 129],
    [69, 55, 129],
    [69, 56, 130],
    [68, 57, 131],
    [68, 58, 131],
    [68, 59, 132],
    [67, 61, 132],
    [67, 62, 133],
    [66, 63, 133],
    [66, 64, 134],
    [66, 65, 134],
    [65, 66, 135],
    [65, 68, 135],
    [64, 69, 136],
    [64, 70, 136],
    [63, 71, 136],
    [63, 72, 137],
    [62, 73, 137],
    [62, 74, 137],
    [62, 76, 138],
    [61, 77, 138],
    [61, 78, 138],
    [60, 79, 138],
    [60, 80, 139],
    [59, 81, 139],
    [59, 82, 139],
    [58, 83, 139],
    [58, 84, 140],
    [57, 85, 140],
    [57, 86, 140],
    [56, 88, 140],
    [56, 89, 140],
    [55, 90, 140],
    [55, 91, 141],
    [54, 92, 141],
    [54, 93, 141],
    [53, 94, 141],
    [53, 95, 141],
    [52, 96, 141],
    [52, 97, 141],
    [51, 98, 141],
    [51, 99, 141],
    [50, 100, 142],
    [50, 101, 142],
    [49, 102, 142],
    [49, 103, 142],
    [49, 104, 142],
    [48, 105, 142],
    [48, 106, 142],
    [47, 107, 142],
    [47, 108, 142],
    [46, 109, 142],
    [46, 110, 142],
    [46, 111, 142],
    [45, 112, 142],
    [45, 113, 142],
    [44, 113, 142],
    [44, 114, 142],
    [44, 115, 142],
    [43, 116, 142],
    [43, 117, 142],
    [42, 118, 142],
    [42, 119, 142],
    [42, 120, 142],
    [41, 121, 142],
    [41, 122, 142],
    [41, 123, 142],
    [40, 124, 142],
    [40, 125, 142],
    [39, 126, 142],
    [39, 127, 142],
    [39, 128, 142],
    [38, 129, 142],
    [38, 130, 142],
    [38, 130, 142],
    [37, 131, 142],
    [37, 132, 142],
    [37, 133, 142],
    [36, 134, 142],
    [36, 135, 142],
    [35, 136, 142],
    [35, 137, 142],
    [35, 138, 141],
    [34, 139, 141],
    [34, 140, 141],
    [34, 141, 141],
    [33, 142, 141],
    [33, 143, 141],
    [33, 144, 141],
    [33, 145, 140],
    [32, 146, 140],
    [32, 146, 140],
    [32, 147, 140],
    [31, 148, 140],
    [31, 149, 139],
    [31, 150, 139],
    [31, 151, 139],
    [31, 152, 139],
    [31, 153, 138],
    [31, 154, 138],
    [30, 155, 138],
    [30, 156, 137],
    [30, 157, 137],
    [31, 158, 137],
    [31, 159, 136],
    [31, 160, 136],
    [31, 161, 136],
    [31, 161, 135],
    [31, 162, 135],
    [32, 163, 134],
    [32, 164, 134],
    [33, 165, 133],
    [33, 166, 133],
    [34, 167, 133],
    [34, 168, 132],
    [35, 169, 131],
    [36, 170, 131],
    [37, 171, 130],
    [37, 172, 130],
    [38, 173, 129],
    [39, 173, 129],
    [40, 174, 128],
    [41, 175, 127],
    [42, 176, 127],
    [44, 177, 126],
    [45, 178, 125],
    [46, 179, 124],
    [47, 180, 124],
    [49, 181, 123],
    [50, 182, 122],
    [52, 182, 121],
    [53, 183, 121],
    [55, 184, 120],
    [56, 185, 119],
    [58, 186, 118],
    [59, 187, 117],
    [61, 188, 116],
    [63, 188, 115],
    [64, 189, 114],
    [66, 190, 113],
    [68, 191, 112],
    [70, 192, 111],
    [72, 193, 110],
    [74, 193, 109],
    [76, 194, 108],
    [78, 195, 107],
    [80, 196, 106],
    [82, 197, 105],
    [84, 197, 104],
    [86, 198, 103],
    [88, 199, 101],
    [90, 200, 100],
    [92, 200, 99],
    [94, 201, 98],
    [96, 202, 96],
    [99, 203, 95],
    [101, 203, 94],
    [103, 204, 92],
    [105, 205, 91],
    [108, 205, 90],
    [110, 206, 88],
    [112, 207, 87],
    [115, 208, 86],
    [117, 208, 84],
    [119, 209, 83],
    [122, 209, 81],
    [124, 210, 80],
    [127, 211, 78],
    [129, 211, 77],
    [132, 212, 75],
    [134, 213, 73],
    [137, 213, 72],
    [139, 214, 70],
    [142, 214, 69],
    [144, 215, 67],
    [147, 215, 65],
    [149, 216, 64],
    [152, 216, 62],
    [155, 217, 60],
    [157, 217, 59],
    [160, 218, 57],
    [162, 218, 55],
    [165, 219, 54],
    [168, 219, 52],
    [170, 220, 50],
    [173, 220, 48],
    [176, 221, 47],
    [178, 221, 45],
    [181, 222, 43],
    [184, 222, 41],
    [186, 222, 40],
    [189, 223, 38],
    [192, 223, 37],
    [194, 223, 35],
    [197, 224, 33],
    [200, 224, 32],
    [202, 225, 31],
    [205, 225, 29],
    [208, 225, 28],
    [210, 226, 27],
    [213, 226, 26],
    [216, 226, 25],
    [218, 227, 25],
    [221, 227, 24],
    [223, 227, 24],
    [226, 228, 24],
    [229, 228, 25],
    [231, 228, 25],
    [234, 229, 26],
    [236, 229, 27],
    [239, 229, 28],
    [241, 229, 29],
    [244, 230, 30],
    [246, 230, 32],
    [248, 230, 33],
    [251, 231, 35],
    [253, 231, 37],
];

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;
    use npyz::WriterBuilder;

    /// The bundle's HTML with the PNG's base64 replaced by its length, so the snapshot shows
    /// the markup.
    fn html_without_png(b: &MimeBundle) -> String {
        let html = b.get("text/html").unwrap();
        match html.split_once("base64,") {
            Some((head, tail)) => {
                let end = tail.find('"').unwrap();
                format!("{head}base64,<{} chars>{}", end, &tail[end..])
            }
            None => html.to_string(),
        }
    }

    /// The decoded image/png: (width, height, RGB bytes).
    fn decode(b: &MimeBundle) -> (u32, u32, Vec<u8>) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b.get("image/png").unwrap())
            .unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn pixel(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
        let at = ((y * img.0 + x) * 3) as usize;
        img.2[at..at + 3].try_into().unwrap()
    }

    #[test]
    fn render_tensor_2d() {
        let v = [0.0, 1.5, -2.0, f64::NAN, 4.25, f64::INFINITY];
        let b = tensor("Y<1>", DType::F32, &[2, 3], &|i| v[i]);
        let mimes: Vec<&str> = b.0.iter().map(|(m, _)| *m).collect();
        assert_eq!(mimes, ["text/plain", "text/html", "image/png"]);
        expect![[r#"
            Y<1>: f32[2, 3]
            [[ 0.    1.5  -2.  ]
             [  nan  4.25   inf]]"#]]
        .assert_eq(b.get("text/plain").unwrap());
        expect![[r#"
            <div class="wsp-tensor">
            <div><b>Y&lt;1&gt;</b> <code>f32[2, 3]</code> · min -2 · max 4.25 · mean 0.9375 · 1 nan · 1 inf</div>
            <pre>[[ 0.    1.5  -2.  ]
             [  nan  4.25   inf]]</pre>
            <figure style="margin:0"><img src="data:image/png;base64,<760 chars>" width="255" height="170" style="image-rendering:pixelated" alt="heatmap of Y&lt;1&gt;"/>
            <figcaption>heatmap of Y&lt;1&gt;; viridis from -2 (dark) to 4.25 (yellow); grey: nan/inf</figcaption></figure>
            </div>"#]].assert_eq(&html_without_png(&b));
        // The <img> shows the same PNG as image/png.
        assert!(
            b.get("text/html")
                .unwrap()
                .contains(b.get("image/png").unwrap())
        );
    }

    /// 2×3 elements at 85 px each; -2 is viridis's first colour, 4.25 its last, nan grey.
    #[test]
    fn render_tensor_png_pixels() {
        let v = [0.0, 1.5, -2.0, f64::NAN, 4.25, f64::INFINITY];
        let img = decode(&tensor("Y", DType::F32, &[2, 3], &|i| v[i]));
        assert_eq!((img.0, img.1), (255, 170));
        assert_eq!(pixel(&img, 170 + 84, 84), VIRIDIS[0]);
        assert_eq!(pixel(&img, 85, 85), VIRIDIS[255]);
        assert_eq!(pixel(&img, 0, 169), GREY);
        assert_eq!(pixel(&img, 254, 169), GREY);
        // 0.0 is at 2/6.25 of the range.
        assert_eq!(
            pixel(&img, 40, 40),
            VIRIDIS[(2.0 / 6.25 * 255.0f64).round() as usize]
        );
    }

    /// A 3-D tensor draws its first [rows, cols] slice; a 3000×100 slice is block-averaged.
    #[test]
    fn render_tensor_slices_and_blocks() {
        let b = tensor("Z", DType::I32, &[2, 3000, 100], &|i| {
            (i % 300_000 / 100) as f64
        });
        let html = html_without_png(&b);
        assert!(
            html.contains("heatmap of Z[0, :, :], each pixel the mean of a 6×6 block"),
            "{html}"
        );
        let img = decode(&b);
        assert_eq!((img.0, img.1), (17, 500));
        // Rows increase downwards: first block row darkest, last brightest.
        assert_eq!(pixel(&img, 0, 0), VIRIDIS[0]);
        assert_eq!(pixel(&img, 16, 499), VIRIDIS[255]);
    }

    #[test]
    fn render_tensor_low_dims_have_no_image() {
        let b = tensor("s", DType::F64, &[], &|_| 2.5);
        expect![[r#"
            s: f64[]
            2.5"#]]
        .assert_eq(b.get("text/plain").unwrap());
        assert_eq!(b.0.len(), 2);
        let b = tensor("v", DType::F16, &[0], &|_| {
            unreachable!("an empty tensor has no elements")
        });
        expect![[r#"
            <div class="wsp-tensor">
            <div><b>v</b> <code>f16[0]</code> · no finite values</div>
            <pre>[]</pre>
            </div>"#]]
        .assert_eq(&html_without_png(&b));
        let b = tensor("v", DType::I8, &[4], &|i| i as f64 - 1.0);
        assert!(b.get("image/png").is_none());
        expect![[r#"
            <div class="wsp-tensor">
            <div><b>v</b> <code>i8[4]</code> · min -1 · max 2 · mean 0.5</div>
            <pre>[-1  0  1  2]</pre>
            </div>"#]]
        .assert_eq(&html_without_png(&b));
    }

    #[test]
    fn render_tensor_npy_matches_tensor() {
        let dir = tempfile::tempdir().unwrap();
        for dtype in [DType::F16, DType::BF16, DType::F32, DType::I16, DType::U8] {
            let path = dir.path().join(format!("{}.npy", dtype.name()));
            let mut t = TensorData::zeros("t", dtype, &[3, 4]).unwrap();
            for i in 0..12 {
                t.set(i, i as f64 * 1.25 - 3.0);
            }
            t.save_npy(&path).unwrap();
            let from_file = tensor_npy("t", &path).unwrap();
            // bf16 is saved as f32.
            let dtype = if dtype == DType::BF16 {
                DType::F32
            } else {
                dtype
            };
            let direct = tensor("t", dtype, &[3, 4], &|i| t.get(i));
            assert_eq!(from_file, direct, "{}", dtype.name());
        }
    }

    #[test]
    fn render_tensor_npy_reads_fortran_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.npy");
        // A 2×3 array in column-major order: [[1, 2, 3], [4, 5, 6]].
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[2, 3])
            .order(npyz::Order::Fortran)
            .writer(std::fs::File::create(&path).unwrap())
            .begin_nd()
            .unwrap();
        w.extend([1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
        w.finish().unwrap();
        let b = tensor_npy("F", &path).unwrap();
        expect![[r#"
            F: f64[2, 3]
            [[1. 2. 3.]
             [4. 5. 6.]]"#]]
        .assert_eq(b.get("text/plain").unwrap());
    }

    /// A version 1.0 `.npy` file of two elements of `descr`.
    fn raw_npy(descr: &str, data: &[u8]) -> Vec<u8> {
        let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn render_tensor_npy_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.npy");
        let mut t = TensorData::zeros("t", DType::F32, &[4, 4]).unwrap();
        t.set(0, 1.0);
        t.save_npy(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut errors = Vec::new();
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        errors.push(tensor_npy("t", &path).unwrap_err());
        std::fs::write(&path, [&bytes[..], &[0u8; 8][..]].concat()).unwrap();
        errors.push(tensor_npy("t", &path).unwrap_err());
        std::fs::write(&path, b"not a numpy file").unwrap();
        errors.push(tensor_npy("t", &path).unwrap_err());
        for descr in [">f4", "<c8"] {
            std::fs::write(&path, raw_npy(descr, &[0u8; 16])).unwrap();
            errors.push(tensor_npy("t", &path).unwrap_err());
        }
        errors.push(tensor_npy("m", &dir.path().join("missing.npy")).unwrap_err());
        let text = errors
            .join("\n")
            .replace(&dir.path().display().to_string(), "DIR");
        expect![[r#"
            `DIR/t.npy` is damaged: its header says 64 bytes of data (f32 [4, 4]), the file has 60
            `DIR/t.npy` is damaged: its header says 64 bytes of data (f32 [4, 4]), the file has 72
            `DIR/t.npy` is not a .npy file: magic not found for NPY file
            `DIR/t.npy` holds dtype `>f4`, which WSP cannot show
            `DIR/t.npy` holds dtype `<c8`, which WSP cannot show
            cannot open `DIR/missing.npy`: No such file or directory (os error 2)"#]]
        .assert_eq(&text);
    }

    #[test]
    fn render_tensor_short_numbers() {
        let shown: Vec<String> = [0.0, 1.0, -2.5, 1.0 / 3.0, 123456.7, 1e-7, -3.2e12, 0.0001]
            .iter()
            .map(|&v| short(v))
            .collect();
        expect!["0 1 -2.5 0.333333 123457 1e-7 -3.2e12 0.0001"].assert_eq(&shown.join(" "));
    }
}
