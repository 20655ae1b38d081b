"""The curated prompt examples (templates/prompts/examples/) are what their `status` says: verified ones pass
xlate's verifier against the corpus's NumPy references, compile-only ones compile, and every port obeys the
output contract the model is held to."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.targets import target
from xlate.translate.llm.contract import check, contract_for
from xlate.translate.llm.prompt import all_examples

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "examples" / "references"
SOURCE_SUFFIX = {"cuda": ".cu", "hip": ".hip", "triton": ".py"}
EXAMPLES = {Path(e.path).stem: e for e in all_examples()}


def write_source(tmp_path: Path, e) -> Path:
    src = tmp_path / f"{e.kernel}{SOURCE_SUFFIX[e.source_language]}"
    src.write_text(e.source)
    return src


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_port_obeys_the_contract(name, tmp_path):
    e = EXAMPLES[name]
    src = write_source(tmp_path, e)
    unit = parse_string(e.source, str(src), e.source_language)
    contract = contract_for(unit, e.kernel, e.target, build_spec(unit, e.kernel, None))
    assert check(contract, e.port) == (None, [])


@pytest.mark.parametrize("name", sorted(n for n, e in EXAMPLES.items() if e.check == "verify"))
def test_verified_examples_verify(name, tmp_path):
    pytest.importorskip("triton")
    from xlate.verify.api import verify

    e = EXAMPLES[name]
    src = write_source(tmp_path, e)
    ref = f"{REFERENCES / e.reference.split(':')[0]}:{e.reference.split(':')[1]}"
    v = verify(str(src), None, kernel=e.kernel, candidate_text=e.port, candidate_language=e.target, reference=ref,
               examples=12)
    assert v.status == "verified", v.summary()
    assert v.examples > 0 and v.shapes > 1


@pytest.mark.parametrize("name", sorted(n for n, e in EXAMPLES.items() if e.check == "compile"))
def test_compile_only_examples_compile(name):
    from xlate.backends.base import CompileOptions
    from xlate.backends.registry import get_backend

    e = EXAMPLES[name]
    assert "not run" in e.status
    if e.target == "hip":
        if shutil.which("hipcc") is None:
            pytest.skip("hipcc not installed")
        from xlate.backends.hip import HipBackend

        assert HipBackend().check_file(e.port, e.arch, f"{e.kernel}.hip").ok
    else:
        art = get_backend(e.target).compile(e.port, e.kernel, CompileOptions(arch=e.arch, compile_only=True),
                                            path=f"{e.kernel}{target(e.target).file_suffix}")
        assert art.kernel == e.kernel
