//! Suppression comments, in ruff's spellings so that habits carry over:
//! - `# noqa: WSP306, WSP501` drops those codes' diagnostics starting on the comment's line;
//! - `# wsp: noqa` drops every code's on its line (`# wsp: noqa: CODES` names some);
//! - `# wsp: noqa-file: WSP501` (or `# wsp: noqa-file`, every code) anywhere in the file drops
//!   them in the whole file.
//!
//! A bare `# noqa` is honoured too, as a blanket for its line, but it may be another linter's,
//! so it is never reported unused; and in `# noqa: ...` only `WSP` codes are this tool's. Every
//! other suppression that drops nothing is WSP003, with a fix that removes it.

use std::collections::{HashMap, HashSet};

use wsp_syntax::{SyntaxKind, TextRange, TextSize};

use crate::diagnostics::{Applicability, Code, Diagnostic, FileFix};
use crate::files::File;

/// Where a suppression holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Scope {
    /// The line that starts at this offset.
    Line(TextSize),
    File,
}

/// One suppression comment's directive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Suppression {
    scope: Scope,
    /// From its `#` to the end of its last code.
    range: TextRange,
    /// What removing the directive removes: the comment with its line or the spaces before it,
    /// when the comment holds nothing else; else empty, at the first space before its `#`.
    whole_comment: TextRange,
    /// `None`: every code. Each named code with its range in the comment.
    codes: Option<Vec<(String, TextRange)>>,
    /// A bare `# noqa`, which may be another tool's: never reported unused.
    foreign: bool,
}

/// The file's suppression comments, in order. Every directive says `noqa` (in any case), so
/// only the comments holding it are read, found from the text: the query runs on every edit,
/// and walking every token of a 10,000-line file took most of an edit's time.
#[salsa::tracked(returns(ref))]
pub fn suppressions(db: &dyn salsa::Database, file: File) -> Vec<Suppression> {
    let text = file.text(db);
    let mut out = Vec::new();
    let mut root = None;
    let mut last_comment = None;
    for q in memchr::memchr2_iter(b'q', b'Q', text.as_bytes()) {
        let Some(word) = q.checked_sub(2).and_then(|n| text.get(n..q + 2)) else {
            continue;
        };
        if !word.eq_ignore_ascii_case("noqa") {
            continue;
        }
        let root = root.get_or_insert_with(|| file.parse(db).syntax_node());
        let Some(token) = root
            .token_at_offset(TextSize::from(q as u32))
            .right_biased()
            .filter(|t| t.kind() == SyntaxKind::COMMENT)
        else {
            continue;
        };
        let range = token.text_range();
        // A comment may say `noqa` twice (`# noqa: WSP101  # wsp: noqa-file`).
        if last_comment.replace(range) == Some(range) {
            continue;
        }
        let line = line_start(text, range.start());
        for mut s in parse_comment(token.text(), range, line) {
            if !s.whole_comment.is_empty() {
                s.whole_comment = removal(text, line, range);
            }
            out.push(s);
        }
    }
    out
}

/// What removing the comment at `comment` removes: the spaces before it after code, or its
/// whole line (with the line break) when it stands alone.
fn removal(text: &str, line: TextSize, comment: TextRange) -> TextRange {
    let before = &text[usize::from(line)..usize::from(comment.start())];
    if before.trim().is_empty() {
        let end = usize::from(comment.end());
        let rest = &text[end..];
        let newline = if rest.starts_with("\r\n") {
            2
        } else {
            usize::from(rest.starts_with('\n'))
        };
        TextRange::new(line, TextSize::from((end + newline) as u32))
    } else {
        let spaces = before.len() - before.trim_end().len();
        TextRange::new(
            comment.start() - TextSize::from(spaces as u32),
            comment.end(),
        )
    }
}

/// The offset of the start of the line holding `at`.
fn line_start(text: &str, at: TextSize) -> TextSize {
    let at = usize::from(at).min(text.len());
    TextSize::from(text[..at].rfind('\n').map_or(0, |i| i + 1) as u32)
}

/// The directives of one comment (`# text  # noqa: WSP101` has one after other text).
fn parse_comment(comment: &str, range: TextRange, line: TextSize) -> Vec<Suppression> {
    let mut out = Vec::new();
    let at = |i: usize| range.start() + TextSize::from(i as u32);
    for (hash, _) in comment.match_indices('#') {
        let body = &comment[hash + 1..];
        let mut i = hash + 1 + (body.len() - body.trim_start().len());
        let rest = &comment[i..];
        let (scope, foreign_if_bare) = if let Some(r) = strip_prefix_ci(rest, "wsp:") {
            i += 4 + (r.len() - r.trim_start().len());
            let r = r.trim_start();
            if strip_prefix_ci(r, "noqa-file").is_some() {
                i += 9;
                (Scope::File, false)
            } else if strip_prefix_ci(r, "noqa").is_some() {
                i += 4;
                (Scope::Line(line), false)
            } else {
                continue;
            }
        } else if strip_prefix_ci(rest, "noqa").is_some() {
            i += 4;
            (Scope::Line(line), true)
        } else {
            continue;
        };
        // `noqa` must end there (`# noqa-ish` is not one).
        if comment[i..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            continue;
        }
        let mut end = i;
        let after = &comment[i..];
        let codes = match after.trim_start().strip_prefix(':') {
            None => None,
            Some(list) => {
                let mut j = comment.len() - list.len();
                let mut codes = Vec::new();
                // Codes separated by commas and spaces, up to the first word that is no code.
                loop {
                    let skipped = comment[j..]
                        .chars()
                        .take_while(|c| *c == ',' || c.is_whitespace())
                        .map(char::len_utf8)
                        .sum::<usize>();
                    let start = j + skipped;
                    let len = comment[start..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .map(char::len_utf8)
                        .sum::<usize>();
                    let word = &comment[start..start + len];
                    let is_code = len >= 2
                        && word.starts_with(|c: char| c.is_ascii_uppercase())
                        && word.ends_with(|c: char| c.is_ascii_digit());
                    if !is_code {
                        break;
                    }
                    codes.push((word.to_string(), TextRange::new(at(start), at(start + len))));
                    end = start + len;
                    j = start + len;
                }
                if codes.is_empty() {
                    // `# noqa:` with nothing after it: a blanket, as ruff reads it.
                    None
                } else {
                    Some(codes)
                }
            }
        };
        let foreign = foreign_if_bare && codes.is_none();
        // In `# noqa: ...`, codes of other tools are theirs.
        let codes = match (codes, foreign_if_bare) {
            (Some(c), true) => {
                let ours: Vec<_> = c
                    .into_iter()
                    .filter(|(c, _)| c.starts_with("WSP"))
                    .collect();
                if ours.is_empty() {
                    continue;
                }
                Some(ours)
            }
            (c, _) => c,
        };
        let whole = hash == 0 && comment[end..].trim().is_empty();
        // Removing it alone also removes the spaces before its `#`.
        let spaces = comment[..hash].len() - comment[..hash].trim_end().len();
        out.push(Suppression {
            scope,
            range: TextRange::new(at(hash), at(end)),
            whole_comment: if whole {
                range
            } else {
                TextRange::empty(at(hash - spaces))
            },
            codes,
            foreign,
        });
    }
    out
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    // `get`: the text may hold a character that spans the prefix's length.
    s.get(..prefix.len())
        .filter(|head| head.eq_ignore_ascii_case(prefix))
        .map(|_| &s[prefix.len()..])
}

/// `diagnostics` without those the file's suppression comments drop; with `report_unused`, a
/// WSP003 warning for each suppression (or named code) that dropped nothing, placed in order.
pub fn apply_suppressions(
    db: &dyn salsa::Database,
    file: File,
    diagnostics: Vec<Diagnostic>,
    report_unused: bool,
) -> Vec<Diagnostic> {
    let all = suppressions(db, file);
    if all.is_empty() {
        return diagnostics;
    }
    let text = file.text(db);
    // The suppressions of each line, and of the whole file, by index: a diagnostic looks only
    // at its own line's, however many the file has.
    let mut by_line: HashMap<TextSize, Vec<usize>> = HashMap::new();
    let mut file_wide = Vec::new();
    for (i, s) in all.iter().enumerate() {
        match s.scope {
            Scope::Line(l) => by_line.entry(l).or_default().push(i),
            Scope::File => file_wide.push(i),
        }
    }
    // (suppression, code index or usize::MAX for every code) that dropped something.
    let mut used: HashSet<(usize, usize)> = HashSet::new();
    let mut kept = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        let line = line_start(text, d.range.start());
        let code = d.code.as_str();
        let here = by_line.get(&line).map_or(&[][..], Vec::as_slice);
        // The first suppression in the file that covers it.
        let by = here
            .iter()
            .chain(&file_wide)
            .filter_map(|&i| match &all[i].codes {
                None => Some((i, usize::MAX)),
                Some(codes) => codes.iter().position(|(c, _)| c == code).map(|k| (i, k)),
            })
            .min_by_key(|&(i, _)| i);
        // An unused-suppression warning is not itself dropped by a blanket.
        match by {
            Some(u) if d.code != Code::UnusedSuppression => {
                used.insert(u);
            }
            _ => kept.push(d),
        }
    }
    if report_unused {
        for (i, s) in all.iter().enumerate() {
            if s.foreign {
                continue;
            }
            let unused: Vec<usize> = match &s.codes {
                None if used.contains(&(i, usize::MAX)) => Vec::new(),
                None => vec![usize::MAX],
                Some(codes) => (0..codes.len())
                    .filter(|k| !used.contains(&(i, *k)))
                    .collect(),
            };
            if unused.is_empty() {
                continue;
            }
            kept.push(unused_warning(s, &unused));
        }
        kept.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    }
    kept
}

/// WSP003 for `unused` (indices into the suppression's codes, or `usize::MAX` for its blanket),
/// with the fix that removes them.
fn unused_warning(s: &Suppression, unused: &[usize]) -> Diagnostic {
    let scope = match s.scope {
        Scope::Line(_) => "on its line",
        Scope::File => "in this file",
    };
    let all_unused = match &s.codes {
        None => true,
        Some(codes) => unused.len() == codes.len(),
    };
    let (range, message, edits, title) = if all_unused {
        let what = match &s.codes {
            None => "every code".to_string(),
            Some(codes) => listed(codes.iter().map(|(c, _)| c.as_str())),
        };
        // The whole directive goes (with the comment, if it holds nothing else).
        let remove = if s.whole_comment.is_empty() {
            TextRange::new(s.whole_comment.start(), s.range.end())
        } else {
            s.whole_comment
        };
        (
            s.range,
            format!("this suppression of {what} drops no diagnostic {scope}"),
            vec![(remove, String::new())],
            "remove the unused suppression".to_string(),
        )
    } else {
        let codes = s.codes.as_ref().expect("some codes used");
        let names = listed(unused.iter().map(|&k| codes[k].0.as_str()));
        // The list is written anew with the codes that are used.
        let kept: Vec<&str> = (0..codes.len())
            .filter(|k| !unused.contains(k))
            .map(|k| codes[k].0.as_str())
            .collect();
        let list = TextRange::new(codes[0].1.start(), codes[codes.len() - 1].1.end());
        let range = unused
            .iter()
            .map(|&k| codes[k].1)
            .reduce(|a, b| a.cover(b))
            .expect("one unused code");
        (
            range,
            format!(
                "{names} in this suppression {} no diagnostic {scope}",
                if unused.len() == 1 { "drops" } else { "drop" }
            ),
            vec![(list, kept.join(", "))],
            format!("remove {names} from the suppression"),
        )
    };
    let message = match &s.codes {
        Some(codes) => {
            let unknown: Vec<&str> = codes
                .iter()
                .map(|(c, _)| c.as_str())
                .filter(|c| !Code::ALL.iter().any(|k| k.as_str() == *c))
                .collect();
            if unknown.is_empty() {
                message
            } else {
                format!("{message} ({} is no WSP code)", listed(unknown.into_iter()))
            }
        }
        None => message,
    };
    Diagnostic {
        code: Code::UnusedSuppression,
        severity: Code::UnusedSuppression.severity(),
        range,
        message,
        related: Vec::new(),
        fix: Some(FileFix {
            title,
            edits,
            applicability: Applicability::MachineApplicable,
        }),
    }
}

fn listed<'a>(codes: impl Iterator<Item = &'a str>) -> String {
    let codes: Vec<String> = codes.map(|c| format!("`{c}`")).collect();
    match codes.as_slice() {
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => String::new(),
    }
}

/// The edit that suppresses `code` on the line holding `at`: its code appended to the line's
/// `# noqa: ...` list, or `  # noqa: CODE` written at the line's end. `None` where a comment
/// cannot go: the line ends inside a string (a triple-quoted one spanning lines), or `code` is a
/// syntax error, which no comment can excuse.
pub fn suppress_edit(
    db: &dyn salsa::Database,
    file: File,
    at: TextSize,
    code: Code,
) -> Option<(TextRange, String)> {
    if code == Code::Syntax || code == Code::UnusedSuppression {
        return None;
    }
    let text = file.text(db);
    let line = line_start(text, at);
    let rest = &text[usize::from(line)..];
    let content = rest.split(['\n', '\r']).next().unwrap_or("");
    let end = line + TextSize::from(content.trim_end().len() as u32);
    if let Some(list) = suppressions(db, file)
        .iter()
        .find_map(|s| match (&s.scope, &s.codes) {
            (Scope::Line(l), Some(codes)) if *l == line => codes.last().map(|c| c.1.end()),
            _ => None,
        })
    {
        return Some((TextRange::empty(list), format!(", {}", code.as_str())));
    }
    // The end of the line must not be inside a token that goes on (a multi-line string).
    if end > line {
        let root = file.parse(db).syntax_node();
        let token = root
            .token_at_offset(end - TextSize::from(1))
            .right_biased()?;
        if token.kind() == SyntaxKind::STRING && token.text_range().end() > end {
            return None;
        }
    }
    Some((
        TextRange::empty(end),
        format!("  # noqa: {}", code.as_str()),
    ))
}
