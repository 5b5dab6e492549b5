// The cited-answer page: ask, stream progress (SSE over fetch), render claims with citations.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const BADGE_TEXT = {
    verified: "verified", revised: "revised", removed: "removed", unchecked: "unchecked",
    pending: "checking", flagged: "warning",
  };
  const BADGE_HELP = {
    verified: "Verified: the cited source supports this claim.",
    revised: "Revised: this claim was corrected during verification and then verified.",
    removed: "Removed: the sources did not support this claim, so it was dropped.",
    unchecked: "Unchecked: sampled verification did not check this claim; only its citation was checked.",
    pending: "Checking: this claim is being verified after the answer was shown.",
    flagged: "Warning: checked after the answer was shown, the sources do not support this claim.",
  };
  let startedAt = 0;
  let currentThread = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function badge(status) {
    const name = BADGE_TEXT[status] ? status : "verified";
    return el("span", { class: `badge badge-${name}`, title: BADGE_HELP[name] },
      el("span", { class: "visually-hidden", text: "claim status: " }), BADGE_TEXT[name]);
  }

  function showError(message) {
    const box = $("form-error");
    box.textContent = message;
    box.hidden = !message;
  }

  function settingsFromForm() {
    const settings = {};
    const retries = $("max_retries").value.trim();
    const topK = $("top_k").value.trim();
    if (retries !== "") settings.max_retries = Number(retries);
    if (topK !== "") settings.top_k = Number(topK);
    if ($("review_mode").checked) settings.review_mode = true;
    if ($("preset").value) settings.preset = $("preset").value;
    if ($("verify_mode").value) settings.verify_mode = $("verify_mode").value;
    return settings;
  }

  function addProgress(text) {
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    const item = el("li", {}, el("span", { class: "elapsed", text: `${seconds}s` }), " ", text);
    $("progress").append(item);
  }

  function errorText(body, status) {
    const detail = body && body.detail;
    if (Array.isArray(detail) && detail.length) {
      return detail.map((d) => {
        const field = Array.isArray(d.loc) ? d.loc.filter((p) => p !== "body").join(".") : "";
        return field ? `${field}: ${d.msg}` : d.msg;
      }).join("; ");
    }
    if (typeof detail === "string") return detail;
    return `The server answered ${status}.`;
  }

  // Minimal Server-Sent Events parser for a fetch() body (EventSource cannot POST).
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = val;
          else if (field === "data") data.push(val);
        }
        if (data.length) onEvent(event, JSON.parse(data.join("\n")));
      }
    }
  }

  // The API key stays in this tab (sessionStorage), never in the page's address or a cookie.
  const KEY_ITEM = "grounded-rag-api-key";

  function authHeaders(headers) {
    const key = $("api_key").value.trim();
    try { if (key) sessionStorage.setItem(KEY_ITEM, key); else sessionStorage.removeItem(KEY_ITEM); }
    catch (e) { /* storage off: the field still works */ }
    return key ? { ...headers, Authorization: `Bearer ${key}` } : headers;
  }

  function askForKey(status) {
    if (status !== 401) return;
    $("ask-form").querySelector("details.settings").open = true;
    $("api_key").focus();
  }

  async function ask(question) {
    showError("");
    startedAt = performance.now();
    $("progress").replaceChildren();
    $("progress-section").hidden = false;
    const result = $("result");
    result.hidden = true;
    result.setAttribute("aria-busy", "true");
    const button = $("ask-button");
    button.disabled = true;
    button.textContent = "Working…";
    try {
      const response = await fetch("/ask/stream", {
        method: "POST",
        headers: authHeaders({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify({ question, settings: settingsFromForm() }),
      });
      if (!response.ok) {
        let body = null;
        try { body = await response.json(); } catch (e) { /* not JSON */ }
        showError(errorText(body, response.status));
        $("progress-section").hidden = true;
        askForKey(response.status);
        return;
      }
      await readEvents(response, (event, data) => {
        if (event === "start") currentThread = data.thread_id;
        else if (event === "progress") addProgress(data.message);
        else if (event === "result") { render(data); idle(); }
        else if (event === "verification") applyVerification(data);
        else if (event === "error") showError(`The run failed: ${data.message}`);
      });
    } catch (err) {
      showError(`Could not reach the server: ${err.message}`);
    } finally {
      idle();
    }
  }

  // The answer is on screen: a deferred verification may still follow on the same stream,
  // but the reader can already ask the next question.
  function idle() {
    $("result").removeAttribute("aria-busy");
    const button = $("ask-button");
    button.disabled = false;
    button.textContent = "Ask";
  }

  function pct(x) { return `${Math.round((Number(x) || 0) * 100)}%`; }

  function renderClaims(data, target) {
    const numberOf = new Map((data.sources || []).map((s, i) => [s.id, i + 1]));
    target.replaceChildren();
    (data.claims || []).forEach((claim, ci) => {
      const status = claim.status || "verified";
      const span = el("span", { class: `claim claim-${status}`, id: `claim-${ci + 1}`,
        "data-status": status });
      // Markers go before the closing punctuation, as in the answer text: "... hours[1]."
      const parts = /^([\s\S]*?)([。．.！!？?]?)$/.exec(claim.text || "");
      span.append(el("span", { class: "claim-text", text: parts[1] }));
      const seen = new Set();
      (claim.citations || []).forEach((cite, k) => {
        const n = numberOf.get(cite.source_id);
        if (!n || seen.has(n)) return;
        seen.add(n);
        const source = data.sources[n - 1];
        const quoteId = `quote-${ci + 1}-${k + 1}`;
        const wrap = el("span", { class: "cite-wrap" });
        const link = el("a", { class: "cite", href: `#ref-${n}`, "aria-describedby": quoteId,
          "aria-label": `Source ${n}: ${source.title || source.id}`, "data-source": source.id },
          `[${n}]`);
        const quote = el("span", { class: "quote", role: "tooltip", id: quoteId },
          el("q", { text: cite.quote || "" }),
          el("span", { class: "quote-source", text: ` (${source.title || source.id})` }));
        wrap.append(link, quote);
        span.append(wrap);
      });
      if (parts[2]) span.append(parts[2]);
      span.append(" ", badge(status));
      if (status === "flagged" && claim.reason) {
        span.append(el("span", { class: "claim-warning", text: ` ${claim.reason}` }));
      }
      target.append(span, " ");
    });
  }

  function claimItem(claim) {
    const verdict = claim.verdict || "neutral";
    return el("li", { class: "claim-item" }, badge("removed"), " ",
      el("span", { class: "claim-text", text: claim.text }), " ",
      el("span", { class: `verdict verdict-${verdict}`, text: verdict }),
      claim.reason ? el("span", { class: "reason", text: ` ${claim.reason}` }) : null);
  }

  function renderReferences(data) {
    const list = $("references");
    list.replaceChildren();
    (data.sources || []).forEach((source, i) => {
      const quotes = [];
      for (const claim of data.claims || []) {
        for (const cite of claim.citations || []) {
          if (cite.source_id === source.id && cite.quote && !quotes.includes(cite.quote)) {
            quotes.push(cite.quote);
          }
        }
      }
      const url = source.url || "";
      const link = /^https?:\/\//.test(url)
        ? el("a", { href: url, rel: "noopener noreferrer", text: source.title || source.id })
        : el("span", { class: "ref-title", text: source.title || source.id });
      const item = el("li", { id: `ref-${i + 1}`, tabindex: "-1" }, link, " ",
        el("code", { class: "ref-id", text: source.id }));
      if (url && !/^https?:\/\//.test(url)) item.append(" ", el("span", { class: "ref-url", text: url }));
      if (quotes.length) {
        item.append(el("ul", { class: "ref-quotes" },
          ...quotes.map((q) => el("li", {}, el("q", { text: q })))));
      }
      list.append(item);
    });
  }

  function render(data) {
    const result = $("result");
    result.hidden = false;
    result.dataset.status = data.status || "";
    result.dataset.verification = data.verification || "";
    const abstained = data.status === "abstained";
    $("answer-view").hidden = abstained;
    $("abstention").hidden = !abstained;
    $("result-heading").textContent = abstained ? "No answer" : "Answer";
    if (abstained) {
      const message = $("abstain-message");
      message.textContent = data.answer || "";
      message.lang = data.language || "en";
      const findings = $("findings");
      findings.replaceChildren(...(data.findings || []).map((f) =>
        el("li", { class: `finding severity-${f.severity}` },
          el("span", { class: `badge badge-severity badge-${f.severity}`, text: f.severity }), " ",
          el("strong", { text: f.type.replace(/_/g, " ") }), ": ", f.detail)));
      if (!findings.children.length) {
        findings.append(el("li", { text: "The model found no statement in the sources that answers this." }));
      }
      const rejected = (data.removed_claims || []).filter((c) => c.verdict !== "supported");
      $("rejected").replaceChildren(...rejected.map(claimItem));
      $("rejected-section").hidden = rejected.length === 0;
    } else {
      const answer = $("answer");
      answer.lang = data.language || "en";
      renderClaims(data, answer);
      $("summary").textContent = summaryText(data);
      showVerification(data);
      const removed = data.removed_claims || [];
      $("removed").replaceChildren(...removed.map(claimItem));
      $("removed-section").hidden = removed.length === 0;
      renderReferences(data);
      const review = data.review || {};
      $("review-pending").hidden = !review.pending;
      if (review.pending) {
        currentThread = data.thread_id;
        $("review-reason").textContent =
          `Confidence ${pct(data.confidence)} is below the review threshold. ` +
          `A person must approve, edit or reject this answer (thread ${data.thread_id}).`;
        $("review-edit").value = "";
      }
    }
    result.focus();
  }

  function summaryText(data) {
    const total = (data.claims || []).length;
    const checked = data.checked_claims === undefined ? total : data.checked_claims;
    const what = data.verification === "pending"
      ? `${total} claim(s), verification running`
      : checked < total ? `${checked} of ${total} claim(s) verified` : `${total} claim(s) verified`;
    return `${what} against ${(data.sources || []).length} source(s) · confidence ` +
      `${pct(data.confidence)} · grounding ${pct(data.grounding_score)} · ` +
      `${data.attempts || 0} attempt(s)`;
  }

  // The banner above the answer: verification still running, its late warnings, or its failure.
  function showVerification(data) {
    const banner = $("verification-banner");
    banner.replaceChildren();
    banner.className = "verification-banner";
    const state = data.verification;
    let title = "";
    if (state === "pending") {
      banner.classList.add("banner-pending");
      title = "Verifying the claims: this answer is shown before its verification finished.";
    } else if (state === "failed") {
      banner.classList.add("banner-failed");
      title = "Verification failed, so the claims below are unverified: " +
        (data.verification_error || "unknown error");
    } else if ((data.warnings || []).length) {
      banner.classList.add("banner-warning");
      title = "Checked after the answer was shown: some claims are not supported by the sources.";
    } else if ((data.flags || []).includes("verified_after_answer")) {
      banner.classList.add("banner-ok");
      title = "Checked after the answer was shown: every claim is supported by its sources.";
    } else if (state === "partial") {
      banner.classList.add("banner-partial");
      title = `Sampled verification: ${data.checked_claims} of ${(data.claims || []).length} ` +
        "claims were verified; the others only passed the citation checks.";
    }
    banner.dataset.verification = state || "";
    banner.hidden = !title;
    if (!title) return;
    banner.append(el("strong", { text: title }));
    if ((data.warnings || []).length) {
      banner.append(el("ul", {}, ...data.warnings.map((w) => el("li", { text: w }))));
    }
  }

  // A deferred verification finished: update the badges and the banner in place (no reload,
  // no focus move; the banner is a live region).
  function applyVerification(data) {
    if (data.thread_id && currentThread && data.thread_id !== currentThread) return;
    if (data.status !== "answered") { render(data); return; }
    const answer = $("answer");
    renderClaims(data, answer);
    $("summary").textContent = summaryText(data);
    showVerification(data);
    $("result").dataset.verification = data.verification || "";
    const done = data.verification === "failed" ? "verification failed"
      : `verified after the answer: ${(data.warnings || []).length} warning(s)`;
    addProgress(done);
  }

  async function decide(action) {
    if (!currentThread) return;
    const body = { action, note: $("review-note").value };
    if (action === "edit") {
      body.answer = $("review-edit").value;
      if (!body.answer.trim()) { showError("Write the edited answer first."); return; }
    }
    const response = await fetch(`/reviews/${encodeURIComponent(currentThread)}`, {
      method: "POST", headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (e) { /* not JSON */ }
    if (!response.ok) { showError(errorText(data, response.status)); askForKey(response.status); return; }
    showError("");
    addProgress(`review: ${action}`);
    render(data);
  }

  document.addEventListener("DOMContentLoaded", () => {
    try { $("api_key").value = sessionStorage.getItem(KEY_ITEM) || ""; } catch (e) { /* off */ }
    const form = $("ask-form");
    const question = $("question");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = question.value.trim();
      if (!text) { showError("Type a question first."); question.focus(); return; }
      ask(text);
    });
    question.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
    });
    for (const button of document.querySelectorAll("#review-pending button[data-action]")) {
      button.addEventListener("click", () => decide(button.dataset.action));
    }
    // Escape hides an open quote without moving focus (WCAG 1.4.13).
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && document.activeElement.classList.contains("cite")) {
        document.activeElement.parentElement.classList.add("quote-dismissed");
      }
    });
    document.addEventListener("focusout", (event) => {
      if (event.target.classList && event.target.classList.contains("cite")) {
        event.target.parentElement.classList.remove("quote-dismissed");
      }
    });
    // Following a [n] link moves focus to the reference, so keyboard users land there.
    document.addEventListener("click", (event) => {
      const link = event.target.closest && event.target.closest("a.cite");
      if (!link) return;
      const target = document.querySelector(link.getAttribute("href"));
      if (target) { event.preventDefault(); target.focus(); target.scrollIntoView({ block: "center" }); }
    });
  });
})();
