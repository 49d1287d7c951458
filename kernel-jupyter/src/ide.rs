//! Completion, inspection and `is_complete` for the notebook, from the analyzer (the same
//! answers the editor gets): a draft of the program with the cell's code in its place is
//! asked at the cursor.

use jupyter_protocol::IsCompleteReply;

use wsp_analysis::TextSize;

use crate::notebook::Notebook;

/// The matches for the name being typed at `cursor_pos` (in code points), and the code-point
/// range they replace.
pub fn complete(
    notebook: &mut Notebook,
    code: &str,
    cursor_pos: usize,
    cell_id: Option<&str>,
) -> (Vec<String>, usize, usize) {
    let (file, start) = notebook.with_draft(code, cell_id);
    let cursor_byte = byte_at(code, cursor_pos);
    // The identifier being typed ends at the cursor.
    let prefix_start = code[..cursor_byte]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(cursor_byte, |(i, _)| i);
    let prefix = &code[prefix_start..cursor_byte];
    let offset = draft_offset(code, start, cursor_pos);
    let mut matches: Vec<String> = wsp_ide::completions(notebook.db(), file, offset)
        .into_iter()
        .map(|c| c.insert.unwrap_or(c.label))
        .filter(|m| m.starts_with(prefix))
        .collect();
    // The analyzer's order (keywords, then the user's names, then pto_wsp's), first of each:
    // front ends show the matches as given.
    let mut seen = std::collections::HashSet::new();
    matches.retain(|m| seen.insert(m.clone()));
    let start_cp = code[..prefix_start].chars().count();
    (matches, start_cp, cursor_pos)
}

/// The hover text (markdown) of what is at the cursor.
pub fn inspect(
    notebook: &mut Notebook,
    code: &str,
    cursor_pos: usize,
    cell_id: Option<&str>,
) -> Option<String> {
    let (file, start) = notebook.with_draft(code, cell_id);
    // The cursor is usually just after the name (`pto.add|`): look there, then before it.
    let at = draft_offset(code, start, cursor_pos);
    wsp_ide::hover(notebook.db(), file, at)
        .or_else(|| {
            let before = draft_offset(code, start, cursor_pos.checked_sub(1)?);
            wsp_ide::hover(notebook.db(), file, before)
        })
        .map(|h| h.markdown)
}

/// Whether the code is a complete cell, as the parser sees it (and as Python's `codeop`
/// decides it): a bracket left open, a block header without its body, a continuation backslash
/// or an unterminated triple-quoted string at the end is "incomplete"; any other syntax error
/// is "invalid".
pub fn is_complete(code: &str) -> IsCompleteReply {
    use wsp_syntax::SyntaxKind as K;
    // Magic lines are blanked: they are complete lines of their own.
    let (code, _) = crate::magics::split(code);
    let code = code.as_str();
    let parse = wsp_syntax::parse(code);
    if parse.errors().is_empty() {
        return IsCompleteReply::complete();
    }
    let (tokens, lex_errors) = wsp_syntax::lex(code);
    let mut depth = 0i32;
    for t in &tokens {
        match t.kind {
            K::L_PAREN | K::L_BRACK | K::L_CURLY => depth += 1,
            K::R_PAREN | K::R_BRACK | K::R_CURLY => depth -= 1,
            _ => {}
        }
    }
    let body = code.trim_end();
    let last = body.lines().last().unwrap_or("");
    // A string the lexer could not close runs to the end of the code.
    let open_string = lex_errors.iter().any(|e| {
        let at = &code[usize::from(e.range.start())..];
        (at.starts_with("\"\"\"") || at.starts_with("'''"))
            || ["r", "b", "f", "u", "rb", "br", "fr", "rf"]
                .iter()
                .any(|p| at.len() > p.len() && at[p.len()..].starts_with("\"\"\""))
    });
    let open_block = last.trim_end().ends_with(':');
    if depth > 0 || open_string || open_block || body.ends_with('\\') {
        let indent: String = last
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let indent = if open_block { indent + "    " } else { indent };
        return IsCompleteReply::incomplete(indent);
    }
    IsCompleteReply::invalid()
}

/// The offset in a draft file of a cursor in the cell's code that starts at `cell_start`.
fn draft_offset(code: &str, cell_start: usize, cursor_pos: usize) -> TextSize {
    TextSize::from((cell_start + byte_at(code, cursor_pos)) as u32)
}

/// The byte offset of a cursor position, which Jupyter counts in code points.
fn byte_at(code: &str, cursor_pos: usize) -> usize {
    code.char_indices()
        .nth(cursor_pos)
        .map_or(code.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jupyter_protocol::IsCompleteReplyStatus as S;

    fn status(code: &str) -> (S, String) {
        let r = is_complete(code);
        (r.status, r.indent)
    }

    /// After `x=` in a task call, the user's own names come before pto_wsp's (`Channel`,
    /// `DType`, ...), as the analyzer orders them, not alphabetically.
    #[test]
    fn completion_keeps_the_analyzers_order() {
        let mut nb = crate::Notebook::new(std::env::temp_dir()).expect("a notebook");
        let cell = "F32 = DType.F32\nX = Tensor((4, 16, 16), F32)\nY = Tensor((4, 16, 16), F32)\n\n@kernel\ndef twice(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):\n    pto.store(y, pto.mul(x, 2.0))\n";
        let out = nb.execute(cell, Some("a"), &std::sync::atomic::AtomicUsize::new(0));
        assert!(out.error.is_none(), "{:?}", out.error);
        let code = "@workload\ndef w():\n    for i in P(Dense[4]):\n        twice[i](x=";
        let (matches, _, _) = complete(&mut nb, code, code.chars().count(), Some("b"));
        let at = |name: &str| matches.iter().position(|m| m == name);
        let (x, channel) = (at("X").unwrap(), at("Channel").unwrap());
        assert!(x < channel, "{matches:?}");
    }

    #[test]
    fn is_complete_follows_the_parser() {
        assert_eq!(status("x = 1").0, S::Complete);
        assert_eq!(status("for i in P(batch):\n    pass\n").0, S::Complete);
        assert_eq!(status("for i in P(batch):"), (S::Incomplete, "    ".into()));
        assert_eq!(
            status("def k(x):\n    if x:"),
            (S::Incomplete, "        ".into())
        );
        assert_eq!(status("f(1,").0, S::Incomplete);
        assert_eq!(status("X = Tensor((4,\n  8)").0, S::Incomplete);
        assert_eq!(status("x = 1 + \\").0, S::Incomplete);
        assert_eq!(status("s = \"\"\"doc").0, S::Incomplete);
        assert_eq!(status("x = )").0, S::Invalid);
        assert_eq!(status("1 +").0, S::Invalid);
        assert_eq!(status("x = (1))").0, S::Invalid);
        assert_eq!(status("%trace on").0, S::Complete);
        assert_eq!(status("x = 1\n%bind seq=4").0, S::Complete);
        assert_eq!(
            status("%trace on\nfor i in P(b):"),
            (S::Incomplete, "    ".into())
        );
    }
}
