"""Per-test outcomes from the JUnit XML that a project's test runner writes.

The gate runs a suite several times (on base and on head) and compares what
happened to each test, so every test needs an id that is the same in every
run of the same suite.  The caller names the runner that wrote the report
(the profile's), and junit_ids.py holds each runner's id rule:

* pytest with ``-o junit_family=xunit1``:
  ``tests/test_x.py::TestC::test_a[1]`` (pytest's own node id);
* vitest's ``junit`` reporter: ``test/x.test.ts::describe > it``;
* node's ``--test-reporter=junit``: ``test/x.test.mjs::describe > it`` when
  node records the file (node >= 24), else ``describe > it``.

A failure to import or collect a whole file is reported by its file path.

The XML is written by code under test, so it is untrusted.  Whatever bytes
arrive, `parse_junit` either returns a `Report` or raises `ReportError` with
a one-line message.  defusedxml refuses any DTD at its declaration, so no
entity is declared and nothing external is fetched; what it does not limit
is limited here: the size before parsing, the nesting depth and element
count while streaming.  No other exception escapes.
"""

from __future__ import annotations

import codecs
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from xml.parsers import expat

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from gatetui.gate.reports.compare import (
    COLLECTION_FAILURE,
    DODGED,
    SEVERITY,
    Gone,
    Outcome,
    Report,
    TestResult,
    flaky,
    gone,
    missing,
    newly_skipped,
    uncollected,
)
from gatetui.gate.reports.test_ids import IdRule, id_rule
from gatetui.stacks.results import ReportError

__all__ = [
    "DODGED",
    "Gone",
    "Outcome",
    "Report",
    "ReportError",
    "TestResult",
    "flaky",
    "gone",
    "missing",
    "newly_skipped",
    "parse_junit",
    "uncollected",
]

DEFAULT_MAX_BYTES = 64 * 2**20
MAX_DEPTH = 256  # node nests a <testsuite> per describe; real suites stay far below
MAX_ELEMENTS = 1_000_000  # ~3 per test (case, failure, output): ~300k tests, parsed in a few seconds
MESSAGE_LIMIT = 500
_CHUNK = 1 << 16


# -------------------------------------------------------------------- parsing


def parse_junit(data: bytes | str, max_bytes: int = DEFAULT_MAX_BYTES, *, ids: str, root: str | None = None) -> Report:
    """Read one JUnit XML report whose test ids follow the rule `ids` (a
    `ReportFormat.ids`: its runner's).

    The id rule comes from the profile alone, never from the document (see
    junit_ids.py).  `root` is
    the absolute path of the project the suite ran in; absolute paths under
    it (node >= 24 writes them) become relative, so that ids match between
    checkouts in different directories.  A report without testcases is an
    empty `Report`, not an error.
    """
    rule = id_rule(ids)
    text = _as_text(data, max_bytes)
    target = _Target(rule, root)
    # defusedxml hooks expat's declaration handlers, which only the pure-Python
    # XMLParser exposes: about a third slower per element than the C one.
    parser = DefusedXMLParser(target=target, forbid_dtd=True)
    try:
        _feed(parser, text, target)
        parser.close()
    except DefusedXmlException:
        raise ReportError(REFUSED) from None
    except ET.ParseError as exc:
        raise ReportError(_not_xml(exc, text)) from None
    except UnicodeError as exc:
        raise ReportError(f"JUnit report is not valid text: {_one_line(str(exc))}") from None
    return Report.from_results(target.results)


REFUSED = "report declares entities (DOCTYPE/ENTITY), refused"
_DECLARATION = re.compile(r"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_MALFORMED = {
    expat.errors.codes[expat.errors.XML_ERROR_SYNTAX],
    expat.errors.codes[expat.errors.XML_ERROR_INVALID_TOKEN],
}


def _not_xml(exc: ET.ParseError, text: str) -> str:
    """The message for XML that expat could not read.

    A declaration too malformed for expat to see as one (`<!doctype`: XML
    is case-sensitive; `<!ENTITY` outside a DTD) is still named as the
    refusal a well-formed one would meet, rather than as a bare syntax error.
    """
    if exc.code in _MALFORMED and _DECLARATION.search(text):
        return REFUSED
    return f"JUnit report is not XML: {_one_line(str(exc))}"


_DECLARED = re.compile(rb"""^<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z][\w.:-]{0,39})["']""")
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE, whose BOM is its prefix
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# "<?" or "<" followed by a character, without a BOM (XML 1.0 appendix F).
_UNMARKED = (
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<\x00?", "utf-16-be"),
    (b"<\x00?\x00", "utf-16-le"),
)
_ALLOWED_CODECS = ("utf-8", "utf-16", "utf-32", "ascii", "latin-1", "iso8859-", "cp125")


def _as_text(data: bytes | str, max_bytes: int) -> str:
    """The report as text: the encoding XML's rules find, decoded by Python.

    Done here rather than by expat for the messages: a byte the encoding
    cannot decode, or an encoding no codec has, is named (expat says only
    "not well-formed"); and bytes and the same document as str read alike.
    """
    if isinstance(data, str):
        if len(data) > max_bytes:  # each char is at least one UTF-8 byte
            raise ReportError(f"JUnit report is over the {max_bytes}-byte limit")
        try:
            size = len(data.encode("utf-8"))
        except UnicodeError:
            raise ReportError("JUnit report is not valid text: lone surrogate") from None
        if size > max_bytes:
            raise ReportError(f"JUnit report is {size} bytes, over the {max_bytes}-byte limit")
        return data
    raw = bytes(data)
    if len(raw) > max_bytes:
        raise ReportError(f"JUnit report is {len(raw)} bytes, over the {max_bytes}-byte limit")
    encoding = _encoding_of(raw)
    try:
        return raw.decode(encoding)
    except UnicodeError as exc:
        raise ReportError(f"JUnit report is not valid {encoding}: {_one_line(str(exc))}") from None


def _encoding_of(raw: bytes) -> str:
    """The encoding XML's own rules give `raw`: a BOM, a declaration, else UTF-8."""
    for mark, name in _BOMS:
        if raw.startswith(mark):
            return name
    for prefix, name in _UNMARKED:
        if raw.startswith(prefix):
            return name
    declared = _DECLARED.match(raw)
    if declared is None:
        return "utf-8-sig"
    label = declared.group(1).decode("ascii")
    try:
        name = codecs.lookup(label).name
    except LookupError:
        raise ReportError(f"JUnit report declares unknown encoding {label!r}") from None
    if not name.startswith(_ALLOWED_CODECS):
        raise ReportError(f"JUnit report declares unsupported encoding {label!r}")
    return "utf-8-sig" if name == "utf-8" else name


def _feed(parser: DefusedXMLParser, text: str, target: _Target) -> None:
    """Feed `text` in chunks, so a limit hit early stops the parse early.

    expat re-reads an unfinished token on every feed, so a token longer than
    one chunk (a 50 MB attribute) would cost quadratic time; the chunk
    doubles whenever a feed produced no callback, keeping that linear.
    """
    size, offset = _CHUNK, 0
    while offset < len(text):
        before = target.callbacks
        parser.feed(text[offset : offset + size])
        offset += size
        size = _CHUNK if target.callbacks != before else size * 2


def _local(tag: str) -> str:
    """A tag without its namespace."""
    return tag.rsplit("}", 1)[-1]


def _one_line(text: str) -> str:
    """Collapse whitespace, so error messages stay on one line."""
    return " ".join(text.split())[:MESSAGE_LIMIT]


@dataclass
class _Suite:
    """An open <testsuite>; node nests one per describe."""

    name: str


@dataclass
class _Case:
    """An open <testcase>, with the worst outcome its children have shown."""

    attrib: dict[str, str]
    suites: list[str]
    outcome: Outcome = Outcome.PASSED
    message: str = ""


@dataclass
class _Detail:
    """An open <failure>, <error> or <skipped> inside a testcase."""

    outcome: Outcome
    message: str
    text: list[str] = field(default_factory=list)
    size: int = 0


_Frame = _Suite | _Case | _Detail | None


class _Target:
    """ElementTree parser target that keeps only what the report needs.

    No element tree is built, so memory follows the nesting depth, not the
    document size; depth and element count are capped because the shape of
    the document is chosen by whoever wrote it.
    """

    def __init__(self, rule: IdRule, root: str | None) -> None:
        self.rule = rule
        self.root = root
        self.results: list[TestResult] = []
        self.frames: list[_Frame] = []
        self.callbacks = 0
        self.elements = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.callbacks += 1
        self.elements += 1
        if self.elements > MAX_ELEMENTS:
            raise ReportError(f"JUnit report has more than {MAX_ELEMENTS} elements")
        if len(self.frames) >= MAX_DEPTH:
            raise ReportError(f"JUnit report nests deeper than {MAX_DEPTH} elements")
        name = _local(tag)
        if not self.frames:
            self._check_root(name)
        self.frames.append(self._frame(name, attrib))

    def _check_root(self, tag: str) -> None:
        """Refuse documents that are XML but not JUnit."""
        if tag not in ("testsuites", "testsuite"):
            raise ReportError(f"JUnit report root is <{tag[:40]}>, not <testsuites> or <testsuite>")

    def _frame(self, tag: str, attrib: dict[str, str]) -> _Frame:
        """What an opening tag means here; the root itself is no suite."""
        if not self.frames:
            return None
        if tag == "testsuite":
            return _Suite(attrib.get("name", ""))
        if tag == "testcase":
            return _Case(attrib, [f.name for f in self.frames if isinstance(f, _Suite)])
        outcome = _child_outcome(tag, attrib)
        if outcome is not None and isinstance(self.frames[-1], _Case):
            return _Detail(outcome, attrib.get("message", ""))
        return None

    def data(self, text: str) -> None:
        self.callbacks += 1
        top = self.frames[-1] if self.frames else None
        if isinstance(top, _Detail) and top.size <= MESSAGE_LIMIT:
            top.text.append(text[: MESSAGE_LIMIT + 1])
            top.size += len(top.text[-1])

    def end(self, tag: str) -> None:
        self.callbacks += 1
        frame = self.frames.pop()
        if isinstance(frame, _Case):
            self.results.append(self._result(frame))
        elif isinstance(frame, _Detail) and isinstance(self.frames[-1], _Case):
            _fold(self.frames[-1], frame)

    def close(self) -> None:
        """Required by XMLParser; the results are read from `self.results`."""

    def _result(self, case: _Case) -> TestResult:
        test_id, file = self.rule(case.attrib, case.suites, self.root)
        return TestResult(test_id, case.outcome, _message(case.message), file, _seconds(case.attrib.get("time")))


def _child_outcome(tag: str, attrib: dict[str, str]) -> Outcome | None:
    """What one child element of a testcase says about it, if anything."""
    if tag == "failure":
        return Outcome.FAILED
    if tag == "error":
        return Outcome.ERROR
    if tag == "skipped":
        return Outcome.XFAILED if attrib.get("type") == "pytest.xfail" else Outcome.SKIPPED
    return None


def _fold(case: _Case, detail: _Detail) -> None:
    """Let a closed child outcome replace the case's outcome if it is worse."""
    if SEVERITY[detail.outcome] > SEVERITY[case.outcome]:
        case.outcome = detail.outcome
        case.message = detail.message or "".join(detail.text).strip()
        if detail.message == COLLECTION_FAILURE:  # pytest: say what failed, the traceback's last `E` line
            said = [line[1:].strip() for line in "".join(detail.text).splitlines() if line.startswith("E ")]
            case.message = f"{COLLECTION_FAILURE}: {said[-1]}" if said else COLLECTION_FAILURE


def _message(text: str) -> str:
    """The reason a test did not pass, short enough to show in a table."""
    if text == "true":  # node writes skip/todo without a reason as message="true"
        return ""
    if len(text) > MESSAGE_LIMIT:
        return text[: MESSAGE_LIMIT - 1] + "…"
    return text


def _seconds(value: str | None) -> float:
    """A testcase's duration; nonsense becomes 0 rather than an error."""
    if not value or len(value) > 64:
        return 0.0
    try:
        seconds = float(value.replace(",", ""))
    except ValueError:
        return 0.0
    return seconds if math.isfinite(seconds) and seconds >= 0 else 0.0
