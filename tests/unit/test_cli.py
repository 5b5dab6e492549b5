"""The command line as a first-time user meets it: fast start, readable output, clean errors."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import grounded_rag
from grounded_rag._console import EXIT_BROKEN_PIPE, EXIT_NOT_READY, EXIT_USAGE, clean
from grounded_rag.ask_cli import DEMO_STORE, render
from grounded_rag.cli import main
from grounded_rag.questions import MAX_QUESTION_CHARS, QuestionError
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer, evidence

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("chromadb", "onnxruntime", "llama_cpp", "langchain_openai", "langchain_google_genai")
"""Never loaded by ``import grounded_rag``."""
FRAMEWORKS = (*HEAVY, "langchain_core", "langchain", "langgraph", "langserve", "fastapi",
              "sudachipy", "bm25s", "tokenizers")
"""Never loaded before the CLI has parsed and checked its arguments."""

SPEC = evidence("spec#sec2", "Battery: The X100 battery lasts up to 10 hours.",
                title="X100 spec sheet > Battery")


def loaded_modules(code: str) -> set[str]:
    """Top-level names of every module ``python -X importtime -c code`` imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name.split(".")[0])
    assert "grounded_rag" in names, proc.stderr[-2000:]
    return names


def fake_graph(*answers, evidence_list=(SPEC,)):
    from grounded_rag import build_graph

    return build_graph(retriever=StaticRetriever(evidence_list),
                       generator=ScriptedChatModel(script={"CitedAnswer": list(answers)}),
                       extractor="rules", verifier=ScriptedVerifier())


# -- fast start ---------------------------------------------------------------------------------


def test_importing_the_package_loads_no_heavy_module():
    loaded = loaded_modules("import grounded_rag")
    assert not loaded & set(FRAMEWORKS), sorted(loaded & set(FRAMEWORKS))


@pytest.mark.parametrize("argv", [
    ["--help"], ["ask", "--help"], ["ask", ""], ["ask", "x" * (MAX_QUESTION_CHARS + 1)],
    ["retrieve", ""], ["ingest", "--help"], ["model", "info", "--help"], ["eval", "--help"],
])
def test_help_and_usage_errors_answer_before_any_framework_loads(argv):
    loaded = loaded_modules(f"from grounded_rag.cli import main; main({argv!r})")
    assert not loaded & set(FRAMEWORKS), sorted(loaded & set(FRAMEWORKS))


def test_default_graph_is_built_on_first_access_and_shared():
    code = """
import importlib, json, sys
import grounded_rag
assert "langgraph" not in sys.modules
module = importlib.import_module("grounded_rag.graph")
assert "graph" not in vars(module), "compiled at import"
assert "langgraph" in sys.modules and "grounded_rag.nodes" in sys.modules
compiled = module.graph
from grounded_rag import graph
assert graph is compiled and grounded_rag.graph is compiled
spec = json.load(open("langgraph.json"))["graphs"]["grounded-rag"]
module_name, attr = spec.split(":")
studio = importlib.import_module(module_name)
assert vars(studio)[attr] is compiled                # how langgraph dev / Studio read it
assert type(graph).__name__ == "CompiledStateGraph" and graph.name == "grounded-rag"
from grounded_rag.graph import builder
assert type(builder).__name__ == "StateGraph"
from grounded_rag.serving.app import _compile
assert _compile(None).name == "grounded-rag"         # LangServe serves the default builder
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=180)
    assert proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_public_names_resolve_lazily():
    for name in grounded_rag.__all__:
        assert getattr(grounded_rag, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = grounded_rag.nope


# -- help, exit codes, JSON ---------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--help"], ["ask", "--help"], ["ingest", "--help"],
                                  ["model", "fetch", "--help"], ["serve", "--help"]])
def test_help_documents_the_exit_codes(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ("0", "1", "2", "3", "130", "141"):
        assert f"\n  {code} " in out


def test_bare_command_prints_help_and_exits_2(capsys):
    assert main([]) == EXIT_USAGE
    assert "COMMAND" in capsys.readouterr().out


def test_every_command_has_json_output(capsys):
    from grounded_rag.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    leaves = []
    for name, sub in commands.items():
        nested = [a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction"]
        leaves += [(f"{name} {n}", p) for n, p in nested[0].choices.items()] if nested else [
            (name, sub)]
    missing = [name for name, p in leaves if "--json" not in p._option_string_actions]
    assert not missing, missing


def test_empty_and_too_long_questions_are_usage_errors(capsys):
    assert main(["ask", "   "]) == EXIT_USAGE
    assert capsys.readouterr().err == "error: the question must not be empty\n"
    assert main(["ask", "", "--json"]) == EXIT_USAGE
    error = json.loads(capsys.readouterr().out)["error"]
    assert error == {"kind": "empty_question", "message": "the question must not be empty",
                     "exit_code": EXIT_USAGE}


def test_one_question_limit_and_one_error_everywhere(capsys):
    from fastapi import HTTPException

    from grounded_rag.serving.app import DEFAULT_MAX_QUESTION_CHARS, check_question, create_app

    long = "x" * (MAX_QUESTION_CHARS + 1)
    assert main(["ask", long]) == EXIT_USAGE
    cli_error = capsys.readouterr().err
    with pytest.raises(QuestionError) as graph_error:
        fake_graph(answer(("ok", "spec#sec2"))).invoke({"question": long})
    assert cli_error == f"error: {graph_error.value}\n"
    assert f"the limit is {MAX_QUESTION_CHARS}" in cli_error
    with pytest.raises(HTTPException) as http_error:
        check_question(long, ["body", "question"], DEFAULT_MAX_QUESTION_CHARS)
    assert http_error.value.status_code == 422
    assert http_error.value.detail[0]["msg"] == str(graph_error.value)
    assert DEFAULT_MAX_QUESTION_CHARS == MAX_QUESTION_CHARS
    with pytest.raises(ValueError, match="the graph's own limit"):
        create_app(max_question_chars=MAX_QUESTION_CHARS + 1)
    # At the limit everything is accepted.
    at_limit = "x" * MAX_QUESTION_CHARS
    assert check_question(at_limit, ["q"], DEFAULT_MAX_QUESTION_CHARS) == at_limit
    out = fake_graph(answer(("The battery lasts up to 10 hours.", "spec#sec2"))).invoke(
        {"question": at_limit})
    assert out["status"] in ("answered", "abstained")


def test_invalid_setting_is_a_usage_error(capsys):
    assert main(["ask", "How long?", "--top-k", "0"]) == EXIT_USAGE
    assert "top_k must be >= 1" in capsys.readouterr().err


# -- expected failures: one line, an exit code, never a traceback -------------------------------


def test_missing_store_says_what_to_do(tmp_path, capsys):
    store = tmp_path / "none"
    assert main(["ask", "How long does the battery last?", "--store", str(store),
                 "--quiet"]) == EXIT_NOT_READY
    err = capsys.readouterr().err
    assert err.startswith("error: no grounded-rag store") and "grounded-rag ingest" in err
    assert main(["retrieve", "battery", "--store", str(store), "--json"]) == EXIT_NOT_READY
    out = capsys.readouterr().out
    assert json.loads(out)["error"]["kind"] == "store_not_found"


def test_bad_file_is_reported_not_raised(tmp_path, capsys):
    binary = tmp_path / "blob.txt"
    binary.write_bytes(bytes(range(256)) * 8)
    code = main(["ingest", str(binary), "--store", str(tmp_path / "s"), "--no-progress"])
    assert code == 1
    err = capsys.readouterr().err
    assert "blob.txt: is not UTF-8, and its encoding could not be told" in err
    assert "Traceback" not in err


def test_ctrl_c_is_a_short_message_and_130(monkeypatch, capsys):
    import grounded_rag.retrieval.ingest as ingest

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ingest, "ingest_paths", interrupted)
    assert main(["ingest", "docs"]) == 130
    assert capsys.readouterr().err == "\ninterrupted\n"


def test_real_sigint_ends_without_a_traceback():
    code = ("import time, grounded_rag.retrieval.ingest as ingest\n"
            "def slow(*args, **kwargs):\n"
            "    print('started', flush=True)\n"
            "    time.sleep(60)\n"
            "ingest.ingest_paths = slow\n"
            "from grounded_rag.cli import main\n"
            "raise SystemExit(main(['ingest', 'docs']))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout.readline() == "started\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err == "\ninterrupted\n"


def _run_with_closed_stdout(*argv: str) -> subprocess.CompletedProcess:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` after it has read what it wanted
    try:
        return subprocess.run([sys.executable, "-m", "grounded_rag.cli", *argv],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize(("argv", "code"), [
    (["--help"], 0),  # argparse itself ignores a failed write of the help text
    (["model", "info", "--json"], EXIT_BROKEN_PIPE),
    (["model", "info"], EXIT_BROKEN_PIPE),
])
def test_closed_pipe_ends_quietly(argv, code):
    proc = _run_with_closed_stdout(*argv)
    assert proc.stderr == ""
    assert proc.returncode == code


def test_broken_pipe_mid_output_in_process(monkeypatch):
    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["model", "info", "--json"]) == EXIT_BROKEN_PIPE


# -- human output -------------------------------------------------------------------------------


def test_clean_escapes_control_and_bidi_characters():
    assert clean("Who won\x1b[31m?\x07") == "Who won\\x1b[31m?\\x07"
    assert clean("a\u202eb\x9bc\rd") == "a\\u202eb\\x9bc\\x0dd"
    assert clean("行1\n\t行2 — ok") == "行1\n\t行2 — ok"


def test_ask_prints_sentences_with_escaped_text(monkeypatch, capsys):
    graph = fake_graph(answer(("The X100 battery lasts up to 10 hours.", "spec#sec2")))
    monkeypatch.setattr(grounded_rag, "graph", graph)
    assert main(["ask", "How long\x1b[2J does the battery last?\x07", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert out.startswith("Q: How long\\x1b[2J does the battery last?\\x07\nA: The X100 battery")
    assert "[1] spec#sec2  X100 spec sheet > Battery  spec.md" in out
    assert main(["ask", "How long does the battery last?", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "answered" and result["sources"][0]["url"] == "spec.md"


def test_render_escapes_document_text():
    result = {"question": "q", "status": "abstained", "answer": "The sources do not say.",
              "findings": [{"type": "weak_evidence", "severity": "critical",
                            "detail": "evil \x1b]0;title\x07 text"}],
              "removed_claims": [{"text": "claim\x1b[5m", "verdict": "neutral"}]}
    out = io.StringIO()
    render(result, out)
    assert "\x1b" not in out.getvalue() and "\\x1b]0;title\\x07" in out.getvalue()


def test_demo_reports_the_ingest_in_words(tmp_path, monkeypatch, capsys):
    graph = fake_graph(answer(("The X100 battery lasts up to 10 hours.", "spec#sec2")))
    monkeypatch.setattr(grounded_rag, "graph", graph)
    store = tmp_path / "demo"
    assert main(["demo", "--store", str(store), "--quiet", "--question", "How long?"]) == 0
    captured = capsys.readouterr()
    assert "IngestReport(" not in captured.err and "IngestReport(" not in captured.out
    assert " added, 0 updated, 0 unchanged, 0 removed, 0 failed; " in captured.err
    assert "chunks written to" in captured.err
    assert captured.out.startswith("Q: How long?\nA: ")
    assert main(["demo", "--store", str(store), "--quiet", "--question", "How long?",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["status"] == "answered"


def test_demo_store_default_is_the_documented_one():
    from grounded_rag.cli import build_parser

    args = build_parser().parse_args(["demo"])
    assert args.store is None and DEMO_STORE == ".grounded-rag-demo"


def test_model_fetch_json_for_a_user_supplied_gguf(tmp_path, capsys):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    assert main(["model", "fetch", "--model", str(gguf), "--json", "--no-progress"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["path"] == str(gguf.resolve()) and data["verified"] is False
    missing = tmp_path / "missing.gguf"
    assert main(["model", "fetch", "--model", str(missing)]) == EXIT_NOT_READY
    assert capsys.readouterr().err == f"error: Model file not found: {missing}\n"
