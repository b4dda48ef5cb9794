#!/usr/bin/env bash
# Computes the HMAC known-answer vectors with openssl and md5sum, outside Go,
# and writes hmac_vectors.json. Run from this folder: bash gen_vectors.sh
#
# For each vector:
#   md5   = printf '%s' "$body" | md5sum
#   sts   = VERB \n md5 \n Date \n fullURL      (no trailing newline)
#   sig   = printf '%s' "$sts" | openssl dgst -sha256 -hmac "$secret" -binary | base64
# Negative vectors are the same command over a wrong input (path-only URL,
# GMT date) or a wrong encoding (hex, base64 of hex); the client must differ
# from every one of them.
set -euo pipefail
key='partner-key-1'
secret='s3cr3t/with+chars=='
date='Sun, 22 Nov 2026 04:05:06 UTC'
gmt='Sun, 22 Nov 2026 04:05:06 GMT'

sig()    { printf '%s' "$1" | openssl dgst -sha256 -hmac "$secret" -binary | base64; }
sighex() { printf '%s' "$1" | openssl dgst -sha256 -hmac "$secret" | sed 's/^.*= //'; }
md5of()  { printf '%s' "$1" | md5sum | cut -d' ' -f1; }
json()   { python3 -c 'import json,sys; print(json.dumps(sys.argv[1], ensure_ascii=False))' "$1"; }

vector() { # name method url path_only body
  local name=$1 method=$2 url=$3 pathonly=$4 body=$5
  local m; m=$(md5of "$body")
  local sts; sts=$(printf '%s\n%s\n%s\n%s' "$method" "$m" "$date" "$url")
  local good; good=$(sig "$sts")
  local hexsig; hexsig=$(sighex "$sts")
  cat <<JSON
  {
    "name": $(json "$name"),
    "method": "$method",
    "url": $(json "$url"),
    "body": $(json "$body"),
    "date": "$date",
    "body_md5": "$m",
    "signature": "$good",
    "authorization": "SVC $key:$good",
    "wrong": {
      "path_only_url": "$(sig "$(printf '%s\n%s\n%s\n%s' "$method" "$m" "$date" "$pathonly")")",
      "gmt_date": "$(sig "$(printf '%s\n%s\n%s\n%s' "$method" "$m" "$gmt" "$url")")",
      "hex": "$hexsig",
      "base64_of_hex": "$(printf '%s' "$hexsig" | base64 -w0)"
    }
  }
JSON
}

{
  echo '{'
  echo "  \"api_key\": \"$key\","
  echo "  \"api_secret\": \"$secret\","
  echo '  "vectors": ['
  vector "GET without query" GET \
    'https://platform.example.com/api/5/public/users' '/api/5/public/users' ''
  echo ','
  vector "GET with query holding + @ space and non-ASCII" GET \
    'https://platform.example.com/api/5/public/users?page=0&query=j%C3%BCrgen+o%2Bx%40example.com&size=100' \
    '/api/5/public/users' ''
  echo ','
  vector "POST with a non-ASCII JSON body" POST \
    'https://platform.example.com/api/5/public/users' '/api/5/public/users' \
    '{"firstName":"Zoë","lastName":"Ångström","email":"zoe@example.com"}'
  echo ','
  vector "POST to a URL with a port" POST \
    'http://127.0.0.1:8443/api/5/login-token/9007199254740993' '/api/5/login-token/9007199254740993' \
    '{"properties":{"redirectTo":"/editor/projects?id=7"}}'
  echo '  ]'
  echo '}'
} > hmac_vectors.json
