"""The Textual face of the supervisor: branches, live checks, logs, digests, credit, review."""
