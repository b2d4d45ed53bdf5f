"""pytest plugin: `--seqpack-module=MODULE` (an import name or a file path)
names the module the ready test seqpack.testing.test_conforms checks.

Enable it in a conftest.py with `pytest_plugins = ["seqpack.pytest_plugin"]`
(or `pytest -p seqpack.pytest_plugin`; a pip install registers it as the
entry point `seqpack`), and import the test into a test file:

    from seqpack.testing import test_conforms  # noqa: F401

Options: --seqpack-module, --seqpack-profile (packer or strict, default
packer), --seqpack-known-failures (a file of categories to skip, the format
of ports/python/original.known_failures). Without --seqpack-module the test
is skipped, saying so.
"""
import pytest


def pytest_addoption(parser):
    group = parser.getgroup("seqpack", "seqpack conformance")
    group.addoption("--seqpack-module", default=None, help="module under test: import name or file path")
    group.addoption("--seqpack-profile", default="packer", choices=("packer", "strict"),
                    help="case profile (default packer)")
    group.addoption("--seqpack-known-failures", default=None, help="file of known-failure categories to skip")


@pytest.fixture(scope="session")
def seqpack_module(request):
    spec = request.config.getoption("--seqpack-module")
    if not spec:
        pytest.skip("no --seqpack-module given")
    from seqpack.testing import load_module
    return load_module(spec)


@pytest.fixture(scope="session")
def seqpack_profile(request):
    return request.config.getoption("--seqpack-profile")


@pytest.fixture(scope="session")
def seqpack_known(request):
    path = request.config.getoption("--seqpack-known-failures")
    if not path:
        return set()
    from seqpack.testing import read_known_failures
    return read_known_failures(path)
