//! Inlay hints, semantic highlighting and folding ranges, as snapshots.

use std::fmt::Write;
use std::path::Path;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, TextRange, Workspace};
use wsp_ide::{folding_ranges, highlights, inlay_hints};

fn example(name: &str) -> (Database, File, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    let text = std::fs::read_to_string(path).expect("example");
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, name.into(), text.clone());
    (db, file, text)
}

fn line(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

#[test]
fn inlay_hints_of_every_example() {
    let mut out = String::new();
    for name in [
        "hello_add.wsp",
        "rmsnorm.wsp",
        "softmax.wsp",
        "tiled_matmul.wsp",
        "varlen_attention.wsp",
        "moe.wsp",
        "megakernel_pipeline.wsp",
        "sharded_linear.wsp",
        "transformer_layer.wsp",
    ] {
        let (db, file, text) = example(name);
        let all = TextRange::up_to(wsp_analysis::TextSize::of(&text));
        let _ = writeln!(out, "== {name}");
        for h in inlay_hints(&db, file, all) {
            let at = usize::from(h.offset);
            let before = text[..at].rsplit('\n').next().unwrap_or("").trim_start();
            let _ = writeln!(out, "{}: {before}‹{}›", line(&text, at), h.label);
        }
    }
    expect![[r#"
        == hello_add.wsp
        15: x‹: Tile[32,32] F32›
        16: y‹: Tile[32,32] F32›
        21: def simple_add(batch)‹4 tasks›
        22: for i in P(batch)‹Independent›
        == rmsnorm.wsp
        21: sq‹: Tile[16,128] F32›
        22: inv‹: Tile[16,1] F32›
        27: def rmsnorm(batch, tiles)‹32 tasks›
        28: for b, t in P(batch, tiles)‹Independent›
        == softmax.wsp
        15: m‹: Tile[64,1] F32›
        16: e‹: Tile[64,256] F32›
        17: s‹: Tile[64,1] F32›
        22: def softmax(rows)‹8 tasks›
        23: for r in P(rows)‹Independent›
        == tiled_matmul.wsp
        26: acc‹: Tile[64,64] F32›
        35: def tiled_matmul(tile_m, tile_n)‹16 tasks›
        36: for m, n in P(tile_m, tile_n)‹Independent›
        == varlen_attention.wsp
        34: s‹: Tile[32,128] F32›
        35: e‹: Tile[32,128] F32›
        36: w‹: Tile[32,128] F32›
        46: m‹: Tile[32,1] F32›
        47: l‹: Tile[32,1] F32›
        48: acc‹: Tile[32,64] F32›
        63: def tiered_attention(batch, heads)‹32 tasks›
        64: for b, h in P(batch, heads)‹Independent›
        == moe.wsp
        27: h‹: Tile[32,256] F32›
        33: for b in P(batch)‹Independent›
        34: for e in P.sel(routing[b])‹Selected›
        == megakernel_pipeline.wsp
        29: scaled‹: Tile[64,128] F32›
        39: def pipeline(tiles)‹48 tasks›
        41: for i in P.seq(tiles)‹Sequential›
        == sharded_linear.wsp
        37: def row_parallel(shards, rows)‹8 tasks›
        38: for s, r in P(shards, rows)‹Independent›
        43: def epilogue(rows)‹4 tasks›
        44: for r in P(rows)‹Independent›
        == transformer_layer.wsp
        44: inv‹: Tile[64,1] F32›
        60: s‹: Tile[64,64] F32›
        61: e‹: Tile[64,64] F32›
        62: w‹: Tile[64,64] F32›
        79: up‹: Tile[64,256] F32›
        84: def norm1(batch)‹2 tasks›
        85: for b in P(batch)‹Independent›
        90: def attention(batch, heads)‹16 tasks›
        91: for b, h in P(batch, heads)‹Independent›
        97: def out_proj(batch, heads)‹10 tasks›
        98: for b in P(batch)‹Independent›
        100: for h in P.seq(heads)‹Sequential›
        105: def norm2(batch)‹2 tasks›
        106: for b in P(batch)‹Independent›
        111: def ffn(batch)‹2 tasks›
        112: for b in P(batch)‹Independent›
    "#]]
    .assert_eq(&out);
}

#[test]
fn highlighting_of_rmsnorm() {
    let (db, file, text) = example("rmsnorm.wsp");
    let mut out = String::new();
    let mut last_line = 0;
    for h in highlights(&db, file) {
        let l = line(&text, usize::from(h.range.start()));
        if l != last_line {
            if last_line != 0 {
                out.push('\n');
            }
            let _ = write!(out, "{l}:");
            last_line = l;
        }
        let word: String = text[h.range].chars().take(12).collect();
        let mut mods = String::new();
        for (on, m) in [
            (h.definition, "+def"),
            (h.readonly, "+ro"),
            (h.library, "+lib"),
        ] {
            if on {
                mods.push_str(m);
            }
        }
        let _ = write!(out, " {word}={:?}{mods}", h.class);
    }
    out.push('\n');
    expect![[r#"
        1: """RMSNorm o=String
        5: from=Keyword import=Keyword
        7: F32=Variable+def+ro DType=Namespace+lib F32=Member+lib
        8: ROWS=Variable+def+ro 16=Number
        9: HIDDEN=Variable+def+ro 128=Number
        11: batch=Variable+def+ro Dense=Type+lib 4=Number
        12: tiles=Variable+def+ro Dense=Type+lib 8=Number
        14: X=Variable+def+ro Tensor=Type+lib 4=Number 8=Number ROWS=Variable+ro HIDDEN=Variable+ro F32=Variable+ro init=Parameter randn=Function+lib seed=Parameter 0=Number
        15: Y=Variable+def+ro Tensor=Type+lib 4=Number 8=Number ROWS=Variable+ro HIDDEN=Variable+ro F32=Variable+ro
        18: @=Decorator kernel=Decorator+lib
        19: def=Keyword rmsnorm_tile=Function+def x=Parameter+def In=Type+lib Tile=Type+lib ROWS=Variable+ro HIDDEN=Variable+ro F32=Variable+ro out=Parameter+def Out=Type+lib Tile=Type+lib ROWS=Variable+ro HIDDEN=Variable+ro F32=Variable+ro
        20: eps=Parameter+def Scalar=Type+lib F32=Variable+ro 1e-6=Number
        21: sq=Variable+def pto=Namespace+lib mul=Function+lib x=Parameter x=Parameter
        22: inv=Variable+def pto=Namespace+lib rsqrt=Function+lib pto=Namespace+lib add=Function+lib pto=Namespace+lib rowmean=Function+lib sq=Variable eps=Parameter # [16, 1]=Comment
        23: pto=Namespace+lib store=Function+lib out=Parameter pto=Namespace+lib rowmul=Function+lib x=Parameter inv=Variable # [16, 128] =Comment
        26: @=Decorator workload=Decorator+lib
        27: def=Keyword rmsnorm=Function+def batch=Parameter+def tiles=Parameter+def
        28: for=Keyword b=Variable+def t=Variable+def in=Keyword P=Namespace+lib batch=Parameter tiles=Parameter
        29: rmsnorm_tile=Function b=Variable t=Variable x=Parameter X=Variable+ro b=Variable t=Variable out=Parameter Y=Variable+ro b=Variable t=Variable
        32: program=Variable+def+ro rmsnorm=Function batch=Variable+ro tiles=Variable+ro
        33: dispatch=Method DispatchPoli=Namespace+lib round_robin=Member+lib 4=Number
        34: task_graph=Method window=Parameter TaskWindow=Type+lib 8192=Number "tasks"=String WindowMode=Namespace+lib STALL=Member+lib
        35: compile=Method target=Parameter "cpu_sim"=String
        36: program=Variable+ro execute=Method
        37: program=Variable+ro synchronize=Method
        38: print=Function+lib program=Variable+ro stats=Member
    "#]].assert_eq(&out);
}

fn check_folding(name: &str, expect: Expect) {
    let (db, file, text) = example(name);
    let mut out = String::new();
    for (r, kind) in folding_ranges(&db, file) {
        let (a, b) = (
            line(&text, usize::from(r.start())),
            line(&text, usize::from(r.end())),
        );
        if a < b {
            let _ = writeln!(out, "{a}-{b} {kind:?}");
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn folding_ranges_end_at_their_last_token() {
    check_folding(
        "rmsnorm.wsp",
        expect![[r#"
        1-4 Comment
        19-23 Region
        27-29 Region
        28-29 Region
        32-35 Region
    "#]],
    );
}
