//! The inputs (and text outputs) of this kernel session, for `history_request` as IPython
//! answers it: the session is 1 (0 also means the current one), lines are execution counts,
//! and a search pattern is a glob (`*`, `?`, `[...]`) over the whole input.

use jupyter_protocol::{HistoryEntry, HistoryRequest};

/// This kernel's session number in history entries (it keeps no earlier sessions).
const SESSION: usize = 1;

#[derive(Debug, Default)]
pub struct History {
    /// (execution count, input, the text/plain of the cell's value or "").
    entries: Vec<(usize, String, String)>,
}

impl History {
    pub fn record(&mut self, count: usize, input: &str, output: &str) {
        self.entries
            .push((count, input.to_string(), output.to_string()));
    }

    pub fn answer(&self, request: &HistoryRequest) -> Vec<HistoryEntry> {
        let selected: Vec<&(usize, String, String)> = match request {
            HistoryRequest::Tail { n, .. } => {
                let n = usize::try_from(*n).unwrap_or(0);
                self.entries[self.entries.len().saturating_sub(n)..]
                    .iter()
                    .collect()
            }
            HistoryRequest::Range {
                session,
                start,
                stop,
                ..
            } => {
                if !matches!(session, None | Some(0) | Some(1)) {
                    return Vec::new();
                }
                let (start, stop) = (i64::from(*start), i64::from(*stop));
                self.entries
                    .iter()
                    .filter(|(count, ..)| {
                        let c = *count as i64;
                        start <= c && (stop <= 0 || c < stop)
                    })
                    .collect()
            }
            HistoryRequest::Search {
                pattern, unique, n, ..
            } => {
                let Ok(glob) = glob::Pattern::new(pattern) else {
                    return Vec::new();
                };
                let mut found: Vec<&(usize, String, String)> = Vec::new();
                // The latest matches; with `unique`, the latest of each input.
                for e in self.entries.iter().rev() {
                    if glob.matches(&e.1) && !(*unique && found.iter().any(|f| f.1 == e.1)) {
                        found.push(e);
                    }
                }
                if let Ok(n) = usize::try_from(*n)
                    && n > 0
                {
                    found.truncate(n);
                }
                found.reverse();
                found
            }
        };
        let output = match request {
            HistoryRequest::Tail { output, .. }
            | HistoryRequest::Range { output, .. }
            | HistoryRequest::Search { output, .. } => *output,
        };
        selected
            .into_iter()
            .map(|(count, input, out)| {
                if output {
                    HistoryEntry::InputOutput(SESSION, *count, (input.clone(), out.clone()))
                } else {
                    HistoryEntry::Input(SESSION, *count, input.clone())
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(entries: Vec<HistoryEntry>) -> Vec<(usize, String)> {
        entries
            .into_iter()
            .map(|e| match e {
                HistoryEntry::Input(_, n, s) => (n, s),
                HistoryEntry::InputOutput(_, n, (s, o)) => (n, format!("{s} -> {o}")),
            })
            .collect()
    }

    fn history() -> History {
        let mut h = History::default();
        h.record(1, "N = 4", "");
        h.record(2, "N * 2", "8");
        h.record(3, "X", "X: f32[2]");
        h.record(4, "N * 2", "8");
        h
    }

    #[test]
    fn tail_range_and_search_answer_as_ipython() {
        let h = history();
        let tail = HistoryRequest::Tail {
            n: 2,
            output: true,
            raw: true,
        };
        assert_eq!(
            inputs(h.answer(&tail)),
            [(3, "X -> X: f32[2]".into()), (4, "N * 2 -> 8".into())]
        );
        let range = HistoryRequest::Range {
            session: Some(1),
            start: 2,
            stop: 4,
            output: false,
            raw: true,
        };
        assert_eq!(
            inputs(h.answer(&range)),
            [(2, "N * 2".into()), (3, "X".into())]
        );
        let other_session = HistoryRequest::Range {
            session: Some(7),
            start: 0,
            stop: 0,
            output: false,
            raw: true,
        };
        assert!(h.answer(&other_session).is_empty());
        let search = |pattern: &str, unique: bool, n: i32| HistoryRequest::Search {
            pattern: pattern.into(),
            unique,
            output: false,
            raw: true,
            n,
        };
        assert_eq!(
            inputs(h.answer(&search("N*", false, 0))),
            [
                (1, "N = 4".into()),
                (2, "N * 2".into()),
                (4, "N * 2".into())
            ]
        );
        assert_eq!(
            inputs(h.answer(&search("N*", true, 0))),
            [(1, "N = 4".into()), (4, "N * 2".into())]
        );
        assert_eq!(
            inputs(h.answer(&search("N*", false, 1))),
            [(4, "N * 2".into())]
        );
        assert!(h.answer(&search("[", false, 0)).is_empty());
    }
}
