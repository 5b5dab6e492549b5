"""Section-aware chunking with stable ids and exact character offsets.

A section starts at a Markdown heading (``#`` .. ``######``), a Japanese article or
chapter heading (``第3条``, ``第2章``, ``第1節``), an ``Article 5`` / ``Section 2`` line,
or a short numbered heading line (``3.``, ``2.1 Scope``). Text before the first heading is
section 0. Sections are numbered in document order, so ids (``<doc_id>#sec<N>``, plus
``-p<M>`` when a long section is split into parts) are stable as long as the document's
heading structure does not change. Every chunk's ``text`` is exactly
``document_text[start:end]``, so quotes located in a chunk map back into the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEFAULT_MAX_CHARS = 900
"""Sections longer than this are split into parts (MiniLM truncates at 256 word pieces)."""

_KANJI_NUM = "0-9０-９一二三四五六七八九十百千〇"
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_JA_ARTICLE = re.compile(
    rf"^[ \t　]*(第[{_KANJI_NUM}]+(編|章|節|款|条)(の[{_KANJI_NUM}]+)?)"
    r"([ \t　]*[（(][^）)\n]{1,40}[）)])?"
)
_EN_ARTICLE = re.compile(
    r"^[ \t]*((?:ARTICLE|Article|SECTION|Section|CHAPTER|Chapter)[ \t]+[0-9IVXLC]+[.:]?)(.*)$"
)
_NUMBERED = re.compile(r"^[ \t]*(\d{1,2}(?:\.\d{1,2}){0,3})(\.|\))?[ \t]+(\S.{0,78})$")
_JA_LEVEL = {"編": 1, "章": 2, "節": 3, "款": 4, "条": 5}
_SENTENCE_END = re.compile(r"(?<=[。．！？!?])|(?<=\.)(?=\s)")


@dataclass(frozen=True)
class Heading:
    """A section boundary found in the text."""

    start: int
    """Offset where the heading line starts (the section starts here)."""
    level: int
    """Nesting level; smaller is outer."""
    text: str
    """Heading text without markup."""
    label_end: int
    """Offset where the heading label ends (body text may follow on the same line)."""
    kind: str = ""
    """Numbering family (``ja-条``, ``md2``...); a heading closes open ones of its kind."""


@dataclass(frozen=True)
class Chunk:
    """One indexed unit of a document."""

    id: str
    """``<doc_id>#sec<N>`` or ``<doc_id>#sec<N>-p<M>``."""
    doc_id: str
    """Owning document id."""
    title: str
    """Document title, plus the section heading when there is one."""
    url: str
    """URL or file path of the document."""
    section: str
    """Section path such as ``Expenses > Taxis`` (empty for the preamble)."""
    text: str
    """Exactly ``document_text[start:end]``."""
    start: int
    """Start offset in the document text."""
    end: int
    """End offset (exclusive) in the document text."""


@dataclass
class Document:
    """A loaded document, ready to chunk."""

    doc_id: str
    """Stable id (file path relative to the ingest root without extension, or jsonl ``id``)."""
    title: str
    """Human-readable title."""
    text: str
    """Full document text; chunk offsets point into it."""
    url: str = ""
    """URL or path shown in citations."""
    source: str = ""
    """The file the document came from (used by ``--prune``)."""
    body_start: int = 0
    """Offset where indexable text starts (after front matter)."""
    headings: list[Heading] | None = None
    """Pre-computed headings (HTML loader); detected from the text when None."""
    meta: dict[str, str] = field(default_factory=dict)
    """Extra metadata kept with the chunks."""
    encoding: str = "utf-8"
    """Text encoding the file was read in (detected when it was not UTF-8)."""


def _is_numbered_heading(line: str, match: re.Match[str]) -> bool:
    rest = match.group(3).rstrip()
    if rest.endswith((".", "。", ",", "、", ":", "：", ";")):
        return False
    # "1. Buy milk" list items are headings too by shape; require a capital/kana start or
    # a dotted number (2.1) to cut false positives on plain lists.
    return bool(match.group(1).count(".") or rest[:1].isupper() or not rest[:1].isascii())


def _kind(label: str, fallback: str) -> str:
    if m := _JA_ARTICLE.match(label):
        return f"ja-{m.group(2)}"
    if m := _EN_ARTICLE.match(label):
        return "en-" + m.group(1).split()[0].lower()
    if m := _NUMBERED.match(label):
        return f"num{m.group(1).count('.')}"
    return fallback


def detect_headings(text: str, body_start: int = 0) -> list[Heading]:
    """Find section headings in Markdown / plain text."""
    headings: list[Heading] = []
    in_fence = False
    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        if start < body_start:
            continue
        stripped = line.rstrip("\r\n")
        line_end = start + len(stripped)
        if _FENCE.match(stripped):
            in_fence = not in_fence
            continue
        if in_fence or not stripped.strip():
            continue
        if m := _MD_HEADING.match(stripped):
            label = m.group(2).strip()
            level = len(m.group(1))
            headings.append(Heading(start, level, label, line_end, _kind(label, f"md{level}")))
        elif m := _JA_ARTICLE.match(stripped):
            label = m.group(1) + (m.group(4) or "").strip(" \t　")
            level = 10 + _JA_LEVEL[m.group(2)]
            headings.append(Heading(start, level, label, start + m.end(), f"ja-{m.group(2)}"))
        elif m := _EN_ARTICLE.match(stripped):
            tail = m.group(2).strip(" .:-—")
            short = bool(tail) and len(tail) <= 60
            label = m.group(1).rstrip(".:") + (f" {tail}" if short else "")
            end = line_end if short or not tail else start + m.end(1)
            kind = "en-" + m.group(1).split()[0].lower()
            headings.append(Heading(start, 8, label, end, kind))
        elif (m := _NUMBERED.match(stripped)) and _is_numbered_heading(stripped, m):
            kind = f"num{m.group(1).count('.')}"
            headings.append(
                Heading(start, 20 + m.group(1).count("."), stripped.strip(), line_end, kind)
            )
    return headings


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_points(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` into parts of at most ``max_chars`` at natural breaks."""
    parts: list[tuple[int, int]] = []
    while end - start > max_chars:
        window = text[start : start + max_chars]
        cut = -1
        for sep in ("\n\n", "\n"):
            i = window.rfind(sep, max_chars // 3)
            if i > 0:
                cut = i + len(sep)
                break
        if cut < 0:
            ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() > max_chars // 3]
            cut = ends[-1] if ends else -1
        if cut < 0:
            i = window.rfind(" ", max_chars // 3)
            cut = i + 1 if i > 0 else max_chars
        s, e = _trim(text, start, start + cut)
        if e > s:
            parts.append((s, e))
        start += cut
    s, e = _trim(text, start, end)
    if e > s:
        parts.append((s, e))
    return parts


def chunk_document(doc: Document, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Split a document into section chunks with stable ids and exact offsets."""
    text = doc.text
    headings = doc.headings if doc.headings is not None else detect_headings(text, doc.body_start)
    bounds: list[tuple[int, Heading | None]] = [(doc.body_start, None)]
    bounds += [(h.start, h) for h in headings]
    chunks: list[Chunk] = []
    stack: list[Heading] = []
    for number, (sec_start, heading) in enumerate(bounds):
        sec_end = bounds[number + 1][0] if number + 1 < len(bounds) else len(text)
        if heading is not None:
            if any(h.kind == heading.kind for h in stack):
                while stack.pop().kind != heading.kind:
                    pass
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            stack.append(heading)
        path = " > ".join(h.text for h in stack)
        s, e = _trim(text, sec_start, sec_end)
        if e <= s:
            continue
        if heading is not None and not text[heading.label_end : e].strip(" \t\r\n　#"):
            continue  # a heading with no body of its own (its children carry the text)
        parts = _split_points(text, s, e, max_chars)
        title = f"{doc.title} — {heading.text}" if heading is not None else doc.title
        for part_no, (ps, pe) in enumerate(parts, start=1):
            suffix = f"-p{part_no}" if len(parts) > 1 else ""
            chunks.append(
                Chunk(
                    id=f"{doc.doc_id}#sec{number}{suffix}",
                    doc_id=doc.doc_id,
                    title=title,
                    url=doc.url,
                    section=path,
                    text=text[ps:pe],
                    start=ps,
                    end=pe,
                )
            )
    return chunks


def index_text(chunk: Chunk) -> str:
    """Text that is embedded and BM25-indexed: title and section path give parts context."""
    return (
        f"{chunk.title}\n{chunk.section}\n{chunk.text}"
        if chunk.section
        else f"{chunk.title}\n{chunk.text}"
    )
