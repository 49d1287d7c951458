// The grammar's WSP names against the tables they come from: every `pto.*` op of
// ir/src/ops.rs and every pto_wsp name of analysis/src/vocabulary.rs, no more and no fewer,
// so adding an op or a name without updating syntaxes/wsp.tmLanguage.json fails here.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..", "..", "..");
const grammar = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "syntaxes", "wsp.tmLanguage.json"), "utf8"));
const sorted = (xs) => [...new Set(xs)].sort();

/** The names `a|b|c` that follow `marker` in `regex`, up to the next `)`. */
function alternation(regex, marker) {
  const at = regex.indexOf(marker);
  assert.ok(at >= 0, `${marker} in ${regex}`);
  const start = at + marker.length;
  return regex.slice(start, regex.indexOf(")", start)).split("|");
}

test("the grammar's pto ops are exactly the op table of ir/src/ops.rs", () => {
  const source = fs.readFileSync(path.join(root, "ir", "src", "ops.rs"), "utf8");
  const table = [
    ...[...source.matchAll(/\bOp \{\s*name: "([a-z_0-9]+)"/g)].map((m) => m[1]),
    ...[...source.matchAll(/^\s*"([a-z_0-9]+)" = "/gm)].map((m) => m[1]),
  ];
  assert.ok(table.length >= 40, `found only ${table.length} ops in ops.rs`);
  const ops = alternation(grammar.repository["pto-op"].match, "(\\.)\\s*(?:(");
  assert.deepEqual(sorted(ops), sorted(table));
});

test("every pto_wsp name of analysis/src/vocabulary.rs has a scope in the grammar", () => {
  const source = fs.readFileSync(path.join(root, "analysis", "src", "vocabulary.rs"), "utf8");
  const names = [...source.matchAll(/^\s*[A-Z][A-Za-z0-9]* = "([A-Za-z_0-9]+)"[(\[ :]/gm)].map((m) => m[1]);
  assert.ok(names.length >= 50, `found only ${names.length} names in vocabulary.rs`);
  const builtins = grammar.repository["wsp-builtin"].patterns.flatMap((p) => alternation(p.match, "\\b(?:"));
  const decorators = alternation(grammar.repository.decorator.begin, "(?:(");
  const covered = new Set([...builtins, ...decorators]);
  assert.deepEqual(names.filter((n) => !covered.has(n)), [], "names without a scope");
  // And nothing coloured as a pto_wsp name that pto_wsp does not export (besides dtypes and Python's types).
  const dtypes = "F16 BF16 F32 F64 I8 I16 I32 I64 U8 U16 U32 U64".split(" ");
  const extra = [...covered].filter((n) => !names.includes(n) && !dtypes.includes(n) && !["int", "float", "bool", "str"].includes(n));
  assert.deepEqual(extra, [], "names the grammar colours that vocabulary.rs lacks");
});
