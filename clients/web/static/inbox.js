// The inbox: the signed-in account's `notifications` ViewModel (orders placed, favourites back in stock or
// cheaper), newest first, with the unread count as a badge in the header. Guests have no inbox: it is opened
// when the session signs in (account.js calls openInbox) and closed when it signs out. New notifications,
// made by any server on the database, arrive as patches like every other change. Loaded before app.js,
// whose helpers ($, el, act, open, connection, byType, viewModels, showError, problem) it uses.
"use strict";

let inboxOpening = false;
let inboxLoaded = false;        // whether the first list was shown
const inboxSeen = new Set();    // ids shown so far
const inboxArrived = new Set(); // ids that arrived after the first load: highlighted as new until read

async function openInbox() {
  if (byType.notifications || inboxOpening) return;
  inboxOpening = true;
  try {
    await open("notifications");
  } catch (error) {
    if (reasonOf(error) !== "signInRequired") showError(error.message);
  } finally {
    inboxOpening = false;
  }
}

function closeInbox() {
  const vm = byType.notifications;
  if (!vm) return;
  delete byType.notifications;
  viewModels.delete(vm.handle);
  connection.request("viewModel/close", { viewModel: vm.handle }).catch(() => {});
  inboxSeen.clear();
  inboxArrived.clear();
  inboxLoaded = false;
  $("inbox").hidden = true;
  $("inbox-link").hidden = true;
  $("inbox-badge").hidden = true;
}

function wireInbox() {
  $("inbox-mark-all").addEventListener("click", () => act("notifications", "markAllRead"));
  $("inbox-more").addEventListener("click", () => act("notifications", "loadMore"));
}

/** "2026-11-22T19:41:03Z" -> the local time (today) or date and time. */
function shortTime(timestamp) {
  const date = new Date(timestamp);
  if (Number.isNaN(date.getTime())) return String(timestamp);
  return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleString();
}

const inboxRenderers = {
  notifications(s) {
    $("inbox").hidden = false;
    $("inbox-link").hidden = false;
    $("inbox").classList.toggle("loading", s.phase === "loading");
    const unread = Number.isInteger(s.unreadCount) ? s.unreadCount : 0;
    $("inbox-badge").textContent = String(unread);
    $("inbox-badge").dataset.count = String(unread);
    $("inbox-badge").hidden = unread === 0;
    $("inbox-unread").textContent = unread ? `${unread} unread` : "";
    $("inbox-disabled").hidden = s.enabled !== false;
    $("inbox-problem").replaceChildren(...(s.phase === "failed" || s.error
      ? [problem("inbox-retry", `Could not load the inbox: ${s.error ? s.error.message : "unknown error"}`, "notifications", "refresh", s.phase === "loading")] : []));
    $("inbox-mark-all").disabled = unread === 0;
    const items = s.items || [];
    if (s.phase === "loaded") {
      // The first list is not news; what appears above the ones already shown later is (older pages that
      // "Load more" appends below are not).
      let above = inboxLoaded;
      for (const n of items) {
        if (inboxSeen.has(n.id)) above = false;
        else if (above) inboxArrived.add(n.id);
        inboxSeen.add(n.id);
      }
      inboxLoaded = true;
    }
    $("inbox-items").replaceChildren(...(items.length === 0
      ? [el("li", { class: "muted" }, s.phase === "loading" ? "Loading…" : "No notifications yet.")]
      : items.map((n) => el("li", { class: `${n.isRead ? "read" : "unread"}${inboxArrived.has(n.id) && !n.isRead ? " new" : ""}`,
        dataset: { notificationId: n.id, kind: n.kind } },
        el("span", { class: "dot", "aria-label": n.isRead ? "read" : "unread" }, n.isRead ? "" : "●"),
        el("span", { class: "name" }, el("strong", {}, n.title), " ", el("span", { class: "body" }, n.body),
          el("br"), el("span", { class: "muted" }, shortTime(n.createdAt))),
        n.productId ? el("button", { type: "button", class: "details", onclick: () => openProduct(n.productId) }, "Product") : null,
        n.isRead ? null : el("button", { type: "button", class: "mark-read",
          onclick: () => act("notifications", "markAsRead", { id: n.id }) }, "Mark read")))));
    const pageFailed = s.loadMorePhase === "failed";
    $("inbox-more").hidden = !s.hasMore && !pageFailed;
    $("inbox-more").disabled = s.loadMorePhase === "loading";
    $("inbox-more").textContent = s.loadMorePhase === "loading" ? "Loading more…" : pageFailed ? "Retry loading more" : "Load more";
    $("inbox-more-error").hidden = !pageFailed;
    $("inbox-more-error").textContent = pageFailed ? `Could not load more: ${s.loadMoreError ? s.loadMoreError.message : "the page failed to load"}` : "";
  },
};
