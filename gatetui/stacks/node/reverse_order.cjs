"use strict";
// gatetui's reverse-order run for node's test runner (random_order = true,
// run 1): each file's tests are registered last to first, so a test that
// passes only because one declared before it ran fails here every time.
//
// Loaded with NODE_OPTIONS=--require into every process `node --test`
// starts. It wraps test/it/describe/suite of node:test (named imports see
// the wrappers through syncBuiltinESMExports; a default import of the
// module's own function keeps the source order). A file's top-level calls
// are held until its module has loaded, then registered reversed; the
// calls a describe's callback makes are held until it returns, then
// registered reversed, so each suite keeps its own tests.
const nodeTest = require("node:test");
const { syncBuiltinESMExports } = require("node:module");

let frame = null; // the calls the running describe callback makes
const top = []; // a file's top-level calls, registered on the next turn

function flush(held) {
  for (const [fn, self, args] of held.splice(0).reverse()) fn.apply(self, args);
}

function inSuite(args) {
  const at = args.findIndex((a) => typeof a === "function");
  if (at < 0) return args;
  const body = args[at];
  const out = [...args];
  out[at] = function (...inner) {
    const outer = frame;
    const mine = (frame = []);
    try {
      return body.apply(this, inner);
    } finally {
      frame = outer;
      flush(mine);
    }
  };
  return out;
}

function held(original, suite) {
  if (typeof original !== "function") return original;
  const wrapper = function (...args) {
    const call = [original, this, suite ? inSuite(args) : args];
    if (frame !== null) {
      frame.push(call);
    } else {
      if (top.length === 0) setImmediate(() => flush(top));
      top.push(call);
    }
  };
  for (const mode of ["skip", "todo", "only"]) wrapper[mode] = held(original[mode], suite);
  return wrapper;
}

for (const name of ["test", "it"]) nodeTest[name] = held(nodeTest[name], false);
for (const name of ["describe", "suite"]) nodeTest[name] = held(nodeTest[name], true);
syncBuiltinESMExports();
