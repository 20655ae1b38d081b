"""Prompts from the jinja2 templates in templates/prompts/: the system rules, the task per (source, target),
and the repair message after a failed attempt. Also the curated examples and the architecture summary."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from xlate.errors import InputError
from xlate.resources import load_yaml, templates_dir
from xlate.targets import target
from xlate.translate.llm.contract import Contract

# Architecture facts worth the tokens; everything else in templates/arch/*.yaml stays out of the prompt.
ARCH_FACTS = ("vendor", "architecture", "target", "soc_version", "warp_size", "compute_units", "max_threads_per_block",
              "shared_memory_per_block_bytes", "shared_memory_per_block_optin_bytes", "shared_memory_banks", "lds_banks",
              "vector_load_bytes", "global_alignment_bytes", "core_layout", "vector_cores", "cube_cores",
              "unified_buffer_bytes", "ub_banks", "l1_buffer_bytes", "block_size_bytes", "datacopy_alignment_bytes",
              "local_alignment_bytes", "vector_repeat_bytes", "max_repeat_times")
LOG_LINES = 40
LOG_CHARS = 3000


def prompts_dir() -> Path:
    return templates_dir() / "prompts"


@functools.cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(prompts_dir())), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False, trim_blocks=False)


def task_template(source_language: str, target: str) -> str:
    name = f"{source_language}_to_{target}.j2"
    if not (prompts_dir() / name).exists():
        pairs = sorted(p.stem.replace("_to_", "->") for p in prompts_dir().glob("*_to_*.j2"))
        raise InputError(f"xlate: error: the LLM translator has no prompt for {source_language} -> {target} "
                         f"(templates/prompts/{name}; available: {', '.join(pairs)})")
    return name


@dataclass
class Example:
    name: str
    source_language: str
    target: str
    kernel: str
    op: str
    status: str
    source: str
    port: str
    check: str
    reference: str | None = None
    arch: str | None = None
    path: str = ""


@functools.cache
def all_examples() -> tuple[Example, ...]:
    out = []
    for path in sorted((prompts_dir() / "examples").glob("*.yaml")):
        d = load_yaml(path)
        out.append(Example(d["name"], d["source_language"], d["target"], d["kernel"], d.get("op", "elementwise"),
                           d["status"], d["source"], d["port"], d["check"], d.get("reference"), d.get("arch"), str(path)))
    return tuple(out)


def pick_examples(source_language: str, target: str, op: str | None, n: int, exclude: str | None = None) -> list[Example]:
    """Up to n examples for this pair: same operation class first, verified before compiled-only; never the
    kernel being ported itself (an example with the same name would hand the model the answer)."""
    pool = [e for e in all_examples() if e.source_language == source_language and e.target == target and e.kernel != exclude]
    pool.sort(key=lambda e: (e.op != op, e.check != "verify", e.name))
    return pool[: max(0, n)]


def arch_summary(spec: dict[str, Any] | None) -> dict[str, Any] | None:
    if not spec:
        return None
    facts = [(k, spec[k]) for k in ARCH_FACTS if k in spec and not isinstance(spec[k], dict | list)]
    notes = [str(n) for n in spec.get("notes", [])][:8]
    return {"name": spec.get("name", "?"), "facts": facts, "notes": notes}


def trim_log(log: str) -> str:
    """The first errors of a compiler log, with a little context; the rest is noise to a model."""
    lines = [ln.rstrip() for ln in log.strip().splitlines() if ln.strip()]
    keep: list[int] = []
    for i, ln in enumerate(lines):
        if "error" in ln.lower():
            keep.extend(range(i, min(i + 3, len(lines))))
    chosen = sorted(set(keep)) or list(range(len(lines)))
    text = "\n".join(lines[i] for i in chosen[:LOG_LINES])
    if len(chosen) > LOG_LINES:
        text += f"\n... ({len(chosen) - LOG_LINES} more lines)"
    return text[:LOG_CHARS]


def system_prompt(contract: Contract) -> str:
    return _env().get_template("system.j2").render(contract=contract, target_name=target(contract.target).title).strip()


def task_prompt(source_language: str, contract: Contract, **context: Any) -> str:
    template = _env().get_template(task_template(source_language, contract.target))
    return template.render(contract=contract, kernel=contract.kernel, source_name=target(source_language).title,
                           target_name=target(contract.target).title, source_fence=target(source_language).fence,
                           **context).strip()


def repair_prompt(contract: Contract, attempt: int, max_attempts: int, failure: str, *, log: str = "",
                  log_title: str = "Compiler output (trimmed)", counterexample: str = "",
                  messages: list[str] | None = None) -> str:
    return _env().get_template("repair.j2").render(
        contract=contract, attempt=attempt, max_attempts=max_attempts, failure=failure, log=log, log_title=log_title,
        counterexample=counterexample, messages=messages or []).strip()
