// The Storefront page: a JSON-RPC client over the bridge's WebSocket, ViewModels kept current from
// viewModel/changed patches, and plain DOM rendering of catalog, product, cart and dashboard.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(name, "");
    else if (value !== false && value != null) node.setAttribute(name, value);
  }
  for (const child of children.flat()) if (child != null) node.append(child);
  return node;
}

// ------------------------------------------------------------------------------------------ errors

function showError(message) {
  const box = el("div", { class: "error" }, message, " ", el("button", { type: "button", onclick: () => box.remove() }, "Dismiss"));
  $("errors").append(box);
  while ($("errors").children.length > 3) $("errors").firstElementChild.remove();
}

function describeError(method, error) {
  const data = error.data || {};
  let text = `${method}: ${error.message}`;
  if (data.reason) text += ` (${data.reason})`;
  if (data.parameter !== undefined) text += ` [${data.parameter || "params"}]`;
  return text;
}

// -------------------------------------------------------------------------------------- connection

class Connection {
  constructor(url, onNotification, onClose) {
    this.nextId = 1;
    this.pending = new Map();
    this.socket = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.socket.onopen = resolve;
      this.socket.onerror = () => reject(new Error("could not connect to the bridge"));
    });
    this.socket.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return showError("unreadable message from the server"); }
      for (const item of Array.isArray(message) ? message : [message]) {
        if (item.method) onNotification(item.method, item.params);
        else if (this.pending.has(item.id)) {
          const { resolve, reject, method } = this.pending.get(item.id);
          this.pending.delete(item.id);
          if (item.error) reject(Object.assign(new Error(describeError(method, item.error)), { rpc: item.error }));
          else resolve(item.result);
        } else if (item.error) showError(describeError("server", item.error));
      }
    };
    this.socket.onclose = (event) => {
      for (const { reject, method } of this.pending.values()) reject(new Error(`${method}: the connection closed`));
      this.pending.clear();
      onClose(event);
    };
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }));
    });
  }

  notify(method, params) {
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }
}

// ---------------------------------------------------------------------------------------- ViewModels

const viewModels = new Map(); // handle -> { handle, type, version, state }
const byType = {};            // type -> the open ViewModel of that type
let connection;

function received(vm) {
  viewModels.set(vm.handle, vm);
  byType[vm.type] = vm;
  render(vm.type);
}

async function open(type, args) {
  const result = await connection.request("viewModel/open", { type, args: args || {} });
  const vm = { handle: result.viewModel, type, version: result.version, state: result.state };
  received(vm);
  return vm;
}

async function resync(vm) {
  vm.resyncing = true;
  try {
    const result = await connection.request("viewModel/get", { viewModel: vm.handle });
    Object.assign(vm, { version: result.version, state: result.state });
    render(vm.type);
  } finally {
    vm.resyncing = false;
  }
}

function onChanged(params) {
  const vm = viewModels.get(params.viewModel);
  if (!vm || vm.resyncing) return;
  if (params.version !== vm.version + 1) return resync(vm).catch((e) => showError(e.message));
  try {
    vm.state = "state" in params ? params.state : applyPatch(vm.state, params.patch);
    vm.version = params.version;
  } catch (error) {
    return resync(vm).catch((e) => showError(e.message));
  }
  render(vm.type);
}

/** Runs an action on the open ViewModel of `type`; errors are shown, never thrown. */
async function act(type, action, args) {
  const vm = byType[type];
  if (!vm) return;
  try {
    return await connection.request(`${type}/${action}`, { viewModel: vm.handle, ...args });
  } catch (error) {
    showError(error.message);
  }
}

async function openProduct(productId) {
  const previous = byType.productDetail;
  try {
    await open("productDetail", { productId });
  } catch (error) {
    return showError(error.message);
  }
  if (previous) {
    viewModels.delete(previous.handle);
    connection.request("viewModel/close", { viewModel: previous.handle }).catch(() => {});
  }
}

// -------------------------------------------------------------------------------------------- money

// Money is a decimal string ("400.99"). Line totals are computed here, in integer minor units (BigInt
// cents), never in binary floating point: "0.10" × 3 is "0.30", as the server's subtotal counts it.

/** "400.99" -> 40099n; null when the text is not a decimal amount with at most two decimals. */
function minorUnits(text) {
  const match = /^(-?)([0-9]+)(?:\.([0-9]{1,2}))?$/.exec(String(text));
  if (!match) return null;
  const units = BigInt(match[2]) * 100n + BigInt((match[3] || "0").padEnd(2, "0"));
  return match[1] ? -units : units;
}

/** 80198n -> "801.98". */
function formatMinorUnits(units) {
  const magnitude = units < 0n ? -units : units;
  return `${units < 0n ? "-" : ""}${magnitude / 100n}.${String(magnitude % 100n).padStart(2, "0")}`;
}

/** A cart line's total, `unitPrice × quantity`, as a decimal string ("–" if the price is unreadable). */
function lineTotal(line) {
  const unit = minorUnits(line.unitPrice);
  return unit === null || !Number.isInteger(line.quantity) ? "–" : formatMinorUnits(unit * BigInt(line.quantity));
}

// ------------------------------------------------------------------------------------------ rendering

const renderers = {
  catalog(s) {
    $("catalog").classList.toggle("loading", s.phase === "loading");
    $("catalog-summary").textContent = s.phase === "failed" ? `Could not load: ${s.error && s.error.message}`
      : `${s.products.length} of ${s.totalCount} products${s.query ? ` for “${s.query}”` : ""}`;
    $("products").replaceChildren(...s.products.map((p) => el("li", { dataset: { productId: p.id } },
      el("span", { class: "name", title: p.name }, p.name),
      el("span", { class: "price" }, p.price),
      el("button", { type: "button", class: "details", onclick: () => openProduct(p.id) }, "Details"),
      el("button", { type: "button", class: "add", disabled: !p.inStock,
        onclick: () => act("cart", "add", { productId: p.id, quantity: 1 }) }, p.inStock ? "Add" : "Sold out"))));
    $("load-more").hidden = !s.hasMore;
    $("load-more").disabled = s.isLoadingMore;
  },

  productDetail(s) {
    const body = $("detail-body");
    body.classList.toggle("loading", s.phase === "loading");
    if (s.phase === "failed") return body.replaceChildren(el("p", { class: "muted" }, `Could not load: ${s.error && s.error.message}`));
    if (!s.product) return body.replaceChildren(el("p", { class: "muted" }, "Loading…"));
    const p = s.product;
    body.replaceChildren(
      el("h3", { id: "detail-name" }, p.name),
      el("p", {}, el("span", { class: "badge" }, p.category), " ", p.isFeatured ? el("span", { class: "badge" }, "featured") : null),
      el("p", { class: "muted" }, p.description),
      el("p", {}, "Price ", el("strong", { class: "price" }, p.price), ` · ${p.stock} in stock · at most ${p.maxPerOrder} per order`),
      el("div", { class: "qty" },
        el("button", { type: "button", id: "qty-minus", "aria-label": "One less", onclick: () => act("productDetail", "decrementQuantity") }, "−"),
        el("span", { id: "detail-quantity" }, String(s.quantity)),
        el("button", { type: "button", id: "qty-plus", "aria-label": "One more", onclick: () => act("productDetail", "incrementQuantity") }, "+"),
        el("span", { class: "price" }, s.totalPrice || "")),
      el("button", { type: "button", id: "add-to-cart", class: "primary", disabled: !s.canAddToCart,
        onclick: () => act("productDetail", "addToCart") }, s.isAddingToCart ? "Adding…" : s.isOutOfStock ? "Out of stock" : "Add to cart"),
      " ",
      el("button", { type: "button", onclick: () => act("productDetail", "toggleFavorite") }, s.isFavorite ? "★ Favourite" : "☆ Favourite"),
      s.didAddToCart ? el("p", { class: "muted" }, "Added to the cart.") : null);
  },

  cart(s) {
    $("cart").classList.toggle("loading", s.phase === "loading");
    $("cart-lines").replaceChildren(...(s.lines.length === 0 ? [el("li", { class: "muted" }, "The cart is empty.")]
      : s.lines.map((line) => el("li", { dataset: { productId: line.productId } },
        el("span", { class: "name", title: line.name }, `${line.quantity} × ${line.name}`),
        el("span", { class: "price" }, lineTotal(line)),
        el("button", { type: "button", "aria-label": `Remove ${line.name}`, onclick: () => act("cart", "remove", { productId: line.productId }) }, "✕")))));
    $("cart-items").textContent = String(s.totals.itemCount);
    $("cart-subtotal").textContent = s.totals.subtotal;
    $("cart-tax").textContent = s.totals.tax;
    $("cart-total").textContent = s.totals.total;
    $("checkout").disabled = s.lines.length === 0 || s.checkoutPhase === "submitting";
    $("checkout").textContent = s.checkoutPhase === "submitting" ? "Placing the order…" : "Checkout";
    $("cart-message").textContent = s.checkoutError ? `Checkout failed: ${s.checkoutError.message}`
      : s.lastOrder ? `Order ${s.lastOrder.id} placed: ${s.lastOrder.itemCount} item(s), ${s.lastOrder.total}.` : "";
  },

  dashboard(s) {
    const section = (id, sec, row) => {
      $(id).classList.toggle("loading", sec.phase === "loading");
      $(id).replaceChildren(...(sec.phase === "failed" ? [el("li", { class: "muted" }, `Could not load: ${sec.error && sec.error.message}`)]
        : sec.items.length === 0 ? [el("li", { class: "muted" }, sec.phase === "loading" ? "Loading…" : "None yet.")]
        : sec.items.map(row)));
    };
    section("recent-orders", s.recentOrders, (o) => el("li", { dataset: { orderId: o.id } },
      el("span", { class: "name" }, `${o.id} · ${o.itemCount} item(s)`), el("span", { class: "price" }, o.total)));
    section("featured", s.featured, (p) => el("li", {},
      el("span", { class: "name", title: p.name }, p.name), el("span", { class: "price" }, p.price),
      el("button", { type: "button", onclick: () => openProduct(p.id) }, "Details")));
    section("categories", s.categories, (c) => el("li", {}, el("span", { class: "name" }, c.name), el("span", { class: "muted" }, String(c.productCount))));
  },
};

function render(type) {
  const vm = byType[type];
  if (vm && renderers[type]) renderers[type](vm.state);
}

// ---------------------------------------------------------------------------------------------- start

async function start() {
  const token = new URLSearchParams(location.search).get("token") || "";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  connection = new Connection(`${scheme}://${location.host}/ws?token=${encodeURIComponent(token)}`,
    (method, params) => { if (method === "viewModel/changed") onChanged(params); },
    (event) => {
      $("status").textContent = `disconnected${event.reason ? `: ${event.reason}` : ""}`;
      $("status").classList.add("down");
      showError(`The connection to the server closed${event.reason ? ` (${event.reason})` : ""}. Reload the page to start again.`);
      document.querySelectorAll("button, input").forEach((control) => { control.disabled = true; });
    });
  try {
    await connection.opened;
    const info = await connection.request("initialize", {
      clientInfo: { name: "storefront-web", version: "0.1.0" }, capabilities: { stateUpdates: "patch" } });
    connection.notify("initialized", {});
    $("status").textContent = `connected to ${info.serverInfo.name} ${info.serverInfo.version}`;
    await Promise.all([open("catalog"), open("cart"), open("dashboard")]);
  } catch (error) {
    showError(error.message);
  }

  let searchTimer;
  $("search").addEventListener("input", () => {
    clearTimeout(searchTimer); // the server debounces too; this only spares messages
    searchTimer = setTimeout(() => act("catalog", "search", { query: $("search").value }), 150);
  });
  $("search-form").addEventListener("submit", (event) => event.preventDefault());
  $("load-more").addEventListener("click", () => act("catalog", "loadMore"));
  $("checkout").addEventListener("click", () => act("cart", "checkout"));
}

start();
