"""The gate's parts: spec reading and its errors, tolerance rules, poison/guard patterns, golden files, CLI."""

from __future__ import annotations

import json
import textwrap
import zipfile

import numpy as np
import pytest

from xlate.errors import InputError, SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.verify.cases import Case
from xlate.verify.compare import Tolerance, compare, tolerance
from xlate.verify.golden import Golden, GoldenCase, read_golden, write_golden
from xlate.verify.runner import poison
from xlate.verify.strategies import interesting_sizes

# -- specs ---------------------------------------------------------------------------------------------------


def spec_of(src: str, kernel: str = "k", overrides: str | None = None):
    return build_spec(parse_string(src, "k.cu"), kernel, overrides)


def test_annotation_is_read_in_full():
    s = spec_of(
        """
// xlate: A: in[m, k](-1..1), C: out[m, n], m: size(1..64), n: size(2..64), k: size(1..9),
// xlate: alpha: scalar(0..2), ld: const(n), grid: (cdiv(n, 16), cdiv(m, 16)), block: (16, 16),
// xlate: shmem: 16 * 16 * sizeof(float), op: matmul(k), where: n % 2 == 0, values: finite, rtol: 1e-4
__global__ void k(const float* A, float* C, int m, int n, int k, float alpha, int ld) { C[0] = A[0]; }
"""
    )
    a = s.param("A")
    assert (a.role, a.dims, a.lo, a.hi, a.ctype) == ("in", ["m", "k"], "-1", "1", "float")
    assert s.param("C").role == "out" and s.param("ld").const == "n"
    assert [p.name for p in s.sizes] == ["m", "n", "k"]
    assert s.grid == ["cdiv(n, 16)", "cdiv(m, 16)"] and s.block == ["16", "16"]
    assert (s.op, s.op_length, s.values, s.rtol) == ("matmul", "k", "finite", 1e-4)
    assert s.where == ["n % 2 == 0"] and s.shmem == "16 * 16 * sizeof(float)"


def test_inference_from_source_model_and_launch_site():
    s = spec_of(
        """
__global__ void k(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
void launch(const float* d_x, float* d_y, int len) { k<<<(len + 127) / 128, 128>>>(d_x, d_y, len); }
"""
    )
    assert (s.param("x").role, s.param("x").dims) == ("in", ["n"])
    assert s.param("y").role == "out" and s.param("n").role == "size"
    assert s.grid == ["cdiv(n, 128)"] and s.block == ["128"]  # host names mapped to parameter names, idiom read
    assert set(s.inferred) >= {"x", "y", "n", "grid", "block"}


def test_template_dtype_axis():
    s = spec_of(
        """
// xlate: x: in[n], y: out[n], n: size(1..100), T: float32|float16, grid: cdiv(n, 64), block: 64
template <typename T, int B = 64> __global__ void k(const T* x, T* y, int n) { y[0] = x[0]; }
"""
    )
    assert s.dtype_axes == {"T": ["float32", "float16"]} and s.value_params == {"B": "64"}


@pytest.mark.parametrize(
    "annotation, message",
    [
        ("x: in[n], y: out[n], n: size(1..9), grid: 1, block: 1, values: odd", "values must be"),
        ("x: in[n], y: out[q], n: size(1..9), grid: 1, block: 1", "names q"),
        ("x: in[n], y: bogus[n], n: size(1..9), grid: 1, block: 1", "cannot read spec for 'y'"),
        ("x: in[n], y: out[n], n: size, grid: 1, block: 1", "needs a range"),
        ("x: in[n], y: out[n], n: size(1..9), zz: 3, grid: 1, block: 1", "zz"),
        ("x: in[n], y: out[n], n: in[3], grid: 1, block: 1", "not a pointer"),
        ("x: in[n], y: out[n], n: size(1..9), grid: 1, block: 1, op: fancy", "unknown op class"),
    ],
)
def test_spec_errors_name_what_to_annotate(annotation, message):
    with pytest.raises(SpecError) as info:
        spec_of(f"// xlate: {annotation}\n__global__ void k(const float* x, float* y, int n) {{ y[0] = x[0]; }}\n")
    assert message in str(info.value) and "k.cu:1:" in str(info.value)


def test_lengths_nothing_shows_need_an_annotation():
    # x is indexed by values read from y (floats): neither the host code nor the kernel bounds x or y
    with pytest.raises(SpecError) as info:
        spec_of("__global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; y[i] = x[(int)y[i]]; }\n"
                "void h(float* a, float* b) { k<<<1, 32>>>(a, b, 1); }")
    assert "annotate it" in str(info.value) and "x: in[n]" in str(info.value)


def test_sidecar_toml_overrides_annotation(tmp_path):
    (tmp_path / "xlate.toml").write_text('[kernels.k]\nspec = "n: size(5..6)"\n')
    src = tmp_path / "k.cu"
    src.write_text("// xlate: x: in[n], y: out[n], n: size(1..9), grid: 1, block: 32\n"
                   "__global__ void k(const float* x, float* y, int n) { y[0] = x[0]; }\n")
    from xlate.specs import sidecar_overrides

    s = build_spec(parse_string(src.read_text(), str(src)), "k", sidecar_overrides(str(src), "k"))
    assert (s.param("n").lo, s.param("n").hi) == ("5", "6")


def test_sizes_bounded_by_other_sizes_are_drawn_from_their_bound_up(monkeypatch):
    from hypothesis import assume, given, settings
    from hypothesis import strategies as st

    from xlate.verify import strategies
    from xlate.verify.cases import environment
    from xlate.verify.strategies import cases, lower_bounds

    verdicts: list[bool] = []  # every `where`/budget check the strategy makes: drawn, not filtered

    def counting_assume(condition):
        verdicts.append(bool(condition))
        return assume(condition)

    monkeypatch.setattr(strategies, "assume", counting_assume)

    src = ("// xlate: rows: size(1..300), cols: size(1..300), x: in[rows, ldx], ldx: size(1..320),\n"
           "// xlate: y: out[rows, ldy], ldy: size(1..320), k: size(0..50), m: size(0..60),\n"
           "// xlate: where: ldx >= cols and cols <= ldy and m > k + 2,\n"
           "// xlate: grid: 1, block: 32\n"
           "__global__ void f(int rows, int cols, const float* x, int ldx, float* y, int ldy, int k, int m) {}\n")
    spec = build_spec(parse_string(src, "f.cu"), "f")
    assert lower_bounds(spec) == {"ldx": [("cols", 0)], "ldy": [("cols", 0)], "m": [("k", 3)]}
    seen = {"equal": 0, "above": 0}

    @settings(max_examples=150, database=None)
    @given(data=st.data())
    def draw(data):
        case = data.draw(cases(spec, 1 << 20, 4096))
        sizes = environment(spec, case)
        assert sizes["ldx"] >= sizes["cols"] and sizes["ldy"] >= sizes["cols"] and sizes["m"] >= sizes["k"] + 3
        seen["equal" if sizes["ldx"] == sizes["cols"] else "above"] += 1

    draw()
    assert seen["equal"] and seen["above"]  # the boundary ld == cols is met, and strides beyond it too
    assert verdicts.count(False) < 0.05 * len(verdicts)  # freely drawn, 7 in 8 cases failed these clauses


def test_interesting_sizes_straddle_block_and_wavefront_widths():
    sizes = interesting_sizes(0, 5000, [256])
    for w in (32, 64, 256):
        assert {w - 1, w, w + 1} <= set(sizes)
    assert sizes[0] == 0 and 1 in sizes and 5000 in sizes and 4093 in sizes  # a prime


# -- comparison ----------------------------------------------------------------------------------------------


def test_exact_comparison_is_bitwise_for_movement():
    tol = Tolerance(0, 0, True, "exact")
    a = np.array([0.0, 1.0, np.nan], np.float32)
    assert compare(a, a.copy(), None, tol).ok
    assert not compare(np.array([-0.0, 1.0, np.nan], np.float32), a, None, tol).ok  # -0.0 != +0.0 bitwise


def test_nan_differences_are_never_hidden():
    tol = Tolerance(1e-3, 1e-3, False, "")
    src = np.array([1.0, np.nan, 2.0], np.float32)
    assert not compare(np.array([1.0, 0.0, 2.0], np.float32), src, None, tol).ok
    assert not compare(np.array([np.nan, np.nan, 2.0], np.float32), src, None, tol).ok
    assert compare(np.array([1.0, np.nan, 2.0005], np.float32), src, None, tol).ok


def test_bit_identical_outputs_take_the_fast_path_and_near_ones_the_full_comparison():
    tol = Tolerance(1e-3, 1e-3, False, "")
    rng = np.random.default_rng(3)
    src = rng.standard_normal(10_001).astype(np.float32)
    src[[5, 77]] = [np.nan, -np.inf]
    same = compare(src.copy(), src, None, tol)
    assert same.ok and same.max_error == 0.0 and same.ratio == 0.0 and not same.bad.any()
    near = src.copy()
    near[9] = np.nextafter(near[9], np.float32(np.inf))  # one ulp: no longer identical, still within tolerance
    res = compare(near, src, None, tol)
    assert res.ok and 0 < res.max_error < 1e-6 and 0 < res.ratio < 1
    far = src.copy()
    far[10_000] += 1.0
    res = compare(far, src, None, tol)
    assert not res.ok and np.flatnonzero(res.bad).tolist() == [10_000]
    # unwritten elements (outside the mask) may differ: the full comparison judges only the written ones
    masked = src.copy()
    masked[0] = 123.0
    mask = np.ones(src.size, dtype=bool)
    mask[0] = False
    assert compare(masked, src, None, tol, mask).ok


def test_infinities_must_match_in_sign():
    tol = Tolerance(1e-3, 1e-3, False, "")
    src = np.array([np.inf, -np.inf], np.float32)
    assert compare(src.copy(), src, None, tol).ok
    assert not compare(np.array([np.inf, np.inf], np.float32), src, None, tol).ok


def test_port_closer_to_exact_than_source_is_accepted():
    # A float32 sum where the source accumulated badly: the port is far from the source but near the truth.
    exact = np.array([1000.0001])
    source = np.array([999.9], np.float32)
    port = np.array([1000.0], np.float32)
    tol = Tolerance(4e-6, 1e-5, False, "")
    assert not compare(port, source, None, tol).ok  # without an oracle they disagree ...
    assert compare(port, source, exact, tol).ok  # ... with one, the port is judged against the truth
    worse = np.array([999.0], np.float32)
    assert not compare(worse, source, exact, tol).ok  # and a port worse than the source is still rejected


def test_overflow_to_inf_follows_the_output_dtype():
    tol = Tolerance(4e-6, 0.0, False, "")
    exact = np.array([np.exp(100.0)])  # finite in float64, inf in float32
    assert compare(np.array([np.inf], np.float32), None, exact, tol).ok


def test_reduction_tolerance_scales_with_length():
    s = spec_of("// xlate: x: in[n], y: out[1], n: size(1..9), grid: 1, block: 1, op: reduction(n)\n"
                "__global__ void k(const float* x, float* y, int n) { y[0] = x[0]; }\n")
    small = tolerance(s, np.dtype("float32"), 16, 1.0, 1.0)
    large = tolerance(s, np.dtype("float32"), 1 << 16, 1.0, 1.0)
    assert large.atol > 100 * small.atol
    assert large.atol < 0.5  # still catches a missing term of magnitude ~1
    ints = tolerance(s, np.dtype("int32"), 1 << 16, 1.0, 1.0)
    assert ints.exact


def test_poison_patterns_differ_and_are_recognisable():
    for dt in ("float32", "float16", "float64", "int32", "uint8"):
        a, b = poison(np.dtype(dt), 0, 4), poison(np.dtype(dt), 1, 4)
        assert a.tobytes() != b.tobytes()
    assert np.isnan(poison(np.dtype("float32"), 0, 1)).all()
    assert np.isfinite(poison(np.dtype("float32"), 1, 1)).all()


# -- golden files --------------------------------------------------------------------------------------------


def _golden(tmp_path):
    case = Case({"n": 3}, {}, {"a": 2.0}, {"x": "normal"}, 7)
    gc = GoldenCase(case, {"x": np.arange(3, dtype=np.float32)}, {"y": np.arange(3, dtype=np.float32) * 2},
                    {"y": np.ones(3, bool)}, {"y": np.arange(3.0) * 2})
    g = Golden("k", "abc", {"kernel": "k"}, {"backend": "cuda", "devices": ["H200"]}, [gc], "reference:r.py:k")
    path = tmp_path / "k.xg"
    write_golden(str(path), g)
    return path


def test_golden_round_trip_is_exact(tmp_path):
    path = _golden(tmp_path)
    g = read_golden(str(path))
    assert g.kernel == "k" and g.producer["devices"] == ["H200"] and g.oracle == "reference:r.py:k"
    gc = g.cases[0]
    assert gc.case.sizes == {"n": 3} and gc.case.seed == 7
    np.testing.assert_array_equal(gc.outputs["y"], [0, 2, 4])
    assert gc.outputs["y"].dtype == np.float32 and gc.written["y"].all()


def test_golden_loader_refuses_strangers_files(tmp_path):
    with pytest.raises(InputError):
        read_golden(str(tmp_path / "missing.xg"))
    junk = tmp_path / "junk.xg"
    junk.write_bytes(b"not a zip")
    with pytest.raises(InputError):
        read_golden(str(junk))
    other = tmp_path / "other.xg"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": "something-else", "version": 1}))
    with pytest.raises(InputError):
        read_golden(str(other))
    # members whose bytes do not match the declared dtype and shape, or object dtypes, are refused
    path = _golden(tmp_path)
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        members = {n: zf.read(n) for n in zf.namelist() if n != "manifest.json"}
    for mutate in ("truncate", "object"):
        evil = tmp_path / f"evil-{mutate}.xg"
        m = json.loads(json.dumps(manifest))
        ref = m["cases"][0]["inputs"]["x"]
        with zipfile.ZipFile(evil, "w") as zf:
            zf.writestr("manifest.json", json.dumps(m if mutate == "truncate" else {**m, "cases": [{**m["cases"][0], "inputs": {"x": {**ref, "dtype": "object"}}}]}))
            for name, data in members.items():
                zf.writestr(name, data[:-1] if (mutate == "truncate" and name == ref["file"]) else data)
        with pytest.raises((InputError, TypeError)):
            read_golden(str(evil))


# -- end to end on the CPU (Triton interpreter) ----------------------------------------------------------------

TRITON_SCALE = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def _k(x, y, n, a, OFF: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n - OFF
        tl.store(y + offs, tl.load(x + offs, mask=m) * a, mask=m)

    # xlate: x: in[n], y: out[n], n: size(1..2000), a: scalar(-2..2)
    def scale(x, y, n, a):
        _k[(triton.cdiv(n, 64),)](x, y, n, a, OFF=0, BLOCK=64)

    # xlate: x: in[n], y: out[n], n: size(1..2000), a: scalar(-2..2)
    def scale_tail(x, y, n, a):
        _k[(triton.cdiv(n, 64),)](x, y, n, a, OFF=1, BLOCK=64)

    # xlate: x: in[n], y: out[n], n: size(1..2000), a: scalar(-2..2)
    def scale_const(x, y, n, a):
        _k[(triton.cdiv(n, 64),)](x, y, n, 1.5, OFF=0, BLOCK=64)
    """
)


@pytest.fixture
def scale_files(tmp_path):
    mod = tmp_path / "scale.py"
    mod.write_text(TRITON_SCALE)
    ref = tmp_path / "ref.py"
    ref.write_text("def scale(x, n, a):\n    return x * a\n")
    return mod, ref


def test_fuzz_cli_verified_and_rejected_with_json(cli, scale_files):
    mod, ref = scale_files
    r = cli("fuzz", str(mod), "--kernel", "scale", "--reference", f"{ref}:scale", "--examples", "10", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "verified" and doc["examples"] >= 5 and doc["schema"] == "xlate.verdict/1"
    r = cli("fuzz", str(mod), str(mod), "--kernel", "scale", "--examples", "20", "--json")
    assert r.exit_code == 0
    # scale_const ignores its scalar: rejected, shrunk to a tiny case
    from xlate.verify.api import verify

    v = verify(str(mod), str(mod), kernel="scale", candidate_kernel="scale_const", examples=30)
    assert v.status == "rejected" and v.counterexample.failure == "mismatch"
    assert v.counterexample.sizes["n"] <= 2


def test_fuzz_replay_reproduces_a_counterexample(cli, scale_files):
    mod, _ = scale_files
    from xlate.verify.api import verify

    v = verify(str(mod), str(mod), kernel="scale", candidate_kernel="scale_tail", examples=30)
    assert v.status == "rejected" and v.counterexample.failure == "unwritten output"
    case = v.counterexample.replay.split("--replay '", 1)[1].rstrip("'")
    again = verify(str(mod), str(mod), kernel="scale", candidate_kernel="scale_tail", replay=case)
    assert again.status == "rejected" and again.counterexample.sizes == v.counterexample.sizes
    assert again.examples == 0


def test_record_and_replay_golden_on_cpu(cli, scale_files, tmp_path):
    mod, ref = scale_files
    golden = tmp_path / "scale.xg"
    r = cli("fuzz", str(mod), "--kernel", "scale", "--reference", f"{ref}:scale", "--record", str(golden), "--examples", "8")
    assert r.exit_code == 0, r.stderr
    g = read_golden(str(golden))
    assert len(g.cases) == 8 and g.oracle.startswith("reference:")
    r = cli("fuzz", str(mod), "--kernel", "scale", "--against", str(golden), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["examples"] == 8
    from xlate.verify.api import verify

    bad = verify(str(mod), str(mod), kernel="scale", candidate_kernel="scale_const", golden=str(golden))
    assert bad.status == "rejected"


def test_degenerate_oracle_is_warned_about(tmp_path):
    mod = tmp_path / "zero.py"
    mod.write_text(TRITON_SCALE)
    ref = tmp_path / "ref.py"
    ref.write_text("import numpy as np\ndef scale(x, n, a):\n    return np.zeros_like(x)\n")
    from xlate.verify.api import verify

    v = verify(str(mod), kernel="scale", reference=f"{ref}:scale", examples=10,
               spec_overrides="a: const(0), values: finite")
    assert v.status == "verified"
    assert any("all zero" in w for w in v.warnings)


def test_fuzz_usage_errors_exit_2(cli, scale_files):
    mod, _ = scale_files
    r = cli("fuzz", str(mod), "--kernel", "nope", "--examples", "2")
    assert r.exit_code == 2 and "no launcher function 'nope'" in r.stderr
    r = cli("fuzz", str(mod), "--kernel", "scale")
    assert r.exit_code == 2 and "nothing to compare" in r.stderr


def test_an_atomic_sums_terms_scaled_by_float_scalars_and_its_repeat_tolerance_covers_their_order():
    """`atomicAdd(mass, r[i] * dx * dz)`: one term is an input times the float scalars, so the tolerance of two
    runs that add in different orders scales with dx * dz too (miniWeather's acc_mass_te was called
    nondeterministic on the H200: its scale was max(|r|, dx, dz))."""
    from xlate.verify.cases import environment
    from xlate.verify.engine import tolerance_terms

    spec = spec_of("""
    // xlate: r: in[n], mass: inout[1](0..0), n: size(1..4096), dx: scalar(25..100), dz: scalar(25..100), grid: cdiv(n, 256), block: 256
    __global__ void k(const double* r, double* mass, int n, double dx, double dz) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) atomicAdd(mass, r[i] * dx * dz);
    }
    """)
    assert spec.op == "atomic"
    rng = np.random.default_rng(7)
    r = rng.integers(-8, 8, 2875) + rng.random(2875)
    case = Case({"n": r.size}, {}, {"dx": 45.76, "dz": 25.0}, {}, 0)
    env = environment(spec, case)
    length, scale = tolerance_terms(spec, case, env, {"r": r, "mass": np.zeros(1)})
    assert scale == pytest.approx(np.abs(r).max() * 45.76 * 25.0)
    atol = tolerance(spec, np.dtype(np.float64), length, scale, 0.0).atol
    terms = r * 45.76 * 25.0
    sums = [float(np.cumsum(terms[rng.permutation(terms.size)])[-1]) for _ in range(50)]
    assert 0 < max(sums) - min(sums) <= atol  # (with the old scale, atol was 1.3e-9: below these 2.6e-9)
    assert atol < 1.0  # a missing or doubled term (at least 1144 here) is still far outside it


# -- blame for a race ------------------------------------------------------------------------------------------


class _RacySide:
    """A side whose runs of `y` differ from run to run on the calls numbered in `varies` (0-based)."""

    def __init__(self, label: str, varies: set[int]):
        self.label, self.varies, self.calls = label, varies, 0
        self.unit = parse_string("__global__ void k(const float* x, float* y, int n) { }", "k.cu")
        self.kernel = "k"

    def run_case(self, spec, case, inputs, **_):
        from xlate.verify.runner import BufferResult, SideRun

        n = case.sizes["n"]
        nondet = np.zeros(n, dtype=bool)
        if self.calls in self.varies:
            nondet[n - 1] = True
        self.calls += 1
        y = BufferResult(inputs["x"] * 2, np.ones(n, dtype=bool), nondet if nondet.any() else None)
        return SideRun(buffers={"y": y})


@pytest.mark.parametrize(("source_varies", "blamed"), [({2}, "source"), (set(), "candidate")])
def test_a_race_the_source_shows_when_run_again_is_the_sources(source_varies, blamed):
    # A racy program passed its own check by luck, and its port's runs then differed: the port kept the race, it
    # did not make it. The source is run again on that case; where it varies too, the verdict blames the source.
    from xlate.verify.engine import Fuzzer, run_fuzz

    spec = spec_of("// xlate: x: in[n], y: out[n], n: size(1..64), grid: 1, block: 64\n"
                   "__global__ void k(const float* x, float* y, int n) { }")
    source, candidate = _RacySide("source", source_varies), _RacySide("candidate", {0})
    result = run_fuzz(Fuzzer(spec, candidate, source), budget=1 << 12, size_cap=1 << 8,
                      cases=[Case({"n": 40}, {}, {}, {"x": "uniform"}, 0)])
    failure = result.failure
    assert failure is not None and failure.failure == "nondeterministic" and failure.side == blamed
    assert failure.buffer == "y" and failure.index == [39]
    assert source.calls == 1 + (2 if source_varies else 3)  # its own run, then the re-checks until one varies
