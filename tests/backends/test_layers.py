"""Dependency layers without a sandbox: the key, the link the environment
check accepts, the manifest and what a changed layer does, the store's
shelf (listing, pruning, the size cap), the index settings uv is given,
and `gatetui cache` (test_warm_gates.py gates for real)."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gatetui.backends.layer_files import differing, digest_of, manifest, mirror_points, seal_tree
from gatetui.backends.layers import LayerShelf, LocalLayers, cap_from_env, layer_manifest, open_root
from gatetui.cli.main import main
from gatetui.errors import BadInput
from gatetui.gate.cost import Usage
from gatetui.gate.install import layers
from gatetui.gate.sealing.digests import Digests
from gatetui.stacks.base import Resolved
from gatetui.stacks.python import env_check
from gatetui.stacks.python.installer import Installer, pip_index_settings, uv_flags
from gatetui.stacks.python.pip_report import layer_key, split
from gatetui.supervise.runs import digests_from_json

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
HASHES = st.text("0123456789abcdef", min_size=64, max_size=64)
PINS = st.lists(
    st.tuples(st.sampled_from(["six", "Six", "py_yaml", "PyYAML", "attrs"]), st.sampled_from(["1.0", "2.0"]), HASHES),
    min_size=1,
    max_size=5,
)


def pinned(items: list[tuple[str, str, str]]) -> Resolved:
    return Resolved(tuple(f"{name}=={version} --hash=sha256:{digest}" for name, version, digest in items), ())


# --- the key -------------------------------------------------------------------


@given(PINS.flatmap(lambda items: st.tuples(st.just(items), st.permutations(items))))
def test_the_key_is_the_set_whatever_its_order(
    both: tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]],
) -> None:
    items, shuffled = both
    assert layer_key(pinned(items), "cpython-311") == layer_key(pinned(shuffled), "cpython-311")


@given(PINS, HASHES)
def test_one_other_file_or_interpreter_is_another_key(items: list[tuple[str, str, str]], other: str) -> None:
    name, version, digest = items[0]
    assume(other != digest)
    key = layer_key(pinned(items), "cpython-311 linux-x86_64")
    assert layer_key(pinned([(name, version, other), *items[1:]]), "cpython-311 linux-x86_64") != key
    assert layer_key(pinned(items), "cpython-312 linux-x86_64") != key


def test_a_dependency_named_by_url_is_said_to_be_direct() -> None:
    digest = "a" * 64
    report = {
        "install": [
            {
                "download_info": {
                    "url": "https://files.example.invalid/six.whl",
                    "archive_info": {"hashes": {"sha256": digest}},
                },
                "metadata": {"name": "six", "version": "1.0"},
                "is_direct": False,
            },
            {
                "download_info": {
                    "url": "https://elsewhere.example.invalid/evil.whl",
                    "archive_info": {"hashes": {"sha256": digest}},
                },
                "metadata": {"name": "evil", "version": "2.0"},
                "is_direct": True,
            },
        ]
    }
    resolved = split(json.dumps(report).encode(), "/tree")
    assert (resolved.pinned, resolved.direct) == (
        (f"evil==2.0 --hash=sha256:{digest}", f"six==1.0 --hash=sha256:{digest}"),
        ("evil",),
    )


# --- the link the environment check accepts ----------------------------------------


@pytest.fixture
def venv_and_layer(tmp_path: Path) -> tuple[Path, Path]:
    for name in (".venv", "layer"):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / name)], check=True)
    return tmp_path / ".venv", tmp_path / "layer"


def test_the_link_written_for_the_layer_shown_is_accepted(
    venv_and_layer: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    venv, layer = venv_and_layer
    assert env_check.write_link(str(venv), str(layer)) == ""
    assert (venv / SITE / env_check.LINK).read_text() == env_check.link_line(str(layer), str(venv / SITE))
    monkeypatch.setenv("GATE_LAYER", str(layer))
    assert env_check.check(str(venv)) == []


@pytest.mark.parametrize("editable", ["__editable__.pkg-1.0.pth", "!first.pth", "zzz-last.pth"])
def test_the_layer_comes_right_after_the_venvs_own_packages_before_the_trees_root(
    venv_and_layer: tuple[Path, Path], tmp_path: Path, editable: str
) -> None:
    """Wherever head's editable install sorts its path (a flat layout puts
    the tree's root on sys.path), the layer's distributions come first, as
    they would in a venv that held them: a `pytest.py` at the root of the
    tree is not the runner."""
    venv, layer = venv_and_layer
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pytest.py").write_text("SHADOW = True\n")
    (layer / SITE / "pytest.py").write_text("SHADOW = False\n")
    (venv / SITE / editable).write_text(f"{tree}\n")
    assert env_check.write_link(str(venv), str(layer)) == ""
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sys, pytest; print(pytest.SHADOW); "
            "print('\\n'.join(p for p in sys.path if p.startswith(sys.argv[1])))",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert (done.stderr, done.stdout.splitlines()) == ("", ["False", str(venv / SITE), str(layer / SITE), str(tree)])


@pytest.mark.parametrize("shown", ["", "other"])
def test_a_link_for_no_layer_or_another_is_unaccounted(
    venv_and_layer: tuple[Path, Path], shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv, layer = venv_and_layer
    env_check.write_link(str(venv), str(layer))
    if shown:
        other = venv.parent / shown
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(other)], check=True)
        monkeypatch.setenv("GATE_LAYER", str(other))
    else:
        monkeypatch.delenv("GATE_LAYER", raising=False)
    assert env_check.check(str(venv)) == [env_check.Problem(env_check.UNACCOUNTED, env_check.LINK)]


def test_a_link_planted_before_the_gates_is_replaced_never_written_through(venv_and_layer: tuple[Path, Path]) -> None:
    venv, layer = venv_and_layer
    victim = venv.parent / "victim.txt"
    victim.write_text("kept")
    (venv / SITE / env_check.LINK).symlink_to(victim)
    assert env_check.write_link(str(venv), str(layer)) == ""
    assert (victim.read_text(), (venv / SITE / env_check.LINK).is_symlink()) == ("kept", False)


def test_a_uv_lock_is_accepted_only_empty(venv_and_layer: tuple[Path, Path]) -> None:
    venv, _ = venv_and_layer
    (venv / ".lock").write_bytes(b"")
    assert env_check.check(str(venv)) == []
    (venv / ".lock").write_text("import os")
    assert env_check.check(str(venv)) == [env_check.Problem(env_check.UNACCOUNTED, ".venv/.lock")]


# --- the manifest, and a layer that no longer matches it -------------------------------


def fake_layer(root: Path, key: str, used: float, size: int = 10) -> Path:
    """A kept layer as the store leaves one (its files, manifest, info, last use)."""
    folder = root / key
    (folder / "env" / "lib").mkdir(parents=True)
    (folder / "env" / "lib" / "mod.py").write_text("VALUE = 1\n")
    seal_tree(folder / "env")
    (folder / "manifest.json").write_text(json.dumps(manifest(folder / "env")))
    (folder / "info.json").write_text(json.dumps({"key": key, "size": size, "built": used, "holds": ["six==1.0"]}))
    (folder / "used").touch()
    os.utime(folder / "used", (used, used))
    return folder


def test_the_manifest_names_kind_mode_and_content_of_every_entry(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "tool").chmod(0o755)
    (tmp_path / "bin" / "py").symlink_to("/usr/bin/python3")
    seal_tree(tmp_path)
    entries = manifest(tmp_path)
    assert entries == {
        "bin": "dir",
        "bin/py": "link:/usr/bin/python3",
        "bin/tool": "file:555:" + __import__("hashlib").sha256(b"#!/bin/sh\n").hexdigest(),
    }
    assert digest_of(entries) == digest_of(dict(reversed(entries.items())))


def test_a_changed_layer_is_thrown_away_and_said(tmp_path: Path) -> None:
    key = "a" * 64
    folder = fake_layer(tmp_path, key, 1000.0)
    store = LocalLayers(tmp_path, opener=None, folder_of=None)  # type: ignore[arg-type]  # finding opens nothing
    assert store._find(key).path == folder / "env"
    (folder / "env" / "lib" / "mod.py").chmod(0o644)
    (folder / "env" / "lib" / "mod.py").write_text("VALUE = 2\n")
    found = store._find(key)
    assert (found.path, found.note, folder.exists()) == (
        None,
        f"dependency layer {key[:12]} no longer matched its manifest (lib/mod.py): thrown away and built again",
        False,
    )


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("edit", "/cache/lib/mod.cpython-311.pyc"),
        ("plant", "/cache/lib/other.cpython-311.pyc"),
        ("link", "/cache, /cache/lib, /cache/lib/mod.cpython-311.pyc"),
    ],
)
def test_a_changed_bytecode_cache_is_a_changed_layer(tmp_path: Path, change: str, named: str) -> None:
    """The cache is the layer's as much as its files: run code reads it, so
    a byte changed, a file added or the folder replaced throws it all away."""
    key = "c" * 64
    folder = fake_layer(tmp_path, key, 1000.0)
    (folder / "cache" / "lib").mkdir(parents=True)
    (folder / "cache" / "lib" / "mod.cpython-311.pyc").write_bytes(b"compiled")
    seal_tree(folder / "cache")
    (folder / "manifest.json").write_text(json.dumps(layer_manifest(folder)))
    store = LocalLayers(tmp_path, opener=None, folder_of=None)  # type: ignore[arg-type]  # finding opens nothing
    assert store._find(key).path == folder / "env"
    (folder / "cache" / "lib").chmod(0o755 | 0o200)
    if change == "edit":
        (folder / "cache" / "lib" / "mod.cpython-311.pyc").chmod(0o644)
        (folder / "cache" / "lib" / "mod.cpython-311.pyc").write_bytes(b"planted!")
    elif change == "plant":
        (folder / "cache" / "lib" / "other.cpython-311.pyc").write_bytes(b"planted")
    else:
        (folder / "cache").rename(folder / "cache-real")
        (folder / "cache").symlink_to(folder / "cache-real")
    (folder / "cache" / "lib").chmod(0o755)
    found = store._find(key)
    assert (found.path, found.note, folder.exists()) == (
        None,
        f"dependency layer {key[:12]} no longer matched its manifest ({named}): thrown away and built again",
        False,
    )


def test_a_layer_in_use_is_still_found_by_the_next_gate_and_kept_from_prunes(tmp_path: Path) -> None:
    """A run holds its layer for its whole length: another gate (or the
    same run's install of base) still claims the key to find it."""
    key = "b" * 64
    fake_layer(tmp_path, key, 1000.0)
    store = LocalLayers(tmp_path, opener=None, folder_of=None)  # type: ignore[arg-type]  # nothing is built

    async def scenario() -> tuple[bool, bool, bool]:
        release = await store.hold(key, tmp_path / key / "env")
        try:
            async with asyncio.timeout(10):
                async with store.claim(key):
                    found = await store.find(key)
            return callable(release), found.path == tmp_path / key / "env", store.remove(key)
        finally:
            if release is not None:
                release()

    assert asyncio.run(scenario()) == (True, True, False)  # held; found; not removed while held
    assert (store.remove(key), (tmp_path / key).exists()) == (True, False)  # removed once nothing holds it


def test_a_layer_pruned_before_its_hold_is_not_held(tmp_path: Path) -> None:
    """A prune between the claim and the hold took it: the gate is told, and
    looks again (gate/install/layers.py), rather than holding a folder that is gone."""
    key = "c" * 64
    fake_layer(tmp_path, key, 1000.0)
    store = LocalLayers(tmp_path, opener=None, folder_of=None)  # type: ignore[arg-type]  # nothing is built
    assert store.remove(key) is True
    assert asyncio.run(store.hold(key, tmp_path / key / "env")) is None
    assert store.remove(key) is True  # nothing was left holding it


def test_differing_names_changed_added_and_gone() -> None:
    assert differing({"a": "dir", "b": "file:1", "c": "dir"}, {"a": "dir", "b": "file:2", "d": "dir"}) == [
        "b",
        "c",
        "d",
    ]


# --- the shelf: listing, pruning, the size cap ----------------------------------------


def test_the_cap_evicts_the_least_recently_used_but_never_one_held(tmp_path: Path) -> None:
    held, old, new = "1" * 64, "2" * 64, "3" * 64
    for key, used in ((held, 1000.0), (old, 2000.0), (new, 3000.0)):
        fake_layer(tmp_path, key, used, size=100)
    shelf = LayerShelf(tmp_path, cap=250)
    (tmp_path / "locks").mkdir()
    fd = os.open(tmp_path / "locks" / f"{held}.use", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        assert shelf.evict() == [old]
        assert [layer.key for layer in shelf.listing()] == [held, new]
    finally:
        os.close(fd)


def test_prune_by_age_keeps_the_recent(tmp_path: Path) -> None:
    recent = __import__("time").time()
    fake_layer(tmp_path, "4" * 64, 1000.0)
    fake_layer(tmp_path, "5" * 64, recent)
    assert LayerShelf(tmp_path).prune(older_than_days=1) == (["4" * 64], [])
    assert [layer.key for layer in LayerShelf(tmp_path).listing()] == ["5" * 64]


@pytest.mark.parametrize(
    ("text", "cap"), [("20G", 20 << 30), ("500M", 500 << 20), ("1.5gib", int(1.5 * (1 << 30))), ("4096", 4096)]
)
def test_the_cap_is_read_from_the_environment(text: str, cap: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATETUI_LAYER_CAP", text)
    assert cap_from_env() == cap


def test_the_folders_made_for_layers_are_private(tmp_path: Path) -> None:
    open_root(tmp_path / "state" / "layers")
    assert [oct((tmp_path / p).stat().st_mode & 0o777) for p in ("state", "state/layers")] == ["0o700", "0o700"]


def test_a_cap_that_is_no_size_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATETUI_LAYER_CAP", "lots")
    with pytest.raises(BadInput, match=r"^GATETUI_LAYER_CAP='lots' is not a size \(bytes, or a number with K, M, G"):
        cap_from_env()


# --- the index settings uv is given -------------------------------------------------


def test_uv_gets_pips_index_settings_environment_over_files(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = https://file.example.invalid/simple\nfind-links = /srv/a /srv/b\n"
        "[install]\nno-index = false\n"
    )
    settings = pip_index_settings(
        {"PIP_CONFIG_FILE": str(conf), "PIP_INDEX_URL": "https://env.example.invalid/simple", "PIP_NO_INDEX": "1"},
        machine=(),
    )
    assert settings == {
        "index-url": "https://env.example.invalid/simple",
        "find-links": "/srv/a /srv/b",
        "no-index": "1",
    }
    assert uv_flags(settings) == (
        "",
        "--no-config --link-mode copy --index-strategy unsafe-best-match "
        "--index-url https://env.example.invalid/simple --find-links /srv/a "
        "--find-links /srv/b --no-index",
    )


def test_pip_config_file_devnull_reads_no_file(tmp_path: Path) -> None:
    assert pip_index_settings({"PIP_CONFIG_FILE": os.devnull, "PIP_CERT": "/etc/ca.pem"}) == {"cert": "/etc/ca.pem"}
    assert uv_flags({"cert": "/etc/ca.pem"})[0] == "SSL_CERT_FILE=/etc/ca.pem "


def test_without_uv_the_install_is_pips_alone() -> None:
    installer = Installer(None, "pip --python {venv}/bin/python install", {})
    assert installer.install(".layer", "-r x", pip_prefix="A=1 ") == "A=1 pip --python .layer/bin/python install -r x"
    assert installer.install(".venv", "-e .").startswith("pip --python .venv/bin/python")
    with_uv = Installer("/opt/uv", "pip --python {venv}/bin/python install", {})
    assert with_uv.install(".venv", "-e .") == (
        "if [ -x /opt/uv ]; then /opt/uv pip install --python .venv/bin/python --no-progress --no-config "
        "--link-mode copy --index-strategy unsafe-best-match -e .; else pip --python .venv/bin/python install -e .; fi"
    )


# --- where it shows -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ("hit", "cache hit (layer 0123456789ab)"),
        ("miss", "cache miss (building; layer 0123456789ab)"),
        ("rebuilt", "cache miss (building: the kept one no longer matched its manifest; layer 0123456789ab)"),
    ],
)
def test_the_manifest_line_and_json_name_the_layer(state: str, words: str) -> None:
    digests = Digests("b", "h", manifest="m").with_layer("0123456789ab" + "c" * 52, state)
    assert digests.cache_words == words
    assert digests.to_json()["manifest"] == {
        "digest": "m",
        "files": [],
        "layer": "0123456789ab" + "c" * 52,
        "cache": state,
    }
    assert digests_from_json(digests.to_json()) == digests
    assert Digests("b", "h").cache_words == ""


def test_cache_ls_and_prune_say_what_they_did(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "layers").mkdir(mode=0o700)
    fake_layer(tmp_path / "layers", "6" * 64, 1000.0, size=3 << 20)
    assert main(["cache", "ls", "--state-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["KEY", "SIZE", "AGE", "LAST", "USE", "HOLDS"]
    assert lines[1].split()[:3] == ["6" * 12, "3.0", "MB"]
    assert main(["cache", "ls", "--json", "--state-dir", str(tmp_path)]) == 0
    assert [layer["key"] for layer in json.loads(capsys.readouterr().out)] == ["6" * 64]
    assert main(["cache", "prune", "--all", "--state-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "removed 1 layer\n"
    assert main(["cache", "ls", "--state-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "no dependency layers kept\n"


def test_cache_prune_with_days_that_are_not_a_number_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "prune", "--older-than", "soon"]) == 2
    assert capsys.readouterr().err == (
        "gatetui: argument --older-than: 'soon' is not a number of days, 0 or more (see `gatetui cache prune --help`)\n"
    )


# --- where a layer's bytecode cache is shown -------------------------------------------


def test_the_mirror_is_shown_at_the_first_folder_with_several_and_never_in_tmp(tmp_path: Path) -> None:
    for folder in (
        "usr/lib/python3.11/json",
        "usr/lib/python3.11/email",
        "opt/py/lib/python3.11/json",
        "tmp/tree/pkg",
        "tmp/tree/other",
    ):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "usr" / "lib" / "python3.11" / "json" / "decoder.cpython-311.pyc").write_bytes(b"x")
    assert mirror_points(tmp_path) == ["/opt/py/lib/python3.11/json", "/usr/lib/python3.11"]


def test_a_name_with_a_line_break_is_never_a_mount_point(tmp_path: Path) -> None:
    (tmp_path / "usr" / "lib\nevil" / "a").mkdir(parents=True)
    (tmp_path / "usr" / "lib\nevil" / "b").mkdir()
    (tmp_path / "srv" / "x").mkdir(parents=True)
    (tmp_path / "srv" / "y").mkdir()
    assert mirror_points(tmp_path) == ["/srv"]


# --- what a layer found saved -----------------------------------------------------------


@pytest.mark.parametrize(
    ("kept", "saved"),
    [
        ({"wall_seconds": 8.5, "cpu_seconds": 12, "gib_seconds": 0.25}, Usage(8.5, 12.0, 0.25)),
        (None, Usage()),
        ("8.5", Usage()),
        ({"wall_seconds": 8.5, "cpu_seconds": 12}, Usage()),  # one missing: no figure is made up
        ({"wall_seconds": -1, "cpu_seconds": 12, "gib_seconds": 0}, Usage()),
        ({"wall_seconds": True, "cpu_seconds": 12, "gib_seconds": 0}, Usage()),
        ({"wall_seconds": "8", "cpu_seconds": 12, "gib_seconds": 0}, Usage()),
    ],
)
def test_what_a_kept_layer_saved_is_read_from_its_info_or_is_nothing(kept: object, saved: Usage) -> None:
    assert layers._usage(kept) == saved
