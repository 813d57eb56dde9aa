import unitlib


def test_an_inch():
    assert unitlib.inches_to_cm(1) == 2.54


def test_the_version_is_the_builds():
    assert isinstance(unitlib.__version__, str)
    assert unitlib.__version_tuple__[:1] == (int(unitlib.__version__.split(".")[0]),)
