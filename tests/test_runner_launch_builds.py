"""A backend that builds a kernel at its first launch (Triton's JIT) gets the build allowance on that launch
only: resnet's unrolled ports were killed at 60 s on the H200 while Triton still compiled them, and the gate
called that a timeout of the port. Later launches of the same build keep the plain limit, so a hang is still
a timeout."""

from __future__ import annotations

from types import SimpleNamespace

from xlate.verify import runner


def side(capabilities: set[str]) -> runner.Side:
    s = object.__new__(runner.Side)
    s.timeout = 60.0
    s.backend = SimpleNamespace(capabilities=frozenset(capabilities))
    s._launched = set()
    return s


def test_only_the_first_launch_of_a_build_gets_the_allowance():
    s = side({"timing", "launch_builds"})
    first, second = object(), object()
    assert s._timeout(first) == 60.0 + runner.LAUNCH_BUILD_SECONDS
    assert s._timeout(first) == 60.0
    assert s._timeout(second) == 60.0 + runner.LAUNCH_BUILD_SECONDS  # another specialisation builds again


def test_a_backend_that_builds_before_running_keeps_the_plain_limit():
    s = side({"timing", "grid_launch"})
    assert s._timeout(object()) == 60.0


def test_triton_says_it_builds_at_launch_and_nvrtc_does_not():
    from xlate.backends.registry import get_backend

    assert "launch_builds" in get_backend("triton").capabilities
    assert "launch_builds" not in get_backend("cuda").capabilities
