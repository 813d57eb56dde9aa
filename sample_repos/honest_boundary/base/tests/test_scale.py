from gaugelib.scale import clamp, percent


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_below():
    assert clamp(-3, 0, 10) == 0


def test_at_low():
    assert clamp(0, 0, 10) == 0


def test_percent():
    assert percent(5, 0, 10) == 50
    assert percent(0, 0, 10) == 0
