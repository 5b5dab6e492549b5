"""The cited-answer page in headless Chromium (Debian's package) against a running server."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.integration.servers import serving_app

pytestmark = [pytest.mark.integration]

CHROMIUM = os.environ.get("GR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page")
    with serving_app(tmp, checkpointer=f"sqlite:{tmp / 'c.sqlite'}") as srv:
        yield srv


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: run `bash scripts/install-browser.sh`")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def console_errors():
    return []


@contextlib.contextmanager
def open_page(browser, server, errors):
    """A fresh browser tab on the server's page that fails on errors or outside requests."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    # Offline: any request leaving the test server is a failure.
    outside: list[str] = []
    page.on("request", lambda req: None if req.url.startswith(server.url)
            else outside.append(req.url))
    page.goto(server.url + "/")
    yield page
    context.close()
    assert not errors, errors
    assert not outside, outside


@pytest.fixture
def page(browser, server, console_errors):
    with open_page(browser, server, console_errors) as tab:
        yield tab


def shots_dir(tmp_path: Path) -> Path:
    target = Path(os.environ.get("GR_SCREENSHOT_DIR") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


def ask(page, question):
    page.fill("#question", question)
    page.click("#ask-button")
    page.wait_for_selector("#result:not([hidden])", timeout=30_000)
    page.wait_for_function("!document.querySelector('#result').hasAttribute('aria-busy')")


def test_answer_with_citations_badges_references_and_quotes(page, tmp_path):
    assert page.get_attribute("#progress", "aria-live") == "polite"
    assert page.get_attribute("#progress", "role") == "log"
    assert page.locator("label[for=question]").inner_text() == "Question"

    ask(page, "Does the X100 battery last 24 hours?")
    assert page.get_attribute("#result", "data-status") == "answered"
    progress = page.locator("#progress li").all_inner_texts()
    assert any("retrieving evidence" in p for p in progress)
    assert any("revising, attempt 2 of 3" in p for p in progress)

    answer = page.locator("#answer")
    text = answer.inner_text()
    assert "The X100 battery lasts up to 10 hours on a single charge[1]." in text
    assert "Charging takes 2 hours[1]." in text
    assert page.get_attribute("#answer", "lang") == "en"
    cites = page.locator("#answer a.cite")
    assert cites.count() == 2
    assert cites.nth(0).inner_text() == "[1]"
    assert cites.nth(0).get_attribute("href") == "#ref-1"
    assert cites.nth(0).get_attribute("aria-label") == "Source 1: X100 spec sheet > Battery"
    quote_id = cites.nth(0).get_attribute("aria-describedby")
    quote = page.locator(f"#{quote_id}")
    assert quote.get_attribute("role") == "tooltip"
    assert not quote.is_visible()

    badges = page.locator("#answer .badge").all_inner_texts()
    assert sorted(b.split()[-1] for b in badges) == ["revised", "verified"]
    assert page.locator("#removed-section").is_visible()
    removed = page.locator("#removed li").all_inner_texts()
    assert len(removed) == 1 and "The X100 battery lasts 24 hours." in removed[0]
    assert "contradicted" in removed[0]

    refs = page.locator("#references > li")
    assert refs.count() == 1
    assert refs.nth(0).get_attribute("id") == "ref-1"
    assert "X100 spec sheet > Battery" in refs.nth(0).inner_text()
    assert "x100-spec#sec2" in refs.nth(0).inner_text()

    # Keyboard: the result takes focus; Tab reaches the first [n] and shows its quote.
    assert page.evaluate("document.activeElement.id") == "result"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "cite"
    assert quote.is_visible()
    assert "battery lasts up to 10 hours on a single charge" in quote.inner_text()
    page.screenshot(path=str(shots_dir(tmp_path) / "answer-focus.png"), full_page=True)
    page.keyboard.press("Escape")
    assert not quote.is_visible()
    # Enter follows the link to the reference, which takes focus.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "ref-1"

    # Hover shows the second claim's quote.
    second = cites.nth(1)
    second.hover()
    assert page.locator(f"#{second.get_attribute('aria-describedby')}").is_visible()
    assert "Charging takes 2 hours" in page.locator(
        f"#{second.get_attribute('aria-describedby')}").inner_text()


def test_abstention_view_shows_the_findings(page, tmp_path):
    ask(page, "What is the capital of Australia?")
    assert page.get_attribute("#result", "data-status") == "abstained"
    assert page.locator("#abstention").is_visible()
    assert not page.locator("#answer-view").is_visible()
    assert page.locator("#result-heading").inner_text() == "No answer"
    assert page.locator("#abstain-message").inner_text() == "The sources do not say."
    findings = page.locator("#findings li").all_inner_texts()
    assert any("weak evidence" in f and "critical" in f for f in findings)
    assert page.locator("#answer a.cite").count() == 0
    page.screenshot(path=str(shots_dir(tmp_path) / "abstention.png"), full_page=True)


def test_empty_question_and_server_side_errors_are_announced(page, console_errors):
    page.fill("#question", "   ")
    page.click("#ask-button")
    alert = page.locator("#form-error")
    assert alert.get_attribute("role") == "alert"
    assert alert.inner_text() == "Type a question first."
    page.fill("#question", "How long does the X100 battery last?")
    page.click("summary")
    page.fill("#top_k", "0")
    page.click("#ask-button")
    page.wait_for_function("document.querySelector('#form-error').textContent.includes('top_k')")
    assert ">= 1" in alert.inner_text()
    # Chromium logs the 422 itself; that one is expected.
    assert console_errors == ["Failed to load resource: the server responded with a status of "
                              "422 (Unprocessable Entity)"]
    console_errors.clear()


def test_review_mode_from_the_page(page, server):
    page.click("summary")
    page.check("#review_mode")
    # The page has no threshold control; the fake answer's confidence is ~0.9, above 0.8.
    ask(page, "How long does the X100 battery last?")
    assert page.get_attribute("#result", "data-status") == "answered"
    assert not page.locator("#review-pending").is_visible()


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory):
    from grounded_rag.serving.auth import KeyStore

    tmp = tmp_path_factory.mktemp("page-keys")
    store = KeyStore(tmp / "keys.json")
    key = store.create("page-user", "asker")
    with serving_app(tmp, checkpointer="memory", GR_TEST_KEYS=str(store.path)) as srv:
        yield srv, key


def test_a_server_with_keys_asks_the_page_for_one(browser, keyed_server, console_errors):
    server, key = keyed_server
    with open_page(browser, server, console_errors) as page:
        page.fill("#question", "How long does the X100 battery last?")
        page.click("#ask-button")
        page.wait_for_function("document.querySelector('#form-error').textContent"
                               ".includes('API key')")
        assert page.evaluate("document.activeElement.id") == "api_key"  # settings opened
        assert console_errors == ["Failed to load resource: the server responded with a "
                                  "status of 401 (Unauthorized)"]
        console_errors.clear()
        page.fill("#api_key", key)
        ask(page, "How long does the X100 battery last?")
        assert page.get_attribute("#result", "data-status") == "answered"
        # The key stays with the tab (a reload keeps it), never in the address.
        page.reload()
        assert page.input_value("#api_key") == key and key not in page.url


@pytest.fixture(scope="module")
def slow_verifier_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page-deferred")
    with serving_app(tmp, checkpointer=f"sqlite:{tmp / 'c.sqlite'}",
                     GR_TEST_VERIFY_DELAY="2") as srv:
        yield srv


def ask_deferred(page, question):
    """Ask with verification after the answer; return once the (unverified) answer shows."""
    page.click("summary")
    page.select_option("#verify_mode", "deferred")
    page.fill("#question", question)
    page.click("#ask-button")
    page.wait_for_selector("#result[data-verification=pending]", timeout=30_000)


def test_deferred_verification_badges_and_banner_appear_without_a_reload(
        browser, slow_verifier_server, console_errors, tmp_path):
    with open_page(browser, slow_verifier_server, console_errors) as page:
        page.evaluate("window.sameDocument = true")
        ask_deferred(page, "Does the X100 battery last 24 hours?")
        # The answer is on screen while its claims are still being checked.
        assert page.get_attribute("#result", "data-status") == "answered"
        badges = page.locator("#answer .badge").all_inner_texts()
        assert [b.split()[-1] for b in badges] == ["checking", "checking"]
        banner = page.locator("#verification-banner")
        assert banner.is_visible() and "before its verification finished" in banner.inner_text()
        assert banner.get_attribute("role") == "status"
        assert page.evaluate("document.activeElement.id") == "result"
        assert page.is_enabled("#ask-button")  # the next question need not wait
        page.screenshot(path=str(shots_dir(tmp_path) / "deferred-pending.png"), full_page=True)

        page.wait_for_selector("#result[data-verification=complete]", timeout=30_000)
        assert page.evaluate("window.sameDocument") is True  # no reload
        badges = page.locator("#answer .badge").all_inner_texts()
        assert [b.split()[-1] for b in badges] == ["warning", "verified"]
        first = page.locator("#claim-1")
        assert first.get_attribute("data-status") == "flagged"
        assert "not 24" in first.inner_text()
        assert "some claims are not supported" in banner.inner_text()
        assert "The X100 battery lasts 24 hours." in banner.locator("li").inner_text()
        assert "banner-warning" in banner.get_attribute("class")
        assert "2 claim(s) verified" in page.locator("#summary").inner_text()
        assert page.evaluate("document.activeElement.id") == "result"  # focus stays put
        page.wait_for_function("!document.querySelector('#result').hasAttribute('aria-busy')")
        page.screenshot(path=str(shots_dir(tmp_path) / "deferred-warning.png"), full_page=True)


def test_deferred_verification_failure_is_shown_on_the_page(
        browser, slow_verifier_server, console_errors):
    with open_page(browser, slow_verifier_server, console_errors) as page:
        ask_deferred(page, "How long does the fragile X100 battery last?")
        page.wait_for_selector("#result[data-verification=failed]", timeout=30_000)
        banner = page.locator("#verification-banner")
        assert "banner-failed" in banner.get_attribute("class")
        assert "RuntimeError: the judge is unavailable" in banner.inner_text()
        badges = page.locator("#answer .badge").all_inner_texts()
        assert [b.split()[-1] for b in badges] == ["unchecked"]
