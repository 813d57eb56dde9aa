"""One package per ecosystem behind one `Stack` value (see base.py); the
registry (registry.py) is the only place that lists them."""
