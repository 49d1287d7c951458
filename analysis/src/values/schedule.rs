//! Schedules as the analyzer sees them: each directive where it was written. The kinds and the
//! applicability table live in `wsp_ir::schedule`, shared with codegen and the runtime.

pub use wsp_ir::schedule::{Applicability, DirectiveKind, Target, applicability};

use super::Policy;
use crate::diagnostics::Span;

/// The directive kind a policy is.
pub fn kind_of_policy(policy: &Policy) -> DirectiveKind {
    match policy {
        Policy::RoundRobin(_) => DirectiveKind::RoundRobin,
        Policy::Affinity(..) => DirectiveKind::Affinity,
        Policy::Hash(..) => DirectiveKind::HashKey,
        Policy::DispatchBy(..) => DirectiveKind::DispatchBy,
        Policy::WorkSteal => DirectiveKind::WorkSteal,
        Policy::Immediate => DirectiveKind::Immediate,
        Policy::Batched(_) => DirectiveKind::Batched,
        Policy::Interleaved(_) => DirectiveKind::Interleaved,
        Policy::RateLimit(_) => DirectiveKind::RateLimit,
        Policy::TaskGraph("Deps", _) => DirectiveKind::Deps,
        Policy::TaskGraph("Pools", _) => DirectiveKind::Pools,
        Policy::TaskGraph("StartPolicy", _) => DirectiveKind::Start,
        Policy::TaskGraph("TracePolicy", _) => DirectiveKind::Trace,
        Policy::TaskGraph(..) => DirectiveKind::Ready,
    }
}

/// One directive of a schedule, where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Directive<'db> {
    pub kind: DirectiveKind,
    pub span: Span<'db>,
    /// The directive's argument: a policy, a count (`streams`, `batched`), a key, a window or a
    /// `spatial_map` grid.
    pub detail: DirectiveDetail,
}

impl Directive<'_> {
    /// The task key the directive dispatches or streams by (`stream_by`, `affinity`, `hash`,
    /// `dispatch_by`), and whether a tuple key's parts combine row-major: every one's but
    /// `hash`'s, which hashes them whole.
    pub fn key(&self) -> Option<(&super::Key, bool)> {
        match &self.detail {
            DirectiveDetail::Key(k)
            | DirectiveDetail::Policy(Policy::Affinity(k, _) | Policy::DispatchBy(k, _)) => {
                Some((k, true))
            }
            DirectiveDetail::Policy(Policy::Hash(k, _)) => Some((k, false)),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum DirectiveDetail {
    None,
    Policy(Policy),
    Count(i64),
    Key(super::Key),
    Window(super::Window),
    Grid(Vec<u64>),
}
