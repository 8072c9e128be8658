// The Storefront page: a JSON-RPC client over the bridge's WebSocket, ViewModels kept current from
// viewModel/changed patches, and plain DOM rendering of catalog, product, cart and dashboard (the account
// is in account.js, the inbox in inbox.js, the product's ticker and edit form in ticker.js).
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

/** Actions whose button stays disabled while the page's own request is in flight: the state says
 *  `submitting` only while the server waits (a write behind another process's lock, say); an order stored at
 *  once goes from `idle` to `succeeded` in one patch, and a second click meanwhile would send a second request. */
const guardedActions = new Set(["cart/checkout", "profile/save", "productForm/submit"]);
const actionsInFlight = new Map();  // "type/action" -> how many of the page's requests are unanswered

/** Whether a guarded action of `type` is in flight (its button shows it). */
function busy(type, action) {
  return (actionsInFlight.get(`${type}/${action}`) || 0) > 0;
}

/** Runs an action on the open ViewModel of `type`; errors are shown, never thrown. */
async function act(type, action, args) {
  const vm = byType[type];
  if (!vm) return;
  const method = `${type}/${action}`;
  const guarded = guardedActions.has(method);
  if (guarded) {
    actionsInFlight.set(method, (actionsInFlight.get(method) || 0) + 1);
    render(type);
  }
  try {
    return await connection.request(method, { viewModel: vm.handle, ...args });
  } catch (error) {
    showError(error.message);
  } finally {
    if (guarded) {
      actionsInFlight.set(method, actionsInFlight.get(method) - 1);
      render(type);
    }
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
  // The product's live price (ticker.js); an edit form of another product closes.
  if (byType.productForm && byType.productForm.state.productId !== productId) closeEditForm();
  await openTicker(productId);
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

/** The children that are there: `replaceChildren` would show a `null` as the text "null". */
function present(...children) {
  return children.filter((child) => child != null);
}

/** A failure the state shows (`{message, retryable}`) and a button that retries it with `type/action`. */
function problem(id, text, type, action, busy, args) {
  return el("div", { class: "problem", id },
    el("span", {}, text), " ",
    el("button", { type: "button", class: "retry", disabled: busy, onclick: () => act(type, action, args) }, busy ? "Retrying…" : "Retry"));
}

const renderers = {
  catalog(s) {
    $("catalog").classList.toggle("loading", s.phase === "loading");
    $("catalog-summary").replaceChildren(s.phase === "failed"
      ? problem("catalog-problem", `Could not load: ${s.error && s.error.message}`, "catalog", "refresh", false)
      : `${s.products.length} of ${s.totalCount} products${s.query ? ` for “${s.query}”` : ""}`);
    $("products").replaceChildren(...s.products.map((p) => el("li", { dataset: { productId: p.id } },
      el("span", { class: "name", title: p.name }, p.name),
      el("span", { class: "price" }, p.price),
      el("button", { type: "button", class: "details", onclick: () => openProduct(p.id) }, "Details"),
      el("button", { type: "button", class: "add", disabled: !p.inStock,
        onclick: () => act("cart", "add", { productId: p.id, quantity: 1 }) }, p.inStock ? "Add" : "Sold out"))));
    // The next page has its own phase: a failed page leaves the list loaded, and the same button retries it.
    const pageFailed = s.loadMorePhase === "failed";
    $("load-more").hidden = !s.hasMore && !pageFailed;
    $("load-more").disabled = s.loadMorePhase === "loading";
    $("load-more").textContent = s.loadMorePhase === "loading" ? "Loading more…" : pageFailed ? "Retry loading more" : "Load more";
    $("load-more-error").hidden = !pageFailed;
    $("load-more-error").textContent = pageFailed ? `Could not load more: ${s.loadMoreError ? s.loadMoreError.message : "the page failed to load"}` : "";
  },

  productDetail(s) {
    const body = $("detail-body");
    body.classList.toggle("loading", s.phase === "loading");
    if (s.phase === "failed") {
      return body.replaceChildren(problem("detail-problem", `Could not load: ${s.error && s.error.message}`, "productDetail", "refresh", false));
    }
    if (!s.product) return body.replaceChildren(el("p", { class: "muted" }, "Loading…"));
    const p = s.product;
    // inCart: units already in the cart (maxQuantity, what may still be added, counts them); null: unknown.
    const inCart = s.inCart === null || s.inCart === undefined ? "Units in your cart unknown"
      : s.inCart === 0 ? "None in your cart yet" : `${s.inCart} in your cart`;
    // Loaded with an error or an unknown favourite: a part failed (the favourites); the product still shows,
    // and refresh retries. The unknown mark counts on its own: a later success (an add) clears `error`.
    const favoriteUnknown = s.isFavorite === null || s.isFavorite === undefined;
    const trouble = s.error ? s.error.message
      : favoriteUnknown ? "Whether this is a favourite is unknown: the favourites could not be loaded." : null;
    body.replaceChildren(...present(
      trouble ? problem("detail-problem", trouble, "productDetail", "refresh", s.phase === "loading") : null,
      el("h3", { id: "detail-name" }, p.name),
      el("p", {}, el("span", { class: "badge" }, p.category), " ", p.isFeatured ? el("span", { class: "badge" }, "featured") : null),
      el("p", { class: "muted" }, p.description),
      el("p", {}, "Price ", el("strong", { class: "price" }, p.price), ` · ${p.stock} in stock · at most ${p.maxPerOrder} per order`),
      el("p", { id: "detail-in-cart" }, inCart),
      el("div", { class: "qty" },
        el("button", { type: "button", id: "qty-minus", "aria-label": "One less", onclick: () => act("productDetail", "decrementQuantity") }, "−"),
        el("span", { id: "detail-quantity" }, String(s.quantity)),
        el("button", { type: "button", id: "qty-plus", "aria-label": "One more", onclick: () => act("productDetail", "incrementQuantity") }, "+"),
        el("span", { class: "price" }, s.totalPrice || "")),
      el("button", { type: "button", id: "add-to-cart", class: "primary", disabled: !s.canAddToCart,
        onclick: () => act("productDetail", "addToCart") }, s.isAddingToCart ? "Adding…" : s.isOutOfStock ? "Out of stock" : "Add to cart"),
      " ",
      el("button", { type: "button", id: "favorite", disabled: !s.canToggleFavorite, onclick: () => act("productDetail", "toggleFavorite") },
        favoriteUnknown ? "Favourite unknown" : s.isFavorite ? "★ Favourite" : "☆ Favourite"),
      " ",
      el("button", { type: "button", id: "edit-product", onclick: openEditForm }, "Edit"),
      s.didAddToCart ? el("p", { class: "muted" }, "Added to the cart.") : null));
  },

  cart(s) {
    $("cart").classList.toggle("loading", s.phase === "loading");
    // Lines that went without the user removing them (a deleted product), until the next change.
    const notices = s.notices || [];
    $("cart-notices").replaceChildren(...(notices.length === 0 ? [] : [el("div", { class: "notice" },
      el("ul", {}, ...notices.map((n) => el("li", { dataset: { productId: n.productId } }, n.message))),
      el("button", { type: "button", id: "dismiss-notices", onclick: () => act("cart", "dismissNotices") }, "Dismiss"))]));
    // A cart that failed to load holds no lines and zero totals: that says nothing about the real cart.
    const unknown = s.phase === "failed" && s.lines.length === 0;
    $("cart-lines").replaceChildren(...(unknown ? [el("li", {}, problem("cart-problem", `Could not load the cart: ${s.error && s.error.message}`, "cart", "refresh", false))]
      : s.lines.length === 0 ? [el("li", { class: "muted" }, "The cart is empty.")]
      : s.lines.map((line) => el("li", { dataset: { productId: line.productId } },
        el("span", { class: "name", title: line.name }, `${line.quantity} × ${line.name}`),
        el("span", { class: "price" }, lineTotal(line)),
        el("button", { type: "button", "aria-label": `Remove ${line.name}`, onclick: () => act("cart", "remove", { productId: line.productId }) }, "✕")))));
    $("cart-items").textContent = unknown ? "–" : String(s.totals.itemCount);
    $("cart-subtotal").textContent = unknown ? "–" : s.totals.subtotal;
    $("cart-tax").textContent = unknown ? "–" : s.totals.tax;
    $("cart-total").textContent = unknown ? "–" : s.totals.total;
    const placing = s.checkoutPhase === "submitting" || busy("cart", "checkout");
    $("checkout").disabled = s.phase !== "loaded" || s.lines.length === 0 || placing;
    $("checkout").textContent = placing ? "Placing the order…" : "Checkout";
    $("cart-message").textContent = s.checkoutError ? `Checkout failed: ${s.checkoutError.message}`
      : s.lastOrder ? `Order ${s.lastOrder.id} placed: ${s.lastOrder.itemCount} item(s), ${s.lastOrder.total}.` : "";
  },

  dashboard(s) {
    const section = (id, sec, row, name) => {
      $(id).classList.toggle("loading", sec.phase === "loading");
      // A failure a retry cannot mend (a guest's orders: "Sign in to see your orders.") is said without a Retry.
      const hopeless = sec.phase === "failed" && sec.error && sec.error.retryable === false;
      $(id).replaceChildren(...(hopeless ? [el("li", { class: "muted", id: `${id}-problem` }, sec.error.message)]
        : sec.phase === "failed"
        ? [el("li", {}, problem(`${id}-problem`, `Could not load: ${sec.error && sec.error.message}`, "dashboard", "reloadSection", false, { section: name }))]
        : sec.items.length === 0 ? [el("li", { class: "muted" }, sec.phase === "loading" ? "Loading…" : "None yet.")]
        : sec.items.map(row)));
    };
    section("recent-orders", s.recentOrders, (o) => el("li", { dataset: { orderId: o.id } },
      el("span", { class: "name" }, `${o.id} · ${o.itemCount} item(s)`), el("span", { class: "price" }, o.total)), "recentOrders");
    // Trending (the last 24 hours' views and cart adds, most first) is not live: it changes on a reload.
    if (s.trending) {
      section("trending", s.trending, (t) => el("li", { dataset: { productId: t.product.id } },
        el("span", { class: "name", title: t.product.name }, t.product.name),
        el("span", { class: "muted" }, `${t.views} view${t.views === 1 ? "" : "s"} · ${t.cartAdds} add${t.cartAdds === 1 ? "" : "s"}`),
        el("button", { type: "button", onclick: () => openProduct(t.product.id) }, "Details")), "trending");
    }
    section("featured", s.featured, (p) => el("li", {},
      el("span", { class: "name", title: p.name }, p.name), el("span", { class: "price" }, p.price),
      el("button", { type: "button", onclick: () => openProduct(p.id) }, "Details")), "featured");
    section("categories", s.categories, (c) => el("li", {}, el("span", { class: "name" }, c.name), el("span", { class: "muted" }, String(c.productCount))), "categories");
  },
};

// The account's screens (sign-up, sign-in, profile) are in account.js.
Object.assign(renderers, accountRenderers);
// The inbox is in inbox.js; the product's ticker and edit form in ticker.js.
Object.assign(renderers, inboxRenderers, tickerRenderers);

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
    // The session first: a kept token signs this page's new server in before the cart and dashboard open.
    await Promise.all([open("login"), open("registration")]);
    await resumeSession();
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
  $("trending-reload").addEventListener("click", () => act("dashboard", "reloadSection", { section: "trending" }));
  wireAccountForms();
  wireInbox();
  wireTicker();
}

start();
