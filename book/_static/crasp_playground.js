/* The C-RASP playground of the book's C-RASP chapter: an editor, an input, the verdict and the
 * trace, computed in the page by crasp_engine.js (no kernel, no network). The programs offered
 * come from crasp_library.js (generated from lengthgen.crasp.library). A program and its input
 * can be shared as a link: they travel in the URL fragment (#crasp=...&input=...).
 * "Train this program" (where the box has data-train-colab, data-train-binder and
 * data-train-minutes, written at build time by lengthgen.viz.playground) opens the notebook "Try
 * your own language" on Colab or Binder in a new tab. Neither passes text into a notebook, so
 * the click copies the program to the clipboard and puts it into the share link; the notebook's
 * text area takes the program or the whole link.
 * Keyboard: Ctrl+Enter (or Cmd+Enter) in the editor runs, Enter in the input box runs.
 */
(function () {
  "use strict";
  const MAX_TRACE_LENGTH = 1000;   // as `crasp run --trace` (lengthgen.cli.crasp)
  const FILENAME = "program";

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  const SEP = "<sep>";

  function exampleInput(program) {   // a next-token program gets a prompt ending in <sep>
    if (!program) return "";
    const a = program.alphabet.filter((s) => s !== SEP || program.alphabet.length === 1);
    const pick = [0, 0, 1, 1, 0, 1, 2, 0].map((k) => a[k % a.length]);
    if (program.tokenOutputs.size && program.alphabet.includes(SEP)) pick.push(SEP);
    return pick.every((s) => Array.from(s).length === 1) ? pick.join("") : pick.join(" ");
  }

  function predicted(program, values) {   // the symbols whose next(...) is 1 at the last position
    return [...program.tokenOutputs].filter(([, name]) => {
      const v = values.get(name);
      return Boolean(v[v.length - 1]);
    }).map(([symbol]) => symbol);
  }

  function offsetOf(text, line, col) {   // line and column (in characters) -> string index
    const lines = text.split("\n");
    let at = 0;
    for (let k = 0; k < Math.min(line - 1, lines.length); k++) at += lines[k].length + 1;
    const row = Array.from(lines[line - 1] || "");
    return at + row.slice(0, Math.max(0, col - 1)).join("").length;
  }

  function setup(root) {
    const CRASP = window.CRASP, LIBRARY = window.CRASP_LIBRARY || {};
    root.textContent = "";
    const names = Object.keys(LIBRARY);
    const select = el("select", { id: "crasp-pg-library" },
      el("option", { value: "", text: "(your own program)" }),
      ...names.map((n) => el("option", { value: n, text: n })));
    const editor = el("textarea", {
      id: "crasp-pg-program", rows: "10", spellcheck: "false", autocapitalize: "off",
      autocomplete: "off", "aria-describedby": "crasp-pg-help",
    });
    const input = el("input", {
      id: "crasp-pg-input", type: "text", spellcheck: "false", autocapitalize: "off",
      autocomplete: "off", "aria-describedby": "crasp-pg-input-help",
    });
    const run = el("button", { type: "submit", class: "crasp-pg-run", text: "Run" });
    const share = el("button", { type: "button", class: "crasp-pg-share", text: "Copy a link to this program" });
    const shareStatus = el("span", { class: "crasp-pg-share-status", role: "status" });
    const shareLink = el("input", { type: "text", readonly: "", class: "crasp-pg-link", "aria-label": "Link to this program", hidden: "" });
    const form = el("form", { class: "crasp-pg-form", "aria-label": "C-RASP playground" },
      el("div", { class: "crasp-pg-field" },
        el("label", { for: "crasp-pg-library", text: "Start from a program of the library" }), select),
      el("div", { class: "crasp-pg-field" },
        el("label", { for: "crasp-pg-program", text: "Program" }), editor,
        el("p", { id: "crasp-pg-help", class: "crasp-pg-help",
          text: "One statement per line: an alphabet line, then NAME := expression; // starts a comment. Ctrl+Enter runs." })),
      el("div", { class: "crasp-pg-field" },
        el("label", { for: "crasp-pg-input", text: "Input string" }), input,
        el("p", { id: "crasp-pg-input-help", class: "crasp-pg-help",
          text: "Symbols of one character may be written together (aabb); longer symbols are separated by spaces. Enter runs." })),
      el("div", { class: "crasp-pg-buttons" }, run, share, shareStatus), shareLink,
      trainLinks(root.dataset));
    const result = el("div", { class: "crasp-pg-result", role: "region", "aria-label": "Result of the run" });
    const announce = el("p", { class: "crasp-pg-sr", role: "status" });   // read out: the verdict or the error
    root.append(form, announce, result);

    function show(...nodes) {
      result.textContent = "";
      result.append(...nodes);
      announce.textContent = nodes[0] ? nodes[0].textContent : "";
    }

    function runNow() {
      const text = editor.value, word = input.value;
      editor.removeAttribute("aria-invalid");
      input.removeAttribute("aria-invalid");
      let program;
      try {
        program = CRASP.parseProgram(text, FILENAME);
      } catch (e) {
        if (!(e instanceof CRASP.CraspError)) throw e;
        editor.setAttribute("aria-invalid", "true");
        const go = el("button", { type: "button", class: "crasp-pg-goto", text: "Show it in the program" });
        go.addEventListener("click", () => {
          const at = offsetOf(text, e.line, e.col);
          editor.focus();
          editor.setSelectionRange(at, at + 1);
        });
        show(el("p", { class: "crasp-pg-error" },
          el("strong", { text: `Error at line ${e.line}, column ${e.col}: ` }), e.detail, " ", go));
        return;
      }
      let rows;
      try {
        const n = CRASP.tokensOf(program, word).length;
        if (n > MAX_TRACE_LENGTH) {
          show(verdictLine(program, CRASP.runProgram(program, word)), el("p", { text: `The trace is shown for inputs of at most ${MAX_TRACE_LENGTH} symbols, as by crasp run --trace; this one has ${n}.` }));
          return;
        }
        rows = CRASP.traceRows(program, word);
      } catch (e) {
        if (!(e instanceof CRASP.CraspError)) throw e;
        input.setAttribute("aria-invalid", "true");
        show(el("p", { class: "crasp-pg-error" }, el("strong", { text: "The input: " }), e.message));
        return;
      }
      show(verdictLine(program, rows.values), traceTable(program, rows),
        el("details", { class: "crasp-pg-text" },
          el("summary", { text: "The same trace as text (what crasp run --trace prints)" }),
          el("pre", { text: CRASP.traceText(program, word) })));
    }

    function verdictLine(program, values) {   // values: the run's Map of operation -> values
      const out = values.get(program.output), verdict = Boolean(out[out.length - 1]);
      const tokens = [...program.tokenOutputs.keys()];
      if (tokens.length) {
        const rows = tokens.slice(0, 3).map((t) => `next(${t})`).join(", ") + (tokens.length > 3 ? ", ..." : "");
        const next = predicted(program, values);
        const said = `after the last symbol it predicts ${next.length ? next.join(", ") : "no symbol"}`;
        if ([...program.tokenOutputs.values()].includes(program.output)) {
          // no accept line: a verdict would mean nothing (crasp run refuses it); the prediction does
          const ones = next.map((t) => `next(${t})`);
          return el("p", { class: "crasp-pg-verdict crasp-pg-next" },
            el("strong", { text: `Next: ${next.length ? next.join(", ") : "no symbol"}.` }),
            ` A next-token program accepts no language: its rows ${rows} say which symbols may come next, and after this input ${ones.length ? ones.join(", ") + (ones.length > 1 ? " are" : " is") + " 1" : "none of them is 1"}.`);
        }
        return el("p", { class: "crasp-pg-verdict " + (verdict ? "crasp-pg-accept" : "crasp-pg-reject") },
          el("strong", { text: verdict ? "Accepted" : "Rejected" }),
          `: the output operation ${program.output} is ${verdict ? 1 : 0} at the last position; as a next-token program (rows ${rows}) ${said}.`);
      }
      return el("p", { class: "crasp-pg-verdict " + (verdict ? "crasp-pg-accept" : "crasp-pg-reject") },
        el("strong", { text: verdict ? "Accepted" : "Rejected" }),
        `: the output operation ${program.output} is ${verdict ? 1 : 0} at the last position.`);
    }

    function traceTable(program, rows) {
      const head = el("tr", {}, el("th", { scope: "col", text: "operation" }),
        ...rows.header.map((s, i) => el("th", { scope: "col" }, el("span", { class: "crasp-pg-pos", text: String(i) }), el("br"), s)));
      const body = rows.names.map((name, r) => {
        const isBool = typeof rows.values.get(name)[0] === "boolean";
        const label = el("th", { scope: "row", title: name, text: name + (name === program.output ? " \u2605" : "") });
        return el("tr", {}, label, ...rows.rows[r].map((x) =>
          el("td", { class: isBool && Number(x) === 1 ? "crasp-pg-true" : "", text: String(x) })));
      });
      const table = el("table", { class: "crasp-pg-table", "aria-describedby": "crasp-pg-trace-help" },
        el("thead", {}, head), el("tbody", {}, ...body));
      return el("div", {},
        el("p", { id: "crasp-pg-trace-help", class: "crasp-pg-help",
          text: "The trace: the value of every operation (rows) at every position (columns; ^ is the start position 0, where nothing is read). Booleans are 1 or 0; the output is starred." }),
        el("div", { class: "crasp-pg-scroll", tabindex: "0", role: "region", "aria-label": "Trace table (scrolls)" }, table));
    }

    function load(name) {
      const text = LIBRARY[name];
      if (text === undefined) return;
      editor.value = text;
      let program = null;
      try { program = CRASP.parseProgram(text, FILENAME); } catch (e) { /* shown by runNow */ }
      input.value = exampleInput(program);
    }

    select.addEventListener("change", () => { if (select.value) { load(select.value); runNow(); } });
    editor.addEventListener("input", () => {
      if (select.value && editor.value !== LIBRARY[select.value]) select.value = "";
    });
    form.addEventListener("submit", (ev) => { ev.preventDefault(); runNow(); });
    editor.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runNow(); }
    });
    function shareNow() {   // the program and the input into the address; returns the link
      const hash = "#crasp=" + encodeURIComponent(editor.value) + "&input=" + encodeURIComponent(input.value);
      history.replaceState(null, "", hash);
      shareLink.value = location.href;
      shareLink.hidden = false;
      return location.href;
    }

    function trainLinks(data) {   // "Train this program": null where the page gives no links
      if (!data.trainColab || !data.trainBinder || !data.trainMinutes) return null;
      const link = (href, cls, text) => el("a", { href, class: cls, target: "_blank", rel: "noopener", text });
      const status = el("span", { class: "crasp-pg-train-status", role: "status" });
      const links = [link(data.trainColab, "crasp-pg-train-colab", "Train this program on Colab"),
        link(data.trainBinder, "crasp-pg-train-binder", "or on Binder")];
      // the link opens the notebook (default action, new tab); the click also copies the program
      for (const a of links) a.addEventListener("click", () => {
        shareNow();
        const done = (ok) => {
          status.textContent = ok ? "Program copied: paste it into the notebook's text area."
            : "Not copied: copy the program from the editor (or the link above) into the notebook's text area.";
        };
        if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(editor.value).then(() => done(true), () => done(false));
        else done(false);
      });
      return el("div", { class: "crasp-pg-train" },
        el("p", { class: "crasp-pg-train-links" }, links[0], " ", links[1], " ", status),
        el("p", { class: "crasp-pg-help crasp-pg-train-help",
          text: `Opens the notebook "Try your own language" in a new tab and copies this program: paste it into the notebook's text area (a link to this program works too) and press its button. Training takes about ${data.trainMinutes} minutes on a CPU, as the book's gallery programs did.` }));
    }

    share.addEventListener("click", () => {
      const link = shareNow();
      const done = (ok) => {
        shareStatus.textContent = ok ? "Link copied; the address bar holds it too." : "Copy the link below (the address bar holds it too).";
        if (!ok) { shareLink.focus(); shareLink.select(); }
      };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(link).then(() => done(true), () => done(false));
      else done(false);
    });

    function fromLink() {   // a shared link: #crasp=PROGRAM&input=INPUT
      const m = /^#crasp=([^&]*)(?:&input=(.*))?$/.exec(location.hash);
      if (!m) return false;
      try {
        editor.value = decodeURIComponent(m[1]);
        input.value = decodeURIComponent(m[2] || "");
      } catch (e) { editor.value = ""; }
      select.value = names.find((n) => LIBRARY[n] === editor.value) || "";
      return true;
    }
    window.addEventListener("hashchange", () => {
      if (fromLink()) { runNow(); root.scrollIntoView(); editor.focus(); }
    });
    const linked = fromLink();
    if (!linked) {
      const first = root.dataset.program && LIBRARY[root.dataset.program] !== undefined ? root.dataset.program : names[0];
      select.value = first || "";
      load(first);
      if (root.dataset.input !== undefined && first === root.dataset.program) input.value = root.dataset.input;
    }
    runNow();
    if (linked) land(root);
  }

  /* A shared link opens the page at the playground, not at its top. What is above it (math being
   * typeset, images) may still grow after the first scroll, so it lands again when the page has
   * loaded and when MathJax is done, unless the reader has moved meanwhile. */
  function land(root) {
    let moved = false;
    const stop = () => { moved = true; };
    for (const ev of ["wheel", "touchstart", "keydown", "mousedown"]) window.addEventListener(ev, stop, { once: true, passive: true });
    const go = () => { if (!moved) root.scrollIntoView({ block: "start" }); };
    go();
    const later = () => {
      go();
      const mj = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
      if (mj) mj.then(go, go);
    };
    if (document.readyState === "complete") later();
    else window.addEventListener("load", later, { once: true });
  }

  function start() {
    document.querySelectorAll(".crasp-playground").forEach(setup);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
