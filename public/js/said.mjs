// What a screen reader is told, apart from what the page shows: the notices' sentences without
// their buttons' names, said where it can hear them.
const pageSaid = document.getElementById("said");

/** Tells a screen reader `text`, once: in the page's live region, or — while a modal dialog is
 * open, which hides everything outside it from a screen reader — in one of the dialog's own.
 * Each sentence is added (those said just before are not cut short) and goes after 10 s. */
export function say(text) {
  whereItIsHeard((dialog) => sayIn(dialog ? regionOf(dialog) : pageSaid, text));
}

/** `text` said in the open modal dialog, if one is open: a live region outside it (a
 * connection's status, a new speaker) is not heard then. */
export function sayInDialog(text) {
  whereItIsHeard((dialog) => dialog && sayIn(regionOf(dialog), text));
}

/** Calls `then` with the modal dialog open once the page has drawn the change at hand (one
 * that closes the dialog the moment it says something: the question answered), or null. */
function whereItIsHeard(then) {
  setTimeout(() => then(document.querySelector("dialog:modal")));
}

function sayIn(region, text) {
  const line = document.createElement("p");
  const add = () => {
    line.textContent = text;
    region.append(line);
    setTimeout(() => line.remove(), 10_000);
  };
  // NB: a region just made is not listened to yet: what it is given at once may go unheard.
  if (region.isConnected && "ready" in region.dataset) add();
  else setTimeout(add, 100);
}

function regionOf(dialog) {
  let region = dialog.querySelector(":scope > .said");
  if (!region) {
    region = document.createElement("div");
    region.className = "said visually-hidden";
    region.setAttribute("role", "status");
    dialog.append(region);
    setTimeout(() => { region.dataset.ready = ""; }, 100);
  }
  return region;
}

pageSaid.dataset.ready = "";
