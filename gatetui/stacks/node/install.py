"""npm's install in steps that keep head's code away from node_modules.

`npm ci` runs the root package's lifecycle scripts (preinstall, install,
postinstall, prepare), and node_modules is what every later run executes:
vitest itself. So the default install runs in steps (see OwnInstall in
stacks/base.py):

1. head's `.npmrc` is cut to the keys that say where packages come from
   (a `node-options`, `script-shell` or `git` key would run code of head's
   in the steps that follow);
2. `npm ci --ignore-scripts`: the lockfile's packages, no scripts at all
   (where base keeps no lock, `npm install --package-lock-only` writes one
   first, from package.json, running nothing);
3. `npm rebuild` of the index's packages that have install scripts (never a
   package linked from or packed in the tree: that is head's code);
4. the environment is fingerprinted, head's own lifecycle scripts run, and
   node_modules must be byte for byte what it was.

The scripts are the gate's, passed in the environment and run with the
machine's node, so nothing of them lives in the tree head could shadow. npm
has no switch to run only dependencies' scripts or only the root's, which
is why steps 3 and 4 name them one by one.
"""

from __future__ import annotations

from gatetui.stacks.base import GateScript, OwnInstall

# The keys of a project's .npmrc that say where packages come from and how
# to reach it; every other key is dropped (and said) before npm runs.
NPMRC_KEYS = (
    r"^(@[^:=\s]+:)?registry$|^(strict-ssl|fetch-retries|fetch-retry-[a-z]+|fetch-timeout|"
    r"prefer-offline|prefer-online|always-auth|legacy-peer-deps|engine-strict)$"
)

NPMRC = f"""
const fs = require("fs");
let text; try {{ text = fs.readFileSync(".npmrc", "utf8"); }} catch (e) {{ process.exit(0); }}
const keep = /{NPMRC_KEYS}/, kept = [], dropped = [];
for (const line of text.split(/\\r?\\n/)) {{
  const key = line.split("=")[0].trim();
  if (!key || key.startsWith("#") || key.startsWith(";")) continue;
  (keep.test(key) ? kept : dropped).push(line);
}}
fs.writeFileSync(".npmrc", kept.join("\\n") + "\\n");
if (dropped.length) console.log("gatetui: .npmrc keys the install does not use: " +
  dropped.map((l) => l.split("=")[0].trim()).join(", "));
"""

REBUILD = """
const fs = require("fs"), { spawnSync } = require("child_process");
let lock; try { lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8")); } catch (e) { process.exit(0); }
const names = new Set();
for (const [key, p] of Object.entries((lock && lock.packages) || {})) {
  if (!key.startsWith("node_modules/") || !p || typeof p !== "object" || !p.hasInstallScript || p.link) continue;
  const from = typeof p.resolved === "string" ? p.resolved : "";
  if (from && !/^https?:\\/\\//.test(from)) continue;  // packed in the tree, or git: head's code
  names.add(key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length));
}
if (!names.size) process.exit(0);
const done = spawnSync("npm", ["rebuild", "--no-audit", "--no-fund", ...[...names].sort()], { stdio: "inherit" });
process.exit(done.status === null ? 1 : done.status);
"""

LIFECYCLE = """
const fs = require("fs"), { spawnSync } = require("child_process");
let scripts = {};
try { scripts = JSON.parse(fs.readFileSync("package.json", "utf8")).scripts || {}; } catch (e) {}
for (const name of ["preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare"]) {
  if (typeof scripts[name] !== "string") continue;
  const done = spawnSync("npm", ["run", "--ignore-scripts", name], { stdio: "inherit" });
  if (done.status !== 0) process.exit(done.status === null ? 1 : done.status);
}
"""

# {path: digest} of the environment's folders, never following a link.
FINGERPRINT = """
const fs = require("fs"), crypto = require("crypto");
const [report, ...roots] = process.argv.slice(1);
const files = {};
function walk(rel) {
  let st; try { st = fs.lstatSync(rel); } catch (e) { return; }
  if (st.isSymbolicLink()) { files[rel] = "link:" + fs.readlinkSync(rel); return; }
  if (st.isDirectory()) {
    files[rel] = "dir";
    for (const name of fs.readdirSync(rel).sort()) walk(rel + "/" + name);
    return;
  }
  if (!st.isFile()) { files[rel] = "other"; return; }
  const hash = crypto.createHash("sha256").update(fs.readFileSync(rel)).digest("hex");
  files[rel] = "file:" + ((st.mode & 0o111) ? "x:" : "") + hash;
}
for (const root of roots) walk(root);
fs.writeFileSync(report, JSON.stringify({ files }));
"""


def _run(var: str) -> str:
    return f'node -e "${var}"'


STEPS = (_run("GATE_NPMRC"), "npm ci --no-audit --no-fund --ignore-scripts", _run("GATE_NPM_REBUILD"))
# A project that keeps no lock (many libraries leave it out of git): npm
# resolves package.json into one first, running nothing (`npm ci` refuses to
# start without it), and the steps go on as for a locked project.
LOCK_FIRST = "npm install --package-lock-only --no-audit --no-fund --ignore-scripts"
LOCKS = ("package-lock.json", "npm-shrinkwrap.json")


def steps(locked: bool) -> tuple[str, ...]:
    """The default install, for a project that keeps a lock or not."""
    return STEPS if locked else (STEPS[0], LOCK_FIRST, *STEPS[1:])


# npm asks the index for its own latest version after each command and says
# so last: a request and a notice per step that no gate needs
STEPS_ENV = {"GATE_NPMRC": NPMRC, "GATE_NPM_REBUILD": REBUILD, "npm_config_update_notifier": "false"}


def own_install(environment: tuple[str, ...]) -> OwnInstall:
    """Head's lifecycle scripts between fingerprints of `environment`."""
    folders = " ".join(f"'{folder}'" for folder in environment if "'" not in folder)
    return OwnInstall(
        command=_run("GATE_NPM_LIFECYCLE"),
        label="head's npm lifecycle scripts",
        fingerprint=GateScript(f"{_run('GATE_FINGERPRINT')} {{report}} {folders}", {"GATE_FINGERPRINT": FINGERPRINT}),
    )


LIFECYCLE_ENV = {"GATE_NPM_LIFECYCLE": LIFECYCLE}
