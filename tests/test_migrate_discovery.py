"""Discovery, output names and include rewriting of `xlate migrate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlate.errors import InputError
from xlate.migrate import includes, naming
from xlate.migrate.discover import discover

KERNEL = """#include "{inc}"
// xlate: n: size(1..1024), x: in[n], y: out[n], grid: cdiv(n, 128), block: 128
__global__ void {name}(int n, const float* x, float* y) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = helper(x[i]);
}}
"""
HEADER = "#pragma once\n#include <cuda_runtime.h>\n__device__ inline float helper(float v) { return 2.0f * v; }\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_output_names_rename_only_cuda_suffixes():
    assert naming.output_name("a/k.cu", "hip") == "a/k.hip"  # as `xlate port` names it
    assert naming.output_name("a/k.cu", "triton") == "a/k_triton.py"
    assert naming.output_name("a/k.cuh", "hip") == "a/k.hip.h"
    # C/C++ names stay: public headers, the host files that include them and the build rules that list them
    for rel in ("a/k.h", "a/k.hpp", "a/host.cpp", "a/util.c", "a/k.inl"):
        assert naming.output_name(rel, "hip") == rel
    assert naming.output_name("a/k.hip", "cuda") == "a/k.cu"
    assert naming.output_name("a/k.h", "cuda") == "a/k.h"
    assert naming.output_name("a/k.cuh", "triton") is None  # Triton ports are single files
    assert naming.output_name("a/k.hip", "hip", copy=True) == "a/k.hip"
    assert naming.output_name("a/k.cu", "hip", keep_names=True) == "a/k.cu"
    assert naming.renamed_suffixes("hip") == {".cu": ".hip", ".cuh": ".hip.h"}
    assert naming.renamed_suffixes("hip", keep_names=True) == {}


def test_include_rewrite_changes_only_named_includes():
    text = '#include <cuda_runtime.h>\n  #  include "../common/x.cuh"\n#include "other.h"\nint x; // #include "x.cuh"\n'
    new, changed = includes.rewrite(text, {"../common/x.cuh": "../common/x.hip.h"})
    assert new == '#include <cuda_runtime.h>\n  #  include "../common/x.hip.h"\n#include "other.h"\nint x; // #include "x.cuh"\n'
    assert changed == [{"from": "../common/x.cuh", "to": "../common/x.hip.h", "line": 2}]
    assert includes.renamed("../common/x.cuh", "x.hip.h") == "../common/x.hip.h"
    assert includes.renamed("x.cuh", "x.hip.h") == "x.hip.h"


def test_folder_discovery_roles_includes_and_dependencies(tmp_path):
    write(tmp_path / "lib", {
        "common/helper.cuh": HEADER,
        "common/wrap.cuh": '#pragma once\n#include "helper.cuh"\n',
        "ops/k1.cu": KERNEL.format(inc="../common/wrap.cuh", name="k1"),
        "ops/k2.cu": KERNEL.format(inc="missing.cuh", name="k2"),
        "ops/already.hip": "#include <hip/hip_runtime.h>\n#include \"../common/helper.cuh\"\n",
        "ops/host.cpp": '#include "../common/wrap.cuh"\n#include "table.inc"\nint host() { return 0; }\n',
        "ops/table.inc": "1, 2, 3\n",
        "notes.txt": "not a source",
        "Makefile": "all:\n\tnvcc ops/k1.cu\n",
        ".hidden/skip.cu": "__global__ void hidden() {}\n",
    })
    lib = discover(str(tmp_path / "lib"), "hip")
    files = lib.by_rel()
    assert sorted(files) == ["Makefile", "common/helper.cuh", "common/wrap.cuh", "notes.txt", "ops/already.hip",
                             "ops/host.cpp", "ops/k1.cu", "ops/k2.cu", "ops/table.inc"]
    assert (files["notes.txt"].kind, files["notes.txt"].output, files["notes.txt"].role) == ("asset", "notes.txt", "other")
    assert (files["Makefile"].kind, files["Makefile"].role) == ("build", "build")
    # A host .cpp is CUDA to port (it includes CUDA headers); a file it #includes is code whatever its suffix.
    assert (files["ops/host.cpp"].kind, files["ops/host.cpp"].language, files["ops/host.cpp"].output) == \
        ("port", "cuda", "ops/host.cpp")
    assert (files["ops/table.inc"].kind, files["ops/table.inc"].role) == ("port", "header")
    assert files["ops/host.cpp"].deps == ["common/helper.cuh", "common/wrap.cuh", "ops/table.inc"]
    k1 = files["ops/k1.cu"]
    assert (k1.role, k1.kind, k1.output) == ("source", "port", "ops/k1.hip")
    assert k1.includes == {"../common/wrap.cuh": "common/wrap.cuh"}
    assert k1.rewrites == {"../common/wrap.cuh": "../common/wrap.hip.h"}
    assert k1.deps == ["common/helper.cuh", "common/wrap.cuh"]  # transitive
    assert files["common/helper.cuh"].role == "header" and files["common/helper.cuh"].output == "common/helper.hip.h"
    # HIP already: copied under its own name, its include of a ported header rewritten.
    hip = files["ops/already.hip"]
    assert (hip.kind, hip.output) == ("copy", "ops/already.hip")
    assert hip.rewrites == {"../common/helper.cuh": "../common/helper.hip.h"}
    assert [d["code"] for d in files["ops/k2.cu"].diagnostics] == ["XL6002"]


def test_triton_target_skips_headers_but_keys_on_them(tmp_path):
    write(tmp_path, {"h.cuh": HEADER, "k.cu": KERNEL.format(inc="h.cuh", name="k")})
    lib = discover(str(tmp_path), "triton")
    files = lib.by_rel()
    assert files["h.cuh"].kind == "skip" and files["h.cuh"].output is None
    assert [d["code"] for d in files["h.cuh"].diagnostics] == ["XL6010"]
    assert files["k.cu"].output == "k_triton.py" and files["k.cu"].rewrites == {}
    assert files["k.cu"].deps == ["h.cuh"]


def test_output_collision_is_an_error_not_an_overwrite(tmp_path):
    write(tmp_path, {"x.cuh": HEADER, "x.hip.h": HEADER.replace("cuda_runtime", "hip/hip_runtime"),
                     "k.cu": KERNEL.format(inc="x.cuh", name="k"), "k.hip": "#include <hip/hip_runtime.h>\n"})
    files = discover(str(tmp_path), "hip").by_rel()
    # x.cuh would become x.hip.h and k.cu k.hip, names the user's own files have: the renamed ones are not
    # migrated, the user's files keep their names.
    assert files["x.hip.h"].kind == "copy" and files["x.hip.h"].output == "x.hip.h"
    assert files["x.cuh"].kind == "error" and files["x.cuh"].output is None
    assert files["x.cuh"].diagnostics[0]["code"] == "XL6001"
    assert files["k.hip"].output == "k.hip" and files["k.cu"].kind == "error"
    assert files["k.cu"].rewrites == {}  # its header is not ported: the include stays as it was


def test_project_names_come_from_the_file_and_the_headers_it_reaches(tmp_path):
    from xlate.migrate.options import MigrateOptions
    from xlate.migrate.pipeline import project_names

    write(tmp_path, {
        "util.h": "#pragma once\n#define cudaCheck(x) check((x), __FILE__, __LINE__)\n"
                  "void check(int e, const char* f, int l);\nstruct __align__(8) SumMax { float s, m; };\n"
                  "typedef unsigned int uint;\n",
        "k.cu": '#include "util.h"\n__global__ void k(float* y) { cudaCheck(cudaGetLastError()); }\n'
                "static inline int helper(int v)\n{ return v; }\n",
        "other.h": "#define UNRELATED 1\n",
    })
    lib = discover(str(tmp_path), "hip")
    names = project_names(lib.by_rel()["k.cu"], lib)
    assert {"cudaCheck", "check", "SumMax", "uint", "k", "helper"} <= set(names)
    assert "UNRELATED" not in names  # not included
    assert "cudaGetLastError" not in names  # a call is no definition
    assert MigrateOptions(source=".", target="hip", output="o", rocm="6.2").result_options()["rocm"] == "6.2"


def test_compile_database_units_and_followed_headers(tmp_path):
    write(tmp_path / "src", {
        "inc/helper.cuh": HEADER,
        "a.cu": KERNEL.format(inc="helper.cuh", name="a"),
        "b/b.cu": KERNEL.format(inc="helper.cuh", name="b"),
        "unused.cu": KERNEL.format(inc="helper.cuh", name="u"),
        "host.cpp": "int main() { return 0; }\n",
    })
    build = tmp_path / "build"
    build.mkdir()
    db = [
        {"directory": str(build), "file": "../src/a.cu", "command": "nvcc -I../src/inc -c ../src/a.cu"},
        {"directory": str(build), "file": "../src/b/b.cu", "arguments": ["nvcc", "-I", "../src/inc", "-c", "../src/b/b.cu"]},
        {"directory": str(build), "file": "../src/host.cpp", "command": "c++ -c ../src/host.cpp"},
    ]
    (build / "compile_commands.json").write_text(json.dumps(db))
    lib = discover(str(build / "compile_commands.json"), "hip")
    assert lib.root == str(tmp_path / "src")
    files = lib.by_rel()
    assert sorted(files) == ["a.cu", "b/b.cu", "inc/helper.cuh"]  # unused.cu is no unit; host.cpp is not CUDA
    assert [Path(p).name for p in lib.skipped] == ["host.cpp"]
    assert files["b/b.cu"].includes == {"helper.cuh": "inc/helper.cuh"}  # found through -I
    assert files["b/b.cu"].rewrites == {"helper.cuh": "helper.hip.h"}


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        discover(str(tmp_path / "nope"), "hip")
    (tmp_path / "one.cu").write_text("__global__ void k() {}\n")
    with pytest.raises(InputError, match=r"folder or a compile_commands\.json"):
        discover(str(tmp_path / "one.cu"), "hip")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="compile database"):
        discover(str(tmp_path / "bad.json"), "hip")


def test_unreadable_file_is_listed_not_fatal(tmp_path, monkeypatch):
    write(tmp_path, {"ok.cu": KERNEL.format(inc="none.h", name="ok"), "locked.cu": "x"})
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.cu":  # tests run as root, where chmod 000 does not stop a read
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    files = discover(str(tmp_path), "hip").by_rel()
    assert files["ok.cu"].kind == "port"
    assert files["locked.cu"].kind == "error" and files["locked.cu"].output is None
    assert files["locked.cu"].diagnostics[0]["code"] == "XL6004"
    assert "Permission denied" in files["locked.cu"].diagnostics[0]["message"]
