//! Diagnostics: the table of codes (one row per code: severity and title), and the diagnostic
//! value every stage returns. Ranges are relative to an item until `file_diagnostics` places
//! them in the file, so that an edit above an item leaves that item's results equal.

use wsp_syntax::TextRange;

use crate::items::Item;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, salsa::SalsaValue)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $severity:ident, $title:literal;)*) => {
        /// A stable diagnostic code (docs/language.md §9, docs/diagnostics/WSPnnn.md).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, salsa::SalsaValue)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// `"WSP201"`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// One line saying what the code means.
            pub fn title(self) -> &'static str {
                match self {
                    $(Code::$variant => $title,)*
                }
            }
        }
    };
}

codes! {
    Syntax = "WSP001", Error, "syntax error";
    OutsideSubset = "WSP002", Error, "valid Python, but outside the WSP subset";
    UnusedSuppression = "WSP003", Warning, "suppression comment that drops no diagnostic";
    UnknownName = "WSP101", Error, "unknown name";
    UnknownMember = "WSP102", Error, "unknown attribute, op, method or keyword value";
    Duplicate = "WSP103", Error, "duplicate definition";
    Deprecated = "WSP104", Warning, "deprecated spelling";
    ShapeMismatch = "WSP201", Error, "tile shape mismatch in an op";
    DtypeMismatch = "WSP202", Error, "dtype mismatch";
    WrongArguments = "WSP203", Error, "wrong arguments";
    Direction = "WSP204", Error, "parameter direction violated";
    OutNeverStored = "WSP205", Warning, "`Out` or `InOut` parameter never stored";
    TaskArgument = "WSP206", Error, "task argument does not match the kernel parameter";
    UnusedValue = "WSP207", Warning, "value computed in a kernel and never used";
    IndexOutOfRange = "WSP208", Error, "index out of range";
    TooManyIndices = "WSP209", Error, "too many indices for the tensor's rank";
    WrongKind = "WSP210", Error, "value of the wrong kind";
    DataFile = "WSP211", Error, "a `load_npy` file does not fit its tensor (missing, not `.npy`, another shape, a dtype WSP cannot read)";
    WriteWriteRace = "WSP301", Error, "write-write race between parallel iterations";
    ReadWriteRace = "WSP302", Error, "read-write race between parallel iterations";
    UnmatchedChannel = "WSP303", Warning, "channel sent but never consumed, or consumed but never sent";
    Deadlock = "WSP304", Error, "CSP deadlock";
    ReadNeverWritten = "WSP305", Warning, "tensor read but never written and has no `init`";
    RaceUndecided = "WSP306", Warning, "race between parallel iterations not decided";
    LayoutConflict = "WSP401", Error, "incompatible layouts";
    MeshAxis = "WSP402", Error, "shard onto a mesh axis outside the spatial grid";
    NotEnforced = "WSP501", Warning, "schedule directive not fully enforced on the target";
    Rejected = "WSP502", Error, "schedule directive rejected by the target";
    ScheduleArgument = "WSP503", Error, "invalid schedule argument";
    KeyExpression = "WSP504", Error, "key expression uses something that is not a task field, constant or slot";
    TooLarge = "WSP505", Error, "tensor larger than the target's memory";
    OnChipOverflow = "WSP506", Error, "kernel's tiles exceed the NPU core's on-chip buffers";
    NoAicoreForm = "WSP507", Error, "op has no form on the NPU core";
    NpuView = "WSP508", Error, "a view whose tiles the NPU cannot load";
    Unsplittable = "WSP509", Error, "kernel cannot be split between the NPU's cube and vector cores";
}

/// Where a diagnostic points: a range inside one item (top-level statement) of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Span<'db> {
    pub item: Item<'db>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Related<'db> {
    pub span: Span<'db>,
    pub message: String,
}

/// How sure a fix is of meaning what the user meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Applicability {
    /// Keeps the meaning the text evidently has (a known alias, a deprecated spelling, a missing
    /// import): an editor may apply it unasked (a preferred quick fix) and SARIF lists it.
    MachineApplicable,
    /// A guess from spelling (edit distance) that may change what the code means: offered, never
    /// applied unasked.
    MaybeIncorrect,
}

/// A fix: replace each range with its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Fix<'db> {
    pub title: String,
    pub edits: Vec<(Span<'db>, String)>,
    pub applicability: Applicability,
}

/// A diagnostic as the stages produce it, anchored in items.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Diag<'db> {
    pub code: Code,
    pub span: Span<'db>,
    pub message: String,
    pub related: Vec<Related<'db>>,
    pub fix: Option<Fix<'db>>,
    /// A warning whatever its code's severity: what a target the file is not compiled for
    /// would refuse (WSP506 for a `cpu_sim` program whose tiles overflow the 910B).
    pub advisory: bool,
}

impl<'db> Diag<'db> {
    pub fn new(code: Code, span: Span<'db>, message: impl Into<String>) -> Diag<'db> {
        Diag {
            code,
            span,
            message: message.into(),
            related: Vec::new(),
            fix: None,
            advisory: false,
        }
    }

    /// Its severity: its code's, or a warning for an advisory one.
    pub fn severity(&self) -> Severity {
        if self.advisory {
            Severity::Warning
        } else {
            self.code.severity()
        }
    }

    pub fn with_related(mut self, span: Span<'db>, message: impl Into<String>) -> Diag<'db> {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    /// A machine-applicable fix.
    pub fn with_fix(mut self, title: impl Into<String>, edits: Vec<(Span<'db>, String)>) -> Self {
        self.fix = Some(Fix {
            title: title.into(),
            edits,
            applicability: Applicability::MachineApplicable,
        });
        self
    }

    /// A fix guessed from spelling ("did you mean"): offered, never machine-applicable.
    pub fn with_guess(mut self, title: impl Into<String>, edits: Vec<(Span<'db>, String)>) -> Self {
        self.fix = Some(Fix {
            title: title.into(),
            edits,
            applicability: Applicability::MaybeIncorrect,
        });
        self
    }
}

/// A diagnostic placed in its file: what front ends print.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub range: TextRange,
    pub message: String,
    pub related: Vec<(TextRange, String)>,
    pub fix: Option<FileFix>,
}

/// At most this many diagnostics of one file are shown (by `wsp check` and in the editor), in
/// order of position; the rest are counted in one note, so a flood (a pasted binary, a file that
/// is not WSP at all) stays readable and fast to print.
pub const SHOWN_PER_FILE: usize = 100;

/// The diagnostics of a file to show, and how many more there are.
pub fn shown(diagnostics: &[Diagnostic]) -> (&[Diagnostic], usize) {
    let n = diagnostics.len().min(SHOWN_PER_FILE);
    (&diagnostics[..n], diagnostics.len() - n)
}

/// The note of the diagnostics `shown` leaves out: "150 more diagnostics in FILE are not
/// shown (the first 100 are)", the file named by `file`.
pub fn not_shown(hidden: usize, file: &str) -> String {
    let (s, are) = if hidden == 1 {
        ("", "is")
    } else {
        ("s", "are")
    };
    format!(
        "{hidden} more diagnostic{s} in {file} {are} not shown (the first {SHOWN_PER_FILE} are)"
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileFix {
    pub title: String,
    pub edits: Vec<(TextRange, String)>,
    pub applicability: Applicability,
}

impl FileFix {
    /// `text` with the fix applied (edits never overlap; they are applied back to front).
    pub fn apply(&self, text: &str) -> String {
        apply_edits(text, &self.edits)
    }
}

/// `text` with `edits` applied: they do not overlap, and are applied back to front; an edit
/// outside the text or off a character boundary is left out.
pub fn apply_edits(text: &str, edits: &[(TextRange, String)]) -> String {
    let mut edits = edits.to_vec();
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start()));
    let mut out = text.to_string();
    for (range, insert) in edits {
        let (s, e) = (usize::from(range.start()), usize::from(range.end()));
        if e <= out.len() && out.is_char_boundary(s) && out.is_char_boundary(e) {
            out.replace_range(s..e, &insert);
        }
    }
    out
}

/// The fixes of `diagnostics` that apply together in one pass: the safe ones, and with
/// `unsafe_fixes` the guesses too, in order, each whole or not at all, leaving out one whose
/// edits overlap those taken (a later pass, on the fixed text, may take it). Their edits, and
/// how many fixes they are.
pub fn applicable_fixes(
    diagnostics: &[Diagnostic],
    unsafe_fixes: bool,
) -> (Vec<(TextRange, String)>, usize) {
    let mut taken: Vec<(TextRange, String)> = Vec::new();
    let mut count = 0;
    let overlaps = |a: TextRange, b: TextRange| {
        a.start() < b.end() && b.start() < a.end()
            // Two insertions at one place would need an order.
            || (a.is_empty() && b.is_empty() && a.start() == b.start())
            || (a.is_empty() && b.start() < a.start() && a.start() < b.end())
            || (b.is_empty() && a.start() < b.start() && b.start() < a.end())
    };
    for fix in diagnostics.iter().filter_map(|d| d.fix.as_ref()) {
        if fix.applicability == Applicability::MaybeIncorrect && !unsafe_fixes {
            continue;
        }
        if fix
            .edits
            .iter()
            .any(|(r, _)| taken.iter().any(|(t, _)| overlaps(*r, *t)))
        {
            continue;
        }
        taken.extend(fix.edits.iter().cloned());
        count += 1;
    }
    (taken, count)
}
