//! `program.trace` as a cell's value: its summary, as `print_summary()` prints it and as an
//! HTML table of the figures and each kernel's totals.

use super::{MimeBundle, escape, thousands};
use serde_json::Value;

/// The summary of `program`'s trace: `text` is `print_summary()`'s, `summary` the dict of
/// `summary()`.
pub fn trace_summary(program: &str, text: &str, summary: &Value) -> MimeBundle {
    let int = |k: &str| summary[k].as_u64().unwrap_or(0);
    let float = |k: &str| summary[k].as_f64().unwrap_or(0.0);
    let figures = [
        (
            "trace level",
            summary["trace_level"].as_str().unwrap_or("").to_string(),
        ),
        ("tasks", thousands(int("task_count"))),
        ("kernel runs", thousands(int("kernel_invocations"))),
        ("total cycles", thousands(int("total_cycles"))),
        (
            "critical path cycles",
            thousands(int("critical_path_cycles")),
        ),
        (
            "total time (simulated)",
            format!("{:.3} ms", float("total_time_ms")),
        ),
        (
            "kernel time (simulated)",
            format!("{:.3} ms", float("kernel_time_ms")),
        ),
        (
            "avg task time",
            format!("{:.2} µs", float("avg_task_time_us")),
        ),
        (
            "core utilisation",
            format!("{:.1}%", float("core_utilization") * 100.0),
        ),
    ];
    let mut html = format!(
        "<table class=\"wsp-trace\">\n<caption>{}.trace</caption>\n<tbody>\n",
        escape(program)
    );
    for (k, v) in &figures {
        html += &format!(
            "<tr><th style=\"text-align:left\">{}</th><td style=\"text-align:right\">{}</td></tr>\n",
            escape(k),
            escape(v)
        );
    }
    html += "</tbody>\n</table>";
    if let Some(kernels) = summary["kernels"].as_object().filter(|k| !k.is_empty()) {
        html += "\n<table class=\"wsp-trace-kernels\">\n<thead><tr><th>kernel</th><th style=\"text-align:right\">runs</th><th style=\"text-align:right\">cycles</th><th style=\"text-align:right\">time ms</th></tr></thead>\n<tbody>\n";
        for (name, k) in kernels {
            html += &format!(
                "<tr><td>{}</td><td style=\"text-align:right\">{}</td><td style=\"text-align:right\">{}</td><td style=\"text-align:right\">{:.3}</td></tr>\n",
                escape(name),
                thousands(k["count"].as_u64().unwrap_or(0)),
                thousands(k["cycles"].as_u64().unwrap_or(0)),
                k["time_ms"].as_f64().unwrap_or(0.0)
            );
        }
        html += "</tbody>\n</table>";
    }
    MimeBundle(vec![("text/plain", text.to_string()), ("text/html", html)])
}
