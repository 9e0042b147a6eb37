// The room when nothing is going on: facts, attendees, history, and delete with confirmation.
import { escapeHTML } from "./format.mjs";
import { afterLateNote } from "./latenote.mjs";
import { discardedNoteKey } from "./notekept.mjs";
import { app, toast } from "./shell.mjs";
import { historyItem, whoAsked } from "./views.mjs";

/** Where a tab keeps the note of a meeting discarded under it, through a reload or a visit
 * to the lobby, until it goes into a meeting or is forgotten. */
export { discardedNoteKey } from "./notekept.mjs";

export const detail = {
  template() {
    return `
      <div class="detail">
        <div class="ended panel" role="status" hidden>
          <p class="ended-message"></p>
          <button type="button" class="dismiss-ended">Dismiss</button>
          <div class="unsent" hidden>
            <label><span class="unsent-says">Your note was not sent: it is kept here, in this tab, and goes into the
              meeting if someone brings it back, or else into the next one.</span>
              <textarea rows="2" dir="auto"></textarea></label>
            <button type="button" class="forget-note">Forget this note</button>
          </div>
        </div>
        <div class="actions">
          <button type="button" class="primary start">Start meeting</button>
          <button type="button" class="edit">Edit</button>
          <button type="button" class="danger delete">Delete</button>
        </div>
        <dl class="facts"></dl>
        <h2>Attendees</h2><ul class="attendee-list"></ul>
        <div class="history-head"><h2>History</h2>
          <p class="export">Download: <a class="export-md" download>Markdown</a> · <a class="export-csv" download>CSV</a></p></div>
        <ul class="history"></ul>
        <ul class="history older" aria-label="Older meetings"></ul>
        <button type="button" class="show-older" hidden>Show older meetings</button>
        <dialog class="delete-alert" aria-labelledby="delete-title" aria-describedby="delete-asked">
          <h2 id="delete-title" tabindex="-1" autofocus>Delete this standup?</h2>
          <p class="asked" id="delete-asked" hidden></p>
          <p>Its meeting history goes with it. Anyone in the room can undo it for 10 seconds.</p>
          <div class="actions">
            <button type="button" class="dismiss">Cancel</button>
            <button type="button" class="danger confirm">Delete</button>
          </div>
        </dialog>
      </div>`;
  },

  wire(view) {
    // NB: the times in the Markdown where the reader is, as the page shows them; in UTC when
    // the browser does not know where that is ("Etc/Unknown", from a TZ that names no zone).
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const known = zone && zone !== "Etc/Unknown";
    app.querySelector(".export-md").href = `/api/rooms/${view.id}/history.md${known ? `?tz=${encodeURIComponent(zone)}` : ""}`;
    app.querySelector(".export-csv").href = `/api/rooms/${view.id}/history.csv`;
    const on = (selector, event, handler) => app.querySelector(selector)?.addEventListener(event, handler);
    view.older = [];
    // The kept note follows its box: edited, emptied, forgotten.
    on(".ended textarea", "input", (event) => keepDiscardedNote(view, event.target.value));
    on(".dismiss-ended", "click", () => {
      app.querySelector(".ended").hidden = true;
      app.querySelector(".start").focus();
    });
    on(".forget-note", "click", () => {
      keepDiscardedNote(view, "");
      app.querySelector(".ended").hidden = true;
      app.querySelector(".ended .unsent").hidden = true;
      // NB: the keyboard was on the button that went: to what is next, as Dismiss does.
      app.querySelector(".start").focus();
    });
    on(".show-older", "click", async () => {
      const button = app.querySelector(".show-older");
      const hadKeyboard = document.activeElement === button;
      button.disabled = true;
      try {
        // Older than the recent ones the state holds, after those already shown.
        const recent = view.state.standup.meetings.length;
        const count = view.olderCount;
        const page = await view.connection.history(recent + view.older.length);
        // A meeting ended while the page was on its way: the offsets moved; ask again.
        if (view.olderCount !== count) return;
        view.older.push(...page.meetings.filter((meeting) => !view.older.some((shown) => shown.id === meeting.id)));
        detail.renderOlder(view);
      } catch (error) {
        toast(error.message);
      } finally {
        button.disabled = false;
        // NB: the last page shown, the button goes: the keyboard on it goes to the oldest
        // meeting; else it stays on the button (enabled again) — unless it went elsewhere.
        const lost = [null, document.body, button].includes(document.activeElement);
        if (hadKeyboard && lost && button.hidden) app.querySelector(".history.older li:last-child summary")?.focus();
        else if (hadKeyboard && lost) button.focus();
      }
    });
    on(".start", "click", () => view.send({ type: "startMeetingButtonTapped" }));
    on(".edit", "click", () => view.send({ type: "editButtonTapped" }));
    on(".delete", "click", () => view.send({ type: "deleteButtonTapped" }));
    on(".confirm", "click", () => view.send({ type: "alert.confirmDeletion" }));
    on(".dismiss", "click", () => view.send({ type: "alert.dismissed" }));
    on(".delete-alert", "cancel", (event) => {
      event.preventDefault();
      view.send({ type: "alert.dismissed" });
    });
  },

  /** The older meetings fetched so far, and the button for the next page while any are left. */
  renderOlder(view) {
    // A meeting ended meanwhile: the pages moved by one; start over.
    const count = view.state?.standup.olderMeetingCount ?? 0;
    if (view.olderCount !== undefined && view.olderCount !== count) view.older = [];
    view.olderCount = count;
    const older = view.older ?? [];
    drawnHistory(app.querySelector(".history.older"), older, "");
    app.querySelector(".show-older").hidden = older.length >= (view.state?.standup.olderMeetingCount ?? 0);
  },

  /** The note kept from a discarded meeting, as it is now in its box (empty if none). */
  discardedNote() {
    const box = app.querySelector(".ended .unsent");
    return box && !box.hidden ? box.querySelector("textarea").value.trim() : "";
  },

  render(view, state) {
    const { standup } = state;
    // Back after a reload, or from the lobby: the note a discarded meeting left is shown again.
    const kept = sessionStorage.getItem(discardedNoteKey(view.id));
    if (!view.ended && kept && app.querySelector(".ended .unsent").hidden) {
      view.ended = { message: "A meeting was discarded while you were typing a note.", unsent: kept };
    }
    if (view.ended) {
      const notice = app.querySelector(".ended");
      notice.hidden = false;
      notice.querySelector(".ended-message").textContent = view.ended.message;
      // NB: a note kept in it goes only with its own button (Forget this note).
      notice.querySelector(".dismiss-ended").hidden = Boolean(view.ended.unsent);
      if (view.ended.unsent) {
        notice.querySelector(".unsent").hidden = false;
        const box = notice.querySelector("textarea");
        box.value = view.ended.unsent;
        keepDiscardedNote(view, box.value);
        // NB: they were typing: the keyboard stays with them, where they were.
        if (view.ended.typing) {
          box.focus();
          box.setSelectionRange(...view.ended.typing);
        }
      }
      view.ended = null;
    }
    // NB: once the discarded meeting can no longer be brought back, its note goes into the next.
    const says = app.querySelector(".ended .unsent-says");
    const text = state.undo?.kind === "discardedMeeting"
      ? "Your note was not sent: it is kept here, in this tab, and goes into the meeting if someone brings it back, or else into the next one."
      : "Your note was not sent: it is kept here, in this tab, and goes into the next meeting.";
    if (says.textContent !== text) says.textContent = text;
    drawn(app.querySelector(".facts"), `
      <div><dt>Length</dt><dd>${standup.duration / 60} min</dd></div>
      <div><dt>Theme</dt><dd><span class="theme-chip">${standup.theme}</span></dd></div>
      <div><dt>Meetings</dt><dd>${standup.meetings.length + (standup.olderMeetingCount ?? 0)}</dd></div>`);
    drawn(app.querySelector(".attendee-list"), standup.attendees
      .map((attendee) => `<li><bdi>${escapeHTML(attendee.name)}</bdi></li>`).join(""));
    detail.renderOlder(view);
    drawnHistory(app.querySelector(".history"), standup.meetings, `<li class="empty">No meetings yet.</li>`);
    // NB: nothing to download before the first meeting is saved.
    app.querySelector(".export").hidden = standup.meetings.length === 0;
    const alert = app.querySelector(".delete-alert");
    // While a deletion waits for its undo window, nothing else starts.
    const deleting = state.undo?.kind === "deletedStandup";
    for (const button of app.querySelectorAll(".detail > .actions button")) button.disabled = deleting;
    const open = state.destination?.alert === "confirmDeletion";
    // NB: asked once: while the question waits for a late note, what the room did last
    // changes (the note), and would no longer say who asked.
    if (open && !alert.open && !("waiting" in alert.dataset)) {
      const asked = alert.querySelector(".asked");
      asked.textContent = whoAsked(state.activity, "askedToDelete", view.you, state.participants);
      asked.hidden = !asked.textContent;
      showOnceNotTyping(alert, asked.textContent || "Someone asked to delete this standup.",
        () => view.state.destination?.alert === "confirmDeletion");
    }
    if (!open && alert.open) {
      const hadFocus = alert.contains(document.activeElement);
      alert.close();
      // NB: deleted, the keyboard on the question's button goes to Undo (the button it came
      // from is disabled now); kept, the dialog gives it back where it was.
      const undo = app.querySelector(".undo-bar:not([hidden]) .undo");
      if (hadFocus && deleting && undo) undo.focus({ preventScroll: true });
    }
  },
};

/** Opens `alert` (a modal) — once the person is not typing a late note: a toast says what
 * was `asked`; the keys typed go on into the note, and the alert opens, if `stillAsked()`,
 * when the note is added, set aside or emptied, or its field loses the keyboard. */
function showOnceNotTyping(alert, asked, stillAsked) {
  const input = document.activeElement;
  if (input?.id !== "late-note" || !input.value.trim()) return alert.showModal();
  alert.dataset.waiting = "";
  toast(`${asked} Your note is still being typed: Enter adds it to its meeting, then you are asked too.`);
  afterLateNote(input, alert, () => {
    delete alert.dataset.waiting;
    if (stillAsked() && !alert.open && alert.isConnected) alert.showModal();
  });
}

/** Draws `html` in `element` only if it is not what it shows already: a change elsewhere in
 * the room (someone joining, an undo window ending) leaves a past meeting open, and the
 * keyboard on it. */
function drawn(element, html) {
  if (element.drawnHTML === html) return;
  element.innerHTML = html;
  element.drawnHTML = html;
}

/** Draws past meetings in `list` one by one (`empty` when there are none): a meeting that
 * changed (a late note came) is drawn again, still open if it was, the keyboard still on it;
 * a meeting saved is added above the others; the rest are left as they are — open, and with
 * the keyboard on them. */
function drawnHistory(list, meetings, empty) {
  if (meetings.length === 0) return drawn(list, empty);
  list.drawnHTML = null;
  // NB: those gone go first, so that the ones after them need not move.
  const kept = new Set(meetings.map((meeting) => meeting.id));
  for (const item of [...list.children]) if (!kept.has(item.dataset.id)) item.remove();
  const items = new Map([...list.children].map((item) => [item.dataset.id, item]));
  meetings.forEach((meeting, index) => {
    const html = historyItem(meeting);
    let item = items.get(meeting.id);
    items.delete(meeting.id);
    if (item?.drawnHTML !== html) {
      const holder = document.createElement("template");
      holder.innerHTML = html.trim();
      const fresh = holder.content.firstElementChild;
      Object.assign(fresh, { drawnHTML: html });
      fresh.dataset.id = meeting.id;
      const focused = item?.contains(document.activeElement);
      if (item?.querySelector("details").open) fresh.querySelector("details").open = true;
      if (item) item.replaceWith(fresh);
      if (focused) fresh.querySelector("summary").focus({ preventScroll: true });
      item = fresh;
    }
    // NB: only a new one moves in: a row moved in the page loses the keyboard.
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
  });
}

function keepDiscardedNote(view, text) {
  if (text.trim()) sessionStorage.setItem(discardedNoteKey(view.id), text);
  else sessionStorage.removeItem(discardedNoteKey(view.id));
}
