"""Written ahead of the feature: easter() is on the roadmap, not in the code yet."""


def test_easter_sunday_2026():
    from calendarlib import easter

    assert easter(2026) == (4, 5)
