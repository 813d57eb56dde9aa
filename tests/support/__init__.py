"""What the tests share: helpers, fakes, fixtures and the suite's own plugins.
No test lives here, and no test module imports another test module: what
two test modules both need is kept here (tests/test_layout.py holds this)."""
