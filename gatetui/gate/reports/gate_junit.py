"""The gate's own checks as JUnit XML, so CI systems show one test per check.

A detail quotes head's text (a flagged line, a file name): written inert,
since XML 1.0 holds no control character and a CI page or terminal shows
the message as it is.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gatetui.gate.checks import Status
from gatetui.gate.events import RunFinished
from gatetui.inert import inert, inert_line


def gate_junit(finished: RunFinished, name: str = "gatetui") -> str:
    results = finished.results
    suite = ET.Element(
        "testsuite",
        {
            "name": name,
            "tests": str(len(results)),
            "failures": str(sum(r.status in (Status.FAIL, Status.REVIEW) for r in results)),
            "errors": str(sum(r.status is Status.ERROR for r in results)),
            "skipped": str(sum(r.status is Status.SKIPPED for r in results)),
            "time": f"{finished.seconds:.3f}",
        },
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("verdict", finished.verdict.value),
        ("base", finished.digests.base),
        ("head", finished.digests.head),
    ):
        ET.SubElement(props, "property", {"name": key, "value": value})
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": f"{name}.{result.id.value}", "name": result.title, "time": f"{result.seconds:.3f}"},
        )
        tag = {Status.FAIL: "failure", Status.REVIEW: "failure", Status.ERROR: "error", Status.SKIPPED: "skipped"}.get(
            result.status
        )
        if tag:  # a review is a failure CI shows, typed so a reader tells it from a violation
            attrs = {"message": inert_line(result.detail.split("\n", 1)[0])}
            if result.status is Status.REVIEW:
                attrs["type"] = "review"
            ET.SubElement(case, tag, attrs).text = inert(result.detail)
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
