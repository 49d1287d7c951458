//! `program.trace` (the tutorial's "Profiling and Tracing"), `json.dump` inside
//! `with open(PATH, "w") as f:`, `len`, and module-level `for` loops that print: what each
//! lowers to, and the errors that name what is supported.

mod common;

use expect_test::{Expect, expect};

const HEADER: &str = r#"from pto_wsp import *
import json

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())

@kernel
def dbl(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.add(pto.load(x), pto.load(x)))

@workload
def w():
    for b in P(Dense[4]):
        dbl[b](x=X[b])

program = w().compile(target="cpu_sim")
"#;

fn check(body: &str, expect: Expect) {
    expect.assert_eq(&common::diagnostics_or_actions(&format!("{HEADER}{body}")));
}

#[test]
fn the_tutorials_profiling_section_lowers_to_trace_reads() {
    check(
        r#"
program.enable_tracing(TraceLevel.TIMING)
program.execute()
program.synchronize()
program.trace.print_summary()
task_events = program.trace.get_task_events()
kernel_events = program.trace.get_kernel_events("dbl")
summary = program.trace.summary()
print(f"Total kernel time: {summary['kernel_time_ms']:.2f}ms")
print(len(task_events), len(kernel_events))
chrome_trace = program.trace.to_chrome_trace()
with open("trace.json", "w") as f:
    json.dump(chrome_trace, f)
with open("summary.json", "w") as f:
    json.dump(summary, f, indent=2)
program.clear_trace()
program.disable_tracing()
"#,
        expect![[r#"
            EnableTracing { program: "program", level: Timing }
            Execute { program: "program", bindings: [] }
            Print([Trace { program: "program", query: PrintSummary }])
            Print([Format([Text("Total kernel time: "), Trace { program: "program", query: SummaryField("kernel_time_ms"), debug: None, conversion: None, spec: ".2f" }, Text("ms")])])
            Print([Trace { program: "program", query: Len(TaskEvents) }, Trace { program: "program", query: Len(KernelEvents(Some("dbl"))) }])
            WriteJson { value: Trace { program: "program", query: ChromeTrace }, path: "trace.json", indent: None }
            WriteJson { value: Trace { program: "program", query: Summary }, path: "summary.json", indent: Some(2) }
            ClearTrace { program: "program" }
            EnableTracing { program: "program", level: None }
        "#]],
    );
}

#[test]
fn constants_are_written_as_json_and_lists_known_now_unroll() {
    check(
        r#"
names = ["a", "b"]
with open("c.json", "w") as out:
    json.dump([1, 2.5, None, True, ("x", names)], out)
for n in names:
    print(f"name {n}", len(names))
    for m in (1, 2):
        print(n, m)
"#,
        expect![[r#"
            WriteJson { value: Known(List([Int(1), Float(F64(2.5)), Null, Bool(true), List([Str("x"), List([Str("a"), Str("b")])])])), path: "c.json", indent: None }
            Print([Format([Text("name a")]), Text("2")])
            Print([Text("a"), Text("1")])
            Print([Text("a"), Text("2")])
            Print([Format([Text("name b")]), Text("2")])
            Print([Text("b"), Text("1")])
            Print([Text("b"), Text("2")])
        "#]],
    );
}

#[test]
fn what_the_trace_does_not_have_is_located() {
    check(
        r#"
a = program.trace.get_kernel_events("dbI")
b = program.trace.summary()["kernel_tme_ms"]
c = program.trace.print_sumary()
d = program.trace.summary
e = program.trace.get_task_events().keys()
f = len(program)
g = program.trace.print_summary()
"#,
        expect![[r#"
            WSP101 `"dbI"`: the program runs no kernel `dbI`; did you mean `dbl`? (it runs `dbl`)
            WSP102 `"kernel_tme_ms"`: a trace summary has no key 'kernel_tme_ms'; did you mean 'kernel_time_ms'?
            WSP102 `print_sumary`: `program.trace` has no member `print_sumary`; did you mean `print_summary`?
            WSP102 `summary`: `.summary` of the trace of `program` is only usable as a call: `.summary()`
            WSP102 `keys`: a list of trace events has no method `keys`; it is read whole, printed or written with `json.dump`
            WSP210 `program`: `len` takes a list, a tuple, a string or a trace's events, not a compiled program
            WSP002 `program.trace.print_summary()`: `print_summary()` prints when it stands as a statement of its own; bound to a name it prints nothing here
        "#]],
    );
}

#[test]
fn open_and_json_elsewhere_name_the_supported_form() {
    check(
        r#"
f = open("x.json", "w")
json.dump(1, f)
with open("x.json", "a") as g:
    json.dump(1, g)
with open("x.json", "w") as g:
    json.dump(program, g)
with open("x.json", "w") as g:
    print(1)
with open("x.json", "w") as g:
    json.dump(1, f)
with open("x.json", "w") as g:
    json.dump(program.trace, g)
for i in 3:
    print(i)
for i in [1, 2]:
    x = i
with open("x.json", "w") as g:
    json.dump(1, g, indent=5000)
"#,
        expect![[r#"
            WSP002 `open("x.json", "w")`: `open` is supported only as `with open(PATH, "w") as f:` whose body is `json.dump(value, f)`
            WSP002 `json.dump(1, f)`: `json.dump(value, f)` is supported only as the body of `with open(PATH, "w") as f:`
            WSP002 `"a"`: a file is opened to be written whole (`"w"`), not with mode "a"
            WSP210 `program`: `json.dump` writes constants and `program.trace` values, not a compiled program
            WSP002 `print`: a module-level `with` is `with open(PATH, "w") as f:` whose body is `json.dump(value, f)` (optionally `indent=N`)
            WSP210 `f`: `json.dump` writes to the file this `with` opened: `json.dump(value, g)`
            WSP210 `program.trace`: the trace of `program` is not JSON; write `program.trace.to_chrome_trace()` or `program.trace.summary()`
            WSP002 `3`: a module-level `for` runs over a list known when the file is checked (it is unrolled), not the integer 3
            WSP002 `x`: the body of a module-level `for` is `print(...)` statements and nested such loops: it is unrolled when the file is checked
            WSP210 `5000`: `indent` is at most 1000 spaces, not 5000
        "#]],
    );
}

#[test]
fn a_kernels_trace_has_what_the_originals_kernel_ir_has() {
    check(
        r#"
ir = dbl.trace(1)
a = dbl.trace().opz
b = dbl.compile()
c = len(dbl.trace())
for x, y in [1, 2]:
    print(x)
"#,
        expect![[r#"
            WSP203 `1`: `.trace` takes at most 0 arguments
            WSP102 `opz`: `KernelIR` has no member `opz`; did you mean `ops`?
            WSP102 `compile`: `kernel` has no member `compile`
            WSP210 `dbl.trace()`: `len` takes a list, a tuple, a string or a trace's events, not a kernel's IR
            WSP210 `x, y`: 2 names cannot be unpacked from the integer 1
        "#]],
    );
}
