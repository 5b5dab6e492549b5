"""Family relations a claim gives two people against the relation its evidence gives them."""

from grounded_rag.verification.cues import check_claim
from grounded_rag.verification.kin import relations, wrong_relation

GEORGY = ("Prince Georgy Konstantinovich of Russia (6 May 1903 – 7 November 1938), was the "
          "youngest son of Grand Duke Konstantin Konstantinovich of Russia and his wife Grand "
          "Duchess Yelizaveta Mavrikiyevna.")
PEN_NAME = 'He wrote under the pen name "K.R.", initials of his given name and family name.'


def test_a_son_called_a_husband_is_contradicted_before_any_model():
    """The held-out answer that went out verified (judge 0.97)."""
    claim = ("Grand Duchess Yelizaveta Mavrikiyevna's husband was Prince Georgy Konstantinovich "
             "of Russia.")
    assert wrong_relation(claim, [GEORGY, PEN_NAME]) == (GEORGY, "husband", "son")
    report = check_claim(claim, [f"{GEORGY} {PEN_NAME}"], language="en")
    assert report.decided == "contradicted"
    assert any(c.kind == "kin_relation" for c in report.cues)
    assert "son, not husband" in report.reason


def test_the_relations_the_evidence_gives_are_not_flagged_in_any_wording():
    for claim in (
        "Prince Georgy Konstantinovich was the son of Grand Duchess Yelizaveta Mavrikiyevna.",
        "Yelizaveta Mavrikiyevna's son was Georgy Konstantinovich.",
        "Grand Duke Konstantin Konstantinovich was the father of Prince Georgy.",
        "Yelizaveta Mavrikiyevna was the wife of Konstantin Konstantinovich.",
        "Konstantin Konstantinovich's wife was Yelizaveta Mavrikiyevna.",
        "Konstantin Konstantinovich married Yelizaveta Mavrikiyevna.",
    ):
        assert wrong_relation(claim, [GEORGY]) is None, claim
        assert check_claim(claim, [GEORGY], language="en").decided != "contradicted", claim


def test_other_relations_of_the_same_pair_are_contradicted():
    found = wrong_relation("Konstantin Konstantinovich was the brother of Prince Georgy.", [GEORGY])
    assert found is not None and found[1:] == ("brother", "parent")
    found = wrong_relation("Georgy Konstantinovich married Yelizaveta Mavrikiyevna.", [GEORGY])
    assert found is not None and found[1:] == ("spouse", "son")


def test_a_pair_the_evidence_never_relates_is_left_to_the_judge():
    assert wrong_relation("Prince Georgy's wife was Princess Maria.", [GEORGY]) is None
    assert wrong_relation("He was the son of Konstantin.", [GEORGY]) is None  # a pronoun
    assert wrong_relation("Georgy was born in 1903.", [GEORGY]) is None
    # names of one family share words; a name's words must all be in the other's
    assert wrong_relation("Konstantin Konstantinovich's son was Georgy Konstantinovich.",
                          [GEORGY]) is None


def test_what_is_read_as_a_relation():
    (who, kin, whom), converse = relations(
        "Elizabeth I was the daughter of King Henry VIII of England and his second wife "
        "Anne Boleyn.")[:2]
    assert (sorted(who), kin, sorted(whom)) == (["elizabeth", "i"], "child",
                                               ["england", "henry", "viii"])
    assert converse[1] == "parent"
    assert ("spouse" in {r[1] for r in relations(
        "Elizabeth I was the daughter of King Henry VIII of England and his second wife "
        "Anne Boleyn.")})
    assert relations("Mother Teresa founded the order.") == []  # a name, not a relation
    assert relations("Its sister company is Acme.") == []  # no name owns it
    # step and in-law relations are their own
    assert relations("Tom Smith was the stepson of Ann Jones.")[0][1] == "stepchild"
    assert wrong_relation("Tom Smith was the son of Ann Jones.",
                          ["Tom Smith was the stepson of Ann Jones."]) is not None


def test_japanese_claims_are_not_read():
    assert check_claim("ゲオルギーはエリザヴェータの夫である。", [GEORGY],
                       language="ja").decided is None
