"""Every registered backend satisfies the Backend protocol the code calls: the members, their keyword arguments,
declared capabilities only, and a target for each language it runs."""

from __future__ import annotations

import inspect

import pytest
from xlate.backends.base import CAPABILITIES, Backend, ToolchainInfo, WorkerRuntime
from xlate.backends.registry import backend_names, get_backend

from xlate.errors import ToolchainMissing
from xlate.targets import all_targets


def test_the_four_backends_are_registered():
    assert {"cuda", "hip", "triton", "ascendc"} <= set(backend_names())


@pytest.mark.parametrize("name", backend_names())
def test_backend_satisfies_the_protocol(name):
    b = get_backend(name)
    assert isinstance(b, Backend), f"{name} lacks a member of the Backend protocol"
    assert b.name == name
    assert set(b.capabilities) <= set(CAPABILITIES), f"{name}: unknown capabilities"
    run = inspect.signature(b.run).parameters
    assert {"timeout", "bench", "wrapper"} <= set(run) and all(run[p].kind is inspect.Parameter.KEYWORD_ONLY
                                                             for p in ("timeout", "bench", "wrapper"))
    assert inspect.signature(b.compile).parameters["path"].kind is inspect.Parameter.KEYWORD_ONLY
    info = b.detect()
    assert isinstance(info, ToolchainInfo) and info.backend == name and isinstance(info.interpreter, bool)
    assert not info.interpreter or info.can_run  # an interpreter is a way to run
    env = b.worker_env(None)
    assert isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
    for language in b.languages:  # the front end, the gate and port find what they need about the language
        assert any(t.language == language and t.backend == name for t in all_targets().values()), language


@pytest.mark.parametrize("name", [n for n in backend_names() if "file_check" not in get_backend(n).capabilities])
def test_backend_without_file_check_says_so(name):
    with pytest.raises(ToolchainMissing, match="no whole-file compile check"):
        get_backend(name).check_file("int x;\n", "any", "x.cpp")


def test_worker_runtimes_satisfy_their_protocol():
    from xlate.backends.cupy_runtime import CupyRuntime
    from xlate.backends.hip import HipAmdRuntime
    from xlate.backends.triton import TritonRuntime

    for cls in (CupyRuntime, HipAmdRuntime, TritonRuntime):
        # the protocol's members, with its parameters (instances need the device: they live in the worker)
        for member in ("load", "run", "is_fatal"):
            theirs = list(inspect.signature(getattr(cls, member)).parameters)[1:]
            assert theirs == list(inspect.signature(getattr(WorkerRuntime, member)).parameters)[1:], (cls, member)


def test_every_target_has_a_registered_backend():
    assert {t.backend for t in all_targets().values()} <= set(backend_names())
