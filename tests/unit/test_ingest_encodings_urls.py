"""Ingesting text that is not UTF-8, and references that never show the server's paths."""

from __future__ import annotations

import random

import pytest

from grounded_rag.cli import main
from grounded_rag.retrieval.ingest import ingest_paths
from grounded_rag.retrieval.loaders import file_url, load_file, public_url
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer, evidence

FRENCH = ("Café au lait. Le résumé de la réunion est prêt ; nous étions à l'hôtel près de la "
          "gare. La durée de la batterie est de dix heures.\n")
QUOTES = "“Smart quotes” — and an em dash… The battery costs €5 and lasts ten hours.\n"
JAPANESE = "本契約の有効期間は2025年4月1日から2026年3月31日までとする。\n"


@pytest.mark.parametrize(("text", "codec", "reported"), [
    (FRENCH, "latin-1", "cp1252"),
    (QUOTES, "cp1252", "cp1252"),
    ("Größe und Maß: Die Straße ist schön. Übermäßig grüne Bäume.\n", "latin-1", "cp1252"),
    (JAPANESE, "euc_jp", "euc_jp"),
    (JAPANESE + "在宅勤務手当は月に5,000円を支給する。\n", "cp932", "cp932"),
    ("Это русский текст для проверки кодировки.\n", "cp1251", "cp1251"),
    ("이것은 인코딩 감지를 위한 한국어 문장입니다. 배터리는 열 시간 지속됩니다.\n", "cp949",
     "cp949"),
    (JAPANESE, "iso2022_jp", "iso2022_jp"),
    ("Le résumé est prêt.\n", "latin-1", "cp1252"),
])
def test_non_utf8_text_is_read_in_the_detected_encoding(tmp_path, text, codec, reported):
    path = tmp_path / "notes.txt"
    path.write_bytes(text.encode(codec))
    result = load_file(path)
    assert not result.errors, result.errors
    (doc,) = result.documents
    assert doc.text == text
    assert doc.encoding == reported


def test_utf8_stays_utf8(tmp_path):
    path = tmp_path / "a.md"
    path.write_text("# Café\n\nUTF-8 text.\n", encoding="utf-8")
    assert load_file(path).documents[0].encoding == "utf-8"


@pytest.mark.parametrize("data", [
    bytes(range(256)) * 8,                                   # binary
    random.Random(7).randbytes(600),                         # noise
    "有効期間\n".encode("cp932"),                             # reads as well in Korean
    "한국어\n".encode("cp949"),                                # ... or in Japanese
    "זהו טקסט בעברית לבדיקת קידוד התווים.\n".encode("cp1255"),  # many code pages fit
])
def test_encoding_that_cannot_be_told_is_refused(tmp_path, data):
    path = tmp_path / "unknown.txt"
    path.write_bytes(data)
    result = load_file(path)
    assert not result.documents
    message = str(result.errors[0])
    assert "unknown.txt" in message and "could not be told with confidence" in message
    assert "convert it to UTF-8" in message


def test_ingest_reports_the_encoding_used(tmp_path, capsys):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "french.txt").write_bytes(FRENCH.encode("latin-1"))
    (root / "plain.md").write_text("# Plain\n\nUTF-8.\n", encoding="utf-8")
    store = tmp_path / "store"
    assert main(["ingest", str(root), "--store", str(store), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"note: {root / 'french.txt'}: not UTF-8, read as cp1252" in captured.err
    assert captured.out.startswith("2 added, ")
    assert main(["ingest", str(root), "--store", str(store), "--no-progress", "--json"]) == 0
    report = __import__("json").loads(capsys.readouterr().out)
    assert report["encodings"] == {str(root / "french.txt"): "cp1252"}


# -- references: relative to the ingested root, never absolute -----------------------------------


def test_file_url_and_public_url():
    assert file_url("sub/a b.md") == "sub/a b.md"
    assert file_url("sub/a b.md", "https://docs.example.com/hb/") == (
        "https://docs.example.com/hb/sub/a%20b.md")
    assert public_url("/srv/company/secret/docs/contract.md") == "contract.md"
    assert public_url("file:///srv/docs/contract.md") == "contract.md"
    assert public_url("C:\\Users\\me\\docs\\contract.md") == "contract.md"
    assert public_url("~/docs/contract.md") == "contract.md"
    for kept in ("https://example.com/a.md", "sub/a.md", "a.md", ""):
        assert public_url(kept) == kept


def test_ingested_references_are_relative_to_the_root(tmp_path):
    from test_retrieval_store import HashEmbeddings

    from grounded_rag.retrieval import open_retriever

    root = tmp_path / "handbook"
    (root / "travel").mkdir(parents=True)
    (root / "travel" / "taxi rules.md").write_text("# Taxis\n\nTaxi fares after 22:00.\n")
    single = tmp_path / "elsewhere" / "battery.txt"
    single.parent.mkdir()
    single.write_text("Battery\n\nThe battery lasts ten hours.\n")
    store = tmp_path / "store"
    report = ingest_paths([root, single], store, embeddings=HashEmbeddings(), progress=False)
    assert report.ok
    retriever = open_retriever(store, embeddings=HashEmbeddings())
    urls = {hit["doc_id"]: hit["url"] for q in ("taxi fares", "battery hours")
            for hit in retriever.retrieve(q, 5)}
    assert urls == {"travel/taxi-rules": "travel/taxi rules.md", "battery": "battery.txt"}
    assert not any(str(tmp_path) in url for url in urls.values())

    based = tmp_path / "based"
    ingest_paths([root], based, embeddings=HashEmbeddings(), progress=False,
                 base_url="https://intranet.example.com/handbook")
    hit = open_retriever(based, embeddings=HashEmbeddings()).retrieve("taxi fares", 1)[0]
    assert hit["url"] == "https://intranet.example.com/handbook/travel/taxi%20rules.md"


def test_answers_never_show_absolute_paths():
    from grounded_rag import build_graph

    leaked = {**evidence("spec#sec2", "The X100 battery lasts up to 10 hours."),
              "url": "/srv/company/private/specs/spec.md"}
    graph = build_graph(
        retriever=StaticRetriever([leaked]),
        generator=ScriptedChatModel(script={"CitedAnswer": [answer((
            "The X100 battery lasts up to 10 hours.", "spec#sec2"))]}),
        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["sources"] == [{"id": "spec#sec2", "title": "spec#sec2", "url": "spec.md"}]
