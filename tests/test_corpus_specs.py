"""Every corpus kernel has a spec that builds, cases that generate, and a reference that accepts them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import KERNELS
from xlate.parse import parse_file
from xlate.specs import build_spec, sidecar_reference
from xlate.verify.cases import buffer_length, ctype_dtype, environment, launch_dims, make_inputs
from xlate.verify.oracle import ReferenceOracle
from xlate.verify.strategies import cases

CORPUS = [(f, k.name) for f in sorted(KERNELS.glob("*.cu")) for k in parse_file(f).kernels]


@pytest.mark.parametrize("path, kernel", CORPUS, ids=[f"{p.stem}:{k}" for p, k in CORPUS])
def test_spec_cases_and_reference(path, kernel):
    unit = parse_file(path)
    spec = build_spec(unit, kernel)
    assert spec.buffers, "a kernel without buffers cannot be checked"
    assert not {b.name for b in spec.buffers} - {p.name for p in unit.kernel(kernel).params if p.is_pointer}
    ref = sidecar_reference(str(path), kernel)
    assert ref is not None, f"no reference for {kernel}"
    oracle = ReferenceOracle(ref)

    @settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=cases(spec, budget=1 << 14, size_cap=1 << 10))
    def check(case):
        env = environment(spec, case)
        _, block, _ = launch_dims(spec, env, case)
        assert all(b >= 1 for b in block)
        inputs = make_inputs(spec, case, env)
        for p in spec.buffers:
            if p.role != "out":
                assert inputs[p.name].size == buffer_length(p, env, case, spec)
                assert inputs[p.name].dtype == ctype_dtype(p.ctype, case, spec)
        outs = oracle.outputs(spec, case, env, inputs)
        for p in spec.buffers:
            if p.role != "in":
                assert outs[p.name].size == buffer_length(p, env, case, spec)
                assert np.isfinite(outs[p.name]).any() or outs[p.name].size == 0 or spec.values == "special"

    check()
