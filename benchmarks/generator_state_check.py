"""Can the generator's own context hand out its prompt state? A feasibility check.

The answerability head of benchmarks/prompt_state_probe.py reads the hidden state at the end
of the generator's first-draft prompt. Here the loaded runtime's llama context is replaced by
one on the same weights with an evaluation callback that captures layer 16 only while the
prompt is evaluated. Printed: whether greedy output is the same text as before the swap, and
how close the captured state is to the scoring context's (``HiddenStateReader``) for the
same tokens. One short prompt, a few seconds; nothing in the product uses this yet.

    .venv/bin/python benchmarks/generator_state_check.py
"""

from __future__ import annotations

from typing import Any

import numpy as np


def main() -> None:
    from llama_cpp import _internals

    from grounded_rag.local.chat import turn_end
    from grounded_rag.local.decoding import complete
    from grounded_rag.local.probe import HiddenStateReader, _ggml, tensor_name
    from grounded_rag.local.runtime import get_runtime, render_chat, require_llama_cpp

    llama_cpp = require_llama_cpp()
    rt = get_runtime(None)
    chat = [{"role": "system", "content": "Answer briefly from the sources."},
            {"role": "user", "content": "Sources:\nS1.1 The Aozora A1 battery lasts up to 10 "
                                        "hours.\n\nQuestion: How long does the battery last?"}]
    tokens = render_chat(rt, chat)
    with rt.lock:
        before = complete(rt, tokens, max_tokens=24, stop=[turn_end(rt)]).text
    reader = HiddenStateReader(rt, layers=(16,))
    with rt.lock:
        reader.evaluate(tokens)
        reference = reader.hidden()[0]

    ggml, n_embd, wanted = _ggml(), int(rt.llama.n_embd()), tensor_name(16)
    state: dict[str, Any] = {"on": False, "seen": False,
                             "hidden": np.zeros(n_embd, dtype=np.float32)}

    def callback(tensor: int, ask: bool, _user: int) -> bool:
        if not state["on"] or ggml.ggml_get_name(tensor) != wanted:
            return False if ask else True
        if ask:
            return True
        total = int(ggml.ggml_nelements(tensor))
        ggml.ggml_backend_tensor_get(tensor, state["hidden"].ctypes.data,
                                     (total - n_embd) * 4, n_embd * 4)
        state["seen"] = True
        return True

    keep_alive = llama_cpp.ggml_backend_sched_eval_callback(callback)
    llama = rt.llama
    llama.context_params.cb_eval = keep_alive
    fresh = _internals.LlamaContext(model=llama._model, params=llama.context_params,
                                    verbose=False)
    old, llama._ctx = llama._ctx, fresh
    old.close()
    llama.n_tokens = 0
    with rt.lock:
        state["on"] = True
        rt.eval_prompt(tokens)
        state["on"] = False
        after = complete(rt, tokens, max_tokens=24, stop=[turn_end(rt)]).text
    got = state["hidden"]
    cosine = float(got @ reference / np.linalg.norm(got) / np.linalg.norm(reference))
    print(f"greedy text unchanged: {before == after} ({after!r})")
    print(f"state captured: {state['seen']}; cosine to the scoring context's {cosine:.5f}, "
          f"max abs difference {float(np.abs(got - reference).max()):.3f} "
          f"(norm {float(np.linalg.norm(reference)):.1f})")


if __name__ == "__main__":
    main()
