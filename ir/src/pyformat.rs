//! Python's text of the values a WSP file prints: `str()` and `repr()` of numbers, and the
//! format-spec mini-language of f-strings (`f"{ms:.2f}"`), by `rustpython-format`. The
//! analyzer formats what it knows when it checks; the runtime what only the run knows (a
//! program's stats), with the same rules.

use serde::{Deserialize, Serialize};

use num_bigint::BigInt;
use rustpython_format::{CharLen, FormatSpec, FormatSpecError};

/// A value an f-string field formats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PyValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl PyValue {
    /// Python's type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
        }
    }

    /// `str(value)`.
    pub fn str(&self) -> String {
        match self {
            PyValue::Str(s) => s.clone(),
            other => other.repr(),
        }
    }

    /// `repr(value)`.
    pub fn repr(&self) -> String {
        match self {
            PyValue::None => "None".into(),
            PyValue::Bool(b) => if *b { "True" } else { "False" }.into(),
            PyValue::Int(i) => i.to_string(),
            PyValue::Float(f) => float_repr(*f),
            PyValue::Str(s) => format!("{s:?}").replace('"', "'"),
        }
    }
}

/// `repr(float)`: the shortest digits that read back the same, positional for exponents -4
/// to 15 and scientific otherwise (`1e-06`, `1e+16`, `0.0001`, `2.0`, `inf`).
pub fn float_repr(f: f64) -> String {
    FormatSpec::parse("")
        .and_then(|s| s.format_float(f))
        .unwrap_or_else(|_| f.to_string())
}

/// `format(value, spec)` after the conversion (`!s`, `!r`, `!a`) if any, as an f-string
/// field `{value!conversion:spec}` shows it; Python's message if the spec does not apply.
pub fn format(value: &PyValue, conversion: Option<char>, spec: &str) -> Result<String, String> {
    let value = match conversion {
        None => value.clone(),
        Some('s') => PyValue::Str(value.str()),
        Some('r' | 'a') => PyValue::Str(value.repr()),
        Some(c) => {
            return Err(format!(
                "unknown conversion `!{c}`: it is `!s`, `!r` or `!a`"
            ));
        }
    };
    if let Some(padded) = grouped_width(&value, spec) {
        return padded;
    }
    let parsed = FormatSpec::parse(spec).map_err(|e| message(&e, spec, &value))?;
    let out = match &value {
        PyValue::None => {
            if spec.is_empty() {
                Ok("None".into())
            } else {
                Err(FormatSpecError::InvalidFormatSpecifier)
            }
        }
        PyValue::Bool(b) if spec.is_empty() => Ok(if *b { "True" } else { "False" }.into()),
        PyValue::Bool(b) => parsed.format_int(&BigInt::from(*b as i64)),
        PyValue::Int(i) => parsed.format_int(&BigInt::from(*i)),
        PyValue::Float(f) => parsed.format_float(*f),
        PyValue::Str(s) => parsed.format_string(&Text(s)),
    };
    out.map_err(|e| message(&e, spec, &value))
}

/// An f-string field `{expr=!conversion:spec}`: the `expr=` text (`debug`), then the value
/// formatted; `{x=}` shows the repr unless a conversion or spec says otherwise.
pub fn format_field(
    value: &PyValue,
    debug: Option<&str>,
    conversion: Option<char>,
    spec: &str,
) -> Result<String, String> {
    let conversion = match (debug, conversion, spec.is_empty()) {
        (Some(_), None, true) => Some('r'),
        (_, c, _) => c,
    };
    Ok(format!(
        "{}{}",
        debug.unwrap_or(""),
        format(value, conversion, spec)?
    ))
}

/// A number with a width and a thousands separator but no `0` flag (`{n:>8,}`): formatted
/// without the width, then padded as Python pads. rustpython-format 0.4.0 pads these with
/// zeros (`0,000,218`); `None` for every other spec.
fn grouped_width(value: &PyValue, spec: &str) -> Option<Result<String, String>> {
    if !matches!(
        value,
        PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_)
    ) {
        return None;
    }
    let chars: Vec<char> = spec.chars().collect();
    let is_align = |c: &char| "<>=^".contains(*c);
    let (fill, align, mut i) = match (chars.first(), chars.get(1)) {
        (Some(&f), Some(a)) if is_align(a) => (f, *a, 2),
        (Some(a), _) if is_align(a) => (' ', *a, 1),
        _ => (' ', '>', 0),
    };
    let flags_start = i;
    while chars.get(i).is_some_and(|c| "+- z#".contains(*c)) {
        i += 1;
    }
    let flags: String = chars[flags_start..i].iter().collect();
    if chars.get(i) == Some(&'0') {
        return None;
    }
    let width_start = i;
    while chars.get(i).is_some_and(char::is_ascii_digit) {
        i += 1;
    }
    let width: usize = chars[width_start..i]
        .iter()
        .collect::<String>()
        .parse()
        .ok()?;
    if !chars.get(i).is_some_and(|c| *c == ',' || *c == '_') {
        return None;
    }
    let rest: String = chars[i..].iter().collect();
    let text = match format(value, None, &format!("{flags}{rest}")) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    let pad = width.saturating_sub(text.chars().count());
    let fill_n = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    Some(Ok(match align {
        '<' => format!("{text}{}", fill_n(pad)),
        '^' => format!("{}{text}{}", fill_n(pad / 2), fill_n(pad - pad / 2)),
        '=' if text.starts_with(['+', '-', ' ']) => {
            format!("{}{}{}", &text[..1], fill_n(pad), &text[1..])
        }
        _ => format!("{}{text}", fill_n(pad)),
    }))
}

/// A string as `format_string` takes it.
struct Text<'a>(&'a str);

impl CharLen for Text<'_> {
    fn char_len(&self) -> usize {
        self.0.chars().count()
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

/// Python's `ValueError` text for a spec that does not apply to the value.
fn message(e: &FormatSpecError, spec: &str, value: &PyValue) -> String {
    let ty = value.type_name();
    match e {
        FormatSpecError::UnknownFormatCode(c, _) => {
            format!("unknown format code '{c}' for object of type '{ty}'")
        }
        FormatSpecError::PrecisionNotAllowed => {
            "precision not allowed in integer format specifier".into()
        }
        FormatSpecError::NotAllowed(what) => format!("{what} not allowed with '{ty}'"),
        FormatSpecError::UnspecifiedFormat(a, b) => format!("cannot specify '{a}' with '{b}'"),
        FormatSpecError::DecimalDigitsTooMany | FormatSpecError::PrecisionTooBig => {
            "too many decimal digits in format string".into()
        }
        _ => format!("invalid format specifier '{spec}' for object of type '{ty}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line as CPython 3.11 prints it.
    #[test]
    fn formats_as_python_does() {
        let cases: [(PyValue, Option<char>, &str, &str); 15] = [
            (PyValue::Int(218), None, ">8,", "     218"),
            (PyValue::Float(1234.5), None, "8,", " 1,234.5"),
            (PyValue::Int(1234567), None, "*^13,", "**1,234,567**"),
            (PyValue::Int(-1234), None, "=+8_", "-  1_234"),
            (PyValue::Int(218), None, "08,", "0,000,218"),
            (PyValue::Float(1.23456), None, ".2f", "1.23"),
            (PyValue::Float(0.5), None, "", "0.5"),
            (PyValue::Float(1e-6), None, "", "1e-06"),
            (PyValue::Float(2.0), None, "", "2.0"),
            (PyValue::Int(1234567), None, ",", "1,234,567"),
            (PyValue::Int(42), None, ">6", "    42"),
            (PyValue::Int(42), None, "08.3f", "0042.000"),
            (PyValue::Str("ab".into()), None, "^6", "  ab  "),
            (PyValue::Str("ab".into()), Some('r'), "", "'ab'"),
            (PyValue::Float(f64::INFINITY), None, "", "inf"),
        ];
        for (v, c, spec, want) in cases {
            assert_eq!(format(&v, c, spec).as_deref(), Ok(want), "{v:?} {spec}");
        }
        assert_eq!(
            format(&PyValue::Float(1.5), None, "d"),
            Err("unknown format code 'd' for object of type 'float'".into())
        );
    }
}
