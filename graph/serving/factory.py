r"""The serving app built from environment variables: one import string for every worker.

``grounded-rag serve --workers N`` runs N uvicorn worker processes; each builds its own app
by calling :func:`app_from_env` (uvicorn's ``--factory``), so the options travel as
environment variables. The same works without the CLI::

    GROUNDED_RAG_SERVE_CHECKPOINTER=postgresql://postgres@127.0.0.1:5432/test \\
    GROUNDED_RAG_STORE=/srv/store GROUNDED_RAG_CHROMA_URL=http://127.0.0.1:8001 \\
        uvicorn --factory grounded_rag.serving.factory:app_from_env --workers 4

Workers share what lives outside them: the checkpointer's database (reviews, deferred
verifications, threads), the Chroma server, and the store (a directory on one machine, or a
``postgresql://`` store for several), which they only read and which ``grounded-rag ingest``
switches to a new generation atomically.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grounded_rag.questions import MAX_QUESTION_CHARS
from grounded_rag.retrieval.store import CHROMA_ENV, STORE_ENV
from grounded_rag.serving.limits import Limits

__all__ = ["APP_FACTORY", "ServeOptions", "app_from_env", "build_app", "load_graph"]

APP_FACTORY = "grounded_rag.serving.factory:app_from_env"
"""The import string uvicorn workers build their app from."""

_ENV = {
    "graph": "GROUNDED_RAG_SERVE_GRAPH",
    "checkpointer": "GROUNDED_RAG_SERVE_CHECKPOINTER",
    "store": STORE_ENV,
    "chroma_url": CHROMA_ENV,
    "prices": "GROUNDED_RAG_SERVE_PRICES",
    "max_question_chars": "GROUNDED_RAG_SERVE_MAX_QUESTION_CHARS",
    "review_mode": "GROUNDED_RAG_SERVE_REVIEW_MODE",
    "durability": "GROUNDED_RAG_SERVE_DURABILITY",
    "warm_up": "GROUNDED_RAG_SERVE_WARM_UP",
    "keys": "GROUNDED_RAG_SERVE_KEYS",
}


@dataclass(frozen=True)
class ServeOptions:
    """What ``grounded-rag serve`` configures, the same in every worker."""

    graph: str = ""
    """``module:attribute`` of a graph, builder or zero-argument function returning one;
    empty = the package's workflow."""
    checkpointer: str | None = None
    """Checkpointer spec (``sqlite:PATH``, ``postgresql://...``, ``memory``); None = SQLite
    next to a store directory, the store's database for a ``postgresql://`` store."""
    store: str | None = None
    """Store answered from, a directory or a ``postgresql://`` URL (None:
    ``$GROUNDED_RAG_STORE`` or ``./.grounded-rag``)."""
    chroma_url: str | None = None
    """Chroma server holding the store's vectors (None: the store's embedded Chroma)."""
    prices: str | None = None
    """Price table file overlaid on the built-in one."""
    max_question_chars: int = MAX_QUESTION_CHARS
    """Longest question accepted."""
    review_mode: bool = False
    """Pause low-confidence answers for a person by default."""
    limits: Limits = field(default_factory=Limits)
    """Body size, runs in flight, queue and per-client limits."""
    durability: str = "exit"
    """When served runs write checkpoints: ``exit``, ``async`` or ``sync`` (LangGraph's)."""
    keys: str | None = None
    """API key file (:mod:`grounded_rag.serving.auth`); None: no keys are asked for."""
    warm_up: bool = True
    """Answer a throwaway question per language at start (the package's workflow on the local
    model only), so the first user's answer is as fast as the next."""

    def to_env(self) -> dict[str, str]:
        """Environment variables that :meth:`from_env` reads back into these options."""
        env = {_ENV["graph"]: self.graph, _ENV["checkpointer"]: self.checkpointer or "",
               _ENV["prices"]: self.prices or "",
               _ENV["max_question_chars"]: str(self.max_question_chars),
               _ENV["review_mode"]: "1" if self.review_mode else "0",
               _ENV["durability"]: self.durability,
               _ENV["warm_up"]: "1" if self.warm_up else "0", **self.limits.to_env()}
        if self.keys:
            env[_ENV["keys"]] = self.keys
        if self.store:
            env[_ENV["store"]] = self.store
        if self.chroma_url:
            env[_ENV["chroma_url"]] = self.chroma_url
        return env

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServeOptions:
        """The options a worker was started with."""
        env = os.environ if environ is None else environ
        chars = env.get(_ENV["max_question_chars"]) or str(MAX_QUESTION_CHARS)
        try:
            max_chars = int(chars)
        except ValueError:
            raise ValueError(f"{_ENV['max_question_chars']}={chars!r} is not a whole "
                             "number") from None
        return cls(graph=env.get(_ENV["graph"], ""),
                   checkpointer=env.get(_ENV["checkpointer"]) or None,
                   store=env.get(_ENV["store"]) or None,
                   chroma_url=env.get(_ENV["chroma_url"]) or None,
                   prices=env.get(_ENV["prices"]) or None,
                   max_question_chars=max_chars,
                   review_mode=env.get(_ENV["review_mode"], "0") in ("1", "true", "yes"),
                   limits=Limits.from_env(env),
                   durability=env.get(_ENV["durability"]) or "exit",
                   warm_up=env.get(_ENV["warm_up"], "1") in ("1", "true", "yes"),
                   keys=env.get(_ENV["keys"]) or None)


def load_graph(spec: str) -> Any:
    """The graph named by ``module:attribute`` (a zero-argument function is called)."""
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--graph {spec!r}: use module:attribute, e.g. my_app.rag:graph")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"--graph {spec!r}: {exc}") from None
    if not isinstance(target, StateGraph | Pregel) and callable(target):
        target = target()
    if not isinstance(target, StateGraph | Pregel):
        raise ValueError(f"--graph {spec!r} is a {type(target).__name__}, not a graph or a "
                         "builder")
    return target


def build_app(options: ServeOptions) -> Any:
    """The serving app for ``options``.

    The graph opens its store by the ``store_dir`` setting and takes the Chroma server from
    ``$GROUNDED_RAG_CHROMA_URL`` (no setting names it). Workers get that variable from
    :meth:`ServeOptions.to_env`; an app built in this process (one worker, or your own
    code) needs it set here, or ``chroma_url`` would be dropped.
    """
    from grounded_rag.serving.app import create_app
    from grounded_rag.serving.served import check_durability

    durability = check_durability(options.durability)
    if options.chroma_url:
        os.environ[CHROMA_ENV] = options.chroma_url
    graph = load_graph(options.graph) if options.graph else None
    return create_app(graph, checkpointer=options.checkpointer, store_dir=options.store,
                      prices=options.prices, max_question_chars=options.max_question_chars,
                      settings={"review_mode": True} if options.review_mode else None,
                      limits=options.limits, durability=durability,
                      warm_up=options.warm_up and not options.graph,
                      keys=options.keys)


def app_from_env() -> Any:
    """The app factory every uvicorn worker calls (options from the environment)."""
    return build_app(ServeOptions.from_env())
