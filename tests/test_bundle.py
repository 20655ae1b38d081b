"""Project headers inlined into the text device compilers get (xlate/parse/bundle.py)."""

from __future__ import annotations

import pytest

from xlate.parse.bundle import bundle


def test_headers_inlined_once_with_line_directives(tmp_path):
    (tmp_path / "a.h").write_text('#pragma once\n#include "b.h"\n#define A 1\n')
    (tmp_path / "b.h").write_text("#define B 2\n")
    main = tmp_path / "k.cu"
    text = '#include <cstdio>\n#include "a.h"\n#include "b.h"\n#include "missing.h"\nint x = A + B;\n'
    out = bundle(text, str(main))
    assert out.count("#define B 2") == 1 and out.count("#define A 1") == 1
    assert '#include "missing.h"' in out and "#include <cstdio>" in out
    assert f'#line 1 "{tmp_path / "a.h"}"' in out and f'#line 3 "{main}"' in out
    # after a.h the file's numbering resumes at line 3 (the second b.h include), so `int x` is line 5 again
    lines = out.splitlines()
    last_directive = max(i for i, line in enumerate(lines) if line.startswith("#line") and str(main) in line)
    assert lines[last_directive] == f'#line 3 "{main}"'
    assert lines[last_directive + 1].startswith('/* #include "b.h"') and lines[last_directive + 3] == "int x = A + B;"


def test_include_dirs_and_transform(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "h.h").write_text("void host_only() {}\nconst int N = 4;\n")
    out = bundle('#include "h.h"\n', str(tmp_path / "elsewhere" / "k.hip"), [str(inc)],
                 transform=lambda text, path: text.replace("void host_only() {}", ""))
    assert "const int N = 4;" in out and "host_only" not in out


def test_cycles_terminate(tmp_path):
    (tmp_path / "a.h").write_text('#include "b.h"\nint a;\n')
    (tmp_path / "b.h").write_text('#include "a.h"\nint b;\n')
    out = bundle('#include "a.h"\n', str(tmp_path / "k.cu"))
    assert out.count("int a;") == 1 and out.count("int b;") == 1


def test_nvrtc_builds_a_kernel_whose_macro_lives_in_a_local_header(tmp_path):
    from xlate.backends.base import CompileError, CompileOptions
    from xlate.backends.nvrtc import nvrtc_version
    from xlate.backends.registry import get_backend

    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    (tmp_path / "common.h").write_text("#include <cstdio>\n#define SCALE 2.0f\nvoid report() { printf(\"x\"); }\n")
    src = tmp_path / "k.cu"
    text = '#include "common.h"\n__global__ void k(float* y) { y[threadIdx.x] *= SCALE; }\n'
    src.write_text(text)
    art = get_backend("cuda").compile(text, "k", CompileOptions(compile_only=True), path=str(src))
    assert art.compile.ok
    # an error inside the header is reported at the header's own line
    (tmp_path / "common.h").write_text("#define SCALE 2.0f\n__device__ int broken = ;\n")
    with pytest.raises(CompileError) as info:
        get_backend("cuda").compile(text, "k", CompileOptions(compile_only=True), path=str(src))
    assert "common.h(2)" in info.value.log


def test_device_slice_of_a_header_gets_its_includers_context(tmp_path):
    """kernels.h uses PI and half2 that main.cu defines and includes before `#include "kernels.h"`; host-only
    headers, host variables, prototypes and host classes are left out; a port in another folder finds both."""
    from xlate.backends.base import CompileOptions
    from xlate.backends.nvrtc import nvrtc_version, system_include_dirs
    from xlate.backends.registry import get_backend

    from xlate.parse import parse_file
    from xlate.parse.slice import device_slice

    (tmp_path / "main.cu").write_text(
        "#include <chrono>\n#include <sys/time.h>\n#include <cuda_fp16.h>\n#define PI 3.14159f\n"
        "int host_counter;\nvoid report(int n);\nclass Timer { public: Timer(); double ms(); };\n"
        '#include "kernels.h"\nint main() { return 0; }\n')
    header = tmp_path / "kernels.h"
    header.write_text("__global__ void k(half2* y, float* z) { z[threadIdx.x] = PI; y[0] = __float2half2_rn(PI); }\n")
    unit = parse_file(header)
    text = device_slice(unit, unit.text, system_dirs=system_include_dirs())
    assert "#define PI 3.14159f" in text and "#include <cuda_fp16.h>" in text
    assert "<chrono>" not in text and "sys/time.h" not in text and "host_counter" not in text
    assert "void report" not in text and "class Timer" not in text and "int main" not in text
    assert text.index("#define PI") < text.index("__global__ void k")
    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    art = get_backend("cuda").compile(unit.text, "k", CompileOptions(compile_only=True), path=str(header))
    assert art.compile.ok
    port_dir = tmp_path / "port"
    port_dir.mkdir()
    art = get_backend("cuda").compile(unit.text, "k", CompileOptions(compile_only=True, include_dirs=[str(tmp_path)],
                                                                      context_path=str(header)),
                                      path=str(port_dir / "kernels.h"))
    assert art.compile.ok


def _compile(tmp_path, files: dict[str, str], main: str, kernel: str, template_args: list[str] | None = None):
    """Write `files`, compile `main`'s `kernel` through the CUDA backend (NVRTC, the gate's route)."""
    from xlate.backends.base import CompileOptions
    from xlate.backends.nvrtc import nvrtc_version
    from xlate.backends.registry import get_backend

    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    path = tmp_path / main
    options = CompileOptions(compile_only=True, template_args=template_args or [])
    return get_backend("cuda").compile(path.read_text(), kernel, options, path=str(path))


HOST_HEADER = """#pragma once
#include <string>
#include <vector>
struct Settings { std::string input; std::vector<int> sizes; float scale; };
template <class T> class Owner {
 public:
  explicit Owner(T* p) : p_(p) {}
  ~Owner() { delete[] p_; }
  operator T*() const { return p_; }
 private:
  T* p_;
};
void load(Settings& s, const char* file);
"""


def test_host_only_structs_and_template_classes_of_a_header_are_left_out(tmp_path):
    # plain data of standard-library members, and a template class with host members only: the device
    # compiler refuses both (no <string>; host functions are not allowed in NVRTC's JIT mode)
    main = ('#include "host.h"\n__global__ void scale(float* y, int n) {\n'
            '  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= 2.0f; }\n'
            'int main() { Settings s; load(s, "x"); Owner<float> o(new float[4]); return 0; }\n')
    art = _compile(tmp_path, {"host.h": HOST_HEADER, "main.cu": main}, "main.cu", "scale")
    assert art.compile.ok


def test_a_header_sees_its_includers_qualifier_macro(tmp_path):
    # `HD` is defined by main.cu before the include: the header's members are host-device, and the template
    # class they belong to is kept (a kernel takes it as a template argument the launch names)
    header = ("#pragma once\ntemplate <typename T, int N> struct Vec {\n  T v[N];\n"
              "  HD T& operator[](int i) { return v[i]; }\n  HD T operator[](int i) const { return v[i]; }\n};\n")
    main = ('#define HD __host__ __device__\n#include "vec.h"\n'
            "template <typename V> __global__ void first(float* out, V v) { out[0] = v[0] + v[1]; }\n"
            "int main() { Vec<float, 2> v; first<<<1, 1>>>(nullptr, v); }\n")
    art = _compile(tmp_path, {"vec.h": header, "main.cu": main}, "main.cu", "first", ["Vec<float, 2>"])
    assert art.compile.ok


def test_nvcc_implicit_names_complex_tuple_and_glibc_short_types(tmp_path):
    # what nvcc's host headers give a program without asking: std::complex and std::tuple usable in device
    # code (libcu++), std::nullptr_t, and glibc's uint/ulong/ushort
    main = ("#include <complex>\n#include <tuple>\n"
            "__global__ void k(float* y, uint n, ulong m, ushort s) {\n"
            "  std::complex<float> c(y[0], 1.0f);\n"
            "  auto t = std::make_tuple(2.0f, 3);\n"
            "  typename std::tuple_element<1, decltype(t)>::type three = std::get<1>(t);\n"
            "  std::nullptr_t none = nullptr;\n  if (none == nullptr) y[1] = 1.0f;\n"
            "  y[0] = std::abs(c) + std::tuple_size<decltype(t)>::value + three + n + m + s + INFINITY;\n}\n")
    art = _compile(tmp_path, {"main.cu": main}, "main.cu", "k")
    assert art.compile.ok and "warning" not in art.compile.log  # libcu++'s INFINITY redefinition is not one


def test_a_header_included_inside_a_function_body_is_inlined_as_written_each_time(tmp_path):
    # a block of local declarations kept in a file of its own: slicing it as a file would take its lines for
    # host globals and blank them
    (tmp_path / "consts.h").write_text("double cp = 3.5;\ndouble cpd = cp; // not a global\n")
    main = tmp_path / "k.cu"
    text = ('__global__ void a(double* x) {\n#include "consts.h"\n  x[0] = cpd;\n}\n'
            '__global__ void b(double* x) {\n  #include "consts.h"\n  x[1] = cp;\n}\n')
    out = bundle(text, str(main), transform=lambda t, p: "/* sliced */")
    assert out.count("double cpd = cp;") == 2 and "/* sliced */" not in out
    assert f'#line 3 "{main}"' in out  # numbering resumes after the fragment


def test_an_include_inside_a_kernel_compiles_under_nvrtc(tmp_path):
    pytest.importorskip("cuda.bindings")
    from xlate.backends.base import CompileOptions
    from xlate.backends.registry import get_backend

    (tmp_path / "consts.h").write_text("const float scale = 2.0f;\nfloat bias = scale / 4;\n")
    src = tmp_path / "k.cu"
    src.write_text('__global__ void k(float* x, int n) {\n  int i = threadIdx.x;\n#include "consts.h"\n'
                   "  if (i < n) x[i] = x[i] * scale + bias;\n}\nint main() { return 0; }\n")
    backend = get_backend("cuda")
    if not backend.detect().can_compile:
        pytest.skip("NVRTC is not installed")
    art = backend.compile(src.read_text(), "k", CompileOptions(arch="sm_90", context_path=str(src)), path=str(src))
    assert art.entry
