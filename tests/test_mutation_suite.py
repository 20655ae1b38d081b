"""Mutation suite (issue 4), CPU side: every wrong Triton variant in tests/mutants/manifest.yaml is rejected
with its expected failure class and every correct one is verified, under the Triton interpreter against the
NumPy references. The CUDA variants run in test_mutation_suite_gpu.py; here they are only compiled (NVRTC).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from xlate.backends.base import CompileOptions
from xlate.backends.registry import get_backend

from tests.conftest import ROOT
from xlate.parse import parse_file
from xlate.verdict import FailureClass
from xlate.verify.api import verify

MANIFEST = ROOT / "tests" / "mutants" / "manifest.yaml"
CLASSES = set(FailureClass.__args__)  # type: ignore[attr-defined]
FIELDS = ("id", "file", "kernel", "orig", "reference", "side", "expect", "bug", "why")
# Examples per variant: small enough that the whole CPU suite takes about two minutes on two cores (the gate's
# default of 50 takes about seven and finds the same failures).
EXAMPLES = 20


def load_manifest() -> list[dict[str, Any]]:
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))


def expected(entry: dict[str, Any]) -> set[str]:
    e = entry["expect"]
    return set(e) if isinstance(e, list) else {e}


def is_wrong(entry: dict[str, Any]) -> bool:
    return expected(entry) != {"verified"}


def entries(side: str) -> list[dict[str, Any]]:
    return [e for e in load_manifest() if e["side"] == side]


def check(entry: dict[str, Any], examples: int = EXAMPLES) -> None:
    """Run the gate on one manifest entry and assert the verdict the manifest expects."""
    kwargs: dict[str, Any] = dict(kernel=entry["kernel"], reference=str(ROOT / entry["reference"]), examples=examples,
                                  spec_overrides=entry.get("spec_overrides"), timeout=float(entry.get("timeout", 60)))
    if entry["side"] == "triton":
        verdict = verify(str(ROOT / entry["file"]), **kwargs)
    else:
        verdict = verify(str(ROOT / entry["orig"]), str(ROOT / entry["file"]), **kwargs)
    want = expected(entry)
    context = f"{entry['id']} ({entry['bug']}): expected {' or '.join(sorted(want))}\n{verdict.summary()}"
    assert verdict.status != "unverified", context
    if want == {"verified"}:
        assert verdict.status == "verified", context
        assert verdict.examples > 0, context
    else:
        assert verdict.status == "rejected", context
        assert verdict.counterexample is not None and verdict.counterexample.failure in want, context


def test_manifest_is_complete_and_counts_meet_the_issue():
    doc = load_manifest()
    ids = [e["id"] for e in doc]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for e in doc:
        missing = [f for f in FIELDS if not e.get(f)]
        assert not missing, f"{e.get('id')}: missing {missing}"
        assert e["side"] in ("triton", "cuda"), e["id"]
        assert expected(e) <= CLASSES | {"verified"}, e["id"]
        assert "verified" not in expected(e) or len(expected(e)) == 1, e["id"]
        assert e["id"] == f"{e['side']}/{Path(e['file']).stem}", e["id"]
        for key in ("file", "orig"):
            assert (ROOT / e[key]).is_file(), f"{e['id']}: no {e[key]}"
        ref, _, fn = e["reference"].partition(":")
        assert re.search(rf"^def {fn}\(", (ROOT / ref).read_text(), re.M), f"{e['id']}: no {fn} in {ref}"
    count = {(s, w): sum(1 for e in doc if e["side"] == s and is_wrong(e) == w) for s in ("triton", "cuda") for w in (True, False)}
    assert count["triton", True] >= 30 and count["triton", False] >= 15, count
    assert count["cuda", True] >= 25 and count["cuda", False] >= 10, count
    assert count["triton", True] + count["cuda", True] >= 40, count
    assert count["triton", False] + count["cuda", False] >= 20, count


@pytest.mark.parametrize("entry", load_manifest(), ids=lambda e: e["id"])
def test_variant_names_the_corpus_kernel_and_keeps_its_spec(entry):
    """Each variant defines the corpus kernel's name with its parameters; Triton variants carry its spec
    (plus `as DTYPE` element types, which a Triton launcher cannot take from C parameter types)."""
    unit = parse_file(ROOT / entry["file"])
    orig = parse_file(ROOT / entry["orig"]).kernel(entry["kernel"])
    assert orig is not None, f"{entry['orig']} has no kernel {entry['kernel']}"
    if entry["side"] == "triton":
        fn = next((f for f in unit.py_functions if f.name == entry["kernel"]), None)
        assert fn is not None and fn.params == [p.name for p in orig.params]
        assert fn.annotation and orig.annotation
        assert " ".join(re.sub(r"\s+as\s+\w+", "", fn.annotation).split()) == " ".join(orig.annotation.split())
    else:
        k = unit.kernel(entry["kernel"])
        assert k is not None and len(k.params) == len(orig.params)


@pytest.mark.parametrize("entry", entries("cuda"), ids=lambda e: e["id"])
def test_cuda_variant_compiles_for_sm90(entry):
    backend = get_backend("cuda")
    if not backend.detect().can_compile:
        pytest.skip("NVRTC not installed")
    path = ROOT / entry["file"]
    art = backend.compile(path.read_text(), entry["kernel"], CompileOptions(arch="sm_90"), path=str(path))
    assert art.path.endswith(".cubin")


@pytest.mark.parametrize("entry", entries("triton"), ids=lambda e: e["id"])
def test_triton_variant_gets_the_expected_verdict(entry):
    check(entry)
