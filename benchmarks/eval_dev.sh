#!/usr/bin/env bash
# The commands that produce the README's evaluation numbers on the dev sets, with the
# offline local default (Qwen2.5 1.5B via llama.cpp: next-token P(Yes) support scorer).
#
# Data: ../shared/eval next to the repository (or $GROUNDED_RAG_EVAL_DIR); never copied in.
# Results: eval-results/ (git-ignored): <dataset>-<task>-local.{json,md,png}, summary.{md,png},
# and a per-item cache in eval-results/cache/ so a stopped run resumes where it left off.
#
# Usage:  benchmarks/eval_dev.sh            # the sample sizes below
#         LIMIT=40 benchmarks/eval_dev.sh   # override every --limit
#         MODEL=openai:gpt-4.1-mini benchmarks/eval_dev.sh
#
# Cost on 2 shared CPU cores: ~1-2.5 s per verified claim, ~20-60 s per answered question.
# The sample sizes keep a full pass to roughly an hour; raise them when you have the time.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
MODEL=${MODEL:-local}
OUT=${OUT:-eval-results}
NICE=${NICE:-nice -n 10}

run() {  # run DATASET LIMIT [extra args...]
  local name=$1 limit=${LIMIT:-$2}
  shift 2
  $NICE "$PY" -m grounded_rag.cli eval "$name" --model "$MODEL" --limit "$limit" --out "$OUT" "$@"
}

# Verification quality (claims of a given response vs given sources).
run halueval_qa 100 --batching-check         # target: balanced_accuracy >= 0.80
run halueval_qa 200 --seed 3                 # a second sample, to confirm (not used for tuning)
run halueval_qa 200 --seed 5                 # a third one
run jnli 150 --seed 1                        # target: accuracy_3way >= 0.70 (the set's own label mix)
run jnli 45 --sample balanced                # same, 15 per label
run jhars 144                                # target: response-level f1 >= 0.50, at the set's own mix (8 of 144 hallucinated)
run jhars 16 --sample balanced               # 8 hallucinated + 8 faithful responses
run jsick 40 --sample balanced               # 3-way, ja and en subsets
run janli 40 --sample balanced               # word-order adversarial NLI
run halueval_summarization 20
run scifact 40 --task verify --sample balanced
run expertqa 40

# Answer quality through the whole graph (retrieval -> generate -> verify -> revise/abstain).
run nomiracl 30 --sample balanced            # target: abstain >= 0.80 on non-relevant, answer >= 0.80 on relevant
run jsquad 20 --retrieval hybrid
run jaquad 20 --retrieval hybrid
run scifact 20 --task answer --retrieval bm25

# The answerability probe alone (all NoMIRACL queries, per language; prints AUROC, and the
# rates of the retrieval gate and the probe together; --split 0|1 reports one half).
$NICE "$PY" benchmarks/answerability_calibrate.py --per-class 0 --out "$OUT/answerability.jsonl"

