"""The user's ROCm in `xlate migrate`: --rocm reaches the translator (and the port's header), and the compile check
names the local ROCm and lists HIP names newer than it as "not checkable here", never as errors of the port."""

from __future__ import annotations

import shutil

import pytest

from tests.test_migrate_support import load_report, run_cli
from xlate.migrate.rocmcheck import newer_constructs, split_errors

BF16 = """\
#include <cuda_bf16.h>
#include <cuda_runtime.h>
// xlate: x: in[n], y: out[n], n: size(1..1024), grid: cdiv(n, 128), block: 128
__global__ void pack(const float* x, __nv_bfloat162* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __halves2bfloat162(__float2bfloat16(x[i]), __float2bfloat16(2.0f * x[i]));
}
"""


def test_newer_names_and_their_errors_are_told_apart():
    text = "#include <hip/hip_bf16.h>\n#include <hip/hip_runtime.h>\nint f() { return hipMalloc(0, 0) + undefined_thing; }\n"
    newer = newer_constructs(text, "5.2")
    assert newer == [{"name": "hip/hip_bf16.h", "rocm": "5.7.0", "line": 1}]
    assert newer_constructs(text, "6.4") == []  # a ROCm that has them: nothing beyond it
    log = ("k.hip:1:10: fatal error: 'hip/hip_bf16.h' file not found\n"
           "k.hip:3:37: error: use of undeclared identifier 'undefined_thing'\n"
           "2 errors generated when compiling for gfx90a.\n")
    own, beyond = split_errors(log, text, newer)
    assert own == ["k.hip:3:37: error: use of undeclared identifier 'undefined_thing'"]
    assert beyond == ["k.hip:1:10: fatal error: 'hip/hip_bf16.h' file not found"]


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc is not installed")
def test_a_port_for_a_newer_rocm_is_not_checkable_here_not_rejected(tmp_path):
    from xlate.migrate.rocmcheck import local_rocm

    rocm = local_rocm()
    if rocm is None or tuple(int(x) for x in rocm.split(".")) >= (5, 7):
        pytest.skip(f"the local ROCm ({rocm}) has hip_bf16.h")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bf.cu").write_text(BF16)
    out = tmp_path / "out"
    res = run_cli(str(tmp_path / "src"), "--to", "hip", "-o", str(out), "--no-verify", "--compile-check",
                  "--executor", "serial", "--rocm", "6.2")
    report = load_report(out)
    f = report["files"][0]
    c = f["compile"]
    assert c["ok"] is None and c["rocm"] == rocm and c["compiler"] == f"hipcc (ROCm {rocm}) for gfx90a"
    assert "hip/hip_bf16.h" in {d["name"] for d in c["not_checkable"]} and c["errors"] == []
    assert c["reason"].startswith("not checkable here: uses ")
    # Not an error of the port: written as a candidate, headed with what could not be checked.
    assert f["written"] and f["category"] == "candidate" and f["kernels"][0]["status"] == "skipped"
    head = (out / "bf.hip").read_text().splitlines()
    assert head[0].endswith("(rules translator, for ROCm 6.2).")
    assert head[1].startswith(f"// Verification: unverified - not checkable with hipcc (ROCm {rocm}) for gfx90a "
                              "(needs a newer ROCm for hip/hip_bf16.h")
    assert res.exit_code == 3
    s = report["summary"]["compile"]
    assert (s["checked"], s["compiled"], s["failed"], s["not_checkable"]) == (1, 0, 0, 1)
    assert {"name": "hip/hip_bf16.h", "rocm": "5.7.0"} in s["newer_constructs"]
    assert "1 not checkable here" in res.stderr and f"not checkable with the local ROCm {rocm}" in res.stderr
    assert report["options"]["rocm"] == "6.2"
