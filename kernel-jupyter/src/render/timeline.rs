//! The simulated timeline of a run as an SVG: one row per AICPU and per busy core, a span per
//! task coloured by kernel, from the Chrome trace the runtime writes (`runtime/src/trace.rs`).

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::Value;

use super::{MimeBundle, escape, simulated_time, thousands};

const WIDTH: f64 = 900.0;
/// Room for the row labels.
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 10.0;
const ROW_HEIGHT: f64 = 16.0;
const ROW_GAP: f64 = 4.0;
/// Past this many spans, spans within one pixel of each other on a row are merged.
const MAX_RECTS: usize = 20_000;
/// Rows drawn at most; the rest are counted in the footer.
const MAX_ROWS: usize = 256;
/// Kernels named in the legend at most.
const MAX_LEGEND: usize = 24;
/// The trace's process ids (`trace.rs`).
const AICPU_PID: u64 = 1;
const CORE_PID: u64 = 2;
/// Tableau 20: distinct at a glance, assigned to kernels in order of first appearance.
const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#a0cbe8", "#ffbe7d", "#ff9d9a", "#86bcb6", "#8cd17d", "#f1ce63",
    "#d4a6c8", "#fabfd2", "#d7b5a6", "#79706e",
];
/// Merged spans of more than one kernel.
const MIXED: &str = "#555555";

/// One "X" event.
struct Span {
    row: (u64, u64),
    /// Drawn extent, in cycles.
    start: f64,
    end: f64,
    kernel: usize,
    /// Index of the event in `traceEvents`, for its hover text.
    event: usize,
}

/// The timeline of a Chrome trace as written by `wsp run --trace`: image/svg+xml and a
/// text/plain summary. A trace that is not of that shape is an error naming what is wrong.
pub fn timeline(trace: &Value) -> Result<MimeBundle, String> {
    let events = trace
        .as_object()
        .ok_or("trace is not a JSON object")?
        .get("traceEvents")
        .and_then(Value::as_array)
        .ok_or("trace has no `traceEvents` array")?;
    let other = trace.get("otherData");
    let clock_ghz = other
        .and_then(|o| o.get("clock_ghz"))
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c > 0.0)
        .ok_or("trace has no positive `otherData.clock_ghz`")?;
    let target = other
        .and_then(|o| o.get("target"))
        .and_then(Value::as_str)
        .unwrap_or("unknown target");
    let cycles_per_us = clock_ghz * 1e3;

    let mut thread_names: HashMap<(u64, u64), &str> = HashMap::new();
    let mut process_names: HashMap<u64, &str> = HashMap::new();
    let mut kernels: Vec<&str> = Vec::new();
    let mut kernel_ids: HashMap<&str, usize> = HashMap::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut total_cycles = 0u64;
    for (i, e) in events.iter().enumerate() {
        let field = |name: &str| {
            e.get(name)
                .ok_or_else(|| format!("trace event {i} has no `{name}`"))
        };
        let ph = field("ph")?
            .as_str()
            .ok_or_else(|| format!("trace event {i}: `ph` is not a string"))?;
        let uint = |name: &str| {
            field(name)?
                .as_u64()
                .ok_or_else(|| format!("trace event {i}: `{name}` is not a non-negative integer"))
        };
        match ph {
            "M" => {
                let label = e
                    .get("args")
                    .and_then(|a| a.get("name"))
                    .and_then(Value::as_str);
                match (field("name")?.as_str(), label) {
                    (Some("thread_name"), Some(label)) => {
                        thread_names.insert((uint("pid")?, uint("tid")?), label);
                    }
                    (Some("process_name"), Some(label)) => {
                        process_names.insert(uint("pid")?, label);
                    }
                    _ => {}
                }
            }
            "X" => {
                let number = |name: &str| {
                    field(name)?
                        .as_f64()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| format!("trace event {i}: `{name}` is not a time"))
                };
                let (ts, dur) = (number("ts")?, number("dur")?);
                let name = field("name")?
                    .as_str()
                    .ok_or_else(|| format!("trace event {i}: `name` is not a string"))?;
                let kernel = kernel_name(name);
                let next = kernels.len();
                let kernel = *kernel_ids.entry(kernel).or_insert_with(|| {
                    kernels.push(kernel);
                    next
                });
                let (start, end) = (ts * cycles_per_us, (ts + dur) * cycles_per_us);
                let end_cycle = e
                    .get("args")
                    .and_then(|a| a.get("end_cycle"))
                    .and_then(Value::as_u64);
                // Rounded, not ceiled: µs times the clock is off by a hair from whole cycles.
                total_cycles = total_cycles
                    .max(end.round() as u64)
                    .max(end_cycle.unwrap_or(0));
                spans.push(Span {
                    row: (uint("pid")?, uint("tid")?),
                    start,
                    end,
                    kernel,
                    event: i,
                });
            }
            _ => {}
        }
    }

    // Rows: AICPUs, then cores, then anything else, each in thread order.
    let mut rows: Vec<(u64, u64)> = spans.iter().map(|s| s.row).collect();
    rows.sort_unstable_by_key(|&(pid, tid)| (pid_rank(pid), pid, tid));
    rows.dedup();
    let hidden_rows = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    let row_of: HashMap<(u64, u64), usize> =
        rows.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    let named_cores = thread_names.keys().filter(|k| k.0 == CORE_PID).count();
    let busy_cores: std::collections::HashSet<(u64, u64)> = spans
        .iter()
        .filter(|s| s.row.0 == CORE_PID && thread_names.contains_key(&s.row))
        .map(|s| s.row)
        .collect();
    let idle_cores = named_cores.saturating_sub(busy_cores.len());
    let tasks = spans.iter().filter(|s| s.row.0 == CORE_PID).count();

    let summary = format!(
        "timeline: {} tasks on {} cores, {} cycles ({})",
        thousands(tasks as u64),
        busy_cores.len(),
        thousands(total_cycles),
        simulated_time(total_cycles, clock_ghz)
    );

    let plot = WIDTH - LEFT - RIGHT;
    let scale = plot / total_cycles.max(1) as f64;
    // Per row, spans in time order, merged when there are too many to draw one by one.
    let mut by_row: Vec<Vec<&Span>> = vec![Vec::new(); rows.len()];
    for s in &spans {
        if let Some(&r) = row_of.get(&s.row) {
            by_row[r].push(s);
        }
    }
    let merge = spans.len() > MAX_RECTS;
    // When merging, rects on a row start at least `pitch` pixels apart, so there are at most
    // MAX_RECTS plus one per row.
    let pitch = (rows.len() as f64 * plot / MAX_RECTS as f64).max(1.0);
    let mut svg = String::new();
    let rows_height = rows.len() as f64 * (ROW_HEIGHT + ROW_GAP);
    let axis_y = TOP + rows_height + 4.0;
    let legend_count = kernels.len().min(MAX_LEGEND);
    let legend_y = axis_y + 40.0;
    let legend_lines = legend_count.div_ceil(4);
    let footer_y = legend_y + legend_lines as f64 * 16.0 + 12.0;
    let height = footer_y + 10.0;
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(svg, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    for (r, &(pid, tid)) in rows.iter().enumerate() {
        let y = TOP + r as f64 * (ROW_HEIGHT + ROW_GAP);
        let label = match thread_names.get(&(pid, tid)) {
            Some(name) => (*name).to_string(),
            None => format!(
                "{} {tid}",
                process_names.get(&pid).copied().unwrap_or("pid")
            ),
        };
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + ROW_HEIGHT - 4.0,
            escape(&label)
        );
        let row = &mut by_row[r];
        row.sort_by(|a, b| a.start.total_cmp(&b.start));
        let mut i = 0;
        while i < row.len() {
            // The run of spans starting within `pitch` of the first or within a pixel of the
            // run's end.
            let first = row[i];
            let mut end = first.end;
            let mut j = i + 1;
            if merge {
                while j < row.len()
                    && ((row[j].start - first.start) * scale < pitch
                        || (row[j].start - end) * scale < 1.0)
                {
                    end = end.max(row[j].end);
                    j += 1;
                }
            }
            let group = &row[i..j];
            let x = LEFT + first.start * scale;
            let w = ((end - first.start) * scale).max(0.5);
            let same_kernel = group.iter().all(|s| s.kernel == first.kernel);
            let fill = if same_kernel {
                PALETTE[first.kernel % PALETTE.len()]
            } else {
                MIXED
            };
            let title = if group.len() == 1 {
                span_title(&events[first.event], first)
            } else {
                let kernel = if same_kernel {
                    kernels[first.kernel]
                } else {
                    "mixed kernels"
                };
                format!(
                    "{} tasks ({kernel}) · cycles {}–{}",
                    group.len(),
                    first.start.round() as u64,
                    end.round() as u64
                )
            };
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{ROW_HEIGHT}\" fill=\"{fill}\"><title>{}</title></rect>",
                escape(&title)
            );
            i = j;
        }
    }
    // Time axis: about eight ticks at 1, 2 or 5 × 10^k cycles.
    let _ = writeln!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{axis_y:.1}\" x2=\"{:.1}\" y2=\"{axis_y:.1}\" stroke=\"#333\"/>",
        WIDTH - RIGHT
    );
    let step = tick_step(total_cycles.max(1));
    let mut tick = 0u64;
    while tick <= total_cycles.max(1) {
        let x = LEFT + tick as f64 * scale;
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.2}\" y1=\"{axis_y:.1}\" x2=\"{x:.2}\" y2=\"{:.1}\" stroke=\"#333\"/>\
             <text x=\"{x:.2}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{x:.2}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#777\">{} µs</text>",
            axis_y + 4.0,
            axis_y + 15.0,
            thousands(tick),
            axis_y + 27.0,
            trim_float(tick as f64 / cycles_per_us)
        );
        tick = match tick.checked_add(step) {
            Some(t) => t,
            None => break,
        };
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#777\">cycles</text>",
        LEFT - 6.0,
        axis_y + 15.0
    );
    for (k, name) in kernels.iter().take(legend_count).enumerate() {
        let x = LEFT + (k % 4) as f64 * (plot / 4.0);
        let y = legend_y + (k / 4) as f64 * 16.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\">{}</text>",
            y - 9.0,
            PALETTE[k % PALETTE.len()],
            x + 14.0,
            escape(name)
        );
    }
    let mut footer = format!("{summary} · {target}");
    if idle_cores > 0 {
        footer += &format!(" · {idle_cores} of {named_cores} cores idle (not shown)");
    }
    if kernels.len() > legend_count {
        footer += &format!(" · {} more kernels", kernels.len() - legend_count);
    }
    if hidden_rows > 0 {
        footer += &format!(" · {hidden_rows} more rows not shown");
    }
    if merge {
        footer += " · spans within a pixel merged";
    }
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"{footer_y:.1}\" fill=\"#333\">{}</text>",
        escape(&footer)
    );
    svg.push_str("</svg>\n");
    Ok(MimeBundle(vec![
        ("text/plain", summary),
        ("image/svg+xml", svg),
    ]))
}

/// The kernel of a span name: `rmsnorm_tile[0, 1]` → `rmsnorm_tile`, `collective #3` →
/// `collective`.
fn kernel_name(name: &str) -> &str {
    let end = name.find(['[', '#']).unwrap_or(name.len());
    name[..end].trim_end()
}

/// AICPUs first, then cores, then other processes.
fn pid_rank(pid: u64) -> u8 {
    match pid {
        AICPU_PID => 0,
        CORE_PID => 1,
        _ => 2,
    }
}

/// "rmsnorm_tile[0, 1] · task 3 · cycles 200–645": the task's execution cycles from `args`;
/// on an AICPU row, the dispatch the bar shows, then when the task runs.
fn span_title(event: &Value, span: &Span) -> String {
    let name = event.get("name").and_then(Value::as_str).unwrap_or("");
    let args = event.get("args");
    let arg = |k: &str| args.and_then(|a| a.get(k)).and_then(Value::as_u64);
    let task = arg("task").map_or("?".into(), |t| t.to_string());
    let drawn = (span.start.round() as u64, span.end.round() as u64);
    let (a, b) = match (arg("start_cycle"), arg("end_cycle")) {
        (Some(a), Some(b)) => (a, b),
        _ => drawn,
    };
    if span.row.0 == AICPU_PID {
        let (d0, d1) = drawn;
        return format!("dispatch of {name} · task {task} · cycles {d0}–{d1}, runs {a}–{b}");
    }
    format!("{name} · task {task} · cycles {a}–{b}")
}

/// A tick spacing of 1, 2 or 5 × 10^k giving at most about eight ticks over `total`.
fn tick_step(total: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if total / s <= 8 {
                return s;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// At most three decimals, trailing zeros dropped.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;
    use serde_json::json;

    /// Checks that `text` is well-formed XML as far as an SVG viewer cares: balanced tags,
    /// quoted attributes, no bare `<` or `&` in text.
    pub(crate) fn assert_well_formed(text: &str) {
        let mut stack: Vec<&str> = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('<') {
            let body = &rest[..open];
            for (i, _) in body.match_indices('&') {
                let entity = &body[i..body[i..].find(';').map_or(body.len(), |e| i + e + 1)];
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].contains(&entity),
                    "bare `&` in {body:?}"
                );
            }
            let close = rest[open..].find('>').expect("unclosed tag") + open;
            let tag = &rest[open + 1..close];
            assert!(!tag.contains('<'), "`<` inside tag {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in {tag:?}"
            );
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(name), "mismatched </{name}>");
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().expect("tag name"));
            }
            rest = &rest[close + 1..];
        }
        assert!(stack.is_empty(), "unclosed elements {stack:?}");
    }

    fn small_trace() -> Value {
        json!({
            "traceEvents": [
                {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "AICPUs"}},
                {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "Cores"}},
                {"ph": "M", "name": "thread_name", "pid": 1, "tid": 0, "args": {"name": "AICPU 0"}},
                {"ph": "M", "name": "thread_name", "pid": 2, "tid": 0, "args": {"name": "cube 0"}},
                {"ph": "M", "name": "thread_name", "pid": 2, "tid": 1, "args": {"name": "vector <0>"}},
                {"ph": "M", "name": "thread_name", "pid": 2, "tid": 2, "args": {"name": "vector 1"}},
                {"ph": "X", "name": "mm<f16>[0]", "pid": 1, "tid": 0, "ts": 0.0, "dur": 0.1,
                 "args": {"task": 0, "start_cycle": 200, "end_cycle": 1200}},
                {"ph": "X", "name": "mm<f16>[0]", "pid": 2, "tid": 0, "ts": 0.1, "dur": 0.5,
                 "args": {"task": 0, "start_cycle": 200, "end_cycle": 1200}},
                {"ph": "X", "name": "add & scale[1, 2]", "pid": 2, "tid": 1, "ts": 0.6, "dur": 0.2,
                 "args": {"task": 1, "start_cycle": 1200, "end_cycle": 1600}},
                {"ph": "X", "name": "barrier", "pid": 2, "tid": 3, "ts": 0.8, "dur": 0.0,
                 "args": {"task": 2, "start_cycle": 1600, "end_cycle": 1600}}
            ],
            "displayTimeUnit": "ns",
            "otherData": {"target": "tiny <npu>", "clock_ghz": 2.0}
        })
    }

    #[test]
    fn render_timeline_small_trace() {
        let b = timeline(&small_trace()).unwrap();
        assert_eq!(b.0[0].0, "text/plain");
        expect!["timeline: 3 tasks on 2 cores, 1,600 cycles (0.8 µs at 2 GHz)"]
            .assert_eq(b.get("text/plain").unwrap());
        let svg = b.get("image/svg+xml").unwrap();
        assert_well_formed(svg);
        expect![[r##"
            <svg xmlns="http://www.w3.org/2000/svg" width="900" height="172" viewBox="0 0 900 172" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="104.0" y="22.0" text-anchor="end">AICPU 0</text>
            <rect x="110.00" y="10.0" width="96.25" height="16" fill="#4e79a7"><title>dispatch of mm&lt;f16&gt;[0] · task 0 · cycles 0–200, runs 200–1200</title></rect>
            <text x="104.0" y="42.0" text-anchor="end">cube 0</text>
            <rect x="206.25" y="30.0" width="481.25" height="16" fill="#4e79a7"><title>mm&lt;f16&gt;[0] · task 0 · cycles 200–1200</title></rect>
            <text x="104.0" y="62.0" text-anchor="end">vector &lt;0&gt;</text>
            <rect x="687.50" y="50.0" width="192.50" height="16" fill="#f28e2b"><title>add &amp; scale[1, 2] · task 1 · cycles 1200–1600</title></rect>
            <text x="104.0" y="82.0" text-anchor="end">Cores 3</text>
            <rect x="880.00" y="70.0" width="0.50" height="16" fill="#e15759"><title>barrier · task 2 · cycles 1600–1600</title></rect>
            <line x1="110" y1="94.0" x2="880.0" y2="94.0" stroke="#333"/>
            <line x1="110.00" y1="94.0" x2="110.00" y2="98.0" stroke="#333"/><text x="110.00" y="109.0" text-anchor="middle">0</text><text x="110.00" y="121.0" text-anchor="middle" fill="#777">0 µs</text>
            <line x1="206.25" y1="94.0" x2="206.25" y2="98.0" stroke="#333"/><text x="206.25" y="109.0" text-anchor="middle">200</text><text x="206.25" y="121.0" text-anchor="middle" fill="#777">0.1 µs</text>
            <line x1="302.50" y1="94.0" x2="302.50" y2="98.0" stroke="#333"/><text x="302.50" y="109.0" text-anchor="middle">400</text><text x="302.50" y="121.0" text-anchor="middle" fill="#777">0.2 µs</text>
            <line x1="398.75" y1="94.0" x2="398.75" y2="98.0" stroke="#333"/><text x="398.75" y="109.0" text-anchor="middle">600</text><text x="398.75" y="121.0" text-anchor="middle" fill="#777">0.3 µs</text>
            <line x1="495.00" y1="94.0" x2="495.00" y2="98.0" stroke="#333"/><text x="495.00" y="109.0" text-anchor="middle">800</text><text x="495.00" y="121.0" text-anchor="middle" fill="#777">0.4 µs</text>
            <line x1="591.25" y1="94.0" x2="591.25" y2="98.0" stroke="#333"/><text x="591.25" y="109.0" text-anchor="middle">1,000</text><text x="591.25" y="121.0" text-anchor="middle" fill="#777">0.5 µs</text>
            <line x1="687.50" y1="94.0" x2="687.50" y2="98.0" stroke="#333"/><text x="687.50" y="109.0" text-anchor="middle">1,200</text><text x="687.50" y="121.0" text-anchor="middle" fill="#777">0.6 µs</text>
            <line x1="783.75" y1="94.0" x2="783.75" y2="98.0" stroke="#333"/><text x="783.75" y="109.0" text-anchor="middle">1,400</text><text x="783.75" y="121.0" text-anchor="middle" fill="#777">0.7 µs</text>
            <line x1="880.00" y1="94.0" x2="880.00" y2="98.0" stroke="#333"/><text x="880.00" y="109.0" text-anchor="middle">1,600</text><text x="880.00" y="121.0" text-anchor="middle" fill="#777">0.8 µs</text>
            <text x="104.0" y="109.0" text-anchor="end" fill="#777">cycles</text>
            <rect x="110.0" y="125.0" width="10" height="10" fill="#4e79a7"/><text x="124.0" y="134.0">mm&lt;f16&gt;</text>
            <rect x="302.5" y="125.0" width="10" height="10" fill="#f28e2b"/><text x="316.5" y="134.0">add &amp; scale</text>
            <rect x="495.0" y="125.0" width="10" height="10" fill="#e15759"/><text x="509.0" y="134.0">barrier</text>
            <text x="110" y="162.0" fill="#333">timeline: 3 tasks on 2 cores, 1,600 cycles (0.8 µs at 2 GHz) · tiny &lt;npu&gt; · 1 of 3 cores idle (not shown)</text>
            </svg>
        "##]].assert_eq(svg);
    }

    #[test]
    fn render_timeline_of_a_real_trace() {
        let text = include_str!("testdata/rmsnorm_trace.json");
        let trace: Value = serde_json::from_str(text).unwrap();
        let b = timeline(&trace).unwrap();
        expect!["timeline: 12 tasks on 12 cores, 1,045 cycles (0.6 µs at 1.85 GHz)"]
            .assert_eq(b.get("text/plain").unwrap());
        let svg = b.get("image/svg+xml").unwrap();
        assert_well_formed(svg);
        // 12 tasks: each a dispatch on an AICPU and a run on a core.
        assert_eq!(svg.matches("<title>rmsnorm_tile[").count(), 12);
        assert_eq!(svg.matches("<title>dispatch of rmsnorm_tile[").count(), 12);
        assert!(svg.contains("<title>rmsnorm_tile[0, 0] · task 0 · cycles 200–645</title>"));
        assert!(svg.contains(
            "<title>dispatch of rmsnorm_tile[0, 0] · task 0 · cycles 0–200, runs 200–645</title>"
        ));
        let labels: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<text") && l.contains("text-anchor=\"end\">"))
            .map(|l| l.rsplit_once("\">").unwrap().1.trim_end_matches("</text>"))
            .collect();
        expect!["AICPU 0, AICPU 1, AICPU 2, AICPU 3, vector 0, vector 1, vector 2, vector 3, vector 4, vector 5, vector 6, vector 7, vector 8, vector 9, vector 10, vector 11"].assert_eq(&labels.join(", "));
        let footer = svg.lines().rev().nth(1).unwrap();
        assert!(footer.contains("cores idle (not shown)"), "{footer}");
    }

    fn many_spans(rows: u64, per_row: u64, spacing: u64) -> Value {
        let mut events = Vec::new();
        for t in 0..rows * per_row {
            let (core, k) = (t % rows, t / rows);
            let start = k * spacing;
            events.push(
                json!({"ph": "X", "name": format!("k{}[{t}]", k % 3), "pid": 2, "tid": core,
                "ts": start as f64 / 1e3, "dur": 0.001,
                "args": {"task": t, "start_cycle": start, "end_cycle": start + 1}}),
            );
        }
        json!({"traceEvents": events, "otherData": {"target": "t", "clock_ghz": 1.0}})
    }

    /// Past the cap, spans closer than a pixel share a rect: 100,000 back-to-back spans on 4
    /// cores draw as one rect per core.
    #[test]
    fn render_timeline_merges_spans_within_a_pixel() {
        let b = timeline(&many_spans(4, 25_000, 1)).unwrap();
        let svg = b.get("image/svg+xml").unwrap();
        assert_well_formed(svg);
        // Background, one per core, three legend swatches.
        assert_eq!(svg.matches("<rect").count(), 1 + 4 + 3);
        assert!(svg.contains("<title>25000 tasks (mixed kernels) · cycles 0–25000</title>"));
        assert!(svg.contains("spans within a pixel merged"));
    }

    /// 80,000 spans two pixels apart on 200 cores draw as at most the cap's rects.
    #[test]
    fn render_timeline_output_is_bounded() {
        let b = timeline(&many_spans(200, 400, 1000)).unwrap();
        let svg = b.get("image/svg+xml").unwrap();
        assert_well_formed(svg);
        let rects = svg.matches("<rect").count();
        assert!(rects <= MAX_RECTS + 200 + 1 + 3, "{rects} rects");
        assert!(rects > MAX_RECTS / 2, "{rects} rects");
        assert!(svg.len() < 4_000_000, "{} bytes", svg.len());
    }

    #[test]
    fn render_timeline_rejects_malformed_traces() {
        let clock = json!({"clock_ghz": 1.0});
        let cases = [
            json!("trace"),
            json!({"events": []}),
            json!({"traceEvents": []}),
            json!({"traceEvents": [], "otherData": {"clock_ghz": -1.0}}),
            json!({"traceEvents": [{"name": "x"}], "otherData": clock}),
            json!({"traceEvents": [{"ph": "X", "name": "k", "pid": 2, "tid": 0, "dur": 1.0}], "otherData": clock}),
            json!({"traceEvents": [{"ph": "X", "name": "k", "pid": 2, "tid": 0, "ts": "0", "dur": 1.0}], "otherData": clock}),
            json!({"traceEvents": [{"ph": "X", "name": "k", "pid": -2, "tid": 0, "ts": 0.0, "dur": 1.0}], "otherData": clock}),
            json!({"traceEvents": [{"ph": "X", "name": 3, "pid": 2, "tid": 0, "ts": 0.0, "dur": 1.0}], "otherData": clock}),
            json!({"traceEvents": [{"ph": "M", "name": "thread_name", "pid": 2, "tid": "a", "args": {"name": "c"}}], "otherData": clock}),
        ];
        let errors: Vec<String> = cases.iter().map(|t| timeline(t).unwrap_err()).collect();
        expect![[r#"
            trace is not a JSON object
            trace has no `traceEvents` array
            trace has no positive `otherData.clock_ghz`
            trace has no positive `otherData.clock_ghz`
            trace event 0 has no `ph`
            trace event 0 has no `ts`
            trace event 0: `ts` is not a time
            trace event 0: `pid` is not a non-negative integer
            trace event 0: `name` is not a string
            trace event 0: `tid` is not a non-negative integer"#]]
        .assert_eq(&errors.join("\n"));
    }

    #[test]
    fn render_timeline_ticks() {
        assert_eq!(tick_step(1), 1);
        assert_eq!(tick_step(2045), 500);
        assert_eq!(tick_step(8), 1);
        assert_eq!(tick_step(9), 2);
        assert_eq!(tick_step(u64::MAX), 5_000_000_000_000_000_000);
        assert_eq!(kernel_name("rmsnorm_tile[0, 1]"), "rmsnorm_tile");
        assert_eq!(kernel_name("collective #3"), "collective");
        assert_eq!(kernel_name("barrier"), "barrier");
    }
}
