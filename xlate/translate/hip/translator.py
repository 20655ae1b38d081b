"""The deterministic CUDA <-> HIP translators (`xlate port k.cu --to hip`, `xlate port k.hip --to cuda`).

Passes, in order, over one tree-sitter parse of the file (xlate/translate/hip/job.py holds the state):
  1. (HIP -> CUDA) remove the compat block and the runtime #include an earlier port added (compat.py);
  2. parse the macro bodies that mention warp intrinsics or thread indices on their own (job.parse_macro_body);
  3. structural rewrites of warp intrinsics, cooperative groups and launches (intrinsics.py, rules/intrinsics.yaml),
     and of runtime calls whose HIP declaration takes `const void*` / `void**` (hostcalls.py, rules/host_calls.yaml);
  4. constructs without an equivalent: inline asm, texture references, device launches (unsupported.py); C++
     that clang rejects and nvcc accepts (`register`, definitions of functions hip_runtime.h defines: language.py);
  5. wavefront-size analysis (wavefront.py, rules/wavefront.yaml);
  6. renaming of identifiers, types, namespaces, #include paths and macro bodies by the mapping tables and the
     user rules (rewriter.py, tables.py, userrules.py);
  7. (CUDA -> HIP) the runtime #include hipcc needs and the compat block of helpers the port uses.
Every change is a byte-range Edit with its rule; they are applied in one pass at the end.

Options: `arch` picks the wavefront size for the diagnostics (the port itself is the same for every AMD target);
`rules_files` are user rule files (userrules.py); `rocm` (e.g. "6.2"; default: the newest release the tables
know) gates what is emitted: a table name added after it, or removed by it, is left unchanged with XL1008/XL1010,
a deprecated one is emitted with XL1011; `roc` targets the roc* libraries (HIPIFY's --roc); `launch_syntax`
"ggl" (default) writes hipLaunchKernelGGL, "chevron" keeps <<<>>>; `project_names` are names the project defines
in other files (never reported as unknown CUDA names). `translation.stats` / `meta["stats"]` feed `format_stats`; `meta["helpers"]` lists the compat
helpers the port carries; `needs_llm` lists the kernels that reach a blocking diagnostic.
"""

from __future__ import annotations

import functools
import re

from xlate.arch import wavefront_size
from xlate.errors import InputError
from xlate.model import Function, KernelUnit
from xlate.translate.base import TranslateOptions, Translation
from xlate.translate.hip import compat, hostcalls, intrinsics, language, launches, unsupported, wavefront
from xlate.translate.hip.ctokens import identifiers as macro_identifiers
from xlate.translate.hip.job import Job, Region
from xlate.translate.hip.rewriter import Renamer, macro_regions, masked_regions
from xlate.translate.hip.stats import format_stats_table
from xlate.translate.hip.tables import Mapping, builtin_tables, newest_rocm, version
from xlate.translate.hip.userrules import with_user_rules

__all__ = ["CudaToHip", "HipToCuda", "format_stats", "resolve_rocm"]

LAUNCH_SYNTAXES = ("ggl", "chevron")


def resolve_rocm(options: TranslateOptions) -> str:
    """The ROCm the port targets: --rocm, else the legacy extra["rocm"], else the newest the tables know."""
    rocm = options.rocm or options.extra.get("rocm") or newest_rocm()
    rocm = str(rocm).strip()
    if not re.fullmatch(r"\d+(?:\.\d+){0,2}", rocm):
        raise InputError(f"xlate: error: --rocm '{rocm}' is not a ROCm release (e.g. 6.2 or 6.4.1)")
    version(rocm)
    return rocm


@functools.cache
def _macro_interest(direction: str) -> re.Pattern[bytes]:
    r = intrinsics.load_rules()
    if direction == "cuda->hip":
        names = (set(r["shuffles"]) | set(r["legacy_shuffles"]) | set(r["compat_calls"]) | set(r["unsupported_calls"])
                 | set(r["compat_identifiers"]) | set(r["cooperative_groups"]["hardware_warp_groups"])
                 | set(hostcalls.rules()) | set(hostcalls.location_forms()))
    else:
        rv = r["reverse"]
        names = (set(rv["shuffles"]) | set(rv["votes"]) | set(r["_compat_inverse"]) | set(r["_cg_inverse"])
                 | set(r["_reverse_identifiers"]) | {"hipLaunchKernelGGL", "HIP_DYNAMIC_SHARED"} | set(hostcalls.hip_names()))
    names |= {"threadIdx", "blockDim"}
    alt = b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))
    return re.compile(rb"\b(?:" + alt + rb")\b")


def _structural_names(direction: str) -> set[str]:
    r = intrinsics.load_rules()
    if direction == "cuda->hip":
        return set(r["shuffles"]) | set(r["compat_calls"]) | set(r["unsupported_calls"])
    return set(r["reverse"]["shuffles"]) | set(r["reverse"]["votes"]) | {"hipLaunchKernelGGL", "HIP_DYNAMIC_SHARED"}


class _RuleTranslator:
    whole_file = True  # rewrites host code, headers and kernel-less files too (xlate.port.port_kernel_less)
    name = ""
    source_languages: tuple[str, ...] = ()
    target = ""
    direction = ""
    source_side = ""

    def translate(self, unit: KernelUnit, text: str, options: TranslateOptions) -> Translation:
        forward = self.direction == "cuda->hip"
        roc = bool(options.roc) and forward
        tables = with_user_rules(builtin_tables(self.direction, roc), list(options.rules_files))
        wave = wavefront_size(options.arch, "hip")
        rocm = resolve_rocm(options) if forward else None
        if options.launch_syntax not in LAUNCH_SYNTAXES:
            raise InputError(f"xlate: error: --launch-syntax must be one of {', '.join(LAUNCH_SYNTAXES)}")
        job = Job(unit, text, self.direction, tables, wave, options.arch, intrinsics.rules_for(wave), dict(options.extra),
                  rocm=rocm, roc=roc, launch_syntax=options.launch_syntax, project_names=frozenset(options.project_names))
        if not forward:
            compat.remove(job)
            language.unguard_hip_defined(job)
            intrinsics.cg_collectives_reverse(job)
        macros = macro_regions(job, _macro_interest(self.direction))
        masked = masked_regions(job)
        regions = [job.main] + [r for r in (*macros.values(), *masked.values()) if r is not None]
        for region in regions:
            (intrinsics.forward if forward else intrinsics.reverse)(job, region)
            (hostcalls.forward if forward else hostcalls.reverse)(job, region)
        if forward:
            launches.forward(job, job.main)
            for region in regions:
                intrinsics.cg_collectives(job, region)
                language.drop_register(job, region)
        unsupported.check(job, job.main)
        for region in regions:
            (wavefront.analyse if forward else wavefront.analyse_reverse)(job, region)
        if forward:
            wavefront.host_warp_size(job)
            self._unparsed_macros(job, macros)
            language.guard_hip_defined(job)
        renamer = Renamer(job, *self._builtin_identifiers(job), source_side=self.source_side)
        includes = renamer.includes()
        renamer.run(macros, masked)
        renamer.report_unknown()
        if forward:
            compat.insert(job, includes)
        out = job.edits.apply()
        edits = job.edits.sorted()
        job.diags.sort(key=lambda d: (d.line, d.col, d.code))
        return Translation(
            source_path=unit.path, source_language=unit.language, target=self.target, engine="rules", text=out,
            kernels=[k.name for k in unit.kernels], diagnostics=job.diags, edits=edits, stats=job.stats.as_dict(),
            needs_llm=_needs_llm(job),
            meta={"direction": self.direction, "arch": options.arch, "wavefront": wave, "rocm": rocm, "roc": roc,
                  "launch_syntax": options.launch_syntax if forward else None,
                  "warp_model": "cuda-32-lane" if forward else "hip", "helpers": compat.ordered(job.helpers),
                  "rules_files": list(options.rules_files), "stats": job.stats.meta(text, edits),
                  "table_collisions": len(tables.collisions)},
        )

    def _builtin_identifiers(self, job: Job) -> tuple[dict[str, Mapping], dict[str, tuple[str | None, str | None]]]:
        r = job.rules
        ids: dict[str, Mapping] = {}
        helper_of: dict[str, tuple[str | None, str | None]] = {}
        if self.direction == "cuda->hip":
            for name, rule in r["compat_identifiers"].items():
                ids[name] = Mapping(name, rule["hip"], "warp_intrinsics", "identifier", origin="rules/intrinsics.yaml")
                helper_of[name] = (rule.get("helper"), rule.get("code"))
        else:
            for name, target in r["_reverse_identifiers"].items():
                ids[name] = Mapping(name, target, "hip_builtins", "identifier", origin="rules/intrinsics.yaml")
        return ids, helper_of

    @staticmethod
    def _unparsed_macros(job: Job, macros: dict[int, Region | None]) -> None:
        names = _structural_names(job.direction)
        for start, region in macros.items():
            if region is not None:
                continue
            node = job.main.root.descendant_for_byte_range(start, start + 1)
            while node is not None and node.type != "preproc_arg":
                node = node.parent
            if node is None:
                continue
            for use in macro_identifiers(job.data[node.start_byte : node.end_byte]):
                if use.token.text in names and not job.tables.override("identifier", use.token.text):
                    s = node.start_byte + use.token.start
                    if job.users_own(job.main, s, use.token.text):
                        continue
                    job.edits.claim(s, s + len(use.token.text))
                    job.stats.count("unsupported", "warp_intrinsics", use.token.text)
                    job.diag("XL1009", job.main, s, name=use.token.text)
                    job.blocking_macros.add(_macro_name(job, node))


def _macro_name(job: Job, value_node) -> str:  # type: ignore[no-untyped-def]
    parent = value_node.parent
    name = parent.child_by_field_name("name") if parent is not None else None
    return job.main.text(name) if name is not None else ""


def _needs_llm(job: Job) -> list[str]:
    """Kernels that reach a function (or use a macro) with a blocking diagnostic."""
    words = [re.compile(rb"\b" + re.escape(m.encode()) + rb"\b") for m in sorted(job.blocking_macros) if m]
    by_name = {f.name: f for f in job.unit.functions}
    blocked: dict[str, bool] = {}

    def blocks(f: Function) -> bool:
        if f.name not in blocked:
            body = f.body_span
            blocked[f.name] = f.name in job.blocking_functions or bool(
                body is not None and any(w.search(job.data, body.start_byte, body.end_byte) for w in words))
        return blocked[f.name]

    out = []
    for k in job.unit.kernels:
        seen, stack = set(), [k.name]  # the kernel and its callees (KernelUnit.reachable, with a name index)
        while stack:
            f = by_name.get(stack.pop())
            if f is None or f.name in seen:
                continue
            seen.add(f.name)
            if blocks(f):
                out.append(k.name)
                break
            stack.extend(f.calls)
    return out


class CudaToHip(_RuleTranslator):
    name = "cuda->hip rules"
    source_languages = ("cuda",)
    target = "hip"
    direction = "cuda->hip"
    source_side = "cuda"


class HipToCuda(_RuleTranslator):
    name = "hip->cuda rules"
    source_languages = ("hip",)
    target = "cuda"
    direction = "hip->cuda"
    source_side = "hip"


def format_stats(translation: Translation) -> str:
    """A `hipify-perl --print-stats`-like table of what was converted per family, and what was not."""
    direction = translation.meta.get("direction") or f"{translation.source_language}->{translation.target}"
    return format_stats_table(translation.source_path, direction, translation.stats, translation.meta.get("stats", {}))
