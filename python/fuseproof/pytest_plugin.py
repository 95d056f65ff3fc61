"""fuseproof's pytest plugin: `--fuseproof-scope quick|full` (the default scope of fuseproof.testing.assert_exact,
quick unless given) and the `fuseproof` marker, so that a kernel repository selects its exactness tests with
`-m fuseproof`. Load it with `-p fuseproof.pytest_plugin` (or `pytest_plugins = ["fuseproof.pytest_plugin"]` in a
conftest.py)."""

from fuseproof import testing


def pytest_addoption(parser):
    parser.addoption("--fuseproof-scope", choices=sorted(testing.SCOPES), default=None,
                     help="scope of fuseproof.testing.assert_exact: quick (a unit test's budget) or full (the whole "
                          "battery)")


def pytest_configure(config):
    config.addinivalue_line("markers", "fuseproof: a bit-exactness test of a fused kernel (fuseproof.testing)")
    scope = config.getoption("--fuseproof-scope")
    if scope:
        testing.DEFAULT_SCOPE = scope


def pytest_report_header(config):
    return "fuseproof: assert_exact scope %s" % testing.DEFAULT_SCOPE
