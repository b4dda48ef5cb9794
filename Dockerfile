# syntax=docker/dockerfile:1
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static, pure-Go binary (SQLite is modernc.org/sqlite: no cgo).
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/ssobridge . \
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
