// enade-bench question browser: filters, a sortable table of records and one question opened
// (index.html#q=<id>). No library, no network; the data is the page's #qb-data element.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("qb-data").textContent);
  const C = {}; D.columns.forEach((name, i) => { C[name] = i; });
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const PAGE = 200;
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => { if (v !== null && v !== undefined) node.setAttribute(k, v); });
    kids.forEach((kid) => node.append(kid instanceof Node ? kid : document.createTextNode(kid == null ? "" : String(kid))));
    return node;
  };
  const run = (r) => D.runs[r[C.run]];
  const question = (r) => D.questions[r[C.question]];
  const uniq = (values) => [...new Set(values)];
  const models = uniq(D.runs.map((x) => x.model));
  const strategies = uniq(D.runs.map((x) => x.strategy));
  let shown = PAGE;
  let sort = { key: null, dir: 1 };

  // Per (question, strategy, model): right when most of its scored records are right.
  const verdict = new Map();
  D.records.forEach((r) => {
    if (r[C.outcome] === "error") return;
    const key = r[C.question] + "\u0000" + run(r).strategy;
    if (!verdict.has(key)) verdict.set(key, new Map());
    const per = verdict.get(key);
    const m = run(r).model;
    const v = per.get(m) || [0, 0];
    v[0] += r[C.outcome] === "right" ? 1 : 0; v[1] += 1; per.set(m, v);
  });
  const rightFor = (r, model) => {
    const v = (verdict.get(r[C.question] + "\u0000" + run(r).strategy) || new Map()).get(model);
    return v ? v[0] * 2 > v[1] : null;
  };

  function select(id, label, values) {
    const s = el("select", { id: id, name: id });
    s.append(el("option", { value: "" }, "all"));
    values.forEach((v) => s.append(el("option", { value: String(v) }, String(v))));
    return el("label", {}, label + " ", s);
  }

  function buildFilters() {
    const form = $("qb-filters");
    form.append(select("qb-model", "Model", models), select("qb-strategy", "Strategy", strategies));
    D.fields.forEach((f, i) => {
      const values = uniq(D.questions.map((q) => q.fields[f])).filter((v) => v !== null && v !== undefined).sort();
      form.append(select("qb-field-" + i, f, values));
    });
    form.append(select("qb-outcome", "Outcome", ["right", "wrong", "unanswered", "error"]));
    const checks = uniq(D.questions.flatMap((q) => q.lint || [])).sort();
    form.append(select("qb-lint", "Lint", ["flagged", "not flagged", ...checks]));
    const dis = select("qb-disagree", "Models", []);
    const ds = dis.querySelector("select");
    [["all_right", "all right"], ["all_wrong", "all wrong"], ["a_beats_b", "A right, B wrong"]]
      .forEach(([v, t]) => ds.append(el("option", { value: v }, t)));
    form.append(dis, select("qb-a", "A", models), select("qb-b", "B", models));
    form.append(el("label", {}, "Stem contains ", el("input", { id: "qb-text", type: "search", size: "24" })));
    form.addEventListener("input", () => { shown = PAGE; render(); });
    form.addEventListener("change", () => { shown = PAGE; render(); });
    form.addEventListener("submit", (e) => e.preventDefault());
  }

  function filtered() {
    const v = (id) => { const n = $(id); return n ? n.value : ""; };
    const model = v("qb-model"), strategy = v("qb-strategy"), out = v("qb-outcome");
    const dis = v("qb-disagree"), a = v("qb-a"), b = v("qb-b");
    const text = v("qb-text").trim().toLowerCase();
    const lint = v("qb-lint");
    const fields = D.fields.map((f, i) => [f, v("qb-field-" + i)]).filter(([, x]) => x !== "");
    return D.records.filter((r) => {
      const x = run(r), q = question(r);
      if (model && x.model !== model) return false;
      if (strategy && x.strategy !== strategy) return false;
      if (out && r[C.outcome] !== out) return false;
      if (lint) {
        const flags = q.lint || [];
        if (lint === "flagged" ? !flags.length : lint === "not flagged" ? flags.length : !flags.includes(lint)) return false;
      }
      for (const [f, value] of fields) if (String(q.fields[f]) !== value) return false;
      if (text && !(q.stem || "").toLowerCase().includes(text) && !q.id.toLowerCase().includes(text)) return false;
      if (dis) {
        const names = model ? [model] : models;
        const rights = names.map((m) => rightFor(r, m)).filter((y) => y !== null);
        if (dis === "all_right" && !(rights.length && rights.every((y) => y))) return false;
        if (dis === "all_wrong" && !(rights.length && rights.every((y) => !y))) return false;
        if (dis === "a_beats_b" && !(a && b && rightFor(r, a) === true && rightFor(r, b) === false)) return false;
      }
      return true;
    });
  }

  const COLUMNS = [
    ["question", (r) => question(r).id], ...D.fields.map((f) => [f, (r) => question(r).fields[f]]),
    ["model", (r) => run(r).model], ["strategy", (r) => run(r).strategy], ["shuffle", (r) => r[C.shuffle]],
    ["gold", (r) => question(r).answer], ["prediction", (r) => r[C.prediction]],
    ["outcome", (r) => r[C.outcome]], ["rule", (r) => r[C.rule]],
  ];

  function buildHead() {
    const tr = el("tr");
    COLUMNS.forEach(([name], i) => {
      const th = el("th", { scope: "col", "data-col": String(i), "aria-sort": "none", tabindex: "0" }, name);
      const go = () => {
        sort = { key: i, dir: sort.key === i ? -sort.dir : 1 };
        tr.querySelectorAll("th").forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
        render();
      };
      th.addEventListener("click", go);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
      tr.append(th);
    });
    $("qb-table").querySelector("thead").append(tr);
  }

  const compare = (x, y) => {
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
  };

  function render() {
    let rows = filtered();
    if (sort.key !== null) {
      const get = COLUMNS[sort.key][1];
      rows = rows.slice().sort((p, q) => sort.dir * compare(get(p), get(q)));
    }
    const nq = new Set(rows.map((r) => r[C.question])).size;
    const count = $("qb-count");
    count.dataset.records = String(rows.length);
    count.dataset.questions = String(nq);
    count.textContent = rows.length + " of " + D.records.length + " records, " + nq + " of " + D.questions.length + " questions";
    const body = $("qb-table").querySelector("tbody");
    body.replaceChildren();
    rows.slice(0, shown).forEach((r) => {
      const tr = el("tr", { class: "qb-" + r[C.outcome] });
      COLUMNS.forEach(([name, get], i) => {
        const value = get(r);
        if (i === 0) {
          tr.append(el("th", { scope: "row" }, el("a", { href: "#q=" + encodeURIComponent(value) }, value)));
        } else {
          tr.append(el("td", {}, value === null || value === undefined ? "—" : value));
        }
      });
      body.append(tr);
    });
    const more = $("qb-more");
    more.hidden = rows.length <= shown;
    more.textContent = "Show " + Math.min(PAGE * 5, rows.length - shown) + " more";
  }

  function scoresTable(scores) {
    const t = el("table", { class: "data qb-scores" });
    t.append(el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "option (original letter)"), el("th", { scope: "col" }, "score"))));
    const body = el("tbody");
    Object.entries(scores).forEach(([k, v]) => body.append(el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, Number(v).toPrecision(4)))));
    t.append(body);
    return t;
  }

  function open(id) {
    const box = $("qb-detail");
    const qi = D.questions.findIndex((q) => q.id === id);
    box.replaceChildren();
    if (qi < 0) { box.hidden = false; box.append(el("p", { class: "qb-missing" }, "No question " + id + " in this report.")); return; }
    const q = D.questions[qi];
    box.append(el("h3", { id: "qb-open" }, "Question " + q.id));
    box.append(el("p", { class: "qb-fields" }, D.fields.filter((f) => q.fields[f] !== undefined).map((f) => f + ": " + q.fields[f]).join(" · ")));
    box.append(el("p", { class: "qb-gold" }, "Gold answer: ", el("strong", {}, q.answer)));
    if ((q.lint || []).length) box.append(el("p", { class: "qb-lint" }, "Exam-file lint: " + q.lint.join(", ") + " (validate prints why)"));
    if (q.stem) box.append(el("p", { class: "qb-stem" }, q.stem));
    const extra = Object.entries(q.details || {});
    if (extra.length) {
      const dl = el("dl", { class: "qb-details" });
      extra.forEach(([k, v]) => dl.append(el("dt", {}, k), el("dd", {}, v)));
      box.append(dl);
    }
    D.records.filter((r) => r[C.question] === qi).forEach((r) => {
      const x = run(r);
      const sec = el("section", { class: "qb-record qb-" + r[C.outcome] });
      sec.append(el("h4", {}, x.model + (x.model_name && x.model_name !== x.model ? " (" + x.model_name + ")" : "") + " · " + x.strategy + (x.label ? " (" + x.label + ")" : "") + " · shuffle " + r[C.shuffle]));
      const dl = el("dl");
      const add = (k, v) => { dl.append(el("dt", {}, k), el("dd", {}, v === null || v === undefined ? "—" : v)); };
      add("prediction (original letter)", r[C.prediction]);
      if (r[C.permutation]) {
        add("options as shown", r[C.permutation].map((o, i) => LETTERS[i] + " = original " + LETTERS[o]).join(", "));
        add("prediction as shown", r[C.displayed]);
      }
      add("outcome", r[C.outcome]);
      add("extraction rule", r[C.rule]);
      if (r[C.error]) add("error", r[C.error]);
      sec.append(dl);
      if (r[C.raw] !== null && r[C.raw] !== undefined) sec.append(el("p", {}, "Raw output:"), el("pre", { class: "qb-raw" }, r[C.raw]));
      if (r[C.scores]) sec.append(el("p", {}, "Option probabilities / scores:"), scoresTable(r[C.scores]));
      sec.append(el("details", {}, el("summary", {}, "Prompt as the model saw it"), el("pre", { class: "qb-prompt" }, D.prompts[r[C.prompt]])));
      box.append(sec);
    });
    box.hidden = false;
    box.scrollIntoView();
  }

  function fromHash() {
    const m = /^#q=(.+)$/.exec(location.hash);
    if (m) open(decodeURIComponent(m[1]));
  }

  // The report's own tables (Table 1, the pairs, …) sort by any column too: click a header.
  function sortable(table) {
    const head = table.querySelector("thead tr");
    if (!head) return;
    head.querySelectorAll("th").forEach((th, i) => {
      th.setAttribute("tabindex", "0");
      th.setAttribute("aria-sort", "none");
      const go = () => {
        const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        head.querySelectorAll("th").forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        const body = table.querySelector("tbody");
        const rows = [...body.rows].filter((row) => !row.querySelector("td.more"));
        const more = [...body.rows].filter((row) => row.querySelector("td.more"));
        const cell = (row) => { const c = row.cells[i]; const t = c ? c.textContent.trim() : ""; const n = Number(t); return t !== "" && !Number.isNaN(n) ? n : t; };
        rows.sort((p, q) => dir * compare(cell(p), cell(q)));
        body.replaceChildren(...rows, ...more);
      };
      th.addEventListener("click", go);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
    });
  }
  document.querySelectorAll("table.data:not(.qb-scores)").forEach((t) => { if (!t.closest("#qb")) sortable(t); });

  buildFilters();
  buildHead();
  $("qb-more").addEventListener("click", () => { shown += PAGE * 5; render(); });
  render();
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.getElementById("qb").dataset.readyAt = String(Math.round(performance.now()));
  document.getElementById("qb").dataset.ready = "1";
})();
