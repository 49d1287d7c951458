//! The stats of a cell's runs: one row per `execute()`, as an aligned text table and an HTML
//! table.

use super::{MimeBundle, escape, simulated_time, thousands};

/// One execution's numbers, as `wsp run` prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    pub program: String,
    pub task_count: u64,
    pub total_cycles: u64,
    pub clock_ghz: f64,
    pub target: String,
    /// 0..=1: busy core-cycles over cores × total_cycles.
    pub utilisation: f64,
    pub compile_time_ms: f64,
    pub execute_time_ms: f64,
    pub cache_hit: bool,
}

const HEADERS: [&str; 8] = [
    "program",
    "tasks",
    "total cycles",
    "simulated time",
    "core utilisation",
    "compile ms",
    "execute ms",
    "cache hit",
];
/// Which columns are numbers (right-aligned).
const NUMERIC: [bool; 8] = [false, true, true, true, true, true, true, false];

/// The table of `rows`: text/plain and text/html.
pub fn stats(rows: &[RunStats]) -> MimeBundle {
    let cells: Vec<[String; 8]> = rows.iter().map(row_cells).collect();
    MimeBundle(vec![
        ("text/plain", text_table(&cells)),
        ("text/html", html_table(&cells)),
    ])
}

fn row_cells(r: &RunStats) -> [String; 8] {
    let utilisation = if r.utilisation.is_finite() {
        format!("{:.1}%", r.utilisation * 100.0)
    } else {
        "n/a".into()
    };
    [
        r.program.clone(),
        thousands(r.task_count),
        thousands(r.total_cycles),
        format!(
            "{} ({})",
            simulated_time(r.total_cycles, r.clock_ghz),
            r.target
        ),
        utilisation,
        milliseconds(r.compile_time_ms),
        milliseconds(r.execute_time_ms),
        if r.cache_hit { "yes" } else { "no" }.into(),
    ]
}

/// Two decimals below 10 ms (a cached compile takes well under one), one above.
fn milliseconds(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.1}")
    }
}

fn text_table(cells: &[[String; 8]]) -> String {
    // Widths in characters: "µs" is one column on a terminal, two bytes in UTF-8.
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String; 8]| {
        let padded: Vec<String> = row
            .iter()
            .zip(widths)
            .zip(NUMERIC)
            .map(|((c, w), numeric)| {
                if numeric {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = line(&HEADERS.map(String::from));
    out.push('\n');
    out.push_str(&widths.map(|w| "-".repeat(w)).join("  "));
    for row in cells {
        out.push('\n');
        out.push_str(&line(row));
    }
    out
}

fn html_table(cells: &[[String; 8]]) -> String {
    let mut out = String::from("<table class=\"wsp-stats\">\n<thead><tr>");
    for (h, numeric) in HEADERS.iter().zip(NUMERIC) {
        out += &format!("<th{}>{}</th>", align(numeric), escape(h));
    }
    out += "</tr></thead>\n<tbody>\n";
    for row in cells {
        out += "<tr>";
        for (c, numeric) in row.iter().zip(NUMERIC) {
            out += &format!("<td{}>{}</td>", align(numeric), escape(c));
        }
        out += "</tr>\n";
    }
    out += "</tbody>\n</table>";
    out
}

fn align(numeric: bool) -> &'static str {
    if numeric {
        " style=\"text-align:right\""
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn rows() -> Vec<RunStats> {
        vec![
            RunStats {
                program: "rmsnorm".into(),
                task_count: 32,
                total_cycles: 2045,
                clock_ghz: 1.85,
                target: "ascend_910b".into(),
                utilisation: 0.2671,
                compile_time_ms: 0.642,
                execute_time_ms: 1.116,
                cache_hit: false,
            },
            RunStats {
                program: "attn<\"v2\">&co".into(),
                task_count: 1_200_000,
                total_cycles: 45_000_000,
                clock_ghz: 1.5,
                target: "npu <dev>".into(),
                utilisation: 1.0,
                compile_time_ms: 1234.56,
                execute_time_ms: 98.04,
                cache_hit: true,
            },
        ]
    }

    #[test]
    fn render_stats_text() {
        let b = stats(&rows());
        expect![[r#"
            program            tasks  total cycles                    simulated time  core utilisation  compile ms  execute ms  cache hit
            -------------  ---------  ------------  --------------------------------  ----------------  ----------  ----------  ---------
            rmsnorm               32         2,045  1.1 µs at 1.85 GHz (ascend_910b)             26.7%        0.64        1.12  no
            attn<"v2">&co  1,200,000    45,000,000   30.00 ms at 1.5 GHz (npu <dev>)            100.0%      1234.6        98.0  yes"#]]
        .assert_eq(b.get("text/plain").unwrap());
    }

    #[test]
    fn render_stats_html_is_escaped() {
        let b = stats(&rows());
        assert_eq!(b.0[0].0, "text/plain", "text/plain comes first");
        expect![[r#"
            <table class="wsp-stats">
            <thead><tr><th>program</th><th style="text-align:right">tasks</th><th style="text-align:right">total cycles</th><th style="text-align:right">simulated time</th><th style="text-align:right">core utilisation</th><th style="text-align:right">compile ms</th><th style="text-align:right">execute ms</th><th>cache hit</th></tr></thead>
            <tbody>
            <tr><td>rmsnorm</td><td style="text-align:right">32</td><td style="text-align:right">2,045</td><td style="text-align:right">1.1 µs at 1.85 GHz (ascend_910b)</td><td style="text-align:right">26.7%</td><td style="text-align:right">0.64</td><td style="text-align:right">1.12</td><td>no</td></tr>
            <tr><td>attn&lt;&quot;v2&quot;&gt;&amp;co</td><td style="text-align:right">1,200,000</td><td style="text-align:right">45,000,000</td><td style="text-align:right">30.00 ms at 1.5 GHz (npu &lt;dev&gt;)</td><td style="text-align:right">100.0%</td><td style="text-align:right">1234.6</td><td style="text-align:right">98.0</td><td>yes</td></tr>
            </tbody>
            </table>"#]]
        .assert_eq(b.get("text/html").unwrap());
    }
}
