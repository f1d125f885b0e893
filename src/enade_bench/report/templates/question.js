// enade-bench question browser, one question: the stem, its options with the gold and each
// run's choice marked, a grid of runs (model x strategy) by shuffle, and each record's
// detail on request. Used by browser.js (QB_QUESTION.show); no library, no network.
const QB_QUESTION = (function () {
  "use strict";
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const PROBABILITY = /^probability/;
  const NAMED = 8; // up to this many runs, an option names the runs that chose it

  // A number as a reader wants it: 4 significant digits, scientific where small.
  function fmt(x) {
    if (x === null || x === undefined || Number.isNaN(x)) return "—";
    if (Number.isInteger(x)) return String(x);
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
    return String(Number(x.toPrecision(4)));
  }

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => { if (v !== null && v !== undefined) node.setAttribute(k, v); });
    kids.forEach((kid) => node.append(kid instanceof Node ? kid : document.createTextNode(kid == null ? "" : String(kid))));
    return node;
  }

  // Letters of a question's options, A first (the options' texts where the records hold them).
  function letters(q) {
    return LETTERS.slice(0, q.options ? q.options.length : q.n_options || 0).split("");
  }

  // The column of a run's scores the grid shows: the probability when there is one.
  const shownScore = (x) => (x.scores || []).findIndex((n) => PROBABILITY.test(n));

  function show(D, C, box, qi, records) {
    const q = D.questions[qi];
    const opts = letters(q);
    const byRun = new Map();
    records.forEach((r) => { const k = r[C.run]; if (!byRun.has(k)) byRun.set(k, []); byRun.get(k).push(r); });
    const runs = [...byRun.keys()];
    const shuffles = [...new Set(records.map((r) => r[C.shuffle]))].sort((a, b) => a - b);
    const title = (x) => x.model + " · " + x.strategy;

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

    // The options, original letters, the gold marked; the runs that chose each.
    if (q.options) {
      const list = el("ol", { class: "qb-options", "aria-label": "options (original letters)" });
      opts.forEach((L, i) => {
        const picks = runs.map((k) => [k, byRun.get(k).filter((r) => r[C.prediction] === L).length]).filter(([, n]) => n);
        const li = el("li", { class: L === q.answer ? "qb-option qb-is-gold" : "qb-option", "data-letter": L, "data-chosen": String(picks.reduce((s, [, n]) => s + n, 0)) },
          el("span", { class: "qb-letter" }, L + ")"), " ", el("span", { class: "qb-text" }, q.options[i]));
        if (L === q.answer) li.append(" ", el("span", { class: "qb-badge" }, "✓ gold"));
        if (picks.length) {
          const names = runs.length <= NAMED
            ? picks.map(([k, n]) => title(D.runs[k]) + (byRun.get(k).length > 1 ? " " + n + "/" + byRun.get(k).length : "")).join(", ")
            : picks.reduce((s, [, n]) => s + n, 0) + " of " + records.length + " records";
          li.append(" ", el("span", { class: "qb-picks" }, "← chosen by " + names));
        }
        list.append(li);
      });
      box.append(list);
    }

    // One row per run, one column per option (its choices, its probability) and per shuffle.
    const table = el("table", { class: "data qb-grid" });
    const head = el("tr", {}, el("th", { scope: "col" }, "model · strategy"));
    opts.forEach((L) => head.append(el("th", { scope: "col", class: L === q.answer ? "qb-is-gold" : null, title: L === q.answer ? "the gold answer" : null }, L === q.answer ? L + " ✓" : L)));
    const replicate = D.runs[runs[0]].replicate || "shuffle";
    shuffles.forEach((s) => head.append(el("th", { scope: "col" }, shuffles.length > 1 ? replicate + " " + s : "answer")));
    const usage = records.some((r) => r[C.usage]);
    head.append(el("th", { scope: "col" }, "right"));
    if (usage) head.append(el("th", { scope: "col" }, "tokens in / out, s"));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    const width = 2 + opts.length + shuffles.length + (usage ? 1 : 0);
    runs.forEach((k) => {
      const x = D.runs[k], mine = byRun.get(k), col = shownScore(x);
      const toggle = el("button", { type: "button", class: "qb-toggle", "aria-expanded": "false", title: "each record: raw output, scores, prompt" }, "▸");
      const tr = el("tr", { "data-run": String(k) }, el("th", { scope: "row" }, toggle, " ", title(x)));
      opts.forEach((L, i) => {
        const n = mine.filter((r) => r[C.prediction] === L).length;
        const values = col < 0 ? [] : mine.map((r) => r[C.scores] && r[C.scores][i] ? r[C.scores][i][col] : null).filter((v) => v !== null);
        const mean = values.length ? values.reduce((s, v) => s + v, 0) / values.length : null;
        const mark = n ? (mine.length > 1 ? "● " + n + "/" + mine.length : "●") : "";
        tr.append(el("td", { class: (n ? "qb-pick" : "") + (L === q.answer ? " qb-is-gold" : ""), title: mean !== null ? x.scores[col] + (values.length > 1 ? ", mean over shuffles" : "") : null },
          mark, mean !== null ? el("span", { class: "qb-p" }, (mark ? " " : "") + fmt(mean)) : ""));
      });
      shuffles.forEach((s) => {
        const r = mine.find((y) => y[C.shuffle] === s);
        if (!r) { tr.append(el("td", {}, "")); return; }
        const perm = r[C.permutation];
        const shown = perm && r[C.prediction] && r[C.prediction].length === 1 ? LETTERS[perm.indexOf(LETTERS.indexOf(r[C.prediction]))] : null;
        const text = r[C.outcome] === "error" ? "error" : r[C.prediction] === null ? "—" : r[C.prediction] + (shown && shown !== r[C.prediction] ? " (shown " + shown + ")" : "");
        tr.append(el("td", { class: "qb-" + r[C.outcome], title: r[C.outcome] }, text));
      });
      const scored = mine.filter((r) => r[C.outcome] !== "error");
      tr.append(el("td", {}, scored.filter((r) => r[C.outcome] === "right").length + "/" + scored.length));
      if (usage) tr.append(el("td", {}, usageText(sum(mine.map((r) => r[C.usage])))));
      const more = el("tr", { class: "qb-more", hidden: "" }, el("td", { colspan: String(width) }));
      toggle.addEventListener("click", () => {
        const open = toggle.getAttribute("aria-expanded") !== "true";
        if (open && !more.firstChild.firstChild) mine.forEach((r) => more.firstChild.append(detail(D, C, q, r)));
        more.hidden = !open;
        toggle.setAttribute("aria-expanded", String(open));
        toggle.textContent = open ? "▾" : "▸";
      });
      body.append(tr, more);
    });
    table.append(body);
    box.append(el("div", { class: "scroll" }, table));
    box.append(el("p", { class: "notes" }, "●: the run chose this option (k/n: in k of its n records); the number beside it: "
      + "the probability after normalising over the options (mean over shuffles). ▸: each record's raw output, scores and prompt."));
  }

  const sum = (rows) => {
    const s = [null, null, null];
    rows.forEach((u) => { if (u) u.forEach((v, i) => { if (v !== null) s[i] = (s[i] || 0) + v; }); });
    return s;
  };
  const usageText = (u) => fmt(u[0]) + " / " + fmt(u[1]) + ", " + fmt(u[2]);

  function detail(D, C, q, r) {
    const x = D.runs[r[C.run]];
    const sec = el("section", { class: "qb-record qb-" + r[C.outcome] });
    sec.append(el("h4", {}, x.model + (x.model_name && x.model_name !== x.model ? " (" + x.model_name + ")" : "") + " · " + x.strategy + (x.label ? " (" + x.label + ")" : "") + " · " + (x.replicate || "shuffle") + " " + r[C.shuffle]));
    const dl = el("dl");
    const add = (k, v) => { dl.append(el("dt", {}, k), el("dd", {}, v === null || v === undefined ? "—" : v)); };
    const perm = r[C.permutation];
    add("prediction (original letter)", r[C.prediction]);
    if (perm) {
      add("options as shown", perm.map((o, i) => LETTERS[i] + " = original " + LETTERS[o]).join(", "));
      add("prediction as shown", r[C.prediction] && r[C.prediction].length === 1 ? LETTERS[perm.indexOf(LETTERS.indexOf(r[C.prediction]))] : null);
    }
    add("outcome", r[C.outcome]);
    add("extraction rule", r[C.rule]);
    if (r[C.share] !== null && r[C.share] !== undefined) add("samples right", fmt(r[C.share]));
    if (r[C.usage]) add("tokens in / out, latency (s)", usageText(r[C.usage]));
    if (r[C.error]) add("error", r[C.error]);
    sec.append(dl);
    if (r[C.raw] !== null && r[C.raw] !== undefined) sec.append(el("p", {}, "Raw output:"), el("pre", { class: "qb-raw" }, r[C.raw]));
    if (r[C.scores]) sec.append(scoresTable(x.scores, r[C.scores], q, perm));
    if (r[C.prompt] !== null && r[C.prompt] !== undefined) sec.append(el("details", {}, el("summary", {}, "Prompt as the model saw it"), el("pre", { class: "qb-prompt" }, D.prompts[r[C.prompt]])));
    return sec;
  }

  // Each option's scores, under the names of what they are, in the original order.
  function scoresTable(names, values, q, perm) {
    const t = el("table", { class: "data qb-scores" });
    const head = el("tr", {}, el("th", { scope: "col" }, "option (original letter)"));
    if (perm) head.append(el("th", { scope: "col" }, "shown as"));
    names.forEach((n) => head.append(el("th", { scope: "col" }, n)));
    t.append(el("thead", {}, head));
    const body = el("tbody");
    values.forEach((row, i) => {
      const tr = el("tr", {}, el("th", { scope: "row" }, LETTERS[i] + (LETTERS[i] === q.answer ? " ✓" : "")));
      if (perm) tr.append(el("td", {}, LETTERS[perm.indexOf(i)]));
      row.forEach((v) => tr.append(el("td", {}, fmt(v))));
      body.append(tr);
    });
    t.append(body);
    return t;
  }

  return { show, fmt, el, sum, usageText };
})();
