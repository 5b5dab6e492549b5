"""The draft policy: drafts while unmeasured or cheaper per token, re-probes when off."""

from __future__ import annotations

import pytest

from grounded_rag.local.decoding import DEFAULT_DRAFT, DRAFT_ENV, default_draft
from grounded_rag.local.draft_policy import (
    AUTO,
    AUTO_LENGTH,
    PROBE_EVERY,
    WARMUP,
    WINDOW,
    DraftPolicy,
)


def _measured(single_ms: float, drafted_ms_per_pass: float, kept: int) -> DraftPolicy:
    policy = DraftPolicy()
    for _ in range(WINDOW):
        policy.single(single_ms / 1000)
        policy.drafted(drafted_ms_per_pass / 1000, kept)
    return policy


def test_drafts_until_both_costs_are_measured():
    policy = DraftPolicy()
    assert policy.pays() is None and policy.choose() == AUTO_LENGTH
    policy.single(0.038)
    assert policy.pays() is None and policy.choose() == AUTO_LENGTH
    for _ in range(WARMUP):  # a new batch shape's first passes are slow: not counted
        policy.drafted(1.0, 1)
    assert policy.pays() is None
    policy.drafted(0.090, 3)
    assert policy.drafted_ms == pytest.approx(30.0) and policy.pays() is True


def test_drafts_when_a_batched_pass_is_cheaper_per_token():
    # AVX-512 kernels: a pass over 4 tokens 89 ms against 38 ms single; 3 tokens kept.
    policy = _measured(38.0, 89.0, 3)
    assert policy.pays() is True
    assert [policy.choose() for _ in range(20)] == [AUTO_LENGTH] * 20


def test_stops_drafting_where_batched_passes_cost_as_much_and_probes_again():
    # Generic kernels: 121 ms for 4 tokens, 2 kept: 60 ms per token against 38 ms.
    policy = _measured(38.0, 121.0, 2)
    assert policy.pays() is False
    choices = [policy.choose() for _ in range(3 * PROBE_EVERY)]
    assert choices.count(AUTO_LENGTH) == 3
    assert all(c == 0 for i, c in enumerate(choices) if (i + 1) % PROBE_EVERY)
    assert "off" in policy.describe()


def test_a_change_of_costs_turns_drafts_back_on():
    policy = _measured(38.0, 121.0, 2)
    assert policy.pays() is False
    for _ in range(WINDOW):  # the machine got faster at batches (or slower at single passes)
        policy.drafted(0.060, 3)
    assert policy.pays() is True and policy.choose() == AUTO_LENGTH


def test_a_near_tie_counts_as_not_paying():
    policy = _measured(40.0, 39.0, 1)  # 39 ms per token kept: within the 5% margin
    assert policy.pays() is False


@pytest.mark.parametrize(("value", "expected"), [
    ("", AUTO), ("auto", AUTO), (" AUTO ", AUTO), ("0", 0), ("6", 6), ("-3", 0), ("many", AUTO),
])
def test_the_environment_variable(monkeypatch, value, expected):
    monkeypatch.setenv(DRAFT_ENV, value)
    assert default_draft() == expected
    monkeypatch.delenv(DRAFT_ENV)
    assert default_draft() == DEFAULT_DRAFT == AUTO
