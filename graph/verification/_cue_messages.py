"""The cues' user-facing reason texts, per language (they also feed the revision prompt)."""

from __future__ import annotations

MESSAGES = {
    "en": {
        "quantity_mismatch": "The evidence says {ev}, not {cl}.",
        "date_mismatch": "The evidence gives the date {ev}, not {cl}.",
        "negation_mismatch": "The evidence says the opposite: \u201c{ev}\u201d",
        "quantity_missing": "The evidence does not mention {cl}.",
        "date_missing": "The evidence does not mention the date {cl}.",
        "entity_missing": "The evidence does not mention {cl}.",
        "words_missing": "The evidence does not mention: {cl}.",
        "altered_copy": "The claim follows the evidence \u201c{sentence}\u201d but has "
        "\u201c{cl}\u201d where the evidence says \u201c{ev}\u201d.",
        "role_swap": "The claim swaps who does what: the evidence says \u201c{ev}\u201d "
        "({cl}).",
        "hedged": "The evidence does not state this as a fact (\u201c{cl}\u201d): "
        "\u201c{ev}\u201d",
        "tax_mismatch": "The evidence says {ev}, not {cl}: \u201c{sentence}\u201d",
        "subject_swap": "The evidence says this of {ev}, not of {cl}: \u201c{sentence}\u201d",
        "decade_only": "The evidence gives only the decade {ev}, not {cl}.",
        "day_unstated": "The evidence gives {ev} without a day, not {cl}.",
        "value_binding": "The evidence gives {cl} for {ev}, not for {case}; for {case} it "
        "gives {other}: \u201c{sentence}\u201d",
        "reading_missing": "The evidence names no {cl}: no word of it reads so.",
        "reading_names": "The names it gives read: {names}.",
    },
    "ja": {
        "quantity_mismatch": "根拠では「{ev}」であり、「{cl}」ではありません。",
        "date_mismatch": "根拠の日付は「{ev}」であり、「{cl}」ではありません。",
        "negation_mismatch": "根拠は逆のことを述べています:「{ev}」",
        "quantity_missing": "根拠には「{cl}」という記述がありません。",
        "date_missing": "根拠には「{cl}」という日付がありません。",
        "entity_missing": "根拠には「{cl}」が出てきません。",
        "words_missing": "根拠には次の語が出てきません: {cl}。",
        "altered_copy": "主張は根拠の「{sentence}」とほぼ同じ文ですが、根拠の「{ev}」が「{cl}」に"
        "変わっています。",
        "role_swap": "主張は動作の主体と対象が入れ替わっています。根拠では「{ev}」です（{cl}）。",
        "hedged": "根拠はこれを事実として述べていません（「{cl}」）:「{ev}」",
        "tax_mismatch": "根拠は「{ev}」であり、「{cl}」ではありません:「{sentence}」",
        "subject_swap": "根拠がこう述べているのは「{ev}」についてで、"
        "「{cl}」についてではありません:「{sentence}」",
        "decade_only": "根拠は年代（{ev}）しか述べておらず、「{cl}」とは述べていません。",
        "day_unstated": "根拠は「{ev}」としか述べておらず、「{cl}」という日付は述べていません。",
        "value_binding": "根拠が「{cl}」とするのは「{ev}」についてで、「{case}」については"
        "「{other}」です:「{sentence}」",
        "reading_missing": "根拠には「{cl}」と読める語がありません。",
        "reading_names": "根拠の固有名詞の読み: {names}。",
    },
}
