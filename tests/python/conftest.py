"""Fixtures of the seqpack package's tests (python/tests, CTest label
`python`): the original module (SEQPACK_ORIGINAL, as ports/python finds it;
tests that need it skip, saying so, where it is absent), its known failures,
and the Hypothesis profile `ci`: derandomized (the same cases on every run),
no example database, no deadline, small example counts (each test sets its
own), so that the whole suite stays within a minute."""
import os

import pytest
from hypothesis import settings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_ORIGINAL = os.path.join(ROOT, "..", "shared", "spec", "000_a9109b401b6808be.txt")

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=False)
# SEQPACK_HYPOTHESIS_PROFILE=random with --hypothesis-seed=N explores other cases than CI's.
settings.register_profile("random", derandomize=False, database=None, deadline=None)
settings.load_profile(os.environ.get("SEQPACK_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def original_path():
    path = os.environ.get("SEQPACK_ORIGINAL") or DEFAULT_ORIGINAL
    if not os.path.isfile(path):
        pytest.skip("the original module is absent (SEQPACK_ORIGINAL=%s)" % path)
    return path


@pytest.fixture(scope="session")
def original(original_path):
    from seqpack.testing import load_module
    return load_module(original_path)


@pytest.fixture(scope="session")
def known_failures():
    from seqpack.testing import read_known_failures
    return read_known_failures(os.path.join(ROOT, "ports", "python", "original.known_failures"))
