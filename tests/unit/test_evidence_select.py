from grounded_rag.verification.evidence import select_evidence, split_sentences
from tests.fakes import evidence


def _ev(text, sid="doc#sec1"):
    return evidence(sid, text, relevance=1.0)


def test_split_japanese_and_english():
    ja = split_sentences("バッテリーは最大10時間持続します。充電は2時間です！本当？\n次の行")
    assert [s.text for s in ja] == [
        "バッテリーは最大10時間持続します。",
        "充電は2時間です！",
        "本当？",
        "次の行",
    ]
    en = split_sentences("It lasts 2.5 hours, e.g. with USB-C. Done! Really? Yes")
    assert [s.text for s in en] == [
        "It lasts 2.5 hours, e.g. with USB-C.",
        "Done!",
        "Really?",
        "Yes",
    ]
    text = "First one. Second one."
    for s in split_sentences(text):
        assert text[s.start : s.end] == s.text


def test_an_exclamation_mark_inside_a_name_does_not_end_the_sentence():
    """A claim split at "Drum!" became "Yes, both Prevention and Drum!" + "are American
    magazines." and failed verification (a held-out small-corpus question)."""
    def texts(text):
        return [s.text for s in split_sentences(text)]

    assert texts("Yes, both Prevention and Drum! are American magazines.") == [
        "Yes, both Prevention and Drum! are American magazines."]
    assert texts("Yahoo! is based in California. It was founded in 1994.") == [
        "Yahoo! is based in California.", "It was founded in 1994."]
    assert texts("Wow! This is new.") == ["Wow!", "This is new."]  # a capital: a new one
    # a capital after a capitalised word inside the sentence: still a name
    assert texts("Both Prevention and New! Magazine are British. It is weekly.") == [
        "Both Prevention and New! Magazine are British.", "It is weekly."]
    assert texts("It was great! Then it ended.") == ["It was great!", "Then it ended."]
    assert texts("Gynaika is Greek. New! Magazine is British.") == [
        "Gynaika is Greek.", "New! Magazine is British."]
    assert texts("Done!\nnext line") == ["Done!", "next line"]  # a new line always ends it


def test_initials_and_dotted_abbreviations_stay_in_their_sentence():
    """A small-corpus answer "Plutonium ... comes from the U.S. state of Washington." was split
    into "... the U.", "S." and "state of Washington." and failed verification."""
    def texts(text):
        return [s.text for s in split_sentences(text)]

    assert texts("It comes from the U.S. state of Washington. It is old.") == [
        "It comes from the U.S. state of Washington.", "It is old."]
    assert texts("It comes from the U. S. state of Washington.") == [
        "It comes from the U. S. state of Washington."]
    assert texts("J. R. R. Tolkien wrote it in Washington, D.C. in 1937.") == [
        "J. R. R. Tolkien wrote it in Washington, D.C. in 1937."]
    assert texts("The U.S. Army fought.") == ["The U.S. Army fought."]
    # a word that opens a sentence after the abbreviation: two sentences
    assert texts("He moved to the U.S. The next year he left.") == [
        "He moved to the U.S.", "The next year he left."]
    assert texts("It was Plan B. Then it failed.") == ["It was Plan B.", "Then it failed."]



def test_sentences_a_source_ran_together_are_read_apart():
    """Knowledge paragraphs joined without a space ("…WQED Pittsburgh.Air Force, Incorporated
    is…") gave one "sentence" about two films, so a quote of it named both compared things."""
    def texts(text):
        return [s.text for s in split_sentences(text)]

    assert texts("It is by Rick Sebak of WQED Pittsburgh.Air Force, Incorporated is a film.") == [
        "It is by Rick Sebak of WQED Pittsburgh.", "Air Force, Incorporated is a film."]
    assert texts("It is in the family Cistaceae.Chimonobambusa is a genus.") == [
        "It is in the family Cistaceae.", "Chimonobambusa is a genus."]
    assert texts('It reprints issues of "Janus".)The Lady is a magazine.') == [
        'It reprints issues of "Janus".)', "The Lady is a magazine."]
    assert texts("It was released in 2007.The next model followed.") == [
        "It was released in 2007.", "The next model followed."]
    # names, abbreviations, initials and addresses stay whole
    for whole in ("He moved to St.Louis in 1990.", "Built with ASP.NET and Node.js today.",
                  "Mr.Smith went home.", "See www.Example.com for more.",
                  "It came from the U.S.A. to Japan."):
        assert texts(whole) == [whole]

def test_short_evidence_is_kept_whole():
    sel = select_evidence(
        "The battery lasts 24 hours.", [_ev("Intro text. The battery lasts up to 10 hours.")]
    )
    assert sel.text == "Intro text. The battery lasts up to 10 hours."
    assert sel.best_sentence == "The battery lasts up to 10 hours."
    assert sel.best_source_id == "doc#sec1"
    assert not sel.truncated


def test_long_evidence_is_cut_to_the_best_sentences():
    filler = " ".join(f"Filler sentence number {i} about office plants." for i in range(80))
    text = filler + " The battery lasts up to 10 hours on a full charge. " + filler
    sel = select_evidence(
        "How long does the battery last on a charge?", [_ev(text)], budget_chars=300
    )
    assert sel.truncated
    assert len(sel.text) <= 300
    assert "battery lasts up to 10 hours" in sel.text
    assert sel.best_sentence == "The battery lasts up to 10 hours on a full charge."


def test_japanese_selection_across_chunks_prefers_matching_chunk():
    a = _ev("会社の歴史について。" * 60, "a#sec1")
    b = _ev("経費精算は月末までに提出してください。" + "その他の注意。" * 40, "b#sec2")
    sel = select_evidence("経費精算の提出期限は月末である。", [a, b], budget_chars=200)
    assert sel.best_source_id == "b#sec2"
    assert "月末までに提出" in sel.text


def test_empty_evidence():
    sel = select_evidence("claim", [])
    assert sel.text == "" and sel.best_sentence == ""
