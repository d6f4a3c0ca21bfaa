// BertViz-style "head view": the attending tokens on the left, the attended ones on the right, and a
// line for every pair whose opacity and width follow the weight. Focusing a token (pointer, or arrow
// keys once the drawing has keyboard focus) keeps only its lines and prints the weights.

import { el, textWidth, TOKEN_FONT_PX } from "./heatmap.js";
import { formatWeight } from "./colors.js";

const ROW = 20;
const MIN_WEIGHT = 0.005; // lines lighter than this are invisible anyway; skipping them keeps the SVG small

/**
 * spec: {matrix, left, right, leftTitle, rightTitle, color, max, label, onFocus({row, col} | null)}
 * Returns {show(focus)}: focus.row is a left token, focus.col a right one.
 */
export function renderHeadView(host, spec) {
  const { matrix, left, right } = spec;
  const titleW = (text) => textWidth(text.toUpperCase()) * 0.95 + text.length * 0.6; // 11px, spaced
  const leftW = Math.ceil(Math.max(30, titleW(spec.leftTitle), ...left.map(textWidth))) + 8;
  const rightW = Math.ceil(Math.max(30, ...right.map(textWidth))) + 44; // room for the weight
  const gap = Math.max(120, Math.min(260, host.clientWidth - leftW - rightW - 16));
  const width = leftW + gap + rightW;
  const top = 28;
  const height = top + ROW * Math.max(left.length, right.length) + 6;
  const xL = leftW;
  const xR = leftW + gap;
  const y = (k) => top + ROW * k + ROW / 2;

  const svg = el("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "headview-svg",
    tabindex: 0,
    role: "img",
    "aria-roledescription": "head view",
    "aria-label": `${spec.label}. Arrow keys: up and down move between tokens, left and right switch side.`,
  });
  svg.style.font = `${TOKEN_FONT_PX}px system-ui, sans-serif`;
  svg.append(
    el("text", { x: xL - 4, y: 12, "text-anchor": "end", class: "column-title" }, spec.leftTitle),
    el("text", { x: xR + 4, y: 12, class: "column-title" }, spec.rightTitle),
  );

  const lines = el("g", { class: "lines" });
  const byRow = left.map(() => []);
  const byCol = right.map(() => []);
  matrix.forEach((values, i) => {
    values.forEach((w, j) => {
      if (w < MIN_WEIGHT) return;
      const strength = Math.min(w / spec.max, 1);
      const line = el("line", {
        x1: xL + 4, y1: y(i), x2: xR - 4, y2: y(j),
        stroke: spec.color,
        "stroke-opacity": (0.08 + 0.92 * strength).toFixed(3),
        "stroke-width": (0.6 + 3 * strength).toFixed(2),
      });
      lines.append(line);
      byRow[i].push(line);
      byCol[j].push(line);
    });
  });
  svg.append(lines);

  function tokenColumn(tokens, side) {
    return tokens.map((text, k) => {
      const group = el("g", { class: `hv-token ${side}`, "data-side": side, "data-index": k });
      const boxX = side === "left" ? 2 : xR;
      const boxW = (side === "left" ? leftW - 4 : rightW - 44) + 2;
      const box = el("rect", { x: boxX, y: y(k) - ROW / 2 + 1, width: boxW, height: ROW - 2, rx: 3,
                               class: "hv-box", fill: spec.color, "fill-opacity": 0 });
      const label = el("text", {
        x: side === "left" ? xL - 4 : xR + 4,
        y: y(k),
        "text-anchor": side === "left" ? "end" : "start",
        "dominant-baseline": "central",
      }, text);
      const weight = el("text", {
        x: side === "left" ? 4 : width - 4,
        y: y(k),
        "text-anchor": side === "left" ? "start" : "end",
        "dominant-baseline": "central",
        class: "hv-weight",
      }, "");
      group.append(box, label, weight);
      svg.append(group);
      return { group, box, weight };
    });
  }
  const leftTokens = tokenColumn(left, "left");
  const rightTokens = tokenColumn(right, "right");
  host.replaceChildren(svg);

  let focus = null;
  function show(next) {
    focus = next;
    const row = focus?.row ?? null;
    const col = focus?.col ?? null;
    const active = row !== null ? byRow[row] : col !== null ? byCol[col] : null;
    lines.classList.toggle("dimmed", active !== null);
    lines.querySelectorAll(".on").forEach((line) => line.classList.remove("on"));
    if (active) active.forEach((line) => line.classList.add("on"));
    const paint = (tokens, weightOf) => tokens.forEach(({ box, weight, group }, k) => {
      const w = weightOf(k);
      box.setAttribute("fill-opacity", w === null ? 0 : Math.min(w / spec.max, 1) * 0.55);
      weight.textContent = w === null ? "" : formatWeight(w);
      group.classList.toggle("active", false);
    });
    paint(leftTokens, (i) => (row === null && col !== null ? matrix[i][col] : null));
    paint(rightTokens, (j) => (row !== null ? matrix[row][j] : null));
    if (row !== null) leftTokens[row].group.classList.add("active");
    if (col !== null && row === null) rightTokens[col].group.classList.add("active");
  }

  svg.addEventListener("pointerover", (event) => {
    const group = event.target.closest(".hv-token");
    if (!group) return;
    const k = +group.dataset.index;
    const next = group.dataset.side === "left" ? { row: k, col: null } : { row: null, col: k };
    show(next);
    spec.onFocus(next);
  });
  svg.addEventListener("pointerleave", () => {
    show(null);
    spec.onFocus(null);
  });
  svg.addEventListener("focus", () => {
    if (focus === null) {
      show({ row: 0, col: null });
      spec.onFocus(focus);
    }
  });
  svg.addEventListener("keydown", (event) => {
    const onLeft = focus === null || focus.row !== null;
    const k = focus === null ? 0 : onLeft ? focus.row : focus.col;
    const size = onLeft ? left.length : right.length;
    let next = null;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const moved = Math.min(Math.max(k + (event.key === "ArrowDown" ? 1 : -1), 0), size - 1);
      next = onLeft ? { row: moved, col: null } : { row: null, col: moved };
    } else if (event.key === "ArrowRight" && onLeft) {
      next = { row: null, col: Math.min(k, right.length - 1) };
    } else if (event.key === "ArrowLeft" && !onLeft) {
      next = { row: Math.min(k, left.length - 1), col: null };
    } else if (event.key === "Escape") {
      next = null;
    } else {
      return;
    }
    event.preventDefault();
    show(next);
    spec.onFocus(next);
  });

  return {
    show(next) {
      // A cell focus (row and col) from the heatmap shows the row's lines, as BertViz does.
      show(next && next.row !== null ? { row: next.row, col: null } : next);
    },
  };
}
