from calendarlib import reads


def test_reads_older_and_current_formats():
    assert reads("1.4") and reads("2.0")


def test_refuses_newer_formats():
    assert not reads("2.1")
