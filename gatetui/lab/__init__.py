"""The samples, the rules lab and the demo: scenarios with known answers."""
