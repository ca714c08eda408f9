/* agentic-rag web page: plain JavaScript, no build step, no external requests.
   Talks to the same /v1 API as any client: /v1/ask (server-sent events), sessions, documents,
   feedback, /v1/info. */
"use strict";

// ------------------------------------------------------------------ interface text
const TEXT = {
  zh: {
    "dates.title": "日期候选", "dates.confirm": "确认为{field}", "dates.confirmed": "已确认",
    "dates.none": "未找到日期", "dates.saved": "已确认{field}：{date}", "doc.page": "第 {n} 页（原文页面，框出引用位置）",
    "kind.publish": "发布", "kind.effective": "生效", "kind.signature": "签署", "kind.amendment": "修订",
    skip: "跳到内容", "nav.ask": "问答", "nav.docs": "文档",
    "sessions.title": "会话", "sessions.new": "新会话", "sessions.empty": "还没有会话",
    "ask.label": "问题", "ask.placeholder": "例如：高温补贴一个月多少钱？（Enter 提问，Shift+Enter 换行）",
    "ask.submit": "提问", "ask.stop": "停止", "ask.working": "正在检索与推理…",
    "controls.title": "检索与推理设置", "controls.retrieval": "检索强度", "controls.reflection": "反思深度",
    "controls.latitude": "推断范围", "controls.mode": "模式", "controls.llm": "使用 LLM",
    "retrieval.1": "1 个查询 × 1 轮", "retrieval.2": "每轮 2 个查询 × 最多 2 轮",
    "retrieval.3": "每轮 3 个查询 × 最多 3 轮（默认）", "retrieval.4": "每轮 3 个查询 × 最多 5 轮",
    "reflection.0": "快速：一轮检索，跳过充分性与核验关卡", "reflection.1": "标准：全部关卡（默认）",
    "reflection.2": "严格：充分性门槛 0.8，逐句复核",
    "latitude.0": "严格：证据不完整就不作回答", "latitude.1": "适中：回答已找到的部分并说明缺口（默认）",
    "latitude.2": "宽松：证据不足时给出最接近的条文，标为待核对",
    "status.answered": "已回答", "status.needs_review": "需复核", "status.abstained": "未回答",
    "status.aborted": "已中止", "status.running": "进行中", "status.error": "出错",
    "evidence.title": "证据", "evidence.open": "打开原文", "evidence.irrelevant": "不相关",
    "evidence.quote": "引文", "conflicts.title": "冲突", "conflicts.winner": "采用",
    "conflicts.rule": "裁决规则", "gaps.title": "文档未覆盖", "feedback.up": "有用", "feedback.down": "没用",
    "feedback.reason": "原因（可选）", "feedback.send": "提交反馈", "feedback.thanks": "已记录反馈",
    "progress.title": "任务进度", "progress.empty": "提问后，这里会实时画出每一步。",
    "progress.missing": "缺少", "progress.ms": "毫秒", "progress.round": "轮次",
    "doc.close": "关闭", "doc.clause_missing": "未找到该条款",
    "meta.title": "标题", "meta.doc_number": "文号", "meta.authority": "发布机关",
    "meta.publish_date": "发布日期", "meta.effective_date": "生效日期", "meta.version": "版本",
    "meta.status": "状态", "meta.chunks": "条款数", "meta.source": "来源", "meta.clause": "条款",
    "docstatus.active": "现行有效", "docstatus.superseded": "已被取代", "docstatus.repealed": "已废止",
    "upload.title": "上传文件", "upload.pick": "选择或拖入文件（.txt .md .html .docx .pdf .csv .xlsx .pptx .jsonl）",
    "upload.submit": "上传并入库", "upload.waiting": "等待上传", "upload.none": "请先选择文件",
    "ingest.added": "已入库", "ingest.unchanged": "未变化", "ingest.replaced": "已替换", "ingest.failed": "失败",
    "docs.title": "文档列表", "docs.empty": "索引里还没有文档", "info": "{docs} 份文档 · {chunks} 个条款",
    "cached": "来自缓存", "deadline": "超时：以下为确定性答案", "key.prompt": "此服务需要 API 密钥：",
    "turn.steps": "查看步骤",
    "report.title": "报告", "report.template": "模板", "report.run": "生成报告",
    "report.status.complete": "已完成", "report.status.needs_review": "需复核",
    "report.status.incomplete": "未完成", "report.status.aborted": "已中止",
  },
  en: {
    "dates.title": "Date candidates", "dates.confirm": "Confirm as {field}", "dates.confirmed": "confirmed",
    "dates.none": "No dates found", "dates.saved": "{field} confirmed: {date}", "doc.page": "Page {n} (the cited blocks boxed)",
    "kind.publish": "publish", "kind.effective": "effective", "kind.signature": "signature", "kind.amendment": "amendment",
    skip: "Skip to content", "nav.ask": "Ask", "nav.docs": "Documents",
    "sessions.title": "Conversations", "sessions.new": "New", "sessions.empty": "No conversations yet",
    "ask.label": "Question", "ask.placeholder": "e.g. What is the hotel limit per night? (Enter asks, Shift+Enter adds a line)",
    "ask.submit": "Ask", "ask.stop": "Stop", "ask.working": "Searching and reasoning…",
    "controls.title": "Retrieval and reasoning", "controls.retrieval": "Retrieval intensity",
    "controls.reflection": "Reflection depth", "controls.latitude": "Inference latitude", "controls.mode": "Mode",
    "controls.llm": "Use the LLM",
    "retrieval.1": "1 query × 1 round", "retrieval.2": "2 queries a round × up to 2 rounds",
    "retrieval.3": "3 queries a round × up to 3 rounds (default)", "retrieval.4": "3 queries a round × up to 5 rounds",
    "reflection.0": "Quick: one round, no sufficiency or verification gate", "reflection.1": "Standard: every gate (default)",
    "reflection.2": "Thorough: sufficiency bar 0.8, every sentence re-verified",
    "latitude.0": "Strict: no answer unless the evidence covers the whole question",
    "latitude.1": "Balanced: answer what was found, name the rest (default)",
    "latitude.2": "Lenient: quote the closest passages, marked needs review",
    "status.answered": "answered", "status.needs_review": "needs review", "status.abstained": "abstained",
    "status.aborted": "aborted", "status.running": "running", "status.error": "error",
    "evidence.title": "Evidence", "evidence.open": "Open at clause", "evidence.irrelevant": "Not relevant",
    "evidence.quote": "Quote", "conflicts.title": "Conflicts", "conflicts.winner": "winner",
    "conflicts.rule": "rule", "gaps.title": "Not covered by the documents", "feedback.up": "Helpful",
    "feedback.down": "Not helpful", "feedback.reason": "Reason (optional)", "feedback.send": "Send feedback",
    "feedback.thanks": "Feedback recorded",
    "progress.title": "Task progress", "progress.empty": "Ask a question and each step is drawn here as it happens.",
    "progress.missing": "missing", "progress.ms": "ms", "progress.round": "round",
    "doc.close": "Close", "doc.clause_missing": "clause not found",
    "meta.title": "Title", "meta.doc_number": "Doc. no.", "meta.authority": "Authority",
    "meta.publish_date": "Published", "meta.effective_date": "Effective", "meta.version": "Version",
    "meta.status": "Status", "meta.chunks": "Clauses", "meta.source": "Source", "meta.clause": "Clause",
    "docstatus.active": "in force", "docstatus.superseded": "superseded", "docstatus.repealed": "repealed",
    "upload.title": "Upload files", "upload.pick": "Choose or drop files (.txt .md .html .docx .pdf .csv .xlsx .pptx .jsonl)",
    "upload.submit": "Upload and ingest", "upload.waiting": "waiting", "upload.none": "Choose a file first",
    "ingest.added": "added", "ingest.unchanged": "unchanged", "ingest.replaced": "replaced", "ingest.failed": "failed",
    "docs.title": "Documents", "docs.empty": "The index has no documents yet", "info": "{docs} documents · {chunks} clauses",
    "cached": "from the cache", "deadline": "deadline passed: the deterministic answer", "key.prompt": "This service needs an API key:",
    "turn.steps": "Show steps",
    "report.title": "Report", "report.template": "Template", "report.run": "Make the report",
    "report.status.complete": "complete", "report.status.needs_review": "needs review",
    "report.status.incomplete": "incomplete", "report.status.aborted": "aborted",
  },
};

const state = {
  lang: localStorage.getItem("arag.lang") || ((navigator.language || "zh").toLowerCase().startsWith("zh") ? "zh" : "en"),
  info: null,
  docs: new Map(),          // doc_id -> DocumentSummary
  docCache: new Map(),      // doc_id -> DocumentView
  session: null,            // current session id
  running: null,            // {session, controller, turn}
  turns: [],                // rendered turns of the current session [{question, answer, trace, el}]
  timings: [],              // per question: {asked, firstStep, answer} (performance.now ms), read by bench/web.py
  lastRequest: null,        // the last /v1/ask body, read by the browser tests
};
window.__arag = state;

const $ = (id) => document.getElementById(id);
function t(key, vars) {
  let s = (TEXT[state.lang] && TEXT[state.lang][key]) || TEXT.en[key] || key;
  for (const [k, v] of Object.entries(vars || {})) s = s.replace(`{${k}}`, v);
  return s;
}
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// ------------------------------------------------------------------ HTTP
function headers(extra) {
  const h = Object.assign({}, extra || {});
  const key = localStorage.getItem("arag.key");
  if (key) h["X-API-Key"] = key;
  return h;
}
async function api(path, options) {
  options = options || {};
  const init = Object.assign({}, options, { headers: headers(options.headers) });
  let r = await fetch(path, init);
  if (r.status === 401) {
    const key = window.prompt(t("key.prompt"));
    if (key) { localStorage.setItem("arag.key", key); init.headers = headers(options.headers); r = await fetch(path, init); }
  }
  if (!r.ok) {
    let msg = `${r.status}`;
    try { const body = await r.json(); msg = body.error ? `${body.error.code}: ${body.error.message}` : msg; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  return r;
}
const getJSON = async (path) => (await api(path)).json();
const postJSON = async (path, body) => (await api(path, {
  method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })).json();

// ------------------------------------------------------------------ language
function applyLanguage() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  $("lang").textContent = state.lang === "zh" ? "EN" : "中文";
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
  updateControls();
  showInfo();
  for (const turn of state.turns) renderTurn(turn);
  renderSessions();
  renderDocRows();
  if (state.graphTrace) drawGraph(state.graphTrace);
}

// ------------------------------------------------------------------ controls
const CONTROLS = ["retrieval", "reflection", "latitude"];
function updateControls() {
  for (const name of CONTROLS) {
    const input = $(`c-${name}`);
    $(`c-${name}-out`).textContent = input.value;
    const help = t(`${name}.${input.value}`);
    $(`c-${name}-help`).textContent = help;
    input.setAttribute("aria-valuetext", `${input.value}: ${help}`);
    localStorage.setItem(`arag.c.${name}`, input.value);
  }
  localStorage.setItem("arag.c.mode", $("c-mode").value);
}
function restoreControls() {
  for (const name of CONTROLS) {
    const v = localStorage.getItem(`arag.c.${name}`);
    if (v !== null) $(`c-${name}`).value = v;
    $(`c-${name}`).addEventListener("input", updateControls);
  }
  const mode = localStorage.getItem("arag.c.mode");
  if (mode) $("c-mode").value = mode;
  $("c-mode").addEventListener("change", updateControls);
}
function askBody(question) {
  const body = {
    question, session_id: state.session, mode: $("c-mode").value,
    llm: state.info && state.info.llm && $("c-llm").checked ? "auto" : "none",
    controls: Object.fromEntries(CONTROLS.map((n) => [n, Number($(`c-${n}`).value)])),
  };
  return body;
}

async function loadInfo() {
  try {
    state.info = await getJSON("/v1/info");
  } catch (e) { showError(e.message); return; }
  const info = state.info;
  if (!localStorage.getItem("arag.c.mode")) $("c-mode").value = info.default_mode;
  $("c-llm-wrap").hidden = !info.llm;
  $("c-llm-name").textContent = info.llm ? `(${info.llm})` : "";
  showInfo();
}
function showInfo() {
  if (state.info) $("index-info").textContent = t("info", { docs: state.info.docs, chunks: state.info.chunks });
}

// ------------------------------------------------------------------ sessions sidebar
function savedSessions() {
  try { return JSON.parse(localStorage.getItem("arag.sessions") || "[]"); } catch (e) { return []; }
}
function rememberSession(id, title) {
  const list = savedSessions().filter((s) => s.id !== id);
  const old = savedSessions().find((s) => s.id === id);
  list.unshift({ id, title: (old && old.title) || title, at: Date.now() });
  localStorage.setItem("arag.sessions", JSON.stringify(list.slice(0, 30)));
  renderSessions();
}
function renderSessions() {
  const ul = $("session-list");
  ul.replaceChildren();
  const list = savedSessions();
  if (!list.length) ul.append(el("li", { class: "muted", text: t("sessions.empty") }));
  for (const s of list) {
    ul.append(el("li", {}, el("button", {
      type: "button", class: "session" + (s.id === state.session ? " current" : ""),
      "aria-current": s.id === state.session ? "true" : null, title: s.title,
      onclick: () => openSession(s.id),
    }, s.title)));
  }
}
async function openSession(id) {
  let view;
  try { view = await getJSON(`/v1/sessions/${encodeURIComponent(id)}`); } catch (e) {
    localStorage.setItem("arag.sessions", JSON.stringify(savedSessions().filter((s) => s.id !== id)));
    renderSessions(); showError(e.message); return;
  }
  state.session = id;
  state.turns = [];
  $("turns").replaceChildren();
  for (const turn of view.turns) {
    const tr = newTurn(turn.question);
    tr.answer = turn.answer; tr.trace = turn.answer.trace || []; tr.status = turn.answer.status;
    renderTurn(tr);
  }
  const last = state.turns[state.turns.length - 1];
  if (last) drawGraph(last.trace); else clearGraph();
  renderSessions();
}
function newSession() {
  state.session = null; state.turns = [];
  $("turns").replaceChildren(); clearGraph(); closeDoc(); renderSessions();
  $("question").focus();
}

// ------------------------------------------------------------------ asking
function showError(msg) { const p = $("ask-error"); p.textContent = msg; p.hidden = !msg; }

async function ask(question) {
  showError("");
  if (!state.session) {
    const created = await postJSON("/v1/sessions", {});
    state.session = created.session_id;
  }
  rememberSession(state.session, question.slice(0, 60));
  const turn = newTurn(question);
  turn.status = "running";
  renderTurn(turn);
  const timing = { asked: performance.now(), firstStep: null, answer: null };
  state.timings.push(timing);
  clearGraph();
  const controller = new AbortController();
  state.running = { session: state.session, controller, turn };
  $("stop").disabled = false; $("ask").disabled = true;
  const body = askBody(question);
  state.lastRequest = body;
  try {
    const r = await api("/v1/ask", {
      method: "POST", signal: controller.signal,
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" }, body: JSON.stringify(body) });
    await readEvents(r, (name, data) => {
      if (name === "answer") {
        turn.answer = data; turn.status = data.status; renderTurn(turn);
        timing.answer = performance.now();
      } else if (name === "error") {
        turn.status = "error"; turn.error = data.error ? data.error.message : String(data); renderTurn(turn);
      } else if (name !== "done") {
        turn.trace.push(data); drawGraph(turn.trace);
        if (timing.firstStep === null) timing.firstStep = performance.now();
        const working = turn.el && turn.el.querySelector(".working");
        if (working) working.textContent = `${t("ask.working")} ${stepLabel(data)}`;
      }
    });
  } catch (e) {
    if (turn.status === "running") {
      turn.status = controller.signal.aborted ? "aborted" : "error";
      turn.error = controller.signal.aborted ? "" : e.message;
      renderTurn(turn);
    }
  } finally {
    state.running = null;
    $("stop").disabled = true; $("ask").disabled = false;
    if (turn.status === "running") { turn.status = "error"; turn.error = "the stream ended without an answer"; renderTurn(turn); }
  }
}

async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
      let name = "message"; const data = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

async function stop() {
  const run = state.running;
  if (!run) return;
  $("stop").disabled = true;
  try { await postJSON(`/v1/sessions/${encodeURIComponent(run.session)}/abort`, {}); } catch (e) { /* the stream says */ }
  // the run stops at its next step and streams an "aborted" answer; a run stuck inside one
  // step is cut off by closing the stream after a grace period
  setTimeout(() => { if (state.running === run) run.controller.abort(); }, 8000);
}

// ------------------------------------------------------------------ one turn (question + answer)
function newTurn(question) {
  const turn = { question, answer: null, trace: [], status: "running", el: null, irrelevant: new Set() };
  turn.el = el("article", { class: "turn" });
  $("turns").append(turn.el);
  state.turns.push(turn);
  return turn;
}

function badge(status) {
  return el("span", { class: `badge s-${status}`, "data-status": status, text: t(`status.${status}`) });
}

function renderTurn(turn) {
  const a = turn.answer;
  const parts = [el("h3", { class: "q" }, el("span", { class: "q-text", text: turn.question }), badge(turn.status))];
  if (!a) {
    parts.push(turn.status === "running" ? el("p", { class: "working muted", text: t("ask.working") })
      : el("p", { class: "error", text: turn.error || t(`status.${turn.status}`) }));
    turn.el.replaceChildren(...parts);
    return;
  }
  const notes = [];
  if (a.cached) notes.push(t("cached"));
  if (a.deadline_fallback) notes.push(t("deadline"));
  if (notes.length) parts.push(el("p", { class: "muted small-note", text: notes.join(" · ") }));
  parts.push(el("p", { class: "answer" }, answerText(a, turn)));
  if (a.conflicts && a.conflicts.length) parts.push(conflictBlock(a, turn));
  if (a.gaps && a.gaps.length) {
    parts.push(el("section", { class: "gaps", "aria-label": t("gaps.title") },
      el("h4", { text: t("gaps.title") }), el("ul", {}, a.gaps.map((g) => el("li", { text: g })))));
  }
  if (a.citations && a.citations.length) {
    parts.push(el("section", { class: "evidence", "aria-label": t("evidence.title") },
      el("h4", { text: `${t("evidence.title")} (${a.citations.length})` }),
      a.citations.map((c, i) => citationCard(c, i + 1, turn))));
  }
  parts.push(feedbackBlock(turn));
  if (turn.trace.length) parts.push(el("button", { type: "button", class: "link", onclick: () => drawGraph(turn.trace), text: t("turn.steps") }));
  turn.el.replaceChildren(...parts);
}

function answerText(a, turn) {
  const out = [];
  const re = /\[(\d+)\]/g;
  let last = 0, m;
  while ((m = re.exec(a.text))) {
    out.push(a.text.slice(last, m.index));
    const n = Number(m[1]);
    const c = a.citations[n - 1];
    out.push(c ? el("button", { type: "button", class: "cite", "data-n": n, "aria-label": `[${n}] ${c.title} ${c.clause || ""}`,
      onclick: () => openCitation(c) }, `[${n}]`) : m[0]);
    last = re.lastIndex;
  }
  out.push(a.text.slice(last));
  return out;
}

function docOf(docId) { return state.docs.get(docId); }
function docIdOf(chunkId) { return chunkId.split(":")[0]; }

function metaRows(meta) {
  const rows = [];
  for (const key of ["doc_number", "authority", "publish_date", "effective_date", "version"]) {
    if (meta[key]) rows.push(el("div", {}, el("dt", { text: t(`meta.${key}`) }), el("dd", { text: meta[key] })));
  }
  rows.push(el("div", {}, el("dt", { text: t("meta.status") }), el("dd", {}, docStatus(meta.status || "active"))));
  return el("dl", { class: "meta" }, rows);
}
function docStatus(status) {
  return el("span", { class: `docstatus d-${status}`, text: t(`docstatus.${status}`) });
}

function citationCard(c, n, turn) {
  const summary = docOf(c.doc_id);
  const meta = summary ? summary.meta : {};
  const superseded = meta.status && meta.status !== "active";
  const toggle = el("button", {
    type: "button", class: "small toggle", "aria-pressed": turn.irrelevant.has(c.chunk_id) ? "true" : "false",
    onclick: () => markIrrelevant(turn, c.chunk_id, toggle) }, t("evidence.irrelevant"));
  return el("details", { class: "card" + (superseded ? " superseded" : ""), open: true, "data-chunk": c.chunk_id },
    el("summary", {},
      el("span", { class: "n", text: `[${n}]` }),
      el("span", { class: "card-title", text: c.title || c.doc_id }),
      c.clause ? el("span", { class: "clause", text: c.clause }) : null,
      superseded ? docStatus(meta.status) : null),
    el("blockquote", { class: "quote", text: c.quote }),
    metaRows(meta),
    el("div", { class: "card-actions" },
      el("button", { type: "button", class: "small", onclick: () => openCitation(c), text: t("evidence.open") }), toggle));
}

function conflictBlock(a, turn) {
  return el("section", { class: "conflicts", "aria-label": t("conflicts.title") },
    el("h4", { text: t("conflicts.title") }),
    a.conflicts.map((cf) => el("div", { class: "conflict-card" },
      el("p", { class: "matter", text: cf.matter }),
      el("ul", {}, cf.values.map((v) => {
        const won = v.chunk_id === cf.winner;
        const cite = a.citations.find((c) => c.chunk_id === v.chunk_id) ||
          { chunk_id: v.chunk_id, doc_id: docIdOf(v.chunk_id), title: v.title, clause: v.clause, quote: v.value, span: [0, 0] };
        return el("li", { class: won ? "winner" : "loser" },
          el("strong", { class: "value", text: v.value }), " ",
          el("button", { type: "button", class: "link", onclick: () => openCitation(cite),
            text: `${v.title || v.chunk_id}${v.clause ? " " + v.clause : ""}${v.publish_date ? " · " + v.publish_date : ""}` }),
          won ? el("span", { class: "won", text: ` ✓ ${t("conflicts.winner")}` }) : null);
      })),
      el("p", { class: "rule" }, `${t("conflicts.rule")}: `, el("strong", { class: "rule-name", "data-rule": cf.rule, text: ruleName(cf.rule) })))));
}

// the arbitration rules' names (agents/conflicts.py) in the Chinese interface
const RULE_ZH = [[/^superseded$/, "旧版已被取代"], [/^newer \(≥1 year\)$/, "新版优先（相隔≥1年）"],
  [/^authority×recency$/, "权威×时效"], [/^override: (.*)$/, "人工指定：$1"], [/^undecided$/, "未能裁决"], [/^pinned version (.+)$/, "指定版本 $1"]];
function ruleName(rule) {
  if (state.lang !== "zh") return rule;
  for (const [re, zh] of RULE_ZH) if (re.test(rule)) return `${rule.replace(re, zh)}（${rule}）`;
  return rule;
}

function feedbackBlock(turn) {
  const a = turn.answer;
  const reason = el("input", { type: "text", class: "reason", id: `reason-${a.answer_id}`, maxlength: "2000" });
  const note = el("span", { class: "muted", role: "status" });
  const send = (rating) => async () => {
    try {
      await postJSON("/v1/feedback", { answer_id: a.answer_id, rating, reason: reason.value || null,
        irrelevant_chunk_ids: [...turn.irrelevant] });
      note.textContent = t("feedback.thanks");
    } catch (e) { note.textContent = e.message; }
  };
  return el("div", { class: "feedback" },
    el("button", { type: "button", class: "small thumb", "data-rating": "up", title: "👍", onclick: send("up") }, thumb(false), t("feedback.up")),
    el("button", { type: "button", class: "small thumb", "data-rating": "down", title: "👎", onclick: send("down") }, thumb(true), t("feedback.down")),
    el("label", { for: `reason-${a.answer_id}`, class: "sr-only", text: t("feedback.reason") }),
    Object.assign(reason, { placeholder: t("feedback.reason") }), note);
}

/** A thumb icon drawn inline (not every system has an emoji font). */
function thumb(down) {
  return svg("svg", { viewBox: "0 0 24 24", width: "14", height: "14", "aria-hidden": "true", class: down ? "down" : "up" },
    svg("path", { d: "M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z", fill: "currentColor" }));
}

async function markIrrelevant(turn, chunkId, button) {
  if (turn.irrelevant.has(chunkId)) turn.irrelevant.delete(chunkId); else turn.irrelevant.add(chunkId);
  button.setAttribute("aria-pressed", turn.irrelevant.has(chunkId) ? "true" : "false");
  try {
    await postJSON("/v1/feedback", { answer_id: turn.answer.answer_id, rating: "down",
      reason: "citation not relevant", irrelevant_chunk_ids: [...turn.irrelevant] });
  } catch (e) { showError(e.message); }
}

// ------------------------------------------------------------------ document view
async function loadDocument(docId) {
  if (!state.docCache.has(docId)) state.docCache.set(docId, await getJSON(`/v1/documents/${encodeURIComponent(docId)}`));
  return state.docCache.get(docId);
}

/** The text of ``doc`` as one section per clause; the clause ``chunkId`` is marked and the
 *  ``quote`` inside it highlighted. */
function renderDocText(doc, body, chunkId, quote) {
  body.replaceChildren();
  const clauses = [...doc.clauses].sort((x, y) => x.span[0] - y.span[0]);
  let target = null, pos = 0;
  for (const c of clauses) {
    const [start, end] = c.span;
    const between = doc.text.slice(pos, start).trim();
    if (between) body.append(el("div", { class: "gap-text", text: between }));
    const text = doc.text.slice(start, end).replace(/^\n+|\s+$/g, "");
    const section = el("section", { class: "clause-block", id: `clause-${c.chunk_id}`, "data-chunk": c.chunk_id },
      c.clause ? el("span", { class: "clause-label", text: c.clause }) : null);
    if (c.chunk_id === chunkId) {
      section.classList.add("cited");
      section.append(highlight(text, quote));
      target = section;
    } else {
      section.append(el("span", { text }));
    }
    body.append(section);
    pos = Math.max(pos, end);
  }
  const tail = doc.text.slice(pos).trim();
  if (tail) body.append(el("div", { class: "gap-text", text: tail }));
  return target;
}

/** ``text`` with the longest part of ``quote`` found in it wrapped in <mark>. */
function highlight(text, quote) {
  const frag = document.createDocumentFragment();
  const q = (quote || "").replace(/[…\s]+$/u, "").replace(/^[…\s]+/u, "");
  let at = q ? text.indexOf(q) : -1, len = q.length;
  if (at < 0 && q) {
    // the quote may be cut, or cross a line break: find its longest leading piece
    for (let n = Math.min(q.length, 120); n >= 6 && at < 0; n = Math.floor(n * 0.7)) { at = text.indexOf(q.slice(0, n)); len = n; }
  }
  if (at < 0) { at = 0; len = text.length; }
  frag.append(text.slice(0, at), el("mark", { class: "quoted", text: text.slice(at, at + len) }), text.slice(at + len));
  return frag;
}

function docHeader(doc, titleEl, metaEl) {
  titleEl.replaceChildren(doc.meta.title || doc.source, " ", doc.meta.status !== "active" ? docStatus(doc.meta.status) : "");
  metaEl.replaceChildren(metaRows(doc.meta), el("p", { class: "muted source", text: `${t("meta.source")}: ${doc.source}` }));
}

async function openCitation(c) {
  const docId = c.doc_id || docIdOf(c.chunk_id);
  let doc;
  try { doc = await loadDocument(docId); } catch (e) { showError(e.message); return; }
  const panel = $("doc-panel");
  panel.hidden = false;
  docHeader(doc, $("doc-title"), $("doc-meta"));
  renderPage(doc, c.chunk_id, $("doc-page"));
  const target = renderDocText(doc, $("doc-body"), c.chunk_id, c.quote);
  const body = $("doc-body");
  if (target) {
    body.scrollTop = target.offsetTop - body.offsetTop - 8;
    panel.scrollIntoView({ block: "nearest" });
    target.scrollIntoView({ block: "center" });
  } else {
    body.prepend(el("p", { class: "error", text: t("doc.clause_missing") }));
  }
  body.focus({ preventScroll: true });
}
function closeDoc() { $("doc-panel").hidden = true; }

/** A PDF clause's page as an image with the clause's blocks boxed (its ``boxes`` are in PDF
 *  points; the image has ``doc.page_scale`` pixels per point). Other sources: nothing. */
async function renderPage(doc, chunkId, figure) {
  figure.hidden = true;
  figure.replaceChildren();
  const clause = doc.clauses.find((x) => x.chunk_id === chunkId);
  if (!clause || clause.page == null || !doc.page_scale) return;
  let url;
  try {
    const r = await api(`/v1/documents/${encodeURIComponent(doc.doc_id)}/pages/${clause.page}`);
    url = URL.createObjectURL(await r.blob());
  } catch (e) { return; }  // the text view still shows the clause
  const img = el("img", { src: url, alt: t("doc.page", { n: clause.page }) });
  const frame = el("div", { class: "page-frame" }, img);
  img.addEventListener("load", () => {
    const k = img.clientWidth / img.naturalWidth * doc.page_scale;  // CSS pixels per point
    for (const [page, x0, top, x1, bottom] of clause.boxes) {
      if (page !== clause.page) continue;
      frame.append(el("div", { class: "page-box", style: `left:${x0 * k}px;top:${top * k}px;` +
        `width:${(x1 - x0) * k}px;height:${(bottom - top) * k}px` }));
    }
    const first = frame.querySelector(".page-box");
    if (first) frame.scrollTop = Math.max(0, first.offsetTop - 40);
  }, { once: true });
  figure.append(frame, el("figcaption", { class: "muted", text: t("doc.page", { n: clause.page }) }));
  figure.hidden = false;
}

/** The date candidates ingest found for ``doc``, each with a button that confirms it. */
function renderDates(doc) {
  const box = $("docs-view-dates"), list = $("dates-list");
  list.replaceChildren();
  const dates = doc.date_candidates || [];
  box.hidden = false;
  if (!dates.length) { list.append(el("li", { class: "muted", text: t("dates.none") })); return; }
  for (const d of dates) {
    const field = d.field ? t(`meta.${d.field}`) : "";
    const confirmed = d.rule === "confirmed";
    const item = el("li", { class: "date-candidate", "data-field": d.field || "", "data-date": d.date },
      el("strong", { text: d.date }), " ",
      el("span", { class: "badge", text: t(`kind.${d.kind}`) }), " ",
      el("span", { class: "muted", text: confirmed ? t("dates.confirmed") : d.rule }),
      d.text ? el("q", { class: "date-text", text: d.text }) : null);
    if (d.field && !confirmed) {
      item.append(el("button", { type: "button", class: "small", text: t("dates.confirm", { field }),
        onclick: () => confirmDate(doc.doc_id, d.field, d.date) }));
    }
    list.append(item);
  }
}

async function confirmDate(docId, field, date) {
  try {
    const doc = await postJSON(`/v1/documents/${encodeURIComponent(docId)}/confirm`, { fields: { [field]: date } });
    state.docCache.set(docId, doc);
    await loadDocs();
    await openDocView(docId);
    $("dates-list").prepend(el("li", { class: "ok", role: "status",
      text: t("dates.saved", { field: t(`meta.${field}`), date }) }));
  } catch (e) { showError(e.message); }
}

// ------------------------------------------------------------------ progress graph (SVG)
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

// step names in the Chinese interface (the trace's own names are shown in English)
const STEP_ZH = {
  route: "路由", contextualize: "补全追问", retrieve_or_not: "是否检索", plan: "检索规划", expand: "同义扩展",
  sufficiency: "充分性", semantic_search: "检索", exact_search: "精确检索", graph_lookup: "图谱查找",
  retrieve: "检索腿", dedupe: "去重", reason: "推理", verify: "核验", final: "最终答案", abort: "中止",
  blocked: "已拦截", fallback: "回退", deadline: "时限", think: "思考", write: "撰写", latitude: "推断范围",
  truncate: "截断", tool: "工具", gate: "关卡", SUFFICIENT: "充分", INSUFFICIENT: "不充分", SKIPPED: "跳过",
};
const stepName = (name) => (state.lang === "zh" && STEP_ZH[name]) || name;

function stepLabel(e) {
  const verdict = e.args && e.args.verdict;
  if (e.kind === "gate" && e.args && e.args.round) return `${stepName(e.tool)} · ${t("progress.round")} ${e.args.round}`;
  if (e.kind === "gate") return `${stepName(e.tool)}${verdict ? " " + stepName(verdict) : ""}`;
  if (e.kind === "tool") return `${stepName(e.tool)}: ${(e.args && e.args.query) || ""}`;
  if (e.kind === "retrieve") return `${stepName("retrieve")} ${e.tool || ""}`;
  return e.tool ? `${stepName(e.kind)} ${stepName(e.tool)}` : stepName(e.kind);
}

/** What a step lacked, when it blocked: an INSUFFICIENT verdict, a blocked query, a cap. */
function blockedBy(e) {
  const a = e.args || {};
  if (e.kind === "gate" && a.verdict === "INSUFFICIENT") return a.missing || "?";
  if (e.kind === "blocked") return e.detail || "blocked";
  if (e.kind === "final" && a.cap) return `${a.cap}${a.gaps && a.gaps.length ? " — " + a.gaps.join(", ") : ""}`;
  if (e.kind === "deadline" || e.kind === "abort") return e.detail || e.kind;
  if (e.kind === "gate" && e.tool === "latitude") return (a.missing || []).join(", ") || e.detail;
  return null;
}

/** Rows of the graph: the Retriever's own leg steps fold into the search they belong to;
 *  consecutive searches (run in parallel) share a row. */
function graphRows(trace) {
  const rows = [];
  let legs = [];
  for (const e of trace) {
    if (e.kind === "retrieve") { legs.push(e); continue; }
    const node = { e, legs: e.kind === "tool" ? legs : [] };
    if (e.kind === "tool") legs = [];
    const prev = rows[rows.length - 1];
    if (prev && e.kind === "tool" && prev[0].e.kind === "tool" && prev[0].e.step === e.step) prev.push(node);
    else rows.push([node]);
  }
  if (legs.length) rows.push(legs.map((e) => ({ e, legs: [] })));
  return rows;
}

/** ``text`` cut (with …) to about ``width`` pixels at ``size`` px: CJK glyphs are square, Latin
 *  ones a bit over half as wide. */
function fit(text, width, size) {
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    used += /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/.test(text[i]) ? size : size * 0.6;
    if (used > width - size) return text.slice(0, i) + "…";
  }
  return text;
}

function clearGraph() {
  state.graphTrace = null;
  $("graph").replaceChildren();
  $("progress-empty").hidden = false;
  $("graph-tip").hidden = true;
}

function drawGraph(trace) {
  state.graphTrace = trace;
  const box = $("graph");
  $("progress-empty").hidden = trace.length > 0;
  const rows = graphRows(trace);
  const W = 360, NH = 30, GAP = 18, PAD = 6;
  const height = rows.length * (NH + GAP) + PAD;
  const root = svg("svg", { viewBox: `0 0 ${W} ${height}`, width: "100%", role: "img",
    "aria-label": `${t("progress.title")}: ${trace.length}`, class: "graph-svg" });
  root.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: "7", refY: "4",
    markerWidth: "6", markerHeight: "6", orient: "auto" }, svg("path", { d: "M0,0 L8,4 L0,8 z", class: "arrowhead" }))));
  const centres = [];
  rows.forEach((row, r) => {
    const n = row.length;
    const w = Math.min(300, (W - PAD * 2 - (n - 1) * 8) / n);
    const y = PAD + r * (NH + GAP);
    const total = n * w + (n - 1) * 8;
    centres.push(row.map((_, i) => ({ x: (W - total) / 2 + i * (w + 8), y, w })));
  });
  // edges first, under the nodes: every node of a row to every node of the next
  for (let r = 1; r < rows.length; r++) {
    for (const a of centres[r - 1]) for (const b of centres[r]) {
      root.append(svg("path", { class: "edge", "marker-end": "url(#arrow)",
        d: `M${a.x + a.w / 2},${a.y + NH} C${a.x + a.w / 2},${a.y + NH + GAP / 2} ${b.x + b.w / 2},${b.y - GAP / 2} ${b.x + b.w / 2},${b.y - 2}` }));
    }
  }
  rows.forEach((row, r) => row.forEach((node, i) => {
    const { x, y, w } = centres[r][i];
    const e = node.e;
    const blocked = blockedBy(e);
    const legMs = node.legs.map((l) => `${l.tool || "leg"} ${Math.round(l.duration_ms)} ${t("progress.ms")}`);
    const tip = [`${e.step}. ${stepLabel(e)}`, `${Math.round(e.duration_ms || 0)} ${t("progress.ms")}`,
      blocked ? `${t("progress.missing")}: ${blocked}` : null, e.fallback ? `fallback: ${e.fallback}` : null,
      e.detail ? e.detail.slice(0, 200) : null, legMs.length ? legMs.join(" · ") : null].filter(Boolean).join("\n");
    const shown = fit(stepLabel(e), w - 12, 11);
    const g = svg("g", { class: `node k-${e.kind}${blocked ? " blocked" : ""}${e.fallback ? " fell-back" : ""}`,
      tabindex: "0", role: "listitem", "aria-label": tip.replace(/\n/g, "; "), "data-kind": e.kind, "data-step": e.step },
      svg("title", {}, document.createTextNode(tip)),
      svg("rect", { x, y, width: w, height: NH, rx: 7 }),
      svg("text", { x: x + w / 2, y: y + (blocked ? 12 : NH / 2 + 4), "text-anchor": "middle" }, document.createTextNode(shown)));
    if (blocked) {
      g.append(svg("text", { x: x + w / 2, y: y + 25, "text-anchor": "middle", class: "missing" },
        document.createTextNode(fit(`${t("progress.missing")}: ${blocked}`, w - 12, 10))));
    }
    const showTip = () => { const tipEl = $("graph-tip"); tipEl.textContent = tip; tipEl.hidden = false; };
    g.addEventListener("mouseenter", showTip);
    g.addEventListener("focus", showTip);
    g.addEventListener("mouseleave", () => { $("graph-tip").hidden = true; });
    g.addEventListener("blur", () => { $("graph-tip").hidden = true; });
    root.append(g);
  }));
  box.replaceChildren(root);
}

// ------------------------------------------------------------------ documents page
async function loadDocs() {
  try {
    const docs = await getJSON("/v1/documents");
    state.docs = new Map(docs.map((d) => [d.doc_id, d]));
  } catch (e) { showError(e.message); }
  renderDocRows();
}
function renderDocRows() {
  const tbody = $("doc-rows");
  tbody.replaceChildren();
  if (!state.docs.size) tbody.append(el("tr", {}, el("td", { colspan: "8", class: "muted", text: t("docs.empty") })));
  for (const d of state.docs.values()) {
    const m = d.meta;
    tbody.append(el("tr", { class: m.status !== "active" ? "superseded" : "", "data-doc": d.doc_id },
      el("td", {}, el("button", { type: "button", class: "link", onclick: () => openDocView(d.doc_id), text: m.title || d.source })),
      el("td", { text: m.doc_number || "" }), el("td", { text: m.authority || "" }),
      el("td", { text: m.publish_date || "" }), el("td", { text: m.effective_date || "" }),
      el("td", { text: m.version || "" }), el("td", {}, docStatus(m.status || "active")), el("td", { text: d.chunks })));
  }
}
async function openDocView(docId, chunkId) {
  let doc;
  try { doc = await loadDocument(docId); } catch (e) { showError(e.message); return; }
  const panel = $("docs-view");
  panel.hidden = false;
  $("view-docs").classList.add("viewing");
  docHeader(doc, $("docs-view-title"), $("docs-view-meta"));
  renderDates(doc);
  const body = $("docs-view-body");
  renderDocText(doc, body, chunkId || null, "");
  $("docs-view-clauses").replaceChildren(...doc.clauses.filter((c) => c.clause).map((c) =>
    el("button", { type: "button", class: "small", onclick: () => {
      for (const s of body.querySelectorAll(".cited")) s.classList.remove("cited");
      const s = document.getElementById(`clause-${c.chunk_id}`);
      if (s) { s.classList.add("cited"); s.scrollIntoView({ block: "center" }); }
    }, text: c.clause })));
  panel.scrollIntoView({ block: "start" });
}

function uploadOne(file, item) {
  return new Promise((resolve) => {
    const form = new FormData();
    form.append("files", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/documents");
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    const bar = item.querySelector("progress"), out = item.querySelector(".result");
    xhr.upload.onprogress = (ev) => { if (ev.lengthComputable) bar.value = ev.loaded / ev.total; };
    xhr.onload = () => {
      bar.value = 1;
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch (e) { /* not JSON */ }
      if (xhr.status === 200 && body) {
        const f = body.files[0];
        out.textContent = `${t(`ingest.${f.status}`)}${f.chunks ? ` · ${f.chunks} ${t("meta.chunks")}` : ""}${f.reason ? " · " + f.reason : ""}`;
        item.dataset.status = f.status;
      } else {
        out.textContent = body && body.error ? `${t("ingest.failed")} · ${body.error.message}` : `${t("ingest.failed")} · ${xhr.status}`;
        item.dataset.status = "failed";
      }
      resolve();
    };
    xhr.onerror = () => { out.textContent = t("ingest.failed"); item.dataset.status = "failed"; resolve(); };
    xhr.send(form);
  });
}
async function upload(ev) {
  ev.preventDefault();
  const files = [...$("files").files];
  const list = $("upload-list");
  if (!files.length) { list.replaceChildren(el("li", { class: "error", text: t("upload.none") })); return; }
  list.replaceChildren();
  const items = files.map((f) => {
    const item = el("li", { class: "upload-item", "data-name": f.name },
      el("span", { class: "fname", text: f.name }),
      el("progress", { max: "1", value: "0", "aria-label": f.name }),
      el("span", { class: "result", text: t("upload.waiting") }));
    list.append(item);
    return item;
  });
  for (let i = 0; i < files.length; i++) await uploadOne(files[i], items[i]);
  state.docCache.clear();
  await loadDocs();
  await loadInfo();
}

// ------------------------------------------------------------------ views and wiring
// ------------------------------------------------------------------ reports (POST /v1/reports)
async function loadTemplates() {
  try {
    state.templates = await api("/v1/reports").then((r) => r.json());
  } catch (e) { state.templates = []; }
  const pick = $("report-template");
  pick.replaceChildren(...state.templates.map((t) => el("option", { value: t.name, text: t.name })));
  showTemplateInputs();
}

function showTemplateInputs() {
  const tpl = (state.templates || []).find((t) => t.name === $("report-template").value);
  $("report-inputs").replaceChildren(...(tpl ? tpl.inputs : []).map((i) => el("label", { class: "report-input" },
    el("span", { text: i.name }), el("input", { type: "text", name: i.name, id: `report-in-${i.name}`,
      list: i.kind === "document" ? "report-docs" : null, placeholder: i.description || i.kind }))));
  const docs = el("datalist", { id: "report-docs" }, [...state.docs.values()].map((d) =>
    el("option", { value: d.doc_id, text: `${d.meta.title || d.doc_id} ${d.meta.version || d.meta.publish_date || ""}` })));
  $("report-inputs").append(docs);
}

async function runReport(ev) {
  ev.preventDefault();
  if (state.running) return;
  showError("");
  const inputs = {};
  for (const input of $("report-inputs").querySelectorAll("input")) inputs[input.name] = input.value.trim();
  const template = $("report-template").value;
  if (!state.session) state.session = (await postJSON("/v1/sessions", {})).session_id;
  const turn = newTurn(`${template}: ${Object.values(inputs).join(" · ")}`);
  turn.report = true; turn.status = "running"; renderTurn(turn);
  clearGraph();
  const controller = new AbortController();
  state.running = { session: state.session, controller, turn };
  $("stop").disabled = false; $("report-run").disabled = true;
  try {
    const r = await api("/v1/reports", { method: "POST", signal: controller.signal,
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ template, inputs, session_id: state.session }) });
    await readEvents(r, (name, data) => {
      if (name === "report") { turn.status = data.status; renderReport(turn, data); }
      else if (name === "error") { turn.status = "error"; turn.error = data.error ? data.error.message : String(data); renderTurn(turn); }
      else if (name !== "done") { turn.trace.push(data); drawGraph(turn.trace); }
    });
  } catch (e) {
    if (turn.status === "running") { turn.status = "error"; turn.error = e.message; renderTurn(turn); }
  } finally {
    state.running = null;
    $("stop").disabled = true; $("report-run").disabled = false;
  }
}

function renderReport(turn, report) {
  const index = new Map(report.citations.map((c, i) => [c.chunk_id, i + 1]));
  const status = el("span", { class: `badge s-${report.status}`, "data-status": report.status,
    text: t(`report.status.${report.status}`) });
  const parts = [el("h3", { class: "q" }, el("span", { class: "q-text", text: report.title }), status)];
  for (const section of report.sections) {
    const items = section.lines.map((line) => el("li", { class: line.supported ? "" : "unsupported" }, line.text, " ",
      ...line.citations.filter((c) => index.has(c)).map((c) => {
        const n = index.get(c), cite = report.citations[n - 1];
        return el("button", { type: "button", class: "cite", "data-n": n, "aria-label": `[${n}] ${cite.title} ${cite.clause || ""}`,
          onclick: () => openCitation(cite) }, `[${n}]`);
      })));
    parts.push(el("section", { class: "report-section", "data-step": section.step },
      el("h4", { text: section.title }), items.length ? el("ul", {}, items) : null,
      el("p", { class: "muted small-note", text: section.checks.join(" · ") })));
  }
  if (report.conflicts.length) parts.push(conflictBlock(report, turn));
  if (report.gaps.length) {
    parts.push(el("section", { class: "gaps", "aria-label": t("gaps.title") },
      el("h4", { text: t("gaps.title") }), el("ul", {}, report.gaps.map((g) => el("li", { text: g })))));
  }
  if (report.citations.length) {
    parts.push(el("section", { class: "evidence", "aria-label": t("evidence.title") },
      el("h4", { text: `${t("evidence.title")} (${report.citations.length})` }),
      report.citations.map((c, i) => citationCard(c, i + 1, turn))));
  }
  turn.el.replaceChildren(...parts);
}

function showView(name) {
  const ask = name === "ask";
  $("view-ask").hidden = !ask; $("view-docs").hidden = ask;
  $("tab-ask").setAttribute("aria-current", ask ? "page" : "false");
  $("tab-docs").setAttribute("aria-current", ask ? "false" : "page");
  if (!ask) loadDocs();
  history.replaceState(null, "", ask ? "#ask" : "#documents");
}

function wire() {
  $("ask-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = $("question").value.trim();
    if (!q || state.running) return;
    $("question").value = "";
    ask(q).catch((e) => showError(e.message));
  });
  $("question").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("ask-form").requestSubmit(); }
  });
  $("stop").addEventListener("click", stop);
  $("report-form").addEventListener("submit", (ev) => runReport(ev).catch((e) => showError(e.message)));
  $("report-template").addEventListener("change", showTemplateInputs);
  $("new-session").addEventListener("click", newSession);
  $("doc-close").addEventListener("click", closeDoc);
  $("docs-view-close").addEventListener("click", () => { $("docs-view").hidden = true; $("view-docs").classList.remove("viewing"); });
  $("tab-ask").addEventListener("click", () => showView("ask"));
  $("tab-docs").addEventListener("click", () => showView("docs"));
  $("lang").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    localStorage.setItem("arag.lang", state.lang);
    applyLanguage();
  });
  $("upload-form").addEventListener("submit", upload);
  const drop = $("drop");
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => { ev.preventDefault(); drop.classList.remove("over"); $("files").files = ev.dataTransfer.files; });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") closeDoc(); });
}

async function main() {
  if (window.matchMedia("(max-width: 700px)").matches) $("controls").open = false;  // room for the answer
  restoreControls();
  wire();
  applyLanguage();
  await Promise.all([loadInfo(), loadDocs()]);
  await loadTemplates();
  showView(location.hash === "#documents" ? "docs" : "ask");
  const last = savedSessions()[0];
  if (last) await openSession(last.id);
  document.body.dataset.ready = "true";
}
main();
