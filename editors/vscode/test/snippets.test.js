// The snippets, filled in with their defaults, make a WSP file that `wsp check` accepts:
// the file snippet, then kernel, workload, tensor and program, then a workload built from the
// loop snippets. Needs the wsp binary ($WSP_BIN, else target/debug/wsp of this repository).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const snippets = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "snippets", "wsp.json"), "utf8"));
const wsp = process.env.WSP_BIN || path.join(__dirname, "..", "..", "..", "target", "debug", "wsp");

/** A snippet as VS Code inserts it when every placeholder keeps its default (first choice), tabs as 4 spaces. */
function expand(name, finalText = "") {
  const body = snippets[name].body.join("\n");
  const values = new Map();
  // Defaults first (`${1:x}`, `${1|a,b|}`), then the mirrors (`${1}`, `$1`) take their value.
  let text = body.replace(/\$\{(\d+):([^${}]*)\}/g, (_, n, d) => (values.set(n, d), d));
  text = text.replace(/\$\{(\d+)\|([^|]*)\|\}/g, (_, n, choices) => {
    const first = choices.split(",")[0];
    values.set(n, first);
    return first;
  });
  text = text.replace(/\$\{(\d+)\}|\$(\d+)/g, (_, a, b) => {
    const n = a ?? b;
    if (n === "0") return finalText;
    assert.ok(values.has(n), `${name}: $${n} has no default`);
    return values.get(n);
  });
  assert.doesNotMatch(text, /\$/, `${name}: unexpanded placeholder`);
  return text.replace(/\t/g, "    ");
}

function check(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wsp-snippets-"));
  const file = path.join(dir, "snippets.wsp");
  fs.writeFileSync(file, source);
  const result = spawnSync(wsp, ["check", file], { encoding: "utf8" });
  fs.rmSync(dir, { recursive: true, force: true });
  return result;
}

const noBinary = !fs.existsSync(wsp) && `no wsp binary at ${wsp}: build it (cargo build -p wsp-cli --bin wsp) or set WSP_BIN`;

test("every snippet has a prefix, a description and a body", () => {
  for (const [name, s] of Object.entries(snippets)) {
    assert.ok(s.prefix && s.prefix.length, `${name}: prefix`);
    assert.ok(s.description, `${name}: description`);
    assert.ok(Array.isArray(s.body) && s.body.length, `${name}: body`);
  }
});

test("the snippets with their defaults pass `wsp check`", { skip: noBinary }, () => {
  const loops = [
    "@workload",
    "def loops(batch):",
    ...[
      expand("parallel loop", "add_kernel[i](a=A[i], b=B[i], c=C[i])"),
      expand("sequential loop", "add_kernel[i](a=A[i], b=B[i], c=C[i])"),
      expand("parallel loop", expand("conditional").replace(/\n/g, "\n    ")),
    ].map((l) => l.replace(/^/gm, "    ")),
  ].join("\n");
  const source = [
    expand("WSP file"),
    expand("tensor"),
    "",
    expand("kernel"),
    "",
    expand("workload"),
    "",
    loops,
    "",
    expand("program"),
    "",
  ].join("\n");
  const result = check(source);
  assert.equal(result.status, 0, `wsp check failed:\n${result.stdout}${result.stderr}\n--- file ---\n${source}`);
  assert.match(result.stdout + result.stderr, /0 errors, 0 warnings/, result.stdout + result.stderr);
});

test("`wsp check` does reject a broken snippet (the check above can fail)", { skip: noBinary }, () => {
  const broken = [expand("WSP file"), expand("kernel").replace("pto.add", "pto.addd")].join("\n");
  const result = check(broken);
  assert.notEqual(result.status, 0);
  assert.match(result.stdout + result.stderr, /WSP102/);
});
