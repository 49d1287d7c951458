// language-configuration.json: it parses as VS Code reads it (JSON with comments), and its
// indentation rules do what Python editing needs: indent after a block header ending in `:`,
// outdent after return/pass/break/continue/raise, nothing for an ordinary line.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const text = fs.readFileSync(path.join(__dirname, "..", "language-configuration.json"), "utf8");
const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ""));

/** The action VS Code takes on Enter at the end of `line`: the first rule that matches wins. */
function onEnter(line) {
  const rule = config.onEnterRules.find((r) => new RegExp(r.beforeText).test(line) && !r.afterText);
  return rule ? rule.action.indent : "none";
}

test("comments, brackets and quote pairs", () => {
  assert.equal(config.comments.lineComment, "#");
  assert.deepEqual(config.brackets, [["{", "}"], ["[", "]"], ["(", ")"]]);
  const opens = config.autoClosingPairs.map((p) => p.open);
  for (const open of ["(", "[", "{", '"', "'", '"""', "'''"]) assert.ok(opens.includes(open), open);
  const surrounding = config.surroundingPairs.map((p) => p[0]);
  for (const open of ["(", "[", "{", '"', "'"]) assert.ok(surrounding.includes(open), open);
});

test("Enter indents after a block header", () => {
  for (const line of [
    "def add_kernel(a: In[Tile[32, 32, F32]], c: Out[Tile[32, 32, F32]]):",
    "    for i in P(batch):",
    "    for b, h in P(batch, heads):  # every pair",
    "    with P.when(i < 2):",
    "    with P.pipe():",
    "                 eps: Scalar[F32] = 1e-6):",
  ]) {
    assert.equal(onEnter(line), "indent", line);
  }
  assert.match(text, /increaseIndentPattern/);
  assert.ok(new RegExp(config.indentationRules.increaseIndentPattern).test("    for i in P.seq(seq):"));
});

test("Enter outdents after a statement that ends the block", () => {
  for (const line of ["        pass", "    return x", "        break", "        continue", "    raise ValueError()"]) {
    assert.equal(onEnter(line), "outdent", line);
  }
});

test("Enter keeps the indentation after an ordinary line", () => {
  for (const line of ["    y = pto.add(a, b)", "x = 1", "    passed = 1 if a else 2", "s = \"a: b\"", "# note:"]) {
    assert.equal(onEnter(line), "none", line);
  }
});
