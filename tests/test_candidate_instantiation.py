"""The gate asks a port for the instantiation the source names (`k<__nv_bfloat16>`); a HIP port spells the same
instantiation in HIP's types (`k<__hip_bfloat16>`, from its translated launch). The fma kernels' HIP ports were
rejected on the H200 with "no kernel named 'implicit_fma_kernel<__nv_bfloat16>'" although they held it."""

from __future__ import annotations

from xlate.verify.api import same_instantiation


def test_the_same_instantiation_in_another_languages_type_names():
    names = ["fma<float>", "fma<__hip_bfloat16>", "fma<__half>", "other<__hip_bfloat16>"]
    assert same_instantiation(names, "fma<__nv_bfloat16>") == "fma<__hip_bfloat16>"
    assert same_instantiation(names, "fma<half>") == "fma<__half>"


def test_value_arguments_must_be_equal_and_types_the_same_number_type():
    names = ["tile<float, 16>", "tile<float, 32>", "tile<double, 16>"]
    assert same_instantiation(names, "tile<float, 32>") == "tile<float, 32>"
    assert same_instantiation(names, "tile<float, 64>") is None
    assert same_instantiation(["tile<int, 16>"], "tile<unsigned int, 16>") is None  # int32 is not uint32


def test_no_guess_between_two_matches_or_without_template_arguments():
    assert same_instantiation(["k<__hip_bfloat16>", "k<hip_bfloat16>"], "k<__nv_bfloat16>") is None
    assert same_instantiation(["k"], "k") is None
    assert same_instantiation(["k<float>"], "k") is None
