// The C edge of Standups: libwebsockets as Swift can call it.
//
// Everything here is `static inline` (a system-library module compiles no .c files) and
// prefixed `clws_`. Only what Swift cannot import by itself lives here: function-like
// macros, combined option bits, and the handful of calls whose C types are awkward.
//
// NB: SwiftPM does not recompile the Swift targets that import this module when only this
// header changes: touch a file of `WebSocketTransport` after editing it, or the old code runs.
#ifndef CLWS_SHIM_H
#define CLWS_SHIM_H

#include <libwebsockets.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

/// Headroom lws needs in front of every payload passed to `lws_write` (`LWS_PRE`).
enum { CLWS_PRE = LWS_PRE };

static const uint64_t CLWS_OPTION_LIBUV = LWS_SERVER_OPTION_LIBUV;
static const uint64_t CLWS_OPTION_VALIDATE_UTF8 = LWS_SERVER_OPTION_VALIDATE_UTF8;
static const uint64_t CLWS_OPTION_SSL_GLOBAL_INIT = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
static const uint64_t CLWS_OPTION_DISABLE_IPV6 = LWS_SERVER_OPTION_DISABLE_IPV6;
static const uint64_t CLWS_OPTION_EXPLICIT_VHOSTS = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;

/// Writes one complete text frame; `payload` must have `CLWS_PRE` bytes of headroom.
static inline int clws_write_text(struct lws *wsi, unsigned char *payload, size_t length) {
  return lws_write(wsi, payload, length, LWS_WRITE_TEXT);
}

/// Writes one complete binary frame (clients and tests only: the protocol is text).
static inline int clws_write_binary(struct lws *wsi, unsigned char *payload, size_t length) {
  return lws_write(wsi, payload, length, LWS_WRITE_BINARY);
}

/// The reason phrase of a status this server sends, or NULL.
static inline const char *clws_reason_phrase(unsigned int status) {
  switch (status) {
  case 200: return "OK";
  case 304: return "Not Modified";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 409: return "Conflict";
  case 411: return "Length Required";
  case 413: return "Content Too Large";
  case 426: return "Upgrade Required";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  default: return NULL;
  }
}

/// lws 4.1.6 knows the reason phrases of 400–417 and 500–505 only, and leaves the others'
/// empty ("HTTP/1.1 429 "): this writes ours into the status line at `start` when it did.
static inline void clws_complete_status_line(unsigned int status, unsigned char *start,
                                             unsigned char **p, unsigned char *end) {
  const char *reason = clws_reason_phrase(status);
  if (!reason || *p - start < 13 || memcmp(start, "HTTP/1.", 7) != 0) return;
  unsigned char *line_end = (unsigned char *)memchr(start, '\r', (size_t)(*p - start));
  size_t length = strlen(reason);
  if (!line_end || line_end[-1] != ' ' || *p + length >= end) return;
  memmove(line_end + length, line_end, (size_t)(*p - line_end));
  memcpy(line_end, reason, length);
  *p += length;
}

/// Sends an HTTP response with a status, a content type, a cache policy, extra headers and a
/// body, in one go. With `head_only` (an answer to HEAD, a 304) it sends the headers only,
/// announcing `body_length`, and `body` is not read. `headers` packs `headers_length` bytes
/// of "name:\0value\0" pairs (lws wants the colon). Returns non-zero if the connection should
/// be closed; the caller then completes the transaction (`lws_http_transaction_completed`) or
/// closes.
///
/// NB: `own_status_line` writes "HTTP/1.1 <status>" itself: before an upgrade is confirmed,
/// lws has not read the request's version yet and would answer "HTTP/1.0", which strict
/// WebSocket clients refuse to read.
static inline int clws_respond(struct lws *wsi, unsigned int status, const char *content_type,
                               const char *cache_control, const char *headers,
                               size_t headers_length, int own_status_line, int head_only,
                               const unsigned char *body, size_t body_length) {
  size_t cap = LWS_PRE + 1024 + headers_length * 2 + (head_only ? 0 : body_length);
  unsigned char *buffer = (unsigned char *)malloc(cap);
  if (!buffer) return -1;
  unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + cap - 1;
  int failed;
  if (own_status_line) {
    const char *reason = clws_reason_phrase(status);
    int n = snprintf((char *)p, (size_t)(end - p), "HTTP/1.1 %u %s\r\n", status,
                     reason ? reason : "Error");
    p += n;
    failed = lws_add_http_header_by_name(wsi, (const unsigned char *)"content-type:",
                                         (const unsigned char *)content_type,
                                         (int)strlen(content_type), &p, end) ||
             lws_add_http_header_content_length(wsi, (lws_filepos_t)body_length, &p, end) ||
             lws_add_http_header_by_name(wsi, (const unsigned char *)"connection:",
                                         (const unsigned char *)"close", 5, &p, end);
  } else {
    failed = lws_add_http_common_headers(wsi, status, content_type, (lws_filepos_t)body_length,
                                         &p, end);
    if (!failed) clws_complete_status_line(status, start, &p, end);
  }
  failed = failed || lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                                 (const unsigned char *)cache_control,
                                                 (int)strlen(cache_control), &p, end);
  for (size_t at = 0; !failed && at < headers_length;) {
    const char *name = headers + at;
    const char *value = name + strlen(name) + 1;
    failed = lws_add_http_header_by_name(wsi, (const unsigned char *)name,
                                         (const unsigned char *)value, (int)strlen(value), &p, end);
    at = (size_t)(value + strlen(value) + 1 - headers);
  }
  failed = failed || lws_finalize_write_http_header(wsi, start, &p, end);
  if (!failed && body_length > 0 && !head_only) {
    memcpy(p, body, body_length);
    failed = lws_write(wsi, p, body_length, LWS_WRITE_HTTP_FINAL) < 0;
  }
  free(buffer);
  // NB: the caller completes the transaction (once: completing twice wedged pipelining).
  return failed ? -1 : 0;
}

/// Closes a WebSocket with a status code and reason; the callback must then return -1.
static inline void clws_close_reason(struct lws *wsi, int code, const char *reason) {
  lws_close_reason(wsi, (enum lws_close_status)code, (unsigned char *)reason, strlen(reason));
}

/// Writes a close frame (status code and reason) from a writeable callback. (`lws_close_reason`
/// plus returning -1 from a writeable callback sends nothing on this build.)
static inline int clws_write_close(struct lws *wsi, int code, const char *reason) {
  size_t reason_length = strlen(reason);
  if (reason_length > 123) reason_length = 123;
  unsigned char buffer[LWS_PRE + 125];
  unsigned char *payload = buffer + LWS_PRE;
  payload[0] = (unsigned char)(code >> 8);
  payload[1] = (unsigned char)(code & 0xff);
  memcpy(payload + 2, reason, reason_length);
  // NB: 4 is lws's private LWS_WRITE_CLOSE (lws-write.h hides it behind lws_close_reason).
  return lws_write(wsi, payload, 2 + reason_length, (enum lws_write_protocol)4);
}

/* Names the calling thread, for top -H and perf (pthread_setname_np needs _GNU_SOURCE). */
static inline void clws_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/// Raises the soft open-files limit to the hard limit; returns the soft limit in effect (-1:
/// none, or unknown).
static inline long clws_raise_nofile_limit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  rlim_t soft = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  /* Not raised (a hard limit with no end, which macOS refuses): the soft one stays. */
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = soft;
  return limit.rlim_cur == RLIM_INFINITY ? -1 : (long)limit.rlim_cur;
}

/// The ws:// or wss:// client handshake's HTTP status, or 0 if none was received.
static inline int clws_client_http_status(struct lws *wsi) {
  return (int)lws_http_client_http_response(wsi);
}

/// A libuv loop owned by Standups and lent to lws (`foreign_loops`), so that the service
/// thread can stop it (`uv_stop`) and lws installs no signal handlers of its own.
static inline void *clws_loop_create(void) {
  uv_loop_t *loop = (uv_loop_t *)malloc(sizeof(uv_loop_t));
  if (loop && uv_loop_init(loop) != 0) { free(loop); return NULL; }
  return loop;
}

/// Runs the loop until `clws_loop_stop` (or until nothing is left to watch).
static inline void clws_loop_run(void *loop) { uv_run((uv_loop_t *)loop, UV_RUN_DEFAULT); }

static inline void clws_loop_stop(void *loop) { uv_stop((uv_loop_t *)loop); }

/// After `lws_context_destroy`: lets lws's handles finish closing, then frees the loop.
static inline void clws_loop_destroy(void *loop) {
  for (int i = 0; i < 1000; i++) {
    uv_run((uv_loop_t *)loop, UV_RUN_NOWAIT);
    if (uv_loop_close((uv_loop_t *)loop) == 0) { free(loop); return; }
  }
  // NB: a handle that never closes: leak the loop rather than free memory still in use.
}

/// A repeating libuv timer on a loop of ours, calling `fn(data)` on the loop's thread.
typedef void (*clws_tick_fn)(void *data);
struct clws_ticker {
  uv_timer_t timer;
  clws_tick_fn fn;
  void *data;
};

static inline void clws_ticker_fire(uv_timer_t *timer) {
  struct clws_ticker *ticker = (struct clws_ticker *)timer->data;
  ticker->fn(ticker->data);
}

/// Starts a timer every `ms` milliseconds; returns it, or NULL.
static inline void *clws_ticker_start(void *loop, uint64_t ms, clws_tick_fn fn, void *data) {
  struct clws_ticker *ticker = (struct clws_ticker *)malloc(sizeof(struct clws_ticker));
  if (!ticker) return NULL;
  if (uv_timer_init((uv_loop_t *)loop, &ticker->timer) != 0) { free(ticker); return NULL; }
  ticker->timer.data = ticker;
  ticker->fn = fn;
  ticker->data = data;
  uv_timer_start(&ticker->timer, clws_ticker_fire, ms, ms);
  return ticker;
}

static inline void clws_ticker_free(uv_handle_t *handle) { free(handle->data); }

/// Stops the timer; its memory goes once the loop has closed the handle.
static inline void clws_ticker_stop(void *ticker) {
  struct clws_ticker *t = (struct clws_ticker *)ticker;
  uv_timer_stop(&t->timer);
  uv_close((uv_handle_t *)&t->timer, clws_ticker_free);
}

/// Every ping's payload, and its length.
///
/// NB: never an empty payload: this lws drops an empty pong before the protocol's callback
/// sees it (`ops-ws.c`: `opcode == LWSWSOPC_PONG && !eb_in.len`), so the answer to an empty
/// ping would go unnoticed.
#define CLWS_PING_PAYLOAD "ping"
enum { CLWS_PING_LENGTH = 4 };

/// Writes a ping, outside a writeable callback; <0 on failure.
static inline int clws_write_ping(struct lws *wsi) {
  unsigned char buffer[LWS_PRE + CLWS_PING_LENGTH];
  memcpy(buffer + LWS_PRE, CLWS_PING_PAYLOAD, CLWS_PING_LENGTH);
  return lws_write(wsi, buffer + LWS_PRE, CLWS_PING_LENGTH, LWS_WRITE_PING);
}

/// The longest payload `clws_write_with_ping` carries a ping behind.
enum { CLWS_WITH_PING_MAX = 1024 };

/// Writes one complete server frame (text, or binary) with a ping right behind it, in one
/// write: one send, one TCP segment, one wake-up of the peer, where a ping of its own costs
/// all of that again. Returns the bytes written, <0 on failure, or 0 without writing anything
/// when it cannot: a payload over `CLWS_WITH_PING_MAX`, or a WebSocket carried inside an
/// HTTP/2 connection (whose frames lws wraps in its own).
///
/// NB: the frames are built here and written raw (`LWS_WRITE_RAW` on a WebSocket goes to
/// `lws_issue_raw` as they are: `ops-ws.c`, `send_raw`), as lws would frame them: no
/// extension is ever negotiated on this server and a server's frames are not masked.
static inline int clws_write_with_ping(struct lws *wsi, const unsigned char *payload, size_t length,
                                       int binary) {
  unsigned char frame[4 + CLWS_WITH_PING_MAX + 2 + CLWS_PING_LENGTH];
  size_t n = 0;
  if (length > CLWS_WITH_PING_MAX || lws_get_network_wsi(wsi) != wsi) return 0;
  frame[n++] = 0x80 | (binary ? 0x2 : 0x1);
  if (length < 126) {
    frame[n++] = (unsigned char)length;
  } else {
    frame[n++] = 126;
    frame[n++] = (unsigned char)(length >> 8);
    frame[n++] = (unsigned char)(length & 0xff);
  }
  memcpy(frame + n, payload, length);
  n += length;
  frame[n++] = 0x89;
  frame[n++] = CLWS_PING_LENGTH;
  memcpy(frame + n, CLWS_PING_PAYLOAD, CLWS_PING_LENGTH);
  n += CLWS_PING_LENGTH;
  return lws_write(wsi, frame, n, LWS_WRITE_RAW) < (int)n ? -1 : (int)n;
}

/// Drops a connection at the next chance, without a close frame (it stopped answering).
static inline void clws_drop(struct lws *wsi) { lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC); }

#endif
