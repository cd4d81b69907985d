"""The engine: ``LLMEngine`` (the synchronous step loop) and ``AsyncLLMEngine`` (its asyncio front on a
thread of its own), configured by ``runtime.api.EngineConfig``. Importing this package loads JAX; the
JAX-free contract (configs, params, outputs, errors) is ``runtime.api``."""

from runtime.api import EngineConfig, EngineStats, RequestError, RequestOutput, SamplingParams
from runtime.engine.async_engine import AsyncLLMEngine
from runtime.engine.builder import KVCachePlan, plan_kv_cache
from runtime.engine.llm_engine import LLMEngine

__all__ = [
    "AsyncLLMEngine",
    "EngineConfig",
    "EngineStats",
    "KVCachePlan",
    "LLMEngine",
    "RequestError",
    "RequestOutput",
    "SamplingParams",
    "plan_kv_cache",
]
