"""Turn files into documents: Markdown, plain text, HTML, PDF and JSON Lines.

Each failure is a :class:`LoadError` naming the file (and line, for JSON Lines) and what
to do; the caller reports it and carries on with the other files. Reading a file's bytes
as text (encoding detection) lives in ``_loader_decode``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import quote

from grounded_rag.retrieval._errors import LoadError
from grounded_rag.retrieval._loader_decode import _read_text
from grounded_rag.retrieval.chunking import Document, Heading

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf", ".jsonl")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.S)
_MD_TITLE = re.compile(r"^ {0,3}#[ \t]+(.+?)[ \t#]*$", re.M)
_ID_UNSAFE = re.compile(r"[\s#]+")


@dataclass
class LoadResult:
    """Documents loaded from one input, and the errors hit on the way."""

    source: str
    """The input file."""
    documents: list[Document]
    """Documents it produced."""
    errors: list[LoadError]
    """Per-file or per-line failures."""


def file_url(rel: str, base_url: str | None = None) -> str:
    """What a reference shows for an ingested file: its path relative to the ingested root.

    With ``base_url`` it is that URL plus the relative path (percent-encoded); without, the
    relative path itself. Never the server's absolute path.
    """
    rel = rel.replace(os.sep, "/").lstrip("/")
    if not base_url:
        return rel
    return base_url.rstrip("/") + "/" + quote(rel)


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//)?")


def public_url(url: str) -> str:
    r"""A reference URL safe to show any client: a local absolute path becomes its file name.

    Web URLs and relative paths pass unchanged; ``/srv/docs/a.md``, ``C:\docs\a.md`` and
    ``file:///srv/docs/a.md`` (from stores built before paths were made relative, or from
    a LangChain loader's ``source``) are cut to ``a.md``.
    """
    if not url:
        return url
    if url.lower().startswith("file:"):
        return PurePosixPath(url.split(":", 1)[1]).name
    if PureWindowsPath(url).drive or url.startswith("\\"):
        return PureWindowsPath(url).name
    if _SCHEME.match(url):
        return url
    if url.startswith(("/", "~")):
        return PurePosixPath(url).name
    return url


def _make_id(rel: str) -> str:
    stem = rel[: -len(Path(rel).suffix)] if Path(rel).suffix else rel
    return _ID_UNSAFE.sub("-", stem.replace(os.sep, "/")).strip("-") or "doc"


def _load_markdown(path: Path, doc_id: str, url: str) -> Document:
    text, encoding = _read_text(path)
    meta: dict[str, str] = {}
    body_start = 0
    if m := _FRONT_MATTER.match(text):
        body_start = m.end()
        for line in m.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip():
                meta[key.strip().lower()] = value.strip().strip("'\"")
    if not text[body_start:].strip():
        raise LoadError(str(path), "has front matter but no body text; nothing to ingest")
    title = meta.get("title") or ""
    if not title and (h := _MD_TITLE.search(text, body_start)):
        title = h.group(1).strip()
    return Document(
        doc_id=doc_id,
        title=title or path.stem,
        text=text,
        url=meta.get("url") or url,
        source=str(path.resolve()),
        body_start=body_start,
        meta=meta,
        encoding=encoding,
    )


def _load_text(path: Path, doc_id: str, url: str) -> Document:
    text, encoding = _read_text(path)
    first = next(line.strip() for line in text.splitlines() if line.strip())
    title = first if len(first) <= 80 else path.stem
    return Document(doc_id, title, text, url=url, source=str(path.resolve()), encoding=encoding)


_BLOCK_TAGS = {
    "p",
    "div",
    "section",
    "article",
    "li",
    "tr",
    "br",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "header",
    "footer",
    "main",
    "aside",
    "figcaption",
}


def _load_html(path: Path, doc_id: str, url: str) -> Document:
    from bs4 import BeautifulSoup, NavigableString, Tag

    raw, encoding = _read_text(path)
    soup = BeautifulSoup(raw, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "nav"]):
        tag.decompose()
    for tag in soup.find_all(_hidden):  # what no reader sees is neither shown nor cited
        if not tag.decomposed:
            tag.decompose()
    parts: list[str] = []
    headings: list[Heading] = []
    length = 0

    def emit(s: str) -> None:
        nonlocal length
        parts.append(s)
        length += len(s)

    def newline() -> None:
        if parts and not parts[-1].endswith("\n"):
            emit("\n")

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) is NavigableString:  # skip comments, doctype, CDATA
                    s = re.sub(r"\s+", " ", str(child))
                    if s.strip():
                        if parts and parts[-1].endswith("\n"):
                            s = s.lstrip()
                        emit(s)
            elif isinstance(child, Tag):
                if re.fullmatch(r"h[1-6]", child.name or ""):
                    label = re.sub(r"\s+", " ", child.get_text(" ")).strip()
                    if label:
                        newline()
                        emit("\n")
                        start = length
                        emit(label)
                        headings.append(
                            Heading(start, int(child.name[1]), label, length, f"h{child.name[1]}")
                        )
                        emit("\n")
                    continue
                block = child.name in _BLOCK_TAGS
                if block:
                    newline()
                walk(child)
                if block:
                    newline()

    body = soup.body or soup
    walk(body)
    text = "".join(parts).strip("\n")
    shift = len("".join(parts)) - len("".join(parts).lstrip("\n"))
    headings = [
        Heading(h.start - shift, h.level, h.text, h.label_end - shift, h.kind) for h in headings
    ]
    if not text.strip():
        raise LoadError(str(path), "has no visible text; nothing to ingest")
    title = (soup.title.get_text().strip() if soup.title else "") or (
        headings[0].text if headings else path.stem
    )
    return Document(
        doc_id, title, text, url=url, source=str(path.resolve()), headings=headings,
        encoding=encoding,
    )


_HIDING_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0*)?"
    r"(?:px|pt|em|rem|%)?\s*(?:!important)?\s*(?:;|$)|opacity\s*:\s*0(?:\.0*)?\s*(?:;|$))",
    re.IGNORECASE)


def _hidden(tag: Any) -> bool:
    """Whether a browser leaves the element out.

    That is the ``hidden`` attribute, or an inline style that hides it (``display:none``,
    ``visibility:hidden``, zero font size or opacity).
    """
    attrs = getattr(tag, "attrs", None) or {}
    if "hidden" in attrs:
        return True
    return bool(_HIDING_STYLE.search(str(attrs.get("style", ""))))


def _load_pdf(path: Path, doc_id: str, url: str) -> Document:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise LoadError(str(path), "is an encrypted PDF; decrypt it first")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except LoadError:
        raise
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise LoadError(
            str(path), f"is not a readable PDF ({exc}); re-export it or convert to text"
        ) from exc
    text = "\n\n".join(p for p in pages if p)
    if not text.strip():
        raise LoadError(
            str(path), "is a PDF without extractable text (scanned images?); run OCR on it first"
        )
    title = (
        reader.metadata.title if reader.metadata and reader.metadata.title else ""
    ) or path.stem
    return Document(doc_id, str(title), text, url=url, source=str(path.resolve()))


def _load_jsonl(path: Path) -> LoadResult:
    text, encoding = _read_text(path)
    docs: list[Document] = []
    errors: list[LoadError] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(LoadError(where, f"is not valid JSON ({exc.msg}); one object per line"))
            continue
        if not isinstance(row, dict):
            errors.append(LoadError(where, "is not a JSON object with id, title, text and url"))
            continue
        doc_id, body = row.get("id"), row.get("text")
        if doc_id is None or str(doc_id).strip() == "":
            errors.append(LoadError(where, "has no 'id' field"))
            continue
        if not isinstance(body, str) or not body.strip():
            errors.append(LoadError(where, f"document {doc_id!r} has no 'text'"))
            continue
        doc_id = _ID_UNSAFE.sub("-", str(doc_id).strip())
        if doc_id in seen:
            errors.append(LoadError(where, f"duplicate id {doc_id!r}; ids must be unique"))
            continue
        seen.add(doc_id)
        docs.append(
            Document(
                doc_id=doc_id,
                title=str(row.get("title") or doc_id),
                text=body,
                url=str(row.get("url") or ""),
                source=str(path.resolve()),
                encoding=encoding,
            )
        )
    if not docs and not errors:
        errors.append(LoadError(str(path), "holds no documents"))
    return LoadResult(str(path.resolve()), docs, errors)


def load_file(path: Path, doc_id: str | None = None, *, url: str | None = None) -> LoadResult:
    """Load one file; errors are returned in the result, never raised.

    ``url`` is what references show for it (default: the file name; see :func:`file_url`).
    """
    suffix = path.suffix.lower()
    doc_id = doc_id or _make_id(path.name)
    url = path.name if url is None else url
    try:
        if not path.exists():
            raise LoadError(str(path), "does not exist")
        if suffix == ".jsonl":
            return _load_jsonl(path)
        if suffix in (".md", ".markdown"):
            doc = _load_markdown(path, doc_id, url)
        elif suffix in (".txt", ".text"):
            doc = _load_text(path, doc_id, url)
        elif suffix in (".html", ".htm"):
            doc = _load_html(path, doc_id, url)
        elif suffix == ".pdf":
            doc = _load_pdf(path, doc_id, url)
        else:
            raise LoadError(
                str(path),
                f"has an unsupported type {suffix or '(no extension)'!r}; supported: "
                + ", ".join(SUPPORTED_SUFFIXES),
            )
    except LoadError as exc:
        return LoadResult(str(path.resolve()), [], [exc])
    return LoadResult(str(path.resolve()), [doc], [])


def iter_inputs(paths: list[str | os.PathLike[str]]) -> Iterator[tuple[Path, str | None, bool]]:
    """Yield ``(file, doc_id, explicit)`` for each input; directories are walked recursively.

    Inside a directory the id is the path relative to it without extension, so the same
    tree ingested from the same root always yields the same ids. Hidden entries are skipped.
    """
    for raw in paths:
        root = Path(raw)
        if root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith("."):
                        continue
                    file = Path(dirpath) / name
                    rel = file.relative_to(root).as_posix()
                    yield file, _make_id(rel), False
        else:
            yield root, None, True
