"""``/metrics`` of a server with several workers adds up over all of them (prometheus-client's
multiprocess mode): whichever worker a scrape reaches, counters and histograms equal the
requests sent to the server, gauges sum the live workers, and a killed worker's counts stay
while its gauges go."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.servers import Server, grounded_rag_serve, worker_health

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]

GRAPH = "tests.serving_app:build_test_graph"
UNANSWERABLE = "What is the capital of Australia?"


def scrape(server: Server) -> dict[tuple[str, tuple], float]:
    """One ``/metrics`` on a new connection (so scrapes reach different workers)."""
    with httpx.Client(timeout=30) as client:
        response = client.get(server.url + "/metrics")
    assert response.status_code == 200, response.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}


def ask_fresh(url: str, question: str) -> int:
    """One question on its own connection (the kernel hands it to any worker)."""
    with httpx.Client(base_url=url, timeout=60) as client:
        response = client.post("/rag/invoke", json={"input": {"question": question}})
    return response.status_code


def send(server: Server, questions: list[str], threads: int = 8) -> None:
    with ThreadPoolExecutor(threads) as pool:
        statuses = list(pool.map(lambda q: ask_fresh(server.url, q), questions))
    assert statuses == [200] * len(questions), statuses


def admitted(server: Server, workers: int) -> dict[int, int]:
    """Requests each worker let run the graph (``/healthz``), by pid."""
    return {pid: body["admitted"] for pid, body in worker_health(server, workers).items()}


def assert_totals(found: dict, answered: int, abstained: int, workers: int) -> None:
    total = answered + abstained
    assert found[("rag_queries_total", (("status", "answered"),))] == answered
    assert found[("rag_queries_total", (("status", "abstained"),))] == abstained
    assert found[("rag_abstentions_total", (("reason", "weak_evidence"),))] == abstained
    assert found[("rag_query_latency_seconds_count", (("stage", "total"),))] == total
    assert found[("rag_query_latency_seconds_bucket", (("le", "+Inf"),
                                                       ("stage", "total")))] == total
    assert found[("rag_answer_confidence_count", ())] == answered
    assert found[("rag_query_cost_usd_count", (("model", "gpt-4.1-mini"),))] == answered
    assert found[("rag_workers", ())] == workers
    assert found[("rag_http_in_flight", ())] == 0
    assert found[("rag_http_queued", ())] == 0


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_a_scrape_of_any_worker_counts_every_request(tmp_path, postgres, workers):
    env: dict[str, str] = {}
    if workers == 2:
        # A metrics directory of one's own: a previous server's values in it are dropped.
        stale = tmp_path / "metrics"
        stale.mkdir()
        subprocess.run([sys.executable, "-c",
                        "from grounded_rag.serving.metrics import RagMetrics\n"
                        "RagMetrics().queries.labels(status='answered').inc(1000)"],
                       env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(stale)}, check=True,
                       timeout=120)
        assert list(stale.glob("counter_*.db"))
        env["PROMETHEUS_MULTIPROC_DIR"] = str(stale)
    with grounded_rag_serve(tmp_path, "--workers", str(workers), "--graph", GRAPH,
                            "--checkpointer", postgres, name=f"metrics-{workers}w",
                            GR_TEST_SLOW_DELAY="4", **env) as server:
        worker_health(server, workers)
        # Letters only: a code such as "a3f9c1" in a question that no source holds is a
        # thing the documents do not mention, and the answer abstains (coverage.focus_uncited).
        run = uuid.uuid4().hex[:6].translate(str.maketrans("0123456789", "ghijklmnop"))
        answered = abstained = 0
        # Send until every worker has served some (new connections spread over them).
        for _ in range(10):
            # (The scripted judge contradicts any claim with "24" in it: no such item here.)
            items = [i for i in range(10 * workers) if "24" not in str(i)][:8 * workers]
            questions = [UNANSWERABLE if i % 4 == 3 else f"What does item {i} ({run}) weigh?"
                         for i in items]
            send(server, questions)
            abstained += sum(q == UNANSWERABLE for q in questions)
            answered += sum(q != UNANSWERABLE for q in questions)
            per_worker = admitted(server, workers)
            if all(per_worker.values()):
                break
        assert all(per_worker.values()), f"a worker served nothing: {per_worker}"
        assert sum(per_worker.values()) == answered + abstained
        if workers > 1:  # no single worker saw them all: only a sum can give the total
            assert max(per_worker.values()) < answered + abstained
        for _ in range(3 * workers):  # scrapes land on different workers
            assert_totals(scrape(server), answered, abstained, workers)

        if workers == 1:
            return
        # Gauges: requests held in flight on several workers are summed.
        slow = [f"What does item {i} weigh, slowly?" for i in range(2 * workers)]
        with ThreadPoolExecutor(len(slow)) as pool:
            futures = [pool.submit(ask_fresh, server.url, q) for q in slow]
            deadline = time.monotonic() + 15
            seen = 0.0
            while seen < len(slow):
                assert time.monotonic() < deadline, f"in flight: {seen} of {len(slow)}"
                seen = scrape(server)[("rag_http_in_flight", ())]
                assert seen <= len(slow)
                time.sleep(0.05)
            busy = {pid: h["in_flight"] for pid, h in worker_health(server, workers).items()}
            assert sum(busy.values()) == len(slow), busy
            assert [f.result() for f in futures] == [200] * len(slow)
        answered += len(slow)
        assert_totals(scrape(server), answered, abstained, workers)

        if workers != 2:
            return
        # A killed worker: its counts stay (counters never go back), its gauges go.
        victim = next(iter(worker_health(server, workers)))
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 90
        while True:
            pids = set(worker_health(server, workers, timeout=90))
            if victim not in pids:
                break
            assert time.monotonic() < deadline, "the killed worker was not replaced"
            time.sleep(0.5)
        for _ in range(4):
            assert_totals(scrape(server), answered, abstained, workers)
        print(f"\n{workers} workers: {sum(per_worker.values())} requests (per worker "
              f"{sorted(per_worker.values())}), then {len(slow)} held in flight; every scrape "
              f"counted all {answered + abstained}, also after a worker was killed and replaced")


def test_the_server_removes_the_metrics_directory_it_made(tmp_path, postgres):
    import tempfile

    def ours() -> set[str]:
        return {p for p in os.listdir(tempfile.gettempdir())
                if p.startswith("grounded-rag-metrics-")}

    before = ours()
    with grounded_rag_serve(tmp_path, "--workers", "2", "--graph", GRAPH, "--checkpointer",
                            postgres, name="metrics-dir") as server:
        pids = set(worker_health(server, 2))
        # Other servers may run meanwhile: this one's directory holds its workers' files.
        made = [os.path.join(tempfile.gettempdir(), name) for name in ours() - before]
        mine = [d for d in made if any(f.endswith(f"_{pid}.db") for f in os.listdir(d)
                                       for pid in pids)]
        assert len(mine) == 1, made
    assert not os.path.exists(mine[0])
