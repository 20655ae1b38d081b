"""Mutation suite (issue 4), GPU side: every wrong CUDA variant in tests/mutants/manifest.yaml is rejected with
its expected failure class when fuzzed against the corpus kernel it varies (and that kernel's reference), and
every correct one is verified. Needs an NVIDIA GPU with CuPy; skipped elsewhere."""

from __future__ import annotations

import pytest

from tests.test_mutation_suite import check, entries

# The GPU is fast and races need chances to show: more examples than on the CPU.
GPU_EXAMPLES = 40


@pytest.mark.gpu
@pytest.mark.parametrize("entry", entries("cuda"), ids=lambda e: e["id"])
def test_cuda_variant_gets_the_expected_verdict(entry):
    check(entry, examples=GPU_EXAMPLES)
