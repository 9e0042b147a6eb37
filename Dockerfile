# Build with the Swift toolchain, run on a slim Debian with only the runtime libraries.
# The apt packages match the Makefile's `deps`.

FROM swift:6.3-bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libwebsockets-dev libwebsockets-evlib-uv libssl-dev libcap-dev libuv1-dev libsqlite3-dev \
      pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Manifest first: dependency resolution is cached until Package.swift changes.
COPY Package.swift ./
RUN swift package resolve
COPY Sources Sources
COPY Tests Tests
# NB: the manifest names the example bot's folder: the package does not load without it.
COPY examples examples
RUN swift build -c release --product standups-server --static-swift-stdlib \
 && cp "$(swift build -c release --show-bin-path)/standups-server" /usr/local/bin/

FROM debian:bookworm-slim
# libwebsockets17 brings OpenSSL 3, libcap and zlib; the evlib-uv plugin is the epoll loop.
# libsqlite3-0 is GRDB's SQLite; libcurl4 is what Foundation's networking part (linked in
# with the static Swift standard library) loads: `ldd standups-server` lists both. openssl
# is the health check's client when the server serves TLS itself.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libwebsockets17 libwebsockets-evlib-uv libuv1 libsqlite3-0 libcurl4 libstdc++6 \
      ca-certificates openssl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /srv standups \
 && mkdir -p /srv/data && chown standups /srv/data
COPY --from=build /usr/local/bin/standups-server /usr/local/bin/standups-server
COPY deploy/healthcheck /usr/local/bin/standups-healthcheck
COPY public /srv/public
USER standups
WORKDIR /srv
ENV STANDUPS_HOST=0.0.0.0 \
    STANDUPS_PORT=8080 \
    STANDUPS_DATA_DIR=/srv/data \
    STANDUPS_PUBLIC_DIR=/srv/public
# The invite link is not printed at start here (no terminal: `docker logs` would keep it):
# `docker exec <container> standups-server invite` prints it. Set STANDUPS_PUBLIC_URL to the
# address people open (https://standups.example) so that the link is one they can use.
# `docker exec <container> standups-server backup /srv/data/backup.sqlite` takes a backup
# while it runs (docs/DEPLOY.md, "Backups").
# A cluster node (docs/DEPLOY.md): STANDUPS_DATABASE_URL=postgres://USER@HOST:PORT/DB,
# STANDUPS_TRUSTED_PROXIES=<HAProxy's address>, and STANDUPS_LOG_FORMAT=json for a log
# collector. `docker stop` sends SIGTERM: the node drains (its people move to other nodes)
# and exits in about 2-4 s, or up to 10 s later while a deletion waits for its undo window:
# `docker stop -t 20` (Compose: stop_grace_period: 20s).
EXPOSE 8080
VOLUME ["/srv/data"]
# Healthy is a 200 on /healthz's status line, over TLS when STANDUPS_TLS_CERT is set
# (deploy/healthcheck; the integration tests run it against a real server, both ways).
HEALTHCHECK CMD ["standups-healthcheck"]
CMD ["standups-server"]
