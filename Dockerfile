# jevjudge: the review service (and the whole CLI) in a container.
#
#   docker build -t jevjudge .
#   docker run --rm -p 8080:8080 -v "$PWD/examples/refund:/definitions:ro" \
#       -e TYPESAFE_API_KEY -e JEVJUDGE_STORE=sqlite:/data/reviews.db -v jevjudge-data:/data \
#       jevjudge serve --definitions /definitions --addr 0.0.0.0:8080
#
# Two stages: the first builds the release binary from Cargo.toml, Cargo.lock and crates/ only
# (.dockerignore sends nothing else), the second runs it as an unprivileged user (uid 10001) on
# a slim Debian with CA certificates (for System One and TLS to PostgreSQL). SQLite is bundled
# in the binary; no database client library is needed. The test command has no container
# engine to build the image with; scripts/deploy-check.sh lints this file with hadolint and
# builds the binary from exactly the files copied here.
# The apt package is pinned to Debian bookworm's version: when bookworm updates it, the build
# fails until the pin is moved to the new version (`apt-cache policy ca-certificates`).

FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
RUN cargo build --release --locked -p jevjudge \
    && cp target/release/jevjudge /jevjudge

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates=20230311+deb12u1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --create-home jevjudge
COPY --from=build /jevjudge /usr/local/bin/jevjudge
USER 10001
WORKDIR /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/jevjudge"]
CMD ["serve", "--definitions", "/definitions", "--addr", "0.0.0.0:8080", "--log-format", "json"]
