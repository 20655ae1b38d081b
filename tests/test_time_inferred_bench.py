"""bench/time_inferred.py: on a machine of several GPUs, each card times one kernel at a time and every chosen
kernel is timed exactly once (the GPU work itself is faked: this checks the driver's scheduling on the CPU)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import time_inferred  # noqa: E402

from xlate.verify.configs import declared  # noqa: E402


def test_kernels_are_spread_over_the_cards_one_at_a_time_each(tmp_path, monkeypatch):
    journal = tmp_path / "journal.jsonl"
    rows = [{"program": f"p{i}", "file": "k.cu", "kernel": f"k{i}", "triton": {"outcome": "verified"}}
            for i in range(9)]
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows))
    busy: dict[str, int] = {}
    most: dict[str, int] = {}
    timed: list[tuple[str, str]] = []
    lock = threading.Lock()

    def fake(args, payload, timeout, gpu=None):
        if args == ["--port"]:
            return {"status": "ok"}
        if args == ["--reference"]:
            return {"device": None, "copy": None}
        with lock:
            busy[gpu] = busy.get(gpu, 0) + 1
            most[gpu] = max(most.get(gpu, 0), busy[gpu])
            timed.append((gpu, payload["kernel"]))
        threading.Event().wait(0.05)  # long enough for the lanes to overlap
        with lock:
            busy[gpu] -= 1
        return {"status": "failed", "reason": "faked"}

    monkeypatch.setattr(time_inferred, "run_isolated", fake)
    out = tmp_path / "t.json"
    rc = time_inferred.main([str(tmp_path), "--journal", str(journal), "--gpus", "0,1,2", "--out", str(out),
                             "--per-program", "1"])
    assert rc == 0
    assert sorted(k for _, k in timed) == sorted(r["kernel"] for r in rows)  # each once
    assert set(most) == {"0", "1", "2"} and max(most.values()) == 1  # every card used, never two kernels on one
    written = [json.loads(ln) for ln in out.with_suffix(".jsonl").read_text().splitlines()]
    assert len(written) == 9


def test_verify_configs_ports_through_the_gate_and_keeps_the_verified_table(tmp_path, monkeypatch):
    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps({"program": "p", "file": "k.cu", "kernel": "k", "triton": {"outcome": "verified"}})
                       + "\n")
    asked: list[dict] = []

    def fake(args, payload, timeout, gpu=None):
        if args == ["--port"]:
            asked.append(payload)
            return {"status": "ok"}
        return {"device": None, "copy": None} if args == ["--reference"] else {"status": "failed", "reason": "faked"}

    monkeypatch.setattr(time_inferred, "run_isolated", fake)
    for flag, want in (([], False), (["--verify-configs"], True)):
        asked.clear()
        time_inferred.main([str(tmp_path), "--journal", str(journal), "--gpus", "0", "--out",
                            str(tmp_path / f"t{int(want)}.json"), *flag])
        assert [p["verify"] for p in asked] == [want]

    # the port job itself, on the CPU gate (relu has a reference oracle): unverified, the default launch alone;
    # verified, every configuration the gate verified
    tables = {}
    for verify in (False, True):
        out = tmp_path / f"relu_{verify}.py"
        res = time_inferred.port_one({"path": str(ROOT / "examples" / "kernels" / "relu.cu"), "kernel": "relu",
                                      "target": "triton", "out": str(out), "verify": verify})
        assert res == {"status": "ok"}
        tables[verify] = declared(out.read_text())["relu"]
    assert tables[False] == [{"blocks": 1, "num_warps": 8}]
    assert tables[True][:2] == [{"blocks": 1, "num_warps": 8}, {"blocks": 1, "num_warps": 4}] and len(tables[True]) > 2
