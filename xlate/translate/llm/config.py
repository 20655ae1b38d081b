"""Which model to call and how: --model, then the environment, then `[tool.xlate]` in the nearest pyproject.toml.

Keys are never read from configuration files: litellm takes them from the provider's usual environment variable
(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), or `api_key_env` names the variable to read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlate.config import find_pyproject, pyproject_table
from xlate.errors import InputError

# [tool.xlate.llm] key -> (type, environment variable)
SETTINGS: dict[str, tuple[type, str]] = {
    "api_base": (str, "XLATE_API_BASE"),
    "api_key_env": (str, "XLATE_API_KEY_ENV"),
    "temperature": (float, "XLATE_LLM_TEMPERATURE"),
    "max_output_tokens": (int, "XLATE_LLM_MAX_OUTPUT_TOKENS"),
    "budget_tokens": (int, "XLATE_LLM_BUDGET_TOKENS"),
    "budget_usd": (float, "XLATE_LLM_BUDGET_USD"),
    "price_in_per_mtok": (float, "XLATE_LLM_PRICE_IN"),
    "price_out_per_mtok": (float, "XLATE_LLM_PRICE_OUT"),
    "request_timeout": (float, "XLATE_LLM_TIMEOUT"),
    "examples": (int, "XLATE_LLM_EXAMPLES"),
    "cache": (bool, "XLATE_LLM_CACHE"),
    "offline": (bool, "XLATE_LLM_OFFLINE"),
}


@dataclass
class LLMConfig:
    model: str
    api_base: str | None = None  # a local OpenAI-compatible server (vLLM, llama.cpp) or Ollama
    api_key_env: str | None = None  # name of the environment variable holding the key (its value is never stored)
    temperature: float = 0.0
    max_output_tokens: int = 4096
    budget_tokens: int | None = 200_000  # tokens in + out over one port (all kernels, all attempts)
    budget_usd: float | None = None
    price_in_per_mtok: float | None = None  # USD per million tokens; overrides litellm's price table
    price_out_per_mtok: float | None = None
    request_timeout: float = 300.0
    examples: int = 2  # curated examples per prompt
    cache: bool = True
    offline: bool = False  # only replay cached completions (CI): a miss is a failed attempt, no HTTP call
    origin: dict[str, str] = field(default_factory=dict)  # setting -> where it came from

    def describe(self) -> dict[str, Any]:
        """The configuration as it may appear in a report (no key values)."""
        return {"model": self.model, "api_base": self.api_base, "api_key_env": self.api_key_env,
                "temperature": self.temperature, "max_output_tokens": self.max_output_tokens,
                "budget_tokens": self.budget_tokens, "budget_usd": self.budget_usd, "cache": self.cache,
                "offline": self.offline, "origin": dict(self.origin)}


def _convert(name: str, kind: type, value: Any, where: str) -> Any:
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if kind is int and isinstance(value, str):
            return int(value.replace("_", ""))
        return kind(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: error: '{name}' must be a {kind.__name__}, not {value!r}") from None


def configured_model(model: str | None, start: Path | None = None) -> tuple[str | None, str]:
    """The model name and where it came from; configuration only (no network)."""
    if model:
        return model, "--model"
    if os.environ.get("XLATE_MODEL"):
        return os.environ["XLATE_MODEL"], "XLATE_MODEL"
    path = find_pyproject(start)
    value = pyproject_table(path).get("model")
    if value:
        return str(value), f"{path} [tool.xlate]"
    return None, ""


def load_config(model: str | None = None, start: Path | None = None) -> LLMConfig:
    name, origin = configured_model(model, start)
    if not name:
        raise InputError("xlate: error: no model configured for the LLM translator: pass --model, set XLATE_MODEL, "
                         "or add `model = \"...\"` under [tool.xlate] in pyproject.toml")
    path = find_pyproject(start)
    table = pyproject_table(path)
    llm = table.get("llm", {}) if isinstance(table.get("llm", {}), dict) else {}
    cfg = LLMConfig(model=name, origin={"model": origin})
    where = f"{path} [tool.xlate.llm]"
    unknown = sorted(set(llm) - set(SETTINGS))
    if unknown:
        raise InputError(f"{where}: error: unknown setting(s) {', '.join(unknown)} (known: {', '.join(SETTINGS)})")
    for key, (kind, env) in SETTINGS.items():
        if os.environ.get(env) not in (None, ""):
            setattr(cfg, key, _convert(key, kind, os.environ[env], env))
            cfg.origin[key] = env
        elif key in llm:
            setattr(cfg, key, _convert(key, kind, llm[key], where))
            cfg.origin[key] = where
    if cfg.api_key_env and not os.environ.get(cfg.api_key_env):
        raise InputError(f"xlate: error: api_key_env names {cfg.api_key_env}, which is not set in the environment")
    if cfg.max_output_tokens <= 0 or (cfg.budget_tokens is not None and cfg.budget_tokens <= 0):
        raise InputError("xlate: error: max_output_tokens and budget_tokens must be positive")
    return cfg


def api_key(cfg: LLMConfig) -> str | None:
    """The key to hand to litellm, read from the environment at call time and never stored."""
    if cfg.api_key_env:
        return os.environ.get(cfg.api_key_env)
    if cfg.api_base:
        # Local servers (vLLM, llama.cpp) take any key, but the OpenAI client insists on one. A provider key
        # (OPENAI_API_KEY...) is not sent to a custom api_base unless api_key_env names it.
        return os.environ.get("XLATE_API_KEY") or "no-key"
    return None  # litellm reads the provider's own variable
