//! An exploration's summary as a cell's value: `print_summary()`'s text, and an HTML table of
//! the program as written and the ranked configurations beside an SVG chart of each
//! configuration's cycles, in the space's order, the best marked and the program as written a
//! dashed line.

use super::{MimeBundle, escape, thousands};
use wsp_ir::explore::{Exploration, Outcome, Results};

/// At most this many configurations are tabled: a space of thousands is read from
/// `wsp tune --json`, not from a table.
const SHOWN: usize = 64;

pub fn exploration(e: &Exploration, r: &Results) -> MimeBundle {
    let text = r.print_summary(e).trim_end().to_string();
    let ranked = r.ranked();
    let mut html = format!(
        "<div class=\"wsp-explore\">\n<p><code>{}</code>: {} configurations, ranked by {}</p>\n",
        escape(&e.label),
        r.scored.len(),
        match e.metric {
            wsp_ir::explore::Metric::Cycles => "simulated cycles",
            wsp_ir::explore::Metric::Wall => "wall-clock time",
        }
    );
    html += &chart(e, r);
    html += "<table class=\"wsp-explore-ranking\">\n<thead><tr><th>rank</th><th style=\"text-align:right\">total_cycles</th><th style=\"text-align:right\">critical_path_cycles</th><th style=\"text-align:right\">core_utilization cube</th><th style=\"text-align:right\">vector</th><th style=\"text-align:right\">ms</th><th style=\"text-align:left\">configuration</th></tr></thead>\n<tbody>\n";
    // The program as written first: what every rank is measured against.
    let base = r
        .baseline_score()
        .map(|s| ("base".to_string(), &e.baseline, s, r.best.is_none()));
    let rows = ranked.iter().take(SHOWN).enumerate().map(|(rank, (i, s))| {
        (
            (rank + 1).to_string(),
            &e.configs[*i as usize],
            *s,
            r.best == Some(*i),
        )
    });
    for (rank, c, s, best) in base.into_iter().chain(rows) {
        html += &format!(
            "<tr{}><td>{}</td><td style=\"text-align:right\">{}</td><td style=\"text-align:right\">{}</td><td style=\"text-align:right\">{:.1}%</td><td style=\"text-align:right\">{:.1}%</td><td style=\"text-align:right\">{:.4}</td><td style=\"text-align:left\"><code>{}</code></td></tr>\n",
            if best {
                " style=\"font-weight:bold\""
            } else {
                ""
            },
            rank,
            thousands(s.total_cycles),
            thousands(s.critical_path_cycles),
            s.cube_utilization * 100.0,
            s.vector_utilization * 100.0,
            s.time_ms,
            escape(&c.label())
        );
    }
    html += "</tbody>\n</table>\n";
    if ranked.len() > SHOWN {
        html += &format!(
            "<p>{} more; <code>wsp tune FILE --json OUT.json</code> writes every one.</p>\n",
            ranked.len() - SHOWN
        );
    }
    let unranked: Vec<String> = r
        .scored
        .iter()
        .filter_map(|s| {
            let c = &e.configs[s.config? as usize];
            match &s.outcome {
                Outcome::Ran(_) => None,
                Outcome::Rejected(why) => Some(format!(
                    "<li><code>{}</code>: rejected: {}</li>",
                    escape(&c.label()),
                    escape(why)
                )),
                Outcome::Failed(why) => Some(format!(
                    "<li><code>{}</code>: failed: {}</li>",
                    escape(&c.label()),
                    escape(why)
                )),
            }
        })
        .collect();
    if !unranked.is_empty() {
        html += &format!("<ul>\n{}\n</ul>\n", unranked.join("\n"));
    }
    html += "</div>";
    MimeBundle(vec![("text/plain", text), ("text/html", html)])
}

/// At most this many bars: past it the chart shows the best ones, ranked.
const CHARTED: usize = 1024;

/// Bars of each configuration's cycles in the space's order (the best `CHARTED` in rank
/// order for a larger space), the best in another colour and labelled, a configuration that
/// did not run as an empty slot.
fn chart(e: &Exploration, r: &Results) -> String {
    let in_order = r.scored.len() <= CHARTED;
    let bars: Vec<(Option<u32>, Option<&wsp_ir::explore::Score>)> = if in_order {
        r.scored
            .iter()
            .map(|s| match &s.outcome {
                Outcome::Ran(score) => (s.config, Some(score)),
                _ => (s.config, None),
            })
            .collect()
    } else {
        let ranked = r.ranked();
        let best: Vec<(u32, wsp_ir::explore::Score)> = ranked.into_iter().take(CHARTED).collect();
        return chart_bars(
            e,
            r,
            &best
                .iter()
                .map(|(i, s)| (Some(*i), Some(s)))
                .collect::<Vec<_>>(),
            false,
        );
    };
    chart_bars(e, r, &bars, true)
}

fn chart_bars(
    e: &Exploration,
    r: &Results,
    bars: &[(Option<u32>, Option<&wsp_ir::explore::Score>)],
    in_order: bool,
) -> String {
    let base = r.baseline_score().map(|s| r.key(&s));
    let most = bars
        .iter()
        .filter_map(|(_, s)| s.map(|s| r.key(s)))
        .chain(base)
        .fold(0.0f64, f64::max);
    let (width, height) = (768.0, 120.0);
    let step = (width / bars.len().max(1) as f64).clamp(0.75, 15.0);
    let bar = (step * 0.8).max(0.5);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{}\" role=\"img\"><title>{} per configuration{}; the best is marked</title>\n",
        step * bars.len() as f64 + 30.0,
        height + 16.0,
        match e.metric {
            wsp_ir::explore::Metric::Cycles => "simulated cycles",
            wsp_ir::explore::Metric::Wall => "wall-clock time",
        },
        if in_order { "" } else { ", the best ranked" }
    );
    for (k, (config, score)) in bars.iter().enumerate() {
        let Some(score) = score else { continue };
        let x = 15.0 + k as f64 * step;
        let h = if most > 0.0 {
            (r.key(score) / most * height).max(1.0)
        } else {
            1.0
        };
        let best = config.is_some() && *config == r.best;
        let label = config.map_or(String::new(), |i| e.configs[i as usize].label());
        svg += &format!(
            "<rect x=\"{x:.2}\" y=\"{:.1}\" width=\"{bar:.2}\" height=\"{h:.1}\" fill=\"{}\"><title>{}: {} cycles</title></rect>\n",
            height - h,
            if best { "#d62728" } else { "#1f77b4" },
            escape(&label),
            score.total_cycles
        );
        if best {
            svg += &format!(
                "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">best</text>\n",
                x + bar / 2.0,
                height + 13.0
            );
        }
    }
    // The program as written, which every bar is measured against.
    if let Some(b) = base.filter(|_| most > 0.0) {
        let y = height - b / most * height;
        svg += &format!(
            "<line x1=\"15\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#555\" stroke-dasharray=\"4 3\"><title>the program as written</title></line>\n",
            15.0 + step * bars.len() as f64
        );
    }
    svg + "</svg>\n"
}

/// Explorations under way: each one's configurations scored so far, of how many.
pub fn exploring(rows: &[(String, u64, u64)]) -> MimeBundle {
    let mut text = String::new();
    let mut html = String::from(
        "<table class=\"wsp-exploring\">\n<thead><tr><th style=\"text-align:left\">exploring</th><th style=\"text-align:right\">scored</th><th style=\"text-align:left\">progress</th></tr></thead>\n<tbody>\n",
    );
    for (label, done, total) in rows {
        let share = if *total > 0 {
            *done as f64 / *total as f64
        } else {
            1.0
        };
        text += &format!("{label}: {done}/{total} configurations scored\n");
        html += &format!(
            "<tr><td style=\"text-align:left\"><code>{}</code></td><td style=\"text-align:right\">{}/{}</td><td><progress value=\"{done}\" max=\"{total}\">{:.0}%</progress></td></tr>\n",
            escape(label),
            thousands(*done),
            thousands(*total),
            share * 100.0
        );
    }
    html += "</tbody>\n</table>";
    MimeBundle(vec![("text/plain", text), ("text/html", html)])
}
