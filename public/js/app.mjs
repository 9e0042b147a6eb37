// Standups in the browser: routes the address to a screen. Each screen has its module:
// shell (status, toasts, sign-in, connections), lobby, room (with detail, edit, meeting).
import { offerNoteOfClosedTab } from "./closednote.mjs";
import { plainText } from "./format.mjs";
import { guardLengths } from "./limits.mjs";
import { showLobby } from "./lobby.mjs";
import { notesFromClosedTabs } from "./notekept.mjs";
import { showGone, showRoom } from "./room.mjs";
import { beginScreen, currentRoomView, dismissToast, guardTheTab, setRouter, setStatus, suspend, toast } from "./shell.mjs";
import {
  CLOSED_TABS_KEY, KEPT_FROM, NEW_STANDUP_GROUP, forgetIfAnotherSince, isRoomGroup, keepTabTyping, noteGroup, takeClosedTabs, typedIn,
} from "./tabtyping.mjs";

/** The room the address is for: its id as the server writes it (upper case), however the
 * address has it — what a tab keeps for the room is kept under it. */
const roomInAddress = () => location.hash.match(/^#\/rooms\/([0-9A-Fa-f-]{36})\/?$/)?.[1].toUpperCase();

function route() {
  const screen = beginScreen();
  const room = roomInAddress();
  try {
    const why = forgetIfAnotherSince();
    if (why === "signedOut") toast("This browser was signed out while this page was away: what was typed here is not kept.");
    if (why === "someoneElse") toast("Someone else signed in at this browser: what was typed here before is kept for the person who typed it, not shown here.");
    takeTypingOfClosedTabs(room ?? (location.hash.startsWith("#/rooms/") ? null : "lobby"));
  } catch (error) {
    // NB: storage refused (full, or blocked): the screen comes all the same.
    console.warn("Typing kept by other tabs could not be looked at:", error);
  }
  // NB: a page opened afresh may hold typing kept in the tab before a reload.
  guardTheTab();
  if (room) {
    showRoom(room, screen);
  } else if (location.hash.startsWith("#/rooms/")) {
    // A room's link cut short or mangled when it was passed on: say so, not the lobby unasked.
    setStatus("none");
    showGone("missing");
  } else {
    showLobby(screen);
  }
}

setRouter(route);
// A broken character typed or pasted into a field (half of an emoji) is shown and kept as
// U+FFFD, a tab as a space, and an invisible direction mark goes (`plainText`), before any of
// the page's own listeners reads the field: what is sent, kept and compared with the room is
// the text the server holds (it refuses the rest, and the field would wait on typing the room
// never takes).
document.addEventListener("input", ({ target, isComposing }) => {
  if (isComposing || !("value" in target) || typeof target.value !== "string") return;
  const mended = plainText(target.value);
  if (mended === target.value) return;
  // NB: the selection stays where it was in what is left.
  const { selectionStart, selectionEnd, selectionDirection } = target;
  const kept = (at) => plainText(target.value.slice(0, at)).length;
  const [start, end] = [selectionStart, selectionEnd].map((at) => at === null ? null : kept(at));
  target.value = mended;
  if (start !== null) target.setSelectionRange(start, end, selectionDirection);
}, true);

// NB: one length message at a time: a new one replaces the last, which named another field;
// and it goes when its field is left (saved, cancelled, another field) or changes again and
// fits (a note sent, its field empty): it is about the typing.
const lengthToasts = new WeakMap();
function takeDownLengthToast(field) {
  const shown = lengthToasts.get(field);
  if (!shown) return;
  lengthToasts.delete(field);
  dismissToast(shown.item, shown.message);
}
guardLengths(document, (message, field) => {
  if (!lengthToasts.has(field)) {
    field.addEventListener("blur", () => takeDownLengthToast(field), { once: true });
  }
  lengthToasts.set(field, { item: toast(message, { kind: "length" }), message });
}, takeDownLengthToast);
window.addEventListener("hashchange", route);
// A tab closed with a note for the meeting this one shows, which holds a note of its own: said
// here at once (`offerNoteOfClosedTab`).
function offerWaitingNote() {
  const room = roomInAddress();
  const view = room ? currentRoomView(room) : null;
  if (view?.mode === "meeting") offerNoteOfClosedTab(view);
}
window.addEventListener("storage", ({ key }) => key === CLOSED_TABS_KEY && offerWaitingNote());
document.addEventListener("visibilitychange", offerWaitingNote);
// What a tab keeps typed goes with it when it is closed: as the page goes, it is kept in the
// browser, and the next screen of any tab takes what it has none of, as after a reload
// (`comeback.mjs`). A page shown again takes back its own; what another tab took meanwhile
// goes on there, and is said.
function takeTypingOfClosedTabs(screen) {
  // NB: a screen takes what is for it: its room's typing, or the lobby's new standup.
  const wanted = (id) => (screen === "lobby" ? id === NEW_STANDUP_GROUP : screen !== null && isRoomGroup(id, screen));
  const { taken, gone, from } = takeClosedTabs(sessionStorage, localStorage, Date.now(), wanted);
  // NB: said only on the screen it was taken for.
  notesFromClosedTabs.clear();
  const note = noteGroup(screen);
  if (taken.includes(note)) notesFromClosedTabs.set(screen, KEPT_FROM[from[note]]);
  // NB: typing that went on elsewhere and came back here since (that tab closed too) is here.
  const lines = gone.filter(({ id }) => !taken.includes(id))
    .flatMap(({ entries }) => typedIn(entries));
  if (lines.length) toast(`What you typed here went on in another tab of this browser while this page was away: ${lines.join(", ")}.`);
}
// A page kept in the back/forward cache (or frozen) would keep its socket open and its
// person "here": leave when the page is put away, come back when it is shown again.
// NB: a page frozen in the background may be discarded without a `pagehide`: it keeps its
// typing too, and takes back its own as it resumes.
const putAway = (event) => {
  suspend();
  try {
    // NB: typing of a person another signed in over (a tab that heard of it only now) is kept
    // under their name, not the name signed in now.
    forgetIfAnotherSince();
    keepTabTyping(sessionStorage, localStorage, Date.now(), undefined, { closed: event.type === "pagehide" && !event.persisted });
  } catch (error) {
    console.warn("Typing could not be kept for the next tab:", error);
  }
};
window.addEventListener("pagehide", putAway);
document.addEventListener("freeze", putAway);
// NB: a page coming back may get both `resume` and `pageshow`: the screen counter keeps it
// to one connection.
window.addEventListener("pageshow", (event) => event.persisted && route());
document.addEventListener("resume", route);
route();
