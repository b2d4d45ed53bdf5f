"""Conformance inside Python: compare any module with the original's API to
the reference, view by view, in-process.

    from seqpack.testing import assert_conforms, load_module
    mod = load_module("my_package.runtime")      # or a module object, or a file path
    assert_conforms(mod, case)                   # a seqpack.Case, e.g. from seqpack.strategies

The module is called exactly as the subprocess port ports/python/seqpack_port.py
calls it (the same code: the package ships it as seqpack._port): every
number and row of its answer comes from the module's own functions, and
the views it is held to are those it has the functions for. The reference's
answer and the comparison are the C++ oracle's and runner's
(conformance/), so a failure reads as `seqpack conform` prints it:

    FAIL <id> [<category>]
      first difference: <the runner's wording>
      minimal case: <the case's JSON line>

`conformance_test(module)` makes a ready Hypothesis test of it; with the
pytest plugin (seqpack.pytest_plugin), `--seqpack-module=...` names the
module on the command line.
"""
import json
import os

from . import _core, _port

__all__ = ["ConformanceFailure", "assert_conforms", "check", "conformance_test", "load_module", "port_for",
           "read_known_failures", "test_conforms"]


class ConformanceFailure(AssertionError):
    """A module's answer differs from the reference's; `diff` is the runner's
    first difference, `case` the case, `severity` and `consequence` what the
    module's pack does to the consumer that reads it, beyond the reference's
    own (the runner's consequence line, judged against cosmos-5eee9ed on fa3:
    metadata-only, not-judged, crash-or-refusal, nan-only, wrong-output or
    silent-wrong-gradient, in that order; attention/README.md)."""

    def __init__(self, message, diff, case, severity="", consequence=""):
        super().__init__(message)
        self.diff, self.case = diff, case
        self.severity, self.consequence = severity, consequence


def load_module(spec):
    """A module by import name or file path, loaded as the subprocess port
    loads it (a spec file's first line, a bare path, is dropped; the
    framework's logger is stubbed when absent), patched for int32 indexing on
    torch < 2.0 as the port patches it."""
    mod = _port.load(spec)
    prepare_module(mod)
    return mod


def prepare_module(mod):
    """Patches a module object once, as the port does (torch < 2.0 cannot
    index with the int32 tensors the original builds)."""
    if not getattr(mod, "__seqpack_prepared__", False):
        import torch
        _port.patch_int32_indexing(mod, torch)
        mod.__seqpack_prepared__ = True
    return mod


_PORTS = {}


def port_for(mod):
    """The adapter (seqpack._port.Port) for a module, made once per module."""
    key = id(mod)
    entry = _PORTS.get(key)
    if entry is None or entry[0] is not mod:
        import torch
        prepare_module(mod)
        port = _port.Port(mod, torch)
        port.runs = True  # the runs encoding, as the runner offers it (first_difference expands it)
        entry = (mod, port)
        _PORTS[key] = entry
    return entry[1]


def read_known_failures(path):
    """The categories and vector ids a known-failures file lists (the format
    of ports/python/original.known_failures)."""
    known = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                known.add(line)
    return known


def check(mod, case, case_id="case", views=None):
    """The runner's first difference between the module's answer and the
    reference's on `case` ("" when they agree). `views`: the views to compare
    (default: every view the module declares that the runner would ask for
    this case, as views_for chooses; sessions are not single cases)."""
    return _exchange(mod, case, case_id, views)[0]


def _exchange(mod, case, case_id, views):
    """(first difference, the reference's result line, the module's answer line)."""
    port = port_for(mod)
    declared = [v for v in port.views + port.behaviours if v != "session"]
    if views is None:
        views = _core.views_for(case, declared)
    else:
        views = [v for v in views if v in declared]
    request = json.loads(_core.request_line(case, case_id, views))
    try:
        answer = port.answer(request)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        answer = _port.bad_request(case_id, exc)
    expected, actual = _core.result_line(case, case_id, views), json.dumps(answer)
    return _core.first_difference(expected, actual, views), expected, actual


def assert_conforms(mod, case, case_id="case", views=None):
    """Raises ConformanceFailure, worded as `seqpack conform` words a failure,
    unless `mod` answers `case` as the reference does in every view."""
    diff, expected, actual = _exchange(mod, case, case_id, views)
    if diff:
        severity, consequence = _core.consequence(case, expected, actual)
        # The runner's derivation block, when it has one for this difference.
        explanation = _core.explain(case, diff)
        raise ConformanceFailure("FAIL %s [%s]\n  first difference: %s\n%s  %s [%s]\n  minimal case: %s"
                                 % (case_id, case.category, diff, explanation, consequence, severity,
                                    case.to_json(case_id)),
                                 diff, case, severity, consequence)


def conformance_test(module, profile="packer", known_failures=None, max_examples=100, **fixed):
    """A ready Hypothesis test: `test_x = conformance_test(mod)` in a test
    file checks `mod` (a module, import name or path) on cases of `profile`,
    skipping (by Hypothesis' assume) the categories of `known_failures` (a
    set, or a file path). Keywords fix options, as in strategies.cases()."""
    from hypothesis import assume, given, settings

    from . import strategies

    known = _known(known_failures)
    loaded = []

    @settings(max_examples=max_examples, deadline=None)
    @given(case=strategies.cases(profile, **fixed))
    def test(case):
        if not loaded:
            loaded.append(module if not isinstance(module, (str, os.PathLike)) else load_module(os.fspath(module)))
        assume(case.category not in known)
        assert_conforms(loaded[0], case)

    return test


def _known(known_failures):
    if known_failures is None:
        return set()
    if isinstance(known_failures, (str, os.PathLike)):
        return read_known_failures(known_failures)
    return set(known_failures)


def _plugin_test():
    # The test the pytest plugin's users import: fixtures seqpack_module and
    # seqpack_known (seqpack.pytest_plugin), cases of --seqpack-profile.
    from hypothesis import HealthCheck, assume, given, settings, strategies as st

    from . import strategies

    @settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def test_conforms(seqpack_module, seqpack_profile, seqpack_known, data):
        """The module of --seqpack-module answers every case as the reference does."""
        case = data.draw(strategies.cases(seqpack_profile), label="case")
        assume(case.category not in seqpack_known)
        assert_conforms(seqpack_module, case)

    return test_conforms


test_conforms = _plugin_test()
