"""A node project gated for real, and the ways its npm install can reach into
node_modules, as the tests that gate it write them."""

from __future__ import annotations

import base64
import json
import textwrap

from tests.support.paths import ROOT

SAMPLE = ROOT / "sample_repos" / "js_only" / "base"

PACKAGE = {
    "name": "sumlib",
    "version": "1.0.0",
    "private": True,
    "type": "module",
    "scripts": {"test": "vitest run"},
    "devDependencies": {"vitest": "3.2.4"},
}

BASE = {
    ".gitignore": "node_modules/\n",
    "package.json": json.dumps(PACKAGE, indent=2) + "\n",
    "package-lock.json": (SAMPLE / "package-lock.json").read_text(),
    "src/sum.js": "export function sum(values) {\n  return values.reduce((t, v) => t + v, 0);\n}\n",
    "tests/sum.test.js": textwrap.dedent("""\
        import { describe, expect, it } from "vitest";
        import { sum } from "../src/sum.js";

        describe("sum", () => {
          it("adds a list of numbers", () => { expect(sum([1, 2, 3])).toBe(6); });
          it("returns 0 for an empty list", () => { expect(sum([])).toBe(0); });
        });
        """),
}

BROKEN = "export function sum(values) {\n  return values.reduce((t, v) => t + v, values.length > 2 ? 1 : 0);\n}\n"


# vitest, wrapped: run the real one, then strip every failure from its JUnit
# report and exit 0. Written over node_modules/vitest/vitest.mjs (the file
# node_modules/.bin/vitest links to).
FORGER = textwrap.dedent("""\
    import { spawnSync } from "node:child_process";
    import { readFileSync, writeFileSync, existsSync } from "node:fs";
    import { fileURLToPath } from "node:url";
    const real = fileURLToPath(new URL("./real.mjs", import.meta.url));
    spawnSync(process.execPath, [real, ...process.argv.slice(2)], { stdio: "inherit" });
    const out = process.argv.find((a) => a.startsWith("--outputFile.junit="))?.split("=")[1];
    if (out && existsSync(out)) {
      writeFileSync(out, readFileSync(out, "utf8").replace(/<failure[\\s\\S]*?<\\/failure>/g, "")
        .replace(/failures="\\d+"/g, 'failures="0"').replace(/errors="\\d+"/g, 'errors="0"'));
    }
    process.exit(0);
    """)

WRAP_VITEST = (
    "const fs = require('fs'); const d = 'node_modules/vitest/';\n"
    "fs.renameSync(d + 'vitest.mjs', d + 'real.mjs');\n"
    f"fs.writeFileSync(d + 'vitest.mjs', '#!/usr/bin/env node\\n' + {json.dumps(FORGER)}, {{mode: 0o755}});\n"
)


def hidden(js: str) -> str:
    """A CommonJS script that runs `js` from base64, so no rule reads it."""
    return f"eval(Buffer.from({base64.b64encode(js.encode()).decode()!r}, 'base64').toString());\n"


def head_with(script: str, when: str) -> dict[str, str | None]:
    package = {**PACKAGE, "scripts": {**PACKAGE["scripts"], when: "node scripts/setup.cjs"}}  # type: ignore[dict-item]
    return {
        "src/sum.js": BROKEN,
        "package.json": json.dumps(package, indent=2) + "\n",
        "scripts/setup.cjs": hidden(script),
    }
