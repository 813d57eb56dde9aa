"""Where the suite's files are, wherever the test module that reads them
sits in tests/: the data they share is found from here, not from the
reader's own folder, so moving a test module moves nothing it reads."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]  # tests/
ROOT = TESTS.parent  # the checkout: gatetui/, tests/, sample_repos/
FIXTURES = TESTS / "fixtures"
