"""Verification: citation checks, deterministic cues, NLI verifiers and answer scores."""
