#!/bin/sh
# Makes portal tokens outside Go, with openssl alone, as a portal written in
# another language would: HS256, RS256 and EdDSA, with fixed times (iat
# 1795000000, exp two minutes later) so tests verify them on a fixed clock.
# The keys here are test keys, made by this script; never use them.
# Run from anywhere: sh portal/testdata/make-tokens.sh
set -eu
cd "$(dirname "$0")"
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
iat=1795000000
exp=$((iat + 120))
payload() {
  printf '{"iss":"https://portal.example","aud":"https://sso.example","iat":%d,"exp":%d,"jti":"%s","email":"ada@example.com","given_name":"Ada","family_name":"Lovelace","return_to":"/editor/projects/42"}' \
    "$iat" "$exp" "$1" | b64url
}
header() { printf '{"alg":"%s","typ":"JWT"}' "$1" | b64url; }

# HS256: the shared secret's bytes as written.
secret='test-only-shared-secret-of-more-than-32-bytes'
printf '%s' "$secret" > hs256.secret
in="$(header HS256).$(payload openssl-hs256)"
printf '%s.%s\n' "$in" "$(printf '%s' "$in" | openssl dgst -sha256 -hmac "$secret" -binary | b64url)" > hs256.jwt

# RS256: PKCS#1 v1.5 over SHA-256.
[ -f rs256.key ] || openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rs256.key 2>/dev/null
openssl pkey -in rs256.key -pubout -out rs256.pub
in="$(header RS256).$(payload openssl-rs256)"
printf '%s.%s\n' "$in" "$(printf '%s' "$in" | openssl dgst -sha256 -sign rs256.key -binary | b64url)" > rs256.jwt

# EdDSA (Ed25519): signs the message itself.
[ -f ed25519.key ] || openssl genpkey -algorithm ED25519 -out ed25519.key
openssl pkey -in ed25519.key -pubout -out ed25519.pub
in="$(header EdDSA).$(payload openssl-eddsa)"
msg=$(mktemp)
printf '%s' "$in" > "$msg"
printf '%s.%s\n' "$in" "$(openssl pkeyutl -sign -inkey ed25519.key -rawin -in "$msg" | b64url)" > eddsa.jwt
rm -f "$msg"
