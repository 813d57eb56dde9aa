"""The install: head installed in steps that keep its code away from what it may not vouch for, the dependency and build-tools layers beside it, and the environment's fingerprint."""
