from grounded_rag.retrieval.chunking import Document, chunk_document, detect_headings

CONTRACT = """# 業務委託契約書

甲と乙は次のとおり契約する。

第1条（目的）
本契約は運用保守の委託を定める。

第2条（契約期間）
本契約の有効期間は2025年4月1日から2026年3月31日までとする。

第3条 委託料は月額48万円とする。
"""


def test_japanese_articles_become_sections_with_stable_ids():
    doc = Document("contract", "業務委託契約書", CONTRACT)
    chunks = chunk_document(doc)
    ids = [c.id for c in chunks]
    assert ids == ["contract#sec1", "contract#sec2", "contract#sec3", "contract#sec4"]
    by_id = {c.id: c for c in chunks}
    assert by_id["contract#sec3"].section == "業務委託契約書 > 第2条（契約期間）"
    assert "2025年4月1日" in by_id["contract#sec3"].text
    assert by_id["contract#sec3"].title == "業務委託契約書 — 第2条（契約期間）"
    # an article whose body is on the heading line is still a section
    assert by_id["contract#sec4"].text == "第3条 委託料は月額48万円とする。"
    # re-chunking the same text gives the same ids, offsets and texts
    assert chunks == chunk_document(Document("contract", "業務委託契約書", CONTRACT))


def test_offsets_point_into_the_document():
    text = "Intro line.\n\n# A\nalpha text\n\n## A.1\nbeta text\n\n# B\n" + "Gamma sentence. " * 200
    doc = Document("d", "Doc", text)
    chunks = chunk_document(doc, max_chars=500)
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert c.text == c.text.strip()
    assert chunks[0].id == "d#sec0" and chunks[0].section == ""
    assert [c.section for c in chunks[1:3]] == ["A", "A > A.1"]
    parts = [c for c in chunks if c.id.startswith("d#sec3")]
    assert [c.id for c in parts][:2] == ["d#sec3-p1", "d#sec3-p2"]
    assert all(len(c.text) <= 500 for c in parts)
    assert all(c.section == "B" for c in parts)
    # parts cover the section without losing text
    joined = " ".join(c.text for c in parts)
    assert joined.count("Gamma sentence.") == 200


def test_numbered_and_english_article_headings():
    text = (
        "Policy\n\n1. Approval before travel\nGet approval.\n\n2.1 Taxis\nTaxis are ok at night.\n"
        "\nArticle 5 Termination\nEither party may terminate.\n\n1. buy milk\n"
    )
    heads = [h.text for h in detect_headings(text)]
    assert heads == ["1. Approval before travel", "2.1 Taxis", "Article 5 Termination"]


def test_headings_inside_code_fences_are_ignored():
    text = "# Real\nbody\n```\n# not a heading\n```\nmore\n"
    assert [h.text for h in detect_headings(text)] == ["Real"]


def test_heading_without_body_does_not_make_a_chunk_but_keeps_numbering():
    text = "# Title\n## Part one\nbody one\n## Part two\nbody two\n"
    chunks = chunk_document(Document("t", "T", text))
    assert [c.id for c in chunks] == ["t#sec2", "t#sec3"]
    assert chunks[0].section == "Title > Part one"


def test_changing_one_section_keeps_the_other_ids_and_texts():
    a = chunk_document(Document("c", "C", CONTRACT))
    b = chunk_document(Document("c", "C", CONTRACT.replace("48万円", "50万円")))
    assert [c.id for c in a] == [c.id for c in b]
    assert [c.text for c in a][:3] == [c.text for c in b][:3]
    assert a[3].text != b[3].text
