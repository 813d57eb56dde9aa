"""The runner's plugins this run registered from installed distributions:
exactly the test dependencies that are pytest plugins, but pytest-randomly,
which addopts turns off."""


def test_the_plugins_are_the_declared_ones(pytestconfig):
    manager = pytestconfig.pluginmanager
    loaded = {dist.project_name for _, dist in manager.list_plugin_distinfo()}
    assert loaded == {"pytest-mock", "pytest-timeout", "hypothesis"}
    assert manager.get_plugin("randomly") is None
