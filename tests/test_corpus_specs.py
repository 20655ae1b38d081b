"""Every corpus kernel has a spec that builds, cases that generate, a reference that accepts them, and that
reference computes what the CUDA kernel computed on the H200 (the golden files recorded there)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import KERNELS
from xlate.parse import parse_file
from xlate.specs import build_spec, sidecar_overrides, sidecar_reference
from xlate.verify.cases import buffer_length, ctype_dtype, environment, launch_dims, make_inputs
from xlate.verify.compare import compare, output_scale, tolerance
from xlate.verify.engine import tolerance_terms
from xlate.verify.golden import read_golden
from xlate.verify.oracle import ReferenceOracle
from xlate.verify.strategies import cases

GOLDEN = KERNELS.parent / "golden"

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

    check()


@pytest.mark.parametrize("path, kernel", CORPUS, ids=[f"{p.stem}:{k}" for p, k in CORPUS])
def test_reference_agrees_with_the_cuda_kernel_on_the_h200(path, kernel):
    """The golden file's inputs through the NumPy reference, against the outputs the CUDA kernel gave for them on
    the H200, within the gate's own tolerances: the reference is checked against the source it stands in for."""
    golden = GOLDEN / f"{path.stem}.{kernel}.xg"
    assert golden.exists(), f"no golden file for {kernel}: record one on a GPU (xlate fuzz ... --record)"
    gold = read_golden(str(golden))
    spec = build_spec(parse_file(path), kernel, sidecar_overrides(str(path), kernel))
    oracle = ReferenceOracle(sidecar_reference(str(path), kernel))
    assert len(gold.cases) >= 8
    for gc in gold.cases:
        env = environment(spec, gc.case)
        ref = oracle.outputs(spec, gc.case, env, gc.inputs)
        length, scale = tolerance_terms(spec, gc.case, env, gc.inputs)
        for p in spec.buffers:
            if p.role == "in":
                continue
            tol = tolerance(spec, ctype_dtype(p.ctype, gc.case, spec), length, scale, output_scale(ref[p.name]))
            cmp = compare(gc.outputs[p.name], None, ref[p.name], tol, gc.written[p.name])
            assert cmp.ok, (f"{kernel}: '{p.name}' of the H200 run differs from the reference beyond {tol.text} "
                            f"for {gc.case.sizes} (max error {cmp.max_error:.3g})")
