//! NumPy-style text of a tensor (`print(X)`, the notebook's text/plain preview).
//!
//! A port of what NumPy 2's `str(a)` prints with the default print options (`arrayprint.py`:
//! `_formatArray`, `FloatingFormat`, `IntegerFormat`): 75 columns, precision 8 in `maxprec`
//! mode, and past 1000 elements only the first and last 3 items along each long axis. Floats
//! are written with the shortest digits that read back as the same value of their dtype, as
//! NumPy's Dragon4 does. bf16, which NumPy has no dtype for, prints as the f32 array
//! `save_npy` writes for it.

use half::f16;
use wsp_ir::DType;

const LINE_WIDTH: isize = 75;
/// Arrays with more elements than this are summarised.
const THRESHOLD: u128 = 1000;
const EDGE_ITEMS: u64 = 3;
/// At most this many digits after the point (`maxprec`).
const PRECISION: usize = 8;

/// What NumPy's `str(a)` prints for a C-order array of `dtype` and `shape` whose flat element
/// `i` is `value(i)`. Only the elements shown are read, so a summarised array of any size
/// costs a few hundred calls.
pub fn array_text(dtype: DType, shape: &[u64], value: &dyn Fn(usize) -> f64) -> String {
    let kind = Kind::of(dtype);
    if shape.is_empty() {
        return scalar_text(kind, value(0));
    }
    // `None`: more elements than u128 holds, which is certainly past the threshold.
    let size = shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)));
    if size == Some(0) {
        return "[]".to_string();
    }
    let summarise = size.is_none_or(|s| s > THRESHOLD);
    // The indices shown along each axis: all, or the first and last EDGE_ITEMS. Their product
    // is at most the array's size (the caller holds that many elements) and, when
    // summarising, at most 6 per long axis.
    let kept: Vec<Vec<u64>> = shape
        .iter()
        .map(|&n| {
            if summarise && n > 2 * EDGE_ITEMS {
                (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
            } else {
                (0..n).collect()
            }
        })
        .collect();
    let mut strides = vec![1u128; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].saturating_mul(u128::from(shape[d + 1]));
    }
    // The shown elements in C order: NumPy's `_leading_trailing`.
    let count: usize = kept.iter().map(Vec::len).product();
    let mut values = Vec::with_capacity(count);
    let mut at = vec![0usize; shape.len()];
    for _ in 0..count {
        let flat: u128 = at
            .iter()
            .zip(&kept)
            .zip(&strides)
            .map(|((&i, k), &s)| u128::from(k[i]) * s)
            .sum();
        values.push(value(flat as usize));
        for d in (0..at.len()).rev() {
            at[d] += 1;
            if at[d] < kept[d].len() {
                break;
            }
            at[d] = 0;
        }
    }
    let format = ElementFormat::new(kind, &values);
    let grid = Grid {
        lens: kept.iter().map(Vec::len).collect(),
        summarised: shape
            .iter()
            .map(|&n| summarise && n > 2 * EDGE_ITEMS)
            .collect(),
        values: &values,
        format: &format,
    };
    grid.recurse(0, 0, " ", LINE_WIDTH)
}

/// How a dtype's elements are written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    F16,
    F32,
    F64,
    Signed,
    Unsigned,
}

impl Kind {
    fn of(dtype: DType) -> Kind {
        match dtype {
            DType::F16 => Kind::F16,
            DType::BF16 | DType::F32 => Kind::F32,
            DType::F64 => Kind::F64,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Kind::Signed,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Kind::Unsigned,
        }
    }

    /// `10 ** min(8, finfo(dtype).precision)`: at or past this magnitude NumPy switches to
    /// scientific notation.
    fn exp_cutoff(self) -> f64 {
        match self {
            Kind::F16 => 1e3,
            Kind::F32 => 1e6,
            _ => 1e8,
        }
    }

    /// `max / min` computed in the dtype, as NumPy does before comparing it with 1000.
    fn ratio(self, max: f64, min: f64) -> f64 {
        match self {
            Kind::F16 => f64::from(f16::from_f32(max as f32 / min as f32)),
            Kind::F32 => f64::from(max as f32 / min as f32),
            _ => max / min,
        }
    }
}

/// The elements shown, as a dense C-order grid, and how to lay them out.
struct Grid<'a> {
    lens: Vec<usize>,
    /// Axes whose middle is replaced by `...`.
    summarised: Vec<bool>,
    values: &'a [f64],
    format: &'a ElementFormat,
}

impl Grid<'_> {
    /// NumPy's `_formatArray.recurser` for the sub-array at `axis` starting at flat `offset`.
    fn recurse(
        &self,
        axis: usize,
        offset: usize,
        hanging_indent: &str,
        curr_width: isize,
    ) -> String {
        if axis == self.lens.len() {
            return self.format.text(self.values[offset]);
        }
        let next_indent = format!("{hanging_indent} ");
        let next_width = curr_width - 1;
        let len = self.lens[axis];
        let stride: usize = self.lens[axis + 1..].iter().product();
        let show_summary = self.summarised[axis];
        let leading = if show_summary { EDGE_ITEMS as usize } else { 0 };
        let child =
            |i: usize| self.recurse(axis + 1, offset + i * stride, &next_indent, next_width);
        let mut s = String::new();
        if axis + 1 == self.lens.len() {
            let elem_width = curr_width - 1;
            let mut line = hanging_indent.to_string();
            for i in 0..leading {
                extend_line(&mut s, &mut line, &child(i), elem_width, hanging_indent);
                line.push(' ');
            }
            if show_summary {
                extend_line(&mut s, &mut line, "...", elem_width, hanging_indent);
                line.push(' ');
            }
            for i in leading..len - 1 {
                extend_line(&mut s, &mut line, &child(i), elem_width, hanging_indent);
                line.push(' ');
            }
            extend_line(
                &mut s,
                &mut line,
                &child(len - 1),
                elem_width,
                hanging_indent,
            );
            s.push_str(&line);
        } else {
            let line_sep = "\n".repeat(self.lens.len() - axis - 1);
            for i in 0..leading {
                s.push_str(hanging_indent);
                s.push_str(&child(i));
                s.push_str(&line_sep);
            }
            if show_summary {
                s.push_str(hanging_indent);
                s.push_str("...");
                s.push_str(&line_sep);
            }
            for i in leading..len - 1 {
                s.push_str(hanging_indent);
                s.push_str(&child(i));
                s.push_str(&line_sep);
            }
            s.push_str(hanging_indent);
            s.push_str(&child(len - 1));
        }
        format!("[{}]", &s[hanging_indent.len()..])
    }
}

/// NumPy's `_extendLine`: wraps before `word` if the line would pass `width`, unless the line
/// holds only its indent.
fn extend_line(s: &mut String, line: &mut String, word: &str, width: isize, indent: &str) {
    let needs_wrap = (line.len() + word.len()) as isize > width && line.len() > indent.len();
    if needs_wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = indent.to_string();
    }
    line.push_str(word);
}

/// One layout for every element of an array (`_get_format_function`).
enum ElementFormat {
    Int { width: usize, kind: Kind },
    Float(FloatFormat),
}

impl ElementFormat {
    fn new(kind: Kind, values: &[f64]) -> ElementFormat {
        match kind {
            Kind::Signed | Kind::Unsigned => {
                let width = values
                    .iter()
                    .map(|&v| int_text(kind, v).len())
                    .max()
                    .unwrap_or(0);
                ElementFormat::Int { width, kind }
            }
            _ => ElementFormat::Float(FloatFormat::new(kind, values)),
        }
    }

    fn text(&self, v: f64) -> String {
        match self {
            ElementFormat::Int { width, kind } => format!("{:>width$}", int_text(*kind, v)),
            ElementFormat::Float(f) => f.text(v),
        }
    }
}

fn int_text(kind: Kind, v: f64) -> String {
    if kind == Kind::Unsigned {
        (v as u64).to_string()
    } else {
        (v as i64).to_string()
    }
}

/// NumPy's `FloatingFormat` in `maxprec` mode: positional with at most 8 digits after the
/// point, or scientific with as many mantissa digits as the longest element needs.
struct FloatFormat {
    kind: Kind,
    scientific: bool,
    /// Digits after the point in scientific notation.
    precision: usize,
    /// Characters before the point, sign included.
    pad_left: usize,
    /// Characters after the point (scientific: mantissa digits, `e`, sign, exponent).
    pad_right: usize,
    /// Exponent digits.
    exp_size: usize,
}

impl FloatFormat {
    fn new(kind: Kind, values: &[f64]) -> FloatFormat {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let mut f = FloatFormat {
            kind,
            scientific: false,
            precision: PRECISION,
            pad_left: 0,
            pad_right: 0,
            exp_size: 0,
        };
        let non_zero = finite.iter().filter(|&&v| v != 0.0).map(|v| v.abs());
        let max = non_zero.clone().fold(f64::NAN, f64::max);
        let min = non_zero.fold(f64::NAN, f64::min);
        if !max.is_nan() {
            f.scientific =
                max >= kind.exp_cutoff() || min < 0.0001 || kind.ratio(max, min) > 1000.0;
        }
        if !finite.is_empty() && f.scientific {
            let parts: Vec<Scientific> = finite
                .iter()
                .map(|&v| Scientific::of(kind, v, PRECISION))
                .collect();
            f.exp_size = parts
                .iter()
                .map(|p| p.exp_digits().len())
                .max()
                .unwrap_or(2);
            f.precision = parts.iter().map(|p| p.digits.len() - 1).max().unwrap_or(0);
            f.pad_left = parts
                .iter()
                .map(|p| p.negative as usize + 1)
                .max()
                .unwrap_or(1);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else if !finite.is_empty() {
            for &v in &finite {
                let (int, frac) = positional(kind, v, PRECISION);
                f.pad_left = f.pad_left.max(int.len());
                f.pad_right = f.pad_right.max(frac.len());
            }
        }
        if finite.len() != values.len() {
            let neg_inf = values.contains(&f64::NEG_INFINITY) as usize;
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + neg_inf).saturating_sub(offset));
        }
        f
    }

    fn text(&self, v: f64) -> String {
        let width = self.pad_left + self.pad_right + 1;
        if v.is_nan() {
            return format!("{:>width$}", "nan");
        }
        if v.is_infinite() {
            return format!("{:>width$}", if v < 0.0 { "-inf" } else { "inf" });
        }
        if self.scientific {
            // Every element gets `precision` digits after the point: past its shortest digits,
            // the next digits of its exact binary value (Dragon4's `min_digits`), not zeros.
            let p = Scientific::parse(&format!("{v:.prec$e}", prec = self.precision));
            let sign = if p.negative { "-" } else { "" };
            let int = format!("{sign}{}", p.digits[0] as char);
            let mut frac = String::from_utf8(p.digits[1..].to_vec()).expect("ASCII digits");
            while frac.len() < self.precision {
                frac.push('0');
            }
            let exp_sign = if p.exp < 0 { '-' } else { '+' };
            let exp = p.exp.unsigned_abs().to_string();
            format!(
                "{int:>pl$}.{frac}e{exp_sign}{exp:0>es$}",
                pl = self.pad_left,
                es = self.exp_size
            )
        } else {
            let (int, frac) = positional(self.kind, v, PRECISION);
            format!(
                "{int:>pl$}.{frac:<pr$}",
                pl = self.pad_left,
                pr = self.pad_right
            )
        }
    }
}

/// What NumPy's `str()` of a float or integer scalar of the dtype prints: positional with one
/// digit after the point at least (`1.0`) from 1e-4 up to 1e3 (f16), 1e6 (f32) or 1e16 (f64),
/// else scientific (`1e-05`).
fn scalar_text(kind: Kind, v: f64) -> String {
    match kind {
        Kind::Signed | Kind::Unsigned => return int_text(kind, v),
        _ => {}
    }
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let a = v.abs();
    let cutoff = match kind {
        Kind::F16 => 1e3,
        Kind::F32 => 1e6,
        _ => 1e16,
    };
    if a == 0.0 || (1e-4..cutoff).contains(&a) {
        let (int, frac) = positional(kind, v, usize::MAX);
        let frac = if frac.is_empty() { "0".into() } else { frac };
        return format!("{int}.{frac}");
    }
    let p = Scientific::of(kind, v, usize::MAX);
    let sign = if p.negative { "-" } else { "" };
    let rest = String::from_utf8(p.digits[1..].to_vec()).expect("ASCII digits");
    let point = if rest.is_empty() { "" } else { "." };
    format!(
        "{sign}{}{point}{rest}e{}{:0>2}",
        p.digits[0] as char,
        if p.exp < 0 { '-' } else { '+' },
        p.exp.unsigned_abs()
    )
}

/// A finite float as decimal digits `d.ddd × 10^exp`, trailing zeros removed.
struct Scientific {
    negative: bool,
    /// ASCII digits, at least one.
    digits: Vec<u8>,
    exp: i32,
}

impl Scientific {
    /// The shortest digits that read back as `v` in its dtype, or if that needs more than
    /// `max_frac` digits after the first, `v` rounded (half to even) to that many.
    fn of(kind: Kind, v: f64, max_frac: usize) -> Scientific {
        let mut s = shortest(kind, v);
        if s.digits.len() > max_frac.saturating_add(1) {
            s = Scientific::parse(&format!("{:.max_frac$e}", v));
        }
        s
    }

    /// Parses Rust's `{:e}` output (`-1.25e-7`), trimming trailing zeros.
    fn parse(text: &str) -> Scientific {
        let (mantissa, exp) = text.split_once('e').expect("`{:e}` output has an exponent");
        let negative = mantissa.starts_with('-');
        let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        while digits.len() > 1 && digits.last() == Some(&b'0') {
            digits.pop();
        }
        Scientific {
            negative,
            digits,
            exp: exp.parse().expect("`{:e}` exponent is an integer"),
        }
    }

    fn exp_digits(&self) -> String {
        format!("{:02}", self.exp.unsigned_abs())
    }
}

/// The shortest digits that read back as `v` in its dtype, the closest to `v` of that
/// length. Rust's `{:e}` gives their length for f32 and f64; for f16, the fewest correctly
/// rounded digits that read back as the same f16, or the neighbouring digit string of that
/// length (at a power of two the interval that rounds to the value is lopsided).
fn shortest(kind: Kind, v: f64) -> Scientific {
    match kind {
        Kind::F16 => {
            let target = f16::from_f64(v);
            for p in 0..5usize {
                let s = Scientific::parse(&format!("{v:.p$e}"));
                for step in [0i64, 1, -1] {
                    let c = s.nudged(step, p);
                    if f16::from_f64(c.value()) == target {
                        return c;
                    }
                }
            }
            Scientific::parse(&format!("{v:e}"))
        }
        Kind::F32 | Kind::F64 => {
            let s = if kind == Kind::F32 {
                Scientific::parse(&format!("{:e}", v as f32))
            } else {
                Scientific::parse(&format!("{v:e}"))
            };
            // Rust breaks a tie between two shortest candidates (`1961179.25f32`: `.2` or
            // `.3`) away from zero; Dragon4 takes the even digit, as correct rounding of the
            // exact value does.
            let p = s.digits.len() - 1;
            let rounded = Scientific::parse(&format!("{v:.p$e}"));
            let same = if kind == Kind::F32 {
                rounded.value() as f32 == v as f32
            } else {
                rounded.value() == v
            };
            if same { rounded } else { s }
        }
        _ => unreachable!("integers are not written as floats"),
    }
}

impl Scientific {
    /// The digit string `p + 1` digits long moved by `step` units in its last place.
    fn nudged(&self, step: i64, p: usize) -> Scientific {
        let mut digits = self.digits.clone();
        digits.resize(p + 1, b'0');
        let mantissa: i64 = std::str::from_utf8(&digits)
            .expect("ASCII digits")
            .parse::<i64>()
            .expect("at most 5 digits")
            + step;
        let sign = if self.negative { "-" } else { "" };
        let text = mantissa.to_string();
        let (first, rest) = text.split_at(1);
        let exp = self.exp + text.len() as i32 - (p as i32 + 1);
        Scientific::parse(&format!("{sign}{first}.{rest}0e{exp}"))
    }

    fn value(&self) -> f64 {
        let sign = if self.negative { "-" } else { "" };
        let (first, rest) = self.digits.split_at(1);
        format!(
            "{sign}{}.{}0e{}",
            first[0] as char,
            std::str::from_utf8(rest).expect("ASCII digits"),
            self.exp
        )
        .parse()
        .expect("a formatted float parses")
    }
}

/// `v` written positionally with at most `max_frac` digits after the point, as (integer part
/// with its sign, fractional digits); trailing zeros are dropped, so `1.0` is `("1", "")`.
fn positional(kind: Kind, v: f64, max_frac: usize) -> (String, String) {
    let s = shortest(kind, v);
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let frac_len = (s.digits.len() as i64 - 1 - i64::from(s.exp)).max(0) as usize;
    if frac_len > max_frac {
        let text = format!("{:.max_frac$}", v.abs());
        let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
        return (
            format!("{sign}{int}"),
            frac.trim_end_matches('0').to_string(),
        );
    }
    let digits = std::str::from_utf8(&s.digits).expect("ASCII digits");
    if v == 0.0 {
        return (format!("{sign}0"), String::new());
    }
    if s.exp < 0 {
        let zeros = "0".repeat((-s.exp - 1) as usize);
        return (format!("{sign}0"), format!("{zeros}{digits}"));
    }
    let int_len = s.exp as usize + 1;
    if digits.len() <= int_len {
        let zeros = "0".repeat(int_len - digits.len());
        (format!("{sign}{digits}{zeros}"), String::new())
    } else {
        let (int, frac) = digits.split_at(int_len);
        (format!("{sign}{int}"), frac.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    fn text(dtype: DType, shape: &[u64], values: &[f64]) -> String {
        array_text(dtype, shape, &|i| values[i])
    }

    // Every expected text below is what NumPy 2.3.5's `str()` prints for the same array.

    #[test]
    fn preview_scalars() {
        assert_eq!(text(DType::F64, &[], &[1.0]), "1.0");
        assert_eq!(text(DType::F32, &[], &[f64::from(1e-4f32)]), "1e-04");
        assert_eq!(text(DType::F64, &[], &[1e16]), "1e+16");
        assert_eq!(text(DType::F64, &[], &[-0.0]), "-0.0");
        assert_eq!(
            text(DType::F16, &[], &[f64::from(f16::from_f64(0.1))]),
            "0.1"
        );
        assert_eq!(text(DType::I32, &[], &[-7.0]), "-7");
        assert_eq!(text(DType::F64, &[], &[f64::NEG_INFINITY]), "-inf");
    }

    #[test]
    fn preview_floats_positional_and_scientific() {
        assert_eq!(
            text(DType::F64, &[2], &[0.001953125, 1.5]),
            "[0.00195312 1.5       ]"
        );
        assert_eq!(text(DType::F64, &[2], &[-0.0, 1.0]), "[-0.  1.]");
        assert_eq!(text(DType::F64, &[2], &[1e-5, 1.5]), "[1.0e-05 1.5e+00]");
        assert_eq!(text(DType::F64, &[2], &[1e10, 2e10]), "[1.e+10 2.e+10]");
        assert_eq!(text(DType::F64, &[2], &[1e-300, 1.0]), "[1.e-300 1.e+000]");
        assert_eq!(
            text(DType::F64, &[3], &[f64::NAN, f64::NEG_INFINITY, 1.5]),
            "[ nan -inf  1.5]"
        );
        assert_eq!(
            text(DType::F64, &[2], &[f64::NAN, f64::INFINITY]),
            "[nan inf]"
        );
        // f16 switches to scientific notation from 1000 on.
        let h = |v: f64| f64::from(f16::from_f64(v));
        assert_eq!(text(DType::F16, &[2], &[h(0.1), h(100.0)]), "[  0.1 100. ]");
    }

    #[test]
    fn preview_empty_and_nested() {
        assert_eq!(text(DType::F32, &[2, 0], &[]), "[]");
        let v: Vec<f64> = (0..12).map(f64::from).collect();
        assert_eq!(
            text(DType::I64, &[2, 2, 3], &v),
            "[[[ 0  1  2]\n  [ 3  4  5]]\n\n [[ 6  7  8]\n  [ 9 10 11]]]"
        );
    }

    #[test]
    fn preview_wraps_lines_at_75_columns() {
        let v: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.25).collect();
        assert_eq!(
            text(DType::F32, &[30], &v),
            "[0.   0.25 0.5  0.75 1.   1.25 1.5  1.75 2.   2.25 2.5  2.75 3.   3.25\n \
             3.5  3.75 4.   4.25 4.5  4.75 5.   5.25 5.5  5.75 6.   6.25 6.5  6.75\n \
             7.   7.25]"
        );
    }

    /// A 10^10-element tensor prints from its corners only: reading any other element fails
    /// the test.
    #[test]
    fn preview_summary_reads_only_the_shown_elements() {
        let n = 100_000u64;
        let calls = std::cell::Cell::new(0);
        let shown = |i: usize| {
            let (r, c) = (i as u64 / n, i as u64 % n);
            let edge = |x: u64| x < 3 || x >= n - 3;
            assert!(
                edge(r) && edge(c),
                "read element ({r}, {c}), which is not shown"
            );
            calls.set(calls.get() + 1);
            (r * 10 + c % 10) as f64
        };
        let out = array_text(DType::I64, &[n, n], &shown);
        assert_eq!(calls.get(), 36);
        assert_eq!(
            out,
            "[[     0      1      2 ...      7      8      9]\n \
             [    10     11     12 ...     17     18     19]\n \
             [    20     21     22 ...     27     28     29]\n \
             ...\n \
             [999970 999971 999972 ... 999977 999978 999979]\n \
             [999980 999981 999982 ... 999987 999988 999989]\n \
             [999990 999991 999992 ... 999997 999998 999999]]"
        );
    }

    /// A deterministic pseudo-random stream (SplitMix64) in [0, 1).
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The arrays compared with NumPy: (dtype, shape, flat values, exact in the dtype).
    fn conformance_cases() -> Vec<(DType, Vec<u64>, Vec<f64>)> {
        let mut cases: Vec<(DType, Vec<u64>, Vec<f64>)> = Vec::new();
        let mut add = |dtype: DType, shape: &[u64], f: &mut dyn FnMut(usize) -> f64| {
            let n: u64 = shape.iter().product();
            let values = (0..n as usize)
                .map(|i| {
                    let v = f(i);
                    match dtype {
                        DType::F16 => f64::from(f16::from_f64(v)),
                        DType::F32 => f64::from(v as f32),
                        _ => v,
                    }
                })
                .collect();
            cases.push((dtype, shape.to_vec(), values));
        };
        let mut r = uniform(7);
        add(DType::F64, &[], &mut |_| std::f64::consts::PI);
        add(DType::F32, &[], &mut |_| 1e-5);
        add(DType::I32, &[], &mut |_| -7.0);
        add(DType::F16, &[], &mut |_| 65504.0);
        add(DType::F64, &[10], &mut |i| i as f64 * 0.1);
        add(DType::I64, &[2000], &mut |i| i as f64 * 37.0 - 5000.0);
        add(DType::F32, &[4, 5], &mut |_| r() * 8.0 - 4.0);
        add(DType::F64, &[3, 4], &mut |i| 10f64.powi(i as i32 - 5) * 1.5);
        add(DType::F32, &[2, 3, 4], &mut |i| i as f64);
        add(DType::I8, &[2, 2, 3, 3], &mut |i| i as f64 * 3.0 - 64.0);
        add(DType::F64, &[5], &mut |i| [-0.0, 1.0, 2.5, 0.0, -3.25][i]);
        add(DType::F64, &[6], &mut |i| {
            [f64::NAN, 1.5, f64::INFINITY, -2.0, f64::NEG_INFINITY, 0.125][i]
        });
        add(DType::F32, &[3], &mut |i| {
            [f64::NAN, f64::INFINITY, f64::NAN][i]
        });
        add(DType::F16, &[8], &mut |i| 0.1 * (i as f64 + 1.0) - 0.3);
        add(DType::F16, &[2, 3], &mut |i| {
            [1.0, 2000.0, -0.5, 3.0, 7.0, 0.25][i]
        });
        add(DType::F64, &[50, 50], &mut |_| r() * 2.0 - 1.0);
        add(DType::F32, &[20, 20, 20], &mut |i| (i % 97) as f64 / 8.0);
        add(DType::U8, &[256], &mut |i| i as f64);
        add(DType::U64, &[7], &mut |i| (1u64 << (i * 8)) as f64);
        add(DType::F64, &[4], &mut |i| [1e8, 2.5, -3.0, 7.0][i]);
        add(DType::I16, &[3, 7], &mut |i| (i as f64 - 10.0) * 1234.0);
        add(DType::F32, &[1, 1, 1, 1], &mut |_| 0.5);
        add(DType::F32, &[0, 3], &mut |_| 0.0);
        add(DType::F64, &[3, 0], &mut |_| 0.0);
        add(DType::F32, &[6], &mut |i| (i * i) as f64 * 100.0);
        add(DType::F64, &[5], &mut |i| 1.0 / (i as f64 + 3.0));
        add(DType::F64, &[1001], &mut |i| i as f64 / 3.0);
        add(DType::F64, &[1000], &mut |i| i as f64 / 7.0);
        add(DType::F32, &[2, 1000], &mut |_| r() * 1000.0);
        add(DType::F32, &[4], &mut |i| [1e-30, 1e30, -1.0, 0.0][i]);
        add(DType::F64, &[10, 10, 10, 10], &mut |i| {
            if i % 101 == 0 { f64::NAN } else { r() - 0.5 }
        });
        add(DType::F32, &[8], &mut |i| 999_999.0 + i as f64 * 0.5);
        add(DType::F64, &[4, 4], &mut |_| (r() - 0.5) * 1e-3);
        add(DType::I32, &[9, 12], &mut |i| {
            (i as f64 * 7919.0) % 2e5 - 1e5
        });
        add(DType::F32, &[7], &mut |i| i as f64 / 3.0);
        add(DType::F64, &[5], &mut |i| {
            [f64::NAN, -1e-5, 3e5, f64::NEG_INFINITY, 0.0][i]
        });
        add(DType::F64, &[1001, 2], &mut |i| i as f64 * 0.5);
        add(DType::I64, &[3, 400], &mut |i| (i as f64 - 600.0) * 3.0);
        add(DType::F16, &[40], &mut |_| r() * 2000.0 - 1000.0);
        add(DType::F64, &[2], &mut |i| [1e-4, 0.0999][i]);
        add(DType::F64, &[2], &mut |i| [1e-4, 0.1001][i]);
        // Random arrays: dtype, rank 0 to 4, sizes either side of the threshold, magnitudes
        // over twenty decades, and the odd nan, inf or negative zero.
        let dtypes = [
            DType::F16,
            DType::F32,
            DType::F64,
            DType::I8,
            DType::I32,
            DType::U16,
        ];
        for _ in 0..60 {
            let dtype = dtypes[(r() * dtypes.len() as f64) as usize];
            let rank = (r() * 5.0) as usize;
            let shape: Vec<u64> = (0..rank).map(|_| 1 + (r() * r() * 40.0) as u64).collect();
            let decades = r() * 20.0;
            let base = r() * 20.0 - 10.0;
            let mut value = |_: usize| {
                if !dtype.is_float() {
                    let (lo, span) = match dtype {
                        DType::I8 => (-128.0, 256.0),
                        DType::U16 => (0.0, 65536.0),
                        _ => (-1e9, 2e9),
                    };
                    return (lo + r() * span * decades / 20.0).floor();
                }
                match (r() * 100.0) as u32 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => -0.0,
                    3 => 0.0,
                    _ => {
                        let sign = if r() < 0.3 { -1.0 } else { 1.0 };
                        sign * 10f64.powf(base + r() * decades)
                    }
                }
            };
            add(dtype, &shape, &mut value);
        }
        cases
    }

    const NUMPY_SCRIPT: &str = r#"
import sys
import numpy as np
out = []
for line in sys.stdin.read().splitlines():
    dtype, shape, values = line.split(" ")
    values = np.array([float(v) for v in values.split(",") if v]).astype(dtype)
    if shape == "each":
        out.append("\n".join(str(x) for x in values))
    else:
        out.append(str(values.reshape(tuple(int(d) for d in shape.split(",") if d))))
h = np.arange(0, 0x10000, dtype=np.uint16).view(np.float16)
out.append("\n".join(str(x) for x in h[np.isfinite(h)]))
sys.stdout.write("\x1e".join(out))
"#;

    /// The same text as NumPy's `str()` on a spread of arrays, on 20,000 random f32 and f64
    /// scalars each and on every finite f16 scalar, when `WSP_TEST_PYTHON` names a Python with
    /// NumPy (`cargo xtask test` sets it).
    #[test]
    fn preview_matches_numpy_str() {
        let Some(python) = std::env::var_os("WSP_TEST_PYTHON") else {
            eprintln!("skipped: WSP_TEST_PYTHON is not set (`cargo xtask test` sets it)");
            return;
        };
        let cases = conformance_cases();
        let numpy_name = |d: DType| match d {
            DType::BF16 => "float32".to_string(),
            DType::F16 => "float16".to_string(),
            DType::F32 => "float32".to_string(),
            DType::F64 => "float64".to_string(),
            other => other
                .name()
                .to_lowercase()
                .replace('i', "int")
                .replace('u', "uint"),
        };
        let mut input = String::new();
        for (dtype, shape, values) in &cases {
            let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
            let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
            input += &format!(
                "{} {} {}\n",
                numpy_name(*dtype),
                shape.join(","),
                values.join(",")
            );
        }
        // Scalars from random bit patterns: every exponent, and ties between two shortest
        // candidates.
        let mut bits = uniform(11);
        let mut random_bits =
            || (bits() * (1u64 << 53) as f64) as u64 ^ ((bits() * 2048.0) as u64) << 53;
        let f32s: Vec<f64> = std::iter::repeat_with(|| f32::from_bits(random_bits() as u32))
            .filter(|v| v.is_finite())
            .take(20_000)
            .map(f64::from)
            .collect();
        let f64s: Vec<f64> = std::iter::repeat_with(|| f64::from_bits(random_bits()))
            .filter(|v| v.is_finite())
            .take(20_000)
            .collect();
        let sweeps = [(DType::F32, f32s), (DType::F64, f64s)];
        for (dtype, values) in &sweeps {
            let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
            input += &format!("{} each {}\n", numpy_name(*dtype), values.join(","));
        }
        let mut child = Command::new(&python)
            .args(["-c", NUMPY_SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("WSP_TEST_PYTHON runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write the arrays");
        let out = child.wait_with_output().expect("python finishes");
        assert!(out.status.success(), "the NumPy side of the test failed");
        let numpy = String::from_utf8(out.stdout).expect("UTF-8");
        let numpy: Vec<&str> = numpy.split('\x1e').collect();
        assert_eq!(numpy.len(), cases.len() + sweeps.len() + 1);
        for ((dtype, shape, values), expected) in cases.iter().zip(&numpy) {
            assert_eq!(
                &text(*dtype, shape, values),
                expected,
                "{} {shape:?}",
                dtype.name()
            );
        }
        for ((dtype, values), expected) in sweeps.iter().zip(&numpy[cases.len()..]) {
            assert_eq!(expected.lines().count(), values.len());
            for (&v, expected) in values.iter().zip(expected.lines()) {
                assert_eq!(
                    text(*dtype, &[], &[v]),
                    expected,
                    "{} scalar {v:?}",
                    dtype.name()
                );
            }
        }
        let f16s = numpy[cases.len() + sweeps.len()];
        let ours: Vec<String> = (0..=u16::MAX)
            .map(f16::from_bits)
            .filter(|h| h.is_finite())
            .map(|h| text(DType::F16, &[], &[f64::from(h)]))
            .collect();
        for (ours, theirs) in ours.iter().zip(f16s.lines()) {
            assert_eq!(ours, theirs, "f16 scalar");
        }
        assert_eq!(ours.len(), f16s.lines().count());
    }
}
