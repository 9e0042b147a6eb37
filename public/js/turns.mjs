// A person's own signals in a meeting: a chime on each new speaker (on unless muted,
// remembered) and, if asked for, a browser notification when it is their turn.
import { NAME_KEY } from "./session.mjs";
import { app, toast } from "./shell.mjs";

const chimeKey = "standups.chime";
const notifyKey = "standups.notify";
let audio = null;

function chimeOn() {
  return localStorage.getItem(chimeKey) !== "off";
}

/** A short two-note chime (Web Audio: no file to load). */
function chime() {
  window.standupsChimes = (window.standupsChimes ?? 0) + 1; // for the browser tests
  try {
    audio ??= new AudioContext();
    // NB: made before any click, a context starts suspended; a click since lets it resume.
    if (audio.state === "suspended") audio.resume();
    const now = audio.currentTime;
    for (const [offset, frequency] of [[0, 880], [0.18, 660]]) {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = frequency;
      gain.gain.setValueAtTime(0.2, now + offset);
      gain.gain.exponentialRampToValueAtTime(0.001, now + offset + 0.35);
      tone.connect(gain).connect(audio.destination);
      tone.start(now + offset);
      tone.stop(now + offset + 0.35);
    }
  } catch {
    // No audio here (or not allowed yet): the speaker line still changes.
  }
}

/** The name this browser is in the room under. */
export function myName() {
  return localStorage.getItem(NAME_KEY) ?? "";
}

/** Whether an attendee's name is this person's (as typed in either: "ana" is "Ana"). */
export function isMe(name) {
  const me = myName();
  return Boolean(me && name) && name.trim().toLowerCase() === me.trim().toLowerCase();
}

export function showToggles() {
  const chimeButton = app.querySelector(".chime-toggle");
  chimeButton.setAttribute("aria-pressed", String(chimeOn()));
  chimeButton.textContent = chimeOn() ? "Chime: on" : "Chime: off";
  const notifyButton = app.querySelector(".notify-toggle");
  const wanted = localStorage.getItem(notifyKey) === "on" && globalThis.Notification?.permission === "granted";
  notifyButton.setAttribute("aria-pressed", String(wanted));
  notifyButton.textContent = wanted ? "Notify me when I'm up: on" : "Notify me when I'm up";
}

/** The toggles' buttons: `on(selector, event, handler)` wires one of the meeting's. */
export function wireToggles(on) {
  on(".chime-toggle", "click", () => {
    localStorage.setItem(chimeKey, chimeOn() ? "off" : "on");
    showToggles();
  });
  // Any click in the meeting lets the chime play later (browsers want a gesture first).
  on(".meeting", "click", () => {
    try {
      audio ??= new AudioContext();
      if (audio.state === "suspended") audio.resume();
    } catch {
      // No audio here.
    }
  });
  on(".notify-toggle", "click", async () => {
    if (localStorage.getItem(notifyKey) === "on") {
      localStorage.setItem(notifyKey, "off");
    } else if ((await Notification.requestPermission()) === "granted") {
      localStorage.setItem(notifyKey, "on");
    } else {
      // NB: a browser asks once; refused (or blocked for the site), only its settings can
      // allow it again.
      toast("Notifications are blocked for this site: allow them in your browser's site settings, then try again.");
    }
    showToggles();
  });
}

/** The speaker changed to `speaker` (a name): the chime, and the notification if it is this
 * person's turn. */
export function speakerChanged(speaker, title) {
  if (chimeOn()) chime();
  if (isMe(speaker) && localStorage.getItem(notifyKey) === "on"
      && globalThis.Notification?.permission === "granted") {
    try {
      new Notification("You're up", { body: title });
    } catch {
      // Some browsers (Android) allow notifications from service workers only.
    }
  }
}
