import json

import pytest

from grounded_rag.retrieval.chunking import chunk_document
from grounded_rag.retrieval.ingest import ingest_paths
from grounded_rag.retrieval.loaders import iter_inputs, load_file


def _pdf(text: str | None) -> bytes:
    """A minimal one-page PDF, with a text layer when ``text`` is given."""
    content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode() if text else b""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


def test_markdown_front_matter_title_and_url(tmp_path):
    p = tmp_path / "policy.md"
    p.write_text(
        "---\ntitle: Travel Policy\nurl: https://example.com/p\n---\n# Ignored H1\n\nBody.\n"
    )
    res = load_file(p, "policy")
    (doc,) = res.documents
    assert (doc.title, doc.url, doc.doc_id) == ("Travel Policy", "https://example.com/p", "policy")
    chunks = chunk_document(doc)
    assert chunks[0].start >= doc.body_start and "title:" not in chunks[0].text


def test_html_headings_become_sections(tmp_path):
    p = tmp_path / "spec.html"
    p.write_text(
        "<html><head><title>Spec</title><script>var x=1;</script></head><body>"
        "<nav>menu</nav><h1>Spec</h1><p>Intro.</p><h2>Battery</h2><p>Lasts <b>10 hours</b>.</p>"
        "<h2>Weight</h2><ul><li>480 g</li></ul></body></html>"
    )
    (doc,) = load_file(p, "spec").documents
    assert "var x" not in doc.text and "menu" not in doc.text
    chunks = chunk_document(doc)
    sections = {c.section: c for c in chunks}
    assert sections["Spec > Battery"].text.endswith("Lasts 10 hours.")
    assert "480 g" in sections["Spec > Weight"].text
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text


def test_pdf_with_text_and_without(tmp_path):
    good = tmp_path / "good.pdf"
    good.write_bytes(_pdf("The battery lasts 10 hours."))
    (doc,) = load_file(good, "good").documents
    assert "battery lasts 10 hours" in doc.text
    scanned = tmp_path / "scan.pdf"
    scanned.write_bytes(_pdf(None))
    res = load_file(scanned, "scan")
    assert not res.documents and "without extractable text" in str(res.errors[0])
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"not a pdf at all")
    assert "not a readable PDF" in str(load_file(broken, "broken").errors[0])


def test_jsonl_lines_and_bad_lines(tmp_path):
    p = tmp_path / "docs.jsonl"
    rows = [
        {"id": "d1", "title": "One", "text": "First document.", "url": "https://x/1"},
        "not json",
        {"id": "d2", "text": ""},
        {"title": "no id", "text": "x"},
        {"id": "d1", "title": "dup", "text": "again"},
        {"id": "d3", "text": "Third document."},
    ]
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    res = load_file(p)
    assert [d.doc_id for d in res.documents] == ["d1", "d3"]
    assert res.documents[0].url == "https://x/1" and res.documents[1].title == "d3"
    msgs = [str(e) for e in res.errors]
    assert msgs[0].endswith(
        "docs.jsonl:2: is not valid JSON (Expecting value); one object per line"
    )
    assert ":3:" in msgs[1] and "no 'text'" in msgs[1]
    assert ":4:" in msgs[2] and "no 'id'" in msgs[2]
    assert ":5:" in msgs[3] and "duplicate id" in msgs[3]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.md", b"   \n", "is empty"),
        ("image.png", b"\x89PNG", "unsupported type '.png'"),
        ("latin.txt", b"\xff\xfe\xfa\x00\x81", "not UTF-8"),
        ("missing.md", None, "does not exist"),
    ],
)
def test_bad_files_give_clear_messages(tmp_path, name, data, message):
    p = tmp_path / name
    if data is not None:
        p.write_bytes(data)
    res = load_file(p)
    assert not res.documents
    assert name in str(res.errors[0]) and message in str(res.errors[0])


def test_shift_jis_text_is_decoded(tmp_path):
    p = tmp_path / "sjis.txt"
    p.write_bytes("出張旅費規程\n\n日当は3000円とする。\n".encode("cp932"))
    (doc,) = load_file(p).documents
    assert doc.title == "出張旅費規程" and "日当" in doc.text


def test_directory_walk_ids_and_hidden_files(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x y.md").write_text("# X\n\ntext\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.md").write_text("# H\n")
    (tmp_path / "top.txt").write_text("t\n")
    got = [(p.name, doc_id) for p, doc_id, _ in iter_inputs([tmp_path])]
    assert got == [("top.txt", "top"), ("x y.md", "a/b/x-y")]


def test_bad_files_do_not_stop_the_rest(tmp_path, monkeypatch):
    from test_retrieval_store import HashEmbeddings

    root = tmp_path / "in"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nFine text.\n")
    (root / "empty.txt").write_text("")
    (root / "notes.docx").write_bytes(b"PK")
    report = ingest_paths(
        [root, tmp_path / "nowhere.md"],
        tmp_path / "store",
        embeddings=HashEmbeddings(),
        progress=False,
    )
    assert report.added == ["good"]
    assert not report.ok
    assert any("empty.txt" in e and "is empty" in e for e in report.errors)
    assert any("nowhere.md" in e and "does not exist" in e for e in report.errors)
    assert any(
        "notes.docx" in s for s in report.skipped
    )  # unknown types inside a directory are skipped
