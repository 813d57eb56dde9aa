"""Everything the gate decides before any sandbox starts.

Resolving refs, reading the judge from base, scanning the diff and naming
the digests take milliseconds and need no backend; bad input is refused
here, before anything is created.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from gatetui.config import SealSettings
from gatetui.errors import BadInput
from gatetui.gate.diff.scan import DiffScan, scan_changes, scanned
from gatetui.gate.judging import random_order
from gatetui.gate.judging.baseline import BaselineCache, cache_key
from gatetui.gate.judging.hidden import HiddenTests, select_hidden
from gatetui.gate.sealing.digests import Digests
from gatetui.gate.sealing.links import links_out, written_paths
from gatetui.gate.sealing.sealed import compute_digests, overlay
from gatetui.git.export import write_extra
from gatetui.git.repo import GitRepo
from gatetui.git.snapshot import Snapshot
from gatetui.policy import Policy
from gatetui.stacks.base import Finding
from gatetui.stacks.profile import Profile
from gatetui.stacks.registry import language_of, load_judge


@dataclass(frozen=True)
class GateRequest:
    repo: Path
    base: str
    head: str
    timeout: float | None = None  # per command; overrides the profile's
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    seal: SealSettings | None = None  # replaces base's sealing rules (the lab's --rules)
    # What the caller reads from the state directory, so the gate never does:
    # the repo's hidden folder (Store.hidden_dir; paths relative to it, the
    # `hidden` setting picks a folder inside), and the cache of base's runs.
    hidden: Mapping[str, bytes] | None = field(default=None, compare=False, repr=False)
    hidden_from: str = ""  # the folder they were read from, named when it holds none
    baseline_cache: BaselineCache | None = field(default=None, compare=False, repr=False)
    random_seed: int | None = None  # replay a random-order run; None: drawn per run


@dataclass(frozen=True)
class Plan:
    request: GateRequest
    repo: GitRepo
    base: Snapshot  # the merge base: what head is judged against
    head: Snapshot
    profile: Profile  # what the stack can do
    policy: Policy  # what base's settings decide
    scan: DiffScan
    digests: Digests
    old_tests_files: dict[str, bytes | None]  # written over head for old_tests
    old_tests_env: dict[str, str]
    import_modules: tuple[str, ...]
    hidden: HiddenTests | None = None  # configured and found
    hidden_problem: str = ""  # configured, yet nothing to run: the check's error
    baseline_key: str = (
        ""  # base sha + profile digest: where base's own run is cached (baseline, skips, a refused runner)
    )
    generated: Mapping[str, bytes] = field(default_factory=dict)  # Install.generated for the version handed the build
    version: str = "0.0.0"  # the version handed a build that takes it from git
    links_out: tuple[Finding, ...] = ()  # head's links out of the tree where the gate writes (gate/sealing/links.py)

    def export(self, tree: Snapshot, dest: Path) -> None:
        """`tree` written into `dest`, with what the build writes by design
        (Install.generated) where the commit holds no file of that name."""
        self.repo.export(tree.sha, dest)
        write_extra(dest, {path: data for path, data in self.generated.items() if path not in tree})

    @property
    def timeout(self) -> float:
        return self.request.timeout or self.policy.timeout

    @property
    def forbidden(self) -> list[str]:
        """Changes an `on_change = "fail"` rule forbids: they fail the verdict
        through old_tests, whatever its run says."""
        return self.digests.forbidden()

    def still_defined(self, test_id: str) -> bool:
        """Whether head's tree still defines a test that its runs did not run."""
        path, _, rest = test_id.partition("::")
        source = self.head.text(path)
        if source is None or not rest:
            return False
        name = rest.split("[", 1)[0]
        language = language_of(path)
        defs = language.test_defs(path, source) if language is not None else []
        return any(d.name == name or name.endswith(d.name) for d in defs)


def make_plan(request: GateRequest) -> Plan:
    repo = GitRepo.open(request.repo)
    base_tip, head_sha = repo.resolve(request.base), repo.resolve(request.head)
    if base_tip == head_sha:
        raise BadInput(f"base and head are the same commit ({head_sha[:7]}): nothing to judge")
    merge_base = repo.merge_base(base_tip, head_sha)
    if merge_base is None:
        raise BadInput(
            f"{request.base} and {request.head} have no common ancestor: pick the base the agent started from"
        )
    if merge_base == head_sha:
        raise BadInput(f"{request.head} is already part of {request.base}: nothing new to judge")
    base, head = Snapshot.of_commit(repo, merge_base), Snapshot.of_commit(repo, head_sha)
    judge = load_judge(base, request.seal)
    profile, policy = judge.profile, judge.policy
    version = "0.0.0"
    if profile.install.tag_version is not None:  # a version read from git: name it after head's nearest tag
        version = profile.install.tag_version(repo.nearest_tag(head_sha))
        profile = replace(profile, install=replace(profile.install, env={k: version for k in profile.install.env}))
    generated = dict(profile.install.generated(version)) if profile.install.generated is not None else {}
    scan = scan_changes(
        repo.changes(merge_base, head_sha, lambda paths: scanned(paths, profile.is_test_file)), profile.is_test_file
    )
    files, env = old_tests_overlay(base, head, profile, policy)
    modules = profile.stack.importable(head.paths) if profile.install.import_check and policy.import_check else []
    digests = compute_digests(base, head, policy.sealed, policy.rules)
    hidden, problem = (
        select_hidden(request.hidden, policy.hidden, profile.is_test_file, request.hidden_from)
        if policy.hidden is not None
        else (None, "")
    )
    seed = None
    if policy.random_order and profile.suite.shuffle is not None:
        seed = request.random_seed if request.random_seed is not None else random_order.draw_seed()
    digests = replace(
        digests,
        random_seed=seed,
        hidden=hidden.digest if hidden else "",
        hidden_files=len(hidden.files) if hidden else 0,
        test_network=policy.test_network,
    )
    out = links_out(
        written_paths(files, hidden.files if hidden else None),
        head.__contains__,
        lambda path: repo.link_target(head_sha, path),
    )
    return Plan(
        request,
        repo,
        base,
        head,
        profile,
        policy,
        scan,
        digests,
        files,
        env,
        tuple(modules),
        hidden,
        problem,
        cache_key(merge_base, profile, policy),
        generated,
        version,
        out,
    )


def old_tests_overlay(
    base: Snapshot, head: Snapshot, profile: Profile, policy: Policy
) -> tuple[dict[str, bytes | None], dict[str, str]]:
    """Base's sealed files over head, and the runner settings the stack
    keeps from base (pytest's loaded with `-c`), so that no runner setting
    head added (say `addopts = -k`) applies to the run of base's tests."""
    files = overlay(base, head, policy.sealed)
    files.update(profile.suite.old_tests_files)
    return files, dict(profile.suite.old_tests_env)
