"""One chat completion through litellm (any provider, or a local OpenAI-compatible server via api_base), with
the on-disk cache in front and usage/cost accounting behind. Failures come back as data, never as exceptions."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from xlate.errors import ToolchainMissing
from xlate.translate.llm.cache import CompletionCache
from xlate.translate.llm.config import LLMConfig, api_key
from xlate.translate.llm.redact import redact

Message = dict[str, str]


@dataclass
class Completion:
    content: str
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    cost_known: bool
    cached: bool
    error: str | None = None  # no answer: the provider's error, redacted


def prompt_hash(messages: list[Message]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _litellm():
    # The price table ships with litellm; never fetch it over the network (offline machines, CI).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise ToolchainMissing("litellm is not installed (needed by the LLM translator)", "pip install 'xlate[llm]'") from None
    litellm.suppress_debug_info = True
    litellm.drop_params = True  # providers that reject e.g. temperature get the request without it
    if hasattr(litellm, "telemetry"):
        litellm.telemetry = False
    return litellm


def _cost(cfg: LLMConfig, response: Any, tokens_in: int, tokens_out: int) -> tuple[float, bool]:
    if cfg.price_in_per_mtok is not None or cfg.price_out_per_mtok is not None:
        return (tokens_in * (cfg.price_in_per_mtok or 0.0) + tokens_out * (cfg.price_out_per_mtok or 0.0)) / 1e6, True
    try:
        cost = _litellm().completion_cost(completion_response=response)
        return float(cost or 0.0), cost is not None
    except Exception:  # model not in litellm's price table (local servers): unknown, counted as 0
        return 0.0, False


class Client:
    """Completions for one configuration; `calls` counts requests that went over the network."""

    def __init__(self, cfg: LLMConfig, cache: CompletionCache | None = None):
        self.cfg = cfg
        self.cache = cache if cache is not None else (CompletionCache() if cfg.cache else None)
        self.calls = 0

    def complete(self, messages: list[Message], phash: str, max_tokens: int | None = None) -> Completion:
        cfg = self.cfg
        if self.cache is not None:
            hit = self.cache.get(cfg.model, phash, cfg.temperature)
            if hit is not None:
                return Completion(hit["content"], hit.get("finish_reason"), int(hit.get("tokens_in", 0)),
                                  int(hit.get("tokens_out", 0)), float(hit.get("cost_usd", 0.0)),
                                  bool(hit.get("cost_known", False)), True)
        if cfg.offline:
            return Completion("", None, 0, 0, 0.0, True, False, error="offline: no cached completion for this prompt")
        litellm = _litellm()
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": cfg.temperature,
                                  "max_tokens": max_tokens or cfg.max_output_tokens, "timeout": cfg.request_timeout,
                                  "num_retries": 0, "max_retries": 0}
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        key = api_key(cfg)
        if key:
            kwargs["api_key"] = key
        self.calls += 1
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:
            extra = (cfg.api_key_env,) if cfg.api_key_env else ()
            return Completion("", None, 0, 0, 0.0, True, False,
                              error=redact(f"{type(exc).__name__}: {exc}", extra)[:1000])
        choice = response.choices[0] if getattr(response, "choices", None) else None
        content = (getattr(getattr(choice, "message", None), "content", None) or "") if choice else ""
        content = redact(content, (cfg.api_key_env,) if cfg.api_key_env else ())
        finish = getattr(choice, "finish_reason", None) if choice else None
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        cost, known = _cost(cfg, response, tokens_in, tokens_out)
        out = Completion(content, finish, tokens_in, tokens_out, cost, known, False)
        if self.cache is not None:
            self.cache.put(cfg.model, phash, cfg.temperature,
                           {"content": content, "finish_reason": finish, "tokens_in": tokens_in,
                            "tokens_out": tokens_out, "cost_usd": cost, "cost_known": known})
        return out
