"""Tests for gatetui.gate.reports.junit against real reports from pytest, node and vitest.

The fixtures under tests/fixtures/junit/ were written by the runners
themselves (pytest 8.4 xunit1/xunit2, node 20 and node 24 `--test-reporter=junit`,
vitest `--reporter=junit`); only absolute scratch paths were rewritten to
/home/user/proj.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatetui.gate.reports import junit
from gatetui.gate.reports.junit import (
    Outcome,
    Report,
    ReportError,
    TestResult,
    flaky,
    missing,
    newly_skipped,
    parse_junit,
    uncollected,
)
from tests.support.paths import FIXTURES as TESTS_FIXTURES

FIXTURES = TESTS_FIXTURES / "junit"
ROOT = "/home/user/proj"
# Every id rule a profile can name (ReportFormat.ids).
PROFILES = ["pytest", "vitest", "node", "node-or-vitest", "junit"]
P, F, E, S, XF, XP = (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.XFAILED, Outcome.XPASSED)


def runner_of(fixture: str) -> str:
    """The runner that wrote a fixture, as its name says (pytest_*, node*, vitest*)."""
    return next(runner for runner in ("pytest", "vitest", "node") if fixture.startswith(runner))


def load(name: str, root: str | None = None) -> Report:
    return parse_junit((FIXTURES / name).read_bytes(), ids=runner_of(name), root=root)


def claiming(fixture: str, name: str) -> str:
    """A fixture whose root claims another writer: `name` on <testsuites>."""
    text = (FIXTURES / fixture).read_text()
    root = re.findall(r"<testsuites[^>]*>", text)[0]  # every fixture has one: IndexError otherwise
    claim = re.sub(r'\sname="[^"]*"', "", root).replace("<testsuites", f'<testsuites name="{name}"')
    return text.replace(root, claim, 1)


def outcomes(report: Report) -> dict[str, Outcome]:
    return {test_id: result.outcome for test_id, result in report.tests.items()}


def report(**by_id: Outcome) -> Report:
    return Report.from_results(TestResult(test_id, outcome) for test_id, outcome in by_id.items())


# ------------------------------------------------------------------- pytest


def test_pytest_xunit1_ids_are_pytest_node_ids_with_outcomes():
    sample = "tests/test_sample.py"
    assert outcomes(load("pytest_xunit1.xml")) == {
        "tests/sub/test_other.py::test_other": P,
        f"{sample}::test_pass": P,
        f"{sample}::test_fail": F,
        f"{sample}::test_error_in_fixture": E,
        f"{sample}::test_error_in_teardown": E,
        f"{sample}::test_skip": S,
        f"{sample}::test_xfail": XF,
        f"{sample}::test_xpass": P,
        f"{sample}::test_xpass_strict": F,
        f"{sample}::test_param[1]": P,
        f"{sample}::test_param[2]": F,
        f"{sample}::test_param[a b]": P,
        f"{sample}::test_param[x::y]": P,
        f"{sample}::TestLeap::test_a": P,
        f"{sample}::TestLeap::test_year[2000]": P,
        f"{sample}::TestLeap::test_year[1900]": F,
        f"{sample}::TestLeap::TestInner::test_deep": P,
        f"{sample}::test_fail_and_teardown_error": E,
    }


def test_pytest_messages_come_from_the_outcome_element():
    tests = load("pytest_xunit1.xml").tests
    assert tests["tests/test_sample.py::test_skip"].message == "not today"
    assert tests["tests/test_sample.py::test_xfail"].message == "known bug"
    assert tests["tests/test_sample.py::test_xpass_strict"].message == "[XPASS(strict)] strict one"
    assert tests["tests/test_sample.py::test_fail"].message == ("AssertionError: math is broken\nassert (1 + 1) == 3")
    assert tests["tests/test_sample.py::test_pass"].message == ""


def test_pytest_file_and_seconds_are_read():
    result = load("pytest_xunit1.xml").tests["tests/sub/test_other.py::test_other"]
    assert (result.file, result.seconds) == ("tests/sub/test_other.py", 0.001)


def test_pytest_repeated_testcase_keeps_the_worst_outcome():
    # pytest writes two <testcase>s for a failing test whose teardown errors.
    raw = (FIXTURES / "pytest_xunit1.xml").read_text()
    assert raw.count('name="test_fail_and_teardown_error"') == 2
    result = load("pytest_xunit1.xml").tests["tests/test_sample.py::test_fail_and_teardown_error"]
    assert result.outcome == E
    assert result.message == 'failed on teardown with "RuntimeError: teardown exploded"'


def test_pytest_collection_error_is_named_by_its_file():
    assert outcomes(load("pytest_collect_error.xml")) == {"tests/test_broken.py": E, "tests/test_ok.py::test_ok": P}
    assert load("pytest_collect_error.xml").tests["tests/test_broken.py"].file == "tests/test_broken.py"


def test_a_collection_error_says_what_failed_from_the_tracebacks_last_line() -> None:
    report = load("pytest_collect_error.xml")
    assert (
        report.tests["tests/test_broken.py"].message
        == "collection failure: ModuleNotFoundError: No module named 'nonexistent_mod'"
    )
    assert uncollected([report]) == {"tests/test_broken.py": "ModuleNotFoundError: No module named 'nonexistent_mod'"}


def test_pytest_module_skip_and_inherited_test():
    tests = load("pytest_inherited.xml").tests
    assert outcomes(load("pytest_inherited.xml")) == {
        "tests/test_modskip.py": S,
        "tests/test_child.py::TestChild::test_inherited": P,
        "tests/test_child.py::TestChild::test_own": P,
    }
    # the file attribute names where the inherited function is defined
    assert tests["tests/test_child.py::TestChild::test_inherited"].file == "tests/base.py"


def test_pytest_without_file_attribute_falls_back_to_classname():
    assert outcomes(load("pytest_xunit2.xml")) == {
        "tests.test_modskip": S,
        "tests.test_child.TestChild::test_inherited": P,
        "tests.test_child.TestChild::test_own": P,
    }


# --------------------------------------------------------------------- node


NODE_TESTS = {
    "top level passes": P,
    "top level fails": F,
    "Calculator > adds": P,
    "Calculator > divides": F,
    "Calculator > skipped one": S,
    "Calculator > skipped at runtime": S,
    "Calculator > todo one": S,
    "Calculator > nested > deep pass": P,
    "Calculator > nested > deep fail": F,
    "parent with subtests > child a": P,
    "parent with subtests > child b": P,
}


def test_node20_ids_are_the_suite_path():
    assert outcomes(load("node20.xml")) == {**NODE_TESTS, "other file passes": P}


def test_node_skip_messages_drop_nodes_placeholder_true():
    tests = load("node20.xml").tests
    assert tests["Calculator > skipped one"].message == ""
    assert tests["Calculator > skipped at runtime"].message == "no network"
    assert tests["Calculator > todo one"].message == ""


def test_node20_file_that_fails_to_load_is_named_by_its_relative_path():
    assert outcomes(load("node20_broken.xml", root=ROOT)) == {
        "with failing hook > never runs": F,
        "broken/syntax.test.mjs": F,
    }
    assert load("node20_broken.xml", root=ROOT).tests["broken/syntax.test.mjs"].file == "broken/syntax.test.mjs"


def test_node20_without_root_keeps_the_absolute_path():
    assert f"{ROOT}/broken/syntax.test.mjs" in load("node20_broken.xml").tests


def test_node24_ids_carry_the_file_relative_to_root():
    math = {f"test/math.test.mjs::{name}": outcome for name, outcome in NODE_TESTS.items()}
    assert outcomes(load("node24.xml", root=ROOT)) == {
        "broken/syntax.test.mjs": F,
        **math,
        "test/other.test.mjs::other file passes": P,
    }
    assert load("node24.xml", root=ROOT).tests["test/other.test.mjs::other file passes"].file == "test/other.test.mjs"


def test_node24_without_root_uses_absolute_files():
    ids = set(load("node24.xml").tests)
    assert f"{ROOT}/broken/syntax.test.mjs" in ids
    assert f"{ROOT}/test/math.test.mjs::Calculator > nested > deep fail" in ids


# ------------------------------------------------------------------- vitest


def test_vitest_ids_are_file_and_describe_path():
    math = "test/math.test.ts"
    assert outcomes(load("vitest.xml")) == {
        f"{math}::top level passes": P,
        f"{math}::top level fails": F,
        f"{math}::Calculator > adds": P,
        f"{math}::Calculator > divides": F,
        f"{math}::Calculator > skipped one": S,
        f"{math}::Calculator > skipped at runtime": S,
        f"{math}::Calculator > todo one": S,
        f"{math}::Calculator > square of 1": P,
        f"{math}::Calculator > square of 2": F,
        f"{math}::Calculator > nested > deep pass": P,
        f"{math}::Calculator > nested > deep fail": F,
        "test/sub/broken.test.ts": F,
        "test/sub/other.test.ts::other file passes": P,
    }


def test_vitest_file_message_and_seconds():
    result = load("vitest.xml").tests["test/math.test.ts::Calculator > divides"]
    assert (result.file, result.message, result.seconds) == ("test/math.test.ts", "division exploded", 0.000999263)


def test_same_fixture_parses_to_the_same_report_twice():
    for path in FIXTURES.glob("*.xml"):
        runner = runner_of(path.name)
        assert parse_junit(path.read_bytes(), ids=runner) == parse_junit(path.read_text(), ids=runner)


# ------------------------------------------------ the runner, not the document


@pytest.mark.parametrize("claim", ["vitest tests", "vitest", "node", ""])
def test_a_pytest_report_claiming_another_runner_is_read_by_pytests_rule(claim):
    parsed = parse_junit(claiming("pytest_xunit1.xml", claim), ids="pytest")
    assert parsed == load("pytest_xunit1.xml")
    assert parsed.tests["tests/test_sample.py::TestLeap::TestInner::test_deep"].outcome == P


@pytest.mark.parametrize("claim", ["pytest tests", "pytest", "node", ""])
def test_a_vitest_report_claiming_another_runner_is_read_by_vitests_rule(claim):
    parsed = parse_junit(claiming("vitest.xml", claim), ids="vitest")
    assert parsed == load("vitest.xml")
    assert parsed.tests["test/sub/broken.test.ts"].outcome == F


@pytest.mark.parametrize("claim", ["pytest tests", "vitest tests"])
def test_a_node_report_claiming_another_runner_is_read_by_nodes_rule(claim):
    parsed = parse_junit(claiming("node24.xml", claim), ids="node", root=ROOT)
    assert parsed == load("node24.xml", root=ROOT)
    assert parsed.tests["test/math.test.mjs::Calculator > nested > deep fail"].outcome == F


def test_the_same_report_is_read_by_the_rule_of_the_runner_named():
    doc = (FIXTURES / "vitest.xml").read_bytes()
    broken = "test/sub/broken.test.ts"
    read = {runner: set(parse_junit(doc, ids=runner).tests) for runner in ("vitest", "pytest", "node")}
    assert [
        broken in read["vitest"],
        f"{broken}::{broken}" in read["pytest"],
        f"{broken} > {broken}" in read["node"],
    ] == [True, True, True]


def test_a_testcase_shaped_like_pytests_does_not_pick_pytests_rule_either():
    doc = (
        '<testsuites><testsuite name="adds"><testcase classname="test" name="one" file="t/a.py" line="3"/>'
        "</testsuite></testsuites>"
    )
    assert list(parse_junit(doc, ids="node").tests) == ["t/a.py::adds > one"]
    assert list(parse_junit(doc, ids="pytest").tests) == ["test::one"]


@pytest.mark.parametrize("claim", ["pytest tests", "vitest tests", "node", ""])
def test_a_custom_python_command_is_read_by_pytests_rule(claim):
    parsed = parse_junit(claiming("pytest_xunit1.xml", claim), ids="pytest")
    assert parsed == load("pytest_xunit1.xml")


@pytest.mark.parametrize(
    ("fixture", "claim"),
    [
        ("vitest.xml", "vitest tests"),
        ("vitest.xml", "pytest tests"),
        ("vitest.xml", ""),
        ("node24.xml", ""),
        ("node24.xml", "vitest tests"),
        ("node20.xml", "pytest tests"),
        ("node20_broken.xml", "vitest"),
    ],
)
def test_a_custom_node_command_reads_vitest_and_node_reports_as_their_runners_do(fixture, claim):
    parsed = parse_junit(claiming(fixture, claim), ids="node-or-vitest", root=ROOT)
    assert parsed == load(fixture, root=ROOT)


def test_a_custom_node_command_keeps_jests_suites_and_names():
    doc = (
        '<testsuites name="jest tests"><testsuite name="Calculator">'
        '<testcase classname="Calculator adds" name="Calculator adds"/>'
        '<testcase classname="Calculator divides" name="Calculator divides"><failure/></testcase>'
        "</testsuite></testsuites>"
    )
    assert outcomes(parse_junit(doc, ids="node-or-vitest")) == {
        "Calculator > Calculator adds": P,
        "Calculator > Calculator divides": F,
    }


def test_a_runner_without_a_rule_is_the_callers_error_not_the_reports():
    unknown = "^no id rule named 'jest': expected one of pytest, vitest, node, node-or-vitest, junit$"
    with pytest.raises(ValueError, match=unknown):
        parse_junit("<testsuites/>", ids="jest")


# ------------------------------------------------------------ Report methods


def test_report_count_and_failed_in_report_order():
    parsed = load("pytest_xunit1.xml")
    counts = {outcome: parsed.count(outcome) for outcome in Outcome}
    assert counts == {P: 9, F: 4, E: 3, S: 1, XF: 1, XP: 0}
    assert [r.id for r in parsed.failed()] == [
        "tests/test_sample.py::test_fail",
        "tests/test_sample.py::test_error_in_fixture",
        "tests/test_sample.py::test_error_in_teardown",
        "tests/test_sample.py::test_xpass_strict",
        "tests/test_sample.py::test_param[2]",
        "tests/test_sample.py::TestLeap::test_year[1900]",
        "tests/test_sample.py::test_fail_and_teardown_error",
    ]


@pytest.mark.parametrize(
    ("tests", "expected"),
    [
        ({"a": P, "b": S}, True),
        ({"a": XP}, True),
        ({"a": P, "b": F}, False),
        ({"a": P, "b": E}, False),
        ({"a": S, "b": XF}, False),
        ({}, False),
    ],
)
def test_passed_all_needs_a_real_pass_and_no_failure(tests, expected):
    assert report(**tests).passed_all is expected


def test_from_results_keeps_worst_of_repeated_id_and_first_on_tie():
    results = [TestResult("t", P, "first"), TestResult("t", F, "bad"), TestResult("t", F, "later"), TestResult("t", S)]
    assert Report.from_results(results).tests == {"t": TestResult("t", F, "bad")}


def test_report_tests_are_read_only():
    parsed = report(a=P)
    with pytest.raises(TypeError):
        parsed.tests["b"] = TestResult("b", P)  # type: ignore[index]


def test_report_without_testcases_is_empty_not_an_error():
    pytest_empty = b'<?xml version="1.0"?><testsuites name="pytest tests"><testsuite name="pytest"/></testsuites>'
    assert parse_junit(pytest_empty, ids="pytest") == Report()
    assert parse_junit("<testsuite/>", ids="node").tests == {}


# --------------------------------------------------------------- comparisons


def test_flaky_compares_pass_fail_skip_classes():
    runs = [
        report(same=P, xpass=P, flip=P, skip=S, gone=F),
        report(same=P, xpass=XP, flip=F, skip=XF),
        report(same=P, xpass=P, flip=P, skip=S, errs=E),
    ]
    assert flaky(runs) == ["flip"]


def test_flaky_sees_error_vs_failure_as_the_same_and_skip_vs_pass_as_different():
    assert flaky([report(a=F, b=P, c=P), report(a=E, b=S, c=P)]) == ["b"]


def test_flaky_of_no_runs_or_one_run_is_empty():
    assert (flaky([]), flaky([report(a=F)])) == ([], [])


def test_missing_lists_base_ids_absent_from_every_head():
    base = report(kept=P, dropped=P, moved=F, renamed=S)
    heads = [report(kept=P, moved=P), report(kept=F, renamed_now=S)]
    assert missing(base, heads) == ["dropped", "renamed"]


def test_missing_id_present_in_only_one_head_is_not_missing():
    assert missing(report(a=P, b=P), [report(a=P), report(b=P)]) == []


def test_newly_skipped_needs_a_pass_on_base_and_a_skip_or_xfail_in_a_head():
    base = report(skipped=P, xfailed=P, was_failing=F, still=P, was_skipped=S, new=P)
    heads = [
        report(skipped=P, xfailed=XF, was_failing=S, still=P, was_skipped=S),
        report(skipped=S, still=P, brand_new=S),
    ]
    assert newly_skipped(base, heads) == ["skipped", "xfailed"]


# ---------------------------------------------------------------- robustness


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<testsuites><testsuite><testcase name="&lol3;"/></testsuite></testsuites>"""


@pytest.mark.parametrize(
    "data",
    [
        BILLION_LAUGHS,
        BILLION_LAUGHS.encode(),
        '<!doctype testsuites SYSTEM "file:///etc/passwd"><testsuites/>',
        BILLION_LAUGHS.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="utf-16"?>').encode("utf-16"),
        BILLION_LAUGHS.encode("utf-16-le"),  # no BOM: found by the "<\0?\0" signature
        '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuites>&e;</testsuites>',
        '<!DOCTYPE testsuites SYSTEM "http://example.invalid/junit.dtd"><testsuites/>',
        '<!DOCTYPE x [<!ENTITY % p SYSTEM "http://example.invalid/p.dtd"> %p;]><testsuites/>',
        '<testsuites><!ENTITY x "y"></testsuites>',
        "<!DOCTYPE html><html/>",  # refused at the declaration, before the root is seen
    ],
)
def test_entity_declarations_are_refused_before_parsing(data):
    with pytest.raises(ReportError, match="^report declares entities"):
        parse_junit(data, ids="pytest")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "^JUnit report is not XML: no element found"),
        (b"not xml at all", "^JUnit report is not XML: syntax error"),
        (b"<testsuites><testcase></testsuites>", "^JUnit report is not XML: mismatched tag"),
        (b"<testsuites/>trailing", "^JUnit report is not XML: junk after document element"),
        ('<testsuites name="&undefined;"/>', "^JUnit report is not XML: undefined entity"),
        (b"<testsuites>\xff</testsuites>", "^JUnit report is not valid utf-8-sig"),
        ("<testsuites>\ud800</testsuites>", "^JUnit report is not valid text: lone surrogate"),
        (
            b'<?xml version="1.0" encoding="x-klingon"?><testsuites/>',
            "^JUnit report declares unknown encoding 'x-klingon'",
        ),
        (b'<?xml version="1.0" encoding="rot13"?><testsuites/>', "^JUnit report declares unsupported encoding 'rot13'"),
        (b"<html><body/></html>", r"^JUnit report root is <html>, not <testsuites> or <testsuite>$"),
    ],
)
def test_bad_input_gives_a_one_line_report_error(data, match):
    with pytest.raises(ReportError, match=match) as caught:
        parse_junit(data, ids="pytest")
    assert "\n" not in str(caught.value)


def test_a_declaration_inside_text_is_text_not_a_dtd():
    doc = (
        '<testsuites><testcase classname="a.ts" name="page">'
        "<failure><![CDATA[got <!DOCTYPE html>]]></failure><!-- <!ENTITY x 'y'> --></testcase></testsuites>"
    )
    page = TestResult("a.ts::page", F, "got <!DOCTYPE html>", "a.ts")
    assert parse_junit(doc, ids="vitest").tests == {"a.ts::page": page}


def test_input_over_max_bytes_is_refused_as_bytes_and_as_text():
    doc = "<testsuites>" + " " * 100 + "</testsuites>"
    with pytest.raises(ReportError, match="^JUnit report is 125 bytes, over the 100-byte limit$"):
        parse_junit(doc.encode(), max_bytes=100, ids="pytest")
    with pytest.raises(ReportError, match="over the 100-byte limit$"):
        parse_junit(doc, max_bytes=100, ids="pytest")
    with pytest.raises(ReportError, match="^JUnit report is 103 bytes, over the 100-byte limit$"):
        parse_junit("<a>" + "é" * 48 + "</a>", max_bytes=100, ids="pytest")  # 55 chars, 103 UTF-8 bytes


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each piece parse_junit feeds expat, in order: what it
    made the parser read, counted rather than timed, so that a loaded
    machine neither fails nor passes a test of it."""
    pieces: list[int] = []

    class CountingParser(junit.DefusedXMLParser):  # type: ignore[misc]
        def feed(self, data: str) -> None:
            pieces.append(len(data))
            super().feed(data)

    monkeypatch.setattr(junit, "DefusedXMLParser", CountingParser)
    return pieces


def test_deep_nesting_is_stopped_early(fed: list[int]) -> None:
    depth = 200_000
    doc = "<testsuites>" + "<testsuite>" * depth + "</testsuite>" * depth + "</testsuites>"
    with pytest.raises(ReportError, match="^JUnit report nests deeper than 256 elements$"):
        parse_junit(doc, ids="node")
    assert fed == [junit._CHUNK]  # the first piece goes deeper than the limit: nothing more is read


def test_element_count_is_capped(monkeypatch):
    monkeypatch.setattr(junit, "MAX_ELEMENTS", 10)
    with pytest.raises(ReportError, match="^JUnit report has more than 10 elements$"):
        parse_junit("<testsuites>" + "<testcase/>" * 10 + "</testsuites>", ids="pytest")
    assert len(parse_junit("<testsuites>" + "<testcase/>" * 9 + "</testsuites>", ids="pytest").tests) == 1


def test_a_giant_attribute_is_parsed_in_linear_time(fed: list[int]) -> None:
    """expat scans an unfinished token again from its start on each feed: fed
    in fixed-size pieces, a token of n characters cost n * n / piece (a 20 MB
    one, minutes). What the feeds make expat scan stays within a few times
    the document."""
    doc = b'<testsuites name="vitest tests"><testcase classname="a.ts" name="' + b"n" * 8_000_000 + b'"/></testsuites>'
    assert [len(test_id) for test_id in parse_junit(doc, ids="vitest").tests] == [len("a.ts::") + 8_000_000]
    assert sum(fed) == len(doc)
    scanned = sum(itertools.accumulate(fed))  # at each feed, all that was fed since the token began
    assert scanned <= 4 * len(doc), (len(fed), scanned)


def test_declared_latin1_and_utf16_with_bom_decode_correctly():
    doc = '<?xml version="1.0" encoding="{}"?><testsuites name="vitest tests"><testsuite><testcase classname="a.ts" name="café"/></testsuite></testsuites>'
    assert list(parse_junit(doc.format("iso-8859-1").encode("latin-1"), ids="vitest").tests) == ["a.ts::café"]
    assert list(parse_junit(doc.format("utf-16").encode("utf-16"), ids="vitest").tests) == ["a.ts::café"]
    assert list(parse_junit(b"\xef\xbb\xbf" + doc.format("utf-8").encode(), ids="vitest").tests) == ["a.ts::café"]


def test_nonsense_times_become_zero_and_long_messages_are_truncated():
    doc = (
        '<testsuites name="vitest tests"><testsuite>'
        '<testcase classname="a.ts" name="nan" time="nan"/>'
        '<testcase classname="a.ts" name="neg" time="-1"/>'
        '<testcase classname="a.ts" name="inf" time="1e999"/>'
        '<testcase classname="a.ts" name="word" time="soon"/>'
        '<testcase classname="a.ts" name="comma" time="1,234.5"/>'
        f'<testcase classname="a.ts" name="long"><failure message="{"x" * 5000}"/></testcase>'
        "</testsuite></testsuites>"
    )
    tests = parse_junit(doc, ids="vitest").tests
    assert [t.seconds for t in tests.values()] == [0.0, 0.0, 0.0, 0.0, 1234.5, 0.0]
    assert tests["a.ts::long"].message == "x" * 499 + "…"


def test_namespaced_and_oddly_nested_elements_do_not_crash():
    doc = (
        '<j:testsuites xmlns:j="urn:x" name="vitest tests"><j:testsuite name="a.ts">'
        '<j:testcase classname="a.ts" name="ns"><j:skipped/></j:testcase>'
        '<j:testcase classname="a.ts" name="outer"><j:testcase classname="a.ts" name="inner"><j:error/></j:testcase></j:testcase>'
        "<testcase/></j:testsuite></j:testsuites>"
    )
    assert outcomes(parse_junit(doc, ids="vitest")) == {"a.ts::ns": S, "a.ts::inner": E, "a.ts::outer": P, "": P}


# ------------------------------------------------------------------ properties


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300)), st.sampled_from(PROFILES))
def test_arbitrary_input_gives_a_report_or_report_error(data, profile):
    ids = profile
    try:
        parsed = parse_junit(data, ids=ids)
    except ReportError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(parsed, Report)


FRAGMENTS = [
    '<?xml version="1.0"?>',
    '<?xml version="1.0" encoding="utf-16"?>',
    '<testsuites name="pytest tests">',
    '<testsuites name="vitest tests">',
    "<testsuites>",
    "</testsuites>",
    '<testsuite name="s">',
    "</testsuite>",
    '<testcase classname="tests.test_a.TestX" name="test_b[1]" file="tests/test_a.py" line="3" time="x">',
    '<testcase name="/abs/t.test.mjs" file="/abs/t.test.mjs">',
    '<testcase classname="" name="tests.test_a" file="tests/test_a.py">',
    "<testcase>",
    "</testcase>",
    '<failure message="m"/>',
    "<error/>",
    '<skipped type="pytest.xfail"/>',
    "<skipped>",
    "</skipped>",
    "<!-- c -->",
    "<![CDATA[<x>]]>",
    "&amp;",
    "&nope;",
    "<!DOCTYPE x>",
    "\x00",
    "text",
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=12),
    st.sampled_from(["utf-8", "utf-16", "latin-1"]),
    st.sampled_from(PROFILES),
)
def test_junit_shaped_noise_gives_a_report_or_report_error(parts, encoding, profile):
    text = "".join(parts)
    ids = profile
    for data in (text, text.encode(encoding, errors="replace")):
        try:
            parse_junit(data, ids=ids, root="/abs")
        except ReportError as exc:
            assert "\n" not in str(exc)


case_strategy = st.fixed_dictionaries(
    {
        "file": st.from_regex(r"tests/(sub/)?test_[a-z0-9_]{1,8}\.py", fullmatch=True),
        "classes": st.lists(st.from_regex(r"Test[A-Za-z0-9]{0,6}", fullmatch=True), max_size=2),
        "name": st.from_regex(r"test_[a-z0-9_]{1,10}(\[[\w :.\-/<>&\"'\[\]]{0,12}\])?", fullmatch=True),
        "outcome": st.sampled_from([P, F, E, S, XF]),
    }
)


def pytest_id(case: dict) -> str:
    return "::".join([case["file"], *case["classes"], case["name"]])


CHILD: dict[Outcome, tuple[str, dict[str, str]]] = {
    F: ("failure", {}),
    E: ("error", {}),
    S: ("skipped", {"type": "pytest.skip"}),
    XF: ("skipped", {"type": "pytest.xfail"}),
}


def xunit1(cases: list[dict], claim: str = "pytest tests") -> bytes:
    root = ET.Element("testsuites", name=claim)
    suite = ET.SubElement(root, "testsuite", name="pytest")
    for case in cases:
        module = case["file"].removesuffix(".py").replace("/", ".")
        classname = ".".join([module, *case["classes"]])
        element = ET.SubElement(
            suite, "testcase", classname=classname, name=case["name"], file=case["file"], line="1", time="0.5"
        )
        if case["outcome"] in CHILD:
            tag, attrs = CHILD[case["outcome"]]
            ET.SubElement(element, tag, {"message": "why", **attrs})
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


@settings(max_examples=100, deadline=None)
@given(st.lists(case_strategy, max_size=8, unique_by=pytest_id))
def test_generated_xunit1_ids_and_outcomes_round_trip(cases):
    parsed = parse_junit(xunit1(cases), ids="pytest")
    assert outcomes(parsed) == {pytest_id(case): case["outcome"] for case in cases}
    assert parse_junit(xunit1(cases), ids="pytest") == parsed


@settings(max_examples=50, deadline=None)
@given(
    st.lists(case_strategy, max_size=8, unique_by=pytest_id),
    st.sampled_from(["vitest tests", "vitest", "", "node"]),
    st.sampled_from(["pytest"]),
)
def test_generated_xunit1_claiming_another_runner_reads_the_same(cases, claim, profile):
    ids = profile
    parsed = parse_junit(xunit1(cases, claim), ids=ids)
    assert outcomes(parsed) == {pytest_id(case): case["outcome"] for case in cases}


reports = st.dictionaries(st.text(max_size=6), st.sampled_from(list(Outcome)), max_size=8).map(lambda d: report(**d))


@given(reports, st.integers(min_value=1, max_value=4))
def test_flaky_of_identical_reports_is_empty(one, times):
    assert flaky([one] * times) == []


@given(reports)
def test_missing_of_base_against_itself_is_empty(base):
    assert missing(base, [base]) == []
