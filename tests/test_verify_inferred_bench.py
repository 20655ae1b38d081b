"""bench/verify_inferred.py: a kernel cut by its time limit keeps the verdicts it finished."""

from __future__ import annotations

import concurrent.futures
import json
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import verify_inferred  # noqa: E402

JOB = {"program": "p", "file": "k.cu", "kernel": "k", "spec": "n: size(1..8)", "targets": ["source", "hip", "triton"],
       "cpu": False}


def test_a_timed_out_kernel_keeps_the_steps_it_finished(tmp_path, monkeypatch):
    # The child prints its row after each step and then hangs in the Triton step: the real subprocess is killed
    # at its limit, and the row keeps the source's and HIP's verdicts (before, the whole row was one error).
    done = {**{k: JOB[k] for k in ("program", "file", "kernel", "spec")},
            "source": {"outcome": "source ok"}, "hip": {"outcome": "verified"}}
    child = tmp_path / "child.py"
    child.write_text("import json, sys, time\n"
                     f"print(json.dumps({json.dumps({k: v for k, v in done.items() if k != 'hip'})}), flush=True)\n"
                     f"print(json.dumps({json.dumps(done)}), flush=True)\n"
                     "time.sleep(60)\n")
    monkeypatch.setattr(verify_inferred, "__file__", str(child))
    row = verify_inferred.run_isolated(JOB, timeout=3)
    assert row["source"] == {"outcome": "source ok"} and row["hip"] == {"outcome": "verified"}
    assert "triton" not in row and row["error"] == "timeout after 3 s (in triton)"


def test_a_kernel_that_finished_nothing_is_one_timeout():
    row = verify_inferred.timed_out(JOB, b"", 240)
    assert row == {**{k: JOB[k] for k in ("program", "file", "kernel", "spec")}, "error": "timeout after 240 s"}
    garbled = verify_inferred.timed_out(JOB, '{"source": {"outc', 240)  # cut mid-line: nothing is made up
    assert "source" not in garbled and garbled["error"] == "timeout after 240 s"


def test_run_one_reports_each_step_as_it_finishes(monkeypatch):
    steps: list[str] = []
    monkeypatch.setattr(verify_inferred, "check_source", lambda *a: {"outcome": "source ok"})
    monkeypatch.setattr(verify_inferred, "port_and_verify", lambda src, k, target, *a, **kw: {"outcome": "verified"})
    row = verify_inferred.run_one({**JOB, "path": "k.cu", "examples": 1, "sanitize": False},
                                  lambda r: steps.append(",".join(t for t in ("source", "hip", "triton") if t in r)))
    assert steps == ["source", "source,hip", "source,hip,triton"]
    assert row["triton"]["outcome"] == "verified" and "error" not in row
    assert all(row[t]["step_seconds"] >= 0.0 for t in ("source", "hip", "triton"))  # each step's wall time


def test_a_kernel_list_without_specs_gives_rows_not_a_crash(monkeypatch):
    # --kernels accepts a plain {program, file, kernel} list: the spec is inferred in the child, so the row has
    # none; a child that failed (and a cut one) must still give a row, not a KeyError in the driver
    job = {k: v for k, v in JOB.items() if k != "spec"}
    assert verify_inferred.timed_out(job, b"", 10)["spec"] is None
    monkeypatch.setattr(verify_inferred, "check_source", lambda *a: {"outcome": "source ok"})
    monkeypatch.setattr(verify_inferred, "port_and_verify", lambda src, k, target, *a, **kw: {"outcome": "verified"})
    row = verify_inferred.run_one({**job, "path": "k.cu", "examples": 1, "sanitize": False})
    assert row["kernel"] == "k" and row["spec"] is None and row["triton"]["outcome"] == "verified"


def test_each_worker_thread_keeps_one_gpu_and_the_gpus_share_the_threads(tmp_path, monkeypatch):
    # The child prints the CUDA_VISIBLE_DEVICES it was started with: the kernel subprocess sees exactly one card.
    child = tmp_path / "child.py"
    child.write_text("import json, os\nprint(json.dumps({'gpu': os.environ.get('CUDA_VISIBLE_DEVICES')}))\n")
    monkeypatch.setattr(verify_inferred, "__file__", str(child))
    pinning = verify_inferred.GpuPinning(["3", "5"])
    barrier = threading.Barrier(4)

    def work(_: int) -> tuple[int, str]:
        barrier.wait()  # four live threads at once, so the pool cannot reuse one thread for every job
        return threading.get_ident(), verify_inferred.run_isolated(JOB, 30, pinning.env())["gpu"]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        seen = list(pool.map(work, range(4)))
    by_thread = {tid: gpu for tid, gpu in seen}
    assert sorted(by_thread.values()) == ["3", "3", "5", "5"]
    assert verify_inferred.GpuPinning(["0"]).env() == {}  # one card: the environment is left as it is


def test_auto_leaves_a_chosen_cuda_visible_devices_alone(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert verify_inferred.visible_gpus() == []


def test_a_row_names_the_spec_the_gate_inferred_not_the_listed_one(tmp_path, monkeypatch):
    # the kernel list may come from an export made before the inference changed; the gate infers again, so the
    # row records that spec and keeps the listed one beside it
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) out[i] = 2.0f;\n}\n"
                   "void go(float* out, int n) { k<<<(n + 127) / 128, 128>>>(out, n); }\n")
    monkeypatch.setattr(verify_inferred, "check_source", lambda *a: {"outcome": "source ok"})
    monkeypatch.setattr(verify_inferred, "port_and_verify", lambda src, k, target, *a, **kw: {"outcome": "verified"})
    row = verify_inferred.run_one({**JOB, "path": str(src), "examples": 1, "sanitize": False})
    assert row["spec"] == "out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128"
    assert row["spec_listed"] == JOB["spec"]
    same = verify_inferred.run_one({**JOB, "spec": row["spec"], "path": str(src), "examples": 1, "sanitize": False})
    assert same["spec"] == row["spec"] and "spec_listed" not in same
