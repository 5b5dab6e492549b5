"""assess_answerability: abstain before writing when none of the top passages holds the answer."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import lang, progress, timed
from grounded_rag.state import State
from grounded_rag.types import Finding
from grounded_rag.verification.decision import DEFAULT_DECISION


def assess_answerability(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Abstain early when none of the top passages contains the answer.

    One short Yes/No prompt per passage and no generation; a no-op when the check is off.
    """
    settings = parts.settings(runtime, config)
    judge = parts.answerability_judge(settings)
    language = lang(state)
    if judge is None or not judge.covers(language):
        return {}
    # "auto" with the local generator: the decision to write (graph/verification/decision.py)
    # combines the stage scores; this pass then only reports its score, and only for the
    # languages whose combiner reads it.
    combined = (settings.answerability_check == "auto" and parts.generator_is_local(settings)
                and DEFAULT_DECISION.covers(language))
    if combined and not DEFAULT_DECISION.reads_answerability(language):
        return {}
    progress("assessing", language)
    timings = dict(state.get("timings_ms") or {})
    evidence = state.get("evidence", [])[: settings.answerability_passages]
    with timed("answerability", timings):
        result = judge.assess(state["question"], evidence, language=language)
    scores = dict(state.get("stage_scores") or {})
    if result["passages"]:  # a judge that ran (not one that leaves the language unchecked)
        scores["answerability"] = round(float(result["score"]), 4)
    if result["answerable"] or combined:
        return {"timings_ms": timings, "stage_scores": scores}
    best = result["passages"][0]["source_id"] if result["passages"] else "-"
    finding: Finding = {
        "type": "no_answer_in_sources", "severity": "critical", "claim_index": -1,
        "detail": (
            f"None of the top {len(evidence)} passages seems to contain the answer: best "
            f"answerability {result['score']:.2f} ({best}) is below {result['threshold']:.2f}; "
            "no answer was written."
        ),
    }
    return {"findings": [*state.get("findings", []), finding], "timings_ms": timings,
            "stage_scores": scores}
