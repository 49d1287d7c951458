//! The CSP builder API of the original (spec §3.7): `process(name)` with `.consumes(...)`,
//! `.produces(...)` and `.body(...)`, `replicate(p, n)` and `connect(processes, channels)`.
//! A process's body is work over loop variables, walked as a pipeline stage when `connect`
//! runs it (`workloads`), so here it is only recorded, not evaluated.

use super::Eval;
use crate::diagnostics::Code;
use crate::values::{Channel, Process, Value};
use crate::vocabulary::{Builtin, PROCESS_METHODS};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode};

impl<'db> Eval<'db> {
    /// `process("loader")`: a process with no channels and no body yet.
    pub(crate) fn process(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let name = self.string_arg(&args, 0)?;
        Some(Value::Process(Box::new(Process {
            name,
            consumes: Vec::new(),
            produces: Vec::new(),
            body: None,
            workers: 1,
            def: self.span(c.syntax().text_range()),
        })))
    }

    /// `.consumes(ch, ...)`, `.produces(ch, ...)` and `.body(work)` of a process.
    pub(crate) fn process_method(
        &mut self,
        mut p: Process<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        let what = format!("`.{method}`");
        match method {
            "consumes" | "produces" => {
                let Some(channels) = self.channel_args(c, &what) else {
                    return Value::Unknown;
                };
                let list = if method == "consumes" {
                    &mut p.consumes
                } else {
                    &mut p.produces
                };
                for ch in channels {
                    if !list.iter().any(|l| l.name == ch.name) {
                        list.push(ch);
                    }
                }
                Value::Process(Box::new(p))
            }
            "body" => {
                if let Some(before) = &p.body {
                    let before = *before;
                    let d = crate::diagnostics::Diag::new(
                        Code::WrongArguments,
                        self.span(range),
                        format!("the process `{}` has a body already", p.name),
                    )
                    .with_related(before, "given here");
                    self.push(d);
                    return Value::Unknown;
                }
                let params = [("computation", false)];
                let bound = self.bind_syntax(c, &what, &params, &String::new);
                let Some(Some(e)) = bound.ok.then(|| bound.slots[0].clone()) else {
                    return Value::Unknown;
                };
                p.body = Some(self.span(e.syntax().text_range()));
                Value::Process(Box::new(p))
            }
            _ => self.unknown_member(
                "process",
                method,
                range,
                PROCESS_METHODS.iter().map(|m| m.name),
            ),
        }
    }

    /// The channels given to `.consumes`/`.produces`, positionally; `None` after an error.
    fn channel_args(&mut self, c: &ast::CallExpr, what: &str) -> Option<Vec<Channel<'db>>> {
        let mut out = Vec::new();
        let mut ok = true;
        for arg in c.args() {
            let r = arg.syntax().text_range();
            if arg.kind() != ast::ArgKind::Positional {
                self.error(
                    Code::WrongArguments,
                    r,
                    format!("{what} takes channels, one after another"),
                );
                ok = false;
                continue;
            }
            match arg.value().map_or(Value::Unknown, |e| self.expr(&e)) {
                Value::Channel(ch) => out.push(*ch),
                Value::Unknown => ok = false,
                v => {
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("{what} takes channels, not {}", v.describe()),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// `replicate(p, n)`: `n` workers of a consuming process, which share the tasks of the
    /// channels it consumes (each task goes to one of them).
    pub(crate) fn replicate(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (pv, pr) = args.get(0)?.clone();
        let (nv, nr) = args.get(1)?.clone();
        let n = self.positive(&nv, nr, "a worker count")?;
        let mut p = match pv {
            Value::Process(p) => p,
            Value::Unknown => return None,
            v => {
                self.error(
                    Code::WrongKind,
                    pr,
                    format!("`replicate` takes a process, not {}", v.describe()),
                );
                return None;
            }
        };
        if p.consumes.is_empty() {
            self.error(
                Code::WrongKind,
                pr,
                format!(
                    "`replicate` makes workers that share the tasks of the channels a process consumes, but `{}` consumes none: add `.consumes(ch)`",
                    p.name
                ),
            );
            return None;
        }
        p.workers = p.workers.saturating_mul(n);
        Some(Value::Process(p))
    }

    /// `connect([processes], [channels])`: the processes run concurrently as one pipeline
    /// workload. Its call's arguments are the processes and channels; the item holding the
    /// `connect` stands for the workload (`workloads::walker` walks the bodies).
    pub(crate) fn connect(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, b)?;
        let (pv, pr) = args.get(0)?.clone();
        let (cv, cr) = args.get(1)?.clone();
        let mut processes = Vec::new();
        let mut ok = self.processes_of(pv, pr, &mut processes);
        let mut channels = Vec::new();
        match cv {
            Value::List(vs) | Value::Tuple(vs) => {
                for v in vs {
                    match v {
                        Value::Channel(ch) => channels.push(Value::Channel(ch)),
                        Value::Unknown => ok = false,
                        v => {
                            self.error(
                                Code::WrongKind,
                                cr,
                                format!("`connect`'s channels are channels, not {}", v.describe()),
                            );
                            ok = false;
                        }
                    }
                }
            }
            Value::Unknown => ok = false,
            v => {
                self.error(
                    Code::WrongKind,
                    cr,
                    format!("`connect` takes a list of channels, not {}", v.describe()),
                );
                ok = false;
            }
        }
        if ok && processes.is_empty() {
            self.error(
                Code::WrongArguments,
                pr,
                "`connect` needs at least one process",
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        self.unlisted_channels(&processes, &channels, cr);
        let args = vec![Value::List(processes), Value::List(channels)];
        Some(self.call_schedule(self.item, args, range))
    }

    /// The processes of `connect`'s first argument (a list, with `replicate`'s lists inside),
    /// each with a body; `false` after an error.
    fn processes_of(&mut self, v: Value<'db>, r: TextRange, out: &mut Vec<Value<'db>>) -> bool {
        match v {
            Value::List(vs) | Value::Tuple(vs) => {
                let mut ok = true;
                for v in vs {
                    ok &= match v {
                        Value::Process(p) => self.process_with_body(*p, r, out),
                        Value::List(_) | Value::Tuple(_) => self.processes_of(v, r, out),
                        Value::Unknown => false,
                        v => {
                            self.error(
                                Code::WrongKind,
                                r,
                                format!("`connect` connects processes, not {}", v.describe()),
                            );
                            false
                        }
                    };
                }
                ok
            }
            Value::Unknown => false,
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`connect` takes a list of processes, not {}", v.describe()),
                );
                false
            }
        }
    }

    fn process_with_body(
        &mut self,
        p: Process<'db>,
        r: TextRange,
        out: &mut Vec<Value<'db>>,
    ) -> bool {
        if p.body.is_none() {
            self.error(
                Code::WrongArguments,
                r,
                format!(
                    "the process `{}` has no body: `process(\"{}\")...body(for_each(axis, lambda t: ...))`",
                    p.name, p.name
                ),
            );
            return false;
        }
        out.push(Value::Process(Box::new(p)));
        true
    }

    /// WSP303: a channel a process declares that `connect`'s channel list leaves out.
    fn unlisted_channels(
        &mut self,
        processes: &[Value<'db>],
        channels: &[Value<'db>],
        r: TextRange,
    ) {
        let listed = |name: &str| {
            channels
                .iter()
                .any(|c| matches!(c, Value::Channel(c) if c.name == name))
        };
        let mut reported: Vec<String> = Vec::new();
        for p in processes {
            let Value::Process(p) = p else { continue };
            for ch in p.consumes.iter().chain(&p.produces) {
                if !listed(&ch.name) && !reported.contains(&ch.name) {
                    reported.push(ch.name.clone());
                    self.error(
                        Code::UnmatchedChannel,
                        r,
                        format!(
                            "the process `{}` uses the channel `{}`, which `connect` does not list",
                            p.name, ch.name
                        ),
                    );
                }
            }
        }
    }
}
