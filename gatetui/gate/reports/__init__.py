"""Test reports: JUnit XML as runners write it, the ids of its tests by runner, how runs compare test by test, and the gate's own checks written as JUnit for CI."""
