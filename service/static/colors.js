// Perceptually uniform, colour-blind-safe scales computed here: matplotlib's viridis (11 stops,
// linearly interpolated in sRGB) and cividis (the polynomial fit of d3-scale-chromatic, ISC licence),
// plus the legend that explains them.

const VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
                 "#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725"];

function cividisAt(t) {
  const c = (v) => Math.max(0, Math.min(255, Math.round(v)));
  return [
    c(-4.54 - t * (35.34 - t * (2381.73 - t * (6402.7 - t * (7024.72 - t * 2710.57))))),
    c(32.49 + t * (170.73 + t * (52.82 - t * (131.46 - t * (176.58 - t * 67.37))))),
    c(81.24 + t * (442.36 - t * (2482.43 - t * (6167.24 - t * (6614.94 - t * 2475.67))))),
  ];
}

const toHex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, "0")).join("")}`;

const STOPS = {
  viridis: VIRIDIS,
  cividis: Array.from({ length: 21 }, (_, k) => toHex(cividisAt(k / 20))),
};

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// Returns t in [0, 1] -> [r, g, b] (0..255).
export function colormap(name) {
  const stops = (STOPS[name] || STOPS.viridis).map(hexToRgb);
  const last = stops.length - 1;
  return (t) => {
    const x = Math.min(Math.max(Number.isFinite(t) ? t : 0, 0), 1) * last;
    const i = Math.min(Math.floor(x), last - 1);
    const f = x - i;
    const a = stops[i];
    const b = stops[i + 1];
    return [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * f));
  };
}

export const css = ([r, g, b]) => `rgb(${r},${g},${b})`;

// Dark text on light cells and light text on dark ones (relative luminance, WCAG).
export function textOn([r, g, b]) {
  const lin = (v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return luminance > 0.22 ? "#111" : "#fff";
}

const SVG = "http://www.w3.org/2000/svg";

// A horizontal gradient bar with ticks from 0 to `max`.
export function renderLegend(host, { palette, max }) {
  const map = colormap(palette);
  const width = 180;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", width + 20);
  svg.setAttribute("height", 34);
  svg.setAttribute("class", "legend-svg");
  const defs = document.createElementNS(SVG, "defs");
  const gradient = document.createElementNS(SVG, "linearGradient");
  gradient.id = "legend-gradient";
  for (let k = 0; k <= 20; k += 1) {
    const stop = document.createElementNS(SVG, "stop");
    stop.setAttribute("offset", `${k * 5}%`);
    stop.setAttribute("stop-color", css(map(k / 20)));
    gradient.append(stop);
  }
  defs.append(gradient);
  svg.append(defs);
  const bar = document.createElementNS(SVG, "rect");
  Object.entries({ x: 10, y: 2, width, height: 12, fill: "url(#legend-gradient)", rx: 2 }).forEach(
    ([k, v]) => bar.setAttribute(k, v),
  );
  svg.append(bar);
  for (let k = 0; k <= 4; k += 1) {
    const x = 10 + (width * k) / 4;
    const tick = document.createElementNS(SVG, "line");
    Object.entries({ x1: x, x2: x, y1: 14, y2: 18, stroke: "currentColor" }).forEach(([a, v]) =>
      tick.setAttribute(a, v),
    );
    const label = document.createElementNS(SVG, "text");
    label.setAttribute("x", x);
    label.setAttribute("y", 30);
    label.setAttribute("text-anchor", "middle");
    label.textContent = formatWeight((max * k) / 4);
    svg.append(tick, label);
  }
  host.replaceChildren(svg);
  host.title = `Colour scale: ${palette}, 0 to ${formatWeight(max)}`;
}

export function formatWeight(w) {
  if (w === 0) return "0";
  if (w >= 0.995) return w.toFixed(2).replace(/\.?0+$/, "") || "1";
  return w.toFixed(2).replace(/^0/, "");
}
