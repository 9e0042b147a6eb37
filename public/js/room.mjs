// A standup's room: the header everyone shares (title, presence) and one of three parts —
// the detail, the shared edit form, or the meeting — as the room's state says.
import { escapeHTML } from "./format.mjs";
import { detail } from "./detail.mjs";
import { edit } from "./edit.mjs";
import { meeting } from "./meeting.mjs";
import { act, app, connect, isShowing, reroute, showSignIn, toast, whoAmI } from "./shell.mjs";
import { presenceItems, themeStyle } from "./views.mjs";

const PARTS = { detail, edit, meeting };

/** How a meeting the page was showing ended, and the note that was being typed. */
function meetingEnded(before, after) {
  const saved = after.standup.meetings.length > before.standup.meetings.length;
  const timeUp = before.meeting.secondsElapsed >= before.standup.duration - 1;
  return {
    message: saved ? (timeUp ? "Time's up — meeting saved." : "Meeting saved.") : "Meeting discarded.",
    unsent: app.querySelector("#note")?.value.trim() ?? "",
  };
}

export async function showRoom(id, screen) {
  app.innerHTML = `<section class="room"><p class="loading">Joining…</p></section>`;
  const name = await whoAmI();
  if (!isShowing(screen)) return;
  if (name === null) return showSignIn();
  const view = new RoomView(id);
  view.connection = connect(`/ws/rooms/${id}`, name, view);
}

class RoomView {
  constructor(id) {
    this.id = id;
    this.mode = null;
  }

  /** Sends an action; a refusal shows as a toast. */
  send(action) {
    return act(this.connection, action);
  }

  gone(code, reason) {
    const deleted = code === 4410;
    // NB: the server's reason for a deletion is the heading already: say it once.
    const detail = deleted ? "Its meeting history went with it." : reason || "";
    app.innerHTML = `<section class="room gone"><h1 tabindex="-1">${deleted ? "This standup was deleted." : "Disconnected"}</h1>
      <p>${escapeHTML(detail)}</p>
      <p>${deleted ? "" : `<button type="button" class="reconnect primary">Reconnect</button> `}<a href="#/">Back to all standups</a></p></section>`;
    // Closed for a reason (too slow, too many messages): the person decides when to come back.
    app.querySelector(".reconnect")?.addEventListener("click", reroute);
    app.querySelector("h1").focus();
  }

  render(state, you) {
    const previous = this.state;
    this.state = state;
    this.you = you;
    const mode = state.meeting ? "meeting" : state.destination?.edit ? "edit" : "detail";
    if (mode !== this.mode) {
      if (this.mode === "meeting" && previous?.meeting) this.ended = meetingEnded(previous, state);
      // The draft is gone (saved, cancelled): typing still waiting for it would only be refused.
      this.pending?.forEach((waiting) => clearTimeout(waiting.timer));
      this.pending?.clear();
      this.mode = mode;
      this.layout();
    }
    document.title = `${state.standup.title} · Standups`;
    const section = app.querySelector(".room");
    section.setAttribute("style", themeStyle(state.standup.theme));
    section.querySelector(".room-title").textContent = state.standup.title;
    section.querySelector(".presence").innerHTML = presenceItems(state.participants, you);
    PARTS[mode].render(this, state);
  }

  layout() {
    app.innerHTML = `<section class="room">
      <header class="room-head">
        <a href="#/" class="back">← Standups</a>
        <h1 class="room-title" tabindex="-1"></h1>
        <button type="button" class="copy-link">Copy link</button>
        <ul class="presence" aria-label="In this room"></ul>
      </header>
      <div class="room-body">${PARTS[this.mode].template()}</div>
    </section>`;
    PARTS[this.mode].wire(this);
    app.querySelector(".copy-link").addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(location.href);
        toast("Link copied: anyone on your team can open it.");
      } catch {
        toast(`Copy this link: ${location.href}`);
      }
    });
    // A new screen: focus its heading, so that keyboards and screen readers start there.
    app.querySelector(".room-title").focus({ preventScroll: true });
  }
}
