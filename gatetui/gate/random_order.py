"""The random-order run: which seed, and which run.

With `random_order = true` the third of the three runs is shuffled the way
the profile's runner shuffles (`Profile.shuffle`: pytest loads a small plugin
the gate writes into the copy, go test takes `-shuffle`). The seed is drawn
when the run is planned, so the digest state names it before any test runs,
and the same order can be replayed by passing the seed again
(GateRequest.random_seed).
"""

from __future__ import annotations

import secrets

RUN_INDEX = 2  # run 3 of 3: runs 1 and 2 keep the suite's own order


def draw_seed() -> int:
    return secrets.randbelow(2**31)
