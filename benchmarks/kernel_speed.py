"""Raw speed of the local model on this machine: prompt and decoding tokens per second, and
the cost of one batched pass of k tokens (what prompt-lookup drafts would pay).

Loads the default GGUF directly with llama.cpp (no graph, no grammar), so the numbers
describe the build of llama.cpp and the machine, not the product's prompts:

- ``prompt``: a fixed 512-token prompt evaluated from scratch (tokens/s);
- ``decode``: then 32 greedy tokens, one per pass (tokens/s);
- ``batch k``: one pass over k new tokens after a 400-token prompt (median ms of 8).

Compare builds by running it with each build's Python, one after the other, alternating, on
an otherwise idle machine, and note ``uptime`` (it prints it)::

    .venv/bin/python benchmarks/kernel_speed.py [--threads 2] [--runs 2] [--flash-attn]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--ubatch", type=int, default=512)
    parser.add_argument("--flash-attn", action="store_true")
    parser.add_argument("--batches", default="1,2,4,7", help="k values of the batched passes")
    args = parser.parse_args(argv)

    import llama_cpp
    import numpy as np
    from llama_cpp import _internals

    from grounded_rag.local.assets import ensure_model
    from grounded_rag.local.work import reference_tokens

    print(llama_cpp.llama_print_system_info().decode().strip())
    print("load before:", os.popen("uptime").read().strip())
    kwargs = dict(model_path=str(ensure_model(None, progress=False)), n_ctx=4096, n_batch=512,
                  n_ubatch=args.ubatch, n_threads=args.threads,
                  n_threads_batch=args.threads, logits_all=False, verbose=False)
    if args.flash_attn:
        kwargs["flash_attn"] = True
    llama = llama_cpp.Llama(**kwargs)
    n_vocab = int(llama.n_vocab())
    prompt = reference_tokens(512)
    for run in range(args.runs):
        start = time.perf_counter()
        llama.n_tokens = 0
        llama.eval(prompt)
        evaluated = time.perf_counter()
        for _ in range(32):
            row = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1)
            llama.eval([int(np.argmax(np.ctypeslib.as_array(row, shape=(n_vocab,))))])
        done = time.perf_counter()
        print(f"run {run + 1}: prompt {512 / (evaluated - start):.1f} tokens/s, "
              f"decode {32 / (done - evaluated):.1f} tokens/s ({args.threads} threads)")
    llama.n_tokens = 0
    llama.eval(prompt[:400])
    ctx = llama._ctx
    for k in (int(v) for v in args.batches.split(",") if v.strip()):
        batch = _internals.LlamaBatch(n_tokens=k, embd=0, n_seq_max=1)
        times = []
        for _ in range(8):
            n_past = llama.n_tokens
            batch.set_batch(batch=[1234 + j for j in range(k)], n_past=n_past, logits_all=True)
            start = time.perf_counter()
            ctx.decode(batch)
            times.append(time.perf_counter() - start)
            ctx.kv_cache_seq_rm(-1, n_past, -1)
        print(f"batch {k}: {1000 * statistics.median(times):.1f} ms per pass")
    print("load after:", os.popen("uptime").read().strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
