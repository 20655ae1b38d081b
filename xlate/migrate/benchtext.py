"""Benchmark results and the gate's cost in words, one line each (`xlate port --stats`)."""

from __future__ import annotations

from typing import Any


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def perf_line(perf: dict[str, Any] | None) -> str:
    """One kernel's benchmark, or why it has no number."""
    if not perf:
        return "not timed"
    if perf.get("status") != "ok":
        return f"no timing ({perf.get('status')}): {perf.get('reason') or ''}".rstrip(": ")
    text = f"port/source time {perf['port_over_source']:.3f}×"
    lo, hi = perf.get("interval") or (None, None)
    if lo is not None and hi is not None:
        text += f" [{lo:.3f}, {hi:.3f}]"
    text += f" {perf.get('verdict', '')}; per launch source {_us(perf['source_s'])}, port {_us(perf['port_s'])}"
    sp = perf.get("spread") or {}
    if sp:
        text += f" (spread {100 * sp['source']:.1f} % / {100 * sp['port']:.1f} %, {perf.get('rounds')} rounds"
        text += ")" if perf.get("converged") else f", {perf.get('stopped')})"
    bw = perf.get("bandwidth") or {}
    if bw.get("copy_gbs"):
        text += (f"; bandwidth source {bw['source']['gbs']:.0f} GB/s ({bw['source']['pct_of_copy']:.1f} % of copy), "
                 f"port {bw['port']['gbs']:.0f} GB/s ({bw['port']['pct_of_copy']:.1f} %)")
    elif bw:
        text += f"; no copy percentage: {bw.get('reason')}"
    if perf.get("note"):
        text += f"; note: {perf['note']}"
    return text


def gate_line(gate: dict[str, Any] | None) -> str:
    if not gate:
        return "gate: did not run"
    return (f"gate {gate['seconds']:.1f} s, {gate['examples']} examples, {gate['specialisations']} build(s) "
            f"({gate['compiles']} compiled now, {gate['compile_seconds']:.1f} s)")


def stats_lines(stats: dict[str, Any]) -> list[str]:
    out = ["stats:"]
    dev, copy = stats.get("device"), stats.get("copy")
    if dev:
        line = f"  device: {dev.get('name') or 'unnamed'} (L2 {dev['l2_bytes'] / 2**20:.0f} MiB, {dev['l2_origin']})"
        if copy and copy.get("status") == "ok":
            line += f"; device-to-device copy {copy['gbs']:.0f} GB/s (read + write, on {copy['backend']})"
        elif copy:
            line += f"; copy bandwidth not measured: {copy.get('reason')}"
        out.append(line)
    for name, entry in stats.get("kernels", {}).items():
        out.append(f"  {name}: {gate_line(entry.get('gate'))}")
        out.append(f"  {name}: {perf_line(entry.get('perf'))}")
    return out


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """`xlate migrate`'s closing lines on --benchmark (the report has every kernel)."""
    perf = summary.get("perf")
    if not perf:
        return []
    out = []
    if perf.get("geomean_port_over_source"):
        line = (f"benchmark: {perf['kernels']} kernel(s) timed: port/source time geomean "
                f"{perf['geomean_port_over_source']:.3f}x, worst {perf['max_port_over_source']:.3f}x; port faster "
                f"{perf['faster']}, slower {perf['slower']}, within noise {perf['within_noise']}")
        pct = perf.get("port_pct_of_copy")
        if pct:
            line += f"; ports at {pct['min']:.0f}-{pct['max']:.0f} % of the copy bandwidth (median {pct['median']:.0f} %)"
        out.append(line)
    for why, n in list(perf.get("reasons", {}).items())[:5]:
        out.append(f"  no benchmark number for {n} kernel(s): {why}")
    return out
