//! The requests, each answered by one analyzer query and converted to the protocol's types.
//! Nothing here decides a rule; positions are converted with `Lines`.

use std::collections::HashMap;

use tower_lsp_server::ls_types::*;
use wsp_analysis::{Applicability, Database, File, TextRange};
use wsp_ide::{CompletionKind as Kind, FoldKind, InlayKind, SymbolKind as Sym, TokenClass};

use crate::convert::{self, Lines};

/// The token types and modifiers of semantic highlighting, in legend order.
const TOKEN_TYPES: &[(TokenClass, SemanticTokenType)] = &[
    (TokenClass::Keyword, SemanticTokenType::KEYWORD),
    (TokenClass::Comment, SemanticTokenType::COMMENT),
    (TokenClass::String, SemanticTokenType::STRING),
    (TokenClass::Number, SemanticTokenType::NUMBER),
    (TokenClass::Decorator, SemanticTokenType::DECORATOR),
    (TokenClass::Namespace, SemanticTokenType::NAMESPACE),
    (TokenClass::Type, SemanticTokenType::TYPE),
    (TokenClass::Function, SemanticTokenType::FUNCTION),
    (TokenClass::Method, SemanticTokenType::METHOD),
    (TokenClass::Member, SemanticTokenType::ENUM_MEMBER),
    (TokenClass::Parameter, SemanticTokenType::PARAMETER),
    (TokenClass::Variable, SemanticTokenType::VARIABLE),
];
const TOKEN_MODIFIERS: &[SemanticTokenModifier] = &[
    SemanticTokenModifier::DECLARATION,
    SemanticTokenModifier::READONLY,
    SemanticTokenModifier::DEFAULT_LIBRARY,
];

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "(".into(), ",".into()]),
            ..Default::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: Some(vec!["=".into()]),
            work_done_progress_options: Default::default(),
        }),
        inlay_hint_provider: Some(OneOf::Left(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: TOKEN_TYPES.iter().map(|(_, t)| t.clone()).collect(),
                    token_modifiers: TOKEN_MODIFIERS.to_vec(),
                },
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, FIX_ALL]),
            ..Default::default()
        })),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        ..Default::default()
    }
}

fn markdown(value: String) -> MarkupContent {
    MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }
}

pub fn hover(db: &Database, file: File, at: Position) -> Option<Hover> {
    let lines = Lines::new(file.text(db));
    let h = wsp_ide::hover(db, file, lines.offset(at))?;
    Some(Hover {
        contents: HoverContents::Markup(markdown(h.markdown)),
        range: Some(lines.range(h.range)),
    })
}

pub fn definition(db: &Database, file: File, uri: &Uri, at: Position) -> Option<Location> {
    let lines = Lines::new(file.text(db));
    let n = wsp_ide::name_at(db, file, lines.offset(at))?;
    Some(Location::new(uri.clone(), lines.range(n.definition)))
}

pub fn references(
    db: &Database,
    file: File,
    uri: &Uri,
    at: Position,
    declaration: bool,
) -> Vec<Location> {
    let lines = Lines::new(file.text(db));
    let all = wsp_ide::references(db, file, lines.offset(at));
    // The definition comes first.
    all.into_iter()
        .skip(usize::from(!declaration))
        .map(|r| Location::new(uri.clone(), lines.range(r)))
        .collect()
}

pub fn prepare_rename(db: &Database, file: File, at: Position) -> Option<PrepareRenameResponse> {
    let lines = Lines::new(file.text(db));
    let n = wsp_ide::name_at(db, file, lines.offset(at))?;
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: lines.range(n.range),
        placeholder: n.name,
    })
}

pub fn rename(
    db: &Database,
    file: File,
    uri: &Uri,
    at: Position,
    new_name: &str,
) -> Result<WorkspaceEdit, String> {
    let lines = Lines::new(file.text(db));
    let ranges = wsp_ide::rename(db, file, lines.offset(at), new_name)?;
    let edits = ranges
        .into_iter()
        .map(|r| TextEdit::new(lines.range(r), new_name.to_string()))
        .collect();
    Ok(WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)])))
}

fn symbol_kind(k: Sym) -> SymbolKind {
    match k {
        Sym::Kernel | Sym::Workload => SymbolKind::FUNCTION,
        Sym::Tensor | Sym::Program => SymbolKind::VARIABLE,
        Sym::Axis => SymbolKind::ENUM,
        Sym::Channel => SymbolKind::EVENT,
        Sym::Constant => SymbolKind::CONSTANT,
        Sym::Parameter | Sym::Variable => SymbolKind::VARIABLE,
    }
}

#[allow(deprecated)] // `deprecated` is a required field of the protocol's type.
fn document_symbol(s: wsp_ide::FileSymbol, lines: &Lines) -> DocumentSymbol {
    DocumentSymbol {
        name: s.name,
        detail: (!s.detail.is_empty()).then_some(s.detail),
        kind: symbol_kind(s.kind),
        tags: None,
        deprecated: None,
        range: lines.range(s.range),
        selection_range: lines.range(s.name_range),
        children: (!s.children.is_empty()).then(|| {
            s.children
                .into_iter()
                .map(|c| document_symbol(c, lines))
                .collect()
        }),
    }
}

pub fn document_symbols(db: &Database, file: File) -> Vec<DocumentSymbol> {
    let lines = Lines::new(file.text(db));
    wsp_ide::file_symbols(db, file)
        .into_iter()
        .map(|s| document_symbol(s, &lines))
        .collect()
}

/// The definitions of every analyzed file whose name contains the query's characters in
/// order, ignoring case (as editors filter).
pub fn workspace_symbols(
    db: &Database,
    files: &[(File, Uri)],
    query: &str,
) -> Vec<WorkspaceSymbol> {
    let query = query.to_lowercase();
    let matches = |name: &str| {
        let mut chars = name.chars().flat_map(char::to_lowercase);
        query.chars().all(|q| chars.any(|c| c == q))
    };
    let mut out = Vec::new();
    for (file, uri) in files {
        let lines = Lines::new(file.text(db));
        for s in wsp_ide::file_symbols(db, *file) {
            if matches(&s.name) {
                out.push(WorkspaceSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    tags: None,
                    container_name: file
                        .path(db)
                        .file_name()
                        .map(|n| n.to_string_lossy().into()),
                    location: OneOf::Left(Location::new(uri.clone(), lines.range(s.name_range))),
                    data: None,
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

pub fn completion(db: &Database, file: File, at: Position) -> Vec<CompletionItem> {
    let lines = Lines::new(file.text(db));
    wsp_ide::completions(db, file, lines.offset(at))
        .into_iter()
        .enumerate()
        .map(|(i, c)| CompletionItem {
            kind: Some(match c.kind {
                Kind::Op => CompletionItemKind::FUNCTION,
                Kind::Member => CompletionItemKind::ENUM_MEMBER,
                Kind::Method => CompletionItemKind::METHOD,
                Kind::Keyword => CompletionItemKind::FIELD,
                Kind::Builtin => CompletionItemKind::MODULE,
                Kind::Symbol(Sym::Kernel | Sym::Workload) => CompletionItemKind::FUNCTION,
                Kind::Symbol(Sym::Constant) => CompletionItemKind::CONSTANT,
                Kind::Symbol(Sym::Axis) => CompletionItemKind::ENUM,
                Kind::Symbol(_) => CompletionItemKind::VARIABLE,
            }),
            detail: (!c.detail.is_empty()).then_some(c.detail),
            documentation: (!c.doc.is_empty())
                .then(|| Documentation::MarkupContent(markdown(c.doc))),
            insert_text: c.insert,
            // The analyzer's order: keywords and locals before module names and builtins.
            sort_text: Some(format!("{i:04}")),
            label: c.label,
            ..Default::default()
        })
        .collect()
}

pub fn signature_help(db: &Database, file: File, at: Position) -> Option<SignatureHelp> {
    let lines = Lines::new(file.text(db));
    let h = wsp_ide::signature_help(db, file, lines.offset(at))?;
    let utf16 = |byte: usize| h.label[..byte].encode_utf16().count() as u32;
    let parameters = h
        .params
        .iter()
        .map(|&(a, b)| ParameterInformation {
            label: ParameterLabel::LabelOffsets([utf16(a), utf16(b)]),
            documentation: None,
        })
        .collect();
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label: h.label.clone(),
            documentation: (!h.doc.is_empty())
                .then(|| Documentation::MarkupContent(markdown(h.doc.clone()))),
            parameters: Some(parameters),
            active_parameter: h.active.map(|i| i as u32),
        }],
        active_signature: Some(0),
        active_parameter: h.active.map(|i| i as u32),
    })
}

pub fn inlay_hints(db: &Database, file: File, range: Range) -> Vec<InlayHint> {
    let lines = Lines::new(file.text(db));
    let range = TextRange::new(
        lines.offset(range.start),
        lines.offset(range.end).max(lines.offset(range.start)),
    );
    wsp_ide::inlay_hints(db, file, range)
        .into_iter()
        .map(|h| InlayHint {
            position: lines.position(h.offset),
            label: InlayHintLabel::String(h.label),
            kind: Some(match h.kind {
                InlayKind::Type => InlayHintKind::TYPE,
                InlayKind::Note => InlayHintKind::PARAMETER,
            }),
            text_edits: None,
            tooltip: None,
            padding_left: Some(h.kind == InlayKind::Note),
            padding_right: None,
            data: None,
        })
        .collect()
}

/// Tokens relative to the one before, one line each (a docstring is split at its lines).
pub fn semantic_tokens(db: &Database, file: File) -> SemanticTokens {
    let text = file.text(db);
    let lines = Lines::new(text);
    let mut data = Vec::new();
    let (mut line, mut start) = (0, 0);
    for h in wsp_ide::highlights(db, file) {
        let Some(class) = TOKEN_TYPES.iter().position(|(c, _)| *c == h.class) else {
            continue;
        };
        let modifiers =
            u32::from(h.definition) | u32::from(h.readonly) << 1 | u32::from(h.library) << 2;
        let mut from = usize::from(h.range.start());
        for piece in text[h.range].split_inclusive('\n') {
            let body = piece.trim_end_matches(['\n', '\r']);
            let p = lines.position(from.try_into().unwrap_or_default());
            let length = body.encode_utf16().count() as u32;
            from += piece.len();
            if length == 0 {
                continue;
            }
            let delta_line = p.line - line;
            let delta_start = if delta_line == 0 {
                p.character - start
            } else {
                p.character
            };
            data.push(SemanticToken {
                delta_line,
                delta_start,
                length,
                token_type: class as u32,
                token_modifiers_bitset: modifiers,
            });
            (line, start) = (p.line, p.character);
        }
    }
    SemanticTokens {
        result_id: None,
        data,
    }
}

pub fn folding_ranges(db: &Database, file: File) -> Vec<FoldingRange> {
    let lines = Lines::new(file.text(db));
    wsp_ide::folding_ranges(db, file)
        .into_iter()
        .filter_map(|(r, kind)| {
            let (a, b) = (lines.position(r.start()), lines.position(r.end()));
            (a.line < b.line).then_some(FoldingRange {
                start_line: a.line,
                start_character: None,
                end_line: b.line,
                end_character: None,
                kind: Some(match kind {
                    FoldKind::Region => FoldingRangeKind::Region,
                    FoldKind::Comment => FoldingRangeKind::Comment,
                    FoldKind::Imports => FoldingRangeKind::Imports,
                }),
                collapsed_text: None,
            })
        })
        .collect()
}

/// "Fix all" (`editor.codeActionsOnSave: {"source.fixAll.wsp": "explicit"}` in VS Code).
pub const FIX_ALL: CodeActionKind = CodeActionKind::new("source.fixAll.wsp");

/// The actions of the kinds `only` asks for (every kind when `None`): the analyzer's fixes of
/// the diagnostics that touch `range` and a suppression comment for each of their codes, as
/// quick fixes; then "fix all" of the file's safe fixes (those of the codes its `wsp.toml`
/// reports), as `wsp check --fix` applies them.
pub fn code_actions(
    db: &Database,
    file: File,
    uri: &Uri,
    range: Range,
    only: Option<&[CodeActionKind]>,
    selection: &wsp_analysis::Selection,
) -> CodeActionResponse {
    let wants = |kind: &CodeActionKind| {
        only.is_none_or(|only| {
            only.iter().any(|o| {
                let o = o.as_str();
                kind.as_str() == o || kind.as_str().starts_with(&format!("{o}."))
            })
        })
    };
    let lines = Lines::new(file.text(db));
    // Only for what is reported: the folder's `wsp.toml` may ignore codes.
    let path = file.path(db).clone();
    let mut out = Vec::new();
    if wants(&CodeActionKind::QUICKFIX) {
        out = quick_fixes(db, file, uri, range, &lines, &|d| {
            selection.is_selected(d.code, &path)
        });
    }
    if wants(&FIX_ALL)
        && let Some((edits, n)) =
            wsp_ide::fix_all(db, file, &|d| selection.is_selected(d.code, &path))
    {
        let edits = edits
            .iter()
            .map(|(r, new)| TextEdit::new(lines.range(*r), new.clone()))
            .collect();
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!(
                "fix all: apply {n} safe fix{}",
                if n == 1 { "" } else { "es" }
            ),
            kind: Some(FIX_ALL),
            edit: Some(WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]))),
            ..Default::default()
        }));
    }
    out
}

fn quick_fixes(
    db: &Database,
    file: File,
    uri: &Uri,
    range: Range,
    lines: &Lines,
    reported: &dyn Fn(&wsp_analysis::Diagnostic) -> bool,
) -> CodeActionResponse {
    let (start, end) = (lines.offset(range.start), lines.offset(range.end));
    let wanted = TextRange::new(start, end.max(start));
    let suppressions = wsp_ide::suppressions(db, file, wanted);
    wsp_ide::fixes(db, file, wanted)
        .into_iter()
        .chain(suppressions)
        .filter(|fix| reported(&fix.diagnostic))
        .map(|fix| {
            let edits = fix
                .edits
                .iter()
                .map(|(r, new)| TextEdit::new(lines.range(*r), new.clone()))
                .collect();
            CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert::diagnostic(&fix.diagnostic, lines, uri)]),
                edit: Some(WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]))),
                // Only a fix that keeps the meaning may be applied unasked ("fix all").
                is_preferred: Some(fix.applicability == Applicability::MachineApplicable),
                ..Default::default()
            })
        })
        .collect()
}
