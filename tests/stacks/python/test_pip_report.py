"""Reading pip's installation report, which head's build code could rewrite."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatetui.stacks.python.pip_report import ReportProblem, Resolved, heredoc, split

TREE = "/tmp/w/ws"
HASH = "a" * 64


def item(name: str, info: dict[str, object], version: str = "1.0") -> dict[str, object]:
    return {"metadata": {"name": name, "version": version}, "download_info": info}


def report(*items: dict[str, object]) -> bytes:
    return json.dumps({"version": "1", "install": list(items)}).encode()


def test_index_artifacts_are_pinned_and_the_tree_is_local() -> None:
    raw = report(
        item("pytest", {"url": "https://example.invalid/pytest.whl", "archive_info": {"hashes": {"sha256": HASH}}}),
        item("wheelhouse", {"url": "file:///opt/wheels/w.whl", "archive_info": {"hash": f"sha256={HASH}"}}),
        item("mathlib", {"url": f"file://{TREE}", "dir_info": {"editable": True}}),
        item("sub", {"url": f"file://{TREE}/libs/sub", "dir_info": {}}),
        item("vendored", {"url": f"file://{TREE}/wheels/v.whl", "archive_info": {"hashes": {"sha256": HASH}}}),
    )
    assert split(raw, TREE) == Resolved(
        pinned=(f"pytest==1.0 --hash=sha256:{HASH}", f"wheelhouse==1.0 --hash=sha256:{HASH}"),
        local=("-e", TREE, f"{TREE}/libs/sub", f"{TREE}/wheels/v.whl"),
    )


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"", "pip wrote no readable installation report"),
        (
            report(item("x", {"url": "file:///etc", "dir_info": {}})),
            "pip's installation report points outside the tree: /etc",
        ),
        (
            report(item("x", {"url": "https://e.invalid/x.whl", "archive_info": {}})),
            "pip's installation report names x 1.0 without a name, version and sha256 the gate can pin",
        ),
        (
            report(
                item("x; rm -rf /", {"url": "https://e.invalid/x.whl", "archive_info": {"hashes": {"sha256": HASH}}})
            ),
            "pip's installation report names x; rm -rf / 1.0 without a name, version and sha256 the gate can pin",
        ),
    ],
)
def test_a_report_the_gate_cannot_trust_is_refused_in_one_line(raw: bytes, said: str) -> None:
    with pytest.raises(ReportProblem) as refused:
        split(raw, TREE)
    assert str(refused.value) == said


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)


INFO = st.dictionaries(
    st.sampled_from(["url", "dir_info", "vcs_info", "archive_info", "hash", "hashes", "editable"]),
    JSON | st.just(f"file://{TREE}/x") | st.dictionaries(st.sampled_from(["sha256", "editable"]), JSON),
)
ITEM = (
    st.fixed_dictionaries(
        {"metadata": st.dictionaries(st.sampled_from(["name", "version"]), JSON), "download_info": INFO}
    )
    | JSON
)


@given(
    st.one_of(
        st.dictionaries(st.sampled_from(["install", "version"]), JSON),
        st.fixed_dictionaries({"install": st.lists(ITEM, max_size=4)}),
    )
)
def test_any_report_is_read_or_refused_never_a_crash(data: dict[str, object]) -> None:
    try:
        resolved = split(json.dumps(data).encode(), TREE)
    except ReportProblem:
        return
    assert all(" --hash=sha256:" in line for line in resolved.pinned)


def test_pinned_lines_go_on_stdin_of_the_command() -> None:
    assert heredoc("pip install -r /dev/stdin", ("a==1 --hash=sha256:" + HASH,)) == (
        f"pip install -r /dev/stdin <<'GATE_PINNED'\na==1 --hash=sha256:{HASH}\nGATE_PINNED"
    )
