"""The load test's clients: HTTP/1.1 spoken directly over asyncio streams, or httpx."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit


class RawHTTP:
    """One keep-alive HTTP/1.1 connection, spoken directly over asyncio streams.

    The load generator shares the server's CPU: a full client library costs milliseconds of
    CPU per request, which would be counted as the server's latency (64 requests at once
    through httpx take ~380 ms at p99 here even from a bare ASGI app that answers 422 at
    once). This costs a fraction of that, so what is measured is the server.
    """

    def __init__(self, url: str) -> None:
        parsed = urlsplit(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POST ``body`` as JSON; (status, response body)."""
        try:
            return await self._post(path, body)
        except BaseException:
            await self.aclose()  # a broken or abandoned exchange: next time, a new connection
            raise

    async def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._reader, self._writer
        assert reader is not None
        writer.write(f"POST {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
                     f"content-type: application/json\r\ncontent-length: {len(body)}"
                     "\r\n\r\n".encode() + body)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split()[1])
        length, chunked, close = None, False, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = "chunked" in value
            elif name == "connection":
                close = value == "close"
        if chunked:
            parts = []
            while size := int((await reader.readline()).split(b";")[0], 16):
                parts.append(await reader.readexactly(size + 2))
            await reader.readline()
            data = b"".join(part[:-2] for part in parts)
        elif length is not None:
            data = await reader.readexactly(length)
        else:
            data, close = await reader.read(), True
        if close:
            await self.aclose()
        return status, data

    async def aclose(self) -> None:
        """Close the connection (the next request opens a new one)."""
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


class HttpxPoster:
    """The same interface over a shared ``httpx.AsyncClient`` (``--client httpx``)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POST ``body`` as JSON; (status, response body)."""
        response = await self.client.post(path, content=body,
                                          headers={"content-type": "application/json"})
        return response.status_code, response.content

    async def aclose(self) -> None:
        """Nothing: the shared client closes its connections."""


@contextlib.asynccontextmanager
async def posters(url: str, kind: str, count: int) -> AsyncIterator[list[Any]]:
    """``count`` clients that each send one request at a time."""
    if kind == "raw":
        raw = [RawHTTP(url) for _ in range(count)]
        try:
            yield raw
        finally:
            for poster in raw:
                await poster.aclose()
        return
    import httpx

    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=None) as client:
        yield [HttpxPoster(client) for _ in range(count)]
