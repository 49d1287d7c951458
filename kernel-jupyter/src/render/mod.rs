//! Rich outputs: MIME bundles with a text/plain fallback for run stats, the simulated
//! timeline and tensors.

mod explore;
mod stats;
mod tensor;
mod timeline;
mod trace;

pub use explore::{exploration, exploring};
pub use stats::{RunStats, stats};
pub use tensor::{tensor, tensor_npy};
pub use timeline::timeline;
pub use trace::trace_summary;

/// One output's representations, text/plain first; values are the strings Jupyter puts in a
/// MIME bundle (image/png base64-encoded).
#[derive(Debug, Clone, PartialEq)]
pub struct MimeBundle(pub Vec<(&'static str, String)>);

impl MimeBundle {
    /// The representation of `mime`, if the bundle has one.
    pub fn get(&self, mime: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(m, _)| *m == mime)
            .map(|(_, v)| v.as_str())
    }
}

/// `text` with the five characters that are markup in HTML and XML escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // XML 1.0 forbids most control characters even when escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Simulated time of `cycles` at the target's clock: "12.4 µs at 1.85 GHz".
fn simulated_time(cycles: u64, clock_ghz: f64) -> String {
    if !(clock_ghz.is_finite() && clock_ghz > 0.0) {
        return format!("{cycles} cycles (no clock)");
    }
    let us = cycles as f64 / (clock_ghz * 1e3);
    let time = if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.1} µs")
    };
    format!("{time} at {clock_ghz} GHz")
}

/// `1234567` as "1,234,567".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_escape_and_numbers() {
        assert_eq!(
            escape("<a href=\"x\">&'\u{1}"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\u{FFFD}"
        );
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(simulated_time(2045, 1.85), "1.1 µs at 1.85 GHz");
        assert_eq!(simulated_time(22_940_000, 1.85), "12.40 ms at 1.85 GHz");
        assert_eq!(simulated_time(5, 0.0), "5 cycles (no clock)");
    }
}
