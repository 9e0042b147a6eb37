#!/usr/bin/env bash
# Posts a note to the meeting running in a standup's room, over the bot HTTP API.
#
#   STANDUPS_TOKEN=ci-secret ./examples/post-note.sh <standup-id> "build 1234 is green"
#
# The token comes from `standups-server bots add CI --can notes` (or --bot-token CI=ci-secret).
set -euo pipefail
url="${STANDUPS_URL:-http://127.0.0.1:8080}"
token="${STANDUPS_TOKEN:?set STANDUPS_TOKEN to a bot token (standups-server bots add NAME --can notes)}"
room="${1:?usage: post-note.sh <standup-id> <text>}"
text="${2:?usage: post-note.sh <standup-id> <text>}"
# JSON-escape the note: backslashes and quotes, and the tabs and line breaks a pasted text may
# carry (the server then says a note is one line of plain text, rather than that the JSON is bad).
escaped=${text//\\/\\\\}
escaped=${escaped//\"/\\\"}
escaped=${escaped//$'\t'/\\t}
escaped=${escaped//$'\n'/\\n}
escaped=${escaped//$'\r'/\\r}
# …and every other control character (an ANSI colour copied from a CI log) as \u00XX.
# (printf -v: no subshell for each of the 31.)
for code in {1..31}; do
  printf -v hex %02x "$code"
  printf -v char "\\x$hex"
  [[ $escaped == *"$char"* ]] || continue
  printf -v unicode '\\u%04x' "$code"
  escaped=${escaped//"$char"/$unicode}
done
# The note's id, new for this note: sent again, it is added once (docs/BOTS.md).
id=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
body="{\"type\":\"meeting.noteSubmitted\",\"text\":\"$escaped\",\"id\":\"$id\"}"
# Sent again, up to 4 times, a second apart, when nothing happened — a room between two
# servers of a cluster, restarting, or of a standup made a moment ago answers 503 room_moving
# — or when it cannot be known, which the id makes safe: outcome_unknown (a cluster node lost
# its database as it saved), or a server that could not be reached (restarting). Any other
# answer is final.
for attempt in 1 2 3 4 5; do
  status=0
  # The token goes to curl on its standard input (printf is the shell's own): on curl's
  # command line, anyone on the machine could read it in `ps`.
  answer=$(printf 'Authorization: Bearer %s\n' "$token" | curl --silent --show-error \
    --fail-with-body -H @- -H "Content-Type: application/json" \
    --data "$body" "$url/api/rooms/$room/actions") || status=$?
  [[ $attempt -lt 5 ]] || break
  if [[ $status -ne 0 && $answer == *'"code":"room_moving"'* ]]; then
    echo "The room is moving between servers: trying again in 1 s ($attempt of 4)." >&2
  elif [[ $status -ne 0 && $answer == *'"code":"outcome_unknown"'* ]]; then
    echo "The server could not tell whether the note was saved: sending it again in 1 s ($attempt of 4)." >&2
  elif [[ $status -eq 7 ]]; then
    echo "The server could not be reached: trying again in 1 s ($attempt of 4)." >&2
  else
    break
  fi
  sleep 1
done
printf '%s\n' "$answer"
if [[ $status -ne 0 && ${answer,,} == *'no meeting is running'* ]]; then
  echo "No meeting is running in that standup. A note for a meeting that ended at most 10 minutes ago" \
    "goes as history.noteSubmitted with that meeting's id (docs/PROTOCOL.md)." >&2
fi
exit "$status"
