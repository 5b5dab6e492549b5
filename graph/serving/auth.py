"""Who is calling: API keys with roles (asker, reviewer, admin), checked before any route.

Keys live in a JSON file (``grounded-rag keys``; ``serve --keys FILE`` or
``$GROUNDED_RAG_KEYS``): only each key's SHA-256 is stored, with its name, role and dates.
The file is read again when it changes, so a revoked key stops working in every worker
without a restart. With keys configured, every request but ``/healthz``, ``/metrics`` and
the page's HTML carries ``Authorization: Bearer KEY`` (or ``X-API-Key: KEY``): none or an
unknown or revoked key gets 401; an asker on ``/reviews`` gets 403. The identity goes to the
routes in ``scope["state"]["identity"]`` (a review records who decided).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["KEYS_ENV", "OPEN_PATHS", "ROLES", "AuthMiddleware", "Identity", "KeyStore",
           "KeyStoreError", "is_loopback", "needed_role"]

KEYS_ENV = "GROUNDED_RAG_KEYS"
"""The key file ``serve`` and ``grounded-rag keys`` use when ``--keys`` is not given."""

ROLES = ("asker", "reviewer", "admin")
"""Each role may do what the ones before it may."""

OPEN_PATHS = frozenset({"/healthz", "/metrics", "/"})
"""Paths served without a key: health, metrics and the page's HTML (which holds no data)."""
PAGE_ASSETS = "/web/"
"""The page's script and style sheet (no data either): served without a key too."""

_KEY_PREFIX = "grag_"


class KeyStoreError(ValueError):
    """A key file that cannot be used, or a name or role that is not valid."""


@dataclass(frozen=True)
class Identity:
    """The caller a key belongs to."""

    name: str
    role: str

    def may(self, role: str) -> bool:
        """Whether this identity holds ``role`` or a higher one."""
        return ROLES.index(self.role) >= ROLES.index(role)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class KeyStore:
    """The key file: create, list and revoke keys; identify a presented key."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, Identity] = {}

    # -- the file ---------------------------------------------------------------------------

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            keys = data["keys"]
            assert isinstance(keys, list)
        except (OSError, ValueError, KeyError, AssertionError, TypeError) as exc:
            raise KeyStoreError(f"{self.path} is not a grounded-rag key file ({exc}); fix "
                                "or move it, then create keys with `grounded-rag keys create`"
                                ) from None
        return keys

    def _write(self, keys: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"keys": keys}, out, ensure_ascii=False, indent=1)
        os.replace(tmp, self.path)  # readers see the old file or the new one, never half

    # -- commands ---------------------------------------------------------------------------

    def create(self, name: str, role: str) -> str:
        """Add a key for ``name`` with ``role``; the key itself (shown once, never stored)."""
        name = name.strip()
        if not name or len(name) > 100:
            raise KeyStoreError("a key's name must be 1-100 characters")
        if role not in ROLES:
            raise KeyStoreError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
        with self._lock:
            keys = self._read()
            if any(k["name"] == name and not k.get("revoked_at") for k in keys):
                raise KeyStoreError(f"a key named {name!r} exists; revoke it first or pick "
                                    "another name")
            key = _KEY_PREFIX + secrets.token_urlsafe(32)
            keys.append({"name": name, "role": role, "sha256": _digest(key),
                         "created_at": _now(), "revoked_at": None})
            self._write(keys)
        return key

    def revoke(self, name: str) -> int:
        """Revoke every live key named ``name``; how many were revoked."""
        with self._lock:
            keys = self._read()
            revoked = 0
            for k in keys:
                if k["name"] == name and not k.get("revoked_at"):
                    k["revoked_at"] = _now()
                    revoked += 1
            if revoked:
                self._write(keys)
        return revoked

    def list(self) -> list[dict[str, Any]]:
        """Every key's name, role and dates (never its digest)."""
        return [{k: v for k, v in key.items() if k != "sha256"} for key in self._read()]

    def has_keys(self) -> bool:
        """Whether any key is live."""
        return any(not k.get("revoked_at") for k in self._read())

    # -- serving ----------------------------------------------------------------------------

    def identify(self, key: str) -> Identity | None:
        """The identity of a live ``key``, or None."""
        self._refresh()
        digest = _digest(key)
        for known, identity in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                return identity
        return None

    def _refresh(self) -> None:
        try:
            stat = self.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = (0, 0)
        if stamp == self._stamp:
            return
        with self._lock:
            try:
                keys = self._read()
            except KeyStoreError:
                keys = []  # a broken file lets nobody in; the server says so in its log
            self._by_digest = {k["sha256"]: Identity(k["name"], k["role"])
                               for k in keys if not k.get("revoked_at")}
            self._stamp = stamp


def needed_role(method: str, path: str) -> str | None:
    """The role a request needs: None for the open paths, else asker or reviewer."""
    if path in OPEN_PATHS or (method in ("GET", "HEAD") and path.startswith(PAGE_ASSETS)
                              and ".." not in path):
        return None
    if path == "/reviews" or path.startswith("/reviews/"):
        return "reviewer"
    return "asker"


def presented_key(headers: list[tuple[bytes, bytes]]) -> str:
    """The key in ``Authorization: Bearer`` or ``X-API-Key``, or ``""``."""
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
        elif lowered == b"x-api-key" and value.strip():
            return value.decode("latin-1").strip()
    return ""


class AuthMiddleware:
    """401 without a live key, 403 without the role; the identity into the request state."""

    def __init__(self, app: Any, *, keys: KeyStore) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Check the caller of an HTTP request; pass lifespan and the open paths through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        role = needed_role(scope.get("method", "GET"), scope.get("path", ""))
        if role is None:
            await self.app(scope, receive, send)
            return
        key = presented_key(scope.get("headers", []))
        identity = self.keys.identify(key) if key else None
        if identity is None:
            detail = ("an API key is required: send 'Authorization: Bearer KEY' (keys come from "
                      "`grounded-rag keys create`)" if not key else
                      "this API key is not valid or was revoked")
            await _refuse(send, 401, detail, [(b"www-authenticate", b"Bearer")])
            return
        if not identity.may(role):
            await _refuse(send, 403, f"the key {identity.name!r} is an {identity.role}; this "
                          f"needs a {role} key", [])
            return
        scope.setdefault("state", {})["identity"] = identity
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, detail: str,
                  headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only."""
    import ipaddress

    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
