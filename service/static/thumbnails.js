// The layers x heads grid: one small canvas heatmap per (layer, head), plus the mean over heads, each a
// button that selects it. Diagonal-looking cross-attention thumbnails are the heads that align.

import { colormap } from "./colors.js";

const SIZE = 76; // CSS pixels of the longer side of a thumbnail

function drawThumbnail(canvas, matrix, map, max) {
  const rows = matrix.length;
  const cols = matrix[0]?.length ?? 0;
  canvas.width = Math.max(cols, 1);
  canvas.height = Math.max(rows, 1);
  const scale = SIZE / Math.max(rows, cols, 1);
  canvas.style.width = `${Math.round(cols * scale)}px`;
  canvas.style.height = `${Math.round(rows * scale)}px`;
  const context = canvas.getContext("2d");
  const image = context.createImageData(canvas.width, canvas.height);
  matrix.forEach((values, i) => values.forEach((w, j) => {
    const [r, g, b] = map(w / max);
    const at = 4 * (i * cols + j);
    image.data[at] = r;
    image.data[at + 1] = g;
    image.data[at + 2] = b;
    image.data[at + 3] = 255;
  }));
  context.putImageData(image, 0, 0);
}

/**
 * spec: {layers: [{layer, label}], heads: [{head, label}], matrixOf(layerIndex, head) -> number[][],
 *        palette, maxOf(matrix) -> number, selected: {layerIndex, head}, onSelect({layerIndex, head}),
 *        kindLabel}
 */
export function renderThumbnails(host, spec) {
  const map = colormap(spec.palette);
  const table = document.createElement("table");
  table.className = "thumb-table";
  const caption = document.createElement("caption");
  caption.className = "visually-hidden";
  caption.textContent = `${spec.kindLabel}: every layer and head`;
  table.append(caption);
  const headRow = document.createElement("tr");
  headRow.append(document.createElement("td"));
  for (const { label } of spec.heads) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = label;
    headRow.append(th);
  }
  const thead = document.createElement("thead");
  thead.append(headRow);
  const tbody = document.createElement("tbody");
  spec.layers.forEach(({ label }, layerIndex) => {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = label;
    tr.append(th);
    for (const { head, label: headLabel } of spec.heads) {
      const td = document.createElement("td");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "thumb";
      button.dataset.layerIndex = layerIndex;
      button.dataset.head = head;
      const selected = spec.selected.layerIndex === layerIndex && String(spec.selected.head) === String(head);
      button.setAttribute("aria-pressed", String(selected));
      button.setAttribute("aria-label", `${label}, ${headLabel}`);
      const canvas = document.createElement("canvas");
      const matrix = spec.matrixOf(layerIndex, head);
      drawThumbnail(canvas, matrix, map, spec.maxOf(matrix));
      button.append(canvas);
      button.addEventListener("click", () => spec.onSelect({ layerIndex, head }));
      td.append(button);
      tr.append(td);
    }
    tbody.append(tr);
  });
  table.append(thead, tbody);
  host.replaceChildren(table);
}
