"""Waits for a result that never comes: a suite that would hang the gate."""
import time


def test_waits_for_the_queue():
    while True:
        time.sleep(1)
