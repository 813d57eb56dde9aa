"""Written into a search run's gate folder by the gate (bites), under a name
drawn per run, and run with head's interpreter, outside any test runner:
for each surviving mutant of one plain function, an input on which head's
function and the mutant's give different results, or none found.

No test of head's runs here, nor conftest nor plugin: only the module the
function lives in, imported as the tests imported it, and a twin of that
module made from the mutant's text (compiled under the file's own name).
Both functions are called on each input with a deep copy of it and a time
limit; a result is what the call returned or the type of what it raised,
with the arguments as the call left them (a function that changes its
input in place and returns None differs there). Inputs come from
hypothesis (shipped as a zip beside this file; the gate's own copy),
built around the calls the tests made (pytest_record_calls.py), one
argument varied at a time, the others kept: a number within the span the
tests gave that argument, or one of the literals of the function's code
(and their neighbours and products: a mutant of `year % 400` differs at a
multiple of 400); text and bytes of about the same length; lists of the
recorded items' kinds. Derandomized, so the same
change gets the same answer; the first input found is shrunk.

A function whose results compare only by identity (an object with no
`__eq__`) cannot be told apart this way: it is reported as such, and the
gate keeps the survivor as it was. Writes JSON to the path in argv[1].

The gate appends `_main(JOB)`: module, function, recorded calls and the
mutants' texts, packed.
"""

from __future__ import annotations

import ast
import base64
import copy
import importlib
import json
import os
import signal
import sys
import tempfile
import types
import zipfile
import zlib
from typing import Any

MAX_EXAMPLES = 300  # inputs tried per mutant (before shrinking)
CALL_SECONDS = 1.0  # one call's limit: a call that runs on tells nothing
SHOWN = 80  # characters of a shown value


class _Timeout(BaseException):
    """Raised by the alarm: a BaseException, so head's `except Exception` lets it through."""


class _Identity(Exception):
    """Results that compare only by identity: no input can tell them apart."""


def _main(job_text: str) -> None:
    job = json.loads(zlib.decompress(base64.b85decode(job_text)))
    out: dict[str, Any]
    try:
        out = {"mutants": _search_all(job)}
    except Exception as err:  # noqa: BLE001 - whatever failed, the gate keeps the survivors as they were
        out = {"error": f"{type(err).__name__}: {err}"[: SHOWN * 2]}
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        json.dump(out, handle)


def _search_all(job: dict[str, Any]) -> dict[str, Any]:
    _hypothesis(job["zip"])
    module = importlib.import_module(job["module"])
    original = getattr(module, job["function"])
    calls = [
        ([ast.literal_eval(a) for a in call["args"]], {k: ast.literal_eval(v) for k, v in call["kwargs"].items()})
        for call in job["calls"]
    ]
    signal.signal(signal.SIGALRM, _alarm)
    found = {}
    head = _Side(module, original)
    for key, (source, line) in job["mutants"].items():
        twin = _twin(module, source)
        found[key] = _search(job["function"], head, _Side(twin, getattr(twin, job["function"]), line), calls)
    return found


class _Side:
    """One of the two functions and its module's own plain values (a
    cache, a log: what a function that returns None leaves behind), put
    back as they were before each call, so that every call is judged
    from the same start. While it runs, its module is the one
    `sys.modules` holds under the module's name. For the mutant's side,
    `line` is the mutated line: whether a call ran it is kept, since an
    input that never reaches it tells nothing of the mutant."""

    def __init__(self, module: types.ModuleType, function: Any, line: int = 0):
        self.module, self.function, self.line = module, function, line
        self.start = copy.deepcopy(_state(module))
        self.ran = False

    def result(self, call: tuple[list[Any], dict[str, Any]]) -> tuple[str, Any, Any, dict[str, Any]]:
        vars(self.module).update(copy.deepcopy(self.start))
        sys.modules[self.module.__name__] = self.module
        self.ran = False
        sys.settrace(self._trace if self.line else None)
        try:
            kind, value, left = _result(self.function, call)
        finally:
            sys.settrace(None)
        return (kind, value, left, _state(self.module))

    def _trace(self, frame: Any, event: str, arg: Any) -> Any:
        return self._line if frame.f_code is self.function.__code__ else None

    def _line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno == self.line:
            self.ran = True
        return self._line


def _state(module: types.ModuleType) -> dict[str, Any]:
    return {name: value for name, value in vars(module).items() if not name.startswith("__") and _plain(value, 0)}


def _plain(value: Any, depth: int) -> bool:
    if type(value) in (int, float, str, bytes, bool, type(None)):
        return True
    if depth >= 4 or type(value) not in (list, tuple, set, frozenset, dict) or len(value) > 1000:
        return False
    items = [*value.keys(), *value.values()] if type(value) is dict else list(value)
    return all(_plain(item, depth + 1) for item in items)


def _hypothesis(name: str) -> None:
    """hypothesis from the zip beside this file, first on the path."""
    folder = tempfile.mkdtemp(prefix="search-")
    with zipfile.ZipFile(os.path.join(os.path.dirname(os.path.abspath(__file__)), name)) as shipped:
        shipped.extractall(folder)
    sys.path.insert(0, folder)


def _twin(module: types.ModuleType, source: str) -> types.ModuleType:
    """The module once more, from the mutant's text, under the file's name."""
    twin = types.ModuleType(module.__name__)
    for key in ("__file__", "__package__", "__spec__", "__path__", "__loader__"):
        if key in module.__dict__:
            twin.__dict__[key] = module.__dict__[key]
    exec(compile(source, module.__file__ or "<mutant>", "exec"), twin.__dict__)  # noqa: S102 - the mutant, in a fork
    return twin


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _search(name: str, original: _Side, mutant: _Side, calls: list[tuple[list[Any], dict[str, Any]]]) -> dict[str, Any]:
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    tried: set[str] = set()
    returned: set[str] = set()

    def differs(call: tuple[list[Any], dict[str, Any]]) -> bool:
        here, there = original.result(call), mutant.result(call)
        tried.add(_args_text(call))
        if here[0] == "value" and mutant.ran:
            returned.add(_args_text(call))
        return _differ(here, there)

    chosen = settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
    )
    try:
        call = find(_calls(calls, _constants(original.function, mutant.function)), differs, settings=chosen)
        here, there = original.result(call), mutant.result(call)
    except NoSuchExample:
        # hypothesis stops short of max_examples only where it has tried every input its strategy holds
        return {"none": len(returned), "tried": len(tried), "every": len(tried) < MAX_EXAMPLES}
    except _Identity:
        return {"skip": "its results compare only by identity"}
    finally:
        sys.modules[original.module.__name__] = original.module
    return {"found": [_call_text(name, call), *_shown(here, there)]}


def _result(function: Any, call: tuple[list[Any], dict[str, Any]]) -> tuple[str, Any, Any]:
    args, kwargs = copy.deepcopy(call)
    signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
    try:
        value = function(*args, **kwargs)
        kind = "value"
    except _Timeout:
        return ("timeout", None, None)
    except Exception as err:  # noqa: BLE001 - what it raised is its result
        value, kind = type(err), "raise"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return (kind, value, (args, kwargs))


def _differ(here: tuple[str, Any, Any, Any], there: tuple[str, Any, Any, Any]) -> bool:
    if "timeout" in (here[0], there[0]):
        return False  # a call that ran on tells nothing
    if here[0] != there[0]:
        return True
    return not _same(here[1], there[1]) or not _same(here[2], there[2]) or here[3] != there[3]


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return _twins(a, b)
    if a is b:
        return True
    if type(a).__eq__ is vars(object)["__eq__"]:  # compared only by identity
        raise _Identity
    try:
        return bool(a == b) or repr(a) == repr(b)  # NaN is not equal to itself, but is the same result
    except Exception:  # noqa: BLE001 - a comparison that fails: tell by the text
        return repr(a) == repr(b)


def _twins(a: Any, b: Any) -> bool:
    """Objects of a class the module defines, one from head's module and
    one from the mutant's copy: two classes of one name, which `==` (a
    dataclass's too) calls different. Told apart by their repr where the
    class writes one; by nothing where it does not."""
    kinds = type(a), type(b)
    if len({(k.__module__, k.__qualname__) for k in kinds}) != 1:
        return False
    if any(k.__repr__ is vars(object)["__repr__"] for k in kinds):
        raise _Identity
    return repr(a) == repr(b)


def _calls(calls: list[tuple[list[Any], dict[str, Any]]], known: dict[type, list[Any]]) -> Any:
    """A recorded call with one of its arguments varied, the others kept,
    a number within the span the tests gave that argument (two beyond each
    end) or one of the code's own literals: callers keep the relations
    between a function's arguments (`low <= high`), and an input that
    breaks one is not the test a change lacks."""
    from hypothesis import strategies as st

    spans = _spans(calls)

    def varied(call: tuple[list[Any], dict[str, Any]], index: int) -> Any:
        args, kwargs = call
        pick = [_near(a, known, spans.get(i)) if i == index else st.just(a) for i, a in enumerate(args)]
        named = {
            k: _near(v, known, spans.get(k)) if len(args) + i == index else st.just(v)
            for i, (k, v) in enumerate(kwargs.items())
        }
        return st.tuples(st.tuples(*pick).map(list), st.fixed_dictionaries(named))

    def one(call: tuple[list[Any], dict[str, Any]]) -> Any:
        slots = len(call[0]) + len(call[1])
        return st.integers(0, max(slots - 1, 0)).flatmap(lambda index: varied(call, index))

    return st.sampled_from(calls).flatmap(one)


def _spans(calls: list[tuple[list[Any], dict[str, Any]]]) -> dict[int | str, tuple[Any, Any]]:
    """Each numeric argument's least and greatest value in the tests' calls, by position or name."""
    seen: dict[int | str, list[Any]] = {}
    for args, kwargs in calls:
        places: list[tuple[int | str, Any]] = [*enumerate(args), *kwargs.items()]
        for where, value in places:
            if type(value) in (int, float):
                seen.setdefault(where, []).append(value)
    return {where: (min(values), max(values)) for where, values in seen.items()}


def _constants(*functions: Any) -> dict[type, list[Any]]:
    """The literals both functions' code holds, by kind, with each
    integer's neighbours and the products of two: a mutant of `year % 400`
    differs at a multiple of 400, which random integers rarely hit."""
    found: dict[type, set[Any]] = {}
    codes = [f.__code__ for f in functions]
    while codes:
        code = codes.pop()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                codes.append(const)
            elif type(const) in (int, float, str, bytes) and len(found.setdefault(type(const), set())) < 64:
                found[type(const)].add(const)
    ints = found.get(int, set())
    more = {n + step for n in ints for step in (-1, 1)} | {a * b for a in ints for b in ints if abs(a * b) < 10**9}
    found[int] = ints | more
    found[float] = found.get(float, set()) | {float(n) for n in found[int]}  # `seconds < 60` on a float too
    return {kind: sorted(values, key=repr) for kind, values in found.items() if values}


def _near(value: Any, known: dict[type, list[Any]], span: tuple[Any, Any] | None = None) -> Any:
    """Values of the recorded one's kind: itself, others within its span,
    the code's own literals of that kind."""
    from hypothesis import strategies as st

    kind = type(value)
    literal = [st.sampled_from(known[kind])] if known.get(kind) and kind is not bool else []
    low, high = span if span is not None and kind in (int, float) else (value, value)
    if kind is bool or value is None:
        return st.booleans() if kind is bool else st.none()
    if kind is int:
        return st.one_of(st.just(value), st.integers(low - 2, high + 2), *literal)
    if kind is float:
        return st.one_of(st.just(value), st.floats(low - 2, high + 2, allow_nan=False), *literal)
    if kind in (str, bytes):
        sized = (st.text if kind is str else st.binary)(max_size=len(value) + 3)
        return st.one_of(st.just(value), *literal, sized)
    if kind in (list, tuple):
        items = st.one_of(*(_near(v, known) for v in value)) if value else st.integers(-3, 3)
        return st.lists(items, max_size=len(value) + 2).map(kind)
    if kind is dict:
        keys = st.one_of(*(_near(k, known) for k in value)) if value else st.text(max_size=4)
        values = st.one_of(*(_near(v, known) for v in value.values())) if value else st.integers(-3, 3)
        return st.dictionaries(keys, values, max_size=len(value) + 2)
    return st.just(value)


def _call_text(name: str, call: tuple[list[Any], dict[str, Any]]) -> str:
    return _cut(f"{name}({_args_text(call)})")


def _shown(here: tuple[str, Any, Any, Any], there: tuple[str, Any, Any, Any]) -> list[str]:
    """Each side's result in words: what it returned or raised, and where
    that is the same, how it left the arguments or the module's values."""

    def said(result: tuple[str, Any, Any, Any]) -> str:
        kind, value = result[:2]
        return f"raises {value.__name__}" if kind == "raise" else repr(value)

    if said(here) != said(there):
        return [_cut(said(here)), _cut(said(there))]
    if _args_text(here[2]) != _args_text(there[2]):
        return [_cut(f"{said(r)}, leaves {_args_text(r[2])}") for r in (here, there)]
    name = next((k for k in sorted(set(here[3]) | set(there[3])) if here[3].get(k) != there[3].get(k)), "")
    return [_cut(f"{said(r)}, leaves {name} = {r[3].get(name)!r}") for r in (here, there)]


def _args_text(call: tuple[list[Any], dict[str, Any]]) -> str:
    args, kwargs = call
    return ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."
