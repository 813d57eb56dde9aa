"""The emulator's snapshots, driven by the real, unmodified withruntime SDK.

These pin what a dependency layer kept as a Runtime disk snapshot relies on:
a sandbox started from a snapshot holds its files at the same paths, and
changes made there never reach the snapshot; a snapshot is found again by
name or id; a capture the API tells late is polled by the SDK until ready,
its source woken after; a deleted snapshot, or a deleted sandbox, is a
NotFoundError the SDK raises as the real API's would be.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import withruntime
from withruntime._sync_client import Sandbox

from tests.runtime_emulator import Emulator, fixtures

emulator = fixtures.emulator  # the emulator per test, its end-of-test check included


@pytest.fixture
def client(emulator: Emulator) -> Iterator[withruntime.Runtime]:
    """The SDK's client, closed at the test's end: its kept-alive sockets are
    never left to the garbage collector (an unclosed-socket warning)."""
    with withruntime.Runtime() as runtime:
        yield runtime


@pytest.fixture
def source(client: withruntime.Runtime) -> Iterator[Sandbox]:
    """A sandbox holding `note` ("original") in its home; deleted at the end
    unless the test did it (a second delete answers the same). Typed as the
    class sandboxes.create answers, which withruntime.Sandbox subclasses."""
    sandbox = client.sandboxes.create()
    sandbox.exec("echo original > note")
    yield sandbox
    sandbox.delete()


@pytest.mark.sandbox
def test_a_sandbox_from_a_disk_snapshot_holds_its_files_and_keeps_its_changes(
    emulator: Emulator, client: withruntime.Runtime, source: Sandbox
) -> None:
    home = source.exec("pwd").stdout.strip()
    snapshot = source.snapshot(mode="disk")
    assert (snapshot["state"], snapshot["mode"], snapshot["sourceSandboxId"]) == ("ready", "disk", source.id)
    first = client.sandboxes.create(snapshot_id=snapshot["id"])
    assert (first.info["snapshotId"], first.exec("pwd").stdout.strip()) == (snapshot["id"], home)
    assert first.exec(f"cat {home}/note").stdout == "original\n"
    first.exec("echo changed > note")
    second = client.sandboxes.create(snapshot_id=snapshot["id"])
    assert second.exec("cat note").stdout == "original\n"
    assert first.exec("cat note").stdout == "changed\n"
    for sandbox in (first, second):
        sandbox.delete()


@pytest.mark.sandbox
def test_a_snapshot_answered_ready_leaves_its_source_running_with_no_wake(emulator: Emulator, source: Sandbox) -> None:
    source.snapshot(mode="disk")
    assert source.refresh().state == "running"
    assert source.exec("cat note").stdout == "original\n"
    assert not any(r.endswith(":wake") for r in emulator.requests)


@pytest.mark.sandbox
def test_a_snapshot_is_found_by_name_and_by_id_as_it_was_given(
    emulator: Emulator, client: withruntime.Runtime, source: Sandbox
) -> None:
    layer = source.snapshot(name="deps-3f2a", labels={"layer": "deps"}, mode="disk", retention_days=7)
    other = source.snapshot(name="other")
    found = client.snapshots.list(name="deps-3f2a").data
    assert [s["id"] for s in found] == [layer["id"]]
    got = client.snapshots.get(layer["id"])
    given = (got["name"], got["labels"], got["mode"], got["retentionDays"])
    assert given == ("deps-3f2a", {"layer": "deps"}, "disk", 7)
    assert client.snapshots.get(other["id"])["mode"] == "memory"  # the API's default
    assert sorted(emulator.snapshots()) == sorted([layer["id"], other["id"]])


@pytest.mark.sandbox
def test_lists_are_newest_first_paged_and_filtered_by_source(
    emulator: Emulator, client: withruntime.Runtime, source: Sandbox
) -> None:
    taken = [source.snapshot(name=f"s{i}", mode="disk")["id"] for i in range(3)]
    page = client.snapshots.list(limit=2)
    assert ([s["id"] for s in page.data], page.has_more) == (taken[:0:-1], True)
    assert [s["id"] for s in page.to_list()] == taken[::-1]
    assert client.snapshots.list(sandbox_id="sbx_someone_else").data == []
    assert len(client.snapshots.list(sandbox_id=source.id, state="ready").data) == 3


@pytest.mark.sandbox
def test_a_capture_told_late_is_polled_until_ready_and_its_source_woken(emulator: Emulator, source: Sandbox) -> None:
    emulator.faults.capturing_snapshots = 1
    snapshot = source.snapshot(mode="disk")
    assert snapshot["state"] == "ready"
    polls = [r for r in emulator.requests if r == f"GET /v1/snapshots/{snapshot['id']}"]
    assert len(polls) == 1
    assert emulator.requests[-1] == f"POST /v1/sandboxes/{source.id}:wake"
    assert source.refresh().state == "running"
    assert source.exec("cat note").stdout == "original\n"


@pytest.mark.sandbox
def test_a_snapshot_outlives_its_source(emulator: Emulator, client: withruntime.Runtime, source: Sandbox) -> None:
    snapshot = source.snapshot(mode="disk")
    source.delete()
    copy = client.sandboxes.create(snapshot_id=snapshot["id"])
    assert copy.exec("cat note").stdout == "original\n"
    copy.delete()
    assert emulator.snapshots() == [snapshot["id"]]


@pytest.mark.sandbox
def test_a_deleted_snapshot_is_gone_and_cannot_start_a_sandbox(
    emulator: Emulator, client: withruntime.Runtime, source: Sandbox
) -> None:
    snapshot = source.snapshot(name="doomed", mode="disk")
    client.snapshots.delete(snapshot["id"])
    assert (emulator.snapshots(), client.snapshots.list(name="doomed").data) == ([], [])
    with pytest.raises(withruntime.NotFoundError) as refused:
        client.sandboxes.create(snapshot_id=snapshot["id"])
    assert refused.value.code == "snapshot_not_found"
    with pytest.raises(withruntime.NotFoundError):
        client.snapshots.get(snapshot["id"])
    assert emulator.live() == [source.id]  # the refused create made nothing


@pytest.mark.sandbox
def test_a_snapshot_of_a_deleted_sandbox_is_not_found(
    emulator: Emulator, client: withruntime.Runtime, source: Sandbox
) -> None:
    source.delete()
    with pytest.raises(withruntime.NotFoundError):
        source.snapshot(mode="disk")
    with pytest.raises(withruntime.NotFoundError) as refused:
        client.snapshots.create(source.id, mode="disk")  # the POST itself, without the SDK's read first
    assert refused.value.code == "sandbox_not_found"
    assert emulator.snapshots() == []


@pytest.mark.sandbox
def test_a_fork_keeps_its_snapshot_only_when_asked(
    emulator: Emulator, client: withruntime.Runtime, source: Sandbox
) -> None:
    plain = source.fork()
    assert emulator.snapshots() == []
    kept = source.fork(keep_snapshot=True)
    [snapshot] = client.snapshots.list(sandbox_id=source.id).data
    assert (snapshot["mode"], snapshot["state"]) == ("memory", "ready")
    assert kept.exec("cat note").stdout == "original\n"
    for sandbox in (plain, kept):
        sandbox.delete()
