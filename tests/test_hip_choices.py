"""HIPIFY's choices and the user's ROCm outside the case corpus: [tool.xlate] settings, the --rocm default, the
include graph of a single-file port, the CLI options, and the coverage classifier."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from xlate.cli import main as cli
from xlate.config import hip_choices
from xlate.errors import InputError
from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.hip import CudaToHip
from xlate.translate.hip.coverage import classifier
from xlate.translate.hip.project import defined_names
from xlate.translate.hip.tables import MAPS_DIR, newest_rocm

KERNEL = textwrap.dedent("""\
    #include <cuda_runtime.h>
    __global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
    void f(float* p) { k<<<2, 64>>>(p); }
    """)


def test_newest_rocm_is_the_newest_version_in_the_tables():
    best = (0, 0, 0)
    for path in MAPS_DIR.glob("*.yaml"):
        for entry in (yaml.safe_load(path.read_text())["entries"] or {}).values():
            if isinstance(entry, dict) and not entry.get("preview"):
                for key in ("rocm", "deprecated", "removed", "roc_rocm"):
                    if entry.get(key):
                        v = [int(x) for x in re.findall(r"\d+", str(entry[key]))[:3]]
                        best = max(best, tuple(v + [0] * (3 - len(v))))
    assert newest_rocm() in (f"{best[0]}.{best[1]}", f"{best[0]}.{best[1]}.{best[2]}")
    assert best >= (6, 4, 0)


def test_bad_rocm_is_an_input_error(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    unit = parse_file(src)
    with pytest.raises(InputError):
        CudaToHip().translate(unit, unit.text, TranslateOptions(rocm="six"))
    with pytest.raises(InputError):
        CudaToHip().translate(unit, unit.text, TranslateOptions(launch_syntax="brackets"))


def test_pyproject_settings_and_command_line_override(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.xlate]\nrocm = "6.2"\nroc = true\nlaunch_syntax = "chevron"\n')
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    c = hip_choices(start=src)
    assert (c.rocm, c.roc, c.launch_syntax) == ("6.2", True, "chevron")
    c = hip_choices(rocm="5.7", roc=False, launch_syntax="ggl", start=src)
    assert (c.rocm, c.roc, c.launch_syntax) == ("5.7", False, "ggl")
    (tmp_path / "pyproject.toml").write_text('[tool.xlate]\nroc = "yes"\n')
    with pytest.raises(InputError):
        hip_choices(start=src)


def test_cli_rocm_and_launch_syntax(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    runner = CliRunner()
    out = tmp_path / "ggl.hip"
    r = runner.invoke(cli, ["port", str(src), "--to", "hip", "--engine", "rules", "--no-verify", "-o", str(out)])
    assert r.exit_code in (0, 3), r.output
    assert "hipLaunchKernelGGL(k, dim3(2), dim3(64), 0, 0, p);" in out.read_text()
    out2 = tmp_path / "chev.hip"
    r = runner.invoke(cli, ["port", str(src), "--to", "hip", "--engine", "rules", "--no-verify", "-o", str(out2),
                            "--launch-syntax", "chevron", "--rocm", "6.2"])
    assert r.exit_code in (0, 3), r.output
    assert "k<<<2, 64>>>(p);" in out2.read_text()


def test_single_file_port_reads_its_own_headers(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "check.h").write_text("#define CUBLAS_CHECK(e) (e)\ntypedef int cudaTimer_t;\n")
    (tmp_path / "util.h").write_text('#include "inc/check.h"\n#define cudaCheck(e) (e)\n')
    src = tmp_path / "main.cu"
    src.write_text('#include "util.h"\nvoid f(float* p) {\n    cudaTimer_t t;\n    cudaCheck(cudaMalloc(&p, 4));\n'
                   '    CUBLAS_CHECK(0);\n    cudaNotARealCall(p);\n}\n')
    unit = parse_file(src)
    tr = CudaToHip().translate(unit, unit.text, TranslateOptions())
    unknown = [d.message.split("'")[1] for d in tr.diagnostics if d.code == "XL1001"]
    assert unknown == ["cudaNotARealCall"]
    assert "hipMalloc(&p, 4)" in tr.text


def test_defined_names_lexical_scan():
    names = defined_names(b'#define cudaCheck(x) x\n// #define cudaInComment 1\nconst char* s = "#define cudaInString";\n'
                          b"enum Mode { cuModeA, cuModeB = 2 };\ntypedef struct { int a; } cuPair;\n"
                          b"cudaError_t cudaStat1, cudaStat2;\nvoid g() { f(x, cudaSuccess); }\n")
    assert {"cudaCheck", "cuModeA", "cuModeB", "cuPair", "cudaStat1", "cudaStat2", "g"} <= names
    assert not {"cudaInComment", "cudaInString", "cudaSuccess"} & names


def test_coverage_classifier_follows_the_target_rocm():
    old, new = classifier(rocm="5.2"), classifier(rocm="6.2")
    assert old("cudaMalloc") == new("cudaMalloc") == "mapped"
    assert old("cudaGraphInstantiateWithParams") == "newer" and new("cudaGraphInstantiateWithParams") == "mapped"
    assert new("__stcs") == "mapped"  # a compat helper
    assert new("cudaSurelyNotAnApi") == "unknown"
    assert classifier(rocm="6.2", roc=True)("cublasSgemm") == "mapped"
    assert classifier(rocm="6.2", roc=True)("cublasSgetrfBatched") == "no_equivalent"


def test_hipify_choices_cases_exist():
    cases = yaml.safe_load((Path(__file__).parent / "data" / "hip_cases" / "hipify_choices.yaml").read_text())["cases"]
    names = {c["name"] for c in cases}
    assert {"roc-cublas-sgemm", "roc-cusparse-descr", "curand-host-api", "cublaslt-matmul", "bf16-intrinsics",
            "cache-hinted-loads-stores", "project-names-from-other-files", "rocm-gating-new-api-diagnosed"} <= names


def test_output_to_a_folder_writes_the_default_name_there(tmp_path):
    """`-o DIR` (an existing folder) put the port in DIR under its default name; it died with IsADirectoryError."""
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    folder = tmp_path / "ports"
    folder.mkdir()
    r = CliRunner().invoke(cli, ["port", str(src), "--to", "hip", "--engine", "rules", "--no-verify", "-o", str(folder)])
    assert r.exit_code in (0, 3), r.output
    assert "hipLaunchKernelGGL" in (folder / "k.hip").read_text()
    assert r.exception is None or isinstance(r.exception, SystemExit)
