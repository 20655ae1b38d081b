"""A kernel launched through a local variable that holds it (`auto k = &kernel<T>; k<<<g, b>>>(...)`, a
function pointer, or inside a lambda a dispatch macro runs): the launch is the kernel's, with the template
arguments of the variable's initialiser, for the parser and for spec inference alike; and a launch inside a
lambda that a call the code read cannot follow (a dispatch macro) gets, or that is called where it stands."""

from __future__ import annotations

import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec

KERNEL = """
template <int STRIDE, class T> __global__ void halve(const T* in, T* out, int n) {
    int i = blockIdx.x * STRIDE + threadIdx.x;
    if (i < n) out[i] = in[i] / 2;
}
"""


def unit(tmp_path: Path, host: str):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(KERNEL).lstrip() + textwrap.dedent(host))
    return parse_string(path.read_text(), str(path), "cuda")


def test_a_variable_holding_the_kernels_address_is_launched_as_the_kernel(tmp_path):
    u = unit(tmp_path, """
    void go(const double* a, double* b, int n) {
        auto fn = &halve<64, double>;
        fn<<<(n + 63) / 64, 64>>>(a, b, n);
    }
    """)
    (launch,) = u.launches
    assert (launch.kernel, launch.template_args, launch.block) == ("halve", ["64", "double"], "64")
    res = resolve_spec(u, "halve")
    assert res.complete
    # the source's launch: 64 threads a block, ceil(n / 64) blocks, STRIDE 64 and double elements
    assert res.annotation() == ("in: in[n], out: out[n], n: size(1..4096), STRIDE: 64, T: float64, "
                                "grid: cdiv(n, 64), block: 64")


def test_a_function_pointer_inside_a_dispatch_lambda(tmp_path):
    u = unit(tmp_path, """
    #define WITH_FLAG(c, F, ...) do { if (c) { constexpr bool F = true; __VA_ARGS__(); } } while (0)
    void go(const float* a, float* b, int n) {
        WITH_FLAG(n > 0, kOn, [&] {
            void (*fp)(const float*, float*, int) = halve<32, float>;
            fp<<<(n + 31) / 32, 32>>>(a, b, n);
        });
    }
    """)
    (launch,) = u.launches
    assert (launch.kernel, launch.template_args, launch.grid) == ("halve", ["32", "float"], "(n + 31) / 32")
    res = resolve_spec(u, "halve")
    assert "grid" not in res.holes and res.items["block"][0] == "block: 32"
    assert res.items["STRIDE"][0] == "STRIDE: 32"


def test_a_variable_that_holds_no_kernel_stays_unresolved(tmp_path):
    u = unit(tmp_path, """
    void helper(int) {}
    void go(const float* a, float* b, int n) {
        auto fn = &helper;
        fn<<<1, 32>>>(a, b, n);
    }
    """)
    assert [lc.kernel for lc in u.launches] == ["fn"]
    assert "grid" in resolve_spec(u, "halve").holes


def test_a_launch_inside_the_lambda_an_unknown_dispatch_macro_gets(tmp_path):
    # the dispatch macro is defined nowhere in the code read (a library's): its lambda runs once, as by reference
    u = unit(tmp_path, """
    void go(const float* a, float* b, int rows, int cols) {
        int n = rows * cols;
        PICK_TYPE(a, "halve", [&] {
            halve<128, float><<<(n + 127) / 128, 128>>>(a, b, n);
        });
    }
    """)
    res = resolve_spec(u, "halve")
    assert res.complete
    assert res.items["grid"][0] == "grid: cdiv(n, 128)" and res.items["block"][0] == "block: 128"
    assert res.items["STRIDE"][0] == "STRIDE: 128" and res.items["T"][0] == "T: float32"


def test_an_immediately_called_lambda_is_followed(tmp_path):
    u = unit(tmp_path, """
    void go(const int* a, int* b, int n) {
        [&] { halve<16, int><<<(n + 15) / 16, 16>>>(a, b, n); }();
    }
    """)
    res = resolve_spec(u, "halve")
    assert res.items["grid"][0] == "grid: cdiv(n, 16)" and res.items["T"][0] == "T: int32"
