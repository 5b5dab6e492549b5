"""Model prices for the cost metrics: USD per million tokens, matched by model name."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    """Price of one million prompt tokens."""
    output: float
    """Price of one million completion tokens."""


DEFAULT_PRICES: dict[str, ModelPrice] = {
    # Published list prices (USD per 1M tokens) when this table was written; edit freely.
    "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60),
    "gpt-4.1": ModelPrice(input=2.00, output=8.00),
    "gpt-4.1-nano": ModelPrice(input=0.10, output=0.40),
    "gemini-2.5-flash": ModelPrice(input=0.30, output=2.50),
    "gemini-2.5-flash-lite": ModelPrice(input=0.10, output=0.40),
    "gemini-2.5-pro": ModelPrice(input=1.25, output=10.00),
    "local": ModelPrice(input=0.0, output=0.0),
}


class PriceTable:
    """Model name -> price; matches provider prefixes and dated variants to the base name.

    ``openai:gpt-4.1-mini``, ``models/gemini-2.5-flash`` and ``gpt-4.1-mini-2025-04-14`` all
    find their base entry (the longest matching name wins, so ``gpt-4.1-mini`` is not billed
    as ``gpt-4.1``). Anything under a ``local`` name costs nothing.
    """

    def __init__(self, prices: Mapping[str, ModelPrice | Mapping[str, float]] | None = None):
        table = dict(DEFAULT_PRICES)
        for name, price in (prices or {}).items():
            table[name] = price if isinstance(price, ModelPrice) else _parse_price(name, price)
        self._prices = table

    @classmethod
    def load(cls, source: str | Path | Mapping[str, Any] | None) -> PriceTable:
        """Defaults overlaid with a dict or a JSON/TOML file ``{model: {input, output}}``.

        A TOML file may put the entries under a ``[prices]`` table or at the top level.
        """
        if source is None:
            return cls()
        if isinstance(source, Mapping):
            return cls(source)
        path = Path(source)
        text = path.read_text(encoding="utf-8")
        try:
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"price table {path} is not valid {path.suffix[1:]}: {exc}") from exc
        if isinstance(data, dict) and isinstance(data.get("prices"), dict):
            data = data["prices"]
        if not isinstance(data, dict):
            raise ValueError(f"price table {path} must map model names to {{input, output}}")
        return cls(data)

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table does not know it."""
        name = _base_name(model)
        if name in self._prices:
            return self._prices[name]
        if name == "local" or name.startswith(("local:", "local-", "qwen")):
            return self._prices.get("local", ModelPrice(0.0, 0.0))
        candidates = [known for known in self._prices if name.startswith(known)]
        return self._prices[max(candidates, key=len)] if candidates else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for that usage, or None for an unknown model."""
        price = self.lookup(model)
        if price is None:
            return None
        return (input_tokens * price.input + output_tokens * price.output) / 1_000_000

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The table as plain data (for ``/metrics/prices`` style endpoints and logs)."""
        return {name: {"input": p.input, "output": p.output} for name, p in self._prices.items()}


def _parse_price(name: str, price: Mapping[str, float]) -> ModelPrice:
    try:
        return ModelPrice(input=float(price["input"]), output=float(price["output"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"price for {name!r} needs numeric 'input' and 'output' (USD per 1M tokens)"
        ) from exc


def _base_name(model: str) -> str:
    name = model.strip().lower()
    if ":" in name and not name.startswith("local:"):
        name = name.split(":", 1)[1]
    return name.removeprefix("models/")
