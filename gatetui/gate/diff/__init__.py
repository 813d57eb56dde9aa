"""The change itself, read before anything runs: tests removed or switched off, the library lines and the tests head adds or changes, and what the gate refuses to judge."""
