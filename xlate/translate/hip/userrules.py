"""User rule files for CUDA <-> HIP (`xlate port --rules FILE`, repeatable).

Format (YAML; a sample is tests/data/hip_cases/user_rules.yaml):

    rules:
      - match: myCudaCheck          # the CUDA-side name (a whole identifier, header path or namespace)
        replace: myHipCheck         # the HIP-side name; null: no equivalent (XL1005 wherever it is used)
        kind: identifier            # identifier (default; also macro names and types) | header | namespace
        priority: default           # takeover | default (default) | fallback
        family: project             # the --stats group (default: user)
        note: "why, or what differs"  # optional, shown as XL1004 where the rule fires
        reverse: true               # also use it, inverted, for --to cuda (default: true)

Priority, highest first (like SYCLomatic's Takeover/Default/Fallback):
    takeover  - wins over everything built in, the structural warp-intrinsic rewrites included (e.g. to keep
                `__shfl_down_sync` because the project ships its own shim for it);
    default   - wins over the mapping tables (xlate/translate/maps/cuda_hip), not over the structural rewrites,
                whose safety checks it would bypass;
    fallback  - used only for names no table or built-in rule knows.
Between user rules of one priority the later one wins (a later file over an earlier one).
Errors in a rule file are input errors (exit 2) that name the file and the rule.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import yaml

from xlate.errors import InputError
from xlate.translate.hip.tables import KINDS, Mapping, MappingTables

FIELDS = {"match", "replace", "kind", "priority", "family", "note", "reverse"}
USER_PRIORITIES = ("takeover", "default", "fallback")


def _load(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        raise InputError(f"{path}: error: no such rules file")
    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise InputError(f"{path}{where}: error: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: error: cannot read rules file: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
        raise InputError(f"{path}: error: a rules file is a mapping with a `rules:` list")
    return doc["rules"]


def _check(path: str, i: int, rule: Any) -> dict[str, Any]:
    where = f"{path}: error: rule {i + 1}"
    if not isinstance(rule, dict):
        raise InputError(f"{where}: each rule is a mapping with `match` and `replace`")
    unknown = set(rule) - FIELDS
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(FIELDS))})")
    if not isinstance(rule.get("match"), str) or not rule["match"].strip():
        raise InputError(f"{where}: `match` must be a non-empty name")
    if "replace" not in rule or not (rule["replace"] is None or isinstance(rule["replace"], str)):
        raise InputError(f"{where} ('{rule['match']}'): `replace` must be a name or null")
    kind = rule.get("kind", "identifier")
    if kind not in KINDS:
        raise InputError(f"{where} ('{rule['match']}'): kind '{kind}' is not one of {', '.join(KINDS)}")
    prio = rule.get("priority", "default")
    if prio not in USER_PRIORITIES:
        raise InputError(f"{where} ('{rule['match']}'): priority '{prio}' is not one of {', '.join(USER_PRIORITIES)}")
    if kind in ("identifier", "namespace"):
        for key in ("match", "replace"):
            value = rule.get(key)
            if isinstance(value, str) and not value.replace("_", "a").isalnum():
                raise InputError(f"{where}: {key} '{value}' is not one identifier (rules rename whole identifiers)")
    return rule


@functools.cache
def _parsed(path: str, mtime: float) -> tuple[dict[str, Any], ...]:
    return tuple(_check(path, i, r) for i, r in enumerate(_load(path)))


def load_rules(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in paths:
        mtime = os.path.getmtime(path) if os.path.exists(path) else 0.0
        out.extend((path, r) for r in _parsed(path, mtime))
    return out


def with_user_rules(base: MappingTables, paths: list[str]) -> MappingTables:
    """`base` (built-in tables of one direction) plus the user rules, inverted for hip->cuda."""
    if not paths:
        return base
    tables = base.copy()
    for path, r in load_rules(paths):
        kind = r.get("kind", "identifier")
        family = str(r.get("family") or "user")
        src, dst = r["match"], r.get("replace")
        if tables.direction == "hip->cuda":
            if dst is None or r.get("reverse", True) is False:
                continue
            src, dst = dst, src
        tables.add(Mapping(src, dst, family, kind, None, r.get("note"), f"user:{os.path.basename(path)}",
                           r.get("priority", "default")))
    return tables
