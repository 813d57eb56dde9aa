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


def test_above():
    assert clamp(11, 0, 10) == 10


def test_at_high():
    assert clamp(10, 0, 10) == 10


def test_percent_above_the_scale():
    assert percent(12, 0, 10) == 100
