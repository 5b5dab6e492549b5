"""Check the system-prompt KV cache on the real local model: same output, less time.

Usage::

    GROUNDED_RAG_THREADS=1 flock /tmp/grag-model.lock \\
        .venv/bin/python benchmarks/prefix_cache_check.py

It asks the generator the same short question four times with another prompt (the
verifier's) evaluated in between: first (the system prompt is evaluated and saved), then
with the saved KV cache restored, then with the cache off, then with prompt-lookup drafts
on (up to 6 tokens checked per forward pass; the default is one token per pass). Greedy
decoding must give the same text every time; the second call should be faster than the
third by about the system prompt's evaluation time. It prints each call's work (prompt
tokens evaluated, forward passes) from the runtime's counter. Exit status 1 when the texts
differ.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    from langchain_core.messages import HumanMessage, SystemMessage

    from grounded_rag.local.chat import ChatLocal
    from grounded_rag.local.runtime import render_chat
    from grounded_rag.prompts import generate, local_verify

    llm = ChatLocal(max_tokens=24)
    system = generate.SYSTEM["en"]
    messages = [SystemMessage(system), HumanMessage(
        "Sources:\n[S1] Spec\nS1.1 The X100 battery lasts up to 10 hours.\n\n"
        "Question: How long does the battery last? Answer in one short sentence.")]
    rt = llm.runtime()
    rt.prefix_cache = True

    def other_prompt() -> None:
        verify_system, user = local_verify.for_language("en")
        tokens = render_chat(rt, [
            {"role": "system", "content": verify_system},
            {"role": "user", "content": user.format(evidence="Cats are mammals.",
                                                    claim="Cats are mammals.")}])
        with rt.lock:
            rt.eval_prompt(tokens)

    works = []

    def timed(model: ChatLocal = llm) -> tuple[str, float]:
        before = rt.work.snapshot()
        start = time.perf_counter()
        text = str(model.invoke(messages).content)
        elapsed = time.perf_counter() - start
        works.append(rt.work.snapshot() - before)
        return text, elapsed

    first, t_first = timed()
    probe = render_chat(rt, [{"role": "system", "content": system},
                             {"role": "user", "content": "x"}])
    length = rt.system_prefix_length([{"role": "system", "content": system}], probe)
    other_prompt()
    restored, t_restored = timed()
    other_prompt()
    rt.prefix_cache = False
    plain, t_plain = timed()
    drafted, t_drafted = timed(ChatLocal(max_tokens=24, draft_tokens=6))
    print(f"threads {rt.n_threads}; system prompt {length} tokens; saved prefixes "
          f"{[len(p) for p in rt._prefixes]} ({sum(len(v) for v in rt._prefixes.values())} bytes)")
    print(f"first {t_first:.2f} s, restored {t_restored:.2f} s, cache off {t_plain:.2f} s, "
          f"drafts on {t_drafted:.2f} s")
    names = ("first", "restored", "cache off", "drafts on")
    for name, text, work in zip(names, (first, restored, plain, drafted), works, strict=True):
        print(f"  {name:>10}: {work.prompt_tokens} prompt tokens evaluated, "
              f"{work.forward_passes} forward passes, {work.generated_tokens} tokens; {text!r}")
    same = first == restored == plain == drafted
    print("same output:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
