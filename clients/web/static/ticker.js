// The product panel's live parts: a price ticker (the `priceTicker` ViewModel for the product shown: current
// price, stock, the recent history as a sparkline and a list, connected or not) and the product's edit form
// (`productForm` in edit mode, `args: {productId}`). A change stored by any server on the database (an edit,
// a checkout's stock, a market simulation) moves the ticker. Loaded before app.js, whose helpers it uses.
"use strict";

let tickerProductId = null;

/** Opens the ticker of `productId` (closing the one of the product shown before). */
async function openTicker(productId) {
  const previous = byType.priceTicker;
  if (previous && tickerProductId === productId) return;
  tickerProductId = productId;
  try {
    await open("priceTicker", { productId });
  } catch (error) {
    showError(error.message);
    if (previous && byType.priceTicker === previous) closeViewModelOf("priceTicker");
    $("ticker").hidden = true;
    return;
  }
  if (previous) forget(previous);
}

/** Closes the open ViewModel of `type`, if any. */
function closeViewModelOf(type) {
  const vm = byType[type];
  if (!vm) return;
  delete byType[type];
  forget(vm);
}

function forget(vm) {
  viewModels.delete(vm.handle);
  connection.request("viewModel/close", { viewModel: vm.handle }).catch(() => {});
}

// ------------------------------------------------------------------------------------------- sparkline

const SVG = "http://www.w3.org/2000/svg";

/** An SVG polyline of the prices (decimal strings), scaled to width × height; null under two points. */
function sparkline(prices, width = 220, height = 40) {
  const values = prices.map(minorUnits).filter((v) => v !== null).map(Number); // drawing only: floats are fine
  if (values.length < 2) return null;
  const low = Math.min(...values), high = Math.max(...values), span = high - low || 1;
  const points = values.map((v, i) => `${((i / (values.length - 1)) * width).toFixed(1)},${(height - 2 - ((v - low) / span) * (height - 4)).toFixed(1)}`);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("id", "ticker-spark");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `price history: ${values.length} points`);
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", points.join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#23395d");
  line.setAttribute("stroke-width", "1.5");
  svg.append(line);
  return svg;
}

/** The change from the previous point: "▲ 1.00", "▼ 0.50" or "" (exact, in minor units). */
function priceMove(history) {
  if (history.length < 2) return "";
  const now = minorUnits(history[history.length - 1].price), before = minorUnits(history[history.length - 2].price);
  if (now === null || before === null || now === before) return "";
  return now > before ? `▲ ${formatMinorUnits(now - before)}` : `▼ ${formatMinorUnits(before - now)}`;
}

// ------------------------------------------------------------------------------------------ edit form

const editFields = ["name", "description", "price", "stock"];

async function openEditForm() {
  const detail = byType.productDetail;
  const productId = detail && detail.state.product && detail.state.product.id;
  if (!productId) return;
  closeViewModelOf("productForm");
  try {
    await open("productForm", { productId });
  } catch (error) {
    showError(error.message);
  }
}

function closeEditForm() {
  closeViewModelOf("productForm");
  $("edit-form").hidden = true;
}

function saveEdit() {
  const key = globalThis.crypto && crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
  return act("productForm", "submit", { idempotencyKey: key });
}

function wireTicker() {
  for (const field of editFields) {
    $(`edit-${field}`).addEventListener("input", () => act("productForm", "setField", { field, value: $(`edit-${field}`).value }));
  }
  $("edit-form").addEventListener("submit", (event) => { event.preventDefault(); saveEdit(); });
  $("edit-close").addEventListener("click", closeEditForm);
}

// ------------------------------------------------------------------------------------------ rendering

const tickerRenderers = {
  priceTicker(s) {
    const box = $("ticker");
    // A product that does not exist: the product panel says so (with its own Retry); no ticker to show.
    box.hidden = s.phase === "failed" && s.error && s.error.retryable === false;
    if (box.hidden) return;
    box.classList.toggle("loading", s.phase === "loading");
    box.classList.toggle("paused", !s.isConnected);
    const history = s.priceHistory || [];
    const recent = history.slice(-5).reverse();
    box.replaceChildren(...present(
      el("div", { class: "ticker-head" },
        el("strong", {}, "Live price"), " ",
        el("span", { id: "ticker-status", class: s.isConnected ? "live" : "paused" }, s.isConnected ? "● live" : "○ paused"), " ",
        el("button", { type: "button", id: "ticker-toggle",
          onclick: () => act("priceTicker", s.isConnected ? "disconnect" : "connect") }, s.isConnected ? "Disconnect" : "Connect")),
      s.phase === "failed" || s.error
        ? problem("ticker-problem", `Ticker: ${s.error ? s.error.message : "could not load"}`, "priceTicker", "refresh", s.phase === "loading") : null,
      el("p", { class: "ticker-now" },
        el("span", { id: "ticker-price", class: "price" }, s.currentPrice == null ? "–" : s.currentPrice), " ",
        el("span", { id: "ticker-move", class: "muted" }, priceMove(history)), " · ",
        el("span", { id: "ticker-stock" }, s.stock == null ? "stock unknown" : `${s.stock} in stock`)),
      sparkline(history.map((p) => p.price)),
      el("ol", { id: "ticker-history", class: "list compact" }, ...recent.map((p) => el("li", {},
        el("span", { class: "muted" }, shortTime(p.at)), el("span", { class: "price" }, p.price), el("span", { class: "muted" }, `stock ${p.stock}`)))),
      el("p", { class: "muted", id: "ticker-count" }, `${history.length} change${history.length === 1 ? "" : "s"} kept`)));
  },

  productForm(s) {
    // Only the edit mode has a place on this page (creating products is for other front ends).
    if (s.mode !== "edit") return;
    const form = $("edit-form");
    form.hidden = false;
    form.classList.toggle("loading", s.phase === "loading");
    $("edit-title").textContent = `Edit product ${s.productId || ""}`;
    $("edit-problem").replaceChildren(...(s.phase === "failed" || s.error
      ? [el("span", {}, s.error ? s.error.message : "The product could not be loaded.")] : []));
    const fields = s.fields || {};
    for (const field of editFields) setInput(`edit-${field}`, fields[field] == null ? "" : String(fields[field]));
    const errors = s.errors || {};
    for (const field of editFields) fieldError(`edit-${field}-error`, errors[field]);
    const saving = s.submitPhase === "submitting" || busy("productForm", "submit");
    $("edit-save").disabled = s.phase !== "loaded" || saving || s.hasChanges === false;
    $("edit-save").textContent = saving ? "Saving…" : "Save";
    $("edit-status").textContent = s.submitPhase === "succeeded" && !s.hasChanges ? "Saved."
      : s.submitPhase === "failed" ? "Not saved." : s.hasChanges ? "Unsaved changes." : "";
  },
};
