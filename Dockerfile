# syntax=docker/dockerfile:1
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Which build this is: .dockerignore keeps .git out, so the version, commit
# and build time come as build arguments (docs/deploy.md, "Versions"):
#   docker build --build-arg VERSION=1.0.0 --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg BUILT=$(date -u +%Y-%m-%dT%H:%M:%SZ) .
ARG VERSION=""
ARG COMMIT=""
ARG BUILT=""
# Static, pure-Go binary (SQLite is modernc.org/sqlite: no cgo).
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w \
      -X github.com/ssobridge/ssobridge/internal/version.version=${VERSION} \
      -X github.com/ssobridge/ssobridge/internal/version.commit=${COMMIT} \
      -X github.com/ssobridge/ssobridge/internal/version.built=${BUILT}" \
      -o /out/ssobridge . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ssobridge /ssobridge
COPY --from=build --chown=nonroot:nonroot /out/data /data
USER nonroot:nonroot
ENV SSOBRIDGE_SERVER_ADDR=:8080 \
    SSOBRIDGE_STORE_DSN=/data/ssobridge.db \
    SSOBRIDGE_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["/ssobridge"]
CMD ["serve"]
