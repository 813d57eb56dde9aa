"""The records of one run's outcomes (moving here from gate/junit.py)."""

from gatetui.gate.junit import Outcome, Report, ReportError, TestResult

__all__ = ["Outcome", "Report", "ReportError", "TestResult"]
