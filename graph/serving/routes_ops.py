"""The cited-answer page at ``/`` (and ``/web``), ``/healthz`` and Prometheus ``/metrics``."""

from __future__ import annotations

import asyncio
import os
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from langgraph.checkpoint.base import BaseCheckpointSaver

from grounded_rag.serving.checkpoints import checkpointer_kind
from grounded_rag.serving.limits import Gate
from grounded_rag.serving.metrics import CONTENT_TYPE_LATEST
from grounded_rag.serving.served import Served

__all__ = ["package_version", "register_ops", "web_dir"]


def web_dir() -> Path:
    """Where the installed page lives (``grounded_rag/web``)."""
    return Path(str(resources.files("grounded_rag") / "web"))


def package_version() -> str:
    """The installed package's version."""
    from grounded_rag import __version__

    return __version__


def register_ops(app: FastAPI, served: Served, gate: Gate) -> None:
    """The page and its assets, then ``/healthz`` and ``/metrics``."""
    served_graph = served.graph
    page_dir = web_dir()
    if page_dir.is_dir():
        app.mount("/web", StaticFiles(directory=str(page_dir)), name="web")

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        page = page_dir / "index.html"
        if not page.is_file():
            raise HTTPException(404, "the page is not installed (grounded_rag/web is missing)")
        return FileResponse(page, media_type="text/html; charset=utf-8")

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> JSONResponse:
        """Liveness, a checkpointer round trip, this worker's pid, load and admitted requests."""
        saver = served_graph.checkpointer
        body: dict[str, Any] = {"status": "ok", "graph": served_graph.name,
                                "checkpointer": checkpointer_kind(served.checkpointer_spec),
                                "version": package_version(), "pid": os.getpid(),
                                "in_flight": gate.in_flight, "queued": gate.queued,
                                "admitted": gate.admitted}
        try:
            if not isinstance(saver, BaseCheckpointSaver):
                raise RuntimeError("no checkpointer is open")
            await asyncio.wait_for(saver.aget_tuple({"configurable": {
                "thread_id": "__healthz__", "checkpoint_ns": ""}}), timeout=5)
        except Exception as exc:  # report, don't crash: this is what health checks are for
            body.update(status="unavailable", error=f"{type(exc).__name__}: {exc}")
            return JSONResponse(body, status_code=503)
        return JSONResponse(body)

    @app.get("/metrics", tags=["ops"])
    async def metrics_endpoint() -> Response:
        """Prometheus text exposition (summed over the server's workers when it has several)."""
        return Response(served.metrics.render(), media_type=CONTENT_TYPE_LATEST)
