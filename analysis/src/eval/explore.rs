//! Schedule exploration, the original's `pto_wsp.auto_schedule`: `SearchSpace` and its
//! `add_*` methods, `ScheduleConfig`, `AutoScheduler(w).explore(space)` and `find_best()`,
//! `auto_schedule(w)`, `w.with_config(config)`, and what a statement reads of the results
//! (`summary.speedup`, `best_config.streams`), which only the run knows.

use super::Eval;
use super::bind::Args;
use crate::diagnostics::{Code, Diag};
use crate::names::suggest;
use crate::values::schedule::{Directive, DirectiveDetail, DirectiveKind, Target};
use crate::values::{
    Explore, Explored, Key, Policy, Schedule, Space, SpaceKey, Value, Window, WindowMode,
};
use crate::vocabulary::{Builtin, SCHEDULER_METHODS, SPACE_METHODS, SUMMARY_MEMBERS};
use wsp_ir::ScalarExpr;
use wsp_ir::explore::{CONFIG_FIELDS, ExploreQuery, Metric, SUMMARY_FIELDS};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr};

/// The dispatch policies a space names, and whether each dispatches by a key.
pub const DISPATCH_POLICIES: [(&str, bool); 5] = [
    ("round_robin", false),
    ("work_steal", false),
    ("affinity", true),
    ("hash", true),
    ("dispatch_by", true),
];

/// The timing policies a space names.
pub const TIMING_POLICIES: [&str; 3] = ["immediate", "batched", "interleaved"];

/// The most configurations one exploration scores: each is one run of the clock.
pub const MAX_CONFIGS: u64 = 100_000;

/// The most task graphs one exploration builds: one per combination of `add_bindings` values,
/// each enumerating and running every task.
pub const MAX_GRAPHS: u64 = 4096;

/// One configuration of a space: an option of each dimension.
#[derive(Debug, Clone, Copy)]
pub struct Choice<'a> {
    /// `None`: the program's own.
    pub streams: Option<i64>,
    pub stream_key: Option<&'a SpaceKey>,
    pub dispatch: &'a (String, i64, Option<SpaceKey>),
    pub timing: &'a (String, Option<i64>),
    pub window: Option<(i64, WindowMode)>,
}

impl Space {
    /// Every configuration, in the original's order (streams, dispatch, timing), ours nested:
    /// streams, stream keys, dispatch, timing, windows.
    pub fn choices(&self) -> Vec<Choice<'_>> {
        let mut out = Vec::new();
        for &streams in &self.streams {
            for stream_key in &self.stream_keys {
                for dispatch in &self.dispatch {
                    for timing in &self.timing {
                        for &window in &self.windows {
                            out.push(Choice {
                                streams,
                                stream_key: stream_key.as_ref(),
                                dispatch,
                                timing,
                                window,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The combinations of `add_bindings` values, in order (the last name varying fastest);
    /// one empty combination without any.
    pub fn binding_sets(&self) -> Vec<Vec<(String, u64)>> {
        let mut sets: Vec<Vec<(String, u64)>> = vec![Vec::new()];
        for (name, values) in &self.bindings {
            sets = sets
                .into_iter()
                .flat_map(|set| {
                    values.iter().map(move |&v| {
                        let mut s = set.clone();
                        s.push((name.clone(), v as u64));
                        s
                    })
                })
                .collect();
        }
        sets
    }

    /// How many task graphs the bindings make, if that fits a `u64`.
    pub fn graph_count(&self) -> Option<u64> {
        self.bindings
            .iter()
            .try_fold(1u64, |acc, (_, v)| acc.checked_mul(v.len() as u64))
    }
}

impl Choice<'_> {
    /// The directives the configuration sets, as the original's `_apply_config` chains them:
    /// dispatch, streams, then timing (`batched` without a size sets none); then ours.
    /// `default_key` is the original's affinity key, `t.get("batch", 0)`.
    pub fn directives<'db>(
        &self,
        span: crate::diagnostics::Span<'db>,
        default_key: &Key,
    ) -> Vec<Directive<'db>> {
        let mut out = Vec::new();
        let mut push = |kind, detail| {
            out.push(Directive { kind, span, detail });
        };
        let (name, param, key) = self.dispatch;
        let key = key.as_ref().map_or(default_key, |k| &k.key).clone();
        let policy = match name.as_str() {
            "round_robin" => Policy::RoundRobin(*param),
            "work_steal" => Policy::WorkSteal,
            "affinity" => Policy::Affinity(key, *param),
            "hash" => Policy::Hash(key, *param),
            _ => Policy::DispatchBy(key, *param),
        };
        let kind = crate::values::schedule::kind_of_policy(&policy);
        push(kind, DirectiveDetail::Policy(policy));
        if let Some(n) = self.streams {
            push(DirectiveKind::Streams, DirectiveDetail::Count(n));
        }
        if let Some(k) = self.stream_key {
            push(DirectiveKind::StreamBy, DirectiveDetail::Key(k.key.clone()));
        }
        let timing = match (self.timing.0.as_str(), self.timing.1) {
            ("immediate", _) => Some(Policy::Immediate),
            ("batched", Some(n)) => Some(Policy::Batched(n)),
            ("interleaved", Some(n)) => Some(Policy::Interleaved(n)),
            _ => None,
        };
        if let Some(t) = timing {
            let kind = crate::values::schedule::kind_of_policy(&t);
            push(kind, DirectiveDetail::Policy(t));
        }
        if let Some((size, mode)) = self.window {
            let w = Window {
                size,
                unit: "tasks".into(),
                mode,
            };
            push(mode.kind(), DirectiveDetail::Window(w));
        }
        out
    }

    /// The configuration as the IR and the summary show it.
    pub fn config(&self, directives: Vec<wsp_ir::Directive>) -> wsp_ir::explore::Config {
        let (name, param, key) = self.dispatch;
        let keyed = DISPATCH_POLICIES
            .iter()
            .any(|(p, keyed)| *keyed && p == name);
        wsp_ir::explore::Config {
            streams: self.streams.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            dispatch: name.clone(),
            dispatch_param: u32::try_from(*param).unwrap_or(u32::MAX),
            timing: self.timing.0.clone(),
            timing_param: self.timing.1.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            dispatch_key: match key {
                Some(k) => Some(k.text.clone()),
                None if keyed => Some("lambda t: t.get(\"batch\", 0)".into()),
                None => None,
            },
            stream_by: self.stream_key.map(|k| k.text.clone()),
            window: self
                .window
                .map(|(size, mode)| (u64::try_from(size).unwrap_or(0), mode)),
            directives,
            rejected: None,
            as_written: false,
        }
    }
}

/// The original's affinity key, `t.get("batch", 0)`: the field `batch` where tasks have one,
/// else 0.
pub fn default_affinity_key(fields: &[String]) -> Key {
    let expr = if fields.iter().any(|f| f == "batch") {
        ScalarExpr::Var("batch".into())
    } else {
        ScalarExpr::Const(0)
    };
    Key {
        expr,
        parts: Vec::new(),
    }
}

impl<'db> Eval<'db> {
    /// `name_i` of `a, b = value`: element `i` of the value's tuple. The value is evaluated
    /// by each name's item; the first keeps what evaluating it found.
    pub(crate) fn element(&mut self, e: &Expr, i: usize) -> Value<'db> {
        let at = (
            self.diags.len(),
            self.uses.len(),
            self.calls.len(),
            self.explores.len(),
        );
        let v = self.expr(e);
        if i > 0 {
            self.diags.truncate(at.0);
            self.uses.truncate(at.1);
            self.calls.truncate(at.2);
            self.explores.truncate(at.3);
        }
        let range = e.syntax().text_range();
        let names = crate::items::unpacked_count(&self.item.stmt(self.db));
        match v {
            Value::Tuple(items) | Value::List(items) if items.len() == names => {
                items.into_iter().nth(i).unwrap_or(Value::Unknown)
            }
            Value::Unknown => Value::Unknown,
            Value::Tuple(items) | Value::List(items) => {
                if i == 0 {
                    self.error(
                        Code::WrongKind,
                        range,
                        format!(
                            "{} values cannot be unpacked into {names} names",
                            items.len()
                        ),
                    );
                }
                Value::Unknown
            }
            v => {
                if i == 0 {
                    self.error(
                        Code::WrongKind,
                        range,
                        format!("{} cannot be unpacked into names", v.describe()),
                    );
                }
                Value::Unknown
            }
        }
    }

    /// `SearchSpace()`: the original's defaults.
    pub(crate) fn search_space(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        self.bind_builtin(c, Builtin::SearchSpace)?;
        Some(Value::Space(Box::default()))
    }

    /// `ScheduleConfig(streams=1, dispatch="round_robin", dispatch_param=4, timing=
    /// "immediate", timing_param=None)`: one configuration.
    pub(crate) fn schedule_config(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, Builtin::ScheduleConfig)?;
        let int = |i: usize, default: i64| match args.get(i) {
            Some((Value::Int(n), r)) => Ok(Some((*n, *r))),
            Some((Value::None, _)) => Ok(None),
            Some((v, r)) => Err((v.clone(), *r)),
            None => Ok(Some((default, TextRange::default()))),
        };
        let mut space = Space::default();
        match int(0, 1) {
            Ok(Some((n, r))) => {
                space.streams = vec![Some(self.at_least(n, 1, r, "a stream count")?)];
            }
            Ok(None) | Err(_) => return self.wrong_config_arg(&args, 0),
        }
        let dispatch = match args.get(1) {
            Some((Value::Str(s), r)) => {
                self.policy_name(s, *r, DISPATCH_POLICIES.iter().map(|p| p.0))?
            }
            Some(_) => return self.wrong_config_arg(&args, 1),
            None => "round_robin".to_string(),
        };
        let param = match int(2, 4) {
            Ok(Some((n, r))) => self.at_least(n, 1, r, "an AICPU count")?,
            _ => return self.wrong_config_arg(&args, 2),
        };
        if DISPATCH_POLICIES
            .iter()
            .any(|(p, keyed)| *keyed && *p == dispatch)
        {
            let r = args.get(1).map_or(c.syntax().text_range(), |a| a.1);
            self.error(
                Code::ScheduleArgument,
                r,
                format!("`{dispatch}` needs a key, which a `ScheduleConfig` cannot give; apply `DispatchPolicy.{dispatch}(lambda t: ...)` with `.dispatch(...)`"),
            );
            return None;
        }
        space.dispatch = vec![(dispatch, param, None)];
        let timing = match args.get(3) {
            Some((Value::Str(s), r)) => self.policy_name(s, *r, TIMING_POLICIES.iter().copied())?,
            Some(_) => return self.wrong_config_arg(&args, 3),
            None => "immediate".to_string(),
        };
        let timing_param = match int(4, 0) {
            Ok(Some((n, r))) if args.get(4).is_some() => {
                Some(self.at_least(n, 1, r, "a timing size")?)
            }
            Ok(_) => None,
            Err(_) => return self.wrong_config_arg(&args, 4),
        };
        space.timing = vec![(timing, timing_param)];
        Some(Value::Config(Box::new(space)))
    }

    fn wrong_config_arg(&mut self, args: &Args<'db>, i: usize) -> Option<Value<'db>> {
        if let Some((v, r)) = args.get(i)
            && !matches!(v, Value::Unknown)
        {
            let (v, r) = (v.describe(), *r);
            self.error(
                Code::WrongKind,
                r,
                format!(
                    "this field of `ScheduleConfig` takes {}, not {v}",
                    [
                        "an int",
                        "a policy name",
                        "an int",
                        "a policy name",
                        "an int or None"
                    ][i]
                ),
            );
        }
        None
    }

    fn at_least(&mut self, n: i64, min: i64, r: TextRange, what: &str) -> Option<i64> {
        if n >= min {
            return Some(n);
        }
        self.error(
            Code::ScheduleArgument,
            r,
            format!("{what} is at least {min}, not {n}"),
        );
        None
    }

    /// A policy's name among `names`; WSP102 with the nearest otherwise.
    fn policy_name<'a>(
        &mut self,
        name: &str,
        r: TextRange,
        names: impl Iterator<Item = &'a str> + Clone,
    ) -> Option<String> {
        if names.clone().any(|n| n == name) {
            return Some(name.to_string());
        }
        let list: Vec<String> = names.clone().map(|n| format!("\"{n}\"")).collect();
        let mut d = Diag::new(
            Code::UnknownMember,
            self.span(r),
            format!(
                "unknown policy \"{name}\"; the policies are {}",
                list.join(", ")
            ),
        );
        if let Some(best) = suggest(name, names) {
            d = d.with_guess(
                format!("use \"{best}\""),
                vec![(self.span(r), format!("\"{best}\""))],
            );
        }
        self.push(d);
        None
    }

    /// `AutoScheduler(workload)`.
    pub(crate) fn auto_scheduler(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, Builtin::AutoScheduler)?;
        let s = self.explored_workload(&args)?;
        Some(Value::Scheduler(Box::new(s)))
    }

    /// The workload an auto-scheduler explores: a workload call or composition, scheduled or
    /// not, or a compiled program (its workload and schedule; its target is the one explored
    /// for).
    fn explored_workload(&mut self, args: &Args<'db>) -> Option<Schedule<'db>> {
        match args.get(0)?.clone() {
            (Value::Schedule(s) | Value::Program(s), _) => Some(*s),
            (Value::Unknown, _) => None,
            (v, r) => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "an auto-scheduler explores a workload (`w(...)`), not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// `auto_schedule(w, verbose=False)`: `w` with `find_best()`'s configuration applied.
    pub(crate) fn auto_schedule(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, Builtin::AutoSchedule)?;
        let mut s = self.explored_workload(&args)?;
        let verbose = self.flag(&args, 1)?;
        // The original explores quietly and then says what it selected.
        let mut explore = self.find_best_explore(&s, 8, c, false)?;
        explore.says_selected = verbose;
        if let Some(last) = self.explores.last_mut() {
            last.says_selected = verbose;
        }
        s.explored = Some(Box::new(explore));
        Some(Value::Schedule(Box::new(s)))
    }

    fn flag(&mut self, args: &Args<'db>, i: usize) -> Option<bool> {
        match args.get(i) {
            None => Some(false),
            Some((Value::Bool(b), _)) => Some(*b),
            Some((Value::Unknown, _)) => None,
            Some((v, r)) => {
                let (v, r) = (v.describe(), *r);
                self.error(
                    Code::WrongKind,
                    r,
                    format!("expected True or False, not {v}"),
                );
                None
            }
        }
    }

    /// The exploration `find_best(max_streams)` makes: the original's default space.
    fn find_best_explore(
        &mut self,
        s: &Schedule<'db>,
        max_streams: i64,
        c: &ast::CallExpr,
        verbose: bool,
    ) -> Option<Explore<'db>> {
        let space = Space {
            streams: vec![Some(1), Some(2), Some(4), Some(max_streams.min(8))],
            dispatch: vec![
                ("round_robin".into(), 4, None),
                ("work_steal".into(), 4, None),
            ],
            ..Space::default()
        };
        Some(self.explore_of(s, space, Metric::Cycles, (1, 1, verbose), Target::CpuSim, c))
    }

    fn explore_of(
        &mut self,
        s: &Schedule<'db>,
        space: Space,
        metric: Metric,
        (trials, warmup, verbose): (u32, u32, bool),
        target: Target,
        c: &ast::CallExpr,
    ) -> Explore<'db> {
        let explore = Explore {
            id: self.statement_id(),
            label: c.syntax().text().to_string(),
            span: self.span_of(c),
            schedule: s.clone(),
            space,
            metric,
            trials,
            warmup,
            verbose,
            says_selected: false,
            target,
        };
        self.explores.push(explore.clone());
        explore
    }

    /// The position of the statement's first item: names an exploration, one per statement.
    fn statement_id(&self) -> u32 {
        let stmt = self.item.stmt(self.db);
        let name = self.item.name(self.db);
        let k = stmt
            .as_ref()
            .and_then(crate::items::unpacked)
            .and_then(|pairs| pairs.iter().position(|(n, _)| n.text() == *name))
            .unwrap_or(0);
        u32::try_from(self.position.saturating_sub(k)).unwrap_or(u32::MAX)
    }

    /// A method of `SearchSpace()`: the space with that dimension's options replaced.
    pub(crate) fn space_method(
        &mut self,
        mut space: Space,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        if SPACE_METHODS.iter().all(|m| m.name != method) {
            return self.unknown_member(
                "SearchSpace",
                method,
                range,
                SPACE_METHODS.iter().map(|m| m.name),
            );
        }
        if method == "add_bindings" {
            return match self.space_bindings(c) {
                Some(b) => {
                    space.bindings = b;
                    Value::Space(Box::new(space))
                }
                None => Value::Unknown,
            };
        }
        let what = format!("`.{method}`");
        let Some(args) = self.bind_method(c, &what, SPACE_METHODS, method) else {
            return Value::Unknown;
        };
        let done = match method {
            "add_streams" => self.stream_counts(&args).map(|v| space.streams = v),
            "add_dispatch" => self.space_dispatch(&args, c).map(|d| space.dispatch = d),
            "add_timing" => self.space_timing(&args).map(|t| space.timing = t),
            "add_stream_by" => self
                .space_keys(&args, c, 0, "keys")
                .map(|k| space.stream_keys = k),
            _ => self.space_windows(&args).map(|w| space.windows = w),
        };
        match done {
            Some(()) => Value::Space(Box::new(space)),
            None => Value::Unknown,
        }
    }

    /// The elements of a list argument; an empty list or another value is reported.
    fn list_arg(&mut self, args: &Args<'db>, i: usize) -> Option<(Vec<Value<'db>>, TextRange)> {
        match args.get(i)?.clone() {
            (Value::List(items) | Value::Tuple(items), r) if !items.is_empty() => Some((items, r)),
            (Value::List(_) | Value::Tuple(_), r) => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    "an empty list leaves nothing to explore",
                );
                None
            }
            (Value::Unknown, _) => None,
            (v, r) => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("expected a list of options, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// A list of integers at least `min`.
    fn ints(&mut self, args: &Args<'db>, i: usize, min: i64, what: &str) -> Option<Vec<i64>> {
        let (items, r) = self.list_arg(args, i)?;
        items
            .iter()
            .map(|v| match v {
                Value::Int(n) => self.at_least(*n, min, r, what),
                v => {
                    let v = v.describe();
                    self.error(Code::WrongKind, r, format!("{what} is an int, not {v}"));
                    None
                }
            })
            .collect()
    }

    /// `add_streams(counts)`: stream counts, or `None` for the program's own.
    fn stream_counts(&mut self, args: &Args<'db>) -> Option<Vec<Option<i64>>> {
        let (items, r) = self.list_arg(args, 0)?;
        items
            .iter()
            .map(|v| match v {
                Value::None => Some(None),
                Value::Int(n) => self.at_least(*n, 1, r, "a stream count").map(Some),
                v => {
                    let v = v.describe();
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("a stream count is an int, or None for the program's own, not {v}"),
                    );
                    None
                }
            })
            .collect()
    }

    /// Policy names from a list.
    fn names(&mut self, args: &Args<'db>, i: usize, known: &[&str]) -> Option<Vec<String>> {
        let (items, r) = self.list_arg(args, i)?;
        let mut out = Vec::new();
        for v in &items {
            match v {
                Value::Str(s) => out.push(self.policy_name(s, r, known.iter().copied())?),
                v => {
                    let v = v.describe();
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("a policy is named by a string, not {v}"),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// `add_dispatch(policies, params=None, keys=None)`: each policy with each AICPU count, and
    /// a keyed one with each key.
    fn space_dispatch(
        &mut self,
        args: &Args<'db>,
        c: &ast::CallExpr,
    ) -> Option<Vec<(String, i64, Option<SpaceKey>)>> {
        let known: Vec<&str> = DISPATCH_POLICIES.iter().map(|p| p.0).collect();
        let policies = self.names(args, 0, &known)?;
        let params = match args.get(1) {
            None | Some((Value::None, _)) => vec![4],
            Some(_) => self.ints(args, 1, 1, "an AICPU count")?,
        };
        let keys = match args.get(2) {
            None | Some((Value::None, _)) => None,
            Some(_) => Some(self.space_keys(args, c, 2, "keys")?),
        };
        let mut out = Vec::new();
        for p in &policies {
            let keyed = DISPATCH_POLICIES.iter().any(|(n, k)| *k && n == p);
            let keys: Vec<Option<SpaceKey>> = match (&keys, keyed) {
                (_, false) => vec![None],
                (Some(keys), true) => keys.clone(),
                (None, true) if p == "affinity" => vec![None],
                (None, true) => {
                    let r = args.get(0).map_or(c.syntax().text_range(), |a| a.1);
                    self.error(
                        Code::ScheduleArgument,
                        r,
                        format!("`{p}` dispatches by a key: give `keys=[lambda t: ...]`"),
                    );
                    return None;
                }
            };
            if keyed && keys.iter().any(Option::is_none) && p != "affinity" {
                let r = args.get(2).map_or(c.syntax().text_range(), |a| a.1);
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`{p}` dispatches by a key; `None` is no key"),
                );
                return None;
            }
            for &param in &params {
                for k in &keys {
                    out.push((p.clone(), param, k.clone()));
                }
            }
        }
        Some(out)
    }

    /// `add_timing(policies, params=None)`, as the original pairs them: each policy with each
    /// size, `immediate` with none.
    fn space_timing(&mut self, args: &Args<'db>) -> Option<Vec<(String, Option<i64>)>> {
        let policies = self.names(args, 0, &TIMING_POLICIES)?;
        let params: Vec<Option<i64>> = match args.get(1) {
            None | Some((Value::None, _)) => vec![None],
            Some(_) => {
                let (items, r) = self.list_arg(args, 1)?;
                let mut out = Vec::new();
                for v in &items {
                    out.push(match v {
                        Value::None => None,
                        Value::Int(n) => Some(self.at_least(*n, 1, r, "a timing size")?),
                        v => {
                            let v = v.describe();
                            self.error(
                                Code::WrongKind,
                                r,
                                format!("a timing size is an int or None, not {v}"),
                            );
                            return None;
                        }
                    });
                }
                out
            }
        };
        let mut out = Vec::new();
        for p in policies {
            for &n in &params {
                out.push(if p == "immediate" {
                    (p.clone(), None)
                } else {
                    (p.clone(), n)
                });
            }
        }
        Some(out)
    }

    /// A list of keys (`lambda t: ...`) or `None`s, each with its text.
    fn space_keys(
        &mut self,
        args: &Args<'db>,
        c: &ast::CallExpr,
        i: usize,
        name: &str,
    ) -> Option<Vec<Option<SpaceKey>>> {
        let (items, r) = self.list_arg(args, i)?;
        let texts = element_texts(c, i, name);
        let mut out = Vec::new();
        for (j, v) in items.iter().enumerate() {
            out.push(match v {
                Value::None => None,
                Value::Key(k) => Some(SpaceKey {
                    key: (**k).clone(),
                    text: texts
                        .get(j)
                        .cloned()
                        .unwrap_or_else(|| format!("lambda t: {}", k.expr)),
                }),
                Value::Unknown => return None,
                v => {
                    let v = v.describe();
                    self.error(
                        Code::KeyExpression,
                        r,
                        format!("a key is `lambda t: ...` over task fields, or None, not {v}"),
                    );
                    return None;
                }
            });
        }
        Some(out)
    }

    /// `add_window(sizes, modes=[WindowMode.STALL])`: each size with each mode.
    fn space_windows(&mut self, args: &Args<'db>) -> Option<Vec<Option<(i64, WindowMode)>>> {
        let (sizes, r) = self.list_arg(args, 0)?;
        let modes = match args.get(1) {
            None => vec![WindowMode::Stall],
            Some(_) => {
                let (items, r) = self.list_arg(args, 1)?;
                let mut out = Vec::new();
                for v in &items {
                    match v {
                        Value::Member(Builtin::WindowMode, m) => {
                            out.extend(
                                WindowMode::MEMBERS
                                    .iter()
                                    .filter(|(n, _)| n == m)
                                    .map(|(_, mode)| *mode),
                            );
                        }
                        v => {
                            let v = v.describe();
                            self.error(
                                Code::WrongKind,
                                r,
                                format!("a window mode is a `WindowMode`, not {v}"),
                            );
                            return None;
                        }
                    }
                }
                out
            }
        };
        let mut out = Vec::new();
        for v in &sizes {
            match v {
                Value::None => out.push(None),
                Value::Int(n) => {
                    let n = self.at_least(*n, 1, r, "a window size")?;
                    out.extend(modes.iter().map(|&m| Some((n, m))));
                }
                v => {
                    let v = v.describe();
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("a window size is an int or None, not {v}"),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// `add_bindings(name=[values], ...)`: each run-time symbol's values.
    fn space_bindings(&mut self, c: &ast::CallExpr) -> Option<Vec<(String, Vec<i64>)>> {
        let mut out: Vec<(String, Vec<i64>)> = Vec::new();
        let mut ok = true;
        for arg in c.args() {
            let r = arg.syntax().text_range();
            let value = arg.value().map_or(Value::Unknown, |v| self.expr(&v));
            let Some(kw) = arg
                .keyword()
                .filter(|_| arg.kind() == ast::ArgKind::Keyword)
            else {
                self.error(
                    Code::WrongArguments,
                    r,
                    "`add_bindings` takes run-time symbols by name: `add_bindings(requests=[1, 4, 16])`",
                );
                ok = false;
                continue;
            };
            let name = kw.text().to_string();
            let values = match value {
                Value::List(items) | Value::Tuple(items) if !items.is_empty() => items
                    .iter()
                    .map(|v| match v {
                        Value::Int(n) if *n >= 0 => Some(*n),
                        _ => None,
                    })
                    .collect::<Option<Vec<i64>>>(),
                Value::Unknown => {
                    ok = false;
                    continue;
                }
                _ => None,
            };
            let Some(values) = values else {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`{name}` takes a non-empty list of non-negative ints"),
                );
                ok = false;
                continue;
            };
            if out.iter().any(|(n, _)| *n == name) {
                self.error(Code::WrongArguments, r, format!("`{name}` is given twice"));
                ok = false;
                continue;
            }
            out.push((name, values));
        }
        if out.is_empty() && ok {
            self.error(
                Code::WrongArguments,
                c.syntax().text_range(),
                "`add_bindings` takes run-time symbols by name: `add_bindings(requests=[1, 4, 16])`",
            );
            return None;
        }
        ok.then_some(out)
    }

    /// A method of `AutoScheduler(w)`.
    pub(crate) fn scheduler_method(
        &mut self,
        s: Schedule<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        if SCHEDULER_METHODS.iter().all(|m| m.name != method) {
            return self.unknown_member(
                "AutoScheduler",
                method,
                range,
                SCHEDULER_METHODS.iter().map(|m| m.name),
            );
        }
        let what = format!("`.{method}`");
        let Some(args) = self.bind_method(c, &what, SCHEDULER_METHODS, method) else {
            return Value::Unknown;
        };
        match method {
            "explore" => self.explore(s, &args, c).unwrap_or(Value::Unknown),
            "find_best" => {
                let max = match args.get(0) {
                    None => 8,
                    Some((Value::Int(n), r)) => match self.at_least(*n, 1, *r, "`max_streams`") {
                        Some(n) => n,
                        None => return Value::Unknown,
                    },
                    Some((v, r)) => {
                        let (v, r) = (v.describe(), *r);
                        self.error(
                            Code::WrongKind,
                            r,
                            format!("`max_streams` is an int, not {v}"),
                        );
                        return Value::Unknown;
                    }
                };
                match self.find_best_explore(&s, max, c, false) {
                    Some(explore) => Value::Explored(Box::new(Explored {
                        explore,
                        query: ExploreQuery::BestConfig,
                    })),
                    None => Value::Unknown,
                }
            }
            _ => {
                self.error(
                    Code::OutsideSubset,
                    range,
                    "`register_kernel` gives the original's simulator a Python kernel; kernels here are compiled from their `@kernel` bodies, so there is nothing to register",
                );
                Value::Unknown
            }
        }
    }

    /// `scheduler.explore(space, trials=3, warmup=1, verbose=False, metric="cycles",
    /// target="cpu_sim")`: `(best_config, summary)`.
    fn explore(
        &mut self,
        s: Schedule<'db>,
        args: &Args<'db>,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let (space, space_range) = match args.get(0)?.clone() {
            (Value::Space(space), r) => (*space, r),
            (Value::Unknown, _) => return None,
            (v, r) => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`explore` takes a `SearchSpace()`, not {}", v.describe()),
                );
                return None;
            }
        };
        let count =
            |this: &mut Self, i: usize, min: i64, default: u32, what: &str| match args.get(i) {
                None => Some(default),
                Some((Value::Int(n), r)) => this
                    .at_least(*n, min, *r, what)
                    .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
                Some((Value::Unknown, _)) => None,
                Some((v, r)) => {
                    let (v, r) = (v.describe(), *r);
                    this.error(Code::WrongKind, r, format!("{what} is an int, not {v}"));
                    None
                }
            };
        let trials = count(self, 1, 1, 3, "`trials`")?;
        let warmup = count(self, 2, 0, 1, "`warmup`")?;
        let verbose = self.flag(args, 3)?;
        let metric = match args.get(4) {
            None => Metric::Cycles,
            Some((Value::Str(m), r)) => {
                let r = *r;
                let names = Metric::MEMBERS.iter().map(|(n, _)| *n);
                let name = self.policy_name(m, r, names)?;
                Metric::MEMBERS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, m)| *m)?
            }
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.describe(), *r);
                self.error(
                    Code::WrongKind,
                    r,
                    format!("the metric is \"cycles\" or \"wall\", not {v}"),
                );
                return None;
            }
        };
        let target = match args.get(5) {
            None => s.target.map_or(Target::CpuSim, |t| t.target),
            Some((Value::Str(t), r)) => {
                let r = *r;
                let name = self.policy_name(t, r, Target::ALL.iter().map(|t| t.name()))?;
                Target::from_name(&name)?
            }
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.describe(), *r);
                self.error(
                    Code::WrongKind,
                    r,
                    format!("the target is a string such as \"cpu_sim\", not {v}"),
                );
                return None;
            }
        };
        match space.size() {
            Some(n) if n <= MAX_CONFIGS => {}
            n => {
                let n = n.map_or("more than 2^64".to_string(), |n| n.to_string());
                self.error(
                    Code::ScheduleArgument,
                    space_range,
                    format!("the space has {n} configurations; one exploration scores at most {MAX_CONFIGS}: split it, or shard it with `wsp tune --shard i/n`"),
                );
                return None;
            }
        }
        match space.graph_count() {
            Some(n) if n <= MAX_GRAPHS => {}
            n => {
                let n = n.map_or("more than 2^64".to_string(), |n| n.to_string());
                self.error(
                    Code::ScheduleArgument,
                    space_range,
                    format!("`add_bindings` makes {n} combinations, each a task graph to build; one exploration builds at most {MAX_GRAPHS}"),
                );
                return None;
            }
        }
        let explore = self.explore_of(&s, space, metric, (trials, warmup, verbose), target, c);
        let read = |query| {
            Value::Explored(Box::new(Explored {
                explore: explore.clone(),
                query,
            }))
        };
        Some(Value::Tuple(vec![
            read(ExploreQuery::BestConfig),
            read(ExploreQuery::Summary),
        ]))
    }

    /// `w.with_config(config)`: an exploration's best configuration, applied when the program
    /// runs, or a known one, applied now.
    pub(crate) fn with_config(
        &mut self,
        mut s: Schedule<'db>,
        args: &Args<'db>,
        call_span: crate::diagnostics::Span<'db>,
    ) -> Option<Value<'db>> {
        match args.get(0)?.clone() {
            (Value::Explored(e), _) if e.query == ExploreQuery::BestConfig => {
                s.explored = Some(Box::new(e.explore));
            }
            (Value::Config(space), _) => {
                // A `ScheduleConfig` names no keyed policy, so no key is used.
                let key = default_affinity_key(&[]);
                let choice = space.choices()[0];
                let added = choice.directives(call_span, &key);
                let set: Vec<u8> = added
                    .iter()
                    .filter_map(|d| wsp_ir::explore::slot(d.kind))
                    .collect();
                s.directives
                    .retain(|d| wsp_ir::explore::slot(d.kind).is_none_or(|k| !set.contains(&k)));
                s.directives.extend(added);
            }
            (Value::Unknown, _) => return None,
            (v, r) => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`with_config` takes an exploration's `best_config` or a `ScheduleConfig(...)`, not {}",
                        v.describe()
                    ),
                );
                return None;
            }
        }
        Some(Value::Schedule(Box::new(s)))
    }

    /// `summary.print_summary()` and `summary.top_configs(n)`.
    pub(crate) fn explored_method(
        &mut self,
        e: Explored<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        let methods = ["print_summary", "top_configs"];
        if e.query != ExploreQuery::Summary || !methods.contains(&method) {
            let what = Value::Explored(Box::new(e)).describe();
            let names: &[&str] = if what.contains("summary") {
                &methods
            } else {
                &[]
            };
            self.error(
                Code::UnknownMember,
                range,
                format!(
                    "{what} has no method `{method}`{}",
                    match suggest(method, names.iter().copied()) {
                        Some(best) => format!("; did you mean `{best}`?"),
                        None => String::new(),
                    }
                ),
            );
            return Value::Unknown;
        }
        let what = format!("`.{method}`");
        let Some(args) = self.bind_method(c, &what, SUMMARY_MEMBERS, method) else {
            return Value::Unknown;
        };
        let query = if method == "print_summary" {
            ExploreQuery::PrintSummary
        } else {
            let n = match args.get(0) {
                None => 5,
                Some((Value::Int(n), r)) => match self.at_least(*n, 0, *r, "`n`") {
                    Some(n) => u32::try_from(n).unwrap_or(u32::MAX),
                    None => return Value::Unknown,
                },
                Some((v, r)) => {
                    let (v, r) = (v.describe(), *r);
                    self.error(Code::WrongKind, r, format!("`n` is an int, not {v}"));
                    return Value::Unknown;
                }
            };
            ExploreQuery::TopConfigs(n)
        };
        Value::Explored(Box::new(Explored {
            explore: e.explore,
            query,
        }))
    }

    /// `summary.FIELD`, `best_config.FIELD`.
    pub(crate) fn explored_attribute(
        &mut self,
        e: Explored<'db>,
        name: &str,
        range: TextRange,
    ) -> Value<'db> {
        let query = match &e.query {
            ExploreQuery::Summary => match name {
                "best_config" => Some(ExploreQuery::BestConfig),
                "results" => Some(ExploreQuery::Results),
                f if SUMMARY_FIELDS.contains(&f) => Some(ExploreQuery::Field(f.into())),
                "print_summary" | "top_configs" => {
                    self.error(
                        Code::UnknownMember,
                        range,
                        format!("`.{name}` of an exploration summary is only usable as a call: `.{name}()`"),
                    );
                    return Value::Unknown;
                }
                _ => {
                    let names = SUMMARY_MEMBERS.iter().map(|m| m.name);
                    return self.unknown_member("ExplorationSummary", name, range, names);
                }
            },
            ExploreQuery::BestConfig if CONFIG_FIELDS.contains(&name) => {
                Some(ExploreQuery::BestConfigField(name.into()))
            }
            ExploreQuery::BestConfig => {
                return self.unknown_member(
                    "ScheduleConfig",
                    name,
                    range,
                    CONFIG_FIELDS.iter().copied(),
                );
            }
            _ => None,
        };
        match query {
            Some(query) => Value::Explored(Box::new(Explored {
                explore: e.explore,
                query,
            })),
            None => {
                let what = Value::Explored(Box::new(e)).describe();
                self.error(
                    Code::UnknownMember,
                    range,
                    format!("{what} has no attribute `{name}`"),
                );
                Value::Unknown
            }
        }
    }
}

/// The source text of each element of a list argument (position `i` or keyword `name`).
fn element_texts(c: &ast::CallExpr, i: usize, name: &str) -> Vec<String> {
    let mut positional = 0;
    for arg in c.args() {
        let this = match arg.keyword() {
            Some(k) => k.text() == name,
            None => {
                positional += 1;
                positional - 1 == i
            }
        };
        if this {
            return match arg.value() {
                Some(Expr::ListExpr(l)) => l
                    .elements()
                    .map(|e| e.syntax().text().to_string())
                    .collect(),
                Some(Expr::TupleExpr(t)) => t
                    .elements()
                    .map(|e| e.syntax().text().to_string())
                    .collect(),
                _ => Vec::new(),
            };
        }
    }
    Vec::new()
}
