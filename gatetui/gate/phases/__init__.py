"""A gate run, phase by phase; gatetui.gate.runner puts them in order.

ledger.py records each check's start and end and the run's usage, and is
the one place check events leave from; context.py is what every phase
shares. plan_phase.py answers what the plan and the diff can before any
sandbox starts; build.py installs head (blame.py tells whose a failed
install is); suite.py runs head's suite three times, base's tests and the
hidden tests on copies of the install, one run at a time through
suite_run.py; judging.py says what those runs mean; base_own.py runs base's
own suite on base's code when a check asks.
"""
