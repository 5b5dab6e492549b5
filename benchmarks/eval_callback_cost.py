"""What an evaluation callback costs per generated token (for reading hidden states in the
generator's own context).

llama.cpp calls a context's ``cb_eval`` for every node of every forward pass; reading the
generator's prompt state (benchmarks/prompt_state_probe.py) needs one on the generator's
context. This times the same single-token passes (the shape of greedy generation after a
prompt) on two contexts of the loaded model, one with the hidden-state reader's callback
(capturing nothing, as during generation) and one without, alternating rounds so that
load drifts hit both alike.

    .venv/bin/python benchmarks/eval_callback_cost.py [--tokens 64] [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--prompt", type=int, default=512)
    args = ap.parse_args()

    from llama_cpp import _internals

    from grounded_rag.local.probe import HiddenStateReader
    from grounded_rag.local.runtime import get_runtime, require_llama_cpp

    llama_cpp = require_llama_cpp()
    rt = get_runtime(None)
    reader = HiddenStateReader(rt, layers=(16,))
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = reader.n_ctx
    params.n_batch = params.n_ubatch = 512
    params.n_threads = params.n_threads_batch = rt.n_threads
    plain = _internals.LlamaContext(model=rt.llama._model, params=params, verbose=False)
    batch = _internals.LlamaBatch(n_tokens=512, embd=0, n_seq_max=1, verbose=False)
    prompt = (rt.tokenize("The evidence says the battery lasts ten hours. " * 64,
                          special=False))[: args.prompt]

    def run(ctx: _internals.LlamaContext) -> float:
        ctx.kv_cache_seq_rm(-1, 0, -1)
        batch.set_batch(batch=prompt, n_past=0, logits_all=False)
        ctx.decode(batch)
        token = prompt[-1]
        start = time.perf_counter()
        for n in range(args.tokens):
            batch.set_batch(batch=[token], n_past=len(prompt) + n, logits_all=False)
            ctx.decode(batch)
        return (time.perf_counter() - start) / args.tokens * 1000

    with_cb, without = [], []
    for _ in range(args.rounds):
        with_cb.append(run(reader._ctx))
        without.append(run(plain))
    a, b = statistics.median(with_cb), statistics.median(without)
    print(f"single-token pass, median of {args.rounds} rounds of {args.tokens} "
          f"(threads {rt.n_threads}): with callback {a:.1f} ms, without {b:.1f} ms, "
          f"ratio {a / b:.3f}")
    print("rounds with:", [round(v, 1) for v in with_cb], "without:",
          [round(v, 1) for v in without])


if __name__ == "__main__":
    main()
