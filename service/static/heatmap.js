// An SVG heatmap of one attention map: rows are the attending (query) tokens, columns the attended
// (key) ones. One <rect> per (row, col) pair carries data-row, data-col and data-value; pointer and
// keyboard (arrow keys, Home/End, Escape) move a focus that the caller mirrors elsewhere.

import { colormap, css, formatWeight, textOn } from "./colors.js";

const SVG = "http://www.w3.org/2000/svg";
export const TOKEN_FONT_PX = 12;
const FONT = `${TOKEN_FONT_PX}px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`;

let measureContext = null;
export function textWidth(text) {
  measureContext ??= document.createElement("canvas").getContext("2d");
  measureContext.font = FONT;
  return measureContext.measureText(text).width;
}

export function el(name, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

/**
 * spec: {matrix, rows, cols, rowNames, colNames, palette, max, masked(row, col) -> bool, label,
 *        onFocus({row, col} | null)}
 * Returns {show(focus)} so that the caller can mirror a focus set elsewhere.
 */
export function renderHeatmap(host, spec) {
  const { matrix, rows, cols } = spec;
  const map = colormap(spec.palette);
  const rowLabelW = Math.ceil(Math.max(20, ...rows.map(textWidth))) + 12;
  const colLabelW = Math.ceil(Math.max(20, ...cols.map(textWidth))) + 8;
  const available = Math.max(200, host.clientWidth - rowLabelW - 24);
  const cell = Math.max(12, Math.min(40, Math.floor(available / Math.max(cols.length, 1))));
  const top = Math.ceil(colLabelW * Math.sin(Math.PI / 3)) + 10; // labels rotated by 60 degrees
  const width = rowLabelW + cell * cols.length + 12;
  const height = top + cell * rows.length + 4;

  const svg = el("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "heatmap-svg",
    tabindex: 0,
    role: "img",
    "aria-roledescription": "heatmap",
    "aria-label": `${spec.label}: ${rows.length} by ${cols.length} cells. Arrow keys move between cells.`,
  });
  svg.style.font = FONT;

  const rowLabels = rows.map((text, i) => {
    const label = el("text", {
      x: rowLabelW - 6,
      y: top + cell * i + cell / 2,
      "text-anchor": "end",
      "dominant-baseline": "central",
      class: "axis-label row-label",
      "data-row": i,
    }, text);
    svg.append(label);
    return label;
  });
  const colLabels = cols.map((text, j) => {
    const x = rowLabelW + cell * j + cell / 2;
    const label = el("text", {
      x,
      y: top - 6,
      transform: `rotate(-60 ${x} ${top - 6})`,
      "dominant-baseline": "central",
      class: "axis-label col-label",
      "data-col": j,
    }, text);
    svg.append(label);
    return label;
  });

  const cells = el("g", { class: "cells" });
  const showValues = cell >= 30;
  matrix.forEach((values, i) => {
    values.forEach((w, j) => {
      const masked = spec.masked ? spec.masked(i, j) : false;
      const rgb = map(w / spec.max);
      const rect = el("rect", {
        x: rowLabelW + cell * j,
        y: top + cell * i,
        width: cell,
        height: cell,
        fill: masked ? "url(#masked)" : css(rgb),
        class: masked ? "cell masked" : "cell",
        "data-row": i,
        "data-col": j,
        "data-value": String(w),
      });
      cells.append(rect);
      if (showValues && !masked) {
        cells.append(el("text", {
          x: rowLabelW + cell * j + cell / 2,
          y: top + cell * i + cell / 2,
          "text-anchor": "middle",
          "dominant-baseline": "central",
          fill: textOn(rgb),
          class: "cell-value",
        }, formatWeight(w)));
      }
    });
  });
  const defs = el("defs");
  const pattern = el("pattern", { id: "masked", width: 6, height: 6, patternUnits: "userSpaceOnUse",
                                   patternTransform: "rotate(45)" });
  pattern.append(el("rect", { width: 6, height: 6, fill: "#f1f1f4" }), el("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#d0d0d8", "stroke-width": 2 }));
  defs.append(pattern);
  svg.append(defs, cells);

  const rowBand = el("rect", { class: "band", x: rowLabelW, width: cell * cols.length, height: cell, visibility: "hidden" });
  const colBand = el("rect", { class: "band", y: top, width: cell, height: cell * rows.length, visibility: "hidden" });
  const cursor = el("rect", { class: "cursor", width: cell, height: cell, visibility: "hidden" });
  svg.append(rowBand, colBand, cursor);
  host.replaceChildren(svg);

  let focus = null;
  const tooltip = document.getElementById("tooltip");

  function show(next, { fromPointer = null } = {}) {
    focus = next;
    rowLabels.forEach((label, i) => label.classList.toggle("active", focus !== null && focus.row === i));
    colLabels.forEach((label, j) => label.classList.toggle("active", focus !== null && focus.col === j));
    const hasRow = focus !== null && focus.row !== null && focus.row !== undefined;
    const hasCol = focus !== null && focus.col !== null && focus.col !== undefined;
    rowBand.setAttribute("visibility", hasRow ? "visible" : "hidden");
    colBand.setAttribute("visibility", hasCol ? "visible" : "hidden");
    if (hasRow) rowBand.setAttribute("y", top + cell * focus.row);
    if (hasCol) colBand.setAttribute("x", rowLabelW + cell * focus.col);
    if (hasRow && hasCol) {
      cursor.setAttribute("x", rowLabelW + cell * focus.col);
      cursor.setAttribute("y", top + cell * focus.row);
      cursor.setAttribute("visibility", "visible");
      const w = matrix[focus.row][focus.col];
      tooltip.innerHTML = "";
      const head = document.createElement("div");
      head.className = "tooltip-head";
      head.textContent = `${spec.rowNames[focus.row]} → ${spec.colNames[focus.col]}`;
      const body = document.createElement("div");
      body.textContent = spec.masked && spec.masked(focus.row, focus.col)
        ? "masked (future position)"
        : `weight ${w.toFixed(4)}`;
      tooltip.append(head, body);
      tooltip.hidden = false;
      const box = fromPointer ?? cursor.getBoundingClientRect();
      const x = (fromPointer ? fromPointer.x : box.right) + 12 + window.scrollX;
      const y = (fromPointer ? fromPointer.y : box.top) + 12 + window.scrollY;
      tooltip.style.left = `${Math.min(x, window.scrollX + document.documentElement.clientWidth - 220)}px`;
      tooltip.style.top = `${y}px`;
    } else {
      cursor.setAttribute("visibility", "hidden");
      tooltip.hidden = true;
    }
  }

  function focusFromEvent(event) {
    const data = event.target.dataset || {};
    if (data.row !== undefined && data.col !== undefined) return { row: +data.row, col: +data.col };
    if (data.row !== undefined) return { row: +data.row, col: null };
    if (data.col !== undefined) return { row: null, col: +data.col };
    return null;
  }

  svg.addEventListener("pointermove", (event) => {
    const next = focusFromEvent(event);
    if (next === null) return;
    if (focus && next.row === focus.row && next.col === focus.col) {
      if (!tooltip.hidden) show(next, { fromPointer: { x: event.clientX, y: event.clientY } });
      return;
    }
    show(next, { fromPointer: { x: event.clientX, y: event.clientY } });
    spec.onFocus(next);
  });
  svg.addEventListener("pointerleave", () => {
    show(null);
    spec.onFocus(null);
  });
  svg.addEventListener("focus", () => {
    if (focus === null || focus.row === null || focus.col === null) {
      const next = { row: focus?.row ?? 0, col: focus?.col ?? 0 };
      show(next);
      spec.onFocus(next);
    }
  });
  svg.addEventListener("blur", () => {
    tooltip.hidden = true;
  });
  svg.addEventListener("keydown", (event) => {
    const at = focus && focus.row !== null && focus.col !== null ? focus : { row: 0, col: 0 };
    const moves = {
      ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
    };
    let next = null;
    if (moves[event.key]) {
      const [dr, dc] = moves[event.key];
      next = {
        row: Math.min(Math.max(at.row + dr, 0), rows.length - 1),
        col: Math.min(Math.max(at.col + dc, 0), cols.length - 1),
      };
    } else if (event.key === "Home") {
      next = { row: at.row, col: 0 };
    } else if (event.key === "End") {
      next = { row: at.row, col: cols.length - 1 };
    } else if (event.key === "Escape") {
      show(null);
      spec.onFocus(null);
      event.preventDefault();
      return;
    }
    if (next !== null) {
      event.preventDefault();
      show(next);
      spec.onFocus(next);
    }
  });

  return {
    show(next) {
      show(next);
      tooltip.hidden = true; // the tooltip follows only this heatmap's own pointer or keyboard focus
    },
  };
}
