//! Python's numbers at check time: `import math` (constants and functions, in module constants,
//! tensor inits and kernel scalar defaults), `float("inf")`, and Python's errors where Python
//! raises them, each located at the call.

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, Workspace, file_diagnostics, lower_file};

fn check(text: &str, expect: Expect) {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "numbers.wsp".into(), text.to_string());
    let mut shown = String::new();
    for d in file_diagnostics(&db, file) {
        let at = &text[d.range];
        let _ = writeln!(shown, "{} `{at}`: {}", d.code.as_str(), d.message);
    }
    if shown.is_empty() {
        // A clean file: show what its tensors and kernels were lowered to.
        for p in &lower_file(&db, file).clone().expect("lowered").programs {
            let _ = write!(shown, "{p}");
        }
    }
    expect.assert_eq(&shown);
}

/// An online-softmax prelude as the original writes it: a scale of `1/math.sqrt(D)` and a
/// running max starting at minus infinity.
const ATTENTION: &str = r#"from pto_wsp import *
import math

F32 = DType.F32
D = 64
SCALE = 1 / math.sqrt(D)
NEG_INF = -float("inf")
LOG = math.log(8, 2) + math.log2(8) + math.floor(2.5) + int(-2.7)

M = Tensor((2, 16, 1), F32, init=full(-math.inf))
S = Tensor((2, 16, D), F32, init=full(NEG_INF))
Y = Tensor((2, 16, D), F32)

@kernel
def scaled(x: In[Tile[16, 64, F32]], m: In[Tile[16, 1, F32]], y: Out[Tile[16, 64, F32]], scale: Scalar[F32] = 1 / math.sqrt(D)):
    pto.store(y, pto.max(pto.mul(pto.load(x), scale), pto.load(m)))

@workload
def w():
    for b in P(Dense[2]):
        scaled[b](x=S[b], m=M[b], y=Y[b])

program = w().compile(target="cpu_sim")
"#;

#[test]
fn math_and_infinities_are_numbers_known_at_check_time() {
    check(
        ATTENTION,
        expect![[r#"
            program program target cpu_sim (ir v3)
            tensor M [2,16,1] F32 layout [R, R, R] init full(-inf)
            tensor S [2,16,64] F32 layout [R, R, R] init full(-inf)
            tensor Y [2,16,64] F32 layout [R, R, R] init zeros

            kernel scaled(x: In Tile[16,64] F32, m: In Tile[16,1] F32, y: Out Tile[16,64] F32, scale: Scalar F32 = 0.125)
              %0 = load(x) : Tile[16,64] F32
              %1 = mul(%0, scale) : Tile[16,64] F32
              %2 = load(m) : Tile[16,1] F32
              %3 = maximum(%1, %2) : Tile[16,64] F32
              store(y, %3)

            workload #0 w()
              loop Independent b in range Dense x2
                task #0 scaled[b] fields (b) (x: In S[b], m: In M[b], y: Out Y[b])

            root #0
        "#]],
    );
}

#[test]
fn pythons_errors_are_located_at_their_call() {
    check(
        r#"from pto_wsp import *
import os
import math as m
import math

A = math.sqrt(-1)
B = 1 / 0
C = 1.5 / 0.0
D = int(float("inf"))
E = float("infinity and beyond")
F = math.isqrt(2.5)
G = math.exp(1000)
H = math.sqrtt(2)
"#,
        expect![[r#"
            WSP002 `os`: `import os` is not supported; the one module a file may import is `math`, and `pto_wsp`'s names come with `from pto_wsp import ...`
            WSP002 `math as m`: import `math` under its own name: `import math`
            WSP203 `-1`: `math.sqrt` of -1: math domain error (Python raises ValueError)
            WSP002 `1 / 0`: division by zero in a constant expression
            WSP002 `1.5 / 0.0`: division by zero in a constant expression (write `math.inf` for an infinity)
            WSP203 `float("inf")`: `int` of inf: OverflowError: cannot convert float infinity to integer
            WSP203 `"infinity and beyond"`: could not convert string to float: "infinity and beyond"
            WSP203 `2.5`: `math.isqrt` takes a non-negative int, not a float
            WSP203 `math.exp(1000)`: `math.exp` overflows a float here (Python raises OverflowError)
            WSP102 `sqrtt`: `math` has no member `sqrtt`; did you mean `sqrt`?
        "#]],
    );
}

#[test]
fn math_is_visible_only_after_its_import() {
    check(
        "from pto_wsp import *\nA = math.pi\nimport math\nB = math.pi\n",
        expect![[r#"
            WSP101 `math`: `math` is not imported; add `import math` above this use
        "#]],
    );
}

#[test]
fn topk_ops_check_their_fixed_shapes() {
    check(
        r#"from pto_wsp import *

F32 = DType.F32
I32 = DType.I32

@kernel
def k(s: In[Tile[1, 16, F32]], t: In[Tile[1, 32, F32]], o: Out[Tile[1, 8, I32]]):
    a = pto.tsort32(s, pto.iota_u32(16))
    b = pto.tsort32(t, t)
    c = pto.extract_topk_indices(t, 8)
    d = pto.extract_topk_indices(pto.tsort32(t, pto.iota_u32(32)), 33)
    e = pto.iota_u32(0)
    pto.store(o, pto.extract_topk_indices(pto.tsort32(t, pto.iota_u32(32)), 8))
"#,
        expect![[r#"
            WSP201 `s`: `pto.tsort32`: `scores` is a [1,32] F32 tile (TSORT32 sorts 32 elements), but `s` is [1,16] F32
            WSP202 `t`: `pto.tsort32`: `idx` is a [1,32] U32 tile (TSORT32 sorts 32 elements), but `t` is [1,32] F32
            WSP201 `t`: `pto.extract_topk_indices` takes `tsort32`'s [1,64] F32 pairs, but `t` is [1,32] F32
            WSP203 `33`: `pto.extract_topk_indices`: `k` is an integer from 1 to 32, not 33
            WSP203 `0`: `pto.iota_u32`: `cols` is an integer from 1 to 4096, not 0
        "#]],
    );
}
