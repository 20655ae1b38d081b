"""End to end: `xlate migrate` on a generated library: mirrored output, headers ported once with includes
rewritten, the input untouched, the report, the exit codes, and incremental re-runs through the cache."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.test_migrate_support import by_path, load_report, make_lib, run_cli, tree_digest
from xlate.migrate.report import SCHEMA_FILE, comparable
from xlate.migrate.task import file_mode


def _validate(report: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, json.loads(SCHEMA_FILE.read_text()))


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    root = tmp_path_factory.mktemp("migrate") / "lib"
    lib = make_lib(root, 12)
    return root, lib


def test_no_verify_migration_and_incremental_reruns(library, tmp_path):
    root, lib = library
    before = tree_digest(root)
    out = tmp_path / "out"
    res = run_cli(str(root), "--to", "hip", "-o", str(out), "-j", "2", "--no-verify", "--json")
    assert tree_digest(root) == before, "the input tree was modified"
    summary_doc = json.loads(res.stdout)
    report = load_report(out)
    _validate(report)
    assert summary_doc["summary"] == report["summary"]

    files = by_path(report)
    units = set(lib.files)
    code = units | {"common/xl_lib.cuh"}
    # Every file of the library has an entry and a file in the output tree: the references and xlate.toml copied.
    assert set(files) == set(tree_digest(root))
    others = set(files) - code
    assert others and all(files[rel]["category"] == "copied" for rel in others)
    assert all((out / rel).read_bytes() == (root / rel).read_bytes() for rel in others)
    assert report["summary"]["kernels"] == lib.kernels == 12
    ptx = {rel for rel in units if "inline_ptx" in rel}
    assert ptx, "the library should hold a kernel the rules cannot port"
    for rel in units:
        f = files[rel]
        assert f["output"] == rel[: -len(".cu")] + ".hip"
        text = (out / f["output"]).read_text()
        if rel in ptx:
            # Never a silent partial port: the port is written, the PTX the rules cannot port left as written and
            # named (file:line:col) in its header and as an XL6018 warning; the rest of the file translated.
            assert f["written"] and not f.get("fallback") and f["category"] == "partial"
            assert "Verification: PARTIAL (needs review) - not translated by the rules: ptx_add" in text
            line = next(i for i, t in enumerate((root / rel).read_text().splitlines(), 1) if 'asm volatile("add.f32' in t)
            sites = [d for d in f["diagnostics"] if d["code"] == "XL6018"]
            assert [(d["severity"], d["line"]) for d in sites] == [("warning", line)] and "ptx_add" in sites[0]["message"]
            assert f"//   {rel}:{line}:5: inline PTX assembly" in text and 'asm volatile("add.f32' in text
            assert "hipLaunchKernelGGL" in text or "<<<" not in text
            assert "/xl_lib.hip.h" in text and "cuda_runtime" not in text
            assert "not translated" in {k["status"] for k in f["kernels"]} <= {"not translated", "skipped"}
        else:
            assert f["written"] and f["category"] == "candidate"
            assert {k["status"] for k in f["kernels"]} == {"skipped"}
            assert "Verification: unverified - not compiled here; not run (--no-verify)." in text
            assert "hipLaunchKernelGGL" in text or "<<<" not in text
            assert (out / f["output"]).stat().st_mode & 0o777 == file_mode()  # as open() would make it
    missing = {(m["file"], m["kernel"]) for m in report["not_migrated"]}
    # its file is written, the kernel is still not migrated
    assert missing == {(rel, k) for rel in ptx for k in lib.kernel_names[rel] if k.startswith("ptx_add")}
    assert report["summary"]["exit_code"] == res.exit_code == 1
    assert report["summary"]["categories"]["partial"] == len(ptx) and "untranslated" not in report["summary"]["categories"]

    # The shared header is ported once, and every file that includes it names the ported header.
    header = files["common/xl_lib.cuh"]
    assert header["status"] == "translated" and header["output"] == "common/xl_lib.hip.h"
    assert "#include <hip/hip_runtime.h>" in (out / "common/xl_lib.hip.h").read_text()
    includers = [rel for rel in units if '"' + "../" * rel.count("/") + 'common/xl_lib.cuh"' in (root / rel).read_text()]
    assert includers
    for rel in includers:  # the copied sources too: the tree stays consistent
        text = (out / files[rel]["output"]).read_text()
        assert re.search(r'#include "(\.\./)+common/xl_lib\.hip\.h"', text) and "xl_lib.cuh" not in text
        assert files[rel]["includes_rewritten"][0]["to"].endswith("common/xl_lib.hip.h")
    assert {f.name for f in (out / "xlate-report").iterdir()} >= {"report.json", "report.html", "summary.md"}
    md = (out / "xlate-report" / "summary.md").read_text()
    assert "Not migrated" in md and all(f"`{k}`" in md for _, k in missing)

    # Unchanged re-run: everything from the cache, the same report. (Re-runs use the serial executor: the cache
    # does not depend on the executor, and this process is warm.)
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--no-verify")
    again = load_report(out)
    assert again["run"]["executed"] == 0 and again["run"]["cache_hits"] == len(code)
    assert comparable(again) == comparable(report)

    # One kernel file changes: only it is redone.
    changed = sorted(units - ptx - set(includers))[0]
    (root / changed).write_text((root / changed).read_text() + "\n// edited\n")
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--no-verify")
    assert load_report(out)["run"]["executed"] == 1

    # The header changes: it and every file that includes it are redone, nothing else.
    h = root / "common" / "xl_lib.cuh"
    h.write_text(h.read_text() + "\n// edited header\n")
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--no-verify")
    assert load_report(out)["run"]["executed"] == 1 + len(includers)

    # A port or a copied source deleted from the output tree is redone, not trusted from the cache.
    victim = out / files[changed]["output"]
    victim.unlink()
    copied = out / files[sorted(ptx)[0]]["output"]
    copied.unlink()
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--no-verify")
    assert load_report(out)["run"]["executed"] == 2 and victim.is_file() and copied.is_file()

    # --fresh redoes everything.
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--no-verify", "--fresh")
    assert load_report(out)["run"]["executed"] == len(code)


def test_where_verification_cannot_run_the_candidates_are_written_headed_with_their_verdict(tmp_path):
    # HIP ports cannot run on this machine (no AMD or NVIDIA GPU): every kernel is unverified; the ports are
    # written as candidates, each headed with what was and was not done; the report keeps them apart from
    # accepted ports. --verified-only writes none of them (and removes an earlier run's).
    from tests.test_migrate_support import has_hip_device

    if has_hip_device():
        pytest.skip("a device here can run HIP ports")
    root = tmp_path / "lib"
    lib = make_lib(root, 3, only=("vector_add", "saxpy", "relu"), header_every=1000)
    out = tmp_path / "out"
    res = run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--examples", "5")
    report = load_report(out)
    assert res.exit_code == 3 == report["summary"]["exit_code"]
    assert report["summary"]["kernels_by_status"] == {"unverified": 3}
    assert {p.relative_to(out).as_posix() for p in out.rglob("*.hip")} == {rel[:-3] + ".hip" for rel in lib.files}
    assert report["not_migrated"] == []
    assert report["summary"]["categories"]["candidate"] == 3 and "accepted" not in report["summary"]["categories"]
    for f in report["files"]:
        for k in f["kernels"]:
            assert k["verdict"]["status"] == "unverified" and k["verdict"]["reason"]
            assert k["reason"] == k["verdict"]["reason"]
        if f["kernels"]:
            head = (out / f["output"]).read_text().splitlines()[1]
            assert head.startswith("// Verification: unverified - not compiled here; not run: ")
            assert f["kernels"][0]["reason"][:60] in head
            assert f["verdict"].startswith("unverified: not compiled here; not run: ")
    html = (out / "xlate-report" / "report.html").read_text()
    assert "Candidates: translated, not verified here" in html and "Accepted: verified ports" not in html

    res = run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--examples", "5", "--verified-only")
    report = load_report(out)
    assert res.exit_code == 3
    assert not list(out.rglob("*.hip")), "--verified-only leaves no unverified port (nor an earlier run's)"
    assert not (out / "xlate.toml").exists() or report["summary"]["written"] == 1
    assert by_path(report)["common/xl_lib.cuh"]["written"]  # no kernels: nothing to verify
    assert len(report["not_migrated"]) == 3


def test_empty_library_is_nothing_to_do(tmp_path):
    (tmp_path / "lib").mkdir()
    res = run_cli(str(tmp_path / "lib"), "--to", "hip", "-o", str(tmp_path / "out"))
    assert res.exit_code == 0
    assert load_report(tmp_path / "out")["summary"]["files"] == 0


@pytest.mark.parametrize("where", ["inside", "same", "parent"])
def test_output_overlapping_the_input_is_refused(tmp_path, where):
    root = tmp_path / "lib"
    root.mkdir()
    (root / "k.cu").write_text("__global__ void k(float* y) { y[0] = 1.0f; }\n")
    out = {"inside": root / "ported", "same": root, "parent": tmp_path}[where]
    before = tree_digest(tmp_path)
    res = run_cli(str(root), "--to", "hip", "-o", str(out))
    assert res.exit_code == 2 and "overlap" in res.stderr
    assert tree_digest(tmp_path) == before


def test_bad_arguments_exit_2(tmp_path):
    assert run_cli(str(tmp_path / "missing"), "--to", "hip", "-o", str(tmp_path / "o")).exit_code == 2
    (tmp_path / "lib").mkdir()
    res = run_cli(str(tmp_path / "lib"), "--to", "hip")
    assert res.exit_code == 2 and "-o OUT_DIR is required" in res.stderr
    res = run_cli(str(tmp_path / "lib"), "--to", "hip", "-o", str(tmp_path / "o"), "--rules", str(tmp_path / "no.yaml"))
    assert res.exit_code == 2 and "no such rules file" in res.stderr


def test_paths_in_results_are_relative(library, tmp_path):
    root, _ = library
    out = tmp_path / "out"
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "serial", "--no-verify")
    text = json.dumps(load_report(out)["files"])
    assert str(root) not in text and str(out) not in text
    assert Path(load_report(out)["source_root"]) == root


def test_triton_migration_verifies_on_the_cpu(tmp_path):
    # Triton ports run here (interpreter): each renamed kernel is judged against the corpus's NumPy reference
    # through the generated library's xlate.toml.
    pytest.importorskip("triton")
    pytest.importorskip("xlate.translate.triton.translator")
    from xlate.backends.registry import get_backend

    if not get_backend("triton").detect().can_run:
        pytest.skip("Triton cannot run here")
    root = tmp_path / "lib"
    lib = make_lib(root, 3, only=("vector_add", "saxpy", "relu"))
    before = tree_digest(root)
    out = tmp_path / "out"
    res = run_cli(str(root), "--to", "triton", "-o", str(out), "-j", "2", "--examples", "8")
    assert tree_digest(root) == before  # the references inside the library were imported, not modified
    report = load_report(out)
    _validate(report)
    assert report["summary"]["kernels_by_status"] == {"verified": 3}, report["not_migrated"]
    assert res.exit_code == 0 == report["summary"]["exit_code"] and report["not_migrated"] == []
    files = by_path(report)
    assert files["common/xl_lib.cuh"]["status"] == "skipped"  # Triton has no headers
    for rel in lib.files:
        f = files[rel]
        assert f["output"] == rel[:-3] + "_triton.py" and f["written"]
        k = f["kernels"][0]
        assert k["verdict"]["oracle"].startswith("reference:") and k["verdict"]["examples"] > 0
        text = (out / f["output"]).read_text()
        assert text.startswith("# Generated by xlate") and "# Verification: verified" in text
        compile(text, f["output"], "exec")  # the written port is Python: its header too (a `//` header was not)


def test_compile_check_rejects_a_port_that_does_not_build(tmp_path):
    import shutil

    if shutil.which("hipcc") is None:
        pytest.skip("hipcc is not installed")
    from xlate.migrate.rocmcheck import local_rocm

    root = tmp_path / "lib"
    lib = make_lib(root, 1, only=("saxpy",), header_every=1)  # includes the shared header
    good = lib.files[0]
    bad = root / "bad.cu"
    # nvcc would reject it too; the point is that the port is compiled, not just translated.
    bad.write_text((root / good).read_text().replace('#include "../', '#include "').replace(
        "saxpy_v0<<<", "cudaNoSuchApi(0);\n    saxpy_v0<<<").replace("saxpy_v0", "saxpy_bad"))
    out = tmp_path / "out"
    res = run_cli(str(root), "--to", "hip", "-o", str(out), "-j", "2", "--no-verify", "--compile-check")
    report = load_report(out)
    files = by_path(report)
    compiler = f"hipcc (ROCm {local_rocm()}) for gfx90a"
    assert files[good]["compile"]["ok"] is True and files[good]["written"]  # its header was inlined for the check
    assert files[good]["compile"]["compiler"] == compiler
    assert files[good]["kernels"][0]["status"] == "skipped"
    assert f"// Verification: unverified - compiled with {compiler}; not run (--no-verify)." in \
        (out / files[good]["output"]).read_text()
    b = files["bad.cu"]
    assert b["compile"]["ok"] is False and "cudaNoSuchApi" in b["compile"]["log"]
    assert b["kernels"][0]["status"] == "rejected" and "does not compile" in b["kernels"][0]["reason"]
    # The rejected port is not written: the source is, unchanged, headed with why.
    assert not b["written"] and b["fallback"] and b["category"] == "untranslated"
    assert (out / "bad.hip").read_text().split("\n", 2)[2] == bad.read_text().replace("xl_lib.cuh", "xl_lib.hip.h")
    assert res.exit_code == 1
    assert f"compile check ({compiler}): 1 of 2 compiled, 1 failed" in res.stderr
    assert report["summary"]["compile"]["rocm"] == local_rocm()
    # --force writes the rejected port, headed with its verdict.
    run_cli(str(root), "--to", "hip", "-o", str(out), "-j", "2", "--no-verify", "--compile-check", "--force")
    text = (out / "bad.hip").read_text()
    assert "// Verification: REJECTED (written with --force) - saxpy_bad: the port does not compile" in text
    assert "hipNoSuchApi" in text or "cudaNoSuchApi" in text


def test_unwritable_report_and_corrupt_cache_are_clear_errors(tmp_path):
    root = tmp_path / "lib"
    make_lib(root, 1, only=("saxpy",), header_every=1000)
    (tmp_path / "taken").write_text("a file where the report folder should go")
    res = run_cli(str(root), "--to", "hip", "-o", str(tmp_path / "out"), "--executor", "serial", "--no-verify",
                  "--report", str(tmp_path / "taken"))
    assert res.exit_code == 2 and "cannot write" in res.stderr and "Traceback" not in res.stderr
    cache = tmp_path / "bad.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    res = run_cli(str(root), "--to", "hip", "-o", str(tmp_path / "out2"), "--executor", "serial", "--no-verify",
                  "--cache", str(cache))
    assert res.exit_code == 2 and "migration cache" in res.stderr
