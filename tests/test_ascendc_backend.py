"""The AscendC backend without CANN (it says what is missing and never claims to compile or run), its compile
command (through a stand-in compiler script, since no CANN exists here), and `xlate port --to ascendc` on a CPU
machine: exit 3, nothing written without --force, the install instructions printed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from xlate.backends import ascendc
from xlate.backends.base import CompileError, CompileOptions

from xlate.errors import ToolchainMissing

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_cann(monkeypatch):
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH"):
        monkeypatch.delenv(var, raising=False)
    ascendc.cann_home.cache_clear()
    yield
    ascendc.cann_home.cache_clear()


def test_detect_names_what_is_missing(no_cann):
    if os.path.isdir("/usr/local/Ascend"):
        pytest.skip("CANN is installed here")
    info = ascendc.AscendCBackend().detect()
    assert not info.found and not info.can_compile and not info.can_run
    text = " ".join(info.missing)
    assert "CANN" in text and "bisheng" in text and "NPU" in text
    assert "CANN" in info.remedy and "set_env.sh" in info.remedy
    with pytest.raises(ToolchainMissing):
        ascendc.AscendCBackend().compile("", "k", CompileOptions(), path="k.cpp")


def test_arch_flags_come_from_the_arch_specs():
    assert ascendc.soc_flags("ascend910b") == ("Ascend910B2", [["--npu-arch=dav-2201"], ["--cce-aicore-arch=dav-c220"]])
    assert ascendc.soc_flags("Ascend310P3") == ("Ascend310P3", [["--npu-arch=dav-2002"], ["--cce-aicore-arch=dav-m200"]])


FAKE_BISHENG = """#!/bin/sh
# stand-in for CANN's bisheng: records its arguments, rejects --npu-arch like an older release would
echo "$@" >> "$(dirname "$0")/calls.log"
out=""
prev=""
for a in "$@"; do
  case "$a" in
    --npu-arch=*) echo "bisheng: error: unknown argument: '$a'" >&2; exit 1 ;;
    *BROKEN*) ;;
  esac
  if [ "$prev" = "-o" ]; then out="$a"; fi
  prev="$a"
done
if grep -q BROKEN "$3"; then echo "$3:1:1: error: expected ';'" >&2; exit 1; fi
printf 'obj' > "$out"
"""


@pytest.fixture
def fake_cann(tmp_path, monkeypatch):
    home = tmp_path / "ascend-toolkit" / "latest"
    bindir = home / "x86_64-linux" / "ccec_compiler" / "bin"
    bindir.mkdir(parents=True)
    (home / "x86_64-linux" / "asc" / "include").mkdir(parents=True)
    tool = bindir / "bisheng"
    tool.write_text(FAKE_BISHENG)
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    ascendc.cann_home.cache_clear()
    yield bindir
    ascendc.cann_home.cache_clear()


def test_compile_uses_x_asc_and_falls_back_to_the_core_arch_flag(fake_cann):
    b = ascendc.AscendCBackend()
    assert b.detect().can_compile
    art = b.compile('#include "kernel_operator.h"\n', "k", CompileOptions(arch="ascend910b"), path="k_ascendc.cpp")
    calls = (fake_cann / "calls.log").read_text().splitlines()
    assert len(calls) == 2
    assert calls[0].startswith("-x asc ") and "--npu-arch=dav-2201" in calls[0]
    assert "--cce-aicore-arch=dav-c220" in calls[1] and " -c -o " in calls[1] and "-std=c++17" in calls[1]
    assert "/asc/include" in calls[1]
    assert Path(art.path).read_bytes() == b"obj" and art.meta["soc"] == "Ascend910B2"


def test_compile_errors_carry_the_log(fake_cann):
    with pytest.raises(CompileError) as exc:
        ascendc.AscendCBackend().compile("BROKEN\n", "k", CompileOptions(), path="bad.cpp")
    assert "expected ';'" in exc.value.log and "bad.cpp" in exc.value.log  # the temp path mapped back to the source


def test_port_to_ascendc_on_a_cpu_machine_exits_3_and_writes_nothing(cli, tmp_path, no_cann):
    if os.path.isdir("/usr/local/Ascend"):
        pytest.skip("CANN is installed here")
    out = tmp_path / "vector_add_ascendc.cpp"
    r = cli("port", str(ROOT / "examples" / "kernels" / "vector_add.cu"), "--to", "ascendc", "-o", str(out))
    assert r.exit_code == 3
    assert not out.exists()
    text = r.output
    assert "static checks passed" in text and "cannot run ascendc" in text and "install Huawei CANN" in text
    r = cli("port", str(ROOT / "examples" / "kernels" / "vector_add.cu"), "--to", "ascendc", "-o", str(out), "--force")
    assert r.exit_code == 3 and out.exists()
    assert "unverified" in out.read_text().splitlines()[1]
