// enade-bench question browser: filters, a sortable table of records (only its visible rows
// drawn) and one question opened (question.js), the whole state in the URL
// (index.html#q=<id>&model=…&outcome=…). No library, no network; the data is #qb-data.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const root = $("qb");

  // The report's own tables (Table 1, the pairs, …) sort by any column: click, Enter or Space.
  function sortKeys(th, go) {
    th.addEventListener("click", go);
    th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
  }
  const compare = (x, y) => {
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
  };
  function sortable(table) {
    const head = table.querySelector("thead tr");
    if (!head) return;
    head.querySelectorAll("th").forEach((th, i) => {
      th.setAttribute("tabindex", "0");
      th.setAttribute("aria-sort", "none");
      sortKeys(th, () => {
        const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        head.querySelectorAll("th").forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        const body = table.querySelector("tbody");
        const rows = [...body.rows].filter((row) => !row.querySelector("td.more"));
        const more = [...body.rows].filter((row) => row.querySelector("td.more"));
        const cell = (row) => { const c = row.cells[i]; const t = c ? c.textContent.trim() : ""; const n = Number(t); return t !== "" && !Number.isNaN(n) ? n : t; };
        rows.sort((p, q) => dir * compare(cell(p), cell(q)));
        body.replaceChildren(...rows, ...more);
      });
    });
  }
  document.querySelectorAll("table.data").forEach((t) => { if (!t.closest("#qb")) sortable(t); });

  try {
    browse();
  } finally {
    root.dataset.readyAt = String(Math.round(performance.now()));
    root.dataset.ready = "1";
  }

  function browse() {
    const Q = QB_QUESTION, el = Q.el;
    const D = JSON.parse($("qb-data").textContent);
    const C = {}; D.columns.forEach((name, i) => { C[name] = i; });
    const R = D.records, N = R.length, NQ = D.questions.length;
    const uniq = (values) => [...new Set(values)];
    const models = uniq(D.runs.map((x) => x.model)), strategies = uniq(D.runs.map((x) => x.strategy));
    const M = models.length, S = strategies.length;
    const OUT = ["right", "wrong", "unanswered", "error"];
    const runModel = D.runs.map((x) => models.indexOf(x.model)), runStrategy = D.runs.map((x) => strategies.indexOf(x.strategy));
    const rq = new Int32Array(N), rm = new Int32Array(N), rs = new Int32Array(N), ro = new Int8Array(N);
    const byQ = D.questions.map(() => []);
    const qIndex = new Map(D.questions.map((q, i) => [q.id, i]));
    // Per (question, strategy, model): 1 every scored record right (every sample, every shuffle),
    // 2 none right, 3 mixed; 0 no scored record.
    const state = new Int8Array(NQ * S * M), allRight = new Uint8Array(NQ * S * M).fill(1), allWrong = new Uint8Array(NQ * S * M).fill(1);
    for (let i = 0; i < N; i++) {
      const r = R[i];
      rq[i] = r[C.question]; rm[i] = runModel[r[C.run]]; rs[i] = runStrategy[r[C.run]]; ro[i] = OUT.indexOf(r[C.outcome]);
      byQ[rq[i]].push(i);
      if (ro[i] === 3) continue;
      const k = (rq[i] * S + rs[i]) * M + rm[i];
      const share = r[C.share] === null || r[C.share] === undefined ? (ro[i] === 0 ? 1 : 0) : r[C.share];
      state[k] = 1;
      if (share !== 1) allRight[k] = 0;
      if (share !== 0) allWrong[k] = 0;
    }
    for (let k = 0; k < state.length; k++) if (state[k]) state[k] = allRight[k] ? 1 : allWrong[k] ? 2 : 3;

    // -- filters, and the state in the URL ----------------------------------------------------
    const RESERVED = ["q", "model", "strategy", "outcome", "lint", "agree", "a", "b", "text", "sort", "dir"];
    const fieldKey = (f) => (RESERVED.includes(f) ? "field." + f : f);
    const CONTROLS = [["model", "qb-model"], ["strategy", "qb-strategy"], ["outcome", "qb-outcome"], ["lint", "qb-lint"],
      ["agree", "qb-disagree"], ["a", "qb-a"], ["b", "qb-b"], ...D.fields.map((f, i) => [fieldKey(f), "qb-field-" + i])];

    function select(id, label, values, names) {
      const s = el("select", { id: id, name: id });
      s.append(el("option", { value: "" }, "all"));
      values.forEach((v, i) => s.append(el("option", { value: String(v) }, names ? names[i] : String(v))));
      return el("label", {}, label + " ", s);
    }
    const form = $("qb-filters");
    form.append(select("qb-model", "Model", models), select("qb-strategy", "Strategy", strategies));
    D.fields.forEach((f, i) => {
      const values = uniq(D.questions.map((q) => q.fields[f])).filter((v) => v !== null && v !== undefined).sort(compare);
      form.append(select("qb-field-" + i, f, values));
    });
    form.append(select("qb-outcome", "Outcome", OUT));
    const checks = uniq(D.questions.flatMap((q) => q.lint || [])).sort();
    form.append(select("qb-lint", "Lint", ["flagged", "not flagged", ...checks]));
    form.append(select("qb-disagree", "Models", ["all_right", "all_wrong", "mixed", "a_beats_b"],
      ["all right", "all wrong", "mixed (right and wrong across shuffles or samples)", "A right, B wrong"]));
    form.append(select("qb-a", "A", models), select("qb-b", "B", models));
    const search = el("input", { id: "qb-text", type: "search", size: "24" });
    form.append(el("label", {}, "Text contains ", search));
    let timer = null;
    form.addEventListener("change", (e) => { if (e.target !== search) update(); });
    search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(update, 150); });
    form.addEventListener("submit", (e) => e.preventDefault());

    const decode = (s) => { try { return decodeURIComponent(s); } catch (e) { return null; } };
    function parseHash() {
      const out = {};
      location.hash.replace(/^#/, "").split("&").forEach((part) => {
        const at = part.indexOf("=");
        if (at < 1) return;
        const k = decode(part.slice(0, at)), v = decode(part.slice(at + 1));
        if (k !== null && v !== null) out[k] = v; // a malformed escape (%E0%A4%A) is ignored
      });
      return out;
    }
    function current() {
      const out = {};
      CONTROLS.forEach(([k, id]) => { if ($(id).value) out[k] = $(id).value; });
      if (search.value) out.text = search.value;
      if (sort.key !== null) { out.sort = COLUMNS[sort.key][0]; if (sort.dir < 0) out.dir = "desc"; }
      return out;
    }
    const encode = (o) => Object.entries(o).map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
    const link = (id) => "#q=" + encodeURIComponent(id) + (base ? "&" + base : "");
    let base = "";

    function apply(params) {
      CONTROLS.forEach(([k, id]) => {
        const s = $(id), v = params[k] || "";
        s.value = [...s.options].some((o) => o.value === v) ? v : "";
      });
      search.value = params.text || "";
      const col = COLUMNS.findIndex(([name]) => name === params.sort);
      setSort(col < 0 ? null : col, params.dir === "desc" ? -1 : 1);
    }

    // -- which records pass ---------------------------------------------------------------------
    const hay = [];
    const haystack = (qi) => {
      if (hay[qi] === undefined) {
        const q = D.questions[qi];
        hay[qi] = [q.stem || "", ...(q.options || []), q.id].join("\n").toLowerCase();
      }
      return hay[qi];
    };
    function questionMask(v) {
      const fields = D.fields.map((f, i) => [f, $("qb-field-" + i).value]).filter(([, x]) => x !== "");
      const text = search.value.toLowerCase(); // as typed: a trailing space is part of the text
      const mask = new Uint8Array(NQ);
      for (let qi = 0; qi < NQ; qi++) {
        const q = D.questions[qi], flags = q.lint || [];
        if (v.lint && (v.lint === "flagged" ? !flags.length : v.lint === "not flagged" ? flags.length : !flags.includes(v.lint))) continue;
        if (fields.some(([f, x]) => String(q.fields[f]) !== x)) continue;
        if (text && !haystack(qi).includes(text)) continue;
        mask[qi] = 1;
      }
      return mask;
    }
    function filtered() {
      const v = current();
      const m = models.indexOf(v.model || null), s = strategies.indexOf(v.strategy || null), o = OUT.indexOf(v.outcome || null);
      const a = models.indexOf(v.a || null), b = models.indexOf(v.b || null), agree = v.agree || "";
      const mask = questionMask(v);
      const out = new Int32Array(N);
      let n = 0;
      for (let i = 0; i < N; i++) {
        if (!mask[rq[i]] || (m >= 0 && rm[i] !== m) || (s >= 0 && rs[i] !== s) || (o >= 0 && ro[i] !== o)) continue;
        if (agree) {
          const k0 = (rq[i] * S + rs[i]) * M;
          if (agree === "a_beats_b") { if (a < 0 || b < 0 || state[k0 + a] !== 1 || state[k0 + b] !== 2) continue; }
          else {
            let seen = 0, right = 0, wrong = 0, mixed = 0;
            for (let j = m >= 0 ? m : 0; j < (m >= 0 ? m + 1 : M); j++) {
              const st = state[k0 + j];
              if (st) { seen++; right += st === 1; wrong += st === 2; mixed += st === 3; }
            }
            if (agree === "all_right" ? !(seen && right === seen) : agree === "all_wrong" ? !(seen && wrong === seen) : !mixed) continue;
          }
        }
        out[n++] = i;
      }
      return out.slice(0, n);
    }

    // -- the table: sorted by precomputed ranks, only the visible rows drawn -----------------------
    const COLUMNS = [
      ["question", (i) => D.questions[rq[i]].id], ...D.fields.map((f) => [f, (i) => D.questions[rq[i]].fields[f]]),
      ["model", (i) => models[rm[i]]], ["strategy", (i) => strategies[rs[i]]], ["shuffle", (i) => R[i][C.shuffle]],
      ["gold", (i) => D.questions[rq[i]].answer], ["prediction", (i) => R[i][C.prediction]],
      ["outcome", (i) => R[i][C.outcome]], ["rule", (i) => R[i][C.rule]],
    ];
    const ranks = [];
    function rank(col) {
      if (!ranks[col]) {
        const get = COLUMNS[col][1], values = new Array(N);
        for (let i = 0; i < N; i++) values[i] = get(i);
        const order = new Map(uniq(values).sort(compare).map((v, j) => [v, j]));
        ranks[col] = Int32Array.from(values, (v) => order.get(v));
      }
      return ranks[col];
    }
    // A counting sort by rank: linear, and stable (ties keep the records' order, as rows come).
    function byRank(rows, rk, dir) {
      let top = 0;
      for (let j = 0; j < rows.length; j++) if (rk[rows[j]] > top) top = rk[rows[j]];
      const at = new Int32Array(top + 2), out = new Int32Array(rows.length);
      const key = (i) => (dir > 0 ? rk[i] : top - rk[i]);
      for (let j = 0; j < rows.length; j++) at[key(rows[j]) + 1]++;
      for (let v = 1; v < at.length; v++) at[v] += at[v - 1];
      for (let j = 0; j < rows.length; j++) out[at[key(rows[j])]++] = rows[j];
      return out;
    }
    let sort = { key: null, dir: 1 };
    const heads = [];
    function setSort(key, dir) {
      sort = { key: key, dir: dir };
      heads.forEach((h, i) => h.setAttribute("aria-sort", i === key ? (dir > 0 ? "ascending" : "descending") : "none"));
    }
    const headRow = el("tr");
    COLUMNS.forEach(([name], i) => {
      const th = el("th", { scope: "col", "aria-sort": "none", tabindex: "0" }, name);
      sortKeys(th, () => { setSort(i, sort.key === i ? -sort.dir : 1); update(); });
      heads.push(th);
      headRow.append(th);
    });
    $("qb-table").tHead.append(headRow);

    const scroller = $("qb-scroll"), tbody = $("qb-table").tBodies[0];
    let rows = new Int32Array(0), order = new Int32Array(0), rowHeight = 0, drawn = -1, frame = false;
    const spacer = (px) => { const td = el("td", { colspan: String(COLUMNS.length) }); td.style.height = px + "px"; return el("tr", { class: "qb-spacer", "aria-hidden": "true" }, td); };
    function rowOf(i) {
      const tr = el("tr", { class: "qb-" + R[i][C.outcome] });
      COLUMNS.forEach(([, get], c) => {
        const value = get(i);
        tr.append(c === 0 ? el("th", { scope: "row" }, el("a", { href: link(value) }, value)) : el("td", {}, value === null || value === undefined ? "—" : value));
      });
      return tr;
    }
    function draw(force) {
      const h = rowHeight || 24;
      const start = Math.max(0, Math.floor(scroller.scrollTop / h) - 10);
      if (!force && start === drawn) return;
      drawn = start;
      const end = Math.min(rows.length, start + Math.ceil((scroller.clientHeight || 800) / h) + 20);
      const kids = [spacer(start * h)];
      for (let j = start; j < end; j++) kids.push(rowOf(rows[j]));
      kids.push(spacer((rows.length - end) * h));
      tbody.replaceChildren(...kids);
      if (!rowHeight && end > start) { rowHeight = tbody.rows[1].getBoundingClientRect().height || 24; draw(true); }
    }
    scroller.addEventListener("scroll", () => { if (!frame) { frame = true; requestAnimationFrame(() => { frame = false; draw(false); }); } });

    function update() {
      const t0 = performance.now();
      rows = filtered();
      if (sort.key !== null) rows = byRank(rows, rank(sort.key), sort.dir);
      const seen = new Uint8Array(NQ), qs = [];
      for (let j = 0; j < rows.length; j++) if (!seen[rq[rows[j]]]) { seen[rq[rows[j]]] = 1; qs.push(rq[rows[j]]); }
      order = Int32Array.from(qs);
      const count = $("qb-count");
      count.dataset.records = String(rows.length);
      count.dataset.questions = String(order.length);
      count.textContent = rows.length + " of " + N + " records, " + order.length + " of " + NQ + " questions";
      base = encode(current());
      history.replaceState(null, "", "#" + (opened !== null ? "q=" + encodeURIComponent(D.questions[opened].id) + (base ? "&" : "") : "") + base);
      usageTable();
      scroller.scrollTop = 0;
      draw(true);
      navigation();
      root.dataset.updateMs = String(performance.now() - t0); // the scale benchmark reads them
      root.dataset.updates = String(Number(root.dataset.updates || 0) + 1);
    }

    // Tokens and latency, summed per model over the filtered records (where the backend measured them).
    function usageTable() {
      const box = $("qb-usage");
      const per = models.map(() => [[], 0]);
      let any = false;
      for (let j = 0; j < rows.length; j++) { const u = R[rows[j]][C.usage]; if (u) { any = true; per[rm[rows[j]]][0].push(u); per[rm[rows[j]]][1]++; } }
      box.replaceChildren();
      if (!any) return;
      const body = el("tbody");
      per.forEach(([list, n], m) => { if (n) { const s = Q.sum(list); body.append(el("tr", {}, el("th", { scope: "row" }, models[m]), el("td", {}, n), el("td", {}, Q.fmt(s[0])), el("td", {}, Q.fmt(s[1])), el("td", {}, Q.fmt(s[2])))); } });
      box.append(el("table", { class: "data" }, el("caption", {}, "Tokens and latency of the filtered records, summed per model (—: not recorded; latency: each request's wall time, where measured)"),
        el("thead", {}, el("tr", {}, ...["model", "records measured", "input tokens", "output tokens", "latency (s)"].map((t) => el("th", { scope: "col" }, t)))), body));
    }

    // -- one question, previous / next within the filtered list -------------------------------------
    const box = $("qb-detail");
    let opened = null;
    function open(id, focus) {
      const t0 = performance.now(), qi = qIndex.get(id);
      box.replaceChildren();
      box.hidden = false;
      opened = qi === undefined ? null : qi;
      box.append(el("p", { class: "qb-nav" },
        el("button", { type: "button", id: "qb-prev", title: "previous question (p or ←)" }, "← previous"), " ",
        el("span", { id: "qb-position" }), " ",
        el("button", { type: "button", id: "qb-next", title: "next question (n or →)" }, "next →")));
      $("qb-prev").addEventListener("click", () => step(-1));
      $("qb-next").addEventListener("click", () => step(1));
      const heading = el("h3", { id: qi === undefined ? "qb-missing" : "qb-open", tabindex: "-1" }, qi === undefined ? "No question " + id + " in this report." : "Question " + id);
      box.append(heading);
      if (qi !== undefined) Q.show(D, C, box, qi, byQ[qi].map((i) => R[i]));
      navigation();
      heading.scrollIntoView();
      if (focus) heading.focus({ preventScroll: true });
      root.dataset.openMs = String(performance.now() - t0);
    }
    function navigation() {
      const where = $("qb-position");
      if (!where) return;
      const pos = opened === null ? -1 : order.indexOf(opened);
      where.textContent = pos < 0 ? "not in the filtered list (" + order.length + " questions)" : "question " + (pos + 1) + " of " + order.length + " in the filtered list";
      $("qb-prev").disabled = pos <= 0;
      $("qb-next").disabled = pos >= order.length - 1 && pos >= 0 || !order.length;
    }
    function step(by) {
      const pos = opened === null ? -1 : order.indexOf(opened);
      const next = pos < 0 ? 0 : pos + by;
      if (next >= 0 && next < order.length) location.hash = link(D.questions[order[next]].id);
    }
    document.addEventListener("keydown", (e) => {
      if (box.hidden || e.altKey || e.ctrlKey || e.metaKey || /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
      if (e.key === "n" || e.key === "ArrowRight") step(1);
      else if (e.key === "p" || e.key === "ArrowLeft") step(-1);
    });

    function fromHash(first) {
      const params = parseHash();
      const before = base;
      apply(params);
      opened = params.q !== undefined ? qIndex.get(params.q) ?? null : null;
      if (first || encode(current()) !== before) update();
      if (params.q !== undefined) open(params.q, true);
      else { box.hidden = true; opened = null; }
    }
    window.addEventListener("hashchange", () => fromHash(false));
    fromHash(true);
  }
})();
