// The viewer page: reads the form, streams the answer from POST /generate_stream, fetches the attention
// behind it from POST /attention and draws it (heatmap, head view, layers x heads grid). When the server
// serves several models (GET /models), a selector sends them to /models/{name}[/versions/{v}]/... instead.
// Plain ES modules, no build step; everything is served by atento itself (works offline).

import { ApiClient, ApiError } from "./api.js";
import { colormap, css, formatWeight, renderLegend, textOn } from "./colors.js";
import { renderHeatmap } from "./heatmap.js";
import { renderHeadView } from "./headview.js";
import { renderThumbnails } from "./thumbnails.js";

const $ = (selector) => document.querySelector(selector);
const api = new ApiClient();

// Okabe-Ito: a categorical palette that stays distinct under the common colour-vision deficiencies.
const HEAD_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];
const MEAN_COLOR = "#3b3b58";
const KIND_LABELS = {
  cross: "Cross-attention",
  encoder: "Encoder self-attention",
  decoder: "Decoder masked self-attention",
};

const state = {
  route: "", // prefix of the routes asked: "" (one model: the TGI routes) or "/models/{name}[/versions/{v}]"
  info: null,
  attention: null,
  linked: false, // output chips index the rows of the attention (same tokens)
  kind: "cross",
  layerIndex: 0,
  head: "mean", // "mean" or a position along the response's heads axis
  domain: "unit",
  palette: "viridis",
  means: new Map(),
  views: [],
  run: null, // AbortController of the request in flight
};

// ---------------------------------------------------------------------------------------------------
// Small helpers

function setStatus(text, kind = "info") {
  const status = $("#status");
  status.textContent = text;
  status.dataset.kind = kind;
}

function setPhase(phase) {
  document.body.dataset.phase = phase; // idle | streaming | attending | ready | error (tests wait on it)
  $("#results").setAttribute("aria-busy", String(phase === "streaming" || phase === "attending"));
}

// Token strings as labels: visible whitespace, nothing empty.
function tokenLabel(text) {
  if (text === "") return "∅";
  const trimmed = text.replace(/^\s+/, "").replace(/\s+$/, "");
  return trimmed === "" ? "␣" : trimmed;
}

function errorText(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) return `The server needs a valid API key (${error.message}).`;
    return `${error.message} (${error.type}, HTTP ${error.status})`;
  }
  return String(error && error.message ? error.message : error);
}

// ---------------------------------------------------------------------------------------------------
// Models, model info and API key

// Each served model (its newest version), and each version when a model serves several; the default first.
function modelChoices(served) {
  const versions = new Map();
  for (const { name, version } of served.models) versions.set(name, [...(versions.get(name) || []), version]);
  const choices = [];
  for (const [name, list] of versions) {
    const model = `/models/${encodeURIComponent(name)}`;
    const suffix = name === served.default_model ? " (default)" : "";
    choices.push({ route: model, label: `${name}${suffix}` });
    if (list.length > 1) {
      for (const version of list) {
        choices.push({ route: `${model}/versions/${encodeURIComponent(version)}`, label: `${name} · version ${version}` });
      }
    }
  }
  return choices;
}

// Fills the model selector from GET /models; with one model it stays hidden and the TGI routes are used.
async function loadModels() {
  let served;
  try {
    served = await api.getJson("/models");
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    served = { default_model: "", models: [] }; // a server without the route: one model
  }
  const select = $("#model");
  if (served.models.length <= 1) {
    $("#model-field").hidden = true;
    select.replaceChildren();
    state.route = "";
    return;
  }
  const choices = modelChoices(served);
  const current = choices.some((choice) => choice.route === state.route) ? state.route : choices[0].route;
  select.replaceChildren(...choices.map((c) => new Option(c.label, c.route, false, c.route === current)));
  $("#model-field").hidden = false;
  state.route = current;
}

async function loadInfo() {
  try {
    await loadModels();
    const info = await api.getJson(`${state.route}/info`);
    state.info = info;
    const a = info.architecture || {};
    const parts = [info.model_id];
    if (a.n_encoder_layers !== undefined) parts.push(`${a.n_encoder_layers} encoder + ${a.n_decoder_layers} decoder layers`);
    if (a.n_heads !== undefined) parts.push(`${a.n_heads} heads`);
    if (a.d_model !== undefined) parts.push(`d_model ${a.d_model}`);
    parts.push(`${info.variant} on ${info.execution_provider}`);
    $("#model-info").textContent = parts.join(" · ");
    $("#api-key-status").textContent = "";
    const limits = info.limits || {};
    const maxNew = $("#max-new-tokens");
    if (limits.max_new_tokens) {
      maxNew.max = limits.max_new_tokens;
      // The server's limit unless the user typed a number (the model stops at its EOS well before it).
      if (!maxNew.dataset.edited || +maxNew.value > limits.max_new_tokens) maxNew.value = limits.max_new_tokens;
    }
    if (limits.max_num_beams) {
      const beams = $("#num-beams");
      beams.max = limits.max_num_beams;
      if (+beams.value > limits.max_num_beams) beams.value = limits.max_num_beams;
    }
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      $("#model-info").textContent = "This server needs an API key.";
      $("#api-key-status").textContent = $("#api-key").value
        ? "That key was refused."
        : "Enter your API key to use this server.";
    } else if (error instanceof ApiError && error.status === 503) {
      $("#model-info").textContent = "The model is loading…";
      setTimeout(loadInfo, 1000);
    } else {
      $("#model-info").textContent = `Cannot reach the server: ${errorText(error)}`;
    }
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------
// Decoding settings

function strategy() {
  return document.querySelector('input[name="strategy"]:checked').value;
}

function syncStrategy() {
  $("#sampling-settings").disabled = strategy() !== "sample";
  $("#beam-settings").disabled = strategy() !== "beam";
}

function numberOrNull(selector) {
  const raw = $(selector).value.trim();
  return raw === "" ? null : Number(raw);
}

function readParameters() {
  const parameters = { details: true };
  const maxNewTokens = numberOrNull("#max-new-tokens");
  if (maxNewTokens !== null) parameters.max_new_tokens = maxNewTokens; // empty: the server's default
  const chosen = strategy();
  if (chosen === "sample") {
    parameters.do_sample = true;
    const temperature = numberOrNull("#temperature");
    const topK = numberOrNull("#top-k");
    const topP = numberOrNull("#top-p");
    const seed = numberOrNull("#seed");
    if (temperature !== null) parameters.temperature = temperature;
    if (topK !== null) parameters.top_k = topK;
    if (topP !== null) parameters.top_p = topP;
    // The server's own seeds are 64-bit, past JavaScript's exact integers: choose one here so that
    // /attention can replay the same sample.
    parameters.seed = seed ?? Math.floor(Math.random() * 2 ** 31);
  } else if (chosen === "beam") {
    parameters.num_beams = numberOrNull("#num-beams") ?? 4;
  }
  return parameters;
}

// ---------------------------------------------------------------------------------------------------
// Output (streamed tokens)

function appendToken(token, index) {
  const chip = document.createElement("span");
  chip.className = token.special ? "token special" : "token";
  chip.dataset.index = index;
  chip.dataset.special = String(Boolean(token.special));
  chip.dataset.text = token.text;
  if (!token.special && token.text === "") chip.classList.add("partial"); // a byte of a multi-byte character
  chip.textContent = token.special ? token.text || "∅" : token.text.replace(/ /g, "␣") || "…";
  const logprob = typeof token.logprob === "number" ? ` · p=${Math.exp(token.logprob).toFixed(3)}` : "";
  chip.title = `#${index} id ${token.id}${logprob}`;
  $("#output-tokens").append(chip);
}

function onChipHover(event) {
  const chip = event.target.closest(".token");
  if (!chip || !state.linked || state.kind === "encoder") return;
  const row = +chip.dataset.index;
  const rows = currentMatrix().length;
  if (row < rows) setFocus({ row, col: null }, null);
}

// ---------------------------------------------------------------------------------------------------
// Attention data

function entries(kind) {
  return state.attention ? state.attention[`${kind}_attention`] || [] : [];
}

function matrixOf(kind, layerIndex, head) {
  const heads = entries(kind)[layerIndex][0]; // (heads, query, key) of a (1, H, Q, K) entry
  if (head !== "mean") return heads[head];
  const key = `${kind}/${layerIndex}`;
  if (!state.means.has(key)) {
    const mean = heads[0].map((row, i) => row.map((_, j) => {
      let sum = 0;
      for (const h of heads) sum += h[i][j];
      return sum / heads.length;
    }));
    state.means.set(key, mean);
  }
  return state.means.get(key);
}

const currentMatrix = () => matrixOf(state.kind, state.layerIndex, state.head);

// Labels of the rows (attending) and columns (attended) of a kind, and how a tooltip names them.
function axes(kind) {
  const a = state.attention;
  const source = a.encoder_tokens.map(tokenLabel);
  const decoder = a.decoder_tokens.map(tokenLabel);
  const targets = a.target_tokens.map((t) => tokenLabel(t.text));
  if (kind === "encoder") {
    return { rows: source, cols: source, rowTitle: "source", colTitle: "source",
             rowName: (i) => `«${source[i]}»`, colName: (j) => `«${source[j]}»` };
  }
  if (kind === "decoder") {
    return { rows: decoder, cols: decoder, rowTitle: "decoder input", colTitle: "decoder input",
             rowName: (i) => `«${decoder[i]}» (#${i})`, colName: (j) => `«${decoder[j]}» (#${j})` };
  }
  // Decoder position i reads decoder_tokens[i] and produces target_tokens[i]: label rows by the latter.
  const produced = targets.length >= decoder.length ? targets.slice(0, decoder.length) : decoder;
  return {
    rows: produced, cols: source, rowTitle: "output", colTitle: "source",
    rowName: (i) => `«${produced[i]}» (#${i}, reads «${decoder[i]}»)`, colName: (j) => `«${source[j]}»`,
  };
}

function domainMax(matrix) {
  if (state.domain === "unit") return 1;
  let max = 0;
  for (const row of matrix) for (const w of row) max = Math.max(max, w);
  return max > 0 ? max : 1;
}

function headLabel() {
  return state.head === "mean" ? "mean of heads" : `head ${state.attention.heads[state.head]}`;
}

function layerNumber() {
  return state.attention.layers[state.kind][state.layerIndex];
}

// ---------------------------------------------------------------------------------------------------
// Rendering

function fillSelectors() {
  const layers = state.attention.layers[state.kind] || [];
  state.layerIndex = Math.min(state.layerIndex, Math.max(layers.length - 1, 0));
  $("#layer").replaceChildren(...layers.map((layer, k) => new Option(`layer ${layer}`, k, false, k === state.layerIndex)));
  const heads = state.attention.heads;
  const options = [new Option("mean of heads", "mean", false, state.head === "mean")];
  heads.forEach((head, p) => options.push(new Option(`head ${head}`, p, false, String(state.head) === String(p))));
  $("#head").replaceChildren(...options);
}

function render() {
  const a = state.attention;
  if (!a || !entries(state.kind).length) return;
  fillSelectors();
  const matrix = currentMatrix();
  const max = domainMax(matrix);
  const ax = axes(state.kind);
  const kindLabel = KIND_LABELS[state.kind];
  const label = `${kindLabel}, layer ${layerNumber()}, ${headLabel()}`;
  const { rows, cols } = ax;
  const rowNames = rows.map((_, i) => ax.rowName(i));
  const colNames = cols.map((_, j) => ax.colName(j));
  $("#heatmap-caption").textContent = `${label} — rows: ${ax.rowTitle} tokens (attending), columns: ${ax.colTitle} tokens (attended)`;
  renderLegend($("#legend"), { palette: state.palette, max });

  const onFocus = (focus) => setFocus(focus, "heatmap");
  const heatmap = renderHeatmap($("#heatmap"), {
    matrix, rows, cols, rowNames, colNames, palette: state.palette, max, label,
    masked: state.kind === "decoder" ? (i, j) => j > i : null,
    onFocus,
  });
  const headview = renderHeadView($("#headview"), {
    matrix, left: rows, right: cols, leftTitle: ax.rowTitle, rightTitle: ax.colTitle, max, label,
    color: state.head === "mean" ? MEAN_COLOR : HEAD_COLORS[state.attention.heads[state.head] % HEAD_COLORS.length],
    onFocus: (focus) => setFocus(focus, "headview"),
  });
  state.views = [["heatmap", heatmap], ["headview", headview]];
  state.axes = { rows, cols, rowNames, colNames, matrix, max };

  const layers = (a.layers[state.kind] || []).map((layer) => ({ layer, label: `layer ${layer}` }));
  const heads = [...a.heads.map((head, p) => ({ head: p, label: `head ${head}` })), { head: "mean", label: "mean" }];
  renderThumbnails($("#thumbnails"), {
    layers, heads, palette: state.palette, kindLabel,
    matrixOf: (layerIndex, head) => matrixOf(state.kind, layerIndex, head),
    maxOf: domainMax,
    selected: { layerIndex: state.layerIndex, head: state.head },
    onSelect: ({ layerIndex, head }) => {
      state.layerIndex = layerIndex;
      state.head = head;
      render();
      const again = document.querySelector(`.thumb[data-layer-index="${layerIndex}"][data-head="${head}"]`);
      if (again) again.focus();
    },
  });
  setFocus(null, null);
}

// Mirror a focus (a cell, a row or a column) on every view and spell out its weights.
function setFocus(focus, origin) {
  for (const [name, view] of state.views) if (name !== origin) view.show(focus);
  const readout = $("#readout");
  const strip = $("#weights");
  const ax = state.axes;
  if (!ax || focus === null) {
    readout.textContent = "Hover a token or a cell to see its weights.";
    strip.replaceChildren();
    highlightChip(null);
    return;
  }
  const { matrix, rows, cols, rowNames, colNames, max } = ax;
  const map = colormap(state.palette);
  const where = `(layer ${layerNumber()}, ${headLabel()})`;
  if (focus.row !== null && focus.col !== null) {
    const masked = state.kind === "decoder" && focus.col > focus.row;
    readout.textContent = `${rowNames[focus.row]} → ${colNames[focus.col]}: ${
      masked ? "masked" : matrix[focus.row][focus.col].toFixed(4)} ${where}`;
  }
  let items;
  if (focus.row !== null) {
    if (focus.col === null) readout.textContent = `${rowNames[focus.row]} attends to ${where}:`;
    items = cols.map((text, j) => [text, matrix[focus.row][j], j === focus.col]);
    highlightChip(state.kind !== "encoder" ? focus.row : null);
  } else {
    readout.textContent = `${colNames[focus.col]} is attended by ${where}:`;
    items = rows.map((text, i) => [text, matrix[i][focus.col], false]);
    highlightChip(null);
  }
  strip.replaceChildren(...items.map(([text, w, current]) => {
    const item = document.createElement("span");
    item.className = current ? "weight current" : "weight";
    const rgb = map(w / max);
    const token = document.createElement("span");
    token.className = "weight-token";
    token.style.background = css(rgb);
    token.style.color = textOn(rgb);
    token.textContent = text;
    const value = document.createElement("span");
    value.className = "weight-value";
    value.textContent = formatWeight(w);
    item.append(token, value);
    return item;
  }));
}

function highlightChip(row) {
  document.querySelectorAll("#output-tokens .token.focused").forEach((chip) => chip.classList.remove("focused"));
  if (row === null || !state.linked) return;
  const chip = document.querySelector(`#output-tokens .token[data-index="${row}"]`);
  if (chip) chip.classList.add("focused");
}

// ---------------------------------------------------------------------------------------------------
// The request: stream, then attention

async function submit(event) {
  event.preventDefault();
  const source = $("#source").value.trim();
  if (!source) {
    setStatus("Type a sentence first.", "error");
    $("#source").focus();
    return;
  }
  api.setKey($("#api-key").value);
  if (state.info === null) await loadInfo();
  state.run?.abort();
  const run = new AbortController();
  state.run = run;
  const parameters = readParameters();
  const forced = $("#target").value.trim() || null;

  $("#output-tokens").replaceChildren();
  $("#output-text").value = "";
  $("#output-stats").textContent = "";
  $("#attention-note").textContent = "";
  $("#submit").disabled = true;
  $("#stop").hidden = false;
  setPhase("streaming");
  setStatus("Generating…");
  const started = performance.now();
  let last = null;
  let count = 0;
  try {
    const route = state.route; // the model this run is for, even if the selector changes meanwhile
    for await (const message of api.stream(`${route}/generate_stream`, { inputs: source, parameters }, { signal: run.signal })) {
      appendToken(message.token, count);
      count += 1;
      if (message.generated_text !== null && message.generated_text !== undefined) last = message;
    }
    if (last === null) throw new Error("the stream ended without its final event");
    const seconds = (performance.now() - started) / 1000;
    $("#output-text").value = last.generated_text;
    const details = last.details || {};
    const seed = details.seed !== null && details.seed !== undefined ? ` · seed ${details.seed}` : "";
    $("#output-stats").textContent =
      `${count} tokens in ${seconds.toFixed(2)} s · finish: ${details.finish_reason ?? "?"}${seed}`;

    setPhase("attending");
    setStatus("Computing attention…");
    const attentionParameters = { ...parameters };
    delete attentionParameters.details;
    const attention = await api.postJson(`${route}/attention`, {
      inputs: source,
      target: forced,
      parameters: attentionParameters,
      kinds: ["encoder", "decoder", "cross"],
      format: "json",
    }, { signal: run.signal });
    state.attention = attention;
    state.means = new Map();
    state.linked = !forced && attention.target_text === last.generated_text;
    if (forced) {
      $("#attention-note").textContent = `Teacher-forced target: «${attention.target_text}».`;
    } else if (!state.linked) {
      $("#attention-note").textContent =
        `The attention run produced «${attention.target_text}», which differs from the streamed output.`;
    }
    render();
    setPhase("ready");
    setStatus("Done. Explore the attention below.", "ok");
  } catch (error) {
    if (run.signal.aborted) {
      setPhase("idle");
      setStatus("Stopped.");
    } else {
      setPhase("error");
      setStatus(errorText(error), "error");
      if (error instanceof ApiError && error.status === 401) $("#api-key").focus();
      if (error instanceof ApiError && error.type === "model_not_found") loadInfo(); // unloaded: list again
    }
  } finally {
    if (state.run === run) {
      state.run = null;
      $("#submit").disabled = false;
      $("#stop").hidden = true;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Wiring

function selectKind(kind, { focusTab = false } = {}) {
  state.kind = kind;
  document.querySelectorAll('[role="tab"]').forEach((tab) => {
    const selected = tab.dataset.kind === kind;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && focusTab) tab.focus();
  });
  $("#attention-view").setAttribute("aria-labelledby", `tab-${kind}`);
  render();
}

function wire() {
  $("#request-form").addEventListener("submit", submit);
  $("#stop").addEventListener("click", () => state.run?.abort());
  document.querySelectorAll('input[name="strategy"]').forEach((radio) => radio.addEventListener("change", syncStrategy));
  syncStrategy();
  document.querySelectorAll("[data-example]").forEach((button) => button.addEventListener("click", () => {
    $("#source").value = button.dataset.example;
    $("#source").focus();
  }));
  $("#max-new-tokens").addEventListener("input", (event) => {
    event.target.dataset.edited = "true";
  });
  $("#source").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("#request-form").requestSubmit();
  });
  $("#model").addEventListener("change", (event) => {
    state.route = event.target.value;
    state.info = null;
    loadInfo();
  });
  $("#api-key").addEventListener("change", () => {
    api.setKey($("#api-key").value);
    loadInfo();
  });

  const tabs = [...document.querySelectorAll('[role="tab"]')];
  tabs.forEach((tab, k) => {
    tab.addEventListener("click", () => selectKind(tab.dataset.kind));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step === undefined && event.key !== "Home" && event.key !== "End") return;
      event.preventDefault();
      const next = event.key === "Home" ? 0 : event.key === "End" ? tabs.length - 1 : (k + step + tabs.length) % tabs.length;
      selectKind(tabs[next].dataset.kind, { focusTab: true });
    });
  });
  $("#layer").addEventListener("change", (event) => {
    state.layerIndex = +event.target.value;
    render();
  });
  $("#head").addEventListener("change", (event) => {
    state.head = event.target.value === "mean" ? "mean" : +event.target.value;
    render();
  });
  $("#domain").addEventListener("change", (event) => {
    state.domain = event.target.value;
    render();
  });
  $("#palette").addEventListener("change", (event) => {
    state.palette = event.target.value;
    render();
  });
  $("#output-tokens").addEventListener("pointerover", onChipHover);
  $("#output-tokens").addEventListener("pointerleave", () => setFocus(null, null));
  let resizeTimer = null;
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth === width) return; // the layout depends on the width only
    width = window.innerWidth;
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(render, 150);
  });
}

wire();
setPhase("idle");
renderLegend($("#legend"), { palette: state.palette, max: 1 });
loadInfo();
