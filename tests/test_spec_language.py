"""The spec language (docs/spec.md): where annotations may stand, launch axes and sizes that are not
parameters, ranges every value profile honours, decimal bounds, references, the sidecar and `xlate spec`."""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from xlate.cli import main
from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec, expr
from xlate.specs.language import spec_items
from xlate.specs.sidecar import sidecar_overrides, write_sidecar_specs
from xlate.verify.cases import FLOAT_PROFILES, Case, environment, make_inputs
from xlate.verify.oracle import ReferenceFailed, ReferenceOracle
from xlate.verify.strategies import cases, float_bounds, multiples


def spec_of(src: str, kernel: str = "k", path: str = "k.cu"):
    return build_spec(parse_string(textwrap.dedent(src).lstrip(), path), kernel)


KERNEL = "__global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = 0; }\n"


def test_annotation_reaches_its_kernel_across_preprocessor_lines_and_comments():
    # the [infer] report: an annotation separated from its kernel by a #define was silently ignored
    s = spec_of("""
        // xlate: x: inout[n](-1..1), n: size(1..9), grid: 1, block: 32
        #define SCALE 2.0f
        /* the kernel */
        #include <cstdio>
        """ + KERNEL)
    assert (s.param("x").lo, s.param("n").hi, s.block) == ("-1", "9", ["32"])
    assert s.source == "annotation" and s.origins["x"].kind == "annotation"


def test_annotation_above_an_ifdef_block_and_inside_it():
    s = spec_of("""
        // xlate: n: size(1..7), grid: 1, block: 8
        #ifdef USE_KERNEL
        // xlate: x: out[n]
        """ + KERNEL + "#endif\n")
    assert (s.param("x").role, s.param("n").hi, s.block) == ("out", "7", ["8"])


def test_top_of_file_annotation_for_a_one_kernel_file_only():
    top = """
        // Copyright notice
        // xlate: x: inout[n], n: size(1..50), grid: cdiv(n, 32), block: 32
        #include <cstdio>
        struct Options { int verbose; };
        int helper(int a) { return a + 1; }
        """
    s = spec_of(top + KERNEL)
    assert (s.param("n").hi, s.grid) == ("50", ["cdiv(n, 32)"])
    # with two kernels the top of the file belongs to neither: the second kernel is inferred, not annotated
    two = parse_string(textwrap.dedent(top + KERNEL + KERNEL.replace("void k(", "void k2(")).lstrip(), "k.cu")
    s2 = build_spec(two, "k")
    assert s2.origins["n"].kind != "annotation"


def test_top_of_file_annotation_for_a_one_launcher_triton_module():
    # the [infer] report: a `# xlate:` line at the top of a one-launcher Triton file was not seen
    unit = parse_string(textwrap.dedent('''
        """Doubles a vector."""
        # xlate: x: in[n], y: out[n], n: size(1..100)
        import triton
        import triton.language as tl


        @triton.jit
        def _k(X, Y, N, B: tl.constexpr):
            i = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(Y + i, 2 * tl.load(X + i, mask=i < N), mask=i < N)


        def double(x, y, n):
            _k[(triton.cdiv(n, 64),)](x, y, n, B=64)
        ''').lstrip(), "double.py", "triton")
    s = build_spec(unit, "double")
    assert [(p.name, p.role) for p in s.params] == [("x", "in"), ("y", "out"), ("n", "size")]


def test_launch_axes_sizes_that_are_not_parameters_and_pinning():
    s = spec_of("// xlate: x: inout[m], n: size(1..99), m: size(4..8), bs: choice(64|128), grid: cdiv(m, bs), block: bs\n"
                + KERNEL)
    assert s.axes == {"bs": [64, 128]} and s.param("m").position == -1 and s.param("n").position == 1
    pinned = s.pinned()
    assert (pinned.grid, pinned.block, pinned.axes) == (["cdiv(m, 64)"], ["64"], {})
    with pytest.raises(SpecError, match="must list integer values"):
        spec_of("// xlate: x: inout[n], n: size(1..9), bs: choice(), grid: 1, block: bs\n" + KERNEL)


def test_items_written_back_read_the_same():
    s = spec_of("// xlate: x: inout[m](-2..2), n: size(1..99), m: size(4..8), bs: choice(64|128), grid: cdiv(m, bs), "
                "block: bs, where: m % 4 == 0\n" + KERNEL)
    again = spec_of("// xlate: " + ", ".join(text for _, text in spec_items(s)) + "\n" + KERNEL)
    for field in ("grid", "block", "axes", "where"):
        assert getattr(again, field) == getattr(s, field)
    assert [(p.name, p.role, p.dims, p.lo, p.hi, p.position) for p in again.params] == [
        (p.name, p.role, p.dims, p.lo, p.hi, p.position) for p in s.params]


def test_python_keywords_are_fine_parameter_names():
    # a real kernel called its input `in`: `in + 1` was a Python syntax error
    assert expr.names("in + 1") == {"in"} and expr.evaluate("cdiv(in, 4) + lambda", {"in": 9, "lambda": 1}) == 4


@settings(max_examples=40, deadline=None, database=None)
@given(st.data())
def test_decimal_bounds_are_rounded_outward_for_the_dtype(data):
    # the [infer] report: scalar(0.0001..0.01) crashed Hypothesis ("cannot be exactly represented as a float of
    # width 32")
    s = spec_of("// xlate: x: inout[n], n: size(1..9), eps: scalar(0.0001..0.01), h: scalar(0.1..0.3), grid: 1, "
                "block: 32\n__global__ void k(float* x, int n, float eps, __half h) { x[0] = eps; }\n")
    case = data.draw(cases(s, 1 << 12, 1 << 10))
    lo, hi = float_bounds(0.0001, 0.01, np.dtype(np.float32))
    assert lo <= 0.0001 and hi >= 0.01 and np.float32(lo) == lo
    assert lo <= case.scalars["eps"] <= hi
    assert 0.0999 <= case.scalars["h"] <= 0.3002


@pytest.mark.parametrize("profile", FLOAT_PROFILES)
def test_every_value_profile_honours_a_range(profile):
    # the [infer] report: an inout[1](0..0) buffer received 3.7e-38 from the "tiny" profile
    s = spec_of("// xlate: x: inout[1](0..0), y: in[n](-1..1), n: size(1..200), grid: 1, block: 32\n"
                "__global__ void k(float* x, const float* y, int n) { x[0] = y[0]; }\n")
    case = Case({"n": 200}, {}, {}, {"x": profile, "y": profile}, 7)
    inputs = make_inputs(s, case, environment(s, case))
    finite = inputs["x"][np.isfinite(inputs["x"])]
    assert np.all(finite == 0.0)  # -0.0 from "edges" is inside [0, 0] too
    y = inputs["y"][np.isfinite(inputs["y"])]
    assert np.all(np.abs(y) <= 1.0)
    if profile != "special":
        assert np.all(np.isfinite(inputs["x"])) and np.all(np.isfinite(inputs["y"]))
    # `values: finite` keeps the specials out too
    s2 = spec_of("// xlate: x: inout[1](0..0), y: in[n](-1..1), n: size(1..200), grid: 1, block: 32, values: finite\n"
                 "__global__ void k(float* x, const float* y, int n) { x[0] = y[0]; }\n")
    inputs = make_inputs(s2, case, environment(s2, case))
    assert np.all(inputs["x"] == 0.0) and np.all(np.abs(inputs["y"]) <= 1.0)


@pytest.mark.parametrize("profile", ["normal", "edges"])
def test_uint64_buffers_draw_their_whole_range(profile):
    # the upper half of uint64 does not fit int64 (HeCBench metropolis: "high is out of bounds for int64")
    s = spec_of("// xlate: st: inout[n], n: size(1..500), grid: 1, block: 32\n"
                "__global__ void k(unsigned long long* st, int n) { st[threadIdx.x] += 1; }\n")
    case = Case({"n": 500}, {}, {}, {"st": profile}, 3)
    x = make_inputs(s, case, environment(s, case))["st"]
    assert x.dtype == np.uint64 and len(x) == 500 and int(x.max()) > 2**63


def test_multiples_from_where_are_drawn_not_filtered():
    s = spec_of("// xlate: x: inout[n], n: size(1..4096), grid: n / 256, block: 256, where: n % 256 == 0\n" + KERNEL)
    assert multiples(s) == {"n": 256}

    @settings(max_examples=30, deadline=None, database=None)
    @given(cases(s, 1 << 14, 1 << 13))
    def check(case):
        assert case.sizes["n"] % 256 == 0 and 256 <= case.sizes["n"] <= 4096

    check()


def test_references_destination_passing_return_style_and_failing(tmp_path):
    ref = tmp_path / "ref.py"
    ref.write_text(textwrap.dedent("""
        import numpy as np
        def dps(x, y, n):
            y[:n] = np.sqrt(np.abs(x[:n]))
        def ret(x, n):
            return {"y": np.sqrt(np.abs(x))}
        def raises(x, n):
            raise KeyError("boom")
        def none(x, n):
            pass
    """))
    s = spec_of("// xlate: x: in[n], y: out[n], n: size(1..9), grid: 1, block: 32\n"
                "__global__ void k(const float* x, float* y, int n) { y[0] = x[0]; }\n")
    case = Case({"n": 5}, {}, {}, {"x": "normal"}, 3)
    env = environment(s, case)
    inputs = make_inputs(s, case, env)
    want = np.sqrt(np.abs(inputs["x"].astype(np.float64)))
    for name in ("dps", "ret"):
        got = ReferenceOracle(f"{ref}:{name}").outputs(s, case, env, inputs)["y"]
        assert np.allclose(got, want)
    with pytest.raises(ReferenceFailed, match=r"the reference ref.py:raises raised KeyError: 'boom' \(case: n=5\)"):
        ReferenceOracle(f"{ref}:raises").outputs(s, case, env, inputs)
    with pytest.raises(ReferenceFailed, match="returned None and takes no output array"):
        ReferenceOracle(f"{ref}:none").outputs(s, case, env, inputs)


def test_sidecar_is_updated_in_place(tmp_path):
    (tmp_path / "xlate.toml").write_text('# ours\n[references]\ndir = "refs"\n\n[kernels.a]\nspec = "n: size(1..2)"\n'
                                         'reference = "r.py:a"\n')
    write_sidecar_specs(tmp_path, {"a": "n: size(1..9)", "b": "x: in[n]"})
    text = (tmp_path / "xlate.toml").read_text()
    assert text.startswith("# ours") and 'reference = "r.py:a"' in text and 'dir = "refs"' in text
    src = str(tmp_path / "k.cu")
    assert sidecar_overrides(src, "a") == "n: size(1..9)" and sidecar_overrides(src, "b") == "x: in[n]"


def test_xlate_spec_command(tmp_path):
    (tmp_path / "k.cu").write_text(textwrap.dedent("""
        __global__ void scale(float* v, float a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) v[i] *= a;
        }
        __global__ void opaque(float* v) { v[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
        int main() { int n = 1000; float* d; cudaMalloc(&d, n * sizeof(float)); scale<<<(n + 127) / 128, 128>>>(d, 0.5f, n); }
    """).lstrip())
    runner = CliRunner()
    r = runner.invoke(main, ["spec", str(tmp_path / "k.cu"), "--json"])
    assert r.exit_code == 2  # `opaque` has holes
    doc = json.loads(r.stdout)
    by_name = {k["kernel"]: k for k in doc["kernels"]}
    assert by_name["scale"]["complete"] and not by_name["opaque"]["complete"]
    assert by_name["scale"]["annotation"] == "v: inout[n], a: scalar(0.25..1), n: size(1..1000), grid: cdiv(n, 128), block: 128"
    items = {i["key"]: i for i in by_name["scale"]["items"]}
    assert items["v"]["origin"] == "host" and items["v"]["where"] == "k.cu:6" and "cudaMalloc" in items["v"]["detail"]
    assert {h["key"] for h in by_name["opaque"]["holes"]} >= {"grid", "v"}
    r = runner.invoke(main, ["spec", str(tmp_path / "k.cu"), "--kernel", "scale", "--write"])
    assert r.exit_code == 0 and "// xlate: v: inout[n]" in r.stdout and "<- host k.cu:6" in r.stdout
    assert sidecar_overrides(str(tmp_path / "k.cu"), "scale") == by_name["scale"]["annotation"]
    assert math.isclose(float(by_name["scale"]["annotation"].split("scalar(")[1].split("..")[0]), 0.25)
