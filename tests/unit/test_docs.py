"""The front door: README and docs say what the code does, and the scripts do what they say."""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from dataclasses import fields
from pathlib import Path

import pytest

from grounded_rag.ask_cli import DEMO_STORE
from grounded_rag.context import SETTING_NAMES, Context
from grounded_rag.questions import MAX_QUESTION_CHARS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}


def section(text: str, heading: str) -> str:
    """The body of a ``## heading`` section."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no '## {heading}' section"
    return match.group(1)


# -- README ------------------------------------------------------------------------------------


def test_readme_is_a_short_front_door():
    assert len(README.encode("utf-8")) <= 10_000
    for heading in ("What it does", "Install", "Two commands", "Use it from Python",
                    "Command line", "Settings", "More"):
        section(README, heading)
    two = section(README, "Two commands")
    assert "bash scripts/demo.sh" in two and "bash scripts/test.sh" in two


def test_readme_links_screenshot_and_docs_exist():
    targets = re.findall(r"\]\(([^)#\s]+)", README)
    local = [t for t in targets if "://" not in t]
    for target in local:
        assert (ROOT / target).exists(), target
    for doc in ("docs/evaluation.md", "docs/performance.md", "docs/serving.md",
                "docs/cited-answer.png"):
        assert doc in local
    assert (ROOT / "docs/cited-answer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_doc_names_the_scripts_that_regenerate_it():
    assert set(DOCS) >= {"evaluation.md", "performance.md", "serving.md"}
    for name, text in DOCS.items():
        assert "**Regenerate:**" in text, name
        paths = re.findall(r"`(?:bash |\.venv/bin/python )?((?:benchmarks|scripts|tests)/[\w./-]+)",
                           text)
        assert paths, f"{name} names no script"
        for path in paths:
            assert (ROOT / path).exists(), f"{name}: {path}"


def test_docs_are_reference_pages_of_bounded_size():
    sizes = {name: len(text.encode("utf-8")) for name, text in DOCS.items()}
    assert all(size <= 20_000 for size in sizes.values()), sizes
    assert sum(sizes.values()) <= 80_000, sum(sizes.values())
    assert "decisions.md" in DOCS  # what was tried and not adopted lives there, not in diaries


def test_changelog_top_release_is_the_package_version():
    import tomllib

    import grounded_rag

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", changelog, re.M)
    assert releases[0] == ("Unreleased", "")
    assert releases[1][0] == version and releases[1][1], releases[:2]
    assert grounded_rag.__version__ == version
    for heading in re.findall(r"^### (.+)$", changelog, re.M):
        assert heading in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}

def test_install_starts_from_a_clone():
    install = section(README, "Install")
    assert "git clone" in install and "bash scripts/setup.sh" in install
    assert "pip install -e '.[local]'" in install
    assert "pip install 'grounded-rag" not in README  # not published to an index


def test_model_is_named_exactly():
    assert "Qwen2.5-Coder-1.5B-Instruct" in README
    for name, text in {"README.md": README, **DOCS}.items():
        assert "Qwen2.5-1.5B" not in text, name


def test_python_example_reads_the_store_the_demo_builds():
    example = section(README, "Use it from Python")
    stores = re.findall(r'"store_dir":\s*"([^"]+)"', example)
    assert stores == [DEMO_STORE]
    demo = (ROOT / "scripts/demo.sh").read_text()
    assert "--store" not in demo  # the demo keeps its default store
    assert f"`{DEMO_STORE}/`" in section(README, "Two commands")


def _settings_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in section(README, "Settings").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`(\w+)`", cells[0]):
            rows[name] = cells
    return rows


def test_settings_table_lists_every_setting_with_its_default():
    rows = _settings_rows()
    assert set(rows) == SETTING_NAMES
    for field in fields(Context):
        default = field.default
        cell = rows[field.name][1]
        if isinstance(default, bool):
            assert ("on" if default else "off") in cell, field.name
        elif isinstance(default, (int, float)) or (isinstance(default, str) and default):
            assert str(default) in cell, (field.name, cell)


def test_settings_table_says_which_cannot_be_set_over_http():
    from grounded_rag.serving.app import SERVER_ONLY_SETTINGS

    rows = _settings_rows()
    for name, cells in rows.items():
        expected = "no" if name in SERVER_ONLY_SETTINGS else "yes"
        assert cells[3].startswith(expected), (name, cells[3])
    assert "verify_mode" in rows


def test_one_question_limit_is_documented_and_used_by_the_page():
    assert f"limited to {MAX_QUESTION_CHARS} characters" in README
    assert f"longer than {MAX_QUESTION_CHARS} characters" in DOCS["serving.md"]
    page = (ROOT / "graph/web/index.html").read_text(encoding="utf-8")
    assert re.search(rf'<textarea id="question"[^>]*maxlength="{MAX_QUESTION_CHARS}"', page)


def test_model_cache_location_is_documented(monkeypatch):
    from grounded_rag.local.assets import cache_dir

    monkeypatch.delenv("GROUNDED_RAG_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == Path.home() / ".cache" / "grounded-rag" / "models"
    install = section(README, "Install")
    assert "`~/.cache/grounded-rag/models/`" in install
    assert "$GROUNDED_RAG_CACHE" in install


# -- scripts -----------------------------------------------------------------------------------


def _stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _tool_path(tmp_path: Path, *tools: str) -> Path:
    """A bin folder with only the named system tools, so nothing else on PATH leaks in."""
    tools_dir = tmp_path / "tools-bin"
    tools_dir.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        assert found, tool
        (tools_dir / tool).symlink_to(found)
    return tools_dir


def test_setup_installs_uv_into_its_own_environment_not_the_system_python(tmp_path):
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts/setup.sh", repo / "scripts/setup.sh")
    (repo / "requirements.lock").write_text("")
    log = tmp_path / "calls.log"
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    # A "system" python3 that can only make venvs; its venv's python can pip-install a uv
    # that records its calls and makes .venv.
    uv_body = f'echo "uv $*" >> {log}\nif [ "$1" = venv ]; then mkdir -p .venv/bin; ' \
              'printf "#!/bin/bash\\n" > .venv/bin/python; chmod +x .venv/bin/python; fi\n'
    venv_python = (f'echo "venv-python $*" >> {log}\n'
                   'if [ "$1 $2 $3" = "-m pip install" ]; then d="$(dirname "$0")"; '
                   f"cat > \"$d/uv\" <<'UV'\n#!/bin/bash\n{uv_body}UV\n"
                   'chmod +x "$d/uv"; fi\n')
    _stub(stubs / "python3", (
        f'echo "system-python $*" >> {log}\n'
        'if [ "$1" = -c ]; then echo /usr/bin/python3; exit 0; fi\n'
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; '
        f"cat > \"$3/bin/python\" <<'PY'\n#!/bin/bash\n{venv_python}PY\n"
        'chmod +x "$3/bin/python"; exit 0; fi\n'
        "exit 1\n"))
    home = tmp_path / "home"
    env = {"PATH": f"{stubs}:{_tool_path(tmp_path, 'dirname', 'mkdir', 'chmod', 'cat')}",
           "HOME": str(home), "PYTHON": str(stubs / "python3")}
    runs = [subprocess.run(["/bin/bash", str(repo / "scripts/setup.sh")], env=env,
                           capture_output=True, text=True, timeout=60) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    tools = home / ".cache" / "grounded-rag" / "tools"
    assert f"uv not found; installing it into {tools}" in runs[0].stderr
    assert "uv not found" not in runs[1].stderr  # the second run uses the uv the first installed
    calls = log.read_text().splitlines()
    assert calls.count(f"system-python -m venv {tools}") == 1
    assert calls.count("venv-python -m pip install --quiet uv") == 1
    assert not [c for c in calls if c.startswith("system-python -m pip")]
    assert "uv venv --quiet .venv --python /usr/bin/python3" in calls
    # llama.cpp's build flags go to uv as the package's build settings (its own cached
    # wheel per set of flags); AVX-512 is added only where /proc/cpuinfo lists it.
    sync = "uv pip sync --quiet --python .venv/bin/python --config-settings-package " \
           "llama-cpp-python:cmake.args=-DGGML_NATIVE=OFF"
    syncs = [c for c in calls if c.startswith("uv pip sync")]
    assert len(syncs) == 2 and all(c.startswith(sync) for c in syncs), syncs
    assert all(c.endswith(" requirements.lock") for c in syncs)
    # Flags of the user's own win, and are what uv is given.
    env["CMAKE_ARGS"] = "-DGGML_NATIVE=OFF -DGGML_BLAS=ON"
    own = subprocess.run(["/bin/bash", str(repo / "scripts/setup.sh")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert own.returncode == 0, own.stderr
    assert "build flags: -DGGML_NATIVE=OFF -DGGML_BLAS=ON" in own.stderr
    assert log.read_text().splitlines()[-2].endswith(
        "llama-cpp-python:cmake.args=-DGGML_NATIVE=OFF;-DGGML_BLAS=ON requirements.lock")


@pytest.mark.parametrize(("uid", "sudo", "flag", "code", "installs"), [
    ("0", False, "--if-possible", 0, "apt-get install -y -qq chromium"),
    ("1000", True, "--if-possible", 0, "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get"),
    ("1000", False, "--if-possible", 0, None),
    ("1000", False, "", 1, None),
])
def test_browser_install_when_the_machine_allows_it(tmp_path, uid, sudo, flag, code, installs):
    log = tmp_path / "calls.log"
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    _stub(stubs / "id", f'echo {uid}\n')
    _stub(stubs / "apt-get", f'echo "apt-get $*" >> {log}\n')
    _stub(stubs / "env", f'echo "env $*" >> {log}\nshift; "$@"\n')
    if sudo:
        _stub(stubs / "sudo", f'if [ "$2" = true ]; then exit 0; fi\necho "sudo $*" >> {log}\n')
    env = {"PATH": str(stubs), "GR_CHROMIUM": str(tmp_path / "no-chromium")}
    argv = ["/bin/bash", str(ROOT / "scripts/install-browser.sh"), *([flag] if flag else [])]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == code, proc.stderr
    calls = log.read_text() if log.exists() else ""
    if installs:
        assert installs in calls, calls
    else:
        assert calls == ""
        assert "the page tests will be skipped" in proc.stderr


def test_test_command_installs_the_browser_and_ci_uses_the_test_command():
    test_sh = (ROOT / "scripts/test.sh").read_text()
    browser = test_sh.index("scripts/install-browser.sh --if-possible")
    assert test_sh.index("scripts/setup.sh") < browser < test_sh.index("pytest")
    ci = (ROOT / ".ci/run").read_text()
    assert "bash scripts/test.sh" in ci and "install-browser" not in ci
