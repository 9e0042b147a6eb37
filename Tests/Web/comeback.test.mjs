import assert from "node:assert/strict";
import { test } from "node:test";
import { addressAfterSignIn, forgetKept, keepForSignIn, keepLeftTyping, signOutFailed, signedIn, takeLeftTyping, takeTyping, whatTheRoomLacks } from "../../public/js/comeback.mjs";

/** `localStorage`'s calls, in memory. */
function storage() {
  const items = new Map();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => items.set(key, String(value)),
    removeItem: (key) => items.delete(key),
  };
}

const room = "9DC560BB-B249-46DE-9F06-F13A87678816";
const typing = { room, unsent: [{ path: "/title", base: "Design", value: "Design weekly", name: "Title" }], note: "", by: "Ana" };

test("after signing in, the invite link's page goes back to the room that asked", () => {
  const kept = storage();
  assert.equal(addressAfterSignIn(kept), "/");
  keepForSignIn(`#/rooms/${room}`, null, kept);
  assert.equal(addressAfterSignIn(kept), `/#/rooms/${room}`);
  keepForSignIn("", null, kept);
  assert.equal(addressAfterSignIn(kept), "/");
  // Only an address of the app's own: nothing else is taken from storage into the address.
  keepForSignIn("//elsewhere.example", null, kept);
  assert.equal(addressAfterSignIn(kept), "/");
});

test("typing is kept for its room, taken once, and outlives a second ask to sign in", () => {
  const kept = storage();
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  // Asked again (a reload of the sign-in page): nothing typed now, the typing stays.
  keepForSignIn(`#/rooms/${room}`, { room, unsent: [], note: "", by: "Ana" }, kept);
  assert.equal(takeTyping("another room", "Ana", kept), null);
  // Someone else signing in at this browser does not get it.
  assert.equal(takeTyping(room, "Ben", kept), null);
  assert.deepEqual(takeTyping(room, "Ana", kept), typing);
  assert.equal(takeTyping(room, "Ana", kept), null);
  assert.equal(addressAfterSignIn(kept), `/#/rooms/${room}`);
});

test("every tab's typing is kept when their sessions end at once, each for its own room", () => {
  const kept = storage();
  const other = "0B8E36C2-3C1E-4E0A-9B8B-7E2C2E9A1D11";
  const note = { room: other, unsent: [], note: "Half a thought", by: "Ana" };
  // A renewed invite: tab A (the form) and tab B (a note) both keep theirs.
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  assert.deepEqual(keepForSignIn(`#/rooms/${other}`, note, kept).typing, note);
  // A reload of tab A's sign-in page shows what it had kept.
  assert.deepEqual(keepForSignIn(`#/rooms/${room}`, null, kept).typing, typing);
  assert.deepEqual(takeTyping(room, "Ana", kept), typing);
  assert.deepEqual(takeTyping(other, "Ana", kept), note);
  assert.equal(takeTyping(other, "Ana", kept), null);
  // The same room typed in again takes the place of what it kept before.
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  const newer = { ...typing, unsent: [{ ...typing.unsent[0], value: "Design daily" }] };
  keepForSignIn(`#/rooms/${room}`, newer, kept);
  assert.deepEqual(takeTyping(room, "Ana", kept), newer);
  assert.equal(takeTyping(room, "Ana", kept), null);
});

test("two tabs in one room each keep their own typing", () => {
  const kept = storage();
  const note = { room, unsent: [], note: "Half a thought", by: "Ana" };
  keepForSignIn(`#/rooms/${room}`, typing, kept, Date.now(), "tab-a");
  keepForSignIn(`#/rooms/${room}`, note, kept, Date.now(), "tab-b");
  // Each tab's sign-in page shows its own.
  assert.deepEqual(keepForSignIn(`#/rooms/${room}`, null, kept, Date.now(), "tab-a").typing, typing);
  assert.deepEqual(takeTyping(room, "Ana", kept, "tab-b"), note);
  assert.deepEqual(takeTyping(room, "Ana", kept, "tab-a"), typing);
  assert.equal(takeTyping(room, "Ana", kept, "tab-a"), null);
  // A tab that closed before it was back: its typing goes to the next tab in the room.
  keepForSignIn(`#/rooms/${room}`, note, kept, Date.now(), "tab-gone");
  assert.deepEqual(takeTyping(room, "Ana", kept, "tab-a"), note);
});

test("a note alone is typing to keep", () => {
  const kept = storage();
  keepForSignIn(`#/rooms/${room}`, { room, unsent: [], note: "Half a thought", by: "Ana" }, kept);
  assert.equal(takeTyping(room, "Ana", kept).note, "Half a thought");
});

test("a note for a meeting that ended is typing to keep, with the meeting it is for", () => {
  const kept = storage();
  const late = { meeting: "M1", speaker: "Blob", text: "Half a thought" };
  keepForSignIn(`#/rooms/${room}`, { room, unsent: [], note: "", late, by: "Ana" }, kept);
  assert.deepEqual(takeTyping(room, "Ana", kept).late, late);
});

test("what was kept a day ago, or before signing out, is gone", () => {
  const kept = storage();
  keepForSignIn(`#/rooms/${room}`, typing, kept, Date.now() - 25 * 60 * 60 * 1000);
  assert.equal(takeTyping(room, "Ana", kept), null);
  assert.equal(addressAfterSignIn(kept), "/");
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  forgetKept(kept);
  assert.equal(takeTyping(room, "Ana", kept), null);
  assert.equal(addressAfterSignIn(kept), "/");
});

test("after a sign-out, another tab whose session ends with it keeps nothing, until someone signs in", () => {
  const kept = storage();
  forgetKept(kept);
  assert.equal(keepForSignIn(`#/rooms/${room}`, typing, kept), null);
  assert.equal(takeTyping(room, "Ana", kept), null);
  assert.equal(addressAfterSignIn(kept), "/");
  signedIn("Ana", kept);
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  assert.deepEqual(takeTyping(room, "Ana", kept), typing);
});

test("a sign-out that failed takes back what it marked: a session that ends later keeps its typing", () => {
  const kept = storage();
  forgetKept(kept);
  signOutFailed(kept);
  assert.deepEqual(keepForSignIn(`#/rooms/${room}`, typing, kept).typing, typing);
  assert.deepEqual(takeTyping(room, "Ana", kept), typing);
});

test("a sign-out that failed gives back what it set aside: typing kept for after a sign-in, closed tabs'", async () => {
  const { signOutDone } = await import("../../public/js/comeback.mjs");
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Kept note" }), kept, Date.now());
  forgetKept(kept);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  assert.equal(takeTyping(room, "Ana", kept), null);
  // NB: signing out asks the same twice (the page's sign-in page too): nothing more goes.
  forgetKept(kept);
  signOutFailed(kept);
  assert.deepEqual(takeTyping(room, "Ana", kept), typing);
  const next = tabStorage();
  assert.deepEqual(takeClosedTabs(next, kept).taken, [`note:${room}`]);
  assert.equal(next.getItem(`standups.note.${room}`), "Kept note");
  // Done: nothing is left aside, nor given back.
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Another" }), kept, Date.now());
  forgetKept(kept);
  signOutDone(kept);
  signOutFailed(kept);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  assert.equal(kept.getItem("standups.signingOut"), null);
});

test("a kept record that is not JSON is nothing kept", () => {
  const kept = storage();
  kept.setItem("standups.afterSignIn", "{not json");
  assert.equal(addressAfterSignIn(kept), "/");
  assert.equal(takeTyping(room, "Ana", kept), null);
});

test("a form's typing left unanswered is kept for its room in this tab, taken once", () => {
  const tab = storage();
  // Nothing typed that the room never got: nothing kept.
  keepLeftTyping({ ...typing, unsent: [] }, tab);
  keepLeftTyping(null, tab);
  assert.equal(takeLeftTyping(room, tab), null);
  keepLeftTyping(typing, tab);
  assert.equal(takeLeftTyping("ANOTHER-ROOM", tab), null);
  assert.deepEqual(takeLeftTyping(room, tab), typing.unsent);
  assert.equal(takeLeftTyping(room, tab), null);
  // Left again with everything answered: what the earlier leaving kept is not offered.
  keepLeftTyping(typing, tab);
  keepLeftTyping({ ...typing, unsent: [] }, tab);
  assert.equal(takeLeftTyping(room, tab), null);
  // What is not a list of fields (another version's, or edited by hand) is dropped.
  tab.setItem(`standups.left.${room}`, "{not json");
  assert.equal(takeLeftTyping(room, tab), null);
  assert.equal(tab.getItem(`standups.left.${room}`), null);
});

test("typing kept on leaving is offered back only where the room does not hold it", () => {
  const ana = { id: "A1", name: "Ana" };
  const standup = { title: "Design", attendees: [ana] };
  const kept = [
    { path: "/title", base: "Design", value: "Design sync", name: "Title" },
    { path: "/attendees/A1/name", base: "Ana", value: "Ana María", name: "Attendee 1" },
    { path: "/attendees/new/name", base: "", value: "Ben", name: "a new attendee" },
  ];
  // The form closed and nothing was saved: all of it is lacking.
  assert.deepEqual(whatTheRoomLacks(kept, { standup }), kept);
  // What reached the draft is held; what did not is offered.
  const draft = { title: "Design sync", attendees: [ana, { id: "B2", name: "Ben" }] };
  assert.deepEqual(whatTheRoomLacks(kept, { standup, destination: { edit: { draft } } }), [kept[1]]);
  // Saved since: the standup holds it, the form closed.
  const saved = { title: "Design sync", attendees: [{ id: "A1", name: "Ana María" }, { id: "B2", name: "Ben" }] };
  assert.deepEqual(whatTheRoomLacks(kept, { standup: saved }), []);
  // Held too when someone typed on since: the room's text has the change in it.
  const typedOn = { title: "Design sync weekly", attendees: [ana] };
  assert.deepEqual(whatTheRoomLacks([kept[0]], { standup, destination: { edit: { draft: typedOn } } }), []);
  // An attendee removed since lacks the name typed in it; nothing kept is nothing lacking.
  assert.deepEqual(whatTheRoomLacks([kept[1]], { standup: { title: "Design", attendees: [] } }), [kept[1]]);
  assert.deepEqual(whatTheRoomLacks(null, { standup }), []);
});

test("typing a cancel threw away goes onto a draft from the text it was typed on when the draft holds it", async () => {
  const { builtOn } = await import("../../public/js/comeback.mjs");
  const { mergeText } = await import("../../public/js/textmerge.mjs");
  // Saved "Daily"; " sync" reached the draft, " notes" had not when the form was cancelled.
  const typing = { path: "/title", base: "Daily", value: "Daily sync notes", shadow: "Daily sync" };
  // The Undo brought the draft back with " sync" in it: from there, once.
  const restored = { title: "Daily sync", attendees: [] };
  assert.equal(builtOn(typing, restored), "Daily sync");
  assert.equal(mergeText(builtOn(typing, restored), typing.value, restored.title).value, "Daily sync notes");
  // A new form from the saved standup: from the saved text.
  const fresh = { title: "Daily", attendees: [] };
  assert.equal(mergeText(builtOn(typing, fresh), typing.value, fresh.title).value, "Daily sync notes");
  // An attendee's name, and typing that names no draft text (left unsent): its own base.
  const name = { path: "/attendees/a1/name", base: "", value: "Dana", shadow: "Dan" };
  assert.equal(builtOn(name, { title: "x", attendees: [{ id: "a1", name: "Dan" }] }), "Dan");
  assert.equal(builtOn({ path: "/title", base: "Daily s", value: "Daily sy" }, restored), "Daily s");
});

/** `sessionStorage`'s calls, its items listed by `Object.keys` as a Storage's are. */
function tabStorage(items = {}) {
  const tab = { ...items };
  Object.defineProperties(tab, {
    getItem: { value: (key) => (Object.hasOwn(tab, key) ? tab[key] : null) },
    setItem: { value: (key, value) => { tab[key] = String(value); } },
    removeItem: { value: (key) => { delete tab[key]; } },
  });
  return tab;
}

test("a closed tab's typing goes to the next tab, a group at a time, once", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const closed = tabStorage({
    [`standups.note.${room}`]: "Half a thought",
    [`standups.noteFor.${room}`]: JSON.stringify({ count: 2, speaker: "Ana" }),
    "standups.lateNote.R2": JSON.stringify({ meeting: "M1", text: "Shipped" }),
    "standups.newStandup": JSON.stringify({ title: "Retro", attendees: [] }),
    // Not typing: the connection's own records stay with their tab.
    [`standups.resume:/ws/rooms/${room}`]: "{}",
  });
  keepTabTyping(closed, kept, 1000);
  // The next tab has a note of its own for R2's late note: that group waits for another tab.
  const next = tabStorage({ "standups.lateNote.R2": JSON.stringify({ meeting: "M1", text: "Other" }) });
  const { taken, gone } = takeClosedTabs(next, kept, 2000);
  assert.deepEqual(taken.sort(), ["newStandup:", `note:${room}`]);
  assert.deepEqual(gone, []);
  assert.equal(next.getItem(`standups.note.${room}`), "Half a thought");
  assert.equal(next.getItem(`standups.noteFor.${room}`), JSON.stringify({ count: 2, speaker: "Ana" }));
  assert.equal(next.getItem("standups.newStandup"), JSON.stringify({ title: "Retro", attendees: [] }));
  assert.equal(next.getItem(`standups.resume:/ws/rooms/${room}`), null);
  assert.equal(JSON.parse(next.getItem("standups.lateNote.R2")).text, "Other");
  // A third tab gets what waited, and nothing else; then nothing waits.
  const third = tabStorage();
  assert.deepEqual(takeClosedTabs(third, kept, 3000).taken, ["late:R2"]);
  assert.equal(JSON.parse(third.getItem("standups.lateNote.R2")).text, "Shipped");
  assert.equal(third.getItem(`standups.note.${room}`), null);
  assert.deepEqual(takeClosedTabs(tabStorage(), kept, 4000).taken, []);
});

test("a tab whose note was sent or erased has none of its own: it takes a closed tab's", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Note from A" }), kept, 1000);
  // Which meeting its last note was for stays in a tab after the note went.
  const other = tabStorage({ [`standups.noteFor.${room}`]: JSON.stringify({ meeting: "M1", count: 0 }),
    [`standups.note.${room}`]: " " });
  assert.deepEqual(takeClosedTabs(other, kept, 2000).taken, [`note:${room}`]);
  assert.equal(other.getItem(`standups.note.${room}`), "Note from A");
  // Which meeting the note is for is the closed tab's (none kept: not this tab's last one).
  assert.equal(other.getItem(`standups.noteFor.${room}`), null);
  // Nor is such a group kept for the next tab: it holds nothing typed.
  keepTabTyping(tabStorage({ [`standups.noteFor.${room}`]: "{}" }), kept, 3000);
  assert.deepEqual(JSON.parse(kept.getItem("standups.closedTabs")).tabs, []);
});

test("a tab reloaded or shown again finds its own typing kept and takes nothing twice", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const tab = tabStorage({ [`standups.note.${room}`]: "Half a thought" });
  keepTabTyping(tab, kept, 1000);
  assert.deepEqual(takeClosedTabs(tab, kept, 1500), { taken: [], gone: [], from: {} });
  assert.equal(tab.getItem(`standups.note.${room}`), "Half a thought");
  assert.equal(kept.getItem("standups.closedTabs"), null);
  // Put away twice: one record for the tab, the last.
  keepTabTyping(tab, kept, 2000);
  tab.setItem(`standups.note.${room}`, "Half a thought, more");
  keepTabTyping(tab, kept, 2500);
  assert.equal(JSON.parse(kept.getItem("standups.closedTabs")).tabs.length, 1);
  // A tab with nothing typed keeps nothing, and what it kept before goes.
  tab.removeItem(`standups.note.${room}`);
  keepTabTyping(tab, kept, 3000);
  assert.equal(kept.getItem("standups.closedTabs"), null);
});

test("typing another tab took while its page was away leaves that page as it comes back", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const away = tabStorage({ [`standups.note.${room}`]: "Note from A", "standups.left.R2": JSON.stringify([{ value: "x" }]) });
  keepTabTyping(away, kept, 1000);
  const other = tabStorage({ "standups.left.R2": JSON.stringify([{ value: "y" }]) });
  // Taken from a page put away, not from a tab closed: said as coming from another tab.
  assert.deepEqual(takeClosedTabs(other, kept, 2000),
    { taken: [`note:${room}`], gone: [], from: { [`note:${room}`]: "away" } });
  // Back (the page it went to, then Back): the note is in the other tab now, and said to be.
  const { taken, gone } = takeClosedTabs(away, kept, 3000);
  assert.deepEqual(taken, []);
  assert.deepEqual(gone, [{ id: `note:${room}`, entries: { [`standups.note.${room}`]: "Note from A" } }]);
  assert.equal(away.getItem(`standups.note.${room}`), null);
  // What no tab took stays with it; the browser keeps nothing of it.
  assert.equal(away.getItem("standups.left.R2"), JSON.stringify([{ value: "x" }]));
  assert.equal(kept.getItem("standups.closedTabs"), null);
  // Typed again since it came back: its own, whatever another took before.
  keepTabTyping(away, kept, 4000);
  takeClosedTabs(other, kept, 5000);
  away.setItem("standups.left.R2", JSON.stringify([{ value: "x, more" }]));
  assert.deepEqual(takeClosedTabs(away, kept, 6000).gone, []);
});

test("a screen takes what is for it: its room's typing, or the lobby's new standup", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "For the room", "standups.newStandup": JSON.stringify({ title: "Retro" }) }), kept, 1000);
  const lobby = tabStorage();
  assert.deepEqual(takeClosedTabs(lobby, kept, 2000, (id) => id === "newStandup:").taken, ["newStandup:"]);
  assert.equal(lobby.getItem(`standups.note.${room}`), null);
  const inRoom = tabStorage();
  assert.deepEqual(takeClosedTabs(inRoom, kept, 3000, (id) => id.endsWith(`:${room}`)).taken, [`note:${room}`]);
  assert.equal(inRoom.getItem(`standups.note.${room}`), "For the room");
  assert.equal(kept.getItem("standups.closedTabs") && JSON.parse(kept.getItem("standups.closedTabs")).tabs.length, 0);
});

test("a tab's copy (Duplicate) keeps its own record: the original's is not lost with it", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const original = tabStorage({ "standups.tab": "t1", [`standups.note.${room}`]: "A1" });
  const copy = tabStorage({ "standups.tab": "t1", [`standups.note.${room}`]: "A2" });
  keepTabTyping(original, kept, 1000, "load-1");
  // The copy reloads: its own record is taken back, the original's waits (it holds another).
  keepTabTyping(copy, kept, 2000, "load-2");
  assert.deepEqual(takeClosedTabs(copy, kept, 2500).taken, []);
  const next = tabStorage();
  assert.deepEqual(takeClosedTabs(next, kept, 3000).taken, [`note:${room}`]);
  assert.equal(next.getItem(`standups.note.${room}`), "A1");
});

test("a tab away while the browser was signed out lets its typing go as it comes back", async () => {
  const { signOutDone } = await import("../../public/js/comeback.mjs");
  const { forgetIfAnotherSince } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const away = tabStorage({ [`standups.note.${room}`]: "Ana private", "standups.newStandup": "{}" });
  assert.equal(forgetIfAnotherSince(away, kept), null);
  assert.equal(away.getItem(`standups.note.${room}`), "Ana private");
  forgetKept(kept);
  // NB: the server has not answered yet: a tab changing screen meanwhile keeps its typing.
  assert.equal(forgetIfAnotherSince(away, kept), null);
  assert.equal(away.getItem(`standups.note.${room}`), "Ana private");
  signOutDone(kept);
  signedIn("Ana", kept);
  assert.equal(forgetIfAnotherSince(away, kept), "signedOut");
  assert.equal(away.getItem(`standups.note.${room}`), null);
  assert.equal(away.getItem("standups.newStandup"), null);
  assert.equal(forgetIfAnotherSince(away, kept), null);
  // A sign-out that failed marked nothing.
  forgetKept(kept);
  signOutFailed(kept);
  away.setItem(`standups.note.${room}`, "Kept");
  assert.equal(forgetIfAnotherSince(away, kept), null);
  assert.equal(away.getItem(`standups.note.${room}`), "Kept");
});

test("a closed tab's typing is kept for a day, and not at all after a sign-out, which names it", async () => {
  const { keepTabTyping, takeClosedTabs, typedInClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const day = 24 * 60 * 60 * 1000;
  const kept = storage();
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Yesterday's" }), kept, 1000);
  const late = tabStorage();
  assert.deepEqual(takeClosedTabs(late, kept, 1000 + day).taken, []);
  assert.equal(late.getItem(`standups.note.${room}`), null);
  // Named by a sign-out, then gone; a tab closed after it keeps nothing for the next person.
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Mine", "standups.newStandup": JSON.stringify({ title: "Retro" }) }),
    kept, 2000, "load-1", { closed: true });
  assert.deepEqual(typedInClosedTabs(kept, 2500),
    ["“Mine” (your note, in a tab you closed)", "“Retro” (a new standup not added yet, in a tab you closed)"]);
  // A page put away (its tab went on to another page) is in a tab still open.
  keepTabTyping(tabStorage({ "standups.left.R2": JSON.stringify([{ name: "Title", value: "Later" }]) }), kept, 2200, "load-2");
  assert.deepEqual(typedInClosedTabs(kept, 2500).at(-1), "“Later” (Title, in another tab)");
  forgetKept(kept);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Mine again" }), kept, 3000);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  // Signed in again: kept as before.
  signedIn("Ana", kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "After" }), kept, 4000);
  const next = tabStorage();
  assert.deepEqual(takeClosedTabs(next, kept, 5000).taken, [`note:${room}`]);
  assert.equal(next.getItem(`standups.note.${room}`), "After");
});

test("a closed tab's typing is for whoever typed it: another person signing in here gets none", async () => {
  const { keepTabTyping, takeClosedTabs, typedInClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Ana's" }), kept, Date.now(), "load-1", { closed: true });
  // Her session ended with no sign-out; Ben opens the invite link here.
  signedIn("Ben", kept);
  assert.deepEqual(takeClosedTabs(tabStorage(), kept).taken, []);
  // NB: nor does his sign-out name it to him.
  assert.deepEqual(typedInClosedTabs(kept), []);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Ben's" }), kept, Date.now());
  // Ana signing in again gets hers, and Ben's waits for him.
  signedIn("Ana", kept);
  assert.deepEqual(typedInClosedTabs(kept), ["“Ana's” (your note, in a tab you closed)"]);
  const next = tabStorage();
  assert.deepEqual(takeClosedTabs(next, kept).taken, [`note:${room}`]);
  assert.equal(next.getItem(`standups.note.${room}`), "Ana's");
  assert.deepEqual(takeClosedTabs(tabStorage(), kept).taken, []);
  signedIn("Ben", kept);
  const his = tabStorage();
  assert.deepEqual(takeClosedTabs(his, kept).taken, [`note:${room}`]);
  assert.equal(his.getItem(`standups.note.${room}`), "Ben's");
});

test("a tab whose person's session ended keeps its typing for them when another person signs in here", async () => {
  const { forgetIfAnotherSince, takeClosedTabs, typedInClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  const anas = tabStorage({ "standups.tab": "anas", [`standups.note.${room}`]: "Ana private", "standups.newStandup": JSON.stringify({ title: "Retro" }) });
  assert.equal(forgetIfAnotherSince(anas, kept), null);
  // Her session ends with no sign-out (the invite rotated): the tab shows the sign-in page, and
  // Ben signs in at this browser. The tab goes back to its room, now his.
  signedIn("Ben", kept);
  assert.equal(forgetIfAnotherSince(anas, kept), "someoneElse");
  assert.equal(anas.getItem(`standups.note.${room}`), null);
  assert.equal(anas.getItem("standups.newStandup"), null);
  assert.equal(forgetIfAnotherSince(anas, kept), null);
  // Ben's tabs get none of it, this one neither.
  assert.deepEqual(takeClosedTabs(anas, kept).taken, []);
  assert.deepEqual(takeClosedTabs(tabStorage(), kept).taken, []);
  assert.deepEqual(typedInClosedTabs(kept), []);
  // Ana signs in again: hers comes back to the tab that opens the room, and the lobby's to the
  // lobby; a sign-out first would name it as hers from before.
  signedIn("Ana", kept);
  assert.deepEqual(typedInClosedTabs(kept), ["“Ana private” (your note, before you signed in again)",
    "“Retro” (a new standup not added yet, before you signed in again)"]);
  const back = tabStorage();
  assert.deepEqual(takeClosedTabs(back, kept, Date.now(), (id) => id === `note:${room}`),
    { taken: [`note:${room}`], gone: [], from: { [`note:${room}`]: "signedInOver" } });
  assert.equal(back.getItem(`standups.note.${room}`), "Ana private");
  assert.deepEqual(takeClosedTabs(back, kept, Date.now(), (id) => id === "newStandup:").taken, ["newStandup:"]);
});

test("a rename, or the same person signing in again, keeps the tab's typing", async () => {
  const { forgetIfAnotherSince } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  const tab = tabStorage({ [`standups.note.${room}`]: "Mine" });
  forgetIfAnotherSince(tab, kept);
  kept.setItem("standups.name", "Ana B.");
  assert.equal(forgetIfAnotherSince(tab, kept), null);
  signedIn("Ana B.", kept);
  assert.equal(forgetIfAnotherSince(tab, kept), null);
  assert.equal(tab.getItem(`standups.note.${room}`), "Mine");
  // Another name signing in, and the tab's own again before the tab looked: its person is here.
  signedIn("Ben", kept);
  signedIn("Ana B.", kept);
  assert.equal(forgetIfAnotherSince(tab, kept), null);
  assert.equal(tab.getItem(`standups.note.${room}`), "Mine");
  signedIn("Ben", kept);
  assert.equal(forgetIfAnotherSince(tab, kept), "someoneElse");
});

test("a tab with nothing typed says nothing of who signed in since", async () => {
  const { forgetIfAnotherSince } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  const tab = tabStorage({ [`standups.noteFor.${room}`]: "{}" });
  forgetIfAnotherSince(tab, kept);
  signedIn("Ben", kept);
  assert.equal(forgetIfAnotherSince(tab, kept), null);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  tab.setItem("standups.sessionsSeen", "{not json");
  assert.equal(forgetIfAnotherSince(tab, kept), null);
});

test("a sign-out whose answer was never heard is counted at the next sign-in", async () => {
  const { forgetIfAnotherSince } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const away = tabStorage({ [`standups.note.${room}`]: "Ana private" });
  forgetIfAnotherSince(away, kept);
  // Its page closed before the server answered.
  forgetKept(kept);
  signedIn("Ana", kept);
  assert.equal(forgetIfAnotherSince(away, kept), "signedOut");
  assert.equal(away.getItem(`standups.note.${room}`), null);
  assert.equal(kept.getItem("standups.signingOut"), null);
});

test("a page shown again drops its own record, whatever its tab holds now", async () => {
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  const tab = tabStorage({ [`standups.note.${room}`]: "Half" });
  keepTabTyping(tab, kept, 1000, "load-1");
  // NB: what the page rewrites as it leaves its last screen may differ from what it kept.
  tab.setItem(`standups.note.${room}`, "Half, and more");
  assert.deepEqual(takeClosedTabs(tab, kept, 2000, () => true, "load-1").taken, []);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  assert.deepEqual(takeClosedTabs(tabStorage(), kept, 3000).taken, []);
});

test("a record not written by this app puts nothing but typing into the tab", async () => {
  const { takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  kept.setItem("standups.closedTabs", JSON.stringify({
    tabs: [
      { tab: "t1", at: 1000, groups: { [`note:${room}`]: { [`standups.note.${room}`]: "ok", "standups.invite": "x", [`standups.noteFor.${room}`]: 7 } } },
      "junk", { at: 1000 }, { at: 1000, groups: { "other:x": null } },
    ],
    taken: ["junk", { from: "t2", at: 1000, id: 5 }],
  }));
  const tab = tabStorage({ "standups.tab": "mine" });
  takeClosedTabs(tab, kept, 2000);
  assert.deepEqual({ ...tab }, { "standups.tab": "mine", [`standups.note.${room}`]: "ok" });
  for (const junk of ["{not json", "[1, 2]", "null"]) {
    kept.setItem("standups.closedTabs", junk);
    assert.deepEqual(takeClosedTabs(tabStorage(), kept, 2000), { taken: [], gone: [], from: {} });
  }
});

test("a tab closed while a sign-out is on its way keeps its typing with what the sign-out set aside", async () => {
  const { signOutDone } = await import("../../public/js/comeback.mjs");
  const { keepTabTyping, takeClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  // The sign-out fails (the server out of reach): the closed tab's note is back for Ana.
  forgetKept(kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Closed mid sign-out" }), kept, Date.now());
  assert.equal(kept.getItem("standups.closedTabs"), null);
  assert.deepEqual(takeClosedTabs(tabStorage(), kept).taken, []);
  signOutFailed(kept);
  const next = tabStorage();
  assert.deepEqual(takeClosedTabs(next, kept).taken, [`note:${room}`]);
  assert.equal(next.getItem(`standups.note.${room}`), "Closed mid sign-out");
  // The sign-out goes through: it is gone with the rest, and a tab closed after keeps nothing.
  forgetKept(kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Closed mid sign-out" }), kept, Date.now());
  signOutDone(kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Closed after" }), kept, Date.now());
  signedIn("Ana", kept);
  assert.equal(kept.getItem("standups.closedTabs"), null);
  assert.deepEqual(takeClosedTabs(tabStorage(), kept).taken, []);
});

test("a closed tab's note waiting beside a tab's own is found for its room and meeting, and taken once", async () => {
  const { keepTabTyping, takeClosedTabs, waitingNoteOfClosedTab } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  const mine = tabStorage({ "standups.tab": "mine", [`standups.note.${room}`]: "Mine" });
  assert.equal(waitingNoteOfClosedTab(room, "M1", mine, kept), null);
  const closing = (note, meeting) => tabStorage({
    "standups.tab": "closed", [`standups.note.${room}`]: note, [`standups.noteFor.${room}`]: JSON.stringify({ meeting, count: 0 }),
    [`standups.notesAhead.${room}`]: JSON.stringify([{ text: "Sent", state: "unsure" }]),
  });
  // A page put away (it may come back) is not a tab closed; one for another meeting waits for it.
  keepTabTyping(closing("Away", "M1"), kept, Date.now(), "load-0");
  keepTabTyping(closing("Old", "M0"), kept, Date.now(), "load-1", { closed: true });
  keepTabTyping(closing("Sent Theirs ", "M1"), kept, Date.now(), "load-2", { closed: true });
  // NB: the tab holds a note of its own: the closed tab's waits.
  assert.deepEqual(takeClosedTabs(mine, kept, Date.now(), (id) => id === `note:${room}`).taken, []);
  const waiting = waitingNoteOfClosedTab(room, "M1", mine, kept);
  assert.equal(waiting.text, "Sent Theirs ");
  assert.deepEqual(waiting.ahead, [{ text: "Sent", state: "unsure" }]);
  assert.equal(waitingNoteOfClosedTab("ANOTHER-ROOM", "M1", mine, kept), null);
  // Not for another person signed in here.
  signedIn("Ben", kept);
  assert.equal(waitingNoteOfClosedTab(room, "M1", mine, kept), null);
  signedIn("Ana", kept);
  // NB: once: a second tab that found it too is told it went.
  assert.equal(waiting.take(), true);
  assert.equal(waiting.take(), false);
  assert.equal(waitingNoteOfClosedTab(room, "M1", mine, kept), null);
  assert.equal(waitingNoteOfClosedTab(room, "M0", mine, kept).text, "Old");
  // The closed tab, back (Back), lets it go: it went on here.
  const back = closing("Sent Theirs ", "M1");
  assert.deepEqual(takeClosedTabs(back, kept, Date.now(), () => false, "load-3").gone.map(({ id }) => id), [`note:${room}`]);
});

test("a rename keeps what the browser kept typed under the old name: closed tabs', and for after a sign-in", async () => {
  const { renamed } = await import("../../public/js/comeback.mjs");
  const { keepTabTyping, takeClosedTabs, typedInClosedTabs } = await import("../../public/js/tabtyping.mjs");
  const kept = storage();
  signedIn("Ana", kept);
  keepTabTyping(tabStorage({ [`standups.note.${room}`]: "Before the rename" }), kept, Date.now(), "load-1", { closed: true });
  keepForSignIn(`#/rooms/${room}`, typing, kept);
  renamed("Ana", "Ana B.", kept);
  kept.setItem("standups.name", "Ana B.");
  assert.deepEqual(typedInClosedTabs(kept), ["“Before the rename” (your note, in a tab you closed)"]);
  const next = tabStorage();
  assert.deepEqual(takeClosedTabs(next, kept), { taken: [`note:${room}`], gone: [], from: { [`note:${room}`]: "closed" } });
  assert.equal(next.getItem(`standups.note.${room}`), "Before the rename");
  assert.deepEqual(takeTyping(room, "Ana B.", kept), { ...typing, by: "Ana B." });
});
