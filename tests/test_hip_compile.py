"""Ports compile: hipcc for AMD (gfx90a, and gfx1030 for the compat helpers), NVRTC for the HIP-on-NVIDIA
route (device slice + backends/include/xlate_hip_on_nvidia.h), and HIP -> CUDA ports of examples/hip through
NVRTC. Each part is skipped where its compiler is missing."""

from __future__ import annotations

import concurrent.futures as cf
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from xlate.parse import parse_file, parse_string
from xlate.parse.slice import device_slice
from xlate.translate.base import TranslateOptions
from xlate.translate.hip import CudaToHip, HipToCuda, compat

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "examples" / "kernels").glob("*.cu")) + sorted(
    (ROOT / "tests" / "data" / "hip_cases" / "kernels").glob("*.cu"))
HIP_EXAMPLES = sorted((ROOT / "examples" / "hip").glob("*.hip"))

needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")

EVERY_HELPER = """\
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void every_helper(int* p, unsigned* u, float* f, volatile int* flag) {
    int i = threadIdx.x;
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    p[i] = __ballot_sync(0xffffffff, i & 1) + __any_sync(0xffffffff, i > 3) + __all_sync(0xffffffff, i >= 0)
         + __uni_sync(0xffffffff, 1) + __popc(__activemask()) + __reduce_add_sync(0xffffffff, p[i])
         + __reduce_min_sync(0xffffffff, p[i]) + __reduce_max_sync(0xffffffff, p[i]) + warpSize
         + tile.meta_group_rank() + tile.meta_group_size();
    u[i] = __reduce_and_sync(0xffffffff, u[i]) + __reduce_or_sync(0xffffffff, u[i]) + __reduce_xor_sync(0xffffffff, u[i]);
    __syncwarp();
    if (*flag) __nanosleep(64);
    f[i] = __shfl_sync(0xffffffff, f[i], i + 1) + __shfl_up_sync(0xffffffff, f[i], 1)
         + __shfl_down_sync(0xffffffff, f[i], 2) + __shfl_xor_sync(0xffffffff, f[i], 4, 16);
    unsigned half = 0x0000ffffu;  // masks that are not the full warp: helpers that honour them
    int all_same = 0;
    unsigned peers = __match_any_sync(__activemask(), (unsigned long long)(p + (i & 3)));
    u[i] += __match_any_sync(half, f[i]) + __match_all_sync(0xffffffff, (long long)u[0], &all_same) + all_same
          + __ballot_sync(peers, 1) + __reduce_add_sync(peers, u[i]) + __reduce_max_sync(half, p[i]);
    f[i] += __shfl_sync(peers, f[i], __ffs(peers) - 1) + __shfl_xor_sync(half, f[i], 1)
          + __shfl_up_sync(half, f[i], 1) + __shfl_down_sync(half, (double)f[i], 1, 8);
}
"""


def ports() -> list[tuple[str, str, list[str]]]:
    out = []
    for path in SOURCES:
        unit = parse_file(path)
        tr = CudaToHip().translate(unit, unit.text, TranslateOptions(arch="gfx90a"))
        if tr.needs_llm:
            continue  # inline PTX: the LLM translator's job
        out.append((path.with_suffix(".hip").name, tr.text, [k.name for k in unit.kernels]))
    unit = parse_string(EVERY_HELPER, "every_helper.cu", "cuda")
    tr = CudaToHip().translate(unit, EVERY_HELPER, TranslateOptions(arch="gfx90a"))
    assert not tr.needs_llm and len(tr.meta["helpers"]) == 20
    out.append(("every_helper.hip", tr.text, ["every_helper"]))
    return out


def test_port_set_covers_the_corpus():
    names = [n for n, _, _ in ports()]
    assert len(names) == len(SOURCES)  # every source but inline_ptx.cu, plus every_helper
    assert "inline_ptx.hip" not in names


@needs_hipcc
@pytest.mark.parametrize("arch", ["gfx90a", "gfx1030"])
def test_ports_compile_with_hipcc(arch):
    from xlate.backends.base import CompileError
    from xlate.backends.hip import HipBackend

    backend = HipBackend()
    todo = ports() if arch == "gfx90a" else [p for p in ports() if p[0] in ("every_helper.hip", "warp_reduce.hip", "ballot.hip")]

    def one(item: tuple[str, str, list[str]]) -> str | None:
        name, text, _ = item
        try:
            backend.check_file(text, arch, name)
        except CompileError as exc:
            return f"{name}:\n{exc.log[-3000:]}"
        return None

    with cf.ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        failures = [f for f in pool.map(one, todo) if f]
    assert not failures, "\n".join(failures)


def _nvrtc_ok() -> bool:
    try:
        from xlate.backends import nvrtc

        return nvrtc.nvrtc_version() is not None
    except Exception:
        return False


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_device_slices_compile_for_hip_on_nvidia():
    """The route the H200 runs HIP ports through: device slice + HIP prelude, compiled by NVRTC (sm_90)."""
    from xlate.backends.base import CompileError, CompileOptions
    from xlate.backends.cuda import NvrtcCompiler

    comp = NvrtcCompiler("hip")
    failures = []
    for name, text, _kernels in ports():
        unit = parse_string(text, name, "hip", strict=False)
        for k in unit.kernels:
            targs = ["float"] if k.template_params else []
            try:
                comp.compile(device_slice(unit, text, hip=True), k.name, CompileOptions("sm_90", targs, {}, []),
                             path=name, extra=["-include", "xlate_hip_on_nvidia.h"])
            except CompileError as exc:
                failures.append(f"{name}:{k.name}:\n{exc.log[-3000:]}")
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_on_nvidia_prelude_knows_the_host_handles_a_port_keeps_in_structs():
    text = ("#include <hip/hip_runtime.h>\nstruct State { int device = -1; hipStream_t stream; hipEvent_t done; };\n"
            "static State state;\n__global__ void add(float* y, float a, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a; }\n")
    assert _compiles_on_the_nvidia_route(text, "state.hip", "add")


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_vector_operators_on_the_nvidia_route_and_a_programs_own_overload_wins():
    # HIP's float4 has element-wise operators (a port drops CUDA's helper_math.h and relies on them); on NVIDIA
    # the prelude gives CUDA's float4 the same, as templates, so the program's own overload below still wins
    text = ("#include <hip/hip_runtime.h>\n"
            "__device__ int2 operator+(int2 a, int2 b) { return make_int2(a.x + b.x, a.y + b.y + 1); }\n"
            "__global__ void blend(const float4* a, const float4* b, float4* out, int2* c, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
            "  float4 s = a[i] * 0.5f; s += b[i] / 2.0f; s -= -a[i] * 0.25f; out[i] = 2.0f * s - b[i];\n"
            "  c[i] = c[i] + c[i];\n}\n")
    assert _compiles_on_the_nvidia_route(text, "blend.hip", "blend")


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_warp_votes_and_libcudacxx_types_of_the_same_name_coexist_on_the_nvidia_route(tmp_path, monkeypatch):
    # HIP's __all/__any/__ballot on NVIDIA: as macros they renamed libcu++'s `__all<...>` template and
    # `struct __any { __any(...); }`, and a port including thrust (<cuda/std/mdspan>) failed to parse; the route
    # now renames the port's own calls. Compiled by the HIP backend itself, forced to the NVIDIA route.
    text = ("#include <hip/hip_runtime.h>\n#include <cuda/std/mdspan>\n"
            "__global__ void vote(const int* x, int* all, int* any, unsigned long long* mask, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; int p = i < n && x[i] > 0;\n"
            "  all[i / 32] = __all(p); any[i / 32] = __any(p); mask[i / 32] = __ballot(p);\n}\n")
    src = tmp_path / "vote.hip"
    src.write_text(text)
    assert _hip_backend_compiles(monkeypatch, text, "vote", str(src)) and "xlate_hip_all(p)" not in text


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_cuda_fp8_ports_to_hips_ocp_names_and_compiles_on_the_nvidia_route(tmp_path, monkeypatch):
    # CUDA's fp8 is OCP: its HIP port must name HIP's OCP formats (ROCm 6.3), not FNUZ (another encoding: the
    # same bits are other numbers), and the NVIDIA route maps them back (HeCBench f8cast's port named FNUZ and
    # could not compile there)
    src = tmp_path / "f8.cu"
    src.write_text("#include <cuda_fp8.h>\n"
                   "__global__ void to_e4m3(const float* x, __nv_fp8_storage_t* y, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) y[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);\n}\n"
                   "__global__ void widen(const __nv_fp8_e5m2* x, float* y, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) y[i] = float(x[i]);\n}\n")
    unit = parse_file(src)
    text = CudaToHip().translate(unit, unit.text, TranslateOptions()).text
    assert "__HIP_E4M3" in text and "__hip_fp8_e5m2" in text and "FNUZ" not in text and "fnuz" not in text
    port = tmp_path / "f8.hip"
    port.write_text(text)
    for kernel in ("to_e4m3", "widen"):
        assert _hip_backend_compiles(monkeypatch, text, kernel, str(port))


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_slices_blank_unannotated_members_and_register_as_cuda_slices_do():
    # HIP has CUDA's execution spaces: a member function with none is host code, and NVRTC (the NVIDIA route of
    # a HIP port) refuses it, and `register`, as it does for CUDA (HeCBench projectile's port: a host
    # `friend ostream& operator<<` in the struct its kernel uses)
    text = ("#include <hip/hip_runtime.h>\n#include <iostream>\n"
            "struct Shot { float v, a; float range() const { return v * a; }\n"
            "  friend std::ostream& operator<<(std::ostream& o, const Shot& s) { return o << s.v; } };\n"
            "__global__ void fly(const Shot* s, float* r, int n) {\n"
            "  register int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) r[i] = s[i].v * s[i].a; }\n")
    assert _compiles_on_the_nvidia_route(text, "shot.hip", "fly")


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_a_port_from_memory_reads_its_source_headers_qualifier_macros(tmp_path, monkeypatch):
    # a HIP port compiled from memory (the gate's candidate) includes its source's "cu.h", which defines GLOBAL /
    # DEV / HOST only under __CUDACC__: read without them its kernel was a host function and `DEV HOST inline`
    # helpers were blanked behind their qualifiers (HeCBench frna: "duplicate specifier", then "no kernel")
    (tmp_path / "cu.h").write_text("#ifdef __CUDACC__\n#define GLOBAL __global__\n#define DEV __device__\n"
                                   "#define HOST __host__\n#else\n#define GLOBAL\n#define DEV\n#define HOST\n#endif\n")
    text = ("#include <hip/hip_runtime.h>\n#include \"cu.h\"\n"
            "DEV HOST inline static int twice(int v) { return 2 * v; }\n"
            "GLOBAL static void fill(int* out, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = twice(i); }\n")
    assert _hip_backend_compiles(monkeypatch, text, "fill", "<candidate>.hip", [str(tmp_path)])


def _hip_backend_compiles(monkeypatch, text: str, kernel: str, path: str, include_dirs: list[str] | None = None) -> bool:
    """`text` built by the HIP backend itself, forced to its NVIDIA route (NVRTC; the AMD-side hipcc check is
    switched off: it has no CUDA headers here)."""
    import xlate.backends.hip as hip
    from xlate.backends.base import CompileOptions

    monkeypatch.setenv("XLATE_HIP_PLATFORM", "nvidia")
    monkeypatch.setattr(hip, "hipcc_path", lambda: None)
    options = CompileOptions("sm_90", [], {}, [], include_dirs=list(include_dirs or []))
    return hip.HipBackend().compile(text, kernel, options, path=path).compile.ok


def _compiles_on_the_nvidia_route(text: str, name: str, kernel: str, **slice_options) -> bool:
    """The device slice of a HIP text (`slice_options`: device_slice's, e.g. an includer's context) with the
    HIP-on-NVIDIA prelude, compiled by NVRTC for sm_90."""
    from xlate.backends.base import CompileOptions
    from xlate.backends.cuda import NvrtcCompiler

    unit = parse_string(text, name, "hip")
    art = NvrtcCompiler("hip").compile(device_slice(unit, text, hip=True, **slice_options), kernel,
                                       CompileOptions("sm_90", [], {}, []), path=name,
                                       extra=["-include", "xlate_hip_on_nvidia.h"])
    return art.compile.ok


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_examples_to_cuda_compile_with_nvrtc():
    from xlate.backends.base import CompileError, CompileOptions
    from xlate.backends.cuda import NvrtcCompiler

    comp = NvrtcCompiler("cuda")
    failures = []
    for path in HIP_EXAMPLES:
        hip_unit = parse_file(path)
        text = HipToCuda().translate(hip_unit, hip_unit.text, TranslateOptions()).text
        unit = parse_string(text, path.with_suffix(".cu").name, "cuda", strict=False)
        for k in unit.kernels:
            targs = ["float"] if k.template_params else []
            try:
                comp.compile(device_slice(unit, text), k.name, CompileOptions("sm_90", targs, {}, []), path=path.name, extra=[])
            except CompileError as exc:
                failures.append(f"{path.name}:{k.name}:\n{exc.log[-3000:]}")
    assert HIP_EXAMPLES and not failures, "\n".join(failures)


# A project whose host-only unit defines a one-letter macro, then includes a header with device code guarded
# for the GPU compile (the shape of several HeCBench programs): once ported, the header includes the HIP
# runtime, so every unit that reaches it must include the runtime first (xlate/translate/hip/compat.insert).
TREE = {
    "common.h": "#pragma once\n#define T float\n",
    "part.h": textwrap.dedent("""\
        #ifndef PART_H
        #define PART_H
        #ifdef GPU_SIDE
        __device__ inline int claim(int* next) { return atomicAdd(next, 1) + (int)threadIdx.x; }
        #endif
        inline int host_share(int n) { return n / 2; }
        #endif
        """),
    "host.cpp": '#include "common.h"\n#include "part.h"\nT scale(T x) { return x * host_share(4); }\n',
    "kernel.cu": textwrap.dedent("""\
        #include "common.h"
        #define GPU_SIDE
        #include "part.h"
        __global__ void take(int* next, T* out) { out[threadIdx.x] = (T)claim(next); }
        """),
}


def port_tree(tmp_path: Path) -> dict[str, str]:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    for name, text in TREE.items():
        (src / name).write_text(text)
    ported = {}
    for name in TREE:
        unit = parse_file(src / name, "cuda")
        ported[name] = CudaToHip().translate(unit, unit.text, TranslateOptions(arch="gfx90a")).text
        (out / name).write_text(ported[name])
    return ported


def test_units_reaching_ported_headers_include_the_runtime_first(tmp_path):
    added = compat.compat()["added_include"]
    ported = port_tree(tmp_path)
    assert ported["common.h"] == TREE["common.h"]  # nothing of CUDA's in it
    assert ported["part.h"].startswith(added + "\n#ifndef PART_H")  # still compiles on its own
    for unit in ("host.cpp", "kernel.cu"):  # first line, before `#define T float` arrives
        assert ported[unit].splitlines()[0] == added, unit


@needs_hipcc
def test_ported_tree_with_a_one_letter_macro_builds(tmp_path):
    ported = port_tree(tmp_path)
    for unit in ("host.cpp", "kernel.cu"):
        proc = subprocess.run(["hipcc", "--offload-arch=gfx90a", "-std=c++17", "-c", unit, "-o", unit + ".o"],
                              cwd=tmp_path / "out", capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
        assert proc.returncode == 0, f"{unit}:\n{ported[unit]}\n{proc.stderr[-3000:]}"


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_on_nvidia_prelude_knows_pitched_pointers_taken_by_value():
    text = ("#include <hip/hip_runtime.h>\n__global__ void touch(hipPitchedPtr p, hipExtent e, int w) {\n"
            "  char* row = (char*)p.ptr + threadIdx.x * p.pitch;\n"
            "  if ((int)threadIdx.x < w) ((float*)row)[0] = (float)e.width; }\n")
    assert _compiles_on_the_nvidia_route(text, "pitch.hip", "touch")


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hip_port_of_a_header_using_hipcub_compiles_in_its_cuda_includers_context(tmp_path):
    # the gate compiles a header's port with the CUDA includer's text before the #include (its <cub/cub.cuh>)
    from xlate.backends import nvrtc

    header = ("#define THREADS 128\n__global__ void bsum(const float* x, float* out, int n) {\n"
              "  typedef cub::BlockReduce<float, THREADS> R; __shared__ typename R::TempStorage tmp;\n"
              "  int i = blockIdx.x * THREADS + threadIdx.x; float v = i < n ? x[i] : 0.0f;\n"
              "  float s = R(tmp).Sum(v); if (threadIdx.x == 0) out[blockIdx.x] = s; }\n")
    (tmp_path / "kernels.h").write_text(header)
    (tmp_path / "main.cu").write_text("#include <cub/cub.cuh>\n#include \"kernels.h\"\nint main() { return 0; }\n")
    port = "#include <hip/hip_runtime.h>\n" + header.replace("cub::", "hipcub::")
    context = {"include_dirs": [str(tmp_path)], "system_dirs": nvrtc.system_include_dirs(),
               "context_path": str(tmp_path / "kernels.h"), "path": "<candidate>.hip"}
    sliced = device_slice(parse_string(port, "<candidate>.hip", "hip"), port, hip=True, **context)
    assert "xlate_cub_nvrtc.cuh" in sliced  # the includer's CUB came with the context
    assert _compiles_on_the_nvidia_route(port, "<candidate>.hip", "bsum", **context)


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hiprand_device_api_on_the_nvidia_route_is_curands():
    # hipRAND's NVIDIA backend is cuRAND under other names: the prelude maps them and hiprand_kernel.h becomes
    # curand_kernel.h where the toolkit has it (dropped, as any header the device compiler cannot open, elsewhere)
    from xlate.backends import nvrtc

    text = ("#include <hip/hip_runtime.h>\n#include <hiprand/hiprand_kernel.h>\n"
            "__global__ void drop(const float* x, float* y, float p, unsigned long long seed, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
            "  hiprandStatePhilox4_32_10_t s; hiprand_init(seed, i, 0, &s);\n"
            "  float4 r = hiprand_uniform4(&s); y[i] = r.x < p ? 0.0f : x[i] / (1.0f - p); }\n")
    dirs = nvrtc.system_include_dirs()
    sliced = device_slice(parse_string(text, "drop.hip", "hip"), text, hip=True, system_dirs=dirs)
    have = any(os.path.isfile(os.path.join(d, "curand_kernel.h")) for d in dirs)
    assert ('"curand_kernel.h"' in sliced) == have and "hiprand/hiprand_kernel.h" not in sliced
    if not have:
        pytest.skip("no curand_kernel.h in this CUDA toolkit")
    assert _compiles_on_the_nvidia_route(text, "drop.hip", "drop")


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_a_port_on_the_nvidia_route_gets_its_sources_build_flags_and_overloaded_names(tmp_path, monkeypatch):
    # The port is compiled from memory ("<candidate>.hip"): the Makefile -D flags of its source's folder reach it
    # as they reach the source, and a kernel overloaded on its parameter types is named as the CUDA route names it
    # (both were "rejected" ports on the H200: dfloat undefined; "cannot determine which instance").
    from xlate.backends import hip as hip_backend
    from xlate.backends.base import CompileOptions

    prog = tmp_path / "prog"
    prog.mkdir()
    (prog / "Makefile").write_text("CFLAGS = -O3 -Dreal_t=double\nall:\n\tnvcc $(CFLAGS) main.cu\n")
    cuda = ("__global__ void scale(real_t* x, real_t a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }\n"
            "__global__ void scale(float* x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a + 1.0f; }\n")
    (prog / "main.cu").write_text(cuda)
    port = "#include <hip/hip_runtime.h>\n" + cuda
    monkeypatch.setattr(hip_backend, "run_platform", lambda: "nvidia")
    monkeypatch.setattr(hip_backend, "hipcc_path", lambda: None)  # the NVIDIA route alone (a GPU machine has no hipcc)
    backend = hip_backend.HipBackend()
    art = backend.compile(port, "scale", CompileOptions("sm_90", [], {}, [], include_dirs=[str(prog)],
                                                        context_path=str(prog / "main.cu")), path="<candidate>.hip")
    assert art.compile.ok and art.meta["platform"] == "nvidia"


@pytest.mark.skipif(not _nvrtc_ok(), reason="NVRTC not installed")
def test_hipcc_is_defined_on_the_nvidia_route(tmp_path, monkeypatch):
    # hipcc defines __HIPCC__ on both platforms; a project header that annotates its class's members only
    # `#if defined(__NVCC__) || defined(__HIPCC__)` left them host functions on the NVIDIA route, and the verified
    # CUDA source's HIP port did not compile there (NVRTC: "host functions are not allowed in JIT mode").
    (tmp_path / "pair.h").write_text(
        "#if defined(__NVCC__) || defined(__HIPCC__)\n#define BOTH __host__ __device__\n#else\n#define BOTH\n#endif\n"
        "struct Pair { float a, b;\n  BOTH Pair(float x, float y) : a(x), b(y) {}\n"
        "  BOTH float sum() const { return a + b; } };\n")
    text = ('#include <hip/hip_runtime.h>\n#include "pair.h"\n'
            "__global__ void sums(const float* x, float* out, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = Pair(x[i], 1.0f).sum(); }\n")
    assert _hip_backend_compiles(monkeypatch, text, "sums", "<candidate>.hip", [str(tmp_path)])
