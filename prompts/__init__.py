"""Prompt text, one module per node, in Japanese and English."""
